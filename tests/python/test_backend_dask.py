"""Sweeps on a Dask cluster (``--backend dask``) give the local workers' results
byte for byte, lose no run when a worker dies, resume from the results store, and
report an unusable cluster in one line (exit 2)."""

from __future__ import annotations

import collections
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import dask
import distributed
import hetpath
import pytest
from hetpath import sweep
from hetpath.backends import LocalBackend, run_in_order
from hetpath.backends_dask import DaskBackend
from hetpath.commands import sweep as sweep_cmd
from hetpath.errors import ClusterError, SimulationError
from helpers import default_signals, invoke
from test_sweep_resume import StopAfter, _alive, _children

ROOT = Path(__file__).resolve().parents[2]
#: Runs of a few milliseconds each: 2 bandwidths x 2 sizes x 2 protocols x 4 seeds.
SWEEP = f"""[sweep]
scenario = "{ROOT / 'scenarios' / 'tcp-radio' / 'base.toml'}"
seeds = 4
[grid]
"link.radio.rate" = ["64kbps", "256kbps"]
size = [{{ label = "3KB", "flow.transfer.size" = "3KB" }}, {{ label = "10KB", "flow.transfer.size" = "10KB" }}]
[protocol.newreno]
"flow.transfer.cc" = "newreno"
[protocol.tcp-radio]
"flow.transfer.cc" = "tcp-radio"
"""


