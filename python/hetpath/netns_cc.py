"""The default TCP congestion control of the namespaces live mode makes.

A new network namespace starts with the host's default
(``net.ipv4.tcp_congestion_control``, inherited since Linux 4.15), so on a host that
runs BBR every program in ``hetpath emulate``'s namespaces would too, where a reader of
docs/live.md expects Linux's own default, CUBIC. So the namespaces get ``cubic`` unless
the user names another (``--congestion``), or ``host`` to keep the host's. A
non-initial namespace may only default to a controller of the host's
``net.ipv4.tcp_allowed_congestion_control`` (``tcp_set_default_congestion_control`` in
net/ipv4/tcp_cong.c refuses the others with EPERM); a controller the user named is then
an error, and the unnamed ``cubic`` leaves the host's default with a note saying so. A
program can still choose its own per socket (``TCP_CONGESTION``: ``iperf3 -C cubic``):
as root, any controller the kernel has.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Optional, Sequence

from .errors import HetpathError

#: What the namespaces get unless told: Linux's default controller (CONFIG_DEFAULT_TCP_CONG).
LINUX_DEFAULT = "cubic"
#: The ``--congestion`` value that keeps the host's default.
HOST = "host"
_KEY = "net.ipv4.tcp_congestion_control"


def _allowed() -> str:
    try:
        return Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read_text().strip()
    except OSError:
        return "unknown"


def _sysctl(ns: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, "sysctl", *args], capture_output=True, text=True)


def apply(namespaces: Sequence[str], want: Optional[str]) -> tuple[str, Optional[str]]:
    """Sets the default congestion control of ``namespaces`` to ``want`` (None:
    ``cubic`` where the host allows it; ``"host"``: unchanged) and returns the controller
    in effect and, when it is not what was meant, a one-line note why. Raises
    :class:`HetpathError` when a named controller cannot be the namespaces' default."""
    name = want or LINUX_DEFAULT
    if name != HOST:
        for ns in namespaces:
            res = _sysctl(ns, "-qw", f"{_KEY}={name}")
            if res.returncode == 0:
                continue
            allowed = f"net.ipv4.tcp_allowed_congestion_control: {_allowed()}"
            if want is not None:
                raise HetpathError(f"--congestion {name}: the kernel refused it as the namespaces' default "
                                   f"({res.stderr.strip() or 'refused'}); a namespace may only default to "
                                   f"a controller the host allows ({allowed})")
            return _current(namespaces[0]), (f"the host's default: {name} is not allowed as a namespace's "
                                             f"({allowed}); a program can choose its own, iperf3 -C {name}")
    return _current(namespaces[0]), None


def _current(ns: str) -> str:
    res = _sysctl(ns, "-n", _KEY)
    return res.stdout.strip() or "unknown"
