"""Worker processes that end when the process that started them ends.

A sweep's local workers wait for work on a pipe whose two ends they both hold (``fork``
copies every descriptor), so when the sweep process is killed outright (``kill -9``, the
out-of-memory killer) they never read end-of-file: they would go on running a run whose
result nobody reads, then wait for more, for ever. On Linux the kernel ends them instead
(``prctl(PR_SET_PDEATHSIG)``, prctl(2)); elsewhere a thread polls for the parent.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Optional

#: ``PR_SET_PDEATHSIG`` and ``PR_GET_PDEATHSIG`` of <linux/prctl.h>.
PR_SET_PDEATHSIG = 1
PR_GET_PDEATHSIG = 2

#: How often the fallback thread looks for its parent, in seconds.
POLL_S = 0.5


def die_with_parent(parent: Optional[int]) -> None:
    """End this process (SIGKILL) as soon as its parent process ends.

    ``parent`` is the pid of the process that forked this one, when known: had it died
    before this call, the kernel would never tell, so a parent other than it means this
    process is an orphan already and it exits now. (Set first, checked second: a parent
    that dies in between is caught by one or the other.)

    On Linux the signal comes when the *thread* that forked this process ends (prctl(2)),
    not its process: callers fork from a thread that outlives their workers."""
    if not _set_parent_death_signal(signal.SIGKILL):
        watch_parent()
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def watch_parent(period: float = POLL_S) -> None:
    """A daemon thread that ends this process once its parent has changed (it died, and
    this process was handed to init or a subreaper)."""
    first = os.getppid()

    def watch() -> None:
        while os.getppid() == first:
            time.sleep(period)
        os._exit(1)

    threading.Thread(target=watch, name="hetpath-parent-watch", daemon=True).start()


def _set_parent_death_signal(sig: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, sig)``; False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        # prctl takes unsigned longs; passed as such, not as C ints of unknown width.
        return int(libc.prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(int(sig)), ctypes.c_ulong(0),
                              ctypes.c_ulong(0), ctypes.c_ulong(0))) == 0
    except (OSError, AttributeError, ImportError):
        return False
