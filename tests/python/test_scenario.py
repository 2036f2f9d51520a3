"""The Scenario builder: TOML round trips, loading/saving, and running what it builds."""

from __future__ import annotations

import sys
from pathlib import Path

import hetpath
import pytest
from hetpath import Scenario

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def geo() -> Scenario:
    return (
        Scenario("geo-built", duration="10s", seed=3, sample_interval="100ms")
        .tcp(mss=1460, sack=True, delayed_ack={"count": 2, "timeout": "200ms"})
        .node("src")
        .node("dst")
        .link("sat", "src", "dst", rate="10Mbps", delay="300ms", queue="100pkt",
              ab={"channel": {"model": "bernoulli", "p": 0.001}}, ba={"rate": "2Mbps"})
        .flow("f1", "src", "dst", cc="newreno", size="1MB", tcp={"iw": 10})
        .flow("bulk", "src", "dst", start="1s")
    )


def test_to_dict_shape() -> None:
    d = geo().to_dict()
    assert list(d) == ["scenario", "tcp", "node", "link", "flow"]
    assert d["scenario"] == {"name": "geo-built", "duration": "10s", "seed": 3, "sample_interval": "100ms"}
    assert d["link"][0]["ab"] == {"channel": {"model": "bernoulli", "p": 0.001}}
    assert d["flow"][0]["from"] == "src" and d["flow"][0]["to"] == "dst"
    assert "size" not in d["flow"][1], "size=None means bulk: the key is omitted"


def test_toml_round_trip() -> None:
    sc = geo()
    text = sc.to_toml()
    assert tomllib.loads(text) == sc.to_dict()
    assert "[[link]]" in text and "[scenario]" in text  # laid out like a hand-written file


def test_save_load_round_trip(tmp_path: Path) -> None:
    sc = geo()
    path = sc.save(tmp_path / "geo.toml")
    assert sc.path == path
    again = Scenario.load(path)
    assert again == sc
    assert again.to_toml() == sc.to_toml()
    assert again.path == path


def test_load_keeps_unknown_sections_for_the_engine(small_toml: Path, tmp_path: Path) -> None:
    text = small_toml.read_text() + '\n[extra]\nthing = 1\n'
    (tmp_path / "x.toml").write_text(text)
    sc = Scenario.load(tmp_path / "x.toml")
    assert sc.to_dict()["extra"] == {"thing": 1}
    with pytest.raises(hetpath.ScenarioError, match="extra"):
        sc.validate()


def test_load_bad_toml_is_scenario_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[scenario]\nname = "x\n')
    with pytest.raises(hetpath.ScenarioError, match="bad.toml"):
        Scenario.load(bad)


def test_loaded_file_equals_original(small_toml: Path) -> None:
    sc = Scenario.load(small_toml)
    assert sc.to_dict() == tomllib.loads(small_toml.read_text())
    assert sc.name == "small"


def test_built_scenario_runs() -> None:
    res = hetpath.run(geo())
    assert res.summary["scenario"] == "geo-built"
    assert res.seed == 3
    assert [f["name"] for f in res.summary["flows"]] == ["f1", "bulk"]
    assert res.summary["flows"][1]["size_bytes"] is None
    assert len(res.summary["links"]) == 2


def test_built_scenario_error_names_it() -> None:
    sc = Scenario("broken").node("a").node("b").link("l", "a", "b", rate="1Mbs", delay="1ms", queue="10pkt")
    with pytest.raises(hetpath.ScenarioError) as info:
        hetpath.run(sc)
    assert "<broken>" in str(info.value) and "Mbs" in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, hetpath.HetpathError)


def test_run_file_and_scenario_agree(small_toml: Path) -> None:
    a = hetpath.run(small_toml).summary
    b = hetpath.run(Scenario.load(small_toml)).summary
    a.pop("wall_time_s"), b.pop("wall_time_s")
    assert a == b
