"""Same seed, same result (bar wall time); different seeds, different random losses."""

from __future__ import annotations

from pathlib import Path

import hetpath
from helpers import without_wall_time


def test_same_seed_identical(lossy_toml: Path) -> None:
    a = hetpath.run(lossy_toml, seed=11)
    b = hetpath.run(lossy_toml, seed=11)
    assert without_wall_time(a.summary) == without_wall_time(b.summary)
    assert a.flow_series.equals(b.flow_series)
    assert a.link_series.equals(b.link_series)


def test_scenario_seed_is_default(lossy_toml: Path) -> None:
    assert hetpath.run(lossy_toml).seed == 7


def test_different_seeds_differ(lossy_toml: Path) -> None:
    def losses(seed: int) -> tuple:
        s = hetpath.run(lossy_toml, seed=seed).summary
        return (
            tuple(ln["lost_packets"] for ln in s["links"]),
            tuple(f["retransmissions"] for f in s["flows"]),
        )

    runs = {seed: losses(seed) for seed in (1, 2, 3)}
    assert all(sum(lost) > 0 for lost, _ in runs.values()), runs
    assert len(set(runs.values())) > 1, runs
