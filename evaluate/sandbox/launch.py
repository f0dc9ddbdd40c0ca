"""Local launch modes: the child-side setup between fork and exec, and the command lines of the
namespace / uid modes (util-linux ``unshare`` / ``setpriv``)."""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
from dataclasses import dataclass

from benchsmith.evaluate.sandbox.records import CLONE_NEWIPC, CLONE_NEWNET, Isolation, LaunchMode
from benchsmith.evaluate.sandbox.zygote_keys import isolate_keyrings
from benchsmith.runner import Limits
from benchsmith.uids import become


_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS = 38


def _unshare(flags: int) -> None:
    if _LIBC.unshare(ctypes.c_int(flags)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


@dataclass(frozen=True)
class ChildPlan:
    netns_flags: int  # 0 = no namespace
    uid: int | None  # setuid to this in the child (ROOT_UID mode)
    limits: Limits
    cpu_seconds: int | None = None
    cgroup_procs: str | None = None  # join this cgroup ("0" = ourselves) before anything else

    def __call__(self) -> None:
        if self.cgroup_procs is not None:
            fd = os.open(self.cgroup_procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        if self.netns_flags:
            _unshare(self.netns_flags)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.cpu_seconds is not None:
            # soft < hard: the kernel sends SIGXCPU first, which tells a CPU-time kill from other SIGKILLs
            resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 1))
        self.limits.apply()
        os.umask(0o077)
        if self.uid is not None:
            become(self.uid)
        # a filter needs no-new-privileges once the uid is no longer root (and costs the launchers nothing)
        if _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        isolate_keyrings()


_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
UNSHARE = shutil.which("unshare", path=_SYSTEM_PATH)
SETPRIV = shutil.which("setpriv", path=_SYSTEM_PATH)
_SH = shutil.which("sh", path=_SYSTEM_PATH) or "/bin/sh"
_TRUE = shutil.which("true", path=_SYSTEM_PATH) or "/bin/true"
# PID 1 of a pid namespace ignores default-action signals (SIGXCPU ...); a shell as PID 1 keeps the program's
# signal semantics, waits for it and returns its status (128+signal when killed).
_SHIM = [_SH, "-c", '"$@"; exit $?', "sh"]


def launch_command(iso: "Isolation", uid: int | None, argv: list[str]) -> tuple[list[str], int, int | None]:
    """(argv to execute, unshare flags for the preexec, uid to setuid to in the preexec)."""
    if iso.mode is LaunchMode.ROOT_NAMESPACES:
        assert uid is not None and UNSHARE and SETPRIV
        priv = [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]
        return ([UNSHARE, "--pid", "--fork", "--kill-child", "--mount-proc", *_SHIM, *priv, *argv],
                CLONE_NEWIPC | (CLONE_NEWNET if iso.network_namespace else 0), None)
    if iso.mode is LaunchMode.ROOT_UID:
        return list(argv), CLONE_NEWIPC | (CLONE_NEWNET if iso.network_namespace else 0), uid
    if iso.mode is LaunchMode.USER_NAMESPACES:
        assert UNSHARE
        return ([UNSHARE, "--user", "--map-root-user", "--net", "--ipc", "--pid", "--fork", "--kill-child",
                 "--mount-proc", *_SHIM, *argv], 0, None)
    return list(argv), 0, None
