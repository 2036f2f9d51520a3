"""Preloaded into the worker processes of the local Dask cluster that
``hetpath sweep --backend dask`` starts (``DaskBackend`` without an address).

Ctrl-C at a terminal reaches every process of its group, the cluster's workers
included; they ignore it, as :class:`hetpath.backends.LocalBackend`'s workers do, so that
the sweep alone decides (it keeps what finished, stops the cluster and prints how to
resume) and no worker prints a traceback of its own.

A worker also dies with the sweep process. The local cluster's nannies run inside the
sweep process, so that process is each worker's parent. Dask already ends a worker whose
parent is gone (the worker reads a pipe whose other end only the parent holds, and exits
at its end-of-file), unless some other child of the parent inherited that end, as a
``fork`` of the program that runs the sweep would. A thread that polls for the parent
covers that case too. Not ``PR_SET_PDEATHSIG``: it fires when the *thread* that started
the worker ends, and which thread of the nanny's that is, and how long it lives, is
Dask's detail, not a promise.
"""

from __future__ import annotations

import signal
from typing import Any

from ._worker_lifetime import watch_parent


def dask_setup(_worker: Any) -> None:
    """Dask's preload hook, called in the worker process's main thread."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent()
