"""Monte Carlo tree search players: OpenSpiel's ``MCTSBot`` with random roll-outs, over the base-3 board index.

OpenSpiel's ``open_spiel.python.algorithms.mcts`` (version 2.0.2) is the field's reference Monte Carlo tree search,
and its example (``open_spiel/python/examples/mcts.py``) plays tic-tac-toe with ``MCTSBot(game, uct_c=2,
max_simulations, RandomRolloutEvaluator(n_rollouts=1, rng), random_state=rng, solve=True)``: one
``np.random.RandomState`` shared by the bot and its evaluator, no Dirichlet noise. Those are this module's settings
(:data:`UCT_C`, ``solve=True``). Its search is slow in Python (a cloned ``pyspiel`` state per simulation and per
roll-out move); this module does the same search over the book's board index, compiled with numba, and
``tests/test_mcts.py`` checks that it builds the same tree, node for node (actions in the same order, visit counts,
total rewards, proven outcomes), and plays the same move, as OpenSpiel's bot on the same random numbers.

What OpenSpiel's search does, and :func:`_search` repeats step for step:

* **Simulation.** From the root, descend while the node's board is unfinished and the node has been visited. A
  visited node without children is expanded: its legal squares, in increasing order, are shuffled by the random
  state (``RandomState.shuffle`` on a list: for ``i = n-1 .. 1``, swap ``i`` with a uniform ``j`` in ``[0, i]``),
  and become its children in that order. The child chosen is the first (in that order) of largest score. The leaf
  reached is scored by its result if the game is over there (and keeps that result as its *outcome*), else by one
  random roll-out: ``RandomState.choice(legal squares)`` until the game ends. Every node of the path adds the
  result, for the player who moved into it, to its total reward, and one to its visit count. The root's "player" is
  the side to move there.
* **Score** (``SearchNode.uct_value``, ``uct_c = 2``): a child with an outcome scores that outcome for its player;
  an unvisited child scores infinity; any other ``total_reward / visits + uct_c * sqrt(log(N) / visits)``, with
  ``N`` the parent's visits.
* **Solver** (``solve=True``, MCTS-Solver). When a simulation ends on a finished board, each node of the path, on the
  way back, takes the outcome of its best proven child (the first of highest outcome for the side to move) if every
  child is proven or that outcome is a win (OpenSpiel's ``max_utility``, 1); the first node that cannot stops the
  proof for the rest of the path. A proven root ends the search early. With ``solve=False`` only finished boards
  get outcomes.
* **Move** (``best_child``): the first child of largest ``(outcome or 0, visits, total reward)``.

Random numbers. Both of OpenSpiel's draws (``shuffle`` on a list, ``choice`` of a list without probabilities) take
32-bit words from the Mersenne Twister and reject by a mask: the smallest ``2^k - 1`` at least ``top``, words
``& mask`` until one is at most ``top``; no word is drawn when ``top`` is 0. :func:`_next_word` is the Mersenne
Twister itself (numpy's MT19937, as integers), and the search takes its state from a ``RandomState`` passed in and
writes it back: after :func:`mcts_move` the ``RandomState`` is exactly where OpenSpiel's would be. No double is
drawn anywhere.

Same bits on every machine. The search adds, divides and compares doubles (IEEE 754 rounds those the same
everywhere), takes ``sqrt`` (correctly rounded), and takes the logarithm with the portable
:func:`evolving_ttt.numerics.log_scalar`, not ``math.log``: C libraries differ in the last bit, and on this machine
glibc's log already differs from the portable one at 1,729 of the whole numbers up to 200,000 (5 is the first).
No search seen so far turns on it (1,062 searches of 1,000 simulations from the opening boards built the same root
either way), but one could: the test runs OpenSpiel with ``math.log`` replaced by the portable log in its module.
The random numbers are integers. The kernels are compiled without ``fastmath``
(:data:`evolving_ttt.numerics.JIT_OPTIONS`).

Only what the book uses of OpenSpiel's bot is here: one roll-out per leaf (``n_rollouts=1``), the UCT score (not
PUCT), no Dirichlet noise, and no chance nodes (tic-tac-toe has none).

The player. OpenSpiel's bot keeps no tree from one move to the next (each ``step`` searches from a new root), and a
search is random, so an MCTS player is a fixed distribution over squares on each board, which this module
*estimates*: on every board where the player is to move, ``samples`` searches, one after another on that board's own
random state (a ``RandomState`` on ``MT19937(SeedSequence(seed, spawn_key=(board,)))``, :func:`board_random_state`),
and the share of searches that chose each square is the row of its policy table (:mod:`evolving_ttt.outcomes`). Any
set of boards can be recomputed alone with the same bits (:func:`mcts_counts`), so the work can be split across
processes. ``boards="reachable"`` searches only the boards the player can meet when it plays that side against any
opponent (following its own estimated moves and every reply): every exact yardstick of the arena (the protocol
score, results against any opponent, the audit) reads only those rows, so it is the same as with a full table;
the other rows are filled with the uniformly random player and are never consulted when the player plays that side.
The default is ``"all"``: a search is fast (about 10 microseconds at 10 simulations, 0.5 ms at 1,000 from the empty
board, against 1 and 70-120 ms for OpenSpiel's), and the solver ends most searches near the end of a game early, so
both full tables of 100 searches per board take about 2 s at 10 simulations and 10 s at 1,000 on one core. The
arena's players, one per budget of :data:`BUDGETS`, are estimated once and read from a committed file
(:mod:`evolving_ttt.mcts_players`, ``book/data/mcts_players.npz``), so the arena never searches when it loads them.

The estimate's error. An outcome probability from the empty board is a sum, over games, of products of move
probabilities on distinct boards (no game meets a board twice), and the rows of different boards are estimated from
independent searches: so each result against a fixed opponent, and the protocol score, computed exactly from the
estimated tables is an *unbiased* estimate of the MCTS player's true value, with a variance that falls as
``1 / samples``. :func:`yardstick_spread` reports its size by a bootstrap over each board's searches;
:func:`row_standard_errors` gives each row's own ``sqrt(p (1 - p) / samples)``. The audit (positions reached,
mistakes, whether it can lose) depends on which moves have any probability: a move the player makes rarely may be
missed by the samples, so it is biased towards fewer positions and fewer mistakes, and it has no error bar here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numba
import numpy as np

from evolving_ttt.fogel_score import protocol_score
from evolving_ttt.game import (
    MARK_DIGIT,
    N_BOARDS,
    POWERS_OF_3,
    SYMBOLS,
    O,
    X,
    board_index,
    board_tables,
    check_count,
    check_instance,
    check_mark,
    check_number,
    validate_board,
)
from evolving_ttt.numerics import JIT_OPTIONS, log_scalar
from evolving_ttt.outcomes import (
    POLICY_SHAPE,
    boards_to_move,
    outcome_probabilities,
    perfect_policy,
    random_policy,
)
from evolving_ttt.players import ArenaPlayer, probability_explanation
from evolving_ttt.rule_base import PAPER_RULES
from evolving_ttt.seeds import check_seed

UCT_C = 2.0
"""OpenSpiel's exploration constant for tic-tac-toe (``--uct_c=2`` in its MCTS example)."""
BUDGETS = (10, 100, 1000)
"""The simulation budgets the book measures (OpenSpiel's example uses 1000)."""
SAMPLES = 100
"""Searches per board for a player's estimated policy table, unless told otherwise."""
MAX_SIMULATIONS = 100_000
"""The largest budget: the tree holds up to ``1 + 9 * simulations`` nodes (about 40 bytes each)."""
BOARD_CHOICES = ("all", "reachable")

