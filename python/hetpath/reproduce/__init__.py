"""``hetpath reproduce <paper>``: run a paper's experiments and set our numbers beside
the ones the paper states.

Each paper is one module exposing ``NAME``, ``TITLE`` and
``reproduce(ctx: Context) -> list[Finding]``; register it in :data:`PAPERS`.  The
shared pieces (finding the scenario directory, the paper's published values, JSON
lines, the comparison table) are in :mod:`.common`.
"""

from __future__ import annotations

from types import ModuleType

from . import tcp_radio

PAPERS: dict[str, ModuleType] = {tcp_radio.NAME: tcp_radio}
