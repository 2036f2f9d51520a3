#!/usr/bin/env python3
"""Engine speed of two commits side by side, in one run.

    python bench/compare_revs.py REV [--runs 7] [--scenarios dumbbell geo-clean ...]
                                     [--callgrind]

Builds REV's `run` example in a temporary git worktree (its own target directory, kept
under target/compare-revs so later runs reuse it) and this checkout's, then runs each
scenario with the two binaries alternately, so that both see the same machine load.
Prints the median and minimum wall time and the events per second of each, and their
ratio. With --callgrind it also counts instructions under valgrind (repeatable whatever
the load; slow).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINE = re.compile(r"wall=([\d.]+)s events=(\d+)")


def sh(cmd: list[str], **kw) -> str:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def build(tree: Path, target: Path) -> Path:
    sh(["cargo", "build", "--release", "-q", "-p", "hetpath-sim", "--example", "run"],
       cwd=tree, env={**os.environ, "CARGO_TARGET_DIR": str(target)})
    return target / "release" / "examples" / "run"


def old_binary(rev: str) -> Path:
    base = REPO / "target" / "compare-revs"
    sha = sh(["git", "-C", str(REPO), "rev-parse", "--short", rev]).strip()
    tree = base / f"tree-{sha}"
    if not tree.exists():
        base.mkdir(parents=True, exist_ok=True)
        sh(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), sha])
    # A target directory per revision: Cargo names a workspace crate's artifacts by its
    # path relative to the workspace, so two trees sharing one would overwrite each
    # other's libraries and link one revision's engine against another's protocols.
    return build(tree, base / f"target-{sha}")


def wall(binary: Path, scenario: Path) -> tuple[float, int]:
    m = LINE.search(sh([str(binary), str(scenario)]))
    if not m:
        sys.exit(f"compare_revs: no timing line from {binary} {scenario}")
    return float(m.group(1)), int(m.group(2))


def instructions(binary: Path, scenario: Path) -> int:
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          str(binary), str(scenario)], text=True, capture_output=True)
    m = re.search(r"Collected : (\d+)", out.stderr)
    return int(m.group(1)) if m else -1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the commit to compare against (e.g. HEAD~1)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--scenarios", nargs="+", default=["dumbbell", "geo-clean", "geo-loss", "geo-pep"])
    ap.add_argument("--callgrind", action="store_true")
    a = ap.parse_args()
    old = old_binary(a.rev)
    # This checkout's build goes where its other builds go (CARGO_TARGET_DIR, if set).
    new = build(REPO, Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")))
    print(f"old: {a.rev}  new: working tree   ({a.runs} alternating runs each)")
    print(f"{'scenario':<10} {'events':>9} {'old median':>11} {'new median':>11} {'old min':>8} "
          f"{'new min':>8} {'new/old':>8} {'new M ev/s':>11}")
    for name in a.scenarios:
        scen = REPO / "scenarios" / "examples" / f"{name}.toml"
        times: dict[str, list[float]] = {"old": [], "new": []}
        events = {}
        for _ in range(a.runs):
            for label, b in (("old", old), ("new", new)):
                t, ev = wall(b, scen)
                times[label].append(t)
                events[label] = ev
        mo, mn = statistics.median(times["old"]), statistics.median(times["new"])
        note = "" if events["old"] == events["new"] else f"  (events: old {events['old']})"
        print(f"{name:<10} {events['new']:>9} {mo:>10.3f}s {mn:>10.3f}s {min(times['old']):>7.3f}s "
              f"{min(times['new']):>7.3f}s {mn / mo:>8.3f} {events['new'] / mn / 1e6:>11.2f}{note}")
        if a.callgrind:
            io, inew = instructions(old, scen), instructions(new, scen)
            print(f"{'':<10} instructions: old {io:,}  new {inew:,}  new/old {inew / io:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
