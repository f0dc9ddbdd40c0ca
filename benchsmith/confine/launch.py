"""One confined run: lease a throwaway uid, make its cgroups and the empty directory its new root is mounted on,
write the mount plan, and start the tool through the init program (``init_program.py``, run by our own
interpreter with ``-I -S``); ``Prepared.close`` undoes all of it."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from benchsmith.confine.capabilities import cgroup_layout, missing_basics
from benchsmith.confine.cgroups import RunCgroups
from benchsmith.confine.records import MemoryControl
from benchsmith.confine.records import MIB, Confinement, ConfinementUnavailable, Limits, UidLease
from benchsmith.confine.view import (DEV_NODES, ETC_ENTRIES, SYSTEM_DIRS, chown_tree, dedupe, executable_paths,
                                     grant_read)

CONFINE_EXIT = 125  # the init program exits with this when it could not set the confinement up
_INIT_SOURCE = Path(__file__).with_name("init_program.py").read_text(encoding="utf-8")


@dataclass
class Prepared:
    """A confined run ready to start: the argv to execute and what to undo afterwards."""

    argv: list[str]
    env: dict[str, str]
    lease: UidLease
    cgroups: RunCgroups | None
    root_dir: str
    write: tuple[str, ...]
    limits: Limits
    memory: MemoryControl | None

    def oom(self) -> bool:
        return self.cgroups.oom() if self.cgroups is not None else False

    def close(self) -> None:
        if self.cgroups is not None:
            self.cgroups.close()
        chown_tree(self.write, os.geteuid(), os.getegid())
        try:
            os.rmdir(self.root_dir)
        except OSError:
            shutil.rmtree(self.root_dir, ignore_errors=True)
        self.lease.__exit__(None, None, None)


def _system_env(env: dict[str, str]) -> dict[str, str]:
    out = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    out.update(env)
    return out


def prepare(argv: Sequence[str], conf: Confinement, cwd: str | None, env: dict[str, str],
            timeout: float) -> Prepared:
    """Lease a uid, make the run's cgroups and the empty directory the new root is mounted on, and return the
    init program's argv.  The caller must ``close()`` the result."""
    missing = missing_basics()
    if missing:
        raise ConfinementUnavailable(missing)
    layout = cgroup_layout()
    exe = argv[0]
    if not os.path.isabs(exe):
        found = shutil.which(exe, path=env.get("PATH") or os.environ.get("PATH"))
        if found is None:
            raise FileNotFoundError(exe)
        exe = os.path.abspath(found)
    argv = [exe, *argv[1:]]
    lease = UidLease().__enter__()
    uid = lease.uid
    assert uid is not None
    cgroups = None
    root_dir = ""
    try:
        limits = conf.limits
        if layout.memory_parent or layout.pids_parent:
            cgroups = RunCgroups(layout, f"benchsmith-tool-{uid}", limits)
        root_dir = tempfile.mkdtemp(prefix="bs-confine-root-")
        os.chmod(root_dir, 0o700)
        grant_read(conf.grant)
        chown_tree(conf.write, uid, uid)
        read = dedupe([*SYSTEM_DIRS, *executable_paths(exe), *conf.read])
        cpu = limits.cpu_seconds if limits.cpu_seconds is not None else max(60, int(timeout * 2) + 10)
        rlimit_as = None
        if layout.memory not in (MemoryControl.CGROUP_V1, MemoryControl.CGROUP_V2):
            rlimit_as = limits.memory_bytes + limits.address_space_extra
        plan = {
            "root": root_dir,
            "uid": uid,
            "cwd": os.path.abspath(cwd) if cwd else "/",
            "read": read,
            "etc": [e for e in ETC_ENTRIES if os.path.lexists(os.path.join("/etc", e))],
            "dev": list(DEV_NODES),
            "scratch": dedupe(["/tmp", "/dev/shm", *conf.scratch]),
            "write": list(dedupe(conf.write)),
            "scratch_bytes": limits.scratch_bytes,
            "cgroup_procs": cgroups.procs_files if cgroups else [],
            "rlimits": {"cpu": cpu, "fsize": limits.file_size, "nofile": limits.open_files,
                        "nproc": limits.processes, "as": rlimit_as},
            "hostname": "benchsmith",
        }
        init = [sys.executable, "-I", "-S", "-B", "-c", _INIT_SOURCE, json.dumps(plan), "--", *argv]
        return Prepared(init, _system_env(env), lease, cgroups, root_dir, tuple(conf.write), limits, layout.memory)
    except BaseException:
        if cgroups is not None:
            cgroups.close()
        if root_dir:
            shutil.rmtree(root_dir, ignore_errors=True)
        chown_tree(conf.write, os.geteuid(), os.getegid())
        lease.__exit__(None, None, None)
        raise


def oom_message(limits: Limits) -> str:
    return f"toolchain memory limit: the run was killed at its {limits.memory_bytes // MIB} MiB memory limit"
