"""Build time and peak memory of a scenario against its number of flows and nodes (issue
17): dumbbells of N flows (2N + 2 nodes) and binary trees of N nodes with one flow
between two deep leaves. Each case is loaded and checked (`hetpath.validate`: parsing,
validation, routes for every flow) and then run for 1 ms of simulated time, in a fresh
process whose peak resident memory is read from the kernel. Used for
docs/performance.md ("Scaling").

    .venv/bin/python bench/scaling.py [--quick]
"""

from __future__ import annotations

import subprocess
import sys

CHILD = r"""
import resource, sys, time
from hetpath import _bridge
text = sys.stdin.read()
t0 = time.perf_counter()
_bridge.validate_text(text, "case.toml")
t1 = time.perf_counter()
_bridge.run_text(text, "case.toml", series=False)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def dumbbell(flows: int) -> str:
    out = ['[scenario]\nname = "dumbbell"\nduration = "1ms"\n',
           '[[node]]\nname = "r1"\n[[node]]\nname = "r2"\n',
           '[[link]]\nname = "bn"\na = "r1"\nb = "r2"\nrate = "100Mbps"\ndelay = "50ms"\n']
    for i in range(flows):
        out.append(f'[[node]]\nname = "s{i}"\n[[node]]\nname = "d{i}"\n')
        out.append(f'[[link]]\nname = "in{i}"\na = "s{i}"\nb = "r1"\nrate = "1Gbps"\ndelay = "1ms"\n')
        out.append(f'[[link]]\nname = "out{i}"\na = "r2"\nb = "d{i}"\nrate = "1Gbps"\ndelay = "1ms"\n')
        out.append(f'[[flow]]\nname = "f{i}"\nfrom = "s{i}"\nto = "d{i}"\ncc = "cubic"\n')
    return "".join(out)


def tree(nodes: int) -> str:
    out = ['[scenario]\nname = "tree"\nduration = "1ms"\n']
    out += [f'[[node]]\nname = "n{i}"\n' for i in range(nodes)]
    out += [f'[[link]]\nname = "l{j}"\na = "n{(j - 1) // 2}"\nb = "n{j}"\nrate = "1Gbps"\ndelay = "1us"\n'
            for j in range(1, nodes)]
    out.append(f'[[flow]]\nname = "f"\nfrom = "n{nodes - 1}"\nto = "n{nodes // 2 + 1}"\nsize = "10kB"\n')
    return "".join(out)


def measure(text: str) -> list[float]:
    """[validate s, run s, peak RSS MiB] of one case in a fresh interpreter (Linux:
    ru_maxrss is in KiB)."""
    out = subprocess.run([sys.executable, "-c", CHILD], input=text, capture_output=True,
                         text=True, check=True).stdout
    return [float(x) for x in out.split()]


def main() -> None:
    quick = "--quick" in sys.argv
    flows = [10, 100, 1000] if quick else [10, 100, 1000, 5000]
    nodes = [1000, 10_000] if quick else [1000, 10_000, 30_000]
    print(f"an interpreter running a 1-flow dumbbell: {measure(dumbbell(1))[2]:.0f} MiB peak")
    print("| topology | flows | nodes | link directions | validate (s) | load and run 1 ms (s) | peak RSS (MiB) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    cases = [("dumbbell", f, 2 * f + 2, 2 * (2 * f + 1), dumbbell(f)) for f in flows]
    cases += [("binary tree", 1, n, 2 * (n - 1), tree(n)) for n in nodes]
    for name, f, n, d, text in cases:
        v, r, rss = measure(text)
        print(f"| {name} | {f:,} | {n:,} | {d:,} | {v:.3f} | {r:.3f} | {rss:.0f} |", flush=True)


if __name__ == "__main__":
    main()
