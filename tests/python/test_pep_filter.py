"""The PEP and the gateway's own ``forward`` chain, and the ``[match]`` entries that keep
its policy: ``[[match.except]]`` (never intercepted, so routed and filtered as before)
and ``[[match.deny]]`` (intercepted and reset).

TPROXY in prerouting hands an intercepted connection to the PEP's local socket (the
``input`` hook), and the PEP's own server leg leaves through ``output``: the ``forward``
hook sees neither, so a forward-chain drop of client -> server:8000 does not stop a
connection the PEP intercepts on port 8000. That is the kernel's behaviour and the first
test states it; an exception puts the connection back under the forward chain, and a
deny entry refuses it with a reset. Integrated mode in ``PepNet``'s three namespaces
(``test_pep.py``), gateway mode in ``GatewayNet``'s four (``test_pep_gateway.py``). The
forward rule is set with the ``nft`` program, in the PEP's namespace only. Skipped, with
the reason, where root, namespaces, the binary or ``nft`` are missing.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import tomllib
from pathlib import Path

import pytest

from hetpath import live, testbed
from hetpath.pep import Pep
from hetpath.testbed import wait_listening
from test_pep import CLIENT, SERVER, PepNet
from test_pep import SKIP as PEP_SKIP
from test_pep_gateway import CLIENT as GW_CLIENT
from test_pep_gateway import GatewayNet
from test_pep_gateway import SERVER as GW_SERVER

SKIP = PEP_SKIP or (None if shutil.which("nft") else "the nft program sets the forward rule (apt-get install nftables)")
needs_netns = pytest.mark.live(SKIP and f"PEP filter tests unavailable: {SKIP}")

#: The forward-chain policy an operator had before the PEP: client -> server:8000 dropped.
FORWARD_DROP = f"""table ip operator {{
    chain forward {{
        type filter hook forward priority filter; policy accept;
        ip saddr {CLIENT} ip daddr {SERVER} tcp dport 8000 counter drop
    }}
}}
"""

#: Connects, sends a line and reads the answer: {"error": None} if it got one, else what
#: ended it ("TimeoutError" when the SYN is dropped, "ConnectionResetError" for a RST).
CONNECT = """
import json, socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3]))
    s.settimeout(float(sys.argv[3]))
    s.sendall(b"hello\\n")
    print(json.dumps({"error": None if s.recv(100) else "eof"}))
except OSError as e:
    print(json.dumps({"error": type(e).__name__}))
"""


def _connect(tb, side: str, addr: str, port: int, timeout: float = 2.0) -> str | None:
    res = tb.run(side, [sys.executable, "-c", CONNECT, addr, str(port), str(timeout)],
                 capture_output=True, text=True, timeout=timeout * 3 + 10)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["error"]


def _echo(tb, side: str, port: int):
    """A server on ``port`` answering each connection's first line, for 30 s."""
    code = f"""
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", {port})); s.listen(8); s.settimeout(30)
end = time.monotonic() + 30
while time.monotonic() < end:
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.settimeout(5)
    try:
        c.sendall(c.recv(100))
    except OSError:
        pass
    c.close()
"""
    p = tb.popen(side, [sys.executable, "-c", code])
    wait_listening(tb, side, port)
    return p


def _forward_dropped(tb) -> int:
    """Packets the operator's forward rule dropped (its counter)."""
    out = tb.run("p", ["nft", "-j", "list", "table", "ip", "operator"], capture_output=True, text=True,
                 check=True).stdout
    for item in json.loads(out)["nftables"]:
        for expr in item.get("rule", {}).get("expr", []):
            if "counter" in expr:
                return expr["counter"]["packets"]
    raise AssertionError(f"no counter in {out}")


def _pep(tb: PepNet, tmp_path: Path, ports: str, entries: str = "") -> Pep:
    cfg = tmp_path / "pep.toml"
    cfg.write_text(f"""mode = "integrated"
listen_port = 7070
metrics = "127.0.0.1:9470"
log = "debug"
[match]
sources = ["10.91.1.0/24"]
ports = [{ports}]
{entries}""")
    return Pep(cfg, netns=tb.ns["p"], log=tmp_path / "pep.log")


class OperatorNet(PepNet):
    """``PepNet`` with the operator's forward-chain drop in the PEP's namespace."""

    def wire(self) -> None:
        super().wire()
        self.run("p", ["nft", "-f", "-"], input=FORWARD_DROP, text=True, check=True, capture_output=True)


