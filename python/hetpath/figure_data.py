"""What a figure plots, as a table written beside it (``<figure>.csv``): one row per
plotted point of every series, so that a reader can take the numbers without reading
them off the picture, and a test can check that the paper's values are drawn.

Series are read back from the drawn figure (lines, markers, error bars, bars, shaded
bands), so the table is what the picture shows. An artist drawn for the paper carries
the gid :data:`PAPER` (``paper_artist``); its rows have ``role`` "paper", the others
"ours". Reproductions turn it on for the figures they save (:func:`beside_figures`).
"""

from __future__ import annotations

import contextlib
import contextvars
import csv
import math
from pathlib import Path
from typing import Any, Iterator

#: The gid of an artist that shows a value the paper states.
PAPER = "paper"
COLUMNS = ("panel", "series", "role", "kind", "x", "y", "x_low", "x_high", "y_low", "y_high")

_ON: contextvars.ContextVar[bool] = contextvars.ContextVar("figure_data", default=False)


@contextlib.contextmanager
def beside_figures() -> Iterator[None]:
    """While inside, :func:`hetpath.plots.save` writes each figure's data beside it."""
    token = _ON.set(True)
    try:
        yield
    finally:
        _ON.reset(token)


def enabled() -> bool:
    return _ON.get()


def paper_artist(artist: Any) -> Any:
    """Mark ``artist`` (a container's every part too) as drawn for the paper; returns it."""
    parts = artist if isinstance(artist, list) else [artist]
    for a in parts:
        if hasattr(a, "set_gid"):
            a.set_gid(PAPER)
        for child in getattr(a, "get_children", lambda: [])():
            child.set_gid(PAPER)
    return artist


def _num(x: Any) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return ""
    return repr(v) if math.isfinite(v) else ""


def _name(artist: Any, fallback: str) -> str:
    label = str(artist.get_label() or "")
    if label.startswith("_") or not label:
        return "paper" if getattr(artist, "get_gid", lambda: None)() == PAPER else fallback
    return label


def _role(artist: Any) -> str:
    return "paper" if artist.get_gid() == PAPER else "ours"


def rows(fig: Any) -> list[dict[str, str]]:
    """Every plotted point of ``fig``'s visible axes."""
    from matplotlib.container import BarContainer, ErrorbarContainer
    from matplotlib.patches import Polygon, Rectangle

    out: list[dict[str, str]] = []
    for k, ax in enumerate(a for a in fig.axes if a.get_visible()):
        panel = ax.get_title() or f"panel {k + 1}"
        seen: set[int] = set()

        def add(series: str, role: str, kind: str, x: Any, y: Any, lo: Any = None, hi: Any = None,
                x_lo: Any = None, x_hi: Any = None, panel: str = panel) -> None:
            out.append({"panel": panel, "series": series, "role": role, "kind": kind, "x": _num(x), "y": _num(y),
                        "x_low": _num(x_lo), "x_high": _num(x_hi), "y_low": _num(lo), "y_high": _num(hi)})

        for c in ax.containers:
            if isinstance(c, BarContainer):
                name = _name(c, "bars")
                for p in c.patches:
                    seen.add(id(p))
                    add(name, _role(p), "bar", p.get_x() + p.get_width() / 2, p.get_height())
            elif isinstance(c, ErrorbarContainer):
                line, caps, bars = c.lines
                name = _name(c, "error bars")
                role = "paper" if any(_role(b) == "paper" for b in bars) else "ours"
                for b in bars:
                    seen.add(id(b))
                for cap in caps:
                    seen.add(id(cap))
                if line is None:  # bars alone: a span at each x
                    for seg in (s for b in bars for s in b.get_segments()):
                        lo, hi = min(seg[:, 1]), max(seg[:, 1])
                        add(name, role, "span", seg[0, 0], (lo + hi) / 2, lo, hi)
                    continue
                seen.add(id(line))
                segs = [s for b in bars for s in b.get_segments()]
                for i, (x, y) in enumerate(zip(*line.get_data())):
                    lo, hi = (min(segs[i][:, 1]), max(segs[i][:, 1])) if i < len(segs) else (None, None)
                    add(name, "paper" if "paper" in (role, _role(line)) else "ours", "point", x, y, lo, hi)
        for i, line in enumerate(ax.lines):
            if id(line) in seen:
                continue
            name, role = _name(line, f"line {i + 1}"), _role(line)
            xs, ys = line.get_data()
            if line.get_transform() is not ax.transData and len(xs) == 2 and ys[0] == ys[1]:
                add(name, role, "level", "", ys[0])  # a horizontal line across the axes
                continue
            for x, y in zip(xs, ys):
                add(name, role, "point" if line.get_linestyle() in ("None", "none", " ", "") else "line", x, y)
        for p in ax.patches:
            if id(p) in seen or not isinstance(p, (Rectangle, Polygon)):
                continue
            xy = p.get_path().transformed(p.get_patch_transform()).vertices if isinstance(p, Rectangle) \
                else p.get_xy()
            x0, x1, y0, y1 = min(xy[:, 0]), max(xy[:, 0]), min(xy[:, 1]), max(xy[:, 1])
            if p.get_data_transform() == ax.get_yaxis_transform():  # axhspan: y in data units
                add(_name(p, "band"), _role(p), "y band", "", (y0 + y1) / 2, y0, y1)
            elif p.get_data_transform() == ax.get_xaxis_transform():  # axvspan: x in data units
                add(_name(p, "band"), _role(p), "x band", (x0 + x1) / 2, "", x_lo=x0, x_hi=x1)
    return out


def write(fig: Any, path: Path) -> Path:
    """``fig``'s data as CSV at ``path`` (suffix .csv)."""
    out = Path(path).with_suffix(".csv")
    with out.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows(fig))
    return out


def read(path: Path) -> list[dict[str, str]]:
    with Path(path).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
