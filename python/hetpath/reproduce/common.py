"""What every reproduction shares: where its scenarios are, the values its paper
states (``scenarios/<paper>/paper.toml``), and how results are reported.

A :class:`Finding` is one number of ours (mean and 95% CI over runs) for one
experiment, protocol, parameter point and metric, with the paper's value where the
text states one.  Reproductions return findings; the CLI prints them as a comparison
table or as JSON lines with the keys ``experiment, protocol, params, metric, ours,
ci95, paper, seeds, aborted``.

Every claim of every paper is decided by the one verdict rule here (:func:`number`,
:func:`within`, :func:`bound`, :func:`ordering`; docs/reproductions/README.md): each
gives exactly one of :data:`VERDICTS`, with ours/paper in its own column.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

from .. import _toml
from ..backends import Backend
from ..errors import ScenarioError
from ..result import json_safe
from ..sweep import Task

if TYPE_CHECKING:
    from ..store import ResultsStore
    from .sensitivity import Override

T = TypeVar("T", bound="Task")


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
    #: Scenario overrides every run takes, applied after the paper built it (a point of
    #: ``--sensitivity``; :func:`hetpath.reproduce.sensitivity.apply`).
    overrides: tuple["Override", ...] = ()

    def runs(self, tasks: list[T]) -> list[T]:
        """``tasks`` with :attr:`overrides` applied to each run's scenario text: every
        paper hands its runs through here before they run."""
        if not self.overrides:
            return tasks
        from .sensitivity import apply

        return apply(tasks, self.overrides)


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
    #: Another protocol at the same point: the claim is ``protocol <relation> against``.
    against: Optional[str] = None
    #: For a claim between two points ("more disconnections, more gain"): the grid labels
    #: the other side takes instead of this claim's (``than = { disconnections = "1" }``;
    #: ``experiment`` names another experiment); the other side is ``against``, or the
    #: same protocol.
    than: dict[str, str] = field(default_factory=dict)
    #: The paper's stated relative error, when it states one (else :data:`TOLERANCE`).
    tolerance: Optional[float] = None
    #: The main reason for a gap between ours and the paper, for the index.
    gap: str = ""

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
        """The paper's figure as JSON: a number, [lo, hi] for a range, or for an ordering
        its text ("> satpep")."""
        if self.against is not None:
            return self.text()
        return list(self.range) if self.range else self.value

    def text(self) -> str:
        prefix = {"~": "~", ">": ">", "<": "<"}.get(self.relation, "") if self.against is not None else \
            {"~": "", ">": ">", "<": "<"}.get(self.relation, "")
        if self.against is not None:
            at = " ".join(f"{k}={v}" for k, v in self.than.items())
            return f"{prefix} {self.against}".strip() + (f" at {at}" if at else "")
        if self.range:
            return f"{_num(self.range[0])}–{_num(self.range[1])}"
        return f"{prefix}{_num(self.value)}"

    def verdict(self, ours: list["Estimate"], others: Optional[list["Estimate"]] = None) -> "Verdict":
        """This claim decided on ``ours`` (one estimate per point it covers) and, for a
        claim against another protocol, ``others`` (that protocol at the same points)."""
        if self.against is not None:
            if self.relation == "~":
                return close_to(ours, others or [], self.tolerance)
            return ordering(ours, others or [], self.relation)
        if self.range:
            return within(ours, *self.range)
        if self.relation in (">", "<"):
            return bound(ours, self.relation, float(self.value or 0.0))
        return number(ours, float(self.value or 0.0), self.tolerance)


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
_VALUE_KEYS = {"experiment", "protocol", "metric", "value", "relation", "range", "section", "quote", "against",
               "tolerance", "gap", "than"}


def load_paper(path: Path) -> list[PaperValue]:
    """The ``[[value]]`` entries of a paper.toml, checked."""
    doc = _toml.loads(path.read_text(encoding="utf-8"), str(path))
    values = []
    for i, v in enumerate(doc.get("value", [])):
        where = f"{path}: value[{i}]"
        try:
            params = {k: str(x) for k, x in v.items() if k not in _VALUE_KEYS}
            rng = v.get("range")
            than = {str(k): str(x) for k, x in dict(v.get("than", {})).items()}
            against = v.get("against", v["protocol"] if than else None)
            pv = PaperValue(
                experiment=str(v["experiment"]),
                protocol=str(v["protocol"]),
                metric=str(v["metric"]),
                params=params,
                value=None if (rng or against) else float(v["value"]),
                relation=str(v.get("relation", "~")),
                range=(float(rng[0]), float(rng[1])) if rng else None,
                section=str(v.get("section", "")),
                quote=str(v.get("quote", "")),
                against=None if against is None else str(against),
                than=than,
                tolerance=None if v.get("tolerance") is None else float(v["tolerance"]),
                gap=str(v.get("gap", "")),
            )
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ScenarioError(f"{where}: expected experiment, protocol, metric and value, range = [lo, hi] "
                                f"or against = PROTOCOL ({e})") from None
        if pv.relation not in ("~", ">", "<"):
            raise ScenarioError(f"{where}.relation: expected one of ~, >, <")
        if pv.tolerance is not None and not 0 < pv.tolerance < 1:
            raise ScenarioError(f"{where}.tolerance: expected the paper's relative error, between 0 and 1")
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


# --- the verdict rule (docs/reproductions/README.md, "The verdict rule") -------------

HOLDS, FAILS, UNTESTABLE = "holds", "does not hold", "not testable"
VERDICTS = (HOLDS, FAILS, UNTESTABLE)
#: Where the paper states no error for a number: ours holds within this relative error.
TOLERANCE = 0.20


@dataclass(frozen=True)
class Estimate:
    """Our value at one point: the mean over runs and its 95% CI half-width (None with
    fewer than two runs); ``mean`` None when no run completed there."""

    mean: Optional[float]
    ci95: Optional[float] = None

    @classmethod
    def of(cls, f: Finding) -> "Estimate":
        return cls(f.ours, f.ci95)


@dataclass(frozen=True)
class Verdict:
    """Exactly one of :data:`VERDICTS`; ours/paper (or ours/theirs for an ordering) apart;
    why, when it is not testable or does not hold."""

    verdict: str
    ratio: Optional[float] = None
    reason: str = ""

    def __post_init__(self) -> None:
        assert self.verdict in VERDICTS, self.verdict


def untestable(reason: str, ratio: Optional[float] = None) -> Verdict:
    return Verdict(UNTESTABLE, ratio, reason)


def _decide(ok: list[Optional[bool]], missing: str, ratio: Optional[float], failed: str) -> Verdict:
    """Every point must hold: one point that fails decides "does not hold"; otherwise a
    point we could not decide makes the claim "not testable"."""
    if not ok:
        return untestable(missing, ratio)
    if any(o is False for o in ok):
        n = sum(o is False for o in ok)
        return Verdict(FAILS, ratio, failed + (f" at {n} of {len(ok)} points" if len(ok) > 1 else ""))
    if any(o is None for o in ok):
        return untestable(f"{missing} at {sum(o is None for o in ok)} of {len(ok)} points", ratio)
    return Verdict(HOLDS, ratio)


def _mean_ratio(ours: list[Estimate], paper: float) -> Optional[float]:
    xs = [e.mean for e in ours if e.mean is not None]
    if not xs or not paper:
        return None
    return sum(xs) / len(xs) / paper


def number(ours: list[Estimate], paper: float, tolerance: Optional[float] = None) -> Verdict:
    """A stated number: ours holds within the paper's stated error, else within
    :data:`TOLERANCE`, of it (relative; around 0, the same width in absolute terms)."""
    tol = TOLERANCE if tolerance is None else tolerance
    width = tol * abs(paper) if paper else tol
    ok = [None if e.mean is None else abs(e.mean - paper) <= width for e in ours]
    return _decide(ok, "no run completed", _mean_ratio(ours, paper), f"outside ±{tol:.0%} of the paper's value")


def within(ours: list[Estimate], lo: float, hi: float) -> Verdict:
    """A stated range: our mean lies inside it."""
    ok = [None if e.mean is None else lo <= e.mean <= hi for e in ours]
    return _decide(ok, "no run completed", _mean_ratio(ours, (lo + hi) / 2), "outside the paper's range")


def bound(ours: list[Estimate], relation: str, value: float) -> Verdict:
    """A stated bound ("over 0.6", "more than one"): our 95% CI lies wholly on its side."""
    ok: list[Optional[bool]] = []
    for e in ours:
        if e.mean is None or e.ci95 is None:
            ok.append(None)
        elif relation == ">":
            ok.append(e.mean - e.ci95 > value)
        else:
            ok.append(e.mean + e.ci95 < value)
    return _decide(ok, "no confidence interval (no run completed, or one run)", _mean_ratio(ours, value),
                   f"95% CI not wholly {relation} {_num(value)}")


def ordering(ours: list[Estimate], theirs: list[Estimate], relation: str) -> Verdict:
    """An ordering of two protocols at the same points: the two 95% CIs separate in the
    paper's direction at every point."""
    ok: list[Optional[bool]] = []
    ratios = []
    for a, b in zip(ours, theirs):
        if a.mean is None or b.mean is None or a.ci95 is None or b.ci95 is None:
            ok.append(None)
            continue
        if b.mean:
            ratios.append(a.mean / b.mean)
        if relation == "<":
            ok.append(a.mean + a.ci95 < b.mean - b.ci95)
        else:
            ok.append(a.mean - a.ci95 > b.mean + b.ci95)
    if len(ours) != len(theirs):
        return untestable("the two protocols were not run at the same points")
    ratio = sum(ratios) / len(ratios) if ratios else None
    return _decide(ok, "no confidence interval (no run completed, or one run)", ratio,
                   "95% CIs do not separate in the paper's direction")


