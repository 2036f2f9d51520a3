"""The default TCP congestion control in live mode's namespaces (hetpath.netns_cc): Linux's
``cubic`` unless the user names one, not the host's default leaking in (a host running
BBR would otherwise make every example measure BBR); a named controller exactly, or an
error; ``host`` keeps the host's; the testbed's client and server follow the gateways.
Checked with what a fresh socket in the namespace gets (``TCP_CONGESTION``). Skipped,
with the reason, where namespaces, TUN or root are unavailable.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hetpath import live
from hetpath.errors import HetpathError
from hetpath.testbed import Testbed
from helpers import live_unavailable
from test_live import emulation, scenario

SKIP = live_unavailable("hp-cc-skipcheck")
pytestmark = pytest.mark.live(SKIP and f"live mode unavailable: {SKIP}")

#: The controller a new TCP socket gets by default.
SOCKET_CC = ("import socket; s = socket.socket(); "
             "print(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b'\\0').decode())")


def _proc(key: str) -> str:
    return Path(f"/proc/sys/net/ipv4/{key}").read_text().strip()


def _socket_cc(run, side: str) -> str:
    res = run(side, [sys.executable, "-c", SOCKET_CC], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_the_namespaces_run_cubic_where_the_host_allows_it(tmp_path: Path) -> None:
    host = _proc("tcp_congestion_control")
    allowed = _proc("tcp_allowed_congestion_control").split()
    with emulation(tmp_path, scenario(tmp_path)) as emu:
        got = {side: _socket_cc(emu.run, side) for side in "ab"}
    if "cubic" in allowed:
        assert got == {"a": "cubic", "b": "cubic"}
        assert emu.congestion == "cubic" and emu.congestion_note is None
    else:
        # The kernel keeps a namespace to the allowed list: the host's default stays, said.
        assert got == {"a": host, "b": host}
        assert emu.congestion == host
        assert emu.congestion_note is not None and "tcp_allowed_congestion_control" in emu.congestion_note


def test_a_named_controller_is_set_exactly_or_refused(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    with live.Emulation(scenario(tmp_path), "sat", out=out, pcap=False, congestion="reno") as emu:
        assert _socket_cc(emu.run, "a") == "reno" and _socket_cc(emu.run, "b") == "reno"
    assert emu.congestion == "reno" and emu.congestion_note is None
    with pytest.raises(HetpathError, match=r"--congestion hetpath_none: .*tcp_allowed_congestion_control"):
        with live.Emulation(scenario(tmp_path), "sat", out=out, pcap=False, congestion="hetpath_none"):
            pass
    with live.Emulation(scenario(tmp_path), "sat", out=out, pcap=False, congestion="host") as emu:
        assert _socket_cc(emu.run, "a") == _proc("tcp_congestion_control")


def test_the_testbeds_client_and_server_follow_the_gateways(tmp_path: Path) -> None:
    with Testbed(scenario(tmp_path), "sat", out=tmp_path / "out", congestion="reno") as tb:
        got = {role: _socket_cc(tb.run, role) for role in ("client", "gwA", "gwB", "server")}
    assert set(got.values()) == {"reno"}, got


def test_emulate_says_which_controller_the_namespaces_run(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "hetpath", "emulate", str(scenario(tmp_path)), "--link", "sat",
                          "--no-pcap", "--out", str(tmp_path / "cli"), "--congestion", "reno", "--",
                          sys.executable, "-c", SOCKET_CC], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "reno"
    assert "hetpath: TCP congestion control in both: reno\n" in res.stderr
