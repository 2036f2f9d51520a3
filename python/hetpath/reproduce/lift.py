"""Seed 001 (Ciccarese et al.): LIFT, TCP Reno over the EuroSkyWay SR-ARQ link with and
without LIFT, and SCTP over the unreliable link, for web pages to a satellite mobile host.

``scenarios/lift/base.toml`` is TCP Reno over the ARQ link; per grid point (T_good,
T_bad: the mean sojourn times of the Gilbert-Elliott channel, section IV) and protocol
this module sets the channel and, for ``lift``, MH-LIFT on the mobile host and BS-LIFT on
the gateway, for ``sctp``, SCTP over the link with its ARQ off (section IV). Each run
fetches ``pages`` web pages; a point pools the pages of its runs. Per point: the web page
download mean time (Figs. 6, 9), TCP timeouts per page (Fig. 7) and uplink bytes per
page (Fig. 8), each with a 95% CI over the pooled pages. Pages are separated by think
times of 39.5 s on average, far longer than the channel's sojourn times, so we take them
as independent draws; the paper asks a CI of at most 6% relative error per point, and
points short of it get more seeds, up to a cap (``ROUNDS``). What falls short is said.

The paper's claims are relations between protocols over the grid, not numbers read off
its figures (``scenarios/lift/paper.toml``); :func:`compare` checks each one.
"""

from __future__ import annotations

import copy
import functools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from .. import _bridge, _toml
from ..errors import ScenarioError
from ..stats import mean_ci95
from ..sweep import Task
from ..outdir import write_csv
from ..store import run_stored
from .common import (FAILS, HOLDS, Context, Estimate, Finding, PaperValue, Verdict, bound, comparison_row, number,
                     ordering, untestable)

NAME = "lift"
TITLE = "seed 001: LIFT, TCP Reno over the ESW SR-ARQ link with and without LIFT, and SCTP"
TABLE_METRIC = "page_time_s"
PROTOCOLS = ["reno-arq", "lift", "sctp"]
#: A page's columns, as the engine reports them.
PAGE_COLUMNS = ("page", "start_s", "time_s", "objects", "bytes", "timeouts", "up_bytes")
METRICS = {"page_time_s": "time_s", "timeouts_per_page": "timeouts", "uplink_bytes_per_page": "up_bytes"}
#: T_good and T_bad (seconds), section V: "the range 0.5 / 8.5 s has been chosen for both".
GRID = ["0.5", "2.5", "4.5", "6.5", "8.5"]
QUICK_GRID = ["0.5", "4.5", "8.5"]
#: Pages per run, seeds per point in the first round, rounds at most, and the most pages a
#: point may take (see the module doc).
PAGES, SEEDS, ROUNDS, MAX_PAGES = 200, 5, 5, 14_000
QUICK_PAGES, QUICK_SEEDS = 15, 2
#: Section IV: "a 95% confidence interval whose maximum relative error is equal to 6%".
MAX_RELATIVE_ERROR = 0.06


@dataclass(frozen=True)
class Point:
    """A grid point: the channel's sojourn times, or no errors (``ideal``)."""

    t_good: Optional[str]
    t_bad: Optional[str]

    @property
    def experiment(self) -> str:
        return "ideal" if self.t_good is None else "grid"

    def params(self) -> dict[str, str]:
        if self.t_good is None:
            return {"channel": "none"}
        return {"t_good": self.t_good, "t_bad": self.t_bad or ""}


def points(ctx: Context) -> list[Point]:
    values = QUICK_GRID if ctx.quick else GRID
    return [Point(None, None)] + [Point(g, b) for b in values for g in values]


def protocols(point: Point) -> list[str]:
    # Fig. 6's ideal channel is TCP Reno's; LIFT has nothing to freeze there.
    return ["reno-arq"] if point.t_good is None else PROTOCOLS


