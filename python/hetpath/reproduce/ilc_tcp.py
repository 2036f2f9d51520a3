"""Seed 002 (Chinta and Helal): ILC-TCP's State Manager against standard Tahoe and Reno
for a mobile TCP sender through link disconnections and Mobile IP handoffs.

The experiments are ``scenarios/ilc-tcp/experiments.toml`` over ``base.toml``, one
sweep per experiment of section 4.  Per run: the transfer time, from the flow's start
to the last byte at the correspondent host.  The improvement of an ILC variant is
``(T_tcp - T_ilc) / T_tcp * 100`` (the percentage of Tables 1-9), paired with the
standard TCP of the same base (Tahoe or Reno) on the same seed, hence the same
disconnection times and advertisement phases.  Runs that do not complete are counted,
never averaged in.
"""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd

from .. import _toml
from .. import sweep as sweep_mod
from ..runner import run_text
from ..stats import mean_ci95
from ..outdir import write_csv
from .common import Context, Finding, attach, load_paper

NAME = "ilc-tcp"
TITLE = "seed 002: ILC-TCP for a mobile TCP sender through disconnections and Mobile IP handoffs"
TABLE_METRIC = "transfer_time_s"
QUICK_SEEDS = 3
#: Protocol labels in experiments.toml are "<variant>/<base>".
VARIANTS = ["tcp", "ilc-tcp1", "ilc-tcp2"]


def experiments(ctx: Context) -> dict[str, sweep_mod.Sweep]:
    found = sweep_mod.load_experiments(ctx.scenarios / "experiments.toml")
    seeds = ctx.seeds or (QUICK_SEEDS if ctx.quick else None)
    if seeds is not None:
        for spec in found.values():
            spec.seeds = list(range(1, seeds + 1))
    return found


def experiment_info(ctx: Context) -> dict[str, dict[str, Any]]:
    """Section and table of each experiment, for reports."""
    path = ctx.scenarios / "experiments.toml"
    doc = _toml.loads(path.read_text(encoding="utf-8"), str(path))
    return {k: {"section": v.get("section", ""), "table": v.get("table", "")} for k, v in doc["experiment"].items()}


def grid(ctx: Context) -> dict[str, sweep_mod.Sweep]:
    return experiments(ctx)


def label_order(specs: dict[str, sweep_mod.Sweep]) -> dict[str, list[str]]:
    order: dict[str, list[str]] = {}
    for spec in specs.values():
        for a in spec.axes:
            order.setdefault(a.name, [])
            order[a.name] += [x for x in a.labels if x not in order[a.name]]
    return order


def findings(raw: pd.DataFrame, spec: sweep_mod.Sweep, experiment: str) -> list[Finding]:
    raw = raw.copy()
    raw[["variant", "base"]] = raw["protocol"].str.split("/", n=1, expand=True)
    axes = [a.name for a in spec.axes]
    key = axes + ["base", "seed"]
    ref = raw.loc[raw["variant"] == "tcp", key + ["completion_s"]].rename(columns={"completion_s": "t_tcp"})
    raw = raw.merge(ref, on=key, how="left")
    raw["improvement"] = (raw["t_tcp"] - raw["completion_s"]) / raw["t_tcp"] * 100
    out = []
    for labels, g in raw.groupby(axes + ["variant", "base"], sort=False):
        *point, variant, base = labels
        params = dict(zip(axes, point), base=base)
        done = g["completed"]
        not_done = int((~done).sum())
        mean, ci, _ = mean_ci95(g.loc[done, "completion_s"])
        out.append(Finding(experiment, variant, params, "transfer_time_s", mean, ci, len(g), not_done))
        if variant != "tcp":
            paired = g.loc[done & g["t_tcp"].notna(), "improvement"]
            mean, ci, _ = mean_ci95(paired)
            out.append(Finding(experiment, variant, params, "improvement_pct", mean, ci, len(g), not_done))
    return out


def reproduce(ctx: Context) -> list[Finding]:
    specs = experiments(ctx)
    plans = {name: sweep_mod.plan(spec) for name, spec in specs.items()}
    tasks = [t for p in plans.values() for t in p]
    ctx.note(f"{NAME}: {len(tasks)} runs over {len(specs)} experiments "
             f"({len(next(iter(specs.values())).seeds)} seeds per point)")
    raw = sweep_mod.run(ctx.runs(tasks), ctx.backend, ctx.progress, store=ctx.store)
    # One flow is reported per run, so rows are tasks, in task order.
    assert len(raw) == len(tasks)
    found: list[Finding] = []
    frames = []
    start = 0
    for name, spec in specs.items():
        part = raw.iloc[start:start + len(plans[name])].reset_index(drop=True)
        start += len(plans[name])
        found += findings(part, spec, name)
        frames.append(part.assign(experiment=name))
    if ctx.out_dir is not None:
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        write_csv(pd.concat(frames, ignore_index=True), ctx.out_dir / "runs.csv")
        from . import ilc_tcp_plots

        attach(found, load_paper(ctx.scenarios / "paper.toml"), label_order(specs))
        ctx.note(f"{NAME}: cwnd trace runs, then the figures")
        written = ilc_tcp_plots.write_all(found, ctx.out_dir, cwnd_traces(specs["exp4"]), ctx.formats,
                                          note=lambda msg: ctx.note(f"{NAME}: {msg}"))
        ctx.note(f"{NAME}: wrote runs.csv and {len(written)} figure files to {ctx.out_dir}")
    return found


def cwnd_traces(spec: sweep_mod.Sweep, seed: int = 1, disconnections: str = "3") -> dict[str, pd.DataFrame]:
    """cwnd and data in flight over time, one run per protocol (Reno base), at one point
    of ``spec``."""
    one = copy.deepcopy(spec)
    for axis in one.axes:
        k = axis.labels.index(disconnections)
        axis.labels, axis.overrides = [axis.labels[k]], [axis.overrides[k]]
    one.seeds = [seed]
    one.protocols = {p: v for p, v in one.protocols.items() if p.endswith("/reno")}
    out = {}
    for task in sweep_mod.plan(one):
        result = run_text(task.text, task.source, seed=seed)
        out[task.protocol] = result.flow_series[["time_s", "cwnd_bytes", "in_flight_bytes", "rto_s", "bytes_delivered"]]
    return out


def summary_frame(found: list[Finding]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = [
        {"experiment": f.experiment, "protocol": f.protocol, **f.params, "metric": f.metric, "ours": f.ours,
         "ci95": f.ci95, "runs": f.seeds, "not_completed": f.aborted}
        for f in found
    ]
    return pd.DataFrame(rows)
