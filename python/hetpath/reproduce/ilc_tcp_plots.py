"""PNG plots for the ilc-tcp reproduction: transfer time against disconnection length
(Tables 1-3), improvement against the number of disconnections (Figs. 9 and 10, Tables
4-5), improvement per speed and cell layout (Tables 6-9), and the data in flight through
three disconnections with and without ILC-TCP.  The paper's values are black crosses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .common import Finding
from .tcp_radio_plots import _figure

STYLE = {
    ("tcp", "tahoe"): ("tab:red", "--"), ("tcp", "reno"): ("tab:red", "-"),
    ("ilc-tcp1", "tahoe"): ("tab:orange", "--"), ("ilc-tcp1", "reno"): ("tab:orange", "-"),
    ("ilc-tcp2", "tahoe"): ("tab:blue", "--"), ("ilc-tcp2", "reno"): ("tab:blue", "-"),
}


def _series(found: list[Finding], experiment: str, metric: str, axis: str) -> dict[tuple[str, str], list[Finding]]:
    out: dict[tuple[str, str], list[Finding]] = {}
    for f in found:
        if f.experiment == experiment and f.metric == metric and axis in f.params:
            out.setdefault((f.protocol, f.params["base"]), []).append(f)
    return out


def _lines(found: list[Finding], experiment: str, metric: str, axis: str, title: str, path: Path,
           where: dict[str, str] | None = None) -> Path:
    where = where or {}
    fig, ax = _figure(title, axis, metric.replace("_", " "))
    labels: list[str] = []
    for f in found:
        if f.experiment == experiment and axis in f.params and f.params[axis] not in labels:
            labels.append(f.params[axis])
    x = {lab: i for i, lab in enumerate(labels)}
    stated: dict[Any, tuple[float, float]] = {}
    for (variant, base), fs in _series(found, experiment, metric, axis).items():
        fs = [f for f in fs if all(f.params.get(k) == v for k, v in where.items()) and f.ours is not None]
        if not fs:
            continue
        color, dash = STYLE[(variant, base)]
        ax.errorbar([x[f.params[axis]] for f in fs], [f.ours for f in fs], yerr=[f.ci95 or 0 for f in fs],
                    color=color, linestyle=dash, marker="o", markersize=3, capsize=2, label=f"{variant} ({base})")
        for f in fs:
            for p in f.paper:
                if p.value is not None:
                    stated[(id(p))] = (x[f.params[axis]], p.value)
    if stated:
        px, py = zip(*stated.values())
        ax.scatter(px, py, marker="x", color="black", zorder=5, label="paper")
    ax.set_xticks(range(len(labels)), labels)
    ax.legend(fontsize="small", ncol=2)
    fig.savefig(path, dpi=110)
    return path


def _in_flight(traces: dict[str, pd.DataFrame], path: Path) -> Path:
    """Data in flight, which is what the sender actually keeps out: cwnd itself grows
    past the 20-segment receive window that limits it."""
    fig, ax = _figure("Data in flight through three 3 s disconnections (section 4.4 setup, Reno, seed 1)",
                      "time (s)", "in flight (segments of 1000 B)")
    for proto, s in traces.items():
        variant, base = proto.split("/")
        color, _ = STYLE[(variant, base)]
        ax.step(s["time_s"], s["in_flight_bytes"] / 1000, where="post", color=color, label=proto, linewidth=1)
    ax.legend(fontsize="small")
    fig.savefig(path, dpi=110)
    return path


def write_all(found: list[Finding], out: Path, traces: dict[str, pd.DataFrame]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = [
        _lines(found, "exp1", "transfer_time_s", "disconnect",
               "Table 1: 10 MB, two handoffs (link + Mobile IP)", out / "table1_transfer_time.png"),
        _lines(found, "exp2", "transfer_time_s", "disconnect",
               "Table 2: 500 KB, one link disconnection, 2 Mb/s", out / "table2_transfer_time.png"),
        _lines(found, "exp3", "transfer_time_s", "disconnect",
               "Table 3: 500 KB, one link disconnection, 0.5 Mb/s", out / "table3_transfer_time.png"),
        _lines(found, "exp4", "improvement_pct", "disconnections",
               "Fig. 9 (Table 4): improvement, 2 MB, 3 s disconnections", out / "fig09_improvement.png"),
        _lines(found, "exp5", "improvement_pct", "disconnections",
               "Fig. 10 (Table 5): improvement, 2 MB, 1 s disconnections, 100 ms links",
               out / "fig10_improvement.png"),
    ]
    for ranges in ("overlap", "gap-4m", "gap-10m", "gap-25m"):
        written.append(_lines(found, "exp6", "improvement_pct", "speed",
                              f"Tables 6-9: improvement of a moving host, cells {ranges}",
                              out / f"table6-9_{ranges}.png", where={"ranges": ranges}))
    if traces:
        written.append(_in_flight(traces, out / "in_flight_trace.png"))
    return written