def scenario_text(base: dict[str, Any], point: Point, protocol: str, pages: int) -> str:
    doc = copy.deepcopy(base)
    sat = next(link for link in doc["link"] if link["name"] == "sat")
    flow = next(f for f in doc["flow"] if f["name"] == "web")
    if point.t_good is None:
        sat.pop("channel", None)
    else:
        sat["channel"] = {"model": "gilbert-elliott", "t_good": f"{point.t_good}s", "t_bad": f"{point.t_bad}s"}
    flow["web"]["pages"] = pages
    if protocol == "lift":
        flow["ipsec"]["lift"] = True
        doc.setdefault("agent", []).append({"kind": "lift-bs", "node": "gw"})
    elif protocol == "sctp":
        # Section IV: "the new protocol stack includes neither LIFT nor the satellite
        # reliable data link protocol"; SCTP runs under the same ESP.
        flow["transport"] = "sctp"
        flow.pop("cc", None)
        flow["ipsec"] = {"esp_overhead": flow["ipsec"].get("esp_overhead", 18)}
        # The paper cites RFC 2960, whose fast retransmit waits for four miss indications.
        # Like TCP here (base.toml), the association never gives up: under heavy
        # shadowing RFC 4960's 10 timeouts would abort it and leave the point without pages.
        flow["sctp"] = {"fast_rtx": 4, "max_retrans": 1000, "max_init_retrans": 1000}
        sat.setdefault("esw", {})["arq"] = False
    return _toml.dumps(doc)


def run_pages(task: Task) -> dict[str, Any]:
    """One run: its own record (pages fetched, whether it got them all) and its completed
    pages as columns (not a dict per page: a full run has half a million pages), plain
    JSON values for the results store. Top level so workers can pickle it."""
    raw = _bridge.run_text(task.text, task.source, seed=task.seed, series=False)
    s = raw["summary"]
    flow = s["flows"][0]
    run = {**_key(task), "pages": flow["pages"] or 0, "completed": flow["completion_s"] is not None,
           "sim_time_s": s["sim_time_s"], "events": s["events"]}
    for c in s["link_counters"]:
        if c["link"] == "sat":
            run[f"{c['counter']}_{c['from']}"] = c["value"]
    return {"run": run, "pages": {c: [p[c] for p in s["pages"]] for c in PAGE_COLUMNS}}


def _key(task: Task) -> dict[str, Any]:
    return {**dict(task.point), "protocol": task.protocol, "seed": task.seed}


def _tasks(base: dict[str, Any], source: str, todo: list[tuple[Point, str, int]], pages: int) -> list[Task]:
    # A point's seeds share one scenario text (the seed goes beside it): written once per
    # point, not per run (a deep copy and a TOML dump, 2 ms each).
    @functools.cache
    def text(pt: Point, proto: str) -> str:
        return scenario_text(base, pt, proto, pages)

    return [
        Task(point=tuple(pt.params().items()) + (("experiment", pt.experiment),), protocol=proto, seed=seed,
             text=text(pt, proto), source=source)
        for pt, proto, seed in todo
    ]


def _run(ctx: Context, tasks: list[Task]) -> list[dict[str, Any]]:
    """What ``run_pages`` returned for each of ``tasks``, in task order; runs in the
    results store are not run again (``--resume``)."""
    return run_stored(run_pages, ctx.runs(tasks), ctx.store, ctx.backend, ctx.progress)


class Pages:
    """A point's pages as columns that grow run by run, each row led by its run's key.
    One frame per point, built when read: a frame per run cost 2 ms each, 4-5 s of a full
    reproduction in the parent while the workers wait for the next round."""

    def __init__(self) -> None:
        self._cols: dict[str, list[Any]] = {}

    def add(self, task: Task, columns: dict[str, list[Any]]) -> None:
        n = len(columns["page"])
        for k, v in _key(task).items():
            self._cols.setdefault(k, []).extend([v] * n)
        for c in PAGE_COLUMNS:
            self._cols.setdefault(c, []).extend(columns[c])

    def __len__(self) -> int:
        return len(self._cols.get("page", ()))

    def times(self) -> pd.Series:
        """The page times alone (what a round's CI needs), without building the frame."""
        return pd.Series(self._cols.get("time_s", []), dtype=float)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self._cols)


def _pages_needed(times: pd.Series) -> int:
    """Pages for a 95% CI of the page time within MAX_RELATIVE_ERROR, from the page times
    so far (normal approximation: n = (1.96 s / (e mean))^2); 0 when they already do."""
    mean, ci, n = mean_ci95(times)
    if mean is None or ci is None or n < 2:
        return MAX_PAGES
    if ci <= MAX_RELATIVE_ERROR * mean:
        return 0
    return math.ceil((1.96 * times.std() / (MAX_RELATIVE_ERROR * mean)) ** 2)