def write_sweep(tmp_path: Path) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    return path


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes of one thread on loopback, as `dask worker` would run them.

    Connections time out after 5 s, not Dask's 30: when the scheduler happens to fetch a
    finished batch from the killed worker before it learns of the death, it retries the
    connection until that timeout, then runs the batch again elsewhere."""
    with dask.config.set({"distributed.comm.timeouts.connect": "5s"}), distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                  silence_logs=logging.ERROR) as c:
        yield c


def test_a_local_dask_cluster_writes_the_bytes_local_workers_write(tmp_path: Path) -> None:
    path = write_sweep(tmp_path)
    local, dask = tmp_path / "local", tmp_path / "dask"
    assert invoke(["sweep", str(path), "--out", str(local), "-q", "--jobs", "1"]).exit_code == 0
    # No --address: the backend starts (and stops) a cluster of --jobs processes itself.
    result = invoke(["sweep", str(path), "--out", str(dask), "-q", "--jobs", "2", "--backend", "dask"])
    assert result.exit_code == 0, result.stderr
    for name in ("runs.csv", "summary.csv"):
        assert (dask / name).read_bytes() == (local / name).read_bytes(), name
    # The store is in arrival order; its lines are the same.
    lines = [sorted((d / "results.jsonl").read_text().splitlines()) for d in (local, dask)]
    assert lines[0] == lines[1] and len(lines[0]) == 32


def _run_or_die(marker: Path, victim: sweep.Task) -> Any:
    """``sweep.run_flows``, except that the worker given ``victim`` first dies on it
    (``os._exit``, as the OOM killer would), once: the marker file holds its pid."""

    def run(task: sweep.Task) -> Any:
        if task == victim:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return sweep.run_flows(task)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os._exit(9)
        return sweep.run_flows(task)

    return run


def test_a_killed_workers_runs_are_run_again_not_lost(cluster: Any, tmp_path: Path) -> None:
    tasks = sweep.plan(sweep.load(write_sweep(tmp_path)))
    expected = run_in_order(LocalBackend(1), sweep.run_flows, tasks)
    marker = tmp_path / "died"
    got: list[tuple[int, Any]] = []
    DaskBackend(cluster.scheduler_address).run(_run_or_die(marker, tasks[len(tasks) // 2]), tasks,
                                               lambda i, r: got.append((i, r)))
    victim = int(marker.read_text())
    assert victim != os.getpid() and not _alive(victim), "the worker did not die"
    counts = collections.Counter(i for i, _ in got)
    assert sorted(counts) == list(range(len(tasks))) and set(counts.values()) == {1}, "a run lost or reported twice"
    assert [r for _, r in sorted(got, key=lambda p: p[0])] == expected


def _fail_on(victim: sweep.Task) -> Any:
    def run(task: sweep.Task) -> Any:
        if task == victim:
            raise SimulationError("the engine failed on this one")
        return sweep.run_flows(task)

    return run


def test_a_failing_run_fails_the_sweep_with_its_own_error(cluster: Any, tmp_path: Path) -> None:
    tasks = sweep.plan(sweep.load(write_sweep(tmp_path)))
    with pytest.raises(SimulationError, match="the engine failed on this one"):
        DaskBackend(cluster.scheduler_address).run(_fail_on(tasks[5]), tasks, lambda i, r: None)


def test_resume_through_the_cluster_runs_only_what_is_missing(cluster: Any, tmp_path: Path, monkeypatch) -> None:
    path = write_sweep(tmp_path)
    full, part = tmp_path / "full", tmp_path / "part"
    assert invoke(["sweep", str(path), "--out", str(full), "-q", "--jobs", "1"]).exit_code == 0
    with monkeypatch.context() as m:
        m.setattr(sweep_cmd, "LocalBackend", StopAfter(10))
        assert invoke(["sweep", str(path), "--out", str(part), "-q", "--jobs", "1"]).exit_code == 130
    sent: list[int] = []
    real = DaskBackend.run
    monkeypatch.setattr(DaskBackend, "run", lambda self, fn, tasks, on_result: sent.append(len(tasks))
                        or real(self, fn, tasks, on_result))
    resumed = invoke(["sweep", str(path), "--out", str(part), "-q", "--resume", "--backend", "dask",
                      "--address", cluster.scheduler_address])
    assert resumed.exit_code == 0, resumed.stderr
    assert sent == [32 - 10]
    for name in ("runs.csv", "summary.csv"):
        assert (part / name).read_bytes() == (full / name).read_bytes(), name


def test_the_python_api_takes_the_backend_and_connects_once(cluster: Any) -> None:
    base = ROOT / "scenarios" / "tcp-radio" / "base.toml"
    grid = {"flow.transfer.size": ["3KB", "10KB"]}
    local = hetpath.sweep(base, grid=grid, seeds=3, backend=LocalBackend(1))
    with DaskBackend(cluster.scheduler_address) as backend:
        first = hetpath.sweep(base, grid=grid, seeds=3, backend=backend)
        again = hetpath.sweep(base, grid=grid, seeds=3, backend=backend)
    assert first.runs.equals(local.runs) and again.summary.equals(local.summary)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("args, expect", [
    (["--backend", "dask", "--address", "tcp://127.0.0.1:{port}"], "tcp://127.0.0.1:{port}: no answer within 1 s"),
    (["--backend", "dask", "--address", "nonsense"], "address 'nonsense': missing port"),
    (["--address", "tcp://127.0.0.1:8786"], "--address is the Dask scheduler's: give it with --backend dask"),
    (["--backend", "dask", "--address", "tcp://127.0.0.1:8786", "--jobs", "1"], "--jobs sets worker processes"),
    (["--backend", "ray"], "'ray' is not one of 'local', 'dask'"),
])
def test_an_unusable_cluster_is_one_line_and_exit_2(tmp_path: Path, monkeypatch, args, expect) -> None:
    monkeypatch.setattr(DaskBackend, "CONNECT_TIMEOUT_S", 1.0)
    port = _free_port()
    t0 = time.monotonic()
    result = invoke(["sweep", str(write_sweep(tmp_path)), "--out", str(tmp_path / "o"), "-q",
                     *[a.format(port=port) for a in args]])
    assert result.exit_code == 2
    line, = result.stderr.splitlines()
    assert line.startswith("hetpath: error: ") and expect.format(port=port) in line, line
    assert time.monotonic() - t0 < 15
    assert not (tmp_path / ".o.partial").exists(), "nothing is made before the cluster answers"


def test_without_dask_installed_the_error_says_what_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails as if not installed
    result = invoke(["sweep", str(write_sweep(tmp_path)), "--backend", "dask", "-q"])
    assert result.exit_code == 2
    line, = result.stderr.splitlines()
    assert "pip install 'hetpath[cluster]'" in line


def test_a_worker_of_another_version_is_refused(cluster: Any, monkeypatch) -> None:
    monkeypatch.setattr(hetpath, "__version__", "0.0.0-elsewhere")  # this process only: workers keep theirs
    with pytest.raises(ClusterError, match=r"worker tcp://127\.0\.0\.1:\d+ runs hetpath .*0\.0\.0-elsewhere"):
        DaskBackend(cluster.scheduler_address).__enter__()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_ctrl_c_at_the_terminal_stops_the_local_cluster_and_says_how_to_resume(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal sends it: the cluster's workers get
    it too, print nothing, and are gone after the sweep."""
    path = write_sweep(tmp_path)
    path.write_text(SWEEP.replace("seeds = 4", "seeds = 400"))  # 3,200 runs: long enough to interrupt
    proc = subprocess.Popen([sys.executable, "-m", "hetpath", "sweep", str(path), "--out", str(tmp_path / "o"),
                             "--backend", "dask", "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 60
        store = tmp_path / ".o.partial" / "results.jsonl"
        while time.monotonic() < deadline and not (store.exists() and store.stat().st_size > 0):
            time.sleep(0.1)
        workers = [p for p in _children(proc.pid) if _alive(p)]
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "resume with: hetpath sweep" in err and "--backend dask --resume" in err
    assert store.read_text().count("\n") > 0
    time.sleep(0.5)
    assert workers and not [p for p in workers if _alive(p)], "worker processes outlived the sweep"
