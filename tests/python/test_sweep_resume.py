"""Finished runs are kept and a sweep resumes; interrupts stop the
workers; output directories never mix two runs; write errors name the file."""

from __future__ import annotations

import errno
import importlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import reproductions
from hetpath import outdir, sweep
from hetpath.backends import LocalBackend
from hetpath.commands import sweep as sweep_cmd
from hetpath.store import ResultsStore, run_key
from helpers import default_signals, invoke

BASE = Path(__file__).parent / "data" / "small.toml"
SWEEP = """[sweep]
scenario = "base.toml"
seeds = 3
[grid]
"link.sat.rate" = ["2Mbps", "10Mbps"]
bw = [{ label = "near", "link.sat.delay" = "10ms" }, { label = "far", "link.sat.delay" = "300ms" }]
"""


def write_sweep(tmp_path: Path, text: str = SWEEP, base: str = "") -> Path:
    (tmp_path / "base.toml").write_text(base or BASE.read_text())
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


class StopAfter:
    """A backend that runs ``k`` tasks in this process, then is interrupted (Ctrl-C)."""

    def __init__(self, k: int):
        self.k = k

    def __call__(self, jobs=None):  # stands in for the LocalBackend class
        return self

    def run(self, fn, tasks, on_result):
        for i, t in enumerate(tasks):
            if i == self.k:
                raise KeyboardInterrupt
            on_result(i, fn(t))


def test_interrupted_sweep_resumes_to_the_same_tables(tmp_path: Path, monkeypatch) -> None:
    path = write_sweep(tmp_path)
    full, part = tmp_path / "full", tmp_path / "part"
    assert invoke(["sweep", str(path), "--out", str(full), "-q", "--jobs", "1"]).exit_code == 0

    with monkeypatch.context() as m:
        m.setattr(sweep_cmd, "LocalBackend", StopAfter(5))
        stopped = invoke(["sweep", str(path), "--out", str(part), "-q", "--jobs", "1"])
    assert stopped.exit_code == 130
    line, = stopped.stderr.splitlines()
    assert "resume with" in line and "--resume" in line and "5 of 12" in line
    assert not part.exists(), "nothing is moved into --out before the sweep finishes"
    staged = outdir.staging_path(part) / "results.jsonl"
    assert len(staged.read_text().splitlines()) == 5

    # Without --resume the kept runs are not thrown away silently.
    again = invoke(["sweep", str(path), "--out", str(part), "-q", "--jobs", "1"])
    assert again.exit_code == 2 and "--resume" in again.stderr

    ran = []
    real = sweep.run_flows
    monkeypatch.setattr(sweep, "run_flows", lambda t: ran.append(t) or real(t))
    resumed = invoke(["sweep", str(path), "--out", str(part), "-q", "--jobs", "1", "--resume"])
    assert resumed.exit_code == 0, resumed.stderr
    assert len(ran) == 12 - 5
    for name in ("runs.csv", "summary.csv"):
        assert (part / name).read_bytes() == (full / name).read_bytes(), name
    assert not outdir.staging_path(part).exists()

    # Resuming a finished sweep runs nothing and writes the same tables.
    ran.clear()
    assert invoke(["sweep", str(path), "--out", str(part), "-q", "--jobs", "1", "--resume"]).exit_code == 0
    assert ran == [] and (part / "runs.csv").read_bytes() == (full / "runs.csv").read_bytes()


