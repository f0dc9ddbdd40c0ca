"""Scratch space of our own and git read as data (issue 22): private directories that refuse a planted link,
work-tree metadata read with bounds and without following anything, and no directory lost without a record."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from benchsmith.builders.cceval.build import build
from benchsmith.builders.cceval.config import BuildConfig
from benchsmith.repobuild.scratch import scratch_dir
from benchsmith.files import read_data_files, snapshot
from benchsmith import gitmeta
from benchsmith.gitmeta import GitInfo, read_git_info
from benchsmith.records import Reason, RepoSpec, Stage
from benchsmith.runner import repo_root
from benchsmith.scratch import ScratchError, fresh_dir, plain_path, private_dir, runtime_dir
from benchsmith.sources import materialise, source_identity, tree_identity
from tests.hostile.gitdata import (committed_package, git, make_alternates, make_config_includes, make_fifo_in_objects,
                                   make_git_dir_link, make_git_file_elsewhere, make_head_climbs, make_head_device,
                                   make_head_fifo, make_head_link_outside, make_path_too_long,
                                   make_ref_link_elsewhere)

QUICK = 30.0  # seconds: reading metadata is milliseconds; this only turns a hang into a failure on a busy machine


# -- scratch space -----------------------------------------------------------------------------------------------

def test_fresh_dirs_are_private_and_unguessable(tmp_path):
    a, b = fresh_dir("bs-x-", tmp_path), fresh_dir("bs-x-", tmp_path)
    assert a != b and a.parent == b.parent == tmp_path
    assert stat.S_IMODE(os.lstat(a).st_mode) == 0o700 and a.name.startswith("bs-x-") and len(a.name) > 8


def test_private_dir_refuses_a_planted_link_and_writes_nothing_through_it(tmp_path):
    target = tmp_path / "theirs"
    target.mkdir()
    os.chmod(target, 0o755)
    planted = tmp_path / "benchsmith-build-0123456789ab"
    os.symlink(target, planted)
    with pytest.raises(ScratchError, match="symbolic link"):
        private_dir(planted)
    assert os.path.islink(planted) and not any(target.iterdir())
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o755  # not chmod-ed through the link either


def test_private_dir_refuses_a_file_and_another_users_directory(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ScratchError, match="not a directory"):
        private_dir(tmp_path / "file")
    if os.geteuid() != 0:
        pytest.skip("only root can make a directory owned by another user")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o777)
    os.chown(theirs, 65534, 65534)
    with pytest.raises(ScratchError, match="belongs to uid 65534"):
        private_dir(theirs)


def test_private_dir_creates_or_tightens_our_own(tmp_path):
    made = private_dir(tmp_path / "a" / "b")
    assert stat.S_IMODE(os.lstat(made).st_mode) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o777)
    assert stat.S_IMODE(os.lstat(private_dir(loose)).st_mode) == 0o700


def test_private_dir_refuses_a_shared_parent_that_is_not_sticky(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(ScratchError, match="not sticky"):
        private_dir(shared / "scratch")
    os.chmod(shared, 0o1777)
    assert private_dir(shared / "scratch").is_dir()


def test_build_scratch_is_under_the_output_directory_not_a_shared_one(tmp_path):
    cfg = BuildConfig(language="python", output=str(tmp_path / "out"), retrievers=(), repos=[])
    where = scratch_dir(cfg)
    assert where.is_relative_to(tmp_path / "out" / "python")
    import tempfile
    assert not where.is_relative_to(tempfile.gettempdir()) or tmp_path.is_relative_to(tempfile.gettempdir())
    assert "benchsmith-build-" not in where.name


def test_build_refuses_a_workdir_scratch_planted_as_a_link(tmp_path):
    samples = repo_root() / "samples" / "python"
    work = tmp_path / "work"
    work.mkdir()
    os.chmod(work, 0o1777)  # shared, sticky, like /tmp
    cfg = BuildConfig(language="python", output=str(tmp_path / "out"), retrievers=(), workers=1, workdir=str(work),
                      repos=[RepoSpec(str(samples / "shoplib"))])
    target = tmp_path / "theirs"
    target.mkdir()
    os.symlink(target, scratch_dir(cfg))
    with pytest.raises(SystemExit, match="symbolic link"):
        build(cfg, progress=False)
    assert not any(target.iterdir()) and os.path.islink(scratch_dir(cfg))


def test_runtime_dir_is_not_writable_by_other_users():
    st = os.stat(runtime_dir())
    if os.geteuid() == 0 and runtime_dir() == Path("/run"):
        assert st.st_uid == 0 and not st.st_mode & 0o022
    else:  # the temporary directory: names in it are checked by their users (benchsmith.uids)
        assert not st.st_mode & stat.S_IWOTH or st.st_mode & stat.S_ISVTX


# -- git as data -------------------------------------------------------------------------------------------------

def _timed(path: Path) -> GitInfo:
    start = time.monotonic()
    info = read_git_info(path)
    assert time.monotonic() - start < QUICK, f"reading {path}'s git metadata took {time.monotonic() - start:.1f}s"
    return info


def test_a_plain_work_tree_gives_its_commit_and_first_date(tmp_path):
    repo = tmp_path / "r"
    head = committed_package(repo)
    info = _timed(repo)
    assert info == GitInfo(head, git(repo, "log", "--max-parents=0", "--format=%cI", "HEAD"), None)
    git(repo, "pack-refs", "--all", "--prune")
    assert _timed(repo).commit == head  # the branch now only in packed-refs
    git(repo, "checkout", "-q", "--detach")
    assert _timed(repo).commit == head


def test_no_git_and_an_unborn_branch_are_not_refusals(tmp_path):
    assert _timed(tmp_path) == GitInfo()
    git(tmp_path, "init", "-q")
    assert _timed(tmp_path) == GitInfo()


def test_sha256_and_shallow_repositories(tmp_path):
    repo = tmp_path / "sha256"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256")
    (repo / "a.py").write_text("X = 1\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "two", "--allow-empty")
    head = git(repo, "rev-parse", "HEAD")
    assert len(head) == 64 and _timed(repo).commit == head
    plain = tmp_path / "plain"
    committed_package(plain)
    git(plain, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "two", "--allow-empty")
    shallow = tmp_path / "shallow"
    git(tmp_path, "-c", "protocol.file.allow=always", "clone", "-q", "--depth=1", f"file://{plain}", str(shallow))
    info = _timed(shallow)
    assert info.commit == git(plain, "rev-parse", "HEAD") and info.created is None and info.refused is None


def test_the_callers_git_variables_do_not_redirect_the_read(tmp_path, monkeypatch):
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    head = committed_package(mine)
    committed_package(theirs, "another message")
    monkeypatch.setenv("GIT_DIR", str(theirs / ".git"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(theirs / ".git" / "objects"))
    assert _timed(mine).commit == head


@pytest.mark.parametrize("make, expected", [
    (make_git_file_elsewhere, ".git is a file naming another git directory ("),
    (make_git_dir_link, ".git is a symbolic link, not a directory; not followed or opened"),
    (make_head_fifo, ".git/HEAD is a FIFO, not a regular file; not opened"),
    (make_head_device, ".git/HEAD is a character device, not a regular file; not opened"),
    (make_ref_link_elsewhere, ".git/refs/heads/main is a symbolic link, not a regular file; not opened"),
    (make_head_climbs, ".git/HEAD names 'refs/../"),
    (make_alternates, ".git/objects/info/alternates names object stores outside the repository"),
    (make_fifo_in_objects, ".git/objects/"),
])
def test_hostile_metadata_is_refused_with_what_was_wrong(tmp_path, make, expected):
    case = make(tmp_path)
    if case is None:
        pytest.skip("only root can make a device node")
    info = _timed(Path(case.source))
    assert info.commit is None and info.created is None
    assert info.refused is not None and info.refused.startswith(expected), info.refused
    if make is make_fifo_in_objects:
        assert info.refused.endswith("is a FIFO; the object store is not read")


def test_head_link_outside_is_refused_without_reading_it(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("ref: refs/heads/secret\n")
    info = _timed(Path(make_head_link_outside(tmp_path, outside).source))
    assert info.refused == ".git/HEAD is a symbolic link, not a regular file; not opened"
    assert "secret" not in info.refused


def test_config_includes_are_never_opened_under_a_small_memory_limit(tmp_path):
    """/dev/zero and a FIFO as includes (the build process passed 2 GiB on the first; the second blocks): the
    commit is read in a process held to 1 GiB of address space, well inside the time bound."""
    case = make_config_includes(tmp_path)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
            "from benchsmith.gitmeta import read_git_info; i = read_git_info(sys.argv[1]); "
            "print(i.commit, i.refused)")
    res = subprocess.run([sys.executable, "-c", code, case.source], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == [case.commit, "None"]


def test_materialise_records_the_refusal_and_builds_a_plain_directory(tmp_path):
    case = make_head_fifo(tmp_path)
    checkout = materialise(RepoSpec(case.source, name="head_fifo"), tmp_path / "work")
    assert (checkout.kind, checkout.commit, checkout.created) == ("directory", None, None)
    [e] = checkout.exclusions
    assert (e.item_id, e.stage, e.reason, e.repository) == ("head_fifo/.git", Stage.SOURCE,
                                                            Reason.GIT_METADATA_REFUSED, "head_fifo")
    assert e.detail.startswith(".git/HEAD is a FIFO")
    first = source_identity(RepoSpec(case.source))
    assert first is not None and first.startswith("dir:") and "+git:" not in first
    assert source_identity(RepoSpec(case.source)) == first


# -- no silent loss ----------------------------------------------------------------------------------------------

def test_a_directory_past_path_max_is_recorded(tmp_path):
    case = make_path_too_long(tmp_path)
    snap = snapshot(case.source, (".py",), tmp_path / "copy", repo_name="path_too_long")
    [(item, reason)] = case.items.items()
    found = {e.item_id: e for e in snap.exclusions}
    assert found[item].reason is Reason.PATH_TOO_LONG, found
    assert "File name too long" in found[item].detail
    assert sorted(f.path for f in snap.files) == ["pkg/__init__.py", "pkg/a.py", "pkg/b.py"]
    ident = tree_identity(Path(case.source), 1_000_000)
    assert ident == tree_identity(Path(case.source), 1_000_000)
    assert read_data_files(case.source, lambda name: name.endswith(".py"))  # walks past it without raising


def test_an_unlistable_directory_is_recorded(tmp_path, monkeypatch):
    repo = tmp_path / "r"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("X = 1\n")
    (repo / "locked").mkdir()
    (repo / "locked" / "hidden.py").write_text("Y = 2\n")
    locked = str((repo / "locked").resolve())
    if os.geteuid() == 0:  # root lists any directory: refuse it the way the kernel would refuse another user
        real = os.scandir

        def scandir(path="."):
            if os.fspath(path) == locked:
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path)
        monkeypatch.setattr(os, "scandir", scandir)
    else:
        os.chmod(repo / "locked", 0)
    try:
        snap = snapshot(repo, (".py",), tmp_path / "copy", repo_name="r")
    finally:
        os.chmod(repo / "locked", 0o755)
    assert [f.path for f in snap.files] == ["pkg/a.py"]
    [e] = snap.exclusions
    assert (e.item_id, e.reason) == ("r/locked", Reason.UNREADABLE_PATH)
    assert e.detail == "directory not listed: Permission denied; no file in it was read"


def test_a_commit_that_inflates_past_the_memory_limit_is_refused(tmp_path, monkeypatch):
    """A 96 MiB commit object (under 100 KiB on disk) read by a git held to 48 MiB of address space fails and is
    refused; with room it reads, so the limit is what stopped it."""
    repo = tmp_path / "r"
    committed_package(repo)
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    body = (f"tree {tree}\nauthor a <a@example.com> 1700000000 +0000\ncommitter a <a@example.com> 1700000000 +0000"
            "\n\n").encode() + b"x" * (96 << 20)
    raw = b"commit %d\0" % len(body) + body
    sha = hashlib.sha1(raw).hexdigest()
    (repo / ".git" / "objects" / sha[:2]).mkdir(exist_ok=True)
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).write_bytes(zlib.compress(raw, 1))
    del raw, body
    (repo / ".git" / "HEAD").write_text(sha + "\n")
    monkeypatch.setattr(gitmeta, "GIT_MEMORY_KIB", 48 * 1024)
    info = _timed(repo)
    assert info.commit is None and info.refused is not None and info.refused.startswith("git rev-parse failed"), info
    monkeypatch.setattr(gitmeta, "GIT_MEMORY_KIB", 4 * 1024 * 1024)
    assert _timed(repo).commit == sha


def test_plain_paths_are_those_tools_take_unquoted():
    assert plain_path("/data/out-1/python/.shards/scratch") and plain_path("/a/b_c+d=e,f@g%h~i")
    for bad in ("/data/my out", "/data/it's", '/data/"q"', "/data/back\\slash", "/data/tab\tx", "/data/caf\u00e9"):
        assert not plain_path(bad), bad


def test_configuration_files_passed_over_are_listed_not_lost(tmp_path):
    """A configuration file too large, not UTF-8 or past the file cap is not read, and says so (the build records
    it as an exclusion) instead of vanishing."""
    (tmp_path / "tsconfig.json").write_text("{}")
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "tsconfig.json").write_text("{" + " " * 2000 + "}")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tsconfig.json").write_bytes(b"{\xff}")
    got = read_data_files(tmp_path, lambda name: name == "tsconfig.json", max_bytes=1000)
    assert dict(got) == {"tsconfig.json": "{}"}
    assert sorted((p, r.value) for p, r, _ in got.skipped) == [("bad/tsconfig.json", "not_utf8"),
                                                                ("big/tsconfig.json", "config_too_large")]
    many = read_data_files(tmp_path, lambda name: name == "tsconfig.json", max_bytes=10_000, max_files=1)
    assert len(many) == 1 and [r.value for _, r, _ in many.skipped] == ["not_utf8", "config_too_large"]
    assert "more than 1 configuration files" in many.skipped[-1][2]
