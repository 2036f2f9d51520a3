"""Input helpers shared by subcommands."""

from __future__ import annotations

import re
from pathlib import Path

from .. import _toml
from ..errors import ScenarioError


def read_input(path: Path) -> str:
    """Read a scenario file; any failure is a ``ScenarioError`` (exit 2), not a traceback."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{path}: is a directory, expected a scenario .toml file") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None


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
