"""JSONL -> Hugging Face DatasetDict / parquet with explicit Features; deterministic bytes; clear errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from benchsmith import export as E
from benchsmith.builders.cceval import writers as W
from benchsmith.jsonio import write_jsonl

datasets = pytest.importorskip("datasets", reason="datasets is in the hf extra")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is in the hf extra")


def _record(i: int, lang: str, *, extra: bool = True, score=1.5) -> dict:
    md = {"task_id": f"{lang}/{i}", "repository": "acme-lib", "file": f"src/f{i}.x", "context_start_lineno": 0,
          "groundtruth_start_lineno": 10 + i, "right_context_start_lineno": 11 + i}
    if extra:
        md.update({"language": lang, "symbol": f"sym{i}", "defining_file": None, "commit": "abc"})
    return {
        "prompt": f"import x\nvalue = {i}\n", "groundtruth": f"x.sym{i}()", "right_context": "\n",
        "metadata": md,
        "crossfile_context": {"text": "# Here are ...\n", "list": [
            {"retrieved_chunk": "def sym():\n    pass", "filename": "x.py", "score": score}]},
    }


def _build(root: Path) -> Path:
    write_jsonl(root / "python" / "line_completion_rg1_bm25.jsonl", [_record(i, "python") for i in range(3)])
    write_jsonl(root / "python" / "line_completion_oracle_bm25.jsonl", [_record(i, "python", score=2) for i in range(3)])
    write_jsonl(root / "java" / "line_completion_rg1_bm25.jsonl", [_record(0, "java", extra=False)])
    write_jsonl(root / "java" / "line_completion_oracle_bm25.jsonl", [])
    (root / "java" / "stats.json").write_text("{}")
    write_jsonl(root / "humanext" / "direct.jsonl",
                [{"task_id": "HX/0", "prompt": "def f():\n", "stop": ["\ndef"], "seed": None, "extra": {"k": 1}}])
    return root


def _tree_hash(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def test_hf_dataset_dict_has_one_split_per_language_and_setting_with_explicit_features(tmp_path):
    root = _build(tmp_path / "out")
    summary = E.write_outputs(root, {"jsonl", "hf", "parquet"})
    assert summary.counts == {
        "java_line_completion_oracle_bm25": 0, "java_line_completion_rg1_bm25": 1,
        "python_line_completion_oracle_bm25": 3, "python_line_completion_rg1_bm25": 3, "humanext_direct": 1,
    }
    dd = datasets.load_from_disk(str(root / "hf"))
    assert sorted(dd) == sorted(summary.counts)
    feats = dd["python_line_completion_rg1_bm25"].features
    assert list(feats) == ["prompt", "groundtruth", "right_context", "metadata", "crossfile_context"]
    assert feats["metadata"]["groundtruth_start_lineno"] == datasets.Value("int64")
    assert feats["metadata"]["defining_file"] == datasets.Value("string")  # null everywhere, still typed
    inner = feats["crossfile_context"]["list"]
    inner = inner[0] if isinstance(inner, list) else inner.feature  # datasets < 4 keeps [..], 4+ List(..)
    assert inner["score"] == datasets.Value("float64")
    # every CrossCodeEval split shares the features (the empty one too); the java record gets null extras
    assert dd["java_line_completion_oracle_bm25"].features == feats
    java = dd["java_line_completion_rg1_bm25"][0]
    assert java["metadata"]["symbol"] is None and java["metadata"]["task_id"] == "java/0"
    # oracle scores were written as JSON ints (2): a float column all the same
    assert dd["python_line_completion_oracle_bm25"][0]["crossfile_context"]["list"][0]["score"] == 2.0
    # records round-trip to what the JSONL holds (drop-in: same keys, types and nesting)
    src = [json.loads(l) for l in (root / "python" / "line_completion_rg1_bm25.jsonl").read_text().splitlines()]
    assert [dict(r) for r in dd["python_line_completion_rg1_bm25"]] == src
    hx = dd["humanext_direct"][0]
    assert hx["stop"] == ["\ndef"] and hx["extra"] == {"k": 1} and hx["seed"] is None
    table = pq.read_table(root / "parquet" / "python" / "line_completion_rg1_bm25.parquet")
    assert table.num_rows == 3 and table.column_names == list(feats)
    assert (root / "parquet" / "humanext" / "direct.parquet").is_file()


def test_outputs_are_byte_identical_across_runs(tmp_path):
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b")
    E.write_outputs(a, ["hf", "parquet"])
    E.write_outputs(b, ["hf", "parquet"])
    assert _tree_hash(a / "hf") == _tree_hash(b / "hf")
    assert _tree_hash(a / "parquet") == _tree_hash(b / "parquet")
    before = _tree_hash(a / "hf")
    E.write_outputs(a, ["hf"])  # rewriting in place swaps the directory, same bytes, no leftovers
    assert _tree_hash(a / "hf") == before
    assert not any(p.name.startswith(".") for p in a.iterdir())


def test_type_clash_names_file_record_and_field(tmp_path):
    root = _build(tmp_path / "out")
    bad = _record(7, "python")
    bad["crossfile_context"]["list"][0]["score"] = "high"
    write_jsonl(root / "python" / "line_completion_rg1_bm25.jsonl", [_record(0, "python"), bad])
    with pytest.raises(E.SchemaError, match=r"line_completion_rg1_bm25.jsonl: record 2: field crossfile_context.list\[\].score"):
        E.write_outputs(root, ["hf"])
    assert not (root / "hf").exists()


def test_missing_fields_and_broken_json_are_reported(tmp_path):
    root = tmp_path / "out"
    write_jsonl(root / "python" / "line_completion.jsonl", [{"prompt": "x"}])
    with pytest.raises(E.SchemaError, match="record 1: missing CrossCodeEval field"):
        E.write_outputs(root, ["jsonl"])
    (root / "python" / "line_completion.jsonl").write_text('{"prompt": \n')
    with pytest.raises(ValueError, match=r"line_completion.jsonl:1: invalid JSON"):
        E.write_outputs(root, ["jsonl"])


def test_nothing_to_write_and_bad_arguments_are_clear(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="build the benchmark first"):
        E.write_outputs(tmp_path / "empty")
    with pytest.raises(ValueError, match="unknown output format 'csv'"):
        E.write_outputs(tmp_path / "empty", ["csv"])
    with pytest.raises(FileNotFoundError, match="not a saved DatasetDict"):
        E.push_to_hub(tmp_path / "empty", "me/ds")
    root = _build(tmp_path / "out")
    E.write_outputs(root, ["hf"])
    with pytest.raises(ValueError, match="repo_id"):
        E.push_to_hub(root / "hf", "not a repo id")


def test_cli_prints_a_table(tmp_path, capsys):
    root = _build(tmp_path / "out")
    assert W.main([str(root), "--formats", "jsonl", "parquet"]) == 0
    out = capsys.readouterr().out
    assert "python_line_completion_rg1_bm25" in out and (root / "parquet").is_dir() and not (root / "hf").exists()
    assert W.main([str(tmp_path / "missing")]) == 2
