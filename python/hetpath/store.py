"""The results store of a sweep: one JSON line per finished run, appended as runs finish.

A run is keyed by a hash of its complete scenario text and its seed, so a resumed sweep
(``hetpath sweep FILE --out DIR --resume``) skips exactly the runs whose inputs are
unchanged, whatever the grid point or protocol was called. Each line holds the engine's
flow records as the engine gave them (JSON numbers round-trip exactly), so tables built
from stored runs equal those of an uninterrupted sweep. A line cut short by a kill is
ignored on reading: that run is simply run again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional, TextIO

from .outdir import naming

FILE_NAME = "results.jsonl"


def run_key(text: str, seed: int) -> str:
    """The store's key of a run: its scenario text and seed, hashed."""
    return hashlib.sha256(f"{seed}\0{text}".encode()).hexdigest()


class ResultsStore:
    """Append-only JSON lines at ``path``; :meth:`load` reads what earlier runs stored."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file: Optional[TextIO] = None

    def load(self) -> dict[str, list[dict[str, Any]]]:
        """Stored runs: key -> the run's flow records."""
        runs: dict[str, list[dict[str, Any]]] = {}
        if not self.path.is_file():
            return runs
        with naming(self.path), open(self.path, encoding="utf-8") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                    runs[entry["key"]] = entry["flows"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a kill: run it again
        return runs

    def add(self, key: str, seed: int, flows: list[dict[str, Any]]) -> None:
        """Append one run and flush, so a finished run survives an interrupt."""
        with naming(self.path):
            if self._file is None:
                self._file = open(self.path, "a+", encoding="utf-8")
                if self._file.tell() > 0:  # end a line a kill cut short, so it spoils only itself
                    self._file.seek(self._file.tell() - 1)
                    if self._file.read(1) != "\n":
                        self._file.write("\n")
            self._file.write(json.dumps({"key": key, "seed": seed, "flows": flows}) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            with naming(self.path):
                self._file.close()
            self._file = None
