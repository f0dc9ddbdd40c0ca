"""Executors for per-repository tasks: inline, a local process pool, or a Ray cluster.

Tasks are independent and write their own shard; executors only schedule them, so the output is the same
whichever executor ran it.  Results come back as they complete; callers never depend on completion order.

Survival rules, the same for every executor:
- At most a window of tasks is in flight (about one per worker), so memory does not grow with the number of
  tasks and a crash can only involve the tasks that were running.
- A task whose worker dies (OOM killer, a segfault in a native extension) does not end the run.  A local pool
  that breaks is replaced; the tasks that were in flight are rerun one at a time in a pool of their own, so the
  one that kills its worker again is identified and handed to ``on_error`` while the others finish normally.
- Workers die with the parent (``PR_SET_PDEATHSIG``): a build killed with SIGKILL leaves no worker behind that
  could race a rerun for the same shard.
"""

from __future__ import annotations

import collections
import os
import signal
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterable, Iterator, TypeVar
from benchsmith.enums import StrEnum

T = TypeVar("T")
R = TypeVar("R")

ErrorHandler = Callable[[T, BaseException], R]


class ExecutorKind(StrEnum):
    LOCAL = "local"
    RAY = "ray"


class WorkerDied(RuntimeError):
    """The process running a task exited without returning a result (killed, crashed, out of memory)."""


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def run_tasks(fn: Callable[[T], R], tasks: Iterable[T], *, workers: int | None = None,
              kind: ExecutorKind = ExecutorKind.LOCAL, ray_address: str | None = None,
              on_error: ErrorHandler | None = None) -> Iterator[tuple[T, R]]:
    """Run ``fn`` on every task; yield ``(task, result)`` as tasks finish.

    ``on_error(task, exc)`` turns a task that produced no result (an exception escaped ``fn``, its worker died)
    into a result; without it the first such error is raised once the in-flight tasks are cancelled.
    ``fn`` and the tasks must be picklable (module-level function, dataclass tasks) for the pool and Ray.
    """
    tasks = list(tasks)
    kind = ExecutorKind(kind)
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    workers = workers or default_workers()
    if kind is ExecutorKind.RAY:
        yield from _run_ray(fn, tasks, workers, ray_address, on_error)
    elif workers <= 1 or len(tasks) <= 1:
        yield from _run_inline(fn, tasks, on_error)
    else:
        yield from _run_pool(fn, tasks, workers, on_error)


def _failed(task, exc: BaseException, on_error: ErrorHandler | None):
    if on_error is None:
        raise exc
    return on_error(task, exc)


def _run_inline(fn, tasks, on_error):
    for t in tasks:
        try:
            result = fn(t)
        except Exception as exc:  # noqa: BLE001 - handed to on_error, which records it
            result = _failed(t, exc, on_error)
        yield t, result


def _die_with_parent(parent: int) -> None:
    """Pool worker initializer: ask the kernel to SIGKILL this worker when the build process dies."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux: orphans finish their task and exit
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _new_pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing as mp

    # spawn: a forked child would inherit the parent's threads (progress display) and their locks.
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                               initializer=_die_with_parent, initargs=(os.getpid(),))


def _run_pool(fn, tasks, workers, on_error):
    todo = collections.deque(tasks)
    suspects: collections.deque = collections.deque()  # in flight when a pool broke
    while todo or suspects:
        if suspects:
            # Alone in its own pool, a task that kills its worker again is the culprit, and only it fails.
            task = suspects.popleft()
            yield task, _run_isolated(fn, task, on_error)
            continue
        pool = _new_pool(min(workers, len(todo)))
        broken = False
        try:
            pending: dict = {}
            while pending or (todo and not broken):
                while todo and not broken and len(pending) < workers:
                    task = todo.popleft()
                    try:
                        pending[pool.submit(fn, task)] = task
                    except BrokenProcessPool:
                        todo.appendleft(task)
                        broken = True
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    task = pending.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        suspects.append(task)
                        continue
                    except Exception as exc:  # noqa: BLE001 - raised inside fn, re-raised here by the pool
                        result = _failed(task, exc, on_error)
                    yield task, result
        finally:
            # On an interrupt or an early close, queued tasks are dropped; a broken pool has no one to wait for.
            pool.shutdown(wait=not broken, cancel_futures=True)


def _run_isolated(fn, task, on_error):
    pool = _new_pool(1)
    broken = False
    try:
        try:
            return pool.submit(fn, task).result()
        except BrokenProcessPool:
            broken = True
            return _failed(task, WorkerDied("the worker process died while running this task (killed, crashed "
                                            "or out of memory); it was retried alone and died again"), on_error)
        except Exception as exc:  # noqa: BLE001
            return _failed(task, exc, on_error)
    finally:
        pool.shutdown(wait=not broken, cancel_futures=True)


def _run_ray(fn, tasks, workers, address, on_error):
    try:
        import ray
    except ImportError:
        raise SystemExit("the Ray executor needs ray: pip install 'benchsmith[ray]' (or pip install ray)") from None
    started_here = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, logging_level="ERROR")
        else:
            ray.init(num_cpus=workers, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR")
        started_here = True
    refs: dict = {}
    try:
        # A window of about two tasks per cluster CPU keeps every CPU busy without holding every task's
        # arguments and results in the object store at once.
        cpus = int(ray.cluster_resources().get("CPU", workers)) or workers
        window = max(2, 2 * cpus)
        # One retry for a worker that died (node lost, OOM); exceptions inside fn are not retried.
        remote = ray.remote(num_cpus=1, max_retries=1)(fn)
        todo = collections.deque(tasks)
        while todo or refs:
            while todo and len(refs) < window:
                task = todo.popleft()
                refs[remote.remote(task)] = task
            done, _ = ray.wait(list(refs), num_returns=1)
            for ref in done:
                task = refs.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    result = _failed(task, cause if isinstance(cause, Exception) else exc, on_error)
                except ray.exceptions.RayError as exc:  # worker or node died, object lost
                    result = _failed(task, WorkerDied(f"the Ray worker running this task died: {exc}"), on_error)
                yield task, result
    finally:
        for ref in refs:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - best effort: the task may have finished meanwhile
                pass
        if started_here:
            ray.shutdown()
