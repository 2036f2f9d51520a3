"""The live benches' testbed leaves nothing behind: a bench ended by SIGTERM unwinds like
Ctrl-C (``bench/live_cli.run``), so its namespaces and the commands in them are gone
when it exits (status 143); after ``kill -9``, the next testbed's start removes the
``hpt-<pid>-*`` and ``hp-<pid>-*`` namespaces the dead owner left and what still runs
in them. Skipped with the reason where root, TUN or the binary are missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from hetpath.testbed import Testbed
from helpers import live_unavailable
from test_emulate_hygiene import kill_all, running, scenario

SKIP = live_unavailable("hp-probe-testbed-hygiene")
pytestmark = pytest.mark.live(SKIP and f"live mode unavailable: {SKIP}")

BENCH = Path(__file__).resolve().parents[2] / "bench"


def owned(pid: int) -> list[str]:
    try:
        names = os.listdir("/run/netns")
    except FileNotFoundError:
        return []
    return [n for n in names if n.startswith((f"hp-{pid}-", f"hpt-{pid}-"))]


def start_bench(tmp_path: Path, marker: str) -> subprocess.Popen:
    """A bench as the live benches are: main() run by ``live_cli.run``, a testbed open and
    a command running in its server namespace; it prints ``ready`` and waits."""
    script = tmp_path / "bench_like.py"
    script.write_text(textwrap.dedent(f"""
        import subprocess, sys, time
        from pathlib import Path
        sys.path.insert(0, {str(BENCH)!r})
        import live_cli
        from hetpath.testbed import Testbed

        def main():
            with Testbed(Path({str(scenario(tmp_path))!r}), "sat", out=Path({str(tmp_path / 'out')!r})) as tb:
                tb.popen("server", [sys.executable, "-c", "import time; time.sleep(600)", {marker!r}],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                print("ready", flush=True)
                time.sleep(600)
            return 0

        live_cli.run(main)
    """))
    p = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert p.stdout is not None
    line = p.stdout.readline()  # bounded: the testbed's start gives up after its own timeouts
    assert line.strip() == "ready", p.stderr.read() if p.stderr else line
    deadline = time.monotonic() + 10
    while not running(marker):
        assert time.monotonic() < deadline, "the command in the server namespace did not start"
        time.sleep(0.05)
    return p


def test_a_bench_ended_by_sigterm_removes_its_namespaces_and_commands(tmp_path: Path) -> None:
    """Python's default SIGTERM ended the process at once: its four namespaces and the
    server namespace's command were left behind."""
    marker = f"tbh-{uuid.uuid4().hex}"
    p = start_bench(tmp_path, marker)
    try:
        assert len(owned(p.pid)) == 4, owned(p.pid)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 128 + signal.SIGTERM, err
        assert "terminated" in err and "Traceback" not in err, err
        assert owned(p.pid) == [], "namespaces left after SIGTERM"
        time.sleep(0.2)
        assert running(marker) == [], "the server namespace's command outlived the bench"
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate(timeout=10)
        kill_all(marker)
        for ns in owned(p.pid):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_after_kill_9_the_next_testbed_removes_what_the_bench_left(tmp_path: Path) -> None:
    """remove_stale knew only the emulation's ``hp-`` names: the client and server
    namespaces (``hpt-``) and the command in them stayed."""
    marker = f"tbh-{uuid.uuid4().hex}"
    p = start_bench(tmp_path, marker)
    try:
        p.kill()
        p.communicate(timeout=10)
        assert len(owned(p.pid)) == 4
        with Testbed(scenario(tmp_path), "sat", out=tmp_path / "next"):
            assert owned(p.pid) == [], "the killed bench's namespaces are still there"
            time.sleep(0.2)
            assert running(marker) == [], "the killed bench's command still runs"
    finally:
        kill_all(marker)
        for ns in owned(p.pid):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
