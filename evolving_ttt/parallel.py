"""Independent tasks run in parallel: on this machine's cores or on a Dask cluster (chapter 6).

Every system repeats one independent task (a trial, a run, a seed, a series), and every task draws its random
numbers from its own generator. So the tasks can be shared out in any way, to any number of processes on any
machines, and each task gives the same bits. This module is the one place where that sharing happens.

* :class:`TaskRunner` holds the executor: with ``scheduler=None`` a pool of local processes (this process takes
  the first share itself, as a worker); with ``scheduler="local"`` a Dask ``LocalCluster`` started on this
  machine; with an address such as ``"tcp://10.0.0.5:8786"`` the Dask scheduler running there
  (``distributed.Client(address).get_executor()``); or any ``concurrent.futures.Executor`` given directly.
* :func:`split_tasks` cuts a list of tasks into one share per worker: the engines run a share's tasks in
  lockstep as arrays, which is what makes them fast.
* :meth:`TaskRunner.map` runs ``work(share, progress)`` for every share and returns the results in order.

What travels to a worker is ``work`` with its arguments (a system's settings, a seed, task numbers); what comes
back is the share's task results. Nothing else is shared, so the results are the same bits on any executor.

No worker outlives the run that started it. When a run ends by an exception, by Ctrl-C (``KeyboardInterrupt``) or
by a signal the program turns into an exception, the local workers are terminated and joined at once (not left
to finish their shares), and a Dask ``LocalCluster`` is closed. The local workers leave SIGINT and SIGTERM to this
process (Ctrl-C reaches every process of the terminal's group; only this one acts on it), and on Linux the kernel
kills them if this process dies without a word (``kill -9``, a SIGTERM with no handler): ``PR_SET_PDEATHSIG``.
Elsewhere a thread in each worker watches for its parent's end.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from evolving_ttt.game import check_count

Result = TypeVar("Result")

LOCAL_SCHEDULER = "local"
"""The ``scheduler`` value that starts a Dask ``LocalCluster`` on this machine (chapter 6)."""


def default_workers() -> int:
    """The number of workers used when none is given: every core of this machine (chapter 6)."""
    return os.cpu_count() or 1


def split_tasks(tasks: Sequence[Any], shares: int) -> list[list[Any]]:
    """``tasks`` cut into at most ``shares`` consecutive shares of near-equal size, none empty (chapter 6)."""
    check_count(shares, "shares")
    tasks = list(tasks)
    parts = np.array_split(np.arange(len(tasks)), max(1, min(shares, len(tasks))))
    return [[tasks[i] for i in part] for part in parts if len(part)]


def _fork_context():
    """``fork`` where the system has it: the workers start as copies of this process, tables included."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}
"""The signals a local worker leaves to its parent (held while workers are forked, so none comes in between)."""

_PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process receives when its parent dies."""


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM held back in this thread for the duration: a worker forked meanwhile starts with them
    held, until its initializer has set what it does with them. A signal that comes meanwhile is delivered to this
    process afterwards."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _die_with_parent() -> bool:
    """Ask Linux to kill this process when its parent dies; whether that could be arranged."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return False


def _watch_parent(parent: int) -> None:  # pragma: no cover - used where prctl is missing
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _worker_start(parent: int) -> None:
    """First thing in every local worker: leave SIGINT and SIGTERM to the parent, and die with it."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the run and terminates the workers
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # no handler inherited from the parent: terminate() ends it
        if not _die_with_parent():  # pragma: no cover - not Linux
            threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD_SIGNALS)
    except (OSError, ValueError):  # pragma: no cover - never fail a worker over this
        pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _local_pool(size: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of ``size`` forked workers that leave signals to this process and die with it."""
    return concurrent.futures.ProcessPoolExecutor(
        size, mp_context=_fork_context(), initializer=_worker_start, initargs=(os.getpid(),)
    )


