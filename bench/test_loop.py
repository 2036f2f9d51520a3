"""How long the README's test command takes (docs/performance.md, "The test
loop"): from a fresh clone (empty target/ and .venv; the machine's cargo and pip caches
may be warm), then again after a one-line change in each crate. Each run is a new clone
of HEAD; the figures are the median, minimum and maximum over the runs, with the load
average before each.

    python3 bench/test_loop.py [--runs 3] [--crates hetpath-sim,...] [--keep]

The one-line change edits a message inside a function of the crate (CHANGES: a line a
contributor might touch, in a scenario loader, a protocol, the daemon, the bridge): the
message in capitals, new to the clone's build and of the same length, so rustfmt keeps
the line as it is. The command is the
README's (`bash scripts/setup.sh --tests && bash scripts/test.sh`), run under CI=true as
.ci/run runs it; a run that fails stops the benchmark with its log's tail.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# crate -> (file, a message in one of its functions that no test compares).
CHANGES = {
    "hetpath-proto": ("src/stp/mod.rs", "bit/s, got 0"),
    "hetpath-sim": ("src/scenario/tcp.rs", "expected 64 to 65495 bytes"),
    "hetpath-live": ("src/pep/daemon.rs", "cannot open the server leg"),
    "hetpath-py": ("src/lib.rs", "cannot write captures"),
}
CRATES = list(CHANGES)
STEPS = {"setup": ["bash", "scripts/setup.sh", "--tests"], "test": ["bash", "scripts/test.sh"]}


def load() -> float:
    return os.getloadavg()[0]


def timed(cmd: list[str], cwd: Path, log: Path) -> float:
    t0 = time.monotonic()
    with log.open("w") as out:
        res = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "CI": "true"})
    dt = time.monotonic() - t0
    if res.returncode != 0:
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-30:])
        sys.exit(f"test_loop: {' '.join(cmd)} failed in {cwd} (exit {res.returncode}); log {log}:\n{tail}")
    return dt


def touch(clone: Path, crate: str) -> None:
    file, message = CHANGES[crate]
    path = clone / "crates" / crate / file
    text = path.read_text()
    if text.count(message) != 1:
        sys.exit(f"test_loop: {path} should hold '{message}' once (CHANGES is out of date)")
    path.write_text(text.replace(message, message.upper()))


def one_run(k: int, crates: list[str], keep: bool) -> dict[str, float]:
    clone = Path(tempfile.mkdtemp(prefix="hetpath-test-loop-"))
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    row = {"load": load()}
    row["fresh setup"] = timed(STEPS["setup"], clone, clone / "setup.log")
    row["fresh test.sh"] = timed(STEPS["test"], clone, clone / "test.log")
    row["fresh total"] = row["fresh setup"] + row["fresh test.sh"]
    print(f"run {k}: fresh setup {row['fresh setup']:.1f}, test.sh {row['fresh test.sh']:.1f}", flush=True)
    for crate in crates:
        touch(clone, crate)
        row[f"{crate} change"] = (timed(STEPS["setup"], clone, clone / f"setup-{crate}.log")
                                  + timed(STEPS["test"], clone, clone / f"test-{crate}.log"))
    print(f"run {k}: " + ", ".join(f"{name} {v:.1f}" for name, v in row.items()), flush=True)
    if not keep:
        shutil.rmtree(clone, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--crates", default=",".join(CRATES), help="crates to change, comma-separated")
    parser.add_argument("--keep", action="store_true", help="keep the clones (and their logs)")
    args = parser.parse_args()
    crates = [c for c in args.crates.split(",") if c]
    unknown = set(crates) - set(CRATES)
    if unknown:
        sys.exit(f"test_loop: unknown crate(s) {sorted(unknown)}; expected some of {CRATES}")
    rows = [one_run(k + 1, crates, args.keep) for k in range(args.runs)]
    print(f"\n| step (s) | median | min | max |  (HEAD {subprocess.check_output(['git', 'rev-parse', '--short', 'HEAD'], cwd=REPO, text=True).strip()}, {args.runs} runs, {os.cpu_count()} cores)")
    print("|---|---|---|---|")
    for name in rows[0]:
        values = [r[name] for r in rows]
        print(f"| {name} | {statistics.median(values):.1f} | {min(values):.1f} | {max(values):.1f} |")


if __name__ == "__main__":
    main()
