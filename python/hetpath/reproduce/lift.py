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
from .common import Context, Finding

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
    return run_stored(run_pages, tasks, ctx.store, ctx.backend, ctx.progress)


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

def _table(found: list[Finding], metric: str) -> pd.DataFrame:
    """Grid findings of one metric: t_good, t_bad, protocol -> ours."""
    rows = [{**f.params, "protocol": f.protocol, "ours": f.ours} for f in found
            if f.experiment == "grid" and f.metric == metric and f.ours is not None]
    if not rows:
        return pd.DataFrame(columns=["t_good", "t_bad", "protocol", "ours"])
    return pd.DataFrame(rows).pivot_table(index=["t_good", "t_bad"], columns="protocol", values="ours")


def _pct(x: float) -> str:
    return f"{x * 100:+.0f}%"


def _claim(v: dict[str, Any], found: list[Finding]) -> tuple[str, str]:
    """(ours, check) for one claim of paper.toml."""
    rel, metric = v["relation"], v["metric"]
    t = _table(found, metric)
    if rel == "approx" and v.get("against") is None and v["figure"] == "6":
        f = next((f for f in found if f.experiment == "ideal" and f.metric == metric), None)
        if f is None or f.ours is None:
            return "not run", "-"
        return f"{f.ours:.3g} ± {f.ci95 or 0:.2g}", f"ours/paper = {f.ours / v['value']:.3g}"
    mine, other = v["protocol"], v.get("against")
    if t.empty or mine not in t or (other is not None and other not in t):
        return "not run", "-"
    if other is not None:
        change = (t[mine] - t[other]) / t[other]
    rural = t.xs("0.5", level="t_bad") if "0.5" in t.index.get_level_values("t_bad") else t.iloc[:0]
    if rel == "reduction_gt":
        best = -change.min()
        where = change.idxmin()
        return f"largest {best * 100:.0f}% at T_good={where[0]}, T_bad={where[1]}", \
            "holds" if best > v["value"] else "does not hold"
    if rel == "lower":
        n = int((change < 0).sum())
        return f"lower at {n} of {len(change)} points", "holds" if n == len(change) else "does not hold"
    if rel == "negligible_difference":
        c = change.xs("0.5", level="t_bad")
        # "Negligible": within 5% at every T_good of the row (our reading).
        return f"{_pct(c.min())} to {_pct(c.max())}", "holds" if c.abs().max() < 0.05 else "does not hold"
    if rel == "near_zero":
        # "Almost completely": below 0.05 timeouts per page everywhere (our reading).
        return f"at most {t[mine].max():.3g} per page", "holds" if t[mine].max() < 0.05 else "does not hold"
    if rel == "low":
        # "Quite low": the T_bad = 0.5 s row below a quarter of the other rows' mean.
        rest = t[mine].drop(index="0.5", level="t_bad")
        return f"{rural[mine].mean():.3g} per page (other T_bad: {rest.mean():.3g})", \
            "holds" if rural[mine].mean() < 0.25 * rest.mean() else "does not hold"
    if rel == "increase_approx":
        # Also in ESW cells, which is what the uplink carries (a 66-byte FrACK is 2 cells).
        c = _table(found, "uplink_cells_per_page")
        cells = (c[mine] - c[other]) / c[other] if mine in c and other in c else None
        extra = f"; in uplink cells median {_pct(cells.median())}" if cells is not None else ""
        return f"IP bytes {_pct(change.min())} to {_pct(change.max())}, median {_pct(change.median())}{extra}", \
            f"median/paper = {change.median() / v['value']:.3g}"
    if rel == "higher":
        n = int((change > 0).sum())
        high = change[change.index.get_level_values("t_bad").astype(float) >= 4.5]
        return f"higher at {n} of {len(change)} points; {_pct(high.min())} to {_pct(high.max())} at T_bad >= 4.5 s", \
            "holds" if n >= 0.8 * len(change) else "does not hold"
    raise ScenarioError(f"paper.toml: unknown relation {rel!r}")


def compare(found: list[Finding], scenarios: Any) -> list[dict[str, str]]:
    """One row per claim of ``paper.toml``, with our figure and whether it holds."""
    path = scenarios / "paper.toml"
    doc = _toml.loads(path.read_text(encoding="utf-8"), str(path))
    rows = []
    for v in doc.get("value", []):
        ours, check = _claim(v, found)
        paper = v.get("value")
        rows.append({
            "section": "V",
            "experiment": f"Fig. {v['figure']}",
            "protocol": v["protocol"] + (f" vs {v['against']}" if v.get("against") else ""),
            "point": v.get("channel", ""),
            "metric": v["metric"],
            "paper": f"{v['relation']} {paper:g}" if paper is not None else v["relation"],
            "ours": ours,
            "check": check,
            "not completed": str(sum(f.aborted for f in found if f.metric == v["metric"]
                                     and f.protocol in (v["protocol"], v.get("against")))),
        })
    times = [f for f in found if f.metric == "page_time_s" and f.ours and f.ci95 is not None]
    worst = max((f.ci95 / f.ours for f in times), default=float("nan"))
    met = sum(1 for f in times if f.ci95 <= MAX_RELATIVE_ERROR * f.ours)
    rows.append({
        "section": "IV", "experiment": "every point", "protocol": "all", "point": "", "metric": "page_time_s 95% CI",
        "paper": f"rel. error <= {MAX_RELATIVE_ERROR:.0%}", "ours": f"{met} of {len(times)} points, worst {worst:.1%}",
        "check": "holds" if times and met == len(times) else "does not hold", "not completed": "0",
    })
    return rows
