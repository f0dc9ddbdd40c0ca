"""``benchsmith score cceval``: outputs, language resolution, several samples per task, malformed inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.cli import main
from tests.shared_data import shared_data

GOLDEN = shared_data("cceval-metrics")

TASKS = [
    # (task_id, prompt, groundtruth)
    ("py/0", "import os\n\n\ndef home():\n    return os.", "path.expanduser('~')"),
    ("py/1", "def area(r):\n    return ", "3.14159 * r * r"),
]


def write_jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def prompts_file(tmp_path: Path, dirname: str = "python", with_language: bool = False) -> Path:
    rows = []
    for tid, prompt, gt in TASKS:
        meta = {"task_id": tid, "repository": "demo", "file": "m.py"}
        if with_language:
            meta["language"] = "python"
        rows.append({"prompt": prompt, "groundtruth": gt, "right_context": "\n", "metadata": meta})
    return write_jsonl(tmp_path / dirname / "line_completion.jsonl", rows)


def run_cli(*args: str) -> int:
    return main(["score", "cceval", *args])


def test_end_to_end_outputs_and_determinism(tmp_path: Path, capsys) -> None:
    prompts = prompts_file(tmp_path)
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [{"task_id": "py/0", "pred": "path.expanduser('~')\n\ndef other():\n"}, {"task_id": "py/1", "pred": "r * r"}],
    )
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert run_cli("--prompts", str(prompts), "--predictions", str(preds), "--output", str(out), "--compat", "cceval") == 0
        outs.append(out)
    printed = capsys.readouterr().out
    assert "CrossCodeEval scores" in printed and "50.00" in printed
    for f in ("results.json", "detailed_results.jsonl", "prediction_truncated.jsonl"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    results = json.loads((outs[0] / "results.json").read_text())
    assert results["mode"] == "compat-cceval" and results["language"] == "python"
    assert results["total"] == 2 and results["em"] == 50.0
    assert "difflib" in results["edit_sim"]
    detailed = [json.loads(l) for l in (outs[0] / "detailed_results.jsonl").read_text().splitlines()]
    assert [d["task_id"] for d in detailed] == ["py/0", "py/1"]
    assert detailed[0]["em"] == 1 and detailed[1]["em"] == 0
    assert set(detailed[0]) == {"task_id", "em", "es", "id_em", "id_precision", "id_recall", "id_f1"}
    trunc = [json.loads(l) for l in (outs[0] / "prediction_truncated.jsonl").read_text().splitlines()]
    assert trunc[0]["pred"] == "path.expanduser('~')"
    assert trunc[0]["pred_ids"] == trunc[0]["target_ids"] == ["path", "expanduser"]


def test_default_mode_states_its_edit_similarity(tmp_path: Path) -> None:
    prompts = prompts_file(tmp_path)
    preds = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "py/0", "pred": "path"}, {"task_id": "py/1", "pred": "3.14159 * r * r"}])
    assert run_cli("--prompts", str(prompts), "--predictions", str(preds), "--output", str(tmp_path / "o")) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["mode"] == "default" and "rapidfuzz" in results["edit_sim"]
    assert results["em"] == 50.0


def test_several_samples_average_per_task_first(tmp_path: Path) -> None:
    prompts = prompts_file(tmp_path)
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"task_id": "py/0", "pred": "path.expanduser('~')"},
            {"task_id": "py/0", "pred": "getcwd()"},
            {"task_id": "py/0", "pred": "sep"},
            {"task_id": "py/1", "pred": "3.14159 * r * r"},
        ],
    )
    assert run_cli("--prompts", str(prompts), "--predictions", str(preds), "--output", str(tmp_path / "o"), "--compat", "cceval") == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    # py/0: 1 of 3 samples exact -> 1/3; py/1: 1 -> mean over tasks (1/3 + 1) / 2.
    assert results["em"] == round((1 / 3 + 1) / 2 * 100, 2)
    assert results["total"] == 2 and results["samples"] == 4
    rows = [json.loads(l) for l in (tmp_path / "o" / "detailed_results.jsonl").read_text().splitlines()]
    assert [(r["task_id"], r["sample"]) for r in rows] == [("py/0", 0), ("py/0", 1), ("py/0", 2), ("py/1", 0)]


def test_language_from_option_and_metadata(tmp_path: Path, capsys) -> None:
    preds = write_jsonl(tmp_path / "p.jsonl", [{"task_id": t, "pred": g} for t, _, g in TASKS])
    odd_dir = prompts_file(tmp_path, dirname="split")
    assert run_cli("--prompts", str(odd_dir), "--predictions", str(preds), "--output", str(tmp_path / "o")) == 2
    assert "pass --language" in capsys.readouterr().err
    assert run_cli("--prompts", str(odd_dir), "--predictions", str(preds), "--output", str(tmp_path / "o"), "--language", "py") == 0
    assert json.loads((tmp_path / "o" / "results.json").read_text())["em"] == 100.0
    meta = prompts_file(tmp_path, dirname="other", with_language=True)
    assert run_cli("--prompts", str(meta), "--predictions", str(preds), "--output", str(tmp_path / "o2")) == 0
    assert run_cli("--prompts", str(meta), "--predictions", str(preds), "--output", str(tmp_path / "o3"), "--language", "java") == 2
    assert "metadata.language is python but --language is java" in capsys.readouterr().err


@pytest.mark.parametrize(
    "lines, expected",
    [
        (['{"task_id": "py/0", "pred": "x"}', '{"task_id": "py/1", "pred": '], "p.jsonl:2: invalid JSON"),
        (['{"task_id": "py/0", "pred": "x"}', '{"task_id": "py/1", "pred": "y"}', '{"task_id": "py/9", "pred": "z"}'],
         "p.jsonl:3: task 'py/9' is not in the prompts file"),
        (['{"task_id": "py/0", "pred": "x"}'], "no prediction for 1 of 2 tasks: 'py/1'"),
        (['{"task_id": "py/0", "pred": "x"}', '{"task_id": "py/1"}'], "p.jsonl:2: task 'py/1': missing 'pred'"),
        (['{"task_id": "py/0", "pred": null}', '{"task_id": "py/1", "pred": "y"}'], "p.jsonl:1: task 'py/0': 'pred' must be a string"),
        (['{"pred": "x"}'], "p.jsonl:1: missing 'task_id'"),
        (['["py/0", "x"]'], "p.jsonl:1: expected a JSON object"),
        (['{"task_id": "py/0", "pred": "x"}', '{"task_id": "py/1", "pred": "a\\ud800b"}'], "p.jsonl:2: task 'py/1': 'pred' holds an unpaired surrogate"),
    ],
)
def test_malformed_predictions_name_line_and_id(tmp_path: Path, capsys, lines, expected) -> None:
    prompts = prompts_file(tmp_path)
    preds = write_jsonl(tmp_path / "p.jsonl", lines)
    out = tmp_path / "o"
    assert run_cli("--prompts", str(prompts), "--predictions", str(preds), "--output", str(out)) == 2
    assert expected in capsys.readouterr().err
    assert not (out / "results.json").exists()  # nothing half-scored is written


def test_malformed_prompts_name_line(tmp_path: Path, capsys) -> None:
    rows = [
        {"prompt": "a = ", "groundtruth": "1", "metadata": {"task_id": "x/0"}},
        {"prompt": "b = ", "groundtruth": "2", "metadata": {"task_id": "x/0"}},
    ]
    prompts = write_jsonl(tmp_path / "python" / "s.jsonl", rows)
    preds = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "x/0", "pred": "1"}])
    assert run_cli("--prompts", str(prompts), "--predictions", str(preds), "--output", str(tmp_path / "o")) == 2
    assert "s.jsonl:2: task 'x/0' already defined on line 1" in capsys.readouterr().err
    write_jsonl(prompts, [{"prompt": "a = ", "metadata": {"task_id": "x/0"}}])
    assert run_cli("--prompts", str(prompts), "--predictions", str(preds), "--output", str(tmp_path / "o")) == 2
    assert "s.jsonl:1: task 'x/0': field 'groundtruth' missing" in capsys.readouterr().err


def test_cli_reproduces_golden_aggregate(tmp_path: Path) -> None:
    if not (GOLDEN / "cases.jsonl").is_file():
        pytest.skip(f"golden CrossCodeEval scorer data not found at {GOLDEN}")
    cases = [json.loads(l) for l in (GOLDEN / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    cases = [c for c in cases if c["language"] == "typescript"]
    prompts = write_jsonl(
        tmp_path / "typescript" / "line_completion.jsonl",
        [{"prompt": c["prompt"], "groundtruth": c["groundtruth"], "right_context": "", "metadata": {"task_id": c["task_id"]}} for c in cases],
    )
    preds = write_jsonl(tmp_path / "preds.jsonl", [{"task_id": c["task_id"], "pred": c["prediction"]} for c in cases])
    out = tmp_path / "o"
    assert run_cli("--prompts", str(prompts), "--predictions", str(preds), "--output", str(out), "--compat", "cceval") == 0
    results = json.loads((out / "results.json").read_text())
    expected = json.loads((GOLDEN / "aggregate.json").read_text())["typescript"]
    assert {k: results[k] for k in expected} == expected
    trunc = [json.loads(l) for l in (out / "prediction_truncated.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [t["pred"] for t in trunc] == [c["pred_truncated"] for c in cases]
