"""Dataset card: counts, exclusion reasons, deterministic figures, command and versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.builders.cceval.card import write_card
from benchsmith.jsonio import write_json, write_jsonl

pytest.importorskip("matplotlib", reason="matplotlib is in the hf/report extras")


def _rec(i: int, repo: str, gt: str) -> dict:
    md = {"task_id": f"{repo}/{i}", "repository": repo, "file": "a.py", "context_start_lineno": 0,
          "groundtruth_start_lineno": 3, "right_context_start_lineno": 4}
    return {"prompt": "a\n" * (i + 2), "groundtruth": gt, "right_context": "", "metadata": md,
            "crossfile_context": {"text": "", "list": []}}


def _build(root: Path) -> Path:
    py = [_rec(0, "acme-a", "x" * 12), _rec(1, "acme-a", "yy"), _rec(2, "beta-b", "z" * 40)]
    for name in ("line_completion", "line_completion_rg1_bm25", "line_completion_oracle_bm25"):
        write_jsonl(root / "python" / f"{name}.jsonl", py)
    write_jsonl(root / "java" / "line_completion.jsonl", [_rec(0, "gamma-c", "foo();")])
    write_jsonl(root / "python" / "excluded.jsonl", [
        {"item_id": "acme-a/x.py", "stage": "source", "reason": "not_utf8", "detail": "", "repository": "acme-a"},
        {"item_id": "acme-a/1", "stage": "example_filter", "reason": "duplicate_groundtruth", "detail": "",
         "repository": "acme-a"}])
    write_json(root / "python" / "stats.json", {
        "dropped": {"not_utf8": 1, "duplicate_groundtruth": 4},
        "per_repository": [{"repository": "acme-a", "status": "ok", "files": 7, "examples": 2, "excluded": 5},
                           {"repository": "beta-b", "status": "ok", "files": 3, "examples": 1, "excluded": 0}],
        "tool_versions": {"pylint": "3.3.1"}})
    write_jsonl(root / "java" / "excluded.jsonl", [
        {"item_id": "gamma-c", "stage": "analyzer", "reason": "toolchain_timeout", "detail": "", "repository": "gamma-c"}])
    return root


def test_card_lists_counts_reasons_command_and_versions(tmp_path):
    root = _build(tmp_path / "out")
    card = write_card(root, ["build-ccEval", "--language", "python", "--repos", "my repos.txt"], {"javac": "17.0.12"})
    text = card.read_text()
    assert text.startswith("---\n") and "# Cross-file code completion benchmark" in text
    assert "4 examples in 2 language(s)" in text
    assert "| language | line_completion | line_completion_oracle_bm25 | line_completion_rg1_bm25 |" in text
    assert "| java | 1 | - | - |" in text and "| python | 3 | 3 | 3 |" in text
    assert "| python | acme-a | 2 | 7 | 5 | ok |" in text and "| java | gamma-c | 1 | - | - | - |" in text
    # stats.json counts win for python; java has only excluded.jsonl; ordered by total count
    assert "| duplicate_groundtruth | example_filter | 0 | 4 | 4 |" in text
    assert "| toolchain_timeout | analyzer | 1 | 0 | 1 |" in text
    assert text.index("duplicate_groundtruth") < text.index("not_utf8")
    assert "build-ccEval --language python --repos 'my repos.txt'" in text
    for tool in ("| javac | 17.0.12 |", "| pylint | 3.3.1 |", "| python |", "| benchsmith |", "| tree-sitter |"):
        assert tool in text
    # the lock's pins the build used, named, and the one this build did not run at its locked version
    toolchains = next(line for line in text.splitlines() if line.startswith("Toolchains: "))
    assert "pylint 3.3.1" in toolchains and "javac 17.0.12" in toolchains and "tree-sitter " in toolchains
    assert "NOT as pinned in toolchains.lock: pylint 3.3.1 (lock: " in toolchains
    assert "javac 17.0.12 (lock" not in toolchains  # 17.0.12 is of the locked 17 series
    assert "| python | groundtruth (characters) | 18.0 | 12 | 40 | 40 |" in text
    assert (root / "figures" / "groundtruth_length.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "figures/prompt_length.png" in text


def test_card_and_figures_are_byte_identical_across_builds(tmp_path):
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b")
    for root in (a, b):
        write_card(root, ["build-ccEval"], {})
    assert (a / "README.md").read_bytes() == (b / "README.md").read_bytes()
    for fig in ("groundtruth_length.png", "prompt_length.png"):
        data = (a / "figures" / fig).read_bytes()
        assert data == (b / "figures" / fig).read_bytes()
        assert b"Software" not in data and b"matplotlib" not in data


def test_empty_build_still_gets_a_card(tmp_path):
    root = tmp_path / "out"
    write_json(root / "python" / "stats.json", {"dropped": {}, "per_repository": []})
    text = write_card(root, [], {}).read_text()
    assert "0 examples in 1 language(s)" in text and "Nothing was excluded." in text
    with pytest.raises(FileNotFoundError, match="build the benchmark first"):
        write_card(tmp_path / "missing", [], {})


def test_card_lists_the_grammar_of_every_registered_language(tmp_path):
    from importlib import metadata

    from benchsmith.analyzers import registry

    root = _build(tmp_path / "out")
    text = write_card(root, ["build-ccEval"], {}).read_text()
    owners = metadata.packages_distributions()
    for language, cls in registry().items():
        (dist,) = owners[cls.grammar_module]  # installed grammar wheel of this analyzer
        assert f"| {dist} | {metadata.version(dist)} |" in text, language
    assert "| tree-sitter-go |" in text and "| tree-sitter-javascript |" in text
