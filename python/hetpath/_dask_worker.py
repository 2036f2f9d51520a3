"""Preloaded into the worker processes of the local Dask cluster that
``hetpath sweep --backend dask`` starts (``DaskBackend`` without an address).

Ctrl-C at a terminal reaches every process of its group, the cluster's workers
included; they ignore it, as :class:`hetpath.backends.LocalBackend`'s workers do, so that
the sweep alone decides (it keeps what finished, stops the cluster and prints how to
resume) and no worker prints a traceback of its own.
"""

from __future__ import annotations

import signal
from typing import Any


def dask_setup(_worker: Any) -> None:
    """Dask's preload hook, called in the worker process's main thread."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
