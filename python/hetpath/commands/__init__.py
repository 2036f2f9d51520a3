"""Subcommands of the ``hetpath`` CLI, one module each.

To add a command, write ``commands/<name>.py`` exposing a click command and
append it to :data:`COMMANDS`.  Commands raise :mod:`hetpath.errors` exceptions
(or use :func:`hetpath._toml.read_file`); :mod:`hetpath.cli` turns those
into one-line messages and exit codes.
"""

from __future__ import annotations

import click

from .emulate import emulate_command
from .list_ import list_group
from .pep import pep_command
from .report import report_command
from .reproduce import reproduce_command
from .run import run_command
from .sweep import sweep_command
from .validate import validate_command

COMMANDS: list[click.Command] = [run_command, sweep_command, reproduce_command, report_command, validate_command,
                                 list_group, emulate_command, pep_command]
