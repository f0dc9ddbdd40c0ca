"""One tsc run: which compiler (our pinned copy, never the repository's ``node_modules``), the tsconfig we write
for it, and how its exit becomes a ``CompileOutcome``.

tsc reads *our* tsconfig (``noEmit``, ``noResolve`` so nothing outside the listed files is ever read,
``types: []``, ``plugins: []``, no ``extends``); of the repository's configuration only re-based path patterns
reach it.  tsc reports no semantic diagnostic at all while any file has a syntax error, so files it cannot parse
are taken out of both compiles (``drop_syntax_errors``).
"""

from __future__ import annotations

import copy
import json
import os
import posixpath
import shutil
from pathlib import Path
from typing import Any

from benchsmith.analyzers.probes import probe_version
from benchsmith.analyzers.typescript.model import CompileOutcome, Plan
from benchsmith.analyzers.typescript.tsc_output import TscMessage, parse_tsc_output, syntax_only
from benchsmith.analyzers.typescript.tsconfig import PathConfig
from benchsmith.records import Exclusion, Reason, Stage
from benchsmith.runner import ContainerSpec, RunResult, ToolMissing, repo_root

TSC_ENV = "BENCHSMITH_TSC"  # path to tsc.js (or bin/tsc) to use instead of the project-local pinned copy
DEFAULT_TSC = Path(".toolchains/node/node_modules/typescript/lib/tsc.js")  # relative to repo_root()

# Our compiler options; nothing here comes from the analysed repository (paths are added separately).
COMPILER_OPTIONS: dict[str, Any] = {
    "noEmit": True,
    "noResolve": True,  # the program is exactly the listed files (+ lib): nothing else is ever read
    "allowJs": False,
    "checkJs": False,
    "target": "esnext",
    "module": "preserve",  # ES imports and `import x = require()` both allowed; bundler resolution
    "moduleResolution": "bundler",
    "lib": ["esnext", "dom", "dom.iterable"],
    "types": [],
    "typeRoots": [],
    "plugins": [],
    "skipLibCheck": True,
    "skipDefaultLibCheck": True,
    "strict": False,
    "jsx": "preserve",
    "experimentalDecorators": True,
    "esModuleInterop": True,
    "allowImportingTsExtensions": True,
    "allowArbitraryExtensions": True,
    "resolveJsonModule": False,
    "noErrorTruncation": True,
    "incremental": False,
    "composite": False,
    "declaration": False,
    "preserveSymlinks": True,
}


def compiler_options() -> dict[str, Any]:
    """A fresh copy of ``COMPILER_OPTIONS`` (callers add to it)."""
    return copy.deepcopy(COMPILER_OPTIONS)


def tsc_path() -> Path:
    env = os.environ.get(TSC_ENV)
    return Path(env).expanduser() if env else repo_root() / DEFAULT_TSC


def package_dirs(tsc: Path) -> list[str]:
    """What a confined tsc must read: the TypeScript package (tsc.js and its lib.*.d.ts) wherever it was installed,
    through a link or not; a tsc.js outside a package alone."""
    out = []
    for path in (tsc, Path(os.path.realpath(tsc))):
        package = path.parent.parent
        out.append(str(package) if (package / "package.json").is_file() and path.parent.name in ("lib", "bin")
                   else str(path))
    return out


def local_argv(tsc: Path, heap_mb: int) -> list[str]:
    if not tsc.is_file():
        raise ToolMissing(f"TypeScript compiler not found at {tsc}; run `bash scripts/setup_toolchains.sh "
                          f".toolchains` (or set {TSC_ENV} to a tsc.js)")
    node = shutil.which("node")
    if node is None:
        raise ToolMissing("'node' not found on PATH; install Node.js (>= 18) to analyse TypeScript")
    return [node, f"--max-old-space-size={heap_mb}", str(tsc)]


