"""Behaviour of the Python layer itself, with a stand-in engine that misbehaves on demand."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import hetpath
import pytest
from helpers import invoke
from hetpath import _bridge
from hetpath.cli import one_line


def test_core_scenario_error_is_translated(fake_core: ModuleType, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[scenario]\n")
    with pytest.raises(hetpath.ScenarioError) as info:
        hetpath.run(bad)
    assert not isinstance(info.value, fake_core.ScenarioError)
    assert isinstance(info.value, (ValueError, hetpath.HetpathError))
    assert "bad.toml" in str(info.value)


def test_core_simulation_error_is_translated(fake_core: ModuleType, small_toml: Path) -> None:
    fake_core.fail_with = fake_core.SimulationError("event queue exploded")
    with pytest.raises(hetpath.SimulationError, match="event queue exploded") as info:
        hetpath.run(small_toml)
    assert isinstance(info.value, RuntimeError)


def test_simulation_error_cli(fake_core: ModuleType, small_toml: Path) -> None:
    fake_core.fail_with = fake_core.SimulationError("event queue exploded")
    result = invoke(["run", str(small_toml)])
    assert result.exit_code == 1
    assert result.stderr == "hetpath: error: simulation failed: event queue exploded\n"


class PanicException(BaseException):
    """Stands in for pyo3's exception for a Rust panic (also a BaseException)."""


def test_an_engine_panic_is_one_line_not_a_traceback(fake_core: ModuleType, small_toml: Path) -> None:
    fake_core.fail_with = PanicException("index out of bounds")
    result = invoke(["run", str(small_toml)])
    assert result.exit_code == 1
    assert result.stderr.startswith("hetpath: error: simulation failed: internal error")
    assert "index out of bounds" in result.stderr
    assert "Traceback" not in result.stderr


def test_python_errors_are_not_mistaken_for_scenario_errors(fake_core: ModuleType, small_toml: Path) -> None:
    def progress(_t: float, _end: float) -> None:
        raise ValueError("from the callback")

    with pytest.raises(ValueError, match="from the callback") as info:
        hetpath.run(small_toml, progress=progress)
    assert not isinstance(info.value, hetpath.HetpathError)


def test_progress_called_in_order(fake_core: ModuleType, small_toml: Path) -> None:
    calls: list[tuple[float, float]] = []
    hetpath.run(small_toml, progress=lambda t, end: calls.append((t, end)))
    assert calls and calls[-1][0] == pytest.approx(calls[-1][1])
    assert [t for t, _ in calls] == sorted(t for t, _ in calls)


def test_keyboard_interrupt_exits_130(fake_core: ModuleType, small_toml: Path) -> None:
    fake_core.fail_with = KeyboardInterrupt()
    result = invoke(["run", str(small_toml)])
    assert result.exit_code == 130
    assert result.stderr.strip() == "hetpath: interrupted"
    assert "Traceback" not in result.stderr


def test_pcap_dir_is_created(fake_core: ModuleType, small_toml: Path, tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    hetpath.run(small_toml, pcap_dir=target)
    assert len(list(target.glob("*.pcap"))) == 2


def test_missing_core(monkeypatch: pytest.MonkeyPatch, small_toml: Path) -> None:
    monkeypatch.setitem(sys.modules, "hetpath._core", None)  # makes the import fail
    with pytest.raises(hetpath.CoreMissingError, match="scripts/setup.sh"):
        _bridge.core()
    result = invoke(["run", str(small_toml)])
    assert result.exit_code == 1 and result.stderr.startswith("hetpath: error: the compiled extension")
    assert "engine not built" in invoke(["--version"]).stdout


def test_one_line_drops_source_snippets() -> None:
    msg = "x.toml: TOML parse error at line 3, column 8\n  |\n3 | rate = \"10\n  |        ^\ninvalid string"
    assert one_line(msg) == "x.toml: TOML parse error at line 3, column 8; invalid string"
    assert one_line("single") == "single"


def test_import_does_not_load_the_engine_or_pandas() -> None:
    """`import hetpath` and `hetpath --help` stay fast: heavy modules load on use."""
    import subprocess

    code = (
        "import sys, hetpath, hetpath.cli; "
        "print(sorted(m for m in ('pandas', 'matplotlib', 'hetpath._core') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_empty_series_write_and_plot(fake_core: ModuleType, small_toml: Path, tmp_path: Path) -> None:
    """A run with no samples (e.g. sample interval longer than the run) still writes and plots."""
    res = hetpath.run(small_toml)
    assert res.flow_series.empty
    written = res.write(tmp_path) + res.plot(tmp_path)
    assert all(p.stat().st_size > 0 for p in written if p.suffix == ".png")
