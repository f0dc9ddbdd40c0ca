"""The parse pass put off until the first compile has spoken.

mcs resolves nothing while any file has a syntax error: it reports the syntax errors alone and stops.  So a compile
that reports no error at all, or one error of name resolution or type checking, has parsed every file.  Where
tree-sitter reads every analysed copy cleanly (mcs then almost always parses them too), the first shim round
compiles at once on the plan a clean parse pass would give (every file, less those the down-level pass could not
rewrite), and the ``--parse`` run only happens when that compile's errors could all be syntax errors.  When it
then leaves a file out, the first round is compiled again without it: the verdict, its records and the rest of the
analysis are exactly those of the parse pass run up front."""

from __future__ import annotations

from benchsmith.analyzers.base import AnalysisResult
from benchsmith.analyzers.csharp import verdicts
from benchsmith.analyzers.csharp.compile import CompileOutcome
from benchsmith.analyzers.csharp.copy import Prepared
from benchsmith.analyzers.csharp.diagnostics import Compiler
from benchsmith.analyzers.csharp.plan import CsPlan
from benchsmith.analyzers.csharp.shim import Shim
from benchsmith.analyzers.csharp.stubs import stub_counts
from benchsmith.enums import StrEnum


# Errors mcs reports only once every file parsed (checked on mcs 6.8 beside a syntax error in another file, which
# leaves that error alone).  Not CS0101, CS0102, CS0128 or CS0136: mcs's parser reports those itself.
SEMANTIC_CODES = frozenset({
    "CS0019", "CS0029", "CS0103", "CS0111", "CS0115", "CS0117", "CS0120", "CS0122", "CS0161", "CS0176", "CS0234",
    "CS0246", "CS0266", "CS0426", "CS0535", "CS0539", "CS1061", "CS1501", "CS1502", "CS1503", "CS1729"})


class Settled(StrEnum):
    KEEP = "keep"  # every file parses: the first round stands
    AGAIN = "again"  # the verdict left files out: the first round is compiled again without them
    STOP = "stop"  # the parse pass failed, or no file is left with stubs (recorded)


def may_defer(prepared: Prepared, kind: Compiler, predict: bool) -> bool:
    """Whether the parse pass waits for the first compile: mcs in the fast mode (the reference runs every step in
    turn), and no analysed copy tree-sitter cannot read (where it cannot, mcs often cannot either, and a first
    round compiled for nothing would cost more than the parse pass)."""
    if kind is not Compiler.MCS or not predict:
        return False
    return all(c.tree is not None and not c.pre_ts_error and not c.tree.root_node.has_error
               for c in prepared.copies.values())


def parsed_every_file(diagnostics) -> bool:
    """Whether a compile's messages prove that mcs parsed every file: no error, or one it only reports then."""
    errors = [d for d in diagnostics if d.kind == "error"]
    return not errors or any(d.code in SEMANTIC_CODES for d in errors)


def assumed_compiled(texts: dict[str, str], prepared: Prepared) -> set[str]:
    """The files a parse pass that finds no syntax error leaves in (``verdicts.parse_verdict``)."""
    return set(texts) - set(prepared.unsupported)


def settle(analyzer, plan: CsPlan, first: CompileOutcome, result: AnalysisResult) -> Settled:
    """The verdict the parse pass would have given, once the first round's original compile is in: records it as
    the up-front pass would, and brings ``plan`` to the verdict's files when they differ."""
    plan.parse_pending = False
    if first.diagnostics is not None and parsed_every_file(first.diagnostics):
        verdicts.parse_verdict(plan.repo, CompileOutcome([]), plan.texts, plan.infos, result, plan.prepared)
        return Settled.KEEP
    # The files as the parse pass reads them: the analysed copies (the first round blanks nothing; the shim and
    # the helpers it added to the tree are not listed).
    parsed = analyzer._parse_run(plan.orig_tree, sorted(plan.texts), plan.workdir, plan.known)
    compiled = verdicts.parse_verdict(plan.repo, parsed, plan.texts, plan.infos, result, plan.prepared)
    if compiled is None:
        return Settled.STOP
    if compiled == plan.compiled:
        return Settled.KEEP
    plan.compiled = compiled
    plan.restart_stubs()
    plan.shim = Shim.for_imports(plan.infos, compiled, plan.project_ns)
    result.stats.update(stub_counts(compiled, plan.plans))
    return Settled.AGAIN if plan.plans else Settled.STOP
