"""``hetpath validate FILE``: check a scenario without running it."""

from __future__ import annotations

from pathlib import Path

import click

from .. import _bridge
from ._io import read_input


@click.command("validate", short_help="Check a scenario without running it.")
@click.argument("file", type=click.Path(path_type=Path))
def validate_command(file: Path) -> None:
    """Check FILE (a scenario .toml) and report the first problem, if any."""
    _bridge.validate_text(read_input(file), str(file))
    click.echo(f"{file}: ok")
