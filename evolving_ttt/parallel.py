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

A Dask cluster is started and closed with SIGINT and SIGTERM put off (:func:`_signals_deferred`): a signal that
comes meanwhile is acted on as soon as the cluster is up, or closed, and never leaves a cluster half started, which
distributed cannot close (it fails an assertion at exit and prints a traceback). The worker processes of a
``LocalCluster`` start with both signals held and keep them so: they leave Ctrl-C to this process, which closes
the cluster, and they end with it (distributed's own watch on their parent).

A scheduler address is checked before anything starts (:func:`check_scheduler`): ``"local"``, or
``tcp://HOST:PORT`` (``HOST:PORT`` for short; ``ws://`` and ``wss://`` too, and ``tls://`` with Dask's TLS
settings). Any other address is refused with one line that names it; so is an address where no Dask scheduler
answers within :data:`CONNECT_TIMEOUT` seconds, and a scheduler that has no worker and gets none within
:data:`WORKER_TIMEOUT` seconds. Two environment variables change these waits (a test shortens them):

* ``TTT_DASK_CONNECT_TIMEOUT``: seconds to reach a Dask scheduler and hear it answer (default 10);
* ``TTT_DASK_WORKER_TIMEOUT``: seconds to wait for the first worker of a scheduler that has none (default 60).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import logging
import math
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from evolving_ttt.game import check_count
from evolving_ttt.records import raise_pending_stop

Result = TypeVar("Result")

LOCAL_SCHEDULER = "local"
"""The ``scheduler`` value that starts a Dask ``LocalCluster`` on this machine (chapter 6)."""

SCHEDULER_SCHEMES = ("tcp", "ws", "wss", "tls")
"""The address schemes of a Dask scheduler that a run can use (an address without one is ``tcp``); ``tls`` needs
Dask's TLS settings (``distributed.comm.tls.ca-file`` and the client's certificate and key)."""

CONNECT_TIMEOUT = 10.0
"""Seconds to reach a Dask scheduler and hear it answer before its address is refused; the environment variable
``TTT_DASK_CONNECT_TIMEOUT`` overrides it."""

WORKER_TIMEOUT = 60.0
"""Seconds to wait for the first worker of a Dask scheduler that has none before the run is refused; the
environment variable ``TTT_DASK_WORKER_TIMEOUT`` overrides it."""

CONNECT_TIMEOUT_VARIABLE = "TTT_DASK_CONNECT_TIMEOUT"
"""The environment variable that overrides :data:`CONNECT_TIMEOUT`."""

WORKER_TIMEOUT_VARIABLE = "TTT_DASK_WORKER_TIMEOUT"
"""The environment variable that overrides :data:`WORKER_TIMEOUT`."""

_CLUSTER_LOG_LEVEL = logging.CRITICAL
"""What distributed may log in a ``LocalCluster``'s processes. Not its errors: a worker whose run is stopped logs
one, with a traceback, when the scheduler closes before it (its heartbeat fails); what goes wrong in a run
reaches this process as an exception."""

_ADDRESS_FORMS = (
    f"give {LOCAL_SCHEDULER!r} (a Dask cluster on this machine) or the address of a running Dask scheduler, "
    "tcp://HOST:PORT"
)
"""What an error about a scheduler address says is accepted."""

_UNUSABLE_SCHEMES = {
    "inproc": "an inproc:// address is reachable only from inside the process that runs its scheduler",
    "ucx": "ucx:// needs the package distributed-ucxx, which the book does not use",
}
"""Why distributed's other schemes cannot be used; any other scheme is unknown."""


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


@contextlib.contextmanager
def _signals_deferred():
    """SIGINT and SIGTERM put off for the duration, then acted on: for a Dask cluster's start and close.

    The signals are held in this thread (:func:`_signals_held`), so that the threads and processes started
    meanwhile (distributed's, the cluster's workers) start with them held; and, in the main thread, their Python
    handlers are replaced by one that notes the signal, since a thread started earlier (numba's, say) may still
    take it. At the end the handlers are put back and each noted signal's handler is called, once: Ctrl-C raises
    ``KeyboardInterrupt`` there. A signal with no Python handler (the default SIGTERM) acts as it always does.
    """
    noted: list[int] = []
    previous: dict[int, Callable] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in sorted(_HELD_SIGNALS):
            handler = signal.getsignal(signum)
            if callable(handler):
                previous[signum] = handler
                signal.signal(signum, lambda number, frame: noted.append(number))
    try:
        with _signals_held():
            yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # a signal still pending is noted first (signal.signal runs it)
        for signum in dict.fromkeys(noted):
            previous[signum](signum, None)


