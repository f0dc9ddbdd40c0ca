"""Input hygiene (issue 13): file names as data, git that runs nothing, archives on a budget, positions that agree
with each tool.  Each case names the exact reason of each item it expects (``items``: item id -> reason)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchsmith.records import Reason
from tests.hostile.archives import (make_tar_big_member, make_tar_bz2_bomb, make_tar_links_and_devices,
                                    make_zip_links_and_budget)
from tests.hostile.cases import PKG_A, PKG_B, HygieneCase, write_package
from tests.hostile.languages import (make_csharp_control, make_csharp_cr_injection, make_go_control,
                                     make_go_line_directives, make_java_control, make_java_cr_listfile)

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
    write_package(repo)
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
    write_package(repo)
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
    markers = [root / marker, origin / marker, Path(__file__).resolve().parents[2] / marker]
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


def make_line_separators(root: Path) -> HygieneCase:
    """One file per character Python does not end a line at (and lone CR, CRLF, a mix), each before the uses:
    every use must still become an example whose parts put back together are the file."""
    repo = root / "line_separators"
    write_package(repo)
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
