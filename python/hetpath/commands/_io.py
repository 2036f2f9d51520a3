"""Input helpers shared by subcommands."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Optional

import click

from .. import _toml
from ..errors import OutputError, ScenarioError


def warning_line(warning: str) -> str:
    """A loader's warning (``FILE: KEY: message``) as the CLI prints it on stderr."""
    return f"hetpath: warning: {warning}"


def note_printer(quiet: bool) -> Optional[Callable[[str], None]]:
    """What prints a library's notes (a stale lock taken over, :func:`hetpath.outdir.prepare`)
    on stderr as ``hetpath: ...`` lines; nothing with ``--quiet``."""
    if quiet:
        return None
    return lambda line: click.echo(f"hetpath: {line}", err=True)


def writable_dir(path: Path) -> Path:
    """Create the output directory ``path`` now, before anything runs, so an unusable
    ``--out`` fails at once (exit 2) and not after a long run."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"--out {path}: exists and is not a directory") from None
    except OSError as exc:
        raise OutputError(f"--out {path}: cannot create the directory: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"--out {path}: directory is not writable")
    return path


def writable_file(path: Path, suffixes: tuple[str, ...]) -> Path:
    """Check an output file's name and directory now, before anything runs: the suffix
    must be one of ``suffixes`` (none: the first is added), and the directory must
    exist and be writable."""
    if path.is_dir():
        raise OutputError(f"{path}: is a directory, expected a file name")
    if path.suffix == "":
        path = path.with_suffix(suffixes[0])
    if path.suffix not in suffixes:
        raise OutputError(f"{path}: unknown format '{path.suffix}'; expected one of {', '.join(suffixes)}")
    parent = path.parent
    if path.is_dir():
        raise OutputError(f"{path}: is a directory, expected a file name")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: directory {parent} does not exist or is not writable")
    return path


def scenario_name(text: str, path: Path) -> str:
    """The ``[scenario] name`` of already-validated text, or the file's stem."""
    try:
        name = _toml.loads(text, str(path)).get("scenario", {}).get("name")
    except (ScenarioError, AttributeError):
        name = None
    return str(name) if name else path.stem


def safe_dirname(name: str) -> str:
    """Make a scenario name usable as one directory component."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return cleaned or "scenario"


def _formats(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """``--format svg --format png`` or ``--format svg,png``: checked, in order, no repeats."""
    from ..plots import check_formats

    try:
        return check_formats(f for v in value for f in v.split(","))
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


#: The ``--format`` option of the commands that write figures.
format_option = click.option(
    "--format", "formats", multiple=True, default=("png",), callback=_formats, metavar="FMT",
    help="Figure file format: png, svg or pdf; repeat or separate by commas for several (default png).")


def _enable_checks(_ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    """``--check`` turns the run-time checks on for every run of the command, the
    workers' included (through ``HETPATH_CHECK``, which they inherit)."""
    if value:
        from .._bridge import enable_checks

        enable_checks()
    return value


check_option = click.option(
    "--check", is_flag=True, expose_value=False, callback=_enable_checks,
    help="Check the run-time invariants (packets, bytes, event times) at the end of every run; "
         "a violation fails the run. Also HETPATH_CHECK=1.")
