"""`hetpath reproduce PAPER --sensitivity` (reproduce/sensitivity.py): the file is checked,
overrides land only where they belong and are refused where they would lie, the pair and
the report read the points as documented, and the sweep writes, resumes and fills a
write-up. The real papers' quick sweeps are in test_sensitivity_papers.py."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import invoke

from hetpath import _toml
from hetpath.errors import ScenarioError
from hetpath.reproduce import sensitivity as sens
from hetpath.reproduce import sensitivity_report as report
from hetpath.sweep import Task

REPO = Path(__file__).resolve().parents[2]

TOML = """
[sensitivity]
grid = "quick"
seeds = 2

[parameter.sat_queue]
title = "satellite queue"
key = "link.sat.queue"
values = ["250pkt", "1000pkt"]
default = "1000pkt"
source = "a test's"

[parameter.min_rto]
title = "minimum RTO"
values = [{ label = "200ms", "tcp.min_rto" = "200ms" }, { label = "1s", "tcp.min_rto" = "1s" }]
default = "1s"
source = "a test's"
"""


def _plan(tmp_path: Path, text: str = TOML) -> sens.Plan:
    path = tmp_path / "sensitivity.toml"
    path.write_text(text)
    return sens.load(path)


@pytest.mark.parametrize("change, message", [
    (("grid = \"quick\"", "grid = \"half\""), "sensitivity.grid: expected one of full, quick"),
    (("seeds = 2", "seeds = 0"), "sensitivity.seeds"),
    (("default = \"1000pkt\"", "default = \"500pkt\""), "parameter.sat_queue.default: '500pkt' is not one of"),
    (("key = \"link.sat.queue\"\n", ""), "parameter.sat_queue.key: missing"),
    (("source = \"a test's\"\n", "sources = \"x\"\n"), "parameter.sat_queue.sources: unknown key"),
    (("values = [\"250pkt\", \"1000pkt\"]", "values = [\"1000pkt\"]"), "expected at least two values"),
    (("seeds = 2", "seeds = 2\npair = [\"sat_queue\", \"rto\"]"), "sensitivity.pair: expected two different"),
    (("{ label = \"200ms\", \"tcp.min_rto\" = \"200ms\" }", "{ label = \"200ms\" }"),
     r"parameter.min_rto.values\[0\]: sets no key; only the default may"),
])
def test_a_bad_file_names_the_key(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(")):
        _plan(tmp_path, TOML.replace(*change, 1))


def _tasks() -> list[Task]:
    """Two runs of RAPPEP's base scenario: one with its satellite link, one without."""
    path = REPO / "scenarios" / "rappep" / "base.toml"
    doc = _toml.loads(path.read_text(), str(path))
    bare = {**doc, "link": [link for link in doc["link"] if link["name"] != "sat"]}
    bare["link"].append({**next(link for link in doc["link"] if link["name"] == "sat"), "name": "geo"})
    return [Task((), "a", 1, _toml.dumps(doc), str(path)), Task((), "b", 1, _toml.dumps(bare), str(path))]


