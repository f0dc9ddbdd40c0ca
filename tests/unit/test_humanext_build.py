"""The build end to end on the embedded demo pairs (and small fixtures): counts, determinism, invalid pairs,
prompt styles, CLI errors."""

import collections
import json
from pathlib import Path

import pytest

from benchsmith.builders.humanext.build import BuildOptions, build, variant_program
from benchsmith.builders.humanext.prompts import AUXILIARY_MARKER, BASE_STOP, PromptStyle, fill_auxiliary
from benchsmith.builders.humanext.settings import VariantConfig
from benchsmith.builders.humanext.sources import load_pairs
from benchsmith.cli import main
from benchsmith.records import Exclusion, Reason, Stage
from benchsmith.evaluate.humanext.records import Perturbation, PromptVariant, Setting

CONFIG = VariantConfig(samples=2, num_auxiliary=4, seed=7)


def _opts(out, **kw):
    kw.setdefault("config", CONFIG)
    kw.setdefault("progress", False)
    kw.setdefault("workers", 2)
    return BuildOptions(output=out, **kw)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    return build(_opts(out, check_variants=True, formats=("jsonl", "parquet", "hf")))


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_counts_are_as_configured(demo):
    n_pairs = len(load_pairs(None)[1])
    per_pair = CONFIG.expected_per_pair()
    assert per_pair == {"direct": 1, "irrelevant": 2, "oracle": 4 + 2 * 2, "step_by_step": 2, "multi_auxiliary": 8}
    stats = demo.stats
    assert stats["pairs"] == {"total": n_pairs, "valid": n_pairs, "invalid": 0, "written": n_pairs}
    assert stats["variants"]["by_setting"] == {k: v * n_pairs for k, v in sorted(per_pair.items())}
    by_pert = stats["variants"]["by_perturbation"]
    assert by_pert["renamed"] == by_pert["dead_code"] == 2 * n_pairs
    assert by_pert["no_docstring"] == by_pert["renamed_locals"] == by_pert["docstring_as_comments"] == n_pairs
    assert stats["variants"]["total"] == sum(per_pair.values()) * n_pairs
    lines = (demo.out_dir / "variants.jsonl").read_text().splitlines()
    assert len(lines) == stats["variants"]["total"]
    ids = [json.loads(line)["task_id"] for line in lines]
    assert len(set(ids)) == len(ids)


def test_every_variant_runs_with_the_human_reference(demo):
    assert demo.stats["variant_check"] == {"run": True, "failed": 0, "failed_task_ids": []}


def test_records_carry_what_the_scorer_needs(demo):
    rows = [PromptVariant.from_dict(json.loads(line))
            for line in (demo.out_dir / "variants.jsonl").read_text().splitlines()]
    pairs = {p.pair_id: p for p in load_pairs(None)[1]}
    for v in rows:
        pair = pairs[v.pair_id]
        assert v.stop == BASE_STOP
        if v.stage == 1:
            assert v.entry_point == pair.auxiliary.name and v.prompt.endswith(pair.auxiliary.signature())
            continue
        assert v.entry_point == pair.target.name
        assert v.tests == pair.tests and v.extra["test_entry"] == pair.test_entry
        if v.stage == 2:
            assert v.template == v.prompt and v.prompt.startswith(AUXILIARY_MARKER)
            continue
        assert v.prompt == v.extra["program_prefix"]
        assert v.prompt.endswith(pair.target.signature())
        if v.setting is Setting.IRRELEVANT:
            assert f"def {pair.auxiliary.name}(" not in v.prompt
            assert v.extra["context_functions"] != [pair.auxiliary.name]
        if v.setting is Setting.DIRECT:
            assert v.extra["context_functions"] == [] and f"def {pair.auxiliary.name}(" not in v.prompt
        if v.setting is Setting.MULTI_AUXILIARY:
            names = v.extra["context_functions"]
            assert len(names) == 4 and names[v.position] == pair.auxiliary.name
            assert v.imports == sorted(set(v.imports))
            order = [v.prompt.index(f"def {n}(") for n in names]
            assert order == sorted(order)  # the functions appear in the recorded order
    positions = collections.Counter(v.position for v in rows if v.setting is Setting.MULTI_AUXILIARY)
    assert sorted(positions) == [0, 1, 2, 3]
    assert len(set(positions.values())) == 1


