"""``benchsmith screen`` on a small built split written here, with a real (tiny, random-weight) transformers model.

The groundtruths are chosen from the model's own greedy completions, so the test knows which examples the model
predicts without cross-file context; screening must drop exactly those, from every split file.
"""

from __future__ import annotations

import json

import pytest

from benchsmith.evaluate.screen import cut_completion, is_predictable

pytest.importorskip("torch", reason="the transformers extra (torch) is not installed")
pytest.importorskip("transformers", reason="the transformers extra is not installed")

from benchsmith.cli import main  # noqa: E402
from benchsmith.evaluate.generation.base import GenerationRequest, create_backend  # noqa: E402
from benchsmith.evaluate.generation.tiny_model import build_tiny_model  # noqa: E402
from benchsmith.builders.cceval.records import CompletionExample, CrossFileContext, ExampleMetadata  # noqa: E402
from benchsmith.records import Exclusion, Reason, Stage  # noqa: E402

PROMPTS = ["def add(a, b):\n    return ", "import os\nclass Stack:\n    def push(self, item):\n        self.",
           "for i in range(10):\n    print(", "x = ", "with open(name) as fh:\n    data = ", "if x is None:\n    ",
           "result = utils.", "from typing import ", "class A:\n    def __init__(self):\n        ",
           "total = items.", "return [x * 2 for "]
NEW = 30  # new tokens, for the test's own completions and for screening


def test_rule_cuts_at_the_groundtruth_line_count():
    assert cut_completion("foo(a)\nbar()\n", "foo(a)") == "foo(a)"
    assert cut_completion("foo(a,\n  b)\nbar()", "foo(a,\n  b)\n") == "foo(a,\n  b)"
    assert is_predictable("items.append(item)  \nreturn x", "items.append(item)")
    assert is_predictable(" items.append(item)", "items.append(item)\n")  # surrounding whitespace is not content
    assert not is_predictable("items.append(other)\n", "items.append(item)")
    assert not is_predictable("items.append(", "items.append(item)")  # a prefix is not a match
    assert not is_predictable("foo(a,\n  c)", "foo(a,\n  b)")
    assert not is_predictable("", "")  # an empty groundtruth is never "predicted"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    # a few training steps on code lines: completions then hold newlines, so multi-line statements occur
    return build_tiny_model(tmp_path_factory.mktemp("tiny-screen"), arch="llama", seed=5, train_steps=12)


def _example(i, prompt, groundtruth, repo):
    meta = ExampleMetadata(task_id=f"project_cc_python/{repo}/m{i}.py:3:1", repository=repo, file=f"m{i}.py",
                           context_start_lineno=0, groundtruth_start_lineno=3, right_context_start_lineno=4,
                           language="python")
    return CompletionExample(prompt=prompt, groundtruth=groundtruth, right_context="\npass\n", metadata=meta,
                             crossfile_context=CrossFileContext(text="# from other file\n", list=[]))


@pytest.fixture(scope="module")
def plan(model_dir):
    """Examples with groundtruths built from the model's own completions: (examples, predictable task ids)."""
    backend = create_backend("hf", str(model_dir), device="cpu", batch_size=8)
    one_line = backend.generate([GenerationRequest(p, max_new_tokens=NEW, stop=("\n",)) for p in PROMPTS])
    free = backend.generate([GenerationRequest(p, max_new_tokens=NEW) for p in PROMPTS])
    examples, predictable, multi = [], set(), False
    for i, (p, a, b) in enumerate(zip(PROMPTS, one_line, free)):
        repo = "repo_a" if i % 2 else "repo_b"
        lines = b.texts[0].split("\n")
        if not multi and len(lines) >= 3 and lines[0].strip() and lines[1].strip():
            gt, multi = "\n".join(lines[:2]), True  # a two-line statement the model predicts
        elif i % 3 == 0 and a.texts[0].strip():
            gt = a.texts[0].strip()  # the model's own line: predictable
        else:
            gt = (a.texts[0].strip() or "value") + "_not_what_the_model_says"
        ex = _example(i, p, gt, repo)
        examples.append(ex)
        if is_predictable(b.texts[0], gt):
            predictable.add(ex.task_id)
    assert multi and 3 <= len(predictable) < len(examples)
    return examples, predictable


