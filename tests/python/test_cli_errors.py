"""Bad input must give one `hetpath: error: ...` line on stderr and exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from helpers import invoke


def _edit(old: str, new: str) -> Callable[[str], str]:
    def apply(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return apply


# (id, edit of small.toml, fragments the message must contain besides the file name)
BAD_SCENARIOS = [
    ("unknown-key", _edit('rate = "10Mbps"', 'rate = "10Mbps"\nratee = "1Mbps"'), ["ratee"]),
    ("missing-field", _edit('to = "dst"\n', ""), ["missing", "to"]),
    ("wrong-unit", _edit('rate = "10Mbps"', 'rate = "10Mbs"'), ["Mbs"]),
    ("negative-rate", _edit('rate = "10Mbps"', 'rate = "-10Mbps"'), ["rate", "-10Mbps"]),
    ("bad-toml", _edit('rate = "10Mbps"', 'rate = "10Mbps'), []),
    ("unknown-cc", _edit('cc = "newreno"', 'cc = "no-such-cc"'), ["no-such-cc"]),
    ("unknown-node", _edit('to = "dst"', 'to = "nowhere"'), ["nowhere"]),
    ("sctp-value", _edit('cc = "newreno"', 'transport = "sctp"\nsctp = { streams = 0 }'), ["sctp.streams"]),
    ("sctp-key", _edit('cc = "newreno"', 'transport = "sctp"\nsctp = { fast_rtx = 3, rto = "1s" }'), ["rto"]),
    ("sctp-on-tcp", _edit('cc = "newreno"', 'cc = "newreno"\nsctp = { streams = 2 }'), ["sctp", "transport"]),
    ("esw-value", _edit('rate = "10Mbps"', 'rate = "10Mbps"\nlayer = "esw"\nesw = { frame_units = 0 }'),
     ["esw.frame_units"]),
    ("esw-key", _edit('rate = "10Mbps"', 'rate = "10Mbps"\nlayer = "esw"\nesw = { tack = "1s", window = 3 }'),
     ["window"]),
    ("esw-without-layer", _edit('rate = "10Mbps"', 'rate = "10Mbps"\nesw = { arq = false }'), ["layer"]),
    ("lift-protection", _edit('cc = "newreno"', 'cc = "newreno"\nipsec = { lift = true, self_protection = { probes = 0 } }'),
     ["self_protection.probes"]),
    ("web-with-size", _edit('cc = "newreno"', 'cc = "newreno"\nweb = { pages = 2 }'), ["size", "web"]),
    ("max-events-zero", _edit('seed = 1', 'seed = 1\nmax_events_per_instant = 0'), ["scenario.max_events_per_instant"]),
    ("zero-window", _edit('cc = "newreno"', 'cc = "newreno"\ntcp = { zero_window = "stop" }'), ["zero_window"]),
    ("wlan-value", _edit('[[flow]]', '[[wlan]]\nname = "air"\nap = "src"\nstations = ["dst"]\ncw_min = 64\ncw_max = 31\n\n[[flow]]'),
     ["cw_min"]),
    ("wlan-station", _edit('[[flow]]', '[[wlan]]\nname = "air"\nap = "src"\nstations = ["nobody"]\n\n[[flow]]'),
     ["stations", "nobody"]),
    ("apohn-buffer", _edit('[[flow]]', '[[agent]]\nkind = "apohn"\nsender = "src"\nbridge = "dst"\nstations = ["dst"]\nbuffer = 0\n\n[[flow]]'), ["buffer"]),
    ("apohn-window", _edit('[[flow]]', '[[agent]]\nkind = "apohn"\nsender = "src"\nbridge = "dst"\nstations = ["dst"]\nwindow = "fixed"\nbeta = 9\n\n[[flow]]'), ["beta", "adaptive"]),
    ("apohn-poll", _edit('[[flow]]', '[[agent]]\nkind = "apohn"\nsender = "src"\nbridge = "dst"\nstations = ["dst"]\npoll_interval = "0s"\n\n[[flow]]'), ["poll_interval"]),
    ("apohn-station", _edit('[[flow]]', '[[agent]]\nkind = "apohn"\nsender = "src"\nbridge = "dst"\nstations = ["dst"]\n\n[[flow]]'), ["stations[0]", "wlan"]),
    ("satpep-rate", _edit('cc = "newreno"', 'cc = "satpep"'), ["satpep", "rate"]),
]


def _check_one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("hetpath: error: "), line
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment.lower() in line.lower(), (fragment, line)
    return line


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("case_id, edit, fragments", BAD_SCENARIOS, ids=[c[0] for c in BAD_SCENARIOS])
def test_bad_scenario(tmp_path: Path, small_toml: Path, command, case_id, edit, fragments) -> None:
    bad = tmp_path / f"{case_id}.toml"
    bad.write_text(edit(small_toml.read_text()))
    _check_one_line_error(invoke([command, str(bad)]), bad.name, *fragments)


@pytest.mark.parametrize("command", ["run", "validate"])
def test_nonexistent_file(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "nope.toml"
    _check_one_line_error(invoke([command, str(missing)]), "nope.toml", "no such file")


def test_directory_instead_of_file(tmp_path: Path) -> None:
    _check_one_line_error(invoke(["run", str(tmp_path)]), str(tmp_path), "directory")


def test_not_utf8(tmp_path: Path) -> None:
    bad = tmp_path / "binary.toml"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    _check_one_line_error(invoke(["run", str(bad)]), "binary.toml")


def test_bad_input_writes_no_output_dir(tmp_path: Path, small_toml: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text(small_toml.read_text().replace("10Mbps", "10Mbs"))
    _check_one_line_error(invoke(["run", str(bad), "--pcap"]), "Mbs")
    assert not (tmp_path / "out").exists()


def test_usage_error_exits_2(small_toml: Path) -> None:
    result = invoke(["run", str(small_toml), "--no-such-option"])
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_negative_seed_is_a_usage_error(small_toml: Path) -> None:
    result = invoke(["run", str(small_toml), "--seed", "-1"])
    assert result.exit_code == 2
    assert "seed" in result.stderr


def test_reproduce_out_without_files_is_a_usage_error(tmp_path: Path) -> None:
    # --no-plots writes nothing: an --out beside it would be silently ignored.
    result = invoke(["reproduce", "tcp-radio", "--quick", "--no-plots", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "--out" in result.stderr and "--no-plots" in result.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("case_id, edit, fragments", BAD_SCENARIOS[:3], ids=[c[0] for c in BAD_SCENARIOS[:3]])
def test_real_process_exit_code(tmp_path: Path, small_toml: Path, case_id, edit, fragments) -> None:
    """The installed entry point, in its own process, behaves like the in-process CLI."""
    bad = tmp_path / f"{case_id}.toml"
    bad.write_text(edit(small_toml.read_text()))
    proc = subprocess.run([sys.executable, "-m", "hetpath", "run", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("hetpath: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert bad.name in proc.stderr


def test_a_run_whose_time_stops_advancing_is_a_run_error_naming_what_ran(tmp_path: Path) -> None:
    """Past `max_events_per_instant` events at one instant the run stops: one line, exit 1."""
    flows = "".join(f'[[flow]]\nname = "f{i}"\nfrom = "a"\nto = "b"\nsize = "300B"\n' for i in range(5000))
    path = tmp_path / "burst.toml"
    path.write_text('[scenario]\nname = "burst"\nduration = "10s"\nmax_events_per_instant = 100\n'
                    '[[node]]\nname = "a"\n[[node]]\nname = "b"\n'
                    '[[link]]\nname = "l"\na = "a"\nb = "b"\nrate = "10Mbps"\ndelay = "10ms"\n' + flows)
    proc = subprocess.run([sys.executable, "-m", "hetpath", "run", str(path), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("hetpath: error: "), lines[0]
    assert "stopped advancing at 0.000000000 s" in lines[0] and "max_events_per_instant" in lines[0]
    assert "by flow 'f" in lines[0], lines[0]
