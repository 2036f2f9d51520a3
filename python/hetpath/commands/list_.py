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


@list_group.command("profiles")
def list_profiles() -> None:
    """TCP profiles (values for profile = ... in [tcp] or a flow's tcp table), with
    the keys each sets; keys a scenario writes itself override them."""
    for i, (name, source, cc, keys, per_cc) in enumerate(_bridge.profiles()):
        if i:
            click.echo()
        click.echo(name)
        click.echo(f"  {source}")
        if cc:
            click.echo(f"  cc = \"{cc}\"")
        for line in keys.strip().splitlines():
            click.echo(f"  {line}")
        for controller, extra in per_cc:
            click.echo(f"  with cc = \"{controller}\":")
            for line in extra.strip().splitlines():
                click.echo(f"    {line}")
