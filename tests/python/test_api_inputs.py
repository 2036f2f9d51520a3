"""The Python API under any argument: a result or a hetpath exception, never a
``TypeError``, ``AttributeError`` or ``RecursionError`` from inside; NumPy numbers taken
where Python numbers are; Ctrl-C reaching a run in any thread."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import hetpath
from hetpath import HetpathError, Scenario
from hetpath import sweep as sweep_mod
from hetpath.backends import LocalBackend
from hetpath.backends_dask import DaskBackend

from helpers import default_signals, without_wall_time



def _nested_dict(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    here = top
    for _ in range(depth):
        here["a"] = {}
        here = here["a"]
    return top


def _nested_list(depth: int) -> list[Any]:
    top: list[Any] = []
    here = top
    for _ in range(depth):
        here.append([])
        here = here[0]
    return top


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


#: Values no argument of the API expects (some are good for one argument or another:
#: those calls simply run).
ODD_VALUES = [None, 3, 2.5, math.nan, math.inf, -1, True, b"x", object(), [1], {"a": 1},
              _nested_dict(5000), _nested_list(5000), np.int64(3), np.float64(math.nan), np.array([1, 2]),
              {1}, 2**70, "", "\x00", lambda: 1, _BadRepr()]


def small() -> Scenario:
    return (Scenario("x", duration="1s").node("a").node("b")
            .link("l", "a", "b", rate="1Mbps", delay="10ms").flow("f", "a", "b", size="10KB"))


def one_job_sweep(**kw: Any) -> Any:
    kw.setdefault("backend", LocalBackend(1))
    return hetpath.sweep(kw.pop("scenario", small()), **kw)



RESULT = hetpath.run(small(), trace=True)

#: Every public function and argument, as a call of one value.
CALLS: dict[str, Callable[[Any], Any]] = {
    "run(scenario)": lambda v: hetpath.run(v),
    "run(seed)": lambda v: hetpath.run(small(), seed=v),
    "run(pcap_dir)": lambda v: hetpath.run(small(), pcap_dir=v),
    "run(progress)": lambda v: hetpath.run(small(), progress=v),
    "run(trace)": lambda v: hetpath.run(small(), trace=v),
    "run(check)": lambda v: hetpath.run(small(), check=v),
    "validate(scenario)": lambda v: hetpath.validate(v),
    "Scenario(name)": lambda v: Scenario(v).validate(),
    "Scenario(duration)": lambda v: Scenario("x", duration=v).validate(),
    "Scenario(seed)": lambda v: Scenario("x", seed=v).validate(),
    "Scenario(**settings)": lambda v: Scenario("x", extra=v).to_toml(),
    "Scenario.node(name)": lambda v: Scenario("x").node(v).validate(),
    "Scenario.node(**settings)": lambda v: Scenario("x").node("a", foo=v).validate(),
    "Scenario.link(rate)": lambda v: small().link("m", "a", "b", rate=v, delay="1ms").validate(),
    "Scenario.link(ab)": lambda v: small().link("m", "a", "b", rate="1Mbps", delay="1ms", ab=v).validate(),
    "Scenario.flow(cc)": lambda v: small().flow("g", "a", "b", cc=v).validate(),
    "Scenario.flow(tcp)": lambda v: small().flow("g", "a", "b", tcp=v).validate(),
    "Scenario.tcp(**defaults)": lambda v: small().tcp(x=v).validate(),
    "Scenario.from_dict(data)": lambda v: Scenario.from_dict(v).validate(),
    "Scenario.load(path)": lambda v: Scenario.load(v),
    "Scenario.save(path)": lambda v: small().save(v),
    "sweep(scenario)": lambda v: one_job_sweep(scenario=v),
    "sweep(grid)": lambda v: one_job_sweep(grid=v),
    "sweep(grid values)": lambda v: one_job_sweep(grid={"link.l.rate": v}),
    "sweep(grid value)": lambda v: one_job_sweep(grid={"link.l.rate": [v]}),
    "sweep(seeds)": lambda v: one_job_sweep(seeds=v),
    "sweep(seeds list)": lambda v: one_job_sweep(seeds=[v]),
    "sweep(protocols)": lambda v: one_job_sweep(protocols=v),
    "sweep(protocol value)": lambda v: one_job_sweep(protocols={"p": {"flow.f.cc": v}}),
    "sweep(flows)": lambda v: one_job_sweep(flows=v),
    "sweep(backend)": lambda v: hetpath.sweep(small(), backend=v),
    "sweep(progress)": lambda v: one_job_sweep(progress=v),
    "sweep.load(path)": lambda v: sweep_mod.load(v),
    "sweep.load(text)": lambda v: sweep_mod.load("s.toml", text=v),
    "sweep.plan(sweep)": lambda v: sweep_mod.plan(v),
    "sweep.run(tasks)": lambda v: sweep_mod.run(v, LocalBackend(1)),
    "LocalBackend(jobs)": lambda v: LocalBackend(v),
    "DaskBackend(workers)": lambda v: DaskBackend(workers=v),
    "Result.table(name)": lambda v: RESULT.table(v),
    "Result.write(out_dir)": lambda v: RESULT.write(v),
    "Result.plot(out_dir)": lambda v: RESULT.plot(v),
    "Result.plot(formats)": lambda v: RESULT.plot("plots", formats=v),
    "Result.write_trace(path)": lambda v: RESULT.write_trace(v),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_any_argument_gives_a_result_or_a_hetpath_error(call: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # where a value that is a good relative path writes
    escaped = []
    for value in ODD_VALUES:
        try:
            CALLS[call](value)
        except HetpathError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 2000, str(exc)
        except BaseException as exc:  # noqa: BLE001 - the point: which escaped
            escaped.append(f"{type(value).__name__}: {type(exc).__name__}: {str(exc)[:120]}")
    assert not escaped, "\n".join(escaped)


def test_numpy_integers_are_worker_counts() -> None:
    assert LocalBackend(np.int64(1)).jobs == 1 and DaskBackend(workers=np.int32(1)).workers == 1


def test_numpy_integers_are_seeds() -> None:
    assert without_wall_time(hetpath.run(small(), seed=np.int64(7)).summary) == \
        without_wall_time(hetpath.run(small(), seed=7).summary)
    assert hetpath.run(small(), seed=np.uint64(2**64 - 1)).seed == 2**64 - 1
    out = one_job_sweep(seeds=np.arange(1, 3))
    assert list(out.runs["seed"]) == [1, 2] and all(type(s) is int for s in out.runs["seed"].tolist())


def test_numpy_values_in_a_scenario_are_python_numbers() -> None:
    sc = small().link("m", "a", "b", rate=np.int64(1_000_000), delay="5ms", queue=np.int32(20))
    text = sc.to_toml()
    assert "rate = 1000000" in text and "queue = 20" in text
    out = one_job_sweep(grid={"beta": [{"label": b, "flow.f.cc": {"name": "cubic", "beta": b}}
                                       for b in np.array([0.5, 0.75])]})
    assert out.summary["beta"].tolist() == [0.5, 0.75] and set(out.runs["cc"]) == {"cubic"}


def test_deep_nesting_is_refused_naming_the_limit() -> None:
    with pytest.raises(hetpath.ArgumentError, match="nested more than 64 levels"):
        Scenario.from_dict({"scenario": _nested_dict(100)})
    with pytest.raises(hetpath.ArgumentError, match=r"grid.*nested more than 64 levels"):
        hetpath.sweep(small(), grid={"a": [_nested_list(100)]})


def test_wrong_types_name_the_call_and_argument() -> None:
    with pytest.raises(hetpath.ArgumentError, match=r"hetpath.run\(\): seed: expected an integer"):
        hetpath.run(small(), seed=1.5)
    with pytest.raises(hetpath.ArgumentError, match=r"hetpath.run\(\): progress: expected a function"):
        hetpath.run(small(), progress=3)
    with pytest.raises(hetpath.ArgumentError, match=r"<x>.link\[1\].ab: expected a string, number.*set"):
        small().link("m", "a", "b", rate="1Mbps", delay="1ms", ab={1}).validate()
    # Also the Python exceptions a caller may already catch.
    with pytest.raises(TypeError):
        hetpath.run(small(), seed="1")
    with pytest.raises(ValueError):
        hetpath.run(small(), seed=-1)


_THREAD_RUN = textwrap.dedent("""
    import sys, threading
    import hetpath
    sc = (hetpath.Scenario("long", duration="100000s").node("a").node("b")
          .link("l", "a", "b", rate="100Mbps", delay="10ms", queue="100pkt").flow("f", "a", "b"))
    outcome = []
    done = threading.Event()

    def running(now, end):
        if not outcome:
            outcome.append("running")
            print("running", flush=True)

    def work():
        try:
            hetpath.run(sc, progress=running)
            outcome.append("finished")
        except KeyboardInterrupt:
            outcome.append("interrupted")
        done.set()

    threading.Thread(target=work, daemon=True).start()
    try:
        done.wait()
    except KeyboardInterrupt:
        done.wait(20)
    print(outcome[-1] if len(outcome) > 1 else "still running", flush=True)
