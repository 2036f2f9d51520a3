"""The results store's lines carry a digest over their key, seed, engine version and
result: a resumed sweep or reproduction verifies every line and refuses an edited,
damaged or foreign one with its line number; ``--resume --drop-bad`` drops those lines
and reruns their runs. A line cut short by a kill stays harmless."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hetpath import _bridge, outdir, sweep
from hetpath.errors import HetpathError, OutputError
from hetpath.store import ResultsStore, StoreError, encode_line, run_key
from helpers import invoke
from test_sweep_resume import StopAfter, write_sweep

from hetpath.commands import sweep as sweep_cmd


def _stopped_sweep(tmp_path: Path, monkeypatch, k: int = 5) -> tuple[Path, Path, Path]:
    """A sweep interrupted after ``k`` of its 12 runs: (sweep file, --out, its store)."""
    path = write_sweep(tmp_path)
    out = tmp_path / "part"
    with monkeypatch.context() as m:
        m.setattr(sweep_cmd, "LocalBackend", StopAfter(k))
        assert invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"]).exit_code == 130
    store = outdir.staging_path(out) / "results.jsonl"
    assert len(store.read_bytes().splitlines()) == k
    return path, out, store


def _edit_line(store: Path, n: int, edit) -> None:  # type: ignore[no-untyped-def]
    lines = store.read_bytes().splitlines(keepends=True)
    lines[n - 1] = edit(lines[n - 1])
    store.write_bytes(b"".join(lines))


def _count_runs(monkeypatch) -> list:  # type: ignore[no-untyped-def]
    ran: list = []
    real = sweep.run_flows
    monkeypatch.setattr(sweep, "run_flows", lambda t: ran.append(t) or real(t))
    return ran


def _replace_result(line: bytes, result) -> bytes:  # type: ignore[no-untyped-def]
    """The line with its result replaced, everything else (the digest too) as it was."""
    entry = json.loads(line)
    entry["result"] = result
    return json.dumps(entry).encode() + b"\n"


def _same_key_other_result(line: bytes) -> bytes:
    """A second line for the run of ``line`` with another result, and a digest of its own
    (as from a store of a different run concatenated onto this one)."""
    entry = json.loads(line)
    flows = entry["result"]
    flows[0]["goodput_bps"] += 1.0
    return encode_line(entry["key"], entry["seed"], _bridge.core_version(), json.dumps(flows))


DAMAGE = {
    "an edited value": lambda line: _replace_result(line, _bump(json.loads(line)["result"])),
    "an empty result": lambda line: _replace_result(line, []),
    "a wrongly typed result": lambda line: _replace_result(line, {"flows": 3}),
    "a result of a string": lambda line: _replace_result(line, "x"),
    "an edited seed": lambda line: line.replace(b'"seed": ', b'"seed": 9', 1),
    "a line without digest": lambda line: json.dumps({k: v for k, v in json.loads(line).items() if k != "digest"}).encode() + b"\n",
    "a line of garbage": lambda line: b"\x00\x00 disk block \xff\n",
    "an empty line": lambda line: b"\n",
    "very deep nesting": lambda line: b"[" * 100_000 + b"\n",
    "a line of another engine": lambda line: encode_line(json.loads(line)["key"], json.loads(line)["seed"], "0.0.0-other",
                                                         json.dumps(json.loads(line)["result"])),
}


def _bump(flows):  # type: ignore[no-untyped-def]
    flows[0]["goodput_bps"] = flows[0]["goodput_bps"] * 2 + 1
    return flows


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_line_stops_the_resume_with_its_line_number(tmp_path: Path, monkeypatch, damage: str) -> None:
    path, out, store = _stopped_sweep(tmp_path, monkeypatch)
    _edit_line(store, 3, DAMAGE[damage])
    ran = _count_runs(monkeypatch)
    result = invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1", "--resume"])
    assert result.exit_code == 2, result.stderr
    line, = result.stderr.splitlines()
    assert f"{store}: line 3: " in line and "--resume --drop-bad" in line, line
    if damage == "a line of another engine":
        assert "engine 0.0.0-other" in line and _bridge.core_version() in line
    assert ran == [] and not out.exists()


def test_a_key_stored_twice_with_different_results_is_damage(tmp_path: Path, monkeypatch) -> None:
    path, out, store = _stopped_sweep(tmp_path, monkeypatch)
    first = store.read_bytes().splitlines(keepends=True)[1]
    with open(store, "ab") as f:
        f.write(_same_key_other_result(first))
    result = invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1", "--resume"])
    assert result.exit_code == 2, result.stderr
    assert "line 6: its key is also an earlier line's" in result.stderr

    # The same line twice is harmless: equal runs give equal lines.
    store.write_bytes(b"".join(store.read_bytes().splitlines(keepends=True)[:5]) + first)
    assert len(ResultsStore(store).load()) == 5


def test_drop_bad_drops_the_damaged_lines_and_reruns_their_runs(tmp_path: Path, monkeypatch) -> None:
    path, out, store = _stopped_sweep(tmp_path, monkeypatch)
    full = tmp_path / "full"
    assert invoke(["sweep", str(path), "--out", str(full), "-q", "--jobs", "1"]).exit_code == 0
    _edit_line(store, 2, DAMAGE["an edited value"])
    _edit_line(store, 4, DAMAGE["a line of another engine"])
    first = store.read_bytes().splitlines(keepends=True)[0]
    with open(store, "ab") as f:  # the first run twice, with different results: neither is kept
        f.write(_same_key_other_result(first))

    assert invoke(["sweep", str(path), "--out", str(out), "-q", "--drop-bad"]).exit_code == 2
    ran = _count_runs(monkeypatch)
    result = invoke(["sweep", str(path), "--out", str(out), "--jobs", "1", "--resume", "--drop-bad", "--json"])
    assert result.exit_code == 0, result.stderr
    assert f"hetpath: dropped 4 damaged lines of {store}; their runs run again" in result.stderr
    assert len(ran) == 12 - 5 + 3
    for name in ("runs.csv", "summary.csv"):
        assert (out / name).read_bytes() == (full / name).read_bytes(), name
    assert len(ResultsStore(out / "results.jsonl").load()) == 12

    again = invoke(["sweep", str(path), "--out", str(out), "--jobs", "1", "--resume", "--drop-bad", "--json"])
    assert again.exit_code == 0 and f"no damaged line in {out / 'results.jsonl'}" in again.stderr


def test_an_edited_finished_sweep_is_named_and_left_alone(tmp_path: Path) -> None:
    """--resume of a finished sweep reads DIR/results.jsonl: its damage names that file,
    and no staging directory is left behind."""
    path = write_sweep(tmp_path)
    out = tmp_path / "o"
    assert invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1"]).exit_code == 0
    _edit_line(out / "results.jsonl", 7, DAMAGE["an empty result"])
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    result = invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1", "--resume"])
    assert result.exit_code == 2
    assert f"{out / 'results.jsonl'}: line 7: " in result.stderr
    assert not outdir.staging_path(out).exists()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    fixed = invoke(["sweep", str(path), "--out", str(out), "-q", "--jobs", "1", "--resume", "--drop-bad"])
    assert fixed.exit_code == 0, fixed.stderr
    assert len(ResultsStore(out / "results.jsonl").load()) == 12


def test_reproduce_verifies_its_store_before_running(tmp_path: Path, monkeypatch) -> None:
    from hetpath.reproduce import tcp_radio

    out = tmp_path / "o"
    staging = outdir.staging_path(out)
    staging.mkdir()
    store = ResultsStore(staging / "results.jsonl")
    for seed in (1, 2, 3):
        store.add(run_key("scenario", seed), seed, [{"name": "f", "goodput_bps": 1.5 * seed}])
    store.close()
    _edit_line(staging / "results.jsonl", 2, lambda line: line.replace(b"3.0", b"4.0"))
    called = []
    def reproduce(ctx):  # type: ignore[no-untyped-def]
        called.append(ctx.store.load())
        raise KeyboardInterrupt

    monkeypatch.setattr(tcp_radio, "reproduce", reproduce)
    result = invoke(["reproduce", "tcp-radio", "--quick", "--out", str(out), "-q", "--resume"])
    assert result.exit_code == 2 and called == []
    assert "results.jsonl: line 2: its digest does not match" in result.stderr
    assert invoke(["reproduce", "tcp-radio", "--quick", "--out", str(out), "-q", "--drop-bad"]).exit_code == 2
    result = invoke(["reproduce", "tcp-radio", "--quick", "--out", str(out), "--resume", "--drop-bad"])
    assert result.exit_code == 130
    assert "dropped 1 damaged line of" in result.stderr
    assert sorted(called[0]) == sorted(run_key("scenario", s) for s in (1, 3))


def test_a_cut_last_line_is_harmless_and_never_followed(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    store = ResultsStore(path)
    store.add(run_key("a", 1), 1, [{"x": 0.1}])
    store.close()
    whole = path.read_bytes()
    line2 = encode_line(run_key("a", 2), 2, store.engine, json.dumps([{"x": 0.2}]))
    for cut in range(1, len(line2)):  # killed anywhere inside the second line
        path.write_bytes(whole + line2[:cut])
        reader = ResultsStore(path)
        assert reader.load() == {run_key("a", 1): [{"x": 0.1}]}
        reader.add(run_key("a", 3), 3, [{"x": 0.3}])
        reader.close()
        assert path.read_bytes() == whole + encode_line(run_key("a", 3), 3, store.engine, json.dumps([{"x": 0.3}]))
    # A line of garbage is damage anywhere but at the end without its newline.
    path.write_bytes(whole + b'{"key": "cut sh\n' + line2)
    with pytest.raises(StoreError, match="line 2: not valid JSON"):
        ResultsStore(path).load()


def test_store_error_is_a_hetpath_output_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"[]\n")
    with pytest.raises(OutputError) as info:
        ResultsStore(path).load()
    assert isinstance(info.value, (StoreError, HetpathError)) and info.value.line == 1


def test_the_digest_covers_key_seed_engine_and_result(tmp_path: Path) -> None:
    line = encode_line("a" * 64, 7, "1.0", '[{"x": 1.5}]')
    entry = json.loads(line)
    assert list(entry) == ["key", "seed", "engine", "result", "digest"]
    path = tmp_path / "r.jsonl"
    for old, new in ((b'"a', b'"b'), (b": 7", b": 8"), (b'"1.0"', b'"2.0"'), (b"1.5", b"2.5")):
        path.write_bytes(line.replace(old, new, 1))
        with pytest.raises(StoreError, match="line 1: "):
            ResultsStore(path, engine="1.0").load()
    path.write_bytes(line)
    assert ResultsStore(path, engine="1.0").load() == {"a" * 64: [{"x": 1.5}]}
