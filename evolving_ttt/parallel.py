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
"""

from __future__ import annotations

import concurrent.futures
import logging
import multiprocessing
import os
import sys
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
        return self

    def __exit__(self, *exc_info) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = self.executor = None

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
            size = len(shares) - 1 if here_first else self.workers
            with concurrent.futures.ProcessPoolExecutor(size, mp_context=_fork_context()) as pool:
                if not here_first:
                    return self._collect(pool, work, shares, progress, label, on_result)
                others = [pool.submit(work, share, False) for share in shares[1:]]
                try:
                    here = work(shares[0], progress and f"{label} on {len(shares)} processes")
                    return [here] + [job.result() for job in others]
                except BaseException:
                    for job in others:
                        job.cancel()
                    raise
        if self.executor is None:
            raise ValueError("a TaskRunner on a scheduler must be entered (with TaskRunner(...) as runner) before use")
        return self._collect(self.executor, work, shares, progress, label, on_result)

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

    def _collect(self, executor, work, shares, progress, label, on_result=None) -> list:
        jobs = {executor.submit(work, share, False): k for k, share in enumerate(shares)}
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
