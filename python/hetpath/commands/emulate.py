"""``hetpath emulate FILE --link NAME [-- CMD ...]``: real programs over an emulated link.

Side a's namespace runs CMD (or an interactive shell), side b's runs each ``--b``
command in the background; the emulator stops when CMD ends, or at Ctrl-C, and its
files (pcaps, fates.csv, loss traces, link_series.csv, flow_series.csv: the kernel
connections' tcp_info, summary.json) are in ``--out``.
They are written into a staging directory and moved into place once the core has
finished (hetpath.outdir, as ``hetpath run`` does), so ``--out`` never mixes two runs.

Packet mode (``--if-a DEV --if-b DEV``): no namespaces are made; the link core bridges
two existing Ethernet interfaces (of this host, or of ``--netns-a``/``--netns-b``) over
AF_PACKET, and CMD runs here, or, without one, the link runs until Ctrl-C.
See docs/live.md.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shlex
import signal
import time
from pathlib import Path
from typing import Any, Callable, Optional

import click

from .. import _bridge, _toml, outdir, outlock
from ..errors import OutputError
from ..live import ADDR_A, ADDR_B, Bridge, Emulation, run_in_group
from ._io import note_printer, safe_dirname, scenario_name
from .run import _check_seed


@click.command("emulate", short_help="Run real programs over an emulated scenario link (Linux, root).",
               context_settings={"ignore_unknown_options": False})
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--link", "link", required=True, metavar="NAME",
              help="The scenario link joining the two namespaces (a [[link]] name, or air/STATION).")
@click.option("--seed", type=int, default=None, metavar="N", callback=_check_seed,
              help="Override the scenario's seed (0 to 2^64-1).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Write pcaps, fates.csv, the loss traces, link_series.csv, flow_series.csv and summary.json here "
                   "(default out/<scenario-name>-emulate).")
@click.option("--no-pcap", is_flag=True, help="Do not capture packets.")
@click.option("--b", "b_cmds", multiple=True, metavar="CMD",
              help=f"A shell command to run in side b's namespace ({ADDR_B}) while CMD runs; repeatable.")
@click.option("--if-a", "if_a", default=None, metavar="DEV",
              help="Packet mode: the Ethernet interface on the link's a side (what it receives crosses a -> b).")
@click.option("--if-b", "if_b", default=None, metavar="DEV", help="Packet mode: the interface on the b side.")
@click.option("--netns-a", "netns_a", default=None, metavar="NS",
              help="Packet mode: --if-a's network namespace (a name in /run/netns, or a path).")
@click.option("--netns-b", "netns_b", default=None, metavar="NS", help="Packet mode: --if-b's network namespace.")
@click.option("--congestion", default=None, metavar="NAME",
              help="The namespaces' default TCP congestion control (default cubic, Linux's, where the host "
                   "allows it; 'host' keeps the host's).")
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def emulate_command(file: Path, link: str, seed: Optional[int], out_dir: Optional[Path], no_pcap: bool,
                    b_cmds: tuple[str, ...], if_a: Optional[str], if_b: Optional[str], netns_a: Optional[str],
                    netns_b: Optional[str], congestion: Optional[str], cmd: tuple[str, ...]) -> None:
    """Join two network namespaces by link NAME of scenario FILE, with the simulator's own
    queue, rate, delay, channel and outages, and run CMD (after --) in side a's namespace
    ($HETPATH_ADDR_A = 10.77.0.1; the far side is $HETPATH_ADDR_B = 10.77.0.2), or a shell.

    With --if-a and --if-b (packet mode), bridge those two existing Ethernet interfaces
    instead, and run CMD here, or without one until Ctrl-C."""
    packet = if_a is not None or if_b is not None
    if packet and (if_a is None or if_b is None):
        raise click.UsageError("packet mode needs both --if-a and --if-b")
    if packet and b_cmds:
        raise click.UsageError("--b runs a command in TUN mode's side b; packet mode has no sides of its own")
    if not packet and (netns_a or netns_b):
        raise click.UsageError("--netns-a/--netns-b go with --if-a/--if-b (packet mode)")
    if packet and congestion:
        raise click.UsageError("--congestion sets TUN mode's namespaces; packet mode makes none")
    text = _toml.read_file(file)
    _bridge.validate_text(text, str(file))
    out = out_dir or Path("out") / f"{safe_dirname(scenario_name(text, file))}-emulate"
    if packet:
        assert if_a is not None and if_b is not None
        _packet_mode(file, link, seed, out, no_pcap, if_a, if_b, netns_a, netns_b, cmd)
        return
    argv = list(cmd) or [os.environ.get("SHELL", "/bin/sh")]

    def run_a(emu: Emulation) -> int:
        click.echo(f"hetpath: link '{link}' up between {emu.ns['a']} ({ADDR_A}) and {emu.ns['b']} ({ADDR_B})",
                   err=True)
        click.echo(f"hetpath: TCP congestion control in both: {emu.congestion}"
                   + (f" ({emu.congestion_note})" if emu.congestion_note else ""), err=True)
        for c in b_cmds:
            emu.popen("b", ["sh", "-c", c])
        return _status(emu.run("a", argv).returncode)

    _run_core(out, lambda staging: Emulation(file, link, seed=seed, out=staging, pcap=not no_pcap,
                                             congestion=congestion), run_a, argv)


def _packet_mode(file: Path, link: str, seed: Optional[int], out: Path, no_pcap: bool, if_a: str, if_b: str,
                 netns_a: Optional[str], netns_b: Optional[str], cmd: tuple[str, ...]) -> None:
    """The core between two existing interfaces; CMD here, or until Ctrl-C."""

    def run_here(bridge: Bridge) -> int:
        where = {s: f"{i}" + (f" (netns {n})" if n else "") for s, i, n in (("a", if_a, netns_a),
                                                                              ("b", if_b, netns_b))}
        click.echo(f"hetpath: link '{link}' bridging {where['a']} (a) and {where['b']} (b)"
                   + ("" if cmd else "; Ctrl-C stops it"), err=True)
        if cmd:
            return _status(run_in_group(list(cmd), env=bridge.env()).returncode)
        while bridge.running():
            time.sleep(0.2)
        return 0

    _run_core(out, lambda staging: Bridge(file, link, if_a, if_b, netns_a=netns_a, netns_b=netns_b, seed=seed,
                                          out=staging, pcap=not no_pcap), run_here, list(cmd))


def _run_core(out: Path, core: Callable[[Path], Any], body: Callable[[Any], int], argv: list[str]) -> None:
    """Runs ``body`` while the link core ``core(staging)`` (an Emulation or a Bridge) is up,
    then moves its files from the staging directory to ``out`` (hetpath.outdir), reports,
    and exits with ``body``'s status. Ctrl-C is how an open-ended command (ping, a shell)
    ends: the run's files are complete once the core stops, so they are kept."""
    _remove_stale_staging()
    staging = outdir.prepare(out, note=note_printer(False))
    mark = _mark_output(out)
    status, interrupted = 0, False
    try:
        with core(staging) as running:
            try:
                status = body(running)
            except KeyboardInterrupt:
                interrupted = True
        _series_parquet(staging)
        outdir.commit(staging, out)
    except BaseException:
        outdir.discard(staging)
        raise
    finally:
        if mark is not None:
            mark.unlink(missing_ok=True)
    _report(running.summary, out)
    if interrupted:
        raise KeyboardInterrupt
    if status:
        click.echo(f"hetpath: {shlex.join(argv)} exited with status {status}", err=True)
        raise SystemExit(status if 0 < status < 256 else 1)


