"""The arena's MCTS players, estimated once and saved: the file, its writer and its loader (chapter 27).

An MCTS player is a distribution over squares on every board, estimated from seeded searches
(:mod:`evolving_ttt.mcts`): ``samples`` searches of OpenSpiel's ``MCTSBot`` per board, and the share of them that
chose each square. Estimating the three players of :data:`~evolving_ttt.mcts.BUDGETS` takes about ten seconds, too
long for every load of the arena; so the counts are computed once, by

    python -m ttt_helpers mcts --out book/data/mcts_players.npz --budgets 10,100,1000 --samples 100 --seed 1

(:func:`make_mcts_players` and :func:`save_mcts_players` from Python), and the arena reads them
(:func:`load_mcts_players`, :func:`evolving_ttt.arena.mcts_players`). Every row can be recomputed alone with the
same bits (:func:`evolving_ttt.mcts.mcts_counts`), so the work is shared out over processes
(:class:`evolving_ttt.parallel.TaskRunner`) and the file is the same whatever the number of workers.

The format (``.npz``, no pickled objects; :func:`load_mcts_players` checks every array and names the one that is
wrong):

- ``format``: the text ``"ttt-mcts-players"``; ``version``: 1;
- ``budgets``: the simulation budgets, one player each, whole numbers from 2 to
  :data:`~evolving_ttt.mcts.MAX_SIMULATIONS` in increasing order (B of them);
- ``samples``: searches per board, 1 to 65,535; ``seed``: the seed, 0 to 2**63 - 1 (board ``i``'s searches draw
  from :func:`~evolving_ttt.mcts.board_random_state` ``(seed, i)``, one after another);
- ``uct_c`` (a number >= 0) and ``solve`` (true/false): the search's settings (OpenSpiel's example: 2 and true);
- ``numerics``: the name of the numerics the searches ran on (:data:`evolving_ttt.numerics.NUMERICS`);
- ``provenance``: the JSON text of an object with at least ``"command"``, the command or call that made the file;
- ``x_counts`` and ``o_counts``: shape (B, 19683, 9), ``uint8`` when ``samples`` is at most 255, else ``uint16``:
  ``x_counts[k, i, s]`` is how many of the ``samples`` searches of ``budgets[k]`` simulations on board ``i`` chose
  square ``s``, for X. Every board where that side is to move (:func:`~evolving_ttt.outcomes.boards_to_move`:
  2,423 for X, 2,097 for O) has a row summing to ``samples``, every other row is zero, and no count is on an
  occupied square.

A player's policy table is each row divided by ``samples`` (:meth:`MCTSPlayers.estimate`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from evolving_ttt.game import (
    LARGEST_SETTING,
    N_BOARDS,
    O,
    X,
    board_tables,
    check_count,
    check_instance,
    check_mark,
    check_number,
)
from evolving_ttt.mcts import BUDGETS, MAX_SIMULATIONS, SAMPLES, UCT_C, MCTSEstimate, estimated_player, mcts_counts
from evolving_ttt.numerics import NUMERICS
from evolving_ttt.outcomes import boards_to_move
from evolving_ttt.parallel import TaskRunner
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.reading import Fields, parse_json, read_npz
from evolving_ttt.records import DATA, check_path, record_arrays, save_npz
from evolving_ttt.seeds import MAX_SEED, check_seed

PLAYERS_FORMAT = "ttt-mcts-players"
"""The ``format`` of the MCTS players' file."""
PLAYERS_VERSION = 1
"""The ``version`` of the format that :func:`save_mcts_players` writes."""
PLAYERS_KIND = "MCTS players file"
PLAYERS_FILE = DATA / "mcts_players.npz"
"""The book's MCTS players, read by the arena."""
PLAYERS_SEED = 1
"""The seed of the book's MCTS players."""
MAX_SAMPLES = 2**16 - 1
"""The most searches per board the format holds (counts are ``uint16`` at most)."""
PIECE = 250
"""Boards per piece of work (one step of the progress bar)."""
MAX_SHARES = 16
"""The most shares the boards are dealt into (more workers than this stay idle): ten seconds' work needs no more."""


