"""Shared fixtures.

Tests run against the real ``hetpath._core`` (installed by scripts/setup.sh).
The ``fake_core`` fixture swaps in :mod:`fake_core` for the few tests that are
about the Python layer itself (exception translation, interrupts, formatting)
and need the engine to misbehave on demand.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(Path(__file__).parent))


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


@pytest.fixture
def small_toml() -> Path:
    return DATA / "small.toml"


@pytest.fixture
def lossy_toml() -> Path:
    return DATA / "lossy.toml"

