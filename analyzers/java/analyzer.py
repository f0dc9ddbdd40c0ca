"""``JavaAnalyzer``: the recipe's steps for Java (see the package docstring), and the two javac processes it runs:
compiling the driver once per JDK into the cache, and one driver run per tree."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterator

from benchsmith.analyzers.base import AnalysisResult, Analyzer, Boundary, ReleasedCursor, Tree
from benchsmith.analyzers.common import utf8_env
from benchsmith.analyzers.driver_cache import build_once
from benchsmith.analyzers.java.attribute import javac_ref
from benchsmith.analyzers.java.driver import (DRIVER_CLASS, JAVAC_OPTIONS, JVM_OPTIONS, JavacDiagnostic, JavacRun,
                                              driver_source, parse_driver_output)
from benchsmith.analyzers.java.escapes import has_escape, tree_view
from benchsmith.analyzers.java.lombok import lombok_ref
from benchsmith.analyzers.java.resolved import ResolvedFiles, ResolvedTally, resolved_refs
from benchsmith.analyzers.java.scan import JavaFileInfo, JavaIndex, scan_java
from benchsmith.analyzers.java.stubs import JavaStubs, plan_stubs
from benchsmith.analyzers.probes import probe_version
from benchsmith.files import RepoSnapshot, write_tree
from benchsmith.records import CrossFileRef, CursorPlace, Exclusion, Reason, ReferenceKind, Stage
from benchsmith.runner import Mount, ToolMissing, run
from benchsmith.text_positions import TextPositions


@dataclass
class JavaTally:
    """What the diff and attribution counted, for ``result.stats``."""

    original_errors: int = 0
    stubbed_errors: int = 0
    new: int = 0
    unattributed: int = 0
    external: int = 0
    unparsed: int = 0


@dataclass
class JavaPlan:
    repo: str
    workdir: Path
    original: Path  # the snapshot's tree
    stubbed: Path
    texts: dict[str, str]
    infos: dict[str, JavaFileInfo]
    index: JavaIndex
    stubs: dict[str, JavaStubs]  # files that got stubs
    order: list[str]  # every file, in the order javac is given them
    driver: Path | None = None  # the compiled driver, once the first run needed it
    positions: dict[str, TextPositions] = field(default_factory=dict)  # original texts, built on first use
    tally: JavaTally = field(default_factory=JavaTally)
    resolved: list[CrossFileRef] = field(default_factory=list)  # what the original run attributed across files
    resolved_at: set[tuple[str, int, int]] = field(default_factory=set)  # their places
    resolved_tally: ResolvedTally = field(default_factory=ResolvedTally)

    def original_positions(self, path: str) -> TextPositions:
        if path not in self.positions:
            self.positions[path] = TextPositions(self.texts[path])
        return self.positions[path]


@dataclass(frozen=True)
class JavaFound:
    """A diagnostic only the stubbed run reports, with the positions of the stubbed text it points into."""

    diagnostic: JavacDiagnostic
    stubs: JavaStubs
    stubbed: TextPositions


class JavaAnalyzer(Analyzer[JavaPlan, JavacRun, JavaFound]):
    language = "java"
    extensions = (".java",)
    grammar_module = "tree_sitter_java"
    reference_kinds = frozenset({ReferenceKind.MEMBER, ReferenceKind.INHERITED_MEMBER, ReferenceKind.TYPE,
                                 ReferenceKind.HERITAGE, ReferenceKind.ATTRIBUTE, ReferenceKind.CONSTRUCTOR})
    import_pattern = r"\s*import\b"
    enclosing_ends = frozenset({"annotation", "marker_annotation"})
    # bench/released.py on the released Java repositories: the cursor at a token start of the line (all 161
    # released cursors located there are among these places); the weights per kind of place are fitted
    # (bench/released.py --fit) so that a build's shares are the released ones: line start 29%, after a `.` 7%,
    # elsewhere 64%
    released_cursor = ReleasedCursor(Boundary.TOKEN_START, {CursorPlace.LINE_START: 0.86, CursorPlace.AFTER_DOT: 0.54,
                                                             CursorPlace.ELSEWHERE: 1.0}, line_end=True)
    grammar_function = "language"
    comment_prefix = "//"
    statement_terminators = frozenset({";", "{", "}"})
    dockerfile = "javac.Dockerfile"

    java = "java"
    javac = "javac"
    address_space_extra = 4 << 30  # code cache, class space, thread stacks: reserved, mostly never touched

    def tool_versions(self) -> dict[str, str]:
        v = probe_version((self.javac, "-version"), shutil.which(self.javac) or "", r"javac\s+(\S+)",
                          env=utf8_env(), fallback_chars=50)
        return {"javac": v} if v else {}

    # -- the recipe ------------------------------------------------------------------------------------------
    def plan(self, snapshot: RepoSnapshot, workdir: Path, result: AnalysisResult) -> JavaPlan | None:
        # module-info.java would switch javac to module mode and reject every other file of a plain source list.
        files = [f for f in snapshot.files if PurePosixPath(f.path).name != "module-info.java"]
        texts = {f.path: f.text for f in files}
        infos = {f.path: scan_java(f) for f in files}
        index = JavaIndex(infos.values())
        stubs: dict[str, JavaStubs] = {}
        for f in files:
            p = plan_stubs(infos[f.path], f.text, index)
            if p is not None:
                stubs[f.path] = p
        result.stats.update(files=len(files), files_with_stubs=len(stubs),
                            stubs=sum(len(p.stubs) for p in stubs.values()))
        if not stubs:
            return None
        workdir.mkdir(parents=True, exist_ok=True)
        stub_tree = workdir / "stubbed"
        shutil.rmtree(stub_tree, ignore_errors=True)
        write_tree(stub_tree, {p: (stubs[p].stubbed_text if p in stubs else t) for p, t in texts.items()})
        return JavaPlan(snapshot.name, workdir, snapshot.root, stub_tree, texts, infos, index, stubs, sorted(texts))

    def run(self, plan: JavaPlan, tree: Tree, result: AnalysisResult) -> JavacRun | None:
        repo = plan.repo
        root = plan.original if tree is Tree.ORIGINAL else plan.stubbed
        try:
            if plan.driver is None:
                plan.driver, err = self._driver_dir(plan.workdir)
                if plan.driver is None:
                    result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_CRASH, err, repo))
                    return None
            out, err = self._javac(root, plan.order, plan.driver, plan.workdir / f"files-{tree.value}.txt",
                                   resolved=tree is Tree.ORIGINAL)
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return None
        if out is None:
            reason = (Reason.TOOL_TIMEOUT if err.startswith("timeout") else
                      Reason.TOOL_MEMORY if "memory limit" in err else Reason.TOOL_CRASH)
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason, err, repo))
        return out

    def diff(self, plan: JavaPlan, before: JavacRun, after: JavacRun, result: AnalysisResult) -> Iterator[JavaFound]:
        repo, texts = plan.repo, plan.texts
        # Files javac cannot parse: a real syntax error (tree-sitter agrees) or syntax newer than this javac.
        unparsed: dict[str, JavacDiagnostic] = {}
        for d in before.diagnostics:
            if d.parse_phase and d.kind == "ERROR" and d.file in texts and d.file not in unparsed:
                unparsed[d.file] = d
        for path, d in sorted(unparsed.items()):
            reason = Reason.SYNTAX_ERROR if plan.infos[path].ts_error else Reason.TOOLCHAIN_CANNOT_PARSE
            first = d.message.splitlines()[0] if d.message else d.code
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, reason,
                                               f"javac line {d.line}: {first}", repo))
        plan.resolved = resolved_refs(repo, before.resolved, ResolvedFiles(texts, plan.positions), set(unparsed),
                                      result, plan.resolved_tally)
        # Lombok accessors fail in both runs (no annotation processor runs): the original run's error names them
        lombok = [ref for d in before.diagnostics if d.kind == "ERROR" and d.file in texts and d.file not in unparsed
                  for ref in [lombok_ref(d, plan.index, texts, plan.original_positions(d.file))] if ref is not None]
        plan.resolved_tally.lombok = len(lombok)
        plan.resolved += lombok
        plan.resolved_at = {(r.file, r.line, r.column) for r in plan.resolved}
        broken_stubs = {d.file for d in after.diagnostics if d.parse_phase and d.kind == "ERROR"
                        and d.file in plan.stubs and d.file not in unparsed}
        for path in sorted(broken_stubs):
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.INTERNAL_ERROR,
                                               "the stubbed file does not parse", repo))
        tally = plan.tally
        tally.original_errors = sum(1 for d in before.diagnostics if d.kind == "ERROR")
        tally.stubbed_errors = sum(1 for d in after.diagnostics if d.kind == "ERROR")
        tally.unparsed = len(unparsed)
        seen_before: set[tuple] = set()
        for d in before.diagnostics:
            if d.file in texts and d.pos >= 0:
                seen_before.add((d.file, plan.original_positions(d.file).utf16_to_char(d.pos), d.code))
        stubbed: dict[str, TextPositions] = {}
        for d in after.diagnostics:
            if d.kind != "ERROR" or d.file not in plan.stubs or d.file in unparsed or d.file in broken_stubs:
                continue
            stubs = plan.stubs[d.file]
            positions = stubbed.get(d.file)
            if positions is None:
                positions = stubbed[d.file] = TextPositions(stubs.stubbed_text)
            spos = positions.utf16_to_char(d.pos) if d.pos >= 0 else -1
            opos = stubs.insertions.to_original(spos) if spos >= 0 else None
            if opos is None or (d.file, opos, d.code) in seen_before:
                continue
            tally.new += 1
            yield JavaFound(d, stubs, positions)

    def attribute(self, plan: JavaPlan, found: JavaFound, result: AnalysisResult) -> CrossFileRef | None:
        ref = javac_ref(found.diagnostic, found.stubs, found.stubbed, plan.original_positions(found.stubs.path))
        if ref is None:
            plan.tally.unattributed += 1
            return None
        if ref.symbol != ref.import_name and (ref.file, ref.line, ref.column) not in plan.resolved_at:
            # an inherited member is defined in a supertype's file (where the original run resolved the name, its
            # declaration is known already and the search through the supertypes' texts is spared)
            ref.defining_file = plan.index.member_file(found.stubs.stubs[ref.import_name], ref.symbol, plan.texts)
            if ref.defining_file is None:
                plan.tally.external += 1
                return None
        return ref

    def finish(self, plan: JavaPlan, result: AnalysisResult) -> None:
        rt = plan.resolved_tally
        first: dict[tuple, CrossFileRef] = {}
        for ref in result.refs:  # one reference per place: the first diagnostic there
            first.setdefault((ref.file, ref.line, ref.column), ref)
        for ref in plan.resolved:
            # what the original run resolved knows the kind and the declaration; a stubbed run's error at the same
            # place still names the diagnostic that revealed it
            diag = first.get((ref.file, ref.line, ref.column))
            if diag is not None:
                ref.diagnostic, ref.message = diag.diagnostic, diag.message
            first[(ref.file, ref.line, ref.column)] = ref
        result.refs = [first[k] for k in sorted(first)]
        t = plan.tally
        result.stats.update(original_errors=t.original_errors, stubbed_errors=t.stubbed_errors,
                            new_diagnostics=t.new, unattributed=t.unattributed, external_members=t.external,
                            refs=len(result.refs), unparsed_files=t.unparsed, resolved_refs=rt.refs,
                            resolved_misplaced=rt.misplaced, resolved_escaped=rt.escaped, lombok_refs=rt.lombok)

    def tree_source(self, path: str, text: str) -> bytes:
        # tree-sitter reads no unicode escapes: cut statements on the text as javac reads it, offsets kept
        return (tree_view(text) if has_escape(text) else text).encode("utf-8")

    # -- the javac processes ---------------------------------------------------------------------------------
    def _driver_dir(self, workdir: Path) -> tuple[Path | None, str]:
        """Compile the driver once per JDK into the cache (falls back to ``workdir`` if the cache is read-only)."""

        def compile_(tmp: Path) -> str:
            container = self.container([Mount(str(tmp), "/bs/driver", writable=True)], "/bs/driver")
            root = "/bs/driver" if container else str(tmp)
            res = run([self.javac, "-nowarn", "-d", f"{root}/out", f"{root}/src/{DRIVER_CLASS}.java"],
                      env=utf8_env(), timeout=max(60.0, min(self.options.timeout, 300.0)), container=container,
                      confine=None if container else self.confinement(write=(tmp,)))
            return f"could not compile the javac driver: {(res.stderr or res.stdout).strip()[-300:]}"

        return build_once("javac-driver", "the javac driver", {f"{DRIVER_CLASS}.java": driver_source()},
                          self.tool_versions().get("javac", "unknown"), f"{DRIVER_CLASS}.class", workdir, compile_)

    def _javac(self, tree: Path, files: list[str], driver: Path, listfile: Path,
               resolved: bool = False) -> tuple[JavacRun | None, str]:
        listfile.write_text("".join(f + "\n" for f in files), encoding="utf-8")
        container = self.container([Mount(str(tree), "/src"), Mount(str(driver), "/bs/driver"),
                                    Mount(str(listfile), "/bs/files.txt")], "/src")
        conf = None if container else self.confinement(read=(tree, driver, listfile))
        # the JVM sizes its heap from the machine's memory, which the confined run cannot see: from its limit, with
        # room for the JVM's own memory, and an initial heap large enough not to collect all the time while growing
        memory = ([f"-XX:MaxRAM={conf.limits.memory_bytes}", "-XX:MaxRAMPercentage=75", "-XX:InitialRAMPercentage=12"]
                  if conf else [])
        # the original run also prints the names it resolved to another file of the project (resolved.py)
        argv = [self.java, *JVM_OPTIONS, *memory, *(["-Dbenchsmith.refs=true"] if resolved else []), "-cp", "/bs/driver" if container else str(driver), DRIVER_CLASS,
                "/bs/files.txt" if container else str(listfile), *JAVAC_OPTIONS]
        res = run(argv, cwd=None if container else tree, env=utf8_env(), timeout=self.options.timeout,
                  container=container, confine=conf)
        if res.timed_out:
            return None, f"timeout: javac ran past its {self.options.timeout:g}s timeout"
        if res.oom:
            return None, f"javac: {res.stderr.strip().splitlines()[-1]}"
        out = parse_driver_output(res.stdout)
        if out.crash or not out.done:
            tail = " | ".join((res.stderr or "").strip().splitlines()[-4:])
            return None, f"javac crashed (exit {res.returncode}): {out.crash or tail or 'no output'}"[:500]
        return out, ""
