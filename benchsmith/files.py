"""A vetted snapshot of a repository's source files.

Toolchains never run on the user's checkout: we copy the eligible source files into a work directory we own, so a
symlink to /etc, a 50 MB blob, a binary with a `.py` name or a file in invalid UTF-8 never reaches pylint/javac/tsc,
and every file left out gets a recorded reason.  Nothing outside the repository is ever read: symlinks are never
followed (and the copy contains none).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from benchsmith.records import Exclusion, Reason, Stage

# Directories that hold vendored or generated code, not the project's own.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", "site-packages", "bower_components", "bin", "obj", ".gradle", ".idea", ".vs"}
)


@dataclass(frozen=True)
class FileLimits:
    max_bytes: int = 1_000_000
    max_lines: int = 20_000
    max_files: int = 50_000


@dataclass
class SourceFile:
    path: str  # relative, '/'-separated
    text: str

    @property
    def suffix(self) -> str:
        return os.path.splitext(self.path)[1]


@dataclass
class RepoSnapshot:
    """Eligible source files of one repository, copied under ``root``."""

    name: str
    root: Path
    files: list[SourceFile] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)
    configs: dict[str, str] = field(default_factory=dict)  # Analyzer.read_configs(repo): config files as data

    def by_path(self) -> dict[str, SourceFile]:
        return {f.path: f for f in self.files}

    def total_bytes(self) -> int:
        return sum(len(f.text.encode("utf-8")) for f in self.files)


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _unsafe_name(rel: str) -> bool:
    """A path component that climbs or is empty: the path itself is not a path inside the repository."""
    return any(part in ("..", ".", "") for part in rel.split("/"))


# Characters no tool's file list may receive.  Each toolchain gets file names in a syntax of its own: javac's
# driver reads one name per line (Java's readLine splits at \n, \r and \r\n), mcs/csc read a response file whose
# lines split at \r as well as \n, whose quotes group and whose backslash escapes a quote (csc), tsc a JSON
# tsconfig, go a JSON request, pylint a directory walk.  A name with a line break of any kind, another control
# character, a quote or a backslash could be split or unquoted differently from our list, so it is refused
# outright instead of being escaped per tool.  C1 controls and U+2028/U+2029 count too: Python's str.splitlines()
# and Unicode-aware readers break lines there.
_UNSAFE_CHARS = frozenset(chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029))
_UNSAFE_CHARS |= frozenset({'"', "'", "\\"})
# A component that starts like an option (-x, mcs/csc /x is covered by relative paths never starting with '/') or
# like a response-file reference (@file, for mcs, csc and javac) is read as one by a tool parsing its arguments.
_UNSAFE_LEADING = ("-", "@")


def unsafe_file_name(rel: str) -> str | None:
    """Why ``rel`` (a relative, '/'-separated path) must not reach a toolchain, or None when it may.  The rule is
    the same for every language, so a name refused for one tool's syntax is refused everywhere."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "the name is not valid UTF-8"
    for ch in rel:
        if ch in _UNSAFE_CHARS:
            return f"the name holds {ch!r}, which a tool's file list could split or unquote differently"
    for part in rel.split("/"):
        if part.startswith(_UNSAFE_LEADING):
            return f"the component {part!r} starts with {part[0]!r}, which a tool would read as an option"
    return None


def printable_name(rel: str) -> str:
    """``rel`` as text any JSON writer accepts: undecodable bytes (surrogate escapes) become ``\\xNN``."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _path_reason(exc: OSError) -> Reason:
    """The exclusion reason of a path the system would not let us look at."""
    if exc.errno == errno.ENAMETOOLONG:
        return Reason.PATH_TOO_LONG
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Reason.SOURCE_NOT_FOUND  # gone since its directory was listed
    return Reason.UNREADABLE_PATH


def _walk(root: Path, on_error: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` without following links, reporting each directory it cannot list (a path past PATH_MAX, no
    permission) instead of passing over it in silence."""
    return os.walk(root, followlinks=False, onerror=on_error)


