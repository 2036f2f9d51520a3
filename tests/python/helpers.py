"""Small helpers shared by test modules."""

from __future__ import annotations

import inspect
from typing import Any, Sequence

from click.testing import CliRunner, Result
from hetpath.cli import main

FLOW_KEYS = {
    "name", "cc", "from", "to", "start_s", "size_bytes", "bytes_delivered", "goodput_bps",
    "completion_s", "retransmissions", "timeouts", "aborted",
}
LINK_KEYS = {
    "name", "from", "to", "rate_bps", "utilization", "drops", "max_queue_pkts", "tx_packets",
    "lost_packets",
}
SUMMARY_KEYS = {"scenario", "seed", "sim_time_s", "wall_time_s", "events", "flows", "links"}
FLOW_SERIES_COLS = [
    "time_s", "flow", "cwnd_bytes", "ssthresh_bytes", "srtt_s", "rto_s", "in_flight_bytes",
    "bytes_delivered",
]
LINK_SERIES_COLS = ["time_s", "link", "from", "to", "queue_pkts", "queue_bytes", "tx_bytes"]


def _runner() -> CliRunner:
    # click >= 8.2 always captures stderr separately; 8.1 (Python 3.9) needs asking.
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    return CliRunner()


def invoke(args: Sequence[str], **kw: Any) -> Result:
    """Run the CLI in-process with stdout and stderr captured separately."""
    return _runner().invoke(main, list(args), catch_exceptions=False, **kw)


def without_wall_time(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary minus the one key that legitimately differs between identical runs."""
    return {k: v for k, v in summary.items() if k != "wall_time_s"}
