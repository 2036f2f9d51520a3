"""``hetpath.run``: run a scenario (a :class:`Scenario` or a TOML file) to a :class:`Result`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

from . import _args, _bridge, _toml
from .errors import ArgumentError, OutputError
from .provenance import now_utc, provenance
from .result import Result
from .scenario import Scenario

PathLike = Union[str, "os.PathLike[str]"]


def read_scenario_file(path: PathLike, where: str = "scenario") -> str:
    """Read a scenario file's text; a missing, unreadable, non-regular or non-UTF-8 file
    is a ``ScenarioError`` naming it (one hierarchy for every failure of the API), and a
    value that is not a path an ``ArgumentError`` naming ``where``."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"{where}: expected a Scenario or the path of a scenario file, "
                            f"got {_args.describe(path)}")
    return _toml.read_file(_args.path(path, where))


def run(
    scenario: Union[Scenario, PathLike],
    seed: Optional[int] = None,
    pcap_dir: Optional[PathLike] = None,
    progress: Optional[_bridge.ProgressFn] = None,
    trace: bool = False,
    check: Optional[bool] = None,
) -> Result:
    """Simulate ``scenario`` and return its :class:`Result`.

    ``scenario`` is a :class:`Scenario` or the path of a TOML file.  ``seed``
    overrides the scenario's seed.  ``pcap_dir`` (created if missing) receives
    one ``<index>_<link>_<from>-<to>.pcap`` per link direction.  ``progress(sim_s,
    end_s)`` is called at most every 50 ms of wall time; an exception it raises
    (e.g. KeyboardInterrupt) stops the run and propagates.  ``trace=True`` keeps
    the typed event trace (``Result.trace``).  ``check=True`` checks the run's
    invariants at its end (conservation of packets per link direction, bytes per
    connection, no event in the past; docs/guide.md, "Run-time checks"); ``None``
    follows the environment variable ``HETPATH_CHECK``.

    Raises ``ScenarioError`` for invalid input (a file that cannot be read; an
    ``ArgumentError`` for an argument of the wrong type, such as a seed outside
    0..2^64-1: a NumPy integer is a good seed), ``OutputError`` for an unusable
    ``pcap_dir`` and ``SimulationError`` if the engine fails. Ctrl-C stops the run with
    ``KeyboardInterrupt`` in whichever thread runs it (docs/guide.md, "Python API").
    """
    where = "hetpath.run()"
    seed = None if seed is None else _args.integer(seed, f"{where}: seed", 0, 2**64 - 1)
    trace = _args.flag(trace, f"{where}: trace")
    check = None if check is None else _args.flag(check, f"{where}: check")
    progress = _args.callback(progress, f"{where}: progress")
    if pcap_dir is not None:
        pcap_dir = _args.path(pcap_dir, f"{where}: pcap_dir")
    if isinstance(scenario, Scenario):
        # Its errors name the Python call and argument, not a line of the TOML made from it.
        with scenario.python_errors():
            return run_text(scenario.to_toml(), scenario.source_name(), seed=seed, pcap_dir=pcap_dir,
                            progress=progress, trace=trace, check=check)
    text, source = read_scenario_file(scenario, f"{where}: scenario"), str(scenario)
    return run_text(text, source, seed=seed, pcap_dir=pcap_dir, progress=progress, trace=trace,
                    check=check)


def run_text(
    text: str,
    source: str,
    *,
    seed: Optional[int] = None,
    pcap_dir: Optional[PathLike] = None,
    progress: Optional[_bridge.ProgressFn] = None,
    series: bool = True,
    trace: bool = False,
    warn: Optional[_bridge.WarnFn] = None,
    check: Optional[bool] = None,
) -> Result:
    """Like :func:`run` for TOML text already in memory; ``source`` names it in errors.

    Relative paths inside the scenario resolve against ``source``'s directory.
    ``series=False`` skips the time series (the result's series are then empty).
    ``warn(line)`` hears each of the loader's warnings before the run starts; they are
    in ``Result.warnings`` either way.
    ``check`` as in :func:`run`.
    """
    pcap: Optional[str] = None
    if pcap_dir is not None:
        try:
            Path(pcap_dir).mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise OutputError(f"pcap_dir {pcap_dir}: exists and is not a directory") from None
        except OSError as exc:
            raise OutputError(f"pcap_dir {pcap_dir}: cannot create the directory: {exc.strerror or exc}") from None
        pcap = str(pcap_dir)
    started = now_utc()
    raw = _bridge.run_text(text, source, seed=seed, pcap_dir=pcap, progress=progress, series=series,
                           trace=trace, warn=warn, check=check)
    raw["provenance"] = provenance(text, source, raw["summary"]["seed"], started, now_utc())
    raw["scenario_text"] = text
    return Result(raw)


def validate(scenario: Union[Scenario, PathLike]) -> list[str]:
    """Check a scenario without running it; raises ``ScenarioError`` if invalid, and
    returns its warnings (``FILE: KEY: message``) if not."""
    if isinstance(scenario, Scenario):
        return scenario.validate()
    return _bridge.validate_text(read_scenario_file(scenario, "hetpath.validate(): scenario"), str(scenario))


def cc_names() -> list[str]:
    """Names accepted by a flow's ``cc =`` key."""
    return _bridge.cc_names()
