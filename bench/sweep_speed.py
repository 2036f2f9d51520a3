"""Wall time of planning and running the tcp-radio grid (14,000 runs) with 1 and with
all workers; used for docs/performance.md.

    .venv/bin/python bench/sweep_speed.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from hetpath import sweep
from hetpath.backends import LocalBackend


def main() -> None:
    t0 = time.perf_counter()
    spec = sweep.load(Path(__file__).resolve().parents[1] / "scenarios" / "tcp-radio" / "sweep.toml")
    tasks = sweep.plan(spec)
    print(f"plan: {len(tasks)} runs in {time.perf_counter() - t0:.2f} s")
    for jobs in sorted({1, os.cpu_count() or 1}):
        t0 = time.perf_counter()
        sweep.run(tasks, LocalBackend(jobs))
        dt = time.perf_counter() - t0
        print(f"run with {jobs} worker(s): {dt:.2f} s, {len(tasks) / dt:,.0f} runs/s")


if __name__ == "__main__":
    main()
