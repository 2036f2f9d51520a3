"""``hetpath reproduce PAPER --sensitivity``: the paper's reproduction at every point of
its unstated parameters' ranges (:mod:`..reproduce.sensitivity`), kept run by run in one
results store so an interrupted sweep resumes, on this machine or a Dask cluster."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import Any, Optional

import click
from rich.table import Table

from .. import outdir
from ..errors import ScenarioError, Terminated
from ..reproduce import paper_module
from ..reproduce import sensitivity as sens
from ..reproduce import sensitivity_plots, sensitivity_report
from ..reproduce.common import COMPARISON_COLUMNS, Context, claim_rows, find_scenarios
from ..store import FILE_NAME as STORE_FILE
from ..store import ResultsStore
from ._io import note_printer
from ._progress import TaskProgress
from .sweep import _backend, console, verify_store

DEFAULT_OUT_ROOT = Path("out") / "sensitivity"
#: sensitivity.csv's columns: the point, the claim's number, then its comparison row.
COLUMNS = ("kind", "parameter", "value", "parameter2", "value2", "claim", *COMPARISON_COLUMNS)


def run(paper: str, quick: bool, seeds: Optional[int], jobs: Optional[int], backend_name: str,
        address: Optional[str], out_dir: Optional[Path], resume: bool, drop_bad: bool, no_plots: bool,
        formats: tuple[str, ...], scenarios_dir: Optional[Path], write_up: Optional[Path], quiet: bool) -> None:
    import pandas as pd

    module = paper_module(paper)
    where = find_scenarios(paper, scenarios_dir)
    plan = sens.load(where / sens.FILE_NAME)
    if write_up is not None:
        try:  # checked before anything runs
            sensitivity_report.check_markers(write_up)
        except (OSError, ValueError) as e:
            raise click.UsageError(f"--write-up: {e}") from None
    n_seeds = seeds or (sens.QUICK_SEEDS if quick else plan.seeds)
    grid = "quick" if quick else plan.grid
    target = out_dir or DEFAULT_OUT_ROOT / paper
    out = outdir.prepare(target, keep=resume, exists_ok=False, note=note_printer(quiet))
    for leftover in out.iterdir():  # what an interrupted attempt wrote, but its runs
        if leftover.name != STORE_FILE:
            outdir.discard(leftover) if leftover.is_dir() else leftover.unlink()
    store = ResultsStore(out / STORE_FILE)
    finished = target / STORE_FILE
    copied = resume and not store.path.exists() and finished.is_file()
    if copied:
        shutil.copyfile(finished, store.path)  # a finished sweep: rerun nothing

    def note(msg: str) -> None:
        if not quiet:
            click.echo(f"{paper}: {msg}", err=True)

    def run_point(point: sens.Point, k: int, n: int) -> list[dict[str, str]]:
        note(f"sensitivity point {k}/{n}: {point.text()}")
        with TaskProgress(not quiet, f"point {k}/{n}: runs") as progress:
            ctx = Context(scenarios=where, quick=grid == "quick", backend=backend, out_dir=None, seeds=n_seeds,
                          progress=progress, store=store, overrides=point.overrides(plan))
            try:
                findings = module.reproduce(ctx)
            except ScenarioError as e:
                raise ScenarioError(f"{plan.path}: {e}") from None
            return claim_rows(module, ctx, findings)

    try:
        if resume:
            verify_store(store, drop_bad, quiet)
        note(f"{len(plan.parameters)} unstated parameters from {plan.path}, the {grid} grid, {n_seeds} seeds per "
             f"grid point" + (", two values per parameter (--quick)" if quick else ""))
        with _backend(backend_name, address, jobs) as backend:
            rows = sens.run(plan, quick, run_point, note)
        store.close()
        frame = pd.DataFrame([{c: r[c] for c in COLUMNS} for r in rows])
        outdir.write_csv(frame, out / "sensitivity.csv")
        part = sensitivity_report.markdown(paper, plan, rows, quick, n_seeds, grid)
        (out / "what-it-would-take.md").write_text(part, encoding="utf-8")
        if not no_plots:
            written = sensitivity_plots.write_all(plan, rows, quick, out / "figures", formats, note=note)
            note(f"{len(written)} figure files, one per claim with an ours/paper at some point")
        outdir.commit(out, target)
    except BaseException as exc:
        store.close()
        kept = outdir.abandon(out)
        if kept and isinstance(exc, KeyboardInterrupt):
            again = f"hetpath reproduce {paper} --sensitivity --out {shlex.quote(str(target))} --resume" + \
                (" --quick" if quick else "") + (f" --seeds {seeds}" if seeds else "")
            click.echo(f"hetpath: sensitivity sweep interrupted, finished runs kept in {out}; resume with: {again}",
                       err=True)
            raise SystemExit(143 if isinstance(exc, Terminated) else 130) from None
        raise
    if write_up is not None:
        sensitivity_report.write_between_markers(write_up, part)
        note(f"wrote the generated section of {write_up}")
    console().print(_table(plan, rows))
    note(f"wrote sensitivity.csv, what-it-would-take.md{'' if no_plots else ' and figures/'} in {target}")


def _table(plan: sens.Plan, rows: list[dict[str, Any]]) -> Table:
    t = Table(title="What it would take: the paper's value inside the unstated parameters' ranges",
              show_edge=False, header_style="bold", title_justify="left")
    for col in ("#", "claim", "verdict at the defaults", "the paper's value inside the ranges", "moves it most"):
        t.add_column(col)
    for s in sensitivity_report.summarize(plan, rows):
        t.add_row(str(s.claim), s.label, s.default_verdict, s.reach, s.moves_most)
    return t