def reproduce(ctx: Context) -> list[Finding]:
    path = ctx.scenarios / "base.toml"
    base = _toml.loads(path.read_text(encoding="utf-8"), str(path))
    pages = QUICK_PAGES if ctx.quick else PAGES
    per_round = ctx.seeds or (QUICK_SEEDS if ctx.quick else SEEDS)
    rounds = 1 if (ctx.quick or ctx.seeds) else ROUNDS
    todo = [(pt, proto, range(1, per_round + 1)) for pt in points(ctx) for proto in protocols(pt)]
    ctx.note(f"{NAME}: {len(todo)} points x {per_round} seeds x {pages} pages"
             + (f"; then more seeds where the CI is wider than 6%, up to {MAX_PAGES} pages a point"
                if rounds > 1 else ""))
    # Each point's runs and pages, kept apart: the rounds and the findings read them per
    # point, and masking one frame of half a million pages per point would be slow.
    runs_of: dict[tuple[Point, str], list[dict[str, Any]]] = defaultdict(list)
    pages_of: dict[tuple[Point, str], Pages] = defaultdict(Pages)
    for r in range(rounds):
        batch = [(pt, proto, seed) for pt, proto, seeds in todo for seed in seeds]
        tasks = _tasks(base, str(path), batch, pages)
        for (pt, proto, _), task, result in zip(batch, tasks, _run(ctx, tasks)):
            runs_of[pt, proto].append(result["run"])
            pages_of[pt, proto].add(task, result["pages"])
        if r + 1 == rounds:
            break
        # More seeds where the CI is still too wide: as many as the spread so far asks for.
        short = []
        for pt, proto, seeds in todo:
            times = pages_of[pt, proto].times()
            want = min(_pages_needed(times), MAX_PAGES) - len(times)
            if want > 0:
                n = math.ceil(want / pages)
                short.append((pt, proto, range(seeds.stop, seeds.stop + n)))
        todo = short
        if not todo:
            break
        ctx.note(f"{NAME}: {len(todo)} points short of 6% relative error: "
                 f"{sum(len(t[2]) for t in todo)} more runs")
    if not any(len(p) for p in pages_of.values()):
        raise ScenarioError(f"{path}: no run completed a page")
    found = findings(pages_of, runs_of, points(ctx))
    if ctx.out_dir is not None:
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        frame = pd.concat([p.frame() for p in pages_of.values()], ignore_index=True)
        write_csv(frame, ctx.out_dir / "pages.csv")
        write_csv(pd.DataFrame([r for rs in runs_of.values() for r in rs]), ctx.out_dir / "runs.csv")
        from . import lift_plots

        written = lift_plots.write_all(found, ctx.out_dir, ctx.formats, note=lambda msg: ctx.note(f"{NAME}: {msg}"))
        ctx.note(f"{NAME}: wrote runs.csv, pages.csv and {len(written)} figure files to {ctx.out_dir}")
    return found


def findings(pages_of: dict[tuple[Point, str], Pages],
             runs_of: dict[tuple[Point, str], list[dict[str, Any]]], pts: list[Point]) -> list[Finding]:
    out = []
    for pt in pts:
        for proto in protocols(pt):
            g = pages_of[pt, proto].frame()
            r = pd.DataFrame(runs_of[pt, proto])
            # A run that ends before its pages are fetched (the horizon) is "not completed";
            # its completed pages still count.
            short = int((~r["completed"]).sum())
            for metric, col in METRICS.items():
                mean, ci, _ = mean_ci95(g[col])
                out.append(Finding(pt.experiment, proto, pt.params(), metric, mean, ci, int(len(r)), short))
            # The uplink as the ESW link carries it: cells the mobile host sent (data,
            # retransmissions and ESW-ACKs) per page, one value per run.
            done = r[r["pages"] > 0]
            mean, ci, _ = mean_ci95(done["cells_sent_mh"] / done["pages"])
            out.append(Finding(pt.experiment, proto, pt.params(), "uplink_cells_per_page", mean, ci,
                               int(len(r)), short))
    return out


def summary_frame(found: list[Finding]) -> pd.DataFrame:
    rows = [
        {"experiment": f.experiment, "protocol": f.protocol, **f.params, "metric": f.metric, "ours": f.ours,
         "ci95": f.ci95, "relative_error": (f.ci95 / f.ours if f.ours and f.ci95 is not None else None),
         "runs": f.seeds, "not_completed": f.aborted}
        for f in found
    ]
    return pd.DataFrame(rows)


# --- the paper's claims -------------------------------------------------------------
# Each claim of paper.toml is decided by the verdict rule of .common (number, bound,
# ordering); where the text's words need a reading ("negligible", "quite low", "almost
# any"), the reading is said beside it and in docs/reproductions/lift.md.

