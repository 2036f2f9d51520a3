"""PNG plots of a run: congestion window per flow, queue length per link direction.

Figures are drawn on an explicit Agg canvas rather than through ``pyplot``, so
plotting never needs a display and never changes the backend of a user's
interactive session (a notebook keeps its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .result import Result


def _figure(title: str, ylabel: str) -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _save(fig: Any, ax: Any, path: Path, has_lines: bool) -> Path:
    ax.set_ylim(bottom=0)
    if has_lines:
        ax.legend(loc="best", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
    fig.savefig(path, dpi=110)
    return path


def plot_cwnd(result: "Result", path: Path) -> Path:
    """Congestion window (KB) of every flow over simulated time."""
    fig, ax = _figure(f"{result.scenario}: congestion window", "cwnd (KB)")
    series = result.flow_series
    has_lines = not series.empty
    if has_lines:
        for name, rows in series.groupby("flow", sort=False):
            ax.step(rows["time_s"], rows["cwnd_bytes"] / 1e3, where="post", label=str(name))
    return _save(fig, ax, path, has_lines)


def plot_queues(result: "Result", path: Path) -> Path:
    """Queue occupancy (packets) of every link direction over simulated time."""
    fig, ax = _figure(f"{result.scenario}: queue length", "queue (packets)")
    series = result.link_series
    has_lines = not series.empty
    if has_lines:
        for (link, src, dst), rows in series.groupby(["link", "from", "to"], sort=False):
            ax.step(rows["time_s"], rows["queue_pkts"], where="post", label=f"{link} {src}→{dst}")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return _save(fig, ax, path, has_lines)


def plot_result(result: "Result", out_dir: Path) -> list[Path]:
    """Write ``cwnd.png`` and ``queue.png`` into ``out_dir`` (created if needed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [plot_cwnd(result, out_dir / "cwnd.png"), plot_queues(result, out_dir / "queue.png")]
