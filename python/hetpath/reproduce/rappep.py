"""Seed 004 (Li and Yousefi'zadeh): RAPPEP, router-assisted congestion control run
inside a split-TCP PEP, against CUBIC end to end, a Hybla PEP (PEPsal) and raw XCP, VCP
and MPCP, on the satellite testbed of Fig. 2 (``scenarios/rappep/base.toml``).

Per run: the five flows' completion times (AFCT, their mean: section IV), Jain's
fairness index of their goodputs, and the last completion.  Runs are paired across
protocols: the same seed gives the same start times and side-link delays.  One run per
protocol and experiment (seed 1) also gives the time series of the figures: bottleneck
utilization (Figs. 3-5), each flow's share of the bottleneck (Figs. 6-8) and the cwnd at
the FTP servers (Fig. 9).
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from .. import _toml
from .. import sweep as sweep_mod
from ..runner import run_text
from ..stats import mean_ci95
from ..outdir import write_csv
from .common import Context, Finding, PaperValue, attach, load_paper

NAME = "rappep"
TITLE = "seed 004: RAPPEP (XCP / MPCP inside a split-TCP PEP) over a GEO hop"
TABLE_METRIC = "afct_s"
SEEDS, QUICK_SEEDS = 10, 3
FLOWS = [f"f{i}" for i in range(1, 6)]
#: Per run: mean and last completion at the receiver, Jain's index of the goodputs, and
#: the slowest sender's time until its last byte was acknowledged.
METRICS = ("afct_s", "last_s", "jain", "sender_done_s")
#: Figs. 4-5's "oscillatory behavior": a claim in paper.toml, not a metric of ours (``testable``).
OSCILLATION = "utilization_oscillation"
#: Section IV: "Five FTP flows start ... at random times"; the window is not given.
START_WINDOW_S = 5.0

#: Section IV: 0 and 1% loss (Figs. 3-5); the fairness run has 0.1% and side-link delays
#: drawn from [0, 800] ms (Figs. 6-8).  (loss, max side delay in ms)
EXPERIMENTS: dict[str, tuple[float, float]] = {
    "loss0": (0.0, 0.0),
    "loss1": (0.01, 0.0),
    "fairness": (0.001, 800.0),
}
QUICK_EXPERIMENTS = ["loss0", "loss1"]


def _pep(cc: str, monitored: bool) -> list[dict[str, Any]]:
    """Section IV: "PEPsal runs at R1 and R2" with the same algorithm, each watching the
    link it sends data over (R1 the satellite hop, R2 the receiver's side). Named
    ``<cc>-<node>`` so that ``sensitivity.toml`` can select one (``agent.<name>.``)."""
    agents = []
    for node, link in (("r1", "sat"), ("r2", "rx")):
        agent: dict[str, Any] = {"kind": "split-pep", "name": f"{cc}-{node}", "node": node, "cc": cc}
        if monitored:
            agent["link"] = link
        agents.append(agent)
    return agents


def _router(kind: str) -> list[dict[str, Any]]:
    return [{"kind": kind, "name": kind, "node": "r1", "link": "sat"}]


#: protocol -> (end-host controller, agents).  Section IV: "TCP CUBIC is used at end
#: nodes for PEP experiments".
PROTOCOLS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "cubic": ("cubic", []),
    "tcp-pep": ("cubic", _pep("hybla", False)),
    "vcp": ("vcp", _router("vcp-router")),
    "xcp": ("xcp", _router("xcp-router")),
    "mpcp": ("mpcp", _router("mpcp-router")),
    "xcp-pep": ("cubic", _pep("xcp-pep", True)),
    "mpcp-pep": ("cubic", _pep("mpcp-pep", True)),
}


def grid(ctx: Context) -> list[sweep_mod.Task]:
    """One task per experiment, protocol and seed."""
    base_path = ctx.scenarios / "base.toml"
    base = _toml.loads(base_path.read_text(encoding="utf-8"), str(base_path))
    n = ctx.seeds or (QUICK_SEEDS if ctx.quick else SEEDS)
    exps = QUICK_EXPERIMENTS if ctx.quick else list(EXPERIMENTS)
    tasks = []
    for exp in exps:
        for proto in PROTOCOLS:
            for seed in range(1, n + 1):
                text = scenario_text(base, exp, proto, seed)
                tasks.append(sweep_mod.Task((("experiment", exp),), proto, seed, text, str(base_path)))
    return tasks


def scenario_text(base: dict[str, Any], exp: str, proto: str, seed: int) -> str:
    loss, side_max_ms = EXPERIMENTS[exp]
    cc, agents = PROTOCOLS[proto]
    doc = copy.deepcopy(base)
    # The same draws for every protocol: runs are paired by seed.
    rnd = random.Random(1_000_003 * seed + 4)
    for i, name in enumerate(FLOWS, start=1):
        sweep_mod.set_key(doc, f"flow.{name}.cc", cc)
        sweep_mod.set_key(doc, f"flow.{name}.start", f"{rnd.uniform(0, START_WINDOW_S):.6f}s")
        if side_max_ms > 0:
            sweep_mod.set_key(doc, f"link.side{i}.delay", f"{rnd.uniform(0, side_max_ms):.6f}ms")
    if loss > 0:
        sweep_mod.set_key(doc, "link.sat.ab", {"channel": {"model": "bernoulli", "p": loss}})
    if agents:
        doc["agent"] = copy.deepcopy(agents)
    return _toml.dumps(doc)


def jain(x: pd.Series) -> float:
    """Jain's fairness index: (sum x)^2 / (n sum x^2)."""
    return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if len(x) and (x**2).sum() > 0 else float("nan")


def per_run(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per run: AFCT, last completion, Jain's index, the slowest sender's time
    until its last byte was acknowledged (Fig. 9's "finishes in 5 seconds"), runs not
    completed."""
    rows = []
    for (exp, proto, seed), g in raw.groupby(["experiment", "protocol", "seed"], sort=False):
        done = bool(g["completed"].all())
        rows.append({
            "experiment": exp, "protocol": proto, "seed": seed, "completed": done,
            "afct_s": g["completion_s"].mean() if done else float("nan"),
            "last_s": g["completion_s"].max() if done else float("nan"),
            "jain": jain(g["goodput_bps"]) if done else float("nan"),
            "sender_done_s": g["sender_done_s"].max() if done else float("nan"),
            "retransmissions": g["retransmissions"].sum(),
        })
    return pd.DataFrame(rows)


def findings(raw: pd.DataFrame) -> list[Finding]:
    runs = per_run(raw)
    out = []
    for (exp, proto), g in runs.groupby(["experiment", "protocol"], sort=False):
        loss, side = EXPERIMENTS[exp]
        params = {"loss": loss, "side_delay_max_ms": side}
        not_done = int((~g["completed"]).sum())
        for metric in METRICS:
            mean, ci, _ = mean_ci95(g.loc[g["completed"], metric])
            out.append(Finding(exp, proto, params, metric, mean, ci, len(g), not_done))
    return out


def label_order(_tasks: Any) -> dict[str, list[str]]:
    return {"experiment": list(EXPERIMENTS), "protocol": list(PROTOCOLS)}


def reproduce(ctx: Context) -> list[Finding]:
    tasks = grid(ctx)
    ctx.note(f"{NAME}: {len(tasks)} runs of five 5 MB transfers")
    raw = sweep_mod.run(ctx.runs(tasks), ctx.backend, ctx.progress, store=ctx.store)
    found = findings(raw)
    if ctx.out_dir is not None:
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        write_csv(raw, ctx.out_dir / "runs.csv")
        from . import rappep_validation

        table, verdicts = rappep_validation.validate(ctx.scenarios)
        write_csv(table, ctx.out_dir / "validation.csv")
        failed = [claim for claim, holds in verdicts if not holds]
        ctx.note(f"{NAME}: router models against their own papers: {len(verdicts) - len(failed)} "
                 f"of {len(verdicts)} claims hold (validation.csv)")
        for claim in failed:
            ctx.note(f"{NAME}: does not hold: {claim}")
        from . import rappep_plots

        traced = [t for t in tasks if t.seed == 1]
        ctx.note(f"{NAME}: {len(traced)} time-series runs, then the figures")
        series = {t: time_series(t) for t in traced}
        # The paper's values, for the crosses of the AFCT figures (the CLI attaches them again).
        attach(found, load_paper(ctx.scenarios / "paper.toml"), label_order(tasks))
        written = rappep_plots.write_all(series, ctx.out_dir, found, ctx.formats,
                                         note=lambda msg: ctx.note(f"{NAME}: {msg}"))
        ctx.note(f"{NAME}: wrote runs.csv and {len(written)} figure files to {ctx.out_dir}")
    return found


def time_series(task: sweep_mod.Task) -> dict[str, pd.DataFrame]:
    """Bottleneck utilization, per-flow bottleneck share and sender cwnd over time."""
    result = run_text(task.text, task.source, seed=task.seed)
    links = result.link_series
    rate = next(link["rate_bps"] for link in result.summary["links"]
                if (link["name"], link["from"]) == ("sat", "r1"))
    ls = links[(links["link"] == "sat") & (links["from"] == "r1")].sort_values("time_s")
    util = pd.DataFrame({
        "time_s": ls["time_s"].to_numpy()[1:],
        "utilization": (ls["tx_bytes"].diff() * 8 / ls["time_s"].diff() / rate).to_numpy()[1:],
    })
    fs = result.flow_series.sort_values(["flow", "time_s"])
    delivered = fs[fs["leg"] == 0]  # one row per flow and sample (every leg has the same)
    share = delivered[["time_s", "flow"]].copy()
    by_flow = delivered.groupby("flow")
    share["share"] = by_flow["bytes_delivered"].diff() * 8 / by_flow["time_s"].diff() / rate
    return {"utilization": util, "share": share.dropna(), "cwnd": fs[[c for c in ("time_s", "flow", "leg", "cwnd_bytes") if c in fs]]}


def summary_frame(found: list[Finding]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = [
        {"experiment": f.experiment, "protocol": f.protocol, "metric": f.metric, "ours": f.ours,
         "ci95": f.ci95, "runs": f.seeds, "not_completed": f.aborted}
        for f in found
    ]
    return pd.DataFrame(rows)


def testable(p: PaperValue, found: list[Finding], scenarios: Path) -> Optional[str]:
    """Why the setup cannot decide a claim, or None. Fig. 9's "finishes in 5 seconds"
    times the senders to the PEP at R1: a sender done before any byte could cross the
    satellite hop was acknowledged for its whole file by the PEP's buffer, so the check
    measures that buffer, not the controller, and cannot fail. Figs. 4-5's oscillation
    claims name no measure, and only one run per protocol (seed 1) records the
    utilization trace: no confidence interval could decide them."""
    if p.metric == OSCILLATION:
        return ("the paper defines no measure of oscillation, and the utilization trace is recorded "
                "for one run (seed 1) only: no 95% CI to order")
    if p.metric != "sender_done_s":
        return None
    path = scenarios / "base.toml"
    base = _toml.loads(path.read_text(encoding="utf-8"), str(path))
    delay = str(next(link for link in base["link"] if link["name"] == "sat")["delay"])
    unit = next(u for u in ("ms", "us", "s") if delay.endswith(u))
    one_way_s = float(delay[: -len(unit)]) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]
    done = [f.ours for f in found if any(q is p for q in f.paper) and f.ours is not None]
    if done and max(done) < one_way_s:
        return (f"every sender was done within {max(done):.3g} s, before a byte could cross the "
                f"{one_way_s:g} s satellite hop: the PEP's buffer took each whole file")
    return None
