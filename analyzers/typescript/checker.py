"""The original-tree compile through our checker script (``checker.js``): tsc's own diagnostics, plus the cross-file
references the type checker resolves.

A stub answers nothing about a value whose type is *inferred* (``const card = deps.sourceCard; card.scripts``,
callback parameters typed by a contextual project type): no diagnostic and no annotation reveals those members.
The script builds the Program from the same tsconfig tsc would read, prints the diagnostics exactly as
``tsc --pretty false`` does (so ``tsc_output.parse_tsc_output`` reads them), then resolves every identifier of the
walked files with the checker and prints those whose symbol is declared only in other project files
(``CheckerRef``).  Same pinned TypeScript package, same confined runner, one process: no extra compile.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

from benchsmith.analyzers.base import json_lines
from benchsmith.analyzers.typescript import compile as compile_
from benchsmith.analyzers.typescript.model import CheckerRef, CompileOutcome, Plan
from benchsmith.analyzers.typescript.uses import kind_of
from benchsmith.records import CrossFileRef, Definition, Reason
from benchsmith.runner import ContainerSpec, RunResult

CHECKER_JS = Path(__file__).with_name("checker.js")
SENTINEL = "//benchsmith-checker-references"  # printed by checker.js between the diagnostics and the references
CONTAINER_TYPESCRIPT = "/opt/typescript/lib/typescript.js"  # where tsc.Dockerfile unpacks the pinned release
CONTAINER_CHECKER_DIR = "/work/checker"
JOB_FILE = "checker-job.json"
CHECKER_DIAGNOSTIC = "type-checker"  # CrossFileRef.diagnostic of the references the checker resolved
# bounds on what one run reports (the runner also caps its output): a generated file of thousands of uses is not
# where examples come from, and a whole repository stays well under the output cap at ~200 bytes a record
MAX_PER_FILE = 5_000
MAX_TOTAL = 200_000


@dataclass
class CheckerOutput:
    diagnostics: str  # what tsc --pretty false would have printed
    refs: list[CheckerRef]
    complete: bool  # the script's final record was read (a crash or a cut output leaves it out)
    capped: list[str]


def typescript_module(tsc: Path) -> Path:
    """The compiler API module (``lib/typescript.js``) of the package holding ``tsc`` (``lib/tsc.js``/``bin/tsc``)."""
    real = Path(os.path.realpath(tsc))
    lib = real.parent if real.parent.name == "lib" else real.parent.parent / "lib"
    return lib / "typescript.js"


def argv(container: bool, tsc: Path, heap_mb: int) -> list[str]:
    """node, the script and the compiler API module; the tsconfig and the job file follow."""
    if container:
        return ["node", f"{CONTAINER_CHECKER_DIR}/{CHECKER_JS.name}", CONTAINER_TYPESCRIPT]
    node, heap = compile_.local_argv(tsc, heap_mb)[:2]
    return [node, heap, str(CHECKER_JS), str(typescript_module(tsc))]


def write_job(cfg_dir: Path, tree_ref: str, walk: list[str], project: list[str]) -> Path:
    """The job file beside our tsconfig: which files to walk, which count as the project."""
    job = {"walk": [_under(tree_ref, f) for f in walk], "project": [_under(tree_ref, f) for f in project],
           "max_per_file": MAX_PER_FILE, "max_total": MAX_TOTAL}
    path = cfg_dir / JOB_FILE
    path.write_text(json.dumps(job, indent=0, sort_keys=True), encoding="utf-8")
    return path


def _under(tree_ref: str, rel: str) -> str:
    return f"{tree_ref.rstrip('/')}/{rel}"


def outcome(res: RunResult, files: list[str], container: ContainerSpec | None, timeout: float,
            tree_ref: str) -> CompileOutcome:
    """``compile.outcome`` of the diagnostics part; a run whose references did not all come back (the script
    failed after the diagnostics, the output was cut) is a failed run, not a run without references."""
    parsed = parse_output(res.stdout, tree_ref)
    out = compile_.outcome(dataclasses.replace(res, stdout=parsed.diagnostics), files, container, timeout)
    if out.messages is None:
        return out
    if not parsed.complete:
        tail = " | ".join(ln.strip() for ln in res.stderr.strip().splitlines()[-3:])
        return CompileOutcome(None, Reason.TOOL_CRASH, f"checker.js did not finish: {tail[:500]}", res.duration)
    out.checked = parsed.refs
    out.capped = parsed.capped
    return out


def parse_output(stdout: str, tree_ref: str) -> CheckerOutput:
    """Split the script's output into tsc's diagnostics and the references (paths made relative to the tree)."""
    head, sep, tail = stdout.rpartition("\n" + SENTINEL + "\n")
    if not sep:
        if stdout.startswith(SENTINEL + "\n"):  # no diagnostic at all
            head, tail = "", stdout[len(SENTINEL) + 1:]
        else:
            return CheckerOutput(stdout, [], False, [])
    prefix = tree_ref.rstrip("/") + "/"
    refs: list[CheckerRef] = []
    complete, capped = False, []
    for rec in json_lines(tail):
        if rec.get("done"):
            complete = True
            capped = [str(f).removeprefix(prefix) for f in rec.get("capped", [])]
            continue
        try:
            refs.append(CheckerRef(str(rec["file"]).removeprefix(prefix), int(rec["line"]), int(rec["character"]),
                                   str(rec["name"]), str(rec["owner"]), str(rec["decl_file"]).removeprefix(prefix),
                                   (int(rec["start"][0]), int(rec["start"][1])),
                                   (int(rec["end"][0]), int(rec["end"][1]))))
        except (KeyError, TypeError, ValueError, IndexError):
            continue
    return CheckerOutput(head + "\n" if head else "", refs, complete, capped)


def to_reference(plan: Plan, found: CheckerRef, tree) -> CrossFileRef | None:
    """A ``CrossFileRef`` (with its kind and definition) on our own line numbering; None when a position does not
    fall on the name in our text (the two sides disagree about the file)."""
    info, decl = plan.files.get(found.file), plan.files.get(found.decl_file)
    if info is None or decl is None or found.decl_file == found.file:
        return None
    offset = info.positions.from_tsc(found.line + 1, found.character + 1)
    start = decl.positions.from_tsc(found.start[0] + 1, found.start[1] + 1)
    end = decl.positions.from_tsc(found.end[0] + 1, found.end[1] + 1)
    if offset is None or start is None or end is None or not info.text.startswith(found.name, offset):
        return None
    line, col = info.positions.line_col(offset)
    definition = Definition(found.decl_file, decl.positions.line_col(start)[0],
                            decl.positions.line_col(max(start, end - 1))[0], found.name)
    ref = CrossFileRef(found.file, line, col, found.name, found.owner, found.decl_file, CHECKER_DIAGNOSTIC,
                       "resolved by the type checker", definition=definition)
    kind = kind_of(plan, tree, ref)
    if kind is None:  # no tree-sitter leaf starts at the name: the two parsers disagree about this file
        return None
    ref.kind = kind
    return ref
