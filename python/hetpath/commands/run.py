"""``hetpath run FILE``: simulate a scenario, print a summary, optionally save results."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from .. import _bridge, _toml, outdir
from ..result import summary_json
from ..runner import run_text
from ._io import (check_option, format_option, note_printer, safe_dirname, scenario_name, warning_line,
                  writable_file)
from ._progress import RunProgress

DEFAULT_OUT_ROOT = Path("out")
#: Trace file suffixes (`Result.write_trace`); a file without one is Parquet.
TRACE_FORMATS = (".parquet", ".arrow", ".feather", ".csv")


def _note(message: str, quiet: bool) -> None:
    """Informational lines go to stderr so stdout stays the table or the JSON."""
    if not quiet:
        click.echo(message, err=True)


def _check_seed(_ctx: click.Context, _param: click.Parameter, value: Optional[int]) -> Optional[int]:
    if value is not None and not 0 <= value < 2**64:
        raise click.BadParameter("must be between 0 and 2^64-1")
    return value


@click.command("run", short_help="Simulate a scenario and print its results.")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Write summary.json, CSVs (and Parquet if pyarrow is installed), plots and pcaps here.")
@click.option("--pcap", is_flag=True,
              help="Capture one pcap per link direction; without --out, into out/<scenario-name>.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as JSON on stdout and nothing else.")
@click.option("--seed", type=int, default=None, metavar="N", callback=_check_seed,
              help="Override the scenario's seed (0 to 2^64-1).")
@click.option("--plots/--no-plots", default=None,
              help="Write PNG plots (default: on whenever results are written). "
                   "--plots without --out writes to out/<scenario-name>.")
@format_option
@click.option("--trace", "trace_file", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Write the typed event trace: .parquet (default format), .arrow or .csv.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no notes on stderr.")
@check_option
def run_command(
    file: Path,
    out_dir: Optional[Path],
    pcap: bool,
    as_json: bool,
    seed: Optional[int],
    plots: Optional[bool],
    formats: tuple[str, ...],
    trace_file: Optional[Path],
    quiet: bool,
) -> None:
    """Simulate the scenario in FILE and print per-flow and per-link results."""
    text = _toml.read_file(file)
    source = str(file)
    if out_dir is None and (pcap or plots):
        out_dir = DEFAULT_OUT_ROOT / safe_dirname(scenario_name(text, file))
    staging = None
    if out_dir is not None:
        # An invalid file fails with the engine's message, and an unusable directory
        # before the run, not after it. Results go to a staging directory moved into
        # place at the end: an interrupted run leaves the previous results whole.
        _bridge.validate_text(text, source)
        staging = outdir.prepare(out_dir, note=note_printer(quiet))

    try:
        if trace_file is not None:
            trace_file = writable_file(trace_file, TRACE_FORMATS)

        with RunProgress(enabled=not (quiet or as_json)) as progress:
            # The time series are written only with --out; without it they are not kept
            # at all (a long run's samples can take gigabytes).
            # Warnings go to stderr before the run (even with --quiet: they are not notes)
            # and into summary.json.
            result = run_text(text, source, seed=seed, pcap_dir=staging if pcap else None,
                              progress=progress, series=out_dir is not None, trace=trace_file is not None,
                              warn=lambda line: click.echo(warning_line(line), err=True))
        if trace_file is not None:
            with outdir.naming(trace_file):
                result.write_trace(trace_file)
            _note(f"hetpath: wrote {len(result.trace):,} trace events to {trace_file}", quiet)

        if as_json:
            click.echo(summary_json(result.summary))
        else:
            from ..report import print_summary

            print_summary(result.summary)

        if out_dir is not None and staging is not None:
            with outdir.naming(staging):
                written = result.write(staging)
                if plots is not False:
                    written += result.plot(staging, formats)
            outdir.commit(staging, out_dir)
            extra = " and pcaps" if pcap else ""
            _note(f"hetpath: wrote {len(written)} files{extra} to {out_dir}", quiet)
    except BaseException:
        if staging is not None:
            outdir.discard(staging)
        raise