# --- The random numbers: numpy's MT19937 and its bounded draws ------------------------------------------------------

_N, _M = 624, 397
_MATRIX_A, _UPPER, _LOWER = 0x9908B0DF, 0x80000000, 0x7FFFFFFF


@numba.njit(**JIT_OPTIONS)
def _twist(key):
    """Regenerate the Mersenne Twister's 624 words in place (numpy's ``mt19937_gen``)."""
    for i in range(_N):
        y = (key[i] & _UPPER) | (key[(i + 1) % _N] & _LOWER)
        value = key[(i + _M) % _N] ^ (y >> 1)
        if y & 1:
            value ^= _MATRIX_A
        key[i] = value


@numba.njit(**JIT_OPTIONS)
def _next_word(key, where):
    """The next 32-bit word of the Mersenne Twister whose state is ``key`` (624 words) and ``where[0]`` (pos)."""
    if where[0] >= _N:
        _twist(key)
        where[0] = 0
    y = key[where[0]]
    where[0] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@numba.njit(**JIT_OPTIONS)
def _below(key, where, top):
    """A uniform whole number in ``[0, top]`` as numpy's legacy ``shuffle`` and ``randint`` draw it: 32-bit words
    masked to the smallest ``2^k - 1 >= top`` until one is at most ``top``; no word at all when ``top`` is 0."""
    if top == 0:
        return 0
    mask = top
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    while True:
        value = _next_word(key, where) & mask
        if value <= top:
            return value


