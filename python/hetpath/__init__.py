"""hetpath: deterministic packet-level TCP simulation over satellite and radio paths.

Quick start::

    import hetpath
    res = hetpath.run("scenarios/examples/geo-clean.toml", seed=2)
    print(res.flows[["name", "goodput_bps"]])
    res.write("out/geo"); res.plot("out/geo")
    out = hetpath.sweep("base.toml", grid={"link.sat.rate": ["1Mbps", "10Mbps"]}, seeds=5)
    print(out.summary)

Errors: every error raised on purpose derives from :class:`HetpathError`.
:class:`ScenarioError` (also a ``ValueError``) means the input is wrong and its
message is one line naming the file and key (:class:`ArgumentError`, one of them, names
the Python call and argument of a value of the wrong type); :class:`SimulationError` (also a
``RuntimeError``) means the engine failed.  Exceptions from the compiled
``hetpath._core`` are translated into these classes, so never catch ``_core``'s.
"""

from __future__ import annotations

from . import sweep
from .errors import (ArgumentError, ClusterError, CoreMissingError, HetpathError, InputFileError, MissingFileError, OutputError,
                     ScenarioError, SimulationError)
from .result import Result
from .runner import cc_names, run, validate
from .scenario import Scenario
from .sweep_api import SweepResult


try:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _dist_version

    __version__: str = _dist_version("hetpath")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "ArgumentError",
    "ClusterError",
    "CoreMissingError",
    "HetpathError",
    "InputFileError",
    "MissingFileError",
    "OutputError",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "SweepResult",
    "__version__",
    "cc_names",
    "run",
    "sweep",
    "validate",
]
