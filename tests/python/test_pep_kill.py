"""A killed PEP daemon never ends a relayed stream cleanly: ``kill -9`` mid-download
gives the client a reset (ECONNRESET), never a short body ended by a FIN, because the
daemon keeps ``SO_LINGER`` {on, 0} on both kernel sockets of a connection while it is
open and clears it only on the orderly close. A download that completes still ends with
a FIN and the whole body (SHA-256). Integrated mode (``PepNet`` of ``test_pep.py``) and
gateway mode with gateway A killed (``GatewayNet`` of ``test_pep_gateway.py``).
Skipped, with the reason, where root, namespaces or the binary are missing.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from hetpath.pep import Pep
from hetpath.testbed import wait_listening
from test_pep import SERVER, PepNet, needs_netns
from test_pep_gateway import SERVER as GW_SERVER
from test_pep_gateway import GatewayNet
from test_pep_gateway import needs_netns as needs_gateway_netns

PROBE = str(Path(__file__).parent / "live_helpers" / "gateway_probe.py")
SIZE = 40 << 20
RATE = 8 << 20  # bytes/s: a 5 s download, killed after about 1 s


def _start(tb, port: int, server: str, size: int, rate: int):
    srv = tb.popen("s", [sys.executable, PROBE, "stream-server", str(port), str(size), str(rate), "30"],
                   stdout=-1, stderr=-1, text=True)
    wait_listening(tb, "s", port)
    cli = tb.popen("c", [sys.executable, PROBE, "stream-client", server, str(port), "30"], stdout=-1, stderr=-1, text=True)
    return srv, cli


def _result(p) -> dict:
    out, err = p.communicate(timeout=40)
    assert p.returncode == 0, err
    return json.loads(out)


def _kill_mid_download(tb, pep: Pep, port: int, server: str) -> tuple[dict, dict]:
    srv, cli = _start(tb, port, server, SIZE, RATE)
    time.sleep(1.0)
    assert cli.poll() is None, "the download ended before the daemon was killed"
    assert pep.process is not None
    os.killpg(pep.process.pid, signal.SIGKILL)  # its own session: no cleanup runs
    pep.close(check=False)
    return _result(cli), _result(srv)


@needs_netns
def test_a_killed_integrated_pep_resets_the_client(tmp_path: Path) -> None:
    with PepNet() as tb:
        pep = tb.pep(tmp_path).__enter__()
        try:
            got, served = _kill_mid_download(tb, pep, 5001, SERVER)
        finally:
            pep.close(check=False)
    assert 0 < got["received"] < SIZE
    assert got["end"] == "ConnectionResetError", f"the client saw {got}"
    assert served["error"] is not None, f"the server saw {served}"


@needs_netns
def test_a_completed_download_through_the_integrated_pep_ends_with_a_fin(tmp_path: Path) -> None:
    with PepNet() as tb, tb.pep(tmp_path):
        srv, cli = _start(tb, 5001, SERVER, 16 << 20, 1 << 40)
        got, served = _result(cli), _result(srv)
    assert got == {"received": 16 << 20, "sha256": served["sha256"], "end": "eof"}
    assert served["error"] is None


@needs_gateway_netns
def test_a_killed_gateway_a_resets_the_client(tmp_path: Path) -> None:
    with GatewayNet() as tb, tb.gateway(tmp_path, "b"):
        ga = tb.gateway(tmp_path, "a").__enter__()
        try:
            got, _ = _kill_mid_download(tb, ga, 5001, GW_SERVER)
        finally:
            ga.close(check=False)
    assert 0 < got["received"] < SIZE
    assert got["end"] == "ConnectionResetError", f"the client saw {got}"