# --- The search -----------------------------------------------------------------------------------------------------


@numba.njit(**JIT_OPTIONS)
def _search(root, mark, simulations, uct_c, solve, key, where, over, winner, moves, n_moves, step,
            action, player, visits, reward, proven, outcome, first, count, path):  # fmt: skip
    """One search from board ``root`` with ``mark`` to move; the tree is written to the node arrays.

    Node 0 is the root; a node's children are ``first[v] .. first[v] + count[v] - 1``, in OpenSpiel's order.
    ``player[v]`` is the side that moved into node ``v`` (the side to move, at the root); ``outcome[v]`` is X's
    result (+1, 0, -1) where ``proven[v]``. Returns the number of nodes and of simulations run.
    """
    action[0], player[0], visits[0], reward[0], proven[0], outcome[0], first[0], count[0] = -1, mark, 0, 0.0, False, \
        0.0, -1, 0  # fmt: skip
    n_nodes, runs = 1, 0
    for _ in range(simulations):
        runs += 1
        node, index, mover, depth = 0, root, mark, 1
        path[0] = 0
        while not over[index] and visits[node] > 0:
            if count[node] == 0:  # expand: the legal squares, shuffled as RandomState.shuffle shuffles a list
                n = n_moves[index]
                first[node], count[node] = n_nodes, n
                for k in range(n):
                    c = n_nodes + k
                    action[c], player[c], visits[c], reward[c] = moves[index, k], mover, 0, 0.0
                    proven[c], outcome[c], first[c], count[c] = False, 0.0, -1, 0
                for i in range(n - 1, 0, -1):
                    j = n_nodes + _below(key, where, i)
                    action[n_nodes + i], action[j] = action[j], action[n_nodes + i]
                n_nodes += n
            log_n = log_scalar(float(visits[node]))
            best, best_score = -1, 0.0
            for c in range(first[node], first[node] + count[node]):
                if proven[c]:
                    score = outcome[c] * player[c]
                elif visits[c] == 0:
                    score = math.inf
                else:
                    score = reward[c] / visits[c] + uct_c * math.sqrt(log_n / visits[c])
                if best < 0 or score > best_score:
                    best, best_score = c, score
            index += step[0 if mover == 1 else 1, action[best]]
            mover = -mover
            node = best
            path[depth] = node
            depth += 1
        if over[index]:
            result = winner[index]
            proven[node], outcome[node] = True, float(result)
            solved = solve
        else:  # one random roll-out: RandomState.choice of the legal squares, to the end
            while not over[index]:
                index += step[0 if mover == 1 else 1, moves[index, _below(key, where, n_moves[index] - 1)]]
                mover = -mover
            result = winner[index]
            solved = False
        for d in range(depth - 1, -1, -1):
            v = path[d]
            reward[v] += float(result * player[v])
            visits[v] += 1
            if solved and count[v] > 0:
                side = player[first[v]]
                best, all_proven = -1, True
                for c in range(first[v], first[v] + count[v]):
                    if not proven[c]:
                        all_proven = False
                    elif best < 0 or outcome[c] * side > outcome[best] * side:
                        best = c
                if best >= 0 and (all_proven or outcome[best] * side == 1.0):
                    proven[v], outcome[v] = True, outcome[best]
                else:
                    solved = False
        if proven[0]:
            break
    return n_nodes, runs


