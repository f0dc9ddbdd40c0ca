"""The verdicts of the compiles on the tree: which files mcs could not read or whose declarations it rejects
(recorded and left out of both trees), whether a compile got past the declarations to the method bodies, which
files' stubs break a declaration, and the failure of a whole repository."""

from __future__ import annotations

import re

from benchsmith.analyzers.base import AnalysisResult, strip_generics
from benchsmith.analyzers.csharp.compile import CompileOutcome
from benchsmith.analyzers.csharp.copy import Prepared
from benchsmith.analyzers.csharp.diagnostics import CsDiagnostic, quoted
from benchsmith.analyzers.csharp.positions import offset as _offset, position as _position
from benchsmith.analyzers.csharp.scan import CsFileInfo, in_body
from benchsmith.analyzers.csharp.shim import is_probe
from benchsmith.analyzers.csharp.stubs import CsStubs
from benchsmith.records import Exclusion, Reason, Stage

MAX_CRASH_ROUNDS = 3  # compiles again without a file whose declaration crashes mcs, at most this often
UNSUPPORTED_PREFIX = "unsupported_syntax:"  # an UNSUPPORTED_SYNTAX exclusion's detail names the construct after it


def parse_verdict(repo: str, out: CompileOutcome, texts: dict[str, str], infos: dict[str, CsFileInfo],
                   result: AnalysisResult, prepared: Prepared | None = None) -> set[str] | None:
    """The files the parse pass could not read, and those with a construct the down-level pass could not
    rewrite, are recorded and left out of both compiles."""
    if out.diagnostics is None and not out.error.startswith("timeout"):
        # A parser crash (CS0589 is reported per file, but an unhandled exception aborts the run): fall back to
        # tree-sitter's verdict so one odd file does not cost the repository.
        out = CompileOutcome([])
    if out.diagnostics is None:
        fail(result, repo, out.error)
        return None
    bad: dict[str, CsDiagnostic] = {}
    for d in out.diagnostics:
        if d.kind == "error" and d.file in texts and d.file not in bad:
            bad[d.file] = d
    unsupported = prepared.unsupported if prepared is not None else {}
    for path in sorted(set(bad) | set(unsupported)):
        if path in unsupported:
            first = unsupported[path][0]
            others = sorted({u.construct for u in unsupported[path][1:]} - {first.construct})
            detail = f"{UNSUPPORTED_PREFIX}{first.construct} line {first.line + 1}" + (
                f" (also {', '.join(others)})" if others else "")
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.UNSUPPORTED_SYNTAX,
                                               detail, repo))
            continue
        d = bad[path]
        copy = prepared.copies.get(path) if prepared is not None else None
        ts_error = copy.pre_ts_error if copy is not None and copy.pre_ts_error is not None \
            else infos[path].ts_error
        reason = Reason.SYNTAX_ERROR if ts_error else Reason.TOOLCHAIN_CANNOT_PARSE
        line = original_line(prepared, path, texts, d)
        why = f"; preprocessor: {copy.pre.error}" if copy is not None and copy.pre.error else ""
        result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, reason,
                                           f"mcs line {line}: {d.code} {d.message[:200]}{why}", repo))
    result.stats["unparsed_files"] = len(bad)
    result.stats["unsupported_files"] = len(set(unsupported) - set(bad))
    return set(texts) - set(bad) - set(unsupported)


def reject_declarations(repo: str, diags: list[CsDiagnostic], infos: dict[str, CsFileInfo],
                         texts: dict[str, str], compiled: set[str], result: AnalysisResult,
                         prepared: Prepared) -> set[str]:
    """The files with an error outside every method body, each recorded with mcs's first such message; none
    when that would leave nothing to compile."""
    first: dict[str, CsDiagnostic] = {}
    for d in diags:
        if d.kind != "error" or d.file not in compiled or d.file in first:
            continue
        off = _offset(texts[d.file], d.line, d.col, d.compiler)
        if off is not None and not in_body(infos[d.file], texts[d.file], off):
            first[d.file] = d
    if not first or len(first) >= len(compiled):
        return set()
    for path, d in sorted(first.items()):
        result.exclusions.append(Exclusion(
            f"{repo}/{path}", Stage.ANALYZER, Reason.TOOLCHAIN_CANNOT_PARSE,
            f"mcs rejects a declaration, line {original_line(prepared, path, texts, d)}: {d.code} "
            f"{d.message[:200]}", repo))
    return set(first)


