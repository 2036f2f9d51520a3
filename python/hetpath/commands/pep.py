"""``hetpath pep CONFIG``: the transparent split-connection PEP daemon.

Runs ``hetpath-live pep`` in the foreground (in ``--netns`` if given) until Ctrl-C or
SIGTERM, with its log on stderr; the daemon installs its nftables table on start and
removes it on the way out. ``--print-rules`` only prints what it would install. The
same command runs either gateway of a gateway-mode pair (``mode = "gateway"``, ``role``),
whose middle leg is hetpath-proto's TCP over sealed UDP. See docs/live.md, "The PEP" and
"Gateway mode".
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from ..errors import MissingFileError
from ..pep import Pep, print_rules


@click.command("pep", short_help="Run the transparent split-connection PEP daemon (Linux, root).")
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--print-rules", "print_only", is_flag=True,
              help="Print the nftables table and policy routes it would install, and exit.")
@click.option("--netns", default=None, metavar="NAME", help="Run inside network namespace NAME (ip netns).")
def pep_command(config: Path, print_only: bool, netns: Optional[str]) -> None:
    """Intercept the TCP connections CONFIG's [match] names (nftables TPROXY), relay each
    through two legs, and serve metrics, until Ctrl-C. The server sees the client's own
    address; everything else is routed untouched."""
    if not config.is_file():
        raise MissingFileError(f"{config}: no such file")
    if print_only:
        click.echo(print_rules(config), nl=False)
        return
    with Pep(config, netns=netns, inherit_log=True) as pep:
        click.echo("hetpath: PEP running; Ctrl-C stops it and removes its rules", err=True)
        pep.wait()  # leaving the block raises if it failed
