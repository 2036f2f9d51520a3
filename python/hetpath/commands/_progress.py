"""A progress bar on stderr that appears only for runs that take a while.

The bridge calls the callback at most every 50 ms of wall time while the engine
runs (the engine offers a call every 1% of simulated time and every 4096 events).
The callback is passed even when no bar is shown: each call runs Python code, which is where
a pending Ctrl-C turns into KeyboardInterrupt and stops the run.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, Optional

# Runs shorter than this finish without a bar, so quick runs print nothing extra.
SHOW_AFTER_S = 1.0


class RunProgress:
    """Callable ``progress(sim_s, end_s)`` that lazily starts a rich progress bar."""

    def __init__(self, enabled: bool, label: str = "simulating") -> None:
        self._enabled = enabled and sys.stderr.isatty()
        self._label = label
        self._started = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> "RunProgress":
        self._started = time.monotonic()
        return self

    def __call__(self, sim_s: float, end_s: float) -> None:
        if not self._enabled:
            return
        if self._bar is None:
            if time.monotonic() - self._started < SHOW_AFTER_S:
                return
            self._start(end_s)
        self._bar.update(self._task, completed=sim_s, total=end_s, sim=f"{sim_s:.1f}/{end_s:.1f} s sim")

    def _start(self, end_s: float) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[sim]}"),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task(self._label, total=end_s, sim="")

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class TaskProgress:
    """Callable ``progress(done, total)`` for many runs: a bar with a count and an ETA
    on stderr when it is a terminal, else a line every 10%."""

    def __init__(self, enabled: bool, label: str = "runs") -> None:
        self._enabled = enabled
        self._tty = sys.stderr.isatty()
        self._label = label
        self._bar: Any = None
        self._task: Any = None
        self._next_line = 0.1

    def __enter__(self) -> "TaskProgress":
        return self

    def __call__(self, done: int, total: int) -> None:
        if not self._enabled:
            return
        if not self._tty:
            if done >= total * self._next_line or done == total:
                print(f"{self._label}: {done}/{total}", file=sys.stderr, flush=True)
                self._next_line = (done / total) + 0.1
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self._label, total=total)
        self._bar.update(self._task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
