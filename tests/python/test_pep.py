"""The PEP daemon (``hetpath pep``): three namespaces, client -> PEP -> server, over veth.

The client's namespace routes through the PEP's, which forwards to the server's; the
daemon intercepts with its own nftables TPROXY table. Checked: the bytes arrive intact
(SHA-256), the server sees the client's own address, an unmatched port and ESP pass
untouched, a refused connect resets the client, a stalled server keeps the PEP within
its buffer bound, the cap refuses, and the rules are gone after exit. Skipped, with the
reason, where root, namespaces or the binary are missing. Traffic stays inside the
namespaces the test makes, which are deleted even when a test fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import Namespaces, ip, live_binary, live_unavailable, pep_rss_kib
from hetpath.errors import ScenarioError
from hetpath.pep import Pep
from hetpath.testbed import wait_listening

PROBE = str(Path(__file__).parent / "live_helpers" / "pep_probe.py")
CLIENT, PEP_C, PEP_S, SERVER = "10.91.1.2", "10.91.1.1", "10.91.2.1", "10.91.2.2"


SKIP = live_unavailable("hp-pep-skipcheck")
needs_netns = pytest.mark.live(SKIP and f"PEP namespace tests unavailable: {SKIP}")


class PepNet(Namespaces):
    """Namespaces c (client), p (PEP, forwarding) and s (server), joined by veth pairs."""

    def __init__(self) -> None:
        super().__init__("hpp", "cps")

    def wire(self) -> None:
        ns = self.ns
        ip("link", "add", "c0", "netns", ns["c"], "type", "veth", "peer", "name", "p0", "netns", ns["p"])
        ip("link", "add", "s0", "netns", ns["s"], "type", "veth", "peer", "name", "p1", "netns", ns["p"])
        for k, dev, addr in [("c", "c0", CLIENT), ("p", "p0", PEP_C), ("p", "p1", PEP_S), ("s", "s0", SERVER)]:
            ip("-n", ns[k], "addr", "add", f"{addr}/24", "dev", dev)
            ip("-n", ns[k], "link", "set", dev, "up")
        ip("-n", ns["c"], "route", "add", "default", "via", PEP_C)
        ip("-n", ns["s"], "route", "add", "default", "via", PEP_S)
        self.run("p", ["sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True)

    def probe(self, side: str, *args: str, timeout: float = 60):
        res = self.run(side, [sys.executable, PROBE, *args], capture_output=True, text=True, timeout=timeout)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout) if res.stdout.strip() else None

    def background(self, side: str, *args: str) -> subprocess.Popen:
        return self.popen(side, [sys.executable, PROBE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)

    def pep_metrics(self) -> dict[str, float]:
        return self.metrics("p", 9470)

    def pep(self, tmp_path: Path, extra: str = "") -> Pep:
        cfg = tmp_path / "pep.toml"
        cfg.write_text(f"""mode = "integrated"
