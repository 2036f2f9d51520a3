"""Build scenarios in Python and read/write them as TOML.

The builder is deliberately thin: it records what you pass and writes the same
TOML a person would, and the Rust loader does all validation.  That keeps one
source of truth for what a valid scenario is; errors surface when you
:func:`hetpath.run` or :meth:`Scenario.validate`, naming the offending key.
"""

from __future__ import annotations

import os
from copy import deepcopy
from pathlib import Path
from typing import Any, Optional, Union

from . import _bridge, _toml

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

    # -- building -----------------------------------------------------------

    @property
    def name(self) -> str:
        """The scenario's name (``[scenario] name``)."""
        return str(self._scenario.get("name", ""))

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
        rate: Value,
        delay: Value,
        queue: Optional[Value] = None,
        ab: Optional[dict[str, Any]] = None,
        ba: Optional[dict[str, Any]] = None,
        **settings: Value,
    ) -> "Scenario":
        """Add a bidirectional link; ``ab``/``ba`` override settings per direction."""
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
        cleaned: dict[str, Any] = _toml.drop_none(deepcopy(data))
        return cleaned

    def to_toml(self) -> str:
        """The scenario as TOML text, laid out like a hand-written file."""
        return _toml.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        """Build from parsed TOML; unknown sections are kept so the engine can judge them."""
        data = deepcopy(data)
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
        return sc

    @classmethod
    def load(cls, path: PathLike) -> "Scenario":
        """Read a TOML scenario file (syntax only; run or validate to check content)."""
        p = Path(path)
        sc = cls.from_dict(_toml.loads(p.read_text(encoding="utf-8"), str(p)))
        sc.path = p
        return sc

    def save(self, path: PathLike) -> Path:
        """Write the scenario as TOML and remember the path."""
        p = Path(path)
        p.write_text(self.to_toml(), encoding="utf-8")
        self.path = p
        return p

    # -- checking -----------------------------------------------------------

    def source_name(self) -> str:
        """What error messages call this scenario: its file, or ``<name>`` if unsaved."""
        return str(self.path) if self.path is not None else f"<{self.name or 'scenario'}>"

    def validate(self) -> None:
        """Ask the engine whether the scenario is valid; raises ``ScenarioError`` if not."""
        _bridge.validate_text(self.to_toml(), self.source_name())

    def __repr__(self) -> str:
        return (
            f"Scenario({self.name!r}, nodes={len(self._nodes)}, "
            f"links={len(self._links)}, flows={len(self._flows)})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self.to_dict() == other.to_dict()
