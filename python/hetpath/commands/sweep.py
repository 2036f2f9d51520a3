"""``hetpath sweep FILE``: run a parameter grid x protocols x seeds in parallel and
print the tidy summary (mean and 95% CI per grid point, protocol and flow)."""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
from pathlib import Path
from typing import Any, Optional

import click
from rich.console import Console
from rich.table import Table

from .. import outdir
from .. import sweep as sweep_mod
from ..backends import Backend, LocalBackend, cpu_count
from ..errors import Terminated
from ..report import eng
from ..result import json_safe
from ..store import FILE_NAME as STORE_FILE
from ..store import ResultsStore, StoreError
from ._io import check_option, note_printer
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
              help="Worker processes on this machine, at most the number of cores (default: every core); "
                   "not with --address.")
@click.option("--backend", "backend_name", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where runs execute: worker processes here, or a Dask cluster (pip install 'hetpath[cluster]'). "
                   "dask without --address starts a local Dask cluster of --jobs worker processes.")
@click.option("--address", default=None, metavar="tcp://HOST:PORT",
              help="The Dask scheduler of the cluster to run on (with --backend dask).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Write runs.csv (one row per run), summary.csv and results.jsonl (every finished run) here.")
@click.option("--resume", is_flag=True,
              help="Continue an interrupted sweep with the same --out: runs already stored are not run again.")
