"""``hetpath reproduce <paper>``: run a paper's experiments and set our numbers beside
the ones the paper states.

Each paper is one module exposing ``TITLE``, ``TABLE_METRIC`` (the metric of its
per-experiment tables), ``summary_frame``, ``reproduce(ctx: Context) -> list[Finding]``
and either ``grid`` and ``label_order`` (for the values its ``paper.toml`` states at grid
points) or ``compare(findings, scenarios_dir) -> rows`` (when the paper states relations
between protocols instead: it checks them itself); register it in :data:`PAPERS` (by module name, imported on use so ``hetpath --help`` stays fast).  The
shared pieces (finding the scenario directory, the paper's published values, JSON
lines, the comparison table) are in :mod:`.common`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Paper name (as typed after ``hetpath reproduce``) -> module in this package.
PAPERS: dict[str, str] = {"apohn": "apohn", "ilc-tcp": "ilc_tcp", "lift": "lift", "rappep": "rappep", "tcp-radio": "tcp_radio"}


def paper_module(name: str) -> ModuleType:
    return importlib.import_module(f".{PAPERS[name]}", __name__)
