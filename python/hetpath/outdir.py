"""Output directories that never mix two runs.

A command writes into a staging directory next to its target (``.DIR.partial``) and,
once everything is written, moves the files into ``DIR``: an interrupted or failed run
leaves the previous run's files as they were, never new ones beside old ones. ``DIR``
lists what hetpath put there in ``.hetpath-files``; the next run removes those before
moving its own in, and leaves any other file alone (``--out .`` must not delete the
user's files). The check that ``DIR`` can be written happens before any run, by making
the staging directory.

One command at a time writes an output: :func:`prepare` takes an exclusive lock on
``DIR`` and its staging directory (:mod:`hetpath.outlock`, the file ``.DIR.lock``) and
:func:`commit`, :func:`discard` or :func:`abandon` let it go (the kernel does, if the
process dies first). A second command for the same ``DIR`` is refused at once, naming
the holder's pid.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import shutil
from pathlib import Path
from typing import Callable, Iterator, Optional

from . import outlock
from .errors import OutputError

MANIFEST = ".hetpath-files"
#: The locks this process holds, by lock file (absolute path).
_HELD: dict[str, outlock.OutputLock] = {}
#: Tells apart the temporary files of one process (:func:`replacing`).
_TEMP_IDS = itertools.count()


def staging_path(target: Path) -> Path:
    """Where the next output of ``target`` is written (a fixed name: a resumed sweep
    finds its results store there)."""
    return target.parent / f".{target.name or 'out'}.partial"


def lock_path(staging: Path) -> Path:
    """The lock file of an output and its staging directory: ``.DIR.lock`` beside it."""
    staging = Path(staging)
    return staging.parent / f"{staging.name.removesuffix('.partial')}.lock"


def prepare(target: Path, *, keep: bool = False, exists_ok: bool = True,
            note: Optional[Callable[[str], None]] = None) -> Path:
    """Lock ``target``, check it can be an output directory and make its staging
    directory, before anything runs (exit 2 for an unusable or locked ``--out``).
    ``keep``: reuse a staging directory left by an interrupted run (``--resume``);
    otherwise, with ``exists_ok``, start a new one, and without it refuse if it holds
    finished runs a ``--resume`` would use (one that holds none is discarded). ``note``
    hears the one line that says a stale lock was taken over."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise OutputError(f"--out {target}: exists and is not a directory")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"--out {target}: {target.parent} exists and is not a directory") from None
    except OSError as exc:
        raise OutputError(f"--out {target}: cannot create {target.parent}: {exc.strerror or exc}") from None
    staging = staging_path(target)
    _lock(target, staging, note)
    try:
        _make_staging(target, staging, keep, exists_ok)
    except BaseException:
        _release(staging)
        raise
    return staging


def _lock(target: Path, staging: Path, note: Optional[Callable[[str], None]]) -> None:
    """Take ``target``'s lock, or raise the one-line error that names its holder."""
    path = lock_path(staging)
    key = os.path.abspath(path)
    # CLI commands run one at a time: a lock this process still holds is an earlier
    # command's that failed before it could let go (commands called in-process, as
    # tests do). The process is done with it.
    leftover = _HELD.pop(key, None)
    if leftover is not None:
        leftover.release()
    try:
        _HELD[key] = outlock.acquire(path, note)
    except outlock.LockHeld as held:
        if held.pid is None:
            who = "a process that has not written its pid yet"
        elif outlock.alive(held.pid):
            who = f"pid {held.pid}"
        else:  # it forked workers before it died, and they live on with the lock
            who = f"pid {held.pid}, which has exited, but processes it started still hold the lock"
        raise OutputError(f"--out {target}: in use by another hetpath command ({who}, holding {path}); "
                          f"wait for it to finish or choose another --out") from None
    except OSError as exc:
        raise OutputError(f"--out {target}: cannot create its lock file {path}: {exc.strerror or exc}") from None


