"""The quick reproductions of a test session, each run once: the figure,
findings and resume tests of a paper share its `hetpath reproduce PAPER --quick` through
the session fixture ``quick_reproduction`` (conftest.py). A test that needs a run of its
own (another grid, an interrupted run) says why where it makes one.

Tests that share a paper's run carry ``group(paper)``, one xdist group: the worker that
runs them runs the reproduction once, where two workers would each run it."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from figure_checks import figure_problems
from helpers import invoke
from matplotlib.figure import Figure

REPO = Path(__file__).resolve().parents[2]


@dataclass
class QuickRun:
    """`hetpath reproduce PAPER --quick --json --format png,svg --out OUT`, in process."""

    paper: str
    out: Path
    exit_code: int
    stdout: str
    stderr: str
    #: Every warning raised while it ran, as "Category: message".
    warnings: list[str]
    #: Every figure saved (file name) -> the problems figure_checks found in it.
    figures: dict[str, list[str]] = field(default_factory=dict)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The findings, one JSON line each."""
        return [json.loads(line) for line in self.stdout.splitlines()]

    def args(self) -> list[str]:
        """The command line, without --out, --json and --format."""
        return ["reproduce", self.paper, "--quick", "-q", "--scenarios", str(REPO / "scenarios" / self.paper)]


def run_quick(paper: str, out: Path) -> QuickRun:
    run = QuickRun(paper, out, 0, "", "", [])
    original = Figure.savefig

    def savefig(self: Figure, fname: Any, *args: Any, **kw: Any) -> Any:
        run.figures[Path(fname).name] = figure_problems(self)
        return original(self, fname, *args, **kw)

    with pytest.MonkeyPatch.context() as m, warnings.catch_warnings(record=True) as caught:
        m.setattr(Figure, "savefig", savefig)
        warnings.simplefilter("always")
        result = invoke([*run.args(), "--json", "--out", str(out), "--format", "png,svg"])
    run.exit_code, run.stdout, run.stderr = result.exit_code, result.stdout, result.stderr
    run.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
    return run


def group(paper: str) -> pytest.MarkDecorator:
    """The xdist group of the tests that share ``paper``'s quick run."""
    return pytest.mark.xdist_group(f"quick-{paper}")


def param(paper: str) -> Any:
    """``paper`` as a parameter of a test that uses its quick run."""
    return pytest.param(paper, marks=group(paper), id=paper)
