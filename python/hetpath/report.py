"""Human-readable rendering of a run summary as rich tables.

Kept apart from the CLI so other front-ends (``sweep``, notebooks via ``rich``) can
reuse the same tables. Keys are the engine's schema (``hetpath.schema()``): a missing
key is a bug and raises; only a value that is legitimately absent (a flow that did not
complete) prints as a dash.
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


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


_PREFIXES = {-4: "p", -3: "n", -2: "µ", -1: "m", 0: "", 1: "k", 2: "M", 3: "G", 4: "T"}


def eng(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits and an SI prefix: 5360 -> ``5.36k``,
    0.00123 -> ``1.23m``, 42 -> ``42.0``; outside p..T, plain scientific notation."""
    import math

    if x == 0 or not math.isfinite(x):
        return format(x, "g")
    x = float(f"{x:.{digits - 1}e}")  # round first, so 999.6 becomes 1.00k, not 1000
    exp3 = math.floor(math.log10(abs(x)) / 3)
    if exp3 not in _PREFIXES:
        return f"{x:.{digits - 1}e}"
    scaled = x / 10.0 ** (3 * exp3)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(scaled))))
    return f"{scaled:.{decimals}f}{_PREFIXES[exp3]}"


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
        table.add_row(
            str(f["name"]),
            str(f["cc"]),
            _bytes(f["bytes_delivered"]),
            _num(f["goodput_bps"] / 1e6, ".3f"),
            _num(f["completion_s"], ".3f"),
            str(f["retransmissions"]),
            str(f["timeouts"]),
            Text("yes", style="bold red") if f["aborted"] else Text("no"),
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
        table.add_row(
            str(ln["name"]),
            f"{ln['from']} → {ln['to']}",
            _num(ln["utilization"] * 100, ".1f"),
            str(ln["drops"]),
            str(ln["max_queue_pkts"]),
        )
    return table


def node_drops(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes that dropped packets themselves (TTL run out, no route, unclaimed)."""
    return [n for n in nodes if n["ttl_drops"] or n["no_route_drops"] or n["unclaimed_drops"]]


def nodes_table(nodes: list[dict[str, Any]]) -> Table:
    """Packets nodes dropped themselves, where no link lost them."""
    table = Table(title="node drops", **_TABLE_STYLE)
    for col, justify in (("node", "left"), ("TTL expired", "right"), ("no route", "right"),
                         ("unclaimed", "right")):
        table.add_column(col, justify=justify, **_column_style(justify))  # type: ignore[arg-type]
    for n in nodes:
        table.add_row(str(n["name"]), f"{n['ttl_drops']:,}", f"{n['no_route_drops']:,}",
                      f"{n['unclaimed_drops']:,}")
    return table


def legs_table(legs: list[dict[str, Any]]) -> Table:
    """Per-leg results of flows that a PEP splits: where each leg runs, its controller,
    its RTT and what it cost; ``*`` marks the leg over the flow's slowest link."""
    table = Table(title="legs (flows split by a PEP)", **_TABLE_STYLE)
    for col, justify in (
        ("flow", "left"), ("leg", "left"), ("cc", "left"), ("srtt ms", "right"),
        ("retx", "right"), ("timeouts", "right"), ("acked", "right"),
    ):
        table.add_column(col, justify=justify, **_column_style(justify))  # type: ignore[arg-type]
    for leg in legs:
        srtt = leg["srtt_s"]
        table.add_row(
            str(leg["flow"]),
            f"{leg['from']} → {leg['to']}" + (" *" if leg["bottleneck"] else ""),
            str(leg["cc"]),
            _num(None if srtt is None else srtt * 1e3, ".1f"),
            str(leg["retransmissions"]),
            str(leg["timeouts"]),
            _bytes(leg["bytes_acked"]),
        )
    return table


def pages_table(pages: list[dict[str, Any]]) -> Table:
    """Per web flow: its completed pages and, per page, the means of what seed 001
    reports (download time, TCP timeouts, uplink bytes); one row per page is in
    ``Result.table("pages")``."""
    table = Table(title="web pages", **_TABLE_STYLE)
    for col, justify in (
        ("flow", "left"), ("pages", "right"), ("mean time s", "right"),
        ("timeouts/page", "right"), ("uplink/page", "right"),
    ):
        table.add_column(col, justify=justify, **_column_style(justify))  # type: ignore[arg-type]
    flows: dict[str, list[dict[str, Any]]] = {}
    for p in pages:
        flows.setdefault(str(p["flow"]), []).append(p)
    for name, rows in flows.items():
        n = len(rows)
        table.add_row(
            name,
            str(n),
            _num(sum(r["time_s"] for r in rows) / n, ".3f"),
            _num(sum(r["timeouts"] for r in rows) / n, ".2f"),
            _bytes(sum(r["up_bytes"] for r in rows) / n),
        )
    return table


def machines_table(machines: list[dict[str, Any]]) -> Table:
    """The counters of the machines placed on nodes (PEPs, routers, State Managers)."""
    table = Table(title="machines", **_TABLE_STYLE)
    for col, justify in (("node", "left"), ("machine", "left"), ("counter", "left"), ("value", "right")):
        table.add_column(col, justify=justify, **_column_style(justify))  # type: ignore[arg-type]
    for m in machines:
        table.add_row(str(m["node"]), str(m["machine"]), str(m["counter"]), f"{m['value']:,}")
    return table


def link_layer_table(counters: list[dict[str, Any]]) -> Table:
    """A link layer's own counters (ESW link directions, WLAN stations): one row each."""
    names = list(dict.fromkeys(c["counter"] for c in counters))
    table = Table(title="link layer", **_TABLE_STYLE)
    for col in ("link", "direction", *names):
        justify = "left" if col in ("link", "direction") else "right"
        table.add_column(col.replace("_", " "), justify=justify, **_column_style(justify))  # type: ignore[arg-type]
    rows: dict[tuple[str, str, str], dict[str, float]] = {}
    for c in counters:
        rows.setdefault((c["link"], c["from"], c["to"]), {})[c["counter"]] = c["value"]
    for (link, a, b), values in rows.items():
        cells = [f"{values[n]:.3f}" if n.endswith("_s") else f"{values[n]:,.0f}" if n in values else "" for n in names]
        table.add_row(link, f"{a} → {b}", *cells)
    return table


def split_legs(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The legs of the flows that have more than one (a flow without a PEP has one leg,
    which its own row already shows)."""
    split = {leg["flow"] for leg in summary["legs"] if leg["leg"] > 0}
    return [leg for leg in summary["legs"] if leg["flow"] in split]


def headline(summary: dict[str, Any]) -> Text:
    """One line: which scenario, which seed, how long it simulated and took."""
    return Text.assemble(
        (str(summary["scenario"]), "bold"),
        f"  seed {summary['seed']}",
        f"  {_num(summary['sim_time_s'], '.3f')} s simulated",
        f" in {_num(summary['wall_time_s'], '.2f')} s",
        f", {summary['events']:,} events",
    )


def print_summary(summary: dict[str, Any], console: Optional[Console] = None) -> None:
    """Print the headline and both tables (to stdout unless a console is given).

    On a terminal the tables fit its width where possible; when piped they are
    never wrapped, so ``hetpath run x.toml > report.txt`` keeps one row per line.
    """
    console = console or Console()
    tables = [flows_table(summary["flows"]), links_table(summary["links"])]
    legs = split_legs(summary)
    if legs:
        tables.insert(1, legs_table(legs))
    dropped = node_drops(summary["nodes"])
    if dropped:
        tables.append(nodes_table(dropped))
    if summary["link_counters"]:
        tables.append(link_layer_table(summary["link_counters"]))
    if summary["pages"]:
        tables.append(pages_table(summary["pages"]))
    if summary["machines"]:
        tables.append(machines_table(summary["machines"]))
    # Never let rich drop or crush columns: a terminal narrower than a table's
    # minimum gets the minimum (it soft-wraps); a pipe gets the natural width.
    unbounded = console.options.update_width(10_000)
    sizes = [console.measure(t, options=unbounded) for t in tables]
    need = max(m.minimum if console.is_terminal else m.maximum for m in sizes)
    console.width = max(console.width, need)
    parts: list[Any] = [headline(summary)]
    for t in tables:
        parts += ["", t]
    console.print(Group(*parts))
