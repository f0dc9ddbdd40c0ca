"""Repository sources: a local directory (git or not), a git URL (``URL@COMMIT`` pins a commit), or a
``.tar.gz``/``.tgz``/``.zip`` archive such as a PyPI sdist or an npm tarball.

Archives are extracted member by member with every path checked (no ``..``, no absolute paths, no links, no
devices), so a zip-slip archive is refused with a recorded reason instead of writing outside the work directory.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from benchsmith.records import Checkout, Reason, RepoSpec

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")
MAX_ARCHIVE_MEMBER = 64 * 1024 * 1024
MAX_ARCHIVE_TOTAL = 1024 * 1024 * 1024


class SourceError(Exception):
    """A repository could not be materialised; ``reason`` is recorded as its exclusion."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def repo_name(spec: RepoSpec) -> str:
    """A stable, filesystem-safe repository id (used in task ids and shard names)."""
    if spec.name:
        return spec.name
    src = spec.source.rstrip("/")
    for suffix in ARCHIVE_SUFFIXES + (".git",):
        if src.endswith(suffix):
            src = src[: -len(suffix)]
            break
    if is_remote(spec.source):
        parts = [p for p in re.split(r"[/:]", src) if p]
        base = "_".join(parts[-2:])
    else:
        base = Path(src).expanduser().resolve().name if Path(src).is_dir() else Path(src).name
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._") or "repo"
    return f"{base}@{spec.commit[:12]}" if spec.commit else base


def is_remote(source: str) -> bool:
    return "://" in source or source.startswith("git@")


def materialise(spec: RepoSpec, workdir: Path, full_history: bool = False) -> Checkout:
    """Bring ``spec`` onto disk under ``workdir`` (only for archives and clones; local dirs are used in place,
    read-only from our side)."""
    name = repo_name(spec)
    src = spec.source
    if is_remote(src) and not src.endswith(ARCHIVE_SUFFIXES):
        return _clone(spec, name, workdir, full_history)
    path = Path(src).expanduser()
    if not path.exists():
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"{src}: no such file or directory")
    if path.is_file():
        if not src.endswith(ARCHIVE_SUFFIXES):
            raise SourceError(Reason.ARCHIVE_INVALID, f"{src}: not a directory or a supported archive "
                              f"({', '.join(ARCHIVE_SUFFIXES)})")
        dest = workdir / "extract"
        root = extract_archive(path, dest)
        return Checkout(spec=spec, name=name, path=str(root), kind="archive",
                        created=_archive_date(path))
    commit, created = _git_info(path)
    return Checkout(spec=spec, name=name, path=str(path.resolve()), commit=commit, created=created,
                    kind="git" if commit else "directory")


def _git_info(path: Path) -> tuple[str | None, str | None]:
    """HEAD sha and the date of the first commit, when ``path`` is a git work tree."""
    if not (path / ".git").exists():
        return None, None
    try:
        import git

        repo = git.Repo(path)
        head = repo.head.commit.hexsha
        first = repo.git.log("--reverse", "--format=%cI", "--max-parents=0").splitlines()
        created = min(first) if first else None
        return head, created
    except Exception:  # a broken .git is not fatal: treat as a plain directory
        return None, None


def _clone(spec: RepoSpec, name: str, workdir: Path, full_history: bool = False) -> Checkout:
    """Shallow where possible; ``full_history`` when the first commit's date is needed (--created-after)."""
    import git

    dest = workdir / "clone"
    # Symlinks are checked out as plain files holding the target path, so none can point out of the tree.
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "GIT_LFS_SKIP_SMUDGE": "1",
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.symlinks", "GIT_CONFIG_VALUE_0": "false"}
    try:
        if spec.commit:
            # A pinned commit: fetch just that commit when the server allows it, else a full clone.
            repo = git.Repo.init(dest)
            origin = repo.create_remote("origin", spec.source)
            with repo.git.custom_environment(**env):
                try:
                    if full_history:
                        raise git.GitCommandError("fetch", "full history wanted")
                    origin.fetch(spec.commit, depth=1)
                except git.GitCommandError:
                    origin.fetch()
                repo.git.checkout("--detach", spec.commit)
        else:
            depth = {} if full_history else {"depth": 1}
            repo = git.Repo.clone_from(spec.source, dest, env=env, multi_options=["--no-recurse-submodules"], **depth)
    except Exception as exc:  # noqa: BLE001 - every clone failure is recorded, none aborts the run
        shutil.rmtree(dest, ignore_errors=True)
        raise SourceError(Reason.CLONE_FAILED, f"{spec.source}: {_git_failure(exc)}") from None
    head = repo.head.commit
    created = None
    try:
        roots = repo.git.log("--reverse", "--format=%cI", "--max-parents=0").splitlines()
        created = min(roots) if roots else None
    except Exception:  # shallow clones may not reach the root commit
        created = None
    if created is None or repo.git.rev_parse("--is-shallow-repository") == "true":
        created = None  # a shallow history's oldest commit is not the repository's first commit
    return Checkout(spec=spec, name=name, path=str(dest), commit=head.hexsha, created=created, kind="git")


