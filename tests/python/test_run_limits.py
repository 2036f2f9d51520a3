"""Issue 17: a run that would overflow time or memory, or give wrong results, is a
one-line scenario error with exit 2 before it starts, naming the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAD = '[scenario]\nname = "x"\n{scenario}\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n'
LINK = '[[link]]\nname = "l"\na = "a"\nb = "b"\nrate = "1Mbps"\ndelay = "1ms"\n'
FLOW = '[[flow]]\nname = "f"\nfrom = "a"\nto = "b"\ncc = "{cc}"\nsize = "10kB"\n'


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (HEAD.format(scenario='duration = "10000000000s"') + LINK, "scenario.duration"),
        (HEAD.format(scenario='duration = "10000000s"') + LINK, "scenario.max_samples"),
        (HEAD.format(scenario='duration = "10s"\nmax_samples = 10') + LINK, "scenario.max_samples"),
        (HEAD.format(scenario='duration = "10s"') + LINK + FLOW.format(cc="xcp"), "flow[0] 'f'.cc"),
        (HEAD.format(scenario='duration = "10s"') + LINK + FLOW.format(cc="cubic")
         + '[[agent]]\nkind = "split-pep"\nnode = "b"\n', "agent[0].node"),
    ],
)
def test_exit_2_with_one_line_naming_the_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "hetpath", "run", str(path), "-q", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"bad.toml: {key}:" in lines[0]
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
