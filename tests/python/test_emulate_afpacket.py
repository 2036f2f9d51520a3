"""``hetpath emulate`` in packet mode: the link core as a bump in the wire between two
Ethernet interfaces over AF_PACKET (docs/live.md, "Packet mode").

The topology is three namespaces, ``h1 --veth-- br --veth-- h2``: h1 (10.79.0.1/24) and
h2 (10.79.0.2/24) share a subnet, and ``br`` holds the two inner veth ends with no
address, which the core bridges, so ARP crosses the emulated link as well as IP. Every
namespace made here is deleted afterwards, and that is checked. Assertions are on
medians of a few runs with the loose tolerances of tests/python/test_live.py (a shared
2-core machine). Skips, with the reason, where root, namespaces or the binary are
missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from hetpath import live
from helpers import default_signals, netns_unavailable

# The live benches' traffic tool (Python sockets, run inside a namespace).
PROBE = str(Path(__file__).parents[2] / "bench" / "live_traffic.py")
H1, H2 = "10.79.0.1", "10.79.0.2"
H1_VLAN, H2_VLAN = "10.79.1.1", "10.79.1.2"
DELAY_S = 0.02


def _why_skip() -> str | None:
    if not sys.platform.startswith("linux"):
        return "Linux only"
    if os.geteuid() != 0:
        return "needs root (namespaces, packet sockets)"
    try:
        live.find_binary()
    except live.LiveError as e:
        return str(e)
    return netns_unavailable("hp-probe-afpacket")


SKIP = _why_skip()
pytestmark = pytest.mark.live(SKIP and f"packet mode unavailable: {SKIP}")

# Offloads through SIOCETHTOOL (no ethtool program needed): `get DEV` prints
# {"tso": 0/1, "gso": ..., "gro": ...}; `off DEV` turns TSO and GSO off.
ETHTOOL = r"""
import array, fcntl, json, socket, struct, sys
what, dev = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
def call(cmd, data=0):
    buf = array.array("I", [cmd, data])
    ifr = struct.pack("16sP", dev.encode(), buf.buffer_info()[0]) + bytes(16)
    fcntl.ioctl(s.fileno(), 0x8946, ifr)
    return buf[1]
if what == "get":
    print(json.dumps({"tso": call(0x1e), "gso": call(0x23), "gro": call(0x2b)}))
else:
    call(0x1f); call(0x24)
"""

# One UDP datagram handed to h1's veth as a GSO super-frame of three 1000-byte segments
# (UDP_SEGMENT): the veth passes it whole to its peer, where the core must drop it.
UDP_GSO = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(17, 103, 1000)  # SOL_UDP, UDP_SEGMENT
s.sendto(b"G" * 3000, (sys.argv[1], 5999))
"""

UDP_SINK = r"""
import json, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 5999)); s.settimeout(0.2)
got, end = [], time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    try:
        got.append(len(s.recv(65536)))
    except socket.timeout:
        pass
print(json.dumps(got))
"""

# A transfer of N random bytes and its SHA-256 on both ends.
TCP_RECV = r"""
import hashlib, json, socket
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", 5003)); ls.listen(1); ls.settimeout(30)
c, _ = ls.accept(); c.settimeout(10)
h, n = hashlib.sha256(), 0
while True:
    d = c.recv(1 << 16)
    if not d:
        break
    h.update(d); n += len(d)
print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))
"""

TCP_SEND = r"""
import socket, sys, time
data = open(sys.argv[2], "rb").read()
for _ in range(50):
    try:
        c = socket.create_connection((sys.argv[1], 5003), timeout=5); break
    except OSError:
        time.sleep(0.1)
c.sendall(data); c.close()
"""


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=20)


def in_ns(ns: str, argv: list[str], timeout: float = 60, **kw: object) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, timeout=timeout,
                          **kw)  # type: ignore[call-overload]


def py(ns: str, code: str, *args: str, timeout: float = 60) -> str:
    res = in_ns(ns, [sys.executable, "-c", code, *args], timeout=timeout)
    assert res.returncode == 0, res.stderr
    return res.stdout


