"""What the live benches (live_emulator.py, live_pep.py, live_crosscheck.py) share as
commands: hetpath's errors as one line on stderr, exit 2 for bad input, 1 for a failure;
and how a bench ends (the load after, its table, its JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional


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


def finish(result: dict, print_table: Callable[[dict], None], json_path: Optional[Path]) -> int:
    """Records the load average after the runs, prints the table, writes every run to
    `json_path` if given; 0, main()'s status."""
    result["load_after"] = os.getloadavg()
    print_table(result)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2) + "\n")
    return 0
