"""Wall time of planning and running the tcp-radio grid (14,000 runs; fewer with
--seeds) with 1 and with all local workers, and on a local Dask cluster of as many
worker processes (``DaskBackend``, if ``hetpath[cluster]`` is installed); used for
docs/performance.md.

    .venv/bin/python bench/sweep_speed.py [--seeds N] [--repeat R] [--store]

Each figure is the best of R runs; the Dask cluster's start is timed on its own, and the
runs reuse it (``with DaskBackend(...)``), as a sweep on a standing cluster would.

``--store`` instead runs the grid once on all local workers with a results store (in a
temporary directory), then times the digests of its real lines on their own: computing
them as the lines are written and verifying them as ``--resume`` reads them (best of 5),
as a share of the sweep's wall time. The share does not depend on the number of runs,
so a noisy shared machine can measure it with ``--seeds`` fewer.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path
from typing import Callable

from hetpath import sweep
from hetpath.backends import LocalBackend, cpu_count
from hetpath.store import ResultsStore, digest_matches


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
    parser.add_argument("--store", action="store_true", help="the cost of the results store's digests instead")
    args = parser.parse_args()

    t0 = time.perf_counter()
    spec = sweep.load(Path(__file__).resolve().parents[1] / "scenarios" / "tcp-radio" / "sweep.toml")
    if args.seeds is not None:
        spec.seeds = list(range(1, args.seeds + 1))
    tasks = sweep.plan(spec)
    print(f"plan: {len(tasks)} runs in {time.perf_counter() - t0:.2f} s")
    cores = cpu_count()
    if args.store:
        store_cost(tasks, cores)
        return
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


def store_cost(tasks: list, jobs: int) -> None:
    """The sweep's wall time with a results store, and its digests' own cost."""
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "results.jsonl")
        t0 = time.perf_counter()
        sweep.run(tasks, LocalBackend(jobs), store=store)
        wall = time.perf_counter() - t0
        store.close()
        lines = store.path.read_bytes().splitlines()
        t0 = time.perf_counter()
        ResultsStore(store.path).load()
        load = time.perf_counter() - t0
    bodies = [line[: line.rindex(b', "digest"')] + b"}" for line in lines]
    write = best_of(5, lambda: [hashlib.sha256(b).hexdigest() for b in bodies])
    verify = best_of(5, lambda: [digest_matches(line) for line in lines])
    size = sum(map(len, lines)) + len(lines)
    print(f"sweep with a store, {jobs} worker(s): {len(tasks)} runs in {wall:.2f} s; store {size / 1e6:.1f} MB, "
          f"{size / len(lines):.0f} bytes per run")
    print(f"digests: computing {write * 1e3:.1f} ms, verifying {verify * 1e3:.1f} ms "
          f"({(write + verify) / len(lines) * 1e6:.2f} us per run): {100 * (write + verify) / wall:.2f}% of the sweep; "
          f"reading and verifying the whole store (--resume): {load * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
