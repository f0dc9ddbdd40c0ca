"""Hostile repositories, generated at test time under a temporary directory (nothing large is committed).

Each ``make_*`` function writes one repository (or archive, or URL) and returns a ``HostileCase`` saying which
exclusion reasons it must produce and which files must never appear (markers a payload would write if anything
from the repository were executed or extracted outside it).  ``make_suite`` builds them all next to an
``outside/`` directory of sentinel files that symlinks point at, whose bytes must never change and whose content
must never show up in any output.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.records import Reason

# Repository-relative text that gives the analyzer something real to do: a package whose `b` module uses names
# from `a`, so pylint runs on the tree (cases that only test file vetting leave it out, which keeps them fast).
PKG_A = '''"""Helpers."""


def total(values):
    return sum(values)


class Box:
    size = 3

    def grow(self, n):
        return self.size + n
'''

PKG_B = '''"""Uses helpers from a sibling module."""
import os
import sys

import {pkg}.a


def main(argv):
    box = {pkg}.a.Box()
    print(os.sep, sys.argv, argv)
    count = {pkg}.a.total([1, 2, 3])
    return box.grow(count)
'''

SECRET = "benchsmith-outside-secret-7f3a9c\n"


@dataclass
class HostileCase:
    name: str  # repository id the build will use
    source: str  # what goes to --repo
    reasons: set[Reason] = field(default_factory=set)  # each must appear among the case's exclusions
    markers: list[Path] = field(default_factory=list)  # must never exist
    runs_toolchain: bool = False  # the case has project imports, so pylint runs on it


@dataclass
class Suite:
    root: Path
    outside: Path  # sentinel files outside every repository
    cases: list[HostileCase]
    forbidden_text: list[str]  # must appear in no output file

    def outside_digest(self) -> dict[str, str]:
        return tree_digest(self.outside)


def tree_digest(root: Path) -> dict[str, str]:
    """Path -> sha256 of every file under ``root`` (symlinks not followed), to show nothing was written there."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            mode = os.lstat(p).st_mode
            if stat.S_ISLNK(mode):
                out[str(p.relative_to(root))] = "link:" + os.readlink(p)
            elif stat.S_ISREG(mode):
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:  # a FIFO: reading it would block
                out[str(p.relative_to(root))] = f"mode:{stat.S_IFMT(mode):o}"
    return out


def _package(repo: Path, pkg: str = "pkg") -> None:
    (repo / pkg).mkdir(parents=True, exist_ok=True)
    (repo / pkg / "__init__.py").write_text("")
    (repo / pkg / "a.py").write_text(PKG_A)
    (repo / pkg / "b.py").write_text(PKG_B.format(pkg=pkg))


def make_symlinks_to_etc(root: Path) -> HostileCase:
    repo = root / "symlink_etc"
    repo.mkdir()
    (repo / "ok.py").write_text("X = 1\n")
    (repo / "etc").symlink_to("/etc")  # directory symlink: its .py files must not be listed
    (repo / "passwd.py").symlink_to("/etc/passwd")
    (repo / "shadow_dir").symlink_to("/etc/ssl")
    return HostileCase("symlink_etc", str(repo), {Reason.SYMLINK_OUTSIDE})


def make_symlinks_to_parent(root: Path, outside: Path) -> HostileCase:
    repo = root / "symlink_parent"
    (repo / "sub").mkdir(parents=True)
    (repo / "ok.py").write_text("X = 1\n")
    (repo / "up").symlink_to("..")  # the directory holding every other case and outside/
    (repo / "sub" / "loop").symlink_to("..")  # back to the repository root: inside, still not followed
    (repo / "secret.py").symlink_to(os.path.relpath(outside / "secret.py", repo))
    (repo / "dangling.py").symlink_to("does/not/exist.py")
    return HostileCase("symlink_parent", str(repo), {Reason.SYMLINK_OUTSIDE, Reason.SYMLINK})