""")


#: The same with a sweep on two worker processes: one short run (it reports progress),
#: then long ones; the thread waits for its workers when Ctrl-C comes.
_THREAD_SWEEP = _THREAD_RUN.replace("hetpath.run(sc, progress=running)", (
    'hetpath.sweep(sc, grid={"scenario.duration": ["1s", "3000s"]}, seeds=2, '
    "backend=hetpath.backends.LocalBackend(2), progress=running)")).replace(
    "import hetpath\n", "import hetpath\nimport hetpath.backends\n")


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="worker processes need 2 cores")
@pytest.mark.parametrize("script_text", [_THREAD_RUN, _THREAD_SWEEP], ids=["run", "sweep with workers"])
def test_ctrl_c_stops_a_run_in_another_thread(tmp_path: Path, script_text: str) -> None:
    script = tmp_path / "thread_run.py"
    script.write_text(script_text)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_signals)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "running"  # in the engine's loop
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out.strip() == "interrupted", (out, err)
    assert time.monotonic() - t0 < 10


def test_a_handler_the_program_set_is_left_alone(tmp_path: Path) -> None:
    script = tmp_path / "own_handler.py"
    script.write_text("import signal\nmine = lambda *a: None\nsignal.signal(signal.SIGINT, mine)\n"
                      "import hetpath\nprint(signal.getsignal(signal.SIGINT) is mine)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                         preexec_fn=default_signals)
    assert out.stdout.strip() == "True", out.stderr
