#!/usr/bin/env python3
"""The simulator against the emulator: one scenario through `hetpath run` (simulated TCP
CUBIC, the scenario's flow) and through `hetpath emulate`'s core with kernel CUBIC.

The scenario (default bench/data/live-geo.toml: 10 Mbit/s, 300 ms each way, Linux's TCP
defaults without pacing) has one link and one sized CUBIC flow across it, from the
link's a node to its b node. The emulated run sends the same number of bytes from side
a to side b with Python sockets (CUBIC, the kernel's defaults); both goodputs count
from just before the connection opens to the last byte's arrival, as `hetpath run`'s
``goodput_bps`` does. With ``--loss p`` both get a Bernoulli channel of probability p on
both directions, and run k of each uses seed k, so both see the same channel draws per
transmission index (the transmissions themselves differ, so the losses fall on
different packets).

Side by side per run: goodput; the a -> b direction's utilisation during the transfer
(bytes sent x 8 / (rate x transfer time)); packets the channel lost and the queue
dropped; retransmissions (the simulated flow's; the kernel's tcpi_total_retrans); when
the sender first left slow start and the ssthresh it set (the first sample of the flow
series with a finite ssthresh: `hetpath run`'s, and the kernel's own from the emulator's
flow_series.csv, both every `sample_interval`).

    sudo .venv/bin/python bench/live_crosscheck.py --mb 2 --runs 1     # a quick check
    sudo .venv/bin/python bench/live_crosscheck.py --loss 0.005 --json out/cross.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import pandas as pd

import hetpath
from hetpath import _toml, live

import live_cli  # bench/, beside this script

HERE = Path(__file__).parent
SCENARIO = HERE / "data" / "live-geo.toml"


def prepared(work: Path, base: Path, size: int, p: float) -> tuple[Path, dict]:
    """`base` with its flow's size set to `size` bytes and, if p > 0, a Bernoulli channel."""
    data = _toml.loads(base.read_text(), str(base))
    if len(data.get("link", [])) != 1 or len(data.get("flow", [])) != 1:
        raise SystemExit(f"live_crosscheck.py: {base}: expected one [[link]] and one [[flow]]")
    data["flow"][0]["size"] = f"{size}B"
    if p > 0:
        data["link"][0]["channel"] = {"model": "bernoulli", "p": p}
    out = work / f"cross-{p}.toml"
    out.write_text(_toml.dumps(data))
    return out, data


def slow_start_exit(series: pd.DataFrame) -> dict:
    """When a flow series (one flow) first has a finite ssthresh, and that ssthresh."""
    left = series[series["ssthresh_bytes"].notna()]
    if left.empty:
        return {"ss_exit_s": None, "ss_exit_ssthresh_kb": None}
    row = left.iloc[0]
    return {"ss_exit_s": float(row["time_s"]), "ss_exit_ssthresh_kb": float(row["ssthresh_bytes"]) / 1e3}


def simulated(scenario: Path, seed: int, rate: float) -> dict:
    r = hetpath.run(scenario, seed=seed)
    f, ab = r.summary["flows"][0], r.summary["links"][0]
    legs = r.summary.get("legs") or [{}]
    seconds = f["completion_s"]
    return {"goodput_bps": f["goodput_bps"], "complete": seconds is not None, "seconds": seconds,
            "utilization": ab["tx_bytes"] * 8 / (rate * seconds) if seconds else None,
            "channel_lost": ab["lost_packets"], "queue_drops": ab["drops"],
            "retransmissions": legs[0].get("retransmissions"), **slow_start_exit(r.flow_series)}


