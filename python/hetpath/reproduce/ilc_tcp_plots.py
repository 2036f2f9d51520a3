"""Figures for the ilc-tcp reproduction: transfer time against disconnection length
(Tables 1-3), improvement against the number of disconnections (Figs. 9 and 10, Tables
4-5), improvement per speed and cell layout (Tables 6-9), and the data in flight through
three disconnections with and without ILC-TCP.  The paper's values are crosses in their
protocol's colour.  Each protocol is drawn a little to the side of its grid point, with
its own marker, so that equal results stay visible; the legend names identical ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import pandas as pd

from ..plots import Note, figure, legend, log_if_wide, same_as, save, series_figure
from .common import Finding
from .tcp_radio_plots import paper_marker, paper_span

STYLE = {
    ("tcp", "tahoe"): ("tab:red", "--"), ("tcp", "reno"): ("tab:red", "-"),
    ("ilc-tcp1", "tahoe"): ("tab:orange", "--"), ("ilc-tcp1", "reno"): ("tab:orange", "-"),
    ("ilc-tcp2", "tahoe"): ("tab:blue", "--"), ("ilc-tcp2", "reno"): ("tab:blue", "-"),
}
#: Marker per variant (filled for Reno, hollow for Tahoe) and offset from the grid point.
MARKER = {"tcp": "o", "ilc-tcp1": "s", "ilc-tcp2": "^"}
DODGE = {"tcp": -0.15, "ilc-tcp1": 0.0, "ilc-tcp2": 0.15}
BASE_DODGE = {"tahoe": -0.03, "reno": 0.03}
LABELS = {
    "disconnect": "length of each disconnection (s)",
    "disconnections": "disconnections per transfer (count)",
    "speed": "speed of the mobile host (m/s)",
    "transfer_time_s": "transfer time (s)",
    "improvement_pct": "improvement over standard TCP (%)",
}


def _series(found: list[Finding], experiment: str, metric: str, axis: str) -> dict[tuple[str, str], list[Finding]]:
    out: dict[tuple[str, str], list[Finding]] = {}
    for f in found:
        if f.experiment == experiment and f.metric == metric and axis in f.params:
            out.setdefault((f.protocol, f.params["base"]), []).append(f)
    return out


def _lines(found: list[Finding], experiment: str, metric: str, axis: str, title: str, path: Path,
           formats: Sequence[str], note: Optional[Note], where: dict[str, str] | None = None) -> list[Path]:
    where = where or {}
    fig, (ax,) = figure(title, LABELS[axis], LABELS[metric])
    labels: list[str] = []
    for f in found:
        if f.experiment == experiment and axis in f.params and f.params[axis] not in labels:
            labels.append(f.params[axis])
    x = {lab: i for i, lab in enumerate(labels)}
    stated: dict[int, tuple[float, float, str]] = {}
    spans: dict[int, tuple[float, tuple[float, float], str]] = {}
    drawn: dict[str, Any] = {}
    values: list[float] = []
    for (variant, base), fs in _series(found, experiment, metric, axis).items():
        fs = [f for f in fs if all(f.params.get(k) == v for k, v in where.items()) and f.ours is not None]
        if not fs:
            continue
        color, dash = STYLE[(variant, base)]
        label = f"{variant} ({base})"
        points = [(f.params[axis], f.ours) for f in fs]
        twin = same_as([v for _, v in points], drawn)
        drawn[label] = [v for _, v in points]
        shift = DODGE[variant] + BASE_DODGE[base]
        ax.errorbar([x[f.params[axis]] + shift for f in fs], [f.ours for f in fs], yerr=[f.ci95 or 0 for f in fs],
                    color=color, linestyle=dash, marker=MARKER[variant], markersize=4, capsize=2, linewidth=1,
                    markerfacecolor="white" if base == "tahoe" else color,
                    label=f"{label} = {twin}" if twin else label)
        values += [f.ours for f in fs]
        for f in fs:
            for p in f.paper:
                if p.range is not None:
                    spans[id(p)] = (x[f.params[axis]] + DODGE[variant], p.range, color)
                elif p.value is not None:
                    stated[id(p)] = (x[f.params[axis]] + DODGE[variant], p.value, color)
    for k, (px, py, color) in enumerate(stated.values()):
        paper_marker(ax, px, py, color, k == 0)
        values.append(py)
    for k, (px, (lo, hi), color) in enumerate(spans.values()):
        paper_span(ax, px, lo, hi, color, k == 0)
        values += [lo, hi]
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlim(-0.5, len(labels) - 0.5)
    if metric == "improvement_pct" and values:
        ax.axhline(0, color="0.3", linewidth=0.8)
    else:
        log_if_wide([ax], values)
    legend(ax)
    return save(fig, path, formats, note)


def _in_flight(traces: dict[str, pd.DataFrame], path: Path, formats: Sequence[str],
               note: Optional[Note]) -> list[Path]:
    """Data in flight, which is what the sender actually keeps out: cwnd itself grows
    past the 20-segment receive window that limits it."""
    colors = {proto: STYLE[tuple(proto.split("/"))][0] for proto in traces}  # type: ignore[index]
    return series_figure("Data in flight through three 3 s disconnections (section 4.4 setup, Reno, seed 1)",
                         "time (s)", "in flight (segments of 1000 bytes)",
                         [(proto, s["time_s"], s["in_flight_bytes"] / 1000) for proto, s in traces.items()],
                         path, formats, step=True, colors=colors, log=False, note=note)


def write_all(found: list[Finding], out: Path, traces: dict[str, pd.DataFrame],
              formats: Sequence[str] = ("png",), note: Optional[Note] = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for args in (
        ("exp1", "transfer_time_s", "disconnect",
         "Table 1: 10 MB, two handoffs (link + Mobile IP)", "table1_transfer_time.png"),
        ("exp2", "transfer_time_s", "disconnect",
         "Table 2: 500 KB, one link disconnection, 2 Mb/s", "table2_transfer_time.png"),
        ("exp3", "transfer_time_s", "disconnect",
         "Table 3: 500 KB, one link disconnection, 0.5 Mb/s", "table3_transfer_time.png"),
        ("exp4", "improvement_pct", "disconnections",
         "Fig. 9 (Table 4): improvement, 2 MB, 3 s disconnections", "fig09_improvement.png"),
        ("exp5", "improvement_pct", "disconnections",
         "Fig. 10 (Table 5): improvement, 2 MB, 1 s disconnections, 100 ms links", "fig10_improvement.png"),
    ):
        *head, name = args
        written += _lines(found, *head, out / name, formats, note)
    for ranges in ("overlap", "gap-4m", "gap-10m", "gap-25m"):
        written += _lines(found, "exp6", "improvement_pct", "speed",
                          f"Tables 6-9: improvement of a moving host, cells {ranges}",
                          out / f"table6-9_{ranges}.png", formats, note, where={"ranges": ranges})
    if traces:
        written += _in_flight(traces, out / "in_flight_trace.png", formats, note)
    return written
