"""Figures for the apohn reproduction, after seed 000's Figs. 8-12: goodput over time
with one flow (Fig. 8), NewReno's cwnd against the connection's capacity (Fig. 9), the
bridge buffer over time for NewReno and APOHN (Fig. 10) and its distribution, the data
packets delivered in the simulation time (Fig. 11) and the cumulative goodput per number
of flows (Fig. 12). Time series are one run (one flow, seed 1); bars and Fig. 12 are means
over every seed with 95% CIs. Values the paper states in its text are crosses in their
protocol's colour; nothing is read off its plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ..plots import Note, figure, legend, save
from . import apohn
from ..figure_data import paper_artist
from .common import Finding
from .tcp_radio_plots import paper_marker

#: protocol -> {"goodput", "cwnd", "queue"} of its figures' run.
Series = dict[str, dict[str, pd.DataFrame]]

COLORS = {"newreno": "tab:red", "satpep": "tab:blue", "apohn": "tab:green"}
LABELS = {"newreno": "TCP NewReno+SACK", "satpep": "SaTPEP", "apohn": "APOHN"}


def _label(proto: str) -> str:
    return LABELS.get(proto, proto)


def _stated(found: list[Finding], proto: str, flows: int, metric: str) -> list[Any]:
    f = next((f for f in found if f.protocol == proto and f.params.get("flows") == flows and f.metric == metric), None)
    return f.paper if f is not None else []


def _goodput(series: Series, found: list[Finding], path: Path, formats: Sequence[str],
             note: Optional[Note]) -> list[Path]:
    """Fig. 8: each protocol's goodput per 10 s, one flow, with the paper's averages."""
    fig, (ax,) = figure(f"Fig. 8: goodput, one flow ({apohn.BIN_S:g} s means, seed {apohn.FIGURE_SEED})",
                        "simulated time (s)", "goodput (Mbit/s)")
    first = True
    for proto in apohn.PROTOCOLS:
        if proto not in series:
            continue
        g = series[proto]["goodput"]
        ax.plot(g["time_s"], g["goodput_mbps"], color=COLORS[proto], linewidth=1, label=_label(proto))
        for p in _stated(found, proto, 1, "goodput_mbps"):
            if p.value is not None:
                paper_artist(ax.axhline(p.value, color=COLORS[proto], linestyle=(0, (4, 3)), linewidth=1,
                                        label="paper's stated average (text)" if first else None))
                first = False
    ax.set_ylim(bottom=0)
    legend(ax)
    return save(fig, path, formats, note)


def _cwnd(series: Series, found: list[Finding], path: Path, formats: Sequence[str],
          note: Optional[Note]) -> list[Path]:
    """Fig. 9: NewReno's cwnd (packets) with the connection's capacity: APOHN's goodput
    times the path's round trip, plus the bridge buffer."""
    if "newreno" not in series:
        return []
    c = series["newreno"]["cwnd"]
    fig, (ax,) = figure(f"Fig. 9: TCP NewReno congestion window, one flow (seed {apohn.FIGURE_SEED})",
                        "simulated time (s)", f"cwnd (packets of {apohn.MSS} bytes)")
    ax.step(c["time_s"], c["cwnd_pkts"], where="post", color=COLORS["newreno"], linewidth=0.8, label="cwnd")
    cap = apohn.capacity_pkts(found)
    if cap is not None:
        ax.axhline(cap, color="black", linestyle=(0, (4, 3)), linewidth=1,
                   label=f"capacity: APOHN goodput x {apohn.PATH_RTT_S:g} s\n+ {apohn.BRIDGE_BUFFER_PKTS}-packet "
                         f"bridge buffer ({cap:.0f})")
    ax.set_ylim(bottom=0)
    legend(ax)
    return save(fig, path, formats, note)


def _buffer(series: Series, found: list[Finding], path: Path, formats: Sequence[str],
            note: Optional[Note]) -> list[Path]:
    """Fig. 10: the bridge buffer over time, NewReno and APOHN (the paper shows no PEP)."""
    fig, (ax,) = figure(f"Fig. 10: buffer usage at the bridge router, one flow (seed {apohn.FIGURE_SEED})",
                        "simulated time (s)", "bridge → receiver queue (packets)")
    for proto in ("newreno", "apohn"):
        if proto in series:
            q = series[proto]["queue"]
            ax.step(q["time_s"], q["queue_pkts"], where="post", color=COLORS[proto], linewidth=0.6,
                    label=_label(proto))
    if not ax.lines:
        return []
    lo, hi = apohn.QUEUE_RANGE
    paper_artist(ax.axhspan(lo, hi, color=COLORS["apohn"], alpha=0.15, label=f"paper: APOHN mainly {lo}-{hi} packets"))
    ax.axhline(apohn.BRIDGE_BUFFER_PKTS, color="black", linestyle=(0, (4, 3)), linewidth=1,
               label=f"buffer limit ({apohn.BRIDGE_BUFFER_PKTS} packets)")
    ax.set_ylim(0, apohn.BRIDGE_BUFFER_PKTS * 1.08)
    legend(ax)
    return save(fig, path, formats, note)


