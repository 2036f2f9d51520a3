"""Seed 000 (Kliazovich, Granelli, Pau and Gerla, NGI 2006): APOHN, a subnetwork layer
under an unchanged TCP/IP stack (protocol booster at the sender, STP over the satellite
hop, LLE-TCP over the WLAN), against TCP NewReno with SACK end to end and SaTPEP's split
connection, on section IV's path: the sender, an asymmetric GEO hop (20 Mbit/s down, 6
Mbit/s up, 300 ms each way) to the bridge router, which is the access point of an
802.11b WLAN (Table I) with the receiver on it (``scenarios/apohn/``: ``newreno.toml``,
``satpep.toml``, ``apohn.toml``).

One experiment, ``flows`` (section IV.B, Figs. 8-12): n saturated NewReno+SACK flows of
1460-byte segments from the sender to the receiver for 2000 s, all started at 0, n = 1
.. 10. Per run: the cumulative goodput (bytes the receiver's TCP delivered, per second),
the data packets delivered, the TCP timeouts (every leg of every flow: SaTPEP's include
its WLAN leg's), and the bridge buffer, i.e. the access point's queue toward the
receiver (drops, and the distribution of its 100 ms samples). The change of goodput from
one flow to n flows is taken per seed (same seed, same protocol). The single-flow run of
the first seed also gives the time series of the figures: goodput over time (Fig. 8),
NewReno's cwnd (Fig. 9) and the bridge buffer over time (Fig. 10).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pandas as pd

from .. import _bridge, _toml
from ..stats import mean_ci95
from ..sweep import Task
from ..outdir import write_csv
from ..store import run_stored
from .common import Context, Finding, attach, load_paper

NAME = "apohn"
TITLE = "seed 000: APOHN (booster, STP, LLE-TCP) against NewReno+SACK and SaTPEP over GEO + 802.11b"
TABLE_METRIC = "goodput_mbps"
EXPERIMENT = "flows"
#: Protocol -> its scenario in ``scenarios/apohn``.
PROTOCOLS = {"newreno": "newreno.toml", "satpep": "satpep.toml", "apohn": "apohn.toml"}
#: Fig. 12's x axis: the number of flows (the paper does not list its points; 1-10 ours).
FLOWS = list(range(1, 11))
QUICK_FLOWS = [1, 5, 10]
SEEDS, QUICK_SEEDS = 2, 1
#: Section IV.B: "for the entire 2000 seconds of simulation duration".
DURATION_S, QUICK_DURATION_S = 2000.0, 200.0
#: Section IV.B: "The size of TCP data packet is ... equal to 1460 bytes".
MSS = 1460
#: The figures' run: one flow, this seed.
FIGURE_FLOWS, FIGURE_SEED = 1, 1
#: Fig. 8's goodput over time: delivered bytes per bin of this many seconds.
BIN_S = 10.0
#: The path's round trip without a queue (Fig. 9's capacity line): 300 ms each way over
#: the GEO hop, the WLAN's 1-2 ms besides.
PATH_RTT_S = 0.6
#: The bridge buffer: the WLAN, from its access point, toward the receiver; section IV.B:
#: "limited to 50 packets" (the scenarios' ``[[wlan]] queue``).
WLAN, AP, STATION = "wlan", "bridge", "receiver"
BRIDGE_BUFFER_PKTS = 50
#: Section IV.B's "mainly in the range of 5-7 packets", as a share of the samples.
QUEUE_RANGE = (5, 7)
#: Section IV.B's "timeouts which periodically reduce its throughput down to zero": a
#: bin of this many seconds in which the receiver got no byte (after its first one) is
#: goodput down to zero; a run of such bins is one stall. 1 s is shorter than any RTO
#: (at least 1 s, RFC 6298) plus the 0.6 s round trip, so each timeout can show.
STALL_BIN_S = 1.0
METRICS = ("goodput_mbps", "packets_delivered", "timeouts", "bridge_queue_median", "bridge_queue_mean",
           "bridge_queue_in_5_7", "bridge_drops", "stalls")


def flow_counts(ctx: Context) -> list[int]:
    return QUICK_FLOWS if ctx.quick else FLOWS


def seeds(ctx: Context) -> int:
    return ctx.seeds or (QUICK_SEEDS if ctx.quick else SEEDS)


def load_base(scenarios: Path, protocol: str) -> tuple[dict[str, Any], str]:
    path = scenarios / PROTOCOLS[protocol]
    return _toml.loads(path.read_text(encoding="utf-8"), str(path)), str(path)


def scenario_text(base: dict[str, Any], flows: int, duration_s: float) -> str:
    """The protocol's scenario with ``flows`` copies of its flow ``bulk`` (``bulk2`` ..
    ``bulkN``: same ends, controller and start) and the given duration."""
    doc = copy.deepcopy(base)
    doc.setdefault("scenario", {})["duration"] = f"{duration_s:g}s"
    bulk = next(f for f in doc["flow"] if f["name"] == "bulk")
    for i in range(2, flows + 1):
        extra = copy.deepcopy(bulk)
        extra["name"] = f"bulk{i}"
        doc["flow"].append(extra)
    share_satpep_rate(doc, flows)
    return _toml.dumps(doc)


_RATE_UNITS = {"bps": 1.0, "kbps": 1e3, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def share_satpep_rate(doc: dict[str, Any], flows: int) -> None:
    """SaTPEP gives each connection "a window reflecting the available bandwidth" (its
    abstract): with ``flows`` saturated connections through the terminal, each is paced
    at its share of the satellite rate, not the whole (docs/model-notes.md, "SaTPEP")."""
    for agent in doc.get("agent", []):
        cc = agent.get("cc")
        if isinstance(cc, dict) and cc.get("name") == "satpep" and flows > 1:
            rate = str(cc["rate"])
            unit = next(u for u in sorted(_RATE_UNITS, key=len, reverse=True) if rate.endswith(u))
            bps = float(rate[: -len(unit)]) * _RATE_UNITS[unit]
            cc["rate"] = f"{bps / flows:.0f}bps"


def grid(ctx: Context) -> list[Task]:
    """One task per number of flows, protocol and seed."""
    duration = QUICK_DURATION_S if ctx.quick else DURATION_S
    bases = {p: load_base(ctx.scenarios, p) for p in PROTOCOLS}
    tasks = []
    for n in flow_counts(ctx):
        for proto, (base, source) in bases.items():
            text = scenario_text(base, n, duration)
            for seed in range(1, seeds(ctx) + 1):
                tasks.append(Task((("flows", n),), proto, seed, text, source))
    return tasks


def label_order(_tasks: Any) -> dict[str, list[str]]:
    return {"flows": [str(n) for n in FLOWS], "protocol": list(PROTOCOLS)}


def is_figure_run(task: Task) -> bool:
    return dict(task.point)["flows"] == FIGURE_FLOWS and task.seed == FIGURE_SEED


def jain(x: Any) -> float:
    """Jain's fairness index of the per-flow goodputs: (sum x)^2 / (n sum x^2)."""
    x = np.asarray(x, dtype=float)
    sq = float((x**2).sum())
    return float(x.sum() ** 2 / (len(x) * sq)) if len(x) and sq > 0 else float("nan")