def counts_dtype(samples: int) -> np.dtype:
    """The dtype of the count tables: ``uint8`` for up to 255 searches per board, ``uint16`` above."""
    return np.dtype(np.uint8 if samples <= np.iinfo(np.uint8).max else np.uint16)


@dataclass(frozen=True, eq=False)
class MCTSPlayers:
    """The MCTS players of several budgets, as their count tables (the contents of the file; see the module).

    Attributes
    ----------
    budgets, samples, seed, uct_c, solve
        The budgets (one player each), searches per board, the seed and the search's settings.
    numerics
        The numerics the searches ran on.
    provenance
        How the counts were made: at least ``"command"``.
    x_counts, o_counts : (len(budgets), 19683, 9)
        How many searches chose each square, per budget and board, for X and for O.
    """

    budgets: tuple[int, ...]
    samples: int
    seed: int
    uct_c: float
    solve: bool
    numerics: str
    provenance: dict
    x_counts: np.ndarray
    o_counts: np.ndarray

    def estimate(self, simulations: int, mark: int) -> MCTSEstimate:
        """The estimate of ``mark``'s policy at ``simulations`` (one of the budgets), as
        :func:`~evolving_ttt.mcts.estimate_policy` gives it: the same rows, the same bits."""
        if simulations not in self.budgets:
            raise ValueError(f"simulations must be one of the budgets {list(self.budgets)}; got {simulations!r}")
        counts = (self.x_counts if check_mark(mark) == X else self.o_counts)[self.budgets.index(simulations)]
        indices = boards_to_move(mark).astype(np.int64)
        return MCTSEstimate(mark, simulations, self.samples, self.seed, self.uct_c, self.solve, "all", indices,
                            counts[indices].astype(np.int64))  # fmt: skip

    def player(self, simulations: int) -> ArenaPlayer:
        """The player of ``simulations`` simulations per move (:func:`~evolving_ttt.mcts.estimated_player`)."""
        return estimated_player(self.estimate(simulations, X), self.estimate(simulations, O))

    def players(self) -> tuple[ArenaPlayer, ...]:
        """The player of every budget, in increasing order."""
        return tuple(self.player(simulations) for simulations in self.budgets)


def check_mcts_settings(budgets: Sequence[int], samples: int, seed: int, uct_c: float = UCT_C,
                        solve: bool = True) -> tuple[tuple[int, ...], int, int, float, bool]:  # fmt: skip
    """The settings of :func:`make_mcts_players`, checked: ``budgets`` at least one, each from 2 to
    :data:`~evolving_ttt.mcts.MAX_SIMULATIONS`, increasing; ``samples`` from 1 to :data:`MAX_SAMPLES`; ``seed``
    from 0 to 2**63 - 1; ``uct_c`` a number >= 0; ``solve`` a bool. ``ValueError`` naming the one that is wrong."""
    if isinstance(budgets, (str, bytes)) or not isinstance(budgets, Sequence) or not budgets:
        raise ValueError(f"budgets must be a list of simulation budgets, at least one; got {budgets!r:.60}")
    budgets = tuple(check_count(budget, "budgets", minimum=2) for budget in budgets)
    if max(budgets) > MAX_SIMULATIONS:
        raise ValueError(f"budgets must be at most {MAX_SIMULATIONS:,} simulations; got {max(budgets):,}")
    if any(b >= c for b, c in zip(budgets, budgets[1:], strict=False)):
        raise ValueError(f"budgets must be distinct and in increasing order; got {list(budgets)}")
    samples, seed = check_count(samples, "samples"), check_seed(seed)
    if samples > MAX_SAMPLES:
        raise ValueError(f"samples must be at most {MAX_SAMPLES:,}; got {samples:,}")
    check_instance(solve, (bool, np.bool_), "solve", "True or False")
    return budgets, samples, seed, check_number(uct_c, "uct_c"), bool(solve)


