"""Scratch space of our own.

A directory with a name another local user can guess, in a directory they can write to (``/tmp``), is theirs to
plant first: as a symbolic link it sends our checkouts and progress files wherever they choose, as a directory of
theirs it lets them read or swap what we write.  So scratch space is either

* fresh (``fresh_dir``: ``mkdtemp``, a random name created with ``O_EXCL``, mode 0700), or
* at a stable name we need to find again (a build's scratch, whose leftovers the next run removes), which goes
  under the output directory and is taken only when it is a real directory of ours (``private_dir``: never a link,
  never another user's, made 0700, in a parent no other user can rename it out of).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path


class ScratchError(RuntimeError):
    """A stable scratch path that is not ours to use (a link, another user's directory, a shared parent)."""


def fresh_dir(prefix: str, parent: str | os.PathLike | None = None) -> Path:
    """A new, empty, private (0700) directory with an unguessable name, under ``parent`` (default: the system's
    temporary directory)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def private_dir(path: str | os.PathLike) -> Path:
    """``path`` as a private directory of ours: created 0700 when missing (its parents as usual); when it exists it
    must be a real directory owned by us (never followed when a link), and is made 0700.  Its parent must not be
    writable by others unless sticky: otherwise another user could rename ours away and plant a link later."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    parent = os.stat(path.parent)
    if parent.st_mode & stat.S_IWOTH and not parent.st_mode & stat.S_ISVTX:
        raise ScratchError(f"{path.parent} is writable by every user and not sticky: no stable scratch "
                           "directory can be kept in it safely")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        kind = "a symbolic link" if os.path.islink(path) else "not a directory"
        raise ScratchError(f"{path} is {kind} ({exc.strerror}); it was not made by benchsmith: remove it and "
                           "retry") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise ScratchError(f"{path} belongs to uid {st.st_uid}, not to us; remove it and retry")
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return path


def runtime_dir() -> Path:
    """Where our own processes keep a name they must all find (the uid leases' lock files): ``/run`` for root, a
    directory no other user can write to; else the temporary directory, where a name is taken only once it is
    checked to be a private directory of ours."""
    if os.geteuid() == 0:
        try:
            st = os.lstat("/run")
            if stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and not st.st_mode & 0o022:
                return Path("/run")
        except OSError:
            pass
    return Path(tempfile.gettempdir())


# Characters every tool takes in argv, response files and file lists as they are.  Our scratch paths reach tools
# unquoted (mcs's ``-out:``, say), so a scratch below a path with a space or a quote would split.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9._/+=,@%~-]+")


def plain_path(path: str | os.PathLike) -> bool:
    """Whether ``path`` (absolute) and names below it can be handed to a tool without quoting."""
    return bool(_PLAIN_PATH.fullmatch(os.path.abspath(path)))


def claim_build_scratch(stable: Path) -> Path | None:
    """Make a build's scratch ready at its ``stable`` path: a killed run's leftovers removed, the directory taken as
    a private one of ours (None returned).  Where tools could not take that path unquoted, a fresh private
    directory is returned instead, to hold this build's scratch (the caller removes it at the end).  A path that is
    not ours to take ends the build with one line."""
    shutil.rmtree(stable, ignore_errors=True)  # never follows a link: rmtree refuses one
    if not plain_path(stable):
        return fresh_dir("benchsmith-build-")
    try:
        private_dir(stable)
    except (ScratchError, OSError) as exc:
        raise SystemExit(f"build cceval: no scratch directory: {exc}") from None
    return None
