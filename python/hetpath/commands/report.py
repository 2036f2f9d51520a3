"""``hetpath report DIR``: write DIR/report.html, one self-contained page of a results
directory (see :mod:`hetpath.html_report`)."""

from __future__ import annotations

from pathlib import Path

import click

from .. import html_report


@click.command("report", short_help="Write one HTML page of a run, sweep or reproduce directory.")
@click.argument("directory", type=click.Path(path_type=Path), metavar="DIR")
@click.option("--quiet", "-q", is_flag=True, help="No note on stderr.")
def report_command(directory: Path, quiet: bool) -> None:
    """Write DIR/report.html: the tables, figures, scenario and provenance that
    `hetpath run --out`, `sweep --out` or `reproduce --out` left in DIR, in one
    self-contained file (images embedded, no external links)."""
    out = html_report.write(directory)
    if not quiet:
        click.echo(f"hetpath: wrote {out}", err=True)