def test_store_keys_runs_by_text_and_seed_and_survives_a_cut_line(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.jsonl")
    store.add(run_key("a", 1), 1, [{"name": "f", "x": 0.1}])
    store.close()
    with open(tmp_path / "r.jsonl", "a") as f:
        f.write('{"key": "cut sh')  # killed mid-line
    store.add(run_key("a", 2), 2, [{"name": "f", "x": 0.2}])
    store.close()
    got = ResultsStore(tmp_path / "r.jsonl").load()
    assert got == {run_key("a", 1): [{"name": "f", "x": 0.1}], run_key("a", 2): [{"name": "f", "x": 0.2}]}
    assert run_key("a", 1) != run_key("a", 2) != run_key("b", 2)


def test_sweep_run_with_a_store_matches_a_plain_run(tmp_path: Path) -> None:
    tasks = sweep.plan(sweep.load(write_sweep(tmp_path)))
    plain = sweep.run(tasks, LocalBackend(1))
    store = ResultsStore(tmp_path / "r.jsonl")
    sweep.run(tasks[:4], LocalBackend(1), store=store)
    pd.testing.assert_frame_equal(sweep.run(tasks, LocalBackend(1), store=store), plain)
    store.close()
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == len(tasks)


SLOW_BASE = """[scenario]
name = "slow"
duration = "100000s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "1Gbps"
delay = "1ms"
[[flow]]
name = "f"
from = "a"
to = "b"
"""


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir() or (os.cpu_count() or 1) < 2, reason="needs /proc and 2 cores")
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_stops_the_workers_and_says_how_to_resume(tmp_path: Path, sig, code) -> None:
    path = write_sweep(tmp_path, '[sweep]\nscenario = "base.toml"\nseeds = 4\n', base=SLOW_BASE)
    proc = subprocess.Popen([sys.executable, "-m", "hetpath", "sweep", str(path), "--out", str(tmp_path / "o"),
                             "--jobs", "2", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = [p for p in _children(proc.pid) if _alive(p)]
        assert len(workers) >= 2, "the sweep started no workers"
        time.sleep(0.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    # Runs of SLOW_BASE take long: when none had finished, there is nothing to resume.
    assert "hetpath: sweep interrupted after" in err and "Traceback" not in err
    assert "resume with: hetpath sweep" in err or "nothing kept (no run had finished)" in err, err
    time.sleep(0.5)
    assert not [p for p in workers if _alive(p)], "worker processes outlived the sweep"


@pytest.mark.parametrize("kind", ["file", "under-file"])
@pytest.mark.parametrize("command", ["sweep", "reproduce", "run"])
def test_unusable_out_fails_before_any_run(tmp_path: Path, monkeypatch, kind: str, command: str) -> None:
    ran = []
    monkeypatch.setattr(sweep, "run_flows", lambda t: ran.append(t) or [])
    monkeypatch.setattr("hetpath.commands.run.run_text", lambda *a, **k: ran.append(a))
    a_file = tmp_path / "f"
    a_file.write_text("")
    out = a_file if kind == "file" else a_file / "sub"
    args = {"sweep": ["sweep", str(write_sweep(tmp_path))],
            "reproduce": ["reproduce", "tcp-radio", "--quick"],
            "run": ["run", str(BASE)]}[command]
    result = invoke([*args, "--out", str(out), "-q"])
    assert result.exit_code == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1 and str(out) in result.stderr
    assert ran == []


def test_interrupted_reproduce_leaves_the_previous_outputs_alone(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    out.mkdir()
    for name in ("runs.csv", "findings.csv", "comparison.csv"):
        (out / name).write_text("old\n")

    def reproduce(ctx):
        (ctx.out_dir / "runs.csv").write_text("new\n")
        raise KeyboardInterrupt

    from hetpath.reproduce import tcp_radio
    monkeypatch.setattr(tcp_radio, "reproduce", reproduce)
    result = invoke(["reproduce", "tcp-radio", "--quick", "--out", str(out), "-q"])
    assert result.exit_code == 130
    assert {p.name: p.read_text() for p in out.iterdir()} == {n: "old\n" for n in ("runs.csv", "findings.csv", "comparison.csv")}
    assert not outdir.staging_path(out).exists()


def test_a_new_run_replaces_the_previous_runs_files_only(tmp_path: Path) -> None:
    out = tmp_path / "o"
    path = write_sweep(tmp_path, '[sweep]\nscenario = "base.toml"\n')
    assert invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"]).exit_code == 0
    (out / "mine.txt").write_text("keep")
    (out / "summary.csv").write_text("stale")
    assert invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"]).exit_code == 0
    assert (out / "mine.txt").read_text() == "keep" and (out / "summary.csv").read_text() != "stale"


def test_full_disk_names_the_file_and_keeps_the_old_outputs(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    path = write_sweep(tmp_path, '[sweep]\nscenario = "base.toml"\n')
    assert invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(self, path, *a, **k):
        if str(path).endswith("summary.csv"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, path, *a, **k)

    real = pd.DataFrame.to_csv
    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    result = invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"])
    assert result.exit_code == 1
    line, = result.stderr.splitlines()
    assert "summary.csv" in line and "No space left" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_resume_needs_out(tmp_path: Path) -> None:
    result = invoke(["sweep", str(write_sweep(tmp_path)), "--resume"])
    assert result.exit_code == 2 and "--out" in result.stderr


def test_run_out_full_disk_names_the_file_and_keeps_the_old_results(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    assert invoke(["run", str(BASE), "--out", str(out), "--no-plots", "-q"]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(self, path, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    result = invoke(["run", str(BASE), "--out", str(out), "--no-plots", "-q"])
    assert result.exit_code == 1
    line, = result.stderr.splitlines()
    assert ".csv" in line and "No space left" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not outdir.staging_path(out).exists()


def _die(task):
    os._exit(9)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="worker processes need 2 cores")
def test_a_dead_worker_is_a_simulation_error_not_a_traceback() -> None:
    from hetpath.backends import LocalBackend
    from hetpath.errors import SimulationError

    with pytest.raises(SimulationError, match="worker process died"):
        LocalBackend(2).run(_die, [1, 2, 3], lambda i, r: None)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="worker processes need 2 cores")
def test_a_worker_dead_before_the_batches_are_out_is_a_simulation_error(monkeypatch) -> None:
    """The pool can break while batches are still being submitted (a worker dies at
    once, under load): submit() then raises, not a result."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from hetpath.backends import LocalBackend
    from hetpath.errors import SimulationError

    submit = ProcessPoolExecutor.submit
    calls = []

    def breaks_on_the_second(self, *args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise BrokenProcessPool("a child process terminated abruptly")
        return submit(self, *args, **kw)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", breaks_on_the_second)
    with pytest.raises(SimulationError, match="worker process died"):
        LocalBackend(2).run(abs, [1, 2, 3], lambda i, r: None)


@pytest.mark.parametrize("paper, module, fn, files", [
    pytest.param("rappep", "hetpath.sweep", "run_flows", (), marks=reproductions.group("rappep")),
    pytest.param("lift", "hetpath.reproduce.lift", "run_pages", ("pages.csv",), marks=reproductions.group("lift")),
    pytest.param("apohn", "hetpath.reproduce.apohn", "run_one", (), marks=reproductions.group("apohn")),
])
def test_interrupted_reproduce_resumes_to_the_same_findings(tmp_path: Path, monkeypatch, quick_reproduction, paper,
                                                             module, fn, files) -> None:
    """The uninterrupted run is the session's (reproductions.py); the interrupted one and
    its resumption are this test's own, as they are what it checks."""
    run = quick_reproduction(paper)
    assert run.exit_code == 0, run.stderr
    args = [*run.args(), "--jobs", "1"]
    full, part = run.out, tmp_path / "part"
    with monkeypatch.context() as m:
        m.setattr("hetpath.commands.reproduce.LocalBackend", StopAfter(2))
        stopped = invoke([*args, "--out", str(part)])
    assert stopped.exit_code == 130
    line, = stopped.stderr.splitlines()
    assert "--resume" in line and not part.exists()
    ran = []
    mod = importlib.import_module(module)
    real = getattr(mod, fn)
    monkeypatch.setattr(mod, fn, lambda t: ran.append(t) or real(t))
    resumed = invoke([*args, "--out", str(part), "--resume"])
    assert resumed.exit_code == 0, resumed.stderr
    total = len((full / "results.jsonl").read_text().splitlines())
    assert 0 < len(ran) <= total - 2
    for name in ("runs.csv", "findings.csv", "comparison.csv", *files):
        assert (part / name).read_bytes() == (full / name).read_bytes(), name