def _write_split(root, examples, lang="python"):
    d = root / lang
    d.mkdir(parents=True)
    (d / "line_completion.jsonl").write_text("".join(json.dumps(e.to_dict()) + "\n" for e in examples), "utf-8")
    variant = []
    for e in examples:
        row = e.to_dict()
        row["crossfile_context"] = {"text": "# bm25 chunk\n", "list": [{"retrieved_chunk": "x", "filename": "b.py",
                                                                        "score": 1.0}]}
        variant.append(row)
    (d / "line_completion_rg1_bm25.jsonl").write_text("".join(json.dumps(r) + "\n" for r in variant), "utf-8")
    earlier = Exclusion("project_cc_python/repo_a/old.py:1:1", Stage.EXAMPLE_FILTER, Reason.GROUNDTRUTH_TOO_SHORT,
                        "2 tokens", "repo_a")
    (d / "excluded.jsonl").write_text(json.dumps(earlier.to_dict()) + "\n", "utf-8")
    per_repo = [{"repository": r, "status": "ok", "files": 3,
                 "examples": sum(1 for e in examples if e.metadata.repository == r), "excluded": int(r == "repo_a")}
                for r in ("repo_a", "repo_b")]
    stats = {"language": lang, "repositories": 2, "repositories_with_examples": 2, "examples": len(examples),
             "files": 6, "dropped": {"groundtruth_too_short": 1}, "per_repository": per_repo,
             "self_consistency": {"compat": None, "default": {"examples": len(examples)}}}
    (d / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", "utf-8")
    return d


def _ids(path):
    return [json.loads(line)["metadata"]["task_id"] for line in path.read_text("utf-8").splitlines()]


def _screen(model_dir, root, *extra):
    return main(["screen", "--backend", "hf", "--model", str(model_dir), "--input", str(root), "--device", "cpu",
                 "--batch-size", "4", "--max-new-tokens", str(NEW), "-q", *extra])


def test_screen_drops_exactly_the_predictable_examples(model_dir, plan, tmp_path):
    examples, predictable = plan
    d = _write_split(tmp_path / "out", examples)
    other = _write_split(tmp_path / "out", examples[:3], lang="java")  # several languages in one DIR
    original_lines = (d / "line_completion.jsonl").read_text("utf-8").splitlines(keepends=True)

    assert _screen(model_dir, tmp_path / "out", "--cache", str(tmp_path / "cache")) == 0

    kept = [e.task_id for e in examples if e.task_id not in predictable]
    assert _ids(d / "line_completion.jsonl") == kept
    assert _ids(d / "line_completion_rg1_bm25.jsonl") == kept  # retrieval variants follow the split
    # kept lines are copied byte for byte
    assert (d / "line_completion.jsonl").read_text("utf-8").splitlines(keepends=True) == [
        line for line in original_lines if json.loads(line)["metadata"]["task_id"] not in predictable]
    excluded = [Exclusion.from_dict(json.loads(x)) for x in (d / "excluded.jsonl").read_text("utf-8").splitlines()]
    assert excluded[0].reason is Reason.GROUNDTRUTH_TOO_SHORT  # earlier exclusions kept
    screened = excluded[1:]
    assert {x.item_id for x in screened} == predictable
    assert all(x.stage is Stage.SCREEN and x.reason is Reason.PREDICTABLE_WITHOUT_CROSSFILE for x in screened)
    repo_of = {e.task_id: e.metadata.repository for e in examples}
    assert all(x.repository == repo_of[x.item_id] and str(model_dir) in x.detail for x in screened)

    stats = json.loads((d / "stats.json").read_text("utf-8"))
    assert stats["dropped"] == {"groundtruth_too_short": 1, "predictable_without_crossfile": len(predictable)}
    assert stats["examples"] == len(kept)
    for row in stats["per_repository"]:
        lost = sum(1 for t in predictable if repo_of[t] == row["repository"])
        assert row["examples"] == sum(1 for e in examples if e.metadata.repository == row["repository"]) - lost
        assert row["excluded"] == int(row["repository"] == "repo_a") + lost
    assert sorted(stats["screen"]["dropped_task_ids"]) == sorted(predictable)
    # the build's self-check is redone on what is kept
    checked = stats["self_consistency"]
    assert checked["default"]["examples"] == checked["compat"]["examples"] == len(kept)
    java_kept = [e.task_id for e in examples[:3] if e.task_id not in predictable]
    assert _ids(other / "line_completion.jsonl") == java_kept

    # a rerun changes nothing (byte-identical files) and is served from the cache
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    assert _screen(model_dir, tmp_path / "out", "--cache", str(tmp_path / "cache")) == 0
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


def test_screen_repairs_a_run_killed_after_writing_exclusions(model_dir, plan, tmp_path):
    examples, predictable = plan
    d = _write_split(tmp_path / "out", examples)
    assert _screen(model_dir, tmp_path / "out", "--language", "python") == 0
    done = {p.name: p.read_bytes() for p in d.iterdir()}
    # simulate a crash after step 1: splits and stats still hold the old contents
    _write_split(tmp_path / "again", examples)
    for name in ("line_completion.jsonl", "line_completion_rg1_bm25.jsonl", "stats.json"):
        (d / name).write_bytes(((tmp_path / "again" / "python") / name).read_bytes())
    assert _screen(model_dir, tmp_path / "out", "--language", "python") == 0
    assert {p.name: p.read_bytes() for p in d.iterdir()} == done


def test_screen_errors_name_the_file_and_line(model_dir, tmp_path, capsys):
    d = tmp_path / "out" / "python"
    d.mkdir(parents=True)
    (d / "line_completion.jsonl").write_text('{"prompt": "x", "groundtruth": "y", "metadata": {}}\n', "utf-8")
    assert _screen(model_dir, tmp_path / "out") == 2
    assert f"{d / 'line_completion.jsonl'}:1: missing metadata.task_id" in capsys.readouterr().err
    assert _screen(model_dir, tmp_path / "out", "--language", "go") == 2
    assert "no such split" in capsys.readouterr().err
    assert _screen(model_dir, tmp_path / "empty-dir-that-does-not-exist") == 2
