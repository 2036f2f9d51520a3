"""Sweep files and options that used to give tracebacks, wrong
tables or thousands of processes are one-line errors (exit 2) before anything runs, and
the Python API raises only hetpath exceptions."""

from __future__ import annotations

from pathlib import Path

import hetpath
import pytest
from hetpath import sweep
from hetpath.backends import LocalBackend, cpu_count
from hetpath.errors import HetpathError, ScenarioError
from helpers import invoke

BASE = Path(__file__).parent / "data" / "small.toml"


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    (tmp_path / "base.toml").write_text(BASE.read_text())
    path = tmp_path / name
    path.write_text(text)
    return path


def one_line_exit_2(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetpath: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


HEAD = '[sweep]\nscenario = "base.toml"\n'
BAD_SWEEPS = [
    ("grid-scalar", 'grid = 5\n' + HEAD, ["grid"]),
    ("sweep-scalar", "sweep = 5\n", ["sweep"]),
    ("flows-scalar", HEAD + "flows = 5\n", ["sweep.flows"]),
    ("flows-unknown", HEAD + 'flows = ["nope"]\n', ["sweep.flows", "nope"]),
    ("into-scalar", HEAD + '[grid]\n"scenario.name.x" = [1]\n', ["scenario.name.x"]),
    ("into-scalar-array", HEAD + '[grid]\n"flow.f1.size.x" = [1]\n', ["flow.f1.size.x"]),
    ("seed-2-64", HEAD + "seeds = [18446744073709551616]\n", ["sweep.seeds"]),
    ("seed-negative", HEAD + "seeds = [-1]\n", ["sweep.seeds"]),
    ("seeds-duplicate", HEAD + "seeds = [1, 1, 1]\n", ["sweep.seeds", "twice"]),
    ("seeds-huge-count", HEAD + "seeds = 1000000000\n", ["sweep.seeds"]),
    ("axis-protocol", HEAD + '[grid]\nprotocol = [{ "flow.f1.cc" = "reno" }]\n', ["protocol", "reserved"]),
    ("axis-seed", HEAD + '[grid]\nseed = [{ "scenario.seed" = 1 }]\n', ["seed", "reserved"]),
    ("axis-flow", HEAD + '[grid]\nflow = [{ "flow.f1.cc" = "reno" }]\n', ["flow", "reserved"]),
    ("duplicate-labels", HEAD + '[grid]\nbw = [{ label = "x", "link.sat.rate" = "1Mbps" },'
                                ' { label = "x", "link.sat.rate" = "100Mbps" }]\n', ["bw", "'x'", "twice"]),
    ("duplicate-values", HEAD + '[grid]\n"link.sat.rate" = ["1Mbps", "1Mbps"]\n', ["link.sat.rate", "twice"]),
    ("scenario-dev-zero", '[sweep]\nscenario = "/dev/zero"\n', ["/dev/zero", "regular file"]),
    ("scenario-missing", '[sweep]\nscenario = "nope.toml"\n', ["nope.toml", "no such file"]),
    ("scenario-directory", '[sweep]\nscenario = "."\n', ["directory"]),
    ("scenario-not-string", "[sweep]\nscenario = 5\n", ["sweep.scenario"]),
    ("protocol-scalar", HEAD + "protocol = 5\n", ["protocol"]),
]


@pytest.mark.parametrize("body, fragments", [c[1:] for c in BAD_SWEEPS], ids=[c[0] for c in BAD_SWEEPS])
def test_bad_sweep_file_is_one_line(tmp_path: Path, body: str, fragments: list[str]) -> None:
    path = write(tmp_path, body)
    one_line_exit_2(invoke(["sweep", str(path), "-q", "--jobs", "1"]), *fragments)


def test_unknown_flow_is_found_before_any_run(tmp_path: Path, monkeypatch) -> None:
    ran = []
    monkeypatch.setattr(sweep, "run_task", lambda t: ran.append(t) or [])
    path = write(tmp_path, HEAD + 'flows = ["nope"]\n')
    one_line_exit_2(invoke(["sweep", str(path), "-q", "--jobs", "1"]), "nope")
    assert ran == []


@pytest.mark.parametrize("args, fragment", [
    (["--seeds", "1e9"], "--seeds"),
    (["--seeds", "1000000000"], "--seeds"),
    (["--jobs", "100000"], "--jobs"),
    (["--jobs", "0"], "--jobs"),
    (["--no-such-option"], "no-such-option"),
])
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], fragment: str) -> None:
    path = write(tmp_path, HEAD)
    one_line_exit_2(invoke(["sweep", str(path), "-q", *args]), fragment)


