"""The compiler calls: mcs (mono) and Roslyn's csc through ``dotnet``, each given a response file listing the tree's
files, run through the one hardened runner (confined locally, or in the toolchain image), with its output parsed
into diagnostics and a crash or timeout told apart from a compile that reported errors."""

from __future__ import annotations

import os
import re
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from benchsmith.analyzers.common import utf8_env
from benchsmith.analyzers.csharp.diagnostics import Compiler, CsDiagnostic, parse_compiler_output
from benchsmith.analyzers.csharp.project import DEFAULT_DEFINES
from benchsmith.analyzers.csharp.roslyn import Roslyn, find_roslyn
from benchsmith.analyzers.probes import probe_version
from benchsmith.config_values import is_preprocessor_symbol
from benchsmith.runner import Mount, ToolchainBackend, ToolMissing, run, which

MCS_OPTIONS = ("-target:library", "-unsafe", "-langversion:experimental", "-warn:0", "-debug-", "-nowarn:0,1,2,3,4")
# .NET Standard 2.0 assemblies current code takes for granted (System.Numerics.BigInteger, dynamic) that mcs does
# not reference by default; each is referenced where this machine's mono has it (``tool_versions`` says which).
MCS_EXTRA_REFERENCES = ("System.Numerics.dll", "Microsoft.CSharp.dll")


# mcs's unhandled exception (``NotImplementedException: tuples > 7``...) wraps one ``InternalErrorException`` per
# enclosing declaration, each naming its place: the last one named is the innermost.
_CRASH = re.compile(r"Unhandled Exception:|FATAL UNHANDLED EXCEPTION")
_CAUSE = re.compile(r"---> ([\w.]+Exception: [^\n]*?)(?= --->|\n|$)")
_CRASH_PLACE = re.compile(r"InternalErrorException: (?P<file>[^\n]+?)\((?P<line>\d+),(?P<col>\d+)\):")


@dataclass
class CompileOutcome:
    diagnostics: list[CsDiagnostic] | None
    error: str = ""
    crash_file: str | None = None  # the file of the declaration the compiler crashed on, when it names one
    crash_line: int = 0  # 1-based, in the analysed copy
    partial: list[CsDiagnostic] | None = None  # what a crashed compiler reported before it crashed


