"""Live mode: a scenario link emulated between two network namespaces.

:class:`Emulation` makes two namespaces (``hp-<pid>-a`` and ``hp-<pid>-b``), starts the
``hetpath-live`` link core with one TUN device in each (``hpa`` and ``hpb``, addresses
:data:`ADDR_A` and :data:`ADDR_B` on a /24), runs commands on either side, each in a
process group of its own, and on exit ends those groups, stops the core (which then
writes its files) and deletes both namespaces, whatever happened. The namespaces carry
the owner's pid, so a start removes those a killed owner left (:func:`remove_stale`). The link's behaviour is the simulator's own (docs/live.md); this module only
sets up and tears down. Linux, as root.

:class:`Bridge` is packet mode: the same core as a bump in the wire between two existing
Ethernet interfaces (of this namespace, or of named ones), over AF_PACKET; it makes and
deletes nothing but the core's files.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from . import netns_cc, outlock
from .errors import HetpathError, ScenarioError

ADDR_A = "10.77.0.1"
ADDR_B = "10.77.0.2"
DEVICE = {"a": "hpa", "b": "hpb"}
#: How long the core may take to load the scenario and open its devices.
READY_TIMEOUT_S = 20.0
#: How long a command's process group has, after SIGTERM, before it is sent SIGKILL.
GROUP_GRACE_S = 2.0
#: Namespaces owned by a process, named with its pid: an Emulation's ``hp-<pid>[-<n>]-a|b``
#: and a ``testbed.Testbed``'s ``hpt-<pid>-<n>-c|s``.
_OWNED_NS = re.compile(r"hp-(\d+)(?:-\d+)?-[ab]|hpt-(\d+)-\d+-[cs]")
_counter = itertools.count()


class LiveError(HetpathError, RuntimeError):
    """Live mode cannot run here (not root, no ``ip``, no TUN) or its core failed."""


def find_binary() -> str:
    """The ``hetpath-live`` binary: ``$HETPATH_LIVE``, beside this interpreter (the
    virtual environment scripts/setup.sh builds), or on PATH."""
    env = os.environ.get("HETPATH_LIVE")
    if env:
        return env
    here = Path(sys.executable).parent / "hetpath-live"
    if here.is_file():
        return str(here)
    found = shutil.which("hetpath-live")
    if found:
        return found
    raise LiveError("the link core hetpath-live is not installed; run scripts/setup.sh")


def unavailable() -> Optional[str]:
    """Why live mode cannot run on this machine, or ``None`` if it can."""
    if not sys.platform.startswith("linux"):
        return "live mode runs on Linux only"
    if os.geteuid() != 0:
        return "live mode needs root (it creates network namespaces and TUN devices)"
    if shutil.which("ip") is None:
        return "the 'ip' command (iproute2) is not installed"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun does not exist"
    return None


def _ip(*args: str) -> None:
    res = subprocess.run(["ip", *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise LiveError(f"ip {' '.join(args)}: {res.stderr.strip()}")


class _LinkCore:
    """What an Emulation and a Bridge share: the `hetpath-live emulate` process (the link
    core) they start, wait for, stop, and whose summary they read."""

    seed: Optional[int]
    out: Path
    pcap: bool
    realtime: bool
    _core: Optional[subprocess.Popen]
    summary: Optional[dict]

    def _launch(self, cmd: list[str]) -> None:
        """Starts the core (`cmd` and the run's options) and waits until it is ready."""
        if self.seed is not None:
            cmd += ["--seed", str(self.seed)]
        if not self.pcap:
            cmd.append("--no-pcap")
        if not self.realtime:
            cmd.append("--no-realtime")
        # Its own session: Ctrl-C at the terminal reaches the user's command, and the
        # core is stopped by close(), after the command, so its files are complete.
        core = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                text=True, start_new_session=True)
        self._core = core

        def exited() -> HetpathError:
            self._core = None  # close() has nothing left to stop
            assert core.stderr is not None
            with core:  # closes its pipes
                text = core.stderr.read()
            return core_error("the link core", core.returncode, text)

        wait_ready(core, "the link core", exited)

    @property
    def core_pid(self) -> Optional[int]:
        """The link core's process id while it runs (benches read its CPU time)."""
        return self._core.pid if self._core is not None else None

    def _stop_core(self) -> Optional[HetpathError]:
        """Stops the core (it then writes its files); what went wrong, if it failed."""
        core, self._core = self._core, None
        if core is None:
            return None
        with core:  # its pipes are closed on the way out (left open, they leak)
            stop(core, timeout=10)
            if core.returncode == 0:
                return None
            # The core takes SIGTERM and exits 0 with its files written: ended by a signal,
            # it wrote nothing, or not all, and "wrote DIR" would be a silent wrong answer.
            if core.returncode == -signal.SIGKILL:
                return LiveError("the link core did not stop within 10 s and was killed: its files are incomplete")
            if core.returncode < 0:
                return LiveError(f"the link core was ended by signal {-core.returncode} before it wrote its files")
            assert core.stderr is not None
            return core_error("the link core", core.returncode, core.stderr.read())

    def _finish(self, failure: Optional[HetpathError]) -> None:
        """Reads the stopped core's summary, then raises its failure, if any."""
        summary = self.out / "summary.json"
        if summary.is_file():
            self.summary = json.loads(summary.read_text())
        if failure is not None:
            raise failure


