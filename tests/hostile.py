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
# Input hygiene (issue 13): file names as data, git that runs nothing, archives on a budget, positions that agree
# with each tool.  Each case names the exact reason of each item it expects (``items``: item id -> reason).
# ================================================================================================================

# Characters that must never change how a file counts its lines (Python numbers lines at \r\n, \r, \n only).
LINE_SEPARATORS = {"ff": "\x0c", "vt": "\x0b", "fs": "\x1c", "gs": "\x1d", "rs": "\x1e", "nel": "\x85",
                   "ls": "\u2028", "ps": "\u2029"}

PKG_USES = '''"""Uses helpers from a sibling module."""
import os
import sys

import {pkg}.a
{junk}
DEBUG = os.sep, sys.argv


def main(argv):
    box = {pkg}.a.Box().grow({k})
    count = {pkg}.a.total([1, 2, {k}])
    return box + count
'''


@dataclass
class HygieneCase:
    name: str
    source: str
    language: str = "python"
    items: dict[str, Reason] = field(default_factory=dict)  # item id -> its exact reason
    reasons: set[Reason] = field(default_factory=set)  # each must appear among the repository's exclusions
    markers: list[Path] = field(default_factory=list)  # must never exist
    examples_from: dict[str, int] = field(default_factory=dict)  # file -> at least this many examples
    forbidden_reasons: set[Reason] = field(default_factory=lambda: {Reason.INTERNAL_ERROR, Reason.TOOL_CRASH,
                                                                    Reason.TOOL_TIMEOUT})


class _Zeros:
    """A file-like source of ``n`` zero bytes (big archive members without holding them in memory)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def read(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def _git_env() -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=_git_env(), check=True, capture_output=True)


def _marker_script(path: Path, marker: Path) -> Path:
    path.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat >/dev/null 2>&1\nexit 1\n")
    path.chmod(0o755)
    return path


def make_unsafe_names(root: Path) -> HygieneCase:
    """Names a tool's argument or list syntax could read differently from ours: every control character class,
    quotes, backslashes, a leading '-' or '@' (a file or a directory), names that are not UTF-8."""
    repo = root / "unsafe_names"
    _package(repo)
    names = {"cr\rname.py": "\r", "tab\tname.py": "\t", "del\x7fname.py": "\x7f", "esc\x1b[31m.py": "\x1b",
             "nel\x85name.py": "\x85", "ls\u2028name.py": "\u2028", 'dq"name.py': '"', "sq'name.py": "'",
             "back\\slash.py": "\\", "@response.py": "@", "--output=x.py": "-"}
    items = {}
    for name in names:
        (repo / "pkg" / name).write_text("X = 1\n")
        items[f"unsafe_names/pkg/{name}"] = Reason.UNSAFE_FILE_NAME
    (repo / "-opts").mkdir()
    (repo / "-opts" / "m.py").write_text("X = 2\n")
    items["unsafe_names/-opts/m.py"] = Reason.UNSAFE_FILE_NAME
    os.close(os.open(os.path.join(os.fsencode(repo / "pkg"), b"latin\xe9.py"), os.O_CREAT | os.O_WRONLY, 0o644))
    items["unsafe_names/pkg/latin\\xe9.py"] = Reason.UNSAFE_FILE_NAME
    return HygieneCase("unsafe_names", str(repo), items=items, examples_from={"pkg/b.py": 2})


def make_signed_root_commit(root: Path) -> HygieneCase:
    """A work tree whose root commit is signed and whose .git/config asks git to check signatures with a script of
    the repository's (plus filters, textconv, fsmonitor, a pager, hooks, an include of more of the same)."""
    repo = root / "git_signed"
    _package(repo)
    (repo / "broken.py").write_text("def (:\n")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    marker = root / "GIT_SIGNED_MARKER"
    tools = root / "git_signed_tools"
    tools.mkdir()
    sign = tools / "sign"
    sign.write_text("#!/bin/sh\ncat >/dev/null\nprintf '\\n[GNUPG:] SIG_CREATED D 1 8 00 1700000000 ABCDEF\\n' >&2\n"
                    "printf -- '-----BEGIN PGP SIGNATURE-----\\n\\niQEzBAABCAAd\\n-----END PGP SIGNATURE-----\\n'\n")
    sign.chmod(0o755)
    evil = _marker_script(tools / "evil", marker)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", f"gpg.program={sign}",
         "-c", "user.signingkey=ABCDEF", "commit", "-qS", "-m", "signed root")
    (tools / "more.config").write_text(f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {evil}\n")
    for key, value in (("log.showSignature", "true"), ("gpg.program", str(evil)), ("gpg.openpgp.program", str(evil)),
                       ("filter.evil.clean", str(evil)), ("filter.evil.smudge", str(evil)),
                       ("filter.evil.process", str(evil)), ("diff.evil.textconv", str(evil)),
                       ("core.fsmonitor", str(evil)), ("core.pager", str(evil)), ("core.hooksPath", str(tools)),
                       ("include.path", str(tools / "more.config"))):
        _git(repo, "config", key, value)
    for hook in ("post-checkout", "post-index-change", "reference-transaction", "post-rewrite"):
        _marker_script(tools / hook, marker)
    return HygieneCase("git_signed", str(repo), items={"git_signed/broken.py": Reason.SYNTAX_ERROR},
                       markers=[marker], examples_from={"pkg/b.py": 2})


def _origin_repo(root: Path, name: str, files: dict[str, str]) -> Path:
    repo = root / name
    repo.mkdir()
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "c")
    return repo


