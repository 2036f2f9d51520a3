"""``hetpath reproduce PAPER --sensitivity``: what the paper leaves unstated, swept.

``scenarios/PAPER/sensitivity.toml`` lists the parameters the paper does not state and
hetpath had to choose (docs/model-notes.md lists each with its range and source)::

    [sensitivity]
    grid = "full"        # each point runs the paper's full grid, or "quick" its --quick grid
    seeds = 3            # seeds per grid point at each sensitivity point

    [parameter.arq_timeout]
    title = "SR-ARQ retransmission timer"
    key = "link.sat.esw.rtx_timeout"        # or tables with a label, as a sweep's grid axis
    values = ["0.6s", "1s", "1.5s", "3s"]
    default = "1.5s"                        # hetpath's value: the scenarios' own
    quick = ["0.6s", "3s"]                  # the two values --quick takes (default: first, last)
    source = "where the range comes from"

The paper's reproduction runs once per point: at the defaults, with each parameter's other
values one at a time, and over the grid of one pair: the file's ``pair = ["a", "b"]``, or
the pair that moved the claims most one at a time (:func:`choose_pair`). A point's overrides are applied to every
run's scenario after the paper built it (:func:`apply`); every claim of the paper is decided
at every point by the one verdict rule. :mod:`.sensitivity_report` says, per claim, whether
the paper's value is reachable inside the ranges and which parameter moves it most.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

from .. import _bridge, _toml
from .. import sweep as sweep_mod
from ..errors import ScenarioError

FILE_NAME = "sensitivity.toml"
GRIDS = ("full", "quick")
#: Seeds per grid point of a --quick sensitivity run: two, so a bound or an ordering has a CI.
QUICK_SEEDS = 2
#: Kinds of point: hetpath's defaults, one parameter off its default, the pair off theirs.
DEFAULT, ONE, PAIR = "defaults", "one at a time", "pair"

T = TypeVar("T", bound=sweep_mod.Task)


@dataclass(frozen=True)
class Override:
    """One scenario key a point sets, and the parameter value it comes from."""

    parameter: str
    label: Any
    key: str
    value: Any
    #: What the key is at the parameter's default (the paper's runs must agree).
    default: Any


@dataclass
class Parameter:
    name: str
    title: str
    labels: list[Any]
    #: The keys each value sets, by position in :attr:`labels`.
    settings: list[dict[str, Any]]
    default: Any
    quick: list[Any]
    source: str

    def values(self, quick: bool) -> list[Any]:
        """The labels a run takes: every value, or the two of --quick."""
        return list(self.quick) if quick else list(self.labels)

    def shown(self, quick: bool) -> list[Any]:
        """The labels a run has a point at, the default among them, in the file's order."""
        return [v for v in self.labels if v in self.values(quick) or v == self.default]

    def overrides(self, label: Any) -> tuple[Override, ...]:
        at, base = self.labels.index(label), self.settings[self.labels.index(self.default)]
        return tuple(Override(self.name, label, k, v, base.get(k)) for k, v in self.settings[at].items())


@dataclass
class Plan:
    path: Path
    grid: str
    seeds: int
    parameters: dict[str, Parameter]
    #: The pair to move together, when the file names it (a question of the paper's that
    #: needs two parameters at once); else :func:`choose_pair` picks it.
    pair: Optional[tuple[str, str]] = None


@dataclass(frozen=True)
class Point:
    """A sensitivity point: the parameters off their default, with their labels."""

    kind: str
    settings: tuple[tuple[str, Any], ...] = ()

    def text(self) -> str:
        return ", ".join(f"{p}={v}" for p, v in self.settings) or "defaults"

    def overrides(self, plan: Plan) -> tuple[Override, ...]:
        return tuple(o for p, v in self.settings for o in plan.parameters[p].overrides(v))