def _count_share(samples: int, seed: int, uct_c: float, solve: bool, share: list, progress: bool | str) -> list:
    """The counts of each piece ``(budget, mark, boards)`` of ``share``."""
    bar = None
    if progress:
        from tqdm import tqdm

        label = progress if isinstance(progress, str) else "MCTS searches"
        bar = tqdm(total=sum(len(boards) for _, _, boards in share), desc=label, unit="board")
    results = []
    try:
        for budget, _, boards in share:
            results.append(mcts_counts(boards, budget, samples, seed, uct_c, solve))
            if bar is not None:
                bar.update(len(boards))
    finally:
        if bar is not None:
            bar.close()
    return results


def make_mcts_players(budgets: Sequence[int] = BUDGETS, samples: int = SAMPLES, seed: int = PLAYERS_SEED,
                      uct_c: float = UCT_C, solve: bool = True, workers: int = 1, scheduler: object = None,
                      progress: bool | str = False, command: str | None = None) -> MCTSPlayers:  # fmt: skip
    """Estimate the MCTS player of every budget, both sides, ``samples`` searches on every board to move.

    The boards are dealt out to ``workers`` processes, or a Dask ``scheduler``
    (:class:`~evolving_ttt.parallel.TaskRunner`), every worker a share of each budget and side; the counts are the
    same bits however they are shared. ``command`` is recorded as the provenance (by default this call, as text).

    Raises
    ------
    ValueError
        If an argument is out of range (each named).
    """
    budgets, samples, seed, uct_c, solve = check_mcts_settings(budgets, samples, seed, uct_c, solve)
    if command is None:
        command = (f"evolving_ttt.mcts_players.make_mcts_players(budgets={list(budgets)}, samples={samples}, "
                   f"seed={seed}, uct_c={uct_c!r}, solve={solve})")  # fmt: skip
    check_instance(command, str, "command", "a text")
    tables = {mark: np.zeros((len(budgets), N_BOARDS, 9), counts_dtype(samples)) for mark in (X, O)}
    with TaskRunner(workers, scheduler) as runner:
        n = min(runner.slots, MAX_SHARES)
        shares = []
        for s in range(n):  # every share holds a slice of every budget and side, so that they cost alike
            share = []
            for budget in budgets:
                for mark in (X, O):
                    boards = boards_to_move(mark)[s::n]
                    share += [(budget, mark, boards[i : i + PIECE]) for i in range(0, len(boards), PIECE)]
            shares.append(share)
        work = partial(_count_share, samples, seed, uct_c, solve)
        found = runner.map(work, shares, progress, "MCTS searches", prepare=lambda: mcts_counts([0], 2, 1, 0))
    for share, counts in zip(shares, found, strict=True):
        for (budget, mark, boards), rows in zip(share, counts, strict=True):
            tables[mark][budgets.index(budget), boards] = rows
    return MCTSPlayers(budgets, samples, seed, uct_c, solve, NUMERICS, {"command": command}, tables[X], tables[O])


def command_text(out: str | Path, budgets: Sequence[int], samples: int, seed: int) -> str:
    """The command line that makes the file ``out`` (the provenance :func:`make_mcts_players` records for it)."""
    words = ["--out", str(out), "--budgets", ",".join(map(str, budgets)), "--samples", str(samples), "--seed",
             str(seed)]  # fmt: skip
    return "python -m ttt_helpers mcts " + shlex.join(words)


