"""The router models against their own papers (`hetpath reproduce rappep`'s
validation.csv; docs/reproductions/rappep.md, first section): every scenario is run and
the XCP, VCP and MPCP-convergence claims hold."""

from __future__ import annotations

from pathlib import Path

from hetpath.reproduce import rappep_validation

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "rappep"


def test_the_router_models_meet_their_papers_claims() -> None:
    table, verdicts = rappep_validation.validate(SCENARIOS)
    assert set(table["scenario"]) == {"xcp-geo", "xcp-flows", "vcp-dumbbell", "mpcp-geo", "vcp-geo"}
    assert (table["drops"] == 0).all(), table
    assert len(verdicts) == len(rappep_validation.CLAIMS)
    failing = [claim for claim, holds in verdicts if not holds]
    # The stand-in MPCP law's unfairness is known and reported; everything else holds.
    assert set(failing) <= {"MPCP abstract: without VCP's biased fairness on a high-delay path"}, failing
