"""``GoAnalyzer``: the recipe's steps for Go (see the package docstring), and the two kinds of go processes it
runs: building the type checker once per Go release into the cache, and one type check per tree."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from benchsmith.analyzers.base import AnalysisResult, Analyzer, Tree
from benchsmith.analyzers.driver_cache import build_once
from benchsmith.analyzers.go.attribute import Declaring, NotInRepository, go_ref
from benchsmith.analyzers.go.driver import (DRIVER_NAME, GOARCH, GOOS, GoMessage, GoRun, driver_file, go_env,
                                            parse_driver_output)
from benchsmith.analyzers.go.modules import ignored_dir, module_rejections, package_paths
from benchsmith.config_values import exclusions as config_exclusions
from benchsmith.analyzers.go.scan import GoFile, scan_file
from benchsmith.analyzers.go.stubs import GoStubs, neutralise_line_directives, stub_file
from benchsmith.analyzers.probes import probe_version
from benchsmith.files import RepoSnapshot, read_data_files, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, ReferenceKind, Stage
from benchsmith.runner import ToolchainBackend, Mount, ToolMissing, run
from benchsmith.text_positions import TextPositions, byte_col_to_char


@dataclass
class GoTally:
    """What the diff and attribution counted, for ``result.stats``."""

    original_errors: int = 0
    stubbed_errors: int = 0
    excluded_by_build_constraints: int = 0
    unparsed_files: int = 0
    new_diagnostics: int = 0
    diagnostics_on_stub_lines: int = 0
    unattributed: int = 0
    not_in_repository: int = 0
    std_importer: str = ""


@dataclass
class GoPlan:
    repo: str
    workdir: Path
    original: Path  # the snapshot, or a copy of it with //line directives blanked
    stubbed: Path
    infos: dict[str, GoFile]  # the analysed (directive-free) texts
    stubs: dict[str, GoStubs]  # files that got stubs
    packages: dict[str, str]  # directory -> import path
    order: list[str]
    driver: Path | None = None  # the built checker, once the first check needed it
    declaring: Declaring = field(default_factory=dict)  # filled by the diff
    positions: dict[str, TextPositions] = field(default_factory=dict)  # original texts, built on first use
    tally: GoTally = field(default_factory=GoTally)

    def original_positions(self, path: str) -> TextPositions:
        if path not in self.positions:
            self.positions[path] = TextPositions(self.infos[path].text)
        return self.positions[path]


@dataclass(frozen=True)
class GoFound:
    """An error only the stubbed check reports, at a 0-based line and character column of its file."""

    message: GoMessage
    stubs: GoStubs
    line: int
    column: int


def _where(m: GoMessage, positions: TextPositions) -> tuple[int, int] | None:
    """0-based (line, character column) of a message's 1-based line and byte column; None past the text."""
    if not (1 <= m.line <= positions.line_count()):
        return None
    return m.line - 1, byte_col_to_char(positions.line_text(m.line - 1), m.col - 1)


