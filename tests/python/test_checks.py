"""The run-time checks switch (``--check``, ``check=``, ``HETPATH_CHECK``): it reaches the
engine, a clean run passes, and a failed check is one ``hetpath: error:`` line."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import hetpath
import pytest
from helpers import invoke
from hetpath import _bridge

EXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "examples"


@pytest.mark.parametrize("value, on", [(None, False), ("", False), ("0", False), ("1", True), ("yes", True)])
def test_the_environment_turns_checks_on(monkeypatch: pytest.MonkeyPatch, value: str, on: bool) -> None:
    if value is None:
        monkeypatch.delenv(_bridge.CHECK_ENV, raising=False)
    else:
        monkeypatch.setenv(_bridge.CHECK_ENV, value)
    assert _bridge.checks_on() is on


def test_check_reaches_the_engine_and_a_clean_run_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_bridge.CHECK_ENV, raising=False)
    result = hetpath.run(EXAMPLES / "geo-loss.toml", check=True)
    link = result.summary["links"][0]
    assert link["offered"] >= link["delivered"] + link["drops"] + link["lost_packets"] > 0
    assert link["outage_losses"] <= link["lost_packets"]


def test_the_cli_flag_checks_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_bridge.CHECK_ENV, raising=False)
    result = invoke(["run", "--check", "--json", str(EXAMPLES / "geo-wlan.toml")])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["links"]
    assert _bridge.checks_on(), "--check turns them on for the workers too"


def test_a_violation_is_one_error_line(fake_core: ModuleType, small_toml: Path) -> None:
    fake_core.fail_with = fake_core.SimulationError(
        'small.toml: invariant violated at t = 1.000000000 s: link "l" a -> b: offered 3 != delivered 1 + '
        "queue drops 0 + channel losses 0 + outage losses 0 + in flight 1 (= 2)")
    result = invoke(["run", str(small_toml)])
    assert result.exit_code == 1
    assert result.stderr.startswith("hetpath: error: simulation failed: small.toml: invariant violated at t = ")
    assert result.stderr.count("\n") == 1
