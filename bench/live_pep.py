#!/usr/bin/env python3
"""Goodput of PEPs over the emulated GEO link, on the end-to-end testbed.

    client --veth-- gwA ══ 10 Mbit/s, 300 ms each way (bench/data/live-geo.toml) ══ gwB --veth-- server

The client sends ``--mb`` MB (default 20; 1 MB = 10^6 bytes) to the server with Python
sockets; goodput is the bytes over the time from just before the client's connect to
the server's last read (one monotonic clock for every namespace). The server hashes
what it got and the bench checks it against what was sent (SHA-256). Each cell is
``--runs`` runs (default 3), each on a fresh testbed (no TCP metrics cache carried
over) with its own channel seed (run k uses seed k for every variant), at each loss
rate of ``--loss`` (default 0, 0.5%, 1%: a Bernoulli channel on both directions of the
link). Variants (``--variants``):

- ``cubic``, ``bbr``: kernel TCP end to end with that congestion control (the client's
  socket; the server only ACKs). No fq qdisc here: BBR paces itself (internal pacing).
- ``pep``: ``hetpath pep`` in integrated mode in gwA, the gateway on the client's side
  of the link. It splits each connection into the client leg (client -> gwA over the
  veth, the client's CUBIC) and the server leg (gwA -> server, across the emulated link,
  ``server_congestion = "cubic"``; the client leg ``client_congestion = "cubic"``): the
  satellite hop is inside the server leg, which is kernel CUBIC from gwA; the client
  sees a LAN RTT.
- ``pep-bbr``: the same with ``server_congestion = "bbr"``.
- ``gateway``: a ``hetpath pep`` in gateway mode in gwA and in gwB, the satellite leg
  between them (hetpath-proto's TCP, paced Hybla in the issue's plan). Gateway mode
  is refused until it lands: the variant is then skipped with the daemon's message.
  ``--gateway-config-a/-b FILE`` give the two configurations (``{CLIENT_NET}``,
  ``{SERVER_NET}``, ``{GW_A}``, ``{GW_B}`` and ``{KEY_FILE}`` are replaced); without
  them, ``gateway_configs`` below writes its defaults (paced Hybla, shaped to 10 Mbit/s,
  after contrib/pep/pep-gateway-{a,b}.toml as gateway mode was being built). The
  transfer starts once gwA's first session with gwB is confirmed (a Noise handshake,
  about one satellite round trip after both start; its wait is recorded as
  ``session_s``), as a tunnel that is already up would carry it.
- ``pepsal``: PEPsal (built from source by bench/build_pepsal.sh; ``--pepsal BIN``) in
  gwA with the same TPROXY interception (an nft table this bench installs there). Its
  legs use the namespace's default congestion control, which a new namespace inherits
  from the host (recorded as ``default_cc``; BBR on this machine) and may set only to
  one in the host's ``tcp_allowed_congestion_control``: this bench leaves the host
  alone. This PEPsal shows the server gwA's address, not the client's.

Prints a table (median, min, max goodput per cell, and how many runs completed) and
writes every run as JSON (``--json``). Timing depends on load: ``os.getloadavg()`` is
recorded before and after. Linux, as root, with nft and hetpath-live built.

    sudo .venv/bin/python bench/live_pep.py --mb 2 --runs 1          # a quick check
    sudo .venv/bin/python bench/live_pep.py --json out/pep.json       # the issue's set
    sudo .venv/bin/python bench/live_pep.py --variants gateway --gateway-config-a A.toml --gateway-config-b B.toml
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import hetpath
from hetpath import _toml, live, testbed
from hetpath.errors import HetpathError
from hetpath.testbed import Testbed

import live_cli  # bench/, beside this script

HERE = Path(__file__).parent
TRAFFIC = str(HERE / "live_traffic.py")
SCENARIO = HERE / "data" / "live-geo.toml"
PORT = 5001
DEFAULT_VARIANTS = ("cubic", "bbr", "pep", "pep-bbr", "gateway", "pepsal")
ALL_VARIANTS = ("cubic", "bbr", "pep", "pep-bbr", "gateway", "pepsal")


class Skip(Exception):
    """This variant cannot run here; the message says why."""


def lossy(work: Path, base: Path, p: float) -> Path:
    """`base` with a Bernoulli channel of probability `p` on both directions of its link."""
    data = _toml.loads(base.read_text(), str(base))
    if p > 0:
        data["link"][0]["channel"] = {"model": "bernoulli", "p": p}
    out = work / f"geo-{p}.toml"
    out.write_text(_toml.dumps(data))
    return out


def integrated_config(work: Path, far_cc: str) -> Path:
    cfg = work / f"pep-{far_cc}.toml"
    cfg.write_text(f"""mode = "integrated"
