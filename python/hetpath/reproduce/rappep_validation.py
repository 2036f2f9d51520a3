"""The router models against their own papers, before RAPPEP's comparison
(docs/reproductions/rappep.md, first section): the runs of
``scenarios/rappep/validation/`` and the claim each checks, from the XCP, VCP and MPCP
abstracts (their full texts could not be read).  ``hetpath reproduce rappep`` writes the
table as ``validation.csv`` and notes each claim that does not hold; the test suite runs
the same topologies in short form (crates/hetpath-sim/tests/it/router_validation.rs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ..runner import run_text

#: The bottleneck direction every validation scenario watches.
LINK, FROM = "bn", "r"


def measure(path: Path) -> dict[str, Any]:
    """Utilisation, drops, queue, retransmissions and Jain's index over the second half
    of the run, and the first second (from 1 s) in which the bottleneck is 80% busy."""
    result = run_text(path.read_text(encoding="utf-8"), str(path), seed=1)
    link = next(x for x in result.summary["links"] if (x["name"], x["from"]) == (LINK, FROM))
    ls = result.link_series
    tx = ls[(ls["link"] == LINK) & (ls["from"] == FROM)].set_index("time_s")["tx_bytes"]
    end = float(tx.index.max())
    half = float(tx.index[tx.index >= end / 2].min())
    rate = float(link["rate_bps"])

    def util(t0: float, t1: float) -> float:
        return float((tx.loc[t1] - tx.loc[t0]) * 8 / (t1 - t0) / rate)

    fs = result.flow_series
    fs = fs[fs["leg"] == 0]
    goodputs = [float((g.set_index("time_s")["bytes_delivered"].loc[end]
                       - g.set_index("time_s")["bytes_delivered"].loc[half]) * 8 / (end - half))
                for _, g in fs.groupby("flow")]
    square_sum = sum(x * x for x in goodputs)
    queue = ls[(ls["link"] == LINK) & (ls["from"] == FROM) & (ls["time_s"] >= half)]["queue_pkts"]
    busy = [t for t in tx.index if 1.0 <= t <= end - 1.0 and util(t, t + 1.0) > 0.8]
    return {
        "scenario": path.stem,
        "utilization": util(half, end),
        "drops": int(link["drops"]),
        "max_queue_pkts": int(link["max_queue_pkts"]),
        "mean_queue_pkts": float(queue.mean()),
        "retransmissions": int(sum(f["retransmissions"] for f in result.summary["flows"])),
        "jain": sum(goodputs) ** 2 / (len(goodputs) * square_sum) if square_sum > 0 else float("nan"),
        "busy_80_from_s": min(busy) if busy else float("nan"),
    }


Row = dict[str, Any]
#: (claim and its source, scenarios it reads, whether it holds on their rows).
CLAIMS: list[tuple[str, tuple[str, ...], Callable[[list[Row]], bool]]] = [
    ("XCP abstract: high utilisation, small standing queue, near-zero drops (800 ms RTT)",
     ("xcp-geo",), lambda r: r[0]["utilization"] > 0.9 and r[0]["drops"] == 0
     and r[0]["max_queue_pkts"] < 667),
    ("XCP abstract: fair allocation (800 ms RTT)", ("xcp-geo",), lambda r: r[0]["jain"] > 0.9),
    ("XCP abstract: scalable: 40 flows as well (80 ms RTT)", ("xcp-flows",),
     lambda r: r[0]["utilization"] > 0.9 and r[0]["drops"] == 0 and r[0]["jain"] > 0.9),
    ("VCP abstract: high utilisation, low persistent queue, negligible loss", ("vcp-dumbbell",),
     lambda r: r[0]["utilization"] > 0.8 and r[0]["drops"] == 0 and r[0]["mean_queue_pkts"] < 67),
    ("MPCP abstract: converges faster than VCP on a high-delay path", ("mpcp-geo", "vcp-geo"),
     lambda r: r[0]["busy_80_from_s"] < r[1]["busy_80_from_s"] and r[0]["drops"] == 0),
    ("MPCP abstract: without VCP's biased fairness on a high-delay path", ("mpcp-geo", "vcp-geo"),
     lambda r: r[0]["jain"] >= r[1]["jain"]),
]


def validate(scenarios: Path) -> tuple[pd.DataFrame, list[tuple[str, bool]]]:
    """Runs every scenario of ``scenarios / "validation"`` once; the table and each claim
    with whether it holds."""
    rows = {p.stem: measure(p) for p in sorted((scenarios / "validation").glob("*.toml"))}
    verdicts = [(claim, check([rows[n] for n in names])) for claim, names, check in CLAIMS
                if all(n in rows for n in names)]
    return pd.DataFrame(list(rows.values())), verdicts