def run_one(task: Task) -> dict[str, Any]:
    """One run: its record, and for the figures' run its compact time series (``series``,
    else None), as plain JSON values for the results store (each series a dict of
    columns). Top level so that workers can pickle it."""
    raw = _bridge.run_text(task.text, task.source, seed=task.seed, series=True)
    s = raw["summary"]
    flows = s["flows"]
    links = raw["series"]["links"]
    # The queue length exists only as samples (the summary keeps its maximum).
    t = np.asarray(links["time_s"], dtype=float)
    pick = np.array([(lk, a, b) == (WLAN, AP, STATION)
                     for lk, a, b in zip(links["link"], links["from"], links["to"])], dtype=bool)
    q_t, q = t[pick], np.asarray(links["queue_pkts"], dtype=float)[pick]
    sampled = q[q_t > 0]  # the sample at 0 is the empty queue before the start
    bridge = next(lk for lk in s["links"] if (lk["name"], lk["from"], lk["to"]) == (WLAN, AP, STATION))
    sat = [lk for lk in s["links"] if lk["name"] == "geo" and lk["to"] == AP]
    goodputs = [f["goodput_bps"] for f in flows]
    run = {
        "flows": len(flows), "protocol": task.protocol, "seed": task.seed,
        "aborted": any(f["aborted"] for f in flows),
        "goodput_mbps": sum(goodputs) / 1e6,
        "packets_delivered": sum(f["bytes_delivered"] for f in flows) / MSS,
        "timeouts": sum(leg["timeouts"] for leg in s["legs"]),
        "retransmissions": sum(leg["retransmissions"] for leg in s["legs"]),
        "jain": jain(goodputs),
        "bridge_drops": bridge["drops"],
        "bridge_queue_mean": float(sampled.mean()) if sampled.size else float("nan"),
        "bridge_queue_median": float(np.median(sampled)) if sampled.size else float("nan"),
        "bridge_queue_p10": float(np.percentile(sampled, 10)) if sampled.size else float("nan"),
        "bridge_queue_p90": float(np.percentile(sampled, 90)) if sampled.size else float("nan"),
        "bridge_queue_in_5_7": float(((sampled >= QUEUE_RANGE[0]) & (sampled <= QUEUE_RANGE[1])).mean())
        if sampled.size else float("nan"),
        "sat_drops": sum(lk["drops"] for lk in sat),
        "stalls": stalls(raw["series"]["flows"], s["sim_time_s"]),
        "sim_time_s": s["sim_time_s"],
        "events": s["events"],
    }
    series = time_series(raw["series"]["flows"], q_t, q, s["sim_time_s"]) if is_figure_run(task) else None
    return {"run": run, "series": series and {name: df.to_dict("list") for name, df in series.items()}}