listen_port = 7070
metrics = "127.0.0.1:9470"
server_congestion = "{far_cc}"
client_congestion = "cubic"
max_connections = 16
buffer_bytes = 4194304

[match]
sources = ["{testbed.CLIENT_NET}"]
ports = [{PORT}]
""")
    return cfg


def gateway_configs(work: Path, a: Optional[Path], b: Optional[Path]) -> tuple[Path, Path]:
    """The two gateways' configurations: the files given with --gateway-config-a/-b
    (placeholders {CLIENT_NET}, {SERVER_NET}, {GW_A}, {GW_B}, {KEY_FILE} are filled in),
    or the defaults below, written after the gateway helper's contrib/pep/
    pep-gateway-{a,b}.toml as they stood while gateway mode was being built: paced
    Hybla on the satellite leg, shaped to the link's 10 Mbit/s, 600 ms round trip."""
    key = work / "gateway.key"
    key.write_text(secrets.token_hex(32) + "\n")
    key.chmod(0o600)
    values = {"CLIENT_NET": testbed.CLIENT_NET, "SERVER_NET": testbed.SERVER_NET, "GW_A": live.ADDR_A,
              "GW_B": live.ADDR_B, "KEY_FILE": str(key)}
    default_a = f"""mode = "gateway"
role = "a"
listen_port = 7070
metrics = "127.0.0.1:9470"
buffer_bytes = 4194304
memory_limit = "2GiB"
[match]
sources = ["{{CLIENT_NET}}"]
destinations = ["{{SERVER_NET}}"]
ports = [{PORT}]
[gateway]
peer = "{{GW_B}}:4850"
listen = "{{GW_A}}:4850"
key_file = "{{KEY_FILE}}"
aead = "chacha20-poly1305"
congestion = "hybla"
pacing = "hybla"
rate_bps = 10000000
rtt_ms = 600
"""
    default_b = f"""mode = "gateway"
role = "b"
metrics = "127.0.0.1:9470"
buffer_bytes = 4194304
memory_limit = "2GiB"
server_congestion = "cubic"
[match]
sources = ["{{CLIENT_NET}}"]
destinations = ["{{SERVER_NET}}"]
ports = [{PORT}]
[gateway]
peer = "{{GW_A}}:4850"
listen = "{{GW_B}}:4850"
key_file = "{{KEY_FILE}}"
aead = "chacha20-poly1305"
congestion = "hybla"
rate_bps = 10000000
"""
    out = []
    for side, given, default in (("a", a, default_a), ("b", b, default_b)):
        text = given.read_text() if given else default
        for k, v in values.items():
            text = text.replace("{" + k + "}", v)
        path = work / f"gateway-{side}.toml"
        path.write_text(text)
        out.append(path)
    return out[0], out[1]


def _pep(tb: Testbed, cfg: Path, gw: str, work: Path):  # type: ignore[no-untyped-def]
    try:
        return tb.pep(cfg, gw, log=work / f"pep-{gw}.log").__enter__()
    except HetpathError as e:
        raise Skip(f"hetpath pep refused {cfg.name} in {gw}: {e}") from None


def start_pepsal(tb: Testbed, binary: str, work: Path) -> None:
    """PEPsal in gwA on port 5000, behind an nft TPROXY table like hetpath pep's."""
    rules = f"""table ip pepsal_bench {{
  chain prerouting {{
    type filter hook prerouting priority mangle; policy accept;
    meta l4proto tcp socket transparent 1 meta mark set 1 accept
    ip saddr {testbed.CLIENT_NET} tcp dport {PORT} counter tproxy to :5000 meta mark set 1 accept
  }}
}}
"""
    nft = work / "pepsal.nft"
    nft.write_text(rules)
    for argv in (["nft", "-f", str(nft)], ["ip", "rule", "add", "fwmark", "1", "lookup", "100"],
                 ["ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", "100"]):
        res = tb.run("gwA", argv, capture_output=True, text=True)
        if res.returncode != 0:
            raise Skip(f"PEPsal's interception: {' '.join(argv)}: {res.stderr.strip()}")
    log = open(work / "pepsal.log", "w")  # noqa: SIM115 (the daemon's stdout, for the testbed's life)
    tb.popen("gwA", [binary, "-p", "5000"], stdout=log, stderr=subprocess.STDOUT)
    testbed.wait_listening(tb, "gwA", 5000, tries=200)