def _table(found: list[Finding], metric: str) -> dict[str, dict[tuple[str, str], Estimate]]:
    """Grid findings of one metric: protocol -> (t_good, t_bad) -> our estimate."""
    out: dict[str, dict[tuple[str, str], Estimate]] = defaultdict(dict)
    for f in found:
        if f.experiment == "grid" and f.metric == metric:
            out[f.protocol][f.params["t_good"], f.params["t_bad"]] = Estimate.of(f)
    return out


def _pct(x: float) -> str:
    return f"{x * 100:+.0f}%"


def _pairs(t: dict[str, dict[tuple[str, str], Estimate]], mine: str, other: str, rows: Optional[str] = None,
           t_bad_min: float = 0.0) -> tuple[list[Estimate], list[Estimate]]:
    """Both protocols at the grid points they share (one T_bad row, or T_bad >= t_bad_min)."""
    points = [k for k in t.get(mine, {}) if k in t.get(other, {}) and (rows is None or k[1] == rows)
              and float(k[1]) >= t_bad_min]
    return [t[mine][k] for k in points], [t[other][k] for k in points]


def _scaled(e: Estimate, by: float) -> Estimate:
    return Estimate(None if e.mean is None else e.mean * by, None if e.ci95 is None else e.ci95 * by)


def _change(a: list[Estimate], b: list[Estimate]) -> list[float]:
    return [(x.mean - y.mean) / y.mean for x, y in zip(a, b) if x.mean is not None and y.mean]


