"""`hetpath run`, `validate`, `list cc` and `--version` on good input."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import FLOW_KEYS, LINK_KEYS, SUMMARY_KEYS, invoke


def test_json_is_the_only_stdout(small_toml: Path) -> None:
    result = invoke(["run", str(small_toml), "--json"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)  # the whole of stdout must be one JSON document
    assert list(summary) == SUMMARY_KEYS
    assert summary["scenario"] == "small"
    assert summary["seed"] == 1
    assert isinstance(summary["events"], int) and summary["events"] > 0
    assert len(summary["flows"]) == 1
    assert list(summary["flows"][0]) == FLOW_KEYS
    assert len(summary["links"]) == 2, "one entry per link direction"
    for link in summary["links"]:
        assert list(link) == LINK_KEYS
    assert {(ln["from"], ln["to"]) for ln in summary["links"]} == {("src", "dst"), ("dst", "src")}


def test_json_is_strict(small_toml: Path) -> None:
    """No NaN/Infinity tokens: strict parsers (jq, browsers) must accept the output."""
    result = invoke(["run", str(small_toml), "--json"])

    def reject(token: str) -> None:
        raise AssertionError(f"non-standard JSON token {token}")

    json.loads(result.stdout, parse_constant=reject)


def test_seed_override(small_toml: Path) -> None:
    result = invoke(["run", str(small_toml), "--json", "--seed", "42"])
    assert json.loads(result.stdout)["seed"] == 42


def test_table_output(small_toml: Path) -> None:
    result = invoke(["run", str(small_toml)], env={"COLUMNS": "140"})
    assert result.exit_code == 0, result.stderr
    for text in ("small", "flows", "links", "f1", "newreno", "goodput", "sat", "src → dst"):
        assert text in result.stdout, text
    assert result.stderr == ""  # short run, not a TTY: no progress bar, no notes


def test_out_dir_written(tmp_path: Path, small_toml: Path) -> None:
    out = tmp_path / "res"
    result = invoke(["run", str(small_toml), "--out", str(out), "--no-plots", "--json"])
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout)
    names = {p.name for p in out.iterdir()}
    assert {"summary.json", "flows.csv", "links.csv", "flow_series.csv", "link_series.csv"} <= names
    assert not any(n.endswith(".png") or n.endswith(".pcap") for n in names)
    assert f"to {out}" in result.stderr


def test_quiet_suppresses_notes(tmp_path: Path, small_toml: Path) -> None:
    result = invoke(["run", str(small_toml), "--out", str(tmp_path), "--no-plots", "--quiet"])
    assert result.exit_code == 0
    assert result.stderr == ""


def test_pcap_defaults_to_out_scenario_name(tmp_path: Path, small_toml: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(["run", str(small_toml), "--pcap", "--no-plots", "--quiet"])
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out" / "small"
    pcaps = sorted(p.name for p in out.glob("*.pcap"))
    assert pcaps == ["00_sat_src-dst.pcap", "01_sat_dst-src.pcap"]
    assert (out / "summary.json").is_file()
    for pcap in out.glob("*.pcap"):
        assert pcap.read_bytes()[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4",
                                         b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")


def test_plots_by_default_with_out(tmp_path: Path, small_toml: Path) -> None:
    result = invoke(["run", str(small_toml), "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 0, result.stderr
    for name in ("cwnd.png", "queue.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validate_ok(small_toml: Path) -> None:
    result = invoke(["validate", str(small_toml)])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"{small_toml}: ok"


def test_list_cc() -> None:
    result = invoke(["list", "cc"])
    assert result.exit_code == 0
    names = result.stdout.split()
    assert "newreno" in names
    assert len(names) == len(set(names))


def test_list_profiles() -> None:
    result = invoke(["list", "profiles"])
    assert result.exit_code == 0
    out = result.stdout
    for name in ("rfc", "linux", "ns3", "tcp-radio", "tcp-radio-newrto"):
        assert f"\n{name}\n" in f"\n{out}"
    assert 'cc = "tcp-radio"' in out and "max_rto = \"12s\"" in out
    # ns-3's CUBIC counts acked segments where its NewReno counts ACKs.
    assert 'with cc = "cubic":\n    abc = 65535' in out


def test_version() -> None:
    result = invoke(["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("hetpath ") and "engine" in result.stdout


def test_plots_without_out_use_default_dir(tmp_path: Path, small_toml: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(["run", str(small_toml), "--plots", "--quiet"])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "out" / "small" / "cwnd.png").is_file()
    assert not list((tmp_path / "out" / "small").glob("*.pcap"))


def test_sctp_flow_runs_and_reports(tmp_path: Path, small_toml: Path) -> None:
    """`transport = "sctp"`: the flow row is labelled sctp, the endpoints' counters show."""
    text = small_toml.read_text().replace('cc = "newreno"', 'transport = "sctp"\nipsec = true')
    scenario = tmp_path / "sctp.toml"
    scenario.write_text(text.replace('size = "2MB"', 'size = "200KB"'))
    result = invoke(["run", str(scenario), "--json"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    flow = summary["flows"][0]
    assert list(flow) == FLOW_KEYS
    assert (flow["cc"], flow["bytes_delivered"]) == ("sctp", 200_000)
    assert flow["completion_s"] is not None and flow["sender_done_s"] is not None
    counters = {(m["node"], m["counter"]): m["value"] for m in summary["machines"] if m["machine"] == "sctp"}
    assert counters[("dst", "bytes_delivered")] == 200_000
    assert counters[("src", "data_chunks_sent")] >= 200_000 // 600
    table = invoke(["run", str(scenario)], env={"COLUMNS": "140"})
    assert table.exit_code == 0, table.stderr
    assert "sctp" in table.stdout


def test_a_node_s_own_drops_reach_the_summary_the_tables_and_the_trace(tmp_path: Path) -> None:
    """A path of 65 hops: every packet's TTL of 64 runs out at n64, and that shows."""
    text = '[scenario]\nname = "chain"\nduration = "5s"\n'
    text += "".join(f'[[node]]\nname = "n{i}"\n' for i in range(66))
    text += "".join(f'[[link]]\nname = "l{i}"\na = "n{i - 1}"\nb = "n{i}"\nrate = "10Mbps"\ndelay = "1ms"\n'
                    for i in range(1, 66))
    text += '[[flow]]\nname = "f"\nfrom = "n0"\nto = "n65"\nsize = "10kB"\n'
    path, out, trace = tmp_path / "chain.toml", tmp_path / "res", tmp_path / "trace.csv"
    path.write_text(text)
    result = invoke(["run", str(path), "--out", str(out), "--no-plots", "--trace", str(trace)],
                    env={"COLUMNS": "140"})
    assert result.exit_code == 0, result.stderr
    assert "node drops" in result.stdout and "TTL expired" in result.stdout
    nodes = json.loads((out / "summary.json").read_text())["nodes"]
    assert [n["name"] for n in nodes] == [f"n{i}" for i in range(66)]
    dropped = {n["name"]: n["ttl_drops"] for n in nodes if n["ttl_drops"]}
    assert list(dropped) == ["n64"] and dropped["n64"] >= 1
    assert all(n["no_route_drops"] == 0 and n["unclaimed_drops"] == 0 for n in nodes)
    assert (out / "nodes.csv").read_text().splitlines()[0] == "seed,name,ttl_drops,no_route_drops,unclaimed_drops"
    rows = [line.split(",") for line in trace.read_text().splitlines()[1:]]
    expired = [r for r in rows if r[1] == "node.ttl_expired"]
    assert len(expired) == dropped["n64"] and all(r[2] == "n64" and r[3] == "f" for r in expired)

