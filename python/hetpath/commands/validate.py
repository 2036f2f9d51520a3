"""``hetpath validate FILE``: check a scenario without running it."""

from __future__ import annotations

from pathlib import Path

import click

from .. import _bridge, _toml
from ._io import warning_line


@click.command("validate", short_help="Check a scenario without running it.")
@click.argument("file", type=click.Path(path_type=Path))
def validate_command(file: Path) -> None:
    """Check FILE (a scenario .toml) and report the first problem, if any, and every
    warning (settings that run, but probably not as meant) on stderr."""
    for line in _bridge.validate_text(_toml.read_file(file), str(file)):
        click.echo(warning_line(line), err=True)
    click.echo(f"{file}: ok")
