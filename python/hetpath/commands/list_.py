"""``hetpath list ...``: what the engine supports."""

from __future__ import annotations

import click

from .. import _bridge


@click.group("list")
def list_group() -> None:
    """List what the engine supports."""


@list_group.command("cc")
def list_cc() -> None:
    """Congestion-control algorithms, one per line (values for a flow's cc = ...)."""
    for name in _bridge.cc_names():
        click.echo(name)