def _status(code: int) -> int:
    """The command's exit status; its death by SIGINT (Ctrl-C reached the command alone,
    its group having the terminal) is this command's interruption."""
    if code == -signal.SIGINT:
        raise KeyboardInterrupt
    return code


#: Where a running emulate names its output directory (a file named by its pid), so that
#: a start removes the staging directory an emulate killed with SIGKILL left, whatever
#: its --out.
STAGING_MARKS = Path("/run/hetpath-emulate")


def _mark_output(out: Path) -> Optional[Path]:
    """Records ``out`` under this process's pid; the mark, or None if it cannot be made."""
    mark = STAGING_MARKS / str(os.getpid())
    try:
        STAGING_MARKS.mkdir(mode=0o700, exist_ok=True)
        mark.write_text(str(out.resolve()))
    except OSError:
        return None
    return mark


def _remove_stale_staging() -> None:
    """Removes the staging directories of emulates that are gone (their pid no longer
    runs), each under its output's lock (hetpath.outdir: one another command holds is
    left alone), and their marks."""
    try:
        marks = [m for m in STAGING_MARKS.iterdir() if m.name.isdigit()]
    except OSError:
        return
    for mark in marks:
        if outlock.alive(int(mark.name)):
            continue
        with contextlib.suppress(OSError):
            target = Path(mark.read_text().strip())
            if outdir.staging_path(target).is_dir():
                with contextlib.suppress(OutputError):
                    outdir.discard(outdir.prepare(target))  # takes the lock, then removes it all
        mark.unlink(missing_ok=True)


#: The series the core writes as CSV: their text columns, and their float columns whose
#: empty fields are NaN (the rest keep "NA" or "" as text, as a node may be named).
_SERIES = {"link_series": (("link", "from", "to"), ()),
           "flow_series": (("flow",), ("ssthresh_bytes", "srtt_s", "rto_s"))}


def _series_parquet(out: Path) -> None:
    """A .parquet beside each series CSV of the core (link_series.csv; flow_series.csv,
    the kernel connections), with ``hetpath run``'s column types, when pyarrow is
    installed (as :meth:`Result.write` does)."""
    if importlib.util.find_spec("pyarrow") is None:
        return
    import pandas as pd

    for name, (text, floats) in _SERIES.items():
        csv = out / f"{name}.csv"
        if not csv.is_file():
            continue
        with outdir.naming(out / f"{name}.parquet"):
            frame = pd.read_csv(csv, dtype={c: str for c in text}, keep_default_na=False,
                                na_values={c: [""] for c in floats})
            frame["time_s"] = frame["time_s"].astype("float64")
            frame.to_parquet(out / f"{name}.parquet", index=False)


def _report(summary: Optional[dict], out: Path) -> None:
    if summary:
        for d in summary.get("links", []):
            click.echo(f"{d['from']} -> {d['to']}: {d['tx_packets']} packets sent, "
                       f"{d['lost_packets']} lost, {d['drops']} dropped at the queue", err=True)
        if summary.get("mode") == "packet":
            click.echo(f"frames above the MTU dropped (a, b): {summary['oversize_drops']}", err=True)
    click.echo(f"hetpath: wrote {out}", err=True)
