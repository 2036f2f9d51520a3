"""A run that would overflow time or memory, or give wrong results, is a
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
    # --out: the time series are kept only when they are written.
    proc = subprocess.run([sys.executable, "-m", "hetpath", "run", str(path), "-q", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"bad.toml: {key}:" in lines[0]
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr


EXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "examples"
# The child's own peak (VmHWM, KiB): not ru_maxrss, which Linux carries across exec
# from the forking parent, here pytest with hundreds of MB.
PEAK_RSS = """
import re, sys
from hetpath.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    assert not e.code, e.code
print(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1), file=sys.stderr)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_summary_alone_keeps_no_series(tmp_path: Path) -> None:
    """`hetpath run --json` (no --out) keeps no time series: 2 million samples of geo-clean
    (about 2 GB when kept) run in tens of MB, and the summary is the one a run with
    series gives (but for the count of engine events)."""
    import json

    import hetpath

    text = (EXAMPLES / "geo-clean.toml").read_text().replace('duration = "200s"',
                                                            'duration = "200s"\nsample_interval = "100us"')
    path = tmp_path / "long.toml"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS, "run", str(path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    peak_kib = int(proc.stderr.strip().splitlines()[-1])
    assert peak_kib < 400 * 1024, f"peak RSS {peak_kib} KiB"
    with_series = hetpath.run(EXAMPLES / "geo-clean.toml")
    assert len(with_series.link_series) > 0
    without = json.loads(subprocess.run([sys.executable, "-m", "hetpath", "run", str(EXAMPLES / "geo-clean.toml"),
                                         "--json"], capture_output=True, text=True, timeout=60, check=True).stdout)
    ours = json.loads(hetpath.result.summary_json(with_series.summary))
    for s in (ours, without):
        s.pop("wall_time_s", None)
    assert ours.pop("events") - without.pop("events") == 2001  # the sampler's events, every 100 ms
    assert without == ours
