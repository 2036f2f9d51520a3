"""The result schema is the engine's, everywhere; sweeps aggregate bulk flows; provenance;
exit codes of user mistakes; engineering notation."""

from __future__ import annotations

import json
import os
from pathlib import Path

import hetpath
import pandas as pd
import pytest
from hetpath import sweep
from hetpath.report import eng
from helpers import FLOW_KEYS, LINK_KEYS, SCHEMA, SUMMARY_KEYS, invoke
from test_sweep import BASE, write_sweep

# test_sweep's base scenario with its flow made a bulk transfer (no size): it never
# completes, and runs to the 60 s horizon.
BULK = BASE.replace('size = "50KB"\n', "")


def test_the_python_summary_has_every_schema_key(small_toml: Path) -> None:
    res = hetpath.run(small_toml)
    assert list(res.summary) == SUMMARY_KEYS
    assert list(res.flows.columns) == ["seed", *FLOW_KEYS]  # the run's seed, for concatenation
    assert list(res.links.columns) == ["seed", *LINK_KEYS]
    assert list(res.flow_series.columns) == SCHEMA["flow_series"]
    assert list(res.link_series.columns) == SCHEMA["link_series"]


def test_every_flow_metric_reaches_the_sweep_files_and_json(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, 'seeds = 2\n[grid]\n"link.l.delay" = ["10ms", "50ms"]\n')
    out = tmp_path / "out"
    result = invoke(["sweep", str(path), "-q", "--json", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    runs = pd.read_csv(out / "runs.csv")
    summary = pd.read_csv(out / "summary.csv")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    for key in FLOW_KEYS:
        assert (key if key != "name" else "flow") in runs.columns, key
    for m in sweep.flow_metrics():
        assert m in summary.columns and f"{m}_ci95" in summary.columns, m
        assert all(m in r for r in rows), m
    assert {"seeds", "excluded"} <= set(summary.columns)
    assert list(summary["seeds"]) == [2, 2]


def test_a_bulk_flow_aggregates_goodput_over_every_run(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(BULK)
    path = tmp_path / "sweep.toml"
    path.write_text('[sweep]\nscenario = "base.toml"\nseeds = 3\n[grid]\n"link.l.rate" = ["1Mbps", "2Mbps"]\n')
    spec = sweep.load(path)
    raw = sweep.run(sweep.plan(spec))
    summary = sweep.aggregate(raw, ["link.l.rate", "protocol", "flow"])
    assert (summary["completed"] == 0).all() and (summary["excluded"] == 0).all()
    for _, row in summary.iterrows():
        goodputs = raw.loc[raw["link.l.rate"] == row["link.l.rate"], "goodput_bps"]
        assert row["goodput_bps"] == pytest.approx(goodputs.mean())
        assert row["goodput_bps"] > 0 and row["retransmissions"] > 0
    assert summary["completion_s"].isna().all(), "a bulk flow never completes"


def test_numeric_axes_stay_numeric(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, '[grid]\n"flow.f.start" = ["0s"]\n"tcp.mss" = [1000, 1460]\n')
    raw = sweep.run(sweep.plan(sweep.load(path)))
    assert pd.api.types.is_integer_dtype(raw["tcp.mss"])
    result = invoke(["sweep", str(path), "-q", "--json"])
    assert [json.loads(line)["tcp.mss"] for line in result.stdout.splitlines()] == [1000, 1460]


def test_out_holds_the_provenance_and_the_scenario(tmp_path: Path, small_toml: Path) -> None:
    out = tmp_path / "out"
    result = invoke(["run", str(small_toml), "-q", "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    saved = json.loads((out / "summary.json").read_text())
    prov = saved["provenance"]
    text = small_toml.read_text()
    import hashlib

    assert prov["scenario_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert prov["seed"] == saved["seed"] == 1
    assert prov["hetpath_version"] == hetpath.__version__
    assert prov["started_at"] <= prov["finished_at"]
    assert (out / "scenario.toml").read_text() == text
    # --json stays the engine's deterministic summary.
    assert "provenance" not in json.loads(invoke(["run", str(small_toml), "--json"]).stdout)


@pytest.mark.parametrize("command", ["run", "sweep", "validate"])
def test_a_missing_file_is_a_user_error_for_every_command(tmp_path: Path, command: str) -> None:
    result = invoke([command, str(tmp_path / "missing.toml")])
    assert result.exit_code == 2
    assert result.stderr == f"hetpath: error: {tmp_path / 'missing.toml'}: no such file\n"


def test_an_unusable_out_fails_before_anything_runs(tmp_path: Path, fake_core, small_toml: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    calls = []
    real_run = fake_core.run
    fake_core.run = lambda *a, **k: calls.append(1) or real_run(*a, **k)
    for args in (["run", str(small_toml)], ["sweep", str(write_sweep(tmp_path, "seeds = 1\n"))]):
        result = invoke([*args, "--out", str(blocker / "sub")])
        assert result.exit_code == 2, result.stderr
        assert "--out" in result.stderr and str(blocker / "sub") in result.stderr
    assert calls == [], "nothing may run before --out is checked"


@pytest.mark.parametrize("value, text", [
    (5360, "5.36k"), (0.00123, "1.23m"), (42, "42.0"), (999.6, "1.00k"), (1.5e6, "1.50M"),
    (-32000, "-32.0k"), (0, "0"), (2.1e-17, "2.10e-17"),
])
def test_engineering_notation(value: float, text: str) -> None:
    assert eng(value) == text


def test_the_sweep_table_fits_80_columns_without_noise(tmp_path: Path) -> None:
    from hetpath.commands.sweep import summary_table
    from rich.console import Console

    path = write_sweep(tmp_path, 'seeds = 2\n[grid]\nbandwidth = [{ label = "1M", "link.l.rate" = "1Mbps" }]\n'
                                 '[protocol.newreno]\n"flow.f.cc" = "newreno"\n[protocol.cubic]\n"flow.f.cc" = "cubic"\n')
    spec = sweep.load(path)
    raw = sweep.run(sweep.plan(spec))
    keys = ["bandwidth", "protocol", "flow"]
    with open(os.devnull, "w") as devnull:
        console = Console(width=80, record=True, file=devnull)
        console.print(summary_table(sweep.aggregate(raw, keys), keys))
    lines = console.export_text().splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert not any("…" in ln for ln in lines), lines
    assert "e+" not in "".join(lines) and "± 0" not in "".join(lines)


def test_reproduce_checks_out_before_it_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = invoke(["reproduce", "rappep", "--quick", "--out", str(blocker)])
    assert result.exit_code == 2 and "not a directory" in result.stderr, result.stderr


def test_a_metric_no_run_has_is_a_float_column(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(BULK)
    path = tmp_path / "sweep.toml"
    path.write_text('[sweep]\nscenario = "base.toml"\n')
    summary = sweep.aggregate(sweep.run(sweep.plan(sweep.load(path))), ["protocol", "flow"])
    assert summary["completion_s"].isna().all() and summary["completion_s"].dtype == "float64"
