"""Pair sources (our JSONL schema, the released shape) and the auxiliary pool; malformed input names record+field."""

import gzip
import json

import pytest

from benchsmith.builders.humanext.render import PairFormatError
from benchsmith.builders.humanext.sources import SourceKind, load_pairs, load_pool, normalize_tests

AUX = 'def double(x: int) -> int:\n    """Twice x.\n\n    >>> double(2)\n    4\n    """\n    return 2 * x\n'
SIG = 'def quadruple(x: int) -> int:\n    """Four times x."""\n'
REF = "    return double(double(x))\n"
TESTS = "def check(candidate):\n    assert candidate(3) == 12\n"


def own(**over):
    rec = {"pair_id": "t/0", "imports": [], "auxiliary": AUX, "target_signature": SIG, "target_reference": REF,
           "tests": TESTS}
    rec.update(over)
    return {k: v for k, v in rec.items() if v is not None}


def write(tmp_path, *records, name="pairs.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_own_schema_loads_and_tests_get_their_call(tmp_path):
    _, pairs = load_pairs(write(tmp_path, own(), own(pair_id=None)))
    p = pairs[0]
    assert p.kind is SourceKind.OWN
    assert p.auxiliary.name == "double" and p.target.name == "quadruple"
    assert p.target.signature() == SIG
    assert p.target.body() == REF
    assert p.test_entry == "check(quadruple)"
    assert p.tests.rstrip().endswith("check(quadruple)")
    assert pairs[1].pair_id == "pairs/2"  # default id: file stem / line number


@pytest.mark.parametrize("field", ["auxiliary", "target_signature", "target_reference", "tests"])
def test_missing_field_names_record_and_field(tmp_path, field):
    with pytest.raises(PairFormatError) as err:
        load_pairs(write(tmp_path, own(), own(pair_id="t/1", **{field: None})))
    assert err.value.record == "pairs record 2"
    assert err.value.field == field


def test_duplicate_pair_id_is_an_error(tmp_path):
    with pytest.raises(PairFormatError) as err:
        load_pairs(write(tmp_path, own(), own()))
    assert err.value.field == "pair_id" and "duplicate" in str(err.value)
    assert err.value.record == "pairs record 2"


def test_reference_must_hold_only_the_body(tmp_path):
    with pytest.raises(PairFormatError) as err:
        load_pairs(write(tmp_path, own(target_reference=SIG + REF)))
    assert err.value.field in ("target_reference", "target_signature+target_reference")


def test_source_that_does_not_parse(tmp_path):
    with pytest.raises(PairFormatError) as err:
        load_pairs(write(tmp_path, own(auxiliary="def double(x:\n    return x\n")))
    assert err.value.field == "auxiliary" and "does not parse" in str(err.value)


def test_bad_import_line(tmp_path):
    with pytest.raises(PairFormatError) as err:
        load_pairs(write(tmp_path, own(imports=["x = 1"])))
    assert err.value.field == "imports[0]"


def test_released_shape_in_a_json_list(tmp_path):
    rec = {
        "imports": [["typing", ["List"]], [None, ["math"]]],
        "auxiliary_function": {"name": "double", "arguments": ["x"], "docstring": {"description": "Twice x.",
                               "examples": [">>> double(2)\n4"]},
                               "template": "def {{ double }}({{ x }}):\n    return 2 * {{ x }}",
                               "placeholders": ["double", "x"]},
        "target_function": {"name": "quadruple", "arguments": ["x"], "docstring": None,
                            "template": "def {{ quadruple }}({{ x }}):\n    return {{ double }}({{ double }}({{ x }}))",
                            "placeholders": ["quadruple", "x", "double"]},
        "tests": "def check(candidate):\n    assert candidate(1) == 4\n\ndef test_check():\n    check(quadruple)\n\ntest_check()",
    }
    path = tmp_path / "data.json"
    path.write_text(json.dumps([rec]))
    _, pairs = load_pairs(str(path))
    p = pairs[0]
    assert p.pair_id == "HumanExtension/0"
    assert p.imports == ("from typing import List", "import math")
    assert p.test_entry == "test_check()"
    assert '"""Twice x.\n\n    >>> double(2)\n    4"""' in p.auxiliary.code()
    broken = dict(rec, target_function=dict(rec["target_function"], template="def {{ quadruple }}(:"))
    path.write_text(json.dumps([rec, broken]))
    with pytest.raises(PairFormatError) as err:
        load_pairs(str(path))
    assert err.value.record == "data record 2" and err.value.field == "target_function.template"


def test_tests_without_check_are_rejected():
    with pytest.raises(PairFormatError) as err:
        normalize_tests("x = 1\n", "f", "rec 9")
    assert err.value.field == "tests"


def test_demo_pairs_ship_with_the_package():
    source, pairs = load_pairs(None)
    assert source.spec == "demo"
    assert len(pairs) >= 9  # multi_auxiliary with the pairs as pool needs 8 distractors
    assert len({p.pair_id for p in pairs}) == len(pairs)


def test_pool_from_a_humaneval_schema_file(tmp_path):
    rows = [
        {"task_id": "X/0", "entry_point": "g", "prompt": "import math\n\n\ndef h(y):\n    return y\n\n\ndef g(x):\n",
         "canonical_solution": "    return math.floor(h(x))\n", "test": ""},
        {"task_id": "X/1", "entry_point": "k", "prompt": "def k():\n", "canonical_solution": "    return 1\n",
         "test": ""},
    ]
    path = tmp_path / "pool.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    desc, pool = load_pool(str(path), [])
    assert desc == "file:pool.jsonl.gz"
    assert pool[0].imports == ("import math",)
    assert pool[0].defined_names == {"g", "h"}
    assert pool[0].source.startswith("def h(y):") and "import" not in pool[0].source
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"task_id": "X/2", "prompt": "def q():\n"}) + "\n")
    with pytest.raises(PairFormatError) as err:
        load_pool(str(bad), [])
    assert err.value.record == "bad.jsonl:1" and err.value.field == "canonical_solution"


def test_hub_loader_reads_hub_shaped_rows_through_datasets(tmp_path):
    """The hub path is not reachable from CI; the same loader reads a local dataset folder of hub-shaped rows
    through the real ``datasets.load_dataset`` (a local path stands for the hub name)."""
    pytest.importorskip("datasets", reason="the hf extra is not installed")
    _, demo = load_pairs(None)
    rows = []
    for i, p in enumerate(demo[:3]):
        rows.append({"task_id": f"hub/{i}", "imports": "\n".join(p.imports), "function1_human": p.auxiliary.code(),
                     "function2_human": p.target.code(), "tests": p.tests})
    folder = tmp_path / "hubcopy"
    folder.mkdir()
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    source, pairs = load_pairs(f"hf:{folder}@main")
    assert source.description == f"{folder}@main"
    assert [p.pair_id for p in pairs] == ["hub/0", "hub/1", "hub/2"]
    assert all(p.kind is SourceKind.HUB_ROW for p in pairs)
    for got, want in zip(pairs, demo):
        assert got.auxiliary.code() == want.auxiliary.code()
        assert got.target.signature() == want.target.signature()
        assert got.target.body() == want.target.body()
        assert got.imports == want.imports
