"""One figure per claim of a sensitivity sweep: ours/paper against each parameter's
values (one panel each, the others at their defaults), and over the pair's grid (one
line per value of the second), with 1 (the paper) dashed. The marker says the verdict at
that point: filled for "holds", a cross for "does not hold", hollow for "not testable"."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Sequence

from ..plots import Note, save
from .common import FAILS, HOLDS
from .sensitivity import DEFAULT, ONE, PAIR, Plan, along
from .sensitivity_report import label

MARKERS = {HOLDS: dict(marker="o", color="tab:green"), FAILS: dict(marker="x", color="tab:red")}
UNDECIDED = dict(marker="o", color="tab:gray", fillstyle="none")


def _style(verdict: str) -> dict[str, Any]:
    return MARKERS.get(verdict, UNDECIDED)


def _finite(x: Optional[float]) -> bool:
    return x is not None and math.isfinite(x)


def write_all(plan: Plan, rows: list[dict[str, Any]], quick: bool, out_dir: Path,
              formats: Sequence[str] = ("png",), note: Optional[Note] = None) -> list[Path]:
    """``claim-NNN`` figures into ``out_dir``; a claim with no ratio at any point gets none."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out_dir.mkdir(parents=True, exist_ok=True)
    params = list(plan.parameters.values())
    pair = next(((r["parameter"], r["parameter2"]) for r in rows if r["kind"] == PAIR), None)
    written: list[Path] = []
    for claim in sorted({r["claim"] for r in rows}):
        mine = [r for r in rows if r["claim"] == claim]
        base = next(r for r in mine if r["kind"] == DEFAULT)
        if not any(_finite(r["ratio"]) for r in mine):
            continue  # nothing to draw: not testable, or no run completed, at every point
        panels = len(params) + (pair is not None)
        ncols = min(panels, 3)
        nrows = math.ceil(panels / ncols)
        # A fixed layout: the constrained one took a third of the time of hundreds of figures.
        fig = Figure(figsize=(3.0 * ncols + 0.6, 2.3 * nrows + 0.9))
        FigureCanvasAgg(fig)
        fig.subplots_adjust(left=0.08 if ncols > 1 else 0.2, right=0.98, top=1 - 0.55 / (2.3 * nrows + 0.9),
                            bottom=0.75 / (2.3 * nrows + 0.9), wspace=0.12, hspace=0.5)
        axes = [ax for row in fig.subplots(nrows, ncols, sharey=True, squeeze=False) for ax in row]
        for ax in axes[panels:]:
            ax.set_visible(False)
        for ax, p in zip(axes, params):
            labels = p.shown(quick)
            at = along(mine, p)
            xs = [k for k, v in enumerate(labels) if v in at and _finite(at[v]["ratio"])]
            ax.plot(xs, [at[labels[k]]["ratio"] for k in xs], color="0.6", lw=1)
            for k in xs:
                ax.plot([k], [at[labels[k]]["ratio"]], ls="none", **_style(at[labels[k]]["verdict"]))
            ax.set_xticks(range(len(labels)), [f"{v}*" if v == p.default else str(v) for v in labels],
                          fontsize="small", rotation=30 if len(labels) > 4 else 0)
            ax.set_title(p.title, fontsize="small")
        if pair is not None:
            ax = axes[len(params)]
            a, b = (plan.parameters[n] for n in pair)
            xl = a.shown(quick)
            for y in b.shown(quick):
                pts = []
                for k, x in enumerate(xl):
                    r = _at(mine, base, (a.name, x, a.default), (b.name, y, b.default))
                    if r is not None and _finite(r["ratio"]):
                        pts.append((k, r["ratio"], r["verdict"]))
                if pts:
                    line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=1, label=f"{b.name}={y}")
                    for k, v, verdict in pts:
                        ax.plot([k], [v], ls="none", **{**_style(verdict), "color": line.get_color()})
            ax.set_xticks(range(len(xl)), [str(v) for v in xl], fontsize="small")
            ax.set_title(f"{a.name} × {b.name}", fontsize="small")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="x-small", frameon=False)
        for ax in axes[:panels]:
            ax.axhline(1.0, color="k", ls="--", lw=0.8)
            ax.grid(True, alpha=0.3)
        fig.suptitle(f"claim {claim}: {label(base)} (paper {base['paper']})", fontsize="small")
        fig.supylabel("ours / paper (1 = the paper)", fontsize="small")
        fig.supxlabel("parameter value (* hetpath's default); ● holds, × does not hold, ○ not testable",
                      fontsize="x-small")
        written += save(fig, out_dir / f"claim-{claim:03d}", formats, note)
    return written


def _at(rows: list[dict[str, Any]], base: dict[str, Any], a: tuple[str, Any, Any],
        b: tuple[str, Any, Any]) -> Optional[dict[str, Any]]:
    """The row where parameter a has its label and b has its label (either may be at its
    default): the defaults, a one-at-a-time point or a pair point."""
    off = {n: x for n, x, d in (a, b) if x != d}
    if not off:
        return base
    for r in rows:
        have = {r["parameter"]: r["value"]} if r["kind"] == ONE else \
            {r["parameter"]: r["value"], r["parameter2"]: r["value2"]} if r["kind"] == PAIR else None
        if have == off:
            return r
    return None