class Topology:
    def __init__(self) -> None:
        tag = f"hpaf-{os.getpid()}"
        self.h1, self.br, self.h2 = f"{tag}-h1", f"{tag}-br", f"{tag}-h2"
        self.made: list[str] = []

    def up(self) -> None:
        for ns in (self.h1, self.br, self.h2):
            _ip("netns", "add", ns)
            self.made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("link", "add", "e1", "netns", self.h1, "type", "veth", "peer", "name", "p1", "netns", self.br)
        _ip("link", "add", "e2", "netns", self.h2, "type", "veth", "peer", "name", "p2", "netns", self.br)
        _ip("-n", self.h1, "addr", "add", f"{H1}/24", "dev", "e1")
        _ip("-n", self.h2, "addr", "add", f"{H2}/24", "dev", "e2")
        for ns, dev in ((self.h1, "e1"), (self.h2, "e2"), (self.br, "p1"), (self.br, "p2")):
            _ip("-n", ns, "link", "set", dev, "up")

    def hosts_offloads_off(self) -> None:
        """TSO and GSO off on the hosts' veth ends: a veth hands its peer whatever its
        sender built, so super-frames are the sender's to avoid (docs/live.md)."""
        py(self.h1, ETHTOOL, "off", "e1")
        py(self.h2, ETHTOOL, "off", "e2")

    def down(self) -> None:
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
        self.made.clear()


@pytest.fixture
def topo() -> Iterator[Topology]:
    t = Topology()
    try:
        t.up()
        yield t
    finally:
        t.down()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(ns in listed for ns in (t.h1, t.br, t.h2)), "the test's namespaces are gone"


def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "afp.toml"
    p.write_text(f"""[scenario]
name = "afp"
duration = "600s"
seed = 3
sample_interval = "200ms"
[[node]]
name = "gw"
[[node]]
name = "t"
[[link]]
name = "sat"
a = "gw"
b = "t"
rate = "10Mbps"
delay = "{int(DELAY_S * 1000)}ms"
queue = "300pkt"
""")
    return p


def bridge(tmp_path: Path, topo: Topology, run: int = 0) -> live.Bridge:
    out = tmp_path / f"out{run}"
    out.mkdir()
    return live.Bridge(scenario(tmp_path), "sat", "p1", "p2", netns_a=topo.br, netns_b=topo.br, out=out)


