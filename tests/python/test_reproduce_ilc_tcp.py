"""`hetpath reproduce ilc-tcp`: the machine-readable contract, the paper data and the
experiment family."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetpath import sweep as sweep_mod
from hetpath.errors import ScenarioError
from hetpath.reproduce.common import load_paper
from helpers import invoke

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios" / "ilc-tcp"
KEYS = {"experiment", "protocol", "params", "metric", "ours", "ci95", "paper", "seeds", "aborted"}


def test_paper_values_carry_their_grid_parameters() -> None:
    values = load_paper(SCENARIOS / "paper.toml")
    assert len(values) > 100
    assert all(v.section and v.quote for v in values)
    assert {v.experiment for v in values} == {f"exp{i}" for i in range(1, 7)}
    exp6 = [v for v in values if v.experiment == "exp6"]
    assert all(set(v.params) == {"speed", "ranges"} for v in exp6)


def test_every_experiment_plans_and_validates() -> None:
    specs = sweep_mod.load_experiments(SCENARIOS / "experiments.toml")
    assert sorted(specs) == [f"exp{i}" for i in range(1, 7)]
    for spec in specs.values():
        spec.seeds = [1]
        assert sweep_mod.plan(spec)  # each distinct scenario is validated here


def test_json_lines_follow_the_contract() -> None:
    result = invoke(["reproduce", "ilc-tcp", "--json", "--seeds", "1", "--no-plots", "-q",
                     "--scenarios", str(SCENARIOS)])
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and all(set(r) == KEYS for r in rows)
    assert all(r["seeds"] == 1 and r["aborted"] == 0 for r in rows)
    stated = [r for r in rows if r["paper"] is not None]
    assert len(stated) >= 100
    # With no disconnection (Table 1's 0 s row) ILC-TCP is its base TCP: 0% exactly.
    zero = [r for r in rows if r["experiment"] == "exp1" and r["params"]["disconnect"] == "0s"
            and r["metric"] == "improvement_pct"]
    assert len(zero) == 4 and all(r["ours"] == 0 for r in zero)


def test_experiment_overrides_name_the_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text((SCENARIOS / "base.toml").read_text())
    bad = tmp_path / "experiments.toml"
    bad.write_text('[sweep]\nscenario = "base.toml"\n[experiment.x.set]\n"flow.nope.size" = "1MB"\n')
    with pytest.raises(ScenarioError, match=r"experiments.toml: experiment\.x\.set: .*flow\.nope"):
        sweep_mod.load_experiments(bad)
