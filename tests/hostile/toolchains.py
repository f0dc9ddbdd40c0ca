"""Toolchain confinement (issue 13): repositories that make a toolchain import or run their code, or blow up its
memory, and a hostile stand-in toolchain that tries what a compromised one would.  Kept apart from the other
cases; used by tests/integration/test_hostile_toolchains.py."""

from __future__ import annotations

import json
from pathlib import Path

from benchsmith.records import Reason
from tests.hostile.cases import HostileCase, write_package

def make_stdlib_shadows(root: Path, marker_dir: Path) -> HostileCase:
    """A repository holding, at its root, a package named like every module of ``sys.stdlib_module_names`` (plus
    ``conftest``, ``sitecustomize``, ``usercustomize`` modules and a ``.pth`` file), each writing a marker named
    after itself when imported, and a file that uses ``<name>.sub.value`` for each: astroid resolves ``<name>`` to
    the repository's package and asks ``importlib.util.find_spec("<name>.sub")``, which imports the package -- with
    the tree on ``sys.path`` that is the repository's code.  A normal package alongside keeps its reference."""
    import sys

    repo = root / "stdlib_shadows"
    repo.mkdir(parents=True)
    marker_dir.mkdir(parents=True, exist_ok=True)
    payload = f"open({str(marker_dir)!r} + '/' + __name__, 'a').write('imported')\n"
    uses = []
    for name in sorted(sys.stdlib_module_names):
        (repo / name).mkdir()
        (repo / name / "__init__.py").write_text(payload)
        uses.append(f"import {name}.benchsmith_sub\nprint({name}.benchsmith_sub.value)\n")
    for name in ("conftest", "sitecustomize", "usercustomize"):
        (repo / f"{name}.py").write_text(payload)
    (repo / "zz_evil.pth").write_text(f"import os; {payload}")
    (repo / "uses_stdlib_names.py").write_text("".join(uses))
    write_package(repo)
    return HostileCase("stdlib_shadows", str(repo), set(), [marker_dir], runs_toolchain=True)


def make_memory_bomb(root: Path, copies: int = 12) -> HostileCase:
    """A 27-line file: twelve ``A = "c" * 99999999`` and a use of each; astroid folds every product, so each pylint
    run needs about 1.2 GB."""
    repo = root / "memory_bomb"
    write_package(repo)
    lines = ["import pkg.a", ""]
    lines += [f'A{i} = "c" * 99999999' for i in range(copies)]
    lines += [f"print(A{i}.upper(), pkg.a.total([1]))" for i in range(copies)]
    (repo / "pkg" / "bomb.py").write_text("\n".join(lines) + "\n")
    return HostileCase("memory_bomb", str(repo), {Reason.TOOL_MEMORY}, [], runs_toolchain=True)


# What the stand-in tsc does when a file of the tree names an attack (``// attack: NAME ARG``); any other tree is
# compiled by the real tsc (``_real_tsc.js`` beside it).  It reports on stderr, which ends up in the exclusion.
HOSTILE_TSC = r"""
const fs = require('fs'), net = require('net'), cp = require('child_process');
const cfg = JSON.parse(fs.readFileSync(process.argv[process.argv.indexOf('-p') + 1], 'utf8'));
let attack = null;
for (const f of cfg.files || []) {
  const m = /\/\/ attack: (\w+)(?: (\S+))?/.exec(fs.readFileSync(f, 'utf8'));
  if (m) { attack = m; break; }
}
if (attack === null) { require(__dirname + '/_real_tsc.js'); return; }
const [, kind, arg] = attack;
const done = (what) => { process.stderr.write(`hostile tsc ${kind}: ${what}\n`); process.exit(3); };
const tryConnect = (opts) => {
  const s = net.connect(opts);
  s.setTimeout(3000, () => done('timeout'));
  s.on('connect', () => { s.write('hello from the toolchain\n'); s.end(); done('CONNECTED'); });
  s.on('error', (e) => done(`refused ${e.code}`));
};
if (kind === 'socket') tryConnect({path: arg});
else if (kind === 'network') tryConnect({host: '127.0.0.1', port: Number(arg)});
else if (kind === 'internet') tryConnect({host: '1.1.1.1', port: 53});
else if (kind === 'read') {
  const out = [];
  for (const p of arg.split(',')) {
    try { out.push(`${p}=${fs.readFileSync(p, 'utf8').trim()}`); } catch (e) { out.push(`${p}:${e.code}`); }
  }
  done(out.join(' '));
} else if (kind === 'write') {
  const out = [];
  for (const p of arg.split(',')) {
    try { fs.writeFileSync(p, 'written by the toolchain\n'); out.push(`${p}=WRITTEN`); } catch (e) { out.push(`${p}:${e.code}`); }
  }
  done(out.join(' '));
} else if (kind === 'fork') {
  let n = 0;
  try {
    for (; n < 2000; n++) {
      const c = cp.spawn('/bin/sleep', ['600'], {detached: true, stdio: 'ignore'});
      c.on('error', () => {});
      c.unref();
      if (!c.pid) break;
    }
  } catch (e) {}
  done(`spawned ${n}`);
} else if (kind === 'memory') {
  const keep = [];
  for (;;) { const b = Buffer.alloc(64 * 1024 * 1024, 1); keep.push(b); }
} else done('unknown attack');
"""