@numba.njit(**JIT_OPTIONS)
def _best_child(action, player, visits, reward, proven, outcome, first, count):
    """The root's move: the first child of largest (outcome or 0, visits, total reward), as ``best_child``."""
    best = -1
    best_value, best_visits, best_reward = 0.0, 0, 0.0
    for c in range(first[0], first[0] + count[0]):
        value = outcome[c] * player[c] if proven[c] else 0.0
        if best < 0 or value > best_value or (value == best_value and (
                visits[c] > best_visits or (visits[c] == best_visits and reward[c] > best_reward))):  # fmt: skip
            best, best_value, best_visits, best_reward = c, value, visits[c], reward[c]
    return action[best]


def _node_arrays(simulations: int) -> tuple[np.ndarray, ...]:
    size = 1 + 9 * simulations
    return (np.empty(size, np.int8), np.empty(size, np.int8), np.empty(size, np.int64), np.empty(size),
            np.empty(size, np.bool_), np.empty(size), np.empty(size, np.int64), np.empty(size, np.int64),
            np.empty(11, np.int64))  # fmt: skip


@numba.njit(**JIT_OPTIONS)
def _count_choices(indices, marks, keys, positions, samples, simulations, uct_c, solve, over, winner, moves, n_moves,
                   step, action, player, visits, reward, proven, outcome, first, count, path):  # fmt: skip
    """``samples`` searches on each board, one after another on that board's own random state (row ``b`` of
    ``keys`` and ``positions``, advanced in place); how many chose each square, shape (boards, 9)."""
    counts = np.zeros((indices.size, 9), np.int64)
    for b in range(indices.size):
        key, where = keys[b], positions[b : b + 1]
        for _ in range(samples):
            _search(indices[b], marks[b], simulations, uct_c, solve, key, where, over, winner, moves, n_moves, step,
                    action, player, visits, reward, proven, outcome, first, count, path)  # fmt: skip
            counts[b, _best_child(action, player, visits, reward, proven, outcome, first, count)] += 1
    return counts


@dataclass(frozen=True)
class _Lookups:
    over: np.ndarray
    winner: np.ndarray
    moves: np.ndarray
    n_moves: np.ndarray
    step: np.ndarray
    legal_unfinished: np.ndarray


@cache
def _lookups() -> _Lookups:
    tables = board_tables()
    step = np.stack([MARK_DIGIT[X] * POWERS_OF_3, MARK_DIGIT[O] * POWERS_OF_3]).astype(np.int64)
    return _Lookups(tables.over.copy(), tables.winner.astype(np.int64), tables.empty_list.astype(np.int64),
                    tables.n_empty.astype(np.int64), step, tables.legal & ~tables.over)  # fmt: skip


# --- Checks and random states ---------------------------------------------------------------------------------------


def _check_settings(simulations: int, uct_c: float, solve: bool) -> tuple[int, float, bool]:
    simulations = check_count(simulations, "simulations", minimum=2)  # one simulation never expands the root
    if simulations > MAX_SIMULATIONS:
        raise ValueError(f"simulations must be at most {MAX_SIMULATIONS}; got {simulations}")
    uct_c = check_number(uct_c, "uct_c")
    check_instance(solve, (bool, np.bool_), "solve", "True or False")
    return simulations, uct_c, bool(solve)


def _check_position(board, mark: int | None = None) -> tuple[int, int]:
    """The index of ``board`` (a board or its base-3 index) and the side to move; ValueError if the game is over."""
    if isinstance(board, (int, np.integer)) and not isinstance(board, bool):
        index = int(board)
        if not 0 <= index < N_BOARDS or not board_tables().legal[index]:
            raise ValueError(f"board must be a legal board or its base-3 index (0-19682); got {board!r}")
    else:
        index = board_index(validate_board(board))
    tables = board_tables()
    if tables.over[index]:
        raise ValueError("board: the game is over on this board; there is no move to search")
    to_move = int(tables.to_move[index])
    if mark is not None and check_mark(mark) != to_move:
        raise ValueError(f"mark must be the side to move on this board ({SYMBOLS[to_move]}); got {SYMBOLS[mark]}")
    return index, to_move


