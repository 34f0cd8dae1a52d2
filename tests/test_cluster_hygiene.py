"""A Dask scheduler that cannot serve a run ends the command in one line, and Ctrl-C or SIGTERM while a Dask
cluster starts or closes ends it quietly (evolving_ttt.parallel; reliability cases 6 to 8).

- a scheduler with no worker is given up after ``TTT_DASK_WORKER_TIMEOUT`` seconds (60 by default), with one line
  that says how many workers it has and what to do;
- an address distributed cannot use (``tls://`` without TLS settings, ``ucx://``, ``inproc://``, no port...) is
  refused before anything starts, and one where no Dask scheduler answers (nothing listens, a silent server, a web
  server) within ``TTT_DASK_CONNECT_TIMEOUT`` seconds is refused too: one line naming the address, exit status 2;
- a signal while a ``LocalCluster`` starts or closes is acted on once it is up or closed: exit 130 or 143, one line
  ``interrupted: ...``, no traceback from distributed or from the cluster's worker processes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dask
import distributed
import psutil
import pytest
from distributed.core import Status
from processes import living

from evolving_ttt import parallel
from evolving_ttt.parallel import (
    CONNECT_TIMEOUT_VARIABLE,
    WORKER_TIMEOUT,
    WORKER_TIMEOUT_VARIABLE,
    TaskRunner,
    check_scheduler,
    run_shared,
)

REPO = Path(__file__).resolve().parents[1]
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
ACCEPTED = "give 'local' (a Dask cluster on this machine) or the address of a running Dask scheduler, tcp://HOST:PORT"
TINY = ["evolve", "--trials", "1", "--generations", "2", "--parents", "6", "--quiet"]


def environment(tmp: Path, **variables: str) -> dict[str, str]:
    """The environment of a command run here: this repository first on the path, no Dask settings of the user's."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "TTT_RUN_CACHE": str(tmp / "cache"), "DASK_CONFIG": str(tmp / "dask"),
            **variables}  # fmt: skip


def run_command(arguments: list[str], tmp: Path, timeout: float = 60, **variables: str) -> subprocess.CompletedProcess:
    """``python -m ttt_helpers ARGUMENTS`` in ``tmp``; a command that hangs fails the test after ``timeout`` s."""
    return subprocess.run([sys.executable, "-m", "ttt_helpers", *arguments], cwd=tmp, env=environment(tmp, **variables),
                          capture_output=True, text=True, timeout=timeout, start_new_session=True)  # fmt: skip


def error_line(done: subprocess.CompletedProcess) -> str:
    """The command's error line, once it is checked that it ended with exit status 2 and printed no traceback
    (argparse's usage comes before the line, which starts with the program's or the subcommand's name)."""
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    line = re.fullmatch(r"python -m ttt_helpers(?: [\w-]+)*: error: (.*)", done.stderr.strip().splitlines()[-1])
    assert line, done.stderr
    return line[1]


@pytest.fixture(scope="module")
def idle_scheduler() -> Iterator[str]:
    """The address of a Dask scheduler, in this process, that has no worker."""
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=":0", silence_logs=logging.ERROR) as cluster:  # fmt: skip
        yield cluster.scheduler_address


# --- Case 6: a scheduler with no workers --------------------------------------------------------------------------


def test_the_waits_are_documented_and_a_minute_for_workers_by_default():
    assert WORKER_TIMEOUT == 60
    for variable in (WORKER_TIMEOUT_VARIABLE, CONNECT_TIMEOUT_VARIABLE):
        assert variable in parallel.__doc__


@pytest.mark.slow
def test_a_scheduler_with_no_workers_ends_the_command_in_one_line_that_says_so(idle_scheduler, tmp_path):
    done = run_command([*TINY, "--out", str(tmp_path / "run.npz"), "--scheduler", idle_scheduler], tmp_path,
                       **{WORKER_TIMEOUT_VARIABLE: "1"})  # fmt: skip
    assert error_line(done) == (
        f"scheduler {idle_scheduler} has 0 workers, and none came within 1 s; start some (dask worker "
        f"{idle_scheduler}), or give 'local' to run on a Dask cluster on this machine"
    )
    assert not (tmp_path / "run.npz").exists()


def tag_share(share: list, progress: bool | str) -> list:
    """A share's tasks, doubled."""
    return [2 * task for task in share]


