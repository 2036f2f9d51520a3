"""The end-to-end test: client -> gateway A == emulated GEO link == gateway B -> server.

The path is :class:`hetpath.testbed.Testbed`'s: the link is ``hetpath emulate``'s core
running the simulator's own link (10 Mbit/s, 300 ms each way, a one-BDP DropTail queue,
Bernoulli loss of 0.5% on both directions), and a ``hetpath pep`` in gateway mode runs
at each end of it, carrying the client's connection as paced Hybla (hetpath-proto's TCP)
inside sealed UDP datagrams. Checked over that link: 20 MB arrive exactly (SHA-256) with
the server seeing the client's own address, ESP crosses unchanged, and a gateway B
killed and restarted mid-transfer gives the client a reset, never a clean end of a short
stream. The stalled-server memory bound is checked on the plain veth path
(test_pep_gateway.py): it does not depend on the link. Skipped, with the reason, where
root, namespaces or the binary are missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hetpath import live, testbed
from hetpath.testbed import Testbed, wait_listening
from test_pep_gateway import SKIP, _stream_sha

HERE = Path(__file__).parent / "live_helpers"
PROBE, STREAM = str(HERE / "pep_probe.py"), str(HERE / "gateway_probe.py")
PORT = 5001
needs_netns = pytest.mark.live(SKIP and f"GEO gateway tests unavailable: {SKIP}")

SCENARIO = """[scenario]
name = "geo-gateway-test"
duration = "600s"
seed = {seed}

[[node]]
name = "gw"

[[node]]
name = "terminal"

[[link]]
name = "sat"
a = "gw"
b = "terminal"
rate = "10Mbps"
delay = "300ms"
queue = "500pkt"
channel = {{ model = "bernoulli", p = 0.005 }}
"""


def _gateway(tmp: Path, role: str) -> Path:
    """Gateway ``role``'s configuration (contrib/pep/pep-gateway-*.toml's choices: paced
    Hybla shaped to the link's rate) for the testbed's addresses."""
    key = tmp / "psk.key"
    if not key.exists():
        key.write_text("5a" * 32 + "\n")
        key.chmod(0o600)
    own, peer = (live.ADDR_A, live.ADDR_B) if role == "a" else (live.ADDR_B, live.ADDR_A)
    cfg = tmp / f"gw-{role}.toml"
    cfg.write_text(f"""mode = "gateway"
role = "{role}"
{'listen_port = 7070' if role == 'a' else ''}
metrics = "127.0.0.1:9480"
buffer_bytes = 4194304
memory_limit = "2GiB"
log = "debug"

[match]
sources = ["{testbed.CLIENT_NET}"]
destinations = ["{testbed.SERVER_NET}"]
ports = [{PORT}]

[gateway]
peer = "{peer}:4850"
listen = "{own}:4850"
key_file = "psk.key"
congestion = "hybla"
rate_bps = 10000000
rtt_ms = 600
keepalive_ms = 200
""")
    return cfg


def _testbed(tmp: Path, seed: int) -> Testbed:
    scenario = tmp / "geo.toml"
    scenario.write_text(SCENARIO.format(seed=seed))
    return Testbed(scenario, "sat", out=tmp / "link")


def _ns_python(tb: Testbed, role: str, script: str, *args: str, timeout: float):
    res = tb.run(role, [sys.executable, script, *args], capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout) if res.stdout.strip() else None


@needs_netns
def test_20_mb_cross_the_geo_link_exactly_and_esp_passes(tmp_path: Path) -> None:
    size = 20_000_000
    with _testbed(tmp_path, seed=3) as tb, tb.pep(_gateway(tmp_path, "b"), "gwB"), \
            tb.pep(_gateway(tmp_path, "a"), "gwA"):
        srv = tb.popen("server", [sys.executable, PROBE, "server", str(PORT), "240"],
                       stdout=subprocess.PIPE, text=True)
        wait_listening(tb, "server", PORT)
        t0 = time.monotonic()
        got = _ns_python(tb, "client", PROBE, "client", testbed.SERVER, str(PORT), str(size), "5", timeout=240)
        elapsed = time.monotonic() - t0
        server = json.loads(srv.communicate(timeout=60)[0])
        payload = bytes(range(256)).hex()
        esp = tb.popen("server", [sys.executable, PROBE, "esp-recv", "10"],
                       stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        _ns_python(tb, "client", PROBE, "esp-send", testbed.SERVER, payload, timeout=30)
        seen = json.loads(esp.communicate(timeout=30)[0])
    lost = sum(d["lost_packets"] for d in (tb.summary or {}).get("links", []))
    print(f"20 MB over the GEO link through the gateways in {elapsed:.1f} s "
          f"({size * 8 / elapsed / 1e6:.2f} Mbit/s); the channel lost {lost} packets")
    assert server["bytes"] == size
    assert server["sha256"] == got["sha256"], "the server received exactly what the client sent"
    assert got["answer"] == f"ok:{got['sha256']}", "the answer crossed back after the half-close"
    assert server["peer"] == got["local"], "the server sees the client's own address and port"
    assert lost > 0, "the link's channel lost packets: the transfer was tested under loss"
    assert seen == {"src": testbed.CLIENT, "payload": payload}, "ESP crossed the gateways unchanged"


@needs_netns
def test_a_gateway_restarted_mid_transfer_gives_the_client_a_reset(tmp_path: Path) -> None:
    size = 64 << 20
    with _testbed(tmp_path, seed=4) as tb, tb.pep(_gateway(tmp_path, "a"), "gwA") as ga:
        gb = tb.pep(_gateway(tmp_path, "b"), "gwB").__enter__()
        srv = tb.popen("server", [sys.executable, STREAM, "stream-server", str(PORT), str(size), str(400_000), "90"],
                       stdout=subprocess.PIPE, text=True)
        wait_listening(tb, "server", PORT)
        cli = tb.popen("client", [sys.executable, STREAM, "stream-client", testbed.SERVER, str(PORT), "90"],
                       stdout=subprocess.PIPE, text=True)
        time.sleep(6.0)
        assert cli.poll() is None, "the transfer ended before gateway B was killed"
        assert gb.process is not None
        os.killpg(gb.process.pid, 9)  # the daemon dies without cleaning up
        gb.close(check=False)
        tb.pep(_gateway(tmp_path, "b"), "gwB").__enter__()
        got = json.loads(cli.communicate(timeout=90)[0])
        served = json.loads(srv.communicate(timeout=90)[0])
        assert ga.process is not None and ga.process.poll() is None, "gateway A survived the restart"
    assert 0 < got["received"] < size, f"the client saw {got}"
    assert got["end"] == "ConnectionResetError", f"the client saw {got}"
    assert got["sha256"] != _stream_sha(size)
    assert served["error"] is not None, "the server saw its connection fail"
