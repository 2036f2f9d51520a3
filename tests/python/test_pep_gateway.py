"""The PEP in gateway mode: four namespaces, client -> gateway A == gateway B -> server.

Gateway A intercepts the client's connection (nftables TPROXY) and carries it to
gateway B as hetpath-proto TCP inside sealed UDP datagrams over a plain veth pair; B
connects to the server in the client's name (``IP_TRANSPARENT``). Checked: the bytes
arrive intact both ways (SHA-256) with the half-close in between, the server sees the
client's own address and port, a refused connect reaches the client as a reset, and a
gateway B killed and restarted mid-transfer gives the client an error, never a clean
end of a short stream. Skipped, with the reason, where root, namespaces or the
binary are missing. Namespaces are deleted even when a test fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import Namespaces, ip, live_binary, live_unavailable, pep_rss_kib
from hetpath.errors import ScenarioError
from hetpath.pep import Pep
from hetpath.testbed import wait_listening

HERE = Path(__file__).parent / "live_helpers"
PROBE, STREAM = str(HERE / "pep_probe.py"), str(HERE / "gateway_probe.py")
CLIENT, A_C = "10.92.1.2", "10.92.1.1"
A_SAT, B_SAT = "10.92.9.1", "10.92.9.2"
B_S, SERVER = "10.92.2.1", "10.92.2.2"
KEY = "6b" * 32


SKIP = live_unavailable("hp-gw-skipcheck")
needs_netns = pytest.mark.live(SKIP and f"gateway namespace tests unavailable: {SKIP}")


class GatewayNet(Namespaces):
    """Namespaces c (client), a (gateway A), b (gateway B), s (server) in a line of
    veth pairs; A and B route (and forward) between the two ends."""

    def __init__(self) -> None:
        super().__init__("hpg", "cabs")

    def wire(self) -> None:
        ns = self.ns
        for (x, dx), (y, dy) in [(("c", "c0"), ("a", "a0")), (("a", "a1"), ("b", "b1")), (("b", "b0"), ("s", "s0"))]:
            ip("link", "add", dx, "netns", ns[x], "type", "veth", "peer", "name", dy, "netns", ns[y])
        for k, dev, addr in [("c", "c0", CLIENT), ("a", "a0", A_C), ("a", "a1", A_SAT), ("b", "b1", B_SAT),
                             ("b", "b0", B_S), ("s", "s0", SERVER)]:
            ip("-n", ns[k], "addr", "add", f"{addr}/24", "dev", dev)
            ip("-n", ns[k], "link", "set", dev, "up")
        ip("-n", ns["c"], "route", "add", "default", "via", A_C)
        ip("-n", ns["s"], "route", "add", "default", "via", B_S)
        ip("-n", ns["a"], "route", "add", "10.92.2.0/24", "via", B_SAT)
        ip("-n", ns["b"], "route", "add", "10.92.1.0/24", "via", A_SAT)
        for k in "ab":
            self.run(k, ["sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True)

    def probe(self, side: str, script: str, *args: str, timeout: float = 60):
        res = self.run(side, [sys.executable, script, *args], capture_output=True, text=True, timeout=timeout)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout) if res.stdout.strip() else None

    def background(self, side: str, script: str, *args: str) -> subprocess.Popen:
        return self.popen(side, [sys.executable, script, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)

    def gateway(self, tmp_path: Path, role: str, extra: str = "", log_name: str = "", buffer: int = 1 << 20) -> Pep:
        key = tmp_path / "psk.key"
        if not key.exists():
            key.write_text(KEY + "\n")
            key.chmod(0o600)
        own, peer = (A_SAT, B_SAT) if role == "a" else (B_SAT, A_SAT)
        cfg = tmp_path / f"gw-{role}.toml"
        cfg.write_text(f"""mode = "gateway"
role = "{role}"
{'listen_port = 7070' if role == 'a' else ''}
metrics = "127.0.0.1:{9480 if role == 'a' else 9481}"
buffer_bytes = {buffer}
log = "debug"
{extra}
[match]
sources = ["10.92.1.0/24"]
destinations = ["10.92.2.0/24"]
ports = ["5001-5004"]

