"""Repository sources: local directories, git URLs pinned to a commit, archives (zip slip refused)."""

from __future__ import annotations

import io
import tarfile
import zipfile

import git
import pytest

from benchsmith.records import Reason, RepoSpec
from benchsmith.sources import SourceError, materialise, read_specs, repo_name


def test_spec_parsing_pins_commits_only_on_remote_urls():
    assert RepoSpec.parse("https://github.com/o/r.git@abc123") == RepoSpec("https://github.com/o/r.git", "abc123")
    assert RepoSpec.parse("git@github.com:o/r.git").commit is None
    assert RepoSpec.parse("/tmp/dir@v1").commit is None  # a local path may contain '@'
    assert repo_name(RepoSpec("https://github.com/o/r.git", "abcdef1234567890")) == "o_r@abcdef123456"


def _git_repo(path, files: dict[str, str]):
    repo = git.Repo.init(path)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "t")
        cw.set_value("user", "email", "t@example.com")
    for name, text in files.items():
        (path / name).write_text(text)
    repo.index.add(list(files))
    return repo, repo.index.commit("c")


def test_git_url_clone_and_pinned_commit(tmp_path):
    src = tmp_path / "origin"
    src.mkdir()
    repo, first = _git_repo(src, {"a.py": "x = 1\n"})
    (src / "a.py").write_text("x = 2\n")
    repo.index.add(["a.py"])
    repo.index.commit("second")
    url = f"file://{src}"
    head = materialise(RepoSpec(url), tmp_path / "w1")
    assert (tmp_path / "w1" / "clone" / "a.py").read_text() == "x = 2\n"
    assert head.kind == "git" and head.commit == repo.head.commit.hexsha
    pinned = materialise(RepoSpec.parse(f"{url}@{first.hexsha}"), tmp_path / "w2")
    assert pinned.commit == first.hexsha
    assert (tmp_path / "w2" / "clone" / "a.py").read_text() == "x = 1\n"


def test_full_history_clone_knows_the_first_commit_date(tmp_path):
    src = tmp_path / "origin"
    src.mkdir()
    repo, _ = _git_repo(src, {"a.py": "x = 1\n"})
    repo.index.commit("second")
    shallow = materialise(RepoSpec(f"file://{src}"), tmp_path / "w1")
    full = materialise(RepoSpec(f"file://{src}"), tmp_path / "w2", full_history=True)
    assert shallow.created is None  # a shallow clone cannot know its first commit
    assert full.created and full.created[:4].isdigit()


def test_failing_clone_is_a_recorded_reason(tmp_path):
    with pytest.raises(SourceError) as err:
        materialise(RepoSpec("https://invalid.invalid/nobody/nothing.git"), tmp_path)
    assert err.value.reason is Reason.CLONE_FAILED


def test_local_git_directory_reports_first_commit_date(tmp_path):
    _git_repo(tmp_path, {"a.py": "x = 1\n"})
    co = materialise(RepoSpec(str(tmp_path)), tmp_path / "unused")
    assert co.kind == "git" and co.created and co.created[:4].isdigit()


def test_zip_slip_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("pkg/ok.py", "x = 1\n")
        zf.writestr("../../escaped.py", "boom\n")
    with pytest.raises(SourceError) as err:
        materialise(RepoSpec(str(archive)), tmp_path / "w")
    assert err.value.reason is Reason.ARCHIVE_UNSAFE
    assert not (tmp_path / "escaped.py").exists() and not (tmp_path.parent / "escaped.py").exists()


def test_tar_links_are_not_materialised(tmp_path):
    archive = tmp_path / "p.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        data = b"x = 1\n"
        info = tarfile.TarInfo("p-1.0/a.py")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("p-1.0/passwd.py")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tf.addfile(link)
    co = materialise(RepoSpec(str(archive)), tmp_path / "w")
    root = tmp_path / "w" / "extract" / "p-1.0"
    assert co.path == str(root) and (root / "a.py").exists()
    assert not (root / "passwd.py").exists()


def test_repos_file(tmp_path):
    f = tmp_path / "repos.txt"
    f.write_text("# comment\n/tmp/a\n\nhttps://h/o/r@deadbeef\n")
    assert read_specs(["/x"], str(f)) == [RepoSpec("/x"), RepoSpec("/tmp/a"), RepoSpec("https://h/o/r", "deadbeef")]
