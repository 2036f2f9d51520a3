"""The results store of a sweep or a reproduction: one JSON line per finished run,
appended as runs finish.

A run is keyed by a hash of its complete scenario text and its seed, so a resumed sweep
(``hetpath sweep FILE --out DIR --resume``) skips exactly the runs whose inputs are
unchanged, whatever the grid point or protocol was called. Each line holds the run's
result as its task function returned it (for a sweep, the engine's flow records); JSON
numbers round-trip exactly, so tables built from stored runs equal those of an
uninterrupted sweep. A line cut short by a kill is ignored on reading: that run is simply
run again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, TextIO

from .backends import Backend, LocalBackend, run_in_order
from .outdir import naming

if TYPE_CHECKING:
    from .sweep import Task

FILE_NAME = "results.jsonl"


def run_key(text: str, seed: int) -> str:
    """The store's key of a run: its scenario text and seed, hashed."""
    return hashlib.sha256(f"{seed}\0{text}".encode()).hexdigest()


class ResultsStore:
    """Append-only JSON lines at ``path``; :meth:`load` reads what earlier runs stored."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file: Optional[TextIO] = None
        #: What the file held when last read or written: (its size, its runs), the
        #: results shared with what ``load`` returns (callers read them, never change
        #: them). A reproduction in rounds loads the store once per round, and parsing
        #: every run so far again took seconds of a full one.
        self._known: Optional[tuple[int, dict[str, Any]]] = None

    def load(self) -> dict[str, Any]:
        """Stored runs: key -> the run's result."""
        runs: dict[str, Any] = {}
        if not self.path.is_file():
            return runs
        size = self.path.stat().st_size
        if self._known is not None and self._known[0] == size:
            return dict(self._known[1])
        with naming(self.path), open(self.path, encoding="utf-8") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                    runs[entry["key"]] = entry["result"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a kill: run it again
        self._known = (size, dict(runs))
        return runs

    def add(self, key: str, seed: int, result: Any) -> None:
        """Append one run and flush, so a finished run survives an interrupt."""
        with naming(self.path):
            if self._file is None:
                self._file = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 (kept open for the sweep; close())
                if self._file.tell() > 0:  # end a line a kill cut short, so it spoils only itself
                    self._file.seek(self._file.tell() - 1)
                    if self._file.read(1) != "\n":
                        self._file.write("\n")
            before = self._file.tell()
            self._file.write(json.dumps({"key": key, "seed": seed, "result": result}) + "\n")
            self._file.flush()
            # Keep what was read up to date, unless the file changed since (a line cut
            # short, ended above): then the next load reads it again.
            known, self._known = self._known, None
            if known is not None and known[0] == before:
                known[1][key] = result
                self._known = (self._file.tell(), known[1])

    def close(self) -> None:
        if self._file is not None:
            with naming(self.path):
                self._file.close()
            self._file = None


def run_stored(
    fn: Callable[["Task"], Any],
    tasks: Sequence["Task"],
    store: Optional[ResultsStore] = None,
    backend: Optional[Backend] = None,
    on_progress: Optional[Callable[[int, int], None]] = None,
) -> list[Any]:
    """``fn`` over ``tasks`` (all cores by default), its results in task order. Tasks whose
    key (:func:`run_key` of their text and seed) ``store`` already holds are skipped; each
    new result is appended to it as it arrives, so an interrupt (KeyboardInterrupt) loses
    no finished run.

    ``fn`` returns plain JSON values. Every result, new or stored, is handed back as it
    reads from the store (a JSON round trip), so a resumed run and an uninterrupted one
    give the caller the same values. Tasks with equal keys run once."""
    keys = [run_key(t.text, t.seed) for t in tasks]
    done = store.load() if store is not None else {}
    todo = sorted({k: i for i, k in reversed(list(enumerate(keys))) if k not in done}.values())
    total, before = len(tasks), len(tasks) - len(todo)

    def collect(j: int, result: Any) -> None:
        i = todo[j]
        text = json.dumps(result)  # what the store keeps, and what the caller gets
        done[keys[i]] = json.loads(text)
        if store is not None:
            store.add(keys[i], tasks[i].seed, done[keys[i]])

    progress = (lambda k, _n: on_progress(before + k, total)) if on_progress else None
    if before and on_progress:
        on_progress(before, total)
    run_in_order(backend or LocalBackend(), fn, [tasks[i] for i in todo], progress, collect)
    return [done[k] for k in keys]
