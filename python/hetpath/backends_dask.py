"""A sweep backend on a Dask distributed cluster (``hetpath sweep FILE --backend dask``).

Dask rather than Ray: it is pure Python and a small install (``pip install
'hetpath[cluster]'``), a ``LocalCluster`` runs the same code on one machine (tests,
laptops), and its scheduler already reschedules the tasks of a worker that died
(``distributed.scheduler.allowed-failures``), which is the retry a sweep needs. Ray
brings a ~100 MB binary wheel and daemons of its own, much for a sweep of small tasks.

Tasks carry their complete scenario text and seed (:mod:`hetpath.backends`), so a worker
needs only ``hetpath`` installed, at the same version as the client (checked on
connect). Results come back to this process, which calls ``on_result`` as each batch
arrives: the results store is written here, so ``--resume`` works as with local workers.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any, Callable, Iterator, Optional, Sequence, TypeVar

from .backends import GuidedBatches, cpu_count, run_batch
from ._args import integer
from .errors import ClusterError, ScenarioError, SimulationError

T = TypeVar("T")
R = TypeVar("R")

#: What to tell a user whose environment lacks the cluster packages.
INSTALL_HINT = "pip install 'hetpath[cluster]'"


def _import_distributed() -> Any:
    """``distributed``, imported only when a cluster is used: a local sweep never pays
    for it, and an install without it gets one line saying what to install."""
    try:
        import distributed
    except ImportError as exc:
        raise ClusterError(f"--backend dask needs Dask distributed, which is not installed ({exc}); "
                           f"install it with: {INSTALL_HINT}") from None
    return distributed


def worker_versions() -> tuple[str, str]:
    """The package and engine versions where this runs (on each worker, by the client)."""
    from . import __version__, _bridge

    return __version__, _bridge.core_version()


class DaskBackend:
    """Runs a sweep's tasks on a Dask cluster.

    ``address`` is the scheduler's (``tcp://host:8786``); ``None`` starts a
    ``LocalCluster`` on this machine with ``workers`` processes (default: every core) of
    one thread each, and stops it after the sweep. ``connect_timeout`` bounds both the
    connection and the wait for a first worker, in seconds (default
    :attr:`CONNECT_TIMEOUT_S`). Used as a context manager, it connects once for several
    sweeps; otherwise each :meth:`run` connects and closes. A local cluster's workers are
    started by ``multiprocessing``'s spawn, so a script that starts one needs the usual
    ``if __name__ == "__main__":`` guard.

    Tasks go out in batches (:class:`~hetpath.backends.GuidedBatches`, up to
    ``largest_batch`` runs each: four times the local backend's, since each batch costs a
    round trip through the scheduler rather than a pipe write) with at most
    ``batches_per_thread`` batches per worker thread in flight; each finished batch is
    replaced by the next, so a sweep of a million runs never has more than a few hundred
    futures on the scheduler. A worker that dies (killed, out of memory, its machine
    lost) has its batches run again elsewhere by the scheduler; a batch on which
    ``allowed-failures`` workers died (Dask's setting, default 3) fails the sweep. A run
    that raises fails the sweep at once, as with local workers: runs are deterministic,
    so running it again would fail again.
    """

    #: Seconds to wait for the scheduler to answer, and then for a first worker.
    CONNECT_TIMEOUT_S = 10.0

    def __init__(self, address: Optional[str] = None, workers: Optional[int] = None,
                 connect_timeout: Optional[float] = None, largest_batch: int = 128, batches_per_thread: int = 4) -> None:
        if address is not None and workers is not None:
            raise ClusterError(f"workers: the cluster at {address} has its own workers; "
                               "give workers only for a local cluster (address None)")
        cores = cpu_count()
        if workers is not None:
            try:
                workers = integer(workers, "workers", 1, cores)
            except ScenarioError as exc:
                raise ClusterError(f"{exc} (the cores of this machine)") from None
        self.address = address
        self.workers = workers
        self.connect_timeout = self.CONNECT_TIMEOUT_S if connect_timeout is None else connect_timeout
        self.largest_batch = largest_batch
        self.batches_per_thread = batches_per_thread
        self._open: Optional[contextlib.ExitStack] = None
        self._client: Any = None

    def __enter__(self) -> "DaskBackend":
        """Connect (or start the local cluster) now, for several sweeps or to report an
        unreachable cluster before anything else; :meth:`run` otherwise connects itself."""
        distributed = _import_distributed()
        with contextlib.ExitStack() as stack:
            self._client = stack.enter_context(self._connect(distributed))
            self._check_versions(self._client)
            self._open = stack.pop_all()
        return self

    def __exit__(self, *exc: Any) -> None:
        """Close the client; stop the local cluster if this backend started it."""
        opened, self._open, self._client = self._open, None, None
        if opened is not None:
            opened.close()

    def run(self, fn: Callable[[T], R], tasks: Sequence[T], on_result: Callable[[int, R], None]) -> None:
        if not tasks:
            return
        # Connected for this call alone unless already (``with DaskBackend(...)``).
        with self if self._client is None else contextlib.nullcontext():
            self._run_on(self._client, fn, tasks, on_result)

    @contextlib.contextmanager
    def _connect(self, distributed: Any) -> Iterator[Any]:
        """A client of the cluster at ``address``, or of a local cluster started here,
        with at least one worker; closed (and the local cluster stopped) on exit."""
        with contextlib.ExitStack() as stack:
            if self.address is None:
                # On loopback; quiet (errors reach the user as exceptions); no dashboard, and
                # its HTTP server (health checks) on a free port, not on 8787, which another
                # cluster may hold (a warning). Workers ignore Ctrl-C (_dask_worker.py).
                cluster = stack.enter_context(distributed.LocalCluster(
                    n_workers=self.workers or cpu_count(), threads_per_worker=1, processes=True,
                    host="127.0.0.1", dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    silence_logs=logging.CRITICAL, preload=["hetpath._dask_worker"]))
                client = stack.enter_context(distributed.Client(cluster, set_as_default=False))
            else:
                _check_address(distributed, self.address)
                try:
                    client = distributed.Client(self.address, timeout=self.connect_timeout, set_as_default=False)
                except OSError:  # refused or silent: Dask retries until the timeout
                    raise ClusterError(f"cannot connect to the Dask scheduler at {self.address}: no answer within "
                                       f"{self.connect_timeout:g} s; start one there with 'dask scheduler'") from None
                stack.enter_context(client)
            try:
                client.wait_for_workers(1, timeout=self.connect_timeout)
            except Exception:
                raise ClusterError(f"no worker joined {self._where()} within {self.connect_timeout:g} s; "
                                   f"start workers with: dask worker {self.address or 'ADDRESS'}") from None
            yield client

    def _where(self) -> str:
        return f"the scheduler at {self.address}" if self.address else "the local cluster"

    def _check_versions(self, client: Any) -> None:
        """Every worker runs the same hetpath and engine as this process: a run's result
        depends on the engine, and an older worker would mix two models in one table."""
        mine = worker_versions()
        try:
            theirs = client.run(worker_versions)
        except Exception as exc:
            raise ClusterError(f"a worker of {self._where()} cannot run hetpath "
                               f"({_one_line(exc)}); install hetpath {mine[0]} on every worker") from None
        for worker, versions in sorted(theirs.items()):
            if tuple(versions) != mine:
                raise ClusterError(f"worker {worker} runs hetpath {versions[0]} (engine {versions[1]}), this machine "
                                   f"{mine[0]} (engine {mine[1]}); install the same version on every worker")

    def _run_on(self, client: Any, fn: Callable[[T], R], tasks: Sequence[T],
                on_result: Callable[[int, R], None]) -> None:
        distributed = _import_distributed()
        threads = _threads(client)
        batches = GuidedBatches(tasks, threads, self.largest_batch)
        finished = distributed.as_completed(loop=client.loop)
        checked = time.monotonic()

        def refill() -> None:
            # pure=False: a fresh key per batch, not a hash of its arguments (scenario
            # texts: costly to hash, and two equal batches would become one task).
            while batches and finished.count() < self.batches_per_thread * batches.workers:
                finished.add(client.submit(run_batch, fn, batches.take(), pure=False))

        try:
            refill()
            for future in finished:
                try:
                    batch = future.result()
                except distributed.KilledWorker:
                    raise SimulationError("every worker that took one batch of runs died, up to Dask's limit "
                                          "(distributed.scheduler.allowed-failures): out of memory, or killed? "
                                          "The runs that finished were kept") from None
                future.release()
                for i, r in batch:
                    on_result(i, r)
                if time.monotonic() - checked > 2.0:  # workers may have joined or left
                    batches.workers, checked = _threads(client), time.monotonic()
                refill()
        except BaseException:
            # Interrupted, or a run failed: what finished was reported; drop the rest.
            # Batches already running on a remote worker finish there and are discarded.
            with contextlib.suppress(Exception):
                client.cancel(list(finished.futures), force=True)
            raise


def _check_address(distributed: Any, address: str) -> None:
    """A scheduler's address is ``[tcp://]host:port``: checked before a client exists, since
    a client built on a malformed one hangs at exit closing a connection it never made."""
    try:
        _, port = distributed.comm.get_address_host_port(address)
        if not 0 < port < 65536:
            raise ValueError(f"port {port} is not between 1 and 65535")
    except Exception as exc:
        raise ClusterError(f"Dask scheduler address {address!r}: {_one_line(exc)}; "
                           "expected an address such as tcp://host:8786") from None


def _threads(client: Any) -> int:
    """Worker threads in the cluster now (at least 1: a batch size needs a divisor)."""
    return max(1, sum(client.nthreads().values()))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
