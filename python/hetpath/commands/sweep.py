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
from ..backends import LocalBackend, cpu_count
from ..report import eng
from ..result import json_safe
from ._io import writable_dir
from ._progress import TaskProgress


def console() -> Console:
    """stdout console; wide when piped so tables are not squeezed to 80 columns."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=200)


#: The printed table's metric columns: (header, metric). Every metric is in
#: summary.csv and --json; the terminal shows the ones a reader looks at first.
_SHOWN = (("done s", "completion_s"), ("goodput b/s", "goodput_bps"),
          ("retx", "retransmissions"), ("RTOs", "timeouts"))


def _cell(mean: Any, ci: Any) -> str:
    """``mean ± ci`` in engineering notation; no ``±`` for a single run or a spread that
    is zero to rounding."""
    if mean is None or mean != mean:
        return "-"
    text = eng(mean)
    if ci is not None and ci == ci and ci > 1e-9 * max(abs(mean), 1e-300):
        text += f" ±{eng(ci)}"
    return text


def summary_table(summary: Any, keys: list[str]) -> Table:
    """The aggregate per grid point, protocol and flow, readable at 80 columns."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False, collapse_padding=True)
    for k in keys:
        table.add_column(k.rsplit(".", 1)[-1], overflow="fold")
    for header, _ in _SHOWN:
        table.add_column(header, justify="right")
    for header in ("ok/all", "abort", "unfin"):
        table.add_column(header, justify="right")
    for _, r in summary.iterrows():
        table.add_row(
            *[str(r[k]) for k in keys],
            *[_cell(r[m], r[f"{m}_ci95"]) for _, m in _SHOWN],
            f"{r['completed']}/{r['runs']}",
            str(r["aborted"]),
            str(r["unfinished"]),
        )
    return table


def seeds_option(_ctx: click.Context, _param: click.Parameter, value: Optional[int]) -> Optional[int]:
    if value is not None and value < 1:
        raise click.BadParameter("must be at least 1")
    if value is not None and value > sweep_mod.MAX_RUNS:
        raise click.BadParameter(f"{value} is more than the limit of {sweep_mod.MAX_RUNS:,} runs")
    return value


def jobs_option(_ctx: click.Context, _param: click.Parameter, value: Optional[int]) -> Optional[int]:
    """At most one worker per core: more only adds processes (``--jobs 100000`` forked
    thousands), never speed."""
    if value is None:
        return None
    cores = cpu_count()
    if not 1 <= value <= cores:
        raise click.BadParameter(f"{value} is not between 1 and {cores}, the number of cores of this machine")
    return value


@click.command("sweep", short_help="Run a parameter grid x seeds in parallel.")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--seeds", type=int, default=None, metavar="N", callback=seeds_option,
              help="Run seeds 1..N (overrides the file's sweep.seeds).")
@click.option("--jobs", "-j", type=int, default=None, metavar="N", callback=jobs_option,
              help="Worker processes, at most the number of cores (default: every core).")
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
    if out_dir is not None:
        writable_dir(out_dir)
    with TaskProgress(not quiet, "runs") as progress:
        raw = sweep_mod.run(tasks, LocalBackend(jobs), progress)
    keys = [a.name for a in spec.axes] + ["protocol", "flow"]
    summary = sweep_mod.aggregate(raw, keys)
    if out_dir is not None:
        raw.to_csv(out_dir / "runs.csv", index=False)
        summary.to_csv(out_dir / "summary.csv", index=False)
    if as_json:
        for row in summary.to_dict(orient="records"):
            click.echo(json.dumps(json_safe(row)))
        return
    console().print(summary_table(summary, keys))
    if out_dir is not None and not quiet:
        click.echo(f"wrote {out_dir}/runs.csv and {out_dir}/summary.csv", err=True)
