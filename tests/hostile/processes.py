"""Processes that outlive a run, looked for only among the processes this test process started.

Other builds on the same machine (another user's, another test session's) run pylint, javac and tsc under the
same private toolchain uid range, so a machine-wide count of toolchain processes fails whenever the machine is
shared.  A test instead makes itself a *child subreaper* while it runs toolchains (``adopting_orphans``): a
process that escapes its parent (double fork, ``setsid``) is re-parented to the test process instead of to init,
so every survivor of the test's own runs is still a descendant of the test process, and nothing else is."""

from __future__ import annotations

import ctypes
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


@dataclass(frozen=True)
class ProcEntry:
    pid: int
    ppid: int
    state: str  # the one-letter state of /proc/<pid>/stat ("Z": exited, waiting to be reaped)
    uid: int


def _entry(pid: int) -> ProcEntry | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()  # the name may hold spaces and parentheses
        uid = os.stat(f"/proc/{pid}").st_uid
    except (OSError, IndexError):
        return None  # exited while we looked
    return ProcEntry(pid, int(fields[1]), fields[0], uid)


def descendants(root: int | None = None) -> list[ProcEntry]:
    """Every process below ``root`` (default: this process), found by following parent links.  The process table
    is read only to follow those links: a process that is not below ``root`` is never returned."""
    root = os.getpid() if root is None else root
    children: dict[int, list[ProcEntry]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            e = _entry(int(name))
            if e is not None:
                children.setdefault(e.ppid, []).append(e)
    out: list[ProcEntry] = []
    todo = [root]
    while todo:
        for e in children.get(todo.pop(), []):
            out.append(e)
            todo.append(e.pid)
    return sorted(out, key=lambda e: e.pid)


def _prctl(option: int, value: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if option == PR_GET_CHILD_SUBREAPER:
        flag = ctypes.c_int(0)
        if libc.prctl(option, ctypes.byref(flag), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_GET_CHILD_SUBREAPER)")
        return flag.value
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    return value


def _is_toolchain_uid(uid: int, with_container_uid: bool) -> bool:
    from benchsmith import confine

    return (confine.UID_BASE <= uid < confine.UID_BASE + confine.UID_SPAN
            or (with_container_uid and uid == confine.CONTAINER_UID))


def reap_adopted_toolchain_zombies() -> None:
    """Reap the exited toolchain processes re-parented to us.  Only toolchain-uid ones: a zombie child that is a
    ``subprocess.Popen`` of some test must stay for its own ``wait``."""
    me = os.getpid()
    for e in descendants():
        if e.ppid == me and e.state == "Z" and _is_toolchain_uid(e.uid, True):
            try:
                os.waitpid(e.pid, os.WNOHANG)
            except ChildProcessError:
                continue


@contextmanager
def adopting_orphans() -> Iterator[None]:
    """While inside, this process is a child subreaper: what its runs leave behind stays its descendant."""
    before = _prctl(PR_GET_CHILD_SUBREAPER, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    try:
        yield
    finally:
        reap_adopted_toolchain_zombies()
        _prctl(PR_SET_CHILD_SUBREAPER, before)


def toolchain_processes(*, with_container_uid: bool = False) -> list[int]:
    """pids of running processes below this one that run as a toolchain uid (confinement's private range; with
    ``with_container_uid``, the uid containers run as too): any of them after a run is a survivor.  Run the
    toolchains inside ``adopting_orphans`` so that escaped processes are counted too."""
    reap_adopted_toolchain_zombies()
    return [e.pid for e in descendants() if e.state not in ("Z", "X") and _is_toolchain_uid(e.uid, with_container_uid)]


def new_processes(before: set[int]) -> list[ProcEntry]:
    """Running processes below this one that were not there in ``before`` (``{e.pid for e in descendants()}``
    taken when the test began): what the test started and left running."""
    return [e for e in descendants() if e.pid not in before and e.state not in ("Z", "X")]
