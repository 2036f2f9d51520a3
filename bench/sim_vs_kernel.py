#!/usr/bin/env python3
"""The simulator against the kernel, channel model by channel model: one short transfer
run through `hetpath run` (simulated TCP, `profile = "linux"`) and through `hetpath
emulate`'s core with the kernel's own TCP, for each (channel, controller, loss level) row
and N seeds, and a table of the two faces side by side.

The path (bench/data/sim-vs-kernel.toml): 10 Mbit/s, 25 ms one way each direction
(50 ms RTT), a drop-tail queue of 50 packets (1.2 BDP), one 2 MB transfer from a to b.
The channel sits on the data direction (a -> b) only, so that the loss process measured
is the one the sender meets. The simulated sender's queue is placed where the kernel's
is: `local_queue = "drop"`. In the emulated face the bottleneck queue is the emulator's,
a router the kernel cannot feel (its TUN device's qdisc never fills: the emulator reads
it at once), so a full queue drops; the `linux` profile's `"wait"` would instead make
the link's queue the sender's own socket queue, which never drops and keeps the link
busy back to back (docs/validation.md, "Gilbert-Elliott: simulator against kernel").
Pacing is off on both faces: this kernel has no fq qdisc, and CUBIC paces only under fq.

Per run and face: goodput (first SYN to the last byte's arrival, as `hetpath run`'s
``goodput_bps``); retransmissions (the simulated flow's; the kernel's
tcpi_total_retrans); retransmission timeouts (the simulated flow's; the kernel's TCPTimeouts
counter of the sender's namespace, with its other recovery counters kept in --json); the
data direction's channel loss rate (lost / transmissions);
loss bursts (channel losses on the data direction no more than 1.5 full-packet times
apart, so back-to-back losses; the same rule on both faces); queue drops; the largest
queue the link saw. Per row: mean and 95% CI (Student t) of each, the ratio of the mean
goodputs, and the verdict: a row agrees when the mean goodputs are within 10% and their
CIs overlap, and the loss rate's and burst length's CIs overlap (a CI narrower than 1%
of its mean counts as that wide: `RESOLUTION`).

With ``--align`` each simulated flow starts when the kernel's SYN entered the emulator
(its clock starts before the kernel's traffic, by 40-70 ms): a time-based channel
(gilbert-elliott, markov with a slot, trace with bad intervals) then meets both faces'
packets at the same instants, and runs of one seed can be compared run by run.

    sudo .venv/bin/python bench/sim_vs_kernel.py --seeds 10 --json out/svk.json
    sudo .venv/bin/python bench/sim_vs_kernel.py --only gilbert-elliott --cc cubic --seeds 3
    sudo .venv/bin/python bench/sim_vs_kernel.py --quick        # two rows, 3 seeds (the CI test)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Optional

import pandas as pd

import hetpath
from hetpath import _toml, live

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import live_cli  # noqa: E402  (bench/, beside this script)

SCENARIO = HERE / "data" / "sim-vs-kernel.toml"
TRACES = HERE / "data" / "traces"
FULL_PACKET = 1500

# Three loss levels per channel model, low to high. For `trace`: three recorded traces,
# the kernel face's own channel losses (`hetpath emulate`'s loss-ab.trace) of the first
# gilbert-elliott cubic run with a loss at each level (--record-traces; kept in
# bench/data/traces), replayed by transmission index on both faces.
CHANNELS: dict[str, list[dict]] = {
    # Time-based: a 3 ms bad period covers 2-3 packets of 1.2 ms at 10 Mbit/s.
    "gilbert-elliott": [{"model": "gilbert-elliott", "t_good": g, "t_bad": "3ms"} for g in ("1s", "400ms", "150ms")],
    "trace": [{"model": "trace", "file": str(TRACES / f"ge-{lvl}.trace")} for lvl in ("low", "mid", "high")],
    "bernoulli": [{"model": "bernoulli", "p": p} for p in (0.001, 0.005, 0.02)],
    # Per-packet two-state chain, mean burst 1/beta = 2 packets, loss alpha/(alpha+beta).
    "markov": [{"model": "markov", "alpha": round(q * 0.5 / (1 - q), 6), "beta": 0.5} for q in (0.002, 0.005, 0.02)],
    "ber": [{"model": "ber", "ber": b} for b in (1e-7, 5e-7, 2e-6)],
    # RS(255, 239) over bit errors: a codeword is lost beyond 8 symbol errors.
    "fec": [{"model": "fec", "n": 255, "k": 239, "ber": b} for b in (1.0e-3, 1.3e-3, 1.6e-3)],
}
LEVELS = ("low", "mid", "high")
CCS = ("reno", "cubic")
QUICK = [("bernoulli", "cubic", 1), ("gilbert-elliott", "cubic", 1)]


def prepared(work: Path, base: dict, channel: dict, cc: str, size: int, tag: str) -> Path:
    """The base scenario with the row's channel on a -> b, its controller and size."""
    data = json.loads(json.dumps(base))
    link, flow = data["link"][0], data["flow"][0]
    link.setdefault("ab", {})["channel"] = channel
    flow["cc"], flow["size"] = cc, f"{size}B"
    out = work / f"{tag}.toml"
    out.write_text(_toml.dumps(data))
    return out