def make_pin_looks_like_option(root: Path) -> HygieneCase:
    """``file://REPO@--upload-pack=CMD``: the pin is an option to git; it must be refused, never run.  (A pin
    holds no '/', so the command writes its marker relative to git's working directory: the marker paths cover
    the places that could be.)"""
    origin = _origin_repo(root, "pin_origin", {"pkg/__init__.py": "", "pkg/a.py": PKG_A})
    marker = "PIN_MARKER_7f3a9c"
    source = f"file://{origin}@--upload-pack=touch${{IFS}}{marker};git-upload-pack"
    from benchsmith.records import RepoSpec
    from benchsmith.sources import repo_name

    name = repo_name(RepoSpec.parse(source))
    markers = [root / marker, origin / marker, Path(__file__).resolve().parents[1] / marker]
    return HygieneCase(name, source, items={name: Reason.COMMIT_INVALID}, markers=markers,
                       forbidden_reasons={Reason.INTERNAL_ERROR, Reason.CLONE_FAILED})


def make_pin_not_hex(root: Path) -> HygieneCase:
    """A pin that is a ref name (``@main``), not a commit id: refused with the reason, not resolved."""
    origin = _origin_repo(root, "pin_ref_origin", {"pkg/__init__.py": "", "pkg/a.py": PKG_A})
    source = f"file://{origin}@main"
    from benchsmith.records import RepoSpec
    from benchsmith.sources import repo_name

    name = repo_name(RepoSpec.parse(source))
    return HygieneCase(name, source, items={name: Reason.COMMIT_INVALID},
                       forbidden_reasons={Reason.INTERNAL_ERROR, Reason.CLONE_FAILED})


