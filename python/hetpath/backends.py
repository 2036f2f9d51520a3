"""Where sweep runs execute.  A backend takes picklable tasks and a function and
reports each result as it arrives; it knows nothing about scenarios.

:class:`LocalBackend` uses worker processes on this machine.  A distributed backend
(a batch queue, a cluster) implements the same :class:`Backend` protocol: tasks carry
the full scenario text and seed, so a remote worker needs only ``hetpath`` installed.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Callable, Protocol, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Backend(Protocol):
    def run(self, fn: Callable[[T], R], tasks: Sequence[T], on_result: Callable[[int, R], None]) -> None:
        """Call ``fn`` on every task, anywhere, in any order; call ``on_result(index,
        result)`` in this process as each finishes.  An exception from ``fn`` propagates."""
        ...


def _run_batch(fn: Callable[[T], R], batch: list[tuple[int, T]]) -> list[tuple[int, R]]:
    return [(i, fn(t)) for i, t in batch]


class LocalBackend:
    """Worker processes on this machine; ``jobs`` defaults to every core.  With one job
    the tasks run in this process (no pickling, plain tracebacks)."""

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 1)

    def run(self, fn: Callable[[T], R], tasks: Sequence[T], on_result: Callable[[int, R], None]) -> None:
        if self.jobs == 1 or len(tasks) <= 1:
            for i, t in enumerate(tasks):
                on_result(i, fn(t))
            return
        # Small batches: runs take milliseconds, so one task per message would spend more
        # time pickling than simulating; many batches per worker keep the load balanced.
        size = max(1, min(32, len(tasks) // (self.jobs * 8)))
        indexed = list(enumerate(tasks))
        batches = [indexed[k : k + size] for k in range(0, len(indexed), size)]
        with ProcessPoolExecutor(max_workers=self.jobs) as pool:
            pending: set[Future[list[tuple[int, R]]]] = {pool.submit(_run_batch, fn, b) for b in batches}
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        for i, r in fut.result():
                            on_result(i, r)
            except BaseException:
                for fut in pending:
                    fut.cancel()
                raise