class GoAnalyzer(Analyzer[GoPlan, GoRun, GoFound]):
    language = "go"
    extensions = (".go",)
    grammar_module = "tree_sitter_go"
    reference_kinds = frozenset({ReferenceKind.MEMBER})
    import_pattern = r"\s*import\b"
    grammar_function = "language"
    comment_prefix = "//"
    statement_terminators = frozenset({";", "{", "}"})
    # Go's lexer ends a line with a semicolon after an identifier, a literal, one of break/continue/fallthrough/
    # return, ++, --, ), ] or } (tree-sitter-go has no token for those semicolons).  A ':' ending a line closes a
    # `case x.A:`/label header the way '{' closes an `if` header, instead of running into the next statement.
    line_end_terminators = frozenset({
        "identifier", "field_identifier", "type_identifier", "package_identifier", "label_name", "blank_identifier",
        "int_literal", "float_literal", "imaginary_literal", "rune_literal", '"', "`", "true", "false", "nil",
        "iota", "break", "continue", "fallthrough", "return", "++", "--", ")", "]", "}", ":",
    })
    dockerfile = "go.Dockerfile"

    go = "go"
    address_space_extra = 2 << 30

    def toolchain_paths(self) -> list[str]:
        # GOROOT (the type checker reads the standard library's export data and sources there)
        exe = shutil.which(self.go)
        return [os.path.dirname(os.path.dirname(os.path.realpath(exe)))] if exe else []

    def tool_versions(self) -> dict[str, str]:
        if self.options.backend is not ToolchainBackend.LOCAL:
            from benchsmith.containers import image_tag

            return {"go_image": self.options.container_image or image_tag(self.dockerfile)}
        v = probe_version((self.go, "env", "GOVERSION"), shutil.which(self.go) or "", r"\A(go\d\S*)",
                          env={"GOTOOLCHAIN": "local", "GOENV": "off", "GOFLAGS": "", "HOME": "/tmp"},
                          inherit_env=False)
        return {"go": v} if v else {}

    @classmethod
    def read_configs(cls, repo: str | os.PathLike, max_bytes: int = 1_000_000, max_files: int = 200) -> dict[str, str]:
        """``{relative path: text}`` of the repository's go.mod files (data: only their ``module`` line is read),
        without following symlinks."""
        return read_data_files(repo, lambda name: name == "go.mod",
                               prune=lambda d: d in ("testdata", "vendor") or d.startswith((".", "_")),
                               max_bytes=max_bytes, max_files=max_files)

    # -- the recipe ------------------------------------------------------------------------------------------
    def plan(self, snapshot: RepoSnapshot, workdir: Path, result: AnalysisResult) -> GoPlan | None:
        workdir = Path(workdir)
        files = [f for f in snapshot.files if not ignored_dir(f.path)]
        texts = {f.path: neutralise_line_directives(f.text) for f in files}
        infos = {path: scan_file(path, text) for path, text in texts.items()}
        # The package name each directory's non-test files declare (the name an import binds).
        names: dict[str, Counter] = {}
        for info in infos.values():
            if info.package and not info.test and not info.parse_error:
                names.setdefault(info.dir, Counter())[info.package] += 1
        lib_names = {d: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for d, c in names.items()}
        lib_names = {d: n for d, n in lib_names.items() if n != "main"}
        dirs = sorted({info.dir for info in infos.values()})
        imports = [imp.path for info in infos.values() for imp in info.imports]
        packages, how = package_paths(dirs, snapshot.configs, imports)
        result.exclusions.extend(config_exclusions(snapshot.name, module_rejections(snapshot.configs)))
        paths_to_dirs: dict[str, str] = {}
        for d in sorted(packages):
            paths_to_dirs.setdefault(packages[d], d)
        stubs: dict[str, GoStubs] = {}
        for path in sorted(infos):
            s = stub_file(infos[path], lib_names, paths_to_dirs)
            if s is not None:
                stubs[path] = s
        result.stats.update(files=len(files), ignored_files=len(snapshot.files) - len(files),
                            packages=len(lib_names), import_paths=how or "none", files_with_stubs=len(stubs),
                            stubs=sum(len(p.locals) + len(p.dots) for p in stubs.values()))
        if not stubs:
            return None
        workdir.mkdir(parents=True, exist_ok=True)
        stub_tree = workdir / "stubbed"
        shutil.rmtree(stub_tree, ignore_errors=True)
        write_tree(stub_tree, {p: (stubs[p].text if p in stubs else t) for p, t in texts.items()})
        original_tree = snapshot.root
        if any(texts[f.path] != f.text for f in files):  # directives blanked: check that copy, not the snapshot
            original_tree = workdir / "original"
            shutil.rmtree(original_tree, ignore_errors=True)
            write_tree(original_tree, texts)
        return GoPlan(snapshot.name, workdir, original_tree, stub_tree, infos, stubs, packages, sorted(texts))

    def run(self, plan: GoPlan, tree: Tree, result: AnalysisResult) -> GoRun | None:
        repo = plan.repo
        try:
            if plan.driver is None:
                plan.driver, err = self._driver(plan.workdir)
                if plan.driver is None:
                    result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_CRASH, err, repo))
                    return None
            root = plan.original if tree is Tree.ORIGINAL else plan.stubbed
            out, reason, err = self._check(root, plan.order, plan.packages, plan.driver, plan.workdir, tree.value)
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return None
        if out is None:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason or Reason.TOOL_CRASH,
                                               f"{tree.value} tree: {err}", repo))
        return out

    def diff(self, plan: GoPlan, before: GoRun, after: GoRun, result: AnalysisResult) -> Iterator[GoFound]:
        """The errors only the stubbed check reports, outside the appended stub lines."""
        result.tool_versions.setdefault("go", before.go)
        repo, infos, tally = plan.repo, plan.infos, plan.tally
        skipped = {m.file for m in before.messages if m.kind == "skip"}
        unparsed: dict[str, GoMessage] = {}
        for m in before.messages:
            if m.kind == "parse" and m.file in infos and m.file not in unparsed:
                unparsed[m.file] = m
        for path, m in sorted(unparsed.items()):
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.SYNTAX_ERROR,
                                               f"go/parser line {m.line}: {m.message}", repo))
        broken = sorted({m.file for m in after.messages if m.kind == "parse" and m.file in plan.stubs
                         and m.file not in unparsed})
        for path in broken:
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.INTERNAL_ERROR,
                                               "the stubbed file does not parse", repo))
        tally.original_errors = sum(1 for m in before.messages if m.kind == "error")
        tally.stubbed_errors = sum(1 for m in after.messages if m.kind == "error")
        tally.excluded_by_build_constraints = len(skipped)
        tally.unparsed_files = len(unparsed)
        tally.std_importer = after.importer
        # Positions (file, line, char column) where the original check already had an error: an error there in
        # the stubbed check says nothing about the stub.
        seen_before: set[tuple[str, int, int]] = set()
        for m in before.messages:
            if m.kind == "error" and m.file in infos:
                pos = _where(m, plan.original_positions(m.file))
                if pos is not None:
                    seen_before.add((m.file, *pos))
        # Package-level names per directory: the defining file of `x.Foo` (non-test files the check kept).
        declaring: dict[str, dict[str, list[str]]] = {}
        for path in sorted(infos):
            info = infos[path]
            if info.test or path in skipped or path in unparsed:
                continue
            for name in info.declared:
                declaring.setdefault(info.dir, {}).setdefault(name, []).append(path)
        plan.declaring = declaring
        stubbed: dict[str, TextPositions] = {}  # the stubbed texts differ (blanked imports, appended stubs)
        for m in after.messages:
            stubs = plan.stubs.get(m.file)
            if m.kind != "error" or stubs is None or m.file in unparsed or m.file in broken:
                continue
            if m.file not in stubbed:
                stubbed[m.file] = TextPositions(stubs.text)
            pos = _where(m, stubbed[m.file])
            if pos is None:
                continue
            line, col = pos
            if line >= stubs.first_stub_line:
                tally.diagnostics_on_stub_lines += 1
                continue
            if (m.file, line, col) in seen_before:
                continue
            tally.new_diagnostics += 1
            yield GoFound(m, stubs, line, col)

    def attribute(self, plan: GoPlan, found: GoFound, result: AnalysisResult) -> CrossFileRef | None:
        m, line, col = found.message, found.line, found.column
        original = plan.original_positions(m.file)
        original_line = original.line_text(line) if line < original.line_count() else ""
        ref = go_ref(m, found.stubs, line, col, original_line, plan.declaring)
        if ref is None:
            plan.tally.unattributed += 1
            return None
        if isinstance(ref, NotInRepository):
            plan.tally.not_in_repository += 1
            result.exclusions.append(Exclusion(
                f"{plan.repo}/{m.file}:{line + 1}:{col + 1}", Stage.ANALYZER, Reason.SYMBOL_NOT_IN_REPOSITORY,
                f"{ref.symbol!r} (via {ref.owner}) is not declared in another analysed file of its package",
                plan.repo))
            return None
        return ref

    def finish(self, plan: GoPlan, result: AnalysisResult) -> None:
        first: dict[tuple, CrossFileRef] = {}
        for ref in result.refs:  # one reference per place: the first error there
            first.setdefault((ref.file, ref.line, ref.column), ref)
        result.refs = [first[k] for k in sorted(first)]
        t = plan.tally
        result.stats.update(original_errors=t.original_errors, stubbed_errors=t.stubbed_errors,
                            excluded_by_build_constraints=t.excluded_by_build_constraints,
                            unparsed_files=t.unparsed_files, new_diagnostics=t.new_diagnostics,
                            diagnostics_on_stub_lines=t.diagnostics_on_stub_lines, unattributed=t.unattributed,
                            not_in_repository=t.not_in_repository, std_importer=t.std_importer,
                            refs=len(result.refs))

    # -- the go processes ------------------------------------------------------------------------------------
    def _driver(self, workdir: Path) -> tuple[Path | None, str]:
        """Build the driver once per Go release (and image) into the cache; ``workdir`` if the cache is not
        writable."""
        container = self.options.backend is not ToolchainBackend.LOCAL

        def build(tmp: Path) -> str:
            spec = self.container([Mount(str(tmp), "/bs/driver", writable=True)], "/bs/driver/src")
            root = "/bs/driver" if spec else str(tmp)
            env = go_env(f"{root}/home", f"{root}/gocache")
            res = run([self.go, "build", "-o", f"{root}/out/{DRIVER_NAME}", "."], cwd=None if spec else tmp / "src",
                      env=env, timeout=max(120.0, min(self.options.timeout, 600.0)), container=spec,
                      inherit_env=False, confine=None if spec else self.confinement(write=(tmp,)))
            if spec is not None and res.returncode == 125 and not (tmp / "out" / DRIVER_NAME).is_file():
                raise ToolMissing(f"{spec.engine.value} could not run {spec.image}: "
                                  f"{res.stderr.strip()[-300:]} (build it: `make images`)")
            return f"could not build the Go type checker: {(res.stderr or res.stdout).strip()[-400:]}"

        return build_once("go-driver", "the Go type checker",
                          {"main.go": driver_file("main.go"), "go.mod": driver_file("go.mod")},
                          self.tool_versions().get("go_image" if container else "go", "unknown"), DRIVER_NAME,
                          workdir, build)

    def _check(self, tree: Path, files: list[str], packages: dict[str, str], driver: Path,
               workdir: Path, tag: str) -> tuple[GoRun | None, Reason | None, str]:
        request = workdir / f"gotype-{tag}.json"
        request.write_text(json.dumps({"files": files, "packages": packages, "goos": GOOS, "goarch": GOARCH},
                                      sort_keys=True), encoding="utf-8")
        home = workdir / "gohome"
        home.mkdir(exist_ok=True)
        spec = self.container([Mount(str(tree), "/src"), Mount(str(driver), "/bs/driver"),
                               Mount(str(request), "/bs/request.json")], "/src")
        if spec is not None:
            argv = [f"/bs/driver/{DRIVER_NAME}", "/bs/request.json"]
            env = go_env("/tmp", "/tmp/gocache")
        else:
            argv = [str(driver / DRIVER_NAME), str(request)]
            env = go_env(str(home), str(home / "gocache"))
        conf = None if spec else self.confinement(read=(tree, driver, request), scratch=(home,))
        res = run(argv, cwd=None if spec else tree, env=env, timeout=self.options.timeout, container=spec,
                  inherit_env=False, confine=conf)
        if res.timed_out:
            return None, Reason.TOOL_TIMEOUT, f"the Go type checker ran past its {self.options.timeout:g}s timeout"
        if res.oom:
            return None, Reason.TOOL_MEMORY, f"the Go type checker: {res.stderr.strip().splitlines()[-1]}"
        if res.truncated:
            return None, Reason.TOOL_CRASH, "the Go type checker's output exceeded the output cap"
        if spec is not None and res.returncode == 125:
            return None, Reason.TOOL_MISSING, (f"{spec.engine.value} could not run {spec.image}: "
                                               f"{res.stderr.strip()[-300:]} (build it: `make images`)")
        out = parse_driver_output(res.stdout)
        if out.crash or not out.done:
            tail = " | ".join(ln.strip() for ln in (res.stderr or "").strip().splitlines()[:4])
            return None, Reason.TOOL_CRASH, (f"the Go type checker failed (exit {res.returncode}): "
                                             f"{out.crash or tail or 'no output'}")[:500]
        return out, None, ""