def time_series(fs: dict[str, list[Any]], q_t: np.ndarray, q: np.ndarray,
                duration_s: float) -> dict[str, pd.DataFrame]:
    """Goodput per ``BIN_S`` bin (every flow together), the cwnd of the leg leaving the
    sender (packets), and the bridge buffer (packets), from one run's series."""
    first = _delivered_by_sender(fs)
    edges = np.arange(0.0, duration_s + BIN_S / 2, BIN_S)
    delivered = np.zeros_like(edges)
    for _, g in first.groupby("flow"):
        delivered += np.interp(edges, g["time_s"].to_numpy(float), g["bytes_delivered"].to_numpy(float))
    goodput = pd.DataFrame({"time_s": edges[1:], "goodput_mbps": np.diff(delivered) * 8 / BIN_S / 1e6})
    cwnd = pd.DataFrame({"time_s": first["time_s"].to_numpy(float), "flow": first["flow"].to_numpy(),
                         "cwnd_pkts": first["cwnd_bytes"].to_numpy(float) / MSS})
    queue = pd.DataFrame({"time_s": q_t, "queue_pkts": q})
    return {"goodput": goodput, "cwnd": cwnd, "queue": queue}


def _delivered_by_sender(fs: dict[str, list[Any]]) -> pd.DataFrame:
    """Each flow's samples of the leg leaving the sender (a split connection has two)."""
    f = pd.DataFrame({k: fs[k] for k in ("time_s", "flow", "leg", "cwnd_bytes", "bytes_delivered")})
    return f[f["leg"] == f.groupby("flow")["leg"].transform("min")]


