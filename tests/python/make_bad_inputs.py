"""Generate the corpus of malformed inputs (issue 17): scenario files, sweep files and
command lines a new user might type, each of which must give one ``hetpath: error:``
line naming the file (or option) and exit 2, with no traceback and no panic.

    python tests/python/make_bad_inputs.py      # rewrites tests/python/data/bad_inputs/

The corpus is kept in the repository; ``test_bad_inputs.py`` runs every case. A case is
``{"id", "class", "args", "names", ...}`` in ``cases.json``: ``args`` is the command line
(paths relative to the corpus directory, ``{tmp}`` a fresh temporary directory),
``names`` what the error line must contain. Cases whose fix was the engine's (crates/)
carry ``"xfail"``: the issue item they were written for (they pass since it landed); ``"check": "pcaps"`` means
"succeeds with one distinct pcap per link direction" instead of an error; ``"isolate"``
cases (that could read forever or block) run in a subprocess with a time and memory
limit; ``"forbid"`` lists text the message must not echo.
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
    "durations": "issue 17 item 2: durations and times that would overflow are a scenario error (engine)",
    "samples": "issue 17 item 2: a max_samples guard errors out up front (engine)",
    "clamp": "issue 17 item 9: huge rates and sizes are an error, never a clamp (engine)",
    "pep": "issue 17 item 9: a split PEP on the destination delivers nothing (engine)",
    "xcp": "issue 17 item 9: cc = xcp needs an xcp-router (engine)",
    "fec": "issue 17 item 9: markov's fec accepts n > 255 (engine)",
    "pcap": "issue 17 item 6: pcap names collide (engine)",
    "trace": "issue 17 item 10: a trace file must be a regular file under a size limit, never echoed (engine)",
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


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    scenarios()
    sweeps()
    command_lines()
    engine_cases()
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    (OUT / "cases.json").write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n")
    xfail = sum(1 for c in cases if "xfail" in c)
    print(f"{len(cases)} cases ({xfail} for the engine's fixes) in {OUT}")


if __name__ == "__main__":
    main()
