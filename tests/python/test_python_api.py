"""The Python API's rough edges: per-direction links, stable dtypes,
the sample grid, the seed column, tables from the schema, sweeps from Python objects,
errors that name the Python call, and the xarray view."""

from __future__ import annotations

import sys
from pathlib import Path

import hetpath
import numpy as np
import pandas as pd
import pytest
from hetpath import Scenario
from helpers import FLOW_KEYS, LINK_KEYS, SUMMARY_KEYS


def two_nodes(name: str = "geo", duration: str = "3s") -> Scenario:
    return Scenario(name, duration=duration).node("a").node("b")


@pytest.fixture(scope="module")
def unfinished() -> hetpath.Result:
    """A sized flow that cannot finish in 3 s and a bulk one: nothing completes."""
    sc = (two_nodes()
          .link("sat", "a", "b", ab={"rate": "10Mbps", "delay": "300ms"}, ba={"rate": "1Mbps", "delay": "250ms"})
          .flow("big", "a", "b", size="50MB")
          .flow("bulk", "a", "b"))
    return hetpath.run(sc)


def test_a_link_takes_its_rates_from_ab_and_ba_alone(unfinished: hetpath.Result) -> None:
    links = unfinished.links
    assert list(zip(links["from"], links["rate_bps"])) == [("a", 10_000_000), ("b", 1_000_000)]


def test_the_engine_still_judges_a_link_without_any_rate() -> None:
    sc = two_nodes().link("sat", "a", "b", delay="1ms", ab={"rate": "1Mbps"})
    with pytest.raises(hetpath.ScenarioError, match="rate.*missing"):
        sc.validate()


def test_dtypes_are_stable_when_no_flow_completes(unfinished: hetpath.Result) -> None:
    flows = unfinished.flows
    assert flows["completion_s"].isna().all()
    for col in ("completion_s", "sender_done_s", "goodput_bps", "start_s", "size_bytes"):
        assert flows[col].dtype == "float64", col
    for col in ("bytes_delivered", "retransmissions", "timeouts", "seed"):
        assert flows[col].dtype == "int64", col
    assert pd.api.types.is_string_dtype(flows["name"]) and flows["aborted"].dtype == bool
    assert not (flows.dtypes == np.dtype(object)).any()


def test_a_column_of_only_none_is_float_everywhere() -> None:
    from hetpath.result import typed

    frame = typed(pd.DataFrame([{"x": None, "n": "a", "k": 1}, {"x": None, "n": "b", "k": 2}]))
    assert frame["x"].dtype == "float64" and frame["k"].dtype == "int64"
    assert pd.api.types.is_string_dtype(frame["n"]) or frame["n"].dtype == object


def test_time_is_on_the_sample_grid(unfinished: hetpath.Result, tmp_path: Path) -> None:
    times = sorted(set(unfinished.flow_series["time_s"]))
    assert times == [round(0.1 * k, 9) for k in range(len(times))]
    assert 0.3 in times and set(unfinished.link_series["time_s"]) == set(times)
    unfinished.write(tmp_path)
    text = (tmp_path / "flow_series.csv").read_text()
    assert "\n0.3," in text and "0.30000000000000004" not in text


def test_every_list_of_records_is_a_table_with_a_seed(unfinished: hetpath.Result, tmp_path: Path) -> None:
    names = [k for k in SUMMARY_KEYS if isinstance(unfinished.summary[k], list)]
    assert unfinished.table_names == names and {"flows", "links", "legs"} <= set(names)
    assert list(unfinished.flows.columns) == ["seed", *FLOW_KEYS]
    assert list(unfinished.links.columns) == ["seed", *LINK_KEYS]
    assert (unfinished.table("legs")["seed"] == 1).all()
    written = {p.name for p in unfinished.write(tmp_path)}
    assert {f"{n}.csv" for n in names} <= written
    with pytest.raises(hetpath.ArgumentError, match="expected one of flows, links"):
        unfinished.table("nope")


def test_a_new_list_in_the_summary_is_a_table_without_python_changes(tmp_path: Path) -> None:
    """What the engine adds to the summary (as it added `legs`) is written and readable."""
    res = hetpath.run(two_nodes(duration="1s").link("l", "a", "b", rate="1Mbps", delay="1ms"))
    raw = {"summary": {**res.summary, "widgets": [{"widget": "w", "count": 3}]}, "series": {}}
    extended = hetpath.Result(raw)
    assert list(extended.table("widgets").columns) == ["seed", "widget", "count"]
    assert "widgets.csv" in {p.name for p in extended.write(tmp_path)}


def test_tables_of_several_seeds_concatenate() -> None:
    sc = two_nodes().link("l", "a", "b", rate="1Mbps", delay="10ms",
                          channel={"model": "bernoulli", "p": 0.05}).flow("f", "a", "b")
    both = pd.concat([hetpath.run(sc, seed=s).flows for s in (1, 2)], ignore_index=True)
    assert list(both["seed"]) == [1, 2] and both["seed"].dtype == "int64"


