"""``hetpath reproduce PAPER``: run a paper's experiments and print our figures beside
the ones its text states, each claim with its verdict; ``hetpath reproduce --all
--summary``: every paper in turn, and one index of every claim (:mod:`..reproduce.index`)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Optional

import click
from rich.table import Table

from .. import figure_data
from ..backends import LocalBackend
from ..reproduce import PAPERS, paper_module
from ..reproduce import index as claims_index
from ..reproduce.common import COMPARISON_COLUMNS, Context, claim_rows, find_scenarios, json_lines, load_paper
from .. import outdir
from ..errors import Terminated
from ..store import FILE_NAME as STORE_FILE
from ..store import ResultsStore
from ._io import check_option, format_option, note_printer
from ._progress import TaskProgress
from .sweep import console, jobs_option, seeds_option, verify_store

DEFAULT_OUT_ROOT = Path("out") / "reproduce"


def _comparison_table(rows: list[dict[str, str]]) -> Table:
    table = Table(title="Paper (text) vs hetpath", show_edge=False, header_style="bold", title_justify="left")
    for col in COMPARISON_COLUMNS:
        table.add_column(col, justify="right" if col in ("paper", "ours", "ours/paper", "not completed") else "left")
    for r in rows:
        table.add_row(*r.values())
    return table


def _grid_tables(findings: list, metric: str) -> list[Table]:
    """Per experiment: one row per grid point, one column per protocol."""
    tables = []
    for exp in dict.fromkeys(f.experiment for f in findings):
        mine = [f for f in findings if f.experiment == exp and f.metric == metric]
        if not mine:
            continue
        keys = [k for k, v in mine[0].params.items() if not isinstance(v, (list, dict))]
        protos = list(dict.fromkeys(f.protocol for f in mine))
        t = Table(title=f"{exp}: {metric.replace('_', ' ')} (mean ± 95% CI; n/m = runs not completed)",
                  show_edge=False, header_style="bold", title_justify="left")
        for k in keys:
            t.add_column(k)
        for p in protos:
            t.add_column(p, justify="right")
        rows: dict[tuple, dict[str, str]] = {}
        for f in mine:
            text = "-" if f.ours is None else f"{f.ours:.3g}"
            if f.ci95 is not None and f.ours is not None:
                text += f" ±{f.ci95:.1g}"
            if f.aborted:
                text += f" [{f.aborted}/{f.seeds}]"
            rows.setdefault(tuple(str(f.params.get(k)) for k in keys), {})[f.protocol] = text
        for point, cells in rows.items():
            t.add_row(*point, *(cells.get(p, "") for p in protos))
        tables.append(t)
    return tables


@click.command("reproduce", short_help="Reproduce a paper's experiments beside its figures.")
@click.argument("paper", type=click.Choice(sorted(PAPERS)), required=False)
@click.option("--all", "every", is_flag=True,
              help="Every paper in turn (each into OUT/PAPER); goes with --summary or --sensitivity.")
@click.option("--summary", is_flag=True,
              help="With --all: print one index of every claim (paper's value, ours, verdict, reason for a gap).")
@click.option("--index", "index_file", type=click.Path(path_type=Path, dir_okay=False), default=None, metavar="FILE",
              help="With --all --summary: also write the index into FILE (docs/reproductions/README.md).")
@click.option("--sensitivity", is_flag=True,
              help="Sweep the parameters the paper leaves unstated (scenarios/PAPER/sensitivity.toml): "
                   "one at a time and the pair that moves the claims most; writes sensitivity.csv, a figure per "
                   "claim and what-it-would-take.md into --out (default out/sensitivity/PAPER).")
@click.option("--write-up", "write_up", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              metavar="FILE", help="With --sensitivity: put what-it-would-take.md between the markers of FILE "
                                   "(docs/reproductions/PAPER.md).")
@click.option("--backend", "backend_name", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="With --sensitivity: where runs execute, worker processes here or a Dask cluster.")
@click.option("--address", default=None, metavar="tcp://HOST:PORT",
              help="With --sensitivity --backend dask: the cluster's scheduler (default: a local cluster of --jobs).")
@click.option("--quick", is_flag=True, help="A reduced run (fewer seeds) that finishes in about a minute; "
                                            "with --sensitivity, two values per parameter on the quick grid.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per line (experiment, protocol, params, metric, ours, ci95, paper, seeds, aborted).")
@click.option("--seeds", type=int, default=None, metavar="N", callback=seeds_option,
              help="Seeds per grid point and channel pair (overrides the default and --quick).")
@click.option("--jobs", "-j", type=int, default=None, metavar="N", callback=jobs_option,
              help="Worker processes, at most the number of cores (default: every core).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Where runs.csv, findings.csv, comparison.csv and the plots go (default out/reproduce/PAPER).")
@click.option("--resume", is_flag=True,
              help="Continue an interrupted reproduction with the same --out: runs already kept are not run again.")
@click.option("--drop-bad", is_flag=True,
              help="With --resume: drop the lines of the results store that fail verification and run those runs again.")
@click.option("--no-plots", is_flag=True, help="Skip the figures and CSV files.")
@format_option
@click.option("--scenarios", "scenarios_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              metavar="DIR", help="The paper's scenario directory (default: scenarios/PAPER of this checkout).")
@click.option("--quiet", "-q", is_flag=True, help="No progress or notes on stderr.")
@check_option
def reproduce_command(paper: Optional[str], every: bool, summary: bool, index_file: Optional[Path],
                      sensitivity: bool, write_up: Optional[Path], backend_name: str, address: Optional[str],
                      quick: bool, as_json: bool, seeds: Optional[int], jobs: Optional[int], out_dir: Optional[Path],
                      resume: bool, drop_bad: bool, no_plots: bool, formats: tuple[str, ...],
                      scenarios_dir: Optional[Path], quiet: bool) -> None:
    """Run PAPER's experiments (see docs/reproductions/PAPER.md) and compare; with --all
    --summary, every paper and the index of their claims; with --sensitivity, the paper's
    unstated parameters swept."""
    if (write_up is not None or backend_name != "local" or address is not None) and not sensitivity:
        raise click.UsageError("--write-up, --backend and --address go with --sensitivity")
    if address is not None and backend_name != "dask":
        raise click.UsageError("--address is the Dask scheduler's: give it with --backend dask")
    if sensitivity:
        if every == (paper is not None) or summary or as_json:
            raise click.UsageError("--sensitivity sweeps one PAPER, or every paper with --all; drop --summary and --json")
        if every and (write_up is not None or scenarios_dir is not None):
            raise click.UsageError("--all --sensitivity sweeps every paper from scenarios/PAPER into OUT/PAPER: "
                                   "drop --write-up and --scenarios (write each write-up with PAPER --resume)")
        if drop_bad and not resume:
            raise click.UsageError("--drop-bad goes with --resume: it repairs the results store a resumed sweep reads")
        from . import reproduce_sensitivity

        for name in sorted(PAPERS) if every else [paper]:
            where = (out_dir or reproduce_sensitivity.DEFAULT_OUT_ROOT) / name if every else out_dir
            reproduce_sensitivity.run(name, quick, seeds, jobs, backend_name, address, where, resume, drop_bad,
                                      no_plots, formats, scenarios_dir, write_up, quiet)
        return
    if every == (paper is not None):
        raise click.UsageError("name one PAPER, or give --all (not both)")
    if every != summary:
        raise click.UsageError("--all goes with --summary: the index of every paper's claims")
    if index_file is not None and not every:
        raise click.UsageError("--index goes with --all --summary")
    if every:
        if as_json or scenarios_dir is not None:
            raise click.UsageError("--all runs every paper from scenarios/PAPER: drop --json and --scenarios")
        root = None if no_plots else (out_dir or DEFAULT_OUT_ROOT)
        found: dict[str, list[dict[str, str]]] = {}
        for name in sorted(PAPERS):
            _, _, found[name] = _reproduce(name, quick, seeds, jobs, None if root is None else root / name, resume,
                                           drop_bad, no_plots, formats, None, quiet)
        console().print(claims_index.table(found, quick))
        if index_file is not None:
            claims_index.write(index_file, found, quick)
            if not quiet:
                click.echo(f"hetpath: wrote the index of claims into {index_file}", err=True)
        return
    assert paper is not None
    module, findings, rows = _reproduce(paper, quick, seeds, jobs, out_dir, resume, drop_bad, no_plots, formats,
                                        scenarios_dir, quiet)
    if as_json:
        click.echo(json_lines(findings))
        return
    con = console()
    con.print(f"[bold]{module.TITLE}[/bold]" + ("  (--quick)" if quick else ""))
    for t in _grid_tables(findings, module.TABLE_METRIC):
        con.print(t)
        con.print()
    con.print(_comparison_table(rows))


def _reproduce(paper: str, quick: bool, seeds: Optional[int], jobs: Optional[int], out_dir: Optional[Path],
               resume: bool, drop_bad: bool, no_plots: bool, formats: tuple[str, ...], scenarios_dir: Optional[Path],
               quiet: bool) -> tuple[Any, list[Any], list[dict[str, str]]]:
    """One paper's reproduction: its module, findings and comparison rows (one per claim)."""
    import pandas as pd

    module = paper_module(paper)
    where = find_scenarios(paper, scenarios_dir)
    # A paper whose text states relations between protocols, not values at points,
    # checks them itself (``compare``); the others list values in the common format,
    # read here first so that an error in them is reported before anything runs.
    if not hasattr(module, "compare"):
        load_paper(where / "paper.toml")
    target = None if no_plots else (out_dir or DEFAULT_OUT_ROOT / paper)
    if resume and target is None:
        raise click.UsageError("--resume needs the output directory; drop --no-plots")
    if drop_bad and not resume:
        raise click.UsageError("--drop-bad goes with --resume: it repairs the results store a resumed reproduction reads")
    if out_dir is not None and target is None:
        raise click.UsageError("--no-plots writes no files, so --out has nothing to hold; drop one of them")
    # Everything is written into a staging directory and moved into place at the end, so
    # an interrupted reproduction never leaves new files beside the previous run's. The
    # runs that finished stay in its results store for --resume.
    out = None if target is None else outdir.prepare(target, keep=resume, exists_ok=False, note=note_printer(quiet))
    store = None
    if out is not None:
        for leftover in out.iterdir():  # what an interrupted attempt wrote, but its runs
            if leftover.name != STORE_FILE:
                outdir.discard(leftover) if leftover.is_dir() else leftover.unlink()
        store = ResultsStore(out / STORE_FILE)

    def note(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    try:
        if store is not None and resume:
            verify_store(store, drop_bad, quiet)
        # Each figure's plotted series go beside it as CSV (the paper's among them).
        with TaskProgress(not quiet, "runs") as progress, figure_data.beside_figures():
            ctx = Context(scenarios=where, quick=quick, backend=LocalBackend(jobs), out_dir=out, seeds=seeds,
                          progress=progress, note=note, formats=formats, store=store)
            findings = module.reproduce(ctx)
        if store is not None:
            store.close()
        rows = claim_rows(module, ctx, findings)
        if out is not None and target is not None:
            outdir.write_csv(module.summary_frame(findings), out / "findings.csv")
            outdir.write_csv(pd.DataFrame(rows), out / "comparison.csv")
            outdir.commit(out, target)
    except BaseException as exc:
        if store is not None:
            store.close()
        kept = out is not None and outdir.abandon(out)  # kept only if a run finished; the lock let go
        if kept and isinstance(exc, KeyboardInterrupt) and target is not None:
            click.echo(f"hetpath: reproduce interrupted, finished runs kept in {out}; resume with: hetpath reproduce "
                       f"{paper} --out {shlex.quote(str(target))} --resume (and the same --quick or --seeds)", err=True)
            raise SystemExit(143 if isinstance(exc, Terminated) else 130) from None
        raise
    return module, findings, rows
