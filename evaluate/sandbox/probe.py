"""Probing, once per process, the strongest launch mode this machine allows (:func:`probe_isolation`)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings

from benchsmith import runner
from benchsmith.confine.capabilities import NAMESPACE_FACTS, confinement_problems
from benchsmith.evaluate.sandbox.forkserver import Zygote, ZygoteDied, child_env, zygote_request
from benchsmith.evaluate.sandbox.launch import ChildPlan, SETPRIV, UNSHARE, launch_command
from benchsmith.evaluate.sandbox.limits import cgroup_note, memory_cgroups, default_hidden_paths
from benchsmith.evaluate.sandbox.records import (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER, MIB, Isolation, LaunchMode,
                                                 SandboxUnavailable)
from benchsmith.evaluate.sandbox.uids import UidLease, kill_uid
from benchsmith.runner import Limits
from benchsmith.uids import SANDBOX_UIDS


_PROBE_LOCK = threading.Lock()
_PROBED: dict[str, Isolation] = {}


def _candidate_interpreters(preferred: str | None) -> list[str]:
    if preferred:
        return [preferred]
    out: list[str] = []
    for cand in (sys.executable, os.path.realpath(sys.executable),
                 shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin"),
                 shutil.which("python", path="/usr/local/bin:/usr/bin:/bin")):
        if cand and cand not in out:
            out.append(cand)
    return out


_PROBE_PROGRAM = (
    # fractions: a stdlib module nobody imported yet, so the sandboxed uid must be able to read the stdlib
    f"import fractions, json, os, socket, sys; print(json.dumps({{**{NAMESPACE_FACTS}, "
    "'version': sys.version, 'prefix': sys.prefix}))"
)


def _modes_to_try(forkserver: bool = True) -> list[tuple[LaunchMode, bool]]:
    if os.geteuid() == 0:
        out = [(LaunchMode.ROOT_FORKSERVER, True)] if forkserver else []
        if UNSHARE and SETPRIV:
            out.append((LaunchMode.ROOT_NAMESPACES, True))
        out += [(LaunchMode.ROOT_UID, True), (LaunchMode.ROOT_UID, False)]
        return out
    out = [(LaunchMode.USER_NAMESPACES, True)] if UNSHARE else []
    out += [(LaunchMode.PLAIN, True), (LaunchMode.PLAIN, False)]
    return out


def probe_isolation(python: str | None = None, forkserver: bool = True) -> Isolation:
    """Find an interpreter the sandboxed user can execute and the strongest confinement the kernel grants us."""
    key = f"{python or ''}|{forkserver}"
    with _PROBE_LOCK:
        if key not in _PROBED:
            _PROBED[key] = _first_that_works(python, _modes_to_try(forkserver))
        return _PROBED[key]


def probe_mode(mode: LaunchMode, python: str | None = None) -> Isolation:
    """``mode`` (with a network namespace where the kernel grants one) as this machine gives it, probed like
    ``probe_isolation`` probes each mode; raises ``SandboxUnavailable`` where the machine cannot run it.  For a
    sandbox that must use one launch mode (``Sandbox(isolation=...)``: the conformance suite runs every mode)."""
    if mode is LaunchMode.CONTAINER:
        raise ValueError("the container backend is chosen with Sandbox(backend='container')")
    key = f"{python or ''}|{mode.value}"
    with _PROBE_LOCK:
        if key not in _PROBED:
            _PROBED[key] = _first_that_works(python, [(mode, True), (mode, False)])
        return _PROBED[key]


def _first_that_works(python: str | None, modes: list[tuple[LaunchMode, bool]]) -> Isolation:
    failures: list[str] = []
    for interp in _candidate_interpreters(python):
        own = _own_view(interp)
        if own is None:
            failures.append(f"{interp}: does not run even unconfined")
            continue
        for mode, netns in modes:
            iso = Isolation(interpreter=interp, mode=mode, network_namespace=netns,
                            pid_namespace=mode in (LaunchMode.ROOT_FORKSERVER, LaunchMode.ROOT_NAMESPACES,
                                                   LaunchMode.USER_NAMESPACES),
                            separate_uid=mode in (LaunchMode.ROOT_FORKSERVER, LaunchMode.ROOT_NAMESPACES,
                                                  LaunchMode.ROOT_UID))
            label = f"{interp} [{mode.value}, netns={'yes' if netns else 'no'}]"
            res = _probe_once(iso)
            if isinstance(res, str):
                failures.append(f"{label}: {res}")
                continue
            if res.returncode != 0:
                failures.append(f"{label}: exit {res.returncode}: {res.stderr.strip()[-300:]}")
                continue
            try:
                facts = json.loads(res.stdout)
            except ValueError:
                failures.append(f"{label}: unreadable probe output {res.stdout[:200]!r}")
                continue
            problems = confinement_problems(facts, uids=SANDBOX_UIDS if iso.separate_uid else None,
                                            pid_namespace=iso.pid_namespace, network_namespace=netns)
            if problems:
                failures.append(f"{label}: " + "; ".join(problems))
                continue
            if (facts["version"], facts["prefix"]) != own:
                # e.g. a venv under a 0700 home: the binary starts but cannot read its own stdlib/libpython
                # and silently falls back to another installation's; use an interpreter it can fully read
                failures.append(f"{label}: sees a different installation ({facts['prefix']}) than ours")
                break
            return _described(iso, res.extra.get("readonly_failures"), failures)
    raise SandboxUnavailable("no Python interpreter runs in the sandbox: " + " | ".join(failures))


def _described(iso: Isolation, readonly_failures: list[str] | None, failures: list[str]) -> Isolation:
    """``iso`` as probed, with what it does not enforce said in its notes (and warned about, for the network)."""
    mode, netns = iso.mode, iso.network_namespace
    notes = []
    if not netns:
        notes.append("the kernel refused a network namespace: sandboxed programs can use the network")
        warnings.warn("benchsmith sandbox: no network namespace available; programs are NOT cut off "
                      "from the network (" + " | ".join(failures)[-500:] + ")", RuntimeWarning, stacklevel=4)
    if readonly_failures:
        notes.append("could not make read-only: " + ", ".join(readonly_failures))
    if mode is LaunchMode.ROOT_FORKSERVER:
        notes.append("private tmpfs /tmp, /var/tmp and /dev/shm")
    cgroup = None
    if iso.separate_uid:
        cg = memory_cgroups()
        cgroup = cg.label if cg is not None else None
        if cg is None:
            notes.append("no memory cgroup (" + cgroup_note() + ")")
    if mode is not LaunchMode.ROOT_FORKSERVER:
        notes.append("host file systems visible (read-only is enforced only by the fork server)")
    if not iso.separate_uid:
        notes.append("not root: programs run as our own uid, so they can read/delete files we can; "
                     "run as root or use --sandbox container for that")
    return dataclasses.replace(iso, notes=tuple(notes), ipc_namespace=mode is not LaunchMode.PLAIN or netns,
                               private_root=mode is LaunchMode.ROOT_FORKSERVER, memory_cgroup=cgroup)


def _own_view(interp: str) -> tuple[str, str] | None:
    """(sys.version, sys.prefix) of ``interp`` run as ourselves, to compare with what the sandboxed user gets."""
    try:
        res = runner.run([interp, "-s", "-B", "-c", "import json, sys; print(json.dumps([sys.version, sys.prefix]))"],
                         inherit_env=False, timeout=30, output_cap=64 * 1024)
        version, prefix = json.loads(res.stdout)
        return version, prefix
    except (OSError, ValueError, runner.ToolMissing):
        return None


def _probe_once(iso: Isolation) -> runner.RunResult | str:
    if iso.mode is LaunchMode.ROOT_FORKSERVER:
        zygote = None
        try:
            zygote = Zygote(iso.interpreter, iso.network_namespace, hide=default_hidden_paths())
            with UidLease() as lease:
                res = zygote.run(zygote_request(lease.uid, Limits(address_space=1024 * MIB), None, 1024 * MIB),
                                 _PROBE_PROGRAM, timeout=20, output_cap=64 * 1024)
            res.extra["readonly_failures"] = zygote.readonly_failures
            return res
        except (OSError, ValueError, subprocess.SubprocessError, ZygoteDied) as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            if zygote is not None:
                zygote.close()
    with tempfile.TemporaryDirectory(prefix="bs-sbx-probe-") as tmp:
        lease = UidLease() if iso.separate_uid else None
        try:
            if lease is not None:
                lease.__enter__()
                os.chown(tmp, lease.uid, lease.uid)
            uid = lease.uid if lease is not None else None
            netns = CLONE_NEWNET | CLONE_NEWIPC if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC
            argv, flags, setuid = launch_command(iso, uid, [iso.interpreter, "-s", "-B", "-c", _PROBE_PROGRAM])
            if iso.mode is LaunchMode.PLAIN and iso.network_namespace:
                flags = netns
            plan = ChildPlan(netns_flags=flags, uid=setuid, limits=Limits(address_space=1024 * MIB))
            return runner.run(argv, cwd=tmp, env=child_env(tmp), inherit_env=False, timeout=20,
                              output_cap=64 * 1024, preexec=plan)
        except (OSError, subprocess.SubprocessError, runner.ToolMissing) as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            if lease is not None:
                if lease.uid is not None and iso.mode is LaunchMode.ROOT_UID:
                    kill_uid(lease.uid)
                lease.__exit__(None, None, None)
