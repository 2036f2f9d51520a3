"""Wall time of planning and running the tcp-radio grid (14,000 runs; fewer with
--seeds) with 1 and with all local workers, and on a local Dask cluster of as many
worker processes (``DaskBackend``, if ``hetpath[cluster]`` is installed); used for
docs/performance.md.

    .venv/bin/python bench/sweep_speed.py [--seeds N] [--repeat R]

Each figure is the best of R runs; the Dask cluster's start is timed on its own, and the
runs reuse it (``with DaskBackend(...)``), as a sweep on a standing cluster would.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable

from hetpath import sweep
from hetpath.backends import LocalBackend, cpu_count


def best_of(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds per point (default: the file's 20)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; the best is printed")
    args = parser.parse_args()

    t0 = time.perf_counter()
    spec = sweep.load(Path(__file__).resolve().parents[1] / "scenarios" / "tcp-radio" / "sweep.toml")
    if args.seeds is not None:
        spec.seeds = list(range(1, args.seeds + 1))
    tasks = sweep.plan(spec)
    print(f"plan: {len(tasks)} runs in {time.perf_counter() - t0:.2f} s")
    cores = cpu_count()
    for jobs in sorted({1, cores}):
        dt = best_of(args.repeat, lambda jobs=jobs: sweep.run(tasks, LocalBackend(jobs)))
        print(f"local, {jobs} worker(s): {dt:.2f} s, {len(tasks) / dt:,.0f} runs/s")
    try:
        from hetpath.backends_dask import DaskBackend

        import distributed  # noqa: F401
    except ImportError:
        print("dask: not installed (pip install 'hetpath[cluster]')")
        return
    t0 = time.perf_counter()
    with DaskBackend(workers=cores) as backend:
        started = time.perf_counter() - t0
        dt = best_of(args.repeat, lambda: sweep.run(tasks, backend))
    print(f"dask local cluster, {cores} worker(s): start {started:.2f} s; {dt:.2f} s, {len(tasks) / dt:,.0f} runs/s")


if __name__ == "__main__":
    main()
