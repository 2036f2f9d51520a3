"""bench/sim_vs_kernel.py: its statistics (burst grouping, confidence intervals, the
agreement rule), and its short version live: two rows (Bernoulli and Gilbert-Elliott
loss, CUBIC), three seeds of 1 MB each on both faces.

The live test is bounded (each emulated transfer may take 60 s; the whole took 8 s on
this machine) and cleans up after itself (`live.Emulation` deletes its
namespaces even when a transfer fails). Three seeds cannot decide agreement (the full
table needs ten and more, docs/validation.md); it checks that both faces ran, count
every channel loss once, and land within a factor of two of each other.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from helpers import live_unavailable

BENCH = Path(__file__).parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import sim_vs_kernel as svk  # noqa: E402 (the path above)

SKIP = live_unavailable("hp-probe-svk")


def test_bursts_group_losses_no_more_than_one_and_a_half_packets_apart() -> None:
    packet = 1500 * 8 / 10e6  # 1.2 ms at 10 Mbit/s
    times = [0.0, packet, 2 * packet, 10 * packet, 20 * packet, 20 * packet + 1.4 * packet]
    assert svk.bursts(times, 10e6) == [3, 1, 2]
    assert svk.bursts([], 10e6) == []
    assert svk.bursts([5.0, 1.0], 10e6) == [1, 1]  # sorted first


def test_confidence_interval_uses_student_t() -> None:
    mean, half = svk.ci([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert half == pytest.approx(4.303 * 1.0 / 3**0.5)
    assert svk.ci([7.0]) == (7.0, 0.0)


def _run(goodput: float, loss: float, burst: float) -> dict:
    return {"goodput_bps": goodput, "retransmissions": 1, "timeouts": 0, "loss_rate": loss, "mean_burst": burst, "queue_drops": 0}


def test_a_row_agrees_only_within_ten_percent_with_overlapping_intervals() -> None:
    sim = [_run(g, 0.01, 2.0) for g in (5.0, 5.2, 5.4)]
    assert svk.verdict(sim, [_run(g, 0.01, 2.0) for g in (5.1, 5.3, 5.5)])["agrees"]
    far = svk.verdict(sim, [_run(g, 0.01, 2.0) for g in (6.5, 6.6, 6.7)])
    assert not far["agrees"] and far["missed"] == ["goodput"]
    bursty = svk.verdict(sim, [_run(g, 0.01, b) for g, b in ((5.1, 6.0), (5.3, 6.1), (5.5, 6.2))])
    assert bursty["missed"] == ["bursts"]


def test_an_interval_without_spread_is_compared_at_one_percent() -> None:
    assert svk.overlap((8.860, 0.0), (8.867, 0.0))  # a deterministic face, 0.08% apart
    assert not svk.overlap((4.55, 0.0), (4.70, 0.0))  # 3.3% apart
    assert svk.overlap((0.0, 0.0), (0.0, 0.0))  # no loss on either face


@pytest.mark.live(SKIP and f"live mode unavailable: {SKIP}")
@pytest.mark.timing
def test_short_differential_rows_run_on_both_faces_and_count_every_loss() -> None:
    base = svk._toml.loads(svk.SCENARIO.read_text(), str(svk.SCENARIO))
    size = 1_000_000
    with tempfile.TemporaryDirectory(prefix="hp-test-svk-") as tmp:
        work = Path(tmp)
        for ch, cc, level in svk.QUICK:
            scenario = svk.prepared(work, base, svk.CHANNELS[ch][level], cc, size, f"{ch}-{cc}")
            sim = [svk.simulated(scenario, seed, "hop") for seed in (1, 2, 3)]
            emu = [svk.emulated(work, scenario, "hop", seed, size, cc, 60.0) for seed in (1, 2, 3)]
            for r in sim + emu:
                assert r["complete"], (ch, r)
                assert len(r["loss_times"]) == r["channel_lost"], (ch, r)
                assert sum(svk.bursts(r["loss_times"], 10e6)) == r["channel_lost"]
            row = svk.verdict(sim, emu)
            assert 0.5 < row["ratio"] < 2.0, (ch, row)
