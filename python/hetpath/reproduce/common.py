"""What every reproduction shares: where its scenarios are, the values its paper
states (``scenarios/<paper>/paper.toml``), and how results are reported.

A :class:`Finding` is one number of ours (mean and 95% CI over runs) for one
experiment, protocol, parameter point and metric, with the paper's value where the
text states one.  Reproductions return findings; the CLI prints them as a comparison
table or as JSON lines with the keys ``experiment, protocol, params, metric, ours,
ci95, paper, seeds, aborted``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from .. import _toml
from ..backends import Backend
from ..errors import ScenarioError
from ..result import json_safe

if TYPE_CHECKING:
    from ..store import ResultsStore


@dataclass
class Context:
    """How to run: the paper's scenario directory, grid size, workers, output."""

    scenarios: Path
    quick: bool
    backend: Backend
    out_dir: Optional[Path]
    seeds: Optional[int] = None
    progress: Optional[Callable[[int, int], None]] = None
    note: Callable[[str], None] = lambda _msg: None
    #: Figure file formats, each figure written once per format (see :mod:`hetpath.plots`).
    formats: tuple[str, ...] = ("png",)
    #: Where finished runs are kept as they arrive (``--resume``): every paper runs its
    #: tasks through :func:`hetpath.store.run_stored` (sweep tasks via :func:`hetpath.sweep.run`).
    store: Optional["ResultsStore"] = None


@dataclass(eq=False)
class PaperValue:
    """One figure the paper states: a value (with a relation) or a range."""

    experiment: str
    protocol: str
    metric: str
    params: dict[str, str]
    value: Optional[float] = None
    relation: str = "~"
    range: Optional[tuple[float, float]] = None
    section: str = ""
    quote: str = ""

    def covers(self, params: dict[str, str], order: dict[str, list[str]]) -> bool:
        """Whether a point lies in this value's params; ``a..b`` spans grid labels."""
        for key, want in self.params.items():
            have = params.get(key)
            if ".." in want:
                lo, hi = want.split("..")
                labels = order.get(key, [])
                if have not in labels or lo not in labels or hi not in labels:
                    return False
                i, j = sorted((labels.index(lo), labels.index(hi)))
                if not i <= labels.index(have) <= j:
                    return False
            elif have != want:
                return False
        return True

    def stated(self) -> Any:
        """The paper's figure as JSON: a number, or [lo, hi] for a range."""
        return list(self.range) if self.range else self.value

    def text(self) -> str:
        if self.range:
            return f"{_num(self.range[0])}–{_num(self.range[1])}"
        prefix = {"~": "", ">": ">", "<": "<"}.get(self.relation, "")
        return f"{prefix}{_num(self.value)}"

    def agrees(self, ours: list[float]) -> Optional[bool]:
        """For relations and ranges, whether every one of our values satisfies it (a range:
        lies inside it); None for "~", which has no pass mark."""
        if not ours:
            return None
        if self.range:
            lo, hi = self.range
            return lo <= min(ours) and max(ours) <= hi
        if self.relation == ">":
            return all(o > self.value for o in ours)
        if self.relation == "<":
            return all(o < self.value for o in ours)
        return None


@dataclass
class Finding:
    experiment: str
    protocol: str
    params: dict[str, Any]
    metric: str
    ours: Optional[float]
    ci95: Optional[float]
    seeds: int
    aborted: int
    paper: list[PaperValue] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        stated = [p.stated() for p in self.paper]
        return json_safe({
            "experiment": self.experiment,
            "protocol": self.protocol,
            "params": self.params,
            "metric": self.metric,
            "ours": self.ours,
            "ci95": self.ci95,
            "paper": stated[0] if len(stated) == 1 else (stated or None),
            "seeds": self.seeds,
            "aborted": self.aborted,
        })


def _num(x: Optional[float]) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.3g}"


