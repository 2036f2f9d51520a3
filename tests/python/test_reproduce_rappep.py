"""`hetpath reproduce rappep`: the machine-readable contract, paired runs, the paper data."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import reproductions

from hetpath import _toml
from hetpath.reproduce import rappep
from hetpath.reproduce.common import load_paper
from helpers import invoke

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios" / "rappep"
KEYS = {"experiment", "protocol", "params", "metric", "ours", "ci95", "paper", "seeds", "aborted"}


def test_paper_values_name_known_protocols() -> None:
    values = load_paper(SCENARIOS / "paper.toml")
    assert values and all(v.section and v.quote for v in values)
    assert {v.protocol for v in values} | {v.against for v in values if v.against} <= set(rappep.PROTOCOLS)
    assert {v.experiment for v in values} | {v.than.get("experiment", v.experiment) for v in values} \
        <= set(rappep.EXPERIMENTS)
    assert {v.metric for v in values} <= {*rappep.METRICS, rappep.OSCILLATION}


def test_runs_are_paired_across_protocols() -> None:
    base = _toml.loads((SCENARIOS / "base.toml").read_text(), "base.toml")
    starts = {}
    for proto in rappep.PROTOCOLS:
        doc = _toml.loads(rappep.scenario_text(base, "fairness", proto, 7), "x")
        starts[proto] = [(f["start"], next(link["delay"] for link in doc["link"] if link["name"] == f"side{i}"))
                         for i, f in enumerate(doc["flow"], start=1)]
    assert len({tuple(v) for v in starts.values()}) == 1
    other = _toml.loads(rappep.scenario_text(base, "fairness", "cubic", 8), "x")
    assert [f["start"] for f in other["flow"]] != [s for s, _ in starts["cubic"]]


def test_jain_index() -> None:
    assert rappep.jain(pd.Series([1.0, 1.0, 1.0])) == 1.0
    assert abs(rappep.jain(pd.Series([1.0, 0.0])) - 0.5) < 1e-12


@reproductions.group("rappep")
def test_json_lines_follow_the_contract(quick_reproduction) -> None:
    run = quick_reproduction("rappep")
    assert run.exit_code == 0, run.stderr
    rows = run.rows
    assert rows and all(set(r) == KEYS for r in rows)
    assert {r["protocol"] for r in rows} == set(rappep.PROTOCOLS)
    # Every claim on a metric of ours in the quick experiments is attached to its finding.
    stated = {(r["experiment"], r["protocol"], r["metric"]) for r in rows if r["paper"] is not None}
    assert stated == {(v.experiment, v.protocol, v.metric) for v in load_paper(SCENARIOS / "paper.toml")
                      if v.experiment in rappep.QUICK_EXPERIMENTS and v.metric in rappep.METRICS}
    # Without loss every transfer completes, and a PEP beats CUBIC end to end.
    afct = {r["protocol"]: r["ours"] for r in rows if r["experiment"] == "loss0" and r["metric"] == "afct_s"}
    assert all(r["aborted"] == 0 for r in rows if r["experiment"] == "loss0")
    assert afct["tcp-pep"] < afct["cubic"]


def test_peps_run_at_both_routers_and_every_transfer_through_them_completes() -> None:
    base = _toml.loads((SCENARIOS / "base.toml").read_text(), "base.toml")
    doc = _toml.loads(rappep.scenario_text(base, "fairness", "xcp-pep", 1), "x")
    assert [(a["node"], a["link"]) for a in doc["agent"]] == [("r1", "sat"), ("r2", "rx")]
    # Section IV: "PEPsal runs at R1 and R2". With heterogeneous side delays and a full
    # satellite queue, no flow may be left behind by either PEP.
    result = invoke(["reproduce", "rappep", "--json", "--seeds", "1", "--no-plots", "-q",
                     "--scenarios", str(SCENARIOS)])
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["experiment"] for r in rows} == set(rappep.EXPERIMENTS)
    # Through the PEPs; raw VCP at 1% loss may not finish a 5 MB transfer in 300 s
    # (docs/reproductions/rappep.md).
    peps = [r for r in rows if r["protocol"].endswith("-pep")]
    assert peps and all(r["aborted"] == 0 for r in peps), [r for r in peps if r["aborted"]]


def test_time_series_of_the_figures_are_filled() -> None:
    from hetpath import sweep as sweep_mod

    base = _toml.loads((SCENARIOS / "base.toml").read_text(), "base.toml")
    text = rappep.scenario_text(base, "loss0", "xcp-pep", 1)
    task = sweep_mod.Task((("experiment", "loss0"),), "xcp-pep", 1, text, "base.toml")
    s = rappep.time_series(task)
    util = s["utilization"]["utilization"]
    # The satellite hop carries the five transfers: busy, never above its rate (give or
    # take the one 1500-byte packet a 100 ms sample can catch at its edge: 1.2%).
    assert len(util) > 10 and util.max() <= 1.015 and util.mean() > 0.3
    assert set(s["share"]["flow"]) == set(rappep.FLOWS)
    assert set(s["cwnd"]["flow"]) == set(rappep.FLOWS)
