"""What confinement needs of the machine and how a confined probe's report is read: the basics (Linux, root), the
facts a probe program prints (``NAMESPACE_FACTS``) and what of them shows confinement missing, and the machine's
cgroup layout.  The probe run itself is ``benchsmith.runner.confinement`` (it is a confined run, so it starts
where every confined run starts)."""

from __future__ import annotations

import os
import sys
import threading

from benchsmith.confine.cgroups import CgroupLayout, find_layout
from benchsmith.uids import UidRange

_LAYOUT_LOCK = threading.RLock()
_LAYOUT: CgroupLayout | None = None


def missing_basics() -> str:
    if sys.platform != "linux":
        return f"toolchain confinement needs Linux namespaces (this is {sys.platform})"
    if os.geteuid() != 0:
        return ("toolchain confinement runs each toolchain as a throwaway uid, which needs root "
                f"(running as uid {os.geteuid()})")
    return ""


# What a probe program (ours, the sandbox's) reports of the confinement it runs in: a Python dict expression over
# ``os`` and ``socket``, checked by ``confinement_problems``.
NAMESPACE_FACTS = "{'uid': os.getuid(), 'pid': os.getpid(), 'ifaces': sorted(n for _, n in socket.if_nameindex())}"


def confinement_problems(facts: dict, *, uids: UidRange | None, pid_namespace: bool,
                         network_namespace: bool) -> list[str]:
    """What of the expected confinement a probe's ``NAMESPACE_FACTS`` show missing (empty: all of it holds)."""
    problems = []
    if uids is not None and facts["uid"] not in uids:
        problems.append(f"the probe ran as uid {facts['uid']}")
    if pid_namespace and facts["pid"] > 5:
        problems.append(f"pid {facts['pid']}: no fresh pid namespace")
    if network_namespace and facts["ifaces"] != ["lo"]:
        problems.append(f"network interfaces {facts['ifaces']} visible")
    return problems


def cgroup_layout() -> CgroupLayout:
    """The machine's cgroup layout, found once per process (by the probe or the first confined run)."""
    global _LAYOUT
    with _LAYOUT_LOCK:
        if _LAYOUT is None:
            _LAYOUT = find_layout()
        return _LAYOUT