def typescript_version(tsc: Path) -> str | None:
    """The version in the ``package.json`` of the TypeScript package holding ``tsc``."""
    for pkg in (tsc.parent.parent / "package.json", tsc.parent / "package.json"):
        try:
            data = json.loads(pkg.read_text(encoding="utf-8"))
            if data.get("name") == "typescript":
                return str(data.get("version"))
        except (OSError, ValueError):
            continue
    return None


def node_version(node: str) -> str:
    """``node --version`` without its ``v``; ``missing`` when it cannot run, ``unknown`` when it prints nothing."""
    return probe_version((node, "--version"), os.path.realpath(node), r"v*([^\n]*)", inherit_env=False, timeout=30,
                         missing="missing") or "unknown"


def _under(tree: str, rel: str) -> str:
    """``rel`` (relative to the tree root, '' or '/' for the root itself) as a path under ``tree``."""
    rel = rel.lstrip("/")
    return f"{tree}/{rel}" if rel else f"{tree}/"


def tsconfig(options: dict[str, Any], tree: str, files: list[str], path_config: PathConfig) -> dict[str, Any]:
    """Our tsconfig for ``files`` of ``tree`` (as tsc will see its path), path patterns re-based onto it."""
    opts = dict(options)
    if path_config.paths:
        # absolute targets: valid whatever directory our tsconfig sits in
        opts["paths"] = {p: [_under(tree, t) for t in ts] for p, ts in path_config.paths}
    if path_config.base_url is not None:
        opts["baseUrl"] = _under(tree, path_config.base_url).rstrip("/") or "/"
    return {"compilerOptions": opts, "files": [posixpath.join(tree, f) for f in files]}


def outcome(res: RunResult, files: list[str], container: ContainerSpec | None, timeout: float) -> CompileOutcome:
    """What one tsc run's result means: its diagnostics, or why there are none."""
    if res.timed_out:
        return CompileOutcome(None, Reason.TOOL_TIMEOUT, f"tsc ran past its {timeout:g}s timeout", res.duration)
    if res.oom:
        return CompileOutcome(None, Reason.TOOL_MEMORY, f"tsc: {res.stderr.strip().splitlines()[-1]}", res.duration)
    if res.truncated:
        return CompileOutcome(None, Reason.TOOL_CRASH, "tsc output exceeded the output cap", res.duration)
    if container is not None and res.returncode == 125:  # the engine could not start it (e.g. no image)
        return CompileOutcome(None, Reason.TOOL_MISSING, f"{container.engine.value} could not run "
                              f"{container.image}: {res.stderr.strip()[-300:]} (build it: `make images`)",
                              res.duration)
    messages = parse_tsc_output(res.stdout, files)
    located = [m for m in messages if m.file is not None]
    if res.returncode not in (0, 1, 2) or (res.returncode != 0 and not located):
        # the error lines, not the stack frames under them
        lines = [ln.strip() for ln in (res.stderr.strip() or res.stdout.strip()).splitlines()
                 if ln.strip() and not ln.lstrip().startswith("at ")]
        tail = " | ".join(lines[-4:])
        return CompileOutcome(None, Reason.TOOL_CRASH, f"tsc exited {res.returncode}: {tail[:500]}", res.duration)
    return CompileOutcome(messages, duration=res.duration)


def drop_syntax_errors(plan: Plan, messages: list[TscMessage], exclusions: list[Exclusion]) -> set[str]:
    """The files tsc could not parse (it stopped before any semantic check): unstubbed, taken out of
    ``plan.compiled`` and recorded (once per file)."""
    broken = syntax_only(messages)
    if not broken:
        return broken
    already = {e.item_id for e in exclusions}
    for path in sorted(broken):
        plan.stubbed.pop(path, None)
        detail = "; ".join(f"{m.line}:{m.column} {m.code} {m.message}" for m in messages if m.file == path)[:300]
        item = f"{plan.repo}/{path}"
        if item not in already:
            exclusions.append(Exclusion(item, Stage.ANALYZER, Reason.SYNTAX_ERROR, f"tsc: {detail}", plan.repo))
    plan.compiled = [f for f in plan.compiled if f not in broken]
    return broken
