#!/usr/bin/env python3
"""How faithful and how fast the live link emulator (`hetpath emulate`'s core) is.

For each link rate (1, 10, 100, 1000 Mbit/s by default), on a fresh emulated link
between two namespaces:

- **rate**: kernel TCP (CUBIC) sends as fast as it can for ``--seconds``; its goodput
  after a warm-up against the link's ideal goodput, rate x MSS / 1500 (each 1500-byte
  packet carries MSS bytes of payload). TCP's own losses at the queue and their
  retransmissions count against it, so the link's rate alone is also measured with UDP
  offered at 110% of it (the same one-BDP queue, at least 100 packets): the a -> b
  direction's transmitted IP bytes per second from the core's own link series
  (``link_series.csv``) during the blast, against the rate, with what the sender
  offered, what the receiver got, and the drops (the link's queue; the kernel's TUN
  queue, when the core read too late) beside it;
- **delay**: ICMP echoes at an idle link; the RTT's p50 and p99 minus the ideal
  2 x delay + 2 x serialisation of 84 bytes;
- **loss**: UDP datagrams over a Bernoulli channel of probability ``--loss-p`` at half
  the link's rate (at most 4000/s); the loss rate the receiver saw, and the channel's
  own (the core's count of channel losses over the packets it judged), minus p, in
  standard errors sqrt(p (1 - p) / n). A gap between the two is the hosts' (a socket
  buffer overrun on a loaded machine), not the emulator's.

Then the **throughput per core**: kernel TCP through a link with no rate limit (100 Gbit/s,
no delay, a 10 000-packet queue), the packets and bits the core forwarded per second of
wall time and per second of its own CPU time (/proc/PID/stat utime + stime).

A script, not a test: it prints a table and writes JSON (``--json``). Timing figures
depend on the machine's load; the script records ``os.getloadavg()`` before and after.
Linux, as root, with ``hetpath-live`` built (scripts/setup.sh).

    sudo .venv/bin/python bench/live_emulator.py                   # the full set
    sudo .venv/bin/python bench/live_emulator.py --quick            # shorter, for checking it runs
    sudo .venv/bin/python bench/live_emulator.py --rates 10,100 --json out/emu.json
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from hetpath import live

import live_cli  # bench/, beside this script

TRAFFIC = str(Path(__file__).with_name("live_traffic.py"))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def scenario(dir: Path, name: str, rate_bps: float, delay_ms: float, queue_pkts: int, channel: str = "",
             seed: int = 1) -> Path:
    p = dir / f"{name}.toml"
    p.write_text(f"""[scenario]
name = "{name}"
duration = "3600s"
seed = {seed}
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "{rate_bps:.0f}bps"
delay = "{delay_ms}ms"
queue = "{queue_pkts}pkt"
{channel}
""")
    return p


def traffic(emu: live.Emulation, side: str, *args: str, timeout: float = 300) -> object:
    res = emu.run(side, [sys.executable, TRAFFIC, *args], capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f"live_traffic.py {' '.join(args)} failed: {res.stderr.strip()}")
    return json.loads(res.stdout) if res.stdout.strip() else None


def background(emu: live.Emulation, side: str, *args: str) -> subprocess.Popen:
    return emu.popen(side, [sys.executable, TRAFFIC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)


def cpu_seconds(pid: int) -> float:
    """utime + stime of process `pid` (all its threads), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def queue_for(rate_bps: float, delay_ms: float) -> int:
    """A queue of one bandwidth-delay product (2 x delay), at least 100 packets, so that
    TCP can fill the link without the queue being the measurement."""
    bdp = rate_bps * 2 * delay_ms / 1e3 / 8 / 1500
    return max(100, int(bdp) + 1)


def tcp_rate(work: Path, rate: float, delay_ms: float, seconds: float, warmup: float) -> dict:
    sc = scenario(work, f"rate{rate:.0f}", rate, delay_ms, queue_for(rate, delay_ms))
    with live.Emulation(sc, "l", out=_out(work), pcap=False) as emu:
        sink = background(emu, "b", "rate-sink", "5001", str(seconds), str(warmup))
        traffic(emu, "a", "blast", live.ADDR_B, "5001", str(seconds))
        r = json.loads(sink.communicate(timeout=60)[0])
    goodput = r["bytes"] * 8 / r["seconds"] if r["seconds"] else 0.0
    ideal = rate * r["mss"] / 1500
    return {"goodput_bps": goodput, "ideal_bps": ideal, "error": goodput / ideal - 1, "mss": r["mss"]}


