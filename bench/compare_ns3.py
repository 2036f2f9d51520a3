#!/usr/bin/env python3
"""Cross-check suite against ns-3: runs each scenario in ns-3 and in
hetpath over seeds 1..N and prints, per flow, both simulators' goodput (mean, sd, min-max
over seeds) and whether hetpath's mean lies within ns-3's seed-to-seed spread.

    python bench/compare_ns3.py [--seeds 10] [--scenarios geo-clean geo-loss sat-shared ge-radio dumbbell]
        [--ns3-python PATH] [--json out.json] [--markdown out.md] [--hetpath-only]

hetpath runs with `[tcp] profile = "ns3"` (ns-3.44's TCP defaults) and mss = 1460; ns-3
runs with its own defaults for the same things (bench/ns3/scenarios.py; the profile's
values are checked against ns-3 in docs/validation.md).

1. geo-clean  scenarios/examples/geo-clean.toml, its [tcp] table replaced by the profile;
2. geo-loss   scenarios/examples/geo-loss.toml, likewise (tahoe runs in hetpath only);
3. sat-shared bench/ns3/sat-shared.toml: 5 CUBIC flows, GEO hop, 0.5% loss;
4. ge-radio   bench/ns3/ge-radio.toml: ns-3 decides the losses with its Gilbert-Elliott
              error model and records their indices; hetpath replays them through its
              `trace` channel, and the script checks, from hetpath's pcap and event trace,
              that hetpath lost exactly the recorded indices (among the transmissions it made);
5. dumbbell   scenarios/examples/dumbbell.toml, its [tcp] table replaced by the profile.

ns-3 comes from PyPI: if `--ns3-python` cannot `from ns import ns`, the script creates
the virtualenv target/ns3-venv and installs bench/requirements-ns3.txt into it (a few
minutes: cppyy is compiled; needs g++ and Python headers, see bench/ns3/README.md). The
ns-3 runs go one at a time under `nice -n 10`. Generated scenarios, loss traces, pcaps
and raw results go to target/ns3-compare/.
"""
from __future__ import annotations

import argparse
import bisect
import csv
import json
import re
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "ns3-compare"
VENV = ROOT / "target" / "ns3-venv"
HETPATH = ROOT / ".venv" / "bin" / "hetpath"
SCENARIOS = ["geo-clean", "geo-loss", "sat-shared", "ge-radio", "dumbbell"]
EXAMPLES = {"geo-clean", "geo-loss", "dumbbell"}
PROFILE_TCP = '[tcp]\nprofile = "ns3"\nmss = 1460\n'


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# ns-3 installation


def ns3_works(python: Path) -> bool:
    if not python.exists():
        return False
    r = subprocess.run([str(python), "-c", "from ns import ns"], capture_output=True)
    return r.returncode == 0


def ensure_ns3(python: Path | None) -> Path:
    if python is not None:
        if not ns3_works(python):
            sys.exit(f"{python} cannot import the ns-3 bindings (from ns import ns)")
        return python
    py = VENV / "bin" / "python"
    if ns3_works(py):
        return py
    log(f"ns-3 not found: creating {VENV} and installing bench/requirements-ns3.txt (a few minutes)")
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run(
        ["nice", "-n", "10", str(py), "-m", "pip", "install", "-r", str(ROOT / "bench" / "requirements-ns3.txt")],
        check=True,
    )
    if not ns3_works(py):
        sys.exit("ns-3 installed but `from ns import ns` fails; see bench/ns3/README.md")
    return py


# ---------------------------------------------------------------------------------------
# Scenario files for hetpath


def hetpath_scenario(name: str) -> Path:
    """The hetpath scenario file for NAME, under target/ns3-compare/."""
    WORK.mkdir(parents=True, exist_ok=True)
    if name in EXAMPLES:
        text = (ROOT / "scenarios" / "examples" / f"{name}.toml").read_text()
        # Replace the example's [tcp] table (RFC settings: IW 3, ...) by the ns3 profile.
        text, n = re.subn(r"^\[tcp\]\n(?:(?!\[).*\n)*", PROFILE_TCP + "\n", text, count=1, flags=re.M)
        assert n == 1, name
    else:
        text = (ROOT / "bench" / "ns3" / f"{name}.toml").read_text()
    out = WORK / f"{name}.toml"
    out.write_text(text)
    return out


