"""``hetpath emulate`` leaves nothing running and nothing behind: every command it starts
(``--b`` and the ``--`` command) is ended as a process group when it exits, so a
``--b`` server started through ``sh -c`` does not outlive it and a pipe from it reaches
EOF; after ``kill -9`` of emulate, the next start removes the namespaces it left, the
commands still running in them, and its staging directory.
Namespace tests skip with the reason where root, TUN or the binary are missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hetpath import live
from helpers import live_unavailable

SKIP = live_unavailable("hp-probe-emulate-hygiene")
pytestmark = pytest.mark.live(SKIP and f"live mode unavailable: {SKIP}")

SCENARIO = """[scenario]
name = "hygiene"
duration = "60s"
[[node]]
name = "gw"
[[node]]
name = "t"
[[link]]
name = "sat"
a = "gw"
b = "t"
rate = "10Mbps"
delay = "5ms"
"""


def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "hygiene.toml"
    p.write_text(SCENARIO)
    return p


def sleeper(marker: str) -> str:
    """A shell command that leaves a child of the shell running (`; true` keeps the shell
    from exec'ing it), named by ``marker`` in its arguments."""
    return f"{sys.executable} -c 'import time; time.sleep(600)' {marker}; true"


def running(marker: str) -> list[int]:
    """The pids with an argument that ends with ``marker`` (emulate's own arguments, which
    hold it inside a shell command, do not)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if any(arg.endswith(marker.encode()) for arg in cmdline.split(b"\0")):
            pids.append(int(entry))
    return pids


def kill_all(marker: str) -> None:
    for pid in running(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def emulate_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "hetpath", "emulate", *args]


def namespaces_of(pid: int) -> list[str]:
    try:
        names = os.listdir("/run/netns")
    except FileNotFoundError:
        return []
    return [n for n in names if n.startswith(f"hp-{pid}-")]


def test_b_and_command_children_end_with_emulate_and_its_pipe_reaches_eof(tmp_path: Path) -> None:
    """The docs' ``--b 'python3 -m http.server 8000'`` runs under ``sh -c``: SIGTERM to the
    shell alone left the server running, holding emulate's stdout (``| grep`` hung)."""
    marker = f"hyg-{uuid.uuid4().hex}"
    server = f"{sys.executable} -m http.server 18471 --bind {live.ADDR_B} --directory {tmp_path / marker}-srv"
    (tmp_path / f"{marker}-srv").mkdir()
    try:
        res = subprocess.run(emulate_argv(str(scenario(tmp_path)), "--link", "sat", "--out", str(tmp_path / "out"),
                                          "--no-pcap", "--b", sleeper(f"{marker}-b"), "--b", server, "--",
                                          "sh", "-c", f"{sys.executable} -c 'import time; time.sleep(600)' {marker}-a & sleep 1"),
                             capture_output=True, text=True, timeout=40)
        assert res.returncode == 0, res.stderr
        time.sleep(0.2)
        assert running(f"{marker}-b") == [], "the --b command's child outlived emulate"
        assert running(f"{marker}-a") == [], "what the -- command left in the background outlived emulate"
        assert running(f"{marker}-srv") == [], "the --b http.server outlived emulate"
    except subprocess.TimeoutExpired:
        pytest.fail("emulate's stdout never reached EOF: a child it started still holds it")
    finally:
        for what in ("a", "b", "srv"):
            kill_all(f"{marker}-{what}")


def test_after_kill_9_the_next_start_removes_what_emulate_left(tmp_path: Path) -> None:
    marker = f"hyg-{uuid.uuid4().hex}"
    sc, out = scenario(tmp_path), tmp_path / "out"
    first = subprocess.Popen(emulate_argv(str(sc), "--link", "sat", "--out", str(out), "--no-pcap",
                                          "--b", sleeper(f"{marker}-b"), "--", "sh", "-c", sleeper(f"{marker}-a")),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (running(f"{marker}-a") and running(f"{marker}-b")):
            assert time.monotonic() < deadline, "the first emulate did not start its commands"
            assert first.poll() is None, "the first emulate exited"
            time.sleep(0.1)
        left = namespaces_of(first.pid)
        assert len(left) == 2, left
        first.kill()  # SIGKILL: no close(), no cleanup of its own
        first.wait()
        assert (tmp_path / ".out.partial").is_dir()

        # The next start, with another --out.
        other = tmp_path / "other"
        res = subprocess.run(emulate_argv(str(sc), "--link", "sat", "--out", str(other), "--no-pcap", "--", "true"),
                             capture_output=True, text=True, timeout=40)
        assert res.returncode == 0, res.stderr
        assert namespaces_of(first.pid) == [], "the killed emulate's namespaces are still there"
        time.sleep(0.2)
        assert running(f"{marker}-a") == [] and running(f"{marker}-b") == [], \
            "the killed emulate's commands still run"
        assert not (tmp_path / ".out.partial").exists(), "the killed emulate's staging directory is still there"
        assert not (tmp_path / ".out.lock").exists()
        assert (other / "summary.json").is_file()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        kill_all(f"{marker}-a")
        kill_all(f"{marker}-b")
        for ns in namespaces_of(first.pid):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_remove_stale_leaves_a_living_owners_namespaces_alone() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale, mine = f"hp-{gone.pid}-a", f"hp-{os.getpid()}-9999-b"
    for ns in (stale, mine):
        subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    try:
        removed = live.remove_stale()
        assert stale in removed and mine not in removed
        assert not os.path.exists(f"/run/netns/{stale}") and os.path.exists(f"/run/netns/{mine}")
    finally:
        for ns in (stale, mine):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_from_a_terminal_the_command_is_its_own_foreground_group_and_ctrl_c_keeps_the_files(tmp_path: Path) -> None:
    """Under a terminal (a pty), the ``--`` command leads a process group of its own that
    has the terminal (as a shell would run it: Ctrl-C and job control reach it alone);
    Ctrl-C ends it, the files are kept and emulate exits 130."""
    import pty

    out = tmp_path / "out"
    report = "echo GROUP $(ps -o pgid= -p $$) FOREGROUND $(ps -o tpgid= -p $$) EMULATE $(ps -o pgid= -p $PPID)"
    pid, fd = pty.fork()
    if pid == 0:  # the child: emulate, with the pty as its controlling terminal
        try:
            os.execv(sys.executable, emulate_argv(str(scenario(tmp_path)), "--link", "sat", "--out", str(out),
                                                  "--no-pcap", "--", "sh", "-c", f"{report}; sleep 30"))
        finally:
            os._exit(127)
    text, sent, deadline = b"", False, time.monotonic() + 40
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the terminal's last user has gone
                break
            if not chunk:
                break
            text += chunk
            if not sent and b"EMULATE" in text and text.split(b"EMULATE", 1)[1].count(b"\n"):
                time.sleep(0.3)
                os.write(fd, b"\x03")  # Ctrl-C, as typed
                sent = True
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    words = text.decode(errors="replace").split("GROUP", 1)[1].split()
    group, foreground, emulate = int(words[0]), int(words[2]), int(words[4])
    assert group != emulate, "the command runs in emulate's own process group"
    assert foreground == group, "the command's group does not have the terminal"
    assert os.waitstatus_to_exitcode(status) == 130, text
    assert (out / "summary.json").is_file()


def veth_pairs(ns: str) -> None:
    """Namespace ``ns`` with two veth pairs, v1-w1 and v2-w2, up (packet mode bridges v1, v2)."""
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    for a, b in (("v1", "w1"), ("v2", "w2")):
        subprocess.run(["ip", "-n", ns, "link", "add", a, "type", "veth", "peer", "name", b], check=True,
                       capture_output=True)
        for dev in (a, b):
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True, capture_output=True)


def test_packet_modes_command_is_ended_as_a_group_too(tmp_path: Path) -> None:
    marker = f"hyg-{uuid.uuid4().hex}"
    ns = f"hphyg-{os.getpid()}-p"
    try:
        veth_pairs(ns)
        res = subprocess.run(emulate_argv(str(scenario(tmp_path)), "--link", "sat", "--out", str(tmp_path / "out"),
                                          "--no-pcap", "--if-a", "v1", "--if-b", "v2", "--netns-a", ns,
                                          "--netns-b", ns, "--", "sh", "-c",
                                          f"{sys.executable} -c 'import time; time.sleep(600)' {marker} & sleep 0.5"),
                             capture_output=True, text=True, timeout=40)
        assert res.returncode == 0, res.stderr
        time.sleep(0.2)
        assert running(marker) == [], "what the command left in the background outlived emulate"
    except subprocess.TimeoutExpired:
        pytest.fail("emulate's stdout never reached EOF: a child it started still holds it")
    finally:
        kill_all(marker)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_packet_mode_turns_tso_off_as_ethtool_sees_it_and_back_after(tmp_path: Path) -> None:
    """Every TCP segmentation offload, not only the four the legacy ETHTOOL_STSO knows
    (a newer kernel has tx-tcp-accecn-segmentation, which left `ethtool -k` saying
    `tcp-segmentation-offload: on`)."""
    if shutil.which("ethtool") is None:
        why = "the ethtool program is not installed (scripts/setup.sh --tests installs it)"
        if os.environ.get("CI") == "true" or os.environ.get("HETPATH_REQUIRE_LIVE") == "1":
            pytest.fail(f"{why}; under CI this test must run", pytrace=False)
        pytest.skip(why)
    ns = f"hphyg-{os.getpid()}"

    def tso(dev: str) -> str:
        res = subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-k", dev], check=True, capture_output=True,
                             text=True)
        return next(line.split(":", 1)[1].split()[0] for line in res.stdout.splitlines()
                    if line.startswith("tcp-segmentation-offload:"))

    try:
        veth_pairs(ns)
        before = tso("v1"), tso("v2")
        assert before == ("on", "on"), "a veth starts with TSO on"
        out = tmp_path / "out"
        out.mkdir()
        with live.Bridge(scenario(tmp_path), "sat", "v1", "v2", netns_a=ns, netns_b=ns, out=out, pcap=False) as b:
            during = tso("v1"), tso("v2")
        assert during == ("off", "off")
        assert (tso("v1"), tso("v2")) == before, "put back when the core stops"
        assert b.summary is not None and b.summary["offloads_stuck"] == [[], []]
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