def test_black_box_counts_of_the_demo_targets(demo):
    # demo/sort_by_digit_sum passes digit_sum as key= (a reference without a call); the others call it
    assert demo.stats["auxiliary_usage"] == {"calls": 9, "references_only": 1, "not_used": 0}


def test_same_seed_same_bytes_other_seed_other_bytes(demo, tmp_path):
    again = build(_opts(tmp_path / "again", check_variants=True, formats=("jsonl", "parquet", "hf")))
    assert _files(again.out_dir) == _files(demo.out_dir)
    other = build(_opts(tmp_path / "other", config=VariantConfig(samples=2, num_auxiliary=4, seed=8)))
    assert (other.out_dir / "variants.jsonl").read_bytes() != (demo.out_dir / "variants.jsonl").read_bytes()


def test_hf_and_parquet_hold_the_same_rows(demo):
    import datasets
    import pyarrow.parquet as pq

    ds = datasets.load_from_disk(str(demo.out_dir / "hf"))
    table = pq.read_table(demo.out_dir / "variants.parquet")
    assert len(ds) == table.num_rows == demo.stats["variants"]["total"]
    first = json.loads((demo.out_dir / "variants.jsonl").read_text().splitlines()[0])
    assert ds[0]["task_id"] == table.column("task_id")[0].as_py() == first["task_id"]
    assert json.loads(ds[0]["extra"]) == first["extra"]


BROKEN = {
    "pair_id": "fx/broken",
    "imports": [],
    "auxiliary": 'def inc(x):\n    """x plus one."""\n    return x + 1\n',
    "target_signature": 'def inc_twice(x):\n    """x plus two."""\n',
    "target_reference": "    return inc(x) + 2\n",
    "tests": "def check(candidate):\n    assert candidate(1) == 3\n    assert candidate(5) == 7\n\ncheck(inc_twice)\n",
}
WORKING = dict(BROKEN, pair_id="fx/working", target_reference="    return inc(x) + 1\n")


def test_invalid_pair_is_reported_and_left_out(tmp_path):
    demo_lines = (Path(__file__).resolve().parents[2] / "benchsmith/data/humanext_demo.jsonl").read_text()
    src = tmp_path / "pairs.jsonl"
    src.write_text(demo_lines.splitlines()[0] + "\n" + json.dumps(BROKEN) + "\n")
    cfg = VariantConfig(settings=(Setting.DIRECT, Setting.ORACLE), perturbations=(Perturbation.NONE,))
    res = build(_opts(tmp_path / "o", pairs=str(src), config=cfg))
    assert res.stats["pairs"]["invalid"] == 1
    (bad,) = [json.loads(line) for line in (res.out_dir / "invalid_pairs.jsonl").read_text().splitlines()]
    assert bad["pair_id"] == "fx/broken"
    assert bad["assertion"] == "assert candidate(1) == 3"
    assert bad["returned"] == "4" and bad["line"] == 2
    assert {v.pair_id for v in res.variants} == {"demo/count_vowels"}
    # the drop goes through the pipeline's one channel: excluded.jsonl and the per-reason count in stats.json
    (exc,) = [Exclusion.from_dict(json.loads(line))
              for line in (res.out_dir / "excluded.jsonl").read_text().splitlines()]
    assert (exc.item_id, exc.stage, exc.reason) == ("fx/broken", Stage.VALIDATION, Reason.REFERENCE_FAILS_TESTS)
    assert "assert candidate(1) == 3" in exc.detail and "returned 4" in exc.detail
    assert res.stats["dropped"] == {"reference_fails_tests": 1}
    assert json.loads((res.out_dir / "stats.json").read_text())["dropped"] == {"reference_fails_tests": 1}
    kept = build(_opts(tmp_path / "k", pairs=str(src), config=cfg, keep_invalid=True, check_variants=True))
    flags = {v.pair_id: v.extra["reference_passes"] for v in kept.variants}
    assert flags == {"demo/count_vowels": True, "fx/broken": False}
    # the variant check runs the kept pair's reference too, and reports exactly its variants as failing
    failed = kept.stats["variant_check"]["failed_task_ids"]
    assert sorted(failed) == sorted(v.task_id for v in kept.variants if v.pair_id == "fx/broken")
    # kept with --keep-invalid: written, flagged, and therefore not dropped
    assert kept.stats["dropped"] == {} and (kept.out_dir / "excluded.jsonl").read_text() == ""


