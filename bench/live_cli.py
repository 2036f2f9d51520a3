"""What the live benches (live_emulator.py, live_pep.py, live_crosscheck.py) share as
commands: hetpath's errors as one line on stderr, exit 2 for bad input, 1 for a failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable


def run(main: Callable[[], int]) -> None:
    """Exits with main()'s status, a failure reported in one line named after the script."""
    from hetpath.errors import HetpathError, ScenarioError

    prog = Path(sys.argv[0]).name
    try:
        code = main()
    except ScenarioError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        code = 2
    except (HetpathError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        code = 1
    sys.exit(code)