def test_sweep_from_python_objects() -> None:
    sc = two_nodes(duration="20s").link("l", "a", "b", rate="1Mbps", delay="20ms").flow("f", "a", "b", size="30KB")
    out = hetpath.sweep(sc, grid={"flow.f.tcp.iw": [2, 10],
                                  "path": [{"label": "near", "link.l.delay": "5ms"}, {"link.l.delay": "200ms"}]},
                        seeds=2, protocols={"reno": {"flow.f.cc": "reno"}, "cubic": {"flow.f.cc": "cubic"}})
    assert isinstance(out, hetpath.SweepResult)
    assert len(out.runs) == 2 * 2 * 2 * 2 and sorted(set(out.runs["seed"])) == [1, 2]
    assert out.keys == ["flow.f.tcp.iw", "path", "protocol", "flow"]
    assert len(out.summary) == 8 and (out.summary["runs"] == 2).all()
    assert out.summary["flow.f.tcp.iw"].dtype == "int64", "a numeric axis stays numeric"
    assert set(out.summary["path"]) == {"near", "200ms"}
    assert out.summary["completion_s"].dtype == "float64"
    # A larger initial window finishes a 30 kB transfer sooner.
    by_iw = out.summary.groupby("flow.f.tcp.iw")["completion_s"].mean()
    assert by_iw[10] < by_iw[2]


def test_sweep_is_still_the_module(tmp_path: Path) -> None:
    from hetpath import sweep

    assert callable(sweep) and callable(sweep.load) and callable(sweep.aggregate)
    out = hetpath.sweep(Path(__file__).parent / "data" / "small.toml", seeds=[4])
    assert list(out.runs["seed"]) == [4] and out.keys == ["protocol", "flow"]


@pytest.mark.parametrize("kwargs, message", [
    ({"grid": ["1Mbps"]}, "hetpath.sweep(): grid: expected a dict"),
    ({"grid": {"link.x.rate": ["1Mbps"]}}, "no [[link]] named 'x'"),
    ({"grid": {"link.l.rate": ["1Mbs"]}}, "(link.l.rate=1Mbs, protocol default): rate: '1Mbs' has an unknown unit"),
    ({"seeds": 0}, "expected a positive count"),
    ({"protocols": {"x": "cubic"}}, "protocols: expected a dict"),
])
def test_sweep_errors_are_one_line_and_name_the_argument(kwargs: dict, message: str) -> None:
    sc = two_nodes().link("l", "a", "b", rate="1Mbps", delay="1ms").flow("f", "a", "b")
    with pytest.raises(hetpath.ScenarioError) as info:
        hetpath.sweep(sc, **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value) and "line " not in str(info.value)


@pytest.mark.parametrize("build, named", [
    (lambda s: s.link("sat", "a", "b", rate="10Mbs", delay="1ms"),
     "<geo>: Scenario.link('sat', rate=...): '10Mbs' has an unknown unit 'Mbs'"),
    (lambda s: s.link("sat", "a", "b", rate="1Mbps", delay="1ms", ab={"delay": "x"}),
     "Scenario.link('sat', ab=...): delay: 'x' does not start with a number"),
    (lambda s: s.link("sat", "a", "b", rate="1Mbps", delay="1ms").flow("f", "a", "moon"),
     "Scenario.flow('f', dst=...): unknown node 'moon'"),
    (lambda s: s.link("sat", "a", "b", rate="1Mbps", delay="1ms").flow("f", "a", "b", cc={"name": "cubic", "beta": 2}),
     "Scenario.flow('f', cc=...): beta: 2 is outside (0, 1)"),
    (lambda s: s.tcp(mss=10), "Scenario.tcp(mss=...): 10 is out of range"),
    (lambda s: s.link("sat", "a", "b", rate="1Mbps"), "Scenario.link('sat', delay=...): missing"),
])
def test_errors_on_a_python_scenario_name_the_call(build, named: str) -> None:
    sc = build(two_nodes())
    for check in (sc.validate, lambda: hetpath.run(sc), lambda: hetpath.validate(sc)):
        with pytest.raises(hetpath.ScenarioError) as info:
            check()
        assert named in str(info.value) and "line " not in str(info.value)


def test_errors_on_the_scenario_table_name_the_constructor() -> None:
    with pytest.raises(hetpath.ScenarioError, match=r"Scenario\('geo', duration=\.\.\.\): '200' has no unit"):
        two_nodes(duration="200").validate()


def test_a_loaded_scenario_names_the_table_entry_not_a_line(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    two_nodes().link("sat", "a", "b", rate="10Mbs", delay="1ms").save(path)
    with pytest.raises(hetpath.ScenarioError) as info:
        Scenario.load(path).validate()
    assert str(info.value).startswith(f"{path}: link[0] 'sat'.rate: '10Mbs'"), str(info.value)


def test_series_as_xarray(unfinished: hetpath.Result) -> None:
    pytest.importorskip("xarray")
    ds = unfinished.series_xarray()
    assert dict(ds.sizes) == {"time_s": 31, "flow": 2, "leg": 1, "direction": 2}
    assert list(ds["direction"].values) == ["sat:a->b", "sat:b->a"]
    assert list(ds["from"].values) == ["a", "b"]
    fs = unfinished.flow_series
    last = fs[(fs["flow"] == "big") & (fs["time_s"] == 3.0)]["cwnd_bytes"].item()
    assert ds["cwnd_bytes"].sel(time_s=3.0, flow="big", leg=0).item() == last
    assert ds["queue_pkts"].dims == ("time_s", "direction")


def test_series_xarray_without_xarray_says_how_to_get_it(unfinished: hetpath.Result,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(ImportError, match="pip install xarray"):
        unfinished.series_xarray()
