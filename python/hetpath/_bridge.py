"""The only module that talks to the compiled extension ``hetpath._core``.

Why a bridge: ``_core`` is imported lazily (so ``import hetpath`` and
``hetpath --help`` work even before the extension is built, and tests can
substitute a stand-in via ``sys.modules``), and every exception ``_core`` raises
is translated into :mod:`hetpath.errors` so callers see one hierarchy.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import threading
from types import ModuleType
from typing import Any, Callable, Iterator, Optional

from ._args import integer
from .errors import CoreMissingError, ScenarioError, SimulationError

ProgressFn = Callable[[float, float], None]
WarnFn = Callable[[str], None]


def core() -> ModuleType:
    """Import ``hetpath._core`` on first use; explain how to build it if missing."""
    try:
        return importlib.import_module("hetpath._core")
    except ImportError as exc:
        raise CoreMissingError(
            "the compiled extension hetpath._core is not available "
            f"({exc}); build and install it with: bash scripts/setup.sh"
        ) from None


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Re-raise ``_core`` exceptions as ``hetpath.ScenarioError``/``SimulationError``.

    Matching is by the classes ``_core`` exports, so a ``ValueError`` raised by
    Python code (e.g. a progress callback) is not mistaken for a scenario error.
    KeyboardInterrupt and everything else pass through untouched.
    """
    mod = core()
    scenario_cls = getattr(mod, "ScenarioError", ())
    simulation_cls = getattr(mod, "SimulationError", ())
    try:
        yield
    except ScenarioError:
        raise
    except SimulationError:
        raise
    except scenario_cls as exc:
        raise ScenarioError(str(exc)) from None
    except simulation_cls as exc:
        raise SimulationError(str(exc)) from None
    except BaseException as exc:
        # A Rust panic (pyo3's PanicException, a BaseException) is a bug in hetpath, never
        # the user's mistake: one line that says so, not a traceback.
        if type(exc).__name__ != "PanicException":
            raise
        raise SimulationError(f"internal error (a bug in hetpath; please report it): {exc}") from None


def run_text(
    text: str,
    path: str,
    *,
    seed: Optional[int] = None,
    pcap_dir: Optional[str] = None,
    progress: Optional[ProgressFn] = None,
    series: bool = True,
    trace: bool = False,
    warn: Optional[WarnFn] = None,
    check: Optional[bool] = None,
) -> dict[str, Any]:
    """Run a scenario given as TOML text; ``path`` names it in error messages.

    ``series=False`` skips the time series (faster, less memory: for sweeps);
    ``trace=True`` adds the event trace as columns under ``"trace"``; ``warn(line)`` is
    called with each of the loader's warnings before the run starts (the result's
    ``"warnings"`` lists them too); ``check=True`` checks the run's invariants at its end
    (a violation is a ``SimulationError``); ``None`` checks them if the environment
    variable ``HETPATH_CHECK`` is set and not ``0`` (how ``--check`` reaches a sweep's
    workers, and how the tests turn them on).
    """
    seed = check_seed(seed, path)
    if check is None:
        check = checks_on()
    # The fake core of the tests knows none of these keywords.
    extra: dict[str, Any] = {**({"trace": True} if trace else {}), **({"check": True} if check else {})}
    if warn is not None:
        extra["warn"] = warn
    with translated():
        raw: dict[str, Any] = core().run(text, path, seed=seed, pcap_dir=pcap_dir, progress=progress,
                                         series=series, **extra)
    # The engine hands the summary over as JSON, serialised from the schema's own types.
    raw["summary"] = json.loads(raw["summary"])
    raw["warnings"] = list(raw.get("warnings") or [])
    return raw


#: The environment variable that turns the run-time checks on in every run of the
#: process and of the workers it starts (``hetpath run --check`` and the test suite).
CHECK_ENV = "HETPATH_CHECK"


def checks_on() -> bool:
    """Whether ``HETPATH_CHECK`` asks for the run-time checks."""
    return os.environ.get(CHECK_ENV, "0") not in ("", "0")


def enable_checks() -> None:
    """Turn the run-time checks on for every later run of this process and its workers."""
    os.environ[CHECK_ENV] = "1"


def check_seed(seed: Any, where: str) -> Optional[int]:
    """A seed is a u64 (a Python or NumPy integer): anything else is an ``ArgumentError``
    here, not pyo3's ``OverflowError`` or ``TypeError``."""
    return None if seed is None else integer(seed, f"{where}: seed", 0, 2**64 - 1)


def validate_text(text: str, path: str) -> list[str]:
    """Check a scenario without running it; raises ``ScenarioError``. Returns its
    warnings (``FILE: KEY: message``), settings that run but probably not as meant."""
    with translated():
        warnings = core().validate(text, path)
    return [str(w) for w in warnings or []]


def cc_names() -> list[str]:
    """Congestion-control algorithms the engine knows, as accepted by ``cc =``."""
    with translated():
        return list(core().cc_names())


def profiles() -> list[tuple[str, str, Optional[str], str, list[tuple[str, str]]]]:
    """TCP profiles: (name, source, controller or None, keys as TOML, [(controller, keys
    that controller alone gets)])."""
    with translated():
        return [tuple(p) for p in core().profiles()]


def schema() -> dict[str, list[str]]:
    """The result schema, defined once in the engine (``hetpath_sim::results``): keys of
    ``summary``, ``flow`` and ``link`` records, columns of ``flow_series`` and
    ``link_series``, each in output order."""
    with translated():
        return {k: list(v) for k, v in core().schema().items()}


def build_commit() -> Optional[str]:
    """The git commit the engine was built from (``-dirty`` with local changes), or None."""
    with translated():
        commit = core().build_commit()
    return None if commit is None else str(commit)


def core_version() -> str:
    """Version string of the compiled engine."""
    with translated():
        return str(core().version())


#: Ctrl-C presses seen since the package was imported (by :func:`_on_sigint`).
interrupts = 0


def _on_sigint(signum: int, frame: Any) -> None:
    """Ctrl-C: stop every run in progress, whichever thread runs it, then do what Python
    does by default (``KeyboardInterrupt`` in the main thread). A run in another thread
    stops with its own ``KeyboardInterrupt``: Python runs signal handlers, and the engine's
    check of them raises, in the main thread only."""
    global interrupts
    interrupts += 1
    stop = getattr(sys.modules.get("hetpath._core"), "interrupt", None)
    if stop is not None:  # not loaded: nothing is running
        stop()
    signal.default_int_handler(signum, frame)


def install_interrupt_handler() -> None:
    """Put :func:`_on_sigint` in place of Python's default SIGINT handler, if that is the
    handler (one the program set itself is left alone) and this is the main thread (the
    only one that may set handlers): called when the package is imported."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


install_interrupt_handler()