def _stop_pool(pool: concurrent.futures.ProcessPoolExecutor, grace: float = 5.0) -> None:
    """Cancel what has not started, terminate the workers (not waiting for their shares) and join them."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.terminate()
    try:
        pool.shutdown(wait=True, cancel_futures=True)
    finally:
        for process in processes:
            with contextlib.suppress(OSError, ValueError, AttributeError, AssertionError):
                process.join(grace)
                if process.is_alive():
                    process.kill()
                    process.join()


def check_scheduler(scheduler: object) -> object:
    """Raise ``ValueError`` unless ``scheduler`` is ``None``, ``"local"``, a Dask address or an ``Executor``."""
    if scheduler is None or isinstance(scheduler, concurrent.futures.Executor):
        return scheduler
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(
            f"scheduler must be None (local processes), {LOCAL_SCHEDULER!r} (a Dask LocalCluster), the address of a "
            f"Dask scheduler such as 'tcp://10.0.0.5:8786', or a concurrent.futures.Executor; got {scheduler!r}"
        )
    return scheduler.strip()


class TaskRunner:
    """Where the shares of a run go: local processes, a Dask cluster, or a given executor (chapter 6).

    Use it as a context manager: it starts what it needs (a process pool, a ``LocalCluster``, a connection to a
    scheduler) on entry and closes what it started on exit.

    Parameters
    ----------
    workers
        Local processes (default: every core). On a Dask cluster the number of workers is the cluster's.
    scheduler
        ``None`` (local processes), ``"local"`` (a Dask ``LocalCluster`` of ``workers`` single-threaded worker
        processes), the address of a running Dask scheduler, or a ``concurrent.futures.Executor``.

    Attributes
    ----------
    slots
        How many shares run at once: the local workers, or the threads of the cluster's workers.
    """

    def __init__(self, workers: int | None = None, scheduler: object = None) -> None:
        self.workers = check_count(default_workers() if workers is None else workers, "workers")
        self.scheduler = check_scheduler(scheduler)
        self.executor: concurrent.futures.Executor | None = None
        self._client = self._cluster = None
        self.slots = self.workers

    @property
    def local(self) -> bool:
        """Whether the shares run in local processes that this runner starts (the default)."""
        return self.scheduler is None

    def __enter__(self) -> TaskRunner:
        if isinstance(self.scheduler, concurrent.futures.Executor):
            self.executor = self.scheduler
        elif isinstance(self.scheduler, str):
            try:
                self._connect()
            except BaseException:  # an error or Ctrl-C while starting: close what was started
                self.__exit__()
                raise
        return self

    def _connect(self) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - distributed is pinned in requirements.txt
            raise ValueError("a Dask scheduler needs the package distributed (pip install distributed)") from None
        if self.scheduler == LOCAL_SCHEDULER:
            self._cluster = LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                silence_logs=logging.ERROR,
            )  # fmt: skip
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(self.scheduler, timeout="10s")
            except OSError as error:
                raise ValueError(f"scheduler {self.scheduler}: cannot connect ({error})") from None
        if not self._client.nthreads():
            self._client.wait_for_workers(1)
        self.slots = sum(self._client.nthreads().values())
        self.executor = self._client.get_executor()

    def __exit__(self, *exc_info) -> None:
        """Close what :meth:`__enter__` started (the client, then the ``LocalCluster`` and its processes), even
        when leaving by an exception; an executor given directly is left open."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = self.executor = None
        try:
            if client is not None:
                client.close()
        finally:
            if cluster is not None:
                cluster.close()

    def map(
        self,
        work: Callable[[list, bool | str], Result],
        shares: Sequence[list],
        progress: bool | str = False,
        label: str = "",
        prepare: Callable[[], object] | None = None,
        on_result: Callable[[int, Result], object] | None = None,
    ) -> list[Result]:
        """``work(share, progress)`` for every share; the results in the order of ``shares`` (chapter 6).

        With local processes and no more shares than workers, this process runs the first share itself and
        shows ``progress`` as ``work`` reports it (a bar over generations); the other shares run in forked
        processes, which start with the tables that ``prepare()`` built. Otherwise every share goes to the
        executor and the bar counts finished tasks. ``on_result(k, result)``, if given, is called in this process
        as soon as share ``k`` finishes (a sweep records it there and then); every share then goes to the
        executor, or with one local worker runs here, one after another.
        """
        shares = [list(share) for share in shares]
        if not shares:
            return []
        label = progress if isinstance(progress, str) else label
        if self.local and len(shares) == 1 and on_result is None:
            return [work(shares[0], progress and label)]
        if self.local and self.workers == 1:
            return self._here(work, shares, progress, label, on_result)
        if self.local:
            if prepare is not None:
                prepare()  # built before forking, so that every process shares one copy
            here_first = on_result is None and len(shares) <= self.workers
            pool = _local_pool(len(shares) - 1 if here_first else self.workers)
            try:
                with _signals_held():  # the workers are forked by the first submit
                    jobs = {pool.submit(work, share, False): k for k, share in enumerate(shares) if k or not here_first}
                if here_first:
                    here = work(shares[0], progress and f"{label} on {len(shares)} processes")
                    results = [here] + [job.result() for job in jobs]
                else:
                    results = self._collect(jobs, shares, progress, label, on_result)
            except BaseException:  # an error, Ctrl-C or a signal made an exception: no worker may outlive the run
                _stop_pool(pool)
                raise
            pool.shutdown(wait=True)
            return results
        if self.executor is None:
            raise ValueError("a TaskRunner on a scheduler must be entered (with TaskRunner(...) as runner) before use")
        jobs = {self.executor.submit(work, share, False): k for k, share in enumerate(shares)}
        return self._collect(jobs, shares, progress, label, on_result)

    @staticmethod
    def _task_bar(shares, progress, label):
        if not progress:
            return None
        from tqdm import tqdm

        return tqdm(total=sum(map(len, shares)), desc=label or "tasks", unit="task", file=sys.stderr)

    def _here(self, work, shares, progress, label, on_result) -> list:
        """Every share in this process, one after another, with a bar over tasks."""
        results, bar = [], self._task_bar(shares, progress, label)
        try:
            for k, share in enumerate(shares):
                results.append(work(share, False))
                if on_result is not None:
                    on_result(k, results[-1])
                if bar is not None:
                    bar.update(len(share))
        finally:
            if bar is not None:
                bar.close()
        return results

    def _collect(self, jobs, shares, progress, label, on_result=None) -> list:
        """The results of ``jobs`` (future: share number) as they finish; on any exception the rest is cancelled."""
        results: list = [None] * len(shares)
        bar = self._task_bar(shares, progress, label)
        try:
            for job in concurrent.futures.as_completed(jobs):
                k = jobs[job]
                results[k] = job.result()
                if on_result is not None:
                    on_result(k, results[k])
                if bar is not None:
                    bar.update(len(shares[k]))
        except BaseException:
            for job in jobs:
                job.cancel()
            raise
        finally:
            if bar is not None:
                bar.close()
        return results


def run_shared(
    work: Callable[[list, bool | str], Result],
    tasks: Sequence[Any],
    workers: int | None = 1,
    scheduler: object = None,
    progress: bool | str = False,
    label: str = "",
    prepare: Callable[[], object] | None = None,
) -> list[Result]:
    """Cut ``tasks`` into one share per worker and run ``work(share, progress)`` on each (chapter 6).

    The one entry point the systems use. Returns one result per share, in task order.
    """
    with TaskRunner(workers, scheduler) as runner:
        return runner.map(work, split_tasks(tasks, runner.slots), progress, label, prepare)
