"""Result: DataFrames, files written, plots."""

from __future__ import annotations

import json
import math
from pathlib import Path

import hetpath
import pytest
from helpers import FLOW_SERIES_COLS, LINK_SERIES_COLS


@pytest.fixture(scope="module")
def result() -> hetpath.Result:
    return hetpath.run(Path(__file__).parent / "data" / "small.toml")


def test_tables(result: hetpath.Result) -> None:
    assert list(result.flows["name"]) == ["f1"]
    assert len(result.links) == 2
    assert result.flows.loc[0, "bytes_delivered"] > 0


def test_series(result: hetpath.Result) -> None:
    fs, ls = result.flow_series, result.link_series
    assert list(fs.columns) == FLOW_SERIES_COLS
    assert list(ls.columns) == LINK_SERIES_COLS
    assert len(fs) > 10 and set(fs["flow"]) == {"f1"}
    assert fs["time_s"].is_monotonic_increasing
    assert set(zip(ls["from"], ls["to"])) == {("src", "dst"), ("dst", "src")}


def test_write(tmp_path: Path, result: hetpath.Result) -> None:
    pytest.importorskip("pandas")
    written = result.write(tmp_path / "out")
    names = {p.name for p in written}
    assert {"summary.json", "flows.csv", "links.csv", "flow_series.csv", "link_series.csv"} <= names
    assert all(p.is_file() for p in written)
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert saved["scenario"] == "small" and saved["flows"][0]["name"] == "f1"
    import pandas as pd

    back = pd.read_csv(tmp_path / "out" / "flow_series.csv")
    assert list(back.columns) == FLOW_SERIES_COLS and len(back) == len(result.flow_series)
    has_parquet = any(n.endswith(".parquet") for n in names)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        assert not has_parquet
    else:
        assert {"flows.parquet", "flow_series.parquet"} <= names


def test_plot(tmp_path: Path, result: hetpath.Result) -> None:
    files = result.plot(tmp_path)
    assert [p.name for p in files] == ["cwnd.png", "queue.png"]
    for p in files:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_json_is_strict() -> None:
    from hetpath.result import summary_json

    text = summary_json({"a": math.nan, "b": [math.inf, 1.5], "c": None})
    assert json.loads(text) == {"a": None, "b": [None, 1.5], "c": None}
