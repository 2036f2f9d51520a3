"""Build scenarios in Python and read/write them as TOML.

The builder is deliberately thin: it records what you pass and writes the same
TOML a person would, and the Rust loader does all validation.  That keeps one
source of truth for what a valid scenario is; errors surface when you
:func:`hetpath.run` or :meth:`Scenario.validate`.  The engine's message cites a
line of TOML the user never saw, so :meth:`Scenario.explain` maps it back to the
Python call and argument that produced it.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from . import _args, _bridge, _toml
from .errors import ArgumentError, OutputError, ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python < 3.11
    import tomli as tomllib

PathLike = Union[str, "os.PathLike[str]"]
Value = Any  # a unit string ("10Mbps"), a number, a bool or a nested dict


class Scenario:
    """A scenario under construction: nodes, links between them and TCP flows.

    Every method returns ``self`` so calls chain::

        sc = (Scenario("geo", duration="200s")
              .node("src").node("dst")
              .link("sat", "src", "dst", rate="10Mbps", delay="300ms", queue="100pkt")
              .flow("f1", "src", "dst", cc="cubic", size="5MB"))
    """

    def __init__(
        self,
        name: str,
        duration: Value = "60s",
        seed: Optional[int] = 1,
        sample_interval: Optional[Value] = None,
        **settings: Value,
    ) -> None:
        self._scenario: dict[str, Any] = {
            "name": name,
            "duration": duration,
            "seed": seed,
            "sample_interval": sample_interval,
            **settings,
        }
        self._tcp: dict[str, Any] = {}
        self._nodes: list[dict[str, Any]] = []
        self._links: list[dict[str, Any]] = []
        self._flows: list[dict[str, Any]] = []
        self._extra: dict[str, Any] = {}
        #: The file this scenario was loaded from or saved to; the engine
        #: resolves relative paths inside the scenario against its directory.
        self.path: Optional[Path] = None
        #: What came from parsed TOML (:meth:`from_dict`) rather than builder calls:
        #: entries per array, and whether [scenario]/[tcp] did. Only builder-made
        #: parts are named as Python calls in errors (:meth:`explain`).
        self._loaded: dict[str, int] = {}

    # -- building -----------------------------------------------------------

    @property
    def name(self) -> str:
        """The scenario's name (``[scenario] name``; a value that is not a string as a
        short ``repr``, for messages: the engine refuses it)."""
        name = self._scenario.get("name", "")
        return name if isinstance(name, str) else _args.describe(name)

    def node(self, name: str, **settings: Value) -> "Scenario":
        """Add a node; links and flows refer to it by name."""
        self._nodes.append({"name": name, **settings})
        return self

    def link(
        self,
        name: str,
        a: str,
        b: str,
        *,
        rate: Optional[Value] = None,
        delay: Optional[Value] = None,
        queue: Optional[Value] = None,
        ab: Optional[dict[str, Any]] = None,
        ba: Optional[dict[str, Any]] = None,
        **settings: Value,
    ) -> "Scenario":
        """Add a bidirectional link; ``ab``/``ba`` override settings per direction.

        ``rate`` and ``delay`` may be left out when both ``ab`` and ``ba`` give them
        (the engine decides what is missing and says so).
        """
        self._links.append(
            {"name": name, "a": a, "b": b, "rate": rate, "delay": delay, "queue": queue,
             **settings, "ab": ab, "ba": ba}
        )
        return self

    def flow(
        self,
        name: str,
        src: str,
        dst: str,
        cc: Union[str, dict[str, Any], None] = None,
        start: Value = "0s",
        size: Optional[Value] = None,
        tcp: Optional[dict[str, Any]] = None,
        **settings: Value,
    ) -> "Scenario":
        """Add a TCP flow; ``size=None`` is a bulk (unlimited) transfer.

        ``cc`` is a controller name or a table with its parameters
        (``{"name": "cubic", "beta": 0.8}``); without it, the flow's profile (if its
        ``tcp`` names one) or newreno decides.
        """
        self._flows.append(
            {"name": name, "from": src, "to": dst, "cc": cc, "start": start, "size": size,
             **settings, "tcp": tcp}
        )
        return self

    def tcp(self, **defaults: Value) -> "Scenario":
        """Set TCP defaults for every flow (``[tcp]``); later calls add or replace keys."""
        self._tcp.update(defaults)
        return self

    # -- conversion ---------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The scenario as plain data, in the shape of the TOML file (no ``None``s)."""
        data: dict[str, Any] = {"scenario": self._scenario}
        if self._tcp:
            data["tcp"] = self._tcp
        for key, items in (("node", self._nodes), ("link", self._links), ("flow", self._flows)):
            if items:
                data[key] = items
        data.update(self._extra)
        # A copy made only of what TOML holds (NumPy numbers as Python ones); a value it
        # cannot hold is an ArgumentError naming its key, not a TypeError when written.
        cleaned: dict[str, Any] = _toml.drop_none(_args.plain(data, self.source_name()))
        return cleaned

    def to_toml(self) -> str:
        """The scenario as TOML text, laid out like a hand-written file."""
        return _toml.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        """Build from parsed TOML; unknown sections are kept so the engine can judge them."""
        if not isinstance(data, dict):
            raise ArgumentError(f"Scenario.from_dict(): data: expected a dict of TOML tables, got {_args.describe(data)}")
        data = _args.plain(data, "Scenario.from_dict(): data")
        head = data.get("scenario")
        sc = cls.__new__(cls)
        sc._scenario = dict(head) if isinstance(head, dict) else {}
        tcp = data.get("tcp")
        sc._tcp = dict(tcp) if isinstance(tcp, dict) else {}
        sc._nodes, sc._links, sc._flows = (
            list(data[k]) if isinstance(data.get(k), list) else [] for k in ("node", "link", "flow")
        )
        # Unknown sections, and malformed known ones (e.g. `scenario = 3`), are
        # kept verbatim so the engine reports them with its usual message.
        expected = {"scenario": dict, "tcp": dict, "node": list, "link": list, "flow": list}
        sc._extra = {
            k: v for k, v in data.items() if k not in expected or not isinstance(v, expected[k])
        }
        sc.path = None
        sc._loaded = {k: len(v) for k, v in (("node", sc._nodes), ("link", sc._links), ("flow", sc._flows))}
        sc._loaded.update(scenario=bool(sc._scenario), tcp=bool(sc._tcp))
        return sc

    @classmethod
    def load(cls, path: PathLike) -> "Scenario":
        """Read a TOML scenario file (syntax only; run or validate to check content)."""
        p = _args.path(path, "Scenario.load(): path")
        sc = cls.from_dict(_toml.loads(_toml.read_file(p), str(p)))
        sc.path = p
        return sc

    def save(self, path: PathLike) -> Path:
        """Write the scenario as TOML and remember the path; ``OutputError`` if it
        cannot be written."""
        p = _args.path(path, "Scenario.save(): path")
        text = self.to_toml()
        try:
            p.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
        self.path = p
        return p

    # -- checking -----------------------------------------------------------

    def source_name(self) -> str:
        """What error messages call this scenario: its file, or ``<name>`` if unsaved."""
        return str(self.path) if self.path is not None else f"<{self.name or 'scenario'}>"

    def validate(self) -> list[str]:
        """Ask the engine whether the scenario is valid; raises ``ScenarioError`` if not,
        and returns its warnings (``FILE: KEY: message``) if it is."""
        with self.python_errors():
            return _bridge.validate_text(self.to_toml(), self.source_name())

    @contextlib.contextmanager
    def python_errors(self) -> Iterator[None]:
        """Re-raise a ``ScenarioError`` about this scenario's TOML text naming the Python
        call and argument instead (:meth:`explain`); for anything that runs or checks it."""
        try:
            yield
        except ScenarioError as exc:
            raise type(exc)(self.explain(str(exc))) from None

    def explain(self, message: str, text: Optional[str] = None) -> str:
        """Rewrite the engine's message about this scenario's generated TOML (``text``,
        default :meth:`to_toml`) so it names what the user wrote instead of a line they
        never saw: ``Scenario.link('sat', rate=...)`` for builder calls, the table entry
        (``link[0] 'sat'.rate``) for parts loaded from TOML. Other messages pass through."""
        prefix = self.source_name() + ": "
        if not message.startswith(prefix):
            return message
        body = message[len(prefix):]
        m = _LINE_ERROR.match(body)
        if m:
            where = _line_keys(text if text is not None else self.to_toml()).get(int(m["line"]))
            if where is None:
                return message
            section, index, key = where
            rest = m["rest"]
            if rest.startswith(key + ": "):
                rest = rest[len(key) + 2:]
            return prefix + self._name(section, index, [key], None) + ": " + rest
        m = _ENTRY_ERROR.match(body)
        if m and m["kind"] in ("scenario", "tcp", "node", "link", "flow"):
            index = int(m["index"]) if m["index"] is not None else None
            path = [p for p in (m["path"] or "").split(".") if p]
            return prefix + self._name(m["kind"], index, path, m["dir"]) + ": " + m["rest"]
        return message

    def _name(self, section: str, index: Optional[int], path: list[str], direction: Optional[str]) -> str:
        """``Scenario.<section>('<name>', <arg>=...)`` (plus the sub-key, if any) for a part
        made by a builder call; the engine's own table reference for a loaded part."""
        entries = {"node": self._nodes, "link": self._links, "flow": self._flows}.get(section)
        if entries is None:
            loaded = bool(self._loaded.get(section))
            head: Optional[str] = {"scenario": f"Scenario({self.name!r}", "tcp": "Scenario.tcp("}.get(section)
            label = section if index is None else f"{section}[{index}]"
        elif index is None:  # an array named without an entry: the engine's own words
            return section + (f" ({direction})" if direction else "") + "".join("." + p for p in path)
        else:
            entry = entries[index] if index < len(entries) else {}
            loaded = index < self._loaded.get(section, 0)
            head = f"Scenario.{section}({_args.describe(entry.get('name'))}"
            label = f"{section}[{index}] {_args.describe(entry.get('name'))}"
            # A per-direction error names `ab=` only when the key was given there.
            if direction and path and path[0] in (entry.get(direction) or {}):
                path = [direction, *path]
        if loaded or head is None:
            where = label + (f" ({direction})" if direction else "")
            return where + "".join("." + p for p in path)
        arg = re.sub(r"\[\d+\]$", "", path[0]) if path else "name"
        arg = _PY_ARGS.get(arg, arg)
        sub = ".".join(path)[len(path[0]) if path else 0:].lstrip(".")
        if arg == "name":
            call = head + ")"
        else:
            call = head + (", " if entries is not None or section == "scenario" else "") + f"{arg}=...)"
        return call + (f": {sub}" if sub else "")

    def __repr__(self) -> str:
        return (
            f"Scenario({self.name!r}, nodes={len(self._nodes)}, "
            f"links={len(self._links)}, flows={len(self._flows)})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self.to_dict() == other.to_dict()


#: Scenario keys whose Python argument has another name.
_PY_ARGS = {"from": "src", "to": "dst"}
#: The engine's two message shapes: a parse error at a line, and a build error naming a
#: table entry (``link[0] 'sat' (ab).delay: ...``, ``scenario.duration: ...``).
_LINE_ERROR = re.compile(r"^line (?P<line>\d+): (?P<rest>.*)$", re.S)
_ENTRY_ERROR = re.compile(
    r"^(?P<kind>[a-z_]+)(?:\[(?P<index>\d+)\])?(?: '[^']*')?(?: \((?P<dir>ab|ba)\))?"
    r"(?P<path>(?:\.[^.:\s]+)*): (?P<rest>.*)$", re.S)
_HEADER = re.compile(r"^\[(\[)?(?P<section>[^\]]+)\]\]?$")


def _line_keys(text: str) -> dict[int, tuple[str, Optional[int], str]]:
    """For TOML laid out by :func:`hetpath._toml.dumps` (one key per line): line number
    (1-based) -> (section, index in its array or None, key)."""
    out: dict[int, tuple[str, Optional[int], str]] = {}
    counts: dict[str, int] = {}
    section, index = "", None
    for n, line in enumerate(text.splitlines(), start=1):
        h = _HEADER.match(line)
        if h:
            section, index = h["section"], None
            if h.group(1):  # [[array]]: the next entry
                index = counts[section] = counts.get(section, -1) + 1
        elif line.strip():
            try:
                out[n] = (section, index, next(iter(tomllib.loads(line))))
            except (tomllib.TOMLDecodeError, StopIteration):
                pass
    return out
