"""``PythonAnalyzer``: the recipe's parts for Python (plan the stubs, lint both trees, diff, attribute)."""

from __future__ import annotations

import ast
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith import confine
from benchsmith.analyzers.base import AnalysisResult, Analyzer, Diagnostic, Tree
from benchsmith.analyzers.python.attribution import NotInRepository, refine, to_ref
from benchsmith.analyzers.python.inherited import inherited_uses
from benchsmith.analyzers.python.kinds import UseContexts
from benchsmith.analyzers.python.lines import LineNumbering, python_lines
from benchsmith.analyzers.python.modules import UNPARSABLE, ModuleIndex
from benchsmith.analyzers.python.pragmas import neutralise
from benchsmith.analyzers.python.stubs import FileStubs, stub_file
from benchsmith.analyzers.python.submodules import submodule_uses
from benchsmith.analyzers.python.toolchain import (PYLINT_MESSAGES, diagnostics, message_path, run_pylint,
                                                   write_rcfile)
from benchsmith.files import RepoSnapshot, SourceFile, write_tree
from benchsmith.records import CrossFileRef, Definition, Exclusion, Reason, ReferenceKind, Stage
from benchsmith.runner import ToolMissing

Messages = list[dict]  # one pylint run's json2 messages


@dataclass
class PythonPlan:
    repo: str
    original: Path  # the vetted snapshot's tree
    stubbed_tree: Path
    rcfile: Path
    home: Path
    index: ModuleIndex
    texts: dict[str, str]  # original text per path
    stubbed: dict[str, FileStubs]  # the files with project imports
    # Both runs, keyed by tree, once linted (the first ``run`` lints both); None: not linted yet.
    runs: dict[Tree, Messages | None] | None = None
    new_diagnostics: int = 0
    unattributed: int = 0
    seen: set[tuple[str, int, int]] = field(default_factory=set)
    lines: dict[str, list[str]] = field(default_factory=dict)  # original text in Python's lines, per file
    numbering: dict[str, LineNumbering] = field(default_factory=dict)
    contexts: dict[str, UseContexts] = field(default_factory=dict)  # per file, built on its first ref


