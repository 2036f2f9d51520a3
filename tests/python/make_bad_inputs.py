"""Generate the corpus of malformed inputs: scenario files, sweep files and command
lines a new user might type, each of which must give one ``hetpath: error:`` line naming
the file (or option) and exit 2, with no traceback, no panic and no result printed.

    python tests/python/make_bad_inputs.py      # rewrites tests/python/data/bad_inputs/

The corpus is kept in the repository; ``test_bad_inputs.py`` runs every case. A case is
``{"id", "class", "args", "names", ...}`` in ``cases.json``: ``args`` is the command line
(paths relative to the corpus directory, ``{tmp}`` a fresh temporary directory),
``names`` what the error line must contain. Cases whose fix was the engine's (crates/)
carry ``"xfail"``: what they were written for (they pass since it landed). ``"check"``
says what to expect instead of an error: ``"pcaps"`` (succeeds with one distinct pcap
per link direction), ``"runs"`` (a legitimate value: the run ends with exit 0 within the
time and memory limit, no panic), ``"warns"`` (exit 0, and a ``hetpath: warning:`` line
on stderr naming ``names``), ``"error-or-runs"`` (either a refusal or a run is a right
answer). ``"isolate"`` cases (that could read forever, block, allocate or run
long) run in a subprocess with a time and memory limit; ``"forbid"`` lists text the
message must not echo; ``"make"`` names a scenario too large to keep in the repository,
written by the test (``{"nodes": N}``: N node tables).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
OUT = HERE / "data" / "bad_inputs"
SMALL = (HERE / "data" / "small.toml").read_text()

cases: list[dict[str, Any]] = []


def case(cid: str, cls: str, args: list[str], names: list[str], **extra: Any) -> None:
    cases.append({"id": cid, "class": cls, "args": args, "names": names, **extra})


def write(name: str, text: str | bytes) -> str:
    path = OUT / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return name


def edit(old: str, new: str) -> str:
    assert old in SMALL, old
    return SMALL.replace(old, new, 1)


def before_flow(block: str) -> str:
    return edit("[[flow]]", block + "\n\n[[flow]]")


# ---------------------------------------------------------------- scenarios
# (key being broken, old text, new text, fragments besides the file name)
SCENARIO_EDITS: list[tuple[str, str, str, list[str]]] = []


def bad_values(key: str, old: str, template: str, values: list[str]) -> None:
    for k, v in enumerate(values):
        SCENARIO_EDITS.append((f"{key}-{k}", old, template.format(v), []))


bad_values("duration", 'duration = "10s"', "duration = {}",
           ['"abc"', '"-1s"', "5", '"10"', "true", '"10 parsecs"', '""', '"1e3s"', "[]", "{}", '"s"', '"10ss"'])
bad_values("scenario-seed", "seed = 1", "seed = {}", ["-1", '"x"', "1.5", "true", "[]", "{}"])
bad_values("sample", 'sample_interval = "100ms"', "sample_interval = {}", ['"0s"', '"x"', "5", '"-1ms"', "[]"])
bad_values("name", 'name = "small"', "name = {}", ["5", "true", "[]", "{}"])
bad_values("mss", "mss = 1460", "mss = {}", ['"x"', "-1", "0", "1.5", "[]"])
bad_values("sack", "sack = true", "sack = {}", ["5", '"yes"', "[]"])
bad_values("iw", "iw = 3", "iw = {}", ['"x"', "-3", "1.5", "{}"])
bad_values("rate", 'rate = "10Mbps"', "rate = {}",
           ['"10Mbs"', '"fast"', '""', '"-1Mbps"', "10", '"Mbps"', '"10 Mbps/s"', "[]", "{}", '"1e400Mbps"', '"NaNMbps"', '"10kbit"'])
bad_values("delay", 'delay = "300ms"', "delay = {}", ['"x"', '"-1ms"', "5", '"300"', "[]", '"1 fortnight"', '"NaNs"'])
bad_values("queue", 'queue = "100pkt"', "queue = {}", ['"-1pkt"', '"abc"', '"10xyz"', "1.5", "[]", '"pkt"'])
bad_values("link-a", 'a = "src"', "a = {}", ['"nowhere"', "5", '""'])
bad_values("link-b", 'b = "dst"', "b = {}", ['"nowhere"', "5", '"src"'])
bad_values("from", 'from = "src"', "from = {}", ['"nowhere"', "5", "[]"])
bad_values("to", 'to = "dst"', "to = {}", ['"nowhere"', "5", '"src"'])
bad_values("cc", 'cc = "newreno"', "cc = {}", ['"no-such-cc"', "5", '""', '{ name = "cubic", beta = "x" }', '{ beta = 0.7 }',
                                              '{ name = "nope" }'])
bad_values("start", 'start = "0s"', "start = {}", ['"x"', '"-1s"', "5"])
bad_values("size", 'size = "2MB"', "size = {}", ['"x"', '"-2MB"', "[]", '"2 parsecs"', "true"])
bad_values("channel", 'rate = "10Mbps"', 'rate = "10Mbps"\nchannel = {}', [
    '{ model = "nope" }', '{ model = "bernoulli" }', '{ model = "bernoulli", p = 2 }', '{ model = "bernoulli", p = -0.1 }',
    '{ model = "bernoulli", p = "x" }', '{ model = "markov", alpha = 0.1 }', '{ model = "markov", alpha = 0, beta = 0 }',
    '{ model = "gilbert-elliott", t_good = "0s", t_bad = "1s" }', '{ model = "ber", ber = 2 }',
    '{ model = "fec", n = 0, k = 0, ber = 0.1 }', '{ model = "fec", n = 10, k = 20, ber = 0.1 }',
    '{ model = "fec", n = 256, k = 10, ber = 0.1 }', '{ model = "trace", lost = [1], bad = [["1s", "2s"]] }',
    '{ model = "trace" }', "5", '"bernoulli"', '{ model = "bernoulli", p = 0.1, q = 1 }',
    '{ model = "markov", alpha = 0.1, beta = 0.1, initial = "sideways" }', '{ model = "trace", lost = [-1] }',
    '{ model = "trace", bad = [["2s", "1s"]] }', '{ model = "trace", file = "no-such-trace.txt" }'])
bad_values("ab", 'rate = "10Mbps"', 'rate = "10Mbps"\nab = {}', ["5", '{ rate = "x" }', '{ nope = 1 }', '"x"'])
SCENARIO_EDITS += [
    ("unknown-key-scenario", 'name = "small"', 'name = "small"\nnmae = "x"', ["nmae"]),
    ("unknown-key-link", 'rate = "10Mbps"', 'rate = "10Mbps"\nratee = "1Mbps"', ["ratee"]),
    ("unknown-key-flow", 'cc = "newreno"', 'cc = "newreno"\nccc = "x"', ["ccc"]),
    ("unknown-key-tcp", "mss = 1460", "mss = 1460\nmsss = 1", ["msss"]),
    ("unknown-table", "[tcp]", "[tcpp]\nx = 1\n\n[tcp]", []),
    ("missing-from", 'from = "src"\n', "", ["from"]),
    ("missing-to", 'to = "dst"\n', "", ["to"]),
    ("missing-rate", 'rate = "10Mbps"\n', "", ["rate"]),
    ("missing-link-a", 'a = "src"\n', "", []),
    ("missing-node-name", '[[node]]\nname = "src"', "[[node]]", []),
    ("duplicate-node", '[[node]]\nname = "dst"', '[[node]]\nname = "dst"\n\n[[node]]\nname = "dst"', ["dst"]),
    ("duplicate-link", '[[flow]]', '[[link]]\nname = "sat"\na = "src"\nb = "dst"\nrate = "1Mbps"\ndelay = "1ms"\n\n[[flow]]', ["sat"]),
    ("duplicate-flow", 'size = "2MB"', 'size = "2MB"\n\n[[flow]]\nname = "f1"\nfrom = "src"\nto = "dst"', ["f1"]),
    ("node-table", '[[node]]\nname = "src"', '[node]\nname = "src"', []),
    ("flow-table", '[[flow]]', '[flowx]\n[[flow]]', []),
    ("transport", 'cc = "newreno"', 'cc = "newreno"\ntransport = "carrier-pigeon"', ["transport"]),
    ("tcp-flow-key", 'cc = "newreno"', 'cc = "newreno"\ntcp = { nope = 1 }', ["nope"]),
    ("tcp-profile", 'cc = "newreno"', 'cc = "newreno"\ntcp = { profile = "no-such-profile" }', ["no-such-profile"]),
    ("tcp-mss-zero", 'cc = "newreno"', 'cc = "newreno"\ntcp = { mss = 0 }', ["mss"]),
    ("web-with-size", 'cc = "newreno"', 'cc = "newreno"\nweb = { pages = 2 }', ["web"]),
    ("sctp-streams", 'cc = "newreno"', 'transport = "sctp"\nsctp = { streams = 0 }', ["streams"]),
    ("esw-units", 'rate = "10Mbps"', 'rate = "10Mbps"\nlayer = "esw"\nesw = { frame_units = 0 }', ["frame_units"]),
    ("layer", 'rate = "10Mbps"', 'rate = "10Mbps"\nlayer = "atm"', ["layer"]),
    ("toml-unclosed-string", 'rate = "10Mbps"', 'rate = "10Mbps', []),
    ("toml-no-value", 'rate = "10Mbps"', "rate =", []),
    ("toml-duplicate-key", 'rate = "10Mbps"', 'rate = "10Mbps"\nrate = "1Mbps"', []),
    ("toml-bad-header", "[tcp]", "[tcp", []),
    ("toml-int-2-64", "seed = 1", "seed = 18446744073709551616", []),
    ("toml-bare-word", 'cc = "newreno"', "cc = newreno", []),
    ("toml-unclosed-array", 'size = "2MB"', 'size = ["2MB"', []),
    ("toml-tab-garbage", "[tcp]", "[tcp]\n\t= 5", []),
]
AGENTS = [
    ("agent-kind", '[[agent]]\nkind = "teleporter"\nnode = "src"', ["teleporter"]),
    ("agent-no-kind", '[[agent]]\nnode = "src"', ["kind"]),
    ("agent-node", '[[agent]]\nkind = "split-pep"\nnode = "nowhere"', ["nowhere"]),
    ("agent-key", '[[agent]]\nkind = "split-pep"\nnode = "src"\nbogus = 1', ["bogus"]),
    ("agent-buffer", '[[agent]]\nkind = "split-pep"\nnode = "src"\nbuffer = "1B"', ["buffer"]),
    ("router-link", '[[agent]]\nkind = "xcp-router"\nnode = "src"\nlink = "nowhere"', ["nowhere"]),
    ("router-no-link", '[[agent]]\nkind = "xcp-router"\nnode = "src"', ["link"]),
    ("router-interval", '[[agent]]\nkind = "vcp-router"\nnode = "src"\nlink = "sat"\ninterval = "0s"', ["interval"]),
    ("lift-timer", '[[agent]]\nkind = "lift-bs"\nnode = "src"\nlink = "sat"\ntimer = "0s"', ["timer"]),
    ("apohn-sender", '[[agent]]\nkind = "apohn"\nbridge = "dst"\nstations = ["dst"]', ["sender"]),
    ("wlan-cw", '[[wlan]]\nname = "air"\nap = "src"\nstations = ["dst"]\ncw_min = 64\ncw_max = 31', ["cw_min"]),
    ("wlan-ap", '[[wlan]]\nname = "air"\nap = "nowhere"\nstations = ["dst"]', ["nowhere"]),
]


def scenarios() -> None:
    for cid, old, new, frags in SCENARIO_EDITS:
        name = write(f"scenario/{cid}.toml", edit(old, new))
        for command in ("validate", "run"):
            case(f"{command}-{cid}", "scenario", [command, name], [Path(name).name, *frags])
    for cid, block, frags in AGENTS:
        name = write(f"scenario/{cid}.toml", before_flow(block))
        for command in ("validate", "run"):
            case(f"{command}-{cid}", "scenario", [command, name], [Path(name).name, *frags])
    raw = {
        "utf8-start": b"\xff\xfe" + SMALL.encode(),
        "utf8-middle": SMALL.encode().replace(b'"small"', b'"sm\xe9ll"'),
        "utf8-end": SMALL.encode() + b"\x80",
        "utf8-overlong": SMALL.encode().replace(b'"small"', b'"\xc0\xafsmall"'),
        "utf8-surrogate": SMALL.encode().replace(b'"small"', b'"\xed\xa0\x80"'),
        "binary": bytes(range(256)) * 4,
        "nul-bytes": SMALL.encode().replace(b"\n", b"\n\x00", 1),
        "empty": b"",
        "only-comment": b"# nothing\n",
        "utf16": SMALL.encode("utf-16"),
        "gzip-magic": b"\x1f\x8b\x08\x00" + bytes(64),
    }
    for cid, data in raw.items():
        name = write(f"scenario/{cid}.toml", data)
        for command in ("validate", "run"):
            case(f"{command}-{cid}", "encoding", [command, name], [Path(name).name])
    for command in ("run", "validate", "sweep"):
        case(f"{command}-dev-zero", "not-regular", [command, "/dev/zero"], ["/dev/zero"])
        case(f"{command}-missing", "missing-file", [command, "scenario/no-such-file.toml"], ["no-such-file.toml"])
        case(f"{command}-directory", "directory", [command, "scenario"], ["scenario"])


# ---------------------------------------------------------------- sweeps
HEAD = '[sweep]\nscenario = "../base.toml"\n'
SWEEPS: list[tuple[str, str, list[str]]] = [
    ("grid-scalar", 'grid = 5\n' + HEAD, ["grid"]),
    ("grid-string", 'grid = "x"\n' + HEAD, ["grid"]),
    ("grid-array", 'grid = [1, 2]\n' + HEAD, ["grid"]),
    ("sweep-scalar", "sweep = 5\n", ["sweep"]),
    ("sweep-array", "sweep = [1]\n", ["sweep"]),
    ("sweep-missing", '[grid]\n"link.sat.rate" = ["1Mbps"]\n', ["scenario"]),
    ("protocol-scalar", HEAD + "protocol = 5\n", ["protocol"]),
    ("protocol-value", HEAD + "[protocol]\nreno = 5\n", ["protocol"]),
    ("protocol-empty", HEAD + "[protocol]\n", ["protocol"]),
    ("protocol-bad-flow", HEAD + '[protocol.reno]\n"flow.nope.cc" = "reno"\n', ["nope"]),
    ("protocol-bad-cc", HEAD + '[protocol.x]\n"flow.f1.cc" = "vegas"\n', ["vegas"]),
    ("unknown-table", HEAD + "[grdi]\n", ["grdi"]),
    ("unknown-key", HEAD + "bogus = 1\n", ["bogus"]),
    ("scenario-number", "[sweep]\nscenario = 5\n", ["sweep.scenario"]),
    ("scenario-empty", '[sweep]\nscenario = ""\n', ["sweep.scenario"]),
    ("scenario-array", '[sweep]\nscenario = ["a.toml"]\n', ["sweep.scenario"]),
    ("scenario-missing", '[sweep]\nscenario = "no-such-base.toml"\n', ["no-such-base.toml"]),
    ("scenario-directory", '[sweep]\nscenario = "."\n', ["directory"]),
    ("scenario-dev-zero", '[sweep]\nscenario = "/dev/zero"\n', ["/dev/zero"]),
    ("scenario-bad-base", '[sweep]\nscenario = "../scenario/rate-0.toml"\n', ["rate-0.toml"]),
    ("scenario-binary-base", '[sweep]\nscenario = "../scenario/binary.toml"\n', ["binary.toml"]),
    ("flows-scalar", HEAD + "flows = 5\n", ["sweep.flows"]),
    ("flows-string", HEAD + 'flows = "f1"\n', ["sweep.flows"]),
    ("flows-empty", HEAD + "flows = []\n", ["sweep.flows"]),
    ("flows-numbers", HEAD + "flows = [1, 2]\n", ["sweep.flows"]),
    ("flows-unknown", HEAD + 'flows = ["nope"]\n', ["nope"]),
    ("flows-one-unknown", HEAD + 'flows = ["f1", "f2"]\n', ["f2"]),
    ("seeds-zero", HEAD + "seeds = 0\n", ["sweep.seeds"]),
    ("seeds-negative", HEAD + "seeds = -3\n", ["sweep.seeds"]),
    ("seeds-string", HEAD + 'seeds = "many"\n', ["sweep.seeds"]),
    ("seeds-float", HEAD + "seeds = 1.5\n", ["sweep.seeds"]),
    ("seeds-bool", HEAD + "seeds = true\n", ["sweep.seeds"]),
    ("seeds-empty-list", HEAD + "seeds = []\n", ["sweep.seeds"]),
    ("seeds-mixed-list", HEAD + 'seeds = [1, "a"]\n', ["sweep.seeds"]),
    ("seeds-negative-list", HEAD + "seeds = [-1]\n", ["sweep.seeds"]),
    ("seeds-2-64", HEAD + "seeds = [18446744073709551616]\n", []),
    ("seeds-duplicate", HEAD + "seeds = [1, 1, 1]\n", ["sweep.seeds"]),
    ("seeds-duplicate-far", HEAD + "seeds = [3, 5, 7, 3]\n", ["sweep.seeds"]),
    ("seeds-huge", HEAD + "seeds = 1000000000\n", ["sweep.seeds"]),
    ("seeds-huge-grid", HEAD + "seeds = 100000\n[grid]\n" + '"flow.f1.size" = [' + ", ".join(f'"{k}KB"' for k in range(1, 200)) + "]\n",
     ["limit"]),
    ("axis-scalar", HEAD + '[grid]\n"link.sat.rate" = "1Mbps"\n', ["link.sat.rate"]),
    ("axis-empty", HEAD + '[grid]\n"link.sat.rate" = []\n', ["link.sat.rate"]),
    ("axis-table", HEAD + '[grid]\n"link.sat.rate" = { a = 1 }\n', ["link.sat.rate"]),
    ("axis-mixed", HEAD + '[grid]\nx = [{ "link.sat.rate" = "1Mbps" }, "2Mbps"]\n', ["mix"]),
    ("axis-label-only", HEAD + '[grid]\nx = [{ label = "a" }]\n', ["x"]),
    ("axis-protocol", HEAD + '[grid]\nprotocol = [{ "flow.f1.cc" = "reno" }]\n', ["protocol"]),
    ("axis-seed", HEAD + '[grid]\nseed = [{ "scenario.seed" = 1 }]\n', ["seed"]),
    ("axis-flow", HEAD + '[grid]\nflow = [{ "flow.f1.cc" = "reno" }]\n', ["flow"]),
    ("axis-completed", HEAD + '[grid]\ncompleted = [{ "flow.f1.cc" = "reno" }]\n', ["completed"]),
    ("labels-duplicate", HEAD + '[grid]\nbw = [{ label = "x", "link.sat.rate" = "1Mbps" }, { label = "x", "link.sat.rate" = "100Mbps" }]\n',
     ["bw", "twice"]),
    ("values-duplicate", HEAD + '[grid]\n"link.sat.rate" = ["1Mbps", "1Mbps"]\n', ["twice"]),
    ("labels-duplicate-number", HEAD + '[grid]\nq = [{ label = 1, "link.sat.queue" = "10pkt" }, { label = 1, "link.sat.queue" = "20pkt" }]\n',
     ["twice"]),
    ("unlabelled-duplicate", HEAD + '[grid]\nq = [{ "link.sat.queue" = "10pkt" }, { "link.sat.queue" = "10pkt" }]\n', ["twice"]),
    ("path-into-scalar", HEAD + '[grid]\n"scenario.name.x" = [1]\n', ["scenario.name.x"]),
    ("path-into-scalar-entry", HEAD + '[grid]\n"flow.f1.size.x" = [1]\n', ["flow.f1.size.x"]),
    ("path-into-scalar-deep", HEAD + '[grid]\n"tcp.mss.a.b" = [1]\n', ["tcp.mss.a.b"]),
    ("path-into-array", HEAD + '[grid]\n"node.x" = [1]\n', ["node.x"]),
    ("path-empty-part", HEAD + '[grid]\n"link..rate" = ["1Mbps"]\n', ["link..rate"]),
    ("path-empty", HEAD + '[grid]\n"" = [1]\n', []),
    ("path-trailing-dot", HEAD + '[grid]\n"link.sat." = [1]\n', []),
    ("path-unknown-entry", HEAD + '[grid]\n"link.nope.rate" = ["1Mbps"]\n', ["nope"]),
    ("path-bad-value", HEAD + '[grid]\n"link.sat.rate" = ["1Mbps", "fast"]\n', ["fast"]),
    ("path-unknown-key", HEAD + '[grid]\n"link.sat.ratee" = ["1Mbps"]\n', ["ratee"]),
    ("toml-syntax", HEAD + "[grid\n", []),
    ("experiment-in-sweep", HEAD + "[experiment.a]\n", ["experiment"]),
]


def sweeps() -> None:
    write("base.toml", SMALL)
    for cid, text, frags in SWEEPS:
        name = write(f"sweep/{cid}.toml", text)
        names = [Path(name).name] if not any(f.endswith(".toml") or f == "/dev/zero" for f in frags) else []
        case(f"sweep-{cid}", "sweep", ["sweep", name, "-q", "--jobs", "1"], names + frags)
    name = write("sweep/not-utf8.toml", HEAD.encode() + b"flows = [\"\xff\"]\n")
    case("sweep-not-utf8", "encoding", ["sweep", name, "-q"], ["not-utf8.toml"])


# ---------------------------------------------------------------- command lines
def command_lines() -> None:
    ok_sweep = write("sweep/ok.toml", HEAD)
    write("a_file", "a regular file, not a directory\n")
    base = "base.toml"
    for k, seed in enumerate(["-1", "18446744073709551616", "x", "1e9", "1.5", "", "0x10"]):
        case(f"run-option-seed-{k}", "cli", ["run", base, "--seed", seed], ["--seed"])
    for k, seeds in enumerate(["0", "-1", "1e9", "x", "1000000000", "1.5", ""]):
        case(f"sweep-seeds-{k}", "cli", ["sweep", ok_sweep, "--seeds", seeds], ["--seeds"])
        case(f"reproduce-seeds-{k}", "cli", ["reproduce", "tcp-radio", "--seeds", seeds], ["--seeds"])
    for k, jobs in enumerate(["0", "-1", "100000", "x", "1e3", "99999999999999999999999"]):
        case(f"sweep-jobs-{k}", "cli", ["sweep", ok_sweep, "--jobs", jobs], ["--jobs"])
        case(f"reproduce-jobs-{k}", "cli", ["reproduce", "tcp-radio", "--jobs", jobs], ["--jobs"])
    for where, out in (("file", "a_file"), ("under-file", "a_file/sub"), ("deep-under-file", "a_file/a/b")):
        case(f"run-out-{where}", "out", ["run", base, "--out", out], [out])
        case(f"sweep-out-{where}", "out", ["sweep", ok_sweep, "--out", out, "--jobs", "1"], [out])
        case(f"reproduce-out-{where}", "out", ["reproduce", "tcp-radio", "--quick", "--out", out], [out])
    case("run-trace-suffix", "cli", ["run", base, "--trace", "{tmp}/t.xlsx"], ["xlsx"])
    case("run-trace-dir", "cli", ["run", base, "--trace", "scenario"], ["scenario"])
    case("run-trace-under-file", "cli", ["run", base, "--trace", "a_file/t.parquet"], ["a_file"])
    case("run-format", "cli", ["run", base, "--format", "bmp"], ["bmp"])
    case("reproduce-format", "cli", ["reproduce", "tcp-radio", "--format", "gif"], ["gif"])
    case("reproduce-paper", "cli", ["reproduce", "no-such-paper"], ["no-such-paper"])
    case("reproduce-scenarios-missing", "cli", ["reproduce", "tcp-radio", "--scenarios", "{tmp}/none"], ["paper.toml"])
    case("unknown-command", "cli", ["simulate", base], ["simulate"])
    case("unknown-option", "cli", ["--bogus"], ["--bogus"])
    case("run-unknown-option", "cli", ["run", base, "--bogus"], ["--bogus"])
    case("run-no-file", "cli", ["run"], ["FILE"])
    case("sweep-no-file", "cli", ["sweep"], ["FILE"])
    case("validate-no-file", "cli", ["validate"], ["FILE"])
    case("run-two-files", "cli", ["run", base, base], [base])
    case("sweep-resume-no-out", "cli", ["sweep", ok_sweep, "--resume"], ["--out"])
    case("list-unknown", "cli", ["list", "bogus"], ["bogus"])
    case("report-missing", "cli", ["report", "{tmp}/none"], ["none"])


# ---------------------------------------------------------------- engine's share
ITEM = {
    "durations": "durations and times that would overflow are a scenario error (engine)",
    "samples": "a max_samples guard errors out up front (engine)",
    "clamp": "huge rates and sizes are an error, never a clamp (engine)",
    "pep": "a split PEP on the destination delivers nothing (engine)",
    "xcp": "cc = xcp needs an xcp-router (engine)",
    "fec": "markov's fec accepts n > 255 (engine)",
    "pcap": "pcap names collide (engine)",
    "trace": "a trace file must be a regular file under a size limit, never echoed (engine)",
}


def engine_cases() -> None:
    def xcase(cid: str, key: str, text: str, frags: list[str], command: str = "validate", **extra: Any) -> None:
        name = write(f"engine/{cid}.toml", text)
        case(f"{command}-{cid}", f"engine-{key}", [command, name], [Path(name).name, *frags], xfail=ITEM[key], **extra)

    for k, d in enumerate(['"1000000000000s"', '"18446744074s"', '"213503982334601d"', '"99999999999999999ms"']):
        xcase(f"duration-overflow-{k}", "durations", edit('duration = "10s"', f"duration = {d}"), ["duration"])
    xcase("start-overflow", "durations", edit('start = "0s"', 'start = "1000000000000s"'), ["start"])
    xcase("delay-overflow", "durations", edit('delay = "300ms"', 'delay = "1000000000000s"'), ["delay"])
    xcase("sample-overflow", "durations", edit('sample_interval = "100ms"', 'sample_interval = "1000000000000s"'), ["sample_interval"])
    for k, (dur, si) in enumerate([('"1000000s"', '"1us"'), ('"20000s"', '"1ns"'), ('"100000000s"', '"1ms"')]):
        xcase(f"max-samples-{k}", "samples", edit('duration = "10s"', f"duration = {dur}").replace(
            'sample_interval = "100ms"', f"sample_interval = {si}"), ["sample_interval"])
    for k, r in enumerate(['"1000000000000000000000Gbps"', '"99999999999999999999999bps"', '"1e30bps"']):
        xcase(f"rate-clamp-{k}", "clamp", edit('rate = "10Mbps"', f"rate = {r}"), ["rate"])
    for k, sz in enumerate(['"100000000000000000000GB"', '"99999999999999999999999B"']):
        xcase(f"size-clamp-{k}", "clamp", edit('size = "2MB"', f"size = {sz}"), ["size"])
    xcase("queue-clamp", "clamp", edit('queue = "100pkt"', 'queue = "100000000000000000000000B"'), ["queue"])
    xcase("split-pep-on-destination", "pep", before_flow('[[agent]]\nkind = "split-pep"\nnode = "dst"'), ["dst"])
    xcase("split-pep-on-source", "pep", before_flow('[[agent]]\nkind = "split-pep"\nnode = "src"'), ["src"])
    xcase("xcp-without-router", "xcp", edit('cc = "newreno"', 'cc = "xcp"'), ["xcp"])
    xcase("vcp-without-router", "xcp", edit('cc = "newreno"', 'cc = "vcp"'), ["vcp"])
    xcase("markov-fec-300", "fec", edit('rate = "10Mbps"', 'rate = "10Mbps"\nchannel = { model = "markov", alpha = 0.1, '
                                       'beta = 0.1, fec = { n = 300, k = 200 } }'), ["fec"])
    # Names that map two link directions to one pcap file: run with --pcap and expect
    # one distinct file per direction.
    greek = SMALL.replace('"src"', '"λ"').replace('"dst"', '"μ"')
    for cid, text in (("pcap-greek-nodes", greek),
                      ("pcap-greek-links", SMALL.replace('name = "sat"', 'name = "α"') + '\n[[link]]\nname = "β"\na = "src"\n'
                       'b = "dst"\nrate = "1Mbps"\ndelay = "1ms"\n'),
                      ("pcap-slash-name", SMALL.replace('name = "sat"', 'name = "a/b"'))):
        name = write(f"engine/{cid}.toml", text.replace('duration = "10s"', 'duration = "1s"'))
        case(f"run-{cid}", "engine-pcap", ["run", name, "--pcap", "--no-plots", "-q", "--out", "{tmp}/pcap"], [],
             xfail=ITEM["pcap"], check="pcaps")
    trace = 'rate = "10Mbps"\nchannel = {{ model = "trace", file = "{}" }}'
    xcase("trace-passwd", "trace", edit('rate = "10Mbps"', trace.format("../../../../../../../../etc/passwd")),
          ["file"], forbid=["root:"])
    xcase("trace-directory", "trace", edit('rate = "10Mbps"', trace.format("/")), ["file"])
    xcase("trace-dev-zero", "trace", edit('rate = "10Mbps"', trace.format("/dev/zero")), ["file"], isolate=True)
    xcase("trace-fifo", "trace", edit('rate = "10Mbps"', trace.format("trace.fifo")), ["file"], isolate=True,
          fifo="trace.fifo")


# ---------------------------------------------------------------- every key, hostile values
# Cases for the keys added since the first corpus: each key with a wrong type, negative,
# zero, huge (u32/u64 max, 1e18), NaN and infinity, and wrong units. An error case runs
# `validate` in-process and `run` isolated (a value that passes validation must not
# panic, abort, hang or print a result later); "runs", "warns" and "error-or-runs"
# cases run isolated.
SHORT = SMALL.replace('duration = "10s"', 'duration = "2s"')
# What the key corpus's engine cases were written for (their "xfail"; they pass now).
FIXES = {
    "advertise": "Mobile IP's advertise period bounded (mobile.rs)",
    "wlan-times": "WLAN slot times bounded (wlan.rs)",
    "mac": "WLAN mac_overhead range (wlan.rs)",
    "wlan": "WLAN keys bounded: a huge rts_threshold allocates gigabytes (wlan.rs)",
    "apohn-buffer": "APOHN buffer bounded (apohn.rs)",
    "apohn": "APOHN and STP keys bounded (apohn.rs)",
    "sctp-message": "SCTP message size bounded (sctp.rs)",
    "sctp": "SCTP keys bounded (sctp.rs)",
    "ports": "more than 64,512 connections from one host (engine)",
    "livelock": "the livelock of many connections at t=0 (engine)",
    "hybla-linux": "hybla under the linux profile (engine)",
    "mobile": "mobile and radio keys bounded (mobile.rs)",
}
# Wrong type, negative, zero, huge (u32 and u64 max, 1e18), NaN and infinity for floats,
# wrong units; each list holds one of each that applies.
INT = ['"x"', "-1", "0", "4294967295", "18446744073709551615", "1e18"]
FLOAT = ['"x"', "-1.0", "0.0", "1e308", "nan", "inf"]
DUR = ['"x"', '"-1s"', '"0s"', "5", '"1ns"', '"18000000000s"', '"1000000000000s"', '"NaNs"', '"5Mbps"']
SIZE = ['"x"', '"-1B"', '"0B"', "5", '"1B"', '"18000000000GB"', '"99999999999999999999B"', '"5s"']
RATE = ['"x"', '"-1bps"', '"0bps"', "5", '"1bps"', '"18000000000Gbps"', '"5s"']
ENUM = ['"x"', "5", '"OFF"']
BOOL = ["5", '"yes"']

# Values the parser refuses (a wrong type or unit, a negative count): `validate` alone
# shows it, as no run can start from them.
PARSE_ERRORS = {'"x"', "5", '"5"', '"NaNs"', '"5Mbps"', '"5s"', '"OFF"', '"yes"', "1e18", "-1", '"-1s"', '"-1B"',
                '"-1bps"', "-1.0", '"99999999999999999999B"', '"1000000000000s"'}


def kcase(cid: str, text: str, names: list[str], check: str = "", run: bool = True, **extra: Any) -> None:
    """An error case is checked by `validate` in-process and, unless ``run`` is false, by
    `run` isolated (a value that passes validation must not run, let alone crash)."""
    name = write(f"keys/{cid}.toml", text)
    file = Path(name).name
    if not check:
        case(f"validate-{cid}", "key", ["validate", name], [file, *names], **extra)
        if run:
            case(f"run-{cid}", "key", ["run", name, "-q"], [file, *names], isolate=True, **extra)
    else:
        case(f"run-{cid}", "key", ["run", name, "-q"], [file, *names] if check != "runs" else [],
             check=check, isolate=True, **extra)


def values(prefix: str, text_of: Any, vals: list[str], names: list[str], ok: dict[str, str] | None = None,
           **extra: Any) -> None:
    """One case per value; ``ok`` maps a value to its check ("runs", "error-or-runs", ...)
    where it is not an error."""
    for k, v in enumerate(vals):
        check = (ok or {}).get(v, "")
        kcase(f"{prefix}-{k}", text_of(v), names, check, run=v not in PARSE_ERRORS, **extra)


def in_table(base: str, header: str, line: str) -> str:
    """``line`` as the first key of the table that starts ``header`` in ``base``."""
    assert header in base, header
    return base.replace(header, header + "\n" + line, 1)


TCP_KEYS: dict[str, tuple[list[str], dict[str, str]]] = {
    "iw": (INT, {"4294967295": "runs"}),
    "initial_ssthresh": (SIZE + ['"inf"'], {'"0B"': "runs", '"1B"': "runs", '"18000000000GB"': "runs", '"inf"': "runs"}),
    "abc": (INT, {"4294967295": "runs"}),
    "dupthresh": (INT, {"4294967295": "runs"}),
    "initial_rto": (DUR, {'"1ns"': "runs", '"18000000000s"': "runs"}),
    "min_rto": (DUR, {'"0s"': "runs", '"1ns"': "runs"}),
    "max_rto": (DUR, {'"18000000000s"': "runs"}),
    "syn_retries": (INT, {"0": "runs", "4294967295": "runs"}),
    "data_retries": (INT, {"0": "runs", "4294967295": "runs"}),
    "recv_buffer": (SIZE, {'"18000000000GB"': "runs"}),
    "time_wait": (DUR, {'"0s"': "runs", '"1ns"': "runs", '"18000000000s"': "runs"}),
    "ilc": (ENUM, {}),
    "ilc_restore": (ENUM, {}),
    "local_queue": (ENUM, {}),
    "pacing": (ENUM, {"true": "runs"}),
    "abc_counts": (ENUM, {}),
    "exit_credit": (ENUM, {}),
    "ssthresh_from": (ENUM, {}),
    "recovery": (ENUM, {}),
    "handshake_ack": (ENUM, {}),
    "hystart": (ENUM, {}),
    "zero_window": (ENUM, {}),
    "sack_resend": (ENUM, {}),
    "lost_retransmit": (ENUM, {}),
    "quick_ack": (ENUM, {}),
    "rto_formula": (ENUM, {}),
    "profile": (ENUM, {}),
    "timestamps": (BOOL, {}),
    "cwnd_validation": (BOOL, {}),
    "rto_restart_on_resend": (BOOL, {}),
    "rto_backoff": (BOOL, {}),
    "delayed_ack": (BOOL + ["{ count = 0 }", "{ count = -1 }", "{ count = 4294967295 }", '{ timeout = "-1s" }',
                            '{ timeout = "0s" }', "{ nope = 1 }"],
                    {"{ count = 4294967295 }": "runs", '{ timeout = "0s" }': "runs"}),
}


def tcp_keys() -> None:
    for key, (vals, ok) in TCP_KEYS.items():
        values(f"tcp-{key}", lambda v, key=key: in_table(SHORT.replace("iw = 3\n", ""), "[tcp]", f"{key} = {v}"),
               vals, [key], ok)
    # The pacing ratios, with pacing on (and one without).
    for key in ("pacing_ss_ratio", "pacing_ca_ratio"):
        values(f"tcp-{key}", lambda v, key=key: in_table(SHORT, "[tcp]", f"pacing = true\n{key} = {v}"),
               INT + ["10001"], [key])
        kcase(f"tcp-{key}-no-pacing", in_table(SHORT, "[tcp]", f"{key} = 150"), [key])
    for k, v in enumerate(["1", "10000"]):
        kcase(f"tcp-pacing-ratio-ok-{k}", in_table(SHORT, "[tcp]", f"pacing = true\npacing_ss_ratio = {v}\n"
                                                   f"pacing_ca_ratio = {v}"), [], "runs")
    # Every value of the enumerations runs.
    for key, vals in (("local_queue", ["wait", "cwr", "drop"]), ("pacing", ["fq", "hybla"]),
                      ("recovery", ["prr", "prr-crb"]), ("hystart", ["classic", "rfc9406", "ns3"])):
        for v in vals:
            kcase(f"tcp-{key}-{v}", in_table(SHORT, "[tcp]", f'{key} = "{v}"'), [], "runs")
    kcase("tcp-timestamps-min-mss", in_table(SHORT, "[tcp]", "timestamps = true").replace("mss = 1460", "mss = 64"),
          [], "runs")
    for profile in ("rfc", "linux", "ns3", "tcp-radio", "tcp-radio-newrto"):
        kcase(f"tcp-profile-{profile}", in_table(SHORT, "[tcp]", f'profile = "{profile}"'), [], "runs")
    kcase("tcp-profile-linux-hybla", in_table(SHORT, "[tcp]", 'profile = "linux"').replace('cc = "newreno"', 'cc = "hybla"'),
          [], "runs", xfail=FIXES["hybla-linux"])
    kcase("tcp-profile-flow-unknown", edit('cc = "newreno"', 'cc = "newreno"\ntcp = { profile = 5 }'), ["profile"])
    kcase("tcp-mss-huge", edit("mss = 1460", "mss = 4294967295"), ["mss"])
    kcase("tcp-mss-65496", edit("mss = 1460", "mss = 65496"), ["mss"])
    # ILC-TCP where nothing reports to it: runs as standard TCP, with a warning.
    kcase("tcp-ilc-fixed-host", in_table(SHORT, "[tcp]", 'ilc = "link-ip"'), ["tcp.ilc", "mobile"], "warns")


CC = 'cc = "newreno"'
CC_TABLES: list[tuple[str, str, list[str], dict[str, str]]] = [
    ("cubic", "c", FLOAT, {"1e308": "error-or-runs"}),
    ("cubic", "beta", FLOAT + ["1.0", "1.5"], {}),
    ("cubic", "linux", BOOL, {}),
    ("hybla", "rtt0", DUR, {'"1ns"': "runs", '"18000000000s"': "runs"}),
    ("tcp-radio", "growth", BOOL, {}),
    ("westwood+", "acked", ENUM, {}),
    ("westwood+", "filter_stages", INT + ["3", "256"], {}),
    ("satpep", "rate", RATE, {'"1bps"': "runs", '"18000000000Gbps"': "runs"}),
]


def cc_tables() -> None:
    for name, key, vals, ok in CC_TABLES:
        values(f"cc-{name}-{key}", lambda v, name=name, key=key: SHORT.replace(CC, f'cc = {{ name = "{name}", {key} = {v} }}'),
               vals, [key], ok)
    for k, v in enumerate(["1", "4", "256", "-1", '"2"']):
        kcase(f"cc-mpcp-packets-{k}", SHORT.replace(CC, f'cc = {{ name = "mpcp", packets = {v} }}'), ["packets"])
    kcase("cc-satpep-no-rate", SHORT.replace(CC, 'cc = { name = "satpep" }'), ["rate"])
    kcase("cc-cubic-unknown-key", SHORT.replace(CC, 'cc = { name = "cubic", rtt0 = "25ms" }'), ["rtt0"])
    kcase("cc-table-no-name", SHORT.replace(CC, "cc = { c = 0.4 }"), ["name"])


def ipsec_keys() -> None:
    flow = lambda v: SHORT.replace(CC, f"{CC}\nipsec = {v}")  # noqa: E731
    values("ipsec", flow, ["5", '"yes"', "[]", "{ nope = 1 }", "{ lift = 5 }"], ["ipsec"])
    values("ipsec-esp-overhead", lambda v: flow(f"{{ esp_overhead = {v} }}"),
           INT + ["9", "1025", '"18B"'], ["esp_overhead"])
    kcase("ipsec-esp-overhead-max", flow("{ esp_overhead = 1024 }"), [], "runs")
    kcase("ipsec-esp-mss-too-big", flow("{ esp_overhead = 1024 }").replace("mss = 1460", "mss = 65495"), ["mss"])
    # MH-LIFT needs a gateway with BS-LIFT between the ends; SMALL has none.
    kcase("lift-no-gateway", flow("{ lift = true }"), ["ipsec.lift"])
    kcase("lift-bs-on-receiver", flow("{ lift = true }") + '\n[[agent]]\nkind = "lift-bs"\nnode = "dst"\n',
          ["ipsec.lift", "dst"])
    kcase("lift-protection-no-lift", flow("{ self_protection = { probes = 3 } }"), ["self_protection"])
    for k, v in enumerate(["0", "-1", "1.5", '"3"']):
        kcase(f"lift-probes-{k}", flow(f"{{ lift = true, self_protection = {{ probes = {v} }} }}"), ["probes"])
    for k, v in enumerate(['"0s"', '"-1s"', "5"]):
        kcase(f"lift-patience-{k}", flow(f"{{ lift = true, self_protection = {{ patience = {v} }} }}"), ["patience"])


LIFT = SHORT.replace('[[node]]\nname = "dst"', '[[node]]\nname = "gw"\n\n[[node]]\nname = "dst"').replace(
    'a = "src"\nb = "dst"', 'a = "src"\nb = "gw"') + (
    '\n[[link]]\nname = "sat2"\na = "gw"\nb = "dst"\nrate = "1Mbps"\ndelay = "250ms"\n')


def lift_keys() -> None:
    base = LIFT.replace(CC, f"{CC}\nipsec = {{ esp_overhead = 18, lift = true }}")
    agent = '\n[[agent]]\nkind = "lift-bs"\nnode = "gw"\n'
    kcase("lift-ok", base + agent, [], "runs")
    kcase("lift-bs-off-path", base + agent.replace('"gw"', '"src"'), ["ipsec.lift", "src"])
    values("lift-bs-timer", lambda v: base + agent + f"timer = {v}\n", DUR, ["timer"],
           {'"1ns"': "runs", '"18000000000s"': "runs"})
    values("lift-bs-compromised", lambda v: base + agent + f"compromised = {v}\n", BOOL, ["compromised"])
    kcase("lift-probes-huge", base.replace("lift = true", "lift = true, self_protection = { probes = 4294967295 }") + agent,
          [], "runs")


def esw_keys() -> None:
    esw = lambda line: SHORT.replace('queue = "100pkt"', f'queue = "100pkt"\nlayer = "esw"\n[link.esw]\n{line}')  # noqa: E731
    for key, vals, ok in (
        ("frame_units", INT, {"4294967295": "error-or-runs"}),
        ("frame", DUR, {'"1ns"': "error-or-runs", '"18000000000s"': "error-or-runs"}),
        ("tack", DUR, {'"1ns"': "error-or-runs", '"18000000000s"': "runs"}),
        ("rtx_timeout", DUR, {'"1ns"': "error-or-runs", '"18000000000s"': "runs"}),
        ("dl_timeout", DUR, {'"1ns"': "runs", '"18000000000s"': "runs"}),
        ("tx_window", SIZE, {'"18000000000GB"': "runs"}),
        ("arq", BOOL, {}),
        ("shared_channel", BOOL, {}),
    ):
        values(f"esw-{key}", lambda v, key=key: esw(f"{key} = {v}"), vals, [key], ok)
    kcase("esw-ok-queue-bytes", esw("arq = true").replace('queue = "100pkt"', 'queue = "1B"'), [], "runs")


WLAN = SHORT.replace('[[node]]\nname = "dst"', '[[node]]\nname = "ap"\n\n[[node]]\nname = "dst"').replace(
    'a = "src"\nb = "dst"', 'a = "src"\nb = "ap"') + '\n[[wlan]]\nname = "air"\nap = "ap"\nstations = ["dst"]\n'


def wlan_keys() -> None:
    kcase("wlan-ok", WLAN, [], "runs")
    line = lambda k, v: WLAN + f"{k} = {v}\n"  # noqa: E731
    for key, vals, ok, extra in (
        ("cw_min", INT + ["65536"], {"0": "runs"}, {}),
        ("cw_max", INT + ["65536"], {}, {}),
        ("short_retry", INT + ["65536"], {}, {}),
        ("long_retry", INT + ["65536"], {}, {}),
        ("slot", DUR, {'"0s"': "error-or-runs", '"1ns"': "error-or-runs", '"18000000000s"': "error-or-runs"},
         {"xfail": FIXES["wlan-times"]}),
        ("sifs", DUR, {'"0s"': "error-or-runs", '"1ns"': "error-or-runs", '"18000000000s"': "error-or-runs"},
         {"xfail": FIXES["wlan-times"]}),
        ("difs", DUR, {'"0s"': "error-or-runs", '"1ns"': "error-or-runs", '"18000000000s"': "error-or-runs"},
         {"xfail": FIXES["wlan-times"]}),
        ("plcp", DUR, {'"0s"': "error-or-runs", '"1ns"': "error-or-runs", '"18000000000s"': "error-or-runs"},
         {"xfail": FIXES["wlan-times"]}),
        ("data_rate", RATE, {'"1bps"': "error-or-runs", '"18000000000Gbps"': "error-or-runs"}, {}),
        ("basic_rate", RATE, {'"1bps"': "error-or-runs", '"18000000000Gbps"': "error-or-runs"}, {}),
        ("mac_overhead", SIZE + ['"4294967295B"', '"4294967296B"'], {'"0B"': "runs", '"1B"': "runs"},
         {"xfail": FIXES["mac"]}),
        ("rts_threshold", SIZE, {'"0B"': "runs", '"1B"': "runs", '"18000000000GB"': "error-or-runs"},
         {"xfail": FIXES["wlan"]}),
        ("eifs", BOOL, {}, {}),
        ("queue", ['"x"', '"-1pkt"', '"0pkt"', "5", '"1B"', '"18446744073709551615pkt"'],
         {'"1B"': "error-or-runs", '"18446744073709551615pkt"': "error-or-runs"}, {}),
    ):
        values(f"wlan-{key}", lambda v, key=key: line(key, v), vals, [key], ok, **extra)
    kcase("wlan-stations-empty", WLAN.replace('stations = ["dst"]', "stations = []"), ["stations"])
    kcase("wlan-stations-ap", WLAN.replace('stations = ["dst"]', 'stations = ["ap"]'), ["ap"])
    kcase("wlan-stations-type", WLAN.replace('stations = ["dst"]', "stations = 5"), ["stations"])
    many = "".join(f'[[node]]\nname = "s{i}"\n' for i in range(1001))
    kcase("wlan-stations-1001", WLAN.replace("[[link]]", many + "[[link]]", 1).replace(
        'stations = ["dst"]', "stations = [" + ", ".join(f'"s{i}"' for i in range(1001)) + "]"), ["stations"])


APOHN = WLAN + '\n[[agent]]\nkind = "apohn"\nsender = "src"\nbridge = "ap"\nstations = ["dst"]\n'


def apohn_keys() -> None:
    kcase("apohn-ok", APOHN, [], "runs")
    line = lambda k, v: APOHN + f"{k} = {v}\n"  # noqa: E731
    for key, vals, ok, extra in (
        ("buffer", INT, {"4294967295": "error-or-runs"}, {"xfail": FIXES["apohn-buffer"]}),
        ("window", ENUM, {}, {}),
        ("alpha", INT, {"4294967295": "error-or-runs"}, {"xfail": FIXES["apohn"]}),
        ("beta", INT, {"4294967295": "error-or-runs"}, {"xfail": FIXES["apohn"]}),
        ("rate", RATE, {'"1bps"': "error-or-runs", '"18000000000Gbps"': "error-or-runs"}, {"xfail": FIXES["apohn"]}),
        ("poll_interval", DUR, {'"1ns"': "error-or-runs", '"18000000000s"': "error-or-runs"}, {"xfail": FIXES["apohn"]}),
        ("encryption", SIZE + ['"1025B"'], {'"0B"': "runs", '"1B"': "runs"}, {}),
        ("weights", ["5", "{ 5001 = 0 }", "{ 5001 = -1 }", '{ x = 2 }', "{ 70000 = 2 }", "{ 5001 = 4294967295 }"],
         {"{ 5001 = 4294967295 }": "error-or-runs"}, {"xfail": FIXES["apohn"]}),
    ):
        values(f"apohn-{key}", lambda v, key=key: line(key, v), vals, [key], ok, **extra)
    kcase("apohn-sender-unknown", APOHN.replace('sender = "src"', 'sender = "nowhere"'), ["nowhere"])
    kcase("apohn-stations-empty", APOHN.replace('bridge = "ap"\nstations = ["dst"]', 'bridge = "ap"\nstations = []'),
          ["stations"])
    kcase("apohn-alpha-above-beta", line("alpha", "5") + "beta = 4\n", ["alpha"])


SCTP = SHORT.replace(CC, 'transport = "sctp"')


def sctp_keys() -> None:
    kcase("sctp-ok", SCTP, [], "runs")
    table = lambda k, v: SCTP + f"\n[flow.sctp]\n{k} = {v}\n"  # noqa: E731
    for key, vals, ok, extra in (
        ("streams", INT + ["65536"], {}, {}),
        ("chunk", INT, {"4294967295": "error-or-runs"}, {"xfail": FIXES["sctp"]}),
        ("chunks_per_packet", INT, {"4294967295": "error-or-runs"}, {"xfail": FIXES["sctp"]}),
        ("fast_rtx", INT, {"4294967295": "runs"}, {}),
        ("mtu", INT + ["65536"], {"4294967295": "error-or-runs", "65536": "error-or-runs"}, {"xfail": FIXES["sctp"]}),
        ("max_retrans", INT, {"0": "error-or-runs", "4294967295": "runs"}, {"xfail": FIXES["sctp"]}),
        ("max_init_retrans", INT, {"0": "error-or-runs", "4294967295": "runs"}, {"xfail": FIXES["sctp"]}),
        ("rto_min", DUR, {'"1ns"': "runs"}, {}),
        ("rto_initial", DUR, {'"1ns"': "error", '"18000000000s"': "error"}, {}),
        ("rto_max", DUR, {'"18000000000s"': "runs"}, {}),
        ("sack_delay", DUR, {'"1ns"': "runs"}, {}),
        ("rwnd", SIZE, {}, {}),
        ("message", SIZE, {'"1B"': "runs", '"18000000000GB"': "error-or-runs"}, {"xfail": FIXES["sctp-message"]}),
    ):
        ok = {k: v for k, v in ok.items() if v != "error"}
        values(f"sctp-{key}", lambda v, key=key: table(key, v), vals, [key], ok, **extra)
    kcase("sctp-with-cc", SHORT.replace(CC, f'{CC}\ntransport = "sctp"'), ["cc"])
    kcase("sctp-table-on-tcp", SHORT + "\n[flow.sctp]\nstreams = 4\n", ["sctp"])
    kcase("sctp-lift", SCTP.replace('transport = "sctp"', 'transport = "sctp"\nipsec = { lift = true }'), ["lift"])


WEB = SHORT.replace('size = "2MB"', "[flow.web]\npages = 2\nthink = false")


def web_keys() -> None:
    kcase("web-ok", WEB, [], "runs")
    line = lambda k, v: WEB.replace("pages = 2\n", "") + f"\n{k} = {v}\n"  # noqa: E731
    for key, vals, ok in (
        ("pages", INT, {"4294967295": "runs", "18446744073709551615": "runs"}),
        ("parallel", INT, {"4294967295": "runs"}),
        ("request", INT, {"4294967295": "runs", "18446744073709551615": "runs"}),
        ("persistent", BOOL, {}),
        ("think", BOOL, {}),
    ):
        values(f"web-{key}", lambda v, key=key: line(key, v), vals, [key], ok)
    for key in ("main_size", "inline_count", "inline_size", "think_time"):
        dists = ["5", '{ dist = "x" }', '{ dist = "gamma", mean = 1.0 }', '{ dist = "constant", value = -1 }',
                 '{ dist = "constant", value = nan }', '{ dist = "constant", value = inf }',
                 '{ dist = "lognormal", mean = 0, std = 1 }', '{ dist = "gamma", mean = 1, std = inf }',
                 '{ dist = "constant", value = 1e18 }', '{ dist = "lognormal", mean = 1e300, std = 1 }',
                 '{ dist = "constant", value = "1KB" }']
        ok = {'{ dist = "constant", value = 1e18 }': "runs", '{ dist = "lognormal", mean = 1e300, std = 1 }': "runs"}
        values(f"web-{key}", lambda v, key=key: line(key, v), dists, [key], ok)
    # In-line counts drawn as the page is fetched: a count of 10^9 allocates nothing.
    kcase("web-inline-count-1e9", line("inline_count", '{ dist = "constant", value = 1e9 }') +
          'inline_size = { dist = "constant", value = 1 }\n', [], "runs")
    kcase("web-ideal", WEB.replace(CC, 'transport = "ideal"'), ["web"])
    kcase("web-sctp-not-persistent", WEB.replace(CC, 'transport = "sctp"') + "persistent = false\n", ["persistent"])
    kcase("web-sctp-parallel", WEB.replace(CC, 'transport = "sctp"') + "parallel = 11\n", ["parallel"])
    kcase("web-parallel-1000", WEB + "persistent = false\nparallel = 1000\n"
          'inline_count = { dist = "constant", value = 2000 }\n', [], "runs", xfail=FIXES["livelock"])
    kcase("web-ports", WEB.replace("pages = 2", "pages = 1") + "persistent = false\nparallel = 1\n"
          'inline_count = { dist = "constant", value = 70000 }\ninline_size = { dist = "constant", value = 1 }\n'
          'main_size = { dist = "constant", value = 1 }\n',
          [], "error-or-runs", xfail=FIXES["ports"])


MOBILE = """[scenario]
name = "mobile"
duration = "3s"

