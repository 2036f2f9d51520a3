"""Every case of the malformed-input corpus (tests/python/data/bad_inputs, made by
make_bad_inputs.py) gives exit 2 and one ``hetpath: error:`` line naming the file or
option, with no traceback and no panic. The engine's cases carry the issue item they
were written for (``"xfail"`` in the manifest, from when they waited for it); since
those fixes landed they must pass like the rest."""

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
            "engine-trace"} <= classes


def _args(case: dict[str, Any], tmp: Path) -> list[str]:
    return [a.replace("{tmp}", str(tmp)) for a in case["args"]]


def _check_error(code: int, stdout: str, stderr: str, case: dict[str, Any]) -> None:
    assert "Traceback" not in stderr and "panicked" not in stderr, stderr
    assert code == 2, (code, stderr[-2000:])
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetpath: error: "), stderr[-2000:]
    for name in case["names"]:
        assert name.lower() in lines[0].lower(), (name, lines[0])
    for text in case.get("forbid", []):
        assert text not in stderr, ("echoes file content", lines[0])


def _isolated(case: dict[str, Any], tmp: Path) -> tuple[int, str, str]:
    """A case that could read forever or block: a subprocess with a time and memory limit."""
    scenario = CORPUS / case["args"][1]
    copy = tmp / scenario.name
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
        _check_error(*_isolated(case, tmp_path), case)
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
