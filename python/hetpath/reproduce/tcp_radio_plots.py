"""PNG plots for the tcp-radio reproduction, in the spirit of seed 003's figures:
time-sequence diagrams (Figs. 4-8), normalized throughput per transfer size (Figs. 9-12,
18, 20-23) and gain over NewReno per bandwidth (Figs. 13-17, 19, 24-28).  Values the
paper states in its text are drawn as black crosses at their points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .. import sweep as sweep_mod
from .common import Finding

COLORS = {"newreno": "tab:red", "westwood+": "tab:orange", "tcp-radio": "tab:blue",
          "tcp-radio-newrto": "tab:green", "ideal": "black"}


def _figure(title: str, xlabel: str, ylabel: str) -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title, fontsize="medium")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _bars(found: list[Finding], metric: str, experiment: str, fixed: tuple[str, str], axis: tuple[str, list[str]],
          title: str, path: Path, log: bool) -> Path:
    """Grouped bars: one group per value of ``axis``, one bar per protocol, CI whiskers."""
    xname, xs = axis
    fig, ax = _figure(title, xname, metric.replace("_", " "))
    protos = [p for p in COLORS if any(f.protocol == p and f.metric == metric for f in found)]
    width = 0.8 / max(1, len(protos))
    for j, proto in enumerate(protos):
        for i, x in enumerate(xs):
            f = next((f for f in found if f.experiment == experiment and f.protocol == proto and f.metric == metric
                      and f.params.get(fixed[0]) == fixed[1] and f.params.get(xname) == x), None)
            if f is None:
                continue
            pos = i - 0.4 + width * (j + 0.5)
            if f.ours is not None:
                ax.bar(pos, f.ours, width, color=COLORS[proto], label=proto if i == 0 else None,
                       yerr=f.ci95 or 0, capsize=2, error_kw={"elinewidth": 0.8})
            else:
                ax.text(pos, 0, "×", ha="center", va="bottom", color=COLORS[proto], fontsize="small")
            for p in f.paper:
                if p.value is not None and ".." not in "".join(p.params.values()):
                    ax.plot(pos, p.value, "kx", markersize=7, label="paper (text)" if i == 0 and j == 0 else None)
    ax.set_xticks(range(len(xs)), xs)
    if log:
        ax.set_yscale("log")
    ax.legend(fontsize="x-small", ncol=3, loc="best")
    fig.savefig(path, dpi=110)
    return path


def write_all(found: list[Finding], spec: sweep_mod.Sweep, out: Path, sequences: dict[str, dict[str, pd.DataFrame]]) -> list[Path]:
    labels = {a.name: a.labels for a in spec.axes}
    sizes, bws = labels["size"], labels["bandwidth"]
    tests = sorted({f.experiment for f in found})
    written = []
    for test in tests:
        log = test != "test1"
        for bw in bws:
            written.append(_bars(found, "normalized_throughput", test, ("bandwidth", bw), ("size", sizes),
                                 f"{test}: normalized throughput (Eq. 7), {bw}bit/s", out / f"throughput_{test}_{bw}.png", log))
        for size in sizes:
            written.append(_bars(found, "gain_pct", test, ("size", size), ("bandwidth", bws),
                                 f"{test}: gain over NewReno (Eq. 8, %), {size}", out / f"gain_{test}_{size}.png", False))
    from .tcp_radio import SEQUENCE_FIGURES

    for fig_name, bw, size, channel in SEQUENCE_FIGURES:
        runs = sequences.get(fig_name, {})
        fig, ax = _figure(f"{fig_name}: time-sequence, {bw}bit/s, {size}, {channel}, seed 1",
                          "time (s)", "bytes delivered (kbytes)")
        for proto, s in runs.items():
            ax.plot(s["time_s"], s["bytes_delivered"] / 1000, color=COLORS.get(proto), label=proto, linewidth=1.2)
        ax.legend(fontsize="small")
        path = out / f"{fig_name}_sequence_{bw}_{size}.png"
        fig.savefig(path, dpi=110)
        written.append(path)
    return written
