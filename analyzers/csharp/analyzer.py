"""C#: file-local stub types, one compile of the original tree and one of the stubbed tree, diff.

What both compiles see is the *analysed copy* of each file (``copy``): the C# preprocessor evaluated
(``preprocess``: inactive ``#if`` branches and directive lines blanked, every position kept, with the
symbols the project's ``*.csproj`` gives, read as data by ``project``), then, for mcs only, the down-level
pass (``downlevel``: C# 8-12 rewritten into the C# 7 mcs reads, with an exact edit map; the project's
``global using`` directives and the SDK's implicit usings placed in every file).  Every diagnostic position maps
back through the stub insertions and the edit map to the original text, where references are reported and
examples cut.  A construct the pass cannot rewrite is a recorded ``unsupported_syntax`` exclusion naming it.

C# has no per-file imports of project classes, so for each file the stubs replace the project types declared in
*other* files that it names (CrossCodeEval's dummy class in place of the real one).  As for Java, the stubs are
empty nested types appended right before the closing brace of each of the file's top-level classes and structs
(same line, so no position before them moves): a nested type shadows namespace and ``using``-imported types inside
the class body.  Parts of one ``partial`` type share their members, so their stubs are merged into one part; a
name that is also a member of the host type (``PyType PyType => ...``) gets no stub.

Compilers:
- ``mcs`` (mono, C# up to 7.x): one ``--parse`` pass finds the files it cannot read (recorded as
  ``toolchain_cannot_parse`` -- usually newer syntax -- or ``syntax_error`` when tree-sitter agrees); the rest are
  compiled in one invocation per tree.  mcs never checks method bodies once a declaration fails to resolve (a
  NuGet type in a signature, a missing ``using`` namespace), so the original tree first gets a *shim*: empty
  namespaces and placeholder types for every name mcs reports missing at declaration level, and ``override``
  blanked (and an explicit implementation of a placeholder interface made a plain member) where the base is a
  placeholder; both trees are compiled with the same shim, so the diff stays sound.
  A declaration mcs rejects itself (no placeholder helps) stops it before every body of the tree: those files are
  recorded (``toolchain_cannot_parse``, "mcs rejects a declaration") and left out of both trees.
  Speed (the two whole-tree compiles are the floor; ``bench/analyzer_csharp.py`` measures against it): the parse
  pass runs while tree-sitter scans, or, where tree-sitter reads every file, only when the first compile's errors
  do not prove that mcs parsed them all (``parse_check``), each shim round compiles the original and the stubbed
  tree side by side (the stubbed result of the round that reaches the method bodies is the one kept), a missing
  qualified name gets all its placeholders in one round, and stubs sure to break a declaration (a nested type
  overriding a member of a stubbed class, an override whose signature names a stub the base member does not
  see...) are left out up front; stubbed recompiles without the offending files' stubs remain only for a stubbed
  compile that still stopped before the bodies.  ``parallel=1, predict=False`` is the plain step-by-step reference.
- Roslyn ``csc`` (through ``dotnet``), used when ``dotnet`` with an SDK is on PATH (the first choice): it parses
  current C# and checks every body whatever fails elsewhere, so no parse pass, no shim and no down-level pass are
  needed; it gets the preprocessed copy too, and the implicit usings as one generated file of ``global using``
  directives.

Module map: ``copy`` (the analysed copy: ``preprocess`` + ``project`` + the ``downlevel`` pass), ``scan``
(tree-sitter index), ``stubs`` (stub planning), ``blockers`` (stubs sure to break a declaration), ``shim``
(placeholders for mcs; ``placeholders``: their text, nested types to any depth), ``compile`` (compiler calls),
``parse_check`` (the parse pass put off), ``verdicts`` (what a compile says about files), ``refs`` (attribution),
``kinds`` (the uses no error marks), ``roslyn`` (finding csc), ``plan`` (one analysis's state), ``toolchain``
(configs, tree-sitter's bytes, versions); this module holds the recipe.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

from benchsmith.analyzers.base import AnalysisResult, Analyzer, ReleasedCursor, Tree
from benchsmith.analyzers.csharp import parse_check, verdicts
from benchsmith.analyzers.csharp.blockers import predict_blockers
from benchsmith.analyzers.csharp.compile import (CompileOutcome, CompilerCalls, pool as _pool,
                                                 submit as _submit)
from benchsmith.analyzers.csharp.copy import prepare
from benchsmith.analyzers.csharp.diagnostics import Compiler, CsDiagnostic
from benchsmith.analyzers.csharp.kinds import scan_refs
from benchsmith.analyzers.csharp.plan import SHIM_FILE, CsPlan
from benchsmith.analyzers.csharp.project import ProjectIndex
from benchsmith.analyzers.csharp.positions import offset as _offset
from benchsmith.analyzers.csharp.refs import cs_ref, member_file
from benchsmith.analyzers.csharp.scan import scan_csharp
from benchsmith.analyzers.csharp.shim import Shim, is_probe, reached_bodies, shim_fixes
from benchsmith.analyzers.csharp.stubs import CsStubs, plan_all_stubs, stub_counts
from benchsmith.analyzers.csharp.toolchain import CsToolchain
from benchsmith.config_values import exclusions as config_exclusions
from benchsmith.files import RepoSnapshot, SourceFile, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, ReferenceKind, Stage
from benchsmith.runner import ToolMissing

KEPT_CODES = frozenset({"CS0117", "CS1061", "CS1729", "CS0246", "CS0103", "CS0426"})
MAX_SHIM_ROUNDS = 4
MAX_STUBBED_RECOMPILES = 3
MAX_REJECT_ROUNDS = 2  # compiles again without the files whose declarations mcs itself rejects

Found = tuple[CsDiagnostic, CsStubs]  # a new error of the stubbed compile and the stub plan of its file


def _tool_missing(result: AnalysisResult, repo: str, exc: ToolMissing) -> None:
    result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))


class CSharpAnalyzer(CsToolchain, CompilerCalls, Analyzer[CsPlan, CompileOutcome, Found]):
    language = "csharp"
    extensions = (".cs",)
    grammar_module = "tree_sitter_c_sharp"
    # bench/released.py on the released C# repositories: the cursor at the name (a type or attribute name), the
    # groundtruth through the first line ending a statement (an attribute with the member header after it)
    released_cursor = ReleasedCursor(line_end=True)
    reference_kinds = frozenset({ReferenceKind.MEMBER, ReferenceKind.INHERITED_MEMBER, ReferenceKind.TYPE,
                                 ReferenceKind.HERITAGE, ReferenceKind.ATTRIBUTE, ReferenceKind.CONSTRUCTOR})
    import_pattern = r"\s*(?:global\s+)?using\s+(?:static\s+)?(?:\w+\s*=\s*)?[\w.<>, ]+;"
    enclosing_ends = frozenset({"attribute_list", "enum_member_declaration"})
    grammar_function = "language"
    comment_prefix = "//"
    statement_terminators = frozenset({";", "{", "}"})
    dockerfile = "csharp.Dockerfile"

    mcs = "mcs"
    compiler: Compiler = Compiler.AUTO
    # Compiler processes at once (the parse pass runs beside the tree-sitter scan, the original- and stubbed-tree
    # compiles of a round side by side); 1 runs every step in turn.
    parallel: int = 2
    # Place whole qualified names in the shim and take out stubs sure to break a declaration up front, instead of
    # learning both from extra compiles.  False is the plain round-by-round reference (the bench compares them).
    predict: bool = True
    # The down-level pass (C# 8-12 -> C# 7 for mcs); False compiles the preprocessed text as it is.  Never with
    # Roslyn, which reads current C# itself.
    downlevel: bool = True

    def uses_downlevel(self) -> bool:
        """Whether ``analyze`` runs the down-level pass: only for mcs (Roslyn, the first choice where ``dotnet``
        exists, parses current C#)."""
        return self.downlevel and self._backend()[0] is Compiler.MCS

    # -- the recipe ------------------------------------------------------------------------------------------
    def plan(self, snapshot: RepoSnapshot, workdir: Path, result: AnalysisResult) -> CsPlan | None:
        """The analysed copies, the parse pass (mcs, beside the tree-sitter scan) and its verdict, the stubs."""
        repo = snapshot.name
        workdir.mkdir(parents=True, exist_ok=True)
        kind, roslyn = self._backend()
        result.stats["compiler"] = kind.value
        usable: dict[str, str] = {}
        for f in snapshot.files:
            if '"' in f.path and "'" in f.path:
                result.exclusions.append(Exclusion(f"{repo}/{f.path}", Stage.ANALYZER, Reason.UNSAFE_PATH,
                                                   "a path with both quote characters cannot go in a response file",
                                                   repo))
            elif f.path == SHIM_FILE or (f.path.startswith("__benchsmith_") and "/" not in f.path):
                result.exclusions.append(Exclusion(f"{repo}/{f.path}", Stage.ANALYZER, Reason.UNSAFE_PATH,
                                                   "name reserved for benchsmith's generated files", repo))
            else:
                usable[f.path] = f.text
        # project values outside their grammar (a TargetFramework carrying ` -doc:...`) were refused: say so
        result.exclusions.extend(config_exclusions(repo, ProjectIndex(snapshot.configs).rejections()))
        prepared = prepare(usable, snapshot.configs, downlevel=self.downlevel and kind is Compiler.MCS,
                           roslyn=kind is Compiler.CSC)
        result.stats.update(prepared.stats)
        result.tree_views = {p: c.pre.tree_bytes() for p, c in prepared.copies.items()}
        texts = prepared.texts()
        self._defines = prepared.defines
        known = set(texts) | {SHIM_FILE} | set(prepared.helpers)
        orig_tree, stub_tree = workdir / "original", workdir / "stubbed"
        for tree in (orig_tree, stub_tree):
            shutil.rmtree(tree, ignore_errors=True)
        deferred = parse_check.may_defer(prepared, kind, self.predict)
        pool = _pool(self.parallel)
        try:
            # The parse pass reads the original tree itself (the files as they are, before any placeholder); a
            # compile lists its files, so those it leaves out later may stay on disk.
            write_tree(orig_tree, texts)
            parsed = _submit(pool, self._parse_run, orig_tree, sorted(texts), workdir, known) \
                if kind is Compiler.MCS and not deferred else None
            infos = {p: scan_csharp(SourceFile(p, t), prepared.copies[p].tree, prepared.copies[p].scan_masks)
                     for p, t in texts.items()}
            compiled = parse_check.assumed_compiled(texts, prepared) if deferred else set(texts)
            plans = plan_all_stubs(infos, texts, compiled) if deferred else None
            if deferred and not plans:
                # nothing will be compiled to prove the files parse: the verdict is taken now, as up front
                parsed = _submit(None, self._parse_run, orig_tree, sorted(texts), workdir, known)
            if parsed is not None:
                compiled = verdicts.parse_verdict(repo, parsed.result(), texts, infos, result, prepared)
                if compiled is None:
                    return None
        except ToolMissing as exc:
            _tool_missing(result, repo, exc)
            return None
        finally:
            if pool is not None:
                pool.shutdown(wait=True)  # never leave a compiler running into the next repository
        if plans is None or parsed is not None:  # (the plans of the assumed verdict stand while it is pending)
            plans = plan_all_stubs(infos, texts, compiled)
        result.stats.update(files=len(usable), **stub_counts(compiled, plans))
        if not plans:
            return None
        project_ns = {ns for i in infos.values() for ns in i.namespaces}
        shim = Shim.for_imports(infos, compiled, project_ns)
        return CsPlan(repo, kind, roslyn, workdir, usable, prepared, texts, infos, compiled, plans, known,
                      project_ns, shim, written={orig_tree: dict(texts), stub_tree: {}},
                      parse_pending=deferred and parsed is None)

    def run(self, plan: CsPlan, tree: Tree, result: AnalysisResult) -> CompileOutcome | None:
        """``Tree.ORIGINAL``: the shim rounds.  Each compiles the original tree with the shim so far and, beside
        it, the stubbed tree with the same shim (the stubbed result of the round that reaches the method bodies is
        the one kept), then adds placeholders for what mcs still reports missing at declaration level.
        ``Tree.STUBBED``: that round's stubbed compile, then recompiles without the stubs of files whose stubs
        still stop mcs before the bodies."""
        try:
            if tree is Tree.ORIGINAL:
                pool = _pool(self.parallel)
                try:
                    return self._shim_rounds(plan, result, pool)
                finally:
                    if pool is not None:
                        pool.shutdown(wait=True)
            return self._stubbed(plan, result)
        except ToolMissing as exc:
            _tool_missing(result, plan.repo, exc)
            return None

    def _shim_rounds(self, plan: CsPlan, result: AnalysisResult, pool: ThreadPoolExecutor | None
                     ) -> CompileOutcome | None:
        kind, roslyn, workdir = plan.kind, plan.roslyn, plan.workdir
        while True:
            shim = plan.shim
            likely_final = all(ns == "System" or ns.startswith(("System.", "Microsoft.")) for ns in shim.namespaces)
            b_files = plan.put(plan.orig_tree, plan.tree_files(plan.texts))
            # the original tree compiles while the stubbed one is prepared
            early = _submit(pool, self._compile, kind, roslyn, plan.orig_tree, b_files, workdir / "original.rsp",
                            plan.known, workdir)
            if plan.dropped is None:
                # Stubs known to break a declaration are left out up front, each alone (the recompile stays as
                # the fallback, file by file).
                left_out = predict_blockers(plan.plans, plan.infos, plan.texts) \
                    if self.predict and kind is Compiler.MCS else set()
                if left_out:
                    plan.leave_out(left_out)
                plan.dropped = set()
                result.stats["stubs_dropped_predicted"] = len(left_out)
            plan.stubbed_files = a_files = plan.put(plan.stub_tree, plan.tree_files(plan.stubbed_sources(), stubbed=True))
            # The stubbed tree is compiled with this round's placeholders at the same time as the original: when
            # the original reached the method bodies, this is the round whose shim both trees keep.  A first round
            # that will hardly be the last (the files import namespaces no framework assembly has) is not
            # doubled: on a busy machine the wasted compile would slow the one that counts.
            speculate = pool is not None and (plan.rounds > 0 or kind is not Compiler.MCS or likely_final)
            later = _submit(pool, self._compile, kind, roslyn, plan.stub_tree, a_files, workdir / "stubbed.rsp",
                            plan.known, workdir) if speculate else None
            before = early.result()
            if plan.parse_pending:
                settled = parse_check.settle(self, plan, before, result)
                if settled is not parse_check.Settled.KEEP:
                    if later is not None:
                        later.result()  # its tree is rewritten next
                    if settled is parse_check.Settled.STOP:
                        return None
                    continue  # the first round again, without the files the parse pass left out
            plan.rounds += 1
            if before.diagnostics is None and before.partial and \
                    plan.rounds <= MAX_SHIM_ROUNDS + plan.rejects + plan.crashes and \
                    shim_fixes(before.partial, plan.infos, plan.texts, shim, plan.project_ns, self.predict):
                # mcs crashed on a declaration whose names do not resolve yet (a missing base type): the names it
                # reported before crashing get their placeholders, and the round is compiled again
                plan.after = later.result() if later is not None else None
                continue
            # Once mcs reports anything inside a method body it got past the declarations: more placeholders
            # (attributes it checks late) would only cost another round.
            final = (before.diagnostics is None or kind is not Compiler.MCS
                     or plan.rounds > MAX_SHIM_ROUNDS + plan.rejects + plan.crashes
                     or reached_bodies(before.diagnostics, plan.infos, plan.texts))
            fixed = 0 if final else shim_fixes(before.diagnostics, plan.infos, plan.texts, shim, plan.project_ns,
                                               self.predict)
            # (in a round that is not the last, the stubbed tree's files are rewritten next: wait for its compile)
            plan.after = later.result() if later is not None else None
            if before.diagnostics is None:
                if verdicts.crashed_on_file(plan, before, result):
                    # mcs crashed on one file's declaration: that file is recorded and left out of both trees
                    plan.restart_stubs()
                    continue
                verdicts.fail(result, plan.repo, before.error)
                return None
            if not final and not fixed and plan.rejects < MAX_REJECT_ROUNDS:
                # No placeholder helps: mcs rejects a declaration itself (a construct it does not know that the
                # down-level pass left, a C# 7.3 constraint...), which stops it before every body of the tree.
                # Those files are recorded and left out of both trees, and the round is compiled again.
                rejected = verdicts.reject_declarations(plan.repo, before.diagnostics, plan.infos, plan.texts,
                                                        set(plan.order), result, plan.prepared)
                if rejected:
                    plan.rejects += 1
                    plan.compiled -= rejected
                    plan.restart_stubs()
                    continue
            if final or not fixed:
                plan.before = before
                return before

    def _stubbed(self, plan: CsPlan, result: AnalysisResult) -> CompileOutcome | None:
        kind, roslyn, workdir, stats = plan.kind, plan.roslyn, plan.workdir, result.stats
        after = plan.after
        if after is None:
            after = self._compile(kind, roslyn, plan.stub_tree, plan.stubbed_files, workdir / "stubbed.rsp",
                                  plan.known, workdir)
        crashes = 0
        while after.diagnostics is None and crashes < verdicts.MAX_CRASH_ROUNDS and after.crash_file in plan.plans \
                and after.crash_file not in plan.dropped:
            # the stubs of one file crash mcs (the original tree compiled): compile again without them
            crashes += 1
            plan.dropped.add(after.crash_file)
            after = self._compile(kind, roslyn, plan.stub_tree,
                                  plan.put(plan.stub_tree, plan.tree_files(plan.stubbed_sources(), stubbed=True)),
                                  workdir / "stubbed.rsp", plan.known, workdir)
        stats["shim_rounds"] = plan.rounds - 1 - plan.rejects - plan.crashes
        stats["shim_entries"] = plan.shim.size()
        stats["rejected_files"] = len(set(plan.texts)) - len(plan.compiled) - stats.get("unparsed_files", 0) \
            - stats.get("unsupported_files", 0) if kind is Compiler.MCS else 0
        stats.update(stub_counts(plan.compiled, plan.plans))
        if after.diagnostics is None:
            verdicts.fail(result, plan.repo, after.error)
            return None
        stats["stubbed_recompiles"] = 0
        while kind is Compiler.MCS and stats["stubbed_recompiles"] < MAX_STUBBED_RECOMPILES and \
                not verdicts.stubbed_reached_bodies(after.diagnostics, plan.plans, plan.dropped, plan.infos,
                                                    plan.texts):
            # Stubs that break a declaration (an override of a stubbed base...) stop mcs before any body: take
            # those stubs out (the stubs a message names, else the file's) and compile once more (mcs reports some
            # only once others are gone); the last recompile takes out whole files, sure to get past them.  (Once
            # mcs got to the bodies, declaration-level errors of stubs did not stop it, and they are references
            # like any other.)
            files, stubs = verdicts.new_declaration_errors(
                plan.before.diagnostics, after.diagnostics, plan.plans, plan.infos, plan.texts, plan.dropped,
                whole_files=stats["stubbed_recompiles"] == MAX_STUBBED_RECOMPILES - 1)
            if not files and not stubs:
                break
            stats["stubbed_recompiles"] += 1
            plan.dropped |= files
            if stubs:
                plan.leave_out(stubs)
            after = self._compile(kind, roslyn, plan.stub_tree,
                                  plan.put(plan.stub_tree, plan.tree_files(plan.stubbed_sources(), stubbed=True)),
                                  workdir / "stubbed.rsp", plan.known, workdir)
            if after.diagnostics is None:
                verdicts.fail(result, plan.repo, after.error)
                return None
        stats["files_stubs_dropped"] = len(plan.dropped)
        stats["stubs_dropped"] = len(plan.left_out)
        plan.after = after
        return after

    def diff(self, plan: CsPlan, before: CompileOutcome, after: CompileOutcome,
             result: AnalysisResult) -> Iterator[Found]:
        """The errors of the stubbed compile, in its order, at an original position the original compile did not
        report with the same code, in files whose stubs were kept."""
        active = {p: pl for p, pl in plan.plans.items() if p not in plan.dropped}
        seen_before = set()
        for d in before.diagnostics:
            if d.file in plan.texts:
                seen_before.add((d.file, _offset(plan.texts[d.file], d.line, d.col, d.compiler), d.code))
        for p in sorted(plan.compiled):
            for t in plan.infos[p].declared:
                plan.types_by_name.setdefault(t.name, []).append(t)
        for d in after.diagnostics:
            if d.kind != "error" or d.file not in active:
                continue
            stubs = active[d.file]
            spos = _offset(stubs.stubbed_text, d.line, d.col, d.compiler)
            opos = stubs.insertions.to_original(spos) if spos is not None else None
            if opos is None or (d.file, opos, d.code) in seen_before:
                continue
            plan.new += 1
            yield d, stubs

    def attribute(self, plan: CsPlan, found: Found, result: AnalysisResult) -> CrossFileRef | None:
        d, stubs = found
        if d.code not in KEPT_CODES:
            plan.unattributed += 1
            return None
        copy = plan.prepared.copies.get(d.file)
        ref = cs_ref(d, stubs, plan.usable[d.file], copy.to_original if copy is not None and copy.downlevel else None)
        if ref is None or ref.defining_file == ref.file:
            plan.unattributed += 1
            return None
        if ref.symbol != ref.import_name:
            ref.defining_file = member_file(stubs.stubs[ref.import_name], ref.symbol, plan.types_by_name,
                                            plan.usable, plan.mentions)
            if ref.defining_file is None or ref.defining_file == ref.file:
                plan.external += 1
                return None
        return ref

    def finish(self, plan: CsPlan, result: AnalysisResult) -> None:
        """One reference per place (the first diagnostic there) with the kind its syntax gives, the type uses no
        error marks (``kinds``; none where mcs never got to a method body), sorted; the diff's figures."""
        refs: dict[tuple, CrossFileRef] = {}
        for ref in result.refs:
            refs.setdefault((ref.file, ref.line, ref.column), ref)
        before, after = plan.before.diagnostics, plan.after.diagnostics
        stopped = not refs and plan.kind is Compiler.MCS and not reached_bodies(before, plan.infos, plan.texts)
        for key, ref in (scan_refs(plan) if not stopped else {}).items():
            found = refs.get(key)
            if found is None:
                refs[key] = ref
            elif found.symbol == ref.symbol:
                found.kind, found.definition = ref.kind, ref.definition
        result.refs = [refs[k] for k in sorted(refs)]
        result.stats.update(original_errors=sum(1 for d in before if d.kind == "error" and not is_probe(d)),
                            stubbed_errors=sum(1 for d in after if d.kind == "error" and not is_probe(d)),
                            new_diagnostics=plan.new, unattributed=plan.unattributed, external_members=plan.external,
                            refs=len(result.refs), scan_refs=sum(1 for r in result.refs if r.diagnostic == "scan"))
        if stopped:
            first = next((d for d in before if d.kind == "error"), None)
            if first is not None:
                line = verdicts.original_line(plan.prepared, first.file, plan.texts, first) \
                    if first.file in plan.texts else first.line  # or a file benchsmith generated
                result.no_refs_detail = (f"mcs stopped before every method body: {first.file} line {line}: "
                                         f"{first.code} {first.message[:160]}")
