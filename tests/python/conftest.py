"""Shared fixtures and the ``live`` marker.

Tests run against the real ``hetpath._core`` (installed by ``scripts/setup.sh --tests``).
The ``fake_core`` fixture swaps in :mod:`fake_core` for the few tests that are
about the Python layer itself (exception translation, interrupts, formatting)
and need the engine to misbehave on demand.

``@pytest.mark.live(why)`` marks a test that needs root, network namespaces, TUN and
``hetpath-live`` (``why``: the reason it cannot run here, or None). Such a test is
skipped with that reason, unless ``HETPATH_REQUIRE_LIVE=1`` (scripts/test.sh sets it
under CI where the machine can run them), where it fails instead: CI cannot pass
without having run the emulator and the PEP. Live tests share one xdist group, so they
run one at a time: their assertions on rates and delays need the emulator undisturbed
by another live test.
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

from helpers import live_verdict  # noqa: E402 (the path above)
from reproductions import QuickRun, run_quick  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live(why): needs root, namespaces, TUN and hetpath-live; why it cannot "
                                       "run here, or None (conftest.py)")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """xdist groups (scripts/test.sh runs `--dist loadgroup`): live tests share one;
    a test with no group of its own gets its module's, so that a module-scoped fixture is
    made once, by the one worker that runs the module."""
    for item in items:
        if item.get_closest_marker("live") is not None:
            item.add_marker(pytest.mark.xdist_group("live"))
        elif item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))


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
    monkeypatch.setitem(sys.modules, "hetpath._core", fake)
    monkeypatch.setattr(hetpath, "_core", fake, raising=False)
    return fake


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """Replace ``hetpath._core`` with the pure-Python stand-in for one test."""
    yield _install_fake(monkeypatch)


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

