"""One writer per output directory (the lock of hetpath.outdir), no empty staging
directory left by a failed command, and no truncated file left by a write error."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from hetpath import outdir
from hetpath.store import ResultsStore
from helpers import default_signals, invoke

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "scenarios" / "examples"
SMALL = Path(__file__).parent / "data" / "small.toml"
SWEEP = '[sweep]\nscenario = "base.toml"\nseeds = 2\n'


def _hetpath(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hetpath", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_signals, **kw)


def _stopped_holding(args: list[str], out: Path) -> subprocess.Popen:
    """A ``hetpath`` command started and stopped (SIGSTOP) once it has made ``out``'s
    staging directory: from then on it holds ``out``, whatever the machine's speed."""
    proc = _hetpath(*args)
    staging = outdir.staging_path(out)
    deadline = time.monotonic() + 60
    while not staging.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out_, err = proc.communicate()
            pytest.fail(f"the first command never made {staging}: exit {proc.returncode}: {err}")
        time.sleep(0.005)
    proc.send_signal(signal.SIGSTOP)
    return proc


def _finish(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGCONT)
    try:
        return proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()


def _lock_file(out: Path) -> Path:
    """Where the lock of output directory ``out`` is (docs/guide.md, section 3)."""
    return out.parent / f".{out.name}.lock"


def json_scenario(out: Path) -> str:
    return json.loads((out / "summary.json").read_text())["scenario"]


def _write_sweep(tmp_path: Path) -> Path:
    (tmp_path / "base.toml").write_text(SMALL.read_text())
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    return path


def test_a_second_run_into_the_same_out_is_refused_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "D"
    first = _stopped_holding(["run", str(EXAMPLES / "geo-loss.toml"), "--pcap", "--no-plots", "--out", str(out), "-q"],
                             out)
    try:
        second = subprocess.run([sys.executable, "-m", "hetpath", "run", str(EXAMPLES / "geo-clean.toml"),
                                 "--no-plots", "--out", str(out), "-q"], capture_output=True, text=True, timeout=300)
    finally:
        _, err = _finish(first)
    assert first.returncode == 0, err
    assert second.returncode == 2, second.stderr
    line, = second.stderr.splitlines()
    assert line.startswith("hetpath: error: ") and str(out) in line and f"pid {first.pid}" in line
    # D holds the first run's files, all of them and nothing else.
    assert json_scenario(out) == "geo-loss"
    listed = set((out / outdir.MANIFEST).read_text().split())
    assert {p.name for p in out.iterdir()} == listed | {outdir.MANIFEST}
    assert any(name.endswith(".pcap") for name in listed)
    assert not outdir.staging_path(out).exists() and not _lock_file(out).exists()


