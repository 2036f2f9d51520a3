"""Fuzz target of the sweep parser: ``hetpath.sweep.load`` and
``load_experiments`` on any bytes, then ``plan`` when the grid is small.

The sweep parser is Python, so this runs under Atheris (libFuzzer for Python: coverage-
guided, same options and statistics as the cargo-fuzz targets) instead of cargo-fuzz.
A finding is any exception that is not one of hetpath's own errors: a user's mistake must
end in a ``HetpathError`` (one line, exit 2), never a traceback.

    bench/fuzz.sh SECONDS sweep_load        # installs atheris into .venv if missing

The input is read as UTF-8 (a stray byte replaced, as in a user's file) and named
``fuzz.toml`` in a temporary directory holding ``base.toml``, a small base scenario
(two nodes, a link ``l``, a flow ``f``): a real one would spend most of each execution
parsing its own TOML, the same work every time. The seed corpus is ``fuzz/python/corpus``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["hetpath"]):
    from hetpath import sweep
    from hetpath.errors import HetpathError

BASE = """[scenario]
name = "base"
duration = "10s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "1Mbps"
delay = "10ms"
[[flow]]
name = "f"
from = "a"
to = "b"
size = "10kB"
"""
HOME = Path(tempfile.mkdtemp(prefix="hetpath-fuzz-"))
(HOME / "base.toml").write_text(BASE)
SWEEP = HOME / "fuzz.toml"
#: Largest grid whose every point is built and validated (each takes a scenario build).
PLAN_AT_MOST = 8


def one_input(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        spec = sweep.load(SWEEP, text)
        if sweep.run_count(spec) <= PLAN_AT_MOST:
            sweep.plan(spec)
    except HetpathError:
        pass
    try:
        for spec in sweep.load_experiments(SWEEP, text).values():
            if sweep.run_count(spec) <= PLAN_AT_MOST:
                sweep.plan(spec)
    except HetpathError:
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