def make_clone_with_hostile_attributes(root: Path) -> HygieneCase:
    """A ``file://`` clone whose tree asks for CRLF conversion, ident expansion, a filter and a submodule, and
    whose origin's own config names programs (a clone must not bring or run any of it)."""
    marker = root / "CLONE_MARKER"
    evil = _marker_script(root / "clone_evil", marker)
    files = {"pkg/__init__.py": "", "pkg/a.py": PKG_A, "pkg/b.py": PKG_B.format(pkg="pkg") + "# $Id$\n",
             "broken.py": "class :\n",
             ".gitattributes": "* text eol=crlf ident filter=evil\n",
             ".gitmodules": f'[submodule "sub"]\n\tpath = sub\n\turl = file://{root / "clone_sub"}\n'}
    origin = _origin_repo(root, "clone_origin", files)
    for key, value in (("uploadpack.packObjectsHook", str(evil)), ("core.fsmonitor", str(evil)),
                       ("filter.evil.smudge", str(evil)), ("filter.evil.process", str(evil))):
        _git(origin, "config", key, value)
    _marker_script(origin / ".git" / "hooks" / "post-checkout", marker)
    source = f"file://{origin}"
    from benchsmith.records import RepoSpec
    from benchsmith.sources import repo_name

    name = repo_name(RepoSpec.parse(source))
    return HygieneCase(name, source, items={f"{name}/broken.py": Reason.SYNTAX_ERROR}, markers=[marker],
                       examples_from={"pkg/b.py": 2})


def _tar_add(tf: tarfile.TarFile, name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "",
             size: int | None = None) -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if size is None else size
    info.mode = 0o644
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    src = io.BytesIO(data) if size is None else _Zeros(size)
    tf.addfile(info, src if info.size else None)


def _pkg_members(tf: tarfile.TarFile, top: str, which=("__init__.py", "a.py", "b.py")) -> None:
    texts = {"__init__.py": "", "a.py": PKG_A, "b.py": PKG_B.format(pkg="pkg")}
    for name in which:
        _tar_add(tf, f"{top}/pkg/{name}", texts[name].encode())


def make_tar_big_member(root: Path, size: int = 100 * 1024 * 1024) -> HygieneCase:
    """A member over the per-member budget in the middle of a .tar.gz: recorded, not counted towards the total,
    and every member after it still extracted."""
    path = root / "tar_big-1.0.tar.gz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        _pkg_members(tf, "tar_big-1.0", ("__init__.py", "a.py"))
        _tar_add(tf, "tar_big-1.0/pkg/huge.py", size=size)
        _pkg_members(tf, "tar_big-1.0", ("b.py",))
    return HygieneCase("tar_big-1.0", str(path),
                       items={"tar_big-1.0/tar_big-1.0/pkg/huge.py": Reason.ARCHIVE_MEMBER_TOO_LARGE},
                       examples_from={"pkg/b.py": 2})


def make_tar_bz2_bomb(root: Path, size: int = 320 * 1024 * 1024) -> HygieneCase:
    """A few hundred bytes of .tar.bz2 holding a 320 MiB member: reaching what follows it means decompressing it
    all, past the skip budget, so extraction ends there with the reason; what came before is analysed."""
    path = root / "tar_bomb-1.0.tar.bz2"
    with tarfile.open(path, "w:bz2") as tf:
        _pkg_members(tf, "tar_bomb-1.0")
        _tar_add(tf, "tar_bomb-1.0/pkg/bomb.py", size=size)
        _tar_add(tf, "tar_bomb-1.0/pkg/late.py", b"LATE = 1\n")
    return HygieneCase("tar_bomb-1.0", str(path),
                       items={"tar_bomb-1.0/tar_bomb-1.0/pkg/bomb.py": Reason.ARCHIVE_MEMBER_TOO_LARGE,
                              "tar_bomb-1.0": Reason.ARCHIVE_BUDGET_EXCEEDED},
                       examples_from={"pkg/b.py": 2})