def _mt_state(rng: np.random.RandomState, name: str = "rng") -> dict:
    check_instance(rng, np.random.RandomState, name, "a numpy.random.RandomState (as OpenSpiel's MCTSBot takes)")
    state = rng.get_state(legacy=False)
    if state["bit_generator"] != "MT19937":
        raise ValueError(f"{name} must be a RandomState on numpy's MT19937; got one on {state['bit_generator']}")
    return state


def board_random_state(seed: int, index: int) -> np.random.RandomState:
    """The random state of board ``index``'s searches in a player's table: a ``RandomState`` on
    ``MT19937(SeedSequence(seed, spawn_key=(index,)))``, which OpenSpiel's bot can be given too."""
    return np.random.RandomState(np.random.MT19937(np.random.SeedSequence(check_seed(seed), spawn_key=(int(index),))))


# --- One search -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchTree:
    """The tree of one search, node 0 the root, each node's children in OpenSpiel's order.

    Attributes
    ----------
    index
        The root's board index.
    action, player, visits, reward
        Per node: the square played into it (-1 at the root), the side that played it (the side to move, at the
        root), its visit count and its total reward for that side.
    outcome
        X's proven result (+1, 0, -1) of each node, nan where none is proven.
    first, count
        Where each node's children start among the nodes, and how many (0 if never expanded).
    simulations
        How many simulations ran (fewer than asked when the solver proved the root).
    move
        The square chosen.
    """

    index: int
    action: np.ndarray
    player: np.ndarray
    visits: np.ndarray
    reward: np.ndarray
    outcome: np.ndarray
    first: np.ndarray
    count: np.ndarray
    simulations: int
    move: int

    def children(self, node: int = 0) -> range:
        """The children of ``node``, in OpenSpiel's order."""
        return range(self.first[node], self.first[node] + self.count[node])


def mcts_search(board, simulations: int, rng: np.random.RandomState, uct_c: float = UCT_C,
                solve: bool = True) -> SearchTree:  # fmt: skip
    """One search of OpenSpiel's ``MCTSBot`` from ``board`` (a board or its base-3 index), drawing from ``rng``.

    ``rng`` is left where OpenSpiel's ``RandomState`` would be after the same search.

    Raises
    ------
    ValueError
        If the board is not legal or the game is over on it, ``simulations`` is not a whole number from 2 to
        :data:`MAX_SIMULATIONS`, ``uct_c`` not a number >= 0, ``solve`` not a bool, or ``rng`` not a
        ``RandomState`` on MT19937.
    """
    index, mark = _check_position(board)
    simulations, uct_c, solve = _check_settings(simulations, uct_c, solve)
    state = _mt_state(rng)
    key = state["state"]["key"].astype(np.int64)
    where = np.array([state["state"]["pos"]], np.int64)
    lookups = _lookups()
    arrays = _node_arrays(simulations)
    n_nodes, runs = _search(index, mark, simulations, uct_c, solve, key, where, lookups.over, lookups.winner,
                            lookups.moves, lookups.n_moves, lookups.step, *arrays)  # fmt: skip
    move = _best_child(*arrays[:8])
    state["state"]["key"], state["state"]["pos"] = key.astype(np.uint32), int(where[0])
    rng.set_state(state)
    action, player, visits, reward, proven, outcome, first, count, _ = (a[:n_nodes].copy() for a in arrays)
    return SearchTree(index, action.astype(np.int64), player.astype(np.int64), visits, reward,
                      np.where(proven, outcome, np.nan), first, count, int(runs), int(move))  # fmt: skip


def mcts_move(board, mark: int, simulations: int, rng: np.random.RandomState, uct_c: float = UCT_C,
              solve: bool = True) -> int:  # fmt: skip
    """The square OpenSpiel's ``MCTSBot`` plays for ``mark`` on ``board`` (a board or its base-3 index) with
    ``simulations`` simulations, drawing from ``rng`` exactly as the bot and its evaluator would."""
    _check_position(board, mark)
    return mcts_search(board, simulations, rng, uct_c, solve).move