def udp_rate(work: Path, rate: float, delay_ms: float, seconds: float, warmup: float) -> dict:
    """The link's own rate, without TCP's dynamics: UDP offered at 110% of it, the
    delivered IP bytes per second (payload + 28 bytes of headers) after the warm-up
    against the rate."""
    size = 1472
    sc = scenario(work, f"udp{rate:.0f}", rate, delay_ms, queue_for(rate, delay_ms))
    out = _out(work)
    with live.Emulation(sc, "l", out=out, pcap=False) as emu:
        sink = background(emu, "b", "udp-rate-sink", "5004", str(seconds), str(warmup))
        sent = traffic(emu, "a", "udp-blast", live.ADDR_B, "5004", str(seconds), str(1.1 * rate), str(size))
        r = json.loads(sink.communicate(timeout=60)[0])
        kernel_drops = tun_tx_dropped(emu)
    received = r["datagrams"] * (size + 28) * 8 / r["seconds"] if r["seconds"] else 0.0
    ab = (emu.summary or {})["links"][0]
    offered = (sent["sent"] - sent["errors"]) * (size + 28) * 8 / seconds
    link = link_rate(out / "link_series.csv", warmup, seconds)
    return {"link_bps": link, "error": link / rate - 1 if link else float("nan"), "received_bps": received,
            "offered_bps": offered, "send_errors": sent["errors"], "queue_drops": ab["drops"],
            "tun_tx_dropped": kernel_drops}


def tun_tx_dropped(emu: live.Emulation) -> Optional[int]:
    """Packets side a's kernel dropped at its TUN device (the core did not read them in
    time: its device queue overflowed), from ``ip -s -j link``."""
    res = emu.run("a", ["ip", "-s", "-j", "link", "show", live.DEVICE["a"]], capture_output=True, text=True)
    try:
        return int(json.loads(res.stdout)[0]["stats64"]["tx"]["dropped"])
    except (ValueError, KeyError, IndexError):
        return None


def link_rate(series: Path, warmup: float, seconds: float) -> float:
    """The a -> b direction's transmission rate from the core's link series (tx_bytes,
    IP bytes, sampled every 100 ms): over the blast, from `warmup` after its first byte
    to 0.3 s before its end. The emulator's own rate, whatever the hosts keep up with."""
    with open(series, newline="") as f:
        rows = [(float(r["time_s"]), int(r["tx_bytes"])) for r in csv.DictReader(f) if r["from"] == "a"]
    start = next((t for t, b in rows if b > 100_000), None)
    if start is None:
        return 0.0
    window = [(t, b) for t, b in rows if start + warmup <= t <= start + seconds - 0.3]
    if len(window) < 2:
        return 0.0
    (t0, b0), (t1, b1) = window[0], window[-1]
    return (b1 - b0) * 8 / (t1 - t0)


def delay(work: Path, rate: float, delay_ms: float, count: int) -> dict:
    sc = scenario(work, f"delay{rate:.0f}", rate, delay_ms, 100)
    with live.Emulation(sc, "l", out=_out(work), pcap=False) as emu:
        rtts = traffic(emu, "a", "ping", live.ADDR_B, str(count), "0.02")
    ideal = 2 * delay_ms / 1e3 + 2 * 84 * 8 / rate
    errs = sorted(r - ideal for r in rtts)
    q = statistics.quantiles(errs, n=100, method="inclusive") if len(errs) > 1 else errs * 99
    return {"echoes": len(rtts), "ideal_rtt_s": ideal, "p50_error_s": statistics.median(errs), "p99_error_s": q[98]}


