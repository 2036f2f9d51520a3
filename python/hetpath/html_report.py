"""``hetpath report DIR``: one self-contained HTML page for a results directory.

DIR is what ``hetpath run --out``, ``hetpath sweep --out`` or ``hetpath reproduce
--out`` wrote. The page holds whatever of these the directory has: the provenance and
headline of ``summary.json``, every CSV table, the figures and the scenario text.
Self-contained means one file to mail or archive: PNGs are embedded as base64 and SVGs
inline, with no external URL, so it reads the same offline and in ten years. Only the
standard library and pandas (for the tables) are used.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any, Optional

from .errors import OutputError, ScenarioError
from .outdir import replacing

#: The file a results directory is recognised by, and what wrote it.
MARKERS = {
    "summary.json": "hetpath run --out",
    "comparison.csv": "hetpath reproduce --out",
    "findings.csv": "hetpath reproduce --out",
    "runs.csv": "hetpath sweep --out or hetpath reproduce --out",
    "summary.csv": "hetpath sweep --out",
}
#: Tables a reader looks at first (the paper comparison, the sweep aggregate); the
#: others follow in the order of summary.json, then by name.
FIRST = ("comparison", "findings", "summary")
#: Time series (``*_series.csv``, drawn in the figures) and tables longer than this (one
#: row per run) are listed with their size, not shown: a page is for reading.
MAX_ROWS = 300
REPORT_NAME = "report.html"

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 75em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0 1em; font-variant-numeric: tabular-nums; }
th, td { padding: .2em .6em; border-bottom: 1px solid #e4e4e4; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
pre { background: #f7f7f7; padding: .8em; overflow-x: auto; }
figure { margin: 1em 0; } figure img, figure svg { max-width: 100%; height: auto; }
figcaption, .note { color: #666; font-size: .9em; }
"""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{path}: not a readable summary: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: not a hetpath summary (expected a JSON object)")
    return data


def _key_value_table(items: dict[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_fmt(v))}</td></tr>"
                   for k, v in items.items())
    return f"<table>{rows}</table>"


#: A fraction written with more significant digits than this is shortened to this many
#: for reading; any other cell is shown exactly as written.
SHOWN_DIGITS = 6
_FRACTION = re.compile(r"[+-]?(?:(\d*)\.(\d+)|(\d+))(?:[eE][+-]?\d+)?")


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return _fmt_text(repr(value) if isinstance(value, float) else str(value))


def _fmt_text(text: str) -> str:
    """A cell as the file holds it. Only a fraction (a decimal point or an exponent)
    written with more than ``SHOWN_DIGITS`` significant digits is shortened; integers and
    labels are shown as written, ``802.11`` included (read as a float and rounded, that
    label printed as another one)."""
    match = _FRACTION.fullmatch(text)
    if match is None or not any(c in text for c in ".eE"):
        return text
    digits = "".join(g or "" for g in match.groups()).lstrip("0").rstrip("0")
    if len(digits) <= SHOWN_DIGITS:
        return text
    return f"{float(text):.{SHOWN_DIGITS}g}"


def _table_order(csvs: list[Path], summary: Optional[dict[str, Any]]) -> list[Path]:
    listed = [k for k, v in (summary or {}).items() if isinstance(v, list)]
    rank = {name: i for i, name in enumerate([*FIRST, *listed])}
    return sorted(csvs, key=lambda p: (rank.get(p.stem, len(rank)), p.stem))


def _csv_section(path: Path) -> str:
    import pandas as pd

    title = f"<h3>{html.escape(path.name)}</h3>"
    try:
        # Every cell as text: pandas would read a column of labels that look like numbers
        # (a WLAN's layer "802.11") as floats.
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        return title + '<p class="note">empty</p>'
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        return title + f'<p class="note">not readable as CSV: {html.escape(str(exc))}</p>'
    if len(frame) > MAX_ROWS or path.stem.endswith("_series"):
        return title + (f'<p class="note">{len(frame):,} rows × {len(frame.columns)} columns '
                        f'({html.escape(", ".join(map(str, frame.columns)))}): not shown; open the file.</p>')
    shown = frame.apply(lambda column: column.map(lambda cell: _fmt_text(cell) if cell else "—"))
    return title + shown.to_html(index=False, border=0, escape=True)


_SVG_PROLOG = re.compile(r"^\s*(<\?xml[^>]*>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)


def _figure(path: Path) -> str:
    caption = f"<figcaption>{html.escape(path.name)}</figcaption>"
    if path.suffix == ".png":
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'<figure><img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">{caption}</figure>'
    svg = _SVG_PROLOG.sub("", path.read_text(encoding="utf-8"))
    return f"<figure>{svg}{caption}</figure>"


def _figures(directory: Path) -> list[Path]:
    """PNGs, and SVGs with no PNG of the same name (a PDF cannot be shown inline)."""
    pngs = sorted(directory.glob("*.png"))
    stems = {p.stem for p in pngs}
    return sorted([*pngs, *(p for p in directory.glob("*.svg") if p.stem not in stems)], key=lambda p: p.name)


def build(directory: Path) -> str:
    """The report page for ``directory``; ``ScenarioError`` if it is not a results
    directory (nothing hetpath writes is in it)."""
    if not directory.exists():
        raise ScenarioError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise ScenarioError(f"{directory}: not a directory; expected an --out directory of hetpath")
    found = [name for name in MARKERS if (directory / name).is_file()]
    if not found:
        raise ScenarioError(f"{directory}: not a hetpath results directory: expected the --out of hetpath run, "
                            f"sweep or reproduce (none of {', '.join(MARKERS)})")

    summary = _read_json(directory / "summary.json") if "summary.json" in found else None
    provenance = summary.pop("provenance", None) if summary else None
    origin = ", ".join(dict.fromkeys(MARKERS[n] for n in found)) if summary is None else MARKERS["summary.json"]
    title = f"hetpath report: {summary['scenario']}" if summary and "scenario" in summary else \
        f"hetpath report: {directory.resolve().name}"

    parts = [f"<h1>{html.escape(title)}</h1>",
             f'<p class="note">{html.escape(str(directory))}, written by {html.escape(origin)}</p>']
    if summary is not None:
        head = {k: v for k, v in summary.items() if not isinstance(v, (list, dict))}
        parts += ['<h2 id="summary">Summary</h2>', _key_value_table(head)]
    if provenance:
        parts += ['<h2 id="provenance">Provenance</h2>', _key_value_table(provenance)]
    csvs = _table_order(sorted(directory.glob("*.csv")), summary)
    if csvs:
        parts += ['<h2 id="tables">Tables</h2>', *(_csv_section(p) for p in csvs)]
    figures = _figures(directory)
    if figures:
        parts += ['<h2 id="figures">Figures</h2>', *(_figure(p) for p in figures)]
    scenario = directory / "scenario.toml"
    if scenario.is_file():
        parts += ['<h2 id="scenario">Scenario</h2>',
                  f"<pre>{html.escape(scenario.read_text(encoding='utf-8'))}</pre>"]
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def write(directory: Path, out: Optional[Path] = None) -> Path:
    """Write the report of ``directory`` to ``out`` (default ``directory/report.html``)."""
    page = build(directory)
    out = out or directory / REPORT_NAME
    try:
        with replacing(out) as tmp:
            tmp.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{out}: cannot write the report: {exc.strerror or exc}") from None
    return out
