"""``hetpath sweep FILE``: run a parameter grid x protocols x seeds in parallel and
print the tidy summary (mean and 95% CI per grid point, protocol and flow)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import click
from rich.console import Console
from rich.table import Table

from .. import sweep as sweep_mod
from ..backends import LocalBackend
from ..result import json_safe
from ._progress import TaskProgress


def console() -> Console:
    """stdout console; wide when piped so tables are not squeezed to 80 columns."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=200)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and x != x)


def _fmt(mean: Any, ci: Any, scale: float = 1.0, digits: int = 3) -> str:
    if _missing(mean):
        return "-"
    text = f"{mean * scale:.{digits}g}"
    if not _missing(ci):
        text += f" ± {ci * scale:.2g}"
    return text


def summary_table(summary: Any, keys: list[str]) -> Table:
    table = Table(show_edge=False, header_style="bold")
    for k in keys:
        table.add_column(k)
    for col in ("runs ok/all", "completion (s)", "goodput (kbit/s)", "rtx", "RTOs", "aborted", "unfinished"):
        table.add_column(col, justify="right")
    for _, r in summary.iterrows():
        table.add_row(
            *[str(r[k]) for k in keys],
            f"{r['completed']}/{r['runs']}",
            _fmt(r["completion_s"], r["completion_s_ci95"]),
            _fmt(r["goodput_bps"], r["goodput_bps_ci95"], 1e-3),
            _fmt(r["retransmissions"], r["retransmissions_ci95"]),
            _fmt(r["timeouts"], r["timeouts_ci95"]),
            str(r["aborted"]),
            str(r["unfinished"]),
        )
    return table


def seeds_option(_ctx: click.Context, _param: click.Parameter, value: Optional[int]) -> Optional[int]:
    if value is not None and value < 1:
        raise click.BadParameter("must be at least 1")
    return value


@click.command("sweep", short_help="Run a parameter grid x seeds in parallel.")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--seeds", type=int, default=None, metavar="N", callback=seeds_option,
              help="Run seeds 1..N (overrides the file's sweep.seeds).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes (default: every core).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Write runs.csv (one row per run) and summary.csv here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON lines on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
def sweep_command(file: Path, seeds: Optional[int], jobs: Optional[int], out_dir: Optional[Path],
                  as_json: bool, quiet: bool) -> None:
    """Run the sweep described in FILE (see docs/guide.md, "Sweeps")."""
    spec = sweep_mod.load(file)
    if seeds is not None:
        spec.seeds = list(range(1, seeds + 1))
    tasks = sweep_mod.plan(spec)
    with TaskProgress(not quiet, "runs") as progress:
        raw = sweep_mod.run(tasks, LocalBackend(jobs), progress)
    keys = [a.name for a in spec.axes] + ["protocol", "flow"]
    summary = sweep_mod.aggregate(raw, keys)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        raw.to_csv(out_dir / "runs.csv", index=False)
        summary.to_csv(out_dir / "summary.csv", index=False)
    if as_json:
        for row in summary.to_dict(orient="records"):
            click.echo(json.dumps(json_safe(row)))
        return
    console().print(summary_table(summary, keys))
    if out_dir is not None and not quiet:
        click.echo(f"wrote {out_dir}/runs.csv and {out_dir}/summary.csv", err=True)
