"""Fogel (1993): the batched engine that plays every game of a generation as arrays (chapter 9).

:func:`play_protocol_batch` plays the 32-game protocol for a whole batch of populations at once and
gives exactly the results of the readable :func:`evolving_ttt.rule_base.play_protocol`. Its tricks,
each explained where it is defined:

* moves are additions to the base-3 board index, and the rule base is a table lookup
  (:class:`EngineSteps`);
* the hidden pre-activations are carried along the game, so that a move adds one column of weights
  instead of a matrix product per board (:func:`engine_weights`);
* each network evaluates each distinct board once per turn (:func:`distinct_boards`);
* only the empty squares compete for X's move (:func:`first_best_squares`);
* X's fourth move reads the result from an endgame table (:func:`endgame`);
* the first three plies use no random number, so a network that survives as a parent keeps its
  openings instead of playing them again (:class:`Openings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.fogel.network import MAX_HIDDEN, Population, batch_rows
from evolving_ttt.game import MARK_DIGIT, N_BOARDS, POWERS_OF_3, O, board_tables
from evolving_ttt.numerics import exp, fixed_matmul
from evolving_ttt.rule_base import (
    GAMES_PER_EVALUATION,
    OPPONENT_MOVES_PER_GAME,
    PAPER_RULES,
    OpponentRules,
    choice_positions,
    opponent_tables,
    split_uniform,
)


@dataclass(frozen=True)
class EngineSteps:
    """Moves as additions to the board index, for the batched engine (chapter 3).

    A finished game must stand still, so both step tables (``o_steps``, ``last_x_steps``) give 0 on
    finished boards.

    Attributes
    ----------
    o_counts, o_squares, o_steps
        The rule base: :class:`OpponentTables` ``n_choices`` (at least 1, so every position is valid),
        ``choices`` (padding 0) and ``2 * 3**choices``, for :func:`choice_positions`.
    last_x_steps : (19683,)
        X's last move, on the one empty square: ``3**square``.
    """

    o_counts: np.ndarray
    o_squares: np.ndarray
    o_steps: np.ndarray
    last_x_steps: np.ndarray


@cache
def engine_steps(rule_d_lines: str = "own") -> EngineSteps:
    """Build (once per reading of rule (d)) the :class:`EngineSteps` (chapter 3)."""
    tables, rule_tables = board_tables(), opponent_tables(rule_d_lines)
    squares = np.maximum(rule_tables.choices, 0)  # int8
    stands_still = np.repeat(tables.over, 2 * 9) | (rule_tables.choices < 0)  # over, or padding
    last_square = np.maximum(tables.empty_list[:, 0], 0)
    return EngineSteps(
        o_counts=np.maximum(rule_tables.n_choices, 1),
        o_squares=squares,
        o_steps=np.where(stands_still, 0, MARK_DIGIT[O] * POWERS_OF_3[squares]).astype(np.int16),  # at most 2 * 3**8
        last_x_steps=np.where(tables.over, 0, POWERS_OF_3[last_square]).astype(np.int32),
    )


ENGINE_UNITS = MAX_HIDDEN + 1
"""Hidden units in the engine's layout: the ten slots and a unit fixed at 1 that carries the output bias (chapter 3)."""

BIAS_UNIT_SUM = 60.0
"""The pre-activation of the engine's eleventh hidden unit, stored negated as -60 (chapter 3).

``1 / (1 + exp(-60))`` rounds to exactly 1.0: ``exp(-60)``, about 9e-27, is far below ``2**-53`` (1.1e-16),
half the spacing of doubles just above 1. A finite value keeps numpy's ``exp`` on its fast path, which
infinities and underflows leave.
"""


