"""The Python API's arguments, checked where they come in.

Any value a caller passes to a public function gives either a result or a hetpath error
(:class:`~hetpath.errors.ArgumentError` for a value of the wrong type or shape) naming
the call and the argument, never a ``TypeError``, ``AttributeError`` or
``RecursionError`` from deep inside. NumPy scalars and arrays are taken where Python
numbers and lists are (a seed drawn with ``numpy.random`` is an ``int64``), recognised
by duck typing, so that the package never imports numpy for it.
"""

from __future__ import annotations

import inspect
import numbers
import os
import reprlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Optional

from .errors import ArgumentError

#: Tables and arrays nested deeper than this in a scenario value are refused: scenario
#: files nest a few levels, and deeper structures only exhaust the interpreter's stack
#: (a ``RecursionError``) in every function that walks them.
MAX_DEPTH = 64

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 40, 40


def describe(value: Any) -> str:
    """A short ``repr`` of any value, safe for messages: bounded in length and depth
    (the plain ``repr`` of a deeply nested dict raises ``RecursionError``), and never
    failing (a ``__repr__`` that raises gives the type's name)."""
    try:
        return _REPR.repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _is_numpy(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "tolist")


def integer(value: Any, where: str, low: int, high: int) -> int:
    """``value`` as a Python ``int`` in ``[low, high]``: an ``int`` or a NumPy integer,
    never a ``bool`` (``seed=True`` is a mistake, not seed 1) or a float."""
    if _is_numpy(value) and not isinstance(value.tolist(), bool):
        value = value.tolist()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and low <= int(value) <= high:
        return int(value)
    raise ArgumentError(f"{where}: expected an integer from {low} to {_bound(high)}, got {describe(value)}")


def _bound(n: int) -> str:
    return "2^64-1" if n == 2**64 - 1 else f"{n:,}"


def flag(value: Any, where: str) -> bool:
    """``value`` as a ``bool``: ``True``, ``False`` or a NumPy boolean; anything else
    (an array, whose truth is ambiguous, or a string such as ``"no"``) is refused."""
    if _is_numpy(value) and isinstance(value.tolist(), bool):
        return bool(value.tolist())
    if isinstance(value, bool):
        return value
    raise ArgumentError(f"{where}: expected True or False, got {describe(value)}")


def path(value: Any, where: str) -> Path:
    """``value`` as a ``Path``: a ``str`` or an ``os.PathLike`` naming a file, not
    ``bytes``, empty or holding a NUL byte."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        raise ArgumentError(f"{where}: expected a path (str or os.PathLike), got {describe(value)}")
    if not text or "\0" in text:
        raise ArgumentError(f"{where}: expected a file or directory name, got {describe(value)}")
    return Path(text)


def callback(value: Any, where: str, args: int = 2) -> Optional[Callable[..., Any]]:
    """``value`` if it is ``None`` or callable with ``args`` positional arguments (where
    its signature can be read). What the callable raises when called is the caller's own
    exception, and reaches the caller unchanged."""
    if value is None:
        return value
    if not callable(value):
        raise ArgumentError(f"{where}: expected a function or None, got {describe(value)}")
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):  # a builtin without one: trusted
        return value
    try:
        signature.bind(*[0.0] * args)
    except TypeError:
        raise ArgumentError(f"{where}: expected a function of {args} arguments, got {describe(value)}{signature}") from None
    return value


def backend(value: Any, where: str) -> Any:
    """A sweep backend (an object with a ``run`` method) or ``None`` (local workers)."""
    if value is None or callable(getattr(value, "run", None)):
        return value
    raise ArgumentError(f"{where}: expected a backend (LocalBackend, DaskBackend, or an object with a run method), "
                        f"got {describe(value)}")


def names(value: Any, where: str) -> list[str]:
    """A list (or tuple) of strings, such as flow names."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ArgumentError(f"{where}: expected a list of names (strings), got {describe(value)}")


def plain(value: Any, where: str, depth: int = 0) -> Any:
    """A copy of a scenario value made only of what TOML holds: strings, booleans,
    integers, floats, tables (dicts with string keys) and arrays (lists; a tuple or a
    NumPy array becomes one), NumPy scalars as Python numbers, ``None`` kept (the
    writer drops it: "not set"). Anything else, or nesting past :data:`MAX_DEPTH`, is an
    :class:`ArgumentError` naming the key path within ``where``."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    if _is_numpy(value):
        return plain(value.tolist(), where, depth)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if depth >= MAX_DEPTH and isinstance(value, (Mapping, list, tuple)):
        raise ArgumentError(f"{where}: tables and arrays nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ArgumentError(f"{where}: expected string keys, got the key {describe(key)}")
            out[key] = plain(item, f"{where}.{key}", depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [plain(item, f"{where}[{k}]", depth + 1) for k, item in enumerate(value)]
    raise ArgumentError(f"{where}: expected a string, number, boolean, table (dict) or array (list), "
                        f"got {describe(value)} ({type(value).__name__})")