TOOLCHAIN_ATTACKS = ("socket", "network", "internet", "read", "write", "fork", "memory")


def make_attack_repo(root: Path, kind: str, arg: str = "") -> HostileCase:
    """A small TypeScript repository (an import between two files, so tsc runs) naming one attack."""
    repo = root / f"attack_{kind}"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.ts").write_text("export class Box { size = 3; grow(n: number) { return this.size + n; } }\n")
    (repo / "src" / "b.ts").write_text(f"// attack: {kind} {arg}\nimport {{ Box }} from './a';\n"
                                       "export const g = new Box().grow(2);\n")
    reason = Reason.TOOL_MEMORY if kind == "memory" else Reason.TOOL_CRASH
    return HostileCase(f"attack_{kind}", str(repo), {reason}, [], runs_toolchain=True)


def hostile_tsc_package(real_package: Path, dest: Path) -> Path:
    """A copy of the TypeScript package whose ``lib/tsc.js`` is ``HOSTILE_TSC`` (the real one beside it)."""
    import shutil

    shutil.copytree(real_package, dest, symlinks=False)
    (dest / "lib" / "tsc.js").rename(dest / "lib" / "_real_tsc.js")
    (dest / "lib" / "tsc.js").write_text(HOSTILE_TSC)
    return dest / "lib" / "tsc.js"


def make_annotation_processor(root: Path, marker: Path) -> HostileCase:
    """A Java repository that ships an annotation processor (source and service registration) used by its own
    classes: a javac that ran processors would compile and run it; ``-proc:none`` never does."""
    repo = root / "java_processor"
    (repo / "src" / "evil").mkdir(parents=True)
    (repo / "src" / "META-INF" / "services").mkdir(parents=True)
    (repo / "src" / "META-INF" / "services" / "javax.annotation.processing.Processor").write_text("evil.Proc\n")
    (repo / "src" / "evil" / "Proc.java").write_text(
        "package evil;\nimport java.util.Set;\nimport javax.annotation.processing.*;\nimport javax.lang.model.element.*;\n"
        "@SupportedAnnotationTypes(\"*\")\npublic class Proc extends AbstractProcessor {\n"
        "  static { try { java.nio.file.Files.writeString(java.nio.file.Path.of(" + json.dumps(str(marker)) + "), \"ran\"); }"
        " catch (Exception e) {} }\n"
        "  public boolean process(Set<? extends TypeElement> a, RoundEnvironment r) { return false; }\n}\n")
    (repo / "src" / "evil" / "Box.java").write_text(
        "package evil;\npublic class Box {\n  public int size = 3;\n  public int grow(int n) { return size + n; }\n}\n")
    (repo / "src" / "evil" / "Use.java").write_text(
        "package evil.use;\nimport evil.Box;\n@Deprecated\npublic class Use {\n"
        "  int g() { Box b = new Box();\n    return b.grow(2);\n  }\n}\n")
    return HostileCase("java_processor", str(repo), set(), [marker], runs_toolchain=True)
