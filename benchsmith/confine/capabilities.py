"""What confinement this machine grants, found once per process by confining a real probe program and checking
what it saw (its uid, pid, network interfaces, host files, whether /usr was writable), and the refusal to run
untrusted toolchains unconfined unless the user allowed it."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading

from benchsmith import runner
from benchsmith.confine.cgroups import CgroupLayout, MemoryControl, find_layout
from benchsmith.confine.records import MIB, Capabilities, Confinement, ConfinementUnavailable, Limits
from benchsmith.confine.view import python_paths
from benchsmith.uids import TOOLCHAIN_UIDS, UidRange

_PROBE_LOCK = threading.RLock()
_PROBED: Capabilities | None = None
_LAYOUT: CgroupLayout | None = None


def missing_basics() -> str:
    if sys.platform != "linux":
        return f"toolchain confinement needs Linux namespaces (this is {sys.platform})"
    if os.geteuid() != 0:
        return ("toolchain confinement runs each toolchain as a throwaway uid, which needs root "
                f"(running as uid {os.geteuid()})")
    return ""


def probe(refresh: bool = False) -> Capabilities:
    """What confinement this machine grants, found by confining a real probe program once per process."""
    global _PROBED, _LAYOUT
    with _PROBE_LOCK:
        if _PROBED is not None and not refresh:
            return _PROBED
        missing = missing_basics()
        if missing:
            _PROBED = Capabilities(False, None, False, missing)
            return _PROBED
        _LAYOUT = find_layout()
        caps = _probe_run(_LAYOUT)
        _PROBED = caps
        return caps


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


_PROBE_PROGRAM = (
    "import json, os, socket, sys\n"
    "def can(p):\n"
    "    try:\n"
    "        os.stat(p); return True\n"
    "    except OSError: return False\n"
    "w = False\n"
    "try:\n"
    "    open('/usr/.benchsmith-probe', 'w'); w = True\n"
    "except OSError: pass\n"
    f"print(json.dumps({{**{NAMESPACE_FACTS},"
    " 'host_files': [p for p in sys.argv[1:] if can(p)], 'write_usr': w,"
    " 'hostname': socket.gethostname(), 'userns': open('/proc/self/uid_map').read().split()}))\n"
)


def _probe_run(layout: CgroupLayout) -> Capabilities:
    conf = Confinement(read=tuple(python_paths()), limits=Limits(memory_bytes=512 * MIB, processes=64))
    # host files the probe must not see: one of ours in the temporary directory, and what only root may read
    sentinel = tempfile.NamedTemporaryFile(prefix="benchsmith-confine-probe-", delete=False)
    sentinel.close()
    host_files = [sentinel.name, "/etc/shadow", "/run", "/var/tmp"]
    try:
        res = runner.run([sys.executable, "-I", "-S", "-B", "-c", _PROBE_PROGRAM, *host_files], timeout=60,
                         confine=conf, output_cap=1 << 16)
    except (OSError, ConfinementUnavailable, runner.ToolMissing) as exc:
        return Capabilities(False, None, False, f"the confined probe did not start: {exc}")
    finally:
        os.unlink(sentinel.name)
    if res.returncode != 0:
        tail = [ln for ln in (res.stderr or res.stdout).strip().splitlines() if ln.strip()]
        return Capabilities(False, None, False, "the kernel refused a confined toolchain run: "
                            + (tail[-1][:300] if tail else f"exit status {res.returncode}"))
    try:
        facts = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Capabilities(False, None, False, f"unreadable confined probe output {res.stdout[:200]!r}")
    problems = confinement_problems(facts, uids=TOOLCHAIN_UIDS, pid_namespace=True, network_namespace=True)
    if facts["host_files"]:
        problems.append(f"host files visible ({', '.join(facts['host_files'])})")
    if facts["write_usr"]:
        problems.append("the system directories are writable")
    if problems:
        return Capabilities(False, None, False, "confinement incomplete: " + "; ".join(problems))
    userns = len(facts["userns"]) == 3 and facts["userns"][2] == "1"
    notes = []
    if layout.memory is MemoryControl.RLIMIT:
        notes.append("no memory cgroup: address-space limit per process and a process cap")
    return Capabilities(True, layout.memory, userns, notes=tuple(notes))


def require(allow_unconfined: bool = False) -> Capabilities:
    """The machine's capabilities; raises ``ConfinementUnavailable`` when toolchains cannot be confined and the user
    did not allow unconfined runs."""
    caps = probe()
    if not caps.available and not allow_unconfined:
        raise ConfinementUnavailable(f"cannot confine toolchains: {caps.missing}; refusing to analyse untrusted "
                                     "repositories (pass --allow-unconfined to run them unconfined anyway)")
    return caps


def cgroup_layout() -> CgroupLayout:
    """The machine's cgroup layout, found once per process (by ``probe`` or the first confined run)."""
    global _LAYOUT
    with _PROBE_LOCK:
        if _LAYOUT is None:
            _LAYOUT = find_layout()
        return _LAYOUT