@pytest.mark.slow
def test_a_worker_that_comes_while_the_run_waits_for_one_runs_it(monkeypatch):
    monkeypatch.setenv(WORKER_TIMEOUT_VARIABLE, "20")
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=":0", silence_logs=logging.ERROR) as cluster:  # fmt: skip
        threading.Timer(1.0, cluster.scale, args=(1,)).start()
        parts = run_shared(tag_share, list(range(4)), scheduler=cluster.scheduler_address)
    assert [task for part in parts for task in part] == [0, 2, 4, 6]


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan", "inf"])
@pytest.mark.parametrize("variable", [WORKER_TIMEOUT_VARIABLE, CONNECT_TIMEOUT_VARIABLE])
def test_a_wait_that_is_not_a_number_of_seconds_is_a_clear_error(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=f"^the environment variable {variable} must be a number of seconds > 0; "
                                         f"got '{value}'$"):  # fmt: skip
        run_shared(tag_share, [0, 1], scheduler="tcp://127.0.0.1:9")


# --- Case 7: addresses that distributed cannot use ----------------------------------------------------------------

UNUSABLE = {
    "tls://127.0.0.1:1": "a tls:// address needs Dask's TLS settings",
    "ucx://127.0.0.1:1": "ucx:// needs the package distributed-ucxx",
    "inproc://x": "an inproc:// address is reachable only from inside the process that runs its scheduler",
    "foo://bar:1": "unknown scheme 'foo'",
    "tcp://127.0.0.1": "no port",
    "127.0.0.1": "no port",
    "tcp://:8786": "no host",
    "tcp://127.0.0.1:0": "the port must be a whole number from 1 to 65535, not '0'",
    "tcp://127.0.0.1:99999": "the port must be a whole number from 1 to 65535, not '99999'",
    "tcp://127.0.0.1:8786/": "the port must be a whole number from 1 to 65535, not '8786/'",
    "tcp://[::1]": "no port",
}


@pytest.mark.parametrize("address", list(UNUSABLE))
def test_an_address_distributed_cannot_use_is_refused_before_anything_starts(address):
    with dask.config.set({"distributed.comm.tls.ca-file": None}), pytest.raises(ValueError) as refused:
        check_scheduler(address)
    message = str(refused.value)
    assert message.startswith(f"scheduler {address}: {UNUSABLE[address]}") and message.endswith(ACCEPTED), message
    assert "\n" not in message


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "10.0.0.5:8786", "tcp://[::1]:8786", "ws://host:80",
                                     "wss://host.example:443", "local"])  # fmt: skip
def test_an_address_distributed_can_use_is_taken_as_given(address):
    assert check_scheduler(f"  {address} ") == address


@pytest.mark.slow
@pytest.mark.parametrize("address", ["tls://127.0.0.1:1", "ucx://127.0.0.1:1", "inproc://x"])
def test_the_command_refuses_an_unusable_address_in_one_line(address, tmp_path):
    done = run_command([*TINY, "--out", str(tmp_path / "run.npz"), "--scheduler", address], tmp_path)
    line = error_line(done)
    assert line.startswith(f"scheduler {address}: {UNUSABLE[address]}") and line.endswith(ACCEPTED), line


