"""The outcome of one run: the summary, per-flow/per-link tables and time series.

Tables are built lazily and cached: the summary alone is enough for ``--json``,
and pandas DataFrames of long series cost memory only when asked for.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

if TYPE_CHECKING:  # pandas is imported on first use, keeping `hetpath --help` fast
    import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]


def json_safe(value: Any) -> Any:
    """Replace NaN/inf with ``None`` recursively so the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def summary_json(summary: dict[str, Any]) -> str:
    """The summary as indented, strict JSON (what ``hetpath run --json`` prints)."""
    return json.dumps(json_safe(summary), indent=2, allow_nan=False)


class Result:
    """What :func:`hetpath.run` returns; wraps the dict produced by the engine."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw
        #: The run summary exactly as the engine reported it (see the README for keys).
        self.summary: dict[str, Any] = raw["summary"]
        #: Where the result came from (:mod:`hetpath.provenance`); None if not recorded.
        self.provenance: Optional[dict[str, Any]] = raw.get("provenance")
        #: The exact scenario text that ran, when known.
        self.scenario_text: Optional[str] = raw.get("scenario_text")
        series = raw.get("series") or {}
        self._flow_cols: dict[str, Any] = series.get("flows") or {}
        self._link_cols: dict[str, Any] = series.get("links") or {}

    @property
    def scenario(self) -> str:
        """Name of the scenario that produced this result."""
        return str(self.summary.get("scenario", ""))

    @property
    def seed(self) -> int:
        """Seed the run actually used (after any override)."""
        return int(self.summary["seed"])

    @cached_property
    def flows(self) -> "pd.DataFrame":
        """One row per flow: goodput, completion time, retransmissions, ..."""
        import pandas as pd

        return pd.DataFrame(self.summary.get("flows", []))

    @cached_property
    def links(self) -> "pd.DataFrame":
        """One row per link direction: utilization, drops, maximum queue, ..."""
        import pandas as pd

        return pd.DataFrame(self.summary.get("links", []))

    @cached_property
    def flow_series(self) -> "pd.DataFrame":
        """Sampled per-flow state: ``time_s, flow, cwnd_bytes, ssthresh_bytes, srtt_s, ...``."""
        import pandas as pd

        return pd.DataFrame(self._flow_cols)

    @cached_property
    def trace(self) -> "pd.DataFrame":
        """The typed event trace (``hetpath.run(..., trace=True)``): one row per event,
        ``time_s, event, node, flow, link, value``; see docs/guide.md, "Event trace"."""
        import pandas as pd

        cols = self._raw.get("trace")
        if cols is None:
            raise ValueError("this run kept no trace: run it with trace=True (CLI: --trace FILE)")
        frame = pd.DataFrame(cols)
        frame["event"] = frame["event"].astype("category")
        frame["value"] = frame["value"].astype("Int64")
        return frame

    def write_trace(self, path: PathLike) -> Path:
        """Write the trace as one columnar file that pandas and polars read directly:
        Parquet (``.parquet``), Arrow IPC (``.arrow``, ``.feather``) or CSV (``.csv``)."""
        out = Path(path)
        frame = self.trace
        if out.suffix == ".csv":
            frame.to_csv(out, index=False)
        elif out.suffix in (".arrow", ".feather"):
            frame.to_feather(out)
        elif out.suffix == ".parquet":
            frame.to_parquet(out, index=False)
        else:
            raise ValueError(f"{out}: unknown trace format; expected .parquet, .arrow, .feather or .csv")
        return out

    @cached_property
    def link_series(self) -> "pd.DataFrame":
        """Sampled per-link-direction state: ``time_s, link, from, to, queue_pkts, ...``."""
        import pandas as pd

        return pd.DataFrame(self._link_cols)

    def write(self, out_dir: PathLike) -> list[Path]:
        """Write summary.json (with the provenance), the scenario that ran
        (scenario.toml) and CSVs (plus Parquet if pyarrow is installed).

        Returns the files written.  The directory is created if needed.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = [out / "summary.json"]
        summary = self.summary if self.provenance is None else {**self.summary, "provenance": self.provenance}
        written[0].write_text(summary_json(summary) + "\n", encoding="utf-8")
        if self.scenario_text is not None:
            written.append(out / "scenario.toml")
            written[-1].write_text(self.scenario_text, encoding="utf-8")
        tables = {
            "flows": self.flows,
            "links": self.links,
            "flow_series": self.flow_series,
            "link_series": self.link_series,
        }
        parquet = importlib.util.find_spec("pyarrow") is not None
        for name, frame in tables.items():
            csv = out / f"{name}.csv"
            frame.to_csv(csv, index=False)
            written.append(csv)
            if parquet:
                pq = out / f"{name}.parquet"
                frame.to_parquet(pq, index=False)
                written.append(pq)
        return written

    def plot(self, out_dir: PathLike, formats: Sequence[str] = ("png",)) -> list[Path]:
        """Write the plots (cwnd of each flow's bottleneck leg, queue per link direction),
        one file per format (png, svg, pdf); returns the files."""
        from .plots import plot_result

        return plot_result(self, Path(out_dir), formats)

    def __repr__(self) -> str:
        n_flows = len(self.summary.get("flows", []))
        n_links = len(self.summary.get("links", []))
        seed = self.summary.get("seed")
        return f"<Result {self.scenario!r} seed={seed} flows={n_flows} link_directions={n_links}>"