# --- The player: estimated move probabilities -----------------------------------------------------------------------


def mcts_counts(indices, simulations: int, samples: int, seed: int, uct_c: float = UCT_C,
                solve: bool = True) -> np.ndarray:  # fmt: skip
    """How many of ``samples`` searches on each board chose each square, shape (len(indices), 9), int64.

    Board ``i`` draws only from :func:`board_random_state` ``(seed, i)``, its searches one after another: any set
    of boards gives the same rows alone, in any order or process.

    Raises
    ------
    ValueError
        If an index is not a legal unfinished board, or a setting is out of range.
    """
    indices = np.asarray(indices)
    if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
        raise ValueError(f"indices must be a list of board indices; got {indices!r:.60}")
    indices = indices.astype(np.int64)
    lookups = _lookups()
    if np.any((indices < 0) | (indices >= N_BOARDS)) or not lookups.legal_unfinished[indices].all():
        raise ValueError("indices must be indices of legal boards on which the game is not over")
    simulations, uct_c, solve = _check_settings(simulations, uct_c, solve)
    samples, seed = check_count(samples, "samples"), check_seed(seed)
    keys = np.empty((indices.size, _N), np.int64)
    positions = np.empty(indices.size, np.int64)
    for b, index in enumerate(indices.tolist()):
        state = np.random.MT19937(np.random.SeedSequence(seed, spawn_key=(index,))).state["state"]
        keys[b], positions[b] = state["key"], state["pos"]
    marks = board_tables().to_move[indices].astype(np.int64)
    return _count_choices(indices, marks, keys, positions, samples, simulations, uct_c, solve, lookups.over,
                          lookups.winner, lookups.moves, lookups.n_moves, lookups.step,
                          *_node_arrays(simulations))  # fmt: skip


@dataclass(frozen=True)
class MCTSEstimate:
    """A player's estimated policy table for one side: the searches behind it and what they chose.

    Attributes
    ----------
    mark, simulations, samples, seed, uct_c, solve
        The side, the budget, searches per board, the seed and the search's settings.
    boards
        ``"all"`` or ``"reachable"`` (see the module's docstring).
    indices : (n,) int64
        The boards searched, in increasing order.
    counts : (n, 9) int64
        How many of the ``samples`` searches on each chose each square.
    """

    mark: int
    simulations: int
    samples: int
    seed: int
    uct_c: float
    solve: bool
    boards: str
    indices: np.ndarray
    counts: np.ndarray

    def policy(self, counts: np.ndarray | None = None) -> np.ndarray:
        """The policy table: each searched row ``counts / samples``; unsearched rows the uniformly random player.

        ``counts`` (default the estimate's own) may carry leading batch axes, for bootstrap replicates.
        """
        counts = self.counts if counts is None else counts
        table = np.broadcast_to(random_policy(self.mark), counts.shape[:-2] + POLICY_SHAPE).copy()
        table[..., self.indices, :] = counts / self.samples
        return table


def estimate_policy(mark: int, simulations: int, samples: int = SAMPLES, seed: int = 0, boards: str = "all",
                    uct_c: float = UCT_C, solve: bool = True) -> MCTSEstimate:  # fmt: skip
    """Estimate the MCTS player's policy table for ``mark`` from ``samples`` seeded searches per board.

    With ``boards="all"`` every board where ``mark`` is to move (2,423 for X, 2,097 for O); with
    ``"reachable"`` only those it can meet playing ``mark`` against any opponent, found one number of marks at a
    time from the empty board: its own boards through the squares its searches chose, the opponent's through every
    legal square.

    Raises
    ------
    ValueError
        If an argument is out of range (each named).
    """
    mark = check_mark(mark)
    simulations, uct_c, solve = _check_settings(simulations, uct_c, solve)
    samples, seed = check_count(samples, "samples"), check_seed(seed)
    if boards not in BOARD_CHOICES:
        raise ValueError(f"boards must be one of {BOARD_CHOICES}; got {boards!r}")
    if boards == "all":
        indices = boards_to_move(mark).astype(np.int64)
        counts = mcts_counts(indices, simulations, samples, seed, uct_c, solve)
    else:
        tables = board_tables()
        marks_on = 9 - tables.n_empty.astype(np.int64)
        reached = np.zeros(N_BOARDS, dtype=bool)
        reached[0] = True
        found_indices, found_counts = [], []
        for k in range(9):  # from the empty board forward, one number of marks at a time
            mover = X if k % 2 == 0 else O
            rows = np.flatnonzero(reached & tables.legal & ~tables.over & (marks_on == k))
            if mover == mark:
                layer_counts = mcts_counts(rows, simulations, samples, seed, uct_c, solve)
                found_indices.append(rows)
                found_counts.append(layer_counts)
                played = layer_counts > 0
            else:
                played = tables.empty[rows]
            children = rows[:, None] + MARK_DIGIT[mover] * POWERS_OF_3[None, :]
            reached[children[played]] = True
        indices = np.concatenate(found_indices).astype(np.int64)
        counts = np.concatenate(found_counts)
        order = np.argsort(indices, kind="stable")
        indices, counts = indices[order], counts[order]
    return MCTSEstimate(mark, simulations, samples, seed, uct_c, solve, boards, indices, counts)


