"""Input hygiene (issue 13): file names as data, git that runs nothing, archives on a budget, shard identity,
line numbering that agrees with Python's tokenizer, Go line directives.  Real git, real archives, real files;
the builds with real toolchains are in tests/integration/test_hostile_repos.py."""

from __future__ import annotations

import ast
import bz2
import io
import os
import subprocess
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from benchsmith.analyzers.go import neutralise_line_directives
from benchsmith.analyzers.python import LineNumbering, python_lines
from benchsmith.files import snapshot, unsafe_file_name
from benchsmith.records import Reason, RepoSpec
from benchsmith.sources import (ArchiveBudget, ArchiveSkip, SourceError, extract_archive, git_environment,
                                materialise, source_identity)

# -- file names ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a\rb.py", "a\tb.py", "a\x7fb.py", "a\x1bb.py", "a\x85b.py",
                                  "a\u2028b.py", 'a"b.py', "a'b.py", "a\\b.py", "-x.py", "@rsp.py", "d/-x/m.py",
                                  "d/@x/m.py", "a\udcffb.py"])
def test_unsafe_names_are_refused(name):
    assert unsafe_file_name(name) is not None


@pytest.mark.parametrize("name", ["pkg/mod.py", "with space.py", "   .py", "p\u00e4ck/\u540d\u524d \U0001f600.py",
                                  "a-b/c@d.py", "x#y.py", "semi;colon.py", "dollar$.py"])
def test_ordinary_names_pass(name):
    assert unsafe_file_name(name) is None


def test_snapshot_records_unsafe_names_and_keeps_the_rest(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "ok.py").write_text("X = 1\n")
    (repo / "cr\r-out:x.py").write_text("X = 2\n")
    (repo / "-rf.py").write_text("X = 3\n")
    os.close(os.open(os.path.join(os.fsencode(repo), b"bad\xff.py"), os.O_CREAT | os.O_WRONLY, 0o644))
    snap = snapshot(repo, [".py"], tmp_path / "snap", repo_name="r")
    assert [f.path for f in snap.files] == ["ok.py"]
    got = {e.item_id: e.reason for e in snap.exclusions}
    assert got == {"r/cr\r-out:x.py": Reason.UNSAFE_FILE_NAME, "r/-rf.py": Reason.UNSAFE_FILE_NAME,
                   "r/bad\\xff.py": Reason.UNSAFE_FILE_NAME}
    for e in snap.exclusions:
        e.item_id.encode("utf-8")  # every id can be written as JSON text


# -- git ----------------------------------------------------------------------------------------------------------

def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _commit_repo(repo: Path) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "a.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "c")