def bursts(loss_times: list[float], rate_bps: float) -> list[int]:
    """Lengths of the runs of losses no more than 1.5 full-packet times apart."""
    gap = 1.5 * FULL_PACKET * 8 / rate_bps
    out: list[int] = []
    last = None
    for t in sorted(loss_times):
        if last is not None and t - last <= gap:
            out[-1] += 1
        else:
            out.append(1)
        last = t
    return out


def _loss_stats(ab: dict, times: list[float], rate: float) -> dict:
    b = bursts(times, rate)
    sent = ab["tx_packets"]
    return {"channel_lost": ab["lost_packets"], "queue_drops": ab["drops"], "transmissions": sent,
            "loss_rate": ab["lost_packets"] / sent if sent else 0.0, "bursts": len(b),
            "mean_burst": statistics.fmean(b) if b else 0.0, "max_burst": max(b, default=0)}


def aligned(work: Path, scenario: Path, start_s: Optional[float]) -> Path:
    """`scenario` with its flow starting at `start_s` (the kernel's SYN on the emulator's
    clock), so that both faces put their first packet on the same instant of a time-based
    channel; `scenario` itself without a start."""
    if start_s is None:
        return scenario
    data = _toml.loads(scenario.read_text(), str(scenario))
    data["flow"][0]["start"] = f"{round(start_s * 1e9)}ns"
    out = work / f"{scenario.stem}-at-{round(start_s * 1e9)}.toml"
    out.write_text(_toml.dumps(data))
    return out


def simulated(scenario: Path, seed: int, link: str) -> dict:
    r = hetpath.run(scenario, seed=seed, trace=True)
    f = r.summary["flows"][0]
    ab = next(d for d in r.summary["links"] if d["name"] == link and d["from"] == f["from"])
    tr = r.trace
    lost = tr[(tr["event"] == "link.channel_loss") & (tr["node"] == ab["from"])]["time_s"].tolist()
    return {"goodput_bps": f["goodput_bps"] or 0.0, "complete": f["completion_s"] is not None,
            "retransmissions": f["retransmissions"], "timeouts": f["timeouts"], "max_queue": ab["max_queue_pkts"],
            "loss_times": lost, **_loss_stats(ab, lost, ab["rate_bps"])}


def emulated(work: Path, scenario: Path, link: str, seed: int, size: int, cc: str, timeout: float,
             keep: Optional[Path] = None) -> dict:
    out = work / f"emu-{len(list(work.iterdir()))}"
    out.mkdir()
    with live.Emulation(scenario, link, seed=seed, out=out, pcap=False) as emu:
        sent, got, seconds = live_cli.kernel_transfer(emu, size, cc, timeout)
    ab = (emu.summary or {})["links"][0]
    fates = pd.read_csv(out / "fates.csv")
    lost = fates[(fates["dir"] == "ab") & (fates["outcome"] == "channel")]["left_s"].tolist()
    # The SYN: Linux's carries 40 bytes of TCP header with its options.
    syn = fates[(fates["dir"] == "ab") & (fates["bytes"] == 60)]["entered_s"].min()
    if keep is not None and lost:
        keep.parent.mkdir(parents=True, exist_ok=True)
        keep.write_text((out / "loss-ab.trace").read_text())
    return {"goodput_bps": got["bytes"] * 8 / seconds, "complete": got["complete"] and got["bytes"] == size,
            "retransmissions": sent["retransmissions"], "timeouts": sent["counters"].get("TCPTimeouts", 0),
            "counters": sent["counters"], "max_queue": ab.get("max_queue_pkts"),
            "syn_s": None if pd.isna(syn) else float(syn),
            "loss_times": lost, **_loss_stats(ab, lost, ab["rate_bps"])}