def mcts_policy(mark: int, simulations: int, samples: int = SAMPLES, seed: int = 0, boards: str = "all",
                uct_c: float = UCT_C, solve: bool = True) -> np.ndarray:  # fmt: skip
    """The estimated policy table of the MCTS player of ``mark``: :func:`estimate_policy`'s table."""
    return estimate_policy(mark, simulations, samples, seed, boards, uct_c, solve).policy()


def mcts_player(simulations: int, samples: int = SAMPLES, seed: int = 0, boards: str = "all", uct_c: float = UCT_C,
                solve: bool = True) -> ArenaPlayer:  # fmt: skip
    """OpenSpiel's MCTS player with ``simulations`` simulations per move, as an :class:`ArenaPlayer` for the arena.

    Its tables are :func:`estimate_policy` for X and for O with the same seed (the two sides search different
    boards, so their random states differ): :func:`estimated_player` of the two estimates.
    """
    return estimated_player(*(estimate_policy(m, simulations, samples, seed, boards, uct_c, solve) for m in (X, O)))


def estimated_player(x_estimate: MCTSEstimate, o_estimate: MCTSEstimate) -> ArenaPlayer:
    """The MCTS player whose tables are two estimates, of X and of O, of the same settings: ``"MCTS 100"`` for 100
    simulations, of system ``"mcts"`` (the arena's players, :mod:`evolving_ttt.mcts_players`, are made here too).

    Raises
    ------
    ValueError
        If the estimates are not of X and of O, or differ in budget, searches per board, seed or settings.
    """
    check_instance(x_estimate, MCTSEstimate, "x_estimate", "an MCTSEstimate of X")
    check_instance(o_estimate, MCTSEstimate, "o_estimate", "an MCTSEstimate of O")
    if x_estimate.mark != X or o_estimate.mark != O:
        raise ValueError("x_estimate must be an estimate of X and o_estimate one of O")
    e = x_estimate
    settings = (e.simulations, e.samples, e.seed, e.uct_c, e.solve)
    if settings != (o_estimate.simulations, o_estimate.samples, o_estimate.seed, o_estimate.uct_c, o_estimate.solve):
        raise ValueError("x_estimate and o_estimate must have the same simulations, samples, seed, uct_c and solve")
    tables = {X: x_estimate.policy(), O: o_estimate.policy()}
    text = (f"The share of {e.samples} searches of {e.simulations} simulations each (UCT, c = {e.uct_c:g}, random "
            f"roll-outs{', solver' if e.solve else ''}) that chose each square.")  # fmt: skip
    return ArenaPlayer(
        f"MCTS {e.simulations}", "mcts",
        f"OpenSpiel's MCTSBot with random roll-outs, {e.simulations:,} simulations per move; move probabilities "
        f"estimated from {e.samples} seeded searches per board", tables[X], tables[O],
        training=f"{e.samples} searches of {e.simulations:,} simulations on each board",
        explain=probability_explanation(tables.get, text),
    )  # fmt: skip


# --- The estimate's error -------------------------------------------------------------------------------------------