def load(path: Path) -> Plan:
    """A sensitivity.toml, checked: every error names the file and the key."""
    where = f"{path}: "
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such file: the paper's unstated parameters (docs/model-notes.md) "
                            f"are swept from it") from None
    doc = _toml.loads(text, str(path))
    head = doc.get("sensitivity", {})
    unknown = sorted(set(doc) - {"sensitivity", "parameter"}) + \
        [f"sensitivity.{k}" for k in sorted(set(head) - {"grid", "seeds", "pair"})]
    if unknown:
        raise ScenarioError(f"{where}{unknown[0]}: unknown key (expected [sensitivity] grid, seeds, pair and "
                            f"[parameter.NAME])")
    grid = head.get("grid", "full")
    if grid not in GRIDS:
        raise ScenarioError(f"{where}sensitivity.grid: expected one of {', '.join(GRIDS)}, got {grid!r}")
    seeds = head.get("seeds", 3)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 1000:
        raise ScenarioError(f"{where}sensitivity.seeds: expected a count from 1 to 1000, got {seeds!r}")
    params = {str(name): _parameter(str(name), spec, where) for name, spec in doc.get("parameter", {}).items()}
    if not params:
        raise ScenarioError(f"{where}expected at least one [parameter.NAME]")
    pair = head.get("pair")
    if pair is not None and (not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]
                             or any(p not in params for p in pair)):
        raise ScenarioError(f"{where}sensitivity.pair: expected two different parameter names "
                            f"({', '.join(params)}), got {pair!r}")
    return Plan(path, grid, seeds, params, None if pair is None else (str(pair[0]), str(pair[1])))


_PARAMETER_KEYS = {"title", "key", "values", "default", "quick", "source"}


def _parameter(name: str, spec: Any, where: str) -> Parameter:
    at = f"{where}parameter.{name}"
    if not isinstance(spec, dict):
        raise ScenarioError(f"{at}: expected a table")
    unknown = sorted(set(spec) - _PARAMETER_KEYS)
    if unknown:
        raise ScenarioError(f"{at}.{unknown[0]}: unknown key (expected {', '.join(sorted(_PARAMETER_KEYS))})")
    for key in ("title", "values", "default", "source"):
        if key not in spec:
            raise ScenarioError(f"{at}.{key}: missing")
    values = spec["values"]
    if not isinstance(values, list) or not values:
        raise ScenarioError(f"{at}.values: expected a list of values, or of tables with a label and their keys")
    plain = isinstance(values, list) and not any(isinstance(v, dict) for v in values)
    if plain and "key" not in spec:
        raise ScenarioError(f"{at}.key: missing (the scenario key plain values set; or give each value as a "
                            f"table with a label and its keys)")
    if not plain and "key" in spec:
        raise ScenarioError(f"{at}.key: values given as tables name their own keys; drop key")
    default = sweep_mod._label(spec["default"])
    if plain:
        axis = sweep_mod._axis(str(spec["key"]), values, f"{at}.")
        labels, settings = list(axis.labels), list(axis.overrides)
    else:
        labels, settings = _tables(values, default, at)
    if len(labels) < 2:
        raise ScenarioError(f"{at}.values: expected at least two values to sweep")
    if default not in labels:
        raise ScenarioError(f"{at}.default: {default!r} is not one of values ({', '.join(map(str, labels))})")
    quick = [sweep_mod._label(v) for v in spec.get("quick", [labels[0], labels[-1]])]
    if len(quick) != 2 or any(q not in labels for q in quick) or quick[0] == quick[1]:
        raise ScenarioError(f"{at}.quick: expected two different labels of values, got {spec.get('quick')!r}")
    for text_key in ("title", "source"):
        if not isinstance(spec[text_key], str) or not spec[text_key].strip():
            raise ScenarioError(f"{at}.{text_key}: expected a non-empty string")
    return Parameter(name, spec["title"], labels, settings, default, quick, spec["source"])


