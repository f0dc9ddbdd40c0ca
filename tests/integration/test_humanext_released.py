"""The authors' 151 released pairs: load, render, parse, validate; black-box counts; a full deterministic build.

Reads the release from the workspace's shared data directory (never copied into the repository) and skips
visibly when it is absent.
"""

import ast
import json

import pytest

from benchsmith.builders.humanext.build import BuildOptions, build
from benchsmith.builders.humanext.settings import VariantConfig
from benchsmith.builders.humanext.sources import load_pairs
from benchsmith.evaluate.humanext.style import AuxUsage, auxiliary_usage
from tests.shared_data import shared_data

DATA = shared_data("humanextension/data.json")

# Measured: these six human references fail their own tests (with the auxiliary prepended, plain interpreter).
FAILING_TARGETS = {"factorial", "all_sorted", "prod_signs_within_threshold", "sum_odd_collatz",
                   "num_valid_birthdays", "biggest"}


@pytest.fixture(scope="module")
def pairs():
    if not DATA.is_file():
        pytest.skip(f"the released HumanExtension data is not at {DATA}")
    return load_pairs(str(DATA))[1]


@pytest.fixture(scope="module")
def full_build(pairs, tmp_path_factory):
    out = tmp_path_factory.mktemp("released")
    return build(BuildOptions(output=out, pairs=str(DATA), check_variants=True, progress=False))


def test_all_151_pairs_load_render_and_parse(pairs):
    assert len(pairs) == 151
    assert len({p.pair_id for p in pairs}) == 151
    for p in pairs:
        ast.parse(p.reference_program())
        for fn in (p.auxiliary, p.target):
            node = ast.parse(fn.code()).body[0]
            assert node.name == fn.name
            assert ast.get_docstring(node) == fn.docstring_text
        assert p.target.code() == (p.target.signature() + p.target.body()).rstrip("\n")
        assert p.test_entry == "test_check()"


def test_black_box_style_of_the_human_targets(pairs):
    counts = {u: 0 for u in AuxUsage}
    for p in pairs:
        counts[auxiliary_usage(p.target.code(), p.auxiliary.name)] += 1
    # measured: 147 targets call their auxiliary, 2 pass it along without calling it (key=...), 2 never use it
    assert counts == {AuxUsage.CALLS: 147, AuxUsage.REFERENCES_ONLY: 2, AuxUsage.NOT_USED: 2}


def test_exactly_the_failing_references_are_reported_and_left_out(full_build):
    stats = full_build.stats
    assert stats["pairs"] == {"total": 151, "valid": 145, "invalid": 6, "written": 145}
    assert {c.target_name for c in full_build.invalid} == FAILING_TARGETS
    rows = [json.loads(x) for x in (full_build.out_dir / "invalid_pairs.jsonl").read_text().splitlines()]
    assert {r["target_name"] for r in rows} == FAILING_TARGETS
    for r in rows:
        assert r["assertion"].startswith("assert candidate(")
        assert r["returned"] is not None or r["error"]
    factorial = next(r for r in rows if r["target_name"] == "factorial")
    assert factorial["assertion"] == "assert candidate(7) == 5040" and factorial["returned"] == "0"
    # the same six, dropped through the pipeline's one channel: excluded.jsonl and stats.json "dropped"
    excluded = [json.loads(x) for x in (full_build.out_dir / "excluded.jsonl").read_text().splitlines()]
    assert sorted(e["item_id"] for e in excluded) == sorted(c.pair_id for c in full_build.invalid)
    assert {(e["stage"], e["reason"]) for e in excluded} == {("validation", "reference_fails_tests")}
    assert stats["dropped"] == {"reference_fails_tests": 6}
    written = {v.pair_id for v in full_build.variants}
    assert len(written) == 145
    assert not written & {c.pair_id for c in full_build.invalid}


def test_counts_and_variant_check(full_build):
    expected = VariantConfig().expected_per_pair()
    assert full_build.stats["variants"]["by_setting"] == {k: 145 * n for k, n in sorted(expected.items())}
    assert full_build.stats["variant_check"]["failed"] == 0
    assert full_build.stats["auxiliary_usage"] == {"calls": 147, "references_only": 2, "not_used": 2}


def test_same_seed_gives_byte_identical_files(full_build, tmp_path):
    # without --check-variants this time (stats.json records whether the check ran, the data files do not)
    again = build(BuildOptions(output=tmp_path, pairs=str(DATA), progress=False))
    for name in ("variants.jsonl", "pairs.jsonl", "invalid_pairs.jsonl", "excluded.jsonl"):
        assert (again.out_dir / name).read_bytes() == (full_build.out_dir / name).read_bytes(), name
