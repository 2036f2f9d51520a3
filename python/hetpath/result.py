"""The outcome of one run: the summary, per-flow/per-link tables and time series.

Tables are built lazily and cached: the summary alone is enough for ``--json``,
and pandas DataFrames of long series cost memory only when asked for.  Every list
of records in the summary (flows, links, legs, machines, and whatever the engine's
schema adds) is a table (:meth:`Result.table`), so a new key needs no Python change.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from . import _args, _bridge
from ._args import describe
from .errors import ArgumentError
from .outdir import naming, replacing

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


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def typed(frame: "pd.DataFrame") -> "pd.DataFrame":
    """Give ``frame`` stable dtypes whatever its values: pandas makes a column of only
    ``None`` (e.g. ``completion_s`` when no flow completed) ``object``; a column of
    numbers and ``None`` is a float column with NaN, so it becomes float64."""
    for col in frame.columns:
        values = frame[col]
        if values.dtype == object and len(values) and all(v is None or _is_number(v) for v in values):
            frame[col] = values.astype("float64")
    return frame


#: Dimensions of :meth:`Result.series_xarray`: what identifies a sample of a flow's
#: leg and of a link direction; the other columns are the sampled variables.
FLOW_SERIES_INDEX = ("time_s", "flow", "leg")
LINK_DIRECTION = ("link", "from", "to")


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
        #: The loader's warnings (``FILE: KEY: message``): settings that ran, but
        #: probably not as meant. summary.json carries them as ``warnings``.
        self.warnings: list[str] = list(raw.get("warnings") or [])
        series = raw.get("series") or {}
        self._flow_cols: dict[str, Any] = series.get("flows") or {}
        self._link_cols: dict[str, Any] = series.get("links") or {}
        self._tables: dict[str, "pd.DataFrame"] = {}

    @property
    def scenario(self) -> str:
        """Name of the scenario that produced this result."""
        return str(self.summary.get("scenario", ""))

    @property
    def seed(self) -> int:
        """Seed the run actually used (after any override)."""
        return int(self.summary["seed"])

    @property
    def table_names(self) -> list[str]:
        """The summary's lists of records, in the schema's order: each is a table."""
        return [k for k in self.summary if isinstance(self.summary[k], list)]

    def table(self, name: str) -> "pd.DataFrame":
        """The summary's list ``name`` (e.g. ``"legs"``) as a DataFrame: a ``seed``
        column (so tables of several runs concatenate), then one column per key of the
        record in the schema's order; optional numbers are float64 with NaN."""
        import pandas as pd

        if not isinstance(name, str) or name not in self._tables:
            if not isinstance(name, str) or name not in self.table_names:
                raise ArgumentError(f"Result.table(): {describe(name)} is not a table of this result; "
                                    "expected one of " + ", ".join(self.table_names))
            # The record kind is the list's singular ("legs" -> "leg"), so even an
            # empty list has its columns.
            columns = _bridge.schema().get(name[:-1])
            frame = typed(pd.DataFrame(self.summary[name], columns=columns))
            frame.insert(0, "seed", self.seed)
            self._tables[name] = frame
        return self._tables[name]

    @property
    def flows(self) -> "pd.DataFrame":
        """One row per flow: goodput, completion time, retransmissions, ..."""
        return self.table("flows")

    @property
    def links(self) -> "pd.DataFrame":
        """One row per link direction: utilization, drops, maximum queue, ..."""
        return self.table("links")

    @cached_property
    def flow_series(self) -> "pd.DataFrame":
        """Sampled per-flow state: ``time_s, flow, leg, cwnd_bytes, ssthresh_bytes, ...``."""
        return _series(self._flow_cols)

    @cached_property
    def trace(self) -> "pd.DataFrame":
        """The typed event trace (``hetpath.run(..., trace=True)``): one row per event,
        ``time_s, event, node, flow, link, value``; see docs/guide.md, "Event trace"."""
        import pandas as pd

        cols = self._raw.get("trace")
        if cols is None:
            raise ArgumentError("this run kept no trace: run it with trace=True (CLI: --trace FILE)")
        frame = pd.DataFrame(cols)
        frame["event"] = frame["event"].astype("category")
        frame["value"] = frame["value"].astype("Int64")
        return frame

    def write_trace(self, path: PathLike) -> Path:
        """Write the trace as one columnar file that pandas and polars read directly:
        Parquet (``.parquet``), Arrow IPC (``.arrow``, ``.feather``) or CSV (``.csv``).
        The file is written whole or not at all: a write error (a full disk) leaves no
        truncated file, and an existing one as it was."""
        out = _args.path(path, "Result.write_trace(): path")
        if out.suffix not in (".csv", ".arrow", ".feather", ".parquet"):
            raise ArgumentError(f"{out}: unknown trace format; expected .parquet, .arrow, .feather or .csv")
        frame = self.trace
        with replacing(out) as tmp:
            if out.suffix == ".csv":
                frame.to_csv(tmp, index=False)
            elif out.suffix == ".parquet":
                frame.to_parquet(tmp, index=False)
            else:
                frame.to_feather(tmp)
        return out

    @cached_property
    def link_series(self) -> "pd.DataFrame":
        """Sampled per-link-direction state: ``time_s, link, from, to, queue_pkts, ...``."""
        return _series(self._link_cols)

    def series_xarray(self) -> Any:
        """Both series as one ``xarray.Dataset``: flow variables over (``time_s``,
        ``flow``, ``leg``), link variables over (``time_s``, ``direction``), where a
        direction is ``"<link>:<from>-><to>"`` with ``link``, ``from`` and ``to`` as its
        coordinates. A link variable named like a flow variable gets a ``link_`` prefix.
        Needs xarray, which hetpath does not install."""
        try:
            import xarray as xr
        except ImportError:
            raise ImportError("Result.series_xarray() needs xarray, which hetpath does not install; "
                              "install it with: pip install xarray") from None
        flows = self.flow_series.set_index(list(FLOW_SERIES_INDEX)).to_xarray()
        ls = self.link_series
        ls = ls.assign(direction=ls["link"] + ":" + ls["from"] + "->" + ls["to"])
        ends = ls.drop_duplicates("direction").set_index("direction")[list(LINK_DIRECTION)]
        links = ls.drop(columns=list(LINK_DIRECTION)).set_index(["time_s", "direction"]).to_xarray()
        links = links.assign_coords({c: ("direction", ends.loc[links["direction"].values, c].to_numpy())
                                     for c in LINK_DIRECTION})
        links = links.rename({v: f"link_{v}" for v in links.data_vars if v in flows.data_vars})
        return xr.merge([flows, links], join="outer", compat="no_conflicts")

    def write(self, out_dir: PathLike) -> list[Path]:
        """Write summary.json (with the loader's warnings and the provenance), the scenario that ran
        (scenario.toml), ``<name>.csv`` for every table (:attr:`table_names`) and both
        series (plus Parquet if pyarrow is installed).

        Returns the files written.  The directory is created if needed.
        """
        out = _args.path(out_dir, "Result.write(): out_dir")
        out.mkdir(parents=True, exist_ok=True)
        written = [out / "summary.json"]
        summary = {**self.summary, "warnings": self.warnings}
        if self.provenance is not None:
            summary["provenance"] = self.provenance
        with naming(written[0]):
            written[0].write_text(summary_json(summary) + "\n", encoding="utf-8")
        if self.scenario_text is not None:
            written.append(out / "scenario.toml")
            with naming(written[-1]):
                written[-1].write_text(self.scenario_text, encoding="utf-8")
        tables = {name: self.table(name) for name in self.table_names}
        tables.update(flow_series=self.flow_series, link_series=self.link_series)
        parquet = importlib.util.find_spec("pyarrow") is not None
        for name, frame in tables.items():
            csv = out / f"{name}.csv"
            with naming(csv):
                frame.to_csv(csv, index=False)
            written.append(csv)
            if parquet:
                pq = out / f"{name}.parquet"
                with naming(pq):
                    frame.to_parquet(pq, index=False)
                written.append(pq)
        return written

    def plot(self, out_dir: PathLike, formats: Sequence[str] = ("png",)) -> list[Path]:
        """Write the plots (cwnd of each flow's bottleneck leg, queue per link direction),
        one file per format (png, svg, pdf); returns the files."""
        from .plots import check_formats, plot_result

        out = _args.path(out_dir, "Result.plot(): out_dir")
        if isinstance(formats, str):
            formats = (formats,)
        if not isinstance(formats, (list, tuple)) or not all(isinstance(f, str) for f in formats):
            raise ArgumentError(f"Result.plot(): formats: expected a list of format names, got {describe(formats)}")
        try:
            formats = check_formats(formats)
        except ValueError as exc:
            raise ArgumentError(f"Result.plot(): formats: {exc}") from None
        return plot_result(self, out, formats)

    def __repr__(self) -> str:
        n_flows = len(self.summary.get("flows", []))
        n_links = len(self.summary.get("links", []))
        seed = self.summary.get("seed")
        return f"<Result {self.scenario!r} seed={seed} flows={n_flows} link_directions={n_links}>"


def _series(columns: dict[str, Any]) -> "pd.DataFrame":
    """A series as a typed DataFrame (``time_s`` float even when empty; the engine puts
    it on the sample grid)."""
    import pandas as pd

    frame = typed(pd.DataFrame(columns))
    if "time_s" in frame:
        frame["time_s"] = frame["time_s"].astype("float64")
    return frame