def _claim(v: dict[str, Any], found: list[Finding]) -> tuple[str, Verdict]:
    """(ours, verdict) for one claim of paper.toml."""
    rel, metric = v["relation"], v["metric"]
    t = _table(found, metric)
    if rel == "approx" and v.get("against") is None and v["figure"] == "6":
        f = next((f for f in found if f.experiment == "ideal" and f.metric == metric), None)
        if f is None or f.ours is None:
            return "not run", untestable("not run in this reproduction")
        return f"{f.ours:.3g} ± {f.ci95 or 0:.2g}", number([Estimate.of(f)], v["value"])
    mine, other = v["protocol"], v.get("against")
    if mine not in t or (other is not None and other not in t):
        return "not run", untestable("not run in this reproduction")
    if rel == "reduction_gt":
        # "Even greater than 20% in some cases": at one point at least, LIFT's CI lies
        # wholly below (1 - 0.20) x Reno's.
        a, b = _pairs(t, mine, other)
        each = [ordering([x], [_scaled(y, 1 - v["value"])], "<") for x, y in zip(a, b)]
        best = -min(_change(a, b), default=float("nan"))
        text = f"largest reduction {best * 100:.0f}%"
        if any(e.verdict == HOLDS for e in each):
            return text, Verdict(HOLDS, best / v["value"])
        if all(e.verdict == FAILS for e in each):
            return text, Verdict(FAILS, best / v["value"], "no point where the 95% CIs separate by 20%")
        return text, untestable("no confidence interval at some points", best / v["value"])
    # "Urban and suburban" are the high T_bad rows (section V, after Lutz et al.).
    t_bad_min = float(v.get("t_bad_min", 0.0))
    if rel == "lower":
        a, b = _pairs(t, mine, other, t_bad_min=t_bad_min)
        n = sum(ordering([x], [y], "<").verdict == HOLDS for x, y in zip(a, b))
        return f"lower (CIs apart) at {n} of {len(a)} points", ordering(a, b, "<")
    if rel == "negligible_difference":
        # "Negligible": within 5% of Reno at every T_good of the T_bad = 0.5 s row (our reading).
        a, b = _pairs(t, mine, other, rows="0.5")
        c = _change(a, b)
        each = [number([x], y.mean or 0.0, 0.05) for x, y in zip(a, b)]
        text = f"{_pct(min(c))} to {_pct(max(c))}" if c else "not run"
        bad = [e for e in each if e.verdict != HOLDS]
        return text, (bad[0] if bad else Verdict(HOLDS)) if each else untestable("T_bad = 0.5 s not run")
    if rel == "near_zero":
        # "Almost completely": below 0.05 timeouts per page at every point (our reading).
        ours = list(t[mine].values())
        worst = max((e.mean for e in ours if e.mean is not None), default=float("nan"))
        return f"at most {worst:.3g} per page", bound(ours, "<", 0.05)
    if rel == "low":
        # "Quite low": every point of the T_bad = 0.5 s row below a quarter of the other
        # rows' mean (our reading).
        rural = [e for k, e in t[mine].items() if k[1] == "0.5"]
        rest = [e.mean for k, e in t[mine].items() if k[1] != "0.5" and e.mean is not None]
        if not rural or not rest:
            return "not run", untestable("T_bad = 0.5 s or the other rows not run")
        mark = 0.25 * sum(rest) / len(rest)
        r = [e.mean for e in rural if e.mean is not None]
        return f"{sum(r) / max(1, len(r)):.3g} per page (other T_bad: {sum(rest) / len(rest):.3g})", \
            bound(rural, "<", mark)
    if rel == "increase_approx":
        # "About 25% in almost any environment": the median change over the grid, as a number.
        a, b = _pairs(t, mine, other)
        c = sorted(_change(a, b))
        if not c:
            return "not run", untestable("no completed point")
        median = c[len(c) // 2] if len(c) % 2 else (c[len(c) // 2 - 1] + c[len(c) // 2]) / 2
        cells = _table(found, "uplink_cells_per_page")
        cc = sorted(_change(*_pairs(cells, mine, other)))
        extra = f"; in uplink cells median {_pct(cc[len(cc) // 2])}" if cc else ""
        return f"IP bytes {_pct(c[0])} to {_pct(c[-1])}, median {_pct(median)}{extra}", \
            number([Estimate(median)], v["value"])
    if rel == "higher":
        # "Greatly outperforms SCTP in almost any environment": SCTP's CI above LIFT's at
        # `share` of the points or more (0.8 for "almost any": our reading).
        share = float(v.get("share", 1.0))
        a, b = _pairs(t, mine, other, t_bad_min=t_bad_min)
        each = [ordering([x], [y], ">") for x, y in zip(a, b)]
        n = sum(e.verdict == HOLDS for e in each)
        c = _change(a, b)
        text = f"higher (CIs apart) at {n} of {len(each)} points; {_pct(min(c))} to {_pct(max(c))}" if c else "not run"
        ratio = sum(x.mean / y.mean for x, y in zip(a, b) if x.mean and y.mean) / max(1, len(c))
        if n >= share * len(each) and each:
            return text, Verdict(HOLDS, ratio)
        if sum(e.verdict == FAILS for e in each) > (1 - share) * len(each):
            return text, Verdict(FAILS, ratio, f"95% CIs separate at fewer than {share:.0%} of the points")
        return text, untestable("no confidence interval at some points", ratio)
    raise ScenarioError(f"paper.toml: unknown relation {rel!r}")


def compare(found: list[Finding], scenarios: Any) -> list[dict[str, str]]:
    """One row per claim of ``paper.toml``, with our figure and its verdict."""
    path = scenarios / "paper.toml"
    doc = _toml.loads(path.read_text(encoding="utf-8"), str(path))
    rows = []
    for v in doc.get("value", []):
        ours, verdict = _claim(v, found)
        paper = v.get("value")
        claim = PaperValue(experiment=f"Fig. {v['figure']}",
                           protocol=v["protocol"] + (f" vs {v['against']}" if v.get("against") else ""),
                           metric=v["metric"], params={"channel": v["channel"]} if v.get("channel") else {},
                           section=str(v.get("section", "V")), gap=str(v.get("gap", "")))
        row = comparison_row(claim, ours, verdict, sum(f.aborted for f in found if f.metric == v["metric"]
                                                       and f.protocol in (v["protocol"], v.get("against"))))
        row["paper"] = f"{v['relation']} {paper:g}" if paper is not None else v["relation"]
        row["point"] = str(v.get("channel", ""))
        rows.append(row)
    times = [f for f in found if f.metric == "page_time_s" and f.ours and f.ci95 is not None]
    worst = max((f.ci95 / f.ours for f in times), default=float("nan"))
    met = sum(1 for f in times if f.ci95 <= MAX_RELATIVE_ERROR * f.ours)
    precision = PaperValue(experiment="every point", protocol="all", metric="page_time_s 95% CI", params={},
                           section="IV")
    # Not a result of the paper's protocols but of its method; and ours meets it by
    # construction: seeds are added to a point until it does (up to a cap).
    row = comparison_row(precision, f"{met} of {len(times)} points, worst {worst:.1%}",
                         untestable("seeds are added until each point meets it: our stopping rule, not a result",
                                    worst / MAX_RELATIVE_ERROR), 0)
    row["paper"] = f"rel. error <= {MAX_RELATIVE_ERROR:.0%}"
    rows.append(row)
    return rows
