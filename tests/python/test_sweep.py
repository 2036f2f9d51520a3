"""Sweeps: sweep files, key paths, planning, parallel runs, aggregation, the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from hetpath import sweep
from hetpath.backends import LocalBackend, cpu_count
from hetpath.errors import ScenarioError
from hetpath.stats import mean_ci95, t975
from helpers import invoke

BASE = """
[scenario]
name = "s"
duration = "60s"
stop_when_done = true
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "1Mbps"
delay = "50ms"
channel = { model = "bernoulli", p = 0.01 }
[[flow]]
name = "f"
from = "a"
to = "b"
size = "50KB"
"""


def write_sweep(tmp_path: Path, body: str) -> Path:
    (tmp_path / "base.toml").write_text(BASE)
    path = tmp_path / "sweep.toml"
    path.write_text('[sweep]\nscenario = "base.toml"\n' + body)
    return path


def test_t_quantiles_match_the_table_and_the_normal_limit() -> None:
    assert t975(1) == pytest.approx(12.706)
    assert t975(30) == pytest.approx(2.042)
    assert t975(60) == pytest.approx(2.000, abs=1e-3)
    assert t975(10_000) == pytest.approx(1.960, abs=1e-3)


def test_mean_ci95_skips_missing_values() -> None:
    mean, ci, n = mean_ci95([1.0, 2.0, 3.0, None, float("nan")])
    assert (mean, n) == (2.0, 3)
    assert ci == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    assert mean_ci95([5.0]) == (5.0, None, 1)
    assert mean_ci95([]) == (None, None, 0)


def test_set_key_selects_array_entries_by_name() -> None:
    doc = {"flow": [{"name": "x"}, {"name": "f", "tcp": {"sack": True}}], "scenario": {}}
    sweep.set_key(doc, "flow.f.tcp.iw", 4)
    sweep.set_key(doc, "scenario.seed", 9)
    assert doc["flow"][1]["tcp"] == {"sack": True, "iw": 4}
    assert doc["scenario"]["seed"] == 9
    with pytest.raises(ScenarioError, match="no \\[\\[flow\\]\\] named 'g'.*defined: x, f"):
        sweep.set_key(doc, "flow.g.cc", "cubic")


def test_set_key_selects_a_named_agent() -> None:
    doc = {"agent": [{"kind": "split-pep", "node": "t"}, {"kind": "apohn", "name": "apohn", "sender": "s"}]}
    sweep.set_key(doc, "agent.apohn.alpha", 3)
    assert doc["agent"][1]["alpha"] == 3 and "alpha" not in doc["agent"][0]
    with pytest.raises(ScenarioError, match="no \\[\\[agent\\]\\] named 'booster'"):
        sweep.set_key(doc, "agent.booster.alpha", 3)


def test_grid_protocols_and_seeds_make_every_run(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, """seeds = 3
[grid]
"link.l.rate" = ["1Mbps", "2Mbps"]
both = [{ label = "near", "link.l.delay" = "10ms" }, { label = "far", "link.l.delay" = "300ms" }]
[protocol.reno]
"flow.f.cc" = "reno"
[protocol.cubic]
"flow.f.cc" = "cubic"
""")
    spec = sweep.load(path)
    tasks = sweep.plan(spec)
    assert len(tasks) == 2 * 2 * 2 * 3
    assert {t.point for t in tasks} == {
        (("link.l.rate", r), ("both", d)) for r in ("1Mbps", "2Mbps") for d in ("near", "far")
    }
    raw = sweep.run(tasks, LocalBackend(min(2, cpu_count())))
    assert len(raw) == len(tasks)
    summary = sweep.aggregate(raw, ["link.l.rate", "both", "protocol", "flow"])
    assert len(summary) == 8
    assert (summary["runs"] == 3).all() and (summary["completed"] == 3).all()
    far = summary[summary["both"] == "far"]["completion_s"].min()
    near = summary[summary["both"] == "near"]["completion_s"].max()
    assert far > near


def test_parallel_and_serial_runs_agree(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, 'seeds = 4\n[grid]\n"flow.f.size" = ["20KB", "80KB"]\n')
    tasks = sweep.plan(sweep.load(path))
    serial = sweep.run(tasks, LocalBackend(1))
    parallel = sweep.run(tasks, LocalBackend(min(2, cpu_count())))
    pd.testing.assert_frame_equal(serial, parallel)


def test_aggregate_counts_what_did_not_complete() -> None:
    raw = pd.DataFrame([
        {"protocol": "p", "flow": "f", "completed": True, "aborted": False, "completion_s": 2.0,
         "goodput_bps": 1.0, "retransmissions": 0, "timeouts": 0},
        {"protocol": "p", "flow": "f", "completed": True, "aborted": False, "completion_s": 4.0,
         "goodput_bps": 1.0, "retransmissions": 0, "timeouts": 0},
        {"protocol": "p", "flow": "f", "completed": False, "aborted": True, "completion_s": None,
         "goodput_bps": 0.1, "retransmissions": 9, "timeouts": 16},
        {"protocol": "p", "flow": "f", "completed": False, "aborted": False, "completion_s": None,
         "goodput_bps": 0.1, "retransmissions": 9, "timeouts": 3},
    ])
    row = sweep.aggregate(raw, ["protocol", "flow"]).iloc[0]
    assert (row["runs"], row["completed"], row["aborted"], row["unfinished"]) == (4, 2, 1, 1)
    assert row["completion_s"] == 3.0  # never averaged with the runs that did not finish
    assert row["timeouts"] == 0.0


@pytest.mark.parametrize("body, message", [
    ("seeds = 0\n", "sweep.seeds: expected a positive count"),
    ('[grid]\n"link.l.rate" = []\n', "grid.'link.l.rate': expected a non-empty list"),
    ('[grid]\n"flow.nope.cc" = ["reno"]\n', "no \\[\\[flow\\]\\] named 'nope'"),
    ('[grid]\n"flow.f.cc" = ["vegas"]\n', "unknown controller 'vegas'"),
    ("[sweeep]\n", "unknown table"),
    ("bogus = 1\n", "sweep: unknown key"),
])
def test_bad_sweep_files_name_the_problem(tmp_path: Path, body: str, message: str) -> None:
    path = write_sweep(tmp_path, body)
    with pytest.raises(ScenarioError, match=message):
        sweep.plan(sweep.load(path))


def test_cli_sweep_prints_json_and_writes_csv(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, 'seeds = 2\n[grid]\n"flow.f.size" = ["20KB", "40KB"]\n')
    result = invoke(["sweep", str(path), "--json", "--jobs", str(min(2, cpu_count())), "--out", str(tmp_path / "o"), "-q"])
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["flow.f.size"] for r in rows] == ["20KB", "40KB"]
    assert all(r["runs"] == 2 and r["completion_s"] > 0 for r in rows)
    assert (tmp_path / "o" / "runs.csv").is_file() and (tmp_path / "o" / "summary.csv").is_file()


def test_cli_sweep_bad_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, 'seeds = "many"\n')
    result = invoke(["sweep", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("hetpath: error: ") and "sweep.seeds" in result.stderr
    assert "Traceback" not in result.stderr