def one_run(work: Path, scenario: Path, variant: str, size: int, timeout: float, args: argparse.Namespace,
            seed: int) -> dict:
    out = work / f"out-{variant}-{time.monotonic_ns()}"
    session_s = None
    cc = "bbr" if variant == "bbr" else "cubic"
    with Testbed(scenario, "sat", out=out, seed=seed) as tb:
        default_cc = tb.run("gwA", ["sysctl", "-n", "net.ipv4.tcp_congestion_control"], capture_output=True,
                            text=True).stdout.strip()
        if variant in ("pep", "pep-bbr"):
            _pep(tb, integrated_config(work, "bbr" if variant == "pep-bbr" else "cubic"), "gwA", work)
        elif variant == "gateway":
            a, b = gateway_configs(work, args.gateway_config_a, args.gateway_config_b)
            _pep(tb, b, "gwB", work)
            _pep(tb, a, "gwA", work)
            session_s = _wait_session(tb)
        elif variant == "pepsal":
            start_pepsal(tb, args.pepsal, work)
        sink = tb.popen("server", [sys.executable, TRAFFIC, "sink", str(PORT), str(timeout), "--hash"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        testbed.wait_listening(tb, "server", PORT, tries=200)
        sender = tb.popen("client", [sys.executable, TRAFFIC, "send", testbed.SERVER, str(PORT), str(size), "--cc", cc],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        got_out, got_err = sink.communicate(timeout=timeout + 30)
        split = _split_evidence(tb, variant)
        if sink.returncode != 0:
            raise RuntimeError(f"the server failed: {got_err.strip()}")
        got = json.loads(got_out)
        try:
            sent_out, sent_err = sender.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            sent_out, sent_err = "", "still sending at the deadline"
    sent = json.loads(sent_out) if sent_out.strip() else None
    if sent is None:
        # An incomplete run: goodput over the deadline, from the server's side.
        return {"complete": False, "bytes": got["bytes"], "goodput_bps": got["bytes"] * 8 / timeout, "split": split,
                "error": sent_err.strip()[-200:]}
    elapsed = got["t_end"] - sent["t0"]
    ok = got["complete"] and got["bytes"] == size and got["sha256"] == sent["sha256"]
    return {"complete": bool(ok), "bytes": got["bytes"], "seconds": elapsed, "goodput_bps": got["bytes"] * 8 / elapsed,
            "cc": sent["cc"], "intact": got["sha256"] == sent["sha256"], "peer": got["peer"], "split": split,
            "default_cc": default_cc, "session_s": session_s,
            "link": (tb.summary or {}).get("links")}


def _metrics(tb: Testbed, ns: str) -> str:
    code = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9470/', timeout=5).read().decode())"
    return tb.run(ns, [sys.executable, "-c", code], capture_output=True, text=True, timeout=30).stdout


def _wait_session(tb: Testbed, limit: float = 20.0) -> Optional[float]:
    """Gateway mode: seconds until gwA's first session with gwB is confirmed (its Noise
    handshake, one satellite round trip after both started), so that the transfer is
    timed on a running tunnel, as it is on one that needs no handshake; None for a
    daemon without handshakes (no such metric) or none within `limit`. The first
    connection of a new run waits that long once (docs/live.md, "Datagrams")."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        text = _metrics(tb, "gwA")
        if "hetpath_pep_handshakes_total" not in text and "hetpath_pep_connections_total" in text:
            return None
        done = [x for x in text.splitlines() if x.startswith('hetpath_pep_handshakes_total{outcome="completed"}')]
        if done and int(done[0].split()[-1]) > 0:
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def _split_evidence(tb: Testbed, variant: str) -> Optional[str]:
    """What shows the PEP took the connection: hetpath pep's accepted count, or the
    packets PEPsal's TPROXY rule sent to it; None for end-to-end variants."""
    if variant in ("pep", "pep-bbr", "gateway"):
        code = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9470/', timeout=5).read().decode())"
        res = tb.run("gwA", [sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
        line = [x for x in res.stdout.splitlines() if 'outcome="accepted"' in x]
        return line[0] if line else f"no metrics: {res.stderr.strip()[-200:]}"
    if variant == "pepsal":
        res = tb.run("gwA", ["nft", "list", "table", "ip", "pepsal_bench"], capture_output=True, text=True)
        line = [x.strip() for x in res.stdout.splitlines() if "tproxy" in x]
        return line[0] if line else res.stderr.strip()
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=20.0, help="MB (10^6 bytes) per transfer (default 20)")
    ap.add_argument("--runs", type=int, default=3, help="runs per cell (default 3)")
    ap.add_argument("--loss", default="0,0.005,0.01", help="loss probabilities, comma-separated (default 0,0.005,0.01)")
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                    help=f"comma-separated, of {', '.join(ALL_VARIANTS)} (default {','.join(DEFAULT_VARIANTS)})")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds a transfer may take (default 900)")
    ap.add_argument("--scenario", type=Path, default=SCENARIO, help="the link (default bench/data/live-geo.toml; link 'sat')")
    ap.add_argument("--gateway", action="store_true", help="add the gateway variant to --variants if it is not there")
    ap.add_argument("--gateway-config-a", type=Path, help="gateway mode's configuration for gwA")
    ap.add_argument("--gateway-config-b", type=Path, help="gateway mode's configuration for gwB")
    ap.add_argument("--pepsal", help="the PEPsal binary (bench/build_pepsal.sh); without it the variant is skipped")
    ap.add_argument("--json", type=Path, help="also write every run here")
    args = ap.parse_args()
    problems = _check(args)
    if problems:
        for p in problems:
            print(f"live_pep.py: {p}", file=sys.stderr)
        return 2
    hetpath.validate(args.scenario)  # errors name the file given, not the bench's copy
    variants = args.variants.split(",")
    if args.gateway and "gateway" not in variants:
        variants.append("gateway")
    losses = [float(x) for x in args.loss.split(",")]
    size = int(args.mb * 1e6)
    result: dict = {"load_before": os.getloadavg(), "mb": args.mb, "runs": args.runs, "cells": []}
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="hp-bench-pep-") as tmp:
        work = Path(tmp)
        for p in losses:
            scenario = lossy(work, args.scenario, p)
            for v in variants:
                if v in skipped:
                    continue
                if v == "pepsal" and not args.pepsal:
                    skipped[v] = "no --pepsal binary (bench/build_pepsal.sh builds one)"
                    continue
                runs = []
                for k in range(args.runs):
                    try:
                        # Run k's channel draws come from seed k, the same for every
                        # variant: one seed for all runs would repeat one loss pattern.
                        runs.append(one_run(work, scenario, v, size, args.timeout, args, seed=k + 1))
                    except Skip as e:
                        skipped[v] = str(e)
                        break
                    r = runs[-1]
                    print(f"loss {p:<6} {v:<8} run {k + 1}: {r['goodput_bps'] / 1e6:7.3f} Mbit/s"
                          f"{'' if r['complete'] else ' (INCOMPLETE)'}", flush=True)
                if runs:
                    result["cells"].append(_cell(v, p, runs))
    result["skipped"] = skipped
    return live_cli.finish(result, _print, args.json)


def _check(args: argparse.Namespace) -> list[str]:
    problems = []
    why = live.unavailable()
    if why:
        problems.append(f"cannot run: {why}")
    if shutil.which("nft") is None:
        problems.append("nft (nftables) is not installed; the PEPs intercept with it")
    bad = [v for v in args.variants.split(",") if v not in ALL_VARIANTS]
    if bad:
        problems.append(f"--variants: unknown {', '.join(bad)}; expected some of {', '.join(ALL_VARIANTS)}")
    try:
        losses = [float(x) for x in args.loss.split(",")]
        if any(not 0 <= x < 1 for x in losses):
            raise ValueError
    except ValueError:
        problems.append(f"--loss: expected probabilities in [0, 1) separated by commas, got '{args.loss}'")
    if args.mb <= 0 or args.runs < 1 or args.timeout <= 0:
        problems.append("--mb, --runs and --timeout must be positive")
    for name in ("gateway_config_a", "gateway_config_b", "scenario"):
        path = getattr(args, name)
        if path is not None and not path.is_file():
            problems.append(f"--{name.replace('_', '-')}: {path}: no such file")
    if args.pepsal and not os.access(args.pepsal, os.X_OK):
        problems.append(f"--pepsal: {args.pepsal}: not an executable")
    return problems


def _cell(variant: str, p: float, runs: list[dict]) -> dict:
    g = [r["goodput_bps"] for r in runs]
    return {"variant": variant, "loss": p, "median_bps": statistics.median(g), "min_bps": min(g), "max_bps": max(g),
            "complete": sum(r["complete"] for r in runs), "runs": runs}


def _print(result: dict) -> None:
    print(f"\n{result['mb']:g} MB client -> server, {result['runs']} runs per cell; goodput in Mbit/s")
    print("| variant | loss | median | min | max | complete |")
    print("|---|---|---|---|---|---|")
    for c in result["cells"]:
        label = c["variant"]
        if label == "pepsal":
            label += f" (legs: {c['runs'][0].get('default_cc') or '?'})"
        print(f"| {label} | {100 * c['loss']:g}% | {c['median_bps'] / 1e6:.3f} | {c['min_bps'] / 1e6:.3f} "
              f"| {c['max_bps'] / 1e6:.3f} | {c['complete']}/{len(c['runs'])} |")
    for v, why in result["skipped"].items():
        print(f"skipped {v}: {why}")
    print(f"load average before {result['load_before'][0]:.2f}, after {result['load_after'][0]:.2f}")


if __name__ == "__main__":
    live_cli.run(main)
