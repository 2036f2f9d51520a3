"""The PEP daemon behind ``hetpath pep``: ``hetpath-live pep`` started, watched and
stopped from Python.

:class:`Pep` starts the daemon (inside a network namespace if asked), waits for its
``ready`` (its interception rules are installed by then), and on exit sends SIGTERM,
which makes it reset its open connections and remove its rules. A configuration error
is a :class:`~hetpath.errors.ScenarioError` with the daemon's one-line message (file,
key, expectation). Linux, as root; :func:`print_rules` needs neither.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Optional

from .live import LiveError, core_error, find_binary, stop, wait_ready


def _command(config: Path, netns: Optional[str], *extra: str) -> list[str]:
    cmd = [find_binary(), "pep", "--config", str(config), *extra]
    return ["ip", "netns", "exec", netns, *cmd] if netns else cmd


def print_rules(config: Path) -> str:
    """The nft table and policy routes the daemon would install, as a shell script."""
    res = subprocess.run(_command(config, None, "--print-rules"), capture_output=True, text=True)
    if res.returncode != 0:
        raise core_error("the PEP", res.returncode, res.stderr)
    return res.stdout


class Pep:
    """A running PEP daemon; a context manager. Its log goes to this process's stderr
    with ``inherit_log``, else to a file ``log``, else to memory; :meth:`close` keeps it
    in :attr:`log_text`."""

    def __init__(self, config: Path, *, netns: Optional[str] = None, log: Optional[Path] = None,
                 inherit_log: bool = False) -> None:
        self.config, self.netns, self.log, self.inherit_log = Path(config), netns, log, inherit_log
        self.process: Optional[subprocess.Popen] = None
        self.log_text = ""
        self._log_file = None

    def __enter__(self) -> "Pep":
        if os.geteuid() != 0:
            raise LiveError("the PEP needs root (it installs nftables rules and uses IP_TRANSPARENT)")
        self._log_file = open(self.log, "w+") if self.log else None
        err = None if self.inherit_log else self._log_file or subprocess.PIPE
        # Its own session: Ctrl-C reaches our command first, and close() stops the daemon
        # with SIGTERM so that it removes its rules.
        self.process = subprocess.Popen(_command(self.config, self.netns), stdout=subprocess.PIPE, stderr=err,
                                        stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        try:
            p = self.process
            wait_ready(p, "the PEP", lambda: core_error("the PEP", p.returncode, self._read_log()))
        except BaseException:
            self.close(check=False)
            raise
        return self

    def _read_log(self, p: Optional[subprocess.Popen] = None) -> str:
        p = p or self.process
        if self._log_file is not None:
            self._log_file.flush()
            self._log_file.seek(0)
            return self._log_file.read()
        if p is not None and p.stderr is not None:
            return p.stderr.read()
        return ""

    def wait(self) -> int:
        """Waits for the daemon to stop by itself (a signal from elsewhere)."""
        assert self.process is not None
        return self.process.wait()

    def __exit__(self, *exc: object) -> None:
        self.close(check=exc[0] is None)

    def close(self, check: bool = True) -> None:
        """SIGTERM (then SIGKILL after 10 s), and the log. Raises if the daemon failed."""
        p, self.process = self.process, None
        if p is None:
            return
        with p:  # its pipes are closed once the log is read
            stop(p, timeout=10)
            self.log_text = self._read_log(p)
        if self._log_file is not None:
            self._log_file.close()
        if check and p.returncode not in (0, -signal.SIGTERM):
            raise core_error("the PEP", p.returncode, self.log_text)
