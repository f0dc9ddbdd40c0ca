"""Invariants every built example must satisfy, shared by the per-language integration tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

CCEVAL_KEYS = ["prompt", "groundtruth", "right_context", "metadata"]
CCEVAL_META = ["task_id", "repository", "file", "context_start_lineno", "groundtruth_start_lineno",
               "right_context_start_lineno"]


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def check_split(split: Path, roots: dict[str, Path]) -> list[dict]:
    """Assert the CrossCodeEval schema and the reconstruction/cross-file invariants; returns the examples.

    ``roots`` maps repository id -> directory holding that repository's files as the builder read them."""
    examples = load(split)
    ids = [e["metadata"]["task_id"] for e in examples]
    assert len(ids) == len(set(ids)), "task ids must be unique"
    for ex in examples:
        assert list(ex)[:4] == CCEVAL_KEYS
        meta = ex["metadata"]
        for key in CCEVAL_META:
            assert key in meta, key
        for key in ("context_start_lineno", "groundtruth_start_lineno", "right_context_start_lineno"):
            assert isinstance(meta[key], int)
        root = roots[meta["repository"]]
        text = (root / meta["file"]).read_bytes().decode("utf-8").removeprefix("\ufeff")
        joined = ex["prompt"] + ex["groundtruth"] + ex["right_context"]
        if joined != text and "\r" in text and "\r" not in joined:
            # --cursor released reads the file as the released benchmark did: CRLF and lone CR as LF, same lines
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        assert joined == text, meta["task_id"]
        assert meta["groundtruth_start_lineno"] == ex["prompt"].count("\n")
        assert meta["right_context_start_lineno"] == meta["groundtruth_start_lineno"] + ex["groundtruth"].count("\n") + 1
        # The groundtruth starts with the cross-file name (the task id's place), or with --cursor released holds it
        # on its first line; the name is defined in another file of the same repository.
        symbol = meta["symbol"]
        line, column = (int(x) - 1 for x in meta["task_id"].rsplit(":", 2)[1:])
        name_at = sum(len(t) + 1 for t in text.split("\n")[:line]) + column
        assert text.startswith(symbol, name_at), meta["task_id"]
        assert len(ex["prompt"]) <= name_at < len(ex["prompt"]) + len(ex["groundtruth"]), meta["task_id"]
        assert "\n" not in text[len(ex["prompt"]):name_at], meta["task_id"]
        check_kind_and_definition(meta, root)
        defining = meta["defining_file"]
        assert defining and defining != meta["file"], meta["task_id"]
        definition = (root / defining).read_text(encoding="utf-8", errors="replace")
        names = {symbol}
        # An aliased import (`from m import a as b`, `import { a as b }`) uses b; the defining file declares a.
        names.update(re.findall(rf"\b(\w+)\s+as\s+{re.escape(symbol)}\b", text))
        if meta.get("reference_kind") == "attribute":
            names.add(symbol + "Attribute")  # C#: `[Foo]` names the class FooAttribute
        assert any(re.search(rf"\b{re.escape(n)}\b", definition) for n in names), (meta["task_id"], symbol, defining)
    check_self_consistency(examples)
    return examples


def check_kind_and_definition(meta: dict, root: Path) -> None:
    """Each example says what kind of cross-file use it is, where its cursor sits, and, where known, where the API
    is defined: a line range of another file of the repository."""
    from benchsmith.records import CursorPlace, ReferenceKind

    assert meta["reference_kind"] in {k.value for k in ReferenceKind}, meta["task_id"]
    assert meta["cursor_place"] in {p.value for p in CursorPlace}, meta["task_id"]
    if meta.get("definition") is not None:
        problem = definition_problem(meta, root)
        assert problem is None, (meta["task_id"], meta["definition"], problem)


def definition_problem(meta: dict, root: Path) -> str | None:
    """None when ``metadata.definition`` is where the example says: another file of the repository, a line range
    that exists there, and the symbol's name in those lines; else why not (``bench/cross_file_check.py`` counts
    these per kind on any built split)."""
    definition = meta.get("definition")
    if not definition:
        return "no definition"
    if definition["file"] == meta["file"]:
        return "defined in the same file"
    try:
        lines = (root / definition["file"]).read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return "definition file not in the repository"
    start, end = definition["start_line"], definition["end_line"]
    if not 0 <= start <= end < len(lines):
        return "definition lines out of range"
    name = (definition.get("symbol") or meta.get("symbol") or "").split(".")[-1]
    if name and not re.search(rf"\b{re.escape(name)}\b", "\n".join(lines[start:end + 1])):
        return f"{name!r} not in the definition's lines"
    return None


def check_self_consistency(examples: list[dict]) -> None:
    """Scorable by construction: each groundtruth, given as the prediction, gets EM 100 / ES 100 from the released
    scorer (compat mode, its four languages) and from the default scorer.  The one exception is declared: a
    ``--cursor released`` example names the modes it falls short in in ``metadata.unscorable_modes`` (the released
    benchmark has such examples), and then it must really fall short there."""
    from benchsmith.builders.cceval.scorability import declared_modes, self_scores
    from benchsmith.records import Language

    for ex in examples:
        declared = declared_modes(ex)
        for s in self_scores(ex["prompt"], ex["groundtruth"], Language(ex["metadata"]["language"])):
            if s.mode.value in declared:
                assert not s.ok, (ex["metadata"]["task_id"], "declared unscorable but scores full marks")
                continue
            assert s.ok, (ex["metadata"]["task_id"], s.mode.value, s.em, s.es, ex["groundtruth"], s.kept)
