"""What makes a figure hold data, checked on every figure the suite saves (test_figures.py,
the quick reproductions of reproductions.py): the axes draw finite data inside their
view limits, every legend names something and fits (no more than MAX_SERIES series and
the paper's entry), and a PNG is not one flat colour or a bare frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from hetpath.plots import MAX_SERIES


def _inside(lo_hi: tuple[float, float], values: np.ndarray) -> np.ndarray:
    lo, hi = sorted(lo_hi)
    return np.isfinite(values) & (values >= lo) & (values <= hi)


def _axes_problems(ax: Any) -> list[str]:
    """Why an axes shows no data: an empty string list means it draws some."""
    xlim, ylim = tuple(map(float, ax.get_xlim())), tuple(map(float, ax.get_ylim()))
    for line in ax.lines:
        x, y = (np.asarray(v, dtype=float) for v in line.get_data())
        if (_inside(xlim, x) & _inside(ylim, y)).any():
            return []
    for coll in ax.collections:
        off = np.asarray(coll.get_offsets(), dtype=float).reshape(-1, 2)
        if (_inside(xlim, off[:, 0]) & _inside(ylim, off[:, 1])).any():
            return []
    for p in ax.patches:
        if hasattr(p, "get_height"):
            x0, x1 = p.get_x(), p.get_x() + p.get_width()
            y0, y1 = sorted((p.get_y(), p.get_y() + p.get_height()))
            if (np.isfinite([x0, x1, y0, y1]).all() and y1 > y0 and x1 >= min(xlim) and x0 <= max(xlim)
                    and y1 >= min(ylim) and y0 <= max(ylim)):
                return []
    return [f"axes {ax.get_title()!r}: no finite data inside x {xlim}, y {ylim}"]


def figure_problems(fig: Figure) -> list[str]:
    problems = []
    axes = [ax for ax in fig.axes if ax.get_visible()]
    if not axes:
        problems.append("no visible axes")
    for ax in axes:
        problems += _axes_problems(ax)
        leg = ax.get_legend()
        if leg is not None:
            entries = [t.get_text() for t in leg.get_texts()]
            if not entries:
                problems.append(f"axes {ax.get_title()!r}: empty legend")
            if len(entries) > MAX_SERIES + 1:
                problems.append(f"axes {ax.get_title()!r}: legend of {len(entries)} entries")
    return problems


def check_png(path: Path) -> None:
    import matplotlib.image

    img = matplotlib.image.imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100, path
    pixels = img.reshape(-1, img.shape[-1])
    assert pixels.std(axis=0).max() > 0.01, f"{path.name} is one flat colour"
    # A figure with only a frame and labels has a handful of colours; data adds many.
    assert len(np.unique(pixels[:: max(1, len(pixels) // 50_000)], axis=0)) > 10, f"{path.name} looks empty"
