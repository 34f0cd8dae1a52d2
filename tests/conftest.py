"""Shared fixtures and the reproducible hypothesis profile for the ttt_helpers test suite.

Session-scoped fixtures are built once per pytest process: once in a serial run, once in each worker that needs
them under pytest-xdist (`make test` and `make test-fast` run two).
"""

import logging
import signal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from evolving_ttt.book_execution import recorded_seconds
from evolving_ttt.fogel.network import load_network
from evolving_ttt.fogel_score import BestResponse, best_response
from evolving_ttt.game import board_tables, reachable_positions
from evolving_ttt.rule_base import PAPER_RULES

settings.register_profile("ci", derandomize=True, max_examples=60, deadline=None, database=None, print_blob=True)
settings.load_profile("ci")

REPO_ROOT = Path(__file__).resolve().parents[1]
LONGEST_TEST_MODULES = ("tests/test_same_bits.py", "tests/test_interrupt.py")
"""Test modules of a minute or more (the battery under emulated processors; commands stopped and run again)."""
LONG_TEST_MODULES = ("tests/test_loaders_before_reading.py", "tests/test_systems.py", "tests/test_cluster_hygiene.py",
                     "tests/test_al_khateeb_robustness.py", "tests/test_cli_inputs.py", "tests/test_cli.py",
                     "tests/test_sweeps.py")  # fmt: skip
"""Test modules of a quarter of a minute or more, longest first: handed out after the notebooks, before the rest, so
that the last work of either process is short."""


def pytest_collection_modifyitems(config, items):
    """The longest work first, so that two processes end together (make test runs pytest-xdist with ``--dist
    loadscope --no-loadscope-reorder``, which hands out whole modules and notebooks in this order): the modules of
    :data:`LONGEST_TEST_MODULES`, then the notebooks by the running time their committed outputs record (the
    longest-processing-time rule, as ``make book-fresh`` executes them), then those of :data:`LONG_TEST_MODULES`,
    then every other module as collected."""
    seconds: dict[str, float] = {}

    def rank(item) -> tuple[int, float]:
        path = Path(item.path)
        relative = path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else path.as_posix()
        if relative in LONGEST_TEST_MODULES:
            return 0, LONGEST_TEST_MODULES.index(relative)
        if path.suffix == ".ipynb":
            if relative not in seconds:
                seconds[relative] = recorded_seconds(path)
            return 1, -seconds[relative]
        if relative in LONG_TEST_MODULES:
            return 2, LONG_TEST_MODULES.index(relative)
        return 3, 0.0

    items.sort(key=rank)  # stable: tests keep their order within a module, and modules theirs within a rank


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def champion_path() -> Path:
    return REPO_ROOT / "book/data/champion.json"


@pytest.fixture(scope="session")
def champion(champion_path):
    """The committed champion network and its provenance."""
    return load_network(champion_path)


@pytest.fixture(scope="session")
def reachable() -> list[np.ndarray]:
    """Every reachable position (slow to build: shared by the whole session)."""
    return reachable_positions()


@pytest.fixture(scope="session")
def paper_best_response() -> BestResponse:
    """The expectimax best response to the paper's opponent (computed once per process by best_response)."""
    return best_response(PAPER_RULES)


@pytest.fixture(scope="session")
def legal_unfinished_indices() -> np.ndarray:
    """Base-3 indices of every legal board on which the game is still going on."""
    tables = board_tables()
    return np.flatnonzero(tables.legal & ~tables.over)


@pytest.fixture(scope="session")
def dask_address() -> str:
    """The scheduler address of a Dask LocalCluster of two worker processes of one thread each, shared by the
    session's tests (starting one takes seconds); skipped where ``distributed`` is not installed."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster:  # fmt: skip
        yield cluster.scheduler_address


@pytest.fixture(autouse=True)
def signal_mask_kept():
    """Every test leaves this thread's signal mask as it found it: a mask left blocking SIGINT is inherited by every
    process a later test starts, whose Ctrl-C then stays pending (tests/test_interrupt.py)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    yield
    after = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    signal.pthread_sigmask(signal.SIG_SETMASK, before)
    assert after == before, f"the test left the signal mask {sorted(after)} (it was {sorted(before)})"
