"""Output directories that never mix two runs.

A command writes into a staging directory next to its target (``.DIR.partial``) and,
once everything is written, moves the files into ``DIR``: an interrupted or failed run
leaves the previous run's files as they were, never new ones beside old ones. ``DIR``
lists what hetpath put there in ``.hetpath-files``; the next run removes those before
moving its own in, and leaves any other file alone (``--out .`` must not delete the
user's files). The check that ``DIR`` can be written happens before any run, by making
the staging directory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from pathlib import Path
from typing import Iterator

from .errors import OutputError

MANIFEST = ".hetpath-files"


def staging_path(target: Path) -> Path:
    """Where the next output of ``target`` is written (a fixed name: a resumed sweep
    finds its results store there)."""
    return target.parent / f".{target.name or 'out'}.partial"


def prepare(target: Path, *, keep: bool = False, exists_ok: bool = True) -> Path:
    """Check ``target`` can be an output directory and make its staging directory, before
    anything runs (exit 2 for an unusable ``--out``). ``keep``: reuse a staging directory
    left by an interrupted run (``--resume``); otherwise, with ``exists_ok``, start a new
    one, and without it refuse (it holds finished runs a ``--resume`` would use)."""
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
    if staging.exists() and not keep:
        if not exists_ok:
            raise OutputError(f"--out {target}: {staging} holds the runs of an interrupted sweep; "
                              f"add --resume to continue it, or remove that directory")
        discard(staging)
    try:
        staging.mkdir(exist_ok=keep)
    except FileExistsError:
        raise OutputError(f"--out {target}: {staging} exists and is not a directory") from None
    except OSError as exc:
        raise OutputError(f"--out {target}: cannot write in {target.parent}: {exc.strerror or exc}") from None
    if not os.access(staging, os.W_OK | os.X_OK) or (target.is_dir() and not os.access(target, os.W_OK | os.X_OK)):
        raise OutputError(f"--out {target}: directory is not writable")
    return staging


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


def discard(staging: Path) -> None:
    """Remove a staging directory and what it holds."""
    shutil.rmtree(staging, ignore_errors=True)


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


def write_csv(frame, path: Path) -> Path:  # type: ignore[no-untyped-def]
    """``frame.to_csv(path)`` with errors that name the file."""
    with naming(path):
        frame.to_csv(path, index=False)
    return path