def free_port() -> int:
    """A port of 127.0.0.1 where nothing listens (as good as free: the system just gave it out)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server(request) -> Iterator[int]:
    """The port of a server that is not a Dask scheduler: ``"silent"`` takes connections and says nothing (as a
    web server waits for a request); ``"web"`` answers every connection as a web server does; ``"nothing"`` is
    a port where nothing listens."""
    if request.param == "nothing":
        yield free_port()
        return
    listener = socket.create_server(("127.0.0.1", 0))
    if request.param == "web":

        def answer() -> None:
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:  # closed: the test is over
                    return
                with connection, contextlib.suppress(OSError):
                    connection.settimeout(10)
                    connection.recv(4096)  # what the client says first
                    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n")
                    connection.shutdown(socket.SHUT_WR)
                    while connection.recv(4096):  # until the client hangs up
                        pass

        threading.Thread(target=answer, daemon=True).start()
    with listener:  # "silent": the system completes each connection; nobody reads or writes it
        yield listener.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "server, reason",
    [
        ("nothing", "connection refused, retried for 1 s"),
        ("silent", "no Dask scheduler answered within 1 s"),
        ("web", "what answers there is not a Dask scheduler"),
    ],
    indirect=["server"],
)
def test_an_address_where_no_dask_scheduler_answers_is_one_line_within_the_connect_timeout(server, reason, tmp_path):
    address = f"tcp://127.0.0.1:{server}"
    done = run_command([*TINY, "--out", str(tmp_path / "run.npz"), "--scheduler", address], tmp_path, timeout=30,
                       **{CONNECT_TIMEOUT_VARIABLE: "1"})  # fmt: skip
    assert error_line(done) == f"scheduler {address}: cannot connect ({reason}); {ACCEPTED}"
    assert not (tmp_path / "run.npz").exists()


# --- Case 8: Ctrl-C or SIGTERM while a Dask cluster starts or closes ----------------------------------------------


def dask_workers(process: psutil.Process) -> list[psutil.Process]:
    """The worker processes of the LocalCluster that ``process`` runs (multiprocessing spawns them)."""
    found = []
    for child in process.children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            pass
    return found


def group_left(group: int) -> bool:
    """Whether a process of the process group ``group`` is still there."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_local_cluster_starts_ends_the_command_quietly(sig, tmp_path):
    """SIGINT to the whole group (as Ctrl-C sends it) or SIGTERM to the command, as soon as the cluster's first
    worker process exists: the cluster is still starting (its workers import the package)."""
    arguments = ["evolve", "--trials", "2", "--generations", "300", "--parents", "20", "--out",
                 str(tmp_path / "run.npz"), "--workers", "2", "--scheduler", "local", "--quiet"]  # fmt: skip
    stderr = tmp_path / "stderr.txt"
    with open(stderr, "wb") as errors:
        process = subprocess.Popen([sys.executable, "-m", "ttt_helpers", *arguments], cwd=tmp_path,
                                   env=environment(tmp_path), start_new_session=True, stdout=subprocess.DEVNULL,
                                   stderr=errors)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not dask_workers(psutil.Process(process.pid)) and time.monotonic() < deadline:
            assert process.poll() is None, stderr.read_text()
            time.sleep(0.02)
        assert dask_workers(psutil.Process(process.pid)), "no worker process of the LocalCluster started"
        (os.killpg if sig == signal.SIGINT else os.kill)(process.pid, sig)
        process.wait(timeout=60)
        deadline = time.monotonic() + 10
        while group_left(process.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not group_left(process.pid), "a process of the command outlived it"
    finally:
        if group_left(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        process.kill()
        process.wait()
    text = stderr.read_text(errors="replace")
    assert "Traceback" not in text and "Exception" not in text, text
    assert text.strip().splitlines()[1:] == ["interrupted: nothing was written"], text
    assert process.returncode == EXIT_CODES[sig], text
    assert not (tmp_path / "run.npz").exists()


@pytest.mark.slow
def test_ctrl_c_while_the_cluster_closes_is_acted_on_once_it_is_closed(monkeypatch):
    """Ctrl-C comes in the middle of closing: the cluster and its worker processes are closed all the same, and
    then the interrupt reaches the caller."""
    closing: list[distributed.LocalCluster] = []
    close = distributed.LocalCluster.close

    def interrupted_close(cluster, *arguments, **options):
        closing.append(cluster)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)  # Ctrl-C would stop the close here
        return close(cluster, *arguments, **options)

    monkeypatch.setattr(distributed.LocalCluster, "close", interrupted_close)
    before = {process.pid for process in psutil.Process().children(recursive=True)}
    try:
        with pytest.raises(KeyboardInterrupt):
            with TaskRunner(workers=1, scheduler="local") as runner:
                workers = [p for p in dask_workers(psutil.Process()) if p.pid not in before]
                assert runner.map(tag_share, [[1], [2]]) == [[2], [4]]
        assert closing and closing[0].status == Status.closed
        deadline = time.monotonic() + 10
        while living(workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert workers and living(workers) == []
    finally:
        for cluster in closing:
            close(cluster)


WORKERS_LEAVE_CTRL_C = """
import os, signal, sys, time
import psutil
from evolving_ttt.parallel import TaskRunner

def where(share, progress):
    return [os.getpid() for task in share]

if __name__ == "__main__":
    with TaskRunner(workers=2, scheduler="local") as runner:
        workers = [p for p in psutil.Process().children(recursive=True) if "spawn_main" in " ".join(p.cmdline())]
        for worker in workers:
            os.kill(worker.pid, signal.SIGINT)
        time.sleep(1)
        alive = [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
        pids = {pid for part in runner.map(where, [[0], [1], [2], [3]]) for pid in part}
    print(len(workers), len(alive), pids <= {w.pid for w in workers})
"""


@pytest.mark.slow
def test_the_worker_processes_of_a_local_cluster_leave_ctrl_c_to_the_process_that_started_them(tmp_path):
    """Ctrl-C reaches every process of the terminal's group: the cluster's workers must not act on it (they would
    print tracebacks and be started again); the process that started them closes the cluster."""
    script = tmp_path / "workers.py"
    script.write_text(WORKERS_LEAVE_CTRL_C)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=environment(tmp_path),
                          capture_output=True, text=True, timeout=60, start_new_session=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    assert done.stdout.split() == ["2", "2", "True"], done.stdout + done.stderr
