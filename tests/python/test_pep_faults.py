"""Faults on the gateway tunnel, as an on-path attacker and a bad clock cause them
(docs/live.md, "Threat model"), in the four namespaces of test_pep_gateway.py
(client -> gateway A == gateway B -> server):

1. datagrams recorded from a short request, replayed at a restarted gateway B, open
   nothing at the server a second time;
2. gateway B's datagrams recorded, replayed at a restarted gateway A into a new
   connection, are not taken as that connection's answer;
3. a gateway (A, then B) restarted with its wall clock stepped back an hour (Debian's
   faketime; its monotonic clock untouched, as after a boot before NTP) gets the
   tunnel back within one handshake;
4. the datagrams the gateways exchanged as the tunnel came up (the handshake), replayed
   both ways during a transfer, disturb nothing;
5. a flood of A's recorded datagrams, its handshake's first above all, replayed and
   forged (a bit of the tag flipped), is rejected for little of B's CPU, with a few
   warnings, and changes no session.

The datagrams are recorded and replayed on the A-B veth (live_helpers/udp_tap.py), the
requests logged by live_helpers/request_log.py. Bounded in time; the namespaces, and
the processes started in them, go when a test ends, also when it fails. Skipped, with
the reason, where root, namespaces or the binary are missing; test 3 also where
faketime is (scripts/setup.sh installs it), but under CI a missing faketime fails.
Tests 1-3 fail on the wall-clock epochs the handshake replaced.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import live_binary
from hetpath.pep import Pep
from hetpath.testbed import wait_listening
from test_pep_gateway import SERVER, STREAM, GatewayNet, _stream_sha, needs_netns

HERE = Path(__file__).parent / "live_helpers"
TAP, REQUESTS = str(HERE / "udp_tap.py"), str(HERE / "request_log.py")
TUNNEL_PORT = "4850"
TRANSFER = "/transfer?to=mallory&amount=1000"
# The gateways' counters (docs/live.md, "Metrics") the tests read.
STALE = "hetpath_pep_stale_session_datagrams_total"
REJECTED = 'hetpath_pep_satellite_datagrams_total{direction="rejected"}'
HANDSHAKES = 'hetpath_pep_handshakes_total{{outcome="{}"}}'


class FaultNet(GatewayNet):
    """GatewayNet with a recorder on the A-B veth (seen from A: "out" is A's datagrams,
    "in" is B's) and the logging server; the gateways it starts are stopped when it
    closes, before the namespaces go."""

    def __init__(self) -> None:
        super().__init__()
        self._peps: list[Pep] = []

    def start(self, tmp_path: Path, role: str, log_name: str = "") -> Pep:
        pep = self.gateway(tmp_path, role, log_name=log_name).__enter__()
        self._peps.append(pep)
        return pep

    def close(self) -> None:
        for pep in self._peps:
            if pep.process is not None:
                os.kill(pep.process.pid, signal.SIGCONT)  # one a test left stopped
            pep.close(check=False)
        self._peps.clear()
        super().close()

    def start_recording(self, path: Path, seconds: float = 20) -> subprocess.Popen:
        rec = self.popen("a", [sys.executable, TAP, "record", "a1", TUNNEL_PORT, str(path), str(seconds)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert rec.stdout is not None and rec.stderr is not None
        if rec.stdout.readline().strip() != "ready":
            rec.wait(timeout=5)
            raise AssertionError(f"the recorder did not start: {rec.stderr.read()}")
        return rec

    @staticmethod
    def stop_recording(rec: subprocess.Popen) -> None:
        rec.terminate()
        rec.wait(timeout=5)

    def replay(self, path: Path, sender: str, gap: float = 0.002, repeat: int = 1, forge: bool = False) -> int:
        """Sends again the recorded datagrams of gateway `sender` ("a" or "b"), out of its
        own end of the veth, so that they reach its peer as the originals did; with
        `forge`, each with a bit of its authentication tag flipped."""
        iface, direction = ("a1", "out") if sender == "a" else ("b1", "in")
        argv = [sys.executable, TAP, "replay", iface, str(path), direction, str(gap), str(repeat)]
        res = self.run(sender, argv + (["forge"] if forge else []), capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        return int(json.loads(res.stdout)["sent"])

    def request_server(self, log: Path, seconds: float = 40) -> None:
        self.popen("s", [sys.executable, REQUESTS, "server", "5001", str(log), str(seconds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_listening(self, "s", 5001)

    def post(self, body: str, timeout: float = 10) -> dict:
        res = self.run("c", [sys.executable, REQUESTS, "post", SERVER, "5001", TRANSFER, body, str(timeout)],
                       capture_output=True, text=True, timeout=timeout + 10)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    def post_background(self, body: str, timeout: float = 10) -> subprocess.Popen:
        return self.popen("c", [sys.executable, REQUESTS, "post", SERVER, "5001", TRANSFER, body, str(timeout)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def udp_drops(self, side: str) -> int:
        """Datagrams the kernel of `side` dropped for a full socket buffer (RcvbufErrors)."""
        res = self.run(side, ["cat", "/proc/net/snmp"], capture_output=True, text=True, check=True)
        names, values = [line.split() for line in res.stdout.splitlines() if line.startswith("Udp:")]
        return int(values[names.index("RcvbufErrors")])

    def restart(self, gw: Pep, tmp_path: Path, role: str, name: str, kill: bool = False) -> Pep:
        """Stops gateway `role` (SIGKILL with `kill`: a crash, nothing cleaned up; else
        SIGTERM) and starts it again, logging to `name`."""
        if kill:
            assert gw.process is not None
            os.killpg(gw.process.pid, signal.SIGKILL)
        gw.close(check=False)
        return self.start(tmp_path, role, log_name=name)


def _logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _cpu_s(gw: Pep) -> float:
    """CPU time (user and system) the daemon of `gw` has used, in seconds."""
    assert gw.process is not None
    fields = Path(f"/proc/{gw.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _recorded_request(tb: FaultNet, tmp_path: Path, cap: Path, log: Path, body: str):  # type: ignore[no-untyped-def]
    """Gateways B then A, the tunnel recorded into `cap` from before A starts (its whole
    life), the logging server, and one request `body` through it: (A, B, its answer)."""
    gb = tb.start(tmp_path, "b")
    rec = tb.start_recording(cap)
    ga = tb.start(tmp_path, "a")
    tb.request_server(log)
    first = tb.post(body)
    time.sleep(0.5)  # the close's last datagrams
    tb.stop_recording(rec)
    return ga, gb, first


def _count(path: Path, out: bool) -> int:
    return sum(json.loads(line)["out"] == out for line in path.read_text().splitlines())


@needs_netns
def test_a_request_replayed_at_a_restarted_gateway_b_opens_nothing(tmp_path: Path) -> None:
    log, cap = tmp_path / "requests.jsonl", tmp_path / "a1.jsonl"
    with FaultNet() as tb:
        ga, gb, first = _recorded_request(tb, tmp_path, cap, log, "pay mallory 1000")
        assert first["response"] == "receipt 1: pay mallory 1000", first
        assert _count(cap, out=True) > 0, "nothing recorded from A"
        gb = tb.restart(gb, tmp_path, "b", "gw-b-2.log", kill=True)
        sent = tb.replay(cap, "a", gap=0.02)
        time.sleep(1.5)  # what a replay would open, opened
        replayed = _logged(log)
        # The restarted tunnel still carries a fresh request.
        fresh = tb.post("fresh after restart", timeout=15)
        after = _logged(log)
        time.sleep(0.5)  # a metrics refresh
        mb = tb.metrics("b", 9481)
        assert ga.process is not None and ga.process.poll() is None
    accepts = [r for r in replayed if r["event"] == "accept"]
    requests = [r for r in replayed if r["event"] == "request"]
    assert sent > 0
    assert len(accepts) == 1 and len(requests) == 1, f"the server saw {replayed} after a replay of {sent} datagrams"
    assert fresh["response"] is not None and fresh["response"].endswith("fresh after restart"), fresh
    assert [r["body"] for r in after if r["event"] == "request"] == ["pay mallory 1000", "fresh after restart"]
    assert mb.get(STALE, 0) > 0, "the restarted B counted no datagram of a session it does not hold"


@needs_netns
def test_b_datagrams_replayed_at_a_restarted_gateway_a_are_not_a_new_connection_answer(tmp_path: Path) -> None:
    log, cap = tmp_path / "requests.jsonl", tmp_path / "a1.jsonl"
    with FaultNet() as tb:
        ga, gb, first = _recorded_request(tb, tmp_path, cap, log, "first request")
        assert gb.process is not None
        assert first["response"] == "receipt 1: first request", first
        assert _count(cap, out=False) > 0, "nothing recorded from B"
        # B stopped (SIGSTOP; FaultNet.close continues it if this fails) while A restarts
        # and the client opens a new connection: what A sent (its handshake, the
        # connection's opening) waits unanswered, and the recorded answers, replayed
        # now, are the first A hears.
        os.kill(gb.process.pid, signal.SIGSTOP)
        ga = tb.restart(ga, tmp_path, "a", "gw-a-2.log")
        cli = tb.post_background("second request", timeout=15)
        time.sleep(0.4)
        sent = tb.replay(cap, "b")
        time.sleep(0.4)
        os.kill(gb.process.pid, signal.SIGCONT)
        second = json.loads(cli.communicate(timeout=30)[0])
        time.sleep(0.5)  # a metrics refresh
        ma = tb.metrics("a", 9480)
    assert sent > 0
    assert second["response"] is not None and second["response"].endswith(": second request"), \
        f"the new connection got {second} after a replay of {sent} datagrams of B"
    assert [r["body"] for r in _logged(log) if r["event"] == "request"] == ["first request", "second request"]
    assert ma.get(STALE, 0) > 0, "the restarted A counted no datagram of a session it does not hold"


def _faketime_env(offset: str) -> dict[str, str] | None:
    """The variables Debian's faketime sets for `offset` (its preload library, FAKETIME),
    with the monotonic clock left alone; None without faketime. Exported by a wrapper
    that then execs the daemon, so that the daemon is one process (faketime itself
    forks, and keeps a SIGTERM to itself)."""
    prog = shutil.which("faketime")
    if prog is None:
        return None
    res = subprocess.run([prog, "-f", offset, "env", "-0"], capture_output=True, text=True, check=True)
    env = dict(kv.split("=", 1) for kv in res.stdout.split("\0") if "=" in kv)
    keep = {k: v for k, v in env.items() if k in ("LD_PRELOAD", "FAKETIME")}
    keep["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
    return keep


@needs_netns
@pytest.mark.parametrize("role", ["a", "b"])
def test_a_gateway_restarted_with_its_clock_an_hour_back_gets_the_tunnel_back(
        role: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _faketime_env("-1h")
    if fake is None:
        why = "faketime is not installed (scripts/setup.sh --tests installs Debian's)"
        if os.environ.get("CI") == "true" or os.environ.get("HETPATH_REQUIRE_LIVE") == "1":
            pytest.fail(f"{why}; under CI this test must run", pytrace=False)
        pytest.skip(why)
    wrapper = tmp_path / "hetpath-live-1h"
    exports = " ".join(f"{k}='{v}'" for k, v in fake.items())
    wrapper.write_text(f"#!/bin/sh\nexport {exports}\nexec {live_binary()} \"$@\"\n")
    wrapper.chmod(0o755)
    stepped = subprocess.run(["env", *(f"{k}={v}" for k, v in fake.items()), sys.executable, "-c",
                              "import time; print(time.time(), time.monotonic())"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert abs(float(stepped[0]) - time.time() + 3600) < 60, "faketime did not step the wall clock back"
    assert abs(float(stepped[1]) - time.monotonic()) < 60, "faketime moved the monotonic clock"
    log = tmp_path / "requests.jsonl"
    with FaultNet() as tb:
        gws = {"b": tb.start(tmp_path, "b")}
        gws["a"] = tb.start(tmp_path, "a")
        tb.request_server(log)
        assert tb.post("before")["response"] == "receipt 1: before"
        gws[role].close()
        with monkeypatch.context() as env:
            env.setenv("HETPATH_LIVE", str(wrapper))
            tb.start(tmp_path, role, log_name=f"gw-{role}-1h.log")
        t0 = time.monotonic()
        deadline, answers = t0 + 6, []
        while time.monotonic() < deadline:
            got = tb.post("after the step", timeout=max(0.5, deadline - time.monotonic()))
            answers.append(got)
            if got["response"] is not None:
                break
            time.sleep(0.2)
        took = time.monotonic() - t0
    assert answers and answers[-1]["response"] == "receipt 2: after the step", \
        f"no answer through the tunnel in {took:.1f} s after gateway {role.upper()} restarted an hour back: {answers}"
    print(f"the tunnel came back {took:.2f} s after gateway {role.upper()} restarted an hour back")


@needs_netns
def test_the_handshake_replayed_during_a_transfer_disturbs_nothing(tmp_path: Path) -> None:
    size, cap = 8 << 20, tmp_path / "a1.jsonl"
    log = tmp_path / "requests.jsonl"
    with FaultNet() as tb:
        tb.start(tmp_path, "b")
        rec = tb.start_recording(cap)  # from before A starts: the datagrams that bring the tunnel up
        tb.start(tmp_path, "a")
        tb.request_server(log)
        assert tb.post("tunnel up")["response"] == "receipt 1: tunnel up"
        tb.stop_recording(rec)
        assert _count(cap, out=True) > 0 and _count(cap, out=False) > 0
        srv = tb.background("s", STREAM, "stream-server", "5002", str(size), str(4 << 20), "30")
        wait_listening(tb, "s", 5002)
        cli = tb.background("c", STREAM, "stream-client", SERVER, "5002", "30")
        time.sleep(0.5)
        assert cli.poll() is None, "the transfer ended before the replay"
        sent = tb.replay(cap, "a", repeat=2) + tb.replay(cap, "b", repeat=2)
        got = json.loads(cli.communicate(timeout=30)[0])
        served = json.loads(srv.communicate(timeout=30)[0])
        time.sleep(0.5)  # a metrics refresh
        ma, mb = tb.metrics("a", 9480), tb.metrics("b", 9481)
    assert sent > 0
    assert served["error"] is None and got == {"received": size, "sha256": _stream_sha(size), "end": "eof"}
    for m in (ma, mb):
        assert m.get("hetpath_pep_peer_restarts_total", 0) == 0, "a replay counted as a restart of the peer"
        assert m[REJECTED] > 0, "the replay never arrived"
        assert m.get(HANDSHAKES.format("completed"), 0) == 1, "not the one session that brought the tunnel up"
        assert m['hetpath_pep_connections_total{outcome="reset"}'] == 0
    assert mb.get(HANDSHAKES.format("replayed"), 0) > 0, "B did not refuse the recorded handshake as a replay"


@needs_netns
def test_a_flood_of_replayed_and_forged_datagrams_costs_little_and_changes_nothing(tmp_path: Path) -> None:
    cap, log = tmp_path / "a1.jsonl", tmp_path / "requests.jsonl"
    with FaultNet() as tb:
        gb = tb.start(tmp_path, "b")
        rec = tb.start_recording(cap)  # from before A starts: its handshake too
        tb.start(tmp_path, "a")
        tb.request_server(log)
        assert tb.post("tunnel up")["response"] == "receipt 1: tunnel up"
        tb.stop_recording(rec)
        time.sleep(0.5)  # a metrics refresh
        # The first datagram A sent (its handshake's first message), and all it sent.
        first = tmp_path / "a1-first.jsonl"
        first.write_text(next(line for line in cap.read_text().splitlines() if json.loads(line)["out"]) + "\n")
        before, cpu0, drops0 = tb.metrics("b", 9481), _cpu_s(gb), tb.udp_drops("b")
        sent = sum(tb.replay(f, "a", gap=0, repeat=n, forge=forge)
                   for f, n in ((first, 2000), (cap, 200)) for forge in (False, True))
        time.sleep(0.5)
        cpu, drops = _cpu_s(gb) - cpu0, tb.udp_drops("b") - drops0
        after_flood = tb.post("after the flood")
        time.sleep(0.5)
        mb, ma = tb.metrics("b", 9481), tb.metrics("a", 9480)
    rejected = mb[REJECTED] - before[REJECTED]
    print(f"B rejected {rejected:.0f} of {sent} flooded datagrams ({drops} dropped by the kernel) for {cpu:.3f} s of CPU")
    assert after_flood["response"] == "receipt 2: after the flood", after_flood
    # What B read, it rejected; the kernel dropped what B's socket buffer could not hold.
    assert rejected + drops >= sent and rejected >= sent / 10, f"B rejected {rejected}, the kernel dropped {drops}, of {sent}"
    assert cpu <= 0.1 + 50e-6 * rejected, f"{cpu:.3f} s of CPU for {rejected:.0f} rejected datagrams"
    for m in (ma, mb):
        assert m.get(HANDSHAKES.format("completed"), 0) == 1, "not the one session that brought the tunnel up"
        assert m.get("hetpath_pep_peer_restarts_total", 0) == 0
    warnings = [line for line in (tmp_path / "gw-b.log").read_text().splitlines() if ": warn" in line]
    assert len(warnings) <= 4, f"B logged {len(warnings)} warnings for one flood"