def close_to(ours: list[Estimate], theirs: list[Estimate], tolerance: Optional[float] = None) -> Verdict:
    """"Close to" another protocol: at every point, our mean within the paper's stated
    error, else :data:`TOLERANCE`, of theirs (a number whose value is theirs)."""
    if len(ours) != len(theirs):
        return untestable("the two protocols were not run at the same points")
    each = [number([a], b.mean, tolerance) if b.mean is not None else untestable("no run completed")
            for a, b in zip(ours, theirs)]
    ok = [None if v.verdict == UNTESTABLE else v.verdict == HOLDS for v in each]
    ratios = [v.ratio for v in each if v.ratio is not None]
    tol = TOLERANCE if tolerance is None else tolerance
    return _decide(ok, "no run completed", sum(ratios) / len(ratios) if ratios else None,
                   f"outside ±{tol:.0%} of the other protocol's value")


#: Columns of a comparison row, in order: ``verdict`` is one of :data:`VERDICTS`.
COMPARISON_COLUMNS = ("section", "experiment", "protocol", "point", "metric", "paper", "ours", "ours/paper",
                      "verdict", "reason", "not completed")


def comparison_row(p: PaperValue, ours_text: str, v: Verdict, not_completed: int) -> dict[str, str]:
    """One claim's row of the comparison table (and of the index)."""
    return {
        "section": p.section,
        "experiment": p.experiment,
        "protocol": p.protocol,
        "point": " ".join(f"{k}={x}" for k, x in p.params.items()),
        "metric": p.metric,
        "paper": p.text(),
        "ours": ours_text,
        "ours/paper": _num(v.ratio),
        "verdict": v.verdict,
        "reason": "; main reason for the gap: ".join(x for x in (v.reason, p.gap if v.verdict != HOLDS else "") if x),
        "not completed": str(not_completed),
    }


