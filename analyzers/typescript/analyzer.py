"""The TypeScript analyzer on the base recipe: ``plan`` (scan every file, resolve its imports, stub them), ``run``
our pinned tsc over the original and the stubbed tree, ``diff`` (the diagnostics only the stubbed run has),
``attribute`` each to a reference, ``finish`` (order and statistics).  The parts live in the modules beside this
one; this class wires them and holds the settings a subclass (the JavaScript analyzer) changes."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from benchsmith.analyzers.base import AnalysisResult, Analyzer, Boundary, ReleasedCursor, Tree
from benchsmith.analyzers.typescript import checker, compile as tsc
from benchsmith.analyzers.typescript.attribution import reference
from benchsmith.analyzers.typescript.companions import (
    COMPANION_EXTENSIONS, add_companions, companion_extensions, drop_unimported, read_companions,
)
from benchsmith.analyzers.typescript.model import (
    CompileOutcome, FileInfo, NewDiagnostic, Plan, StubbedFile, Tally,
)
from benchsmith.analyzers.typescript.resolver import ModuleResolver
from benchsmith.analyzers.typescript.scan import Scanner
from benchsmith.analyzers.typescript.stubs import plan_stubs, stub_file
from benchsmith.analyzers.typescript.uses import kind_of, scan_refs
from benchsmith.analyzers.typescript.tsc_output import COUNTED_CODES, UNRESOLVED_CODES, TscMessage, syntax_only
from benchsmith.analyzers.typescript.tsconfig import PathConfig, merge_path_configs
from benchsmith.config_values import exclusions as config_exclusions
from benchsmith.files import RepoSnapshot, read_data_files, write_tree
from benchsmith.records import CrossFileRef, CursorPlace, Exclusion, Reason, ReferenceKind, Stage
from benchsmith.runner import ToolchainBackend, Mount, ToolMissing, run


class TypeScriptAnalyzer(Analyzer[Plan, list[TscMessage], NewDiagnostic]):
    language = "typescript"
    extensions = (".ts", ".tsx", ".mts", ".cts")
    grammar_module = "tree_sitter_typescript"
    reference_kinds = frozenset(ReferenceKind)
    import_pattern = r"\s*(?:import\b|export\s*(?:\*|\{|type\s*\{)[^;]*?\bfrom\b|export\s*\{\s*$)"
    enclosing_ends = frozenset({"decorator"})
    # bench/released.py on the released TypeScript repositories: the cursor at a token end of the line or at
    # column 0, the indentation then in the groundtruth (all released cursors located on a line of ours are among
    # these places); the weights per kind of place are fitted so that a build's shares are the released ones: line
    # start 48%, after a `.` 10%, elsewhere 42% (with the type checker's references --fit's answer overshoots;
    # these, tried on the dev repositories with bench/released.py, give 48%, 12%, 40%; 0.19/0.225 gave 44/11/44)
    released_cursor = ReleasedCursor(Boundary.TOKEN_END, {CursorPlace.LINE_START: 1.0, CursorPlace.AFTER_DOT: 0.17,
                                                           CursorPlace.ELSEWHERE: 0.18}, line_end=True)
    grammar_function = "language_typescript"
    comment_prefix = "//"
    dockerfile = "tsc.Dockerfile"

    # -- hooks for subclasses (the JavaScript analyzer) --------------------------------------------------------
    declaration_suffixes: ClassVar[tuple[str, ...]] = (".d.ts", ".d.mts", ".d.cts")
    # extensions tried for an extensionless specifier, in tsc's order, then for `dir/index`
    resolution_extensions: ClassVar[tuple[str, ...]] = (".ts", ".tsx", ".d.ts", ".mts", ".d.mts", ".cts", ".d.cts")
    # a JavaScript extension in a specifier stands for these files (tsc maps './x.js' to x.ts)
    extension_map: ClassVar[dict[str, tuple[str, ...]]] = {
        ".js": (".ts", ".tsx", ".d.ts"), ".jsx": (".tsx", ".d.ts"),
        ".mjs": (".mts", ".d.mts"), ".cjs": (".cts", ".d.cts"),
    }
    namespace_stubs: ClassVar[bool] = True  # `namespace X {}` beside each stub class (TypeScript syntax only)
    stub_require_calls: ClassVar[bool] = False  # also stub `const x = require('./x')` declarations (JavaScript)
    scanner: ClassVar[type[Scanner]] = Scanner  # reads a file's imports and declarations
    config_patterns: ClassVar[tuple[str, ...]] = ("tsconfig*.json", "jsconfig*.json")
    container_tsc: ClassVar[tuple[str, ...]] = ("tsc",)  # the command inside the tsc.Dockerfile image
    node_heap_mb: ClassVar[int] = 4096
    # the files whose every name the type checker resolves (members reached through inferred types); a subclass
    # for another language inherits TypeScript's, so its own files are left to the stub diff and the scan
    checker_extensions: ClassVar[tuple[str, ...]] = (".ts", ".tsx", ".mts", ".cts")
    address_space_extra: ClassVar[int] = 16 << 30  # V8 reserves its pointer cage and code space up front

    @classmethod
    def grammar_for(cls, path: str) -> str:
        """``.tsx`` files need the TSX grammar (JSX and `<T>x` casts parse differently)."""
        return "language_tsx" if path.endswith(".tsx") else cls.grammar_function

    def compiler_options(self) -> dict[str, Any]:
        """Our compiler options; nothing here comes from the analysed repository (paths are added separately)."""
        return tsc.compiler_options()

    def is_declaration(self, path: str) -> bool:
        return path.endswith(self.declaration_suffixes)

    # -- toolchain -------------------------------------------------------------------------------------------
    def tsc_path(self) -> Path:
        return tsc.tsc_path()

    def toolchain_paths(self) -> list[str]:
        return tsc.package_dirs(self.tsc_path()) + [str(checker.CHECKER_JS)]

    def tool_versions(self) -> dict[str, str]:
        if self.options.backend is not ToolchainBackend.LOCAL:
            # the image's tag hashes its Dockerfile, which pins the TypeScript release
            from benchsmith.containers import image_tag

            return {"tsc_image": self.options.container_image or image_tag(self.dockerfile)}
        out: dict[str, str] = {}
        version = tsc.typescript_version(self.tsc_path())
        if version is not None:
            out["typescript"] = version
        node = shutil.which("node")
        if node:
            out["node"] = tsc.node_version(node)
        return out

    def compile(self, tree: Path, files: list[str], workdir: Path, tag: str, path_config: PathConfig,
                walk: list[str] | None = None) -> CompileOutcome:
        """One tsc run over ``files`` of ``tree`` with our tsconfig (written under ``workdir``).  With ``walk``, the
        run is our checker script instead of the tsc CLI: the same diagnostics, plus the references the type
        checker resolves in the ``walk`` files (``CompileOutcome.checked``)."""
        cfg_dir = workdir / f"tsconfig-{tag}"
        cfg_dir.mkdir(parents=True, exist_ok=True)
        mounts = [Mount(str(tree), "/work/tree"), Mount(str(cfg_dir), "/work/cfg")]
        if walk is not None:
            mounts.append(Mount(str(checker.CHECKER_JS.parent), checker.CONTAINER_CHECKER_DIR))
        container = self.container(mounts, "/work/tree")
        tree_ref = "/work/tree" if container else str(tree.resolve())
        cfg_ref = "/work/cfg" if container else str(cfg_dir.resolve())
        options = self.compiler_options()
        if not options.get("allowJs") and any(f.endswith(COMPANION_EXTENSIONS) for f in files):
            options.update(allowJs=True, checkJs=False)  # companions are compiled for their declarations only
        config = tsc.tsconfig(options, tree_ref, files, path_config)
        (cfg_dir / "tsconfig.json").write_text(json.dumps(config, indent=1, sort_keys=True), encoding="utf-8")
        if walk is None:
            argv = (list(self.container_tsc) if container else tsc.local_argv(self.tsc_path(), self.node_heap_mb)) \
                + ["-p", f"{cfg_ref}/tsconfig.json", "--pretty", "false"]
        else:
            checker.write_job(cfg_dir, tree_ref, walk, files)
            argv = checker.argv(container is not None, self.tsc_path(), self.node_heap_mb) + \
                [f"{cfg_ref}/tsconfig.json", f"{cfg_ref}/{checker.JOB_FILE}"]
        env = {"HOME": "/tmp" if container else str(workdir), "LANG": "C.UTF-8", "NODE_OPTIONS": ""}
        conf = None if container else self.confinement(read=(tree, cfg_dir), scratch=(workdir,))
        res = run(argv, cwd=None if container else tree, env=env, timeout=self.options.timeout,
                  container=container, inherit_env=False, confine=conf)
        if walk is None:
            return tsc.outcome(res, files, container, self.options.timeout)
        return checker.outcome(res, files, container, self.options.timeout, tree_ref)

    # -- reading a repository (its configuration as data, its files) -----------------------------------------
    @classmethod
    def read_configs(cls, repo: str | os.PathLike, max_bytes: int = 1_000_000, max_files: int = 200) -> dict[str, str]:
        """``{relative path: text}`` of the repository's tsconfig/jsconfig files, read without following
        symlinks; stored as ``snapshot.configs`` so ``paths``/``baseUrl`` are honoured."""
        configs = read_data_files(repo, cls._is_config, max_bytes=max_bytes, max_files=max_files)
        configs.update(read_companions(repo, cls.extensions))  # JavaScript modules sources may import
        return configs

    @classmethod
    def _is_config(cls, path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(name, p) for p in cls.config_patterns)

    def file_info(self, path: str, text: str) -> FileInfo:
        return self.scanner(self.stub_require_calls).scan(path, text, self.is_declaration(path), self.parser_for(path))

    def stub_file(self, info: FileInfo) -> StubbedFile | None:
        return stub_file(info, self.namespace_stubs)

    def _tree(self, plan: Plan, path: str):
        """The file's tree-sitter tree, parsed once per file during attribution."""
        if path not in plan.trees:
            plan.trees[path] = self.parser_for(path).parse(plan.files[path].text.encode("utf-8"))
        return plan.trees[path]

    # -- the recipe --------------------------------------------------------------------------------------------
    def plan(self, snapshot: RepoSnapshot, workdir: Path, result: AnalysisResult) -> Plan | None:
        """Parse every file, resolve its imports and stub each file that has project imports (a file the grammar
        rejects in part is read from its error-tolerant tree); None when no file imports another."""
        data = snapshot.configs or {}
        path_config = merge_path_configs({p: t for p, t in data.items() if self._is_config(p)})
        result.exclusions.extend(config_exclusions(snapshot.name, path_config.rejections))
        files: dict[str, FileInfo] = {}
        for f in snapshot.files:
            # a file tree-sitter cannot fully parse is still compiled and analysed: only tsc's verdict excludes one
            # (``drop_syntax_errors``); the cutter drops a reference it cannot cut exactly
            files[f.path] = self.file_info(f.path, f.text)
        add_companions(files, data, self.extensions, self.file_info)
        resolver = ModuleResolver(files, path_config, self.resolution_extensions, self.extension_map,
                                  companion_extensions(self.extensions))
        stubbed = plan_stubs(files, resolver, self.namespace_stubs)
        drop_unimported(files)
        resolver.files.intersection_update(files)
        plan = Plan(files, stubbed, resolver, path_config, repo=snapshot.name, root=Path(snapshot.root),
                    workdir=Path(workdir), compiled=sorted(files))
        if any(i.companion for i in files.values()):
            # the vetted tree holds TypeScript sources only: the original compile reads a copy with the companions
            plan.root = plan.workdir / "original"
            write_tree(plan.root, {p: files[p].text for p in plan.compiled})
        result.stats.update(_plan_stats(plan))
        if path_config.notes:
            result.stats["config_notes"] = list(path_config.notes)
        return plan if plan.stubbed else None

    def run(self, plan: Plan, tree: Tree, result: AnalysisResult) -> list[TscMessage] | None:
        try:
            out = self._compile_original(plan, result) if tree is Tree.ORIGINAL else self._compile_stubbed(plan)
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(plan.repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), plan.repo))
            return None
        if out.messages is None:
            result.exclusions.append(Exclusion(plan.repo, Stage.ANALYZER, out.reason or Reason.TOOL_CRASH,
                                               f"{tree.value} tree: {out.detail}", plan.repo))
            return None
        return out.messages

    def _compile_original(self, plan: Plan, result: AnalysisResult) -> CompileOutcome:
        """tsc reports no semantic diagnostic once any file has a syntax error: files it cannot parse are taken out
        (recorded) and the tree compiled again; that retry only costs a parse."""
        before = self.compile(plan.root, plan.compiled, plan.workdir, "original", plan.path_config, self._walk(plan))
        if tsc.drop_syntax_errors(plan, before.messages, result.exclusions):
            before = self.compile(plan.root, plan.compiled, plan.workdir, "original", plan.path_config,
                                  self._walk(plan))
        plan.original_syntax_errors = syntax_only(before.messages)
        plan.checked = before.checked
        if before.capped:
            result.stats["checker_capped_files"] = before.capped[:20]
        return before

    def _walk(self, plan: Plan) -> list[str] | None:
        """The files whose names the type checker resolves (None: none, the plain tsc CLI does)."""
        if self.options.backend is ToolchainBackend.LOCAL and not checker.typescript_module(self.tsc_path()).is_file():
            return None  # a tsc.js outside its package (BENCHSMITH_TSC): no compiler API to resolve names with
        walk = [f for f in plan.compiled if f.endswith(self.checker_extensions) and not plan.files[f].companion]
        return walk or None

    def _compile_stubbed(self, plan: Plan) -> CompileOutcome:
        """One stubbed tree for all files.  A stub that broke a file's syntax (it should not happen) is reverted
        and the tree compiled again."""
        if not plan.stubbed:  # every stubbed file was one tsc cannot parse: nothing can differ
            return CompileOutcome([])
        stub_tree = plan.workdir / "stubbed"
        after = CompileOutcome(None)
        for _ in range(2):
            if stub_tree.exists():
                shutil.rmtree(stub_tree)
            write_tree(stub_tree, {p: (plan.stubbed[p].text if p in plan.stubbed else plan.files[p].text)
                                   for p in plan.compiled})
            after = self.compile(stub_tree, plan.compiled, plan.workdir, "stubbed", plan.path_config)
            reverted = syntax_only(after.messages) - plan.original_syntax_errors
            if not reverted:
                break
            for path in reverted:
                plan.stubbed.pop(path, None)
        return after

    def diff(self, plan: Plan, before: list[TscMessage], after: list[TscMessage],
             result: AnalysisResult) -> list[NewDiagnostic]:
        """The diagnostics of stubbed files that only the stubbed run has (keyed by file, offset and code), of the
        codes attribution reads; the others are counted on ``plan.tally``."""
        result.stats["compiled_files"] = len(plan.compiled)
        result.stats["global_errors"] = sorted({f"{m.code}: {m.message}" for m in before + after
                                                if m.file is None})[:5]
        seen_before: set[tuple[str, int, str]] = set()
        for m in before:
            info = plan.files.get(m.file) if m.file else None
            off = info.positions.from_tsc(m.line, m.column) if info is not None else None
            if off is None:
                continue
            seen_before.add((m.file, off, m.code))
            if m.code in UNRESOLVED_CODES:
                for site in info.sites:
                    if site.start <= off < site.end:
                        site.unresolved_by_tsc = True
        plan.tally = tally = Tally()
        new: list[NewDiagnostic] = []
        for m in after:
            stub = plan.stubbed.get(m.file) if m.file else None
            if stub is None:
                continue  # a file we did not stub: nothing of its own changed
            if m.line - 1 in stub.stub_ts_lines:
                tally.on_stub_lines += 1
                continue
            off = plan.files[m.file].positions.from_tsc(m.line, m.column)
            if off is None or (m.file, off, m.code) in seen_before:
                continue
            tally.new += 1
            tally.by_code[m.code] = tally.by_code.get(m.code, 0) + 1
            if m.code not in COUNTED_CODES:
                tally.ignored[m.code] = tally.ignored.get(m.code, 0) + 1
                continue
            new.append(NewDiagnostic(m.file, off, m.code, m.message))
        return new

    def attribute(self, plan: Plan, found: NewDiagnostic, result: AnalysisResult) -> CrossFileRef | None:
        """The reference, when the diagnostic marks one whose symbol is where it says; the first at a place wins."""
        info = plan.files[found.file]
        ref = reference(plan, lambda: self._tree(plan, found.file), found.file, found.offset, found.code,
                        found.message)
        if ref is None or not info.text.startswith(ref.symbol, info.positions.line_start(ref.line) + ref.column):
            plan.tally.unattributed += 1
            return None
        place = (ref.file, ref.line, ref.column)
        if place in plan.tally.places:
            return None
        plan.tally.places.add(place)
        ref.kind = kind_of(plan, self._tree(plan, found.file), ref) or ref.kind
        return ref

    def scan_uses(self, plan: Plan, result: AnalysisResult) -> None:
        """The uses no diagnostic reveals (types, heritage, ``new``, decorators, JSX, members of a namespace or
        class reached by name), from the import bindings and each file's tree; a place a diagnostic already
        gave keeps that reference.  Declaration files count: their type uses are code to complete too."""
        added = 0
        for path in plan.compiled:
            if not plan.files[path].sites or plan.files[path].companion:
                continue
            for ref in scan_refs(plan, path, self._tree(plan, path)):
                place = (ref.file, ref.line, ref.column)
                if place not in plan.tally.places:
                    plan.tally.places.add(place)
                    result.refs.append(ref)
                    added += 1
        result.stats["binding_scan_refs"] = added

    def checker_uses(self, plan: Plan, result: AnalysisResult) -> None:
        """The references the type checker resolved (inferred types, contextual types, chains through members)
        at places neither a diagnostic nor the scan gave; where one of those gave the place without finding its
        definition (``api.character`` through an inferred router type, a name the imported file re-exports), the
        declaration the checker resolved is its definition."""
        added = filled = 0
        undefined = {(r.file, r.line, r.column): r for r in result.refs if r.definition is None}
        for found in plan.checked:
            info = plan.files.get(found.file)
            if info is None or info.companion:
                continue
            ref = checker.to_reference(plan, found, self._tree(plan, found.file))
            if ref is None:
                continue
            place = (ref.file, ref.line, ref.column)
            if place not in plan.tally.places:
                plan.tally.places.add(place)
                result.refs.append(ref)
                added += 1
            elif ref.definition is not None and place in undefined:
                undefined.pop(place).definition = ref.definition
                filled += 1
        result.stats["checker_refs"] = added
        result.stats["checker_definitions"] = filled

    def finish(self, plan: Plan, result: AnalysisResult) -> None:
        self.scan_uses(plan, result)
        self.checker_uses(plan, result)
        super().finish(plan, result)
        tally = plan.tally
        result.stats.update({
            "new_diagnostics": tally.new,
            "new_diagnostics_by_code": dict(sorted(tally.by_code.items())),
            "ignored_codes": dict(sorted(tally.ignored.items())),
            "diagnostics_on_stub_lines": tally.on_stub_lines,
            "unattributed": tally.unattributed,
            "unresolved_project_imports": sum(s.unresolved_by_tsc and s.target is not None
                                              for i in plan.files.values() for s in i.sites),
            "refs": len(result.refs),
            "reference_kinds": dict(sorted(Counter(r.kind.value for r in result.refs).items())),
        })


def _plan_stats(plan: Plan) -> dict[str, Any]:
    sources = [i for i in plan.files.values() if not i.companion]
    sites = [s for i in sources for s in i.sites]
    return {
        "files": len(sources),
        "javascript_companions": len(plan.files) - len(sources),
        "declaration_files": sum(i.declaration for i in sources),
        "unparsable_files": sum(bool(i.parse_error) for i in sources),  # by tree-sitter; still analysed
        "files_with_project_imports": len(plan.stubbed),
        "project_imports": sum(1 for s in sites if s.target is not None),
        "external_imports": sum(1 for s in sites if s.target is None),
    }

