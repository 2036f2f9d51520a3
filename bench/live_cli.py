"""What the live benches (live_emulator.py, live_pep.py, live_crosscheck.py,
sim_vs_kernel.py) share as commands: hetpath's errors as one line on stderr, exit 2 for
bad input, 1 for a failure, 130/143 when interrupted by SIGINT/SIGTERM (after the
namespaces and processes the run made are gone: a SIGTERM unwinds like Ctrl-C); how a bench ends (the load after, its table, its JSON); and
one kernel TCP transfer across an emulated link (:func:`kernel_transfer`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional


def run(main: Callable[[], int]) -> None:
    """Exits with main()'s status, a failure reported in one line named after the script."""
    from hetpath.errors import HetpathError, ScenarioError

    prog = Path(sys.argv[0]).name
    signal.signal(signal.SIGTERM, _terminated)
    try:
        code = main()
    except Terminated:
        print(f"{prog}: terminated; the run's namespaces and processes are removed", file=sys.stderr)
        code = 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; the run's namespaces and processes are removed", file=sys.stderr)
        code = 128 + signal.SIGINT
    except ScenarioError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        code = 2
    except (HetpathError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        code = 1
    sys.exit(code)


class Terminated(BaseException):
    """SIGTERM, raised where the bench is so that its ``with`` blocks (testbeds,
    emulations, PEPs) clean up, as they do for Ctrl-C; Python's default would end the
    process at once and leave them behind."""


def _terminated(signum: int, frame: object) -> None:
    # Once: a second SIGTERM must not cut the clean-up the first one started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


def finish(result: dict, print_table: Callable[[dict], None], json_path: Optional[Path]) -> int:
    """Records the load average after the runs, prints the table, writes every run to
    `json_path` if given; 0, main()'s status."""
    result["load_after"] = os.getloadavg()
    print_table(result)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2) + "\n")
    return 0


#: The traffic programs (a sender and a sink of a sized transfer) and the sink's port.
TRAFFIC = str(Path(__file__).resolve().parent / "live_traffic.py")
PORT = 5001


def kernel_transfer(emu, size: int, cc: str, timeout: float) -> tuple[dict, dict, float]:  # type: ignore[no-untyped-def]
    """``size`` bytes from side a to side b of a running ``live.Emulation`` with kernel TCP
    controller ``cc``: (what the sender reported, what the sink reported, seconds from just
    before the connection opened to the last byte's arrival)."""
    from hetpath import live

    sink = emu.popen("b", [sys.executable, TRAFFIC, "sink", str(PORT), str(timeout)],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    res = emu.run("a", [sys.executable, TRAFFIC, "send", live.ADDR_B, str(PORT), str(size), "--cc", cc],
                  capture_output=True, text=True, timeout=timeout + 30)
    got = json.loads(sink.communicate(timeout=timeout + 30)[0])
    if res.returncode != 0:
        raise RuntimeError(f"the sender failed: {res.stderr.strip()}")
    sent = json.loads(res.stdout)
    return sent, got, got["t_end"] - sent["t0"]