#: A paper's own reason a claim cannot be decided in the setup as run (from the claim,
#: the findings and the scenario directory), or None.
Testability = Callable[[PaperValue, list[Finding], Path], Optional[str]]


def comparison_rows(findings: list[Finding], paper: list[PaperValue], testable: Optional[Testability] = None,
                    scenarios: Optional[Path] = None) -> list[dict[str, str]]:
    """One row per stated paper value, with our value(s) at the points it covers and its
    verdict; ``testable`` may say why the setup cannot decide a claim."""
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
        others: list[Estimate] = []
        if p.against is not None:
            at = {(f.experiment, f.metric, _key(f.params)): f for f in findings if f.protocol == p.against}
            others = [Estimate.of(o) if (o := _other(p, f, findings, at)) is not None else Estimate(None)
                      for f in mine]
        why = testable(p, findings, scenarios or Path(".")) if testable is not None else None
        if not mine:
            v = untestable(why or "not run in this reproduction")
        elif why is not None:
            v = untestable(why, p.verdict([Estimate.of(f) for f in mine], others).ratio)
        else:
            v = p.verdict([Estimate.of(f) for f in mine], others)
        rows.append(comparison_row(p, text, v, sum(f.aborted for f in mine)))
    return rows


def claim_rows(module: Any, ctx: Context, findings: list[Finding]) -> list[dict[str, str]]:
    """One comparison row per claim of the paper: the module's own ``compare`` where its
    paper states relations, else the common rows over paper.toml's values."""
    if hasattr(module, "compare"):
        return module.compare(findings, ctx.scenarios)
    published = load_paper(ctx.scenarios / "paper.toml")
    attach(findings, published, module.label_order(module.grid(ctx)))
    return comparison_rows(findings, published, getattr(module, "testable", None), ctx.scenarios)


def _other(p: PaperValue, f: Finding, findings: list[Finding], at: dict[Any, Finding]) -> Optional[Finding]:
    """The other side of claim ``p`` at finding ``f``'s point: ``against`` at the same
    point with ``than``'s labels. In another experiment (``than = { experiment = ... }``)
    the point's parameters are that experiment's own: the one finding there that has
    ``than``'s other labels."""
    exp = p.than.get("experiment", f.experiment)
    grid = {k: x for k, x in p.than.items() if k != "experiment"}
    exact = at.get((exp, f.metric, _key({**f.params, **grid})))
    if exact is not None or exp == f.experiment:
        return exact
    there = [g for g in findings if g.protocol == p.against and g.experiment == exp and g.metric == f.metric
             and all(str(g.params.get(k)) == x for k, x in grid.items())]
    return there[0] if len(there) == 1 else None


def _key(params: dict[str, Any]) -> str:
    return json.dumps(json_safe(params), sort_keys=True)