class Emulation(_LinkCore):
    """Two namespaces joined by one emulated scenario link; a context manager."""

    def __init__(self, scenario: Path, link: str, *, seed: Optional[int] = None,
                 out: Path, pcap: bool = True, realtime: bool = True, congestion: Optional[str] = None) -> None:
        self.scenario, self.link, self.seed = Path(scenario), link, seed
        #: Asked for (``netns_cc.apply``: None is cubic where the host allows it), then in
        #: effect once started, with a note when it is not what was meant.
        self.congestion, self.congestion_note = congestion, None
        self.out, self.pcap, self.realtime = Path(out), pcap, realtime
        n = next(_counter)
        tag = f"{os.getpid()}" if n == 0 else f"{os.getpid()}-{n}"
        self.ns = {"a": f"hp-{tag}-a", "b": f"hp-{tag}-b"}
        self.addr = {"a": ADDR_A, "b": ADDR_B}
        self._core: Optional[subprocess.Popen] = None
        self._children: list[subprocess.Popen] = []
        self._made: list[str] = []
        self.summary: Optional[dict] = None

    # -- setting up ------------------------------------------------------------------

    def __enter__(self) -> "Emulation":
        why = unavailable()
        if why:
            raise LiveError(why)
        binary = find_binary()
        try:
            self._start(binary)
        except BaseException:
            self.close()
            raise
        return self

    def _start(self, binary: str) -> None:
        remove_stale()
        for side in "ab":
            _ip("netns", "add", self.ns[side])
            self._made.append(self.ns[side])
            _ip("-n", self.ns[side], "link", "set", "lo", "up")
            # IPv4 only: without this the TUN devices send IPv6 router solicitations,
            # which would cross the emulated link and take channel draws and trace
            # indices the scenario's traffic should get.
            _ip("netns", "exec", self.ns[side], "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1")
        self.congestion, self.congestion_note = netns_cc.apply(list(self.ns.values()), self.congestion)
        self._launch([binary, "emulate", "--scenario", str(self.scenario), "--link", self.link,
                      "--tun-a", DEVICE["a"], "--tun-b", DEVICE["b"],
                      "--netns-a", f"/run/netns/{self.ns['a']}", "--netns-b", f"/run/netns/{self.ns['b']}",
                      "--out", str(self.out)])
        for side in "ab":
            dev, ns = DEVICE[side], self.ns[side]
            _ip("-n", ns, "addr", "add", f"{self.addr[side]}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")

    # -- running commands -----------------------------------------------------------

    def env(self) -> dict[str, str]:
        """The environment commands get: the two addresses and namespaces."""
        return {**os.environ, "HETPATH_ADDR_A": ADDR_A, "HETPATH_ADDR_B": ADDR_B,
                "HETPATH_NS_A": self.ns["a"], "HETPATH_NS_B": self.ns["b"]}

    def popen(self, side: str, argv: Sequence[str], **kw: Any) -> subprocess.Popen:
        """Starts ``argv`` inside side ``side``'s namespace, in a session (process group) of
        its own; :meth:`close` ends the whole group, and closes its pipes (read them before)."""
        kw.setdefault("env", self.env())
        kw["start_new_session"] = True
        p = subprocess.Popen(["ip", "netns", "exec", self.ns[side], *argv], **kw)
        self._children.append(p)
        return p

    def run(self, side: str, argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess:
        """Runs ``argv`` inside side ``side``'s namespace to completion (:func:`run_in_group`)."""
        kw.setdefault("env", self.env())
        return run_in_group(["ip", "netns", "exec", self.ns[side], *argv], **kw)

    # -- tearing down ---------------------------------------------------------------

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops the commands and the core, reads its summary, deletes the namespaces.
        Safe to call twice; every step runs even if an earlier one failed."""
        for p in self._children:
            with p:  # and its pipes closed
                stop_group(p)
        self._children.clear()
        failure = self._stop_core()
        for ns in reversed(self._made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self._made.clear()
        self._finish(failure)


def run_in_group(argv: Sequence[str], *, input: Any = None, timeout: Optional[float] = None, check: bool = False,
                 capture_output: bool = False, **kw: Any) -> subprocess.CompletedProcess:
    """Runs ``argv`` to completion, as :func:`subprocess.run` does, in a process group of
    its own (the terminal's foreground group meanwhile, when this process has the
    terminal, so Ctrl-C and job control reach it as from a shell); what the group left
    running when it ends, times out or this process is interrupted, is ended with it."""
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    tty = _foreground_tty() if "stdin" not in kw else None
    p = subprocess.Popen(list(argv), preexec_fn=_own_group(tty), **kw)
    with p:
        try:
            out, err = p.communicate(input, timeout=timeout)
        finally:
            stop_group(p)
            if tty is not None:
                _give_terminal(tty, os.getpgrp())
    if check and p.returncode:
        raise subprocess.CalledProcessError(p.returncode, p.args, out, err)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def remove_stale() -> list[str]:
    """Deletes the Emulation and Testbed namespaces whose owner (the pid in the name) is
    gone, as a ``kill -9`` leaves them, after killing what still runs in them (the
    commands it started); returns their names. A namespace of a living process is left alone."""
    try:
        names = sorted(os.listdir("/run/netns"))
    except OSError:
        return []
    removed = []
    for name in names:
        owner = _OWNED_NS.fullmatch(name)
        if owner is None or outlock.alive(int(owner.group(1) or owner.group(2))):
            continue
        pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        if subprocess.run(["ip", "netns", "del", name], capture_output=True).returncode == 0:
            removed.append(name)
    return removed


def _foreground_tty() -> Optional[int]:
    """Standard input's descriptor if it is a terminal whose foreground process group is
    this process's (a command run from a shell), else None."""
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            return 0
    except OSError:
        pass
    return None


def _give_terminal(fd: int, pgrp: int) -> None:
    """Makes ``pgrp`` the foreground group of terminal ``fd`` (SIGTTOU ignored meanwhile:
    a background group that does this is otherwise stopped)."""
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(fd, pgrp)
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def _own_group(tty: Optional[int]) -> Callable[[], None]:
    """A child's ``preexec_fn``: a process group of its own, given terminal ``tty``'s
    foreground if not None."""

    def setup() -> None:
        os.setpgid(0, 0)
        if tty is not None:
            _give_terminal(tty, os.getpgrp())

    return setup


def netns_path(name: str) -> str:
    """A namespace argument as the core takes it: a path as is, a name under /run/netns."""
    path = name if "/" in name else f"/run/netns/{name}"
    if not os.path.exists(path):
        raise ScenarioError(f"no network namespace '{name}' ({path} does not exist)")
    return path


class Bridge(_LinkCore):
    """Packet mode: one scenario link between Ethernet interfaces `if_a` (the link's a
    side: what it receives crosses a -> b and leaves by `if_b`) and `if_b`, each in the
    namespace given (a name under /run/netns or a path), else in this one. A context
    manager: entering starts the core and waits until both sockets are open; leaving
    stops it (it then writes its files) and reads ``summary.json``."""

    def __init__(self, scenario: Path, link: str, if_a: str, if_b: str, *, netns_a: Optional[str] = None,
                 netns_b: Optional[str] = None, seed: Optional[int] = None, out: Path, pcap: bool = True,
                 realtime: bool = True) -> None:
        self.scenario, self.link, self.seed = Path(scenario), link, seed
        self.interfaces = {"a": if_a, "b": if_b}
        self.netns = {"a": netns_a, "b": netns_b}
        self.out, self.pcap, self.realtime = Path(out), pcap, realtime
        self._core: Optional[subprocess.Popen] = None
        self.summary: Optional[dict] = None

    def __enter__(self) -> "Bridge":
        if not sys.platform.startswith("linux"):
            raise LiveError("packet mode runs on Linux only")
        if os.geteuid() != 0:
            raise ScenarioError("packet mode needs root (raw packet sockets, promiscuous mode, offload settings)")
        cmd = [find_binary(), "emulate", "--scenario", str(self.scenario), "--link", self.link,
               "--if-a", self.interfaces["a"], "--if-b", self.interfaces["b"], "--out", str(self.out)]
        for side in "ab":
            ns = self.netns[side]
            if ns:
                cmd += [f"--netns-{side}", netns_path(ns)]
        try:
            self._launch(cmd)
        except BaseException:
            self.close()
            raise
        return self

    def running(self) -> bool:
        """Whether the core is still running (it stops by itself only on a failure)."""
        return self._core is not None and self._core.poll() is None

    def env(self) -> dict[str, str]:
        """The environment a command gets: the two interfaces (and namespaces, if any)."""
        env = {**os.environ, "HETPATH_IF_A": self.interfaces["a"], "HETPATH_IF_B": self.interfaces["b"]}
        for side in "ab":
            if self.netns[side]:
                env[f"HETPATH_NS_{side.upper()}"] = str(self.netns[side])
        return env

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops the core and reads its summary; safe to call twice."""
        self._finish(self._stop_core())


def wait_ready(p: subprocess.Popen, what: str, exited: Callable[[], HetpathError]) -> None:
    """Waits for `p` (`what`, started with its stdout piped) to print ``ready``. If it
    exits first, raises what `exited` makes of that; if it takes longer than
    READY_TIMEOUT_S, stops it and raises LiveError."""
    assert p.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([p.stdout], [], [], 0.2)
        if not ready:
            continue
        line = p.stdout.readline()
        if line.strip() == "ready":
            return
        if line == "":
            p.wait()
            raise exited()
    stop(p)
    raise LiveError(f"{what} did not start within {READY_TIMEOUT_S:.0f} s")


def core_error(what: str, code: int, stderr: str) -> HetpathError:
    """The error a ``hetpath-live`` command's exit `code` and `stderr` stand for: its last
    ``error:`` line, a ScenarioError for bad input (exit 2)."""
    lines = stderr.strip().splitlines()
    last = next((line for line in reversed(lines) if "error:" in line), lines[-1] if lines else "")
    text = last.split("error: ", 1)[-1]
    if code == 2:
        return ScenarioError(text)
    return LiveError(f"{what} failed (exit {code}): {text or 'no message'}")


def stop_group(p: subprocess.Popen, grace: float = GROUP_GRACE_S) -> None:
    """Ends the process group `p` leads (a group this module made for it: its pid is the
    group's id): SIGTERM to the group, SIGKILL to what is left of it after `grace`
    seconds; then reaps `p`. Its children that made groups of their own are theirs."""
    if not _signal_group(p.pid, signal.SIGTERM):
        p.wait()
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        p.poll()
        if not _group_runs(p.pid):
            break
        time.sleep(0.02)
    else:
        _signal_group(p.pid, signal.SIGKILL)
    p.wait()


def _group_runs(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs: a zombie counts for kill(2), but an
    orphan's waits for init to reap it, and waiting out the grace for it would be wasted."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state not in ("Z", "X"):
            return True
    return False


def _signal_group(pgid: int, sig: int) -> bool:
    """Sends `sig` to process group `pgid`; whether the group still exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(p: subprocess.Popen, timeout: float = 5.0) -> None:
    """SIGTERM, then SIGKILL if it lingers (this process only, never a group or a name)."""
    if p.poll() is None:
        try:
            p.terminate()
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