def _tables(values: list[Any], default: Any, at: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """Values given as tables: a label and the keys each sets. The default alone may set
    none: the paper's runs as they are (for a key the reproduction sets per grid point,
    such as a channel whose slot follows the rate)."""
    labels: list[Any] = []
    settings = []
    for k, v in enumerate(values):
        if not isinstance(v, dict) or "label" not in v:
            raise ScenarioError(f"{at}.values[{k}]: expected a table with a label and the keys it sets")
        label = sweep_mod._label(v["label"])
        keys = {x: y for x, y in v.items() if x != "label"}
        if not keys and label != default:
            raise ScenarioError(f"{at}.values[{k}]: sets no key; only the default may (the paper's runs as they are)")
        if label in labels:
            raise ScenarioError(f"{at}.values[{k}]: label {label!r} is used twice")
        labels.append(label)
        settings.append(keys)
    return labels, settings


def one_at_a_time(plan: Plan, quick: bool) -> list[Point]:
    """The defaults, then each parameter's other values with the rest at theirs."""
    points = [Point(DEFAULT)]
    for p in plan.parameters.values():
        points += [Point(ONE, ((p.name, v),)) for v in p.values(quick) if v != p.default]
    return points


def pair_points(plan: Plan, pair: tuple[str, str], quick: bool) -> list[Point]:
    """The pair's grid where both are off their default (the rest are one-at-a-time points)."""
    a, b = (plan.parameters[n] for n in pair)
    return [Point(PAIR, ((a.name, x), (b.name, y)))
            for x, y in itertools.product(a.values(quick), b.values(quick)) if x != a.default and y != b.default]


def apply(tasks: list[T], overrides: tuple[Override, ...]) -> list[T]:
    """Each task with ``overrides`` set in its scenario. A key that selects an array entry
    (``link.sat.``) is set in the runs whose scenario has that entry; other keys in every
    run. Refused, with the parameter named: a key that applies to no run; one whose value
    differs between the paper's runs (the reproduction varies it: sweeping it would flatten
    the grid) or differs from the parameter's default (the sweep would misreport hetpath's
    defaults); and a value the engine refuses."""
    used = {o.key: 0 for o in overrides}
    before: dict[str, set[str]] = {o.key: set() for o in overrides}
    out, checked = [], set()
    for task in tasks:
        doc = _toml.loads(task.text, task.source)
        for o in overrides:
            if sweep_mod.find_entry(doc, o.key)[0] is None:
                continue
            have = _current(doc, o.key)
            if have is not None:
                before[o.key].add(have)
            sweep_mod.set_key(doc, o.key, copy.deepcopy(o.value), f"{task.source}: ")
            used[o.key] += 1
        text = _toml.dumps(doc)
        if text not in checked:
            try:
                _bridge.validate_text(text, task.source)
            except ScenarioError as e:
                names = ", ".join(f"parameter.{o.parameter} = {o.label!r}" for o in overrides)
                raise ScenarioError(f"{names}: the engine refuses the scenario it makes: {e}") from None
            checked.add(text)
        out.append(dataclasses.replace(task, text=text))
    for o in overrides:
        at = f"parameter.{o.parameter} ('{o.key}')"
        if not used[o.key]:
            raise ScenarioError(f"{at} applies to none of the paper's runs (no run's scenario has the entry it names)")
        if len(before[o.key]) > 1:
            raise ScenarioError(f"{at}: the reproduction itself varies it ({', '.join(sorted(before[o.key]))}): "
                                f"sweeping it would flatten the paper's grid")
        if o.default is not None and before[o.key] and before[o.key] != {_text(o.default)}:
            raise ScenarioError(f"{at}: the default sets {_text(o.default)}, but the paper's runs have "
                                f"{', '.join(sorted(before[o.key]))}: give hetpath's value as the default")
    return out


def _text(value: Any) -> str:
    return str(_toml._value(_toml.drop_none(value)))


def _current(doc: dict[str, Any], key: str) -> Optional[str]:
    """The key's value in a run's scenario as TOML text; None where the run leaves it unset."""
    node: Any
    node, parts = sweep_mod.find_entry(doc, key)
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return _text(node)


# --- reading the one-at-a-time points -------------------------------------------------

def ratio(text: str) -> Optional[float]:
    """ours/paper as a number (the comparison row's text), None where there is none."""
    try:
        return float(text)
    except ValueError:
        return None


def choose_pair(plan: Plan, rows: list[dict[str, Any]]) -> Optional[tuple[str, str]]:
    """The two parameters that moved the claims most, one at a time: each claim counts
    for the parameter that moves its ours/paper most (the widest span over its values,
    defaults included); ties by the summed span. None with fewer than two parameters."""
    if len(plan.parameters) < 2:
        return None
    spans = spans_by_claim(plan, rows)
    wins = {p: 0 for p in plan.parameters}
    total = {p: 0.0 for p in plan.parameters}
    for claim_spans in spans.values():
        for p, s in claim_spans.items():
            total[p] += s
        best = max(claim_spans.items(), key=lambda kv: kv[1], default=None)
        if best is not None and best[1] > 0:
            wins[best[0]] += 1
    order = sorted(plan.parameters, key=lambda p: (-wins[p], -total[p], list(plan.parameters).index(p)))
    return order[0], order[1]


def spans_by_claim(plan: Plan, rows: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """For each claim, each parameter's span of ours/paper over its one-at-a-time values
    and the defaults (0 where fewer than two points have a ratio)."""
    out: dict[int, dict[str, float]] = {}
    for claim in sorted({r["claim"] for r in rows}):
        mine = [r for r in rows if r["claim"] == claim]
        out[claim] = {}
        for p in plan.parameters.values():
            xs = [r["ratio"] for r in along(mine, p).values() if r["ratio"] is not None]
            out[claim][p.name] = (max(xs) - min(xs)) if len(xs) > 1 else 0.0
    return out


def along(claim_rows: list[dict[str, Any]], parameter: Parameter) -> dict[Any, dict[str, Any]]:
    """One claim's rows along one parameter, by its label: its one-at-a-time points, and
    the defaults' row at its default."""
    out = {r["value"]: r for r in claim_rows if r["kind"] == ONE and r["parameter"] == parameter.name}
    out[parameter.default] = next(r for r in claim_rows if r["kind"] == DEFAULT)
    return out


def run(plan: Plan, quick: bool, run_point: Callable[[Point, int, int], list[dict[str, str]]],
        note: Callable[[str], None]) -> list[dict[str, Any]]:
    """Every point's claim rows, tagged with the point: the one-at-a-time points, then
    the pair's grid. ``run_point(point, k, n)`` reproduces the paper at point k of n and
    returns its comparison rows (one per claim, in paper order)."""
    points = one_at_a_time(plan, quick)
    rows: list[dict[str, Any]] = []
    for k, point in enumerate(points, 1):
        rows += tag(point, run_point(point, k, len(points)))
    pair = plan.pair or choose_pair(plan, rows)
    if pair is not None:
        more = pair_points(plan, pair, quick)
        why = "named in the file" if plan.pair else "that moved the claims most, one at a time"
        note(f"the pair {why}: {pair[0]} x {pair[1]} ({len(more)} more points)")
        for k, point in enumerate(more, len(points) + 1):
            rows += tag(point, run_point(point, k, len(points) + len(more)))
    return rows


def tag(point: Point, claims: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Claim rows of one point, as rows of sensitivity.csv."""
    (p1, v1), (p2, v2) = (list(point.settings) + [("", ""), ("", "")])[:2]
    return [{"kind": point.kind, "parameter": p1, "value": v1, "parameter2": p2, "value2": v2, "claim": i + 1,
             "ratio": ratio(r["ours/paper"]), **r} for i, r in enumerate(claims)]
