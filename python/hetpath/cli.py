"""The ``hetpath`` command line.

This module holds only the top-level group: option parsing for ``--version``
and the one place that turns errors into ``hetpath: error: ...`` lines and exit
codes.  Each subcommand lives in its own module under :mod:`hetpath.commands`
and is registered from :data:`hetpath.commands.COMMANDS`, so new ones (``sweep``,
``reproduce``) plug in without touching this file.

Exit codes: 0 success; 1 simulation failure or other runtime error; 2 bad
input (invalid scenario or sweep file, unreadable file, bad TOML, an unusable --out,
bad command-line usage), always found before anything runs; 130 interrupted.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator, NoReturn, Optional

import click

from .commands import COMMANDS
from .errors import ClusterError, CoreMissingError, HetpathError, OutputError, ScenarioError, SimulationError, Terminated

EXIT_RUNTIME = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

# Lines of a source-snippet ("  |", "3 | rate = ...") that some parsers append.
_SNIPPET_LINE = re.compile(r"^\d*\s*\|")


def one_line(message: str) -> str:
    """Collapse a possibly multi-line error message into one readable line."""
    parts = [ln.strip() for ln in message.splitlines()]
    kept = [p for p in parts if p and not _SNIPPET_LINE.match(p)]
    return "; ".join(kept) if kept else message.strip()


class CliError(click.ClickException):
    """An error printed as a single ``hetpath: error: <message>`` line (exit 1)."""

    exit_code = EXIT_RUNTIME

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))

    def show(self, file: Optional[Any] = None) -> None:
        click.echo(f"hetpath: error: {self.message}", err=True)


class CliInputError(CliError):
    """Bad input: invalid scenario, unreadable file, TOML syntax (exit 2)."""

    exit_code = EXIT_INPUT


def _describe_oserror(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else ""
    what = exc.strerror or str(exc)
    return f"{where}: {what}" if where else what


def _usage_line(exc: click.UsageError) -> CliInputError:
    """Bad command-line usage as one line (click prints usage, a hint and the error on
    three), naming the command so ``--help`` is easy to find."""
    name = exc.ctx.command_path if exc.ctx is not None else "hetpath"
    return CliInputError(f"{exc.format_message()} (see '{name} --help')")


class HetpathGroup(click.Group):
    """A click group that reports hetpath errors as one line, never a traceback."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # bare `hetpath`: the help, as click shows it
                raise
            raise _usage_line(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        with _sigterm_interrupts():
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _usage_line(exc) from None
        except (ScenarioError, OutputError, ClusterError) as exc:
            raise CliInputError(str(exc)) from None
        except SimulationError as exc:
            raise CliError(f"simulation failed: {exc}") from None
        except HetpathError as exc:  # e.g. CoreMissingError: the extension is not built
            raise CliError(str(exc)) from None
        except BrokenPipeError:
            _quiet_broken_pipe()
        except MemoryError:
            raise CliError("out of memory (a smaller scenario, fewer flows or a shorter duration may fit)") from None
        except OSError as exc:
            raise CliError(_describe_oserror(exc)) from None
        except KeyboardInterrupt as exc:
            click.echo("\nhetpath: interrupted", err=True)
            ctx.exit(EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED)


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While a command runs, SIGTERM raises :class:`Terminated` in the main thread."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: Any) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _quiet_broken_pipe() -> NoReturn:
    """stdout was closed early (e.g. ``| head``): exit quietly like other Unix tools."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    raise SystemExit(EXIT_RUNTIME)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from . import __version__, _bridge

    try:
        engine = _bridge.core_version()
    except CoreMissingError:
        engine = "not built"
    click.echo(f"hetpath {__version__} (engine {engine})")
    ctx.exit(0)


@click.group(cls=HetpathGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the package and engine versions and exit.",
)
def main() -> None:
    """Deterministic packet-level TCP simulation over satellite and radio paths."""


for _command in COMMANDS:
    main.add_command(_command)
