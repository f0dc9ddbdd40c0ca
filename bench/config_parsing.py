"""What a repository's hostile configuration costs to read: csproj/props, tsconfig and go.mod parsing on generated
worst-case files (issue 22: every parser of untrusted text linear and bounded).

Each shape is generated at ``--size`` characters (1 MB by default, what ``read_data_files`` lets through) and
parsed by the code at ``--rev`` (a git revision; the working tree by default), once per run in a child process
with a ``--budget`` of CPU seconds.  A parse that would pass the budget is measured on halving sizes until one
fits, and the full-size figure extrapolated from the growth between the two largest sizes that fit (reported as
``~N s (extrapolated)``); a shape that finishes at full size reports its own CPU seconds.  Shapes:

  csproj  unclosed_groups    ``<Project>`` then ``<PropertyGroup>`` repeated, never closed
          unclosed_comments  ``<!--`` repeated, never closed
          unclosed_elements  one group holding ``<DefineConstants>`` repeated, never closed
          open_project_tags  ``<Project`` repeated without ``>``
          deep_nesting       ``<a>`` repeated (the element nesting cap)
          closed_groups      well-formed groups repeated (a valid file at size)
          stray_brackets     a value of ``a < b`` repeated (a '<' that opens no tag)
          many_frameworks    one ``TargetFrameworks`` of distinct ``net6.0-pN`` (choosing one)
          many_values        one ``DefineConstants`` of ``A0;A1;...``
  tsconfig commas            ``[`` then ``1,`` repeated (every comma looks ahead)
          comment_commas     ``[1`` then ``, /* c */`` repeated
          deep_nesting       ``[`` repeated (the nesting cap)
          paths_targets      one ``paths`` pattern with distinct targets (deduplication)
          extends_fanout     200 configs, each extending the next three (the extends graph)
  go.mod  blank_lines        newlines only (a ``^\\s*`` regex backtracks over them)

    python bench/config_parsing.py [--rev REV] [--size N] [--budget S] [--only SUBSTRING]

Measured 2026-12-05 (2 shared cores, budget 8 CPU s; "~" extrapolated from the two largest sizes that fit, all
growing as n^2): before = 4a9a61f (regex csproj parsing, copying JSONC comma look-ahead, depth-8 extends walk,
``^\s*`` go.mod regex), after = the working tree.  A shape refused by a cap costs ~0 after (it stops there).

  shape                        before           after
  csproj   unclosed_groups      ~299 s          0.000 s (nesting cap, config_too_large)
  csproj   unclosed_comments    ~533 s          0.000 s (scan ends at the unclosed comment)
  csproj   unclosed_elements    ~273 s          0.000 s (nesting cap)
  csproj   open_project_tags    ~985 s          0.000 s (scan ends at the unclosed tag)
  csproj   deep_nesting         0.015 s         0.000 s (nesting cap)
  csproj   closed_groups        0.052 s         0.158 s (a Python scanner, still linear)
  csproj   stray_brackets       0.025 s         0.125 s
  csproj   many_frameworks       ~23 s          0.022 s (list cap)
  csproj   many_values          0.061 s         0.044 s
  tsconfig commas               7.706 s         0.270 s
  tsconfig comment_commas       3.346 s         0.124 s
  tsconfig deep_nesting         0.249 s         0.000 s (nesting cap; json.loads raised RecursionError before)
  tsconfig paths_targets         ~51 s          0.114 s (paths cap)
  tsconfig extends_fanout       > 8 s at 976 chars  0.008 s (exponential in the graph before)
  go.mod   blank_lines          ~937 s          0.127 s
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import resource
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"csproj": "analyzers/csharp/project.py", "tsconfig": "analyzers/typescript/tsconfig.py",
           "go.mod": "analyzers/go/modules.py"}


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def _distinct(unit: str, size: int) -> str:
    """``unit`` formatted with 0, 1, 2 ... up to ``size`` characters in all."""
    out: list[str] = []
    used = 0
    while True:
        item = unit.format(len(out))
        if used + len(item) > size:
            return "".join(out)
        out.append(item)
        used += len(item)


def _paths(size: int) -> str:
    targets: list[str] = []
    used = 60
    while used < size - 100:  # distinct targets up to ``size`` characters
        targets.append(f'"t{len(targets)}"')
        used += len(targets[-1]) + 1
    return '{"compilerOptions": {"paths": {"x/*": [' + ",".join(targets) + "]}}}"


SHAPES = {
    ("csproj", "unclosed_groups"): lambda n: _fill("<PropertyGroup>", n, "<Project>"),
    ("csproj", "unclosed_comments"): lambda n: _fill("<!-- c ", n, "<Project>"),
    ("csproj", "unclosed_elements"): lambda n: _fill("<DefineConstants>", n, "<Project><PropertyGroup>",
                                                      "</PropertyGroup></Project>"),
    ("csproj", "open_project_tags"): lambda n: _fill("<Project ", n),
    ("csproj", "deep_nesting"): lambda n: _fill("<a>", n, "<Project><PropertyGroup>"),
    ("csproj", "closed_groups"): lambda n: _fill(
        "<PropertyGroup><DefineConstants>A;B</DefineConstants></PropertyGroup>", n, "<Project>", "</Project>"),
    ("csproj", "stray_brackets"): lambda n: _fill("a < b ", n, "<Project><PropertyGroup><DefineConstants>",
                                                   "</DefineConstants></PropertyGroup></Project>"),
    ("csproj", "many_frameworks"): lambda n: "<Project><PropertyGroup><TargetFrameworks>" + _distinct(
        "net6.0-p{};", n - 100) + "</TargetFrameworks></PropertyGroup></Project>",
    ("csproj", "many_values"): lambda n: "<Project><PropertyGroup><DefineConstants>" + ";".join(
        f"A{i}" for i in range(n // 8)) + "</DefineConstants></PropertyGroup></Project>",
    ("tsconfig", "commas"): lambda n: _fill("1,", n, "[", "1]"),
    ("tsconfig", "comment_commas"): lambda n: _fill(", /* c */", n, "[1", "]"),
    ("tsconfig", "deep_nesting"): lambda n: _fill("[", n),
    ("tsconfig", "paths_targets"): _paths,
    ("tsconfig", "extends_fanout"): None,  # a repository of configs, built in _configs
    ("go.mod", "blank_lines"): lambda n: _fill("\n", n),
}


def _configs(kind: str, shape: str, size: int) -> dict[str, str]:
    if shape == "extends_fanout":
        # a small file each: the cost is the graph, so ``size`` only scales the paths table they all inherit
        table = _paths(min(size, 20_000))
        out = {f"c{i:03d}/tsconfig.json": json.dumps({"extends": [f"../c{j:03d}/tsconfig.json"
                                                                   for j in range(i + 1, min(i + 4, 200))]})
               for i in range(200)}
        out["c199/tsconfig.json"] = table
        return out
    return {"tsconfig.json" if kind == "tsconfig" else "a.csproj" if kind == "csproj" else "go.mod":
            SHAPES[(kind, shape)](size)}


def _load(kind: str, rev: str | None) -> types.ModuleType:
    name = {"csproj": "benchsmith.analyzers.csharp.project", "tsconfig": "benchsmith.analyzers.typescript.tsconfig",
            "go.mod": "benchsmith.analyzers.go.modules"}[kind]
    if rev is None:
        return importlib.import_module(name)
    src = subprocess.run(["git", "show", f"{rev}:{MODULES[kind]}"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    module = types.ModuleType(f"bench_{kind.replace('.', '_')}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(src, MODULES[kind], "exec"), module.__dict__)
    return module


def _one(kind: str, shape: str, size: int, rev: str | None) -> float:
    """CPU seconds of one parse (in this process)."""
    module = _load(kind, rev)
    configs = _configs(kind, shape, size)
    start = time.process_time()
    if kind == "csproj":
        module.ProjectIndex(configs).settings("a.cs")  # parse, pick the framework, merge (a fresh process each)
    elif kind == "tsconfig":
        module.merge_path_configs(configs)
    else:
        module.module_path(next(iter(configs.values())))
    return time.process_time() - start


def _timed(kind: str, shape: str, size: int, rev: str | None, budget: float) -> float | None:
    cmd = [sys.executable, __file__, "--child", kind, shape, str(size), "--budget", str(budget)]
    if rev:
        cmd += ["--rev", rev]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=budget * 10 + 60)
    except subprocess.TimeoutExpired:
        return None
    if res.returncode < 0:  # stopped at its CPU limit
        return None
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-2000:])
    seconds = float(res.stdout.strip().splitlines()[-1])
    return seconds if seconds <= budget else None


def measure(kind: str, shape: str, size: int, rev: str | None, budget: float) -> str:
    seconds = _timed(kind, shape, size, rev, budget)
    if seconds is not None:
        return f"{seconds:8.3f} s"
    fits: list[tuple[int, float]] = []
    n = size
    while n > 1000 and len(fits) < 2:
        n //= 2
        t = _timed(kind, shape, n, rev, budget)
        if t is not None:
            fits.insert(0, (n, t))
    if len(fits) < 2:
        return f"  > {budget:g} s at {n} chars"
    (n1, t1), (n2, t2) = fits
    k = math.log(max(t2, 1e-6) / max(t1, 1e-6)) / math.log(n2 / n1)
    return f"~{t2 * (size / n2) ** k:7.0f} s (extrapolated: {t2:.2f} s at {n2} chars, growth n^{k:.1f})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rev", default=None, help="git revision of the parsers (default: the working tree)")
    p.add_argument("--size", type=int, default=1_000_000)
    p.add_argument("--budget", type=float, default=20.0, help="CPU seconds one parse may take before halving")
    p.add_argument("--only", default="", help="only shapes whose 'kind/shape' contains this")
    p.add_argument("--child", nargs=3, metavar=("KIND", "SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        kind, shape, size = args.child
        # the kernel stops a parse past its budget (SIGXCPU): the parent need not wait out a quadratic one
        resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(args.budget) + 1, math.ceil(args.budget) + 2))
        print(f"{_one(kind, shape, int(size), args.rev):.4f}")
        return 0
    print(f"parsers at {args.rev or 'the working tree'}, {args.size} characters, budget {args.budget:g} CPU s")
    for kind, shape in SHAPES:
        if args.only in f"{kind}/{shape}":
            print(f"{kind:9} {shape:18} {measure(kind, shape, args.size, args.rev, args.budget)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