@pytest.mark.parametrize("target", ["missing", "directory"])
@pytest.mark.parametrize("command", ["sweep", "run", "validate"])
def test_missing_or_directory_file_exits_2(tmp_path: Path, command: str, target: str) -> None:
    path = tmp_path / "nope.toml" if target == "missing" else tmp_path
    one_line_exit_2(invoke([command, str(path)]), str(path))


def test_run_dev_zero_is_refused_at_once() -> None:
    one_line_exit_2(invoke(["run", "/dev/zero"]), "/dev/zero", "regular file")


def test_jobs_beyond_the_cores_is_an_error_in_the_api() -> None:
    with pytest.raises(ScenarioError, match="jobs"):
        LocalBackend(cpu_count() + 1)
    assert LocalBackend(cpu_count()).jobs == cpu_count()


def test_unlabelled_tables_are_named_by_every_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + '[grid]\nq = [{ "link.sat.rate" = "1Mbps", "link.sat.delay" = "1ms" },'
                                  ' { "link.sat.rate" = "1Mbps", "link.sat.delay" = "2ms" }]\n')
    spec = sweep.load(path)
    assert spec.axes[0].labels == ["link.sat.rate=1Mbps, link.sat.delay=1ms", "link.sat.rate=1Mbps, link.sat.delay=2ms"]


# The Python API: every failure is a hetpath exception.
@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "1"])
def test_api_bad_seed_is_a_scenario_error(seed) -> None:
    with pytest.raises(ScenarioError, match="seed"):
        hetpath.run(BASE, seed=seed)


def test_api_not_utf8_is_a_scenario_error(tmp_path: Path) -> None:
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ScenarioError, match="UTF-8"):
        hetpath.run(bad)
    with pytest.raises(ScenarioError, match="UTF-8"):
        hetpath.validate(bad)


def test_api_missing_file_is_a_hetpath_error_and_still_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(HetpathError) as info:
        hetpath.run(tmp_path / "nope.toml")
    assert isinstance(info.value, FileNotFoundError)


def test_api_pcap_dir_that_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(HetpathError, match="pcap_dir"):
        hetpath.run(BASE, pcap_dir=f)


@pytest.mark.parametrize("doc, key", [
    ({"flow": [1]}, "flow.x.cc"),
    ({"flow": 5}, "flow.x.cc"),
    ({"scenario": {"name": "s"}}, "scenario.name.x"),
    ({}, "a..b"),
])
def test_api_set_key_errors_are_scenario_errors(doc, key) -> None:
    with pytest.raises(ScenarioError):
        sweep.set_key(doc, key, 1)


def test_api_sweep_duplicate_seeds(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="twice"):
        hetpath.sweep(BASE, seeds=[1, 1, 1])


@pytest.mark.parametrize("call", [
    lambda: hetpath.run(None),
    lambda: hetpath.validate(5),
    lambda: hetpath.sweep(None),
    lambda: hetpath.sweep(BASE, flows=5),
    lambda: hetpath.sweep(BASE, grid=5),
    lambda: hetpath.sweep(BASE, seeds=[2**64]),
    lambda: hetpath.sweep(BASE, grid={"seed": [1]}),
    lambda: hetpath.sweep(BASE, flows=["nope"]),
    lambda: hetpath.sweep("/dev/zero"),
], ids=["run-none", "validate-int", "sweep-none", "flows-int", "grid-int", "seed-2-64", "axis-seed", "flow-unknown",
        "dev-zero"])
def test_api_bad_arguments_raise_hetpath_errors(call) -> None:
    with pytest.raises(HetpathError):
        call()
