"""Shared fixtures and the ``live`` marker.

Tests run against the real ``hetpath._core`` (installed by ``scripts/setup.sh --tests``).
The ``fake_core`` fixture swaps in :mod:`fake_core` for the few tests that are
about the Python layer itself (exception translation, interrupts, formatting)
and need the engine to misbehave on demand.

``@pytest.mark.live(why)`` marks a test that needs root, network namespaces, TUN and
``hetpath-live`` (``why``: the reason it cannot run here, or None). Such a test is
skipped with that reason, unless ``HETPATH_REQUIRE_LIVE=1`` (scripts/test.sh sets it
under CI where the machine can run them), where it fails instead: CI cannot pass
without having run the emulator and the PEP.

Live tests run one at a time (one xdist group), those marked ``timing`` (they assert on
rates, delays or loss rates measured in real time) in a group of their own, so a timing
test never runs beside another timing test or a live transfer. Beside the other
workers' simulations it runs at a higher CPU priority (``timing_priority``), with the
emulator and traffic it starts, as if the machine were idle.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

import pytest

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(Path(__file__).parent))

# Every run of the suite checks the engine's run-time invariants (docs/guide.md, "Run-time
# checks"), in this process and in the workers and CLI processes it starts, unless the
# environment already says otherwise (HETPATH_CHECK=0).
os.environ.setdefault("HETPATH_CHECK", "1")

from helpers import live_verdict  # noqa: E402 (the path above)
from reproductions import QuickRun, run_quick  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live(why): needs root, namespaces, TUN and hetpath-live; why it cannot "
                                       "run here, or None (conftest.py)")
    config.addinivalue_line("markers", "timing: a live test that asserts on rates or delays measured in real time")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """xdist groups (scripts/test.sh runs `--dist loadgroup`): live tests share one, or
    two with the timing ones (the header); a test with no group of its own gets its
    module's, so that a module-scoped fixture is made once, by the one worker that runs
    the module. The live groups go first: they are the longest (mostly waiting on real
    time), and scripts/test.sh keeps this order (`--no-loadscope-reorder`), so each
    worker starts with one and the other groups fill in around them."""
    for item in items:
        if item.get_closest_marker("live") is not None:
            timing = item.get_closest_marker("timing") is not None
            item.add_marker(pytest.mark.xdist_group("live-timing" if timing else "live"))
        elif item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
    items.sort(key=lambda item: item.get_closest_marker("live") is None)  # stable: the shuffled order stays


def pytest_runtest_setup(item: pytest.Item) -> None:
    why = next((m.args[0] for m in item.iter_markers("live") if m.args and m.args[0]), None)
    verdict = live_verdict(why, os.environ.get("HETPATH_REQUIRE_LIVE") == "1")
    if verdict == "fail":
        pytest.fail(f"a live test could not run: {why} (HETPATH_REQUIRE_LIVE=1: scripts/test.sh sets it under "
                    "CI on a machine that can create namespaces and TUN devices)", pytrace=False)
    if verdict == "skip":
        pytest.skip(why)


def _install_fake(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    import fake_core
    import hetpath

    fake = importlib.reload(fake_core)
    monkeypatch.delenv("HETPATH_CHECK", raising=False)  # the stand-in checks nothing
    monkeypatch.setitem(sys.modules, "hetpath._core", fake)
    monkeypatch.setattr(hetpath, "_core", fake, raising=False)
    return fake


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """Replace ``hetpath._core`` with the pure-Python stand-in for one test."""
    yield _install_fake(monkeypatch)


@pytest.fixture(autouse=True)
def timing_priority(request: pytest.FixtureRequest) -> Iterator[None]:
    """A ``timing`` test runs at nice -10 (as root), and so do the processes it starts,
    which inherit it: the simulations on the other xdist workers, at nice 0, then take
    the cores only when the emulator and its traffic leave them."""
    if request.node.get_closest_marker("timing") is None or os.geteuid() != 0:
        yield
        return
    before = os.getpriority(os.PRIO_PROCESS, 0)
    os.setpriority(os.PRIO_PROCESS, 0, -10)
    try:
        yield
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)


@pytest.fixture(scope="session")
def quick_reproduction(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], QuickRun]:
    """``quick_reproduction(paper)``: the session's one quick run of ``paper``
    (reproductions.py)."""
    runs: dict[str, QuickRun] = {}

    def get(paper: str) -> QuickRun:
        if paper not in runs:
            runs[paper] = run_quick(paper, tmp_path_factory.mktemp(f"quick-{paper}"))
        return runs[paper]

    return get


@pytest.fixture
def small_toml() -> Path:
    return DATA / "small.toml"


@pytest.fixture
def lossy_toml() -> Path:
    return DATA / "lossy.toml"

