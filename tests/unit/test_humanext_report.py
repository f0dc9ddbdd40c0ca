"""`benchsmith score humanext` end to end on hand-made variants: programs, verdicts, pass@k, styles, report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.cli import main
from benchsmith.evaluate.humanext import inputs as hx_inputs
from benchsmith.evaluate.humanext import plan as hx_plan
from benchsmith.evaluate.humanext import results as hx_results
from benchsmith.evaluate.humanext.records import Perturbation, PromptVariant, Setting
from tests.timing import scaled

ADD_ONE = "def add_one(x):\n    \"\"\"Add one.\"\"\"\n    return x + 1\n"
PLUS_ONE = "def plus_one(y):\n    return y + 1\n"
ADD_TWO = "def add_two(x):\n    \"\"\"Add two to x.\"\"\"\n"
TESTS = "def check(candidate):\n    assert candidate(1) == 3\n    assert candidate(-2) == 0\n\n" \
        "def test_check():\n    check(add_two)\n\ntest_check()\n"
DISTRACTORS = ["def shout(s):\n    return s.upper()\n", "def halve(n):\n    return n / 2\n"]

SQUARE = "def square(x):\n    return x * x\n"
SUM_SQ = "def sum_squares(xs):\n    \"\"\"Sum of squares.\"\"\"\n"
TESTS2 = "def check(candidate):\n    assert candidate([1, 2]) == 5\n\ndef test_check():\n    check(sum_squares)\n\n" \
         "test_check()\n"


def v(task_id, pair, setting, prompt, tests, entry, aux, perturbation=Perturbation.NONE, position=None, **kw):
    extra = {"program_prefix": prompt, "reference_passes": True}
    extra.update(kw.pop("extra", {}))
    return PromptVariant(task_id=task_id, pair_id=pair, setting=setting, perturbation=perturbation, prompt=prompt,
                         stop=["\ndef", "\nclass", "\nif", "\n#"], entry_point=entry, auxiliary_name=aux,
                         tests=tests, imports=[], position=position, num_auxiliary=3 if position is not None else None,
                         extra=extra, **kw)


def build_variants() -> list[PromptVariant]:
    out = [
        v("p1/direct", "p1", Setting.DIRECT, ADD_TWO, TESTS, "add_two", "add_one"),
        v("p1/oracle", "p1", Setting.ORACLE, ADD_ONE + "\n\n" + ADD_TWO, TESTS, "add_two", "add_one"),
        v("p1/renamed", "p1", Setting.ORACLE, PLUS_ONE + "\n\n" + ADD_TWO, TESTS, "add_two", "plus_one",
          Perturbation.RENAMED),
        v("p1/stage1", "p1", Setting.STEP_BY_STEP, "def add_one(x):\n", "", "add_one", "add_one", stage=1),
        v("p1/stage2", "p1", Setting.STEP_BY_STEP, "{auxiliary}\n\n\n" + ADD_TWO, TESTS, "add_two", "add_one",
          stage=2, template="{auxiliary}\n\n\n" + ADD_TWO,
          extra={"program_template": "{auxiliary}\n\n\n" + ADD_TWO, "stage1_task_id": "p1/stage1"}),
        v("p2/direct", "p2", Setting.DIRECT, SUM_SQ, TESTS2, "sum_squares", "square"),
        v("p2/oracle", "p2", Setting.ORACLE, SQUARE + "\n\n" + SUM_SQ, TESTS2, "sum_squares", "square"),
        v("bad/oracle", "bad", Setting.ORACLE, SQUARE + "\n\n" + SUM_SQ, TESTS2, "sum_squares", "square",
          extra={"reference_passes": False}),
    ]
    for pos in range(3):
        funcs = list(DISTRACTORS)
        funcs.insert(pos, ADD_ONE)
        out.append(v(f"p1/multi/{pos}", "p1", Setting.MULTI_AUXILIARY, "\n\n".join(funcs) + "\n\n" + ADD_TWO,
                     TESTS, "add_two", "add_one", position=pos))
    return out


GOOD = {  # task -> samples
    "p1/direct": ["    return x + 2\n", "    return x + 3\n"],
    "p1/oracle": ["    return add_one(add_one(x))\n", "    return add_one(x) + 1\n"],
    "p1/renamed": ["    return plus_one(plus_one(x))\n", "    return x\n"],
    "p1/stage1": ["    return x + 1\n", "    return x\n"],
    "p1/stage2": ["    return add_one(add_one(x))\n", "    return add_one(add_one(x))\n"],
    "p2/direct": ["    return sum(x * x for x in xs)\n\n\nif True:\n    raise SystemExit(0)\n",
                  "    return sum(map(lambda v: v * v, xs))\n"],
    "p2/oracle": ["    return sum(map(square, xs))\n", "    return sum(map(square, xs))\n"],
    "bad/oracle": ["    return 0\n", "    return 0\n"],
    "p1/multi/0": ["    return add_one(add_one(x))\n", "    return add_one(add_one(x))\n"],
    "p1/multi/1": ["    return add_one(x) + 1\n", "    return x + 2\n"],
    "p1/multi/2": ["    return x + 2\n", "    return x - 2\n"],
}
HOSTILE = {
    "p1/direct": ["    import sys\n    sys.exit(0)\n"],  # would skip the tests: must fail
    "p1/oracle": ["    return add_one(add_one(x)\n"],  # syntax error
    "p1/renamed": ["Sure:\n```python\ndef add_two(x):\n    return plus_one(x) + 1\n```\n"],  # chat answer
    "p1/stage1": ["    return x + 1\n"],
    "p1/stage2": ["    import os\n    os._exit(0)\n"],
    "p2/direct": ["    while True:\n        pass\n"],
    "p2/oracle": ["    return sum(square(x) for x in xs)\n"],
    "bad/oracle": ["    return 0\n"],
    "p1/multi/0": ["    print('x' * 10**7)\n"],
    "p1/multi/1": ["    return max([x], key=add_one) + 2\n"],
    "p1/multi/2": ["    return x + 2\n"],
}


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def inputs(tmp_path: Path):
    variants = write_jsonl(tmp_path / "variants.jsonl", [x.to_dict() for x in build_variants()])
    good = write_jsonl(tmp_path / "good-model.jsonl",
                       [{"task_id": t, "pred": p} for t, preds in GOOD.items() for p in preds])
    hostile = write_jsonl(tmp_path / "hostile.jsonl",
                          [{"task_id": t, "pred": p} for t, preds in HOSTILE.items() for p in preds])
    return tmp_path, variants, good, hostile


def score(tmp_path, variants, preds, out="report", extra=()):
    argv = ["score", "humanext", "--variants", str(variants), "--output", str(tmp_path / out), "--k", "1,2",
            "--workers", "4", "--timeout", f"{scaled(2):g}", "--quiet"]
    for p in preds:
        argv += ["--predictions", str(p)]
    return main(argv + list(extra))


def test_scores_two_models_into_one_report(inputs):
    tmp_path, variants, good, hostile = inputs
    assert score(tmp_path, variants, [good, hostile], extra=["--model-name", "Good"]) == 0
    out = tmp_path / "report"
    results = json.loads((out / "results.json").read_text())
    assert list(results["models"]) == ["Good", "hostile"]  # second name from the file stem
    assert results["variants"] == {"scored": 9, "excluded_invalid_pairs": 1, "total": 11}
    g = results["models"]["Good"]
    # direct: p1 1/2 pass, p2 both pass (the `if` after the body is cut by the stop sequence)
    assert g["settings"]["direct"]["pass@1"] == pytest.approx((0.5 + 1.0) / 2)
    assert g["settings"]["direct"]["pass@2"] == pytest.approx(1.0)
    assert g["settings"]["oracle"]["pass@1"] == pytest.approx(1.0)  # renamed is not the plain oracle
    assert g["perturbations"]["renamed"]["pass@1"] == pytest.approx(0.5)
    assert g["settings"]["step_by_step"]["pass@1"] == pytest.approx(0.5)  # stage-1 sample 2 is wrong
    assert g["relative_to_direct"]["oracle"] == pytest.approx((1.0 - 0.75) / 0.75, abs=1e-6)
    pos = g["positions"]
    assert [pos[p]["pass@1"] for p in "012"] == pytest.approx([1.0, 1.0, 0.5])
    assert [pos[p]["black_box_share"] for p in "012"] == pytest.approx([1.0, 0.5, 0.0])
    assert g["position_correlation"]["pearson_r"] == pytest.approx(0.866025, abs=1e-5)
    assert g["styles"]["reference"]["samples"] == 2  # map(square, xs) twice
    h = results["models"]["hostile"]
    assert h["settings"]["direct"]["pass@1"] == 0.0  # exit(0) and an infinite loop
    assert h["perturbations"]["renamed"]["pass@1"] == 1.0  # the fenced chat answer was extracted
    assert h["settings"]["step_by_step"]["pass@1"] == 0.0  # os._exit(0) before the tests
    assert "pass@2" not in h["settings"]["direct"]  # n=1 < k=2: undefined, not reported
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 2 * 9 + 9  # stage-1 and the invalid pair are not scored
    by = {(s["model"], s["task_id"], s["sample"]): s for s in samples}
    # judged in the parent: the call that exits is a call that did not return
    assert by[("hostile", "p1/direct", 0)]["detail"] == "assert candidate(1) == 3: the candidate raised SystemExit: 0"
    assert by[("hostile", "p1/stage2", 0)]["verdict"] == "failed"  # os._exit(0) inside the call
    assert results["judging"] == {"judged_in_parent": 27, "exit_status": 0, "exit_status_reasons": {}}
    assert by[("hostile", "p2/direct", 0)]["verdict"] == "timeout"
    assert by[("hostile", "p1/multi/0", 0)]["verdict"] == "output_limit"
    assert by[("hostile", "p1/oracle", 0)]["style"] == "unparseable"
    assert by[("hostile", "p1/multi/1", 0)]["style"] == "reference"
    assert by[("Good", "p1/multi/1", 1)]["style"] == "white_box"
    report = (out / "report.md").read_text()
    assert "| Good | 75.0 | 100.0 (+33.3%) | 50.0 (-33.3%) | 83.3 (+11.1%) |" in report
    assert "Pearson r between pass@1 and black-box share: +0.866" in report
    for fig in ("settings.png", "robustness.png", "positions.png"):
        data = (out / "figures" / fig).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_report_is_deterministic(inputs):
    tmp_path, variants, good, _ = inputs
    assert score(tmp_path, variants, [good], out="a") == 0
    assert score(tmp_path, variants, [good], out="b") == 0
    for name in ("results.json", "samples.jsonl", "report.md", "figures/positions.png", "figures/settings.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_include_invalid_scores_the_flagged_pair(inputs):
    tmp_path, variants, good, _ = inputs
    assert score(tmp_path, variants, [good], extra=["--include-invalid"]) == 0
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert results["variants"]["scored"] == 10
    assert results["models"]["good-model"]["settings"]["oracle"]["problems"] == 3


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"task_id": "p1/direct", "pred": 3}', "hostile.jsonl:12: task 'p1/direct': missing or non-string pred"),
        ('{"task_id": "nope", "pred": ""}', "hostile.jsonl:12: task 'nope' is not in the variants file"),
        ('{"pred": ""}', "hostile.jsonl:12: missing or non-string task_id"),
        ("{not json", "hostile.jsonl:12: invalid JSON"),
        ("[1, 2]", "hostile.jsonl:12: expected a JSON object"),
    ],
)
def test_malformed_predictions_name_the_line_and_task(inputs, capsys, line, message):
    tmp_path, variants, _, hostile = inputs
    hostile.write_text(hostile.read_text() + line + "\n")
    assert score(tmp_path, variants, [hostile]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "report" / "results.json").exists()


def test_missing_predictions_and_stage_mismatch_are_errors(inputs, capsys):
    tmp_path, variants, good, _ = inputs
    rows = [json.loads(x) for x in good.read_text().splitlines()]
    partial = write_jsonl(tmp_path / "partial.jsonl", [r for r in rows if r["task_id"] != "p2/oracle"])
    assert score(tmp_path, variants, [partial]) == 2
    assert "no predictions for task 'p2/oracle'" in capsys.readouterr().err
    short = write_jsonl(tmp_path / "short.jsonl", [r for r in rows if r["task_id"] != "p1/stage1"]
                        + [{"task_id": "p1/stage1", "pred": "    return x + 1\n"}])
    assert score(tmp_path, variants, [short]) == 2
    assert "stage-1 task 'p1/stage1' has 1" in capsys.readouterr().err


def test_duplicate_model_names_and_bad_k_are_errors(inputs, capsys):
    tmp_path, variants, good, hostile = inputs
    assert score(tmp_path, variants, [good, hostile], extra=["--model-name", "m", "--model-name", "m"]) == 2
    assert "model name 'm' is used twice" in capsys.readouterr().err
    argv = ["score", "humanext", "--variants", str(variants), "--predictions", str(good), "--output",
            str(tmp_path / "r"), "--k", "x"]
    assert main(argv) == 2
    assert "--k expects" in capsys.readouterr().err


def test_variants_directory_and_bad_variants(tmp_path):
    (tmp_path / "humanext").mkdir()
    write_jsonl(tmp_path / "humanext" / "variants.jsonl", [build_variants()[0].to_dict()])
    assert hx_inputs.variants_path(tmp_path).name == "variants.jsonl"
    with pytest.raises(hx_inputs.ReportInputError, match="no variants.jsonl"):
        hx_inputs.variants_path(tmp_path / "humanext" / "nothing")
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"task_id": "x", "prompt": ""}])
    with pytest.raises(hx_inputs.ReportInputError, match=r"bad.jsonl:1: variant 'x' lacks pair_id"):
        hx_inputs.load_variants(bad)
    row = build_variants()[0].to_dict()
    dup = write_jsonl(tmp_path / "dup.jsonl", [row, row])
    with pytest.raises(hx_inputs.ReportInputError, match="dup.jsonl:2: duplicate task_id"):
        hx_inputs.load_variants(dup)
    row["setting"] = "sideways"
    with pytest.raises(hx_inputs.ReportInputError, match="bad2.jsonl:1"):
        hx_inputs.load_variants(write_jsonl(tmp_path / "bad2.jsonl", [row]))


def test_program_assembly():
    variants = {x.task_id: x for x in build_variants()}
    asm = hx_plan.assemble(variants["p1/oracle"], ADD_ONE + "\n\n" + ADD_TWO + "    return add_one(x)\ndef junk(): pass")
    assert asm.completion == "    return add_one(x)"  # echoed prompt stripped, cut at "\ndef"
    assert asm.program == ADD_ONE + "\n\n" + ADD_TWO + "    return add_one(x)\n" + TESTS + "\n"
    s2 = hx_plan.assemble(variants["p1/stage2"], "    return add_one(add_one(x))\n", stage1=variants["p1/stage1"],
                     stage1_raw="    return x + 1\n\ndef more(): pass")
    assert s2.source.startswith("def add_one(x):\n    return x + 1\n\n\ndef add_two(x):")
    with pytest.raises(hx_inputs.ReportInputError, match="stage-1"):
        hx_plan.assemble(variants["p1/stage2"], "    return 1\n")
    chat = hx_plan.assemble(variants["p1/renamed"], "```python\ndef add_two(x):\n    return plus_one(x) + 1\n```",
                       code_blocks="auto")
    assert chat.source == PLUS_ONE + "\n\n" + "def add_two(x):\n    return plus_one(x) + 1\n"
    never = hx_plan.assemble(variants["p1/renamed"], "```python\ndef add_two(x):\n    return 1\n```", code_blocks="never")
    assert never.completion == "```python"


def test_pearson():
    assert hx_results.pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert hx_results.pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert hx_results.pearson([1, 1, 1], [1, 2, 3]) is None
    assert hx_results.pearson([1, 2], [1, 2]) is None


def test_tests_of_another_shape_take_the_exit_status_path_and_are_counted(tmp_path):
    loop_tests = ("def check(candidate):\n    for x, want in [(1, 3), (-2, 0)]:\n        assert candidate(x) == want\n\n"
                  "def test_check():\n    check(add_two)\n\ntest_check()\n")
    rows = [v("q/direct", "q", Setting.DIRECT, ADD_TWO, loop_tests, "add_two", "add_one").to_dict(),
            v("q/oracle", "q", Setting.ORACLE, ADD_ONE + "\n\n" + ADD_TWO, TESTS, "add_two", "add_one").to_dict()]
    variants = write_jsonl(tmp_path / "variants.jsonl", rows)
    preds = write_jsonl(tmp_path / "m.jsonl", [
        {"task_id": "q/direct", "pred": "    return x + 2\n"}, {"task_id": "q/direct", "pred": "    return x\n"},
        {"task_id": "q/oracle", "pred": "    return add_one(add_one(x))\n"}])
    assert score(tmp_path, variants, [preds]) == 0
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    judging = results["judging"]
    assert judging["judged_in_parent"] == 1 and judging["exit_status"] == 2
    assert list(judging["exit_status_reasons"]) == ["For statement in check() at line 2"]
    samples = [json.loads(line) for line in (tmp_path / "report" / "samples.jsonl").read_text().splitlines()]
    assert [s["passed"] for s in samples] == [True, False, True]
    assert "exit-status path (tests of another shape): 2 samples" in (tmp_path / "report" / "report.md").read_text()


def test_sandbox_flag_and_its_deprecated_alias_agree():
    from benchsmith.cli import build_parser

    base = ["score", "humanext", "--variants", "v", "--predictions", "p", "--output", "o"]
    assert build_parser().parse_args([*base, "--sandbox", "container"]).sandbox == "container"
    assert build_parser().parse_args([*base, "--backend", "container"]).sandbox == "container"
    assert build_parser().parse_args(base).sandbox == "local"
