"""The PEP's memory under load, in both modes (docs/live.md, "Memory"): 200 clients
that never read hold their connections while a server pushes as fast as the path takes
bytes, twice over (the second round is where a heap would keep what the first freed).
Checked, from the daemon's VmRSS (/proc/PID/status):

- while the 200 hold, RSS stays within its base plus ``memory_limit``, and in fact
  within the bytes in flight (one full buffer per connection, toward its client; the
  other direction carries nothing) plus ``SETTLED_KIB``; another client is still
  served;
- after they leave, RSS falls back to within ``SETTLED_KIB`` of its base, and the
  mapped-buffer metric to 0;
- a configuration whose ``max_connections`` × 2 × ``buffer_bytes`` passes
  ``memory_limit`` is refused at load (exit 2, one line naming the keys).

Integrated mode (``PepNet`` of ``test_pep.py``), and gateway mode with both gateways
measured (``GatewayNet`` of ``test_pep_gateway.py``). Skipped, with the reason, where
root, namespaces or the binary are missing; the namespaces and the processes started in
them go when a test ends, also when it fails.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from helpers import live_binary, pep_rss_kib
from hetpath.pep import Pep
from hetpath.testbed import wait_listening
from test_pep import SERVER, PepNet, needs_netns
from test_pep_gateway import SERVER as GW_SERVER
from test_pep_gateway import GatewayNet
from test_pep_gateway import needs_netns as needs_gateway_netns

HOLD = str(Path(__file__).parent / "live_helpers" / "hold_probe.py")
CLIENTS = 200
BUFFER = 256 << 10
LIMIT_MIB = 128
# The kernel's socket buffers bounded too, so that the daemon's buffers fill quickly; the
# 200 come from one address, so its per-source limit (default 64) is raised for them.
BUDGET = (f'memory_limit = "{LIMIT_MIB}MiB"\nsocket_buffer_bytes = 65536\n'
          f'max_connections_per_source = {CLIENTS + 2}\n')
# What the daemon may keep above its starting RSS once the load is gone: its own
# tables (the connection slab, the event lists) grown to 200 connections. The buffers
# themselves (200 × 256 KiB = 50 MiB at least) must all be gone.
SETTLED_KIB = 12 << 10
# The bytes in flight with the load held: each connection's buffer toward its client.
IN_FLIGHT_KIB = CLIENTS * BUFFER >> 10
FETCH = 4 << 20
HELD = "hetpath_pep_buffer_bytes"
MAPPED = "hetpath_pep_memory_bytes"
ACTIVE = "hetpath_pep_connections_active"
LIMIT = "hetpath_pep_memory_limit_bytes"


def _wait(what: str, cond: Callable[[], bool], seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {seconds} s: {what}")


def _rounds(tb, server: str, metrics: Callable[[], dict], peps: list[Pep]) -> list[dict]:
    """Two rounds of 200 never-reading clients against the flood server on port 5001:
    per round, each daemon's RSS (KiB) with the load held and after it left, and what
    the extra client fetched meanwhile."""
    flood = tb.popen("s", [sys.executable, HOLD, "flood-server", "5001", "50"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_listening(tb, "s", 5001)
    assert flood.poll() is None
    out = [{"base": [pep_rss_kib(p) for p in peps]}]
    for _ in range(2):
        holder = tb.popen("c", [sys.executable, HOLD, "hold", server, "5001", str(CLIENTS), "40"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read() if holder.stderr else ""
        # Most of each connection's buffer toward its client full: the load is in place.
        _wait("the buffers filled", lambda: metrics()[HELD] >= 0.9 * CLIENTS * BUFFER, 20)
        loaded = [pep_rss_kib(p) for p in peps]
        m = metrics()
        # What is mapped is what is held, rounded to the buffers holding it: one per
        # connection and daemon (and the fetch's to come), never two per connection.
        assert m[HELD] <= m[MAPPED] <= len(peps) * (CLIENTS + 2) * BUFFER, m
        assert m[LIMIT] == LIMIT_MIB << 20
        res = tb.run("c", [sys.executable, HOLD, "fetch", server, "5001", str(FETCH), "20"],
                     capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        fetched = res.stdout
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=20)
        _wait("every connection closed", lambda: metrics()[ACTIVE] == 0, 20)
        # The idle-buffer tick (1 s) and a metrics refresh.
        _wait("the buffers unmapped", lambda: metrics().get(MAPPED, 0) == 0, 5)
        time.sleep(0.5)
        out.append({"loaded": loaded, "after": [pep_rss_kib(p) for p in peps], "fetched": fetched})
    return out


def _check(rounds: list[dict]) -> None:
    import json

    base = rounds[0]["base"]
    print(f"RSS KiB: base {base}, " + ", ".join(f"loaded {r['loaded']} after {r['after']}" for r in rounds[1:]))
    for r in rounds[1:]:
        got = json.loads(r["fetched"])
        assert got["received"] == FETCH, f"the other client got {got} while the 200 held"
        for b, loaded, after in zip(base, r["loaded"], r["after"]):
            assert loaded - b <= LIMIT_MIB << 10, f"RSS {loaded} KiB over the base {b} + memory_limit"
            assert loaded - b <= IN_FLIGHT_KIB + SETTLED_KIB, f"RSS {loaded} KiB, base {b}: more than the bytes in flight"
            assert after - b <= SETTLED_KIB, f"RSS {after} KiB after the load left, base {b}"


@needs_netns
def test_never_reading_clients_hold_the_integrated_pep_within_its_budget(tmp_path: Path) -> None:
    with PepNet() as tb, tb.pep(tmp_path, f"buffer_bytes = {BUFFER}\n{BUDGET}") as pep:
        rounds = _rounds(tb, SERVER, tb.pep_metrics, [pep])
    _check(rounds)


@needs_gateway_netns
def test_never_reading_clients_hold_both_gateways_within_their_budget(tmp_path: Path) -> None:
    with GatewayNet() as tb, tb.gateway(tmp_path, "b", BUDGET, buffer=BUFFER) as gb, \
            tb.gateway(tmp_path, "a", BUDGET, buffer=BUFFER) as ga:
        def both() -> dict:
            ma, mb = tb.metrics("a", 9480), tb.metrics("b", 9481)
            return {HELD: ma[HELD], ACTIVE: ma[ACTIVE] + mb[ACTIVE], MAPPED: ma.get(MAPPED, 0) + mb.get(MAPPED, 0),
                    LIMIT: ma.get(LIMIT, 0)}

        rounds = _rounds(tb, GW_SERVER, both, [ga, gb])
    _check(rounds)


@pytest.mark.live(None if live_binary() else "hetpath-live is not installed (scripts/setup.sh --tests)")
def test_a_budget_smaller_than_the_worst_case_is_refused_at_load(tmp_path: Path) -> None:
    cfg = tmp_path / "pep.toml"
    text = ('mode = "integrated"\nlisten_port = 7070\nmax_connections = 256\nbuffer_bytes = 4194304\n{}'
            '[match]\nsources = ["10.1.0.0/24"]\nports = [80]\n')
    cfg.write_text(text.format(""))
    res = subprocess.run([live_binary(), "pep", "--config", str(cfg), "--print-rules"], capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    line = res.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "pep.toml: memory_limit: expected at least max_connections × 2 × buffer_bytes" in line, line
    assert "256 × 8388608 = 2147483648 bytes" in line and "got 1073741824" in line, line
    cfg.write_text(text.format('memory_limit = "2GiB"\n'))
    res = subprocess.run([live_binary(), "pep", "--config", str(cfg), "--print-rules"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
