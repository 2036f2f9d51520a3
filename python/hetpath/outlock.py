"""An exclusive lock on an output directory, so that two commands never write into one.

The lock is ``fcntl.flock`` on a small file beside the output's staging directory
(``.DIR.lock`` next to ``.DIR.partial``), holding the holder's pid. The kernel releases a
flock when the last descriptor of it closes, so a killed holder never blocks anyone; its
file is then left behind naming a pid that no longer holds it (a stale lock), which the
next command takes over, saying so. A holder that finishes removes the file before it
lets the lock go: whoever opened the file before that finds, once it has the lock, that
the path no longer names what it locked, and tries again.

Worker processes forked while the lock is held inherit its descriptor: the lock then
stays held until they exit too, which is what it should do (they are still writing).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from pathlib import Path
from typing import Callable, Optional

#: How long to wait for a holder that has just taken the lock to write its pid.
_PID_WAIT_S = 1.0
#: Errors of a file system that has no flock (some network file systems).
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)


class LockHeld(Exception):
    """Another process holds the lock: ``pid`` (None when it has not written it yet)."""

    def __init__(self, path: Path, pid: Optional[int]) -> None:
        super().__init__(f"{path} is held by pid {pid}")
        self.path, self.pid = path, pid


class OutputLock:
    """One held lock; :meth:`release` removes its file and lets it go."""

    def __init__(self, path: Path, fd: Optional[int]) -> None:
        self.path, self._fd = path, fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Remove the lock file, then close it (in this order: see the module's doc).
        Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            with contextlib.suppress(OSError):
                if _same_file(fd, self.path):
                    os.unlink(self.path)
        finally:
            os.close(fd)


def acquire(path: Path, note: Optional[Callable[[str], None]] = None) -> OutputLock:
    """Take the lock file ``path`` without waiting. Raises :class:`LockHeld` if another
    process holds it, ``OSError`` if the file cannot be made. ``note`` hears one line when
    a stale lock is taken over, or when the file system has no locks (the command then
    goes on unprotected)."""
    path = Path(path)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(path, _holder(path)) from None
        except OSError as exc:
            os.close(fd)
            if exc.errno not in _NO_LOCKS:
                raise
            if note is not None:
                note(f"{path.parent} cannot hold a lock ({exc.strerror}); "
                     f"nothing stops another command from writing the same output")
            return OutputLock(path, None)
        except BaseException:
            os.close(fd)
            raise
        if not _same_file(fd, path):
            os.close(fd)  # its holder removed it between our open and our flock: again
            continue
        try:
            previous = _read_pid(fd)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        if previous is not None and previous != os.getpid() and note is not None:
            note(f"took over the stale lock {path} of pid {previous}, which "
                 + ("has exited" if not alive(previous) else "no longer holds it")
                 + " (a command that was killed or crashed)")
        return OutputLock(path, fd)


def _same_file(fd: int, path: Path) -> bool:
    """Does ``path`` still name the file open as ``fd``?"""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _read_pid(fd: int) -> Optional[int]:
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def _holder(path: Path) -> Optional[int]:
    """The pid in a held lock file; its holder writes it just after taking the lock."""
    deadline = time.monotonic() + _PID_WAIT_S
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            pid = _read_pid(fd)
        finally:
            os.close(fd)
        if pid is not None or time.monotonic() > deadline:
            return pid
        time.sleep(0.02)


def alive(pid: int) -> bool:
    """Does process ``pid`` exist (an exited one its parent has not reaped yet does)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True
