"""Figures of a run (congestion window per flow, queue length per link direction) and the
helpers every figure of hetpath shares, the reproductions' included.

Figures are drawn on an explicit Agg canvas rather than through ``pyplot``, so
plotting never needs a display and never changes the backend of a user's
interactive session (a notebook keeps its own).

The shared rules, in one place:

- the legend goes outside the axes, on the right; past :data:`MAX_SERIES` series a
  figure becomes a grid of small multiples, one series per panel, instead;
- the y axis turns logarithmic when the values span :data:`LOG_SPAN` or more;
- every axis label carries its unit;
- a figure without data is not written: :func:`save` skips it and says so;
- each figure is written in every format asked for (``png``, ``svg``, ``pdf``).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence

from . import figure_data

if TYPE_CHECKING:
    from .result import Result

#: File formats a figure can be written in.
FORMATS = ("png", "svg", "pdf")
#: At most this many series share one axes (and one legend); more become small multiples.
MAX_SERIES = 8
#: A positive range max/min at least this wide gets a logarithmic axis.
LOG_SPAN = 100.0
#: Resolution of PNG files.
DPI = 200

Note = Callable[[str], None]
_log = logging.getLogger("hetpath.plots")


def check_formats(formats: Iterable[str]) -> tuple[str, ...]:
    """The formats, lower-cased, without duplicates; ValueError for an unknown one."""
    out = tuple(dict.fromkeys(f.strip().lower().lstrip(".") for f in formats if f.strip()))
    bad = [f for f in out if f not in FORMATS]
    if bad or not out:
        raise ValueError(f"unknown figure format {', '.join(bad) or '(none)'}: expected {', '.join(FORMATS)}")
    return out


def figure(title: str, xlabel: str, ylabel: str, *, panels: int = 1,
           size: tuple[float, float] = (7.5, 4.2)) -> tuple[Any, list[Any]]:
    """A figure with ``panels`` axes (a grid of small multiples when more than one, sharing
    both axes), labelled once.  Returns the figure and its axes in reading order."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = 1 if panels == 1 else (2 if panels <= 6 else 3)
    nrows = math.ceil(panels / ncols)
    if panels > 1:
        size = (size[0], max(size[1], 1.6 * nrows + 0.8))
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[panels:]:
        ax.set_visible(False)
    axes = axes[:panels]
    for ax in axes[-ncols:]:  # the last panel of each column carries its x tick labels
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    if panels == 1:
        axes[0].set_title(title, fontsize="medium")
        axes[0].set_xlabel(xlabel)
        axes[0].set_ylabel(ylabel)
    else:
        fig.suptitle(title, fontsize="medium")
        fig.supxlabel(xlabel, fontsize="medium")
        fig.supylabel(ylabel, fontsize="medium")
    return fig, axes


def log_if_wide(axes: Sequence[Any], values: Iterable[float]) -> bool:
    """Make the y axes logarithmic when the positive values span :data:`LOG_SPAN` or
    more (values of zero or less then sit at the bottom edge); returns whether it did."""
    pos = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not pos or max(pos) / min(pos) < LOG_SPAN:
        return False
    for ax in axes:
        ax.set_yscale("log", nonpositive="clip")
    return True


