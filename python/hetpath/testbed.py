"""The end-to-end testbed: a client and a server on either side of an
emulated scenario link, with a gateway at each end of it.

::

    client ns ──veth── gwA ns ══ emulated link ══ gwB ns ──veth── server ns
    CLIENT/24   GW_A_LAN    10.77.0.1  (hetpath-live)  10.77.0.2    GW_B_LAN   SERVER/24

The gateways are the :class:`~hetpath.live.Emulation`'s two sides: gwA is side a (the
link's ``a`` node, device ``hpa``) and gwB side b (``hpb``). No separate gateway
namespaces: a gateway *is* the host at the end of the satellite hop, and putting a PEP
there (``hetpath pep CONFIG --netns <gw ns>``, :meth:`Testbed.pep`) is exactly the
deployment the PEP is for; two more namespaces would add two more veth hops and nothing
to measure. Both gateways forward (``ip_forward = 1``, ``rp_filter = 0`` so that a
transparent PEP's replies are not dropped), the client and the server route everything
through their gateway, and each gateway routes the far LAN over the emulated link, so
what the client sends the server crosses the link's a -> b direction.

:class:`Testbed` is a context manager: it makes the namespaces, the veth pairs, the
addresses and routes, starts the link core, and on exit stops every process it started
(commands, PEPs, the core: which then writes its files into ``out``) and deletes every
namespace it made, whatever happened, including a failure halfway through setting up.
Linux, as root.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from . import netns_cc
from .live import ADDR_A, ADDR_B, DEVICE, Emulation, LiveError, stop

CLIENT, GW_A_LAN = "10.78.1.2", "10.78.1.1"
SERVER, GW_B_LAN = "10.78.2.2", "10.78.2.1"
CLIENT_NET, SERVER_NET = "10.78.1.0/24", "10.78.2.0/24"
#: The testbed's four namespaces by role; ``gwA`` and ``gwB`` are the emulator's sides.
ROLES = ("client", "gwA", "gwB", "server")
_counter = itertools.count()


def _ip(*args: str) -> None:
    res = subprocess.run(["ip", *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise LiveError(f"ip {' '.join(args)}: {res.stderr.strip()}")


class Testbed:
    """client -- gwA == emulated link == gwB -- server; a context manager.

    ``scenario`` and ``link`` name the link to emulate (as ``hetpath emulate``'s
    ``--link``); ``out`` receives the link core's files (summary.json, fates.csv, the
    loss traces, link_series.csv, pcaps with ``pcap``)."""

    # Not a test class, whatever pytest's collector thinks of the name.
    __test__ = False

    def __init__(self, scenario: Path, link: str, *, out: Path, seed: Optional[int] = None,
                 pcap: bool = False, realtime: bool = True, congestion: Optional[str] = None) -> None:
        self.emulation = Emulation(scenario, link, seed=seed, out=out, pcap=pcap, realtime=realtime,
                                   congestion=congestion)
        tag = f"{os.getpid()}-{next(_counter)}"
        self.ns = {"client": f"hpt-{tag}-c", "gwA": self.emulation.ns["a"],
                   "gwB": self.emulation.ns["b"], "server": f"hpt-{tag}-s"}
        self.addr = {"client": CLIENT, "gwA": ADDR_A, "gwB": ADDR_B, "server": SERVER}
        self._made: list[str] = []
        self._children: list[subprocess.Popen] = []
        self._peps: list[Any] = []

    @property
    def summary(self) -> Optional[dict]:
        """The link core's summary.json, once the testbed is closed."""
        return self.emulation.summary

    # -- setting up ------------------------------------------------------------------

    def __enter__(self) -> "Testbed":
        try:
            self.emulation.out.mkdir(parents=True, exist_ok=True)
            self.emulation.__enter__()
            self._wire()
        except BaseException:
            self.close()
            raise
        return self

    def _wire(self) -> None:
        ns = self.ns
        for role in ("client", "server"):
            _ip("netns", "add", ns[role])
            self._made.append(ns[role])
            _ip("-n", ns[role], "link", "set", "lo", "up")
        # The client and server default to the gateways' controller (hetpath.netns_cc).
        netns_cc.apply([ns["client"], ns["server"]], self.emulation.congestion)
        # Device names are per namespace, so fixed names cannot clash between testbeds.
        _ip("link", "add", "lan0", "netns", ns["client"], "type", "veth", "peer", "name", "lan0", "netns", ns["gwA"])
        _ip("link", "add", "lan0", "netns", ns["server"], "type", "veth", "peer", "name", "lan0", "netns", ns["gwB"])
        for role, addr in [("client", CLIENT), ("gwA", GW_A_LAN), ("server", SERVER), ("gwB", GW_B_LAN)]:
            _ip("-n", ns[role], "addr", "add", f"{addr}/24", "dev", "lan0")
            _ip("-n", ns[role], "link", "set", "lan0", "up")
        _ip("-n", ns["client"], "route", "add", "default", "via", GW_A_LAN)
        _ip("-n", ns["server"], "route", "add", "default", "via", GW_B_LAN)
        _ip("-n", ns["gwA"], "route", "add", SERVER_NET, "via", ADDR_B, "dev", DEVICE["a"])
        _ip("-n", ns["gwB"], "route", "add", CLIENT_NET, "via", ADDR_A, "dev", DEVICE["b"])
        for gw in ("gwA", "gwB"):
            for key in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                        "net.ipv4.conf.default.rp_filter=0"):
                res = self.run(gw, ["sysctl", "-qw", key], capture_output=True, text=True)
                if res.returncode != 0:
                    raise LiveError(f"sysctl {key} in {ns[gw]}: {res.stderr.strip()}")

    # -- running commands -----------------------------------------------------------

    def env(self) -> dict[str, str]:
        """What commands see: the emulation's variables, plus each role's namespace and
        address (``HETPATH_NS_CLIENT``, ``HETPATH_ADDR_SERVER``, ...)."""
        env = self.emulation.env()
        for role in ROLES:
            env[f"HETPATH_NS_{role.upper()}"] = self.ns[role]
            env[f"HETPATH_ADDR_{role.upper()}"] = self.addr[role]
        return env

    def _argv(self, role: str, argv: Sequence[str]) -> list[str]:
        if role not in self.ns:
            raise ValueError(f"unknown testbed namespace '{role}'; expected one of {', '.join(ROLES)}")
        return ["ip", "netns", "exec", self.ns[role], *argv]

    def popen(self, role: str, argv: Sequence[str], **kw: Any) -> subprocess.Popen:
        """Starts ``argv`` in namespace ``role`` (client, gwA, gwB, server); stopped by
        :meth:`close` if still running, which closes its pipes (read them before)."""
        kw.setdefault("env", self.env())
        p = subprocess.Popen(self._argv(role, argv), **kw)
        self._children.append(p)
        return p

    def run(self, role: str, argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess:
        """Runs ``argv`` to completion in namespace ``role``."""
        kw.setdefault("env", self.env())
        return subprocess.run(self._argv(role, argv), **kw)

    def pep(self, config: Path, gw: str = "gwA", **kw: Any) -> Any:
        """A :class:`~hetpath.pep.Pep` for ``config`` in gateway ``gw``'s namespace, to be
        entered with ``with``; :meth:`close` stops it if it is still running."""
        from .pep import Pep

        if gw not in ("gwA", "gwB"):
            raise ValueError(f"a PEP runs in gwA or gwB, not '{gw}'")
        p = Pep(config, netns=self.ns[gw], **kw)
        self._peps.append(p)
        return p

    # -- tearing down ---------------------------------------------------------------

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops commands and PEPs, then the link core (its files are written), and
        deletes every namespace. Safe to call twice; every step runs even if an earlier
        one failed; the link core's failure, if any, is raised at the end."""
        for p in self._children:
            with p:  # and its pipes closed
                stop(p)
        self._children.clear()
        for pep in self._peps:
            pep.close(check=False)
        self._peps.clear()
        for ns in reversed(self._made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self._made.clear()
        self.emulation.close()


def wait_listening(net: Any, role: str, port: int, tries: int = 100) -> None:
    """Waits (50 ms between looks, `tries` looks) until a TCP socket listens on `port` in
    namespace `role` of `net`: a :class:`Testbed`, or anything with its ``run(role,
    argv, **kw)``. Raises LiveError if none does."""
    for _ in range(tries):
        res = net.run(role, ["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True)
        if res.stdout.strip():
            return
        time.sleep(0.05)
    raise LiveError(f"nothing listens on port {port} in {role}")