def engine_weights(flat: Population) -> tuple[np.ndarray, np.ndarray]:
    """A flat population's weights laid out for the batched engine (chapter 3).

    Returns ``(input_columns, output_weights)``. Row ``9 * i + s`` of ``input_columns`` holds network
    ``i``'s input weights from square ``s`` (one row gather per move). ``output_weights`` has shape
    ``(n, 11, 9)`` for a batched matrix product: the output weights, and as an eleventh row the output
    biases with their sign flipped. The engine's eleventh hidden unit always outputs exactly 1 (its sum
    is :data:`BIAS_UNIT_SUM` and gets no input weights), so the product subtracts the biases as its last term.
    """
    n = flat.shape[0]
    input_columns = np.zeros((n, 9, ENGINE_UNITS))
    input_columns[:, :, :MAX_HIDDEN] = np.swapaxes(flat.hidden_weights, 1, 2)
    output_weights = np.empty((n, ENGINE_UNITS, 9))
    output_weights[:, :MAX_HIDDEN] = np.swapaxes(flat.output_weights, 1, 2)
    output_weights[:, MAX_HIDDEN] = -flat.output_bias
    return input_columns.reshape(n * 9, ENGINE_UNITS), output_weights


def empty_board_negated_sums(flat: Population) -> np.ndarray:
    """``b - W x`` on the empty board (``x = 0``) in the engine's layout, shape ``(n, 11)`` (chapter 3).

    The hidden biases, and ``-BIAS_UNIT_SUM`` for the eleventh unit, whose output is then exactly 1.
    """
    return np.concatenate([flat.hidden_bias, np.full((flat.shape[0], 1), -BIAS_UNIT_SUM)], axis=1)


