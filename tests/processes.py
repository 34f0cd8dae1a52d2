"""Processes for the tests that stop runs part way (tests/test_parallel.py, tests/test_interrupt.py)."""

import psutil


def living(processes) -> list[psutil.Process]:
    """The processes of ``processes`` still running (zombies and vanished processes are not)."""
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.NoSuchProcess:
            pass
    return alive
