"""Where sweep runs execute.  A backend takes picklable tasks and a function and
reports each result as it arrives; it knows nothing about scenarios.

:class:`LocalBackend` uses worker processes on this machine.  A distributed backend
(a batch queue, a cluster) implements the same :class:`Backend` protocol: tasks carry
the full scenario text and seed, so a remote worker needs only ``hetpath`` installed.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Optional, Protocol, Sequence, TypeVar

from . import _bridge
from ._args import integer
from ._worker_lifetime import die_with_parent
from .errors import ScenarioError, SimulationError

T = TypeVar("T")
R = TypeVar("R")


class Backend(Protocol):
    def run(self, fn: Callable[[T], R], tasks: Sequence[T], on_result: Callable[[int, R], None]) -> None:
        """Call ``fn`` on every task, anywhere, in any order; call ``on_result(index,
        result)`` in this process as each finishes.  An exception from ``fn`` propagates."""
        ...


def run_in_order(
    backend: Backend,
    fn: Callable[[T], R],
    tasks: Sequence[T],
    on_progress: Optional[Callable[[int, int], None]] = None,
    on_result: Optional[Callable[[int, R], None]] = None,
) -> list[R]:
    """``backend.run`` with the results back in task order, reporting (done, total) to
    ``on_progress`` and each result to ``on_result(index, result)`` as it arrives."""
    results: list[Any] = [None] * len(tasks)
    done = 0

    def collect(i: int, result: R) -> None:
        nonlocal done
        results[i] = result
        done += 1
        if on_result:
            on_result(i, result)
        if on_progress:
            on_progress(done, len(tasks))

    backend.run(fn, tasks, collect)
    return results


def cpu_count() -> int:
    """Cores this process may use (its CPU affinity where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _worker_init(parent: Optional[int]) -> None:
    """Workers ignore Ctrl-C: the terminal sends it to the whole process group, and the
    parent decides (it stops them and keeps what finished). SIGTERM ends a worker at once
    and quietly: a fork inherits the parent's handlers, and the command line's (which
    raises :class:`~hetpath.errors.Terminated`) would print a traceback from the worker.
    A worker dies with its parent (``parent``: the pid that forked it, or None)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now, running tasks included: ``shutdown`` alone waits for them,
    and a run that never ends would never let the sweep stop. SIGKILL, not SIGTERM: a
    worker holds nothing to save, and one not yet through :func:`_worker_init` would
    still run the parent's SIGTERM handler (a traceback on stderr)."""
    for proc in list(getattr(pool, "_processes", {}).values()):
        with contextlib.suppress(Exception):
            proc.kill()
    for proc in list(getattr(pool, "_processes", {}).values()):
        with contextlib.suppress(Exception):
            proc.join(5)
    pool.shutdown(wait=True, cancel_futures=True)


def run_batch(fn: Callable[[T], R], batch: list[tuple[int, T]]) -> list[tuple[int, R]]:
    """What a worker runs: ``fn`` on each task of a batch, results tagged by index."""
    return [(i, fn(t)) for i, t in batch]


class GuidedBatches:
    """The tasks of a sweep in batches for ``workers`` workers, for any backend.

    Batches, because runs can take milliseconds and one task per message would spend
    more time pickling than simulating; sized from what is left (guided scheduling), so
    the last ones are single tasks and no worker idles long at the end. Tasks go out in
    an order that spreads neighbours apart: neighbouring tasks are often the same grid
    point, and a batch of the slowest one alone would be a long tail. (Results go to
    ``on_result`` by index, so the order changes nothing else.)"""

    def __init__(self, tasks: Sequence[T], workers: int, largest: int = 32) -> None:
        spread = max(1, math.isqrt(len(tasks)))
        self._todo = [(k, tasks[k]) for r in range(spread) for k in range(r, len(tasks), spread)]
        self._todo.reverse()  # taken from the end
        self.workers = workers
        self.largest = largest

    def __bool__(self) -> bool:
        return bool(self._todo)

    def __len__(self) -> int:
        return len(self._todo)

    def take(self) -> list[tuple[int, T]]:
        """The next batch: ``(index, task)`` pairs, at least one while any is left."""
        size = max(1, min(self.largest, len(self._todo) // (self.workers * 4)))
        return [self._todo.pop() for _ in range(size)]


#: Seconds between two looks for a Ctrl-C while a sweep waits for its workers.
_POLL_S = 0.25


class LocalBackend:
    """Worker processes on this machine; ``jobs`` defaults to every core.  With one job
    the tasks run in this process (no pickling, plain tracebacks)."""

    def __init__(self, jobs: Optional[int] = None) -> None:
        cores = cpu_count()
        if jobs is not None:
            try:
                jobs = integer(jobs, "jobs", 1, cores)
            except ScenarioError as exc:
                raise ScenarioError(f"{exc} (the cores of this machine)") from None
        self.jobs = jobs or cores

    def run(self, fn: Callable[[T], R], tasks: Sequence[T], on_result: Callable[[int, R], None]) -> None:
        if self.jobs == 1 or len(tasks) <= 1:
            for i, t in enumerate(tasks):
                on_result(i, fn(t))
            return
        batches = GuidedBatches(tasks, self.jobs)
        in_flight = 2 * self.jobs
        # Workers die with this process (_worker_init). PR_SET_PDEATHSIG fires when the
        # *thread* that forked a worker ends, not its process: ProcessPoolExecutor forks
        # from the thread that calls submit() (all workers at the first submit under fork,
        # on demand under spawn), and from its manager thread only to replace a worker
        # retired by max_tasks_per_child, which is not set here. Every submit is below, in
        # the caller's thread, which stays in this method until the pool is shut down; so
        # no worker outlives its forking thread, and a sweep run from any thread of a
        # program is not cut short. Under forkserver the forkserver is the workers' parent
        # (it ends with this process), so there is no parent pid to check.
        context = multiprocessing.get_context()
        parent = None if context.get_start_method() == "forkserver" else os.getpid()
        pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=context, initializer=_worker_init,
                                   initargs=(parent,))
        pending: set[Future[list[tuple[int, R]]]] = set()
        interrupts = _bridge.interrupts
        try:
            while batches or pending:
                while batches and len(pending) < in_flight:
                    pending.add(pool.submit(run_batch, fn, batches.take()))
                # Ctrl-C reaches the main thread alone; a sweep waiting in another thread
                # learns of it here (the package's SIGINT handler counts presses).
                done, pending = wait(pending, timeout=_POLL_S, return_when=FIRST_COMPLETED)
                if _bridge.interrupts != interrupts:
                    raise KeyboardInterrupt
                for fut in done:
                    for i, r in fut.result():
                        on_result(i, r)
        except BrokenProcessPool:
            # Raised by a result, or by submit() when a worker died before the batches
            # were all out (which one notices first depends on the timing).
            _stop(pool)
            raise SimulationError("a worker process died (killed, or out of memory); "
                                  "the runs that finished were kept") from None
        except BaseException:
            # Interrupted, or a run failed: what finished was reported; stop the rest.
            _stop(pool)
            raise
        pool.shutdown(wait=True)
