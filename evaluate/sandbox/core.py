"""The ``Sandbox``: runs complete programs through one of its backends (``backends``: the probed local launch mode
or the container image), in a pool of worker threads."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

from benchsmith.evaluate.sandbox.backends import (Backend, ContainerBackend, RunSettings, detect_engine, local_backend,
                                                  sandbox_image)
from benchsmith.evaluate.sandbox.limits import default_hidden_paths
from benchsmith.evaluate.sandbox.probe import probe_isolation
from benchsmith.evaluate.sandbox.records import (ExecResult, Isolation, LaunchMode, SandboxBackend, SandboxUnavailable,
                                                 Verdict)
# the container engine is one of the toolchain backends of benchsmith.runner (docker, podman)
from benchsmith.runner import ToolchainBackend


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
        isolation: Isolation | None = None,
    ) -> None:
        self.backend = SandboxBackend(backend)
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if isolation is not None and (self.backend is SandboxBackend.CONTAINER
                                      or isolation.mode is LaunchMode.CONTAINER):
            raise ValueError("isolation= picks a local launch mode (probe.probe_mode); use backend='container'")
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
        self.forkserver = forkserver
        # never readable from inside (fork server): ours by default, plus the caller's inputs and outputs
        self.hide = tuple(default_hidden_paths()) + tuple(str(Path(h).resolve()) for h in hide)
        # given: a launch mode the caller probed (probe_mode); else the strongest one, probed on first use
        self._isolation: Isolation | None = isolation
        self._backend: Backend | None = None
        if self.backend is SandboxBackend.CONTAINER:
            self._backend = ContainerBackend(self._settings(), image, ToolchainBackend(engine) if engine else None)
        self._backend_lock = threading.Lock()

    def _settings(self) -> RunSettings:
        return RunSettings(memory_mb=self.memory_mb, max_processes=self.max_processes, output_cap=self.output_cap,
                           stderr_keep=self.stderr_keep, file_size_mb=self.file_size_mb, scratch_mb=self.scratch_mb,
                           open_files=self.open_files, hide=self.hide)

    def backend_impl(self) -> Backend:
        """The backend that runs this sandbox's programs (a local one is made for the isolation in force)."""
        if isinstance(self._backend, ContainerBackend):
            return self._backend
        iso = self.isolation
        with self._backend_lock:
            if self._backend is None or self._backend.isolation != iso:
                if self._backend is not None:
                    self._backend.close()
                self._backend = local_backend(self._settings(), iso)
            return self._backend

    def close(self) -> None:
        """Stop the fork servers (they also stop by themselves when this process exits)."""
        if self._backend is not None:
            self._backend.close()

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
        if isinstance(self._backend, ContainerBackend):
            return self._backend.isolation
        if self._isolation is None:
            self._isolation = probe_isolation(self.python, self.forkserver)
        return self._isolation

    @property
    def image(self) -> str:
        return self._backend.image if isinstance(self._backend, ContainerBackend) else sandbox_image()

    @property
    def engine(self) -> ToolchainBackend:
        return self._backend.engine if isinstance(self._backend, ContainerBackend) else detect_engine()

    # -- running -----------------------------------------------------------------------------------------------
    def run(self, program: str, timeout: float | None = None) -> ExecResult:
        timeout = self.timeout if timeout is None else float(timeout)
        start = time.monotonic()
        try:
            return self._kept(self.backend_impl().run(program, timeout))
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