def make_tar_links_and_devices(root: Path) -> HygieneCase:
    """Symbolic and hard links, character and block devices, a FIFO and a duplicate path, all recorded."""
    path = root / "tar_special-1.0.tar.gz"
    top = "tar_special-1.0"
    with tarfile.open(path, "w:gz") as tf:
        _pkg_members(tf, top)
        _tar_add(tf, f"{top}/pkg/sym.py", kind=tarfile.SYMTYPE, link="a.py")
        _tar_add(tf, f"{top}/pkg/hard.py", kind=tarfile.LNKTYPE, link=f"{top}/pkg/a.py")
        _tar_add(tf, f"{top}/pkg/null.py", kind=tarfile.CHRTYPE)
        _tar_add(tf, f"{top}/pkg/disk.py", kind=tarfile.BLKTYPE)
        _tar_add(tf, f"{top}/pkg/pipe.py", kind=tarfile.FIFOTYPE)
        _tar_add(tf, f"{top}/pkg/a.py", b"PWNED = 1\n")  # a second a.py: the first one is kept
    items = {f"{top}/{top}/pkg/sym.py": Reason.ARCHIVE_LINK, f"{top}/{top}/pkg/hard.py": Reason.ARCHIVE_LINK,
             f"{top}/{top}/pkg/null.py": Reason.ARCHIVE_SPECIAL_MEMBER,
             f"{top}/{top}/pkg/disk.py": Reason.ARCHIVE_SPECIAL_MEMBER,
             f"{top}/{top}/pkg/pipe.py": Reason.ARCHIVE_SPECIAL_MEMBER,
             f"{top}/{top}/pkg/a.py": Reason.ARCHIVE_DUPLICATE_MEMBER}
    return HygieneCase(top, str(path), items=items, examples_from={"pkg/b.py": 2})


