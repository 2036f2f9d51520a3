"""`hetpath reproduce apohn`: the grid, the paper data, the per-run record, the findings
and figures from a synthetic frame, and the machine-readable contract."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import reproductions

from hetpath import _bridge, _toml
from hetpath.backends import LocalBackend
from hetpath.reproduce import PAPERS, apohn, apohn_plots, paper_module
from hetpath.reproduce.common import Context, attach, comparison_rows, load_paper
from hetpath.sweep import Task

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios" / "apohn"
KEYS = {"experiment", "protocol", "params", "metric", "ours", "ci95", "paper", "seeds", "aborted"}


def _ctx(quick: bool, seeds: int | None = None, out: Path | None = None) -> Context:
    return Context(scenarios=SCENARIOS, quick=quick, backend=LocalBackend(1), out_dir=out, seeds=seeds)


def test_registered() -> None:
    assert PAPERS["apohn"] == "apohn" and paper_module("apohn") is apohn


def test_grid_shape() -> None:
    full = apohn.grid(_ctx(False))
    assert len(full) == len(apohn.FLOWS) * len(apohn.PROTOCOLS) * apohn.SEEDS
    quick = apohn.grid(_ctx(True))
    assert len(quick) == len(apohn.QUICK_FLOWS) * len(apohn.PROTOCOLS) * apohn.QUICK_SEEDS
    assert len(apohn.grid(_ctx(True, seeds=3))) == len(apohn.QUICK_FLOWS) * len(apohn.PROTOCOLS) * 3
    assert {dict(t.point)["flows"] for t in quick} == set(apohn.QUICK_FLOWS)
    assert {t.protocol for t in quick} == set(apohn.PROTOCOLS)
    for t in quick:
        doc = _toml.loads(t.text, t.source)
        n = dict(t.point)["flows"]
        flows = doc["flow"]
        assert [f["name"] for f in flows] == ["bulk"] + [f"bulk{i}" for i in range(2, n + 1)]
        assert all((f["from"], f["to"], f["cc"]) == ("sender", "receiver", "newreno") for f in flows)
        assert doc["scenario"]["duration"] == f"{apohn.QUICK_DURATION_S:g}s"
        assert Path(t.source).name == apohn.PROTOCOLS[t.protocol]


def test_every_scenario_of_the_grid_validates() -> None:
    for t in apohn.grid(_ctx(True)):
        if dict(t.point)["flows"] == 10:
            _bridge.validate_text(t.text, t.source)


def test_paper_values_load_and_cover_grid_points() -> None:
    values = load_paper(SCENARIOS / "paper.toml")
    assert len(values) == 13 and all(v.section and v.quote for v in values)
    assert {v.protocol for v in values} <= set(apohn.PROTOCOLS)
    assert {v.experiment for v in values} == {apohn.EXPERIMENT}
    order = apohn.label_order(None)
    points = [{"flows": str(n), "protocol": p} for n in apohn.FLOWS for p in apohn.PROTOCOLS]
    for v in values:
        assert v.metric in apohn.METRICS + ("change_vs_one",)
        assert any(v.covers(pt, order) for pt in points), v
    # The quick grid reaches every stated point too.
    assert {v.params["flows"] for v in values} <= {str(n) for n in apohn.QUICK_FLOWS}


def _synthetic_runs() -> pd.DataFrame:
    """Two seeds of flows 1 and 10 (and 5), with known numbers."""
    rows = []
    base = {"newreno": 4.0, "satpep": 5.0, "apohn": 6.0}
    change = {"newreno": -0.3, "satpep": -0.1, "apohn": 0.01}
    for n in (1, 5, 10):
        for proto in apohn.PROTOCOLS:
            for seed in (1, 2):
                g = base[proto] * (1 + (change[proto] if n == 10 else 0)) + 0.01 * seed
                rows.append({
                    "flows": n, "protocol": proto, "seed": seed, "aborted": False, "goodput_mbps": g,
                    "packets_delivered": g * 1e6 * 2000 / 8 / 1460, "timeouts": 3 if proto == "newreno" else 0,
                    "retransmissions": 0, "jain": 1.0, "bridge_drops": 800 if proto == "newreno" else 0,
                    "bridge_queue_mean": 6.0, "bridge_queue_median": 6.0, "bridge_queue_p10": 5.0,
                    "bridge_queue_p90": 7.0, "bridge_queue_in_5_7": 0.8, "sat_drops": 0,
                    "sim_time_s": 2000.0, "events": 1, "stalls": 3 if proto == "newreno" else 0,
                })
    return pd.DataFrame(rows)


def test_findings_from_a_synthetic_frame() -> None:
    found = apohn.findings(_synthetic_runs())
    by = {(f.protocol, f.params["flows"], f.metric): f for f in found}
    assert by["apohn", 1, "goodput_mbps"].ours == pytest.approx(6.015)
    assert by["apohn", 1, "goodput_mbps"].seeds == 2
    assert ("apohn", 1, "change_vs_one") not in by
    # Per seed: (6.06 * 1.01 ... ) / (6.0 + 0.01 s) - 1, close to +1%.
    assert by["apohn", 10, "change_vs_one"].ours == pytest.approx(0.01, abs=1e-3)
    assert by["satpep", 10, "change_vs_one"].ours == pytest.approx(-0.1, abs=1e-3)
    assert by["newreno", 5, "change_vs_one"].ours == pytest.approx(0.0)
    assert [f.params["flows"] for f in found] == sorted(f.params["flows"] for f in found)
    paper = load_paper(SCENARIOS / "paper.toml")
    attach(found, paper, apohn.label_order(None))
    rows = {(r["protocol"], r["point"], r["metric"], r["paper"]): r for r in comparison_rows(found, paper)}
    assert len(rows) == len(paper)
    orderings = {k: r for k, r in rows.items() if r["paper"].startswith("> ")}
    assert len(orderings) == 4 and all(r["verdict"] == "holds" for r in orderings.values())
    rows = {k[:3]: r for k, r in rows.items() if k not in orderings}
    assert rows["apohn", "flows=10", "change_vs_one"]["verdict"] == "holds"
    assert rows["newreno", "flows=10", "change_vs_one"]["verdict"] == "holds"
    assert rows["apohn", "flows=1", "bridge_queue_median"]["verdict"] == "holds"
    # Three timeouts in each of two seeds: a CI of zero width, wholly above one.
    assert rows["newreno", "flows=1", "timeouts"]["verdict"] == "holds"
    assert rows["newreno", "flows=1", "stalls"]["verdict"] == "holds"
    assert rows["satpep", "flows=1", "goodput_mbps"]["ours/paper"] == "0.964"
    assert rows["satpep", "flows=1", "goodput_mbps"]["verdict"] == "holds"
    frame = apohn.summary_frame(found)
    assert {"flows", "protocol", "metric", "ours", "ci95"} <= set(frame.columns)
    assert apohn.capacity_pkts(found) == pytest.approx(6.015e6 * 0.6 / (8 * 1460) + 50)


def test_a_short_run_gives_its_record_and_the_figures_series() -> None:
    base, source = apohn.load_base(SCENARIOS, "apohn")
    one = apohn.run_one(Task((("flows", 1),), "apohn", 1, apohn.scenario_text(base, 1, 20.0), source))
    r = one["run"]
    assert (r["flows"], r["protocol"], r["seed"]) == (1, "apohn", 1)
    assert r["goodput_mbps"] > 1 and r["packets_delivered"] > 1000 and r["bridge_drops"] == 0
    assert 0 <= r["bridge_queue_p10"] <= r["bridge_queue_median"] <= r["bridge_queue_p90"] <= apohn.BRIDGE_BUFFER_PKTS
    json.dumps(one)  # plain values, for the results store
    s = {name: pd.DataFrame(cols) for name, cols in one["series"].items()}
    assert list(s["goodput"]["time_s"]) == [10.0, 20.0]
    assert (s["goodput"]["goodput_mbps"] > 0).all()
    assert len(s["queue"]) > 100 and len(s["cwnd"]) > 100
    # Not the figures' run: no series; two flows counted together.
    base, source = apohn.load_base(SCENARIOS, "newreno")
    two = apohn.run_one(Task((("flows", 2),), "newreno", 1, apohn.scenario_text(base, 2, 20.0), source))
    assert two["series"] is None and two["run"]["flows"] == 2 and two["run"]["goodput_mbps"] > 0


def test_plots_are_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure is written, holds data (test_figures' checks) and nothing warns."""
    from matplotlib.figure import Figure

    from figure_checks import check_png, figure_problems

    problems: dict[str, list[str]] = {}
    original = Figure.savefig

    def savefig(self: Figure, fname: Any, *args: Any, **kw: Any) -> Any:
        problems[Path(fname).name] = figure_problems(self)
        return original(self, fname, *args, **kw)

    monkeypatch.setattr(Figure, "savefig", savefig)
    found = apohn.findings(_synthetic_runs())
    attach(found, load_paper(SCENARIOS / "paper.toml"), apohn.label_order(None))
    t = np.arange(0, 100.0, 0.1)
    series = {
        p: {"goodput": pd.DataFrame({"time_s": np.arange(10.0, 101.0, 10.0), "goodput_mbps": np.full(10, 5.0)}),
            "cwnd": pd.DataFrame({"time_s": t, "flow": "bulk", "cwnd_pkts": 100 + 50 * np.sin(t / 10)}),
            "queue": pd.DataFrame({"time_s": t, "queue_pkts": np.round(5 + 2 * np.sin(t))})}
        for p in apohn.PROTOCOLS
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = apohn_plots.write_all(series, found, tmp_path)
    assert not caught, [f"{w.category.__name__}: {w.message}" for w in caught]
    names = {p.name for p in written}
    assert names == {"fig8_goodput.png", "fig9_cwnd.png", "fig10_bridge_buffer.png",
                     "fig10_bridge_buffer_hist.png", "fig11_delivered.png", "fig12_flows.png"}
    for p in written:
        check_png(p)
    assert not {name: ps for name, ps in problems.items() if ps}


@reproductions.group("apohn")
def test_json_lines_follow_the_contract(quick_reproduction) -> None:
    run = quick_reproduction("apohn")
    assert run.exit_code == 0, run.stderr
    rows = run.rows
    assert rows and all(set(r) == KEYS for r in rows)
    assert {r["protocol"] for r in rows} == set(apohn.PROTOCOLS)
    assert {r["params"]["flows"] for r in rows} == set(apohn.QUICK_FLOWS)
    stated = {(v.protocol, v.params["flows"], v.metric) for v in load_paper(SCENARIOS / "paper.toml")}
    assert {(r["protocol"], str(r["params"]["flows"]), r["metric"]) for r in rows if r["paper"] is not None} == stated
    goodput = {r["protocol"]: r["ours"] for r in rows if r["params"]["flows"] == 1 and r["metric"] == "goodput_mbps"}
    # LLE-TCP keeps the receiver's ACKs off the medium: APOHN carries the most.
    assert goodput["apohn"] > goodput["satpep"] and goodput["apohn"] > goodput["newreno"]
