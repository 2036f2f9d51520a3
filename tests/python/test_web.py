"""Web flows (`[flow.web]`): the per-page records reach the Python tables, the CLI's
report and its JSON; a bad web key is a one-line error with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import hetpath
from helpers import SCHEMA, invoke

WEB = """
[scenario]
name = "web"
duration = "60s"
seed = 1
stop_when_done = true
[[node]]
name = "srv"
[[node]]
name = "mh"
[[link]]
name = "l"
a = "srv"
b = "mh"
rate = "10Mbps"
delay = "50ms"
[[flow]]
name = "w"
from = "srv"
to = "mh"
[flow.web]
pages = 3
think = false
main_size = { dist = "constant", value = 4000 }
inline_count = { dist = "constant", value = 2 }
inline_size = { dist = "constant", value = 2000 }
"""


def test_pages_are_a_table_and_a_flow_metric(tmp_path: Path) -> None:
    path = tmp_path / "web.toml"
    path.write_text(WEB)
    res = hetpath.run(path)
    pages = res.table("pages")
    assert list(pages.columns) == ["seed", *SCHEMA["page"]]
    assert list(pages["page"]) == [0, 1, 2]
    assert (pages["bytes"] == 8000).all() and (pages["objects"] == 3).all()
    flow = res.flows.iloc[0]
    assert flow["pages"] == 3
    assert abs(flow["page_time_mean_s"] - pages["time_s"].mean()) < 1e-12


def test_the_cli_reports_pages_and_rejects_bad_web_keys(tmp_path: Path) -> None:
    path = tmp_path / "web.toml"
    path.write_text(WEB)
    result = invoke(["run", str(path), "--no-plots"])
    assert result.exit_code == 0, result.stderr
    assert "web pages" in result.stdout
    result = invoke(["run", str(path), "-q", "--json"])
    assert len(json.loads(result.stdout)["pages"]) == 3
    path.write_text(WEB.replace("think = false", "think = false\nparallel = 0"))
    result = invoke(["run", str(path), "-q"])
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line.startswith("hetpath: error: ") and "\n" not in line, line
    assert line.endswith("web.toml: flow[0] 'w'.web.parallel: must be at least 1"), line