def make_zip_links_and_budget(root: Path, size: int = 80 * 1024 * 1024) -> HygieneCase:
    """A zip with a symlink entry, a duplicate name, a member that declares more than the member budget and a
    file where an earlier member made a directory: each recorded, the package still analysed."""
    path = root / "zip_special-1.0.zip"
    top = "zip_special-1.0"
    import warnings

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the duplicate name is the point
        zf.writestr(f"{top}/pkg/__init__.py", "")
        zf.writestr(f"{top}/pkg/a.py", PKG_A)
        zf.writestr(f"{top}/pkg/b.py", PKG_B.format(pkg="pkg"))
        link = zipfile.ZipInfo(f"{top}/pkg/link.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr(f"{top}/pkg/a.py", "PWNED = 1\n")
        with zf.open(zipfile.ZipInfo(f"{top}/pkg/huge.py"), "w", force_zip64=True) as fh:
            block = bytes(1024 * 1024)
            for _ in range(size // len(block)):
                fh.write(block)
        zf.writestr(f"{top}/pkg/__init__.py/x.py", "X = 1\n")  # under a path that is a file
    items = {f"{top}/{top}/pkg/link.py": Reason.ARCHIVE_LINK, f"{top}/{top}/pkg/a.py": Reason.ARCHIVE_DUPLICATE_MEMBER,
             f"{top}/{top}/pkg/huge.py": Reason.ARCHIVE_MEMBER_TOO_LARGE,
             f"{top}/{top}/pkg/__init__.py/x.py": Reason.ARCHIVE_DUPLICATE_MEMBER}
    return HygieneCase(top, str(path), items=items, examples_from={"pkg/b.py": 2})


def make_line_separators(root: Path) -> HygieneCase:
    """One file per character Python does not end a line at (and lone CR, CRLF, a mix), each before the uses:
    every use must still become an example whose parts put back together are the file."""
    repo = root / "line_separators"
    _package(repo)
    files = {}
    for k, (key, ch) in enumerate(LINE_SEPARATORS.items(), start=10):  # distinct groundtruths
        files[f"pkg/u_{key}.py"] = PKG_USES.format(pkg="pkg", k=k, junk=f"# before {ch} the uses\nS = 'in {ch} a str'")
    k = 10 + len(files)
    files["pkg/u_ff_line.py"] = PKG_USES.format(pkg="pkg", k=k, junk="\x0c")
    files["pkg/u_crlf.py"] = PKG_USES.format(pkg="pkg", k=k + 1, junk="# crlf").replace("\n", "\r\n")
    files["pkg/u_cr.py"] = PKG_USES.format(pkg="pkg", k=k + 2, junk="# lone cr").replace("\n", "\r")
    files["pkg/u_mixed.py"] = ("\x0c# \u2028\x85\r\n\"\"\"Mixed.\"\"\"\rimport os\nimport sys\r\nimport pkg.a\r# \u2029\n"
                               "\rDEBUG = os.sep, sys.argv\r\rdef main():\r\n    s = '\u2028\u00e9'; box = pkg.a.Box().grow(99)\r"
                               "    return pkg.a.total([\r        1, 2])\n")
    for rel, text in files.items():
        with open(repo / rel, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    (repo / "broken.py").write_text("def x(:\n")
    return HygieneCase("line_separators", str(repo), items={"line_separators/broken.py": Reason.SYNTAX_ERROR},
                       examples_from={rel: 2 for rel in files})


CS_LIB = """namespace Shop.Lib
{
    public class Cart
    {
        public int Total(int[] xs) { int s = 0; foreach (var x in xs) s += x; return s; }
        public static Cart Make() { return new Cart(); }
    }
}
"""
CS_APP = """using Shop.Lib;

namespace Shop.App
{
    public class Program
    {
        public static int Run()
        {
            var cart = Cart.Make();
            int n = cart.Total(new int[] { 1, 2, 3 });
            return n;
        }
    }
}
"""
JAVA_CART = """package shop.lib;

public class Cart {
    public int total(int[] xs) {
        int s = 0;
        for (int x : xs) {
            s += x;
        }
        return s;
    }

    public static Cart make() {
        return new Cart();
    }
}
"""
JAVA_APP = """package shop.app;

import shop.lib.Cart;

public class App {
    public static int run() {
        Cart cart = Cart.make();
        int n = cart.total(new int[] {1, 2, 3});
        return n;
    }
}
"""


def make_csharp_control(root: Path) -> HygieneCase:
    repo = root / "cs_control"
    repo.mkdir()
    (repo / "Lib.cs").write_text(CS_LIB)
    (repo / "App.cs").write_text(CS_APP)
    return HygieneCase("cs_control", str(repo), "csharp", examples_from={"App.cs": 1})


def make_csharp_cr_injection(root: Path) -> HygieneCase:
    """A directory named ``Lib.cs\\r-out:`` + the absolute path of a directory outside: in mcs's response file the
    \\r ends the line, so the rest became ``-out:<outside>/EVIL.cs`` and mcs wrote its DLL there."""
    repo = root / "cs_cr_inject"
    repo.mkdir()
    (repo / "Lib.cs").write_text(CS_LIB)
    (repo / "App.cs").write_text(CS_APP)
    target = root / "cs_outside"
    target.mkdir()
    evil_dir = Path(str(repo / "Lib.cs") + "\r-out:" + str(target))
    evil_dir.mkdir(parents=True)
    (evil_dir / "EVIL.cs").write_text("namespace Evil { public class E {} }\n")
    rel = os.path.relpath(evil_dir / "EVIL.cs", repo)
    return HygieneCase("cs_cr_inject", str(repo), "csharp", items={f"cs_cr_inject/{rel}": Reason.UNSAFE_FILE_NAME},
                       markers=[target / "EVIL.cs", target / 'EVIL.cs"'], examples_from={"App.cs": 1})


def make_java_control(root: Path, name: str = "java_control") -> HygieneCase:
    repo = root / name
    (repo / "shop" / "lib").mkdir(parents=True)
    (repo / "shop" / "app").mkdir(parents=True)
    (repo / "shop" / "lib" / "Cart.java").write_text(JAVA_CART)
    (repo / "shop" / "app" / "App.java").write_text(JAVA_APP)
    return HygieneCase(name, str(repo), "java", examples_from={"shop/app/App.java": 1})


def make_java_cr_listfile(root: Path, outside: Path) -> HygieneCase:
    """``App.java\\r`` + an absolute path: the javac driver's file list (one name per line, and Java's readLine
    ends a line at \\r) would name a file outside the repository."""
    case = make_java_control(root, "java_cr")
    repo = Path(case.source)
    secret = outside / "Secret.java"
    secret.write_text(f'package shop.app;\npublic class Secret {{ String s = "{SECRET.strip()}"; '
                      f"int n = shop.lib.Cart.make().total(null); }}\n")
    evil_dir = Path(str(repo / "shop" / "app" / "App.java") + "\r" + str(outside))
    evil_dir.mkdir(parents=True)
    (evil_dir / "Secret.java").write_text(secret.read_text())
    rel = os.path.relpath(evil_dir / "Secret.java", repo)
    return HygieneCase("java_cr", str(repo), "java", items={f"java_cr/{rel}": Reason.UNSAFE_FILE_NAME},
                       examples_from={"shop/app/App.java": 1})


GO_LIB = """package lib

func Total(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func NewBox() int { return 3 }
"""
GO_MAIN = """package main

import (
	"fmt"

	"example.com/m/lib"
)

//line generated.y:100
func main() {
	box := lib.NewBox()
	/*line other.go:7:3*/ n := lib.Total([]int{1, 2})
	fmt.Println(box, n, "//line in a string:1")
}
"""
GO_BROKEN = """package main

//line fake.go:500
func broken( {
}
"""


def make_go_control(root: Path) -> HygieneCase:
    repo = root / "go_control"
    (repo / "lib").mkdir(parents=True)
    (repo / "go.mod").write_text("module example.com/m\n\ngo 1.18\n")
    (repo / "lib" / "lib.go").write_text(GO_LIB)
    (repo / "main.go").write_text("\n".join(ln for ln in GO_MAIN.splitlines() if not ln.startswith("//line"))
                                  .replace("/*line other.go:7:3*/ ", "") + "\n")
    return HygieneCase("go_control", str(repo), "go", examples_from={"main.go": 2})


def make_go_line_directives(root: Path) -> HygieneCase:
    """``//line`` and ``/*line`` directives before the uses, and before a syntax error: positions (and the
    error's line) are the file's own."""
    repo = root / "go_line"
    (repo / "lib").mkdir(parents=True)
    (repo / "go.mod").write_text("module example.com/m\n\ngo 1.18\n")
    (repo / "lib" / "lib.go").write_text(GO_LIB)
    (repo / "main.go").write_text(GO_MAIN)
    (repo / "broken.go").write_text(GO_BROKEN)
    return HygieneCase("go_line", str(repo), "go", items={"go_line/broken.go": Reason.SYNTAX_ERROR},
                       examples_from={"main.go": 2})


def make_hygiene_suite(root: Path, outside: Path) -> list[HygieneCase]:
    """Every input-hygiene case; build each language's cases in one run (``HygieneCase.language``)."""
    root.mkdir(parents=True, exist_ok=True)
    return [
        make_unsafe_names(root),
        make_signed_root_commit(root),
        make_pin_looks_like_option(root),
        make_pin_not_hex(root),
        make_clone_with_hostile_attributes(root),
        make_tar_big_member(root),
        make_tar_bz2_bomb(root),
        make_tar_links_and_devices(root),
        make_zip_links_and_budget(root),
        make_line_separators(root),
        make_csharp_control(root),
        make_csharp_cr_injection(root),
        make_java_control(root),
        make_java_cr_listfile(root, outside),
        make_go_control(root),
        make_go_line_directives(root),
    ]


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


def toolchain_processes(*, with_container_uid: bool = False) -> list[int]:
    """pids of processes that run as a toolchain uid (confinement's private range; with ``with_container_uid``, the
    uid containers run as too): any of them after a run is a survivor."""
    from benchsmith import confine

    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                uid = os.stat(f"/proc/{d}").st_uid
            except OSError:
                continue
            if (confine.UID_BASE <= uid < confine.UID_BASE + confine.UID_SPAN
                    or (with_container_uid and uid == confine.CONTAINER_UID)):
                out.append(int(d))
    return out