class PythonAnalyzer(Analyzer[PythonPlan, Messages, Diagnostic]):
    language = "python"
    extensions = (".py",)
    grammar_module = "tree_sitter_python"
    reference_kinds = frozenset({ReferenceKind.MEMBER, ReferenceKind.INHERITED_MEMBER, ReferenceKind.MODULE_MEMBER,
                                 ReferenceKind.CONSTRUCTOR, ReferenceKind.ATTRIBUTE, ReferenceKind.TYPE})
    import_pattern = r"\s*(?:from\s+[\w.]+\s+)?import\b"
    enclosing_ends = frozenset({"decorator"})
    comment_prefix = "#"
    statement_terminators = None  # logical lines
    dockerfile = "pylint.Dockerfile"

    def tool_versions(self) -> dict[str, str]:
        try:
            from importlib.metadata import version

            return {"pylint": version("pylint"), "astroid": version("astroid")}
        except Exception:  # pragma: no cover
            return {}

    def toolchain_paths(self) -> list[str]:
        return confine.python_paths()

    def plan(self, snapshot: RepoSnapshot, workdir: Path, result: AnalysisResult) -> PythonPlan | None:
        repo = snapshot.name
        index = ModuleIndex(snapshot.files)
        stubbed: dict[str, FileStubs] = {}
        # What pylint lints: the repository's own pragmas made inert (same positions), in both trees.
        linted = {f.path: neutralise(f.text) for f in snapshot.files}
        for f in snapshot.files:
            try:
                ast.parse(f.text)
            except UNPARSABLE as exc:
                detail = getattr(exc, "msg", None) or f"{type(exc).__name__}: nested too deeply to parse"
                result.exclusions.append(Exclusion(f"{repo}/{f.path}", Stage.ANALYZER, Reason.SYNTAX_ERROR,
                                                   f"line {getattr(exc, 'lineno', '?')}: {detail}", repo))
                continue
            s = stub_file(SourceFile(f.path, linted[f.path]) if linted[f.path] is not f.text else f, index)
            if s is not None:
                stubbed[f.path] = s
        result.stats["files"] = len(snapshot.files)
        result.stats["files_with_project_imports"] = len(stubbed)
        if not stubbed:
            return None
        rcfile = write_rcfile(workdir / "pylintrc")
        home = workdir / "home"
        (home / "stubbed").mkdir(parents=True, exist_ok=True)
        stub_tree = workdir / "stubbed"
        if stub_tree.exists():
            shutil.rmtree(stub_tree)
        write_tree(stub_tree, {f.path: (stubbed[f.path].stubbed_text if f.path in stubbed else linted[f.path])
                               for f in snapshot.files})
        original = snapshot.root
        changed = {f.path: linted[f.path] for f in snapshot.files if linted[f.path] is not f.text}
        result.stats["files_with_pylint_pragmas"] = len(changed)
        if changed:  # the vetted snapshot stays as the repository wrote it; pylint reads a copy
            original = workdir / "original"
            if original.exists():
                shutil.rmtree(original)
            write_tree(original, {f.path: linted[f.path] for f in snapshot.files})
        return PythonPlan(repo, original, stub_tree, rcfile, home, index,
                          {f.path: f.text for f in snapshot.files}, stubbed)

    def run(self, plan: PythonPlan, tree: Tree, result: AnalysisResult) -> Messages | None:
        if plan.runs is None:
            plan.runs = self._lint_both(plan, result)
        return plan.runs[tree]

    def _lint_both(self, plan: PythonPlan, result: AnalysisResult) -> dict[Tree, Messages | None]:
        """Both trees linted side by side (each run is one single-threaded pylint, and they are independent);
        a failure of either is recorded once, for the repository, and leaves both None."""
        failed: dict[Tree, Messages | None] = {Tree.ORIGINAL: None, Tree.STUBBED: None}
        try:
            with ThreadPoolExecutor(max_workers=2) as pool:
                fut_o = pool.submit(run_pylint, self, plan.original, plan.rcfile, plan.home)
                fut_s = pool.submit(run_pylint, self, plan.stubbed_tree, plan.rcfile, plan.home / "stubbed")
                (original, err_o), (stubbed, err_s) = fut_o.result(), fut_s.result()
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(plan.repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), plan.repo))
            return failed
        if original is None or stubbed is None:
            err = err_o or err_s
            reason = (Reason.TOOL_TIMEOUT if "timeout" in err else
                      Reason.TOOL_MEMORY if "memory limit" in err else Reason.TOOL_CRASH)
            result.exclusions.append(Exclusion(plan.repo, Stage.ANALYZER, reason, err, plan.repo))
            return failed
        return {Tree.ORIGINAL: original, Tree.STUBBED: stubbed}

    def diff(self, plan: PythonPlan, before: Messages, after: Messages, result: AnalysisResult) -> list[Diagnostic]:
        stub_texts = {p: s.stubbed_text for p, s in plan.stubbed.items()}
        known = {d.key() for d in diagnostics(before, plan.texts, {})}
        found = diagnostics(after, {**plan.texts, **stub_texts}, {p: s.line_map for p, s in plan.stubbed.items()})
        # Files pylint could not process at all are recorded, not silently empty.
        for m in before + after:
            if str(m.get("messageId", "")).startswith("F"):
                result.exclusions.append(Exclusion(f"{plan.repo}/{message_path(m)}", Stage.ANALYZER,
                                                   Reason.TOOL_CRASH,
                                                   f"{m.get('messageId')}: {m.get('message', '')[:200]}", plan.repo))
        plan.new_diagnostics = len(found) - sum(1 for d in found if d.key() in known)
        return [d for d in sorted(found, key=lambda d: (d.file, d.line, d.column, d.code))
                if d.key() not in known and d.file in plan.stubbed and d.code in PYLINT_MESSAGES]

    def attribute(self, plan: PythonPlan, found: Diagnostic, result: AnalysisResult) -> CrossFileRef | None:
        d, repo = found, plan.repo
        if d.file not in plan.lines:
            plan.lines[d.file] = python_lines(plan.texts[d.file])
            plan.numbering[d.file] = LineNumbering(plan.texts[d.file])
        numbering = plan.numbering[d.file]
        ref = to_ref(d, plan.stubbed[d.file], plan.index, plan.lines[d.file])
        if isinstance(ref, str):  # a use of a stub whose position does not hold its name: a lost example
            line, col = numbering.to_lf(d.line, d.column)
            result.exclusions.append(Exclusion(f"{repo}/{d.file}:{line + 1}:{col + 1}", Stage.ANALYZER,
                                               Reason.CURSOR_NOT_FOUND, ref, repo))
            return None
        if isinstance(ref, NotInRepository):
            line, col = numbering.to_lf(ref.line, ref.column)
            result.exclusions.append(Exclusion(f"{repo}/{d.file}:{line + 1}:{col + 1}", Stage.ANALYZER,
                                               Reason.SYMBOL_NOT_IN_REPOSITORY, ref.detail, repo))
            return None
        if ref is None:
            plan.unattributed += 1
            return None
        if d.file not in plan.contexts:
            tree = plan.index.tree(d.file)
            plan.contexts[d.file] = UseContexts.of(tree, plan.texts[d.file]) if tree else UseContexts({}, set())
        refined = refine(ref, plan.stubbed[d.file], plan.index, plan.contexts[d.file])  # Python positions
        ref.line, ref.column = numbering.to_lf(ref.line, ref.column)
        if refined is None:
            # e.g. ``urlparse(x).scheme`` where the project re-exports a stdlib name: not a project API.
            result.exclusions.append(Exclusion(
                f"{repo}/{ref.file}:{ref.line + 1}:{ref.column + 1}", Stage.ANALYZER,
                Reason.SYMBOL_NOT_IN_REPOSITORY, f"{ref.symbol!r} (via {ref.import_name}) is not defined "
                "in another file of the repository", repo))
            return None
        k = (ref.file, ref.line, ref.column)
        if k in plan.seen:
            return None
        plan.seen.add(k)
        return ref

    def finish(self, plan: PythonPlan, result: AnalysisResult) -> None:
        self._scan_inherited(plan, result)
        super().finish(plan, result)
        result.stats["new_diagnostics"] = plan.new_diagnostics
        result.stats["unattributed"] = plan.unattributed
        result.stats["refs"] = len(result.refs)

    def _scan_inherited(self, plan: PythonPlan, result: AnalysisResult) -> None:
        """The uses pylint leaves unreported, from the files' trees: inherited members (a base it cannot
        infer) and submodules reached through their package (``import pkg.sub``'s nested stub resolves them);
        a place the diagnostics already gave keeps its ref."""
        counts = {"inherited_from_scan": 0, "submodules_from_scan": 0}

        def add(path: str, line: int, col: int, ref: CrossFileRef, stat: str) -> None:
            ref.line, ref.column = plan.numbering.setdefault(path, LineNumbering(plan.texts[path])).to_lf(line, col)
            if (path, ref.line, ref.column) not in plan.seen:
                plan.seen.add((path, ref.line, ref.column))
                result.refs.append(ref)
                counts[stat] += 1

        for path in sorted(plan.stubbed):
            for use in inherited_uses(plan.index, path):
                add(path, use.line, use.column, CrossFileRef(
                    path, use.line, use.column, use.member, use.base, use.declared.file, "ast",
                    f"{use.member!r} is declared in a base class in {use.declared.file}",
                    ReferenceKind.INHERITED_MEMBER, use.declared.definition()), "inherited_from_scan")
            for sub in submodule_uses(plan.index, plan.stubbed[path]):
                end = max(0, len(python_lines(plan.index.texts.get(sub.file, ""))) - 1)
                add(path, sub.line, sub.column, CrossFileRef(
                    path, sub.line, sub.column, sub.name, sub.package, sub.file, "ast",
                    f"module {sub.module} reached through its package", ReferenceKind.MODULE_MEMBER,
                    Definition(sub.file, 0, end, sub.name)), "submodules_from_scan")
        result.stats.update(counts)
