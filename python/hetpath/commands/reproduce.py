"""``hetpath reproduce PAPER``: run a paper's experiments and print our figures beside
the ones its text states."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click
from rich.table import Table

from ..backends import LocalBackend
from ..reproduce import PAPERS, paper_module
from ..reproduce.common import Context, attach, comparison_rows, find_scenarios, json_lines, load_paper
from ._progress import TaskProgress
from .sweep import console, seeds_option

DEFAULT_OUT_ROOT = Path("out") / "reproduce"


def _comparison_table(rows: list[dict[str, str]]) -> Table:
    table = Table(title="Paper (text) vs hetpath", show_edge=False, header_style="bold", title_justify="left")
    for col in ("section", "experiment", "protocol", "point", "metric", "paper", "ours", "check", "not completed"):
        table.add_column(col, justify="right" if col in ("paper", "ours", "not completed") else "left")
    for r in rows:
        table.add_row(*r.values())
    return table


def _grid_tables(findings: list, metric: str) -> list[Table]:
    """Per experiment: one row per (bandwidth, size), one column per protocol."""
    import pandas as pd

    frame = pd.DataFrame([{"experiment": f.experiment, "protocol": f.protocol, "bandwidth": f.params.get("bandwidth"),
                           "size": f.params.get("size"), "ours": f.ours, "ci": f.ci95, "runs": f.seeds,
                           "missing": f.aborted} for f in findings if f.metric == metric])
    tables = []
    for exp, g in frame.groupby("experiment", sort=True):
        protos = list(dict.fromkeys(g["protocol"]))
        t = Table(title=f"{exp}: {metric.replace('_', ' ')} (mean ± 95% CI; n/m = runs not completed)",
                  show_edge=False, header_style="bold", title_justify="left")
        t.add_column("bandwidth")
        t.add_column("size")
        for p in protos:
            t.add_column(p, justify="right")
        for (bw, size), row in g.groupby(["bandwidth", "size"], sort=False):
            cells = []
            for p in protos:
                r = row[row["protocol"] == p]
                if r.empty:
                    cells.append("")
                    continue
                r = r.iloc[0]
                text = "-" if pd.isna(r["ours"]) else f"{r['ours']:.3g}"
                if not pd.isna(r["ci"]) and not pd.isna(r["ours"]):
                    text += f" ±{r['ci']:.1g}"
                if r["missing"]:
                    text += f" [{r['missing']}/{r['runs']}]"
                cells.append(text)
            t.add_row(bw, size, *cells)
        tables.append(t)
    return tables


@click.command("reproduce", short_help="Reproduce a paper's experiments beside its figures.")
@click.argument("paper", type=click.Choice(sorted(PAPERS)))
@click.option("--quick", is_flag=True, help="A reduced run (fewer seeds) that finishes in about a minute.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per line (experiment, protocol, params, metric, ours, ci95, paper, seeds, aborted).")
@click.option("--seeds", type=int, default=None, metavar="N", callback=seeds_option,
              help="Seeds per grid point and channel pair (overrides the default and --quick).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes (default: every core).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Where runs.csv, findings.csv, comparison.csv and the plots go (default out/reproduce/PAPER).")
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots and CSV files.")
@click.option("--scenarios", "scenarios_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              metavar="DIR", help="The paper's scenario directory (default: scenarios/PAPER of this checkout).")
@click.option("--quiet", "-q", is_flag=True, help="No progress or notes on stderr.")
def reproduce_command(paper: str, quick: bool, as_json: bool, seeds: Optional[int], jobs: Optional[int],
                      out_dir: Optional[Path], no_plots: bool, scenarios_dir: Optional[Path], quiet: bool) -> None:
    """Run PAPER's experiments (see docs/reproductions/PAPER.md) and compare."""
    import pandas as pd

    module = paper_module(paper)
    where = find_scenarios(paper, scenarios_dir)
    published = load_paper(where / "paper.toml")
    out = None if no_plots else (out_dir or DEFAULT_OUT_ROOT / paper)

    def note(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    with TaskProgress(not quiet, "runs") as progress:
        ctx = Context(scenarios=where, quick=quick, backend=LocalBackend(jobs), out_dir=out, seeds=seeds,
                      progress=progress, note=note)
        findings = module.reproduce(ctx)
    attach(findings, published, module.label_order(module.grid(ctx)))
    rows = comparison_rows(findings, published)
    if out is not None:
        module.summary_frame(findings).to_csv(out / "findings.csv", index=False)
        pd.DataFrame(rows).to_csv(out / "comparison.csv", index=False)
    if as_json:
        click.echo(json_lines(findings))
        return
    con = console()
    con.print(f"[bold]{module.TITLE}[/bold]" + ("  (--quick)" if quick else ""))
    for t in _grid_tables(findings, "normalized_throughput"):
        con.print(t)
        con.print()
    con.print(_comparison_table(rows))
