"""Every case of the malformed-input corpus (tests/python/data/bad_inputs, made by
make_bad_inputs.py) gives exit 2 and one ``hetpath: error:`` line naming the file or
option, with no traceback, no panic and nothing on stdout; or, where the manifest says
so (``"check"``), runs to the end within the time and memory limit, or warns. The
engine's cases carry what they were written for (``"xfail"`` in the manifest, from when
they waited for it); since those fixes landed they must pass like the rest."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import invoke

CORPUS = Path(__file__).parent / "data" / "bad_inputs"
CASES: list[dict[str, Any]] = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))


def test_the_corpus_is_large_and_covers_every_class() -> None:
    classes = {c["class"] for c in CASES}
    assert len(CASES) >= 300
    assert {"scenario", "encoding", "not-regular", "missing-file", "directory", "sweep", "cli", "out"} <= classes
    assert {"engine-durations", "engine-samples", "engine-clamp", "engine-pep", "engine-xcp", "engine-pcap",
            "engine-trace", "key"} <= classes
    checks = {c.get("check") for c in CASES}
    assert {"runs", "warns", "error-or-runs"} <= checks


def _args(case: dict[str, Any], tmp: Path) -> list[str]:
    return [a.replace("{tmp}", str(tmp)) for a in case["args"]]


def _check_error(code: int, stdout: str, stderr: str, case: dict[str, Any]) -> None:
    assert "Traceback" not in stderr and "panicked" not in stderr, stderr
    assert code == 2, (code, stderr[-2000:])
    if case["args"][0] == "run":
        assert not stdout.strip(), ("a result was printed", stdout[:500])
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetpath: error: "), stderr[-2000:]
    for name in case["names"]:
        assert name.lower() in lines[0].lower(), (name, lines[0])
    for text in case.get("forbid", []):
        assert text not in stderr, ("echoes file content", lines[0])


def _check_ran(code: int, stdout: str, stderr: str, case: dict[str, Any]) -> None:
    """A legitimate value: the run ends normally (no panic, no abort, in time)."""
    assert "Traceback" not in stderr and "panicked" not in stderr, stderr[-2000:]
    assert code == 0, (code, stderr[-2000:])


def _check_warned(code: int, stdout: str, stderr: str, case: dict[str, Any]) -> None:
    """Runs, and warns on stderr with the file and the key (the warnings are also in
    summary.json: test_warnings_are_in_summary_json)."""
    _check_ran(code, stdout, stderr, case)
    warnings = [line for line in stderr.splitlines() if line.startswith("hetpath: warning: ")]
    assert warnings, stderr[-2000:]
    for name in case["names"]:
        assert any(name.lower() in w.lower() for w in warnings), (name, warnings)


def _check_either(code: int, stdout: str, stderr: str, case: dict[str, Any]) -> None:
    """Refused with a one-line error naming the key, or run to the end: either is right."""
    if code == 2:
        _check_error(code, stdout, stderr, case)
    else:
        _check_ran(code, stdout, stderr, case)


CHECKS = {"runs": _check_ran, "warns": _check_warned, "error-or-runs": _check_either}


def _make(spec: dict[str, int], path: Path) -> None:
    """A scenario too large to keep in the repository: ``nodes`` node tables."""
    with path.open("w", encoding="utf-8") as f:
        f.write('[scenario]\nname = "big"\nduration = "1s"\n')
        for i in range(spec["nodes"]):
            f.write(f'[[node]]\nname = "node{i:07d}"\n')


def _isolated(case: dict[str, Any], tmp: Path) -> tuple[int, str, str]:
    """A case that could read forever, block, allocate or run long: a subprocess with a
    time and memory limit."""
    scenario = CORPUS / case["args"][1]
    copy = tmp / scenario.name
    if "make" in case:
        _make(case["make"], copy)
    else:
        copy.write_bytes(scenario.read_bytes())
    if "fifo" in case:
        os.mkfifo(tmp / case["fifo"])

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    args = [case["args"][0], copy.name, *case["args"][2:]]
    try:
        proc = subprocess.run([sys.executable, "-m", "hetpath", *args], cwd=tmp, capture_output=True, text=True,
                              timeout=20, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail("did not finish in 20 s (reads forever or blocks)")
    return proc.returncode, proc.stdout, proc.stderr


def _params() -> list[Any]:
    out = []
    for c in CASES:
        out.append(pytest.param(c, id=c["id"]))
    return out


@pytest.mark.parametrize("case", _params())
def test_bad_input(case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.get("isolate"):
        CHECKS.get(case.get("check", ""), _check_error)(*_isolated(case, tmp_path), case)
        return
    monkeypatch.chdir(CORPUS)
    result = invoke(_args(case, tmp_path))
    if case.get("check") == "pcaps":
        # Not an error: the run succeeds with one distinct pcap per link direction.
        assert result.exit_code == 0, result.stderr
        links = Path(case["args"][1]).read_text(encoding="utf-8").count("[[link]]")
        assert len(list((tmp_path / "pcap").glob("*.pcap"))) == 2 * links
        return
    _check_error(result.exit_code, result.stdout, result.stderr, case)
    assert not list(CORPUS.glob(".*.partial")), "a failed command left a staging directory"


def test_warnings_are_in_summary_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loader's warning is printed before the run and kept in summary.json; a scenario
    without any has an empty list there."""
    monkeypatch.chdir(CORPUS)
    for scenario, count in (("keys/ttl-route.toml", 2), ("base.toml", 0)):
        out = tmp_path / Path(scenario).stem
        result = invoke(["run", scenario, "-q", "--no-plots", "--out", str(out)])
        assert result.exit_code == 0, result.stderr
        warnings = json.loads((out / "summary.json").read_text())["warnings"]
        assert len(warnings) == count, warnings
        printed = [line for line in result.stderr.splitlines() if line.startswith("hetpath: warning: ")]
        assert printed == [f"hetpath: warning: {w}" for w in warnings]
        assert all(w.startswith(f"{scenario}: flow[0] 'f': ") and "TTL" in w for w in warnings)
    result = invoke(["validate", "keys/ttl-route.toml"])
    assert result.exit_code == 0
    assert result.stdout.strip() == "keys/ttl-route.toml: ok"
    assert result.stderr.count("hetpath: warning: keys/ttl-route.toml: flow[0] 'f': ") == 2