def make_big_file(root: Path, size: int = 50 * 1024 * 1024) -> HostileCase:
    repo = root / "big_file"
    repo.mkdir()
    (repo / "ok.py").write_text("X = 1\n")
    line = b"VALUE = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'\n"
    with open(repo / "huge.py", "wb") as fh:
        block = line * (1024 * 1024 // len(line) + 1)
        while fh.tell() < size:
            fh.write(block)
    return HostileCase("big_file", str(repo), {Reason.FILE_TOO_LARGE})


def make_binary_and_bad_encoding(root: Path) -> HostileCase:
    repo = root / "binary_files"
    repo.mkdir()
    (repo / "ok.py").write_text("X = 1\n")
    (repo / "elf.py").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64)
    (repo / "image.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(4096))
    (repo / "latin1.py").write_bytes("# caf\xe9 cr\xe8me\nNAME = 'na\xefve'\n".encode("latin-1"))
    (repo / "truncated.py").write_bytes("S = '\u20ac".encode()[:-1] + b"'\n")  # a cut multi-byte sequence
    return HostileCase("binary_files", str(repo), {Reason.BINARY_FILE, Reason.NOT_UTF8})


def make_long_file(root: Path, lines: int = 100_000) -> HostileCase:
    repo = root / "long_file"
    repo.mkdir()
    (repo / "ok.py").write_text("X = 1\n")
    (repo / "long.py").write_text("".join(f"v{i} = {i}\n" for i in range(lines)))
    return HostileCase("long_file", str(repo), {Reason.FILE_TOO_LARGE})


def make_deep_nesting(root: Path, depth: int = 300) -> HostileCase:
    """A directory chain ``depth`` levels deep, and expressions nested past what Python's parser can take."""
    repo = root / "deep_nesting"
    _package(repo)
    deep = repo.joinpath(*["d"] * depth)
    deep.mkdir(parents=True)
    (deep / "leaf.py").write_text("LEAF = 1\n")
    (repo / "pkg" / "parens.py").write_text("X = " + "(" * 1000 + "1" + ")" * 1000 + "\n")
    (repo / "pkg" / "unary.py").write_text("X = " + "-" * 100_000 + "1\n")
    (repo / "pkg" / "chain.py").write_text("import pkg.a\nX = " + "1 + " * 100_000 + "1\n")
    blocks = "".join("    " * i + "if X:\n" for i in range(120))
    (repo / "pkg" / "indent.py").write_text("X = 1\n" + blocks + "    " * 120 + "pass\n")
    return HostileCase("deep_nesting", str(repo), {Reason.SYNTAX_ERROR}, runs_toolchain=True)


def make_odd_names(root: Path) -> HostileCase:
    repo = root / "odd_names"
    _package(repo, "pkg")
    _package(repo, "p\u00e4ck\u00e4ge")  # a valid identifier: analysed like any package
    (repo / "with space.py").write_text("X = 1\n")
    (repo / "   .py").write_text("X = 2\n")
    (repo / "\u540d\u524d \U0001f600.py").write_text("X = 3\n")
    (repo / "dir with spaces" / "and\ttab").mkdir(parents=True)
    (repo / "dir with spaces" / "and\ttab" / "m.py").write_text("X = 4\n")
    (repo / "new\nline.py").write_text("X = 5\n")
    (repo / "-rf.py").write_text("X = 6\n")  # looks like an option to a tool reading argv
    os.mkfifo(repo / "fifo.py")  # opening it would block forever
    return HostileCase("odd_names", str(repo), {Reason.UNSAFE_PATH}, runs_toolchain=True)


def make_unresolvable_url() -> HostileCase:
    # .invalid is reserved (RFC 2606): name resolution fails at once, no network needed.
    return HostileCase("nonexistent.invalid_owner_repo", "https://nonexistent.invalid/owner/repo.git",
                       {Reason.CLONE_FAILED})


def make_zip_slip(root: Path) -> list[HostileCase]:
    """A zip and a tarball whose members climb out with ``../`` (and an absolute path, and a link to follow)."""
    target = root / "slipped.py"
    zpath = root / "zipslip.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("proj/ok.py", "X = 1\n")
        zf.writestr("proj/../../slipped.py", "PWNED = 1\n")
    tpath = root / "tarslip.tar.gz"
    with tarfile.open(tpath, "w:gz") as tf:
        def add(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = link
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data else None)

        add("proj/ok.py", b"X = 1\n")
        add("proj/escape", kind=tarfile.SYMTYPE, link=str(root))  # a link out, then a file written through it
        add("proj/escape/through_link.py", b"PWNED = 2\n")
        add(f"{root}/absolute.py", b"PWNED = 3\n")
        add("proj/../../slipped.py", b"PWNED = 4\n")
    markers = [target, root / "through_link.py", root / "absolute.py", root.parent / "slipped.py"]
    return [HostileCase("zipslip", str(zpath), {Reason.ARCHIVE_UNSAFE}, markers),
            HostileCase("tarslip", str(tpath), {Reason.ARCHIVE_UNSAFE}, markers)]


def make_pylint_plugins(root: Path) -> HostileCase:
    """Config files asking pylint to load a module of the repository, which writes a marker when imported, and
    modules named like what pylint itself imports (``python -m pylint`` with the tree as working directory would
    import the repository's ``pylint`` package)."""
    repo = root / "pylint_plugins"
    _package(repo)
    marker = root / "PLUGIN_MARKER"
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for name in ("evil_plugin.py", "sitecustomize.py", "usercustomize.py", "astroid.py", "isort.py",
                 "platformdirs.py", "dill.py", "tomlkit.py", "typing_extensions.py"):
        (repo / name).write_text(payload)
    (repo / "pylint").mkdir()
    (repo / "pylint" / "__init__.py").write_text(payload)
    (repo / "pylint" / "__main__.py").write_text(payload)
    hook = f"open({str(marker)!r}, 'a').write('init-hook')"
    ini = f"load-plugins=evil_plugin\ninit-hook={hook}\n"
    (repo / "pylintrc").write_text(f"[MAIN]\n{ini}")
    (repo / ".pylintrc").write_text(f"[MAIN]\n{ini}")
    (repo / "setup.cfg").write_text(f"[pylint.MAIN]\n{ini}")
    (repo / "tox.ini").write_text(f"[pylint]\n{ini}")
    # a JSON string is a valid TOML basic string
    (repo / "pyproject.toml").write_text(
        f'[tool.pylint.main]\nload-plugins = ["evil_plugin"]\ninit-hook = {json.dumps(hook)}\n')
    (repo / "evil_plugin.pth").write_text(f"import os; {payload}")
    # A broken file too, so the case also records an exclusion of its own.
    (repo / "broken.py").write_text("def oops(:\n")
    return HostileCase("pylint_plugins", str(repo), {Reason.SYNTAX_ERROR}, [marker], runs_toolchain=True)


def make_git_config_hooks(root: Path) -> HostileCase:
    """A git work tree whose .git/config runs commands on the usual git operations (fsmonitor, pager, hooks)."""
    repo = root / "git_hooks"
    _package(repo)
    (repo / "broken.py").write_text("class :\n")
    marker = root / "GIT_MARKER"
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init")
    hooks = repo / ".git" / "hooks"
    for hook in ("post-checkout", "post-merge", "pre-commit", "reference-transaction", "fsmonitor-watchman"):
        (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        (hooks / hook).chmod(0o755)
    for key, value in (("core.fsmonitor", f"echo fsmonitor >> {marker}; false"),
                       ("core.pager", f"echo pager >> {marker}; cat"),
                       ("core.sshCommand", f"echo ssh >> {marker}"),
                       ("diff.external", f"echo diff >> {marker}"),
                       ("core.hooksPath", str(hooks))):
        git("config", key, value)
    return HostileCase("git_hooks", str(repo), {Reason.SYNTAX_ERROR}, [marker], runs_toolchain=True)


def make_slow_file(root: Path) -> HostileCase:
    """A file that keeps astroid busy for minutes (it folds constants: each line squares a 1.6-million-bit
    integer) while staying small in memory; run it with a small ``--timeout``."""
    repo = root / "slow_inference"
    _package(repo)
    lines = ["import pkg.a", "", "X0 = 99999 ** 99999"]
    lines += [f"X{i} = X{i - 1} * X{i - 1}" for i in range(1, 9)]
    lines += ["X8.bit_length()", "pkg.a.total([X8])", ""]
    (repo / "pkg" / "slow.py").write_text("\n".join(lines))
    return HostileCase("slow_inference", str(repo), {Reason.TOOL_TIMEOUT}, runs_toolchain=True)


def make_outside(root: Path) -> Path:
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(f"SECRET = {SECRET!r}\n")
    (outside / "notes.txt").write_text(SECRET)
    (outside / "ro.py").write_text("RO = 1\n")
    (outside / "ro.py").chmod(stat.S_IRUSR)
    return outside


def make_suite(root: Path, *, big_file_size: int = 50 * 1024 * 1024) -> Suite:
    """Every hostile case except the slow one (that one needs its own small ``--timeout``)."""
    root.mkdir(parents=True, exist_ok=True)
    outside = make_outside(root)
    cases = [
        make_symlinks_to_etc(root),
        make_symlinks_to_parent(root, outside),
        make_big_file(root, big_file_size),
        make_binary_and_bad_encoding(root),
        make_long_file(root),
        make_deep_nesting(root),
        make_odd_names(root),
        make_unresolvable_url(),
        *make_zip_slip(root),
        make_pylint_plugins(root),
        make_git_config_hooks(root),
    ]
    forbidden = [SECRET.strip()]
    try:
        first = Path("/etc/passwd").read_text().splitlines()[0]
        forbidden.append(first)  # e.g. root:x:0:0:root:/root:/bin/bash
    except (OSError, IndexError):
        pass
    return Suite(root, outside, cases, forbidden)


# ================================================================================================================
# Toolchain confinement (issue 13): repositories that make a toolchain import or run their code, or blow up its
# memory, and a hostile stand-in toolchain that tries what a compromised one would.  Kept apart from the cases
# above; used by tests/integration/test_hostile_toolchains.py.
# ================================================================================================================

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
    _package(repo)
    return HostileCase("stdlib_shadows", str(repo), set(), [marker_dir], runs_toolchain=True)


def make_memory_bomb(root: Path, copies: int = 12) -> HostileCase:
    """A 27-line file: twelve ``A = "c" * 99999999`` and a use of each; astroid folds every product, so each pylint
    run needs about 1.2 GB."""
    repo = root / "memory_bomb"
    _package(repo)
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
