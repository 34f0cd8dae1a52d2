"""The one place for parallel work (evolving_ttt.parallel): shares, executors, order, progress and errors, and
no worker outliving the run that started it."""

import concurrent.futures
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from processes import living

from evolving_ttt.parallel import TaskRunner, check_scheduler, run_shared, split_tasks


def tag_share(share, progress):
    """A share's tasks with the process that ran them."""
    if 13 in share:
        raise ValueError("task 13 is unlucky")
    return [(task, os.getpid()) for task in share]


def test_split_tasks_cuts_consecutive_near_equal_shares_like_array_split():
    assert split_tasks(range(7), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert split_tasks(range(2), 5) == [[0], [1]]
    assert split_tasks([], 4) == []
    with pytest.raises(ValueError, match="shares must be a whole number >= 1"):
        split_tasks(range(3), 0)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_local_processes_return_every_share_in_order_and_this_process_takes_the_first(workers):
    parts = run_shared(tag_share, list(range(10)), workers=workers)
    assert [task for part in parts for task, _ in part] == list(range(10))
    pids = [{pid for _, pid in part} for part in parts]
    assert len(parts) == workers and pids[0] == {os.getpid()}
    assert all(p != {os.getpid()} for p in pids[1:])


def test_more_shares_than_workers_all_go_to_the_pool_and_come_back_in_order():
    with TaskRunner(workers=2) as runner:
        parts = runner.map(tag_share, split_tasks(range(12), 6))
    assert [task for part in parts for task, _ in part] == list(range(12))
    assert os.getpid() not in {pid for part in parts for _, pid in part}


def test_any_executor_can_be_given_and_is_not_closed():
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        with TaskRunner(scheduler=pool) as runner:
            parts = runner.map(tag_share, split_tasks(range(9), 3), progress="threads")
        assert [task for part in parts for task, _ in part] == list(range(9))
        assert pool.submit(sum, [1, 2]).result() == 3  # still open


@pytest.mark.parametrize("scheduler", [None, "threads"])
def test_an_error_in_a_share_reaches_the_caller_as_itself(scheduler):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        with pytest.raises(ValueError, match="task 13 is unlucky"):
            run_shared(tag_share, list(range(20)), workers=2, scheduler=pool if scheduler else None)


@pytest.mark.parametrize("bad", ["", "   ", 7, object()])
def test_a_bad_scheduler_is_a_clear_value_error(bad):
    with pytest.raises(ValueError, match="scheduler must be None .* 'local' .* or a concurrent.futures.Executor"):
        check_scheduler(bad)


# --- No worker outlives its run ---------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


def workers_left(before=()) -> list[psutil.Process]:
    """This process's living children, but for multiprocessing's resource tracker and those in ``before``."""
    known = {process.pid for process in before}
    return [process for process in living(psutil.Process().children(recursive=True))
            if process.pid not in known and "resource_tracker" not in " ".join(process.cmdline())]  # fmt: skip


def wait_for_none(find, seconds: float = 5.0) -> list:
    deadline = time.monotonic() + seconds
    while (left := find()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def fail_soon_or_sleep(share, progress):
    """Task 0 fails at once; every other share would take half a minute."""
    if 0 in share:
        time.sleep(0.3)
        raise ValueError("task 0 failed")
    time.sleep(30)
    return share


@pytest.mark.parametrize(
    "work, shares, on_result",
    [
        (fail_soon_or_sleep, [[0], [1], [2]], None),  # this process runs the failing share; two workers sleep
        (fail_soon_or_sleep, [[1], [0], [2], [3]], lambda k, result: None),  # every share in the pool
    ],
    ids=["here", "pool"],
)
def test_a_failing_share_ends_the_run_at_once_and_terminates_the_other_workers(work, shares, on_result):
    before = workers_left()
    start = time.monotonic()
    with pytest.raises(ValueError, match="failed"):
        with TaskRunner(workers=3) as runner:
            runner.map(work, shares, on_result=on_result)
    assert time.monotonic() - start < 10  # not the half minute the sleeping shares would take
    assert wait_for_none(lambda: workers_left(before)) == []


SCRIPT = """
import os, sys, time
from pathlib import Path
from evolving_ttt.parallel import run_shared

def work(share, progress):
    Path(sys.argv[1], f"started-{os.getpid()}").touch()
    time.sleep(60)
    return share

if __name__ == "__main__":
    try:
        run_shared(work, [0, 1, 2], workers=3)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        sys.exit(130)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig, to_group",
    [(signal.SIGINT, True), (signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGKILL, False)],
    ids=["ctrl-c to the group", "SIGINT to the parent", "SIGTERM without handler", "SIGKILL"],
)
def test_workers_end_with_their_parent_whatever_ends_it(tmp_path, sig, to_group):
    """The parent stops at once on Ctrl-C and terminates its workers; killed outright, it takes them with it."""
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, str(script), str(tmp_path)], env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    workers: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("started-*"))) < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        workers = psutil.Process(process.pid).children(recursive=True)
        assert len(list(tmp_path.glob("started-*"))) == 3 and len(workers) == 2
        (os.killpg if to_group else os.kill)(process.pid, sig)
        process.wait(timeout=10)  # not the minute the shares would take
        assert wait_for_none(lambda: living(workers)) == []
    finally:  # never leave a process to the next test
        for stray in living(workers):
            stray.kill()
        process.kill()
    stderr = process.stderr.read()
    if sig == signal.SIGINT:
        assert process.returncode == 130 and "Traceback" not in stderr and stderr.strip() == "stopped", stderr
    else:
        assert process.returncode == -sig


@pytest.mark.slow
def test_a_failing_share_on_a_local_dask_cluster_closes_the_cluster():
    before = workers_left()
    with pytest.raises(ValueError, match="task 13 is unlucky"):
        run_shared(tag_share, list(range(20)), workers=2, scheduler="local")
    assert wait_for_none(lambda: workers_left(before), 10) == []


INTERRUPTED_IN_EXEC = """
import os, signal, sys
from evolving_ttt.parallel import TaskRunner

def work(share, progress):
    if 0 in share:  # this process's share: Ctrl-C while code made by exec runs, as numba compiles
        exec("import os, signal, time\\nos.kill(os.getpid(), signal.SIGINT)\\ntime.sleep(30)")
    return share

try:
    with TaskRunner(workers=2) as runner:
        runner.map(work, [[0], [1]])
except KeyboardInterrupt:
    print("stopped", file=sys.stderr)
    sys.exit(130)
"""


def test_ctrl_c_caught_by_the_program_ends_it_with_the_programs_status_even_inside_exec(tmp_path):
    """CPython 3.11 notes a KeyboardInterrupt that went through ``exec`` of a string as unhandled and ends a
    ``python -m`` program by SIGINT (-2) after it returned 130; a run stopped by Ctrl-C leaves no such note."""
    (tmp_path / "interrupted_in_exec.py").write_text(INTERRUPTED_IN_EXEC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "interrupted_in_exec"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, start_new_session=True)  # fmt: skip
    assert done.stderr.strip() == "stopped", done.stderr
    assert done.returncode == 130