@pytest.mark.timing
def test_ping_arp_and_a_tcp_transfer_cross_the_bridge_and_super_frames_do_not(tmp_path: Path,
                                                                               topo: Topology) -> None:
    before = json.loads(py(topo.br, ETHTOOL, "get", "p1"))
    with bridge(tmp_path, topo) as b:
        during = json.loads(py(topo.br, ETHTOOL, "get", "p1"))
        # A super-frame from h1 (its veth still segments nothing) is dropped, not forwarded.
        sink = subprocess.Popen(["ip", "netns", "exec", topo.h2, sys.executable, "-c", UDP_SINK, "2"],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        py(topo.h1, UDP_GSO, H2)
        udp_got = json.loads(sink.communicate(timeout=30)[0])
        topo.hosts_offloads_off()
        # Same subnet, no static neighbours: the first echo waits for ARP across the link.
        rtts = json.loads(in_ns(topo.h1, [sys.executable, PROBE, "ping", H2, "20", "0.05"]).stdout)
        data = tmp_path / "data.bin"
        data.write_bytes(os.urandom(3 << 20))
        recv = subprocess.Popen(["ip", "netns", "exec", topo.h2, sys.executable, "-c", TCP_RECV],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        py(topo.h1, TCP_SEND, H2, str(data), timeout=90)
        got = json.loads(recv.communicate(timeout=60)[0])
    after = json.loads(py(topo.br, ETHTOOL, "get", "p1"))
    summary = b.summary
    assert summary is not None and summary["mode"] == "packet"

    assert len(rtts) >= 18, rtts
    # An 84-byte echo and its reply each take 67.2 us to serialise at 10 Mbit/s.
    expected = 2 * DELAY_S + 2 * 84 * 8 / 10e6
    median = statistics.median(rtts)
    assert expected <= median <= expected + 0.003, f"median RTT {median * 1e3:.3f} ms"

    assert got == {"bytes": 3 << 20, "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}

    assert udp_got == [], "no segment of the super-frame reached h2"
    assert summary["oversize_drops"][0] >= 1, summary["oversize_drops"]
    # Every packet that crossed fits the MTU (the captures hold IP packets).
    for pcap in sorted((tmp_path / "out0").glob("*.pcap")):
        assert max(_pcap_lengths(pcap)) <= 1500, pcap.name

    # The bridged interfaces' offloads were off while the core ran, and are back after.
    assert during == {"tso": 0, "gso": 0, "gro": 0}, during
    assert after == before, (before, after)
    # Sizes are IP sizes (the frame less its 14-byte header), as TUN mode and `hetpath
    # run` count them: the transfer's full-sized packets are 1500 bytes, not 1514.
    import csv

    with open(tmp_path / "out0" / "fates.csv") as f:
        sizes = [int(r["bytes"]) for r in csv.DictReader(f) if r["outcome"] == "delivered"]
    assert max(sizes) == 1500 and sizes.count(1500) >= (3 << 20) // 1448 - 5
    assert 28 in sizes, "ARP (28 bytes behind the Ethernet header) crossed the link"


def _pcap_lengths(path: Path) -> list[int]:
    import struct

    raw = path.read_bytes()
    out, i = [], 24
    while i + 16 <= len(raw):
        _, _, incl, orig = struct.unpack("<IIII", raw[i:i + 16])
        out.append(orig)
        i += 16 + incl
    return out


@pytest.mark.timing
def test_kernel_tcp_goodput_is_the_rate_times_mss_over_mtu(tmp_path: Path, topo: Topology) -> None:
    topo.hosts_offloads_off()
    rates = []
    for run in range(3):
        with bridge(tmp_path, topo, run):
            sink = subprocess.Popen(["ip", "netns", "exec", topo.h2, sys.executable, PROBE, "rate-sink", "5001", "6", "1.0"],
                                    stdout=subprocess.PIPE, text=True)
            in_ns(topo.h1, [sys.executable, PROBE, "blast", H2, "5001", "5"], timeout=60, check=True)
            out, _ = sink.communicate(timeout=30)
        r = json.loads(out)
        rates.append((r["bytes"] * 8 / r["seconds"], r["mss"]))
    goodput = statistics.median(r for r, _ in rates)
    # Each 1500-byte IP packet (a 1514-byte frame) carries MSS bytes.
    expected = 10e6 * rates[0][1] / 1500
    assert abs(goodput - expected) <= 0.05 * expected, \
        f"goodput {goodput / 1e6:.3f} Mbit/s, expected {expected / 1e6:.3f}"


def emulate(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hetpath", "emulate", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_the_cli_runs_a_command_here_and_keeps_the_files(tmp_path: Path, topo: Topology) -> None:
    out = tmp_path / "cli-out"
    res = emulate(str(scenario(tmp_path)), "--link", "sat", "--if-a", "p1", "--if-b", "p2",
                  "--netns-a", topo.br, "--netns-b", topo.br, "--out", str(out), "--",
                  "ip", "netns", "exec", topo.h1, sys.executable, PROBE, "ping", H2, "5", "0.05")
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)) == 5
    summary = json.loads((out / "summary.json").read_text())
    assert summary["mode"] == "packet" and summary["interfaces"] == ["p1", "p2"]
    assert {"fates.csv", "link_series.csv", "loss-ab.trace"} <= {p.name for p in out.iterdir()}


def test_an_unknown_interface_is_one_line_exit_2(tmp_path: Path, topo: Topology) -> None:
    out = tmp_path / "out"
    res = emulate(str(scenario(tmp_path)), "--link", "sat", "--if-a", "p1", "--if-b", "nosuch0",
                  "--netns-a", topo.br, "--netns-b", topo.br, "--out", str(out), "--", "true")
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert "no interface 'nosuch0'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    res = emulate(str(scenario(tmp_path)), "--link", "sat", "--if-a", "p1", "--if-b", "p2",
                  "--netns-a", "hp-no-such-ns", "--out", str(out), "--", "true")
    assert res.returncode == 2 and "no network namespace 'hp-no-such-ns'" in res.stderr, res.stderr
    res = emulate(str(scenario(tmp_path)), "--link", "sat", "--if-a", "p1", "--if-b", "p1",
                  "--netns-a", topo.br, "--netns-b", topo.br, "--out", str(out), "--", "true")
    assert res.returncode == 2 and "are the same interface ('p1')" in res.stderr, res.stderr
    res = emulate(str(scenario(tmp_path)), "--link", "sat", "--if-a", "p1", "--out", str(out), "--", "true")
    assert res.returncode == 2 and "both --if-a and --if-b" in res.stderr, res.stderr


def test_the_core_alone_refuses_a_non_ethernet_interface(tmp_path: Path, topo: Topology) -> None:
    res = subprocess.run([live.find_binary(), "emulate", "--scenario", str(scenario(tmp_path)), "--link", "sat",
                          "--if-a", "lo", "--if-b", "p2", "--netns-a", f"/run/netns/{topo.br}",
                          "--netns-b", f"/run/netns/{topo.br}", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 2, res.stderr
    assert "'lo'" in res.stderr and "not Ethernet" in res.stderr


def test_without_a_command_it_runs_until_ctrl_c_and_keeps_the_files(tmp_path: Path, topo: Topology) -> None:
    import select
    import signal

    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "hetpath", "emulate", str(scenario(tmp_path)), "--link", "sat",
                          "--if-a", "p1", "--if-b", "p2", "--netns-a", topo.br, "--netns-b", topo.br,
                          "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=default_signals)
    try:
        assert p.stderr is not None
        deadline, seen = time.monotonic() + 30, ""
        while "Ctrl-C stops it" not in seen and time.monotonic() < deadline and p.poll() is None:
            if select.select([p.stderr], [], [], 0.5)[0]:
                seen += p.stderr.readline()
        assert "Ctrl-C stops it" in seen, seen
        rtts = json.loads(in_ns(topo.h1, [sys.executable, PROBE, "ping", H2, "4", "0.05"]).stdout)
        assert len(rtts) == 4
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, seen + err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["links"][0]["tx_packets"] >= 4 and summary["links"][1]["tx_packets"] >= 4


def test_without_root_packet_mode_is_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import invoke

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    res = invoke(["emulate", str(scenario(tmp_path)), "--link", "sat", "--if-a", "eth1", "--if-b", "eth2",
                  "--out", str(tmp_path / "out"), "--", "true"])
    assert res.exit_code == 2, res.stderr
    assert res.stderr.strip() == ("hetpath: error: packet mode needs root "
                                  "(raw packet sockets, promiscuous mode, offload settings)")
    assert not (tmp_path / ".out.partial").exists()



# A packet-socket sniffer on DEV for SECONDS: the VLAN ids (None: untagged) of the
# frames carrying the marker, as the kernel reports them (it takes the tag out on receive).
SNIFF_VLAN = r"""
import json, socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0)); s.setsockopt(263, 8, 1); s.settimeout(0.2)  # PACKET_AUXDATA
got, end = [], time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        data, anc, _, _ = s.recvmsg(4096, 256)
    except socket.timeout:
        continue
    if b"HPVLANTEST" not in data:
        continue
    vid = None
    for level, kind, aux in anc:
        if level == 263 and kind == 8:
            status, _, _, _, _, tci, _ = struct.unpack("IIIHHHH", aux[:24])
            if status & 16:  # TP_STATUS_VLAN_VALID
                vid = tci & 0xfff
    got.append(vid)
print(json.dumps(got))
"""

# Three broadcast frames tagged VLAN 100 (EtherType 0x88b5, local experimental) from DEV.
SEND_VLAN = r"""
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + struct.pack("!HHH", 0x8100, 100, 0x88B5) + b"HPVLANTEST" * 10
for _ in range(3):
    s.send(frame); time.sleep(0.05)
"""


def test_vlan_tags_cross_the_bridge(tmp_path: Path, topo: Topology) -> None:
    """A frame tagged VLAN 100 from h1 reaches h2 still tagged: the kernel takes the tag
    out before the core reads the frame (PACKET_AUXDATA reports it), and the core puts
    it back. Raw frames, so no VLAN device (the 8021q module) is needed."""
    with bridge(tmp_path, topo):
        sniff = subprocess.Popen(["ip", "netns", "exec", topo.h2, sys.executable, "-c", SNIFF_VLAN, "e2", "2.5"],
                                 stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        py(topo.h1, SEND_VLAN, "e1")
        got = json.loads(sniff.communicate(timeout=30)[0])
    assert got == [100, 100, 100], got
