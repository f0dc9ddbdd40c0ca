"""git read as data (issue 22): work trees whose ``.git`` points elsewhere, holds FIFOs, devices or links, names
includes that never end, or whose files sit deeper than PATH_MAX.  Each case is a package that gives examples next
to its hostile part, and says the exact reason of each item it expects and the commit its examples must carry."""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.records import Reason
from tests.hostile.cases import write_package


@dataclass
class GitCase:
    name: str
    source: str
    items: dict[str, Reason] = field(default_factory=dict)  # item id -> its exact reason
    commit: str | None = None  # what every example's metadata.commit must be
    forbidden_commits: set[str] = field(default_factory=set)  # another repository's HEAD: never in any example
    examples_from: dict[str, int] = field(default_factory=lambda: {"pkg/b.py": 2})


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for k in [k for k in env if k.startswith("GIT_") and k not in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")]:
        del env[k]
    res = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)
    return res.stdout.strip()


def committed_package(repo: Path, message: str = "c") -> str:
    """``repo`` as a git work tree holding the package, one commit; its HEAD."""
    write_package(repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def other_repository(root: Path) -> tuple[Path, str]:
    """A repository outside every case, whose HEAD must never reach an example."""
    other = root / "other_repo"
    if not other.exists():
        other.mkdir(parents=True)
        (other / "elsewhere.txt").write_text("another repository\n")
        git(other, "init", "-q")
        git(other, "add", "-A")
        git(other, "-c", "user.email=o@example.com", "-c", "user.name=o", "commit", "-qm", "other")
    return other, git(other, "rev-parse", "HEAD")


def _refused(name: str) -> dict[str, Reason]:
    return {f"{name}/.git": Reason.GIT_METADATA_REFUSED}


def make_git_file_elsewhere(root: Path) -> GitCase:
    """``.git`` is a file: ``gitdir: /elsewhere/.git``.  Followed, every example would carry the other HEAD."""
    other, other_head = other_repository(root)
    repo = root / "git_file_elsewhere"
    write_package(repo)
    (repo / ".git").write_text(f"gitdir: {other / '.git'}\n")
    return GitCase(repo.name, str(repo), _refused(repo.name), None, {other_head})


def make_git_dir_link(root: Path) -> GitCase:
    other, other_head = other_repository(root)
    repo = root / "git_dir_link"
    write_package(repo)
    os.symlink(other / ".git", repo / ".git")
    return GitCase(repo.name, str(repo), _refused(repo.name), None, {other_head})


def make_head_fifo(root: Path) -> GitCase:
    """A FIFO at ``.git/HEAD``: opening it blocks until someone writes (the build hung 45 s)."""
    repo = root / "head_fifo"
    committed_package(repo)
    os.unlink(repo / ".git" / "HEAD")
    os.mkfifo(repo / ".git" / "HEAD")
    return GitCase(repo.name, str(repo), _refused(repo.name))


def make_head_device(root: Path) -> GitCase | None:
    """``.git/HEAD`` is /dev/zero's device node (only root can make one; None elsewhere)."""
    if os.geteuid() != 0:
        return None
    repo = root / "head_device"
    committed_package(repo)
    os.unlink(repo / ".git" / "HEAD")
    os.mknod(repo / ".git" / "HEAD", stat.S_IFCHR | 0o644, os.makedev(1, 5))
    return GitCase(repo.name, str(repo), _refused(repo.name))


def make_head_link_outside(root: Path, outside: Path) -> GitCase:
    """``.git/HEAD`` is a link to a secret outside the repository; its text must reach no output."""
    repo = root / "head_link_outside"
    committed_package(repo)
    os.unlink(repo / ".git" / "HEAD")
    os.symlink(outside / "notes.txt", repo / ".git" / "HEAD")
    return GitCase(repo.name, str(repo), _refused(repo.name))


def make_ref_link_elsewhere(root: Path) -> GitCase:
    """HEAD names ``refs/heads/main``, a link to the other repository's branch."""
    other, other_head = other_repository(root)
    repo = root / "ref_link_elsewhere"
    committed_package(repo)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    heads = repo / ".git" / "refs" / "heads"
    for p in heads.iterdir():
        p.unlink()
    branch = git(other, "symbolic-ref", "--short", "HEAD")
    os.symlink(other / ".git" / "refs" / "heads" / branch, heads / "main")
    return GitCase(repo.name, str(repo), _refused(repo.name), None, {other_head})


def make_head_climbs(root: Path) -> GitCase:
    """HEAD names a ref that climbs out of ``.git`` to the other repository's branch file."""
    other, other_head = other_repository(root)
    repo = root / "head_climbs"
    committed_package(repo)
    branch = git(other, "symbolic-ref", "--short", "HEAD")
    climb = os.path.relpath(other / ".git" / "refs" / "heads" / branch, repo / ".git")
    (repo / ".git" / "HEAD").write_text(f"ref: refs/../{climb}\n")
    return GitCase(repo.name, str(repo), _refused(repo.name), None, {other_head})


def make_alternates(root: Path) -> GitCase:
    """``objects/info/alternates`` names the other repository's object store."""
    other, other_head = other_repository(root)
    repo = root / "alternates"
    committed_package(repo)
    (repo / ".git" / "objects" / "info" / "alternates").write_text(f"{other / '.git' / 'objects'}\n")
    return GitCase(repo.name, str(repo), _refused(repo.name), None, {other_head})


def make_fifo_in_objects(root: Path) -> GitCase:
    """A FIFO where git would look for a loose object: reading it would block."""
    repo = root / "fifo_in_objects"
    head = committed_package(repo)
    loose = repo / ".git" / "objects" / head[:2] / head[2:]
    os.chmod(loose, 0o644)
    os.unlink(loose)
    os.mkfifo(loose)
    return GitCase(repo.name, str(repo), _refused(repo.name))


def make_config_includes(root: Path) -> GitCase:
    """``.git/config`` includes /dev/zero, a FIFO of the repository and a conditional include of the same, and
    moves the work tree elsewhere: none of it is opened, and the commit is still the repository's own."""
    repo = root / "config_includes"
    head = committed_package(repo)
    fifo = repo / ".git" / "never.fifo"
    os.mkfifo(fifo)
    with open(repo / ".git" / "config", "a", encoding="utf-8") as fh:
        fh.write(f"[include]\n\tpath = /dev/zero\n\tpath = {fifo}\n[includeIf \"gitdir:/\"]\n\tpath = {fifo}\n"
                 f"[core]\n\tworktree = /\n")
    return GitCase(repo.name, str(repo), {}, head)


def make_path_too_long(root: Path) -> GitCase:
    """A source file below directories whose path passes PATH_MAX: ``os.walk`` without ``onerror`` lost it
    without a word.  The item is the first directory the system cannot open by its path."""
    repo = root / "path_too_long"
    write_package(repo)
    limit = os.pathconf("/", "PC_PATH_MAX")
    component = "d" * 200
    base = os.path.realpath(repo)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    depth, first_too_long = 0, None
    try:
        while depth * (len(component) + 1) < limit + 400:
            os.mkdir(component, dir_fd=fd)
            nxt = os.open(component, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
            depth += 1
            if first_too_long is None and len(os.fsencode(base)) + depth * (len(component) + 1) >= limit:
                first_too_long = "/".join([component] * depth)
        with open(os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
            fh.write("import pkg.a\n\nVALUE = pkg.a.total([1])\n")
    finally:
        os.close(fd)
    assert first_too_long is not None
    return GitCase(repo.name, str(repo), {f"{repo.name}/{first_too_long}": Reason.PATH_TOO_LONG})


def make_git_control(root: Path) -> GitCase:
    """A plain git work tree: its commit is read, nothing is refused."""
    repo = root / "git_control"
    head = committed_package(repo)
    return GitCase(repo.name, str(repo), {}, head)


def make_git_suite(root: Path, outside: Path) -> list[GitCase]:
    root.mkdir(parents=True, exist_ok=True)
    made = [make_git_file_elsewhere(root), make_git_dir_link(root), make_head_fifo(root), make_head_device(root),
            make_head_link_outside(root, outside), make_ref_link_elsewhere(root), make_head_climbs(root),
            make_alternates(root), make_fifo_in_objects(root), make_config_includes(root), make_path_too_long(root),
            make_git_control(root)]
    return [c for c in made if c is not None]