def forget_interrupt_in_exec() -> None:
    """Make CPython forget that a ``KeyboardInterrupt`` went through code run by ``exec`` of a string.

    CPython 3.11 notes such an interrupt as unhandled even when a caller catches it, and then ends the process
    by SIGINT (exit status -2 to a parent) instead of with the status the program returns. numba compiles the
    code it generates that way, so Ctrl-C while a share is being compiled here noted it. The next ``exec`` of a
    string clears the note (CPython sets and clears it in ``run_eval_code_obj``); an interrupt that really goes
    unhandled is noted again when it leaves the program.
    """
    exec("")


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, unless it runs already.

    The thread that starts it leaves SIGINT and SIGTERM unblocked (``resource_tracker.ensure_running`` unblocks
    them, whatever they were): started by distributed's thread while a ``LocalCluster`` starts, it would undo
    :func:`_signals_held` for that thread and for the worker processes it spawns. Started here first, it is
    only found running then.
    """
    try:
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    except (ImportError, OSError):  # pragma: no cover - Windows has none; distributed starts it, or fails, itself
        pass


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
    """``scheduler`` (an address stripped of spaces) if it is ``None``, ``"local"``, the address of a Dask
    scheduler that distributed can use, or an ``Executor``; ``ValueError`` otherwise (chapter 6).

    An address is ``SCHEME://HOST:PORT`` with a scheme of :data:`SCHEDULER_SCHEMES` (``HOST:PORT`` is ``tcp``),
    a host and a port from 1 to 65535; ``tls://`` needs Dask's TLS settings. The error names the address and
    what is accepted, on one line. Whether a scheduler answers there is known only on connecting
    (:class:`TaskRunner`).
    """
    if scheduler is None or isinstance(scheduler, concurrent.futures.Executor):
        return scheduler
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(
            f"scheduler must be None (local processes), {LOCAL_SCHEDULER!r} (a Dask LocalCluster), the address of a "
            f"Dask scheduler such as 'tcp://10.0.0.5:8786', or a concurrent.futures.Executor; got {scheduler!r}"
        )
    address = scheduler.strip()
    if address != LOCAL_SCHEDULER:
        scheme, _, _ = _address_parts(address)
        if scheme == "tls" and not _tls_configured():
            raise _address_error(address, "a tls:// address needs Dask's TLS settings (distributed.comm.tls.ca-file "
                                          "and the client's cert and key), and none are set")  # fmt: skip
    return address


def _address_error(address: str, reason: str) -> ValueError:
    """The one-line error about a scheduler address: the address, what is wrong, and what is accepted."""
    return ValueError(f"scheduler {address}: {reason}; {_ADDRESS_FORMS}")


def _address_parts(address: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a Dask scheduler's address; ``ValueError`` naming it if a run cannot use it."""
    scheme, separator, place = address.partition("://")
    if not separator:
        scheme, place = "tcp", address
    if scheme not in SCHEDULER_SCHEMES:
        known = ", ".join(f"{name}://" for name in SCHEDULER_SCHEMES)
        raise _address_error(address, _UNUSABLE_SCHEMES.get(scheme, f"unknown scheme {scheme!r} (known: {known})"))
    if place.startswith("["):  # an IPv6 address: [::1]:8786
        host, _, rest = place[1:].partition("]")
        separator, port = rest[:1], rest[1:]
    else:
        host, separator, port = place.rpartition(":")
    if not separator:
        raise _address_error(address, "no port (the address ends in :PORT)")
    if not host:
        raise _address_error(address, "no host (the address is SCHEME://HOST:PORT)")
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise _address_error(address, f"the port must be a whole number from 1 to 65535, not {port!r}")
    return scheme, host, int(port)


def _tls_configured() -> bool:
    """Whether Dask's settings give a client what it needs to connect by TLS (assumed so without distributed)."""
    try:
        from distributed.security import Security
    except ImportError:  # pragma: no cover - distributed is pinned in requirements.txt
        return True
    return Security().get_connection_args("client").get("ssl_context") is not None


def _seconds(variable: str, default: float) -> float:
    """The number of seconds in the environment variable ``variable``, or ``default`` when it is not set."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"the environment variable {variable} must be a number of seconds > 0; got {text!r}")
    return value


async def _handshake(address: str, timeout: float) -> None:
    """Connect to ``address`` and exchange distributed's handshake with what answers there, then hang up."""
    from distributed.comm import connect
    from distributed.security import Security

    comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
    await comm.close()


