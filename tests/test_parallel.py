"""The one place for parallel work (evolving_ttt.parallel): shares, executors, order, progress and errors."""

import concurrent.futures
import os

import pytest

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
