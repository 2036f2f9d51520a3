"""Every reproduction figure has its plotted series beside it as CSV (figure_data.py), and
every figure that shows a point the paper states a value for carries that value as a
paper series: read from the quick runs' CSVs, against the findings' attached values."""

from __future__ import annotations

import math
from typing import Any, Optional

import pytest
import reproductions

from hetpath.figure_data import COLUMNS, read


def _figures(paper: str, row: dict[str, Any]) -> list[str]:
    """The figures (file stems) that show the point of a finding that has a paper value."""
    exp, proto, params, metric = row["experiment"], row["protocol"], row["params"], row["metric"]
    if paper == "tcp-radio":
        if metric == "normalized_throughput":
            return [f"throughput_{exp}_{params['bandwidth']}"]
        return [f"gain_{exp}_{params['size']}"]
    if paper == "ilc-tcp":
        named = {"exp1": "table1_transfer_time", "exp2": "table2_transfer_time", "exp3": "table3_transfer_time",
                 "exp4": "fig09_improvement", "exp5": "fig10_improvement"}
        if exp in ("exp1", "exp2", "exp3"):  # Tables 1-3's figures show the transfer time only
            return [named[exp]] if metric == "transfer_time_s" else []
        if metric != "improvement_pct":  # the others' figures show the improvement only
            return []
        return [named[exp]] if exp in named else [f"table6-9_{params['ranges']}"]
    if paper == "apohn":
        if metric == "goodput_mbps":
            return ["fig8_goodput", "fig12_flows"]
        if metric == "change_vs_one" and proto != "newreno":  # NewReno's is a bound: no point to draw
            return ["fig12_flows"]
        if metric == "bridge_queue_median":
            return ["fig10_bridge_buffer", "fig10_bridge_buffer_hist"]
        return []  # timeouts and drops: no figure of the paper shows them as numbers
    if paper == "rappep":
        return [f"afct_{exp}"] if metric == "afct_s" else []
    return []


def _values(stated: Any) -> list[Any]:
    """A finding's paper values: a number, [lo, hi], an ordering's text, or a list of those."""
    if isinstance(stated, list) and any(isinstance(x, (list, str)) for x in stated):
        return stated
    if isinstance(stated, list) and len(stated) == 2 and all(isinstance(x, (int, float)) for x in stated):
        return [stated]
    return stated if isinstance(stated, list) else [stated]


def _has(rows: list[dict[str, str]], y: float) -> bool:
    def num(s: str) -> Optional[float]:
        return float(s) if s else None

    for r in rows:
        for col in ("y", "y_low", "y_high"):
            v = num(r[col])
            if v is not None and math.isclose(v, y, rel_tol=1e-9, abs_tol=1e-12):
                return True
    return False


@pytest.mark.parametrize("paper", [reproductions.param(p) for p in ("apohn", "ilc-tcp", "rappep", "tcp-radio")])
def test_every_figure_with_paper_values_carries_them(quick_reproduction, paper: str) -> None:
    run = quick_reproduction(paper)
    assert run.exit_code == 0, run.stderr
    pngs = sorted(p for p in run.out.glob("*.png"))
    assert pngs
    for png in pngs:
        assert png.with_suffix(".csv").is_file(), f"no data beside {png.name}"
        assert tuple(read(png.with_suffix(".csv"))[0]) == COLUMNS
    checked = 0
    for row in run.rows:
        # Orderings ("> newreno") are relations, not values: no point of the paper to draw.
        stated = [v for v in _values(row["paper"]) if not isinstance(v, str)] if row["paper"] is not None else []
        if not stated:
            continue
        for stem in _figures(paper, row):
            data = [r for r in read(run.out / f"{stem}.csv") if r["role"] == "paper"]
            assert data, f"{stem}: no paper series, though {row['protocol']} {row['params']} has one"
            if row["metric"] == "change_vs_one" or stem.endswith("_hist"):
                continue  # drawn as goodput at n flows (derived); the histogram's band is on x
            for v in stated:
                for y in (v if isinstance(v, list) else [v]):
                    assert _has(data, float(y)), f"{stem}: paper value {y} of {row['protocol']} {row['params']}"
            checked += 1
    assert checked > 0


@reproductions.group("lift")
def test_lift_figures_carry_the_ideal_page_time(quick_reproduction) -> None:
    run = quick_reproduction("lift")
    assert run.exit_code == 0, run.stderr
    for stem in ("fig6_page_time", "fig9_lift_vs_sctp"):
        data = [r for r in read(run.out / f"{stem}.csv") if r["role"] == "paper"]
        assert _has(data, 4.0), stem
