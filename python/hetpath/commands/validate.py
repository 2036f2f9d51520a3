"""``hetpath validate FILE``: check a scenario without running it."""

from __future__ import annotations

from pathlib import Path

import click

from .. import _bridge, _toml


@click.command("validate", short_help="Check a scenario without running it.")
@click.argument("file", type=click.Path(path_type=Path))
def validate_command(file: Path) -> None:
    """Check FILE (a scenario .toml) and report the first problem, if any."""
    _bridge.validate_text(_toml.read_file(file), str(file))
    click.echo(f"{file}: ok")