def _marker(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "MARKER"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat >/dev/null\nexit 1\n")
    script.chmod(0o755)
    return marker, script


def test_git_environment_neutralises_config_and_limits_transports():
    env = git_environment(("https",))
    assert env["GIT_CONFIG_GLOBAL"] == os.devnull and env["GIT_CONFIG_NOSYSTEM"] == "1"
    pairs = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert pairs["core.hooksPath"] == os.devnull and pairs["log.showSignature"] == "false"
    assert pairs["protocol.allow"] == "never" and pairs["protocol.https.allow"] == "always"
    assert "protocol.file.allow" not in pairs and pairs["credential.helper"] == ""


def test_local_work_tree_config_runs_nothing(tmp_path):
    """log.showSignature + gpg.program, fsmonitor, a pager and hooks in a work tree's .git/config: reading its HEAD
    and first-commit date runs none of them (plain `git log` would run the signature program)."""
    repo = tmp_path / "r"
    _commit_repo(repo)
    marker, script = _marker(tmp_path)
    for key in ("gpg.program", "core.fsmonitor", "core.pager", "core.sshCommand"):
        _git(repo, "config", key, str(script))
    _git(repo, "config", "log.showSignature", "true")
    _git(repo, "config", "core.hooksPath", str(tmp_path))
    co = materialise(RepoSpec(str(repo)), tmp_path / "w")
    assert co.kind == "git" and co.commit and co.created
    assert not marker.exists(), marker.read_text()


def test_option_like_and_ref_pins_are_refused(tmp_path):
    repo = tmp_path / "r"
    _commit_repo(repo)
    marker, script = _marker(tmp_path)
    for pin in (f"--upload-pack={script.name}", "main", "HEAD~1", "-c", "abc", "g" * 40):
        with pytest.raises(SourceError) as err:
            materialise(RepoSpec(f"file://{repo}", pin), tmp_path / "w")
        assert err.value.reason is Reason.COMMIT_INVALID and "hex" in err.value.detail
    assert not marker.exists()
    assert source_identity(RepoSpec(f"file://{repo}", "--upload-pack=x")) is None


def test_clone_allows_only_the_users_transport(tmp_path):
    """A file:// clone works (the user asked for file://); a submodule is not followed and the tree's
    .gitattributes cannot rewrite what is checked out."""
    repo = tmp_path / "origin"
    repo.mkdir()
    (repo / ".gitattributes").write_text("* text eol=crlf ident\n")
    (repo / ".gitmodules").write_text(f'[submodule "s"]\n\tpath = s\n\turl = file://{tmp_path / "nowhere"}\n')
    (repo / "a.py").write_text("x = 1  # $Id$\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "c")
    co = materialise(RepoSpec(f"file://{repo}"), tmp_path / "w")
    assert (Path(co.path) / "a.py").read_bytes() == b"x = 1  # $Id$\n"
    assert not (Path(co.path) / "s").exists() or not any((Path(co.path) / "s").iterdir())


# -- archives -----------------------------------------------------------------------------------------------------

class _Zeros:
    def __init__(self, n: int) -> None:
        self.left = n

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def _tar(path: Path, members: list[tuple[str, int | bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if isinstance(data, int):
                info.size = data
                tf.addfile(info, _Zeros(data))
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return path


def test_skipped_member_does_not_count_towards_the_total(tmp_path):
    """Budget 1 MiB per member, 3 MiB in all: a 2 MiB member is skipped and recorded, and the three 1 MiB members
    after it still fit (before, the skipped member counted and every later member was silently dropped)."""
    mib = 1024 * 1024
    archive = _tar(tmp_path / "p.tar.gz", [("p/big.py", 2 * mib), ("p/a.py", mib), ("p/b.py", mib), ("p/c.py", mib),
                                           ("p/d.py", mib)])
    skipped: list[ArchiveSkip] = []
    root = extract_archive(archive, tmp_path / "x", budget=ArchiveBudget(max_member_bytes=mib, max_total_bytes=3 * mib),
                           skipped=skipped)
    assert sorted(p.name for p in root.iterdir()) == ["a.py", "b.py", "c.py"]
    assert [(s.member, s.reason) for s in skipped] == [("p/big.py", Reason.ARCHIVE_MEMBER_TOO_LARGE),
                                                        ("p/d.py", Reason.ARCHIVE_BUDGET_EXCEEDED)]


def test_compressed_bomb_stops_without_decompressing_it(tmp_path):
    """A .tar.bz2 of a few hundred bytes holding 320 MiB: past the skip budget extraction ends with the reason,
    without decompressing the member."""
    archive = _tar(tmp_path / "bomb.tar.bz2", [("p/a.py", b"A = 1\n"), ("p/bomb.py", 320 * 1024 ** 2), ("p/z.py", b"Z\n")],
                   "w:bz2")
    assert archive.stat().st_size < 10_000
    skipped: list[ArchiveSkip] = []
    start = time.monotonic()
    root = extract_archive(archive, tmp_path / "x", skipped=skipped)
    elapsed = time.monotonic() - start
    assert [p.name for p in root.iterdir()] == ["a.py"]
    assert [s.reason for s in skipped] == [Reason.ARCHIVE_MEMBER_TOO_LARGE, Reason.ARCHIVE_BUDGET_EXCEEDED]
    assert skipped[1].member == "" and "skipped members" in skipped[1].detail
    # stopped at the member's header: nothing of it was decompressed.  Decompressing the archive, timed here on
    # the same machine under the same load, is the yardstick (on a busy machine a fixed second is not)
    start = time.monotonic()
    with bz2.open(archive) as fh:
        while fh.read(1 << 24):
            pass
    whole = time.monotonic() - start
    assert elapsed < max(1.0, whole / 2), (elapsed, whole)


def test_time_budget_ends_extraction_with_a_reason(tmp_path):
    archive = _tar(tmp_path / "slow.tar.gz", [(f"p/m{i}.py", 64 * 1024) for i in range(200)])
    skipped: list[ArchiveSkip] = []
    extract_archive(archive, tmp_path / "x", budget=ArchiveBudget(max_seconds=0.0), skipped=skipped)
    assert [s.reason for s in skipped] == [Reason.ARCHIVE_BUDGET_EXCEEDED]
    assert "budget" in skipped[0].detail


def test_member_count_budget(tmp_path):
    archive = _tar(tmp_path / "many.tar", [(f"p/m{i}.py", b"") for i in range(30)], "w")
    skipped: list[ArchiveSkip] = []
    extract_archive(archive, tmp_path / "x", budget=ArchiveBudget(max_members=10), skipped=skipped)
    assert len(list((tmp_path / "x" / "p").iterdir())) == 10
    assert [s.reason for s in skipped] == [Reason.ARCHIVE_BUDGET_EXCEEDED]


def test_zip_stops_after_the_budget_whatever_the_member_declares(tmp_path):
    """A zip member whose headers declare 10 bytes but which inflates to 4 MiB: never more than the budget is
    written, and the member is recorded."""
    path = tmp_path / "liar.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("p/ok.py", "X = 1\n")
        zf.writestr("p/liar.py", bytes(4 * 1024 * 1024))
    data = bytearray(path.read_bytes())
    real = (4 * 1024 * 1024).to_bytes(4, "little")
    fake = (10).to_bytes(4, "little")
    assert data.count(real) == 2  # uncompressed size in the local header and in the central directory
    data = data.replace(real, fake)
    path.write_bytes(bytes(data))
    skipped: list[ArchiveSkip] = []
    root = extract_archive(path, tmp_path / "x", skipped=skipped)
    assert (root / "ok.py").read_text() == "X = 1\n"
    assert not (root / "liar.py").exists()
    assert [(s.member, s.reason) for s in skipped] == [("p/liar.py", Reason.ARCHIVE_INVALID)]
    # and one that declares honestly but is over the member budget is skipped before reading a byte
    skipped.clear()
    with zipfile.ZipFile(tmp_path / "big.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("p/big.py", bytes(3 * 1024 * 1024))
    extract_archive(tmp_path / "big.zip", tmp_path / "y", budget=ArchiveBudget(max_member_bytes=1024 * 1024),
                    skipped=skipped)
    assert [(s.member, s.reason) for s in skipped] == [("p/big.py", Reason.ARCHIVE_MEMBER_TOO_LARGE)]


def test_archive_exclusions_reach_the_checkout(tmp_path):
    archive = tmp_path / "p-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for name, kind, link in (("p-1.0/a.py", tarfile.REGTYPE, ""), ("p-1.0/l.py", tarfile.SYMTYPE, "a.py"),
                                 ("p-1.0/h.py", tarfile.LNKTYPE, "p-1.0/a.py"), ("p-1.0/f.py", tarfile.FIFOTYPE, ""),
                                 ("p-1.0/a.py", tarfile.REGTYPE, "")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, link
            tf.addfile(info, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
    co = materialise(RepoSpec(str(archive)), tmp_path / "w")
    assert [(e.item_id, e.reason) for e in co.exclusions] == [
        ("p-1.0/p-1.0/l.py", Reason.ARCHIVE_LINK), ("p-1.0/p-1.0/h.py", Reason.ARCHIVE_LINK),
        ("p-1.0/p-1.0/f.py", Reason.ARCHIVE_SPECIAL_MEMBER), ("p-1.0/p-1.0/a.py", Reason.ARCHIVE_DUPLICATE_MEMBER)]


# -- identity -----------------------------------------------------------------------------------------------------

def test_identity_is_content_not_name(tmp_path):
    a, b = tmp_path / "r1" / "proj", tmp_path / "r2" / "proj"
    for d, text in ((a, "X = 1\n"), (b, "X = 2\n")):
        d.mkdir(parents=True)
        (d / "m.py").write_text(text)
    ia, ib = source_identity(RepoSpec(str(a))), source_identity(RepoSpec(str(b)))
    assert ia and ib and ia != ib
    assert source_identity(RepoSpec(str(a))) == ia  # stable
    (a / "m.py").write_text("X = 3\n")
    assert source_identity(RepoSpec(str(a))) != ia
    (b / "node_modules").mkdir()
    (b / "node_modules" / "x.js").write_text("vendored")
    assert source_identity(RepoSpec(str(b))) == ib  # a directory the snapshot never reads is not identity
    archive = tmp_path / "p.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("p/a.py", "X = 1\n")
    assert source_identity(RepoSpec(str(archive))).startswith("archive:")
    repo = tmp_path / "g"
    _commit_repo(repo)
    assert source_identity(RepoSpec(f"file://{repo}")).startswith(f"git:file://{repo}@")
    assert source_identity(RepoSpec(f"file://{repo}", "ABCDEF12")) == f"git:file://{repo}@abcdef12"


def test_shard_key_covers_options_toolchain_name_and_identity():
    from benchsmith.builders.cceval.config import BuildConfig
    from benchsmith.repobuild.shard import shard_fingerprint

    cfg = BuildConfig(language="python", output="o")
    base = shard_fingerprint(cfg, "proj", "dir:1", {"pylint": "4.1.4"})
    assert base == shard_fingerprint(BuildConfig(language="python", output="elsewhere", workers=9), "proj", "dir:1",
                                     {"pylint": "4.1.4"})
    assert base != shard_fingerprint(cfg, "proj", "dir:2", {"pylint": "4.1.4"})
    assert base != shard_fingerprint(cfg, "proj#2", "dir:1", {"pylint": "4.1.4"})
    assert base != shard_fingerprint(cfg, "proj", "dir:1", {"pylint": "4.1.5"})
    assert base != shard_fingerprint(BuildConfig(language="python", output="o", seed=1), "proj", "dir:1",
                                     {"pylint": "4.1.4"})


# -- positions ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("junk", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_python_lines_agree_with_the_tokenizer(junk):
    text = f"# {junk} x\nA = 1\nS = '{junk}'\nB = 2\r\nC = 3\rD = 4\n"
    tree = ast.parse(text)
    lines = python_lines(text)
    for node in tree.body:
        target = node.targets[0]
        assert lines[target.lineno - 1][target.col_offset:].startswith(target.id)


def test_line_numbering_maps_lone_cr_files_to_lf_lines():
    text = "a = 1\rbb = 2\r\ncc = 3\n\rdd"
    numbering = LineNumbering(text)
    lf_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    for py_line, word in ((0, "a"), (1, "bb"), (2, "cc"), (4, "dd")):
        line, col = numbering.to_lf(py_line, 0)
        assert text[lf_starts[line] + col:].startswith(word)
    assert LineNumbering("x\r\ny\n").to_lf(1, 0) == (1, 0)


def test_go_line_directives_are_blanked_in_place():
    text = ('package a\n//line x.go:10\nvar s = "//line not a comment:1"\n/*line y.go:1:1*/ var t = `\n//line raw\n`\n'
            "/*line\nz.go:3*/ var u = '/'\n// ordinary comment\n")
    out = neutralise_line_directives(text)
    assert len(out) == len(text) and [i for i, c in enumerate(out) if c == "\n"] == \
        [i for i, c in enumerate(text) if c == "\n"]
    assert "//line x.go" not in out and "/*line y.go" not in out
    assert '"//line not a comment:1"' in out and "//line raw" in out and "// ordinary comment" in out
    assert neutralise_line_directives("package a\n") == "package a\n"


def test_a_use_whose_position_does_not_hold_its_name_is_a_reason_not_silence():
    """to_ref on a diagnostic shaped like pylint's E1101 for a stub (the message pylint writes, positions given
    by hand): where the text holds the member it is a ref, where it does not it is a recorded reason."""
    from benchsmith.analyzers.base import Diagnostic
    from benchsmith.analyzers.python import Binding, FileStubs, ModuleIndex
    from benchsmith.analyzers.python.attribution import to_ref
    from benchsmith.files import SourceFile

    files = [SourceFile("pkg/__init__.py", ""), SourceFile("pkg/a.py", "class Box:\n    pass\n"),
             SourceFile("pkg/b.py", "import pkg.a\nx = pkg.a.Box()\n")]
    index = ModuleIndex(files)
    stubs = FileStubs("pkg/b.py", "", [], {"a": [Binding("a", "pkg.a", "pkg/a.py")]})
    lines = python_lines(files[2].text)
    msg = "Class 'a' has no 'Box' member"
    good = to_ref(Diagnostic("pkg/b.py", 1, 4, "E1101", msg, 1, 13), stubs, index, lines)
    assert good.symbol == "Box" and (good.line, good.column) == (1, 10)
    moved = to_ref(Diagnostic("pkg/b.py", 1, 4, "E1101", msg, 1, 12), stubs, index, lines)
    assert isinstance(moved, str) and "does not hold 'Box'" in moved


def test_truncated_archive_keeps_what_was_read_and_says_why(tmp_path):
    good = _tar(tmp_path / "t.tar.gz", [("p/a.py", b"A = 1\n"), ("p/big.py", 4 * 1024 * 1024)])
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    skipped: list[ArchiveSkip] = []
    root = extract_archive(cut, tmp_path / "x", skipped=skipped)
    assert (root / "a.py").read_text() == "A = 1\n" and not (root / "big.py").exists()
    assert [(s.member, s.reason) for s in skipped] == [("", Reason.ARCHIVE_INVALID)]
    empty = tmp_path / "junk.tar.gz"
    empty.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(SourceError) as err:
        extract_archive(empty, tmp_path / "y")
    assert err.value.reason is Reason.ARCHIVE_INVALID
