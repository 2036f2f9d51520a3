"""``hetpath emulate`` as a user runs it: its files land in ``--out`` through a staging
directory (hetpath.outdir), with ``hetpath run``'s link series beside the core's own
files, and bad input is a one-line error with exit 2 that leaves nothing behind.
Namespace tests skip with the reason where root, TUN or the binary are missing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hetpath import live
from helpers import FLOW_SERIES_COLS, LINK_SERIES_COLS, live_unavailable

# The live benches' traffic tool (Python sockets, run inside a namespace).
PROBE = str(Path(__file__).parents[2] / "bench" / "live_traffic.py")


SKIP = live_unavailable("hp-probe-emulate-cli")
pytestmark = pytest.mark.live(SKIP and f"live mode unavailable: {SKIP}")


def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "cli.toml"
    p.write_text("""[scenario]
name = "cli"
duration = "60s"
sample_interval = "200ms"
[[node]]
name = "gw"
[[node]]
name = "t"
[[link]]
name = "sat"
a = "gw"
b = "t"
rate = "10Mbps"
delay = "10ms"
""")
    return p


def emulate(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hetpath", "emulate", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_the_files_are_moved_into_out_with_the_link_series(tmp_path: Path) -> None:
    out = tmp_path / "out"
    sc = scenario(tmp_path)
    # Ping the far side (python sockets, no tools) long enough for several samples.
    res = emulate(str(sc), "--link", "sat", "--out", str(out), "--",
                  sys.executable, PROBE, "ping", live.ADDR_B, "8", "0.15")
    assert res.returncode == 0, res.stderr
    names = {p.name for p in out.iterdir()}
    assert {"summary.json", "fates.csv", "loss-ab.trace", "loss-ba.trace", "link_series.csv"} <= names
    assert not (tmp_path / ".out.partial").exists(), "the staging directory is gone"
    import pandas as pd

    series = pd.read_csv(out / "link_series.csv")
    assert list(series.columns) == LINK_SERIES_COLS
    assert set(zip(series["from"], series["to"])) == {("gw", "t"), ("t", "gw")}
    assert len(series) >= 2 * 5, "200 ms samples over at least a second"
    if (out / "link_series.parquet").exists():
        pq = pd.read_parquet(out / "link_series.parquet")
        assert list(pq.columns) == LINK_SERIES_COLS and pq["time_s"].dtype == "float64"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["links"][0]["tx_packets"] >= 8
    assert int(series[series["from"] == "gw"]["tx_bytes"].iloc[-1]) <= summary["links"][0]["tx_bytes"]

    # A second run replaces the first's files, and leaves a user's file alone.
    (out / "notes.txt").write_text("mine")
    res = emulate(str(sc), "--link", "sat", "--out", str(out), "--no-pcap", "--", "true")
    assert res.returncode == 0, res.stderr
    assert (out / "notes.txt").read_text() == "mine"
    assert not any(p.suffix == ".pcap" for p in out.iterdir()), "the first run's captures were removed"


@pytest.mark.timing
def test_the_kernel_connection_gets_the_simulators_flow_series(tmp_path: Path) -> None:
    """flow_series.csv: the kernel's tcp_info of the one TCP sender (side a), sampled on
    the link series' schedule; the receiver, which sends no data, has no rows."""
    import pandas as pd

    out = tmp_path / "out"
    sink = f"{sys.executable} {PROBE} rate-sink 5001 8 0.5"
    res = emulate(str(scenario(tmp_path)), "--link", "sat", "--out", str(out), "--no-pcap", "--b", sink, "--",
                  sys.executable, PROBE, "blast", live.ADDR_B, "5001", "2.5")
    assert res.returncode == 0, res.stderr
    flows = pd.read_csv(out / "flow_series.csv")
    assert list(flows.columns) == FLOW_SERIES_COLS
    names = set(flows["flow"])
    assert len(names) == 1 and next(iter(names)).startswith(f"{live.ADDR_A}:"), names
    assert next(iter(names)).endswith(f"->{live.ADDR_B}:5001")
    assert len(flows) >= 8, "200 ms samples over 2.5 s of sending"
    assert (flows["leg"] == 0).all() and (flows["cwnd_bytes"] > 0).all()
    # The RTT: twice the 10 ms delay, plus what the 100-packet queue held (1.2 ms each)
    # and up to 10 ms of this machine's scheduling (a wrong unit would be off by 10^3).
    srtt = flows["srtt_s"].median()
    assert 0.020 <= srtt <= 0.020 + 100 * 0.0012 + 0.010, srtt
    assert flows["bytes_delivered"].is_monotonic_increasing
    # What the peer acknowledged grew as the link carried it (IP bytes: 1500 per MSS
    # of payload; ACKs lag by an RTT), between the first and last sample.
    links = pd.read_csv(out / "link_series.csv")
    sent = links[links["from"] == "gw"].set_index("time_s")["tx_bytes"]
    first, last = flows.iloc[0], flows.iloc[-1]
    carried = (sent[last["time_s"]] - sent[first["time_s"]]) * 1448 / 1500
    acked = last["bytes_delivered"] - first["bytes_delivered"]
    assert abs(acked - carried) <= 0.1 * carried, (acked, carried)
    if (out / "flow_series.parquet").exists():
        pq = pd.read_parquet(out / "flow_series.parquet")
        assert list(pq.columns) == FLOW_SERIES_COLS and pq["ssthresh_bytes"].dtype == "float64"


def test_an_unknown_link_is_one_line_exit_2_and_leaves_no_staging(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = emulate(str(scenario(tmp_path)), "--link", "nope", "--out", str(out), "--", "true")
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert "cli.toml: link: no link named 'nope'; links: sat" in res.stderr
    assert not (tmp_path / ".out.partial").exists()
    assert not out.exists() or not any(out.iterdir())


def test_a_failing_command_keeps_the_files_and_its_status(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = emulate(str(scenario(tmp_path)), "--link", "sat", "--out", str(out), "--no-pcap", "--", "sh", "-c", "exit 3")
    assert res.returncode == 3
    assert "exited with status 3" in res.stderr
    assert (out / "summary.json").is_file() and (out / "link_series.csv").is_file()