# Student t quantiles t_{0.975, df} for df = 1..30; beyond, 1.96.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def ci(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (0 for one value)."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, 0.0
    df = len(values) - 1
    t = _T975[df - 1] if df <= len(_T975) else 1.96
    return m, t * statistics.stdev(values) / math.sqrt(len(values))


# The resolution of a row's mean: a CI narrower than 1% of its mean is widened to that,
# so that a face with no spread (the simulation over a `trace` channel gives every seed
# the same bytes) is compared at the resolution of a measurement, not to the last digit.
RESOLUTION = 0.01


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two (mean, half-width) intervals overlap, each at least RESOLUTION wide."""
    ha, hb = max(a[1], RESOLUTION * abs(a[0])), max(b[1], RESOLUTION * abs(b[0]))
    return a[0] - ha <= b[0] + hb and b[0] - hb <= a[0] + ha


def verdict(sim: list[dict], emu: list[dict]) -> dict:
    """The row's statistics and whether it agrees (module docs), and where it misses."""
    row: dict = {}
    for key in ("goodput_bps", "retransmissions", "timeouts", "loss_rate", "mean_burst", "queue_drops"):
        row[key] = {"sim": ci([r[key] for r in sim]), "emu": ci([r[key] for r in emu])}
    g = row["goodput_bps"]
    ratio = g["sim"][0] / g["emu"][0] if g["emu"][0] else float("inf")
    missed = []
    if not (abs(ratio - 1) <= 0.1 and overlap(g["sim"], g["emu"])):
        missed.append("goodput")
    for key, name in (("loss_rate", "loss rate"), ("mean_burst", "bursts")):
        if not overlap(row[key]["sim"], row[key]["emu"]):
            missed.append(name)
    row["ratio"] = ratio
    row["agrees"] = not missed
    row["missed"] = missed
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", type=Path, default=SCENARIO, help="one link, one flow from a to b")
    ap.add_argument("--mb", type=float, default=2.0, help="MB (10^6 bytes) per transfer (default 2)")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 1..N per row (default 10)")
    ap.add_argument("--only", action="append", choices=sorted(CHANNELS), help="these channel models only")
    ap.add_argument("--cc", action="append", choices=CCS, help="these controllers only")
    ap.add_argument("--level", action="append", choices=LEVELS, help="these loss levels only")
    ap.add_argument("--quick", action="store_true", help="two rows (bernoulli and gilbert-elliott, cubic, mid level)")
    ap.add_argument("--record-traces", action="store_true",
                    help="keep the kernel-face losses of the first gilbert-elliott cubic run with a loss at each "
                    "level as the trace rows' files")
    ap.add_argument("--channel", type=json.loads, help="one row with this channel instead (JSON, e.g. "
                    "'{\"model\": \"gilbert-elliott\", \"t_good\": \"400ms\", \"t_bad\": \"2ms\"}')")
    ap.add_argument("--local-queue", choices=("wait", "cwr", "drop"), help="the simulated sender's local_queue "
                    "instead of the scenario's (to show what placing the queue differently does)")
    ap.add_argument("--align", action="store_true",
                    help="start each simulated flow when the kernel's SYN entered the emulator, not at 0 "
                    "(the emulator's clock starts before the kernel's traffic: docs/validation.md)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds an emulated transfer may take (default 120)")
    ap.add_argument("--json", type=Path, help="also write every run here")
    args = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C, so that the emulation in progress deletes its namespaces.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    why = live.unavailable()
    if why or not args.scenario.is_file() or args.mb <= 0 or args.seeds < 1:
        print(f"sim_vs_kernel.py: {why or 'bad arguments: --scenario must exist, --mb and --seeds be positive'}",
              file=sys.stderr)
        return 2
    hetpath.validate(args.scenario)
    base = _toml.loads(args.scenario.read_text(), str(args.scenario))
    if len(base.get("link", [])) != 1 or len(base.get("flow", [])) != 1:
        print(f"sim_vs_kernel.py: {args.scenario}: expected one [[link]] and one [[flow]]", file=sys.stderr)
        return 2
    link = base["link"][0]["name"]
    if args.local_queue:
        base.setdefault("tcp", {})["local_queue"] = args.local_queue
    if args.channel:
        CHANNELS["custom"] = [args.channel] * 3
        rows = [("custom", cc, 1) for cc in (args.cc or ["cubic"])]
    elif args.quick:
        rows = QUICK
    else:
        rows = [(ch, cc, i) for ch in CHANNELS for cc in CCS for i in range(3)
                if (not args.only or ch in args.only) and (not args.cc or cc in args.cc)
                and (not args.level or LEVELS[i] in args.level)]
    size = int(args.mb * 1e6)
    result: dict = {"load_before": os.getloadavg(), "mb": args.mb, "seeds": args.seeds, "align": args.align,
                    "rows": []}
    recorded: set[str] = set()  # the trace levels recorded in this run
    with tempfile.TemporaryDirectory(prefix="hp-bench-svk-") as tmp:
        work = Path(tmp)
        for ch, cc, i in rows:
            channel = CHANNELS[ch][i]
            if ch == "trace" and not Path(channel["file"]).is_file():
                print(f"skipping trace {LEVELS[i]}: {channel['file']} missing (--record-traces)", flush=True)
                continue
            scenario = prepared(work, base, channel, cc, size, f"{ch}-{cc}-{i}")
            sim, emu = [], []
            for seed in range(1, args.seeds + 1):
                keep = TRACES / f"ge-{LEVELS[i]}.trace" if (args.record_traces and ch == "gilbert-elliott"
                                                      and cc == "cubic" and LEVELS[i] not in recorded) else None
                emu.append(emulated(work, scenario, link, seed, size, cc, args.timeout, keep))
                start = emu[-1]["syn_s"] if args.align else None
                sim.append(simulated(aligned(work, scenario, start), seed, link))
                if keep is not None and emu[-1]["channel_lost"]:
                    recorded.add(LEVELS[i])
                print(f"{ch} {cc} {LEVELS[i]} seed {seed}: simulated {sim[-1]['goodput_bps'] / 1e6:.3f}, "
                      f"kernel {emu[-1]['goodput_bps'] / 1e6:.3f} Mbit/s; bursts {sim[-1]['mean_burst']:.2f} / "
                      f"{emu[-1]['mean_burst']:.2f} (max {sim[-1]['max_burst']} / {emu[-1]['max_burst']}); "
                      f"channel losses {sim[-1]['channel_lost']} / {emu[-1]['channel_lost']}; queue drops "
                      f"{sim[-1]['queue_drops']} / {emu[-1]['queue_drops']}; largest queue {sim[-1]['max_queue']} / "
                      f"{emu[-1]['max_queue']}", flush=True)
            result["rows"].append({"channel": ch, "cc": cc, "level": LEVELS[i], "spec": channel,
                                   "sim": sim, "emu": emu, "stats": verdict(sim, emu)})
            if args.json:  # after every row, so that a long run stopped halfway keeps its rows
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps(result, indent=2) + "\n")
    return live_cli.finish(result, _print, args.json)