def test_a_pair_whose_variants_cannot_be_made_is_dropped_whole_with_a_reason(tmp_path):
    # its target holds the step-by-step marker: that setting cannot be rendered for it, so no setting keeps it,
    # and the other pair, validated in the same sandboxed run, is built as usual
    demo_lines = (Path(__file__).resolve().parents[2] / "benchsmith/data/humanext_demo.jsonl").read_text()
    marked = dict(WORKING, pair_id="fx/marked",
                  target_signature=f'def inc_twice(x):\n    """x plus two ({AUXILIARY_MARKER})."""\n')
    src = tmp_path / "pairs.jsonl"
    src.write_text(demo_lines.splitlines()[0] + "\n" + json.dumps(marked) + "\n")
    cfg = VariantConfig(settings=(Setting.DIRECT, Setting.STEP_BY_STEP), perturbations=(Perturbation.NONE,))
    res = build(_opts(tmp_path / "o", pairs=str(src), config=cfg))
    assert {v.pair_id for v in res.variants} == {"demo/count_vowels"}
    (exc,) = [Exclusion.from_dict(json.loads(line))
              for line in (res.out_dir / "excluded.jsonl").read_text().splitlines()]
    assert (exc.item_id, exc.stage, exc.reason) == ("fx/marked", Stage.RENDER, Reason.PAIR_UNRENDERABLE)
    assert "target_function" in exc.detail and AUXILIARY_MARKER in exc.detail
    assert res.stats["dropped"] == {"pair_unrenderable": 1}
    # nothing renderable at all: one clear error, not an empty benchmark
    src.write_text(json.dumps(marked) + "\n")
    with pytest.raises(ValueError, match="no pair could be rendered; the first, fx/marked"):
        build(_opts(tmp_path / "none", pairs=str(src), config=cfg))


def test_repeated_pair_ids_and_a_pool_too_small_stop_the_build_before_any_sandboxed_run(tmp_path, monkeypatch):
    from benchsmith.builders.humanext import steps

    def never(*args, **kwargs):  # stands for the sandboxed validation: it must not be reached
        raise AssertionError("validation ran")

    monkeypatch.setattr(steps, "validate_pairs", never)
    src = tmp_path / "pairs.jsonl"
    src.write_text(json.dumps(WORKING) + "\n" + json.dumps(WORKING) + "\n")
    with pytest.raises(ValueError, match="record 2: field 'pair_id': duplicate pair id 'fx/working'"):
        build(_opts(tmp_path / "o", pairs=str(src)))
    src.write_text(json.dumps(WORKING) + "\n")
    cfg = VariantConfig(settings=(Setting.MULTI_AUXILIARY,), num_auxiliary=4)
    with pytest.raises(ValueError, match="need 3 pool functions, pairs:auxiliaries has 1"):
        build(_opts(tmp_path / "o", pairs=str(src), pool="pairs", config=cfg))


def test_variant_check_drops_failing_variants_of_valid_pairs_with_a_reason(demo):
    from benchsmith.builders.humanext.steps import CheckVariants
    from benchsmith.pipeline import DropLedger

    valid = next(v for v in demo.variants if v.extra["reference_passes"])
    flagged = PromptVariant.from_dict({**valid.to_dict(), "task_id": "fx/kept/x",
                                       "extra": {**valid.extra, "reference_passes": False}})
    ledger = DropLedger()
    # the callable stands for the sandboxed run of every variant with the human reference completion
    step = CheckVariants(lambda vs: [{"task_id": t, "pair_id": "p", "error": "AssertionError: "}
                                     for t in (valid.task_id, flagged.task_id)], ledger)
    kept = list(step([valid, flagged]))
    assert kept == [flagged]  # a variant of a pair kept with --keep-invalid fails by construction and stays
    (exc,) = ledger.exclusions
    assert (exc.item_id, exc.stage, exc.reason) == (valid.task_id, Stage.VALIDATION, Reason.REFERENCE_FAILS_TESTS)
    assert exc.detail == "variant check: AssertionError: " and ledger.dropped == {"reference_fails_tests": 1}