def loss(work: Path, rate: float, p: float, count: int) -> dict:
    size = 64  # UDP payload; 92 bytes of IP
    pps = min(4000.0, 0.5 * rate / (92 * 8))
    channel = f'channel = {{ model = "bernoulli", p = {p} }}'
    # A seed per rate: the same seed would give every rate the same channel draws.
    sc = scenario(work, f"loss{rate:.0f}", rate, 5, 1000, channel, seed=int(rate) % 1000003 + 1)
    with live.Emulation(sc, "l", out=_out(work), pcap=False) as emu:
        sink = background(emu, "b", "udp-sink", "5002", str(count / pps + 3))
        traffic(emu, "a", "udp-source", live.ADDR_B, "5002", str(count), str(pps), str(size))
        got = set(json.loads(sink.communicate(timeout=120)[0]))
    measured = (count - len(got)) / count
    se = math.sqrt(p * (1 - p) / count)
    # The channel's own verdicts (the core's count) against what the receiver missed:
    # the difference is the hosts' (a socket buffer overrun on a loaded machine).
    ab = (emu.summary or {})["links"][0]
    channel_rate = ab["lost_packets"] / ab["tx_packets"] if ab["tx_packets"] else float("nan")
    return {"packets": count, "p": p, "measured": measured, "error": measured - p, "se": se,
            "error_in_se": (measured - p) / se, "channel_lost": ab["lost_packets"], "channel_judged": ab["tx_packets"],
            "channel_rate": channel_rate, "channel_error_in_se": (channel_rate - p) / se, "pps": pps}


def throughput(work: Path, seconds: float) -> dict:
    """The core forwarding TCP as fast as it can: no rate limit, no delay."""
    sc = scenario(work, "unlimited", 100e9, 0, 10000)
    with live.Emulation(sc, "l", out=_out(work), pcap=False) as emu:
        pid = emu.core_pid
        assert pid is not None
        sink = background(emu, "b", "rate-sink", "5003", str(seconds), "1.0")
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        traffic(emu, "a", "blast", live.ADDR_B, "5003", str(seconds))
        cpu1, t1 = cpu_seconds(pid), time.monotonic()
        r = json.loads(sink.communicate(timeout=60)[0])
    links = (emu.summary or {}).get("links", [])
    packets = sum(d["tx_packets"] for d in links)
    bits = sum(d["tx_bytes"] for d in links) * 8
    wall, cpu = t1 - t0, cpu1 - cpu0
    return {"wall_s": wall, "core_cpu_s": cpu, "core_cpu_share": cpu / wall, "packets": packets,
            "pps": packets / wall, "gbps": bits / wall / 1e9,
            "pps_per_cpu_s": packets / cpu if cpu else None, "gbps_per_cpu_s": bits / cpu / 1e9 if cpu else None,
            "tcp_goodput_bps": r["bytes"] * 8 / r["seconds"] if r["seconds"] else 0.0,
            "note": "packets and bytes count both directions (data and ACKs); the wall time includes the sender's start"}


_outs = iter(range(1_000_000))


def _out(work: Path) -> Path:
    d = work / f"out{next(_outs)}"
    d.mkdir()
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="1,10,100,1000", help="link rates in Mbit/s, comma-separated (default 1,10,100,1000)")
    ap.add_argument("--delay-ms", type=float, default=10.0, help="one-way delay of the rate and delay runs (default 10)")
    ap.add_argument("--seconds", type=float, default=10.0, help="TCP blast length (default 10)")
    ap.add_argument("--echoes", type=int, default=200, help="ICMP echoes per rate (default 200)")
    ap.add_argument("--loss-p", type=float, default=0.01, help="Bernoulli loss probability (default 0.01)")
    ap.add_argument("--loss-packets", type=int, default=20000, help="UDP datagrams per rate (default 20000)")
    ap.add_argument("--quick", action="store_true", help="short runs (3 s blasts, 50 echoes, 3000 datagrams)")
    ap.add_argument("--no-throughput", action="store_true", help="skip the unlimited-rate throughput run")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    why = live.unavailable()
    if why:
        print(f"live_emulator.py: cannot run: {why}", file=sys.stderr)
        return 2
    try:
        rates = [float(r) * 1e6 for r in args.rates.split(",")]
    except ValueError:
        print(f"live_emulator.py: --rates: expected Mbit/s numbers separated by commas, got '{args.rates}'", file=sys.stderr)
        return 2
    if args.quick:
        args.seconds, args.echoes, args.loss_packets = 3.0, 50, 3000
    warmup = min(2.0, args.seconds / 3)
    result: dict = {"load_before": os.getloadavg(), "args": {k: str(v) for k, v in vars(args).items()}, "rates": []}
    with tempfile.TemporaryDirectory(prefix="hp-bench-emu-") as tmp:
        work = Path(tmp)
        for rate in rates:
            row = {"rate_mbps": rate / 1e6,
                   "rate": tcp_rate(work, rate, args.delay_ms, args.seconds, warmup),
                   "udp": udp_rate(work, rate, args.delay_ms, args.seconds, warmup),
                   "delay": delay(work, rate, args.delay_ms, args.echoes),
                   "loss": loss(work, rate, args.loss_p, args.loss_packets)}
            result["rates"].append(row)
            print(_line(row), flush=True)
        if not args.no_throughput:
            result["throughput"] = throughput(work, max(args.seconds, 3.0))
    return live_cli.finish(result, _print, args.json)


