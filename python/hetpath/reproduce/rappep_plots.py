"""Figures for the rappep reproduction, after seed 004's figures: bottleneck
utilization over time (Figs. 3-5), each flow's share of the bottleneck in the fairness
run (Figs. 6-8) and the cwnd at the FTP servers (Fig. 9), one run (seed 1) each; and the
mean flow completion time per protocol over every seed, beside the values the paper
states (crosses in their protocol's colour)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import pandas as pd

from .. import sweep as sweep_mod
from ..plots import Note, figure, legend, save, series_figure
from .common import Finding
from .tcp_radio_plots import paper_marker

Series = dict[sweep_mod.Task, dict[str, pd.DataFrame]]

COLORS = {"cubic": "tab:gray", "tcp-pep": "tab:red", "vcp": "tab:purple", "xcp": "tab:blue",
          "mpcp": "tab:green", "xcp-pep": "tab:cyan", "mpcp-pep": "tab:olive"}
#: (file, title, experiment, protocols) of the utilization figures.
UTILIZATION = [
    ("fig03_utilization_loss0.png", "Fig. 3: bottleneck utilization, no loss", "loss0",
     ["cubic", "tcp-pep", "vcp", "xcp", "mpcp"]),
    ("fig04_utilization_loss1.png", "Fig. 4: bottleneck utilization, 1% loss", "loss1",
     ["cubic", "tcp-pep", "vcp", "xcp", "mpcp"]),
    ("fig05_pep_utilization_loss1.png", "Fig. 5: PEP solutions, 1% loss", "loss1",
     ["tcp-pep", "xcp-pep", "mpcp-pep"]),
]
#: (file, title, protocol) of the per-flow share figures (0.1% loss, side delays 0-800 ms).
SHARE = [
    ("fig06_share_xcp.png", "Fig. 6: per-flow bottleneck utilization, XCP", "xcp"),
    ("fig07_share_xcp_pep.png", "Fig. 7: per-flow bottleneck utilization, XCP PEP", "xcp-pep"),
    ("fig08_share_tcp_pep.png", "Fig. 8: per-flow bottleneck utilization, TCP PEP", "tcp-pep"),
]

def _by(series: Series, experiment: str) -> dict[str, dict[str, pd.DataFrame]]:
    return {t.protocol: s for t, s in series.items() if dict(t.point)["experiment"] == experiment}


def _smooth(df: pd.DataFrame, col: str, window: int = 10) -> pd.Series:
    """A 1 s moving mean (ten 100 ms samples), as a utilization trace is read."""
    return df[col].rolling(window, min_periods=1).mean()


def _afct(found: list[Finding], experiment: str, path: Path, formats: Sequence[str],
          note: Optional[Note]) -> list[Path]:
    """Mean flow completion time per protocol (mean and 95% CI over seeds), with the
    paper's values."""
    mine = [f for f in found if f.experiment == experiment and f.metric == "afct_s"]
    loss = mine[0].params.get("loss", 0) if mine else 0
    fig, (ax,) = figure(f"Average flow completion time, {loss * 100:g}% loss, every seed",
                        "protocol", "average flow completion time (s)")
    stated = False
    for i, f in enumerate(mine):
        color = COLORS.get(f.protocol, "0.5")
        if f.ours is not None:
            ax.bar(i, f.ours, 0.7, color=color, yerr=f.ci95 or 0, capsize=2, error_kw={"elinewidth": 0.8})
        for p in f.paper:
            if p.value is not None:
                paper_marker(ax, i, p.value, color, not stated)
                stated = True
    ax.set_xticks(range(len(mine)), [f.protocol for f in mine], rotation=20)
    ax.set_xlim(-0.5, len(mine) - 0.5)
    ax.set_ylim(bottom=0)
    legend(ax)
    return save(fig, path, formats, note)


def write_all(series: Series, out_dir: Path, found: Optional[list[Finding]] = None,
              formats: Sequence[str] = ("png",), note: Optional[Note] = None) -> list[Path]:
    written: list[Path] = []
    for name, title, exp, protos in UTILIZATION:
        runs = _by(series, exp)
        lines = [(p, runs[p]["utilization"]["time_s"], _smooth(runs[p]["utilization"], "utilization"))
                 for p in protos if p in runs]
        if lines:
            written += series_figure(title, "time (s)", "utilization (fraction of the satellite link rate)",
                                     lines, out_dir / name, formats, ylim=(0, 1.05), colors=COLORS, note=note)
    runs = _by(series, "fairness")
    for name, title, proto in SHARE:
        if proto not in runs:
            continue
        s = runs[proto]["share"]
        lines = [(str(flow), g["time_s"], _smooth(g, "share")) for flow, g in s.groupby("flow")]
        peak = max((float(y.max()) for _, _, y in lines), default=1.0)
        # In-order goodput, not link-level bytes: a repaired loss releases the bytes held
        # for reordering at once, so a 1 s mean can pass 1; the axis shows it, not hides it.
        footnote = ("in-order goodput / link rate, 1 s means; above 1: bytes held for reordering, "
                    "released when a loss is repaired") if peak > 1 else ""
        written += series_figure(title, "time (s)", "flow's in-order goodput / satellite link rate", lines,
                                 out_dir / name, formats, ylim=(0, max(1.05, 1.05 * peak)), footnote=footnote,
                                 note=note)
    runs = _by(series, "loss0")
    for proto in ("xcp-pep", "mpcp-pep"):
        if proto not in runs:
            continue
        c = runs[proto]["cwnd"]
        if "leg" in c.columns:
            c = c[c["leg"] == 0]  # the FTP server's own connection, up to the first PEP
        lines = [(str(flow), g["time_s"], g["cwnd_bytes"] / 1000) for flow, g in c.groupby("flow")]
        written += series_figure(f"Fig. 9: cwnd at the FTP servers, {proto}, no loss", "time (s)",
                                 "cwnd (kB = 1000 bytes)", lines, out_dir / f"fig09_cwnd_{proto}.png", formats,
                                 step=True, note=note)
    for exp in dict.fromkeys(f.experiment for f in found or []):
        written += _afct(found or [], exp, out_dir / f"afct_{exp}.png", formats, note)
    return written