[gateway]
peer = "{peer}:4850"
listen = "{own}:4850"
key_file = "psk.key"
congestion = "hybla"
keepalive_ms = 200
""")
        return Pep(cfg, netns=self.ns[role], log=tmp_path / (log_name or f"gw-{role}.log"))



def _stream_sha(size: int) -> str:
    rng, h, n = random.Random(1), hashlib.sha256(), 0
    while n < size:
        chunk = rng.randbytes(min(65536, size - n))
        h.update(chunk)
        n += len(chunk)
    return h.hexdigest()


@needs_netns
def test_bytes_cross_both_ways_and_the_server_sees_the_client(tmp_path: Path) -> None:
    with GatewayNet() as tb, tb.gateway(tmp_path, "b"), tb.gateway(tmp_path, "a"):
        srv = tb.background("s", PROBE, "server", "5001", "60")
        wait_listening(tb, "s", 5001)
        t0 = time.monotonic()
        got = tb.probe("c", PROBE, "client", SERVER, "5001", str(4 << 20), "11")
        elapsed = time.monotonic() - t0
        server = json.loads(srv.communicate(timeout=60)[0])
        time.sleep(0.5)  # a metrics refresh
        ma, mb = tb.metrics("a", 9480), tb.metrics("b", 9481)
    assert server["bytes"] == 4 << 20
    assert server["sha256"] == got["sha256"], "the server received exactly what the client sent"
    assert got["answer"] == f"ok:{got['sha256']}", "the answer crossed back after the client's half-close"
    assert server["peer"] == got["local"], "the server sees the client's own address and port"
    assert ma['hetpath_pep_connections_total{outcome="accepted"}'] == 1
    assert ma['hetpath_pep_bytes_total{leg="client",direction="in"}'] == 4 << 20
    assert mb['hetpath_pep_bytes_total{leg="server",direction="out"}'] == 4 << 20
    assert ma['hetpath_pep_satellite_datagrams_total{direction="out"}'] > (4 << 20) / 1472
    assert ma['hetpath_pep_satellite_datagrams_total{direction="rejected"}'] == 0
    assert 'hetpath_pep_retransmissions_total{leg="satellite"}' in ma
    print(f"4 MiB through the gateways in {elapsed:.2f} s")


@needs_netns
def test_concurrent_connections_each_arrive_intact(tmp_path: Path) -> None:
    ports = ["5001", "5002", "5003", "5004"]
    with GatewayNet() as tb, tb.gateway(tmp_path, "b"), tb.gateway(tmp_path, "a"):
        servers = [tb.background("s", PROBE, "server", p, "60") for p in ports]
        for p in ports:
            wait_listening(tb, "s", int(p))
        clients = [tb.background("c", PROBE, "client", SERVER, p, str((k + 1) << 20), str(k)) for k, p in enumerate(ports)]
        got = [json.loads(c.communicate(timeout=60)[0]) for c in clients]
        seen = [json.loads(s.communicate(timeout=60)[0]) for s in servers]
        time.sleep(0.5)
        ma = tb.metrics("a", 9480)
    for k, (g, v) in enumerate(zip(got, seen)):
        assert v["bytes"] == (k + 1) << 20 and v["sha256"] == g["sha256"]
        assert g["answer"] == f"ok:{g['sha256']}" and v["peer"] == g["local"]
    assert ma['hetpath_pep_connections_total{outcome="completed"}'] == 4


@needs_netns
def test_esp_and_an_unmatched_port_pass_untouched(tmp_path: Path) -> None:
    with GatewayNet() as tb, tb.gateway(tmp_path, "b"), tb.gateway(tmp_path, "a"):
        srv = tb.background("s", PROBE, "server", "5009", "30")
        wait_listening(tb, "s", 5009)
        got = tb.probe("c", PROBE, "client", SERVER, "5009", "100000", "8")
        server = json.loads(srv.communicate(timeout=30)[0])
        payload = bytes(range(256)).hex() * 2
        esp = tb.background("s", PROBE, "esp-recv", "10")
        time.sleep(0.3)
        tb.probe("c", PROBE, "esp-send", SERVER, payload)
        seen = json.loads(esp.communicate(timeout=30)[0])
        time.sleep(0.5)
        ma = tb.metrics("a", 9480)
    assert server["sha256"] == got["sha256"], "routed, not relayed"
    assert seen == {"src": CLIENT, "payload": payload}, "ESP crossed both gateways unchanged"
    assert ma['hetpath_pep_connections_total{outcome="accepted"}'] == 0


@needs_netns
def test_a_refused_connect_reaches_the_client_as_a_reset(tmp_path: Path) -> None:
    with GatewayNet() as tb, tb.gateway(tmp_path, "b"), tb.gateway(tmp_path, "a"):
        seen = tb.probe("c", PROBE, "reset", SERVER, "5001")
        time.sleep(0.5)
        ma = tb.metrics("a", 9480)
    assert seen["error"] == "ConnectionResetError"
    assert ma['hetpath_pep_connections_total{outcome="connect_failed"}'] == 1


@needs_netns
def test_a_restarted_gateway_b_gives_the_client_an_error_not_a_short_stream(tmp_path: Path) -> None:
    size = 64 << 20
    with GatewayNet() as tb, tb.gateway(tmp_path, "a") as ga:
        gb = tb.gateway(tmp_path, "b").__enter__()
        try:
            srv = tb.background("s", STREAM, "stream-server", "5001", str(size), str(4 << 20), "60")
            wait_listening(tb, "s", 5001)
            cli = tb.background("c", STREAM, "stream-client", SERVER, "5001", "60")
            time.sleep(2.0)
            assert cli.poll() is None, "the transfer ended before gateway B was killed"
            assert gb.process is not None
            os.killpg(gb.process.pid, 9)  # its own session: the daemon dies without cleaning up
            gb.close(check=False)
            gb = tb.gateway(tmp_path, "b", log_name="gw-b-2.log").__enter__()
            got = json.loads(cli.communicate(timeout=60)[0])
            served = json.loads(srv.communicate(timeout=60)[0])
            time.sleep(0.5)
            ma = tb.metrics("a", 9480)
        finally:
            gb.close(check=False)
        assert ga.process is not None and ga.process.poll() is None
    assert 0 < got["received"] < size
    assert got["end"] == "ConnectionResetError", f"the client saw {got}"
    assert served["error"] is not None, "the server saw its connection fail"
    assert ma["hetpath_pep_peer_restarts_total"] >= 1
    assert ma['hetpath_pep_connections_total{outcome="reset"}'] >= 1


@needs_netns
def test_a_stalled_server_keeps_both_gateways_within_their_bound(tmp_path: Path) -> None:
    buf = 256 << 10
    small = "socket_buffer_bytes = 65536"  # the kernel's buffers bounded too, on both local legs
    with GatewayNet() as tb, tb.gateway(tmp_path, "b", small, buffer=buf) as gb, \
            tb.gateway(tmp_path, "a", small, buffer=buf) as ga:
        tb.background("s", PROBE, "stall-server", "5001", "8")
        wait_listening(tb, "s", 5001)
        sent = tb.probe("c", PROBE, "stall-client", SERVER, "5001", "4")["sent"]
        time.sleep(0.5)
        ma, mb = tb.metrics("a", 9480), tb.metrics("b", 9481)
        rss = [pep_rss_kib(g) for g in (ga, gb)]
    assert max(rss) < 64 * 1024, f"gateway RSS {rss} KiB"
    for m in (ma, mb):
        assert m["hetpath_pep_buffer_limit_bytes"] == 2 * buf
        assert 0 < m["hetpath_pep_buffer_bytes"] <= m["hetpath_pep_buffer_limit_bytes"]
        assert m["hetpath_pep_buffer_peak_bytes"] <= m["hetpath_pep_buffer_limit_bytes"]
    # What the client could push is bounded by the buffers on the way, not by how long
    # it kept trying: the windows closed, back to the client.
    assert sent < 8 << 20, f"the client pushed {sent} bytes into a stalled path"


@needs_netns
def test_the_data_of_a_completed_download_is_exact(tmp_path: Path) -> None:
    size = 3 << 20
    with GatewayNet() as tb, tb.gateway(tmp_path, "b"), tb.gateway(tmp_path, "a"):
        srv = tb.background("s", STREAM, "stream-server", "5001", str(size), str(1 << 30), "60")
        wait_listening(tb, "s", 5001)
        got = tb.probe("c", STREAM, "stream-client", SERVER, "5001", "60")
        served = json.loads(srv.communicate(timeout=60)[0])
    assert served["error"] is None and served["sent"] == size
    assert got == {"received": size, "sha256": _stream_sha(size), "end": "eof"}


@pytest.mark.live(None if live_binary() else "hetpath-live is not installed (scripts/setup.sh --tests)")
def test_gateway_configuration_errors_name_the_key(tmp_path: Path) -> None:
    def check(text: str, key: str) -> None:
        cfg = tmp_path / "gw.toml"
        cfg.write_text(text)
        res = subprocess.run([live_binary(), "pep", "--config", str(cfg), "--print-rules"], capture_output=True, text=True)
        assert res.returncode == 2, res.stderr
        assert f"gw.toml: {key}: " in res.stderr and "expected" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr

    good = ('mode = "gateway"\nrole = "a"\nlisten_port = 7070\n[match]\nsources = ["10.1.0.0/24"]\nports = [80]\n'
            '[gateway]\npeer = "192.0.2.2:4850"\nlisten = "0.0.0.0:4850"\nkey_file = "k"\n')
    cfg = tmp_path / "gw.toml"
    cfg.write_text(good)
    res = subprocess.run([live_binary(), "pep", "--config", str(cfg), "--print-rules"], capture_output=True, text=True)
    assert res.returncode == 0 and "tproxy to :7070" in res.stdout, res.stderr
    check(good.replace('role = "a"', 'role = "c"'), "role")
    check(good.replace('"192.0.2.2:4850"', '"192.0.2.2"'), "gateway.peer")
    check(good + 'congestion = "xcp-pep"\n', "gateway.rate_bps")
    check(good + 'congestion = "nope"\n', "gateway.congestion")
    check(good + 'max_datagram = 100\n', "gateway.max_datagram")
    check(good + '[gateway.tcp]\nprofile = "bsd"\n', "gateway.tcp.profile")
    check(good.replace("listen_port = 7070\n", ""), "listen_port")
    b = good.replace('role = "a"', 'role = "b"').replace("listen_port = 7070\n", "")
    cfg.write_text(b)
    res = subprocess.run([live_binary(), "pep", "--config", str(cfg), "--print-rules"], capture_output=True, text=True)
    assert res.returncode == 0 and "tproxy" not in res.stdout.replace("TPROXY", ""), res.stdout


@needs_netns
def test_an_exposed_key_file_is_an_input_error(tmp_path: Path) -> None:
    with GatewayNet() as tb:
        gw = tb.gateway(tmp_path, "b")
        (tmp_path / "psk.key").chmod(0o644)
        with pytest.raises(ScenarioError, match=r"gateway.key_file: .*chmod 600"):
            with gw:
                pass


@pytest.mark.live(None if live_binary() else "hetpath-live is not installed (scripts/setup.sh --tests)")
def test_the_contrib_examples_load() -> None:
    contrib = Path(__file__).resolve().parents[2] / "contrib" / "pep"
    for name, tproxy in [("pep-gateway-a.toml", True), ("pep-gateway-b.toml", False), ("pep.toml", True)]:
        res = subprocess.run([live_binary(), "pep", "--config", str(contrib / name), "--print-rules"],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert ("tproxy to :7070" in res.stdout) == tproxy, name