def _line(row: dict) -> str:
    r, u, d, loss = row["rate"], row["udp"], row["delay"], row["loss"]
    return (f"{row['rate_mbps']:>7g} Mbit/s | TCP {r['goodput_bps'] / 1e6:9.3f} of {r['ideal_bps'] / 1e6:9.3f} Mbit/s "
            f"({100 * r['error']:+6.2f}%) | UDP: link {u['link_bps'] / 1e6:9.3f} Mbit/s ({100 * u['error']:+6.2f}%), "
            f"offered {u['offered_bps'] / 1e6:.1f}, received {u['received_bps'] / 1e6:.1f}; dropped: "
            f"{u['queue_drops']} by the link's queue, {u['tun_tx_dropped']} by the kernel before the core read them | RTT error p50 {d['p50_error_s'] * 1e3:+7.3f} ms p99 {d['p99_error_s'] * 1e3:+7.3f} ms "
            f"| loss {loss['measured']:.4f} end to end, {loss['channel_rate']:.4f} by the channel, vs {loss['p']} "
            f"({loss['error_in_se']:+.2f} / {loss['channel_error_in_se']:+.2f} SE)")


def _print(result: dict) -> None:
    print()
    print("| rate | TCP goodput / ideal | TCP error | link rate under UDP (offered / received) | link rate error "
          "| RTT error p50 | RTT error p99 | loss end to end / by the channel (p, n) | loss error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in result["rates"]:
        r, u, d, loss = row["rate"], row["udp"], row["delay"], row["loss"]
        print(f"| {row['rate_mbps']:g} Mbit/s | {r['goodput_bps'] / 1e6:.3f} / {r['ideal_bps'] / 1e6:.3f} Mbit/s "
              f"| {100 * r['error']:+.2f}% | {u['link_bps'] / 1e6:.3f} Mbit/s ({u['offered_bps'] / 1e6:.1f} / "
              f"{u['received_bps'] / 1e6:.1f}) | {100 * u['error']:+.2f}% | {d['p50_error_s'] * 1e3:+.3f} ms | {d['p99_error_s'] * 1e3:+.3f} ms "
              f"| {loss['measured']:.4f} / {loss['channel_rate']:.4f} ({loss['p']}, n={loss['packets']}) "
              f"| {loss['error_in_se']:+.2f} / {loss['channel_error_in_se']:+.2f} SE |")
    t = result.get("throughput")
    if t:
        print(f"\nunlimited link: {t['pps']:,.0f} packets/s, {t['gbps']:.3f} Gbit/s over {t['wall_s']:.1f} s wall; "
              f"the core used {t['core_cpu_s']:.2f} s CPU ({100 * t['core_cpu_share']:.0f}% of a core): "
              f"{t['pps_per_cpu_s']:,.0f} packets and {t['gbps_per_cpu_s']:.3f} Gbit per CPU-second; "
              f"TCP goodput {t['tcp_goodput_bps'] / 1e9:.3f} Gbit/s")
    print(f"load average before {result['load_before'][0]:.2f}, after {result['load_after'][0]:.2f}")


if __name__ == "__main__":
    live_cli.run(main)
