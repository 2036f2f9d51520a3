"""A minimal pure-Python stand-in for ``hetpath._core``, for tests of the Python layer only.

It mimics the contract's shapes (arguments, exception classes, progress calls,
pcap files, summary and series keys) with made-up numbers and can be told to
fail (``fail_with``), so tests can check what the package does around the
engine: exception translation, interrupts, directory handling.  Anything about
the simulator's behaviour is tested against the real extension.
"""

from __future__ import annotations

import importlib
import json
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


# The real engine's schema, read before this module stands in for it, so the fake's
# records have exactly the real keys.
_SCHEMA: dict[str, list[str]] = {k: list(v) for k, v in importlib.import_module("hetpath._core").schema().items()}


def schema() -> dict[str, list[str]]:
    return _SCHEMA


def _record(kind: str, **known: Any) -> dict[str, Any]:
    """A record with every key of the schema: the given values, 0 for the rest."""
    return {k: known.get(k, 0) for k in _SCHEMA[kind]}


#: Set by a test to make the next ``run`` raise this after its progress calls.
fail_with: Optional[BaseException] = None


def version() -> str:
    return "0.0.0+fake"


def build_commit() -> Optional[str]:
    return None


def cc_names() -> list[str]:
    return ["newreno", "cubic"]


def profiles() -> list[tuple[str, str, Optional[str], str, list[tuple[str, str]]]]:
    return [("tcp-radio", "seed 003 Table 3", "tcp-radio", 'iw = "bdp"\ndupthresh = 1\n', [])]


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
    warn: Optional[Callable[[str], None]] = None,
) -> dict[str, Any]:
    data = _load(text, path)
    end = data["_duration_s"]
    if progress is not None:
        for i in range(1, 101):
            progress(end * i / 100, end)
    if fail_with is not None:
        raise fail_with
    flows = [
        _record("flow", name=f["name"], cc=f.get("cc", "newreno"), **{"from": f["from"], "to": f["to"]},
                start_s=0.0, size_bytes=None, bytes_delivered=1000, goodput_bps=8000.0 / end,
                completion_s=None, sender_done_s=None, aborted=False)
        for f in data.get("flow", [])
    ]
    links = []
    for ln in data.get("link", []):
        for src, dst in ((ln["a"], ln["b"]), (ln["b"], ln["a"])):
            links.append(_record("link", name=ln["name"], **{"from": src, "to": dst}, rate_bps=1_000_000,
                                 utilization=0.5, max_queue_pkts=1, tx_packets=1))
            if pcap_dir is not None:
                (Path(pcap_dir) / f"{len(links) - 1:02}_{ln['name']}_{src}-{dst}.pcap").write_bytes(
                    b"\xd4\xc3\xb2\xa1")
    seed = data["scenario"].get("seed", 1) if seed is None else seed
    legs = [_record("leg", flow=f["name"], **{"from": f["from"], "to": f["to"]}, cc=f["cc"], bottleneck=True,
                    srtt_s=None) for f in flows]
    summary = _record("summary", scenario=data["scenario"]["name"], seed=seed, sim_time_s=end,
                      wall_time_s=0.001, events=1, flows=flows, pages=[], links=links, nodes=[], legs=legs, machines=[])
    series = {
        "flows": {c: [] for c in _SCHEMA["flow_series"]},
        "links": {c: [] for c in _SCHEMA["link_series"]},
    }
    return {"summary": json.dumps(summary), "series": series}
