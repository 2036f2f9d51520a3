"""PNG plots for the rappep reproduction, after seed 004's figures: bottleneck
utilization over time (Figs. 3-5), each flow's share of the bottleneck in the fairness
run (Figs. 6-8) and the cwnd at the FTP servers (Fig. 9).  One run (seed 1) each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .. import sweep as sweep_mod
from .tcp_radio_plots import _figure

Series = dict[sweep_mod.Task, dict[str, pd.DataFrame]]

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


def write_all(series: Series, out_dir: Path) -> list[Path]:
    written: list[Path] = []

    def save(fig: Any, name: str) -> None:
        path = out_dir / name
        fig.savefig(path, dpi=120)
        written.append(path)

    for name, title, exp, protos in UTILIZATION:
        runs = _by(series, exp)
        if not runs:
            continue
        fig, ax = _figure(title, "time (s)", "utilization")
        for p in protos:
            if p in runs:
                u = runs[p]["utilization"]
                ax.plot(u["time_s"], _smooth(u, "utilization"), label=p)
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize="small")
        save(fig, name)
    runs = _by(series, "fairness")
    for name, title, proto in SHARE:
        if proto not in runs:
            continue
        fig, ax = _figure(title, "time (s)", "share of the bottleneck")
        s = runs[proto]["share"]
        for flow, g in s.groupby("flow"):
            ax.plot(g["time_s"], _smooth(g, "share"), label=str(flow))
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize="small")
        save(fig, name)
    runs = _by(series, "loss0")
    for proto in ("xcp-pep", "mpcp-pep"):
        if proto not in runs:
            continue
        fig, ax = _figure(f"Fig. 9: cwnd at the FTP servers, {proto}, no loss", "time (s)", "cwnd (KB)")
        c = runs[proto]["cwnd"]
        for flow, g in c.groupby("flow"):
            ax.plot(g["time_s"], g["cwnd_bytes"] / 1000, label=str(flow))
        ax.legend(fontsize="small")
        save(fig, f"fig09_cwnd_{proto}.png")
    return written