@needs_netns
def test_interception_bypasses_the_forward_chain(tmp_path: Path) -> None:
    """Today's kernel behaviour, documented in docs/live.md: the drop holds while the PEP
    is off, and is bypassed once the PEP intercepts the port."""
    with OperatorNet() as tb:
        _echo(tb, "s", 8000)
        assert _connect(tb, "c", SERVER, 8000) == "TimeoutError", "the forward chain drops it"
        dropped = _forward_dropped(tb)
        assert dropped > 0
        with _pep(tb, tmp_path, "8000"):
            assert _connect(tb, "c", SERVER, 8000) is None, "intercepted: relayed past the forward chain"
            m = tb.pep_metrics()
        assert _forward_dropped(tb) == dropped, "the forward hook saw none of it"
    assert m['hetpath_pep_connections_total{outcome="accepted"}'] == 1


@needs_netns
def test_an_exception_keeps_the_forward_chain_in_force(tmp_path: Path) -> None:
    with OperatorNet() as tb:
        _echo(tb, "s", 8000)
        _echo(tb, "s", 8001)
        entries = f'[[match.except]]\ndestinations = ["{SERVER}"]\nports = [8000]\n'
        with _pep(tb, tmp_path, '"8000-8001"', entries):
            assert _connect(tb, "c", SERVER, 8000) == "TimeoutError", "not intercepted: the forward drop holds"
            assert _forward_dropped(tb) > 0
            assert _connect(tb, "c", SERVER, 8001) is None
            m = tb.pep_metrics()
    assert m['hetpath_pep_connections_total{outcome="accepted"}'] == 1, "only 8001 was intercepted"
    assert m['hetpath_pep_connections_total{outcome="rejected_unmatched"}'] == 0


@needs_netns
def test_a_deny_entry_resets_the_client(tmp_path: Path) -> None:
    with PepNet() as tb:
        _echo(tb, "s", 8000)
        _echo(tb, "s", 8001)
        entries = f'[[match.deny]]\nsources = ["{CLIENT}"]\nports = [8000]\n'
        with _pep(tb, tmp_path, '"8000-8001"', entries):
            assert _connect(tb, "c", SERVER, 8000) == "ConnectionResetError"
            assert _connect(tb, "c", SERVER, 8001) is None
            m = tb.pep_metrics()
    assert m['hetpath_pep_connections_total{outcome="accepted"}'] == 1
    assert m['hetpath_pep_connections_total{outcome="rejected_unmatched"}'] == 1
    assert m["hetpath_pep_denied_total"] == 1
    assert "refused 10.91.1.2:" in (tmp_path / "pep.log").read_text()


@needs_netns
def test_gateway_a_routes_its_exception_and_b_refuses_what_it_denies(tmp_path: Path) -> None:
    """Gateway mode: an exception on A is routed past the pair untouched; a deny entry on
    B refuses A's Open (``Refuse``), and A resets the client."""
    with GatewayNet() as tb:
        for port in (5001, 5002, 5003):
            _echo(tb, "s", port)
        # ``extra`` goes before [match]: TOML lets [[match.deny]] come first.
        with tb.gateway(tmp_path, "b", extra='[[match.deny]]\nports = [5002]\n'), \
                tb.gateway(tmp_path, "a", extra=f'[[match.except]]\nsources = ["{GW_CLIENT}"]\nports = [5003]\n'):
            assert _connect(tb, "c", GW_SERVER, 5002, timeout=10) == "ConnectionResetError", "denied at B"
            assert _connect(tb, "c", GW_SERVER, 5003) is None, "routed, not intercepted"
            assert _connect(tb, "c", GW_SERVER, 5001) is None, "relayed"
            time.sleep(0.5)  # gateway mode publishes its counters on a period
            ma = tb.metrics("a", 9480)
    # A opened 5002 and 5001 over the pair, never 5003; B refused 5002.
    assert ma['hetpath_pep_connections_total{outcome="accepted"}'] == 1
    assert ma['hetpath_pep_connections_total{outcome="connect_failed"}'] == 1


def test_the_contrib_examples_use_the_testbeds_addresses() -> None:
    """contrib/pep's examples run on docs/live.md's testbed as they are: its client LAN,
    its server LAN, and the emulated link's two ends as the gateways' UDP addresses."""
    contrib = Path(__file__).resolve().parents[2] / "contrib" / "pep"
    configs = {name: tomllib.loads((contrib / name).read_text()) for name in
               ("pep.toml", "pep-gateway-a.toml", "pep-gateway-b.toml")}
    for name, c in configs.items():
        assert c["match"]["sources"] == [testbed.CLIENT_NET], name
    for role, own, peer in [("a", live.ADDR_A, live.ADDR_B), ("b", live.ADDR_B, live.ADDR_A)]:
        c = configs[f"pep-gateway-{role}.toml"]
        assert c["match"]["destinations"] == [testbed.SERVER_NET]
        assert (c["gateway"]["listen"], c["gateway"]["peer"]) == (f"{own}:4850", f"{peer}:4850")
