"""Small helpers shared by test modules."""

from __future__ import annotations

import inspect
import subprocess
from typing import Any, Sequence

from click.testing import CliRunner, Result
from hetpath import _bridge
from hetpath.cli import main

# The result schema as the engine defines it (hetpath_sim::results): never a copy.
SCHEMA = _bridge.schema()
SUMMARY_KEYS = SCHEMA["summary"]
FLOW_KEYS = SCHEMA["flow"]
LINK_KEYS = SCHEMA["link"]
LEG_KEYS = SCHEMA["leg"]
FLOW_SERIES_COLS = SCHEMA["flow_series"]
LINK_SERIES_COLS = SCHEMA["link_series"]


def _runner() -> CliRunner:
    # click >= 8.2 always captures stderr separately; 8.1 (Python 3.9) needs asking.
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    return CliRunner()


def invoke(args: Sequence[str], **kw: Any) -> Result:
    """Run the CLI in-process with stdout and stderr captured separately."""
    return _runner().invoke(main, list(args), catch_exceptions=False, **kw)


def without_wall_time(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary minus the one key that legitimately differs between identical runs."""
    return {k: v for k, v in summary.items() if k != "wall_time_s"}


def netns_unavailable(probe: str) -> str | None:
    """Why a test cannot create a network namespace here (tried with one named `probe`,
    removed at once), or None."""
    res = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if res.returncode != 0:
        return f"cannot create a network namespace: {res.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def live_binary() -> str | None:
    """The installed ``hetpath-live`` (``hetpath.live.find_binary``), or None."""
    from hetpath import live

    try:
        return live.find_binary()
    except live.LiveError:
        return None


def pep_unavailable(probe: str) -> str | None:
    """Why the PEP's namespace tests cannot run here (live mode, the binary, a namespace
    named `probe`), or None. The daemon programs nf_tables over netlink: no ``nft``."""
    from hetpath import live

    why = live.unavailable()
    if why:
        return why
    if live_binary() is None:
        return "hetpath-live is not installed (scripts/setup.sh)"
    return netns_unavailable(probe)
