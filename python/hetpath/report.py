"""Human-readable rendering of a run summary as rich tables.

Kept apart from the CLI so other front-ends (a future ``sweep``, notebooks via
``rich``) can reuse the same tables.
"""

from __future__ import annotations

from typing import Any, Optional

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

_DASH = "—"
# Compact: no outer frame, one rule under the header, shared padding between columns.
_TABLE_STYLE: dict[str, Any] = {
    "title_justify": "left", "box": box.SIMPLE_HEAD, "show_edge": False, "collapse_padding": True,
}


def _column_style(justify: str) -> dict[str, Any]:
    """Numbers never wrap; names wrap but stay readable on a narrow terminal."""
    return {"no_wrap": True} if justify != "left" else {"min_width": 6, "overflow": "fold"}


def _bytes(n: Optional[float]) -> str:
    if n is None:
        return _DASH
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


def _num(x: Optional[float], fmt: str) -> str:
    return _DASH if x is None or x != x else format(x, fmt)  # x != x: NaN


def flows_table(flows: list[dict[str, Any]]) -> Table:
    """Per-flow results: what was delivered, how fast, and at what cost."""
    table = Table(title="flows", **_TABLE_STYLE)
    for col, justify in (
        ("flow", "left"), ("cc", "left"), ("delivered", "right"), ("goodput\nMbit/s", "right"),
        ("done at s", "right"), ("retx", "right"), ("timeouts", "right"), ("aborted", "center"),
    ):
        table.add_column(col, justify=justify, **_column_style(justify))  # type: ignore[arg-type]
    for f in flows:
        goodput = f.get("goodput_bps")
        table.add_row(
            str(f.get("name", "")),
            str(f.get("cc", "")),
            _bytes(f.get("bytes_delivered")),
            _num(None if goodput is None else goodput / 1e6, ".3f"),
            _num(f.get("completion_s"), ".3f"),
            str(f.get("retransmissions", _DASH)),
            str(f.get("timeouts", _DASH)),
            Text("yes", style="bold red") if f.get("aborted") else Text("no"),
        )
    return table


def links_table(links: list[dict[str, Any]]) -> Table:
    """Per-direction link results: how busy, how many drops, how deep the queue got."""
    table = Table(title="links", **_TABLE_STYLE)
    for col, justify in (
        ("link", "left"), ("direction", "left"), ("utilization %", "right"),
        ("drops", "right"), ("max queue pkts", "right"),
    ):
        table.add_column(col, justify=justify, **_column_style(justify))  # type: ignore[arg-type]
    for ln in links:
        util = ln.get("utilization")
        table.add_row(
            str(ln.get("name", "")),
            f"{ln.get('from', '?')} → {ln.get('to', '?')}",
            _num(None if util is None else util * 100, ".1f"),
            str(ln.get("drops", _DASH)),
            str(ln.get("max_queue_pkts", _DASH)),
        )
    return table


def headline(summary: dict[str, Any]) -> Text:
    """One line: which scenario, which seed, how long it simulated and took."""
    events = summary.get("events")
    return Text.assemble(
        (str(summary.get("scenario", "")), "bold"),
        f"  seed {summary.get('seed')}",
        f"  {_num(summary.get('sim_time_s'), '.3f')} s simulated",
        f" in {_num(summary.get('wall_time_s'), '.2f')} s",
        f", {events:,} events" if isinstance(events, int) else "",
    )


def print_summary(summary: dict[str, Any], console: Optional[Console] = None) -> None:
    """Print the headline and both tables (to stdout unless a console is given).

    On a terminal the tables fit its width where possible; when piped they are
    never wrapped, so ``hetpath run x.toml > report.txt`` keeps one row per line.
    """
    console = console or Console()
    tables = [flows_table(summary.get("flows", [])), links_table(summary.get("links", []))]
    # Never let rich drop or crush columns: a terminal narrower than a table's
    # minimum gets the minimum (it soft-wraps); a pipe gets the natural width.
    unbounded = console.options.update_width(10_000)
    sizes = [console.measure(t, options=unbounded) for t in tables]
    need = max(m.minimum if console.is_terminal else m.maximum for m in sizes)
    console.width = max(console.width, need)
    console.print(Group(headline(summary), "", tables[0], "", tables[1]))
