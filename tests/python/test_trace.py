"""The typed event trace: written by `run --trace`, read back by pandas, consistent with the
summary, and absent unless asked for."""

from __future__ import annotations

import json
from pathlib import Path

import hetpath
import pandas as pd
import pytest
from helpers import invoke, without_wall_time


@pytest.mark.parametrize("suffix", [".parquet", ".arrow", ".csv"])
def test_run_writes_a_trace_that_adds_up(tmp_path: Path, lossy_toml: Path, suffix: str) -> None:
    path = tmp_path / f"trace{suffix}"
    result = invoke(["run", str(lossy_toml), "--json", "--trace", str(path)])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    read = {".parquet": pd.read_parquet, ".arrow": pd.read_feather, ".csv": pd.read_csv}[suffix]
    trace = read(path)
    assert list(trace.columns) == ["time_s", "event", "node", "flow", "link", "value", "cwnd_bytes", "ssthresh_bytes"]
    for f in summary["flows"]:
        mine = trace[trace["flow"] == f["name"]]
        assert (mine["event"] == "tcp.rto").sum() == f["timeouts"]
        assert (mine["event"] == "tcp.fast_retransmit").sum() == f["fast_retransmits"]
        resent = mine["event"].isin(["tcp.retransmit.recovery", "tcp.retransmit.timeout"]).sum()
        assert resent == f["retransmissions"] > 0
    losses = trace["event"].isin(["link.channel_loss", "link.outage_loss"]).sum()
    assert losses == sum(ln["lost_packets"] for ln in summary["links"]) > 0
    assert (trace["event"] == "link.queue_drop").sum() == sum(ln["drops"] for ln in summary["links"])


def test_a_trace_changes_nothing_and_is_kept_only_when_asked(lossy_toml: Path) -> None:
    plain, traced = hetpath.run(lossy_toml), hetpath.run(lossy_toml, trace=True)
    assert without_wall_time(plain.summary) == without_wall_time(traced.summary)
    assert len(traced.trace) > 0
    with pytest.raises(ValueError, match="trace=True"):
        _ = plain.trace


def test_a_bad_trace_path_fails_before_the_run(tmp_path: Path, small_toml: Path) -> None:
    for bad, what in ((tmp_path / "t.xlsx", "unknown format"), (tmp_path / "no" / "t.parquet", "does not exist")):
        result = invoke(["run", str(small_toml), "--trace", str(bad)])
        assert result.exit_code == 2 and what in result.stderr, result.stderr
