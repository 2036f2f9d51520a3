"""Every figure hetpath writes holds data: the PNGs of each `hetpath reproduce PAPER
--quick` and of a run are opened and must not be one flat colour, every axes of every
figure saved must draw finite data inside its view limits, every legend must name
something (and fit: no more than MAX_SERIES series and the paper's entry), and neither
matplotlib nor anything else may warn."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
from matplotlib.figure import Figure

import hetpath
from hetpath.plots import MAX_SERIES, plot_result
from helpers import invoke

REPO = Path(__file__).resolve().parents[2]
PAPERS = ["tcp-radio", "ilc-tcp", "rappep", "apohn"]


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


@pytest.fixture
def checked_savefig(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[str]]]:
    """Every figure saved while it is active: file name -> problems found in it."""
    seen: dict[str, list[str]] = {}
    original = Figure.savefig

    def savefig(self: Figure, fname: Any, *args: Any, **kw: Any) -> Any:
        seen[Path(fname).name] = figure_problems(self)
        return original(self, fname, *args, **kw)

    monkeypatch.setattr(Figure, "savefig", savefig)
    yield seen


def check_png(path: Path) -> None:
    import matplotlib.image

    img = matplotlib.image.imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100, path
    pixels = img.reshape(-1, img.shape[-1])
    assert pixels.std(axis=0).max() > 0.01, f"{path.name} is one flat colour"
    # A figure with only a frame and labels has a handful of colours; data adds many.
    assert len(np.unique(pixels[:: max(1, len(pixels) // 50_000)], axis=0)) > 10, f"{path.name} looks empty"


@pytest.mark.parametrize("paper", PAPERS)
def test_reproduce_quick_writes_figures_that_hold_data(paper: str, tmp_path: Path,
                                                       checked_savefig: dict[str, list[str]]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = invoke(["reproduce", paper, "--quick", "-q", "--out", str(tmp_path), "--format", "png,svg",
                         "--scenarios", str(REPO / "scenarios" / paper)])
    assert result.exit_code == 0, result.stderr
    assert "Warning" not in result.stderr and "Warning" not in result.stdout, result.stderr
    assert not caught, [f"{w.category.__name__}: {w.message}" for w in caught]

    pngs = sorted(tmp_path.glob("*.png"))
    assert len(pngs) >= 5, pngs
    for png in pngs:
        check_png(png)
        assert png.with_suffix(".svg").is_file(), f"{png.name} has no SVG beside it"
    assert {p.with_suffix(".png").name for p in tmp_path.glob("*.svg")} == {p.name for p in pngs}
    saved_pngs = {name for name in checked_savefig if name.endswith(".png")}
    assert saved_pngs == {p.name for p in pngs}
    bad = {name: problems for name, problems in checked_savefig.items() if problems}
    assert not bad, bad


def test_run_figures_fit_and_come_in_every_format(tmp_path: Path, checked_savefig: dict[str, list[str]]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = hetpath.run(REPO / "scenarios" / "examples" / "dumbbell.toml")
        written = plot_result(result, tmp_path, formats=("png", "pdf", "svg"))
    assert not caught, [f"{w.category.__name__}: {w.message}" for w in caught]
    assert sorted(p.name for p in written) == sorted(
        f"{stem}.{fmt}" for stem in ("cwnd", "queue") for fmt in ("png", "pdf", "svg"))
    for p in written:
        assert p.stat().st_size > 1000
        if p.suffix == ".png":
            check_png(p)
    bad = {name: problems for name, problems in checked_savefig.items() if problems}
    assert not bad, bad


def test_format_option_rejects_unknown_formats() -> None:
    result = invoke(["reproduce", "rappep", "--format", "png,gif", "--no-plots"])
    assert result.exit_code == 2
    assert "gif" in result.stderr and "Traceback" not in result.stderr


def test_an_empty_figure_is_caught(checked_savefig: dict[str, list[str]], tmp_path: Path) -> None:
    """The check itself can fail: an axes with markers outside its limits and an empty
    legend (what gain_test3_1000KB.png used to be) is reported."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xticks(range(4), ["16k", "64k", "256k", "1M"])
    ax.plot([-0.4], [0.0], "x")
    ax.set_xlim(0, 3)
    ax.set_ylim(0.5, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ax.legend()
    fig.savefig(tmp_path / "empty.png")
    problems = checked_savefig["empty.png"]
    assert any("no finite data" in p for p in problems) and any("empty legend" in p for p in problems)
