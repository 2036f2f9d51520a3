"""`hetpath reproduce tcp-radio`: the machine-readable contract and the paper data."""

from __future__ import annotations

import json
from pathlib import Path

from hetpath.reproduce.common import find_scenarios, load_paper
from helpers import invoke

REPO = Path(__file__).resolve().parents[2]
KEYS = {"experiment", "protocol", "params", "metric", "ours", "ci95", "paper", "seeds", "aborted"}


def test_paper_values_load_and_name_their_section() -> None:
    values = load_paper(REPO / "scenarios" / "tcp-radio" / "paper.toml")
    assert len(values) > 30
    assert all(v.section and v.quote for v in values)
    assert {v.experiment for v in values} == {"test1", "test2", "test3"}


def test_json_lines_follow_the_contract(tmp_path: Path) -> None:
    result = invoke(["reproduce", "tcp-radio", "--json", "--seeds", "1", "--no-plots", "-q",
                     "--scenarios", str(REPO / "scenarios" / "tcp-radio")])
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    # 3 tests x 4 bandwidths x 5 sizes x (5 throughputs + 4 gains).
    assert len(rows) == 3 * 4 * 5 * 9
    assert all(set(r) == KEYS for r in rows)
    stated = [r for r in rows if r["paper"] is not None]
    assert len(stated) >= 30
    ideal = {(r["experiment"], r["params"]["bandwidth"], r["params"]["size"]): r["ours"]
             for r in rows if r["protocol"] == "ideal" and r["metric"] == "normalized_throughput"}
    for r in rows:
        if r["metric"] == "normalized_throughput" and r["ours"] is not None:
            assert r["ours"] <= ideal[(r["experiment"], r["params"]["bandwidth"], r["params"]["size"])] + 1e-12
    assert all(r["seeds"] == (1 if r["experiment"] == "test3" else 3) for r in rows)


def test_missing_scenarios_is_a_clear_error(tmp_path: Path) -> None:
    result = invoke(["reproduce", "tcp-radio", "--scenarios", str(tmp_path), "-q"])
    assert result.exit_code == 2
    assert "paper.toml" in result.stderr and "Traceback" not in result.stderr
    assert find_scenarios("tcp-radio").name == "tcp-radio"