def emulated(work: Path, scenario: Path, link: str, seed: int, size: int, rate: float, timeout: float) -> dict:
    out = work / f"emu-{seed}-{os.getpid()}-{len(list(work.iterdir()))}"
    out.mkdir()
    with live.Emulation(scenario, link, seed=seed, out=out, pcap=False) as emu:
        sent, got, seconds = live_cli.kernel_transfer(emu, size, "cubic", timeout)
    flows = pd.read_csv(out / "flow_series.csv")
    sender = flows[flows["flow"].str.endswith(f"->{live.ADDR_B}:{live_cli.PORT}")]
    ab = (emu.summary or {})["links"][0]
    return {"goodput_bps": got["bytes"] * 8 / seconds, "complete": got["complete"] and got["bytes"] == size,
            "seconds": seconds, "utilization": ab["tx_bytes"] * 8 / (rate * seconds),
            "channel_lost": ab["lost_packets"], "queue_drops": ab["drops"], "retransmissions": sent["retransmissions"],
            "final_ssthresh_segments": sent["final_ssthresh_segments"], "final_cwnd_segments": sent["final_cwnd_segments"],
            **slow_start_exit(sender)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", type=Path, default=SCENARIO, help="one link, one flow across it (default bench/data/live-geo.toml)")
    ap.add_argument("--mb", type=float, default=20.0, help="MB (10^6 bytes) transferred (default 20)")
    ap.add_argument("--loss", type=float, default=0.0, help="Bernoulli loss probability on both directions (default 0)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each, seeds 1..N (default 3)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds an emulated transfer may take (default 900)")
    ap.add_argument("--json", type=Path, help="also write every run here")
    args = ap.parse_args()
    why = live.unavailable()
    if why or not args.scenario.is_file() or args.mb <= 0 or args.runs < 1 or not 0 <= args.loss < 1:
        print(f"live_crosscheck.py: {why or 'bad arguments: --scenario must exist, --mb and --runs be positive, 0 <= --loss < 1'}",
              file=sys.stderr)
        return 2
    hetpath.validate(args.scenario)  # errors name the file given, not the bench's copy
    size = int(args.mb * 1e6)
    result: dict = {"load_before": os.getloadavg(), "mb": args.mb, "loss": args.loss, "sim": [], "emu": []}
    with tempfile.TemporaryDirectory(prefix="hp-bench-cross-") as tmp:
        work = Path(tmp)
        scenario, data = prepared(work, args.scenario, size, args.loss)
        link = data["link"][0]
        if data["flow"][0]["from"] != link["a"] or data["flow"][0]["to"] != link["b"]:
            print(f"live_crosscheck.py: {args.scenario}: the flow must go from the link's a node to its b node",
                  file=sys.stderr)
            return 2
        rate = _rate_bps(scenario, link["name"])
        for seed in range(1, args.runs + 1):
            s = simulated(scenario, seed, rate)
            e = emulated(work, scenario, link["name"], seed, size, rate, args.timeout)
            result["sim"].append(s)
            result["emu"].append(e)
            print(f"seed {seed}: simulated {s['goodput_bps'] / 1e6:.3f} Mbit/s, emulated {e['goodput_bps'] / 1e6:.3f} Mbit/s",
                  flush=True)
    return live_cli.finish(result, _print, args.json)


def _rate_bps(scenario: Path, link: str) -> float:
    """The link's rate as the engine reads it (a run's summary), not parsed here."""
    r = hetpath.run(scenario, seed=1)
    return float(next(d["rate_bps"] for d in r.summary["links"] if d["name"] == link))


def _print(result: dict) -> None:
    def med(rows: list[dict], key: str) -> str:
        vals = [r[key] for r in rows if r[key] is not None]
        return "-" if not vals else f"{statistics.median(vals):.4g}"

    print(f"\n{result['mb']:g} MB, loss {result['loss']}; medians over {len(result['sim'])} seeds")
    print("| | goodput Mbit/s | time s | utilization a->b | channel losses | queue drops | retransmissions "
          "| left slow start at s | its ssthresh kB | complete |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, rows in (("hetpath run (simulated CUBIC)", result["sim"]), ("hetpath emulate (kernel CUBIC)", result["emu"])):
        good = [r["goodput_bps"] / 1e6 for r in rows]
        print(f"| {name} | {statistics.median(good):.3f} ({min(good):.3f}-{max(good):.3f}) | {med(rows, 'seconds')} "
              f"| {med(rows, 'utilization')} | {med(rows, 'channel_lost')} | {med(rows, 'queue_drops')} "
              f"| {med(rows, 'retransmissions')} | {med(rows, 'ss_exit_s')} | {med(rows, 'ss_exit_ssthresh_kb')} "
              f"| {sum(r['complete'] for r in rows)}/{len(rows)} |")
    print(f"load average before {result['load_before'][0]:.2f}, after {result['load_after'][0]:.2f}")


if __name__ == "__main__":
    live_cli.run(main)
