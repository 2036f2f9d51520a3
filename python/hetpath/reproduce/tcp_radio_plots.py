"""Figures for the tcp-radio reproduction, in the spirit of seed 003's figures:
time-sequence diagrams (Figs. 4-8), normalized throughput per transfer size (Figs. 9-12,
18, 20-23) and gain over NewReno per link rate (Figs. 13-17, 19, 24-28).  Values the
paper states in its text are drawn as crosses in their protocol's colour."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import pandas as pd

from .. import sweep as sweep_mod
from ..plots import Note, figure, legend, log_if_wide, save, series_figure
from ..figure_data import paper_artist
from .common import Finding

COLORS = {"newreno": "tab:red", "westwood+": "tab:orange", "tcp-radio": "tab:blue",
          "tcp-radio-newrto": "tab:green", "ideal": "black"}
#: Axis labels with units, per grid axis and metric.
LABELS = {
    "size": "transfer size (KB = 1000 bytes)",
    "bandwidth": "link rate (bit/s)",
    "normalized_throughput": "normalized throughput (fraction of link rate)",
    "gain_pct": "gain over NewReno (%)",
}


def paper_marker(ax: Any, x: float, y: float, color: str, first: bool) -> None:
    """A value the paper states, as a cross in its protocol's colour; the first one
    of a figure carries the legend entry that says so."""
    paper_artist(ax.plot(x, y, marker="X", linestyle="none", markersize=8, color=color, markeredgecolor="black",
                         markeredgewidth=0.6, zorder=6,
                         label="paper (text), in its protocol's colour" if first else None))


def paper_span(ax: Any, x: float, lo: float, hi: float, color: str, first: bool) -> None:
    """A range the paper states over several points, as a thick translucent bar at one of them."""
    paper_artist(ax.plot([x, x], [lo, hi], color=color, linewidth=5, alpha=0.45, solid_capstyle="butt", zorder=5,
                         label="paper's range (text), in its protocol's colour" if first else None))


def _bars(found: list[Finding], metric: str, experiment: str, fixed: tuple[str, str], axis: tuple[str, list[str]],
          title: str, path: Path, formats: Sequence[str], note: Optional[Note]) -> list[Path]:
    """Grouped bars: one group per value of ``axis``, one bar per protocol, CI whiskers;
    "n/a" where no run completed (or, for the gain, no NewReno run to pair with)."""
    from matplotlib.transforms import blended_transform_factory

    xname, xs = axis
    fig, (ax,) = figure(title, LABELS[xname], LABELS[metric])
    protos = [p for p in COLORS if any(f.protocol == p and f.metric == metric for f in found)]
    width = 0.8 / max(1, len(protos))
    bottom = blended_transform_factory(ax.transData, ax.transAxes)
    values, missing, stated, spanned = [], False, False, False
    for j, proto in enumerate(protos):
        labelled = False
        for i, x in enumerate(xs):
            f = next((f for f in found if f.experiment == experiment and f.protocol == proto and f.metric == metric
                      and f.params.get(fixed[0]) == fixed[1] and f.params.get(xname) == x), None)
            if f is None:
                continue
            pos = i - 0.4 + width * (j + 0.5)
            if f.ours is not None:
                ax.bar(pos, f.ours, width, color=COLORS[proto], label=None if labelled else proto,
                       yerr=f.ci95 or 0, capsize=2, error_kw={"elinewidth": 0.8})
                labelled = True
                values.append(f.ours)
            else:
                ax.text(pos, 0.01, "n/a", transform=bottom, rotation=90, ha="center", va="bottom",
                        color=COLORS[proto], fontsize="x-small")
                missing = True
            for p in f.paper:
                if p.range is not None:
                    paper_span(ax, pos, *p.range, COLORS[proto], not spanned)
                    spanned = True
                    values += list(p.range)
                elif p.value is not None:
                    paper_marker(ax, pos, p.value, COLORS[proto], not stated)
                    stated = True
                    values.append(p.value)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_xlim(-0.5, len(xs) - 0.5)
    if metric == "gain_pct" and values:
        ax.axhline(0, color="0.3", linewidth=0.8)
    elif not log_if_wide([ax], values):
        ax.set_ylim(bottom=0)
    if missing:
        what = "no completed run, or\nno NewReno run to pair" if metric == "gain_pct" else "no run completed"
        ax.text(1.02, 0.0, f"n/a: {what}", transform=ax.transAxes, fontsize="x-small", va="bottom")
    legend(ax)
    return save(fig, path, formats, note)


def write_all(found: list[Finding], spec: sweep_mod.Sweep, out: Path, sequences: dict[str, dict[str, pd.DataFrame]],
              formats: Sequence[str] = ("png",), note: Optional[Note] = None) -> list[Path]:
    labels = {a.name: a.labels for a in spec.axes}
    sizes, bws = labels["size"], labels["bandwidth"]
    tests = sorted({f.experiment for f in found})
    written: list[Path] = []
    for test in tests:
        for bw in bws:
            written += _bars(found, "normalized_throughput", test, ("bandwidth", bw), ("size", sizes),
                             f"Normalized throughput at {bw}bit/s, channel {test}", out / f"throughput_{test}_{bw}.png",
                             formats, note)
        for size in sizes:
            written += _bars(found, "gain_pct", test, ("size", size), ("bandwidth", bws),
                             f"Gain over NewReno, {size} transfers, channel {test}", out / f"gain_{test}_{size}.png",
                             formats, note)
    from .tcp_radio import SEQUENCE_FIGURES

    for fig_name, bw, size, channel in SEQUENCE_FIGURES:
        runs = sequences.get(fig_name, {})
        written += series_figure(
            f"Data delivered over time, {bw}bit/s, {size}, channel {channel}, seed 1 "
            f"(paper Fig. {int(fig_name.removeprefix('fig'))})", "time (s)",
            "data delivered (kB = 1000 bytes)",
            [(proto, s["time_s"], s["bytes_delivered"] / 1000) for proto, s in runs.items()],
            out / f"{fig_name}_sequence_{bw}_{size}.png", formats, colors=COLORS, log=False, note=note)
    return written