def test_a_sweep_into_an_out_a_run_holds_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "D"
    first = _stopped_holding(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"], out)
    try:
        result = invoke(["sweep", str(_write_sweep(tmp_path)), "--out", str(out), "-q", "--jobs", "1"])
    finally:
        _, err = _finish(first)
    assert first.returncode == 0, err
    assert result.exit_code == 2
    line, = result.stderr.splitlines()
    assert str(out) in line and f"pid {first.pid}" in line
    assert json_scenario(out) == "small" and not (out / "runs.csv").exists()


def test_reproduce_is_refused_while_another_process_holds_its_out(tmp_path: Path) -> None:
    out = tmp_path / "R"
    first = _stopped_holding(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"], out)
    try:
        result = invoke(["reproduce", "tcp-radio", "--quick", "--out", str(out), "-q"])
    finally:
        _finish(first)
    assert result.exit_code == 2 and f"pid {first.pid}" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_emulate_is_refused_while_another_process_holds_its_out(tmp_path: Path) -> None:
    """Refused before any namespace is made (the lock is taken first), so this needs
    neither root nor hetpath-live."""
    out = tmp_path / "E"
    first = _stopped_holding(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"], out)
    try:
        result = invoke(["emulate", str(SMALL), "--link", "sat", "--out", str(out), "--", "true"])
    finally:
        _finish(first)
    assert result.exit_code == 2 and f"pid {first.pid}" in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_stale_lock_is_taken_over_with_a_notice(tmp_path: Path) -> None:
    out = tmp_path / "D"
    lock = _lock_file(out)
    pid = _dead_pid()
    lock.write_text(f"{pid}\n")
    result = invoke(["run", str(SMALL), "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    notice = [ln for ln in result.stderr.splitlines() if "stale lock" in ln]
    assert len(notice) == 1 and str(pid) in notice[0] and str(lock) in notice[0], result.stderr
    assert json_scenario(out) == "small"
    assert not lock.exists()


def test_a_killed_holder_leaves_a_lock_the_next_command_takes(tmp_path: Path) -> None:
    out = tmp_path / "D"
    first = _stopped_holding(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"], out)
    first.kill()
    first.communicate()
    result = invoke(["run", str(SMALL), "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert f"pid {first.pid}" in result.stderr and "stale lock" in result.stderr
    assert json_scenario(out) == "small"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds the worker in /proc")
def test_a_lock_held_by_the_workers_of_a_dead_command_says_so(tmp_path: Path) -> None:
    """A command's forked workers inherit its lock: while they outlive it, the output is
    still being written, and the error says whose pid it names."""
    out = tmp_path / "D"
    holder = subprocess.Popen([sys.executable, "-c", """if True:
        import os, sys, time
        from pathlib import Path
        from hetpath import outdir
        outdir.prepare(Path(sys.argv[1]))
        if os.fork() == 0:
            os.close(1)
            time.sleep(60)
            os._exit(0)
        print(os.getpid(), flush=True)
        """, str(out)], stdout=subprocess.PIPE, text=True)
    with holder.stdout:
        pid = int(holder.stdout.readline())
    holder.wait()  # the workers' parent has exited (and is reaped), its worker holds on
    lock = _lock_file(out)
    try:
        result = invoke(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"])
    finally:
        for p in _holders(lock):
            os.kill(p, signal.SIGKILL)
    assert result.exit_code == 2
    line, = result.stderr.splitlines()
    assert f"pid {pid}, which has exited" in line and "still hold the lock" in line


def _holders(lock: Path) -> list[int]:
    """The processes with ``lock`` open (from /proc)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if any(os.readlink(fd) == str(lock) for fd in (d / "fd").iterdir()):
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def test_quiet_takes_over_a_stale_lock_without_a_note(tmp_path: Path) -> None:
    out = tmp_path / "D"
    _lock_file(out).write_text(f"{_dead_pid()}\n")
    result = invoke(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"])
    assert result.exit_code == 0 and result.stderr == ""


def test_the_lock_is_let_go_on_success_and_on_failure(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "D"
    lock = _lock_file(out)
    assert invoke(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"]).exit_code == 0
    assert not lock.exists()
    with monkeypatch.context() as m:
        m.setattr(pd.DataFrame, "to_csv", _full_disk)
        assert invoke(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"]).exit_code == 1
    assert not lock.exists() and os.path.abspath(lock) not in outdir._HELD
    # Another process can take it at once.
    probe = subprocess.run([sys.executable, "-c", "import sys; from hetpath import outdir; "
                            "outdir.prepare(__import__('pathlib').Path(sys.argv[1]))", str(out)],
                           capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr


def test_a_lock_removed_between_open_and_flock_is_taken_again(tmp_path: Path, monkeypatch) -> None:
    """The holder lets go (removes the file, then closes it) between this process's open
    and its flock: the flock succeeds on a file no one else will ever open, so acquire
    must notice and take the file the path names now."""
    from hetpath import outlock

    path = tmp_path / ".D.lock"
    real = outlock.fcntl.flock
    calls = []

    def flock(fd, op):
        calls.append(fd)
        if len(calls) == 1:
            os.unlink(path)
        return real(fd, op)

    monkeypatch.setattr(outlock.fcntl, "flock", flock)
    held = outlock.acquire(path)
    try:
        assert len(calls) == 2 and path.exists() and outlock._same_file(held._fd, path)
    finally:
        held.release()
    assert not path.exists()


def test_an_unwritable_lock_file_is_a_one_line_input_error(tmp_path: Path) -> None:
    out = tmp_path / "D"
    _lock_file(out).mkdir()
    result = invoke(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"])
    assert result.exit_code == 2
    line, = result.stderr.splitlines()
    assert str(out) in line and "lock" in line


# -- empty staging directories -------------------------------------------------------


def _full_disk(*_a, **_k):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_sweep_that_stored_nothing_leaves_no_staging_and_the_next_one_runs(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "D"
    path = _write_sweep(tmp_path)
    with monkeypatch.context() as m:
        m.setattr(ResultsStore, "add", lambda *a, **k: _full_disk())
        result = invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"])
    assert result.exit_code == 1 and "No space left" in result.stderr
    assert not outdir.staging_path(out).exists()
    result = invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"])
    assert result.exit_code == 0, result.stderr
    assert (out / "runs.csv").is_file()


@pytest.mark.parametrize("content", [None, "", '{"key": "k", "seed": 1, "res'])
def test_a_staging_directory_without_a_finished_run_is_not_an_interrupted_sweep(tmp_path: Path,
                                                                                content) -> None:
    out = tmp_path / "D"
    staging = outdir.staging_path(out)
    staging.mkdir()
    if content is not None:
        (staging / "results.jsonl").write_text(content)
    result = invoke(["sweep", str(_write_sweep(tmp_path)), "--out", str(out), "-q", "--jobs", "1"])
    assert result.exit_code == 0, result.stderr
    assert not staging.exists() and (out / "runs.csv").is_file()


def test_a_staging_directory_with_a_finished_run_is_still_refused_without_resume(tmp_path: Path) -> None:
    out = tmp_path / "D"
    staging = outdir.staging_path(out)
    staging.mkdir()
    store = ResultsStore(staging / "results.jsonl")
    store.add("k", 1, [])
    store.close()
    result = invoke(["sweep", str(_write_sweep(tmp_path)), "--out", str(out), "-q", "--jobs", "1"])
    assert result.exit_code == 2 and "--resume" in result.stderr
    assert staging.is_dir()


def test_an_interrupted_sweep_before_any_run_finished_leaves_no_staging(tmp_path: Path, monkeypatch) -> None:
    from hetpath import sweep

    def stop(_task):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "run_flows", stop)
    out = tmp_path / "D"
    result = invoke(["sweep", str(_write_sweep(tmp_path)), "--out", str(out), "-q", "--jobs", "1"])
    assert result.exit_code == 130
    assert not outdir.staging_path(out).exists() and not out.exists()


def test_a_failed_reproduce_leaves_no_staging(tmp_path: Path, monkeypatch) -> None:
    from hetpath.reproduce import tcp_radio

    def reproduce(ctx):
        (ctx.out_dir / "runs.csv").write_text("partial\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(ctx.out_dir / "runs.csv"))

    monkeypatch.setattr(tcp_radio, "reproduce", reproduce)
    out = tmp_path / "R"
    result = invoke(["reproduce", "tcp-radio", "--quick", "--out", str(out), "-q"])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert not outdir.staging_path(out).exists()
    assert not _lock_file(out).exists()


# -- files written outside a staging directory ---------------------------------------


def _half_then_full(real):
    """A writer that writes half the file, then finds the disk full."""

    def write(self, path, *a, **k):
        real(self, path, *a, **k)
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(size // 2)
        _full_disk()

    return write


@pytest.mark.parametrize("suffix, method", [(".csv", "to_csv"), (".parquet", "to_parquet")])
@pytest.mark.parametrize("existing", [False, True])
def test_a_write_error_leaves_no_truncated_trace(tmp_path: Path, monkeypatch, suffix, method, existing) -> None:
    trace = tmp_path / f"t{suffix}"
    if existing:
        trace.write_bytes(b"the previous trace\n")
    monkeypatch.setattr(pd.DataFrame, method, _half_then_full(getattr(pd.DataFrame, method)))
    result = invoke(["run", str(SMALL), "--trace", str(trace), "-q"])
    assert result.exit_code == 1
    line, = result.stderr.splitlines()
    assert str(trace) in line and "No space left" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ([trace.name] if existing else [])
    if existing:
        assert trace.read_bytes() == b"the previous trace\n"


def test_a_written_trace_has_the_usual_permissions(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    assert invoke(["run", str(SMALL), "--trace", str(trace), "-q"]).exit_code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert trace.stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]
    assert len(pd.read_csv(trace)) > 0


def test_a_write_error_leaves_no_truncated_report(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "D"
    assert invoke(["run", str(SMALL), "--no-plots", "--out", str(out), "-q"]).exit_code == 0
    real = Path.write_text

    def half(self, text, *a, **k):
        real(self, text[: len(text) // 2], *a, **k)
        _full_disk()

    monkeypatch.setattr(Path, "write_text", half)
    result = invoke(["report", str(out), "-q"])
    assert result.exit_code == 2 and "No space left" in result.stderr
    assert not (out / "report.html").exists()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
