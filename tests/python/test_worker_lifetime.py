"""A sweep's worker processes end with the sweep: killed outright (SIGKILL), it leaves none
behind; and when a sweep stops on an error, its workers print nothing (one line on stderr)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
from hetpath import _worker_lifetime
from hetpath.backends import LocalBackend
from helpers import default_signals
from test_sweep_resume import SLOW_BASE, _alive, _children

DATA = Path(__file__).parent / "data"

#: One quick run and one that never ends per seed: the store shows the workers are up
#: and running, and they are busy when the sweep is killed.
KILLED_SWEEP = """[sweep]
scenario = "base.toml"
seeds = 4
[grid]
"scenario.duration" = ["1s", "100000s"]
"""

#: 40 quick runs: still running when the first result fails to be stored.
QUICK_SWEEP = """[sweep]
scenario = "small.toml"
seeds = 20
[grid]
"link.sat.rate" = ["2Mbps", "10Mbps"]
"""

needs_two_cores = pytest.mark.skipif(
    not Path("/proc").is_dir() or len(os.sched_getaffinity(0)) < 2, reason="needs /proc and 2 cores")


def _wait(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def _kill_all(pids: list[int]) -> None:
    """Ends the processes this test started that are still there (a failed test)."""
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _killed_sweep_leaves_no_worker(tmp_path: Path, backend: list[str]) -> None:
    (tmp_path / "base.toml").write_text(SLOW_BASE)
    (tmp_path / "sweep.toml").write_text(KILLED_SWEEP)
    store = tmp_path / ".o.partial" / "results.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "hetpath", "sweep", str(tmp_path / "sweep.toml"),
                             "--out", str(tmp_path / "o"), "--jobs", "2", "-q", *backend],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=default_signals)
    workers: list[int] = []
    try:
        assert _wait(lambda: store.is_file() and store.stat().st_size > 0, 120), "no run finished"
        workers = [p for p in _children(proc.pid) if _alive(p)]
        assert len(workers) >= 2, "the sweep started no workers"
        time.sleep(0.5)  # the workers take the next batches: the endless runs
        proc.kill()
        proc.wait()
        _wait(lambda: not [p for p in workers if _alive(p)], 5)
        left = [p for p in workers if _alive(p)]
        assert not left, f"worker processes {left} outlived the killed sweep by 5 s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_all(workers)


@needs_two_cores
def test_local_workers_die_when_the_sweep_is_killed(tmp_path: Path) -> None:
    _killed_sweep_leaves_no_worker(tmp_path, [])


@needs_two_cores
def test_dask_workers_die_when_the_sweep_is_killed(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    _killed_sweep_leaves_no_worker(tmp_path, ["--backend", "dask"])


def _death_signal(_task: int) -> int:
    """The signal the kernel sends this process when its parent dies (0: none)."""
    import ctypes

    value = ctypes.c_int(0)
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(_worker_lifetime.PR_GET_PDEATHSIG, ctypes.byref(value), 0, 0, 0) == 0
    return value.value


@pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                    reason="prctl is Linux's; needs 2 cores")
@pytest.mark.parametrize("where", ["main thread", "other thread"])
def test_workers_die_with_their_parent_whichever_thread_runs_the_sweep(where: str) -> None:
    """Each worker holds the death signal, and a sweep run from a thread of a program
    gets every result: the signal is tied to the thread that forked the worker, which is
    the one that runs the sweep, so no worker is ended while the sweep needs it."""
    results: dict[int, int] = {}

    def sweep() -> None:
        LocalBackend(2).run(_death_signal, list(range(40)), results.__setitem__)

    if where == "main thread":
        sweep()
    else:
        thread = threading.Thread(target=sweep)
        thread.start()
        thread.join(120)
        assert not thread.is_alive()
    assert results == {i: signal.SIGKILL for i in range(40)}


def test_a_worker_whose_parent_died_before_it_was_set_up_exits_at_once() -> None:
    """Parent gone before the death signal was set: the kernel would never send it, so a
    worker whose parent is not the one it was told exits there and then."""
    code = ("from hetpath._worker_lifetime import die_with_parent; import os; "
            "die_with_parent(os.getppid() + 1 if os.getppid() != 1 else 2); print('still here')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "still here" not in res.stdout, (res.returncode, res.stdout, res.stderr)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_the_polling_fallback_ends_a_process_whose_parent_died(tmp_path: Path) -> None:
    """Where the kernel cannot be asked (not Linux), and for the Dask workers, a thread
    polls for the parent."""
    child = ("from hetpath._worker_lifetime import watch_parent; import time; "
             "watch_parent(0.1); print('ready', flush=True); time.sleep(120)")
    middle = (f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', {child!r}]); "
              "print(p.pid, flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", middle], stdout=subprocess.PIPE, text=True)
    grandchild = 0
    try:
        grandchild = int(proc.stdout.readline())
        assert proc.stdout.readline() == "ready\n"  # watching (its stdout is the middle one's)
        proc.kill()
        proc.wait()
        assert _wait(lambda: not _alive(grandchild), 5), "the orphan outlived its parent by 5 s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        if grandchild:
            _kill_all([grandchild])


def _store_fails(kind: str, staging: Path) -> None:
    """A results store that cannot be written: the disk is full, or the name is taken."""
    staging.mkdir()
    store = staging / "results.jsonl"
    if kind == "full disk":
        store.symlink_to("/dev/full")
    elif kind == "directory":
        store.mkdir()
    else:
        os.mkfifo(store)


@needs_two_cores
@pytest.mark.parametrize("kind, backend", [("full disk", "local"), ("directory", "local"), ("fifo", "local"),
                                           ("full disk", "dask")])
def test_a_sweep_stopped_by_a_write_error_prints_one_line(tmp_path: Path, kind: str, backend: str) -> None:
    """The workers stopped mid-run print no traceback (local ones used to inherit the
    command's SIGTERM handler, and were stopped with SIGTERM)."""
    if kind == "full disk" and not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    if backend == "dask":
        pytest.importorskip("distributed")
    (tmp_path / "small.toml").write_text((DATA / "small.toml").read_text())
    (tmp_path / "sweep.toml").write_text(QUICK_SWEEP)
    _store_fails(kind, tmp_path / ".o.partial")
    res = subprocess.run([sys.executable, "-m", "hetpath", "sweep", str(tmp_path / "sweep.toml"), "--out",
                          str(tmp_path / "o"), "--jobs", "2", "-q", "--resume", "--backend", backend],
                         capture_output=True, text=True, timeout=300, preexec_fn=default_signals)
    assert res.returncode in (1, 2), res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetpath: error: "), res.stderr


@needs_two_cores
def test_sigterm_to_the_process_group_stops_the_sweep_with_one_line(tmp_path: Path) -> None:
    """SIGTERM to the whole group (a service manager, ``kill -- -PGID``): the workers end
    quietly and the sweep says how to resume."""
    (tmp_path / "base.toml").write_text(SLOW_BASE)
    (tmp_path / "sweep.toml").write_text(KILLED_SWEEP)
    store = tmp_path / ".o.partial" / "results.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "hetpath", "sweep", str(tmp_path / "sweep.toml"),
                             "--out", str(tmp_path / "o"), "--jobs", "2", "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=default_signals)
    workers: list[int] = []
    try:
        assert _wait(lambda: store.is_file() and store.stat().st_size > 0, 120), "no run finished"
        workers = [p for p in _children(proc.pid) if _alive(p)]
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        _kill_all(workers)
    assert proc.returncode == 143, err
    lines = err.splitlines()
    assert len(lines) == 1 and "resume with: hetpath sweep" in lines[0], err