def _read_players(fields: Fields) -> MCTSPlayers:
    """The players held by ``fields``, every array checked (the rules of the module's docstring)."""
    found = fields.text("format")
    if found != PLAYERS_FORMAT:
        raise fields.fail("format", f"is {found!r}; expected {PLAYERS_FORMAT!r}")
    fields.integer("version", PLAYERS_VERSION, PLAYERS_VERSION)
    budgets = fields.array("budgets", "i", (None,), 2, MAX_SIMULATIONS)
    if budgets.size == 0 or np.any(np.diff(budgets) <= 0):
        raise fields.fail("budgets", f"must be at least one budget, in increasing order; got {budgets.tolist()}")
    samples = fields.integer("samples", 1, MAX_SAMPLES)
    seed = fields.integer("seed", 0, MAX_SEED)
    uct_c = fields.number("uct_c", 0.0, LARGEST_SETTING)
    solve = bool(fields.array("solve", "b", ()))
    numerics = fields.text("numerics")
    if not numerics:
        raise fields.fail("numerics", "must name the numerics the searches ran on; it is empty")
    try:
        provenance = parse_json(fields.text("provenance"))
    except ValueError as error:
        raise fields.fail("provenance", f"must be the JSON text of an object: {error}") from None
    if not isinstance(provenance, dict) or not isinstance(provenance.get("command"), str):
        raise fields.fail("provenance", 'must be a JSON object with "command", the command that made the file')
    tables = board_tables()
    counts = {}
    for name, mark in (("x_counts", X), ("o_counts", O)):
        array = fields.get(name)
        want = counts_dtype(samples)
        if not isinstance(array, np.ndarray) or array.dtype != want:
            raise fields.fail(name, f"must be an array of {want} (for {samples} searches per board); it holds "
                                    f"{getattr(array, 'dtype', type(array).__name__)}")  # fmt: skip
        if array.shape != (budgets.size, N_BOARDS, 9):
            raise fields.fail(name, f"has shape {array.shape}; expected {(budgets.size, N_BOARDS, 9)}")
        to_move = np.zeros(N_BOARDS, bool)
        to_move[boards_to_move(mark)] = True
        sums = array.sum(axis=2, dtype=np.int64)
        if np.any(sums[:, to_move] != samples):
            k, i = np.argwhere(sums[:, to_move] != samples)[0]
            raise fields.fail(name, f"has a row summing to {sums[k, to_move][i]}, not samples = {samples} (budget "
                                    f"{budgets[k]}, board {np.flatnonzero(to_move)[i]})")  # fmt: skip
        if np.any(sums[:, ~to_move]):
            raise fields.fail(name, "has counts on a board where that side is not to move (or the game is over)")
        if np.any(array[:, ~tables.empty]):
            raise fields.fail(name, "has a count on an occupied square")
        counts[mark] = array
    return MCTSPlayers(tuple(budgets.tolist()), samples, seed, uct_c, solve, numerics, provenance, counts[X],
                       counts[O])  # fmt: skip


def save_mcts_players(players: MCTSPlayers, path: str | Path, force: bool = False) -> Path:
    """Write ``players`` to the ``.npz`` file ``path`` (the module's format), whole or not at all.

    The arrays are checked by the loader's rules before anything is written, and the file is written beside
    ``path`` and put in place only once it reads back (:func:`evolving_ttt.records.save_npz`).

    Raises
    ------
    ValueError
        If a file is at ``path`` and ``force`` is false (the arena's players are never replaced by mistake), or
        ``players`` breaks a rule of the format: nothing is written then.
    """
    check_instance(players, MCTSPlayers, "players", "an MCTSPlayers")
    path = check_path(path)
    if path.exists() and not force:
        raise ValueError(f"{path} exists; give another name, or force=True to replace it")
    values = {"format": PLAYERS_FORMAT, "version": PLAYERS_VERSION, "budgets": np.array(players.budgets, np.int64),
              "samples": players.samples, "seed": players.seed, "uct_c": float(players.uct_c),
              "solve": bool(players.solve), "numerics": players.numerics,
              "x_counts": players.x_counts, "o_counts": players.o_counts}  # fmt: skip
    try:
        values["provenance"] = json.dumps(players.provenance, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path} was not written: the provenance is not plain JSON ({error})") from None
    arrays = record_arrays(path, values, PLAYERS_KIND)
    try:
        _read_players(Fields(path, arrays, PLAYERS_KIND))
    except ValueError as error:
        raise ValueError(f"{path} was not written, as its loader would refuse it: {error}") from None
    return save_npz(path, arrays, PLAYERS_KIND)


def load_mcts_players(path: str | Path = PLAYERS_FILE) -> MCTSPlayers:
    """Read the MCTS players' file (by default the book's), checking every array (the module's format).

    Raises
    ------
    ValueError
        Naming the file and the array, if the file is missing, damaged or not an ``.npz`` archive, or an array is
        missing or has the wrong dtype, shape or values.
    """
    path = check_path(path)
    return _read_players(Fields(path, read_npz(path, PLAYERS_KIND), PLAYERS_KIND))
