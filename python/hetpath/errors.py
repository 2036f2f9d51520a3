"""The exceptions hetpath raises.

The Rust extension defines its own ``_core.ScenarioError`` (a ``ValueError``) and
``_core.SimulationError`` (a ``RuntimeError``).  Extension classes cannot be given
a Python base after the fact, so the package defines the hierarchy here and
:mod:`hetpath._bridge` translates every exception coming out of ``_core`` into
these classes.  Users catch ``hetpath.ScenarioError`` (or ``HetpathError``, or
plain ``ValueError``) and never need to import ``hetpath._core``.
"""

from __future__ import annotations


class HetpathError(Exception):
    """Base class of every error hetpath raises on purpose."""


class ScenarioError(HetpathError, ValueError):
    """The scenario is invalid: bad TOML, unknown key, missing field, bad unit.

    The message is one line and starts with the file name (or ``<name>`` for a
    scenario built in Python), so it can be printed as-is.
    """


class InputFileError(ScenarioError, OSError):
    """A scenario or sweep file cannot be read (a directory, a device, not UTF-8). Also an
    ``OSError``, so code that caught the file system's error still does."""


class MissingFileError(InputFileError, FileNotFoundError):
    """A scenario or sweep file does not exist (also a ``FileNotFoundError``)."""


class ArgumentError(ScenarioError, TypeError):
    """An argument of a Python API call has the wrong type or shape (a seed that is not an
    integer, a path that is not a string, a scenario value TOML cannot hold, nesting past
    the limit). The message names the call and the argument. Also a ``TypeError``, and a
    ``ScenarioError`` (and ``ValueError``): it is bad input, found before anything runs."""


class OutputError(HetpathError, ValueError):
    """An output path given by the user cannot be written (checked before any run)."""


class ClusterError(HetpathError, ValueError):
    """A cluster backend cannot be used as asked (its packages are not installed, the
    scheduler's address does not answer, no worker joined): found before any run."""


class SimulationError(HetpathError, RuntimeError):
    """The simulation failed after the scenario was accepted."""


class CoreMissingError(HetpathError, ImportError):
    """The compiled extension ``hetpath._core`` is not importable (not built)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken like Ctrl-C (the CLI raises it): workers stopped, finished runs
    kept; exit status 143."""
