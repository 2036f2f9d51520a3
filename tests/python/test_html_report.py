"""``hetpath report DIR``: one self-contained page, checked without a browser by parsing it
with the standard library's html.parser."""

from __future__ import annotations

import base64
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import FLOW_KEYS, LINK_KEYS, invoke
from test_sweep import write_sweep

PNG = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """What a reader sees: section headings, tables (header and body cells), images,
    and every URL the page would fetch or link to."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.tables: list[dict[str, list[Any]]] = []
        self.images: list[str] = []
        self.urls: list[str] = []
        self.pre: list[str] = []
        self._cell: list[str] | None = None
        self._tag = ""
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key):
                self.urls.append(a[key] or "")
        if tag == "img":
            self.images.append(a.get("src") or "")
        elif tag == "table":
            self.tables.append({"th": [], "td": []})
        elif tag in ("th", "td", "h1", "h2", "h3", "pre"):
            self._tag, self._cell = tag, []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._cell is None or tag != self._tag:
            return
        text = "".join(self._cell).strip()
        if tag in ("th", "td"):
            self.tables[-1][tag].append(text)
        elif tag == "pre":
            self.pre.append(text)
        else:
            self.headings.append(text)
        self._cell = None


def report(directory: Path) -> Page:
    result = invoke(["report", str(directory)])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == f"hetpath: wrote {directory / 'report.html'}\n"
    return Page((directory / "report.html").read_text(encoding="utf-8"))


def assert_self_contained(page: Page) -> None:
    assert all(u.startswith("data:image/png;base64,") for u in page.urls), page.urls
    for src in page.images:
        assert base64.b64decode(src.split(",", 1)[1], validate=True).startswith(PNG)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    small = Path(__file__).parent / "data" / "small.toml"
    assert invoke(["run", str(small), "--out", str(out), "-q"]).exit_code == 0
    return out


def test_a_run_directory(run_dir: Path) -> None:
    page = report(run_dir)
    assert page.headings[:1] == ["hetpath report: small"]
    assert {"Summary", "Provenance", "Tables", "Figures", "Scenario"} <= set(page.headings)
    # The flow and link tables, one column per key of the schema (and the seed).
    headers = [t["th"] for t in page.tables]
    assert ["seed", *FLOW_KEYS] in headers and ["seed", *LINK_KEYS] in headers
    flows = next(t for t in page.tables if t["th"] == ["seed", *FLOW_KEYS])
    assert flows["td"][FLOW_KEYS.index("name") + 1] == "f1"
    # Provenance, exactly as summary.json holds it.
    prov = json.loads((run_dir / "summary.json").read_text())["provenance"]
    prov_table = next(t for t in page.tables if "scenario_sha256" in t["th"])
    assert prov_table["td"][prov_table["th"].index("scenario_sha256")] == prov["scenario_sha256"]
    # Every figure, embedded; the series are too long to show and are only named.
    assert len(page.images) == len(list(run_dir.glob("*.png"))) == 2
    assert_self_contained(page)
    assert not any(t["th"][:2] == ["time_s", "flow"] for t in page.tables)
    assert page.pre and page.pre[0] == (run_dir / "scenario.toml").read_text().strip()


def test_a_sweep_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    sweep = write_sweep(tmp_path, 'seeds = 2\n[grid]\n"link.l.rate" = ["1Mbps", "2Mbps"]\n')
    assert invoke(["sweep", str(sweep), "--out", str(out), "-q", "-j", "2"]).exit_code == 0
    page = report(out)
    summary = pd.read_csv(out / "summary.csv")
    table = next(t for t in page.tables if t["th"] == list(summary.columns))
    assert len(table["td"]) == summary.size
    assert "Provenance" not in page.headings and not page.images


def test_a_reproduce_directory(tmp_path: Path, run_dir: Path) -> None:
    """What `hetpath reproduce --out` writes: comparison, findings, a long runs.csv, PNGs."""
    pd.DataFrame({"section": ["6.1"], "metric": ["normalized_throughput"], "paper": [">0.6"],
                  "ours": ["0.397 ± 0.073"], "check": ["does not hold"]}).to_csv(tmp_path / "comparison.csv", index=False)
    pd.DataFrame({"experiment": ["test1"], "ours": [0.25], "ci95": [0.05]}).to_csv(tmp_path / "findings.csv", index=False)
    pd.DataFrame({"seed": range(1000), "goodput_bps": 1.0}).to_csv(tmp_path / "runs.csv", index=False)
    shutil.copy(run_dir / "cwnd.png", tmp_path / "fig01.png")
    page = report(tmp_path)
    assert page.tables[0]["th"] == ["section", "metric", "paper", "ours", "check"], "the comparison comes first"
    assert page.tables[0]["td"][-2:] == ["0.397 ± 0.073", "does not hold"]
    assert ["experiment", "ours", "ci95"] in [t["th"] for t in page.tables]
    assert len(page.tables) == 2, "runs.csv (1,000 rows) is named, not shown"
    assert "1,000 rows" in (tmp_path / "report.html").read_text()
    assert len(page.images) == 1
    assert_self_contained(page)


def test_text_from_the_directory_is_escaped(tmp_path: Path) -> None:
    pd.DataFrame({"note": ["<script>alert(1)</script>"]}).to_csv(tmp_path / "summary.csv", index=False)
    text = (report(tmp_path), (tmp_path / "report.html").read_text())[1]
    assert "<script>" not in text and "&lt;script&gt;" in text


@pytest.mark.parametrize("make, message", [
    (lambda d: d, "not a hetpath results directory"),
    (lambda d: d / "missing", "no such directory"),
    (lambda d: d / "only.png", "not a directory"),
])
def test_not_a_results_directory_is_a_user_error(tmp_path: Path, make, message: str) -> None:
    (tmp_path / "only.png").write_bytes(PNG)
    target = make(tmp_path)
    result = invoke(["report", str(target)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"hetpath: error: {target}: {message}") and result.stderr.count("\n") == 1
    assert not (tmp_path / "report.html").exists()


def test_a_label_that_looks_like_a_number_is_shown_as_written(tmp_path: Path) -> None:
    """A WLAN's link counters say layer 802.11; read as a float and rounded to four
    digits, the page printed 802.1. Numbers are shortened only past six digits."""
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "examples" / "geo-wlan.toml"
    assert invoke(["run", str(scenario), "--out", str(tmp_path), "-q", "--no-plots"]).exit_code == 0
    assert set(pd.read_csv(tmp_path / "link_counters.csv", dtype=str)["layer"]) == {"802.11"}
    page = report(tmp_path)
    counters = next(t for t in page.tables if "layer" in t["th"])
    width = len(counters["th"])
    layers = counters["td"][counters["th"].index("layer")::width]
    assert layers and set(layers) == {"802.11"}
    pd.DataFrame({"label": ["802.11"], "x": [8.172034567891], "n": [204300000]}).to_csv(
        tmp_path / "summary.csv", index=False)
    cells = next(t for t in report(tmp_path).tables if t["th"] == ["label", "x", "n"])["td"]
    assert cells == ["802.11", "8.17203", "204300000"]
