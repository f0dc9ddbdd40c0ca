"""The sandbox's backends behind one interface (``Backend``): each runs one complete program under the limits of a
``RunSettings`` and returns its ``ExecResult``.  ``ForkServerBackend`` forks programs from pristine fork servers
(launch mode ``root_forkserver``), ``ExecBackend`` starts a fresh interpreter per program (the other local launch
modes), ``ContainerBackend`` runs it in the sandbox image.  ``Sandbox`` picks one and adds threads and
error handling; ``tests/unit/test_sandbox_conformance.py`` holds every backend to the same contract."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from benchsmith import runner
from benchsmith.evaluate.sandbox.forkserver import ZygoteDied, ZygotePool, child_env, zygote_request
from benchsmith.evaluate.sandbox.launch import ChildPlan, launch_command
from benchsmith.evaluate.sandbox.limits import memory_cgroups
from benchsmith.evaluate.sandbox.records import (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER, MIB, ExecResult, Isolation,
                                                 LaunchMode, SandboxUnavailable, Verdict)
from benchsmith.evaluate.sandbox.uids import UidLease, kill_uid
from benchsmith.evaluate.sandbox.verdicts import verdict_of
from benchsmith.runner import ContainerSpec, Limits, Mount, ToolchainBackend


@dataclass(frozen=True)
class RunSettings:
    """The limits every run of one ``Sandbox`` gets (its timeout is per run)."""

    memory_mb: int
    max_processes: int
    output_cap: int
    stderr_keep: int | None
    file_size_mb: int
    scratch_mb: int
    open_files: int
    hide: tuple[str, ...]  # never readable from inside (fork server)

    def rlimits(self, separate_uid: bool) -> Limits:
        return Limits(
            address_space=self.memory_mb * MIB,
            file_size=self.file_size_mb * MIB,
            # RLIMIT_NPROC counts every process of the uid: meaningful only with a throwaway uid
            processes=self.max_processes if separate_uid else None,
            open_files=self.open_files,
        )


def cpu_seconds(timeout: float) -> int:
    """The CPU-time rlimit of a run: past the wall-clock timeout, so that a busy loop ends as a timeout either way."""
    return max(1, math.ceil(timeout)) + 1


class Backend(Protocol):
    """One way of running a program confined; ``run`` never raises for what the program does."""

    @property
    def isolation(self) -> Isolation: ...

    def run(self, program: str, timeout: float) -> ExecResult: ...

    def close(self) -> None: ...


class ForkServerBackend:
    """``root_forkserver``: programs forked from a pool of fork servers (one per concurrent run)."""

    def __init__(self, settings: RunSettings, isolation: Isolation) -> None:
        self.settings = settings
        self._isolation = isolation
        self.pool: ZygotePool | None = None
        self._lock = threading.Lock()

    @property
    def isolation(self) -> Isolation:
        return self._isolation

    def run(self, program: str, timeout: float) -> ExecResult:
        iso, s = self._isolation, self.settings
        with self._lock:
            if self.pool is None:
                self.pool = ZygotePool(iso.interpreter, iso.network_namespace, s.scratch_mb, s.hide,
                                       memory_cgroups() if iso.memory_cgroup else None)
        pool = self.pool
        with UidLease() as lease:
            request = zygote_request(lease.uid, s.rlimits(iso.separate_uid), cpu_seconds(timeout),
                                     s.memory_mb * MIB)
            for attempt in (1, 2):  # a fork server that died is replaced once
                zygote = pool.acquire()
                try:
                    res = zygote.run(request, program, timeout, s.output_cap, s.stderr_keep)
                except ZygoteDied as exc:
                    pool.release(zygote, healthy=False)
                    if attempt == 2:
                        return ExecResult(Verdict.ERROR, None, "", "", 0.0, detail=str(exc))
                    continue
                pool.release(zygote, healthy=True)
                return verdict_of(res)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


class ExecBackend:
    """The other local launch modes: a fresh interpreter per program in a directory of its own."""

    def __init__(self, settings: RunSettings, isolation: Isolation) -> None:
        if isolation.mode in (LaunchMode.ROOT_FORKSERVER, LaunchMode.CONTAINER):
            raise ValueError(f"ExecBackend cannot run launch mode {isolation.mode.value}")
        self.settings = settings
        self._isolation = isolation

    @property
    def isolation(self) -> Isolation:
        return self._isolation

    def run(self, program: str, timeout: float) -> ExecResult:
        iso, s = self._isolation, self.settings
        tmp = tempfile.mkdtemp(prefix="bs-sbx-")
        lease = UidLease() if iso.separate_uid else None
        cgroups = memory_cgroups() if iso.memory_cgroup else None
        cgroup: Path | None = None
        try:
            if lease is not None:
                lease.__enter__()
            path = Path(tmp) / "program.py"
            path.write_text(program, encoding="utf-8")
            uid = lease.uid if lease is not None else None
            if uid is not None:
                os.chown(tmp, uid, uid)
                os.chown(path, uid, uid)
            os.chmod(tmp, 0o700)
            argv, flags, setuid = launch_command(iso, uid, [iso.interpreter, "-s", "-B", "program.py"])
            if iso.mode is LaunchMode.PLAIN and iso.network_namespace:
                flags = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC
            if cgroups is not None:
                cgroup = cgroups.child("run")
                cgroups.limit(cgroup, s.memory_mb * MIB)
            plan = ChildPlan(netns_flags=flags, uid=setuid, limits=s.rlimits(iso.separate_uid),
                             cpu_seconds=cpu_seconds(timeout),
                             cgroup_procs=str(cgroup / "cgroup.procs") if cgroup is not None else None)
            kill_after = uid is not None and not iso.pid_namespace
            res = runner.run(
                argv, cwd=tmp, env=child_env(tmp), inherit_env=False, timeout=timeout, output_cap=s.output_cap,
                preexec=plan, kill_on_output_cap=True,
                # without a pid namespace, children that left the process group are found by their uid
                after_exit=(lambda: kill_uid(uid)) if kill_after else None,
            )
            if cgroups is not None and cgroup is not None:
                res.extra["oom"] = cgroups.oom_kills(cgroup)
            return verdict_of(res)
        finally:
            if cgroups is not None and cgroup is not None:
                cgroups.remove(cgroup)
            if lease is not None:
                lease.__exit__(None, None, None)
            shutil.rmtree(tmp, ignore_errors=True)

    def close(self) -> None:
        pass  # nothing outlives a run


def local_backend(settings: RunSettings, isolation: Isolation) -> ForkServerBackend | ExecBackend:
    if isolation.mode is LaunchMode.ROOT_FORKSERVER:
        return ForkServerBackend(settings, isolation)
    return ExecBackend(settings, isolation)


def detect_engine() -> ToolchainBackend:
    # the one engine detection (benchsmith.containers): an engine counts only when its daemon answers
    from benchsmith.containers import detect_engine

    engine = detect_engine()
    if engine is None:
        raise SandboxUnavailable("the container backend needs docker or podman whose daemon answers "
                                 "(`docker info` / `podman info`)")
    return engine


def sandbox_image() -> str:
    """The tag of the sandbox image built from ``containers/sandbox.Dockerfile``."""
    from benchsmith.containers import image_tag

    return image_tag("sandbox.Dockerfile")


_WORK = "/sandbox/work"  # the program's own directory in the container: a tmpfs, writable to it


class ContainerBackend:
    """The sandbox image (``containers/sandbox.Dockerfile``) under docker or podman, one container per program."""

    def __init__(self, settings: RunSettings, image: str | None = None,
                 engine: ToolchainBackend | None = None) -> None:
        self.settings = settings
        self._image = image
        self._engine = engine

    @property
    def image(self) -> str:
        if self._image is None:
            self._image = sandbox_image()
        return self._image

    @property
    def engine(self) -> ToolchainBackend:
        if self._engine is None:
            self._engine = detect_engine()
        return self._engine

    @property
    def isolation(self) -> Isolation:
        return Isolation(interpreter=f"python in {self.image}", mode=LaunchMode.CONTAINER,
                         network_namespace=True, pid_namespace=True, separate_uid=True,
                         notes=("--network none, --ipc none, read-only root, --user 65534, --cap-drop ALL",),
                         ipc_namespace=True, private_root=True, memory_cgroup="container")

    def run(self, program: str, timeout: float) -> ExecResult:
        s, engine = self.settings, self.engine
        tmp = tempfile.mkdtemp(prefix="bs-sbx-")
        name = f"bs-sbx-{uuid.uuid4().hex[:16]}"
        try:
            path = Path(tmp) / "program.py"
            path.write_text(program, encoding="utf-8")
            os.chmod(tmp, 0o755)
            os.chmod(path, 0o644)
            spec = ContainerSpec(
                # no workdir: docker creates a workdir that is a tmpfs mount point 0755 root, whatever its mode=
                engine=engine, image=self.image, mounts=(Mount(tmp, "/sandbox/src"),),
                memory=f"{s.memory_mb}m", pids=s.max_processes,
                extra_args=(
                    "--name", name, "--user", "65534:65534", "--read-only", "--cap-drop", "ALL", "--ipc", "none",
                    # the engine's init is pid 1, not the program: the kernel ignores a signal a pid 1 sends
                    # itself (a self-SIGKILL would exit 0) and orphans need a reaper
                    "--init",
                    "--tmpfs", f"{_WORK}:rw,size={s.file_size_mb}m,mode=1777",
                    "--tmpfs", "/tmp:rw,size=16m,mode=1777",
                    "--ulimit", f"cpu={cpu_seconds(timeout)}",
                    "--ulimit", f"fsize={s.file_size_mb * MIB}",
                    "--ulimit", f"nofile={s.open_files}",
                    "--ulimit", "core=0",
                ),
            )
            env = {k: v for k, v in child_env(_WORK).items() if k != "PATH"}
            res = runner.run(
                ["sh", "-c", f"cd {_WORK} && exec python -s -B /sandbox/src/program.py"], env=env, timeout=timeout,
                output_cap=s.output_cap, container=spec, kill_on_output_cap=True,
                # killing the engine client does not stop the container; remove it by name
                after_exit=lambda: runner.run([engine.value, "rm", "-f", name], timeout=60, output_cap=4096),
            )
            return verdict_of(res, oom_on_sigkill=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def close(self) -> None:
        pass  # each container is removed after its run
