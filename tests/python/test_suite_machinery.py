"""The suite's own machinery works as scripts/test.sh relies on it (conftest.py)."""

from __future__ import annotations

import pytest
from helpers import live_verdict


def test_xdist_groups_take_effect(request: pytest.FixtureRequest) -> None:
    """Under `--dist loadgroup`, a group stays on one worker because xdist suffixes each
    test's node id with its group. Where pytest ignores the suffix (pytest 9.2,
    pytest-dev/pytest-xdist#1386), groups silently stop and live tests run side by side."""
    if not hasattr(request.config, "workerinput") or not request.config.getvalue("loadgroup"):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@test_suite_machinery"), request.node.nodeid


def test_a_live_test_that_cannot_run_skips_or_fails_when_required() -> None:
    assert [live_verdict(None, False), live_verdict(None, True)] == ["run", "run"]
    assert live_verdict("needs root", False) == "skip"
    assert live_verdict("needs root", True) == "fail"