def iter_candidate_paths(repo: Path, extensions: Iterable[str], repo_name: str, drop) -> Iterable[tuple[str, Path]]:
    """Yield (relative path, absolute path) of regular files with the given extensions, in sorted order.
    Symlinks (files or directories) are reported through ``drop`` and never followed, and so is every directory
    that cannot be listed (``path_too_long``, ``unreadable_path``): its files are lost, not silently."""
    exts = tuple(extensions)
    root = repo.resolve()

    def unlisted(exc: OSError) -> None:
        where = exc.filename if isinstance(exc.filename, str) else os.fsdecode(exc.filename or b"")
        rel = os.path.relpath(where, root).replace(os.sep, "/") if where else "."
        length = f" ({len(os.fsencode(where))} bytes)" if exc.errno == errno.ENAMETOOLONG else ""
        drop(rel, _path_reason(exc), f"directory not listed: {exc.strerror}{length}; no file in it was read")

    for dirpath, dirnames, filenames in _walk(root, unlisted):
        base = Path(dirpath)
        keep_dirs = []
        for d in sorted(dirnames):
            full = base / d
            if d in SKIP_DIRS:
                continue
            if os.path.islink(full):  # os.path.islink, unlike Path.is_symlink, never raises (ENAMETOOLONG)
                rel = full.relative_to(root).as_posix()
                target = Path(os.path.realpath(full))
                reason = Reason.SYMLINK if _is_inside(target, root) else Reason.SYMLINK_OUTSIDE
                drop(rel, reason, f"directory symlink to {os.readlink(full)!r} not followed")
                continue
            keep_dirs.append(d)
        dirnames[:] = keep_dirs
        for name in sorted(filenames):
            if not name.endswith(exts):
                continue
            full = base / name
            rel = full.relative_to(root).as_posix()
            yield rel, full


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """At most ``max_bytes + 1`` bytes of a file ``lstat`` called regular.  ``O_NOFOLLOW`` and ``O_NONBLOCK``, then
    ``fstat`` again: a link or a FIFO swapped in since is neither followed nor waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file any more")
        return fh.read(max_bytes + 1)


def snapshot(
    repo: str | os.PathLike,
    extensions: Iterable[str],
    dest: str | os.PathLike,
    *,
    repo_name: str,
    limits: FileLimits = FileLimits(),
    stage: Stage = Stage.SOURCE,
    on_file: Callable[[int], None] | None = None,
) -> RepoSnapshot:
    repo = Path(repo)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    snap = RepoSnapshot(name=repo_name, root=dest)

    def drop(rel: str, reason: Reason, detail: str) -> None:
        snap.exclusions.append(Exclusion(f"{repo_name}/{printable_name(rel)}", stage, reason, detail, repo_name))

    for rel, full in iter_candidate_paths(repo, extensions, repo_name, drop):
        if _unsafe_name(rel):
            drop(rel, Reason.UNSAFE_PATH, "path has an unsafe component")
            continue
        why = unsafe_file_name(rel)
        if why is not None:
            drop(rel, Reason.UNSAFE_FILE_NAME, why)
            continue
        try:
            st = os.lstat(full)
        except OSError as exc:
            drop(rel, _path_reason(exc), f"cannot stat: {exc.strerror}")
            continue
        if stat.S_ISLNK(st.st_mode):
            target = Path(os.path.realpath(full))
            reason = Reason.SYMLINK if _is_inside(target, repo.resolve()) else Reason.SYMLINK_OUTSIDE
            drop(rel, reason, f"symlink to {os.readlink(full)!r} not followed")
            continue
        if not stat.S_ISREG(st.st_mode):
            drop(rel, Reason.UNSAFE_PATH, "not a regular file")
            continue
        if st.st_size > limits.max_bytes:
            drop(rel, Reason.FILE_TOO_LARGE, f"{st.st_size} bytes > {limits.max_bytes}")
            continue
        if len(snap.files) >= limits.max_files:
            drop(rel, Reason.TOO_MANY_FILES, f"more than {limits.max_files} source files")
            continue
        try:
            data = read_regular_file(full, limits.max_bytes)
        except OSError as exc:
            drop(rel, _path_reason(exc), f"cannot read: {exc.strerror}")
            continue
        if b"\x00" in data[:8192]:
            drop(rel, Reason.BINARY_FILE, "NUL byte in the first 8 KiB")
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            drop(rel, Reason.NOT_UTF8, f"invalid UTF-8 at byte {exc.start}")
            continue
        if text.startswith("\ufeff"):
            text = text[1:]  # a BOM is not code; toolchains and the reconstruction both see the text without it
        lines = text.count("\n") + 1
        if lines > limits.max_lines:
            drop(rel, Reason.FILE_TOO_LARGE, f"{lines} lines > {limits.max_lines}")
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        snap.files.append(SourceFile(rel, text))
        if on_file is not None:
            on_file(len(snap.files))
    return snap


def write_tree(dest: str | os.PathLike, files: dict[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``dest`` exactly (no newline translation)."""
    dest = Path(dest)
    for rel, text in files.items():
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return dest


class DataFiles(dict):
    """``{relative path: text}`` of configuration read as data, with the files that were passed over
    (``skipped``: path, reason, detail), so that the builder records them instead of losing them silently."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[tuple[str, Reason, str]] = []


def read_data_files(
    repo: str | os.PathLike,
    wanted: Callable[[str], bool],
    *,
    prune: Callable[[str], bool] = lambda name: False,
    max_bytes: int = 1_000_000,
    max_files: int = 200,
) -> DataFiles:
    """``{relative path: text}`` of small regular files whose name ``wanted`` accepts (configuration read as
    data: tsconfig, go.mod ...).  Symlinks are never followed, oversized, non-UTF-8 and special files are skipped,
    directories in SKIP_DIRS or accepted by ``prune`` are not entered; walk order is sorted, so the result is
    deterministic."""
    root = Path(repo).resolve()
    found = DataFiles()
    # a directory that cannot be listed is passed over here: the snapshot's walk records it
    for dirpath, dirnames, filenames in _walk(root, lambda exc: None):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not prune(d)
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            if not wanted(name):
                continue
            full = Path(dirpath) / name
            if unsafe_file_name(full.relative_to(root).as_posix()) is not None:
                continue  # the snapshot records such a name; as configuration it is simply not read
            rel = full.relative_to(root).as_posix()
            try:
                st = os.lstat(full)
                if not stat.S_ISREG(st.st_mode):
                    continue  # a link or special file: the snapshot's vetting records it
                if st.st_size > max_bytes:
                    found.skipped.append((rel, Reason.CONFIG_TOO_LARGE,
                                          f"configuration file of {st.st_size} bytes, over {max_bytes}: not read"))
                    continue
                text = read_regular_file(full, max_bytes).decode("utf-8")
            except UnicodeDecodeError:
                found.skipped.append((rel, Reason.NOT_UTF8, "configuration file is not UTF-8: not read"))
                continue
            except OSError as exc:
                found.skipped.append((rel, Reason.UNREADABLE_PATH, f"configuration file not read: {exc.strerror}"))
                continue
            if len(found) >= max_files:
                found.skipped.append((rel, Reason.CONFIG_TOO_LARGE,
                                      f"more than {max_files} configuration files: this one and later ones not read"))
                return found
            found[rel] = text.removeprefix("\ufeff")
    return found

