"""Executors for per-repository tasks: inline, a local process pool, or a Ray cluster.

Tasks are independent and write their own shard; executors only schedule them, so the output is the same
whichever executor ran it.  Results come back as they complete; callers never depend on completion order.
"""

from __future__ import annotations

import enum
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class ExecutorKind(str, enum.Enum):
    LOCAL = "local"
    RAY = "ray"

    def __str__(self) -> str:
        return self.value


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def run_tasks(fn: Callable[[T], R], tasks: Iterable[T], *, workers: int | None = None,
              kind: ExecutorKind = ExecutorKind.LOCAL, ray_address: str | None = None) -> Iterator[tuple[T, R]]:
    tasks = list(tasks)
    workers = workers or default_workers()
    if kind is ExecutorKind.RAY:
        yield from _run_ray(fn, tasks, workers, ray_address)
    elif workers <= 1 or len(tasks) <= 1:
        for t in tasks:
            yield t, fn(t)
    else:
        yield from _run_pool(fn, tasks, workers)


def _run_pool(fn, tasks, workers):
    import multiprocessing as mp

    # spawn: a forked child would inherit the parent's threads (progress display) and their locks.
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=mp.get_context("spawn")) as pool:
        pending = {pool.submit(fn, t): t for t in tasks}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                task = pending.pop(fut)
                yield task, fut.result()


def _run_ray(fn, tasks, workers, address):
    try:
        import ray
    except ImportError:
        raise SystemExit("the Ray executor needs ray: pip install 'benchsmith[ray]' (or pip install ray)") from None
    started_here = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
        started_here = True
    try:
        remote = ray.remote(num_cpus=1)(fn)
        refs = {remote.remote(t): t for t in tasks}
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            for ref in done:
                task = refs.pop(ref)
                yield task, ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()