@click.option("--drop-bad", is_flag=True,
              help="With --resume: drop the lines of the results store that fail verification and run those runs again.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON lines on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@check_option
def sweep_command(file: Path, seeds: Optional[int], jobs: Optional[int], backend_name: str, address: Optional[str],
                  out_dir: Optional[Path], resume: bool, drop_bad: bool, as_json: bool, quiet: bool) -> None:
    """Run the sweep described in FILE (see docs/guide.md, "Sweeps" and "Sweeps on a cluster")."""
    if resume and out_dir is None:
        raise click.UsageError("--resume needs --out DIR: the directory of the interrupted sweep")
    if drop_bad and not resume:
        raise click.UsageError("--drop-bad goes with --resume: it repairs the results store a resumed sweep reads")
    if address is not None and backend_name != "dask":
        raise click.UsageError("--address is the Dask scheduler's: give it with --backend dask")
    if address is not None and jobs is not None:
        raise click.UsageError("--jobs sets worker processes on this machine; a cluster at --address has the "
                               "workers started there (dask worker --nworkers N)")
    spec = sweep_mod.load(file)
    if seeds is not None:
        spec.seeds = list(range(1, seeds + 1))
    tasks = sweep_mod.plan(spec)
    resume_options = _options(seeds, jobs, backend_name, address)
    with _backend(backend_name, address, jobs) as backend:
        raw, staging = _run(file, tasks, backend, out_dir, resume, drop_bad, quiet, resume_options)
    keys = [a.name for a in spec.axes] + ["protocol", "flow"]
    summary = sweep_mod.aggregate(raw, keys)
    if out_dir is not None and staging is not None:
        try:
            outdir.write_csv(raw, staging / "runs.csv")
            outdir.write_csv(summary, staging / "summary.csv")
            outdir.commit(staging, out_dir)
        except BaseException:
            outdir.abandon(staging)  # its store holds every run: --resume writes the tables
            raise
    if as_json:
        for row in summary.to_dict(orient="records"):
            click.echo(json.dumps(json_safe(row)))
        return
    console().print(summary_table(summary, keys))
    if out_dir is not None and not quiet:
        click.echo(f"wrote {out_dir}/runs.csv, {out_dir}/summary.csv and {out_dir}/{STORE_FILE}", err=True)


@contextlib.contextmanager
def _backend(name: str, address: Optional[str], jobs: Optional[int]) -> Any:
    """The backend, connected: an unreachable cluster is reported before --out is made."""
    if name == "local":
        yield LocalBackend(jobs)
        return
    from ..backends_dask import DaskBackend

    with DaskBackend(address, workers=jobs) as backend:
        yield backend


def _run(file: Path, tasks: list[sweep_mod.Task], backend: Backend, out_dir: Optional[Path], resume: bool,
         drop_bad: bool, quiet: bool, resume_options: str) -> tuple[Any, Optional[Path]]:
    """Every run into the results store as it finishes; on an interrupt, the line that
    says how to resume (``resume_options``: the options the command must repeat)."""
    staging = store = None
    if out_dir is not None:
        staging = outdir.prepare(out_dir, keep=resume, exists_ok=False, note=note_printer(quiet))
        store = ResultsStore(staging / STORE_FILE)
        if resume and not (staging / STORE_FILE).exists() and (out_dir / STORE_FILE).is_file():
            shutil.copyfile(out_dir / STORE_FILE, staging / STORE_FILE)  # a finished sweep: rerun nothing
            verify_store(store, drop_bad, quiet, shown=out_dir / STORE_FILE)
        elif resume:
            verify_store(store, drop_bad, quiet)
    counted = _Counter()
    try:
        with TaskProgress(not quiet, "runs") as progress:
            raw = sweep_mod.run(tasks, backend, counted.wrap(progress), store=store)
    except KeyboardInterrupt as exc:
        if store is not None:
            store.close()
        if staging is not None:
            outdir.abandon(staging)
        # One line instead of the generic "interrupted": how far it got, how to go on.
        click.echo(_resume_line(file, out_dir, counted.done, len(tasks), resume_options), err=True)
        raise SystemExit(143 if isinstance(exc, Terminated) else 130) from None
    except BaseException:
        if staging is not None:
            outdir.abandon(staging)  # kept only if a run finished; the lock let go
        raise
    finally:
        if store is not None:
            store.close()
    return raw, staging


def verify_store(store: ResultsStore, drop_bad: bool, quiet: bool, shown: Optional[Path] = None) -> None:
    """Verify every line of a resumed run's store before anything runs; with
    ``--drop-bad``, drop the bad lines instead and say how many. ``shown``: the file the
    store was just copied from, named in the error instead of the copy (which is
    removed: the next attempt copies it again)."""
    try:
        if drop_bad:
            dropped = store.drop_bad()
            if not quiet:
                click.echo(f"hetpath: dropped {dropped} damaged line{'s' * (dropped != 1)} of {shown or store.path}; "
                           f"their runs run again" if dropped else f"hetpath: no damaged line in {shown or store.path}",
                           err=True)
        store.load()
    except StoreError as exc:
        if shown is None:
            raise
        store.path.unlink()
        with contextlib.suppress(OSError):  # the staging directory, if the copy was all it held
            store.path.parent.rmdir()
        raise StoreError(shown, exc.line, exc.problem) from None


class _Counter:
    """Remembers how many runs finished, for the line printed on an interrupt."""

    def __init__(self) -> None:
        self.done = 0

    def wrap(self, progress: Any) -> Any:
        def call(done: int, total: int) -> None:
            self.done = done
            progress(done, total)

        return call


def _options(seeds: Optional[int], jobs: Optional[int], backend_name: str, address: Optional[str]) -> str:
    """The options a resumed sweep repeats (the runs and where they execute)."""
    return ((f" --seeds {seeds}" if seeds is not None else "") + (f" --jobs {jobs}" if jobs is not None else "")
            + (f" --backend {backend_name}" if backend_name != "local" else "")
            + (f" --address {shlex.quote(address)}" if address is not None else ""))


def _resume_line(file: Path, out_dir: Optional[Path], done: int, total: int, extra: str) -> str:
    """One line: how far the sweep got and the command that continues it."""
    if out_dir is None:
        return f"hetpath: sweep interrupted after {done} of {total} runs; nothing kept (add --out DIR to keep finished runs)"
    if not outdir.staging_path(out_dir).exists():  # no run had finished: nothing to resume
        return f"hetpath: sweep interrupted after {done} of {total} runs; nothing kept (no run had finished)"
    return (f"hetpath: sweep interrupted after {done} of {total} runs, kept in {outdir.staging_path(out_dir)}; "
            f"resume with: hetpath sweep {shlex.quote(str(file))} --out {shlex.quote(str(out_dir))}{extra} --resume")
