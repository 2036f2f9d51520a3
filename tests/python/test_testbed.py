"""The end-to-end testbed (hetpath.testbed): client -- gwA == emulated link == gwB -- server.

Checked: a ping from the client to the server takes twice the link's delay (median over
a few dozen), a TCP transfer arrives intact (SHA-256) with the client's own address,
the link core's files (summary, link series) are written, and every namespace is gone
afterwards, even when setting up fails. Skipped, with the reason, where root, TUN,
namespaces or the binary are missing. Traffic stays inside the testbed's namespaces.
"""

from __future__ import annotations

import csv
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from hetpath import testbed
from hetpath.testbed import Testbed, wait_listening
from helpers import LINK_SERIES_COLS, live_unavailable

HERE = Path(__file__).parent / "live_helpers"
PROBE = str(Path(__file__).parents[2] / "bench" / "live_traffic.py")  # the live benches' traffic tool
PEP_PROBE = str(HERE / "pep_probe.py")


SKIP = live_unavailable("hp-probe-testbed")
pytestmark = pytest.mark.live(SKIP and f"testbed unavailable: {SKIP}")


def scenario(tmp_path: Path, delay: str = "20ms", extra: str = "") -> Path:
    p = tmp_path / "bed.toml"
    p.write_text(f"""[scenario]
name = "bed"
duration = "600s"
sample_interval = "250ms"
[[node]]
name = "gw"
[[node]]
name = "sat"
[[link]]
name = "sat"
a = "gw"
b = "sat"
rate = "20Mbps"
delay = "{delay}"
queue = "200pkt"
{extra}
""")
    return p


def _listed() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


@pytest.mark.timing
def test_ping_crosses_the_link_and_the_namespaces_go_away(tmp_path: Path) -> None:
    with Testbed(scenario(tmp_path, delay="20ms"), "sat", out=tmp_path / "out") as tb:
        res = tb.run("client", [sys.executable, PROBE, "ping", testbed.SERVER, "25", "0.04"],
                     capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        names = dict(tb.ns)
    rtts = json.loads(res.stdout)
    assert len(rtts) >= 20
    # Two serialisations of 84 bytes at 20 Mbit/s each way; veth hops are microseconds.
    expected = 2 * 0.020 + 2 * 84 * 8 / 20e6
    median = statistics.median(rtts)
    assert expected <= median <= expected + 0.003, f"median RTT {median * 1e3:.3f} ms, expected {expected * 1e3:.3f}"
    listed = _listed()
    assert not any(n in listed for n in names.values()), listed
    summary = tb.summary
    assert summary is not None
    ab = summary["links"][0]
    assert ab["tx_packets"] >= 25, "the echoes crossed the emulated link a -> b"


def test_a_transfer_arrives_intact_with_the_clients_address(tmp_path: Path) -> None:
    size = 4 << 20
    with Testbed(scenario(tmp_path), "sat", out=tmp_path / "out") as tb:
        srv = tb.popen("server", [sys.executable, PEP_PROBE, "server", "5001", "60"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_listening(tb, "server", 5001)
        res = tb.run("client", [sys.executable, PEP_PROBE, "client", testbed.SERVER, "5001", str(size), "11"],
                     capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        got = json.loads(res.stdout)
        server = json.loads(srv.communicate(timeout=60)[0])
    assert server["bytes"] == size
    assert server["sha256"] == got["sha256"]
    assert server["peer"] == got["local"], "routed, not translated: the server sees the client"
    summary = tb.summary
    assert summary is not None
    assert summary["links"][0]["tx_bytes"] > size, "the data crossed the emulated link"
    # The link series: hetpath run's columns, both directions on the scenario's 250 ms
    # grid, the a -> b bytes sent growing to what the summary counted.
    with open(tmp_path / "out" / "link_series.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == LINK_SERIES_COLS
    ab = [r for r in rows if (r["from"], r["to"]) == ("gw", "sat")]
    assert len(ab) == len(rows) // 2 >= 4
    assert [float(r["time_s"]) for r in ab] == [k * 0.25 for k in range(len(ab))]
    sent = [int(r["tx_bytes"]) for r in ab]
    assert sent == sorted(sent) and 0 < sent[-1] <= summary["links"][0]["tx_bytes"]
    assert max(int(r["queue_pkts"]) for r in ab) <= summary["links"][0]["max_queue_pkts"]


@pytest.mark.live(None if shutil.which("nft") else "nft (nftables) is not installed; the PEP needs it")
def test_an_integrated_pep_in_gateway_a_splits_the_transfer(tmp_path: Path) -> None:
    cfg = tmp_path / "pep.toml"
    cfg.write_text(f"""mode = "integrated"
listen_port = 7070
metrics = "127.0.0.1:9470"
server_congestion = "cubic"
[match]
sources = ["{testbed.CLIENT_NET}"]
ports = [5001]
""")
    size = 2 << 20
    with Testbed(scenario(tmp_path), "sat", out=tmp_path / "out") as tb, tb.pep(cfg, "gwA", log=tmp_path / "pep.log"):
        srv = tb.popen("server", [sys.executable, PEP_PROBE, "server", "5001", "60"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_listening(tb, "server", 5001)
        res = tb.run("client", [sys.executable, PEP_PROBE, "client", testbed.SERVER, "5001", str(size), "12"],
                     capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        got = json.loads(res.stdout)
        server = json.loads(srv.communicate(timeout=60)[0])
        code = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9470/', timeout=5).read().decode())"
        metrics = tb.run("gwA", [sys.executable, "-c", code], capture_output=True, text=True, timeout=30).stdout
    assert server["sha256"] == got["sha256"] and server["bytes"] == size
    assert server["peer"] == got["local"], "the PEP's server leg carries the client's address"
    assert 'hetpath_pep_connections_total{outcome="completed"} 1' in metrics, metrics


def test_a_failure_while_setting_up_leaves_no_namespace(tmp_path: Path) -> None:
    bed = Testbed(scenario(tmp_path), "nope", out=tmp_path / "out")
    with pytest.raises(Exception, match="no link named 'nope'"):
        with bed:
            pass
    listed = _listed()
    assert not any(n in listed for n in bed.ns.values()), listed


def test_an_unknown_namespace_role_is_refused(tmp_path: Path) -> None:
    with Testbed(scenario(tmp_path), "sat", out=tmp_path / "out") as tb:
        with pytest.raises(ValueError, match="unknown testbed namespace 'gwC'"):
            tb.run("gwC", ["true"])
        assert tb.run("gwB", ["true"]).returncode == 0