def stubbed_reached_bodies(diags: list[CsDiagnostic], plans: dict[str, CsStubs], dropped: set[str],
                            infos: dict[str, CsFileInfo], texts: dict[str, str]) -> bool:
    if any(is_probe(d) for d in diags):
        return True
    for d in diags:
        if d.kind != "error" or d.file not in texts:
            continue
        if d.file in plans and d.file not in dropped:
            spos = _offset(plans[d.file].stubbed_text, d.line, d.col, d.compiler)
            off = plans[d.file].insertions.to_original(spos) if spos is not None else None
        else:
            off = _offset(texts[d.file], d.line, d.col, d.compiler)
        if off is not None and in_body(infos[d.file], texts[d.file], off):
            return True
    return False


def new_declaration_errors(before, after, plans, infos, texts, dropped, whole_files: bool = False
                           ) -> tuple[set[str], set[tuple[str, str]]]:
    """What breaks a declaration in the stubbed tree, from the errors outside every body that the original tree
    did not have: the stubs a message names, as (top-level type, stub name) (a stub nested in a base class is
    inherited: ``Equals(Base.PyObject)`` in a derived class no longer overrides ``Equals(PyObject)``), and the
    files of the errors that name none (every stub of theirs may be the cause).  ``whole_files``: the files of the
    named stubs and of the errors instead, every error's (what a last recompile takes, to be sure to get past the
    declarations)."""
    seen = {(d.file, d.line, d.col, d.code) for d in before}
    hosts: dict[str, str] = {}
    for path, plan in sorted(plans.items()):
        if plan.insertions.points:
            for fqn in plan.carried:
                hosts.setdefault(fqn, path)
    files: set[str] = set()
    stubs: set[tuple[str, str]] = set()
    for d in after:
        if d.kind != "error" or d.file not in texts or (d.file, d.line, d.col, d.code) in seen:
            continue
        plan = plans.get(d.file) if d.file not in dropped else None
        if plan is not None:
            spos = _offset(plan.stubbed_text, d.line, d.col, d.compiler)
            opos = plan.insertions.to_original(spos) if spos is not None else None
        else:
            opos = _offset(texts[d.file], d.line, d.col, d.compiler)
        if opos is not None and in_body(infos[d.file], texts[d.file], opos):
            continue
        named = []  # (host file, (top-level type, stub name))
        for name in quoted(d.message):
            # `Ns.T.M(Ns.Base<A,B>.Stub)`, `Ns.Top.IStub.Member`: every run of two or more segments of every
            # dotted name in it, type arguments left out
            for part in re.findall(r"[\w.]+", strip_generics(name)):
                segs = part.split(".")
                for i in range(len(segs) - 1):
                    for j in range(i + 2, len(segs) + 1):
                        host = hosts.get(".".join(segs[i:j]))
                        if host is not None and host not in dropped:
                            named.append((host, (segs[j - 2], segs[j - 1])))
        if named and not whole_files:
            stubs |= {key for _, key in named}
            continue
        if plan is not None:
            files.add(d.file)
        files |= {host for host, _ in named}
    return files, stubs


def fail(result: AnalysisResult, repo: str, error: str) -> AnalysisResult:
    reason = Reason.TOOL_TIMEOUT if error.startswith("timeout") else Reason.TOOL_CRASH
    result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason, error, repo))
    return result


def original_line(prepared: Prepared | None, path: str, texts: dict[str, str], d: CsDiagnostic) -> int:
    """The 1-based line of the original file where a diagnostic of the analysed copy points."""
    copy = prepared.copies.get(path) if prepared is not None else None
    if copy is None:
        return d.line
    # (mapped even without a down-level edit: the compiler may count line terminators benchsmith does not)
    off = copy.to_original(_offset(texts[path], d.line, d.col, d.compiler) or 0)
    return _position(copy.original, off)[0] + 1


def crashed_on_file(plan, out: CompileOutcome, result: AnalysisResult) -> bool:
    """When the compiler crashed on a declaration of one compiled file (mcs: ``NotImplementedException: tuples >
    7``), that file is recorded (``toolchain_crash``) and taken out of ``plan.compiled``; False when the crash names
    no such file, the rounds for this are spent, or no other file would be left."""
    path = out.crash_file
    if path is None or path not in plan.compiled or len(plan.compiled) < 2 or \
            plan.crashes >= MAX_CRASH_ROUNDS:
        return False
    plan.crashes += 1
    plan.compiled.discard(path)
    line = original_line(plan.prepared, path, plan.texts, CsDiagnostic(path, out.crash_line, 1, "error", "", ""))
    result.exclusions.append(Exclusion(f"{plan.repo}/{path}", Stage.ANALYZER, Reason.TOOL_CRASH,
                                       f"mcs crashes on a declaration, line {line}: {out.error[:300]}", plan.repo))
    return True
