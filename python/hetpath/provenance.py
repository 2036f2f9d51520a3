"""Where a result came from: the software that made it, the exact scenario, the seed and
when it ran. Written into every ``summary.json`` so a number can be traced back."""

from __future__ import annotations

import datetime
import hashlib
from typing import Any, Optional

from . import _bridge


def now_utc() -> str:
    """The wall-clock time in ISO 8601, UTC, to the second (the Python layer's only clock)."""
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def provenance(text: str, source: str, seed: int, started_at: str, finished_at: str) -> dict[str, Any]:
    """The provenance record of one run of the scenario ``text`` (read from ``source``)."""
    from . import __version__

    commit: Optional[str] = _bridge.build_commit()
    return {
        "hetpath_version": __version__,
        "engine_version": _bridge.core_version(),
        "git_commit": commit,
        "scenario_source": source,
        "scenario_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "seed": seed,
        "started_at": started_at,
        "finished_at": finished_at,
    }