def legend(ax: Any, **kw: Any) -> Optional[Any]:
    """The axes' legend outside it, on the right; none if nothing is labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                     fontsize="small", frameon=False, **kw)


def has_data(ax: Any) -> bool:
    """Whether the axes draw at least one finite data point (lines, markers, bars)."""
    import numpy as np

    for line in ax.lines:
        x, y = (np.asarray(v, dtype=float) for v in line.get_data())
        if np.isfinite(x).any() and np.isfinite(y).any():
            return True
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), dtype=float)
        if offsets.size and np.isfinite(offsets).all(axis=-1).any():
            return True
    return any(np.isfinite(p.get_height()) for p in ax.patches if hasattr(p, "get_height"))


def same_as(y: Any, earlier: dict[str, Any]) -> Optional[str]:
    """The label of an earlier series with exactly the same values as ``y``, if any: an
    overlaid identical curve hides under its twin unless drawn differently and said so."""
    import numpy as np

    a = np.asarray(y, dtype=float)
    for label, b in earlier.items():
        b = np.asarray(b, dtype=float)
        if a.shape == b.shape and a.size and np.allclose(a, b, rtol=1e-9, atol=0, equal_nan=True):
            return label
    return None


def save(fig: Any, path: Path, formats: Sequence[str] = ("png",), note: Optional[Note] = None) -> list[Path]:
    """Write ``fig`` as ``path`` in each format (the suffix is replaced).  A figure none
    of whose axes holds data is not written: the note says so and nothing is returned."""
    path = Path(path)
    if not any(has_data(ax) for ax in fig.axes if ax.get_visible()):
        (note or _log.info)(f"no data for {path.stem}: figure not written")
        return []
    written = []
    for fmt in check_formats(formats):
        out = path.with_suffix(f".{fmt}")
        fig.savefig(out, dpi=DPI if fmt == "png" else None, metadata=_metadata(fmt))
        written.append(out)
    if figure_data.enabled():
        figure_data.write(fig, path)
    return written


def _metadata(fmt: str) -> dict[str, Any]:
    """No creation date or tool version in the file: the same data gives the same bytes."""
    if fmt == "png":
        return {"Software": None}
    if fmt == "svg":
        return {"Date": None, "Creator": None}
    return {"CreationDate": None, "Creator": None, "Producer": None}


def series_figure(title: str, xlabel: str, ylabel: str, series: Sequence[tuple[str, Any, Any]], path: Path,
                  formats: Sequence[str] = ("png",), *, step: bool = False, ylim: Optional[tuple[float, float]] = None,
                  colors: Optional[dict[str, str]] = None, integer_y: bool = False, footnote: str = "",
                  log: bool = True, note: Optional[Note] = None) -> list[Path]:
    """Lines ``(label, x, y)`` on one axes with the legend outside, or past
    :data:`MAX_SERIES` series one small panel each; a log y axis when the values span
    decades (unless ``log`` is false).  ``ylim`` fixes the y range (and rules out the log
    axis)."""
    import numpy as np

    panels = len(series) if len(series) > MAX_SERIES else 1
    fig, axes = figure(title, xlabel, ylabel, panels=panels, size=(9.0, 4.2))
    values: list[float] = []
    seen: dict[str, Any] = {}
    for i, (label, x, y) in enumerate(series):
        ax = axes[i] if panels > 1 else axes[0]
        color = (colors or {}).get(label, f"C{i % 10}")
        twin = same_as(np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)]), seen)
        seen[label] = np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])
        style = {"linestyle": (0, (3, 3)), "linewidth": 1.6} if twin and panels == 1 else {"linewidth": 1}
        shown = f"{label} (identical to {twin})" if twin else label
        if step:
            ax.step(x, y, where="post", label=shown, color=color, **style)
        else:
            ax.plot(x, y, label=shown, color=color, **style)
        if panels > 1:
            ax.set_title(shown, fontsize="small", pad=2)
        values += [float(v) for v in np.asarray(y, dtype=float)]
    if ylim is not None:
        for ax in axes:
            ax.set_ylim(*ylim)
    elif not (log and log_if_wide(axes, values)):
        for ax in axes:
            ax.set_ylim(bottom=0)
    if integer_y:
        from matplotlib.ticker import MaxNLocator

        for ax in axes:
            if ax.get_yscale() == "linear":
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if panels == 1:
        legend(axes[0])
    if footnote and panels == 1:
        # Under the axis label, where the layout makes room for it.
        axes[0].set_xlabel(f"{xlabel}\n{footnote}")
    elif footnote:
        fig.text(0.005, 0.005, footnote, fontsize="x-small", color="0.35", ha="left", va="bottom")
    return save(fig, path, formats, note)


def _bottleneck_legs(result: "Result", series: Any) -> Any:
    """One leg per flow: the one the engine marks as crossing the slowest link (a split
    PEP makes several legs of one flow; ``summary.legs`` says which)."""
    if "leg" not in series.columns:
        return series
    marked = {(leg["flow"], leg["leg"]) for leg in result.summary.get("legs", []) if leg.get("bottleneck")}
    if not marked:
        return series[series["leg"] == 0]
    keep = [(f, leg) in marked for f, leg in zip(series["flow"], series["leg"])]
    return series[keep]


def plot_cwnd(result: "Result", path: Path, formats: Sequence[str] = ("png",),
              note: Optional[Note] = None) -> list[Path]:
    """Congestion window (kB) of every flow over simulated time, on the leg that crosses
    the bottleneck."""
    series = _bottleneck_legs(result, result.flow_series)
    lines = []
    if not series.empty:
        for name, rows in series.groupby("flow", sort=False):
            lines.append((str(name), rows["time_s"], rows["cwnd_bytes"] / 1e3))
    return series_figure(f"{result.scenario}: congestion window (bottleneck leg of each flow)",
                         "simulated time (s)", "cwnd (kB = 1000 bytes)", lines, path, formats, step=True, note=note)


def plot_queues(result: "Result", path: Path, formats: Sequence[str] = ("png",),
                note: Optional[Note] = None) -> list[Path]:
    """Queue occupancy (packets) of every link direction that ever queued, over
    simulated time; a footnote counts the directions whose queue stayed empty."""
    series = result.link_series
    lines, idle = [], 0
    if not series.empty:
        for (link, src, dst), rows in series.groupby(["link", "from", "to"], sort=False):
            if (rows["queue_pkts"] > 0).any():
                lines.append((f"{link} {src}→{dst}", rows["time_s"], rows["queue_pkts"]))
            else:
                idle += 1
    if not lines and idle:
        # Nothing ever queued: one flat line still says so, with the footnote.
        rows = next(iter(series.groupby(["link", "from", "to"], sort=False)))[1]
        lines.append(("every link direction", rows["time_s"], rows["queue_pkts"] * 0))
        idle = 0
    foot = (f"{idle} other link direction{'s' if idle != 1 else ''} never queued a packet (not drawn)"
            if idle else "")
    return series_figure(f"{result.scenario}: queue length", "simulated time (s)", "queue (packets)", lines, path,
                         formats, step=True, integer_y=True, footnote=foot, note=note)


def plot_result(result: "Result", out_dir: Path, formats: Sequence[str] = ("png",),
                note: Optional[Note] = None) -> list[Path]:
    """Write ``cwnd`` and ``queue`` figures into ``out_dir`` (created if needed), one file
    per format; a figure without samples is not written."""
    formats = check_formats(formats)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return (plot_cwnd(result, out_dir / "cwnd.png", formats, note)
            + plot_queues(result, out_dir / "queue.png", formats, note))
