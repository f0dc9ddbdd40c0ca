"""The ``Sandbox``: runs complete programs under the probed local mode or in the container image, in a pool of
worker threads."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

from benchsmith import runner
from benchsmith.evaluate.sandbox.forkserver import ZygoteDied, ZygotePool, child_env, zygote_request
from benchsmith.evaluate.sandbox.launch import ChildPlan, launch_command
from benchsmith.evaluate.sandbox.limits import memory_cgroups, default_hidden_paths
from benchsmith.evaluate.sandbox.probe import probe_isolation
from benchsmith.evaluate.sandbox.records import (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER, MIB, ExecResult, Isolation,
                                                 LaunchMode, SandboxBackend, SandboxUnavailable, Verdict)
from benchsmith.evaluate.sandbox.uids import UidLease, kill_uid
from benchsmith.evaluate.sandbox.verdicts import verdict_of
# the container engine is one of the toolchain backends of benchsmith.runner (docker, podman)
from benchsmith.runner import ToolchainBackend
from benchsmith.runner import ContainerSpec, Limits, Mount


def _detect_engine() -> ToolchainBackend:
    # the one engine detection (benchsmith.containers): an engine counts only when its daemon answers
    from benchsmith.containers import detect_engine

    engine = detect_engine()
    if engine is None:
        raise SandboxUnavailable("the container backend needs docker or podman whose daemon answers "
                                 "(`docker info` / `podman info`)")
    return engine


class Sandbox:
    """Run complete Python programs hardened; ``run_many`` uses a pool of worker threads."""

    def __init__(
        self,
        backend: str | SandboxBackend = "local",
        timeout: float = 10.0,
        memory_mb: int = 1024,
        max_processes: int = 64,
        output_cap: int = 64 * 1024,
        workers: int | None = None,
        *,
        file_size_mb: int = 16,
        scratch_mb: int = 64,
        open_files: int = 256,
        python: str | None = None,
        image: str | None = None,
        engine: str | None = None,
        forkserver: bool = True,
        hide: Sequence[str | os.PathLike] = (),
        stderr_keep: int | None = None,
    ) -> None:
        self.backend = SandboxBackend(backend)
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.timeout = float(timeout)
        self.memory_mb = int(memory_mb)
        self.max_processes = int(max_processes)
        self.output_cap = int(output_cap)
        # bytes of stderr kept per run (its tail: where the verdict's evidence is); the rest still counts
        # towards output_cap.  None: as much as output_cap lets through
        self.stderr_keep = None if stderr_keep is None else max(0, int(stderr_keep))
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self.file_size_mb = int(file_size_mb)
        self.scratch_mb = int(scratch_mb)
        self.open_files = int(open_files)
        self.python = python
        self._image = image
        self._engine = ToolchainBackend(engine) if engine else None
        self.forkserver = forkserver
        # never readable from inside (fork server): ours by default, plus the caller's inputs and outputs
        self.hide = tuple(default_hidden_paths()) + tuple(str(Path(h).resolve()) for h in hide)
        self._isolation: Isolation | None = None
        self._zygotes: ZygotePool | None = None
        self._zygote_lock = threading.Lock()

    def close(self) -> None:
        """Stop the fork servers (they also stop by themselves when this process exits)."""
        if self._zygotes is not None:
            self._zygotes.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass

    # -- introspection -----------------------------------------------------------------------------------------
    @property
    def isolation(self) -> Isolation:
        if self.backend is SandboxBackend.CONTAINER:
            return Isolation(interpreter=f"python in {self.image}", mode=LaunchMode.CONTAINER,
                             network_namespace=True, pid_namespace=True, separate_uid=True,
                             notes=("--network none, --ipc none, read-only root, --user 65534, --cap-drop ALL",),
                             ipc_namespace=True, private_root=True, memory_cgroup="container")
        if self._isolation is None:
            self._isolation = probe_isolation(self.python, self.forkserver)
        return self._isolation

    @property
    def image(self) -> str:
        if self._image is None:
            from benchsmith.containers import image_tag

            self._image = image_tag("sandbox.Dockerfile")
        return self._image

    @property
    def engine(self) -> ToolchainBackend:
        if self._engine is None:
            self._engine = _detect_engine()
        return self._engine

    # -- running -----------------------------------------------------------------------------------------------
    def run(self, program: str, timeout: float | None = None) -> ExecResult:
        timeout = self.timeout if timeout is None else float(timeout)
        start = time.monotonic()
        try:
            if self.backend is SandboxBackend.CONTAINER:
                return self._kept(self._run_container(program, timeout))
            return self._kept(self._run_local(program, timeout))
        except SandboxUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - one broken run must not lose a batch
            return ExecResult(Verdict.ERROR, None, "", "", time.monotonic() - start,
                              detail=f"sandbox error: {type(exc).__name__}: {exc}")

    def _kept(self, res: ExecResult) -> ExecResult:
        if self.stderr_keep is not None and len(res.stderr) > self.stderr_keep:
            res.stderr = res.stderr[len(res.stderr) - self.stderr_keep:]
        return res

    def run_many(self, programs: Sequence[str], timeout: float | None = None,
                 progress: bool = False, reduce: Callable[[int, ExecResult], Any] | None = None) -> list[Any]:
        """One result per program, in order.  With ``reduce``, each run's result is passed to it (program index,
        result) as soon as the run ends, in the worker's thread, and what it returns is kept instead: a caller
        that needs a verdict, not the output, then holds at most ``workers`` outputs at any time."""
        programs = list(programs)
        if not programs:
            return []
        _ = self.isolation  # probe once, before the threads start
        results: list[Any] = [None] * len(programs)
        ctx = None
        advance: Callable[[], None] | None = None
        if progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            ctx = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), transient=False)
            task = ctx.add_task("executing", total=len(programs))
            lock = threading.Lock()

            def tick() -> None:
                with lock:
                    ctx.advance(task)

            advance = tick
            ctx.start()
        try:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(programs)),
                                    thread_name_prefix="sandbox") as pool:
                def one(i: int) -> None:
                    res = self.run(programs[i], timeout)
                    results[i] = res if reduce is None else reduce(i, res)
                    if advance is not None:
                        advance()

                for fut in [pool.submit(one, i) for i in range(len(programs))]:
                    fut.result()
        finally:
            if ctx is not None:
                ctx.stop()
        return results

    # -- backends ----------------------------------------------------------------------------------------------
    def _limits(self, timeout: float) -> Limits:
        return Limits(
            address_space=self.memory_mb * MIB,
            file_size=self.file_size_mb * MIB,
            # RLIMIT_NPROC counts every process of the uid: meaningful only with a throwaway uid
            processes=self.max_processes if self.isolation.separate_uid else None,
            open_files=self.open_files,
        )

    def _run_forkserver(self, program: str, timeout: float) -> ExecResult:
        iso = self.isolation
        with self._zygote_lock:
            if self._zygotes is None:
                self._zygotes = ZygotePool(iso.interpreter, iso.network_namespace, self.scratch_mb, self.hide,
                                            memory_cgroups() if iso.memory_cgroup else None)
        pool = self._zygotes
        with UidLease() as lease:
            request = zygote_request(lease.uid, self._limits(timeout), max(1, math.ceil(timeout)) + 1,
                                      self.memory_mb * MIB)
            for attempt in (1, 2):  # a fork server that died is replaced once
                zygote = pool.acquire()
                try:
                    res = zygote.run(request, program, timeout, self.output_cap, self.stderr_keep)
                except ZygoteDied as exc:
                    pool.release(zygote, healthy=False)
                    if attempt == 2:
                        return ExecResult(Verdict.ERROR, None, "", "", 0.0, detail=str(exc))
                    continue
                pool.release(zygote, healthy=True)
                return verdict_of(res)
        raise AssertionError("unreachable")  # pragma: no cover

    def _run_local(self, program: str, timeout: float) -> ExecResult:
        iso = self.isolation
        if iso.mode is LaunchMode.ROOT_FORKSERVER:
            return self._run_forkserver(program, timeout)
        tmp = tempfile.mkdtemp(prefix="bs-sbx-")
        lease = UidLease() if iso.separate_uid else None
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
            cgroups = memory_cgroups() if iso.memory_cgroup else None
            if cgroups is not None:
                cgroup = cgroups.child("run")
                cgroups.limit(cgroup, self.memory_mb * MIB)
            plan = ChildPlan(netns_flags=flags, uid=setuid, limits=self._limits(timeout),
                              cpu_seconds=max(1, math.ceil(timeout)) + 1,
                              cgroup_procs=str(cgroup / "cgroup.procs") if cgroup is not None else None)
            kill_after = uid is not None and not iso.pid_namespace
            res = runner.run(
                argv, cwd=tmp, env=child_env(tmp), inherit_env=False, timeout=timeout, output_cap=self.output_cap,
                preexec=plan, kill_on_output_cap=True,
                # without a pid namespace, children that left the process group are found by their uid
                after_exit=(lambda: kill_uid(uid)) if kill_after else None,
            )
            if cgroups is not None and cgroup is not None:
                res.extra["oom"] = cgroups.oom_kills(cgroup)
            return verdict_of(res)
        finally:
            if cgroup is not None:
                memory_cgroups().remove(cgroup)
            if lease is not None:
                lease.__exit__(None, None, None)
            shutil.rmtree(tmp, ignore_errors=True)

    def _run_container(self, program: str, timeout: float) -> ExecResult:
        engine = self.engine
        tmp = tempfile.mkdtemp(prefix="bs-sbx-")
        name = f"bs-sbx-{uuid.uuid4().hex[:16]}"
        try:
            path = Path(tmp) / "program.py"
            path.write_text(program, encoding="utf-8")
            os.chmod(tmp, 0o755)
            os.chmod(path, 0o644)
            spec = ContainerSpec(
                engine=engine, image=self.image, mounts=(Mount(tmp, "/sandbox/src"),), workdir="/sandbox/work",
                memory=f"{self.memory_mb}m", pids=self.max_processes,
                extra_args=(
                    "--name", name, "--user", "65534:65534", "--read-only", "--cap-drop", "ALL", "--ipc", "none",
                    "--tmpfs", f"/sandbox/work:rw,size={self.file_size_mb}m,mode=1777",
                    "--tmpfs", "/tmp:rw,size=16m,mode=1777",
                    "--ulimit", f"cpu={max(1, math.ceil(timeout)) + 1}",
                    "--ulimit", f"fsize={self.file_size_mb * MIB}",
                    "--ulimit", f"nofile={self.open_files}",
                    "--ulimit", "core=0",
                ),
            )
            env = {k: v for k, v in child_env("/sandbox/work").items() if k != "PATH"}
            res = runner.run(
                ["python", "-s", "-B", "/sandbox/src/program.py"], env=env, timeout=timeout,
                output_cap=self.output_cap, container=spec, kill_on_output_cap=True,
                # killing the engine client does not stop the container; remove it by name
                after_exit=lambda: runner.run([engine.value, "rm", "-f", name], timeout=60, output_cap=4096),
            )
            return verdict_of(res, oom_on_sigkill=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