def _buffer_hist(series: Series, path: Path, formats: Sequence[str], note: Optional[Note]) -> list[Path]:
    """The bridge buffer's 100 ms samples as a distribution, every protocol."""
    fig, (ax,) = figure(f"Bridge buffer occupancy, one flow (seed {apohn.FIGURE_SEED}): share of 100 ms samples",
                        "bridge → receiver queue (packets)", "share of samples")
    bins = np.arange(-0.5, apohn.BRIDGE_BUFFER_PKTS + 1.5, 1.0)
    for proto in apohn.PROTOCOLS:
        if proto not in series:
            continue
        q = series[proto]["queue"]
        x = q.loc[q["time_s"] > 0, "queue_pkts"].to_numpy(float)
        if x.size:
            h, _ = np.histogram(x, bins=bins)
            ax.step(bins[:-1] + 0.5, h / x.size, where="mid", color=COLORS[proto], linewidth=1.2,
                    label=f"{_label(proto)} (median {np.median(x):g})")
    lo, hi = apohn.QUEUE_RANGE
    paper_artist(ax.axvspan(lo - 0.5, hi + 0.5, color=COLORS["apohn"], alpha=0.15,
                            label=f"paper: APOHN mainly {lo}-{hi}"))
    ax.set_ylim(bottom=0)
    legend(ax)
    return save(fig, path, formats, note)


def _delivered(found: list[Finding], path: Path, formats: Sequence[str], note: Optional[Note]) -> list[Path]:
    """Fig. 11: TCP data packets delivered to the receiver, one flow, every seed."""
    mine = [f for f in found if f.params.get("flows") == 1 and f.metric == "packets_delivered"]
    fig, (ax,) = figure("Fig. 11: data packets delivered in the simulation time, one flow",
                        "protocol", f"packets delivered (millions, {apohn.MSS}-byte segments)")
    for i, f in enumerate(mine):
        if f.ours is not None:
            ax.bar(i, f.ours / 1e6, 0.6, color=COLORS.get(f.protocol, "0.5"), yerr=(f.ci95 or 0) / 1e6,
                   capsize=3, error_kw={"elinewidth": 0.8})
            ax.annotate(f"{f.ours / 1e6:.3g}", (i, f.ours / 1e6), textcoords="offset points", xytext=(0, 4),
                        ha="center", fontsize="small")
    ax.set_xticks(range(len(mine)), [_label(f.protocol) for f in mine])
    ax.set_xlim(-0.5, len(mine) - 0.5)
    ax.set_ylim(bottom=0)
    return save(fig, path, formats, note)


def _flows(found: list[Finding], path: Path, formats: Sequence[str], note: Optional[Note]) -> list[Path]:
    """Fig. 12: cumulative goodput per number of flows (mean and 95% CI over seeds), with
    the paper's stated values: its one-flow averages, and at ten flows the change it
    states applied to them (derived, hollow)."""
    fig, (ax,) = figure("Fig. 12: cumulative goodput of n flows", "number of flows", "cumulative goodput (Mbit/s)")
    stated = derived = False
    for proto in apohn.PROTOCOLS:
        mine = sorted((f for f in found if f.protocol == proto and f.metric == "goodput_mbps" and f.ours is not None),
                      key=lambda f: f.params["flows"])
        if not mine:
            continue
        color = COLORS[proto]
        x = [f.params["flows"] for f in mine]
        ax.errorbar(x, [f.ours for f in mine], yerr=[f.ci95 or 0 for f in mine], color=color, marker="o",
                    markersize=3, linewidth=1, capsize=2, label=_label(proto))
        one = next((p.value for p in _stated(found, proto, 1, "goodput_mbps") if p.value is not None), None)
        if one is None:
            continue
        paper_marker(ax, 1, one, color, not stated)
        stated = True
        n = max(x)
        for p in _stated(found, proto, n, "change_vs_one"):
            lo, hi = p.range if p.range else (p.value, p.value)
            kw = {"label": "paper at n flows, derived: one-flow value x (1 + stated change)" if not derived else None}
            if lo == hi:
                paper_artist(ax.plot(n, one * (1 + lo), marker="X", linestyle="none", markersize=8,
                                     markerfacecolor="none", markeredgecolor=color, markeredgewidth=1.2, zorder=6,
                                     **kw))
            else:
                paper_artist(ax.errorbar(n, one * (1 + (lo + hi) / 2), yerr=one * (hi - lo) / 2, color=color,
                                         capsize=5, linewidth=1.5, fmt="none", zorder=6, **kw))
            derived = True
    ax.set_xticks(apohn.FLOWS)
    ax.set_ylim(bottom=0)
    legend(ax)
    return save(fig, path, formats, note)


def write_all(series: Series, found: list[Finding], out_dir: Path, formats: Sequence[str] = ("png",),
              note: Optional[Note] = None) -> list[Path]:
    written: list[Path] = []
    written += _goodput(series, found, out_dir / "fig8_goodput.png", formats, note)
    written += _cwnd(series, found, out_dir / "fig9_cwnd.png", formats, note)
    written += _buffer(series, found, out_dir / "fig10_bridge_buffer.png", formats, note)
    written += _buffer_hist(series, out_dir / "fig10_bridge_buffer_hist.png", formats, note)
    written += _delivered(found, out_dir / "fig11_delivered.png", formats, note)
    written += _flows(found, out_dir / "fig12_flows.png", formats, note)
    return written