def _print(result: dict) -> None:
    def f(pair: tuple[float, float], scale: float = 1.0, digits: int = 2) -> str:
        return f"{pair[0] * scale:.{digits}f} ± {pair[1] * scale:.{digits}f}"

    print(f"\n{result['mb']:g} MB per transfer, seeds 1..{result['seeds']}; mean ± 95% CI; sim / kernel")
    print("| channel | cc | level | goodput Mbit/s sim | kernel | ratio | retransmissions sim | kernel "
          "| timeouts sim | kernel | loss % sim | kernel | mean burst sim | kernel | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in result["rows"]:
        s = row["stats"]
        print(f"| {row['channel']} | {row['cc']} | {row['level']} | {f(s['goodput_bps']['sim'], 1e-6)} "
              f"| {f(s['goodput_bps']['emu'], 1e-6)} | {s['ratio']:.2f} | {f(s['retransmissions']['sim'], 1, 0)} "
              f"| {f(s['retransmissions']['emu'], 1, 0)} | {f(s['timeouts']['sim'], 1, 1)} "
              f"| {f(s['timeouts']['emu'], 1, 1)} | {f(s['loss_rate']['sim'], 100)} "
              f"| {f(s['loss_rate']['emu'], 100)} | {f(s['mean_burst']['sim'])} | {f(s['mean_burst']['emu'])} "
              f"| {'agrees' if s['agrees'] else 'misses: ' + ', '.join(s['missed'])} |")
    print(f"load average before {result['load_before'][0]:.2f}, after {result['load_after'][0]:.2f}")


if __name__ == "__main__":
    live_cli.run(main)
