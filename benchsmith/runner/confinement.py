"""What confinement this machine grants, found once per process by confining a real probe program and checking
what it saw (its uid, pid, network interfaces, host files, whether /usr was writable), and the refusal to run
untrusted toolchains unconfined unless the user allowed it.  It lives with the runner, where every confined run
starts, so that ``benchsmith.confine`` (what a confined run is made of) never depends on the runner."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading

from benchsmith.confine.capabilities import NAMESPACE_FACTS, cgroup_layout, confinement_problems, missing_basics
from benchsmith.confine.cgroups import CgroupLayout
from benchsmith.confine.records import (MIB, Capabilities, Confinement, ConfinementUnavailable, Limits,
                                        MemoryControl)
from benchsmith.confine.view import python_paths
from benchsmith.runner.local import run
from benchsmith.tool_errors import ToolMissing
from benchsmith.uids import TOOLCHAIN_UIDS

_PROBE_LOCK = threading.RLock()
_PROBED: Capabilities | None = None


def probe_confinement(refresh: bool = False) -> Capabilities:
    """What confinement this machine grants, found by confining a real probe program once per process."""
    global _PROBED
    with _PROBE_LOCK:
        if _PROBED is not None and not refresh:
            return _PROBED
        missing = missing_basics()
        _PROBED = Capabilities(False, None, False, missing) if missing else _probe_run(cgroup_layout())
        return _PROBED


def require_confinement(allow_unconfined: bool = False) -> Capabilities:
    """The machine's capabilities; raises ``ConfinementUnavailable`` when toolchains cannot be confined and the user
    did not allow unconfined runs."""
    caps = probe_confinement()
    if not caps.available and not allow_unconfined:
        raise ConfinementUnavailable(f"cannot confine toolchains: {caps.missing}; refusing to analyse untrusted "
                                     "repositories (pass --allow-unconfined to run them unconfined anyway)")
    return caps


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
        res = run([sys.executable, "-I", "-S", "-B", "-c", _PROBE_PROGRAM, *host_files], timeout=60,
                  confine=conf, output_cap=1 << 16)
    except (OSError, ConfinementUnavailable, ToolMissing) as exc:
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
