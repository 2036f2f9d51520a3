"""The one verdict rule every reproduction's claims go through (reproduce/common.py,
docs/reproductions/README.md): numbers within the paper's error or ±20%, bounds and
orderings by separated 95% CIs, "not testable" with a reason; every claim can fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetpath.errors import ScenarioError
from hetpath.reproduce import rappep
from hetpath.reproduce.common import (FAILS, HOLDS, UNTESTABLE, Estimate, Finding, PaperValue, attach, bound,
                                      comparison_rows, load_paper, number, ordering, within)

REPO = Path(__file__).resolve().parents[2]
E = Estimate


def test_a_number_holds_within_twenty_percent_or_the_stated_error() -> None:
    assert number([E(6.0)], 5.2).verdict == HOLDS
    assert number([E(6.3)], 5.2).verdict == FAILS
    assert number([E(6.0)], 5.2, tolerance=0.1).verdict == FAILS  # ... but not the paper's ±10%
    v = number([E(4.88)], 5.2)
    assert v.ratio == pytest.approx(4.88 / 5.2)
    assert number([E(None)], 5.2).verdict == UNTESTABLE


def test_a_bound_needs_the_whole_ci_on_its_side() -> None:
    assert bound([E(3.0, 0.5)], ">", 1).verdict == HOLDS
    assert bound([E(3.0, 2.5)], ">", 1).verdict == FAILS  # the mean is above, the CI is not
    v = bound([E(3.0, None)], ">", 1)  # one run: no CI
    assert v.verdict == UNTESTABLE and "confidence interval" in v.reason
    assert within([E(4.0)], 5, 7).verdict == FAILS and within([E(6.0)], 5, 7).verdict == HOLDS


def test_an_ordering_holds_only_where_the_cis_separate_at_every_point() -> None:
    a, b = [E(10, 1), E(10, 1)], [E(13, 1), E(11.5, 1)]
    v = ordering(a, b, "<")
    assert v.verdict == FAILS and "1 of 2 points" in v.reason  # 11 and 10.5 overlap
    assert ordering(a[:1], b[:1], "<").verdict == HOLDS
    assert ordering(a[:1], b[:1], ">").verdict == FAILS
    assert ordering([E(10, 1)], [E(None)], "<").verdict == UNTESTABLE


def test_a_claim_against_another_protocol_reads_both_at_the_same_point(tmp_path: Path) -> None:
    (tmp_path / "paper.toml").write_text(
        '[[value]]\nexperiment = "e"\nprotocol = "a"\nagainst = "b"\nrelation = "<"\nmetric = "t"\nx = "1..2"\n'
        'section = "IV"\nquote = "a is faster"\ngap = "our link is slower"\n')
    paper = load_paper(tmp_path / "paper.toml")
    found = [Finding("e", p, {"x": x}, "t", m, 0.5, 3, 0)
             for p, x, m in (("a", "1", 1.0), ("b", "1", 3.0), ("a", "2", 2.0), ("b", "2", 2.2))]
    attach(found, paper, {"x": ["1", "2"]})
    (row,) = comparison_rows(found, paper)
    assert row["verdict"] == FAILS and row["paper"] == "< b"
    assert "not separate" in row["reason"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[value]]\nexperiment = "e"\nprotocol = "a"\nagainst = "b"\nrelation = "="\nmetric = "t"\n')
    with pytest.raises(ScenarioError, match="relation"):
        load_paper(bad)


def test_rappep_fig9_is_not_testable_when_the_pep_took_every_file() -> None:
    scenarios = REPO / "scenarios" / "rappep"
    paper = [p for p in load_paper(scenarios / "paper.toml") if p.metric == "sender_done_s"]
    assert paper
    params = {"loss": 0.0, "side_delay_max_ms": 0.0}
    for done, want in ((0.042, UNTESTABLE), (4.0, HOLDS), (7.0, FAILS)):
        found = [Finding("loss0", p.protocol, params, "sender_done_s", done, 0.1, 3, 0) for p in paper]
        attach(found, paper, rappep.label_order(None))
        rows = comparison_rows(found, paper, rappep.testable, scenarios)
        assert {r["verdict"] for r in rows} == {want}, done
        if want == UNTESTABLE:
            assert "buffer" in rows[0]["reason"]


def test_every_value_of_every_paper_loads() -> None:
    for paper in ("apohn", "ilc-tcp", "rappep", "tcp-radio"):
        values = load_paper(REPO / "scenarios" / paper / "paper.toml")
        assert values and all(isinstance(v, PaperValue) and v.quote for v in values), paper


def test_close_to_another_protocol_is_a_number_whose_value_is_theirs() -> None:
    from hetpath.reproduce.common import close_to

    assert close_to([E(0.52, 0.01)], [E(0.60, 0.01)]).verdict == HOLDS  # 13% below
    v = close_to([E(0.40, 0.01), E(0.52, 0.01)], [E(0.60, 0.01), E(0.60, 0.01)])
    assert v.verdict == FAILS and "1 of 2 points" in v.reason
    assert close_to([E(0.5)], [E(None)]).verdict == UNTESTABLE


def test_a_claim_against_another_experiment_reads_the_same_protocol_there(tmp_path: Path) -> None:
    """``than = { experiment = ... }``: "it takes all protocols a longer time with loss"."""
    (tmp_path / "paper.toml").write_text(
        '[[value]]\nexperiment = "lossy"\nprotocol = "a"\nrelation = ">"\nmetric = "t"\n'
        'than = { experiment = "clean" }\nsection = "IV"\nquote = "longer with loss"\n')
    paper = load_paper(tmp_path / "paper.toml")
    for lossy, want in ((20.0, HOLDS), (10.5, FAILS)):
        # Each experiment has its own parameters (RAPPEP's loss rate), not the other's.
        found = [Finding("clean", "a", {"loss": 0.0}, "t", 10.0, 1.0, 3, 0),
                 Finding("lossy", "a", {"loss": 0.01}, "t", lossy, 1.0, 3, 0)]
        attach(found, paper, {})
        (row,) = comparison_rows(found, paper)
        assert row["verdict"] == want and row["paper"] == "> a at experiment=clean", lossy


def test_rappep_oscillation_claims_are_not_testable_with_their_reason() -> None:
    scenarios = REPO / "scenarios" / "rappep"
    paper = [p for p in load_paper(scenarios / "paper.toml") if p.metric == rappep.OSCILLATION]
    assert paper
    rows = comparison_rows([], paper, rappep.testable, scenarios)
    assert all(r["verdict"] == UNTESTABLE and "no measure of oscillation" in r["reason"] for r in rows)