def take_rows(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``table[rows]`` for a 2-D float table, gathered as whole rows (chapter 3; used by the engine).

    numpy's ``take`` copies a row of ``m`` numbers faster as one ``8 m``-byte item than as ``m`` numbers,
    so the rows are viewed as single opaque items (``np.void``) for the gather and viewed back after.
    The row numbers must be in range: the gather clamps them (``mode="clip"``) rather than checking them,
    which is faster.

    Parameters
    ----------
    table : (r, m)
    rows : (k,)
        Row numbers, one-dimensional.

    Returns
    -------
    (k, m) array, a new copy.
    """
    table = np.ascontiguousarray(table)
    items = table.view(np.dtype((np.void, table.shape[1] * table.itemsize))).ravel()
    return np.take(items, rows, mode="clip").view(table.dtype).reshape(len(rows), table.shape[1])


def first_best_squares(scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The move of each row: the lowest of the empty squares with the highest score (chapter 3).

    Parameters
    ----------
    scores : (r, 9)
        The nine output pre-activations of each row.
    codes : (e, r) uint8
        Each row's ``e`` empty squares, coded as :func:`x_turn_square_codes` does.

    Returns
    -------
    (r,) uint8 squares.
    """
    # Only the e empty squares compete: gather their scores (row i's square s is entry 9 i + s of the
    # flat scores). Occupied squares never enter, so they need no masking.
    squares = codes & 15
    candidates = np.take(scores.reshape(-1), squares + np.arange(0, scores.size, 9), mode="clip")  # (e, r)
    # numpy's argmax along a short last axis works row by row, slowly; along the first axis the maximum is
    # e fast passes. Among the candidates that reach it, the highest code is the lowest square.
    best = candidates.max(axis=0)
    return ((candidates == best) * codes).max(axis=0) & 15


def _network_moves(negated: np.ndarray, codes: np.ndarray, blocks, output_weights: np.ndarray) -> np.ndarray:
    """X's moves in the batched engine, from hidden sums with their sign flipped (chapter 3).

    ``negated`` (shape ``(r, 11)``) holds ``b - W x`` for ``r`` boards, in the layout of
    :func:`engine_weights`; ``codes`` their empty squares (:func:`x_turn_square_codes`). The rows come in
    blocks (``blocks`` lists ``(networks, k)``, as :class:`BoardTable`): ``k`` rows for each network of the
    block in turn, one batched matrix product per block.
    """
    # sigmoid(x) = 1 / (1 + exp(-x)): the sums arrive as -x, and the rest happens in place.
    hidden = exp(negated)
    hidden += 1.0
    np.divide(1.0, hidden, out=hidden)
    scores = np.empty((len(negated), 9))  # output pre-activations; sigmoid is increasing, so we skip it
    start = 0
    for networks, k in blocks:
        rows = slice(start, start + len(networks) * k)
        weights = output_weights if len(networks) == len(output_weights) else np.take(output_weights, networks, axis=0)
        scores[rows] = fixed_matmul(hidden[rows].reshape(len(networks), k, ENGINE_UNITS), weights).reshape(-1, 9)
        start = rows.stop
    return first_best_squares(scores, codes)


@cache
def x_turn_numbers() -> tuple[np.ndarray, np.ndarray]:
    """Number the boards X can face at each of its turns, for grouping games by board (chapter 3).

    Returns ``(numbers, sizes)``: at X's turn ``t`` (0 to 3; ``2 t`` marks on the board), the unfinished
    boards with ``t`` marks of each kind are numbered ``0 .. sizes[t] - 1`` in ``numbers[t]``; every other
    board (the board of a finished game, for instance) gets ``sizes[t]``.
    """
    tables = board_tables()
    marks = 9 - tables.n_empty.astype(np.int64)
    numbers, sizes = np.empty((4, N_BOARDS), dtype=np.int32), np.empty(4, dtype=np.int64)
    for turn in range(4):
        faced = tables.legal & ~tables.over & (marks == 2 * turn)
        sizes[turn] = faced.sum()
        numbers[turn] = np.where(faced, np.cumsum(faced) - 1, sizes[turn])
    for array in (numbers, sizes):
        array.flags.writeable = False
    return numbers, sizes


@cache
def x_turn_square_codes() -> list[np.ndarray]:
    """The empty squares of every board X can face, by turn, for :func:`first_best_squares` (chapter 3).

    At X's turn ``t`` a board has ``e = 9 - 2 t`` empty squares. Table ``t`` has shape ``(e, sizes[t] + 1)``
    (:func:`x_turn_numbers`): column ``b`` lists the empty squares ``s_0 < s_1 < ...`` of board number ``b``,
    coded as ``16 * (e - j) + s_j`` in one byte. The low four bits are the square; the high ones rank the
    squares, the lowest first. The last column, for every other board, lists squares 0 to ``e - 1``.
    """
    tables = board_tables()
    numbers, sizes = x_turn_numbers()
    codes = []
    for turn in range(4):
        e = 9 - 2 * turn
        squares = np.tile(np.arange(e), (sizes[turn] + 1, 1))
        faced = numbers[turn] < sizes[turn]
        squares[numbers[turn][faced]] = tables.empty_list[faced, :e]
        table = np.ascontiguousarray((16 * (e - np.arange(e)) + squares).T.astype(np.uint8))
        table.flags.writeable = False
        codes.append(table)
    return codes


@dataclass(frozen=True)
class Endgame:
    """What X's fourth move decides, for every board X can face at that turn (chapter 3; explained in chapter 9).

    After X's fourth move at most two squares are empty, so the rule base's last move depends on its
    number only through two bits: whether it moves at random, and whether the fresh pick is at least 1/2
    (``floor(2 v)``; with one candidate the pick does not matter). Call ``2 * coin + (v >= 1/2)`` the
    game's *class* (0 to 3, :func:`endgame_class`). Board and class then fix the result of each square X
    may choose, and X's last move is forced.

    Attributes
    ----------
    outcome : (sizes[3] + 1, 4, 10) int8
        ``outcome[b, c, s]``: the result (+1, -1, 0) of the game on board number ``b`` (:func:`x_turn_numbers`,
        turn 3) of class ``c`` if X plays the empty square ``s``; entry 9 holds the result when every
        square gives the same one. Occupied squares, and the last row (finished games), hold 0.
    matters : (sizes[3] + 1, 4) bool
        Whether X's choice changes the result; False on the last row.
    board_to_evaluate : (4 * (sizes[3] + 1),) int32
        Entry ``4 b + c``: ``b`` if X's choice matters on board ``b`` in class ``c``, else ``sizes[3]``
        (the number of boards that get no evaluation, see :func:`distinct_boards`).
    """

    outcome: np.ndarray
    matters: np.ndarray
    board_to_evaluate: np.ndarray


def endgame_class(coin: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """The class (0 to 3) of O's last number: ``2 * coin + (pick >= 1/2)``, from :func:`split_uniform` (chapter 3).

    ``coin`` is 1 (or True) where O moves at random. See :class:`Endgame`.
    """
    return 2 * coin + (pick >= 0.5)


@cache
def endgame(rule_d_lines: str = "own") -> Endgame:
    """Build (once per reading of rule (d)) the :class:`Endgame` table (chapter 3)."""
    tables, steps = board_tables(), engine_steps(rule_d_lines)
    numbers, sizes = x_turn_numbers()
    faced = np.flatnonzero(numbers[3] < sizes[3])  # board indices; their numbers count up in this order
    outcome = np.zeros((sizes[3] + 1, 4, 10), dtype=np.int8)
    empty = tables.empty[faced]  # (boards, 9)
    # A pick of 1/4 or 3/4 stands for its class: with at most two choices, floor(v * count) is the same
    # for every pick in the same half.
    for c in range(4):
        coin, pick = c // 2, (0.25, 0.75)[c % 2]  # the inverse of endgame_class
        for s in range(9):
            after_x = faced + np.where(empty[:, s], POWERS_OF_3[s], 0)  # occupied squares: any valid board
            position = choice_positions(after_x, coin, pick, steps.o_counts)
            after_o = after_x + steps.o_steps[position]  # 0 if X has just won
            final = after_o + steps.last_x_steps[after_o]  # 0 if the game is already over
            outcome[:-1, c, s] = np.where(empty[:, s], tables.winner[final], 0)
    # The worst and the best result over the empty squares (occupied ones are left out of each).
    worst = np.where(empty[:, None, :], outcome[:-1, :, :9], 1).min(axis=-1)
    best = np.where(empty[:, None, :], outcome[:-1, :, :9], -1).max(axis=-1)
    matters = np.zeros((sizes[3] + 1, 4), dtype=bool)
    matters[:-1] = worst != best
    outcome[:-1, :, 9] = np.where(matters[:-1], 0, worst)
    board = np.arange(sizes[3] + 1, dtype=np.int32)[:, None]
    board_to_evaluate = np.where(matters, board, np.int32(sizes[3])).ravel()
    for array in (outcome, matters, board_to_evaluate):
        array.flags.writeable = False
    return Endgame(outcome, matters, board_to_evaluate)


@dataclass(frozen=True)
class BoardTable:
    """Each network's games grouped by board, for one X turn of the batched engine (chapter 3).

    The table has one row per distinct board of each network, plus padding. Networks with similar
    numbers of boards share a block: ``blocks`` lists ``(networks, k)``, and the block's rows hold ``k``
    rows for each of its networks in turn (a padding row repeats the network's first game). Blocks
    follow one another in the table.

    Attributes
    ----------
    game_row : (n, games)
        The table row of each game's board; ``len(source)``, one past the last row, for a skipped game.
    source : (rows,)
        One game (its flat position ``i * games + g``) on each row's board.
    network : (rows,)
        The network of each row.
    blocks : list of (networks, k)
    """

    game_row: np.ndarray
    source: np.ndarray
    network: np.ndarray
    blocks: list[tuple[np.ndarray, int]]


def block_sizes(counts: np.ndarray) -> list[int]:
    """Choose up to three padded sizes for networks with ``counts`` distinct boards (chapter 3).

    Each network is padded to the smallest chosen size at least its count. The largest size is the
    largest count; the other two (``a <= b``) minimise the total number of rows.
    """
    most = int(counts.max())
    at_most = np.cumsum(np.bincount(counts, minlength=most + 1))  # at_most[c]: networks with count <= c
    size = np.arange(most + 1)
    # rows[a, b]: at_most[a] networks padded to a, then to b, and the rest to the largest count.
    rows = (at_most * size)[:, None] + (at_most[None, :] - at_most[:, None]) * size + (len(counts) - at_most) * most
    rows[size[:, None] > size] = len(counts) * most + 1  # only a <= b: more rows than any choice gives
    a, b = divmod(int(np.argmin(rows)), most + 1)
    return sorted({a, b, most} - {0})


def distinct_boards(board_numbers: np.ndarray, size: int) -> BoardTable:
    """Group each network's games by board (chapter 3; used by the engine).

    Parameters
    ----------
    board_numbers : (n, games)
        Numbers up to ``size`` from :func:`x_turn_numbers`, equal for games on the same board; at most
        127 games per network (game numbers are stored in one byte). Games numbered ``size`` (finished
        games, for instance) get no row: their ``game_row`` is ``len(source)``.
    size
        The number of boards at this turn.

    Returns
    -------
    BoardTable
        Each row's source is the last game on its board: numpy's fancy assignment keeps the last of
        repeated writes.
    """
    n, games = board_numbers.shape
    if games > 127:
        raise ValueError(f"distinct_boards handles at most 127 games per network; got {games}")
    # Scatter then gather, in a table with a slice of size + 1 entries per network: every game on the
    # same board reads back the game number (within its network, one byte) that one of them wrote.
    slice_start = np.arange(0, n * (size + 1), size + 1)
    key = (slice_start[:, None] + board_numbers).ravel()
    game = np.tile(np.arange(games, dtype=np.int8), n)
    written = np.empty(n * (size + 1), dtype=np.int8)
    written[key] = game
    written[slice_start + size] = -1  # no game numbered `size` reads its own number back
    first = np.take(written, key, mode="clip")
    speaks = first == game  # the one game per board whose number was read back
    # Running count of such games over the whole batch (one flat cumsum): the rows of network i are
    # numbered by how many speaking games come before, counted from the network's start.
    running = np.cumsum(speaks, dtype=np.int32)  # int32: numpy sums booleans into int64 far more slowly
    ends = running[games - 1 :: games].astype(np.int64)
    counts = ends.copy()
    counts[1:] -= ends[:-1]
    # Networks without rows form a block of size 0.
    sizes = np.array([0, *block_sizes(counts[counts > 0])] if counts.any() else [0])
    block = np.searchsorted(sizes, counts)
    order = np.argsort(block, kind="stable")  # networks block by block
    k = sizes[block]
    k_in_order = k[order]
    row_start = np.empty(n, dtype=np.int64)
    row_start[order] = np.cumsum(k_in_order) - k_in_order
    # The row of a speaking game: its network's first row, plus the speaking games before it in the network.
    offset = row_start - (ends - counts) - 1
    representative = (np.arange(0, n * games, games)[:, None] + first.reshape(n, games)).ravel()
    game_row = offset[:, None] + np.take(running, representative, mode="clip").reshape(n, games)
    rows = int(k.sum())
    # A game numbered `size` read -1: its row so far is at most its network's first row, so below `rows`;
    # make it one past the last row. (np.maximum takes one even pass; a masked write would branch on every game.)
    np.maximum(game_row, (board_numbers == size) * rows, out=game_row)
    # Padding rows: the network's first game. Then every game writes its position on its row: games on
    # the same board write to the same row, and the last write stays. Games without a row write one past the end.
    source = np.empty(rows + 1, dtype=np.int64)
    source[:rows] = np.repeat(order * games, k_in_order)
    source[game_row.ravel()] = np.arange(n * games)
    stops = np.cumsum(np.bincount(block, minlength=len(sizes))).tolist()  # where each block's networks end
    blocks = [(order[start:stop], k) for start, stop, k in zip([0, *stops[:-1]], stops, sizes.tolist(), strict=True)
              if stop > start and k]  # fmt: skip
    return BoardTable(game_row, source[:rows], np.repeat(order, k_in_order), blocks)


def _x_turn(negated: np.ndarray, board: np.ndarray, turn: int, table: BoardTable, input_columns: np.ndarray,
            output_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """X's move on each row of ``table`` in the batched engine: the square, and the negated sums after it.

    ``negated`` holds the rows' sums (``b - W x``) and ``board`` their boards, numbered for X's ``turn``
    (:func:`x_turn_numbers`); the weights are those of :func:`engine_weights`. The sums after the move
    overwrite ``negated``. After X's fourth move (turn 3) no network move follows, so the sums are not
    needed (``None``).
    """
    codes = np.take(x_turn_square_codes()[turn], board, axis=1, mode="clip")
    moves = _network_moves(negated, codes, table.blocks, output_weights)
    if turn == 3:
        return moves, None
    negated -= take_rows(input_columns, 9 * table.network + moves)
    return moves, negated


def _first_x_moves(
    flat: Population, input_columns: np.ndarray, output_weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """X's first move on the empty board, for each network of a flat population (chapter 3).

    Returns the boards after it, shape ``(n, 1)``, and the negated sums on them, shape ``(n, 11)``.
    """
    n = flat.shape[0]
    every = np.arange(n)
    table = BoardTable(every[:, None], every, every, [(every, 1)])
    empty_board = np.full(n, x_turn_numbers()[0][0, 0])  # the empty board's number at turn 0
    moves, after_x = _x_turn(empty_board_negated_sums(flat), empty_board, 0, table, input_columns, output_weights)
    return np.take(POWERS_OF_3, moves, mode="clip")[:, None], after_x


@dataclass(frozen=True)
class Openings:
    """How each network's games begin when the rule base cycles its first reply (chapter 3; explained in chapter 9).

    The first three plies of the protocol use no random number: X's first move, O's reply on the
    ``g``-th square X left empty in games ``g``, ``g + 8``, ``g + 16`` and ``g + 24``, and X's second move.
    So they are the same every time a network is scored, and a network that survives as a parent can
    keep them instead of playing them again (:func:`generation_step`).

    Attributes
    ----------
    boards : B + (8,)
        The base-3 board after X's second move, one per first reply ``g``.
    negated_sums : B + (8, 11)
        The hidden sums on those boards with their sign flipped (``b - W x``), in the engine's layout.
    """

    boards: np.ndarray
    negated_sums: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """The batch shape ``B``."""
        return self.boards.shape[:-1]

    def take(self, index: np.ndarray) -> Openings:
        """The openings of the networks at ``index`` (shape ``B[:-1] + (k,)``), as :func:`take_networks`."""
        rows = batch_rows(self.shape, index)
        return Openings(np.take(self.boards.reshape(-1, 8), rows, axis=0),
                        np.take(self.negated_sums.reshape(-1, 8, ENGINE_UNITS), rows, axis=0))  # fmt: skip


def check_openings_apply(rules: OpponentRules, openings: Openings | None) -> None:
    """Raise ``ValueError`` if ``openings`` are given but the rule base does not cycle its first reply (chapter 3)."""
    if openings is not None and rules.first_reply != "cycle":
        raise ValueError("openings apply only when the rule base cycles its first reply (first_reply='cycle')")


def concatenate_openings(parts: Sequence[Openings]) -> Openings:
    """Join openings along the network axis, the last batch axis (chapter 3)."""
    return Openings(np.concatenate([p.boards for p in parts], axis=-2),
                    np.concatenate([p.negated_sums for p in parts], axis=-3))  # fmt: skip


def protocol_openings(population: Population) -> Openings:
    """Play the first three plies of every network's games under cycled first replies (chapter 3).

    The same arithmetic as :func:`play_protocol_batch`, which calls it unless it is given the openings.

    Parameters
    ----------
    population : Population with batch shape ``B``

    Returns
    -------
    Openings with batch shape ``B``
    """
    flat = population.reshape(-1)
    openings = _flat_openings(flat, *engine_weights(flat))
    return Openings(openings.boards.reshape(population.shape + (8,)),
                    openings.negated_sums.reshape(population.shape + (8, ENGINE_UNITS)))  # fmt: skip


def _flat_openings(flat: Population, input_columns: np.ndarray, output_weights: np.ndarray) -> Openings:
    """:func:`protocol_openings` of a flat population whose weights are already laid out (:func:`engine_weights`)."""
    n = flat.shape[0]
    steps = engine_steps()
    index, after_x = _first_x_moves(flat, input_columns, output_weights)
    # O: game g's first reply is X's g-th empty square, entry g of the board's empty-squares row (those
    # rows do not depend on the reading of rule (d), so the default tables serve every reading).
    o_position = 9 * (2 * index + 1) + np.arange(8)
    o_squares = np.take(steps.o_squares, o_position, mode="clip")
    index = index + np.take(steps.o_steps, o_position, mode="clip")
    # X: the eight boards of a network all differ, so each is a row of the table.
    every = np.arange(8 * n)
    network = every // 8
    table = BoardTable(every.reshape(n, 8), every, network, [(np.arange(n), 8)])
    o_columns = take_rows(input_columns, 9 * network + o_squares.ravel()).reshape(n, 8, ENGINE_UNITS)
    negated = after_x[:, None, :] + o_columns  # the board after X's first move, plus O's reply
    board = np.take(x_turn_numbers()[0][1], index, mode="clip").ravel()
    x_moves, after_x = _x_turn(negated.reshape(8 * n, ENGINE_UNITS), board, 1, table, input_columns, output_weights)
    index += np.take(POWERS_OF_3, x_moves, mode="clip").reshape(n, 8)
    return Openings(index, after_x.reshape(n, 8, ENGINE_UNITS))


def play_protocol_batch(
    population: Population, uniforms: np.ndarray, rules: OpponentRules = PAPER_RULES, openings: Openings | None = None
) -> np.ndarray:
    """Play the 32-game protocol for every network of a population at once (chapter 3; explained in chapter 9).

    ``population`` has batch shape ``B`` and ``uniforms`` shape ``B + (32, 4)``: the same numbers
    :func:`play_protocol` takes for each network. Returns the results (+1, -1, 0), shape ``B + (32,)``.
    With cycled first replies, ``openings`` (:func:`protocol_openings` of the same population) saves
    playing the first three plies again.

    All games advance together, one ply at a time, and every step is an array operation:

    * a game is its base-3 board index, and a move adds ``digit * 3**square`` to it. O's moves are read
      from tables (:func:`engine_steps`) that give 0 once the game is over, and a finished game skips
      X's turns. So finished games stand still;
    * with cycled first replies, the first three plies are each network's :class:`Openings`: eight
      boards, one evaluation each;
    * at X's later turns (all its turns if the first reply is random) a network's unfinished games are
      grouped by board (:func:`distinct_boards`) and the network is evaluated once per distinct board:
      the rule base often answers alike, so 32 games share far fewer boards; networks with similar
      numbers of boards are evaluated together, in blocks;
    * a board's hidden sums ``W x - b`` are those of the board X faced at its previous turn, plus the
      input-weight column of X's move, minus that of O's reply: row gathers instead of matrix products.
      (They are stored negated, ``b - W x``, so the code subtracts X's column and adds O's.);
    * X's fourth move decides the game: with at most two squares left, O's last number matters only
      through two bits, and the :func:`endgame` table gives the result of each square X may choose.
      Games where every square gives the same result need no evaluation; O's last move and X's last,
      forced move are never played out.
    """
    batch = population.shape
    flat = population.reshape(-1)
    n = flat.shape[0]
    expected = batch + (GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME)
    if np.shape(uniforms) != expected:
        raise ValueError(f"uniforms must have shape {expected} (networks, games, O moves); got {np.shape(uniforms)}")
    cycle = rules.first_reply == "cycle"
    check_openings_apply(rules, openings)
    if openings is not None and (openings.boards.shape != batch + (8,)
                                 or openings.negated_sums.shape != batch + (8, ENGINE_UNITS)):
        raise ValueError(f"openings must have batch shape {batch} (one per network); got {openings.shape}")
    u = np.asarray(uniforms).reshape(-1, GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME)
    # For every O move that uses its number (a cycled first reply does not): the 10% coin and the fresh
    # pick, each O move's numbers contiguous, shape (moves, n, 32).
    first_random = 1 if cycle else 0
    explore, pick = split_uniform(
        np.ascontiguousarray(np.moveaxis(u[:, :, first_random:], 2, 0)), rules.random_move_probability
    )
    explore = explore.astype(np.int64)  # 0 or 1, the row offset in the table of choices (no bool-int mixing)
    tables, steps, last_move = board_tables(), engine_steps(rules.rule_d_lines), endgame(rules.rule_d_lines)
    numbers, sizes = x_turn_numbers()
    input_columns, output_weights = engine_weights(flat)

    # Every lookup below is np.take with mode="clip": the indices are in range by construction, and numpy's
    # default mode, which checks each index so that it can raise, takes up to twice as long on small tables.
    # The games, shape (n, games): board index, and the row of the board X faced at its last turn in
    # that turn's BoardTable. Per table row: the hidden sums after X's move, negated (b - W x; see
    # _network_moves).
    if cycle:  # the first three plies are the openings: 8 games per network, one row each
        openings = _flat_openings(flat, input_columns, output_weights) if openings is None else openings
        index = openings.boards.reshape(n, 8).copy()
        after_x = openings.negated_sums.reshape(8 * n, ENGINE_UNITS)
        game_row, first_ply = np.arange(8 * n).reshape(n, 8), 3
    else:  # ply 0: one game per network, on the empty board
        index, after_x = _first_x_moves(flat, input_columns, output_weights)
        game_row, first_ply = np.arange(n)[:, None], 1
    for ply in range(first_ply, 7):
        if ply % 2 == 1:  # O, the rule base
            if index.shape[1] < GAMES_PER_EVALUATION:  # copy each game's state: game g continues game g % width
                reps = GAMES_PER_EVALUATION // index.shape[1]
                index, game_row = np.tile(index, (1, reps)), np.tile(game_row, (1, reps))
            move = ply // 2 - first_random
            o_position = choice_positions(index, explore[move], pick[move], steps.o_counts)
            index += np.take(steps.o_steps, o_position, mode="clip")
            continue
        # X, the network, once on each distinct board
        turn = ply // 2
        board = np.take(numbers[turn], index, mode="clip")
        if turn == 3:  # X's fourth move decides the game, given the class of O's last number (see Endgame)
            finished = board == sizes[turn]
            last = OPPONENT_MOVES_PER_GAME - 1 - first_random
            key = 4 * board + endgame_class(explore[last], pick[last])
            # Games whose result X's choice cannot change join the finished ones: board number sizes[3].
            board = np.take(last_move.board_to_evaluate, key, mode="clip")
        # Finished games (board number sizes[turn]) get no row: their game_row is one past the last row.
        table = distinct_boards(board, sizes[turn])
        negated = take_rows(after_x, np.take(game_row, table.source, mode="clip"))  # the board X faced last
        o_squares = np.take(steps.o_squares, np.take(o_position, table.source, mode="clip"), mode="clip")
        negated += take_rows(input_columns, 9 * table.network + o_squares)
        row_boards = np.take(board, table.source, mode="clip")
        x_moves, after_x = _x_turn(negated, row_boards, turn, table, input_columns, output_weights)
        game_row = table.game_row
        if turn < 3:
            row_steps = np.take(POWERS_OF_3, x_moves, mode="clip")
            index += np.take(row_steps, game_row, mode="clip")
    # Skipped games read entry 9 of their row of outcomes; finished ones keep their winner.
    square = np.take(np.append(x_moves, 9), game_row, mode="clip")
    results = np.take(last_move.outcome, 10 * key + square, mode="clip")
    np.copyto(results, np.take(tables.winner, index, mode="clip"), where=finished)
    return results.reshape(*batch, GAMES_PER_EVALUATION)