def _release(staging: Path) -> None:
    """Let go of the lock of ``staging``'s output, if this process holds it."""
    held = _HELD.pop(os.path.abspath(lock_path(staging)), None)
    if held is not None:
        held.release()


def _make_staging(target: Path, staging: Path, keep: bool, exists_ok: bool) -> None:
    if staging.is_dir() and not staging.is_symlink() and not keep and not exists_ok and not holds_runs(staging):
        _rmtree(staging)  # what a failed or interrupted sweep left before any run finished
    if staging.exists() and not keep:
        if not exists_ok:
            raise OutputError(f"--out {target}: {staging} holds the runs of an interrupted sweep; "
                              f"add --resume to continue it, or remove that directory")
        _rmtree(staging)
    try:
        staging.mkdir(exist_ok=keep)
    except FileExistsError:
        raise OutputError(f"--out {target}: {staging} exists and is not a directory") from None
    except OSError as exc:
        raise OutputError(f"--out {target}: cannot write in {target.parent}: {exc.strerror or exc}") from None
    if not os.access(staging, os.W_OK | os.X_OK) or (target.is_dir() and not os.access(target, os.W_OK | os.X_OK)):
        raise OutputError(f"--out {target}: directory is not writable")


def commit(staging: Path, target: Path) -> None:
    """Move everything in ``staging`` into ``target`` (created if missing), after
    removing the files the previous run put there; then remove ``staging``."""
    target.mkdir(parents=True, exist_ok=True)
    manifest = target / MANIFEST
    new = sorted(p.name for p in staging.iterdir())
    old = manifest.read_text(encoding="utf-8").splitlines() if manifest.is_file() else []
    for name in old:
        if name and "/" not in name and name not in new and name not in (".", ".."):
            _remove(target / name)
    manifest.write_text("".join(f"{n}\n" for n in new), encoding="utf-8")
    for name in new:
        dest = target / name
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        os.replace(staging / name, dest)
    staging.rmdir()
    _release(staging)


def discard(staging: Path) -> None:
    """Remove a staging directory and what it holds, and let go of its output's lock."""
    _rmtree(staging)
    _release(staging)


def abandon(staging: Path) -> bool:
    """A failed or interrupted command's end: keep ``staging`` if its results store holds
    a finished run (``--resume`` continues from there), else remove it; let go of the
    lock either way. Returns whether it was kept."""
    kept = holds_runs(staging)
    if not kept:
        _rmtree(staging)
    _release(staging)
    return kept


def holds_runs(staging: Path) -> bool:
    """Does ``staging``'s results store hold at least one finished run?"""
    from .store import FILE_NAME, holds_runs  # the store writes through this module

    return holds_runs(Path(staging) / FILE_NAME)


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def naming(path: Path) -> Iterator[None]:
    """An ``OSError`` while writing ``path`` names it (a full disk's ENOSPC carries no
    file name of its own)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        code = exc.errno or errno.EIO
        raise OSError(code, exc.strerror or os.strerror(code), str(path)) from None


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Write a file outside any staging directory whole or not at all: the body writes
    the temporary name it is given, in ``path``'s directory, which replaces ``path`` when
    the body returns and is removed if it raises (a full disk leaves no truncated file,
    and the file of an earlier run stays as it was). Errors name ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{next(_TEMP_IDS)}.tmp")
    try:
        with naming(path):
            # Made here with the permissions a new file gets (the umask's); the body
            # writes over it.
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666))
            try:
                yield tmp
                os.replace(tmp, path)
            except OSError as exc:
                if exc.filename is not None and Path(exc.filename) == tmp:
                    code = exc.errno or errno.EIO
                    raise OSError(code, exc.strerror or os.strerror(code), str(path)) from None
                raise
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_csv(frame, path: Path) -> Path:  # type: ignore[no-untyped-def]
    """``frame.to_csv(path)`` with errors that name the file."""
    with naming(path):
        frame.to_csv(path, index=False)
    return path
