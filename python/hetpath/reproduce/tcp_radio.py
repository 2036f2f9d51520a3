"""Seed 003 (de Cola and Marchese): TCP-radio and TCP-radio-newRTO against NewReno,
Westwood+ and the ideal protocol on an emulated tactical radio link.

The grid is ``scenarios/tcp-radio/sweep.toml`` over ``base.toml``.  Per run:
normalized throughput (Eq. 7) = size * 8 / T / B with B the nominal link rate and T
the end-to-end service time (flow start to the last byte at the receiver); gain over
NewReno (Eq. 8) = (T_NewReno - T) / T_NewReno * 100, paired on the same seed and
(alpha, beta) pair, hence on the same channel realisation.  Each test pools its (alpha,
beta) pairs, as the paper's "the registered results have been averaged" does.  Runs
that do not complete (aborted, or still running at the horizon) are counted, never
averaged in.
"""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd

from .. import sweep as sweep_mod
from ..runner import run_text
from ..stats import mean_ci95
from ..outdir import write_csv
from .common import Context, Finding, attach, load_paper

NAME = "tcp-radio"
TITLE = "seed 003: TCP-radio / TCP-radio-newRTO over a tactical radio link"

PROTOCOLS = ["newreno", "westwood+", "tcp-radio", "tcp-radio-newrto", "ideal"]
BANDWIDTH_BPS = {"16k": 16e3, "64k": 64e3, "256k": 256e3, "1M": 1e6}
TABLE_METRIC = "normalized_throughput"
QUICK_SEEDS = 5
#: Stationary loss probability of each test (sections 6.1-6.3).
PI1 = {"test1": 0.1, "test2": 0.3, "test3": 0.5}


def _test(channel_label: str) -> str:
    return channel_label.split("/")[0]


def grid(ctx: Context) -> sweep_mod.Sweep:
    spec = sweep_mod.load(ctx.scenarios / "sweep.toml")
    if ctx.seeds is not None:
        spec.seeds = list(range(1, ctx.seeds + 1))
    elif ctx.quick:
        spec.seeds = list(range(1, QUICK_SEEDS + 1))
    return spec


def restricted(spec: sweep_mod.Sweep, **labels: str) -> sweep_mod.Sweep:
    """The same sweep with some axes pinned to one label."""
    out = copy.deepcopy(spec)
    for axis in out.axes:
        if axis.name in labels:
            k = axis.labels.index(labels[axis.name])
            axis.labels, axis.overrides = [axis.labels[k]], [axis.overrides[k]]
    return out


def findings(raw: pd.DataFrame, spec: sweep_mod.Sweep) -> list[Finding]:
    raw = raw.copy()
    raw["test"] = raw["channel"].map(_test)
    raw["bw_bps"] = raw["bandwidth"].map(BANDWIDTH_BPS)
    raw["nt"] = raw["size_bytes"] * 8 / raw["completion_s"] / raw["bw_bps"]
    # Eq. 8, paired with NewReno on the same channel realisation (pair and seed).
    key = ["channel", "bandwidth", "size", "seed"]
    ref = raw.loc[raw["protocol"] == "newreno", key + ["completion_s"]].rename(columns={"completion_s": "t_newreno"})
    raw = raw.merge(ref, on=key, how="left")
    raw["gain"] = (raw["t_newreno"] - raw["completion_s"]) / raw["t_newreno"] * 100
    pairs = {t: [c.split("/")[1] for c in next(a for a in spec.axes if a.name == "channel").labels if _test(c) == t]
             for t in sorted(raw["test"].unique())}
    out = []
    for (test, bw, size, proto), g in raw.groupby(["test", "bandwidth", "size", "protocol"], sort=False):
        params = {"bandwidth": bw, "size": size, "pi1": PI1.get(test), "pairs": pairs[test]}
        not_done = int((~g["completed"]).sum())
        for metric, col in (("normalized_throughput", "nt"), ("gain_pct", "gain")):
            if metric == "gain_pct" and proto == "newreno":
                continue
            mean, ci, _ = mean_ci95(g.loc[g["completed"], col])
            out.append(Finding(test, proto, params, metric, mean, ci, len(g), not_done))
    return out


def label_order(spec: sweep_mod.Sweep) -> dict[str, list[str]]:
    return {a.name: a.labels for a in spec.axes}


def reproduce(ctx: Context) -> list[Finding]:
    spec = grid(ctx)
    tasks = sweep_mod.plan(spec)
    ctx.note(f"{NAME}: {len(tasks)} runs ({len(spec.seeds)} seeds per point and (alpha, beta) pair)")
    raw = sweep_mod.run(ctx.runs(tasks), ctx.backend, ctx.progress, store=ctx.store)
    found = findings(raw, spec)
    if ctx.out_dir is not None:
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        write_csv(raw, ctx.out_dir / "runs.csv")
        from . import tcp_radio_plots

        # The paper's values, for the figures' crosses: attached before the figures are
        # drawn (the CLI attaches them again for the comparison).
        attach(found, load_paper(ctx.scenarios / "paper.toml"), label_order(spec))
        ctx.note(f"{NAME}: {len(SEQUENCE_FIGURES)} time-sequence runs, then the figures")
        written = tcp_radio_plots.write_all(found, spec, ctx.out_dir, sequence_runs(spec), ctx.formats,
                                            note=lambda msg: ctx.note(f"{NAME}: {msg}"))
        ctx.note(f"{NAME}: wrote runs.csv and {len(written)} figure files to {ctx.out_dir}")
    return found


# Figs. 4-8: one realisation each (section 5.3): test 1's middle pair for the 1 Mbyte
# transfers per bandwidth, test 3 for Fig. 8 (64 kbit/s, 100 kbytes).
SEQUENCE_FIGURES = [
    ("fig04", "1M", "1000KB", "test1/0.01-0.1"),
    ("fig05", "256k", "1000KB", "test1/0.01-0.1"),
    ("fig06", "64k", "1000KB", "test1/0.01-0.1"),
    ("fig07", "16k", "1000KB", "test1/0.01-0.1"),
    ("fig08", "64k", "100KB", "test3/0.1-0.1"),
]


def sequence_runs(spec: sweep_mod.Sweep, seed: int = 1) -> dict[str, dict[str, pd.DataFrame]]:
    """Delivered bytes over time for each figure and protocol (one run each)."""
    out: dict[str, dict[str, pd.DataFrame]] = {}
    for fig, bw, size, channel in SEQUENCE_FIGURES:
        one = restricted(spec, bandwidth=bw, size=size, channel=channel)
        one.seeds = [seed]
        out[fig] = {}
        for task in sweep_mod.plan(one):
            result = run_text(task.text, task.source, seed=seed)
            series = result.flow_series[["time_s", "bytes_delivered"]]
            flow = result.flows.iloc[0]
            if flow["completion_s"] is not None and not pd.isna(flow["completion_s"]):
                # Samples stop when the run does; end the line at the completion itself.
                last = pd.DataFrame({"time_s": [flow["completion_s"]], "bytes_delivered": [flow["bytes_delivered"]]})
                series = pd.concat([series, last], ignore_index=True)
            out[fig][task.protocol] = series
    return out


def summary_frame(found: list[Finding]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = [
        {"experiment": f.experiment, "protocol": f.protocol, **{k: v for k, v in f.params.items() if k != "pairs"},
         "metric": f.metric, "ours": f.ours, "ci95": f.ci95, "runs": f.seeds, "not_completed": f.aborted}
        for f in found
    ]
    return pd.DataFrame(rows)