class CompilerCalls:
    """The compile steps of ``CSharpAnalyzer`` (a mixin: they read its ``options``, ``mcs``, ``compiler``,
    ``container`` and ``confinement``, and the defines of the analysis under way)."""

    mcs = "mcs"
    compiler: Compiler = Compiler.AUTO

    def _define_args(self) -> tuple[str, ...]:
        """The preprocessor symbols of the build (the preprocessor evaluated them already; a file it left to the
        compiler gets the same)."""
        # checked again where they become an option: a symbol is the only thing a -define: entry may be
        defines = sorted(d for d in getattr(self, "_defines", ()) or DEFAULT_DEFINES if is_preprocessor_symbol(d))
        return (f"-define:{';'.join(defines)}",) if defines else ()

    def _backend(self) -> tuple[Compiler, Roslyn | None]:
        """Roslyn through a local ``dotnet`` SDK when there is one (the first choice: it reads current C#), else
        mcs.  Container backends always run mcs (with the down-level pass), whichever variant the image was built
        as: the image has no .NET SDK, and its optional ``csc`` (mono's Roslyn for .NET Framework) has no
        parse-only mode and does not read current C# either (see ``containers/csharp.Dockerfile``)."""
        if self.compiler in (Compiler.AUTO, Compiler.CSC) and self.options.backend is ToolchainBackend.LOCAL:
            r = find_roslyn()
            if r is not None:
                return Compiler.CSC, r
        return Compiler.MCS, None

    def _references(self) -> tuple[str, ...]:
        if self.options.backend is not ToolchainBackend.LOCAL:
            return ()
        return mcs_references(self.mcs, which(self.mcs) or "")

    def _rsp(self, path: Path, args: Iterable[str], files: Iterable[str]) -> None:
        lines = list(args) + [f'"{f}"' if '"' not in f else f"'{f}'" for f in files]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _mcs(self, tree: Path, files: list[str], rsp: Path, extra: tuple[str, ...], known: set[str],
             out_dll: str) -> CompileOutcome:
        self._rsp(rsp, [*extra, f"-out:{out_dll}"] if out_dll else list(extra), files)
        container = self.container([Mount(str(tree), "/src"), Mount(str(rsp), "/bs/args.rsp")], "/src")
        argv = [self.mcs, "@/bs/args.rsp" if container else f"@{rsp}"]
        confine = None if container else self.confinement(
            read=(tree, rsp), scratch=(os.path.dirname(out_dll),) if out_dll else ())
        res = run(argv, cwd=None if container else tree, env=utf8_env(), timeout=self.options.timeout,
                  container=container, confine=confine)
        return self._outcome(res, known, Compiler.MCS)

    def _csc(self, roslyn: Roslyn, tree: Path, files: list[str], rsp: Path, known: set[str],
             out_dll: Path) -> CompileOutcome:
        args = ["-nologo", "-noconfig", "-nostdlib+", "-target:library", "-unsafe+", "-langversion:latest",
                "-nullable:enable", "-warn:0", "-deterministic+", f"-out:{out_dll}", *self._define_args()]
        args += [f'-r:"{r}"' for r in roslyn.references]
        self._rsp(rsp, args, files)
        # invariant globalization: the confined view need not hold ICU (without it the .NET runtime aborts before
        # compiling anything), and the messages come in English, as the diagnostics parser reads them
        env = {**utf8_env(), "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_NOLOGO": "1",
               "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"}
        res = run([roslyn.dotnet, roslyn.csc_dll, f"@{rsp}"], cwd=tree, env=env, timeout=self.options.timeout,
                  confine=self.confinement(read=(tree, rsp), scratch=(os.path.dirname(out_dll),)))
        return self._outcome(res, known, Compiler.CSC)

    def _outcome(self, res, known: set[str], compiler: Compiler = Compiler.MCS) -> CompileOutcome:
        if res.timed_out:
            return CompileOutcome(None, f"timeout: the C# compiler ran past its {self.options.timeout:g}s timeout")
        text = res.stdout + "\n" + res.stderr
        diags = parse_compiler_output(text, known, compiler)
        # An internal error inside one expression (CS0584) is reported like any diagnostic and the run goes on;
        # a crash is an exit status other than 0/1, or a failure without the compiler's closing summary.
        # An unhandled exception ends the run wherever it happens, with exit status 1 and no summary: a crash too,
        # never a compile without errors.
        unhandled = _CRASH.search(text)
        crashed = res.returncode not in (0, 1) or (res.returncode == 1 and not diags and "rror" not in text) \
            or unhandled is not None
        if crashed:
            places = [m for m in _CRASH_PLACE.finditer(text) if m.group("file").strip() in known]
            lines = text.strip().splitlines()
            causes = [m.group(1) for m in _CAUSE.finditer(text) if "InternalErrorException" not in m.group(1)]
            if unhandled is not None and causes:
                tail = causes[-1][:300]  # the innermost cause (``System.NotImplementedException: tuples > 7``)
            elif unhandled is not None:
                tail = " | ".join(ln for ln in lines if "Exception:" in ln and "error CS" not in ln)[:300]
            else:
                tail = " | ".join(lines[-3:])
            out = CompileOutcome(None, f"the C# compiler crashed (exit {res.returncode}): {tail}"[:500],
                                 partial=diags)
            if places:
                out.crash_file, out.crash_line = places[-1].group("file").strip(), int(places[-1].group("line"))
            return out
        return CompileOutcome(diags)

    def _compile(self, kind: Compiler, roslyn: Roslyn | None, tree: Path, files: list[str], rsp: Path,
                 known: set[str], workdir: Path) -> CompileOutcome:
        out = workdir / f"{tree.name}.dll"  # one per tree: the two compiles of a round may run at once
        if kind is Compiler.CSC and roslyn is not None:
            return self._csc(roslyn, tree, files, rsp, known, out)
        container = self.options.backend is not ToolchainBackend.LOCAL
        return self._mcs(tree, files, rsp, (*MCS_OPTIONS, *self._define_args(),
                                            *(f"-r:{r}" for r in self._references())), known,
                         f"/tmp/benchsmith-{tree.name}.dll" if container else str(out))

    def _parse_run(self, tree: Path, files: list[str], workdir: Path, known: set[str]) -> CompileOutcome:
        """One ``mcs --parse`` over every file (needs no scan, so it runs while tree-sitter scans)."""
        return self._mcs(tree, files, workdir / "parse.rsp", ("--parse", "-unsafe", "-langversion:experimental",
                                                               *self._define_args()), known, "")


def submit(pool: ThreadPoolExecutor | None, fn, *args) -> Future:
    """``fn(*args)`` on the pool, or now (``parallel=1``) with the same ``Future`` interface."""
    if pool is not None:
        return pool.submit(fn, *args)
    done: Future = Future()
    try:
        done.set_result(fn(*args))
    except BaseException as exc:  # re-raised by .result(), as from a pool
        done.set_exception(exc)
    return done


def pool(parallel: int) -> ThreadPoolExecutor | None:
    # The compiles are separate processes: with ``parallel`` > 1 the parse pass runs while tree-sitter scans, and
    # the original- and stubbed-tree compiles of a round run side by side.
    return ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="csharp-compile") if parallel > 1 else None


@lru_cache(maxsize=None)
def mcs_references(mcs: str, resolved: str) -> tuple[str, ...]:
    """``MCS_EXTRA_REFERENCES`` this mcs finds (mono packages each assembly apart; a missing one would fail every
    compile), probed once per process with an empty program."""
    found: list[str] = []
    with tempfile.TemporaryDirectory(prefix="benchsmith-mcs-") as d:
        src = Path(d) / "probe.cs"
        src.write_text("class BenchsmithProbe { }\n", encoding="utf-8")
        for ref in MCS_EXTRA_REFERENCES:
            try:
                res = run([mcs, "-target:library", "-nowarn:0", f"-r:{ref}", f"-out:{d}/probe.dll", str(src)],
                          timeout=60, env=utf8_env())
            except ToolMissing:
                return ()
            if res.returncode == 0 and not res.timed_out:
                found.append(ref)
    return tuple(found)


def mcs_version(mcs: str, resolved: str) -> str:
    """``mcs --version``'s version ("" when mcs cannot run)."""
    return probe_version((mcs, "--version"), resolved, r"version\s+(\S+)", env=utf8_env())
