#!/usr/bin/env python3
"""Save and compare everything a refactor must not change silently.

    scripts/compare_outputs.py save DIR [--hetpath PATH]   # run and store the outputs
    scripts/compare_outputs.py diff OLD NEW                # exit 1 on any difference
    scripts/compare_outputs.py against REV [--keep DIR]    # build REV aside, save both, diff

`save` stores, for the installed `hetpath` (default .venv/bin/hetpath):
- the `--json` summary and the CSV time series of every scenarios/examples/*.toml;
- the `--json` rows and the per-run `runs.csv` of every `hetpath reproduce PAPER --quick`
  at its default seeds.

`diff` compares them value by value. Wall-clock fields (`wall_time_s`) are ignored; the
engine's event count (`events`) and columns that only the new side has are reported
apart, because they are engine work (timer entries, spurious wake-ups) or additions, not
changed results. Every other difference is listed and makes the exit status 1.

`against REV` checks REV out into a temporary git worktree, builds it into its own
virtual environment, saves its outputs and the current checkout's, and diffs them.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAPERS = ["tcp-radio", "ilc-tcp", "rappep", "lift", "apohn"]
IGNORED = {"wall_time_s"}
ENGINE_ONLY = {"events"}


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def save(out: Path, hetpath: str, root: Path = REPO) -> None:
    """Runs `hetpath` on the scenarios of the tree at `root` (each revision reads its own
    scenario files: their keys may change with the code)."""
    out.mkdir(parents=True, exist_ok=True)
    for scen in sorted((root / "scenarios" / "examples").glob("*.toml")):
        name = scen.stem
        print(f"  run {name}", file=sys.stderr)
        res = run([hetpath, "run", str(scen), "--json", "-q"])
        (out / f"run-{name}.json").write_text(res.stdout)
        series_dir = out / f"series-{name}"
        run([hetpath, "run", str(scen), "-q", "--no-plots", "--out", str(series_dir)],
            cwd=root)
        for f in series_dir.iterdir():
            if f.suffix != ".csv":
                f.unlink()
    for paper in PAPERS:
        print(f"  reproduce {paper} --quick", file=sys.stderr)
        pdir = out / f"reproduce-{paper}"
        res = run([hetpath, "reproduce", paper, "--quick", "--json", "-q",
                   "--out", str(pdir), "--scenarios", str(root / "scenarios" / paper)],
                  cwd=root)
        (out / f"reproduce-{paper}.jsonl").write_text(res.stdout)
        for f in list(pdir.iterdir()):
            if f.name != "runs.csv":
                f.unlink() if f.is_file() else shutil.rmtree(f)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def walk(a, b, path: str, diffs: list[str], engine: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in IGNORED:
                continue
            if k not in a:
                engine.append(f"{path}.{k}: key added")
                continue
            if k not in b:
                diffs.append(f"{path}.{k}: only in old")
                continue
            target = engine if k in ENGINE_ONLY else diffs
            if k in ENGINE_ONLY and a[k] != b[k]:
                target.append(f"{path}.{k}: {a[k]} -> {b[k]}")
                continue
            walk(a[k], b[k], f"{path}.{k}", diffs, engine)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{path}: {len(a)} items -> {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", diffs, engine)
    elif not same(a, b):
        diffs.append(f"{path}: {a!r} -> {b!r}")


def read_csv(p: Path) -> list[dict]:
    with p.open(newline="") as f:
        return [{k: v for k, v in row.items() if k not in IGNORED} for row in csv.DictReader(f)]


def diff(old: Path, new: Path) -> int:
    diffs: list[str] = []
    engine: list[str] = []
    files = sorted({p.relative_to(old) for p in old.rglob("*") if p.is_file()}
                   | {p.relative_to(new) for p in new.rglob("*") if p.is_file()})
    for rel in files:
        a, b = old / rel, new / rel
        if not a.exists():
            engine.append(f"{rel}: file added")
            continue
        if not b.exists():
            diffs.append(f"{rel}: only in old")
            continue
        if rel.suffix == ".json":
            walk(json.loads(a.read_text()), json.loads(b.read_text()), str(rel), diffs, engine)
        elif rel.suffix == ".jsonl":
            la = [json.loads(x) for x in a.read_text().splitlines() if x.strip()]
            lb = [json.loads(x) for x in b.read_text().splitlines() if x.strip()]
            walk(la, lb, str(rel), diffs, engine)
        elif rel.suffix == ".csv":
            ra, rb = read_csv(a), read_csv(b)
            added = [k for k in (rb[0] if rb else {}) if ra and k not in ra[0]]
            if added:
                # New columns are reported, not counted: the old ones must not change.
                engine.append(f"{rel}: columns added: {', '.join(added)}")
                rb = [{k: v for k, v in row.items() if k not in added} for row in rb]
            if ra != rb:
                n = sum(1 for x, y in zip(ra, rb) if x != y) + abs(len(ra) - len(rb))
                first = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), None)
                where = "" if first is None else f"; first at row {first}: " + ", ".join(
                    f"{k}: {ra[first].get(k)} -> {rb[first].get(k)}"
                    for k in ra[first] if ra[first].get(k) != rb[first].get(k))
                diffs.append(f"{rel}: {n} of {max(len(ra), len(rb))} rows differ{where}")
        elif a.read_bytes() != b.read_bytes():
            diffs.append(f"{rel}: bytes differ")
    for line in engine:
        print(f"not a result change: {line}")
    for line in diffs:
        print(f"DIFF {line}")
    print(f"{len(files)} files compared: {len(diffs)} differences in results, "
          f"{len(engine)} changes in engine event counts or added columns")
    return 1 if diffs else 0


def against(rev: str, keep: Path | None) -> int:
    work = Path(tempfile.mkdtemp(prefix="hetpath-compare-"))
    tree, venv = work / "tree", work / "venv"
    try:
        run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), rev])
        print(f"building {rev} into {venv} (a few minutes)", file=sys.stderr)
        run([sys.executable, "-m", "venv", str(venv)])
        run([str(venv / "bin" / "pip"), "install", "--quiet", str(tree)])
        out = keep or work / "outputs"
        save(out / "old", str(venv / "bin" / "hetpath"), tree)
        save(out / "new", str(REPO / ".venv" / "bin" / "hetpath"))
        return diff(out / "old", out / "new")
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("save", help="run and store the outputs in DIR")
    s.add_argument("dir", type=Path)
    s.add_argument("--hetpath", default=str(REPO / ".venv" / "bin" / "hetpath"))
    d = sub.add_parser("diff", help="compare two saved directories")
    d.add_argument("old", type=Path)
    d.add_argument("new", type=Path)
    g = sub.add_parser("against", help="build REV aside and diff it against this checkout")
    g.add_argument("rev")
    g.add_argument("--keep", type=Path, help="keep both output sets here")
    a = ap.parse_args()
    try:
        if a.cmd == "save":
            save(a.dir, a.hetpath)
            return 0
        if a.cmd == "diff":
            return diff(a.old, a.new)
        return against(a.rev, a.keep)
    except subprocess.CalledProcessError as e:
        print(f"compare_outputs: {' '.join(e.cmd)} failed:\n{e.stderr}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
