"""``hetpath.sweep(scenario, grid=..., seeds=...)``: a sweep built from Python objects.

The same machinery as ``hetpath sweep FILE`` (:mod:`hetpath.sweep`: :class:`Sweep`,
:func:`plan`, :func:`run`, :func:`aggregate`), without a sweep file: the base is a
:class:`~hetpath.Scenario` or a scenario file, and the grid, protocols and seeds are
plain Python values shaped like the sweep file's tables.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from . import _args, _toml
from . import sweep as sweep_mod
from .backends import Backend
from .errors import ArgumentError, ScenarioError
from .scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]
_WHERE = "hetpath.sweep(): "


@dataclass
class SweepResult:
    """What :func:`sweep` returns."""

    #: One row per run and flow: the grid point, ``protocol``, ``seed``, ``flow`` and
    #: every key of the engine's flow record (as ``runs.csv`` of ``hetpath sweep``).
    runs: "pd.DataFrame"
    #: One row per grid point, protocol and flow: mean and ``_ci95`` of every metric and
    #: the run counts (as ``summary.csv``).
    summary: "pd.DataFrame"
    #: The columns that identify a row of ``summary``: the axes, ``protocol``, ``flow``.
    keys: list[str]


def sweep(
    scenario: Union[Scenario, PathLike],
    grid: Optional[dict[str, Sequence[Any]]] = None,
    seeds: Union[int, Sequence[int]] = 1,
    protocols: Optional[dict[str, dict[str, Any]]] = None,
    flows: Optional[Sequence[str]] = None,
    backend: Optional[Backend] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> SweepResult:
    """Run ``scenario`` over ``grid`` x ``protocols`` x ``seeds`` (all cores by default).

    ``grid`` maps an axis to its values: a dotted key (``"link.sat.rate"``) to a list of
    values, or any name to a list of dicts of dotted keys that vary together, each with
    an optional ``"label"``. ``seeds`` is a count (seeds 1..n) or a list. ``protocols``
    maps a name to its overrides (default: one protocol, ``"default"``, with none);
    ``flows`` restricts the reported flows. ``progress(done, total)`` is called per run.

    Raises ``ScenarioError`` for a bad scenario, key or value, before anything runs.
    """
    if isinstance(scenario, Scenario):
        scenario.validate()  # the base's own errors, named by the Python call
        base, source = scenario.to_dict(), scenario.source_name()
    elif isinstance(scenario, (str, os.PathLike)):
        path = _args.path(scenario, f"{_WHERE}scenario")
        base, source = _toml.loads(_toml.read_file(path), str(path)), str(path)
    else:
        raise ArgumentError(f"{_WHERE}scenario: expected a Scenario or the path of a scenario file, "
                            f"got {_args.describe(scenario)}")
    # Plain Python values from here on (NumPy numbers and arrays converted, anything TOML
    # cannot hold refused, nesting bounded), so every step below sees what a file holds.
    grid = {} if grid is None else _args.plain(grid, f"{_WHERE}grid")
    if not isinstance(grid, dict):
        raise ArgumentError(f"{_WHERE}grid: expected a dict of axis -> list of values, got {_args.describe(grid)}")
    spec = sweep_mod.Sweep(base=base, source=source,
                           axes=[sweep_mod._axis(name, values, _WHERE) for name, values in grid.items()],
                           seeds=sweep_mod._seeds(_args.plain(list(seeds) if isinstance(seeds, range) else seeds,
                                                              f"{_WHERE}seeds"), _WHERE))
    if protocols is not None:
        protocols = _args.plain(protocols, f"{_WHERE}protocols")
        if not isinstance(protocols, dict) or not protocols or not all(isinstance(v, dict) for v in protocols.values()):
            raise ArgumentError(f"{_WHERE}protocols: expected a dict of name -> dict of overrides, "
                                f"got {_args.describe(protocols)}")
        spec.protocols = dict(protocols)
    if flows is not None:
        spec.flows = _args.names(flows, f"{_WHERE}flows")
    backend = _args.backend(backend, f"{_WHERE}backend")
    progress = _args.callback(progress, f"{_WHERE}progress")
    try:
        tasks = sweep_mod.plan(spec)
    except ScenarioError as exc:
        if not isinstance(scenario, Scenario):
            raise
        # The message names the grid point; a line of TOML generated from the Python
        # scenario plus overrides would only mislead.
        raise ScenarioError(re.sub(re.escape(source) + r": line \d+: ", "", str(exc))) from None
    runs = sweep_mod.run(tasks, backend, progress)
    keys = [a.name for a in spec.axes] + ["protocol", "flow"]
    return SweepResult(runs=runs, summary=sweep_mod.aggregate(runs, keys), keys=keys)