[[node]]
name = "mh"
[[node]]
name = "ha"
[[node]]
name = "fa"
[[node]]
name = "ch"

[[link]]
name = "ha-ch"
a = "ha"
b = "ch"
rate = "5Mbps"
delay = "20ms"

[[link]]
name = "fa-ch"
a = "fa"
b = "ch"
rate = "5Mbps"
delay = "20ms"

[radio]
model = "two-ray"
range = 250.0

[[base_station]]
node = "ha"
position = [0.0, 0.0]

[[base_station]]
node = "fa"
position = [450.0, 0.0]

[mobile]
node = "mh"
home = "ha"
rate = "5Mbps"
delay = "20ms"
queue = "50pkt"
advertise = "1s"

[[flow]]
name = "upload"
from = "mh"
to = "ch"
cc = "reno"
size = "200KB"
"""


def mobile_keys() -> None:
    kcase("mobile-ok", MOBILE, [], "runs")
    kcase("mobile-ilc-ok", MOBILE.replace('cc = "reno"', 'cc = "reno"\ntcp = { ilc = "link-ip" }'), [], "runs")
    kcase("mobile-ilc-fixed-sender", MOBILE.replace('from = "mh"\nto = "ch"', 'from = "ch"\nto = "mh"').replace(
        'cc = "reno"', 'cc = "reno"\ntcp = { ilc = "link-ip" }'), ["tcp.ilc", "mh"], "warns")
    mob = lambda k, v: MOBILE.replace('advertise = "1s"', f'advertise = "1s"\n{k} = {v}')  # noqa: E731
    values("mobile-advertise", lambda v: MOBILE.replace('advertise = "1s"', f"advertise = {v}"), DUR, ["advertise"],
           {'"1ns"': "error-or-runs", '"18000000000s"': "error-or-runs"}, xfail=FIXES["advertise"])
    values("mobile-speed", lambda v: mob("speed", v) + "", FLOAT, ["speed"],
           {"0.0": "error-or-runs", "1e308": "error-or-runs"}, xfail=FIXES["mobile"])
    values("mobile-rate", lambda v: MOBILE.replace('rate = "5Mbps"\ndelay = "20ms"\nqueue', f"rate = {v}\n"
                                                   'delay = "20ms"\nqueue'), RATE, ["rate"],
           {'"1bps"': "runs", '"18000000000Gbps"': "runs"})
    values("mobile-disconnect-count", lambda v: MOBILE + f'\n[mobile.disconnect]\ncount = {v}\nduration = "1s"\n'
           'first = "1s"\nevery = "3s"\n', INT + ["10001"], ["count"], {"0": "runs"})
    values("mobile-position", lambda v: mob("position", v), ["[nan, 0.0]", "[inf, 0.0]", "[1e308, 0.0]", "[0.0]", "5"],
           ["position"], {"[1e308, 0.0]": "error-or-runs"}, xfail=FIXES["mobile"])
    values("radio-range", lambda v: MOBILE.replace("range = 250.0", f"range = {v}"), FLOAT, ["range"],
           {"1e308": "error-or-runs"}, xfail=FIXES["mobile"])
    values("radio-tx-power", lambda v: MOBILE.replace("range = 250.0", f"range = 250.0\ntx_power_w = {v}"), FLOAT,
           ["tx_power_w"], {"1e308": "error-or-runs"}, xfail=FIXES["mobile"])


def scenario_keys() -> None:
    # max_samples binds the runs that keep series (validate's, and run --out): validate.
    for k, v in enumerate(INT):
        text = SHORT.replace("seed = 1", f"seed = 1\nmax_samples = {v}")
        if v in ("4294967295", "18446744073709551615"):
            kcase(f"scenario-max-samples-{k}", text, [], "runs")
        else:
            kcase(f"scenario-max-samples-{k}", text, ["max_samples"], run=False)
    values("stop-when-done", lambda v: SHORT.replace('seed = 1', f"seed = 1\nstop_when_done = {v}"), BOOL,
           ["stop_when_done"])
    values("outages", lambda v: SHORT.replace('queue = "100pkt"', f'queue = "100pkt"\noutages = {v}'),
           ["5", '[{ down = "1s", up = "1s" }]', '[{ down = "-1s", up = "1s" }]', '[{ down = "1s" }]',
            '[{ down = "1s", up = "1000000000000s" }]', '[{ down = "1s", up = "18000000000s" }]'], ["outages"])
    values("link-queue-bytes", lambda v: SHORT.replace('queue = "100pkt"', f"queue = {v}"),
           ['"1B"', '"39B"', '"1499B"', '"0B"', '"0pkt"'], ["queue"])
    kcase("link-queue-ba-bytes", SHORT.replace('queue = "100pkt"', 'queue = "100pkt"\nba = { queue = "59B" }'),
          ["(ba).queue"])
    kcase("link-queue-1500B", SHORT.replace('queue = "100pkt"', 'queue = "1500B"'), [], "runs")
    # A route longer than IP's TTL: every packet is dropped on the way; a warning says so.
    nodes = "".join(f'[[node]]\nname = "n{i}"\n' for i in range(66))
    links = "".join(f'[[link]]\nname = "l{i}"\na = "n{i}"\nb = "n{i + 1}"\nrate = "1Gbps"\ndelay = "1us"\n'
                    for i in range(65))
    kcase("ttl-route", '[scenario]\nname = "ttl"\nduration = "1s"\n' + nodes + links +
          '[[flow]]\nname = "f"\nfrom = "n0"\nto = "n65"\nsize = "10KB"\n', ["flow[0] 'f'", "TTL"], "warns")
    # Many connections at once.
    flows = "".join(f'[[flow]]\nname = "g{i}"\nfrom = "src"\nto = "dst"\nsize = "10KB"\n' for i in range(900))
    kcase("flows-900-at-zero", SHORT + flows, [], "runs", xfail=FIXES["livelock"])
    # A scenario too large to read: refused with the limit, never a multi-GB parse.
    name = "keys/nodes-2000000.toml"
    for command in ("validate", "run"):
        case(f"{command}-nodes-2000000", "key", [command, name], ["nodes-2000000.toml", "8 MiB"], isolate=True,
             make={"nodes": 2_000_000})


def key_corpus() -> None:
    tcp_keys()
    cc_tables()
    ipsec_keys()
    lift_keys()
    esw_keys()
    wlan_keys()
    apohn_keys()
    sctp_keys()
    web_keys()
    mobile_keys()
    scenario_keys()


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    scenarios()
    sweeps()
    command_lines()
    engine_cases()
    key_corpus()
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    (OUT / "cases.json").write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n")
    xfail = sum(1 for c in cases if "xfail" in c)
    print(f"{len(cases)} cases ({xfail} for the engine's fixes) in {OUT}")


if __name__ == "__main__":
    main()
