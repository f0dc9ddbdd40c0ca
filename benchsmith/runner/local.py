"""``run``: one external tool, hardened (new process group, stdin closed, wall-clock timeout that kills the whole
group, capped output, explicit environment, rlimits), on the host, confined or in a container."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from benchsmith.runner.capture import kill_group, read_capped, wait_exit
from benchsmith.runner.container import ContainerSpec, container_argv, hand_mounts, remove_container, take_back
from benchsmith.runner.records import DEFAULT_OUTPUT_CAP, Limits, RunResult, ToolMissing

if TYPE_CHECKING:
    from benchsmith.confine import Confinement

_PR_SET_PDEATHSIG = 1


def _load_prctl():
    """libc's prctl, resolved once in the parent so the forked child only makes the call (Linux only)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    limits: Limits | None = None,
    container: ContainerSpec | None = None,
    inherit_env: bool = True,
    preexec: Callable[[], None] | None = None,
    kill_on_output_cap: bool = False,
    after_exit: Callable[[], None] | None = None,
    die_with_parent: bool = True,
    confine: "Confinement | None" = None,
) -> RunResult:
    """Run ``argv`` hardened.  Never raises for tool failures; raises ``ToolMissing`` if the program is absent.

    ``preexec`` runs in the child before ``limits`` are applied (namespaces, dropping privileges);
    ``kill_on_output_cap`` kills the group as soon as either stream exceeds ``output_cap`` instead of draining
    until the timeout; ``after_exit`` runs once the group is dead but before the output readers are joined (to
    kill processes that left the group and still hold the pipes); ``die_with_parent`` has the kernel kill the
    tool when the thread that started it dies (a SIGKILLed build must not leave a compiler running for minutes).
    ``confine`` runs the tool confined (``benchsmith.confine``): a throwaway uid in fresh namespaces on a minimal
    read-only view, with only the environment given here (plus PATH/HOME/TMPDIR/LANG), and that run's limits in
    place of ``limits``; ignored for container runs, which get the engine's confinement instead.
    """
    argv = [str(a) for a in argv]
    handed: list[str] = []
    if container is not None:
        handed = hand_mounts(container)
        full_env = None
        # rlimits belong to the tool in the container (as --ulimit), not to the engine client
        argv = container_argv(argv, container, env, limits)
        limits = None
        exe = argv[0]
    else:
        full_env = dict(os.environ) if inherit_env else {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        full_env.update(env or {})
        exe = argv[0]
    if shutil.which(exe, path=(full_env or os.environ).get("PATH")) is None and not os.path.isfile(exe):
        raise ToolMissing(f"{exe!r} not found on PATH; run `make setup` (or install it) and retry")
    prepared = None
    if confine is not None and container is None:
        from benchsmith import confine as confinement

        if not os.path.isabs(exe):
            argv[0] = os.path.abspath(shutil.which(exe, path=(full_env or os.environ).get("PATH")) or exe)
        prepared = confinement.prepare(argv, confine, str(cwd) if cwd is not None else None, dict(env or {}),
                                       timeout)
        argv, full_env, limits, cwd = prepared.argv, prepared.env, None, "/"
        try:
            return _run(argv, cwd, full_env, timeout, output_cap, limits, None, preexec, kill_on_output_cap,
                        after_exit, die_with_parent, prepared)
        finally:
            prepared.close()
    try:
        return _run(argv, cwd, full_env, timeout, output_cap, limits, container, preexec, kill_on_output_cap,
                    after_exit, die_with_parent, None)
    finally:
        if handed:
            take_back(handed)


def _run(argv, cwd, full_env, timeout, output_cap, limits, container, preexec, kill_on_output_cap, after_exit,
         die_with_parent, prepared) -> RunResult:
    parent = os.getpid()

    def child_setup() -> None:
        if die_with_parent and _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the parent died before the request took effect
                os._exit(137)
        if preexec is not None:
            preexec()
        if limits is not None:
            limits.apply()

    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=child_setup if (limits is not None or preexec is not None or die_with_parent) else None,
        close_fds=True,
    )
    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    flags: dict = {}
    if kill_on_output_cap:
        flags["on_cap"] = lambda: kill_group(proc)
    readers = [
        threading.Thread(target=read_capped, args=(proc.stdout, output_cap, out_chunks, flags), daemon=True),
        threading.Thread(target=read_capped, args=(proc.stderr, output_cap, err_chunks, flags), daemon=True),
    ]
    for t in readers:
        t.start()
    timed_out = False
    try:
        timed_out = not wait_exit(proc, timeout)
    finally:
        # Kill the group even on normal exit: a tool may leave daemons/grandchildren behind.
        kill_group(proc)
        proc.wait()
        if container is not None and (timed_out or proc.returncode < 0):
            remove_container(argv)
        if after_exit is not None:
            after_exit()
    for t in readers:
        t.join(timeout=5)
    stderr = b"".join(err_chunks).decode("utf-8", errors="replace")
    oom = prepared is not None and not timed_out and prepared.oom()
    if oom:
        from benchsmith.confine import oom_message

        stderr = stderr.rstrip("\n") + ("\n" if stderr.strip() else "") + oom_message(prepared.limits) + "\n"
    return RunResult(
        argv=argv,
        returncode=None if timed_out else proc.returncode,
        stdout=b"".join(out_chunks).decode("utf-8", errors="replace"),
        stderr=stderr,
        timed_out=timed_out,
        truncated=bool(flags.get("truncated")),
        duration=time.monotonic() - start,
        oom=oom,
    )


def which(program: str) -> str | None:
    return shutil.which(program)


def repo_root() -> Path:
    """The benchsmith source tree (for containers/ and the project-local toolchain prefix)."""
    return Path(__file__).resolve().parents[2]
