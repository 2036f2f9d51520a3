"""Figures for the lift reproduction, laid out as seed 001's Figs. 6-9: a metric against
T_good, one line per T_bad, one line style per protocol, 95% CI whiskers. The paper's
figures are not available as numbers, so nothing of the paper is drawn; its ideal-channel
page time (about 4 s, Fig. 6's text) is a dotted line."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from ..plots import Note, figure, legend, save
from ..figure_data import paper_artist
from .common import Finding

STYLES = {"reno-arq": "-", "lift": "--", "sctp": ":"}
MARKERS = {"reno-arq": "o", "lift": "s", "sctp": "^"}
LABELS = {
    "page_time_s": "Web page download mean time (s)",
    "timeouts_per_page": "TCP timeouts per page",
    "uplink_bytes_per_page": "uplink bytes per page (IP, incl. FrACKs)",
}
FIGURES = [
    ("fig6_page_time", "page_time_s", ("reno-arq", "lift"), "Fig. 6: TCP Reno over the ARQ link, with and without LIFT"),
    ("fig7_timeouts", "timeouts_per_page", ("reno-arq", "lift"), "Fig. 7: TCP timeouts per page"),
    ("fig8_uplink", "uplink_bytes_per_page", ("reno-arq", "lift"), "Fig. 8: uplink bytes per page"),
    ("fig9_lift_vs_sctp", "page_time_s", ("lift", "sctp"), "Fig. 9: LIFT against SCTP over the unreliable link"),
]


def _figure(found: list[Finding], metric: str, protos: Sequence[str], title: str, path: Path,
            formats: Sequence[str], note: Optional[Note]) -> list[Path]:
    import matplotlib

    fig, (ax,) = figure(title, "T_good (s)", LABELS[metric])
    grid = [f for f in found if f.experiment == "grid" and f.metric == metric and f.ours is not None]
    bads = sorted({f.params["t_bad"] for f in grid}, key=float)
    colors = matplotlib.colormaps["viridis"]
    for i, bad in enumerate(bads):
        color = colors(i / max(1, len(bads) - 1) * 0.9)
        for proto in protos:
            pts = sorted((float(f.params["t_good"]), f.ours, f.ci95 or 0.0) for f in grid
                         if f.protocol == proto and f.params["t_bad"] == bad)
            if not pts:
                continue
            x, y, e = zip(*pts)
            ax.errorbar(x, y, yerr=e, color=color, linestyle=STYLES[proto], marker=MARKERS[proto], markersize=4,
                        capsize=2, linewidth=1.2, label=f"{proto}, T_bad = {bad} s")
    if metric == "page_time_s":
        ideal = next((f for f in found if f.experiment == "ideal" and f.metric == metric and f.ours), None)
        paper_artist(ax.axhline(4.0, color="0.4", linestyle=":", linewidth=0.9, label="paper: ideal channel, about 4 s"))
        if ideal is not None:
            ax.axhline(ideal.ours, color="black", linestyle="-.", linewidth=0.9,
                       label=f"ours: ideal channel, {ideal.ours:.2f} s")
    ax.set_ylim(bottom=0)
    legend(ax)
    return save(fig, path, formats, note)


def write_all(found: list[Finding], out: Path, formats: Sequence[str] = ("png",),
              note: Optional[Note] = None) -> list[Path]:
    written: list[Path] = []
    for name, metric, protos, title in FIGURES:
        written += _figure(found, metric, protos, title, out / f"{name}.png", formats, note)
    return written