def test_an_override_lands_only_in_the_runs_that_have_its_entry(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    a, b = sens.apply(_tasks(), plan.parameters["sat_queue"].overrides("250pkt"))
    sat = next(link for link in _toml.loads(a.text, "a")["link"] if link["name"] == "sat")
    assert sat["queue"] == "250pkt"
    assert b.text == _tasks()[1].text  # no [[link]] named sat: untouched
    for task in sens.apply(_tasks(), plan.parameters["min_rto"].overrides("200ms")):
        assert _toml.loads(task.text, "t")["tcp"]["min_rto"] == "200ms"


def test_an_override_that_would_lie_is_refused(tmp_path: Path) -> None:
    plan = _plan(tmp_path, TOML.replace('"link.sat.queue"', '"link.none.queue"'))
    with pytest.raises(ScenarioError, match="applies to none of the paper's runs"):
        sens.apply(_tasks(), plan.parameters["sat_queue"].overrides("250pkt"))
    # A key the reproduction varies between its runs: the sweep would flatten it.
    tasks = _tasks()
    varied = [Task((), "c", 1, tasks[0].text.replace('queue = "1000pkt"', 'queue = "50pkt"'), "c"), tasks[0]]
    with pytest.raises(ScenarioError, match="the reproduction itself varies it"):
        sens.apply(varied, _plan(tmp_path).parameters["sat_queue"].overrides("250pkt"))
    # A default that is not what the runs have: the defaults would be misreported.
    wrong = _plan(tmp_path, TOML.replace('values = ["250pkt", "1000pkt"]', 'values = ["250pkt", "999pkt"]')
                  .replace('default = "1000pkt"', 'default = "999pkt"'))
    with pytest.raises(ScenarioError, match='the default sets "999pkt", but the paper.s runs have "1000pkt"'):
        sens.apply(tasks, wrong.parameters["sat_queue"].overrides("250pkt"))
    # A value the engine refuses, named with its parameter.
    bad = _plan(tmp_path, TOML.replace('"250pkt"', '"-3pkt"'))
    with pytest.raises(ScenarioError, match=r"parameter.sat_queue = '-3pkt': the engine refuses"):
        sens.apply(tasks, bad.parameters["sat_queue"].overrides("-3pkt"))


def _row(kind: str, claim: int, ratio: Any, verdict: str, parameter: str = "", value: Any = "",
         parameter2: str = "", value2: Any = "") -> dict[str, Any]:
    return {"kind": kind, "parameter": parameter, "value": value, "parameter2": parameter2, "value2": value2,
            "claim": claim, "ratio": ratio, "verdict": verdict, "section": "", "experiment": "e", "protocol": "p",
            "point": "", "metric": "m", "paper": "1", "ours/paper": str(ratio)}


def test_reach_and_the_parameter_that_moves_a_claim_most(tmp_path: Path) -> None:
    plan = _plan(tmp_path, TOML.replace('values = ["250pkt", "1000pkt"]', 'values = ["250pkt", "500pkt", "1000pkt"]'))
    rows = [
        # claim 1: does not hold at the defaults; holds with the small queue
        _row(sens.DEFAULT, 1, 0.5, "does not hold"),
        _row(sens.ONE, 1, 0.95, "holds", "sat_queue", "250pkt"),
        _row(sens.ONE, 1, 0.6, "does not hold", "sat_queue", "500pkt"),
        _row(sens.ONE, 1, 0.55, "does not hold", "min_rto", "200ms"),
        # claim 2: crosses 1 between two queue values, no point holds
        _row(sens.DEFAULT, 2, 1.5, "does not hold"),
        _row(sens.ONE, 2, 0.7, "does not hold", "sat_queue", "250pkt"),
        _row(sens.ONE, 2, 1.4, "does not hold", "sat_queue", "500pkt"),
        _row(sens.ONE, 2, 1.45, "does not hold", "min_rto", "200ms"),
        # claim 3: min_rto moves it most, never reached
        _row(sens.DEFAULT, 3, 2.0, "does not hold"),
        _row(sens.ONE, 3, 2.0, "does not hold", "sat_queue", "250pkt"),
        _row(sens.ONE, 3, 2.0, "does not hold", "sat_queue", "500pkt"),
        _row(sens.ONE, 3, 3.0, "does not hold", "min_rto", "200ms"),
    ]
    s1, s2, s3 = report.summarize(plan, rows)
    assert s1.reach == "holds at sat_queue=250pkt" and s1.moves_most.startswith("sat_queue (0.5–0.95)")
    assert s2.reach.startswith("crosses the paper's value between swept values (sat_queue 250pkt–500pkt)")
    assert s3.reach == "not reached inside the ranges" and s3.moves_most == "min_rto (2–3)"
    assert sens.choose_pair(plan, rows) == ("sat_queue", "min_rto")
    points = sens.pair_points(plan, ("sat_queue", "min_rto"), quick=False)
    assert [p.settings for p in points] == [(("sat_queue", "250pkt"), ("min_rto", "200ms")),
                                            (("sat_queue", "500pkt"), ("min_rto", "200ms"))]
    assert [p.settings for p in sens.pair_points(plan, ("sat_queue", "min_rto"), quick=True)] == [points[0].settings]


def test_a_claim_that_held_can_stop_holding(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    rows = [_row(sens.DEFAULT, 1, 1.0, "holds"), _row(sens.ONE, 1, 1.6, "does not hold", "sat_queue", "250pkt"),
            _row(sens.ONE, 1, None, "not testable", "min_rto", "200ms")]
    (s,) = report.summarize(plan, rows)
    assert s.reach == ("holds at the defaults; does not hold at 1 of 2 other points (sat_queue=250pkt); "
                       "not testable at 1 of 2 other points (min_rto=200ms)")


@pytest.fixture()
def scenarios(tmp_path: Path) -> Path:
    where = tmp_path / "rappep"
    shutil.copytree(REPO / "scenarios" / "rappep", where)
    (where / "sensitivity.toml").write_text(TOML)
    return where


def test_the_sweep_writes_resumes_and_fills_a_write_up(scenarios: Path, tmp_path: Path) -> None:
    doc = tmp_path / "rappep.md"
    doc.write_text(f"# RAPPEP\n\n## What it would take\n\nBy hand.\n\n{report.BEGIN}\nSTALE-TEXT\n{report.END}\n\nAfter.\n")
    out = tmp_path / "out"
    args = ["reproduce", "rappep", "--sensitivity", "--quick", "-q", "--scenarios", str(scenarios), "--out", str(out)]
    run = invoke([*args, "--write-up", str(doc)])
    assert run.exit_code == 0, run.stderr
    with (out / "sensitivity.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    claims = len({r["claim"] for r in rows})
    # the defaults, one point per parameter (two values each), and the pair's one corner
    points = {(r["kind"], r["parameter"], r["value"], r["parameter2"], r["value2"]) for r in rows}
    assert len(points) == 4 and len(rows) == 4 * claims
    assert {r["verdict"] for r in rows} <= {"holds", "does not hold", "not testable"}
    assert sorted(p.name for p in (out / "figures").iterdir())[0] == "claim-001.png"
    text = doc.read_text()
    assert "By hand." in text and "After." in text and "STALE-TEXT" not in text
    assert text.endswith(f"{report.END}\n\nAfter.\n")
    assert "Generated by `hetpath reproduce rappep --sensitivity --quick`" in text
    assert f"Of {claims} claims: holds at hetpath's defaults" in text
    # Resumed: every run is in the store, nothing runs again, the same table comes out.
    stored = (out / "results.jsonl").read_bytes()
    again = invoke([*args, "--resume", "--no-plots"])
    assert again.exit_code == 0, again.stderr
    assert (out / "results.jsonl").read_bytes() == stored
    with (out / "sensitivity.csv").open(newline="") as fh:
        assert list(csv.DictReader(fh)) == rows
    # Half the runs lost: resumed on a Dask cluster, the rest run there, and the table is the same.
    lines = stored.splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    on_dask = invoke([*args, "--resume", "--no-plots", "--backend", "dask", "-j", "2"])
    assert on_dask.exit_code == 0, on_dask.stderr
    assert len((out / "results.jsonl").read_bytes().splitlines()) == len(lines)
    with (out / "sensitivity.csv").open(newline="") as fh:
        assert list(csv.DictReader(fh)) == rows


def test_usage_errors_exit_2(scenarios: Path, tmp_path: Path) -> None:
    base = ["reproduce", "rappep", "--scenarios", str(scenarios), "--out", str(tmp_path / "o")]
    assert "go with --sensitivity" in invoke([*base, "--write-up", str(scenarios / "base.toml")]).stderr
    no_markers = invoke([*base, "--sensitivity", "--write-up", str(scenarios / "base.toml")])
    assert no_markers.exit_code == 2 and "expected the lines <!-- sensitivity:begin -->" in no_markers.stderr
    (scenarios / "sensitivity.toml").write_text(TOML.replace('"link.sat.queue"', '"link.sat.queue_size"'))
    bad = invoke([*base, "--sensitivity", "--quick"])
    assert bad.exit_code == 2 and "parameter.sat_queue" in bad.stderr and "queue_size" in bad.stderr
