"""Small helpers shared by test modules."""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
from typing import Any, Sequence

from click.testing import CliRunner, Result
from hetpath import _bridge
from hetpath.cli import main

# The result schema as the engine defines it (hetpath_sim::results): never a copy.
SCHEMA = _bridge.schema()
SUMMARY_KEYS = SCHEMA["summary"]
FLOW_KEYS = SCHEMA["flow"]
LINK_KEYS = SCHEMA["link"]
LEG_KEYS = SCHEMA["leg"]
FLOW_SERIES_COLS = SCHEMA["flow_series"]
LINK_SERIES_COLS = SCHEMA["link_series"]


def _runner() -> CliRunner:
    # click >= 8.2 always captures stderr separately; 8.1 (Python 3.9) needs asking.
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    return CliRunner()


def invoke(args: Sequence[str], **kw: Any) -> Result:
    """Run the CLI in-process with stdout and stderr captured separately."""
    return _runner().invoke(main, list(args), catch_exceptions=False, **kw)


def without_wall_time(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary minus the one key that legitimately differs between identical runs."""
    return {k: v for k, v in summary.items() if k != "wall_time_s"}


def default_signals() -> None:
    """Gives a child the signal dispositions a terminal's command has (as ``preexec_fn``):
    a suite started as a background job (``scripts/test.sh &``) ignores SIGINT and
    SIGQUIT, and a child would inherit that and never see the Ctrl-C a test sends it."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def netns_unavailable(probe: str) -> str | None:
    """Why a test cannot create a network namespace here (tried with one named
    `probe`-PID, removed at once: each xdist worker probes as it collects), or None."""
    name = f"{probe}-{os.getpid()}"
    res = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if res.returncode != 0:
        return f"cannot create a network namespace: {res.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def live_verdict(why: str | None, required: bool) -> str:
    """What becomes of a live test (conftest.py) that cannot run because ``why`` (None: it
    can): "run", "skip", or "fail" when live tests are ``required``."""
    if why is None:
        return "run"
    return "fail" if required else "skip"


def live_binary() -> str | None:
    """The installed ``hetpath-live`` (``hetpath.live.find_binary``), or None."""
    from hetpath import live

    try:
        return live.find_binary()
    except live.LiveError:
        return None


def live_unavailable(probe: str) -> str | None:
    """Why the live-mode namespace tests (the emulator's and the PEP's: its table goes over
    netlink, so no nft program) cannot run here (live mode, the ``hetpath-live`` binary,
    a namespace named `probe`), or None."""
    from hetpath import live

    why = live.unavailable()
    if why:
        return why
    if live_binary() is None:
        return "hetpath-live is not installed (scripts/setup.sh --tests)"
    return netns_unavailable(probe)


class Namespaces:
    """Network namespaces made for one test, named ``<prefix>-<pid>-<n>-<role>``: each
    gets its loopback up on entry, after which ``wire`` (a subclass's) joins them;
    leaving kills what ``popen`` started and deletes every namespace made, also when
    entering failed halfway."""

    _count = 0

    def __init__(self, prefix: str, roles: str) -> None:
        import os

        Namespaces._count += 1
        self.ns = {k: f"{prefix}-{os.getpid()}-{Namespaces._count}-{k}" for k in roles}
        self._made: list[str] = []
        self._children: list[subprocess.Popen] = []

    def wire(self) -> None:
        """Links, addresses and routes between the namespaces (a subclass's)."""

    def __enter__(self):
        try:
            for ns in self.ns.values():
                ip("netns", "add", ns)
                self._made.append(ns)
                ip("-n", ns, "link", "set", "lo", "up")
            self.wire()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for p in self._children:
            with p:  # waits, and closes its pipes
                if p.poll() is None:
                    p.kill()
        self._children.clear()
        for ns in self._made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self._made.clear()

    def run(self, side: str, argv: list[str], **kw: Any) -> subprocess.CompletedProcess:
        kw.setdefault("timeout", 60)
        return subprocess.run(["ip", "netns", "exec", self.ns[side], *argv], **kw)

    def popen(self, side: str, argv: list[str], **kw: Any) -> subprocess.Popen:
        p = subprocess.Popen(["ip", "netns", "exec", self.ns[side], *argv], **kw)
        self._children.append(p)
        return p

    def metrics(self, side: str, port: int) -> dict[str, float]:
        """The Prometheus text a daemon in ``side`` serves on 127.0.0.1:``port``, as values."""
        code = f"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5).read().decode())"
        res = self.run(side, [sys.executable, "-c", code], capture_output=True, text=True, check=True)
        out = {}
        for line in res.stdout.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def pep_rss_kib(pep: Any) -> int:
    """A running ``hetpath.pep.Pep`` daemon's resident memory (VmRSS), KiB."""
    assert pep.process is not None
    with open(f"/proc/{pep.process.pid}/status") as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")
