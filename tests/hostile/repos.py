"""Hostile repositories, generated at test time under a temporary directory (nothing large is committed).

Each ``make_*`` function writes one repository (or archive, or URL) and returns a ``HostileCase`` saying which
exclusion reasons it must produce and which files must never appear (markers a payload would write if anything
from the repository were executed or extracted outside it).  ``make_suite`` builds them all next to an
``outside/`` directory of sentinel files that symlinks point at, whose bytes must never change and whose content
must never show up in any output.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from benchsmith.records import Reason
from tests.hostile.archives import make_zip_slip
from tests.hostile.cases import SECRET, HostileCase, Suite, write_package

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
    write_package(repo)
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
    write_package(repo, "pkg")
    write_package(repo, "p\u00e4ck\u00e4ge")  # a valid identifier: analysed like any package
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


def make_pylint_plugins(root: Path) -> HostileCase:
    """Config files asking pylint to load a module of the repository, which writes a marker when imported, and
    modules named like what pylint itself imports (``python -m pylint`` with the tree as working directory would
    import the repository's ``pylint`` package)."""
    repo = root / "pylint_plugins"
    write_package(repo)
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
    write_package(repo)
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
    """A file that keeps astroid busy for a quarter of an hour or more (it folds constants: each line squares the
    last, from a 1.6-million-bit integer; plain CPython on a busy 2-core machine took 28 s, 95 s and 280 s for the
    5th to 7th squaring) while staying small in memory; run it with a ``--timeout`` of a minute or so."""
    repo = root / "slow_inference"
    write_package(repo)
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
