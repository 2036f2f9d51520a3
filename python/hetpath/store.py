"""The results store of a sweep or a reproduction: one JSON line per finished run,
appended as runs finish.

A run is keyed by a hash of its complete scenario text and its seed, so a resumed sweep
(``hetpath sweep FILE --out DIR --resume``) skips exactly the runs whose inputs are
unchanged, whatever the grid point or protocol was called. Each line holds the run's
result as its task function returned it (for a sweep, the engine's flow records); JSON
numbers round-trip exactly, so tables built from stored runs equal those of an
uninterrupted sweep.

A line is ``{"key": K, "seed": S, "engine": V, "result": R, "digest": D}``: ``V`` is the
engine version that ran it, ``D`` the SHA-256 of the line's text up to the digest (with
its closing brace), so it covers the key, the seed, the engine and the result. Reading
verifies every line and stops at the first one that fails (:class:`StoreError`): an
edited or damaged line would otherwise go into the tables silently, and a line of
another engine would mix two models. This detects corruption and accidental edits; it
is not a security boundary (anyone can recompute the digest).

Only the last line may lack its newline: a kill cut it short, and it is run again.
Appending first truncates such a line, so a cut line never sits inside the file and
anything else that fails to verify is damage.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterator, Optional, Sequence

from . import _bridge
from .backends import Backend, LocalBackend, run_in_order
from .errors import OutputError
from .outdir import naming

if TYPE_CHECKING:
    from .sweep import Task

FILE_NAME = "results.jsonl"
#: What a damaged line's error says to do about it.
HINT = "to drop the damaged lines and rerun their runs: --resume --drop-bad"
#: The fields of a line, in the order they are written.
FIELDS = ("key", "seed", "engine", "result", "digest")
#: How a line ends: this, 64 hex digits, ``"}``.
_DIGEST_HEAD = b', "digest": "'
_TAIL = len(_DIGEST_HEAD) + 64 + 2
_MAX_SEED = 2**64 - 1


class StoreError(OutputError):
    """A results store holds a line that fails verification (edited, damaged, or written
    by another engine version); the message names the file and the line. An
    ``OutputError``: the command line exits 2, before anything runs."""

    def __init__(self, path: Path, line: int, problem: str) -> None:
        super().__init__(f"{path}: line {line}: {problem}; {HINT}")
        self.path, self.line, self.problem = path, line, problem


def run_key(text: str, seed: int) -> str:
    """The store's key of a run: its scenario text and seed, hashed."""
    return hashlib.sha256(f"{seed}\0{text}".encode()).hexdigest()


def encode_line(key: str, seed: int, engine: str, result_text: str) -> bytes:
    """One line of the store: the run's fields and the digest of what precedes it.
    ``result_text`` is the result's JSON text (``json.dumps``)."""
    body = f'{{"key": {json.dumps(key)}, "seed": {seed}, "engine": {json.dumps(engine)}, "result": {result_text}}}'.encode()
    return body[:-1] + _DIGEST_HEAD + hashlib.sha256(body).hexdigest().encode() + b'"}\n'


def digest_matches(line: bytes) -> bool:
    """Whether ``line`` (without its newline) ends with the digest of what precedes it."""
    if len(line) <= _TAIL or line[-_TAIL:-66] != _DIGEST_HEAD or line[-2:] != b'"}':
        return False
    return hashlib.sha256(line[:-_TAIL] + b"}").hexdigest().encode() == line[-66:-2]


