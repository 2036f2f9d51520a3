"""TOML reading and writing, with errors that name the file.

``tomllib`` is in the standard library from 3.11; ``tomli`` is the same parser
for older Pythons.  Writing lays the file out the way people write scenarios
(``[scenario]``, ``[[link]]`` blocks, nested settings as inline tables) rather
than ``tomli_w``'s default of one long inline array per section; ``tomli_w``
still formats every scalar so quoting and escaping are right.  TOML has no
null, so ``None`` values are dropped: "not set" means "use the default".
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import tomli_w

from .errors import InputFileError, MissingFileError, ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python < 3.11
    import tomli as tomllib

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


#: Larger scenario or sweep files are refused unread: a 25,000-node scenario is 640 kB.
MAX_FILE_BYTES = 64 * 2**20


def read_file(path: Path) -> str:
    """Read a scenario or sweep file; any failure is a one-line ``ScenarioError`` (a user
    mistake: exit 2), not an ``OSError`` traceback. Only a regular file is read, so
    ``/dev/zero`` or a FIFO is refused at once instead of read forever."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a directory, expected a .toml file") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputFileError(f"{path}: is a directory, expected a .toml file")
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"{path}: not a regular file (a device, FIFO or socket); expected a .toml file")
        if info.st_size > MAX_FILE_BYTES:
            raise InputFileError(f"{path}: {info.st_size:,} bytes, more than the {MAX_FILE_BYTES // 2**20} MiB a scenario may have")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(MAX_FILE_BYTES + 1)
    except InputFileError:
        raise
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{path}: not a UTF-8 text file (invalid byte at offset {exc.start})") from None


def loads(text: str, source: str) -> dict[str, Any]:
    """Parse TOML; a syntax error becomes a one-line ``ScenarioError``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: invalid TOML: {exc}") from None


def drop_none(value: Any) -> Any:
    """Recursively remove ``None`` values from dicts and lists."""
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [drop_none(v) for v in value if v is not None]
    return value


def _scalar(value: Any) -> str:
    line = tomli_w.dumps({"v": value})
    return line[len("v = ") :].rstrip("\n")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _scalar(str(key))


def _value(value: Any) -> str:
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return _scalar(value)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _body(table: dict[str, Any]) -> list[str]:
    return [f"{_key(k)} = {_value(v)}" for k, v in table.items()]


def dumps(data: dict[str, Any]) -> str:
    """Serialise a scenario dict: top-level scalars, then tables, then arrays of tables."""
    data = drop_none(data)
    lines = _body({k: v for k, v in data.items() if not isinstance(v, dict) and not _is_table_array(v)})
    for key, value in data.items():
        if isinstance(value, dict):
            lines += ["", f"[{_key(key)}]", *_body(value)]
    for key, value in data.items():
        if _is_table_array(value):
            for entry in value:
                lines += ["", f"[[{_key(key)}]]", *_body(entry)]
    return "\n".join(lines).lstrip("\n") + "\n"