def row_standard_errors(estimate: MCTSEstimate) -> np.ndarray:
    """The standard error of each estimated probability, ``sqrt(p (1 - p) / samples)``, shape (n, 9)."""
    check_instance(estimate, MCTSEstimate, "estimate", "an MCTSEstimate")
    p = estimate.counts / estimate.samples
    return np.sqrt(p * (1.0 - p) / estimate.samples)


YARDSTICK_OPPONENTS = ("perfect", "perfect, 10% random", "random")


def _yardsticks(x_tables: np.ndarray, o_tables: np.ndarray) -> dict[str, np.ndarray]:
    """The protocol score and the (win, draw, loss) results against the reference opponents, per replicate."""
    opponents = {"perfect": 0.0, "perfect, 10% random": 0.1}
    values = {"protocol score": np.array([protocol_score(t, PAPER_RULES) for t in x_tables])}
    for name in YARDSTICK_OPPONENTS:
        x_opponent = random_policy(X) if name == "random" else perfect_policy(X, opponents[name])
        o_opponent = random_policy(O) if name == "random" else perfect_policy(O, opponents[name])
        values[f"{name} as X"] = outcome_probabilities(x_tables, o_opponent)
        values[f"{name} as O"] = outcome_probabilities(x_opponent, o_tables)[..., ::-1]
    return values


def yardstick_spread(x_estimate: MCTSEstimate, o_estimate: MCTSEstimate, replicates: int = 100,
                     seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Each yardstick of the estimated player and its bootstrap standard error: ``{name: (value, error)}``.

    The yardsticks are the expected 32-game protocol score as X (a number) and the (win, draw, loss) probabilities
    against the perfect, 10%-random perfect and random players as X and as O (three numbers each, from the
    player's side). Each replicate redraws every board's ``samples`` search results with replacement from those
    made (integer draws from ``np.random.default_rng(seed)``), and the error is the standard deviation of the
    yardstick over the replicates: the sampling error of the estimate, which falls as ``1 / sqrt(samples)``.
    """
    check_instance(x_estimate, MCTSEstimate, "x_estimate", "an MCTSEstimate of X")
    check_instance(o_estimate, MCTSEstimate, "o_estimate", "an MCTSEstimate of O")
    if x_estimate.mark != X or o_estimate.mark != O:
        raise ValueError("x_estimate must be an estimate of X and o_estimate one of O")
    replicates, rng = check_count(replicates, "replicates", minimum=2), np.random.default_rng(check_seed(seed))
    point = {k: v[0] for k, v in _yardsticks(x_estimate.policy()[None], o_estimate.policy()[None]).items()}
    draws: dict[str, list[np.ndarray]] = {k: [] for k in point}
    chunk = 10
    searches = [_search_moves(e) for e in (x_estimate, o_estimate)]
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        tables = [_resampled(e, moves, rng, size) for e, moves in zip((x_estimate, o_estimate), searches, strict=True)]
        for name, values in _yardsticks(*tables).items():
            draws[name].append(values)
    return {name: (point[name], np.concatenate(draws[name]).std(axis=0, ddof=1)) for name in point}


def _search_moves(estimate: MCTSEstimate) -> np.ndarray:
    """The move of each search the estimate counts, shape (boards, samples): board by board, in square order."""
    n, samples = estimate.counts.shape[0], estimate.samples
    return np.repeat(np.tile(np.arange(9), n), estimate.counts.reshape(-1)).reshape(n, samples)


def _resampled(estimate: MCTSEstimate, chosen: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` bootstrap replicates of the estimate's policy table, shape (size, 19683, 9); ``chosen`` is
    :func:`_search_moves` of the estimate."""
    n, samples = chosen.shape
    picks = rng.integers(0, samples, size=(size, n, samples))
    moves = chosen[np.arange(n)[:, None], picks]  # (size, n, samples): the move of each search drawn
    cells = (np.arange(size * n).reshape(size, n, 1) * 9 + moves).reshape(-1)  # replicate, board, move: one number
    counts = np.bincount(cells, minlength=size * n * 9).reshape(size, n, 9)
    return estimate.policy(counts)