class ResultsStore:
    """Append-only JSON lines at ``path``; :meth:`load` reads and verifies what earlier
    runs stored. ``engine``: the engine version written into new lines and required of
    stored ones (default: this engine's, ``_bridge.core_version()``)."""

    def __init__(self, path: Path, engine: Optional[str] = None) -> None:
        self.path = Path(path)
        self._engine = engine
        self._file: Optional[BinaryIO] = None
        #: What the file held when last read or written: (its size, its runs), the
        #: results shared with what ``load`` returns (callers read them, never change
        #: them). A reproduction in rounds loads the store once per round, and parsing
        #: every run so far again took seconds of a full one.
        self._known: Optional[tuple[int, dict[str, Any]]] = None

    @property
    def engine(self) -> str:
        if self._engine is None:
            self._engine = _bridge.core_version()
        return self._engine

    def load(self) -> dict[str, Any]:
        """Stored runs: key -> the run's result. The first line that fails verification
        raises :class:`StoreError` naming it; a last line cut short by a kill is left out
        (its run runs again)."""
        if not self.path.is_file():
            return {}
        size = self.path.stat().st_size
        if self._known is not None and self._known[0] == size:
            return dict(self._known[1])
        runs: dict[str, Any] = {}
        with naming(self.path), open(self.path, "rb") as f:
            for n, line in _whole_lines(f):
                key, result, problem = self._check(line)
                if problem is None and key in runs and json.dumps(runs[key]) != json.dumps(result):
                    problem = "its key is also an earlier line's, with a different result (runs are deterministic)"
                if problem is not None:
                    raise StoreError(self.path, n, problem)
                runs[key] = result
        self._known = (size, dict(runs))
        return runs

    def drop_bad(self) -> int:
        """Rewrite the store without the lines that fail verification (both lines of a key
        stored twice with different results, as neither can be trusted), atomically;
        their runs are then run again. Returns how many lines were dropped."""
        if not self.path.is_file():
            return 0
        self.close()
        bad: set[int] = set()
        digests: dict[str, bytes] = {}  # key -> its first line's digest: equal runs, equal lines
        conflicted: set[str] = set()
        line_keys: dict[int, str] = {}
        with naming(self.path), open(self.path, "rb") as f:
            for n, line in _whole_lines(f):
                key, _, problem = self._check(line)
                if problem is not None:
                    bad.add(n)
                    continue
                line_keys[n] = key
                if digests.setdefault(key, line[-66:-2]) != line[-66:-2]:
                    conflicted.add(key)
        drop = bad | {n for n, k in line_keys.items() if k in conflicted}
        if drop:
            self._rewrite(drop)
        return len(drop)

    def _rewrite(self, drop: set[int]) -> None:
        """The store without the lines ``drop`` (or a cut last line), replacing it at once:
        an interrupt leaves either the old file or the new one."""
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            with naming(tmp), open(self.path, "rb") as f, open(tmp, "wb") as out:
                for n, line in _whole_lines(f):
                    if n not in drop:
                        out.write(line + b"\n")
                out.flush()
                os.fsync(out.fileno())
            with naming(self.path):
                os.replace(tmp, self.path)
        finally:
            if tmp.exists():
                tmp.unlink()
        self._known = None

    def _check(self, line: bytes) -> tuple[str, Any, Optional[str]]:
        """A line's key and result, and what is wrong with it (None: nothing)."""
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            return "", None, "not valid JSON (edited or damaged)"
        if not isinstance(entry, dict):
            return "", None, "not a JSON object"
        if "digest" not in entry:
            return "", None, "no digest (written by a hetpath whose store had none, or edited)"
        engine = entry.get("engine")
        if isinstance(engine, str) and engine != self.engine:
            return "", None, f"written by engine {engine}, and this is engine {self.engine} (its runs would mix two models)"
        if not digest_matches(line):
            return "", None, "its digest does not match its content (edited or damaged)"
        key, seed = entry.get("key"), entry.get("seed")
        if tuple(entry) != FIELDS or not isinstance(key, str) or len(key) != 64 \
                or not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= _MAX_SEED:
            return "", None, f"expected the fields {', '.join(FIELDS)}: a 64-digit key, a seed from 0 to 2^64-1"
        return key, entry["result"], None

    def add(self, key: str, seed: int, result: Any, text: Optional[str] = None) -> None:
        """Append one run and flush, so a finished run survives an interrupt. ``text``:
        the result's JSON text, if the caller has it already."""
        line = encode_line(key, seed, self.engine, json.dumps(result) if text is None else text)
        with naming(self.path):
            f = self._file or self._open()
            before = f.tell()
            f.write(line)
            f.flush()
            # Keep what was read up to date, unless the file changed since: then the next
            # load reads it again.
            known, self._known = self._known, None
            if known is not None and known[0] == before:
                known[1][key] = result
                self._known = (f.tell(), known[1])

    def _open(self) -> BinaryIO:
        """Open for appending; a last line a kill cut short is cut off first, so that
        nothing is ever written after a line without its newline."""
        f = open(self.path, "a+b")  # noqa: SIM115 (kept open for the sweep; close())
        end = f.seek(0, os.SEEK_END)
        keep = _after_last_newline(f, end)
        if keep < end:
            f.truncate(keep)
            f.seek(keep)
            if self._known is not None and self._known[0] == end:  # load left the cut line out
                self._known = (keep, self._known[1])
        self._file = f
        return f

    def close(self) -> None:
        if self._file is not None:
            with naming(self.path):
                self._file.close()
            self._file = None


def holds_runs(path: Path) -> bool:
    """Does the store at ``path`` hold at least one finished run: one whole line that reads
    as a stored run (verified or not: a damaged store is kept for the user to look at)?
    Only a regular file is read: a FIFO there would block, and /dev/full (a store linked
    to it to fill the disk) never ends."""
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return False
            for _, line in _whole_lines(f):
                try:
                    entry = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(entry, dict) and "key" in entry and "result" in entry:
                    return True
    except OSError:
        return False
    return False


def _whole_lines(f: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, the line without its newline) of every line that has its
    newline: only the last may lack it, cut short by a kill."""
    for n, line in enumerate(f, 1):
        if line.endswith(b"\n"):
            yield n, line[:-1]


def _after_last_newline(f: BinaryIO, end: int) -> int:
    """The offset just after the last newline of the first ``end`` bytes of ``f`` (0 if none)."""
    pos = end
    while pos > 0:
        step = min(pos, 1 << 16)
        f.seek(pos - step)
        chunk = f.read(step)
        i = chunk.rfind(b"\n")
        if i >= 0:
            return pos - step + i + 1
        pos -= step
    return 0


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
            store.add(keys[i], tasks[i].seed, done[keys[i]], text)

    progress = (lambda k, _n: on_progress(before + k, total)) if on_progress else None
    if before and on_progress:
        on_progress(before, total)
    run_in_order(backend or LocalBackend(), fn, [tasks[i] for i in todo], progress, collect)
    return [done[k] for k in keys]
