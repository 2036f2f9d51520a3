"""Every figure hetpath writes holds data: the PNGs of each `hetpath reproduce PAPER
--quick` (the session's run, reproductions.py) and of a run are opened and must not be
one flat colour, every axes of every figure saved must draw finite data inside its view
limits, every legend must name something (and fit: no more than MAX_SERIES series and
the paper's entry), and neither matplotlib nor anything else may warn
(figure_checks.py)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
import reproductions
from figure_checks import check_png, figure_problems
from matplotlib.figure import Figure

import hetpath
from hetpath.plots import plot_result
from helpers import invoke

REPO = Path(__file__).resolve().parents[2]
# The figures each quick reproduction writes at least (LIFT's are the paper's Figs. 6-9).
PAPERS = {"tcp-radio": 5, "ilc-tcp": 5, "rappep": 5, "apohn": 5, "lift": 4}


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


@pytest.mark.parametrize("paper", [reproductions.param(p) for p in PAPERS])
def test_reproduce_quick_writes_figures_that_hold_data(paper: str, quick_reproduction) -> None:
    run = quick_reproduction(paper)
    assert run.exit_code == 0, run.stderr
    assert "Warning" not in run.stderr and "Warning" not in run.stdout, run.stderr
    assert not run.warnings, run.warnings

    pngs = sorted(run.out.glob("*.png"))
    assert len(pngs) >= PAPERS[paper], pngs
    for png in pngs:
        check_png(png)
        assert png.with_suffix(".svg").is_file(), f"{png.name} has no SVG beside it"
    assert {p.with_suffix(".png").name for p in run.out.glob("*.svg")} == {p.name for p in pngs}
    saved_pngs = {name for name in run.figures if name.endswith(".png")}
    assert saved_pngs == {p.name for p in pngs}
    bad = {name: problems for name, problems in run.figures.items() if problems}
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