def _git_failure(exc: Exception) -> str:
    """The line of git's stderr that says what went wrong (``fatal: unable to access ...: Could not resolve
    host``), not the quoting gitpython wraps around it."""
    lines = [ln.strip().strip("'").strip() for ln in str(getattr(exc, "stderr", "") or exc).splitlines()]
    lines = [ln.removeprefix("stderr:").strip().strip("'") for ln in lines]
    errors = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    if errors:
        return " / ".join(errors)
    meaningful = [ln for ln in lines if ln and not ln.startswith(("Cloning into", "cmdline:"))]
    return meaningful[-1] if meaningful else type(exc).__name__


def _archive_date(path: Path) -> str | None:
    return None  # an archive carries no trustworthy creation date; created-after filters treat it as unknown


def _safe_member(name: str) -> PurePosixPath | None:
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or any(part == ".." for part in p.parts) or not p.parts:
        return None
    if re.match(r"^[A-Za-z]:", p.parts[0]):
        return None
    return p


def extract_archive(archive: Path, dest: Path) -> Path:
    """Extract safely; returns the project root (the single top-level directory of sdists/npm tarballs)."""
    dest.mkdir(parents=True, exist_ok=True)
    total = 0
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    rel = _safe_member(info.filename)
                    if rel is None:
                        raise SourceError(Reason.ARCHIVE_UNSAFE, f"{archive.name}: member {info.filename!r} "
                                          "escapes the extraction directory")
                    mode = (info.external_attr >> 16) & 0o170000
                    if mode and mode == stat.S_IFLNK:
                        continue  # symlinks are never materialised
                    if info.is_dir():
                        (dest / rel).mkdir(parents=True, exist_ok=True)
                        continue
                    total += info.file_size
                    if info.file_size > MAX_ARCHIVE_MEMBER or total > MAX_ARCHIVE_TOTAL:
                        continue  # oversized members are skipped (the snapshot would refuse them anyway)
                    out = dest / rel
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, open(out, "wb") as fh:
                        shutil.copyfileobj(src, fh)
        else:
            with tarfile.open(archive) as tf:
                for member in tf:
                    rel = _safe_member(member.name)
                    if rel is None:
                        raise SourceError(Reason.ARCHIVE_UNSAFE, f"{archive.name}: member {member.name!r} "
                                          "escapes the extraction directory")
                    if member.isdir():
                        (dest / rel).mkdir(parents=True, exist_ok=True)
                        continue
                    if not member.isreg():
                        continue  # links, devices, fifos: never materialised
                    total += member.size
                    if member.size > MAX_ARCHIVE_MEMBER or total > MAX_ARCHIVE_TOTAL:
                        continue
                    out = dest / rel
                    out.parent.mkdir(parents=True, exist_ok=True)
                    src = tf.extractfile(member)
                    if src is None:
                        continue
                    with src, open(out, "wb") as fh:
                        shutil.copyfileobj(src, fh)
    except SourceError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise SourceError(Reason.ARCHIVE_INVALID, f"{archive.name}: {exc}") from None
    entries = [p for p in dest.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return dest


@dataclass(frozen=True)
class RepoFilterConfig:
    """Repository filters; all off by default (the paper used permissive licences, 10-50 files, < 1 MB)."""

    permissive_license: bool = False
    created_after: _dt.date | None = None
    min_files: int | None = None
    max_files: int | None = None
    max_bytes: int | None = None


def read_specs(repos: list[str], repos_file: str | None) -> list[RepoSpec]:
    specs = [RepoSpec.parse(r) for r in repos]
    if repos_file:
        with open(repos_file, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line and not line.startswith("#"):
                    specs.append(RepoSpec.parse(line))
    return specs

