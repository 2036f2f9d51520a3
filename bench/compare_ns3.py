#!/usr/bin/env python3
"""Runs the example scenarios in hetpath and in ns-3 with matched settings and prints
per-flow goodput (mean and 95% CI over seeds) and wall time side by side.

    python bench/compare_ns3.py [--scenarios geo-clean geo-loss dumbbell] [--seeds 5]
        [--ns3-python /work/ns3-venv/bin/python] [--json out.json]

The ns-3 side is bench/ns3/scenarios.py (see bench/ns3/README.md for installing ns-3);
the hetpath side is `hetpath run scenarios/examples/NAME.toml --json`. Results are
written up in docs/validation.md and docs/performance.md.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}


def run_json(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def hetpath(name: str, seed: int) -> dict:
    exe = ROOT / ".venv" / "bin" / "hetpath"
    return run_json([str(exe), "run", str(ROOT / "scenarios" / "examples" / f"{name}.toml"), "--json", "--seed", str(seed)])


def ns3(name: str, seed: int, python: str) -> dict:
    return run_json([python, str(ROOT / "bench" / "ns3" / "scenarios.py"), name, "--seed", str(seed), "--json"])


def mean_ci(xs: list[float]) -> tuple[float, float]:
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, T95.get(len(xs) - 1, 1.96) * statistics.stdev(xs) / math.sqrt(len(xs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", nargs="+", default=["geo-clean", "geo-loss", "dumbbell"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--ns3-python", default="/work/ns3-venv/bin/python")
    ap.add_argument("--json", type=Path, help="also write all raw results here")
    a = ap.parse_args()
    raw = {}
    for name in a.scenarios:
        runs = {"hetpath": [], "ns-3": []}
        for seed in range(1, a.seeds + 1):
            runs["hetpath"].append(hetpath(name, seed))
            runs["ns-3"].append(ns3(name, seed, a.ns3_python))
            print(f"  {name} seed {seed} done", file=sys.stderr)
        raw[name] = runs
        print(f"\n## {name} ({a.seeds} seeds; goodput in Mbit/s, mean ± 95% CI)\n")
        print(f"| flow | cc | hetpath | ns-3 | ratio |")
        print(f"|---|---|---|---|---|")
        for i, f in enumerate(runs["hetpath"][0]["flows"]):
            h = mean_ci([r["flows"][i]["goodput_bps"] / 1e6 for r in runs["hetpath"]])
            match = [r for r in runs["ns-3"][0]["flows"] if r["name"] == f["name"]]
            if not match:
                print(f"| {f['name']} | {f['cc']} | {h[0]:.3f} ± {h[1]:.3f} | (not in ns-3) | |")
                continue
            j = runs["ns-3"][0]["flows"].index(match[0])
            n = mean_ci([r["flows"][j]["goodput_bps"] / 1e6 for r in runs["ns-3"]])
            ratio = h[0] / n[0] if n[0] else float("nan")
            print(f"| {f['name']} | {f['cc']} | {h[0]:.3f} ± {h[1]:.3f} | {n[0]:.3f} ± {n[1]:.3f} | {ratio:.2f} |")
        hw = statistics.fmean(r["wall_time_s"] for r in runs["hetpath"])
        nw = statistics.fmean(r["wall_time_s"] for r in runs["ns-3"])
        he = statistics.fmean(r["events"] for r in runs["hetpath"])
        ne = [r.get("events") for r in runs["ns-3"] if r.get("events")]
        ev = f", ns-3 {statistics.fmean(ne):,.0f} events" if ne else ""
        print(f"\nwall time: hetpath {hw:.3f} s ({he:,.0f} events), ns-3 {nw:.2f} s{ev}; speed-up {nw / hw:.0f}x")
    if a.json:
        a.json.write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
