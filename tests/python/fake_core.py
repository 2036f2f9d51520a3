"""A minimal pure-Python stand-in for ``hetpath._core``, for tests of the Python layer only.

It mimics the contract's shapes (arguments, exception classes, progress calls,
pcap files, summary and series keys) with made-up numbers and can be told to
fail (``fail_with``), so tests can check what the package does around the
engine: exception translation, interrupts, directory handling.  Anything about
the simulator's behaviour is tested against the real extension.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ScenarioError(ValueError):
    pass


class SimulationError(RuntimeError):
    pass


#: Set by a test to make the next ``run`` raise this after its progress calls.
fail_with: Optional[BaseException] = None


def version() -> str:
    return "0.0.0+fake"


def cc_names() -> list[str]:
    return ["newreno", "cubic"]


def profiles() -> list[tuple[str, str, Optional[str], str]]:
    return [("tcp-radio", "seed 003 Table 3", "tcp-radio", 'iw = "bdp"\ndupthresh = 1\n')]


def _load(text: str, path: str) -> dict[str, Any]:
    name = Path(path).name
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{name}: {exc}") from None
    head = data.get("scenario", {})
    for key in ("name", "duration"):
        if key not in head:
            raise ScenarioError(f"{name}: missing field `{key}`")
    if not str(head["duration"]).endswith("s"):
        raise ScenarioError(f"{name}: duration: only seconds in the fake")
    data["_duration_s"] = float(str(head["duration"]).rstrip("s"))
    return data


def validate(text: str, path: str) -> None:
    _load(text, path)


def run(
    text: str,
    path: str,
    seed: Optional[int] = None,
    pcap_dir: Optional[str] = None,
    progress: Optional[Callable[[float, float], None]] = None,
    series: bool = True,
) -> dict[str, Any]:
    data = _load(text, path)
    end = data["_duration_s"]
    if progress is not None:
        for i in range(1, 101):
            progress(end * i / 100, end)
    if fail_with is not None:
        raise fail_with
    flows = [
        {"name": f["name"], "cc": f.get("cc", "newreno"), "from": f["from"], "to": f["to"],
         "start_s": 0.0, "size_bytes": None, "bytes_delivered": 1000, "goodput_bps": 8000.0 / end,
         "completion_s": None, "retransmissions": 0, "timeouts": 0, "aborted": False}
        for f in data.get("flow", [])
    ]
    links = []
    for ln in data.get("link", []):
        for src, dst in ((ln["a"], ln["b"]), (ln["b"], ln["a"])):
            links.append({"name": ln["name"], "from": src, "to": dst, "rate_bps": 1e6,
                          "utilization": 0.5, "drops": 0, "max_queue_pkts": 1, "tx_packets": 1,
                          "lost_packets": 0})
            if pcap_dir is not None:
                (Path(pcap_dir) / f"{ln['name']}_{src}-{dst}.pcap").write_bytes(b"\xd4\xc3\xb2\xa1")
    seed = data["scenario"].get("seed", 1) if seed is None else seed
    summary = {"scenario": data["scenario"]["name"], "seed": seed, "sim_time_s": end,
               "wall_time_s": 0.001, "events": 1, "flows": flows, "links": links}
    series = {
        "flows": {c: [] for c in ("time_s", "flow", "cwnd_bytes", "ssthresh_bytes", "srtt_s", "rto_s",
                                  "in_flight_bytes", "bytes_delivered")},
        "links": {c: [] for c in ("time_s", "link", "from", "to", "queue_pkts", "queue_bytes", "tx_bytes")},
    }
    return {"summary": summary, "series": series}