def find_scenarios(paper: str, override: Optional[Path] = None) -> Path:
    """``scenarios/<paper>``: from ``--scenarios``, ``$HETPATH_SCENARIOS``, the
    current directory or its parents, or the source tree this package came from."""
    candidates = []
    if override is not None:
        candidates.append(Path(override))
    else:
        if os.environ.get("HETPATH_SCENARIOS"):
            candidates.append(Path(os.environ["HETPATH_SCENARIOS"]) / paper)
        here = Path.cwd().resolve()
        candidates += [d / "scenarios" / paper for d in (here, *here.parents)]
        candidates.append(Path(__file__).resolve().parents[3] / "scenarios" / paper)
    for c in candidates:
        if (c / "paper.toml").is_file():
            return c
    raise ScenarioError(
        f"cannot find scenarios/{paper}/paper.toml: run from the hetpath checkout, "
        f"or pass --scenarios DIR (or set HETPATH_SCENARIOS to the scenarios directory)"
    )


#: Keys of a ``[[value]]`` that are not grid parameters.
_VALUE_KEYS = {"experiment", "protocol", "metric", "value", "relation", "range", "section", "quote"}


def load_paper(path: Path) -> list[PaperValue]:
    """The ``[[value]]`` entries of a paper.toml, checked."""
    doc = _toml.loads(path.read_text(encoding="utf-8"), str(path))
    values = []
    for i, v in enumerate(doc.get("value", [])):
        where = f"{path}: value[{i}]"
        try:
            params = {k: str(x) for k, x in v.items() if k not in _VALUE_KEYS}
            rng = v.get("range")
            pv = PaperValue(
                experiment=str(v["experiment"]),
                protocol=str(v["protocol"]),
                metric=str(v["metric"]),
                params=params,
                value=None if rng else float(v["value"]),
                relation=str(v.get("relation", "~")),
                range=(float(rng[0]), float(rng[1])) if rng else None,
                section=str(v.get("section", "")),
                quote=str(v.get("quote", "")),
            )
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ScenarioError(f"{where}: expected experiment, protocol, metric and value or range = [lo, hi] ({e})") from None
        if pv.relation not in ("~", ">", "<"):
            raise ScenarioError(f"{where}.relation: expected one of ~, >, <")
        values.append(pv)
    return values


def attach(findings: list[Finding], paper: list[PaperValue], order: dict[str, list[str]]) -> None:
    """Give each finding the paper values that cover its point."""
    for f in findings:
        f.paper = [
            p for p in paper
            if p.experiment == f.experiment and p.protocol == f.protocol and p.metric == f.metric
            and p.covers({k: str(v) for k, v in f.params.items()}, order)
        ]


def json_lines(findings: list[Finding]) -> str:
    return "\n".join(json.dumps(f.as_json(), allow_nan=False) for f in findings)


def comparison_rows(findings: list[Finding], paper: list[PaperValue]) -> list[dict[str, str]]:
    """One row per stated paper value, with our value(s) at the points it covers."""
    rows = []
    for p in paper:
        mine = [f for f in findings if any(q is p for q in f.paper)]
        ours = [f.ours for f in mine if f.ours is not None]
        if len(mine) == 1 and mine[0].ours is not None:
            f = mine[0]
            text = _num(f.ours) + (f" ± {f.ci95:.2g}" if f.ci95 is not None else "")
        elif ours:
            text = f"{_num(min(ours))}–{_num(max(ours))}"
        else:
            text = "none completed" if mine else "not run"
        ratio = (ours[0] / p.value) if (len(ours) == 1 and p.range is None and p.relation == "~" and p.value) else None
        ok = p.agrees(ours)
        rows.append({
            "section": p.section,
            "experiment": p.experiment,
            "protocol": p.protocol,
            "point": " ".join(f"{k}={v}" for k, v in p.params.items()),
            "metric": p.metric,
            "paper": p.text(),
            "ours": text,
            "check": "ours/paper = " + _num(ratio) if ratio is not None else ("holds" if ok else "does not hold" if ok is not None else "-"),
            "not completed": str(sum(f.aborted for f in mine)),
        })
    return rows
