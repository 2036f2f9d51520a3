"""Every paper's unstated parameters swept, quickly (`hetpath reproduce PAPER --sensitivity
--quick`: two values per parameter on the quick grid): the file loads, every value is one
the engine takes, and every claim of the paper gets a verdict at every point. The full
sweeps (30 minutes for the five) are not part of the tests; docs/performance.md times them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from helpers import invoke

from hetpath.reproduce import sensitivity as sens
from hetpath.reproduce.common import VERDICTS

REPO = Path(__file__).resolve().parents[2]
PAPERS = ("apohn", "ilc-tcp", "lift", "rappep", "tcp-radio")


@pytest.mark.parametrize("paper", PAPERS)
def test_the_quick_sweep_decides_every_claim_at_every_point(paper: str, tmp_path: Path) -> None:
    plan = sens.load(REPO / "scenarios" / paper / sens.FILE_NAME)
    out = tmp_path / "out"
    run = invoke(["reproduce", paper, "--sensitivity", "--quick", "--no-plots", "-q", "--out", str(out)])
    assert run.exit_code == 0, run.stderr
    with (out / "sensitivity.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    points = {(r["kind"], r["parameter"], r["value"], r["parameter2"], r["value2"]) for r in rows}
    one = len(sens.one_at_a_time(plan, quick=True))
    pair = len({p for p in points if p[0] == sens.PAIR})
    assert len(points) == one + pair
    # Two values per parameter: the pair adds at most the 2 x 2 corners off the defaults.
    assert pair <= 4 and all(len(p.quick) == 2 for p in plan.parameters.values())
    claims = {r["claim"] for r in rows}
    assert len(rows) == len(points) * len(claims)
    assert {r["verdict"] for r in rows} <= set(VERDICTS)
    text = (out / "what-it-would-take.md").read_text()
    assert f"Of {len(claims)} claims" in text
    for p in plan.parameters.values():
        assert f"(`{p.name}`)" in text


@pytest.mark.parametrize("paper", PAPERS)
def test_every_parameter_is_in_model_notes(paper: str) -> None:
    """model-notes lists every swept parameter, by its key, in the paper's table."""
    notes = (REPO / "docs" / "model-notes.md").read_text()
    plan = sens.load(REPO / "scenarios" / paper / sens.FILE_NAME)
    table = notes.split(f"reproduce {paper} --sensitivity", 1)
    assert len(table) == 2, f"docs/model-notes.md has no table of {paper}'s unstated parameters"
    section = table[1].split("\n#", 1)[0]
    for p in plan.parameters.values():
        for key in p.settings[p.labels.index(p.default)]:
            assert f"`{key}`" in section, f"{paper}: {key} (parameter {p.name}) is not in model-notes' table"
