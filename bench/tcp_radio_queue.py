"""Sensitivity of the tcp-radio reproduction to the emulator's buffer (not stated by the
paper): normalized throughput at 1 Mbyte for each queue limit given on the command line
("2bdp" keeps sweep.toml's per-bandwidth queues).

    .venv/bin/python bench/tcp_radio_queue.py 2bdp 1000pkt 10pkt

Prints one table per queue limit: rows (test, bandwidth), columns protocols, with
[n] = runs not completed. Used for docs/reproductions/tcp-radio.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hetpath import sweep

BPS = {"16k": 16e3, "64k": 64e3, "256k": 256e3, "1M": 1e6}


def main(queues: list[str]) -> None:
    spec = sweep.load(Path(__file__).resolve().parents[1] / "scenarios" / "tcp-radio" / "sweep.toml")
    spec.axes = [a for a in spec.axes if a.name != "size"]
    spec.base["flow"][0]["size"] = "1000KB"
    bandwidth = next(a for a in spec.axes if a.name == "bandwidth")
    for q in queues:
        if q != "2bdp":
            for o in bandwidth.overrides:
                o["link.radio.queue"] = q
        raw = sweep.run(sweep.plan(spec))
        raw["test"] = raw["channel"].str.split("/").str[0]
        agg = sweep.aggregate(raw, ["test", "bandwidth", "protocol"])
        agg["nt"] = 8e6 / agg["completion_s"] / agg["bandwidth"].map(BPS)
        agg["cell"] = [f"{nt:.3f}" + (f" [{r - c}]" if r > c else "")
                       for nt, r, c in zip(agg["nt"], agg["runs"], agg["completed"])]
        print(f"queue {q}")
        print(agg.pivot_table(index=["test", "bandwidth"], columns="protocol", values="cell",
                              aggfunc="first", sort=False).to_string())


if __name__ == "__main__":
    main(sys.argv[1:] or ["2bdp"])