def run_json(cmd: list[str], cwd: Path | None = None) -> dict:
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        sys.exit(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return json.loads(r.stdout)


def run_hetpath(path: Path, seed: int, pcap_trace: bool = False) -> dict:
    cmd = [str(HETPATH), "run", str(path), "--json", "--seed", str(seed)]
    if pcap_trace:
        cmd += ["--pcap", "--trace", str(path.parent / f"{path.stem}-trace.csv")]
    t0 = time.perf_counter()
    res = run_json(cmd, cwd=path.parent)
    res["process_time_s"] = time.perf_counter() - t0
    return res


def run_ns3(python: Path, name: str, seed: int, loss_out: Path | None = None) -> dict:
    cmd = ["nice", "-n", "10", str(python), str(ROOT / "bench" / "ns3" / "scenarios.py"), name, "--seed", str(seed), "--json"]
    if loss_out is not None:
        cmd += ["--loss-out", str(loss_out)]
    t0 = time.perf_counter()
    res = run_json(cmd)
    res["process_time_s"] = time.perf_counter() - t0
    return res


# ---------------------------------------------------------------------------------------
# ge-radio: which transmissions hetpath lost


def pcap_starts(path: Path) -> list[float]:
    """Record timestamps (transmission starts, s) of a nanosecond pcap."""
    b = path.read_bytes()
    off, out = 24, []
    while off + 16 <= len(b):
        sec, nsec, incl, _ = struct.unpack("<IIII", b[off : off + 16])
        out.append(sec + nsec * 1e-9)
        off += 16 + incl
    return out


def hetpath_lost_indices(work: Path, scenario: str, link: str, frm: str, to: str) -> tuple[int, list[int]]:
    """(transmissions, lost indices) on one link direction, from hetpath's pcap (one record
    per transmission, at its start) and its event trace (a `link.channel_loss` row at the
    end of the packet's serialisation)."""
    # `<index>_<link>_<from>-<to>.pcap` (docs/guide.md 5.3): the index makes names unique
    found = sorted((work / "out" / scenario).glob(f"[0-9]*_{link}_{frm}-{to}.pcap"))
    if len(found) != 1:
        raise SystemExit(f"expected one capture of {link} {frm} -> {to}, found {found}")
    starts = pcap_starts(found[0])
    lost = []
    with open(work / f"{scenario}-trace.csv") as fh:
        for r in csv.DictReader(fh):
            if r["event"] == "link.channel_loss" and r["link"] == link and r["node"] == frm:
                # the last transmission that started strictly before the loss was decided
                lost.append(bisect.bisect_left(starts, float(r["time_s"]) - 1e-9) - 1)
    return len(starts), lost


def read_loss_file(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split("\n") if x.strip() and not x.startswith("#")]


# ---------------------------------------------------------------------------------------
# Statistics and the table


def stats(xs: list[float]) -> dict:
    return {
        "mean": statistics.fmean(xs),
        "sd": statistics.stdev(xs) if len(xs) > 1 else 0.0,
        "min": min(xs),
        "max": max(xs),
        "n": len(xs),
    }


def verdict(h: dict, n: dict) -> str:
    """Agreement criterion: hetpath's mean within ns-3's min-max over seeds, or within
    ns-3's mean +- 2 sd; where ns-3 gives every seed the same result, the difference."""
    if n["max"] == n["min"]:
        # ns-3 has no seed-to-seed spread here (deterministic scenario): only exact
        # equality would satisfy the criterion, so give the relative difference instead.
        d = h["mean"] / n["mean"] - 1 if n["mean"] else float("nan")
        return f"n/a, ns-3 deterministic ({d:+.1%})"
    if n["min"] <= h["mean"] <= n["max"]:
        return "yes (min-max)"
    if abs(h["mean"] - n["mean"]) <= 2 * n["sd"] and n["sd"] > 0:
        return "yes (2 sd)"
    return "**no**"


def fmt(s: dict) -> str:
    if s["n"] > 1 and s["max"] > s["min"]:
        return f"{s['mean']:.3f} ± {s['sd']:.3f} ({s['min']:.3f}–{s['max']:.3f})"
    return f"{s['mean']:.3f} (all seeds)"


def table(name: str, runs: dict) -> list[str]:
    hs, ns = runs["hetpath"], runs["ns-3"]
    lines = [
        f"### {name} ({len(ns)} seeds; goodput in Mbit/s: mean ± sd (min–max))",
        "",
        "| flow | cc | hetpath `ns3` | ns-3 3.44 | hetpath / ns-3 | within ns-3 spread |",
        "|---|---|---|---|---|---|",
    ]
    names = [f["name"] for f in hs[0]["flows"]]
    for i, fname in enumerate(names):
        h = stats([r["flows"][i]["goodput_bps"] / 1e6 for r in hs])
        cc = hs[0]["flows"][i]["cc"]
        js = [j for j, f in enumerate(ns[0]["flows"]) if f["name"] == fname]
        if not js:
            lines.append(f"| {fname} | {cc} | {fmt(h)} | — (not in ns-3) | | |")
            continue
        n = stats([r["flows"][js[0]]["goodput_bps"] / 1e6 for r in ns])
        ratio = h["mean"] / n["mean"] if n["mean"] else float("nan")
        lines.append(f"| {fname} | {cc} | {fmt(h)} | {fmt(n)} | {ratio:.2f} | {verdict(h, n)} |")
    if len(names) > 1:
        common = [f["name"] for f in ns[0]["flows"]]
        ht = stats([sum(f["goodput_bps"] for f in r["flows"] if f["name"] in common) / 1e6 for r in hs])
        nt = stats([sum(f["goodput_bps"] for f in r["flows"]) / 1e6 for r in ns])
        lines.append(
            f"| total (flows in both) | | {fmt(ht)} | {fmt(nt)} | {ht['mean'] / nt['mean']:.2f} | {verdict(ht, nt)} |"
        )
    hw = statistics.fmean(r["wall_time_s"] for r in hs)
    nw = statistics.fmean(r["wall_time_s"] for r in ns)
    lines += ["", f"Wall time per run (simulation only): hetpath {hw:.3f} s, ns-3 {nw:.2f} s."]
    if "loss_check" in runs:
        lines += ["", "Loss replay check (data direction of `radio`, per seed):", ""]
        lines += ["| seed | ns-3 transmissions | ns-3 lost | hetpath transmissions | hetpath lost | ns-3 lost among those | identical indices |"]
        lines += ["|---|---|---|---|---|---|---|"]
        for c in runs["loss_check"]:
            lines.append(
                f"| {c['seed']} | {c['ns3_tx']} | {c['ns3_lost']} | {c['hetpath_tx']} | {c['hetpath_lost']} | "
                f"{c['ns3_lost_within']} | {'yes' if c['identical'] else '**no**'} |"
            )
    return lines


# ---------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", nargs="+", default=SCENARIOS, choices=SCENARIOS)
    ap.add_argument("--seeds", type=int, default=10, help="run seeds 1..N (default 10)")
    ap.add_argument("--ns3-python", type=Path, default=None, help="an interpreter with the ns-3 bindings "
                    "(default: target/ns3-venv, created and filled if missing)")
    ap.add_argument("--json", type=Path, default=WORK / "results.json", help="raw results (default target/ns3-compare/results.json)")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the tables here")
    ap.add_argument("--hetpath-only", action="store_true",
                    help="rerun only hetpath, reusing the ns-3 results (and loss traces) in --json")
    a = ap.parse_args()
    t_start = time.perf_counter()
    WORK.mkdir(parents=True, exist_ok=True)
    old = json.loads(a.json.read_text()) if a.hetpath_only else {}
    python = None if a.hetpath_only else ensure_ns3(a.ns3_python)
    raw = {}
    out_lines = []
    for name in a.scenarios:
        t0 = time.perf_counter()
        path = hetpath_scenario(name)
        runs = {"hetpath": [], "ns-3": [] if not a.hetpath_only else old[name]["ns-3"][: a.seeds]}
        checks = []
        for seed in range(1, a.seeds + 1):
            if name == "ge-radio":
                loss = WORK / "ge-radio.loss"
                seed_loss = WORK / f"ge-radio-seed{seed}.loss"
                if not a.hetpath_only:
                    runs["ns-3"].append(run_ns3(python, name, seed, loss_out=seed_loss))
                loss.write_bytes(seed_loss.read_bytes())
                h = run_hetpath(path, seed, pcap_trace=True)
                n_tx, h_lost = hetpath_lost_indices(WORK, "ge-radio", "radio", "bs", "mobile")
                rec = runs["ns-3"][seed - 1]["loss_record"]
                ns_within = [i for i in rec["lost"] if i < n_tx]
                checks.append({
                    "seed": seed, "ns3_tx": rec["transmissions"], "ns3_lost": len(rec["lost"]),
                    "hetpath_tx": n_tx, "hetpath_lost": len(h_lost), "ns3_lost_within": len(ns_within),
                    "identical": h_lost == ns_within,
                })
            else:
                if not a.hetpath_only:
                    runs["ns-3"].append(run_ns3(python, name, seed))
                h = run_hetpath(path, seed)
            runs["hetpath"].append(h)
            log(f"  {name} seed {seed} done ({time.perf_counter() - t0:.0f} s)")
        if checks:
            runs["loss_check"] = checks
        runs["elapsed_s"] = time.perf_counter() - t0
        raw[name] = runs
        lines = table(name, runs)
        out_lines += lines + [""]
        print("\n".join(lines) + "\n", flush=True)
        a.json.write_text(json.dumps({**old, **raw}, indent=1))
    total = time.perf_counter() - t_start
    print(f"suite: {len(a.scenarios)} scenarios x {a.seeds} seeds in {total:.0f} s")
    if a.markdown:
        a.markdown.write_text("\n".join(out_lines) + f"\nsuite time {total:.0f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
