"""The index of every paper's claims (reproduce/index.py, `hetpath reproduce --all
--summary`): the quick runs give one verdict of the rule for every claim, the index
written from them reads back, and the committed docs/reproductions/README.md is in its
format."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import reproductions
from helpers import invoke

from hetpath import _toml
from hetpath.reproduce import index
from hetpath.reproduce.common import VERDICTS, load_paper

REPO = Path(__file__).resolve().parents[2]
README = REPO / "docs" / "reproductions" / "README.md"


def _claims(paper: str) -> int:
    path = REPO / "scenarios" / paper / "paper.toml"
    if paper == "lift":  # its own claims format, and the precision the paper asks of its runs
        return len(_toml.loads(path.read_text(), str(path))["value"]) + 1
    return len(load_paper(path))


@pytest.mark.parametrize("paper", [reproductions.param(p) for p in ("apohn", "ilc-tcp", "lift", "rappep",
                                                                     "tcp-radio")])
def test_the_quick_run_gives_a_verdict_for_every_claim(quick_reproduction, paper: str, tmp_path: Path) -> None:
    run = quick_reproduction(paper)
    assert run.exit_code == 0, run.stderr
    with (run.out / "comparison.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == _claims(paper)
    assert all(r["verdict"] in VERDICTS for r in rows)
    # Not testable always says why.
    assert all(r["reason"] for r in rows if r["verdict"] == "not testable")
    target = tmp_path / "README.md"
    target.write_text("# Reproductions\n\nThe rule, by hand.\n")
    index.write(target, {paper: rows}, quick=True)
    index.write(target, {paper: rows}, quick=True)  # again: in place, the hand-written text kept
    text = target.read_text()
    assert text.startswith("# Reproductions\n\nThe rule, by hand.\n") and text.count(index.BEGIN) == 1
    back = index.parse(text)
    assert [r["verdict"] for r in back] == [r["verdict"] for r in rows]
    assert f"{len(rows)} claims of 1 papers, from the quick runs" in text


def test_the_committed_index_is_in_the_format() -> None:
    text = README.read_text(encoding="utf-8")
    rows = index.parse(text)
    assert all(r["verdict"] in VERDICTS for r in rows)
    assert all(r["paper"] in ("apohn", "ilc-tcp", "lift", "rappep", "tcp-radio") for r in rows)
    for word in ("holds", "does not hold", "not testable", "95%", "20%"):
        assert word in text.split(index.BEGIN)[0], f"the verdict rule does not say {word!r}"


@reproductions.group("rappep")
def test_all_summary_writes_the_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from hetpath.commands import reproduce as command

    # One paper stands for all five here: the quick runs of the others are tested above.
    monkeypatch.setattr(command, "PAPERS", {"rappep": "rappep"})
    target = tmp_path / "README.md"
    result = invoke(["reproduce", "--all", "--summary", "--quick", "-q", "--out", str(tmp_path / "out"),
                     "--index", str(target)])
    assert result.exit_code == 0, result.stderr
    assert "claims of 1 papers, from the quick runs" in result.stdout
    rows = index.parse(target.read_text())
    assert len(rows) == _claims("rappep") and {r["paper"] for r in rows} == {"rappep"}
    assert (tmp_path / "out" / "rappep" / "comparison.csv").is_file()
    bad = invoke(["reproduce", "rappep", "--all", "--summary"])
    assert bad.exit_code == 2 and "not both" in bad.stderr
    bad = invoke(["reproduce", "--all"])
    assert bad.exit_code == 2 and "--summary" in bad.stderr


def test_the_committed_index_has_every_claim_of_every_paper() -> None:
    """A claim added to a paper.toml without the index written again would be missing."""
    rows = index.parse(README.read_text(encoding="utf-8"))
    for paper in ("apohn", "ilc-tcp", "lift", "rappep", "tcp-radio"):
        assert sum(r["paper"] == paper for r in rows) == _claims(paper), paper
