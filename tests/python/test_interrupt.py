"""Ctrl-C stops a real run promptly, however slowly simulated time moves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import default_signals

ROOT = Path(__file__).resolve().parents[2]


def _spinning_scenario(tmp_path: Path) -> Path:
    """Seed 002's topology with a Mobile IP advertisement every microsecond (the shortest
    period taken): 1% of the run is tens of millions of events, which the engine used to
    run before checking for Ctrl-C."""
    text = (ROOT / "scenarios" / "ilc-tcp" / "base.toml").read_text()
    assert 'advertise = "1s"' in text and "stop_when_done = true" in text
    text = text.replace('advertise = "1s"', 'advertise = "1us"')
    text = text.replace("stop_when_done = true", "stop_when_done = false")
    path = tmp_path / "spin.toml"
    path.write_text(text)
    return path


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_sigint_stops_a_run_within_a_second(tmp_path: Path) -> None:
    path = _spinning_scenario(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hetpath", "run", str(path), "--quiet", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    try:
        time.sleep(2.5)  # import, load, and well into the run
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        waited = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert waited < 1.0, f"exited {waited:.2f} s after SIGINT"