def _connection_error(host: str, port: int, timeout: float) -> str | None:
    """What goes wrong in a plain TCP connection to ``host:port`` ("connection refused", ...), or ``None``."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as error:
        return (error.strerror or str(error) or type(error).__name__).lower()
    return None


def _check_answers(address: str, timeout: float) -> None:
    """Raise ``ValueError`` naming ``address`` unless a Dask scheduler answers there within about ``timeout`` s.

    distributed's own connection retries for ``timeout`` s, but then waits for the scheduler's handshake without
    end (a web server, the dashboard's port say, never sends one); so this handshake runs in a thread of its own,
    bounded, before the ``Client`` connects. Whatever fails in it means that no Dask scheduler answers there.
    """
    _, host, port = _address_parts(address)
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            asyncio.run(asyncio.wait_for(_handshake(address, timeout), timeout + 1))
            outcome.append(None)
        except BaseException as error:  # reported by the caller's thread
            outcome.append(error)

    thread = threading.Thread(target=attempt, name=f"answer of {address}", daemon=True)
    thread.start()
    thread.join(timeout + 5)  # getaddrinfo has no timeout of its own
    error = outcome[0] if outcome else TimeoutError()
    if error is None:
        return
    if isinstance(error, socket.gaierror):
        reason = f"unknown host {host!r}: {error.strerror or error}"
    elif isinstance(error, TimeoutError) and not str(error):
        reason = f"no Dask scheduler answered within {timeout:g} s"
    elif isinstance(error, OSError):  # distributed could not connect, in all its tries
        why = _connection_error(host, port, min(timeout, 2.0))
        reason = f"{why}, retried for {timeout:g} s" if why else str(error)
    elif isinstance(error, (TypeError, ValueError)):
        reason = str(error)
    elif isinstance(error, Exception):  # a reply that is not distributed's: a program other than a Dask scheduler
        reason = "what answers there is not a Dask scheduler"
    else:  # pragma: no cover - SystemExit or the like in the thread
        raise error
    raise _address_error(address, f"cannot connect ({reason})")


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
            except BaseException as error:  # an error or Ctrl-C while starting: close what was started
                self.__exit__(type(error), error, error.__traceback__)
                raise
        return self

    def _connect(self) -> None:
        """Start a ``LocalCluster``, or connect to the scheduler at ``self.scheduler``; wait for a worker.

        The ``LocalCluster`` starts with SIGINT and SIGTERM put off (:func:`_signals_deferred`), so that Ctrl-C
        never leaves it half started and its worker processes leave Ctrl-C to this one. A scheduler elsewhere
        must answer within :data:`CONNECT_TIMEOUT` seconds and have a worker within :data:`WORKER_TIMEOUT`
        seconds; otherwise ``ValueError``, one line naming its address.
        """
        worker_timeout = _seconds(WORKER_TIMEOUT_VARIABLE, WORKER_TIMEOUT)
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - distributed is pinned in requirements.txt
            raise ValueError("a Dask scheduler needs the package distributed (pip install distributed)") from None
        if self.scheduler == LOCAL_SCHEDULER:
            _start_resource_tracker()
            with _signals_deferred():  # a signal that comes meanwhile is acted on once the cluster is up
                self._cluster = LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                    silence_logs=_CLUSTER_LOG_LEVEL,
                )  # fmt: skip
                self._client = Client(self._cluster)
        else:
            connect_timeout = _seconds(CONNECT_TIMEOUT_VARIABLE, CONNECT_TIMEOUT)
            _check_answers(self.scheduler, connect_timeout)
            try:
                self._client = Client(self.scheduler, timeout=f"{connect_timeout}s")
            except Exception as error:  # whatever distributed raises here means it could not connect
                raise _address_error(self.scheduler, f"cannot connect ({error or type(error).__name__})") from None
        if not self._client.nthreads():
            try:
                self._client.wait_for_workers(1, timeout=worker_timeout)
            except TimeoutError as error:  # distributed's WorkerStartTimeoutError
                running = getattr(error, "available_workers", 0)
                raise ValueError(
                    f"scheduler {self.scheduler} has {running} workers, and none came within {worker_timeout:g} s; "
                    f"start some (dask worker {self.scheduler}), or give {LOCAL_SCHEDULER!r} to run on a Dask "
                    "cluster on this machine"
                ) from None
        self.slots = sum(self._client.nthreads().values())
        self.executor = self._client.get_executor()

    def __exit__(self, *exc_info) -> None:
        """Close what :meth:`__enter__` started (the client, then the ``LocalCluster`` and its processes), even
        when leaving by an exception; an executor given directly is left open.

        SIGINT and SIGTERM are put off while closing (:func:`_signals_deferred`): a signal that comes meanwhile is
        acted on once all is closed, never in the middle (distributed cannot close a cluster twice). When leaving
        by an exception, an error in closing is not raised, so that the exception that ended the run is the one
        reported."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = self.executor = None
        if client is None and cluster is None:
            return
        leaving_by_exception = bool(exc_info) and exc_info[0] is not None
        with _signals_deferred():
            try:
                if client is not None:
                    client.close()
            except Exception:
                if not leaving_by_exception:
                    raise
            finally:
                try:
                    if cluster is not None:
                        cluster.close()
                except Exception:
                    if not leaving_by_exception:
                        raise

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

        Ctrl-C (``KeyboardInterrupt``) reaches the caller as itself, and leaves no note that it went unhandled
        (:func:`forget_interrupt_in_exec`): a command that catches it ends with its own exit status.
        """
        try:
            return self._map(work, shares, progress, label, prepare, on_result)
        except KeyboardInterrupt:
            forget_interrupt_in_exec()
            raise

    def _map(
        self,
        work: Callable[[list, bool | str], Result],
        shares: Sequence[list],
        progress: bool | str,
        label: str,
        prepare: Callable[[], object] | None,
        on_result: Callable[[int, Result], object] | None,
    ) -> list[Result]:
        """:meth:`map`, but for what it does with an interruption."""
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
                    raise_pending_stop()  # a Ctrl-C that a library lost while this process worked (records.note_stop)
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
                raise_pending_stop()
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
                raise_pending_stop()
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