def test_codellama_instruct_prompts(tmp_path):
    cfg = VariantConfig(settings=(Setting.DIRECT, Setting.ORACLE, Setting.STEP_BY_STEP),
                        perturbations=(Perturbation.NONE,))
    res = build(_opts(tmp_path, config=cfg, style=PromptStyle.CODELLAMA_INSTRUCT, check_variants=True))
    assert res.stats["variant_check"]["failed"] == 0
    by = {v.task_id: v for v in res.variants}
    pair = load_pairs(None)[1][1]  # demo/lcm_of_list, with an import
    oracle = by[f"{pair.pair_id}/oracle/none/p-/s0"]
    assert oracle.stop == ["[/PYTHON]"]
    assert oracle.prompt.startswith("[INST] Write a Python function `gcd(a: int, b: int) -> int`")
    assert oracle.prompt.count("[INST]") == 2 and "</s><s>[INST]" in oracle.prompt
    assert oracle.prompt.endswith("[/INST]\n[PYTHON]\n" + pair.target.signature())
    assert "from typing import List\n\n\ndef gcd" in oracle.prompt
    assert oracle.extra["program_prefix"].startswith("from typing import List\n\n\ndef gcd")
    direct = by[f"{pair.pair_id}/direct/none/p-/s0"]
    assert direct.prompt.count("[INST]") == 1
    assert direct.prompt.endswith("[PYTHON]\nfrom typing import List\n\n\n" + pair.target.signature())
    s1 = by[f"{pair.pair_id}/step_by_step/none/p-/s0/stage1"]
    s2 = by[f"{pair.pair_id}/step_by_step/none/p-/s0/stage2"]
    aux_code = s1.extra["program_prefix"] + pair.auxiliary.body()
    filled = fill_auxiliary(s2.template, aux_code)
    assert "[PYTHON]\nfrom typing import List\n\n\ndef gcd" in filled and AUXILIARY_MARKER not in filled
    program = variant_program(s2, pair.target.body(), s1, pair.auxiliary.body())
    assert program.startswith(aux_code.rstrip() + "\n\n\n" + pair.target.signature())


def test_chat_template_from_a_tokenizer(tmp_path):
    transformers = pytest.importorskip("transformers", reason="the transformers extra is not installed")
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "<s>": 1, "</s>": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", bos_token="<s>",
                                                eos_token="</s>")
    fast.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
                          "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
    fast.save_pretrained(tmp_path / "tok")
    cfg = VariantConfig(settings=(Setting.ORACLE,), perturbations=(Perturbation.NONE,))
    code = main(["build", "humanext", "--output", str(tmp_path / "o"), "--tokenizer", str(tmp_path / "tok"),
                 "--settings", "oracle", "--perturbations", "none", "--no-progress", "--workers", "2"])
    assert code == 0
    rows = [json.loads(x) for x in (tmp_path / "o/humanext/variants.jsonl").read_text().splitlines()]
    pair = load_pairs(None)[1][0]
    v = rows[0]
    assert v["stop"] == ["```"] and v["extra"]["prompt_style"] == "chat"
    assert v["prompt"].startswith("<|user|>\nWrite a Python function `is_vowel(ch: str) -> bool`")
    assert "<|assistant|>\n```python\ndef is_vowel" in v["prompt"]
    assert v["prompt"].endswith("<|assistant|>\n```python\n" + pair.target.signature())
    assert cfg.expected_per_pair() == {"oracle": 1} and len(rows) == len(load_pairs(None)[1])


def test_cli_reports_malformed_input_with_record_and_field(tmp_path, capsys):
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps(dict(BROKEN, target_signature=None)) + "\n")
    code = main(["build", "humanext", "--pairs", str(src), "--output", str(tmp_path / "o"), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "bad record 1" in err and "'target_signature'" in err and "missing" in err
    assert not (tmp_path / "o/humanext/variants.jsonl").exists()


def test_cli_rejects_unknown_setting(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["build", "humanext", "--output", str(tmp_path), "--settings", "oracle,bogus"])
    assert "bogus" in capsys.readouterr().err


def test_builder_and_scorer_assemble_the_same_program(demo):
    # one contract (benchsmith.evaluate.humanext.program): the reference check and the scorer run the same text
    from benchsmith.evaluate.humanext.plan import assemble

    by = {v.task_id: v for v in demo.variants}
    checked = 0
    for v in demo.variants:
        if v.stage == 1:
            continue
        s1 = by.get(v.extra.get("stage1_task_id", "")) if v.stage == 2 else None
        s1_completion = s1.extra["reference_completion"] if s1 is not None else None
        completion = v.extra["reference_completion"]
        built = variant_program(v, completion, s1, s1_completion)
        scored = assemble(v, completion, "never", s1, s1_completion)
        assert scored.program == built, v.task_id
        checked += 1
    assert checked > 10