listen_port = 7070
metrics = "127.0.0.1:9470"
server_congestion = "bbr"
log = "debug"
{extra}
[match]
sources = ["10.91.1.0/24"]
ports = [5001]
""")
        return Pep(cfg, netns=self.ns["p"], log=tmp_path / "pep.log")


def _accepted(m: dict[str, float]) -> float:
    return m['hetpath_pep_connections_total{outcome="accepted"}']


@needs_netns
def test_bytes_arrive_intact_and_the_server_sees_the_client(tmp_path: Path) -> None:
    with PepNet() as tb:
        with tb.pep(tmp_path):
            srv = tb.background("s", "server", "5001", "30")
            wait_listening(tb, "s", 5001)
            got = tb.probe("c", "client", SERVER, "5001", str(8 << 20), "7")
            server = json.loads(srv.communicate(timeout=30)[0])
            m = tb.pep_metrics()
        assert server["sha256"] == got["sha256"]
        assert server["bytes"] == 8 << 20
        assert got["answer"] == f"ok:{got['sha256']}", "the answer crossed back after the client's half-close"
        assert server["peer"] == got["local"], "the server sees the client's own address and port"
        assert _accepted(m) == 1 and m['hetpath_pep_connections_total{outcome="completed"}'] == 1
        assert m['hetpath_pep_bytes_total{leg="client",direction="in"}'] == 8 << 20
        assert m['hetpath_pep_bytes_total{leg="server",direction="out"}'] == 8 << 20
        # The daemon removed what it installed (its table is seen with the nft program where
        # there is one, for this check only; the Rust test netlink_table_equals_the_nft_script
        # checks removal too).
        if shutil.which("nft"):
            tables = tb.run("p", ["nft", "list", "tables"], capture_output=True, text=True).stdout
            assert "hetpath_pep" not in tables
        rules = tb.run("p", ["ip", "rule"], capture_output=True, text=True).stdout
        assert "fwmark" not in rules


@needs_netns
def test_an_unmatched_port_and_esp_pass_untouched(tmp_path: Path) -> None:
    with PepNet() as tb, tb.pep(tmp_path):
        srv = tb.background("s", "server", "5002", "30")
        wait_listening(tb, "s", 5002)
        got = tb.probe("c", "client", SERVER, "5002", "100000", "8")
        server = json.loads(srv.communicate(timeout=30)[0])
        assert server["sha256"] == got["sha256"]
        payload = bytes(range(256)).hex() * 2
        esp = tb.background("s", "esp-recv", "10")
        time.sleep(0.3)
        tb.probe("c", "esp-send", SERVER, payload)
        seen = json.loads(esp.communicate(timeout=30)[0])
        m = tb.pep_metrics()
    assert seen == {"src": CLIENT, "payload": payload}, "ESP crossed unchanged"
    assert _accepted(m) == 0 and m['hetpath_pep_connections_total{outcome="rejected_unmatched"}'] == 0


@needs_netns
def test_a_refused_connect_resets_the_client(tmp_path: Path) -> None:
    with PepNet() as tb, tb.pep(tmp_path):
        seen = tb.probe("c", "reset", SERVER, "5001")
        m = tb.pep_metrics()
    assert seen["error"] == "ConnectionResetError"
    assert m['hetpath_pep_connections_total{outcome="connect_failed"}'] == 1


@needs_netns
def test_a_stalled_server_keeps_the_pep_within_its_bound(tmp_path: Path) -> None:
    with PepNet() as tb, tb.pep(tmp_path, "buffer_bytes = 65536\nsocket_buffer_bytes = 65536\nmax_connections = 1") as pep:
        tb.background("s", "stall-server", "5001", "8")
        wait_listening(tb, "s", 5001)
        sent = tb.probe("c", "stall-client", SERVER, "5001", "3")["sent"]
        m = tb.pep_metrics()
        # The cap: a second connection while the first is open is refused with a RST.
        second = tb.probe("c", "reset", SERVER, "5001")
        m2 = tb.pep_metrics()
        rss_kib = pep_rss_kib(pep)
    limit = m["hetpath_pep_buffer_limit_bytes"]
    assert limit == 2 * 65536
    assert 0 < m["hetpath_pep_buffer_bytes"] <= limit
    assert m["hetpath_pep_buffer_peak_bytes"] <= limit
    # What the client could push is bounded by the buffers on the way (kernel ones
    # included), not by the time it kept trying: the window closed.
    assert sent < 8 << 20, f"the client pushed {sent} bytes into a stalled path"
    assert second["error"] == "ConnectionResetError"
    assert m2['hetpath_pep_connections_total{outcome="rejected_cap"}'] == 1
    assert rss_kib < 64 * 1024, f"PEP RSS {rss_kib} KiB"



@needs_netns
def test_a_bad_configuration_is_an_input_error_naming_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('mode = "integrated"\nlisten_port = 7070\n[match]\nsources = ["10.1.0.0/40"]\nports = [80]\n')
    with pytest.raises(ScenarioError, match=r"bad.toml: match.sources\[0\]: expected an IPv4 subnet"):
        with Pep(cfg):
            pass


@pytest.mark.live(None if live_binary() else "hetpath-live is not installed (scripts/setup.sh --tests)")
def test_print_rules_needs_no_privileges(tmp_path: Path) -> None:
    cfg = tmp_path / "pep.toml"
    cfg.write_text('mode = "integrated"\nlisten_port = 7070\n[match]\nsources = ["10.1.0.0/24"]\nports = [80, "8000-8080"]\n')
    res = subprocess.run([sys.executable, "-m", "hetpath", "pep", str(cfg), "--print-rules"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "tcp dport { 80, 8000-8080 } tproxy to :7070" in res.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('mode = "integrated"\nlisten_port = 7070\nbogus = 1\n[match]\nsources = ["10.1.0.0/24"]\nports = [80]\n')
    res = subprocess.run([sys.executable, "-m", "hetpath", "pep", str(bad), "--print-rules"],
                         capture_output=True, text=True)
    assert res.returncode == 2
    assert "bad.toml" in res.stderr and "bogus" in res.stderr and len(res.stderr.strip().splitlines()) == 1