def stalls(fs: dict[str, list[Any]], duration_s: float) -> int:
    """How often the goodput of every flow together fell to zero: runs of ``STALL_BIN_S``
    bins with no byte delivered, counted after the first byte."""
    # Plain numpy rather than _delivered_by_sender's frame: this runs for every run, and
    # the frame cost a tenth of the reproduction. The same samples, summed in the same
    # (sorted) flow order.
    flow, leg = np.asarray(fs["flow"]), np.asarray(fs["leg"])
    t, d = np.asarray(fs["time_s"], float), np.asarray(fs["bytes_delivered"], float)
    edges = np.arange(0.0, duration_s + STALL_BIN_S / 2, STALL_BIN_S)
    delivered = np.zeros_like(edges)
    for f in np.unique(flow):
        mine = flow == f
        sender = mine & (leg == leg[mine].min())
        delivered += np.interp(edges, t[sender], d[sender])
    got = np.diff(delivered) > 0
    if not got.any():
        return 0
    idle = ~got[int(np.argmax(got)):]
    return int((idle[1:] & ~idle[:-1]).sum())


def findings(runs: pd.DataFrame) -> list[Finding]:
    """Per protocol and number of flows: each metric's mean and 95% CI over seeds, and the
    change of goodput from one flow (per seed; not at one flow itself)."""
    runs = runs.copy()
    one = runs[runs["flows"] == 1].set_index(["protocol", "seed"])["goodput_mbps"]
    runs["change_vs_one"] = [
        g / one[(p, s)] - 1 if (p, s) in one.index and one[(p, s)] > 0 else float("nan")
        for p, s, g in zip(runs["protocol"], runs["seed"], runs["goodput_mbps"])
    ]
    out = []
    for (n, proto), g in runs.groupby(["flows", "protocol"], sort=False):
        params = {"flows": int(n)}
        aborted = int(g["aborted"].sum())
        for metric in METRICS + (("change_vs_one",) if n != 1 else ()):
            mean, ci, _ = mean_ci95(g[metric])
            out.append(Finding(EXPERIMENT, str(proto), params, metric, mean, ci, len(g), aborted))
    order = {p: i for i, p in enumerate(PROTOCOLS)}
    return sorted(out, key=lambda f: (f.params["flows"], order.get(f.protocol, len(order))))


def reproduce(ctx: Context) -> list[Finding]:
    tasks = grid(ctx)
    ns = flow_counts(ctx)
    ctx.note(f"{NAME}: {len(tasks)} runs: {len(PROTOCOLS)} protocols x {len(ns)} flow counts "
             f"({', '.join(map(str, ns))}) x {seeds(ctx)} seeds, "
             f"{QUICK_DURATION_S if ctx.quick else DURATION_S:g} s each")
    results = run_stored(run_one, ctx.runs(tasks), ctx.store, ctx.backend, ctx.progress)
    runs = pd.DataFrame([r["run"] for r in results])
    found = findings(runs)
    if ctx.out_dir is not None:
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        write_csv(runs, ctx.out_dir / "runs.csv")
        from . import apohn_plots

        series = {t.protocol: {name: pd.DataFrame(cols) for name, cols in r["series"].items()}
                  for t, r in zip(tasks, results) if r["series"] is not None}
        # The paper's values, for the figures' markers (the CLI attaches them again).
        attach(found, load_paper(ctx.scenarios / "paper.toml"), label_order(tasks))
        written = apohn_plots.write_all(series, found, ctx.out_dir, ctx.formats,
                                        note=lambda msg: ctx.note(f"{NAME}: {msg}"))
        ctx.note(f"{NAME}: wrote runs.csv and {len(written)} figure files to {ctx.out_dir}")
    return found


def capacity_pkts(found: list[Finding]) -> Optional[float]:
    """Fig. 9's connection capacity in packets: what APOHN moves over the path's round
    trip (its goodput at one flow x ``PATH_RTT_S``) plus the bridge buffer."""
    f = next((f for f in found if f.protocol == "apohn" and f.params.get("flows") == 1
              and f.metric == "goodput_mbps" and f.ours is not None), None)
    if f is None:
        return None
    return f.ours * 1e6 * PATH_RTT_S / (8 * MSS) + BRIDGE_BUFFER_PKTS


def summary_frame(found: list[Finding]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = [
        {"experiment": f.experiment, "flows": f.params.get("flows"), "protocol": f.protocol, "metric": f.metric,
         "ours": f.ours, "ci95": f.ci95, "runs": f.seeds, "aborted": f.aborted}
        for f in found
    ]
    return pd.DataFrame(rows)
