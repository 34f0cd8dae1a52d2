"""Shared code for the book *Evolving Tic-Tac-Toe Networks: Fogel (1993) Rebuilt*.

Every function a chapter introduces lives here, once, in reading order: each section is headed by
the chapter that introduces it, and each public docstring says where that is. Later chapters import
from this module and never redefine what it holds.

Conventions used throughout
---------------------------
* A *board* is a length-9 sequence in row-major order (squares 0..8, top-left to bottom-right) with
  ``X = +1``, ``O = -1`` and ``EMPTY = 0``: the input encoding of Fogel (1993).
* X (the evolving network) always moves first.
* Every random function takes a :class:`numpy.random.Generator`; the same seed gives the same
  numbers, bit for bit.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

# =====================================================================================================
# Chapter 1: the game and its encoding (book/01_the_game.ipynb)
# =====================================================================================================

X, O, EMPTY = 1, -1, 0
"""Square values: the paper's input encoding (X = +1, O = -1, empty = 0)."""

SYMBOLS = {X: "X", O: "O", EMPTY: "."}
_SYMBOL_VALUES = {"X": X, "x": X, "O": O, "o": O, ".": EMPTY, "_": EMPTY, "-": EMPTY}

WIN_LINES = np.array(
    [
        [0, 1, 2], [3, 4, 5], [6, 7, 8],  # rows
        [0, 3, 6], [1, 4, 7], [2, 5, 8],  # columns
        [0, 4, 8], [2, 4, 6],  # diagonals
    ]
)  # fmt: skip
"""The eight winning lines, as square indices (introduced in chapter 1)."""


def check_board_values(board: Sequence[int] | np.ndarray) -> np.ndarray:
    """Return ``board`` as an int8 array after checking its length and values only.

    Introduced in chapter 1. Use :func:`validate_board` to also check that the board can arise in play.

    Raises
    ------
    ValueError
        If the board does not hold exactly 9 squares or holds a value other than -1, 0 or +1.
    """
    values = np.asarray(board)
    if values.shape != (9,):
        raise ValueError(
            f"a board must have exactly 9 squares (row-major, X=+1, O=-1, empty=0); got shape {values.shape}"
        )
    if values.dtype.kind not in "biuf":
        raise ValueError(f"board squares must be -1 (O), 0 (empty) or +1 (X); found non-numbers in {board!r}")
    if not ((values == X) | (values == O) | (values == EMPTY)).all():
        bad = sorted({v.item() for v in values if v not in (X, O, EMPTY)})
        raise ValueError(f"board squares must be -1 (O), 0 (empty) or +1 (X); found {bad}")
    return values.astype(np.int8)


def line_winners(board: np.ndarray) -> set[int]:
    """Return the set of players (X and/or O) that own a complete line on ``board`` (chapter 1)."""
    sums = np.asarray(board)[WIN_LINES].sum(axis=1)
    return {player for player in (X, O) if np.any(sums == 3 * player)}


def validate_board(board: Sequence[int] | np.ndarray) -> np.ndarray:
    """Check that ``board`` is a position that can arise in play and return it as an int8 array.

    Introduced in chapter 1. X moves first, so X has as many marks as O or one more; at most one
    player has a line; the player who completed a line made the last move.

    Raises
    ------
    ValueError
        Saying which rule the board breaks.
    """
    values = check_board_values(board)
    n_x, n_o = int(np.sum(values == X)), int(np.sum(values == O))
    if n_x not in (n_o, n_o + 1):
        raise ValueError(
            f"impossible piece counts: X has {n_x} and O has {n_o}; X moves first, so X must have as many "
            "marks as O or exactly one more"
        )
    owners = line_winners(values)
    if owners == {X, O}:
        raise ValueError("impossible board: both X and O have a complete line (two winners)")
    if owners == {X} and n_x != n_o + 1:
        raise ValueError("impossible board: X has a line, so X moved last and must have one more mark than O")
    if owners == {O} and n_x != n_o:
        raise ValueError("impossible board: O has a line, so O moved last and must have as many marks as X")
    return values


def board_from_string(text: str) -> np.ndarray:
    """Parse a board written as nine symbols (``X``, ``O`` and ``.``/``_``/``-`` for empty) (chapter 1).

    Whitespace and ``/`` are ignored, so ``"XO. .XO ..."`` and ``"XO./.XO/..."`` are the same board.
    The board is validated with :func:`validate_board`.
    """
    symbols = [c for c in text if not c.isspace() and c != "/"]
    unknown = sorted({c for c in symbols if c not in _SYMBOL_VALUES})
    if unknown:
        raise ValueError(f"unknown board symbols {unknown}; use X, O and . (or _ or -) for empty")
    return validate_board([_SYMBOL_VALUES[c] for c in symbols])


def board_to_string(board: Sequence[int] | np.ndarray, sep: str = " ") -> str:
    """Write a board as three rows of symbols joined by ``sep``; inverse of :func:`board_from_string` (chapter 1)."""
    values = check_board_values(board)
    rows = ["".join(SYMBOLS[int(v)] for v in values[r * 3 : r * 3 + 3]) for r in range(3)]
    return sep.join(rows)


def network_input(board: Sequence[int] | np.ndarray) -> np.ndarray:
    """The paper's input vector for a board: a float array with X = 1.0, O = -1.0, empty = 0.0 (chapter 1)."""
    return validate_board(board).astype(float)


def winner(board: Sequence[int] | np.ndarray) -> int:
    """Return ``X`` (+1) or ``O`` (-1) if that player has a line on a legal board, else ``EMPTY`` (0) (chapter 1)."""
    owners = line_winners(validate_board(board))
    return owners.pop() if owners else EMPTY


def is_game_over(board: Sequence[int] | np.ndarray) -> bool:
    """True when a player has a line or the board is full (chapter 1)."""
    values = validate_board(board)
    return bool(line_winners(values)) or not np.any(values == EMPTY)


def is_draw(board: Sequence[int] | np.ndarray) -> bool:
    """True when the board is full and nobody has a line (chapter 1)."""
    values = validate_board(board)
    return not line_winners(values) and not np.any(values == EMPTY)


def player_to_move(board: Sequence[int] | np.ndarray) -> int:
    """``X`` when both players have the same number of marks, else ``O`` (chapter 1)."""
    values = validate_board(board)
    return X if np.sum(values == X) == np.sum(values == O) else O


def check_mark(mark: int) -> int:
    """Return ``mark`` if it is ``X`` (+1) or ``O`` (-1), else raise ``ValueError`` (chapter 1)."""
    if isinstance(mark, bool) or not isinstance(mark, (int, np.integer)) or mark not in (X, O):
        raise ValueError(f"mark must be X (+1) or O (-1); got {mark!r}")
    return int(mark)


def legal_moves(board: Sequence[int] | np.ndarray) -> list[int]:
    """The empty squares, in increasing order; no moves once the game is over (chapter 1)."""
    values = validate_board(board)
    if line_winners(values):
        return []
    return [int(s) for s in np.flatnonzero(values == EMPTY)]


def play(board: Sequence[int] | np.ndarray, square: int) -> np.ndarray:
    """Return a new board with the player to move's mark on ``square`` (chapter 1).

    Raises
    ------
    ValueError
        If the square is not an integer 0..8, is occupied, or the game is already over.
    """
    values = validate_board(board)
    if isinstance(square, bool) or not isinstance(square, (int, np.integer)) or not 0 <= square <= 8:
        raise ValueError(f"a move must be a square index 0..8; got {square!r}")
    empty = values == EMPTY
    if line_winners(values) or not empty.any():
        raise ValueError(f"the game is already over on board {board_to_string(values, '/')}; no more moves")
    if not empty[square]:
        raise ValueError(
            f"square {square} is occupied by {SYMBOLS[int(values[square])]}; "
            f"empty squares are {[int(s) for s in np.flatnonzero(empty)]}"
        )
    after = values.copy()
    after[square] = X if np.sum(values == X) == np.sum(values == O) else O
    return after


def board_to_text(board: Sequence[int] | np.ndarray) -> str:
    """A three-line picture of the board with grid lines, for printing (chapter 1)."""
    values = check_board_values(board)
    rows = [" " + " | ".join(SYMBOLS[int(v)] for v in values[r * 3 : r * 3 + 3]) for r in range(3)]
    return "\n---+---+---\n".join(rows)


def draw_board(
    board: Sequence[int] | np.ndarray,
    ax=None,
    *,
    xy: tuple[float, float] = (0.0, 0.0),
    size: float = 1.0,
    move_order: Sequence[int] | None = None,
    frame_color: str | None = None,
    title: str | None = None,
    fit: bool = True,
):
    """Draw a board as a small picture on a matplotlib axes (chapter 1; reused for trees of games).

    Parameters
    ----------
    board
        The board to draw.
    ax
        Axes to draw on; a new 1.6-inch figure is made when omitted.
    xy, size
        Lower-left corner and side length of the board in data coordinates, so that many boards can be
        placed on one axes (the trees of games in later chapters).
    move_order
        Optional sequence of squares in the order they were played; each mark then gets its move number
        as a subscript, as in Fogel's Figure 3.
    frame_color
        Optional colour of a frame around the board (used to mark wins, draws and losses).
    title
        Optional text under the board.
    fit
        Set the axes' limits to this board, with equal aspect and no axis lines. Turn it off to place
        many boards on one axes; then set the limits first, because marks are sized from the axes' scale.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    values = check_board_values(board)
    if ax is None:
        _, ax = plt.subplots(figsize=(1.6, 1.6 + (0.3 if title else 0)))
    x0, y0 = xy
    if fit:
        margin = 0.05 * size
        ax.set_xlim(x0 - margin, x0 + size + margin)
        ax.set_ylim(y0 - margin - (0.2 * size if title else 0), y0 + size + margin)
        ax.set_aspect("equal")
        ax.axis("off")
    # Marks are sized in points from the axes' scale, so that a board looks the same at any size.
    ax.apply_aspect()
    left, _ = ax.transData.transform((0.0, 0.0))
    right, _ = ax.transData.transform((1.0, 0.0))
    cell = size / 3
    cell_points = abs(right - left) * 72.0 / ax.figure.dpi * cell
    line_width = max(0.3, 0.035 * cell_points)
    for k in (1, 2):
        ax.plot([x0 + k * cell] * 2, [y0, y0 + size], color="0.3", lw=line_width)
        ax.plot([x0, x0 + size], [y0 + k * cell] * 2, color="0.3", lw=line_width)
    if frame_color is not None:
        ax.add_patch(plt.Rectangle((x0, y0), size, size, fill=False, edgecolor=frame_color, lw=2.5 * line_width))
    order = {int(s): i + 1 for i, s in enumerate(move_order)} if move_order is not None else {}
    font = 0.62 * cell_points
    for square in range(9):
        if values[square] == EMPTY:
            continue
        row, col = divmod(square, 3)
        cx, cy = x0 + (col + 0.45) * cell, y0 + size - (row + 0.5) * cell
        color = "tab:blue" if values[square] == X else "tab:red"
        ax.text(cx, cy, SYMBOLS[int(values[square])], ha="center", va="center", fontsize=font, color=color,
                fontweight="bold")  # fmt: skip
        if square in order:
            ax.text(cx + 0.33 * cell, cy - 0.25 * cell, str(order[square]), ha="center", va="center",
                    fontsize=0.42 * font, color=color)  # fmt: skip
    if title:
        ax.text(x0 + size / 2, y0 - 0.06 * size, title, ha="center", va="top", fontsize=max(6.0, 0.3 * cell_points))
    return ax


@dataclass(frozen=True)
class GameCounts:
    """Counts of complete games of tic-tac-toe (chapter 1)."""

    games: int
    x_wins: int
    o_wins: int
    draws: int


def reachable_positions() -> list[np.ndarray]:
    """Every position that can arise in play, from the empty board on, in breadth-first order (chapter 1).

    Finished positions are included; nothing is played after a win.
    """
    start = np.zeros(9, dtype=np.int8)
    seen = {start.tobytes()}
    frontier, positions = [start], [start]
    while frontier:
        next_frontier = []
        for board in frontier:
            for square in legal_moves(board):
                child = play(board, square)
                key = child.tobytes()
                if key not in seen:
                    seen.add(key)
                    next_frontier.append(child)
        positions.extend(next_frontier)
        frontier = next_frontier
    return positions


def count_games() -> GameCounts:
    """Count every complete game from the empty board by a memoized walk over positions (chapter 1).

    Two games are different when their move sequences differ, even if they end on the same board.
    """

    @cache
    def from_position(key: bytes) -> tuple[int, int, int]:
        board = np.frombuffer(key, dtype=np.int8)
        won = line_winners(board)
        if won:
            return (1, 0, 0) if X in won else (0, 1, 0)
        moves = legal_moves(board)
        if not moves:
            return (0, 0, 1)
        totals = [0, 0, 0]
        for square in moves:
            for i, n in enumerate(from_position(play(board, square).tobytes())):
                totals[i] += n
        return tuple(totals)

    x_wins, o_wins, draws = from_position(np.zeros(9, dtype=np.int8).tobytes())
    return GameCounts(games=x_wins + o_wins + draws, x_wins=x_wins, o_wins=o_wins, draws=draws)


# --- The fast representation: a board as a base-3 number --------------------------------------------
# Square s contributes digit * 3**s, with digit 0 for empty, 1 for X and 2 for O. Conveniently the
# digit is just ``value % 3`` (Python and numpy map -1 to 2), so the index is one dot product.

N_BOARDS = 3**9
"""Number of boards with any mix of X, O and empty: 3**9 = 19,683 (chapter 1)."""

POWERS_OF_3 = 3 ** np.arange(9)
"""Place value of each square in the base-3 index (chapter 1)."""

MARK_DIGIT = {X: 1, O: 2}
"""Base-3 digit of each mark; playing ``mark`` on ``square`` adds ``MARK_DIGIT[mark] * 3**square`` (chapter 1)."""


def board_index(boards: Sequence[int] | np.ndarray) -> int | np.ndarray:
    """Base-3 index of one board (an ``int``) or of an array of boards with shape ``(..., 9)`` (chapter 1)."""
    values = np.asarray(boards)
    if values.shape[-1:] != (9,):
        raise ValueError(f"boards must have 9 squares in the last axis; got shape {values.shape}")
    index = (values.astype(np.int64) % 3) @ POWERS_OF_3
    return int(index) if values.ndim == 1 else index


def board_from_index(index: int | np.ndarray) -> np.ndarray:
    """The board(s) with the given base-3 index, shape ``(..., 9)``; inverse of :func:`board_index` (chapter 1)."""
    index = np.asarray(index)
    if np.any((index < 0) | (index >= N_BOARDS)):
        raise ValueError(f"board indices run from 0 to {N_BOARDS - 1}")
    digits = (index[..., None] // POWERS_OF_3) % 3
    return np.where(digits == 2, O, digits).astype(np.int8)


@dataclass(frozen=True)
class BoardTables:
    """Lookup tables over all 19,683 base-3 board indices, built once (chapter 1).

    Attributes
    ----------
    boards : (19683, 9) int8
        The board of every index.
    winner : (19683,) int8
        +1 if X has a line, -1 if O has a line, 0 otherwise (boards with two winners get 0; they are illegal).
    legal : (19683,) bool
        Whether the board can arise in play.
    to_move : (19683,) int8
        The player to move (X when the counts are equal, O otherwise) on legal boards.
    over : (19683,) bool
        Whether the game is finished (a line, or a full board).
    empty : (19683, 9) bool
        Which squares are empty.
    n_empty : (19683,) int8
        How many squares are empty.
    empty_list : (19683, 9) int8
        The empty squares in increasing order, padded with -1; ``empty_list[i, k]`` is the k-th empty
        square of board ``i``.
    """

    boards: np.ndarray
    winner: np.ndarray
    legal: np.ndarray
    to_move: np.ndarray
    over: np.ndarray
    empty: np.ndarray
    n_empty: np.ndarray
    empty_list: np.ndarray


def squares_to_list(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Turn a ``(n, 9)`` boolean mask into ``(list, count)``: True squares in order, padded with -1 (chapter 1).

    A stable argsort of ``~mask`` puts the True squares first, in order: that is the whole trick.
    """
    order = np.argsort(~mask, axis=1, kind="stable").astype(np.int8)
    count = mask.sum(axis=1).astype(np.int8)
    return np.where(np.arange(9) < count[:, None], order, -1).astype(np.int8), count


@cache
def board_tables() -> BoardTables:
    """Build (once) and return the :class:`BoardTables` (chapter 1)."""
    boards = board_from_index(np.arange(N_BOARDS))
    line_sums = boards[:, WIN_LINES].sum(axis=2)  # (19683, 8)
    x_line, o_line = np.any(line_sums == 3, axis=1), np.any(line_sums == -3, axis=1)
    n_x, n_o = (boards == X).sum(axis=1), (boards == O).sum(axis=1)
    legal = ((n_x == n_o) | (n_x == n_o + 1)) & ~(x_line & o_line)
    legal &= ~x_line | (n_x == n_o + 1)
    legal &= ~o_line | (n_x == n_o)
    winner_of = np.where(x_line & ~o_line, X, np.where(o_line & ~x_line, O, EMPTY)).astype(np.int8)
    empty = boards == EMPTY
    empty_list, n_empty = squares_to_list(empty)
    tables = BoardTables(
        boards=boards,
        winner=winner_of,
        legal=legal,
        to_move=np.where(n_x == n_o, X, O).astype(np.int8),
        over=x_line | o_line | (n_empty == 0),
        empty=empty,
        n_empty=n_empty,
        empty_list=empty_list,
    )
    for array in vars(tables).values():
        array.flags.writeable = False
    return tables


# =====================================================================================================
# Chapter 2: the network (book/02_the_network.ipynb)
# =====================================================================================================

MIN_HIDDEN, MAX_HIDDEN = 1, 10
"""Bounds on the number of hidden nodes H (chapter 2)."""

INITIAL_WEIGHT_RANGE = 0.5
"""Initial weights and biases are uniform on [-0.5, 0.5] (chapter 2)."""


def sigmoid(x: np.ndarray | float) -> np.ndarray:
    """The logistic function 1 / (1 + exp(-x)) used by every hidden and output node (chapter 2)."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


@dataclass(frozen=True)
class Network:
    """A 9-H-9 perceptron as in Fogel (1993) (chapter 2).

    Each node computes ``sigmoid(weights @ inputs - bias)``: the bias is *subtracted*, as in the paper.

    Attributes
    ----------
    hidden_weights : (H, 9) array
        Weight from input square ``s`` to hidden node ``j`` is ``hidden_weights[j, s]``.
    hidden_bias : (H,) array
    output_weights : (9, H) array
        Weight from hidden node ``j`` to output square ``s`` is ``output_weights[s, j]``.
    output_bias : (9,) array
    """

    hidden_weights: np.ndarray
    hidden_bias: np.ndarray
    output_weights: np.ndarray
    output_bias: np.ndarray

    def __post_init__(self) -> None:
        arrays = {}
        for name in ("hidden_weights", "hidden_bias", "output_weights", "output_bias"):
            array = np.array(getattr(self, name), dtype=float)
            if not np.all(np.isfinite(array)):
                raise ValueError(f"{name} must be finite numbers")
            array.flags.writeable = False
            arrays[name] = array
            object.__setattr__(self, name, array)
        hidden = arrays["hidden_weights"].shape[0] if arrays["hidden_weights"].ndim == 2 else -1
        check_hidden_count(hidden, "hidden_weights.shape[0]")
        expected = {
            "hidden_weights": (hidden, 9),
            "hidden_bias": (hidden,),
            "output_weights": (9, hidden),
            "output_bias": (9,),
        }
        for name, shape in expected.items():
            if arrays[name].shape != shape:
                raise ValueError(f"{name} must have shape {shape} for H={hidden}; got {arrays[name].shape}")

    @property
    def hidden_count(self) -> int:
        """The number of hidden nodes H."""
        return self.hidden_weights.shape[0]


def check_hidden_count(hidden: int, name: str = "hidden") -> int:
    """Raise ``ValueError`` naming ``name`` unless ``hidden`` is an integer from 1 to 10 (chapter 2)."""
    if isinstance(hidden, bool) or not isinstance(hidden, (int, np.integer)) or not MIN_HIDDEN <= hidden <= MAX_HIDDEN:
        raise ValueError(
            f"{name} must be a whole number of hidden nodes from {MIN_HIDDEN} to {MAX_HIDDEN}; got {hidden!r}"
        )
    return int(hidden)


def network_preactivations(network: Network, board: Sequence[int] | np.ndarray, mark: int = X) -> np.ndarray:
    """The nine output nodes' weighted sums minus their biases, before the output sigmoid (chapter 2).

    The network was evolved as X. With ``mark=O`` it sees the board with X and O swapped (its own marks
    as +1), which is how it plays O (chapter 14).
    """
    inputs = check_mark(mark) * network_input(board)
    hidden = sigmoid(network.hidden_weights @ inputs - network.hidden_bias)
    return network.output_weights @ hidden - network.output_bias


def network_outputs(network: Network, board: Sequence[int] | np.ndarray, mark: int = X) -> np.ndarray:
    """The nine output strengths of ``network`` for ``board``: sigmoids of the pre-activations (chapter 2)."""
    return sigmoid(network_preactivations(network, board, mark))


def network_move(network: Network, board: Sequence[int] | np.ndarray, mark: int = X) -> int:
    """The empty square with the largest output; ties go to the lowest square index (chapter 2).

    Outputs of occupied squares are ignored, so the move is always legal. ``mark=O`` plays O with the
    board's colours swapped (chapter 14).

    Raises
    ------
    ValueError
        If the game on ``board`` is over (there is no move to make).
    """
    moves = legal_moves(board)
    if not moves:
        raise ValueError("the game is over on this board; the network has no move to make")
    # The sigmoid is increasing, so the largest output has the largest pre-activation. Comparing
    # pre-activations gives the same move without ties that rounding creates when outputs near 1.0.
    strengths = network_preactivations(network, board, mark)
    return moves[int(np.argmax(strengths[moves]))]  # argmax returns the first (lowest) of tied maxima


# --- A whole population at once -------------------------------------------------------------------
# Every network is padded to MAX_HIDDEN hidden slots. An unused slot has zero input weights, zero
# bias and zero output weights: its activation is sigmoid(0) = 0.5, but it reaches no output, so the
# padded network computes exactly what the small one does. Then a population is a handful of
# regular arrays and one batched matrix product evaluates all of it.


@dataclass(frozen=True)
class Population:
    """Many networks padded to 10 hidden slots, stacked along leading batch axes (chapter 2).

    With batch shape ``B`` (for instance ``(n,)`` or ``(trials, n)``):

    Attributes
    ----------
    hidden_weights : B + (10, 9)
    hidden_bias : B + (10,)
    output_weights : B + (9, 10)
    output_bias : B + (9,)
    hidden_count : B, int
        Network ``i`` uses hidden slots ``0 .. hidden_count[i] - 1``; the others are held at zero.
    """

    hidden_weights: np.ndarray
    hidden_bias: np.ndarray
    output_weights: np.ndarray
    output_bias: np.ndarray
    hidden_count: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """The batch shape."""
        return self.hidden_count.shape

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> Population:
        """Index or slice the batch axes (the result is again a Population)."""
        return Population(*(np.asarray(a[key]) for a in self.arrays()))

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The five arrays, in field order."""
        return (self.hidden_weights, self.hidden_bias, self.output_weights, self.output_bias, self.hidden_count)

    def reshape(self, *shape: int) -> Population:
        """The same networks with a new batch shape."""
        tails = ((10, 9), (10,), (9, 10), (9,), ())
        return Population(*(a.reshape(*shape, *t) for a, t in zip(self.arrays(), tails, strict=False)))

    def network(self, index) -> Network:
        """Network ``index`` of the batch, unpadded."""
        hidden = int(self.hidden_count[index])
        return Network(
            hidden_weights=self.hidden_weights[index][:hidden],
            hidden_bias=self.hidden_bias[index][:hidden],
            output_weights=self.output_weights[index][:, :hidden],
            output_bias=self.output_bias[index],
        )


def hidden_slot_mask(hidden_count: np.ndarray) -> np.ndarray:
    """Boolean mask of used hidden slots, shape ``hidden_count.shape + (10,)`` (chapter 2)."""
    return np.arange(MAX_HIDDEN) < np.asarray(hidden_count)[..., None]


def stack_networks(networks: Iterable[Network]) -> Population:
    """Pad a sequence of networks to 10 hidden slots and stack them into a population (chapter 2)."""
    networks = list(networks)
    n = len(networks)
    population = Population(
        hidden_weights=np.zeros((n, MAX_HIDDEN, 9)),
        hidden_bias=np.zeros((n, MAX_HIDDEN)),
        output_weights=np.zeros((n, 9, MAX_HIDDEN)),
        output_bias=np.zeros((n, 9)),
        hidden_count=np.array([net.hidden_count for net in networks], dtype=np.int64),
    )
    for i, net in enumerate(networks):
        h = net.hidden_count
        population.hidden_weights[i, :h] = net.hidden_weights
        population.hidden_bias[i, :h] = net.hidden_bias
        population.output_weights[i, :, :h] = net.output_weights
        population.output_bias[i] = net.output_bias
    return population


def concatenate_populations(populations: Sequence[Population], axis: int = 0) -> Population:
    """Join populations along a batch axis (negative axes count from the last batch axis) (chapter 2)."""
    axis = axis % len(populations[0].shape)
    return Population(
        *(np.concatenate(group, axis=axis) for group in zip(*(p.arrays() for p in populations), strict=False))
    )


def check_count(value: int, name: str, minimum: int = 1) -> int:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a whole number >= ``minimum`` (chapter 2)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}; got {value!r}")
    return int(value)


def random_population(rng: np.random.Generator, size: int) -> Population:
    """``size`` random networks as in the paper's initial population (chapter 2).

    H is uniform on {1, ..., 10}; every used weight and bias is uniform on [-0.5, 0.5].
    """
    size = check_count(size, "size")
    hidden_count = rng.integers(MIN_HIDDEN, MAX_HIDDEN + 1, size=size)
    slots = hidden_slot_mask(hidden_count)  # (size, 10)

    def uniform(shape):
        return rng.uniform(-INITIAL_WEIGHT_RANGE, INITIAL_WEIGHT_RANGE, size=(size, *shape))

    return Population(
        hidden_weights=uniform((MAX_HIDDEN, 9)) * slots[:, :, None],
        hidden_bias=uniform((MAX_HIDDEN,)) * slots,
        output_weights=uniform((9, MAX_HIDDEN)) * slots[:, None, :],
        output_bias=uniform((9,)),
        hidden_count=hidden_count,
    )


def random_network(rng: np.random.Generator) -> Network:
    """One random network of the paper's initial population (chapter 2)."""
    return random_population(rng, 1).network(0)


def population_preactivations(population: Population, boards: np.ndarray) -> np.ndarray:
    """Output pre-activations (weighted sums minus biases, before the sigmoid) for a batch (chapter 2).

    ``boards`` has shape ``population.shape + (games, 9)``: each network gets its own boards. The
    result has the same shape. Two batched matrix products do all the work.
    """
    inputs = np.asarray(boards, dtype=float)
    hidden = sigmoid(inputs @ np.swapaxes(population.hidden_weights, -1, -2) - population.hidden_bias[..., None, :])
    return hidden @ np.swapaxes(population.output_weights, -1, -2) - population.output_bias[..., None, :]


def population_outputs(population: Population, boards: np.ndarray) -> np.ndarray:
    """Output strengths for a batch: ``sigmoid`` of :func:`population_preactivations` (chapter 2)."""
    return sigmoid(population_preactivations(population, boards))


def population_moves(population: Population, boards: np.ndarray) -> np.ndarray:
    """Moves of every network on its boards (ties: lowest square), shape ``population.shape + (games,)`` (chapter 2).

    The sigmoid is increasing, so the largest output belongs to the largest pre-activation: the batched
    move skips the output sigmoid (and its ``exp``) and takes the argmax of the pre-activations.
    Boards with no empty square get move -1.
    """
    boards = np.asarray(boards)
    scores = np.where(boards == EMPTY, population_preactivations(population, boards), -np.inf)
    moves = np.argmax(scores, axis=-1)
    return np.where(np.any(boards == EMPTY, axis=-1), moves, -1)


# =====================================================================================================
# Chapter 3: the near-perfect opponent (book/03_the_opponent.ipynb)
# =====================================================================================================

GAMES_PER_EVALUATION = 32
"""Each network plays four sets of eight games (chapter 3)."""

OPPONENT_MOVES_PER_GAME = 4
"""O moves at most four times in a game (plies 2, 4, 6 and 8) (chapter 3)."""


def check_probability(value: float, name: str) -> float:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a number in [0, 1] (chapter 3)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a probability in [0, 1]; got {value!r}")
    return float(value)


@dataclass(frozen=True)
class OpponentRules:
    """The settings of the rule-based opponent (chapter 3).

    Attributes
    ----------
    random_move_probability
        Chance of step (a), a move to a uniformly random empty square: 0.1 in the paper.
    rule_d_lines
        Step (d) moves into a line that holds one mark and two empty squares. ``"own"`` (the default,
        the paper's reading): the mark is an O, the opponent's own. ``"opponent"``: the mark is an X,
        as the textbook restatement and published student reimplementations read it.
    first_reply
        ``"cycle"`` (the default, the paper's protocol): in every set of eight games O's first reply
        visits each of the eight squares X left empty once, with no random move. ``"rules"``: O's first
        reply is chosen by steps (a)-(e) like every later move.
    """

    random_move_probability: float = 0.1
    rule_d_lines: str = "own"
    first_reply: str = "cycle"

    def __post_init__(self) -> None:
        check_probability(self.random_move_probability, "random_move_probability")
        if self.rule_d_lines not in ("own", "opponent"):
            raise ValueError(f"rule_d_lines must be 'own' or 'opponent'; got {self.rule_d_lines!r}")
        if self.first_reply not in ("cycle", "rules"):
            raise ValueError(f"first_reply must be 'cycle' or 'rules'; got {self.first_reply!r}")


PAPER_RULES = OpponentRules()
"""The opponent exactly as Fogel (1993) describes it (chapter 3)."""


def rule_candidates(board: Sequence[int] | np.ndarray, rules: OpponentRules = PAPER_RULES, mark: int = O) -> list[int]:
    """The squares steps (b)-(e) of the rule base allow O on ``board``, in increasing order (chapter 3).

    (b) squares that complete a line of O's; else (c) squares that block a line of two X's; else
    (d) the empty squares of lines holding one mark (an O, or an X with ``rule_d_lines="opponent"``)
    and two empty squares; else (e) every empty square. O picks uniformly among the candidates.
    With ``mark=X`` the same rules play X, with the roles of the marks swapped (chapter 14).

    Raises
    ------
    ValueError
        If the board is not legal or it is not ``mark``'s turn in a game still going on.
    """
    values = validate_board(board)
    if player_to_move(values) != check_mark(mark) or is_game_over(values):
        raise ValueError(
            f"the rule base plays {SYMBOLS[mark]} here: it needs a board where {SYMBOLS[mark]} is to move "
            "and the game is not over"
        )
    d_mark = mark if rules.rule_d_lines == "own" else -mark
    steps = [[], [], []]  # (b) win, (c) block, (d) develop a line
    for line in WIN_LINES:
        marks = list(values[line])
        gaps = [int(s) for s in line if values[s] == EMPTY]
        if marks.count(mark) == 2 and len(gaps) == 1:
            steps[0] += gaps
        if marks.count(-mark) == 2 and len(gaps) == 1:
            steps[1] += gaps
        if marks.count(d_mark) == 1 and len(gaps) == 2:
            steps[2] += gaps
    for squares in steps:
        if squares:
            return sorted(set(squares))
    return legal_moves(values)  # (e)


def split_uniform(u: np.ndarray | float, probability: float) -> tuple[np.ndarray, np.ndarray]:
    """Use one uniform number for a coin flip and a fresh uniform pick (chapter 3).

    Returns ``(heads, v)``: ``heads = u < probability`` and ``v``, the position of ``u`` inside the
    part of [0, 1) it fell in, rescaled to [0, 1). ``v`` is uniform and independent of ``heads``, so
    one random number per O move decides both whether O moves at random and where it moves.
    """
    u = np.asarray(u, dtype=float)
    heads = u < probability
    if probability in (0.0, 1.0):  # one side is empty: u itself is the fresh pick
        return heads, u
    return heads, np.where(heads, u / probability, (u - probability) / (1.0 - probability))


def uniform_index(u: np.ndarray | float, count: np.ndarray | int) -> np.ndarray:
    """``floor(u * count)`` for uniform ``u`` in [0, 1): a uniform choice among ``count`` items (chapter 3).

    Clipped to ``count - 1``, because rounding can make ``u * count`` equal ``count`` for ``u`` just
    below 1. Every random pick in the book goes through here, so the readable and the batched code
    choose alike.
    """
    count = np.asarray(count, dtype=np.int64)
    return np.minimum((np.asarray(u) * count).astype(np.int64), count - 1)


def pick_uniform(squares: np.ndarray, count: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Pick ``squares[..., floor(v * count)]``: a uniform choice among the first ``count`` entries (chapter 3)."""
    k = uniform_index(v, count)
    return np.take_along_axis(np.asarray(squares), k[..., None], axis=-1)[..., 0]


def near_perfect_move_given(
    board: Sequence[int] | np.ndarray, u: float, rules: OpponentRules = PAPER_RULES, mark: int = O
) -> int:
    """The rule base's move on ``board`` given its uniform random number ``u`` in [0, 1) (chapter 3).

    With probability ``rules.random_move_probability`` (``u`` below it) the move is a random empty
    square (step a); otherwise it is a random choice among :func:`rule_candidates`. ``mark=X`` lets the
    rule base play X (chapter 14).
    """
    explore, v = split_uniform(u, rules.random_move_probability)
    squares = legal_moves(board) if explore else rule_candidates(board, rules, mark)
    if not squares:
        raise ValueError("the game is over on this board; the rule base has no move to make")
    return int(pick_uniform(np.array(squares), np.array(len(squares)), v))


def near_perfect_move(
    board: Sequence[int] | np.ndarray, rng: np.random.Generator, rules: OpponentRules = PAPER_RULES, mark: int = O
) -> int:
    """The rule base's move on ``board``, drawing its one uniform number from ``rng`` (chapter 3)."""
    return near_perfect_move_given(board, rng.random(), rules, mark)


Player = Callable[[np.ndarray], int]
"""A player of X: a function from a board to the square it plays (chapter 3)."""


def first_reply_square(board: np.ndarray, game: int) -> int:
    """O's first reply in game ``game`` of the protocol under the paper's cycling rule (chapter 3).

    Game ``g`` answers with the ``(g mod 8)``-th empty square in increasing order, so each set of eight
    games tries each of the eight replies once.
    """
    return legal_moves(board)[game % 8]


def play_game(
    player: Player,
    opponent_uniforms: Sequence[float],
    rules: OpponentRules = PAPER_RULES,
    game: int = 0,
) -> tuple[int, list[int]]:
    """Play one game of ``player`` (X) against the rule base (O): the readable, one-move-at-a-time loop (chapter 3).

    Parameters
    ----------
    player
        X's policy: board -> square.
    opponent_uniforms
        Four uniform numbers in [0, 1), one for each O move (the first is unused when the first reply cycles).
    rules
        The opponent's settings.
    game
        Index of the game in the 32-game protocol (chooses the cycled first reply).

    Returns
    -------
    (result, moves)
        ``result`` is +1 if X wins, -1 if O wins, 0 for a draw; ``moves`` lists the squares played.
    """
    board = np.zeros(9, dtype=np.int8)
    moves: list[int] = []
    o_moves = 0
    while not is_game_over(board):
        if player_to_move(board) == X:
            square = player(board)
        elif o_moves == 0 and rules.first_reply == "cycle":
            square = first_reply_square(board, game)
            o_moves += 1
        else:
            square = near_perfect_move_given(board, opponent_uniforms[o_moves], rules)
            o_moves += 1
        board = play(board, square)
        moves.append(square)
    return winner(board), moves


def play_protocol(player: Player, uniforms: np.ndarray, rules: OpponentRules = PAPER_RULES) -> np.ndarray:
    """Results (+1, -1, 0) of the 32 games of one evaluation, with ``uniforms`` of shape (32, 4) (chapter 3)."""
    uniforms = np.asarray(uniforms)
    if uniforms.shape != (GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME):
        raise ValueError(f"uniforms must have shape (32, 4); got {uniforms.shape}")
    return np.array([play_game(player, uniforms[g], rules, g)[0] for g in range(GAMES_PER_EVALUATION)])


def random_player(rng: np.random.Generator) -> Player:
    """A player of X that moves to a uniformly random empty square (chapter 3)."""
    return lambda board: int(rng.choice(legal_moves(board)))


def network_player(network: Network) -> Player:
    """Wrap a network as a player of X (chapter 3)."""
    return lambda board: network_move(network, board)


# --- The vectorized opponent ------------------------------------------------------------------------


@dataclass(frozen=True)
class OpponentTables:
    """The rule base as lookup tables over the base-3 board index (chapter 3).

    ``candidates[i, :n_candidates[i]]`` are the squares steps (b)-(e) allow on board ``i`` (in
    increasing order) wherever O is to move in an unfinished legal game; elsewhere ``n_candidates`` is 0.
    """

    candidates: np.ndarray
    n_candidates: np.ndarray
    choices: np.ndarray
    n_choices: np.ndarray


@cache
def opponent_tables(rule_d_lines: str = "own") -> OpponentTables:
    """Build the rule base's candidate tables for every board at once, from line counts (chapter 3).

    This is written independently of :func:`rule_candidates` (whole-table array operations instead of a
    loop over lines) so that the two can check each other.
    """
    tables = board_tables()
    cells = tables.boards[:, WIN_LINES]  # (19683, 8 lines, 3 cells)
    n_o, n_x, n_gap = ((cells == v).sum(axis=2) for v in (O, X, EMPTY))
    d_count = n_o if rule_d_lines == "own" else n_x
    step_lines = [(n_o == 2) & (n_gap == 1), (n_x == 2) & (n_gap == 1), (d_count == 1) & (n_gap == 2)]
    candidates = tables.empty.copy()  # step (e) unless an earlier step applies
    decided = np.zeros(N_BOARDS, dtype=bool)
    for lines in step_lines:
        # Scatter: a square is a candidate if it is an empty cell of any selected line.
        mask = np.zeros((N_BOARDS, 9), dtype=bool)
        for cell in range(3):
            np.logical_or.at(mask, (np.arange(N_BOARDS)[:, None], WIN_LINES[None, :, cell]),
                             lines & (cells[:, :, cell] == EMPTY))  # fmt: skip
        use = ~decided & mask.any(axis=1)
        candidates[use] = mask[use]
        decided |= use
    o_to_move = tables.legal & ~tables.over & (tables.to_move == O)
    candidate_list, n_candidates = squares_to_list(candidates & o_to_move[:, None])
    # For the batched move: row 2 * i + 0 lists the rule squares of board i, row 2 * i + 1 its empty squares.
    choices = np.stack([candidate_list, tables.empty_list], axis=1).reshape(-1)
    n_choices = np.stack([n_candidates, tables.n_empty], axis=1).reshape(-1).astype(np.int64)
    return OpponentTables(candidate_list, n_candidates, choices, n_choices)


def choice_positions(index: np.ndarray, heads: np.ndarray, v: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Where the rule base's choice lies in a flattened ``(2 * 19683, 9)`` table of choices (chapter 3).

    Row ``2 * i`` of the table holds board ``i``'s rule squares, row ``2 * i + 1`` its empty squares;
    ``heads`` picks the row and ``floor(v * count)`` the entry, as :func:`pick_uniform` does.
    """
    row = 2 * index + heads
    return 9 * row + uniform_index(v, counts[row])


def near_perfect_moves(index: np.ndarray, u: np.ndarray, rules: OpponentRules = PAPER_RULES) -> np.ndarray:
    """The rule base's moves on many boards at once, by table lookup (chapter 3).

    ``index`` holds base-3 board indices (O to move) and ``u`` one uniform number per board; the result
    is what :func:`near_perfect_move_given` returns for each pair.
    """
    rule_tables = opponent_tables(rules.rule_d_lines)
    explore, v = split_uniform(u, rules.random_move_probability)
    return rule_tables.choices[choice_positions(np.asarray(index), explore, v, rule_tables.n_choices)]


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
    hidden = np.exp(negated)
    hidden += 1.0
    np.divide(1.0, hidden, out=hidden)
    scores = np.empty((len(negated), 9))  # output pre-activations; sigmoid is increasing, so we skip it
    start = 0
    for networks, k in blocks:
        rows = slice(start, start + len(networks) * k)
        weights = output_weights if len(networks) == len(output_weights) else np.take(output_weights, networks, axis=0)
        np.matmul(hidden[rows].reshape(len(networks), k, ENGINE_UNITS), weights,
                  out=scores[rows].reshape(len(networks), k, 9))  # fmt: skip
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


# =====================================================================================================
# Chapter 4: mutation (book/04_mutation.ipynb)
# =====================================================================================================

N_WEIGHTS_PADDED = MAX_HIDDEN * 9 + MAX_HIDDEN + 9 * MAX_HIDDEN + 9
"""Number of weights and biases of a padded network: 199 (chapter 4)."""


@dataclass(frozen=True)
class MutationSettings:
    """How an offspring is made from its parent (chapter 4).

    Attributes
    ----------
    weight_spread
        Spread of the Gaussian noise added to every weight and bias: 0.05 in the paper.
    spread_is
        ``"std"`` (the default, the paper's wording): ``weight_spread`` is the standard deviation.
        ``"variance"``: it is the variance, so the standard deviation is its square root (one reading
        of the textbook restatement, which writes N(0, 0.5) and calls 0.05 a variance).
    structure_change_probability
        Chance that the hidden layer gains or loses a node: 0.5 in the paper.
    """

    weight_spread: float = 0.05
    spread_is: str = "std"
    structure_change_probability: float = 0.5

    def __post_init__(self) -> None:
        if (
            isinstance(self.weight_spread, bool)
            or not isinstance(self.weight_spread, (int, float, np.integer, np.floating))
            or not (0 <= self.weight_spread < math.inf)
        ):
            raise ValueError(f"weight_spread must be a finite number >= 0; got {self.weight_spread!r}")
        if self.spread_is not in ("std", "variance"):
            raise ValueError(f"spread_is must be 'std' or 'variance'; got {self.spread_is!r}")
        check_probability(self.structure_change_probability, "structure_change_probability")

    @property
    def sigma(self) -> float:
        """The standard deviation of the weight noise."""
        return float(self.weight_spread if self.spread_is == "std" else math.sqrt(self.weight_spread))


PAPER_MUTATION = MutationSettings()
"""Mutation exactly as Fogel (1993) describes it (chapter 4)."""


@dataclass(frozen=True)
class MutationDraws:
    """The random numbers one mutation uses, for a batch of parents of shape ``B`` (chapter 4).

    Attributes
    ----------
    noise : B + (199,)
        Standard normal numbers for the padded weights, in the order hidden weights (10 x 9), hidden
        biases (10), output weights (9 x 10), output biases (9). Unused slots' numbers are drawn and ignored.
    structure : B + (3,)
        Uniform numbers: does the hidden layer change (< p), add (< 0.5) or delete, and which node goes.
    """

    noise: np.ndarray
    structure: np.ndarray

    def noise_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The noise split into arrays shaped like the padded hidden weights and biases, output weights and biases."""
        batch = self.noise.shape[:-1]
        cuts = np.cumsum([MAX_HIDDEN * 9, MAX_HIDDEN, 9 * MAX_HIDDEN])
        hw, hb, ow, ob = np.split(self.noise, cuts, axis=-1)
        return hw.reshape(*batch, MAX_HIDDEN, 9), hb, ow.reshape(*batch, 9, MAX_HIDDEN), ob


def draw_mutation(rng: np.random.Generator, batch: int | tuple[int, ...]) -> MutationDraws:
    """Draw the random numbers for mutating a batch of parents (chapter 4)."""
    batch = (batch,) if isinstance(batch, (int, np.integer)) else tuple(batch)
    return MutationDraws(noise=rng.standard_normal((*batch, N_WEIGHTS_PADDED)), structure=rng.random((*batch, 3)))


def structure_decisions(
    hidden_count: np.ndarray, structure: np.ndarray, probability: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decide, from three uniform numbers per network, whether it grows, shrinks, and which node goes (chapter 4).

    A change happens with ``probability``; it is an addition or a deletion with equal chance; it is
    dropped when it would take H below 1 or above 10. The deleted node is ``floor(u * H)``.
    """
    hidden_count = np.asarray(hidden_count)
    change = structure[..., 0] < probability
    add = structure[..., 1] < 0.5
    grow = change & add & (hidden_count < MAX_HIDDEN)
    shrink = change & ~add & (hidden_count > MIN_HIDDEN)
    doomed = uniform_index(structure[..., 2], hidden_count)
    return grow, shrink, doomed


def mutate_network(parent: Network, draws: MutationDraws, settings: MutationSettings = PAPER_MUTATION) -> Network:
    """The readable mutation of one network, with one parent's draws (chapter 4).

    1. Every weight and bias gets ``sigma * z`` added, ``z`` standard normal.
    2. Maybe the hidden layer changes: a new node starts with all its weights and bias at 0; a deleted node
       is removed and the nodes after it move up one place.
    The parent is not modified.
    """
    h = parent.hidden_count
    sigma = settings.sigma
    z_hw, z_hb, z_ow, z_ob = draws.noise_parts()
    hw = parent.hidden_weights + sigma * z_hw[:h]
    hb = parent.hidden_bias + sigma * z_hb[:h]
    ow = parent.output_weights + sigma * z_ow[:, :h]
    ob = parent.output_bias + sigma * z_ob
    grow, shrink, doomed = (bool(a) if a.dtype == bool else int(a) for a in structure_decisions(
        np.array(h), draws.structure, settings.structure_change_probability))  # fmt: skip
    if grow:
        hw, hb = np.vstack([hw, np.zeros((1, 9))]), np.append(hb, 0.0)
        ow = np.hstack([ow, np.zeros((9, 1))])
    elif shrink:
        hw, hb, ow = np.delete(hw, doomed, axis=0), np.delete(hb, doomed), np.delete(ow, doomed, axis=1)
    return Network(hw, hb, ow, ob)


@cache
def used_parameters() -> np.ndarray:
    """Which of the 199 padded parameters a network with H hidden nodes uses: row H of an (11, 199) table (chapter 4).

    The columns follow the noise order of :class:`MutationDraws`; the output biases are always used.
    """
    used = hidden_slot_mask(np.arange(MAX_HIDDEN + 1))  # (H, slot)
    table = np.concatenate(
        [np.repeat(used, 9, axis=1), used, np.tile(used, 9), np.ones((MAX_HIDDEN + 1, 9), dtype=bool)], axis=1
    )
    table.flags.writeable = False
    return table


@cache
def deletion_gathers() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """How deleting hidden node ``d`` moves the hidden weights, hidden biases and output weights (chapter 4).

    For each of the three arrays, flattened per network: ``source[d, p]``, the position that position ``p``
    takes its number from (slot ``k`` takes slot ``k`` before node ``d`` and slot ``k + 1`` from it on),
    and ``used[H, p]``, 1.0 where a network with ``H`` nodes uses position ``p`` and 0.0 elsewhere.
    """
    slot, column = np.arange(MAX_HIDDEN), np.arange(9)
    source = np.minimum(slot + (slot >= slot[:, None]), MAX_HIDDEN - 1)  # (deleted node, slot)
    used = hidden_slot_mask(np.arange(MAX_HIDDEN + 1)).astype(float)  # (H, slot)
    gathers = (
        ((9 * source[:, :, None] + column).reshape(MAX_HIDDEN, -1), np.repeat(used, 9, axis=1)),  # (10, 9) per network
        (source, used),  # (10,)
        ((MAX_HIDDEN * column[:, None] + source[:, None, :]).reshape(MAX_HIDDEN, -1), np.tile(used, 9)),  # (9, 10)
    )
    for array in (a for pair in gathers for a in pair):
        array.flags.writeable = False
    return gathers


def mutate_population(
    parents: Population, draws: MutationDraws, settings: MutationSettings = PAPER_MUTATION
) -> Population:
    """Mutation of a whole padded population at once; bit for bit what :func:`mutate_network` does (chapter 4).

    Noise is added to used parameters only: it is multiplied by sigma where :func:`used_parameters` marks
    a parameter as used and by 0 elsewhere. A deletion is a gather over the shrinking networks only
    (:func:`deletion_gathers`), which is ``np.delete`` for all of them in one ``np.take`` per array.
    """
    sigma = settings.sigma
    scale = np.take(np.where(used_parameters(), sigma, 0.0), parents.hidden_count, axis=0)  # B + (199,)
    z_hw, z_hb, z_ow, z_ob = MutationDraws(draws.noise * scale, draws.structure).noise_parts()
    hw = parents.hidden_weights + z_hw
    hb = parents.hidden_bias + z_hb
    ow = parents.output_weights + z_ow
    ob = parents.output_bias + z_ob
    grow, shrink, doomed = structure_decisions(
        parents.hidden_count, draws.structure, settings.structure_change_probability
    )
    hidden_count = parents.hidden_count + grow - shrink
    # A new node is slot H, which is already all zeros: growing only changes the count.
    rows = np.flatnonzero(shrink.ravel())
    if rows.size:
        deleted, left = doomed.ravel()[rows], hidden_count.ravel()[rows]
        for weights, (source, used) in zip((hw, hb, ow), deletion_gathers(), strict=True):
            table = weights.reshape(shrink.size, -1)  # a view: the sums above are new, contiguous arrays
            width = table.shape[1]
            table[rows] = np.take(table, width * rows[:, None] + source[deleted]) * used[left]
    return Population(hw, hb, ow, ob, hidden_count)


def mutate(parents: Population, rng: np.random.Generator, settings: MutationSettings = PAPER_MUTATION) -> Population:
    """One offspring per parent, drawing the random numbers from ``rng`` (chapter 4)."""
    return mutate_population(parents, draw_mutation(rng, parents.shape), settings)


# =====================================================================================================
# Chapter 5: scoring and selection (book/05_selection.ipynb)
# =====================================================================================================

PAPER_PAYOFF = (1.0, -10.0, 0.0)
"""Payoff for a win, a loss and a draw in the experiments Fogel (1993) reports (chapter 5)."""


def check_payoff(payoff: Sequence[float]) -> tuple[float, float, float]:
    """Return ``payoff`` as a ``(win, loss, draw)`` tuple of floats or raise ``ValueError`` naming it (chapter 5)."""
    try:
        values = np.asarray(payoff, dtype=float) if not isinstance(payoff, (str, bytes)) else np.array([])
    except (TypeError, ValueError):
        values = np.array([])
    if values.shape != (3,) or not np.all(np.isfinite(values)):
        raise ValueError(f"payoff must be three finite numbers (win, loss, draw); got {payoff!r}")
    return tuple(float(v) for v in values)


@dataclass(frozen=True)
class SelectionSettings:
    """How networks are scored and which survive (chapter 5).

    Attributes
    ----------
    payoff
        Points for a win, a loss and a draw against the rule base: (+1, -10, 0) in the paper.
    comparisons
        How many other networks (distinct, chosen at random) each network is compared with: 10.
    ties_win
        ``True`` (the paper): a network earns a point against each compared network whose score is lower
        *or equal*. ``False`` (the textbook restatement): only a strictly lower score earns a point.
    """

    payoff: tuple[float, float, float] = PAPER_PAYOFF
    comparisons: int = 10
    ties_win: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "payoff", check_payoff(self.payoff))
        check_count(self.comparisons, "comparisons")
        if not isinstance(self.ties_win, (bool, np.bool_)):
            raise ValueError(f"ties_win must be True or False; got {self.ties_win!r}")


PAPER_SELECTION = SelectionSettings()
"""Scoring and selection as Fogel (1993) describes them (chapter 5)."""


def game_payoffs(results: np.ndarray, payoff: Sequence[float] = PAPER_PAYOFF) -> np.ndarray:
    """Turn game results (+1 X won, -1 O won, 0 draw) into payoffs (chapter 5)."""
    win, loss, draw = check_payoff(payoff)
    results = np.asarray(results)
    # Whole numbers (the engine's int8 results) need only a range check; other types must also be whole.
    whole = results.dtype.kind in "iu"
    outcome = results if whole else results.astype(np.int64)
    if outcome.size and (outcome.min() < -1 or outcome.max() > 1 or not (whole or np.array_equal(outcome, results))):
        raise ValueError(f"results must be +1 (X won), -1 (O won) or 0 (draw); got values {np.unique(results)}")
    return np.array([draw, win, loss])[outcome]  # a draw is entry 0, a win entry 1, a loss entry -1


def pick_others(i: int, n: int, u: np.ndarray) -> list[int]:
    """Choose ``len(u)`` distinct networks other than ``i`` among ``n`` by a partial Fisher-Yates shuffle (chapter 5).

    ``u`` holds one uniform number per pick: pick ``k`` swaps position ``k`` with a random position
    ``k + floor(u[k] * (n - 1 - k))`` of the list of candidates.
    """
    if len(u) > n - 1:
        raise ValueError(f"comparisons must be at most population size - 1 = {n - 1}; got {len(u)}")
    others = [j for j in range(n) if j != i]
    for k, uk in enumerate(u):
        j = k + int(uniform_index(uk, len(others) - k))
        others[k], others[j] = others[j], others[k]
    return others[: len(u)]


@cache
def other_networks(n: int) -> np.ndarray:
    """Row ``i`` lists the networks other than ``i`` among ``n``, in increasing order: shape ``(n, n - 1)`` (chapter 5).

    The starting lists of :func:`pick_others_batch`, in the smallest integer type that holds them.
    """
    j = np.arange(n - 1)
    table = (j[None, :] + (j[None, :] >= np.arange(n)[:, None])).astype(np.int16 if n <= 2**15 else np.int64)
    table.flags.writeable = False
    return table


def pick_others_batch(n: int, u: np.ndarray) -> np.ndarray:
    """:func:`pick_others` for every network of every population at once (chapter 5).

    ``u`` has shape ``batch + (n, q)``; the result holds network indices with the same shape. The
    shuffle runs over ``q`` steps, each one vectorized over all rows.
    """
    *batch, n_rows, q = u.shape
    if q > n - 1:
        raise ValueError(f"comparisons must be at most population size - 1 = {n - 1}; got {q}")
    rows = u.reshape(-1, q)
    others = np.tile(other_networks(n), (rows.shape[0] // n, 1))  # a fresh copy per population
    flat, start = others.reshape(-1), np.arange(0, others.size, n - 1)  # row r starts at start[r]
    # Pick k swaps position k with position k + floor(u * (n - 1 - k)): all the picks at once, then the swaps.
    there_all = start[:, None] + np.arange(q) + uniform_index(rows, np.arange(n - 1, n - 1 - q, -1))
    for k in range(q):
        here, there = start + k, there_all[:, k]
        flat[here], flat[there] = flat[there], flat[here]  # fancy indexing copies: a true swap
    return others[:, :q].reshape(*batch, n_rows, q)


def selection_points(scores: np.ndarray, opponents: np.ndarray, ties_win: bool = True) -> np.ndarray:
    """Points of each network: how many of its compared networks scored lower (or equal, if ``ties_win``) (chapter 5).

    ``scores`` has shape ``batch + (n,)`` and ``opponents`` ``batch + (n, q)`` (indices into the same population).
    """
    # One flat gather over all populations (batch_rows numbers them in the flattened scores).
    rows = batch_rows(scores.shape, opponents.reshape(*scores.shape[:-1], -1))
    theirs = np.take(scores, rows).reshape(opponents.shape)  # (..., n, q)
    beaten = scores[..., :, None] >= theirs if ties_win else scores[..., :, None] > theirs
    return beaten.sum(axis=-1)


def survivors(points: np.ndarray, tie_keys: np.ndarray, keep: int) -> np.ndarray:
    """Indices of the ``keep`` networks with most points, best first; ties go by a random key, larger first (chapter 5).

    ``np.lexsort`` sorts by its last key first: increasing points, then increasing tie key; reversed,
    that is the ranking we want.
    """
    return np.lexsort((tie_keys, points), axis=-1)[..., ::-1][..., :keep]


def batch_rows(batch: tuple[int, ...], index: np.ndarray) -> np.ndarray:
    """Flat row numbers of the networks at ``index`` (shape ``batch[:-1] + (k,)``) in a batch ``batch`` (chapter 5).

    Network ``j`` of population ``b`` is row ``b * n + j`` of the flattened batch (``n = batch[-1]``).
    """
    index = np.asarray(index)
    if index.shape[:-1] != batch[:-1]:
        raise ValueError(f"index must have shape {batch[:-1]} + (k,); got {index.shape}")
    n = batch[-1]
    return np.arange(0, index[..., 0].size * n, n).reshape(index.shape[:-1] + (1,)) + index


def take_networks(population: Population, index: np.ndarray) -> Population:
    """The networks at ``index`` (shape ``batch + (k,)``) of each population in the batch (chapter 5)."""
    rows = batch_rows(population.shape, index)  # one flat gather per array
    return Population(*(np.take(a, rows, axis=0) for a in population.reshape(-1).arrays()))


@dataclass(frozen=True)
class GenerationDraws:
    """Every random number one generation of one or many trials uses (chapter 5).

    With ``P`` parents and batch shape ``B`` (for instance ``(trials,)``):

    Attributes
    ----------
    mutation : MutationDraws with batch ``B + (P,)``
    games : B + (2P, 32, 4)
        One uniform number per possible O move of every game of every network.
    comparisons : B + (2P, q)
        Uniform numbers for choosing each network's ``q`` compared networks.
    ties : B + (2P,)
        Random keys that break ties in points.
    """

    mutation: MutationDraws
    games: np.ndarray
    comparisons: np.ndarray
    ties: np.ndarray

    def __getitem__(self, key) -> GenerationDraws:
        return GenerationDraws(
            MutationDraws(self.mutation.noise[key], self.mutation.structure[key]),
            self.games[key], self.comparisons[key], self.ties[key],
        )  # fmt: skip


def draw_generation(
    rng: np.random.Generator, parents: int, comparisons: int = 10, out: GenerationDraws | None = None
) -> GenerationDraws:
    """Draw one generation's random numbers for one trial, in a fixed order (chapter 5).

    With ``out`` (arrays of the right shapes) the numbers are written into it, so many trials can fill
    one stacked buffer without copies; the numbers are the same either way.
    """
    n = 2 * parents
    shapes = ((parents, N_WEIGHTS_PADDED), (parents, 3), (n, GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME),
              (n, comparisons), (n,))  # fmt: skip
    if out is None:
        arrays = [np.empty(shape) for shape in shapes]
    else:
        arrays = [out.mutation.noise, out.mutation.structure, out.games, out.comparisons, out.ties]
    rng.standard_normal(out=arrays[0])
    for array in arrays[1:]:
        rng.random(out=array)
    return GenerationDraws(MutationDraws(arrays[0], arrays[1]), *arrays[2:])


@dataclass(frozen=True)
class GenerationResult:
    """What one generation step returns (chapter 5).

    Attributes
    ----------
    parents : Population, batch ``B + (P,)``
        The survivors, best first.
    scores : B + (2P,)
        Sampled 32-game scores of the parents (first P) and offspring (last P) before selection.
    points : B + (2P,)
        Selection points of each of them.
    chosen : B + (P,)
        Indices (into parents + offspring) of the survivors, best first.
    scored : Population, batch ``B + (2P,)``
        The parents and offspring that were scored, in the order of ``scores``.
    openings : Openings, batch ``B + (P,)``, or None
        The survivors' :class:`Openings`, for the next step (None unless the first reply cycles).
    """

    parents: Population
    scores: np.ndarray
    points: np.ndarray
    chosen: np.ndarray
    scored: Population
    openings: Openings | None = None


def generation_step_readable(
    parents: list[Network],
    draws: GenerationDraws,
    rules: OpponentRules = PAPER_RULES,
    mutation: MutationSettings = PAPER_MUTATION,
    selection: SelectionSettings = PAPER_SELECTION,
) -> tuple[list[Network], np.ndarray, np.ndarray, np.ndarray]:
    """One generation of one trial, one network and one game at a time (chapter 5).

    Returns ``(new_parents, scores, points, chosen)`` as in :class:`GenerationResult`.
    """
    P = len(parents)
    offspring = [mutate_network(p, draws[i].mutation, mutation) for i, p in enumerate(parents)]
    everyone = parents + offspring
    scores = np.array([
        game_payoffs(play_protocol(network_player(net), draws.games[i], rules), selection.payoff).sum()
        for i, net in enumerate(everyone)
    ])  # fmt: skip
    points = np.array([
        sum(scores[i] >= scores[j] if selection.ties_win else scores[i] > scores[j]
            for j in pick_others(i, 2 * P, draws.comparisons[i]))
        for i in range(2 * P)
    ])  # fmt: skip
    order = sorted(range(2 * P), key=lambda i: (-points[i], -draws.ties[i]))
    chosen = np.array(order[:P])
    return [everyone[i] for i in chosen], scores, points, chosen


def generation_step(
    parents: Population,
    draws: GenerationDraws,
    rules: OpponentRules = PAPER_RULES,
    mutation: MutationSettings = PAPER_MUTATION,
    selection: SelectionSettings = PAPER_SELECTION,
    openings: Openings | None = None,
) -> GenerationResult:
    """One generation of many trials at once: mutate, score, compare, select (chapter 5).

    ``parents`` has batch shape ``B + (P,)`` and ``draws`` batch shape ``B``. With cycled first replies,
    ``openings`` may hold the parents' :class:`Openings` from the previous step's result; only the
    offspring's are then played (chapter 9). The result is the same either way.
    """
    P = parents.shape[-1]
    offspring = mutate_population(parents, draws.mutation, mutation)
    everyone = concatenate_populations([parents, offspring], axis=-1)
    known = None
    check_openings_apply(rules, openings)
    if rules.first_reply == "cycle":
        known = concatenate_openings([openings if openings is not None else protocol_openings(parents),
                                      protocol_openings(offspring)])  # fmt: skip
    scores = game_payoffs(play_protocol_batch(everyone, draws.games, rules, known), selection.payoff).sum(axis=-1)
    opponents = pick_others_batch(2 * P, draws.comparisons)
    points = selection_points(scores, opponents, selection.ties_win)
    chosen = survivors(points, draws.ties, P)
    return GenerationResult(
        take_networks(everyone, chosen), scores, points, chosen, everyone, None if known is None else known.take(chosen)
    )


# =====================================================================================================
# Chapter 6: evolution (book/06_evolution.ipynb)
# =====================================================================================================


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines one experiment; the defaults are Fogel (1993) (chapter 6).

    Attributes
    ----------
    parents
        Parents per population (50); each generation scores them and their 50 offspring.
    generations
        Generations per trial (800).
    trials
        Independent trials (20).
    rules, mutation, selection
        The opponent, mutation and selection settings (see chapters 3-5).
    """

    parents: int = 50
    generations: int = 800
    trials: int = 20
    rules: OpponentRules = PAPER_RULES
    mutation: MutationSettings = PAPER_MUTATION
    selection: SelectionSettings = PAPER_SELECTION

    def __post_init__(self) -> None:
        check_count(self.parents, "parents")
        check_count(self.generations, "generations")
        check_count(self.trials, "trials")
        for name, kind in (("rules", OpponentRules), ("mutation", MutationSettings), ("selection", SelectionSettings)):
            if not isinstance(getattr(self, name), kind):
                raise ValueError(f"{name} must be a {kind.__name__}; got {getattr(self, name)!r}")
        if self.selection.comparisons > 2 * self.parents - 1:
            raise ValueError(
                f"comparisons ({self.selection.comparisons}) must be at most 2 * parents - 1 = {2 * self.parents - 1}"
            )

    def as_dict(self) -> dict:
        """A JSON-friendly description of the configuration."""
        return {
            "parents": self.parents, "generations": self.generations, "trials": self.trials,
            "rules": vars(self.rules).copy(), "mutation": vars(self.mutation).copy(),
            "selection": {**vars(self.selection), "payoff": list(self.selection.payoff)},
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> ExperimentConfig:
        """Inverse of :meth:`as_dict`."""
        return cls(
            parents=data["parents"], generations=data["generations"], trials=data["trials"],
            rules=OpponentRules(**data["rules"]), mutation=MutationSettings(**data["mutation"]),
            selection=SelectionSettings(**{**data["selection"], "payoff": tuple(data["selection"]["payoff"])}),
        )  # fmt: skip


PAPER_EXPERIMENT = ExperimentConfig()
"""Fogel's experiment: 50 parents, 800 generations, 20 trials, the paper's rules (chapter 6)."""


def trial_generators(seed: int, trials: int) -> list[np.random.Generator]:
    """One independent random generator per trial, spawned from ``seed`` (chapter 6).

    Trial ``t`` draws only from its own generator, so its run is the same whether it is run alone or
    alongside others.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0; got {seed!r}")
    return [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(check_count(trials, "trials"))]


@dataclass(frozen=True)
class EvolutionRun:
    """The record of an experiment (chapter 6).

    Attributes
    ----------
    config, seed
        What was run.
    trial_numbers
        Which trials of the configuration the rows hold (all of them, unless a subset was asked for).
    best_score, mean_score, mean_hidden : (trials, generations)
        Per trial and generation: the best and the mean sampled score of the 2P scored networks, and
        their mean number of hidden nodes.
    final_parents : Population, batch (trials, parents)
        Each trial's parents after the last selection, best first.
    final_points : (trials, parents)
        Their selection points in the last generation.
    best_networks : Population with batch (trials, generations), or None
        With ``record_best``: each generation's network with the best sampled score.
    """

    config: ExperimentConfig
    seed: int
    trial_numbers: tuple[int, ...]
    best_score: np.ndarray
    mean_score: np.ndarray
    mean_hidden: np.ndarray
    final_parents: Population
    final_points: np.ndarray
    best_networks: Population | None = None

    def best_network(self, trial: int = 0) -> Network:
        """The best final parent of trial number ``trial`` (the one ranked first by the last selection)."""
        if trial not in self.trial_numbers:
            raise ValueError(f"trial {trial} is not in this run; it holds trials {list(self.trial_numbers)}")
        return self.final_parents.network((self.trial_numbers.index(trial), 0))


def merge_runs(runs: Sequence[EvolutionRun]) -> EvolutionRun:
    """Stack runs of different trials of the same experiment and seed into one (chapter 6)."""
    first = runs[0]
    if any(r.config != first.config or r.seed != first.seed for r in runs):
        raise ValueError("only runs of the same configuration and seed can be merged")
    return EvolutionRun(
        first.config, first.seed, tuple(t for r in runs for t in r.trial_numbers),
        *(np.concatenate([getattr(r, name) for r in runs]) for name in ("best_score", "mean_score", "mean_hidden")),
        concatenate_populations([r.final_parents for r in runs]), np.concatenate([r.final_points for r in runs]),
        None if runs[0].best_networks is None else concatenate_populations([r.best_networks for r in runs]),
    )  # fmt: skip


@cache
def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse instead of returning it to the system at once (chapter 9).

    Every generation allocates and frees the same large temporary arrays. By default glibc hands blocks
    this big back to the operating system, and the next generation takes page faults to get them back:
    about a quarter of the run time, all of it spent in the kernel. Raising the two thresholds keeps the
    memory in the process. Returns whether the setting took effect (only on Linux with glibc).
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # mallopt parameter numbers from glibc's malloc.h
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30) and libc.mallopt(m_trim_threshold, 1 << 30))
    except (OSError, AttributeError):
        return False


def evolve(
    config: ExperimentConfig = PAPER_EXPERIMENT,
    seed: int = 1,
    progress: bool | str = False,
    trials: Sequence[int] | None = None,
    workers: int = 1,
    record_best: bool = False,
) -> EvolutionRun:
    """Run ``config.trials`` independent trials of evolutionary programming together (chapter 6).

    Each generation: every parent makes one mutated offspring; all 2P networks play 32 games against
    the rule base; each is compared with ``comparisons`` others; the P with most points survive. All
    trials and all their games advance together as arrays.

    Parameters
    ----------
    config
        The experiment (default: the paper's).
    seed
        Seed of the whole run; trial ``t`` uses the ``t``-th generator of :func:`trial_generators`.
    progress
        Show a text progress bar (tqdm, on standard error) over generations; a string is used as its label.
        With several workers the bar follows this process's share of the trials.
    trials
        Run only these trial numbers (default: all); trial ``t`` gives the same result either way.
    workers
        Processes to share the trials between (at most one per trial). Each trial draws from its own
        generator, so the result is the same, bit for bit, for any number of workers.
    record_best
        Keep every generation's best-scoring network (for chapter 12).
    """
    keep_freed_memory()
    all_rngs = trial_generators(seed, config.trials)
    chosen_trials = list(range(config.trials)) if trials is None else [int(t) for t in trials]
    if not chosen_trials or any(not 0 <= t < config.trials for t in chosen_trials):
        raise ValueError(f"trials must be trial numbers from 0 to {config.trials - 1}; got {trials!r}")
    if len(set(chosen_trials)) != len(chosen_trials):
        raise ValueError(f"trials must not repeat a trial number (each trial has one generator); got {trials!r}")
    workers = min(check_count(workers, "workers"), len(chosen_trials))
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # Build the engine's lookup tables before forking, so that all processes share one copy of them.
        rule_d_lines = config.rules.rule_d_lines
        engine_steps(rule_d_lines), engine_steps(), x_turn_square_codes(), endgame(rule_d_lines)

        chunks = [list(map(int, c)) for c in np.array_split(chosen_trials, workers)]
        # fork copies this process as it is (no re-import of the caller's script); spawn where fork is missing.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        with ProcessPoolExecutor(max_workers=workers - 1, mp_context=context) as pool:
            others = [pool.submit(evolve, config, seed, False, chunk, 1, record_best) for chunk in chunks[1:]]
            # This process takes the first share, with the progress bar.
            label = f"{len(chosen_trials)} trials x {config.generations} generations on {workers} processes"
            here = evolve(
                config, seed, progress if isinstance(progress, str) else progress and label, chunks[0], 1, record_best
            )
            return merge_runs([here] + [job.result() for job in others])
    rngs = [all_rngs[t] for t in chosen_trials]
    T, P, G, q = len(rngs), config.parents, config.generations, config.selection.comparisons
    parents = random_population(rngs[0], P).reshape(1, P)
    parents = concatenate_populations([parents] + [random_population(r, P).reshape(1, P) for r in rngs[1:]])
    n = 2 * P
    buffer = GenerationDraws(
        MutationDraws(np.empty((T, P, N_WEIGHTS_PADDED)), np.empty((T, P, 3))),
        np.empty((T, n, GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME)), np.empty((T, n, q)), np.empty((T, n)),
    )  # fmt: skip
    trial_buffers = [buffer[t] for t in range(T)]  # each trial's views into the stacked buffer
    best, mean, hidden = (np.empty((T, G)) for _ in range(3))
    leaders: list[Population] = []
    steps, openings = range(G), None
    if progress:
        from tqdm import tqdm  # the text bar, which also reads well in a rendered page

        label = progress if isinstance(progress, str) else f"{T} trials x {G} generations"
        steps = tqdm(steps, desc=label, unit="gen", file=sys.stderr, mininterval=3.0)
    for g in steps:
        for rng, trial_buffer in zip(rngs, trial_buffers, strict=True):
            draw_generation(rng, P, q, out=trial_buffer)
        step = generation_step(parents, buffer, config.rules, config.mutation, config.selection, openings)
        best[:, g] = step.scores.max(axis=-1)
        mean[:, g] = step.scores.mean(axis=-1)
        hidden[:, g] = step.scored.hidden_count.mean(axis=-1)
        if record_best:  # the network with the best sampled score (the first of equals)
            leaders.append(take_networks(step.scored, step.scores.argmax(axis=-1)[:, None]))
        parents, openings = step.parents, step.openings  # the survivors keep their openings
    final_points = np.take_along_axis(step.points, step.chosen, axis=-1)
    best_networks = concatenate_populations(leaders, axis=1) if record_best else None
    return EvolutionRun(
        config, int(seed), tuple(chosen_trials), best, mean, hidden, parents, final_points, best_networks
    )


POPULATION_FIELDS = ("hidden_weights", "hidden_bias", "output_weights", "output_bias", "hidden_count")
"""The arrays of a :class:`Population`, in order (chapter 6)."""


def save_run(run: EvolutionRun, path: str | Path) -> None:
    """Write a run to a ``.npz`` file: every recorded curve, the final networks and the configuration (chapter 6)."""
    populations = {"final": run.final_parents, "best": run.best_networks}
    arrays = {
        f"{prefix}_{name}": array
        for prefix, population in populations.items()
        if population is not None
        for name, array in zip(POPULATION_FIELDS, population.arrays(), strict=True)
    }
    np.savez_compressed(
        path,
        config=json.dumps(run.config.as_dict()),
        seed=run.seed,
        trial_numbers=np.array(run.trial_numbers),
        best_score=run.best_score,
        mean_score=run.mean_score,
        mean_hidden=run.mean_hidden,
        final_points=run.final_points,
        **arrays,
    )


def load_run(path: str | Path) -> EvolutionRun:
    """Read a run written by :func:`save_run` (chapter 6)."""
    with np.load(path) as data:

        def population(prefix: str) -> Population | None:
            if f"{prefix}_hidden_count" not in data:
                return None
            return Population(*(data[f"{prefix}_{name}"] for name in POPULATION_FIELDS))

        return EvolutionRun(
            config=ExperimentConfig.from_dict(json.loads(str(data["config"]))),
            seed=int(data["seed"]),
            trial_numbers=tuple(int(t) for t in data["trial_numbers"]),
            best_score=data["best_score"],
            mean_score=data["mean_score"],
            mean_hidden=data["mean_hidden"],
            final_parents=population("final"),
            final_points=data["final_points"],
            best_networks=population("best"),
        )


RUN_CACHE_VARIABLE = "TTT_RUN_CACHE"
"""Environment variable naming a folder where :func:`run_experiment` shares runs within one build (chapter 6)."""


def run_experiment(
    config: ExperimentConfig = PAPER_EXPERIMENT, seed: int = 1, progress: bool | str = True, workers: int | None = None
) -> EvolutionRun:
    """A full experiment as the chapters run it: all cores, every generation's best network kept (chapter 6).

    This is :func:`evolve` with ``record_best=True``. Several chapters need the same runs (the paper's
    experiment with seed 1, for instance). When the environment variable ``TTT_RUN_CACHE`` names a folder,
    a finished run is saved there under a name derived from its configuration and seed, and a later call
    with the same arguments reads it back instead of running again. ``make book`` and ``make test`` point
    the variable at a folder they empty first, so each build computes every run exactly once. Without the
    variable (a reader running a chapter) the run is always computed.
    """
    import hashlib
    import os

    workers = workers if workers is not None else (os.cpu_count() or 1)
    folder = os.environ.get(RUN_CACHE_VARIABLE)
    path = None
    if folder:
        key = json.dumps({"config": config.as_dict(), "seed": int(seed)}, sort_keys=True)
        path = Path(folder) / f"run-{hashlib.sha256(key.encode()).hexdigest()[:20]}.npz"
        if path.exists():
            return load_run(path)
    run = evolve(config, seed=seed, progress=progress, workers=workers, record_best=True)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial.npz")
        save_run(run, partial)
        partial.replace(path)  # a complete file or none: safe if two processes race
    return run


# =====================================================================================================
# Chapter 7: the performance curve, Fogel's Figure 2 (book/07_figure2.ipynb)
# =====================================================================================================


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (chapter 7).

    For df >= 5 it uses the Cornish-Fisher expansion of Abramowitz and Stegun (26.7.5) around the normal
    quantile 1.959964, accurate to about 1e-4; for df 1 to 4 it returns the tabulated values.
    """
    df = check_count(df, "df")
    if df <= 4:
        return (12.706204736174698, 4.302652729749464, 3.182446305284263, 2.7764451051977987)[df - 1]
    z = 1.959963984540054
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return float(z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4)


def mean_with_confidence(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over trials (axis 0) with approximate 95% confidence limits, ``mean -+ t * sd / sqrt(n)`` (chapter 7)."""
    curves = np.asarray(curves, dtype=float)
    n = curves.shape[0]
    if n < 2:
        raise ValueError("confidence limits need at least 2 trials")
    mean = curves.mean(axis=0)
    half_width = t_quantile_975(n - 1) * curves.std(axis=0, ddof=1) / math.sqrt(n)
    return mean, mean - half_width, mean + half_width


NETWORK_FORMAT = "fogel-ttt-network"
"""The ``format`` field of a saved network file (chapter 7)."""


def save_network(network: Network, path: str | Path, **provenance) -> None:
    """Save a network as human-readable JSON (chapter 7).

    The file holds ``format``, ``version``, ``hidden_count``, the four weight arrays as nested lists
    (``hidden_weights[j][s]``: input square s to hidden node j; ``output_weights[s][j]``: hidden node j
    to output square s; biases are subtracted), and any keyword arguments given as provenance, for
    instance ``seed``, ``trial``, ``generation`` and ``experiment``. Floats are written with all their
    digits, so loading gives back the same network bit for bit.
    """
    record = {
        "format": NETWORK_FORMAT,
        "version": 1,
        "hidden_count": network.hidden_count,
        "hidden_weights": network.hidden_weights.tolist(),
        "hidden_bias": network.hidden_bias.tolist(),
        "output_weights": network.output_weights.tolist(),
        "output_bias": network.output_bias.tolist(),
        **provenance,
    }
    Path(path).write_text(json.dumps(record, indent=1) + "\n")


def load_network(path: str | Path) -> tuple[Network, dict]:
    """Load a network saved by :func:`save_network`; return it with the file's other fields (chapter 7).

    Raises
    ------
    ValueError
        If the file is not JSON, is not a network file, or its arrays have the wrong shapes or values,
        saying which.
    """
    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(record, dict) or record.get("format") != NETWORK_FORMAT:
        raise ValueError(f'{path} is not a network file: it needs "format": "{NETWORK_FORMAT}"')
    if record.get("version") != 1:
        raise ValueError(f"{path}: unsupported version {record.get('version')!r}; this code reads version 1")
    fields = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")
    missing = [name for name in (*fields, "hidden_count") if name not in record]
    if missing:
        raise ValueError(f"{path} lacks the field(s) {missing}")
    try:
        network = Network(*(np.array(record[name], dtype=float) for name in fields))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    if record["hidden_count"] != network.hidden_count:
        raise ValueError(
            f"{path}: hidden_count says {record['hidden_count']} "
            f"but the weights have {network.hidden_count} hidden nodes"
        )
    provenance = {k: v for k, v in record.items() if k not in (*fields, "hidden_count", "format", "version")}
    return network, provenance


def champion_provenance(run: EvolutionRun, trial: int = 0) -> dict:
    """The provenance recorded with a run's champion: experiment, seed, trial and generation (chapter 7)."""
    return {
        "description": f"Best final parent of trial {trial} (ranked first by the last selection)",
        "seed": run.seed,
        "trial": trial,
        "generation": run.config.generations,
        "experiment": run.config.as_dict(),
    }


# =====================================================================================================
# Chapter 8: a tree of games, Fogel's Figure 3 (book/08_figure3.ipynb)
# =====================================================================================================


@dataclass
class GameNode:
    """A node of a tree of games (chapter 8).

    ``board`` is the position after ``moves``; ``children`` are the positions after the next move (an
    O reply followed, unless the game ended, by X's answer); a leaf has ``result`` +1, -1 or 0.
    """

    board: np.ndarray
    moves: list[int]
    children: list[GameNode] = field(default_factory=list)
    result: int | None = None

    def leaves(self) -> list[GameNode]:
        """The finished games below this node, left to right."""
        return [self] if not self.children else [leaf for child in self.children for leaf in child.leaves()]


def game_tree(player: Player, rules: OpponentRules = PAPER_RULES) -> GameNode:
    """Every game ``player`` (X) can play against the rule base when the rule base never moves at random (chapter 8).

    The branches are O's first replies (all eight, as in the protocol, or the rule squares with
    ``first_reply="rules"``) and, later, every square the rules (b)-(e) allow. The root is the board after
    X's first move.
    """
    board = play(np.zeros(9, dtype=np.int8), player(np.zeros(9, dtype=np.int8)))
    root = GameNode(board, [int(np.flatnonzero(board)[0])])

    def grow(node: GameNode, first: bool) -> None:
        if is_game_over(node.board):
            node.result = winner(node.board)
            return
        replies = (
            legal_moves(node.board) if first and rules.first_reply == "cycle" else rule_candidates(node.board, rules)
        )
        for reply in replies:
            after_o = play(node.board, reply)
            if is_game_over(after_o):
                child = GameNode(after_o, node.moves + [reply])
            else:
                answer = player(after_o)
                child = GameNode(play(after_o, answer), node.moves + [reply, answer])
            node.children.append(child)
            grow(child, False)

    grow(root, True)
    return root


def tree_counts(tree: GameNode) -> dict[str, int]:
    """Numbers of won, drawn and lost games (for X) at the leaves of a tree of games (chapter 8)."""
    results = [leaf.result for leaf in tree.leaves()]
    return {"wins": results.count(X), "draws": results.count(EMPTY), "losses": results.count(O)}


def draw_game_tree(tree: GameNode, ax=None, board_size: float = 0.8):
    """Draw a tree of games left to right: a board at every node, leaves framed by result (chapter 8).

    Leaves are stacked top to bottom; an inner node sits at the mean height of its children. Frames:
    green for a win of X, grey for a draw, red for a loss. Marks carry their move numbers.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    leaves = tree.leaves()
    depth_of = {}

    def place(node: GameNode, depth: int, counter: list[int]) -> float:
        if not node.children:
            y = -counter[0]
            counter[0] += 1
        else:
            y = float(np.mean([place(child, depth + 1, counter) for child in node.children]))
        depth_of[id(node)] = (depth, y)
        return y

    place(tree, 0, [0])
    max_depth = max(d for d, _ in depth_of.values())
    frame = {X: "tab:green", EMPTY: "0.5", O: "tab:red"}
    step_x = 1.5
    if ax is None:  # 0.85 inch per unit of board spacing, and no more
        width, height = max_depth * step_x + board_size + 0.2, len(leaves) - 1 + board_size + 0.2
        _, ax = plt.subplots(figsize=(0.85 * width, 0.85 * height))
    ax.set_xlim(-0.1, max_depth * step_x + board_size + 0.1)
    ax.set_ylim(-len(leaves) + 1 - 0.1, board_size + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")

    def draw(node: GameNode) -> None:
        depth, y = depth_of[id(node)]
        for child in node.children:
            child_depth, child_y = depth_of[id(child)]
            ax.plot([depth * step_x + board_size, child_depth * step_x],
                    [y + board_size / 2, child_y + board_size / 2], color="0.75", lw=0.8, zorder=0)  # fmt: skip
            draw(child)
        draw_board(node.board, ax, xy=(depth * step_x, y), size=board_size, move_order=node.moves,
                   frame_color=frame[node.result] if node.result is not None else None, fit=False)  # fmt: skip

    draw(tree)
    return ax


# =====================================================================================================
# Chapter 10: exact expected scores and the best possible score (book/10_exact_scores.ipynb)
# =====================================================================================================


def opponent_probabilities(rules: OpponentRules = PAPER_RULES) -> np.ndarray:
    """The rule base's move probabilities on every board, shape (19683, 9) (chapter 10).

    ``P[i, s]`` is the chance that O plays ``s`` on board ``i``: ``p / n_empty`` for every empty square
    (the random move) plus ``(1 - p) / n_candidates`` for each rule candidate. Rows of boards where O is
    not to move in an unfinished game are zero.
    """
    tables, rule_tables = board_tables(), opponent_tables(rules.rule_d_lines)
    p = rules.random_move_probability
    o_to_move = rule_tables.n_candidates > 0
    probabilities = np.zeros((N_BOARDS, 9))
    rows = np.flatnonzero(o_to_move)
    probabilities[rows] = p * tables.empty[rows] / tables.n_empty[rows, None]
    for k in range(9):
        has_k = rows[rule_tables.n_candidates[rows] > k]
        probabilities[has_k, rule_tables.candidates[has_k, k]] += (1 - p) / rule_tables.n_candidates[has_k]
    return probabilities


def o_reply_distribution(board: np.ndarray, rules: OpponentRules = PAPER_RULES) -> dict[int, float]:
    """The rule base's move probabilities on one board, read off the rules directly (chapter 10)."""
    empty, candidates = legal_moves(board), rule_candidates(board, rules)
    p = rules.random_move_probability
    return {s: p / len(empty) + ((1 - p) / len(candidates) if s in candidates else 0.0) for s in empty}


def game_payoff_moments(
    player: Player,
    board: np.ndarray,
    rules: OpponentRules = PAPER_RULES,
    payoff: Sequence[float] = PAPER_PAYOFF,
) -> tuple[float, float]:
    """Mean and second moment of X's payoff from ``board`` on, by walking every line of play (chapter 10).

    The readable recursion: at X's turn follow ``player``; at O's turn average over O's replies with
    the probabilities of :func:`o_reply_distribution`; at the end look up the payoff.
    """
    win, loss, draw = check_payoff(payoff)
    if is_game_over(board):
        value = {X: win, O: loss, EMPTY: draw}[winner(board)]
        return value, value * value
    if player_to_move(board) == X:
        return game_payoff_moments(player, play(board, player(board)), rules, payoff)
    mean = second = 0.0
    for square, probability in o_reply_distribution(board, rules).items():
        m, s = game_payoff_moments(player, play(board, square), rules, payoff)
        mean, second = mean + probability * m, second + probability * s
    return mean, second


def exact_score_readable(
    player: Player, rules: OpponentRules = PAPER_RULES, payoff: Sequence[float] = PAPER_PAYOFF
) -> tuple[float, float]:
    """Exact mean and variance of the 32-game protocol score of ``player``, one game tree at a time (chapter 10).

    The 32 games are independent. With cycled first replies each of the eight replies is played four
    times; with first replies by the rules the 32 games are alike.
    """
    start = np.zeros(9, dtype=np.int8)
    first = play(start, player(start))
    if rules.first_reply == "cycle":
        moments = [game_payoff_moments(player, play(first, reply), rules, payoff) for reply in legal_moves(first)]
        mean = 4 * sum(m for m, _ in moments)
        variance = 4 * sum(s - m * m for m, s in moments)
    else:
        m, s = game_payoff_moments(player, first, rules, payoff)
        mean, variance = GAMES_PER_EVALUATION * m, GAMES_PER_EVALUATION * (s - m * m)
    return mean, max(variance, 0.0)  # a certain outcome has variance 0, which rounding can make -2e-16


def exact_scores(
    population: Population,
    rules: OpponentRules = PAPER_RULES,
    payoff: Sequence[float] = PAPER_PAYOFF,
    chunk: int = 500,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and variance of the protocol score of every network in a population (chapter 10).

    The batched twin of :func:`exact_score_readable`. Because every empty square has a positive chance
    of being O's reply (the random move), the tree of O's replies has the same shape for every network:
    8 first replies, then 6, 4 and 2 choices. It is held as dense arrays of shape ``(n, 8, 6, 4, 2)``
    (cut at the current depth); finished games keep their place and stop collecting probability. X's
    moves are evaluated for all states of a depth at once with the engine's incremental pre-activations.
    Networks are processed ``chunk`` at a time to bound memory.
    """
    batch = population.shape
    flat = population.reshape(-1)
    means, variances = [], []
    for start in range(0, flat.shape[0], chunk):
        m, v = _exact_scores_flat(flat[start : start + chunk], rules, check_payoff(payoff))
        means.append(m)
        variances.append(v)
    return np.concatenate(means).reshape(batch), np.concatenate(variances).reshape(batch)


def _exact_scores_flat(
    flat: Population, rules: OpponentRules, payoff: tuple[float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    tables = board_tables()
    probabilities = opponent_probabilities(rules)
    payoff_of = np.array([payoff[2], payoff[0], payoff[1]])  # indexed by winner: 0 draw, +1 X, -1 O (index -1)
    n = flat.shape[0]
    input_columns, output_weights = engine_weights(flat)
    numbers = x_turn_numbers()[0]
    rows = np.arange(n) * 9

    def x_moves(hidden_pre, index, turn):  # the same computation as the batched engine's
        # Boards X does not face at this turn (in branches of weight 0) get squares 0 to e - 1.
        codes = np.take(x_turn_square_codes()[turn], numbers[turn][index.ravel()], axis=1, mode="clip")
        k = index[0].size
        moves = _network_moves(-hidden_pre.reshape(-1, ENGINE_UNITS), codes, [(np.arange(n), k)], output_weights)
        return moves.reshape(index.shape)

    def add_columns(hidden_pre, moves, sign):
        columns = np.take(input_columns, rows.reshape((n,) + (1,) * (moves.ndim - 1)) + moves, axis=0)
        return hidden_pre + sign * columns

    # X's first move, on the empty board.
    index = np.zeros((n,), dtype=np.int64)
    hidden_pre = -empty_board_negated_sums(flat)
    move = x_moves(hidden_pre[:, None, :], index[:, None], 0)[:, 0]
    index = index + POWERS_OF_3[move]
    hidden_pre = add_columns(hidden_pre, move, X)
    weight = np.ones((n,))
    mean = np.zeros((n, 8))  # per first reply (or per reply branch when the first reply follows the rules)
    second = np.zeros((n, 8))
    for o_turn in range(4):
        # O replies: every empty square, in increasing order, with its probability.
        replies = tables.empty_list[index][..., : 8 - 2 * o_turn]
        if o_turn == 0 and rules.first_reply == "cycle":
            chance = np.ones(replies.shape)
        else:
            chance = np.take_along_axis(probabilities[index], replies.astype(np.int64), axis=-1)
        replies = np.maximum(replies, 0)
        weight = weight[..., None] * chance
        index = np.where(weight > 0, index[..., None] + 2 * POWERS_OF_3[replies], index[..., None])
        hidden_pre = add_columns(hidden_pre[..., None, :], replies, O)
        for turn in ("O", "X"):
            if turn == "X":
                if o_turn == 3:
                    move = tables.empty_list[index, 0].astype(np.int64)
                else:
                    move = x_moves(hidden_pre, index, o_turn + 1)
                move = np.where(weight > 0, move, 0)
                index = np.where(weight > 0, index + POWERS_OF_3[move], index)
                if o_turn < 3:
                    hidden_pre = add_columns(hidden_pre, move, X)
            ended = (weight > 0) & tables.over[index]
            value = payoff_of[tables.winner[index]]
            contribution = np.where(ended, weight, 0.0)
            axes = tuple(range(2, contribution.ndim))
            mean += (contribution * value).sum(axis=axes)
            second += (contribution * value * value).sum(axis=axes)
            weight = np.where(ended, 0.0, weight)
    # A certain outcome has variance 0, which rounding can turn into -2e-16: clamp at 0.
    if rules.first_reply == "cycle":
        return 4 * mean.sum(axis=1), np.maximum(4 * (second - mean**2).sum(axis=1), 0.0)
    game_mean, game_second = mean.sum(axis=1), second.sum(axis=1)
    return GAMES_PER_EVALUATION * game_mean, np.maximum(GAMES_PER_EVALUATION * (game_second - game_mean**2), 0.0)


def exact_score(network: Network, rules: OpponentRules = PAPER_RULES, payoff=PAPER_PAYOFF) -> tuple[float, float]:
    """Exact mean and variance of one network's protocol score (chapter 10)."""
    mean, variance = exact_scores(stack_networks([network]), rules, payoff)
    return float(mean[0]), float(variance[0])


@dataclass(frozen=True)
class BestResponse:
    """The best any player of X can do against the rule base (chapter 10).

    Attributes
    ----------
    ceiling
        The largest expected 32-game score.
    opening
        X's first move that reaches it.
    policy
        ``policy[i]``: the best move on board index ``i`` (X to move), -1 elsewhere.
    values
        ``values[i]``: expected payoff of one game from board ``i`` on under the best policy, nan where unused.
    """

    ceiling: float
    opening: int
    policy: np.ndarray
    values: np.ndarray

    def player(self) -> Player:
        """The player that follows the best policy."""
        return lambda board: int(self.policy[board_index(board)])


def best_response(rules: OpponentRules = PAPER_RULES, payoff: Sequence[float] = PAPER_PAYOFF) -> BestResponse:
    """Expectimax against the rule base: X maximizes, O's moves are averaged (chapter 10).

    Values depend only on the board, so they are memoized over the base-3 index. X's first move is
    chosen for the whole protocol: the sum over the first replies it will face (each four times), or
    32 times the expectation when the first reply follows the rules. Ties go to the lowest square.
    """
    win, loss, draw = check_payoff(payoff)
    tables = board_tables()
    values = np.full(N_BOARDS, np.nan)
    policy = np.full(N_BOARDS, -1, dtype=np.int64)

    def value(board: np.ndarray) -> float:
        i = board_index(board)
        if np.isnan(values[i]):
            if tables.over[i]:
                values[i] = {X: win, O: loss, EMPTY: draw}[int(tables.winner[i])]
            elif tables.to_move[i] == X:
                options = [(value(play(board, s)), -s) for s in legal_moves(board)]
                best_value, best_square = max(options)
                values[i], policy[i] = best_value, -best_square
            else:
                values[i] = sum(q * value(play(board, s)) for s, q in o_reply_distribution(board, rules).items())
        return float(values[i])

    start = np.zeros(9, dtype=np.int8)
    totals = []
    for opening in range(9):
        first = play(start, opening)
        if rules.first_reply == "cycle":
            totals.append(4 * sum(value(play(first, reply)) for reply in legal_moves(first)))
        else:
            totals.append(GAMES_PER_EVALUATION * value(first))
    opening = int(np.argmax(totals))
    policy[0] = opening
    values.flags.writeable = False
    policy.flags.writeable = False
    return BestResponse(float(totals[opening]), opening, policy, values)


# =====================================================================================================
# Chapter 11: perfect play and auditing a network (book/11_perfect_play.ipynb)
# =====================================================================================================


@cache
def minimax_values() -> np.ndarray:
    """Game-theoretic value (+1 X wins, 0 draw, -1 O wins with best play) of every legal board (chapter 11).

    Indexed by the base-3 board index; nan on boards that cannot arise.
    """
    tables = board_tables()
    values = np.full(N_BOARDS, np.nan)
    # Work backwards from full boards: a board's children have one more mark.
    marks = 9 - tables.n_empty.astype(int)
    for count in range(9, -1, -1):
        for i in np.flatnonzero(tables.legal & (marks == count)):
            if tables.over[i]:
                values[i] = tables.winner[i]
                continue
            mover = int(tables.to_move[i])
            children = i + MARK_DIGIT[mover] * POWERS_OF_3[tables.empty_list[i, : tables.n_empty[i]]]
            values[i] = values[children].max() if mover == X else values[children].min()
    values.flags.writeable = False
    return values


def perfect_move(board: Sequence[int] | np.ndarray) -> int:
    """A move with the best game-theoretic value for the player to move; ties go to the lowest square (chapter 11)."""
    board = validate_board(board)
    moves = legal_moves(board)
    if not moves:
        raise ValueError("the game is over on this board; there is no move to make")
    mover = player_to_move(board)
    values = minimax_values()
    child_values = [mover * values[board_index(play(board, s))] for s in moves]
    return moves[int(np.argmax(child_values))]


@dataclass(frozen=True)
class Audit:
    """How a player of X fares against every possible sequence of O replies (chapter 11).

    Attributes
    ----------
    games, wins, draws, losses
        Counts of the complete games (leaves) of the tree of all O replies.
    positions
        Distinct positions the player meets with X to move.
    mistakes
        Those where its move has a worse game-theoretic value than the position's best move.
    mistake_boards
        The base-3 indices of those positions.
    """

    games: int
    wins: int
    draws: int
    losses: int
    positions: int
    mistakes: int
    mistake_boards: tuple[int, ...]


def audit_player(player: Player) -> Audit:
    """Play ``player`` (X) against every possible sequence of O replies and judge each of its moves (chapter 11)."""
    values = minimax_values()
    counts = {X: 0, O: 0, EMPTY: 0}
    seen: dict[int, bool] = {}

    def walk(board: np.ndarray) -> None:
        if is_game_over(board):
            counts[winner(board)] += 1
            return
        if player_to_move(board) == X:
            i = board_index(board)
            move = player(board)
            if i not in seen:
                seen[i] = values[board_index(play(board, move))] < values[i]
            walk(play(board, move))
        else:
            for square in legal_moves(board):
                walk(play(board, square))

    walk(np.zeros(9, dtype=np.int8))
    mistakes = tuple(sorted(i for i, bad in seen.items() if bad))
    return Audit(
        games=sum(counts.values()), wins=counts[X], draws=counts[EMPTY], losses=counts[O],
        positions=len(seen), mistakes=len(mistakes), mistake_boards=mistakes,
    )  # fmt: skip


def lowest_square_player(board: np.ndarray) -> int:
    """A naive player that always takes the lowest empty square (chapter 11)."""
    return legal_moves(board)[0]


def evaluation_report(network: Network, provenance: dict | None = None, rules: OpponentRules = PAPER_RULES) -> str:
    """The text ``python -m ttt_helpers evaluate`` prints for a network (chapter 11)."""
    mean, variance = exact_score(network, rules)
    ceiling = best_response(rules)
    audit = audit_player(network_player(network))
    lines = [
        f"network: {network.hidden_count} hidden nodes",
        *(f"  {key}: {provenance[key]}" for key in ("seed", "trial", "generation") if provenance and key in provenance),
        f"exact expected score over the 32-game protocol: {mean:.4f} (standard deviation {math.sqrt(variance):.4f})",
        f"best expected score any player of X can reach: {ceiling.ceiling:.4f} (opening square {ceiling.opening})",
        f"perfect-play audit against every sequence of O replies: {audit.games} games, {audit.wins} wins, "
        f"{audit.draws} draws, {audit.losses} losses",
        f"  positions met with X to move: {audit.positions}; moves worse than the best: {audit.mistakes}",
        "  verdict: " + ("never loses" if audit.losses == 0 else f"can lose ({audit.losses} losing lines)"),
    ]
    return "\n".join(lines)


# =====================================================================================================
# Chapter 14: play against the evolved network (book/14_play.ipynb)
# =====================================================================================================

OPPONENT_KINDS = ("champion", "rule base", "perfect")
"""The opponents a reader can play against (chapter 14)."""

DEFAULT_CHAMPION = Path(__file__).resolve().parent / "book" / "data" / "champion.json"
"""Where the reproduction's champion is saved (chapter 7)."""


def opponent_player(kind: str, mark: int, rng: np.random.Generator, network: Network | None = None) -> Player:
    """A move function for ``kind`` ("champion", "rule base" or "perfect") playing ``mark`` (chapter 14).

    The champion was evolved as X; as O it sees the board with the colours swapped. The rule base plays
    either side with the paper's rules (its first reply follows the rules too). The perfect player takes
    a move of best game-theoretic value.
    """
    if kind not in OPPONENT_KINDS:
        raise ValueError(f"opponent must be one of {OPPONENT_KINDS}; got {kind!r}")
    check_mark(mark)
    if kind == "champion":
        if network is None:
            raise ValueError("the champion opponent needs a network")
        return lambda board: network_move(network, board, mark)
    if kind == "rule base":
        return lambda board: near_perfect_move(board, rng, PAPER_RULES, mark)
    return perfect_move


def play_out(x_player: Player, o_player: Player) -> tuple[int, list[int]]:
    """Play one game between two move functions; return the winner (+1, -1, 0) and the moves (chapter 14)."""
    board = np.zeros(9, dtype=np.int8)
    moves: list[int] = []
    while not is_game_over(board):
        square = (x_player if player_to_move(board) == X else o_player)(board)
        board = play(board, square)
        moves.append(square)
    return winner(board), moves


@dataclass(frozen=True)
class NetworkView:
    """What the heatmap shows: the champion's outputs on a board, and the square it chose there (chapter 14).

    Attributes
    ----------
    board
        The position the outputs belong to (occupied squares are greyed out).
    outputs
        The champion's nine outputs on ``board``, from the side it plays there.
    move
        The square the champion chose (or would choose) on ``board``; None once the game is over.
    caption
        One sentence saying which of these it is.
    """

    board: np.ndarray
    outputs: np.ndarray
    move: int | None
    caption: str


class GameSession:
    """A game between a human and an opponent, with the rules and the score; no drawing (chapter 14).

    Parameters
    ----------
    network
        The evolved champion: the "champion" opponent, and the network whose outputs are shown.
    opponent
        "champion", "rule base" or "perfect".
    human
        The side the human plays: ``X`` (moves first) or ``O``.
    seed
        Seed of the rule base's random choices.

    Attributes
    ----------
    board, moves, status, tally
        The position, the squares played, a sentence for the status line, and the wins of the human,
        the opponent and the draws against the current opponent and side (changing either restarts it).
    """

    def __init__(self, network: Network, opponent: str = "champion", human: int = X, seed: int = 0) -> None:
        if not isinstance(network, Network):
            raise ValueError(f"network must be a Network; got {type(network).__name__}")
        self.network = network
        self.rng = np.random.default_rng(seed)
        self.configure(opponent, human)

    def configure(self, opponent: str, human: int) -> None:
        """Choose the opponent and the human's side, restart the score, and start a new game."""
        if human not in (X, O):
            raise ValueError(f"human must be X (+1) or O (-1); got {human!r}")
        self._opponent_move = opponent_player(opponent, -human, self.rng, self.network)
        self.opponent, self.human = opponent, human
        self.tally = {"human": 0, "opponent": 0, "draws": 0}
        self.new_game()

    @property
    def over(self) -> bool:
        """Whether the current game has finished."""
        return is_game_over(self.board)

    def new_game(self) -> None:
        """Clear the board; if the opponent plays X it makes its first move at once."""
        self.board = np.zeros(9, dtype=np.int8)
        self.moves: list[int] = []
        self.status = "Your move." if self.human == X else ""
        if self.human == O:
            self._opponent_turn()

    def click(self, square: int) -> bool:
        """The human plays ``square``; the opponent answers. Returns whether the move was made.

        A click on an occupied square, outside the board, or after the game has ended changes nothing
        and explains why in :attr:`status`.
        """
        if self.over:
            self.status = "The game is over. Press New game to play again."
            return False
        if isinstance(square, bool) or not isinstance(square, (int, np.integer)) or not 0 <= square <= 8:
            self.status = f"There is no square {square!r}; squares are 0 to 8."
            return False
        if self.board[square] != EMPTY:
            self.status = f"Square {square} is taken. Choose an empty square."
            return False
        self._play(square)
        if not self.over:
            self._opponent_turn()
        return True

    def network_view(self) -> NetworkView:
        """Why the champion moved where it did, or, against another opponent, what it would play here.

        Against the champion, once it has moved in this game: its outputs on the board just before its
        last move, and that move. Otherwise: its outputs on the current board from the side to move (X
        once the game is over), and the move it would make.
        """
        champion_mark = -self.human
        if self.opponent == "champion":
            mine = [i for i, _ in enumerate(self.moves) if (X if i % 2 == 0 else O) == champion_mark]
            if mine:
                last = mine[-1]
                before = np.zeros(9, dtype=np.int8)
                for square in self.moves[:last]:
                    before = play(before, square)
                outputs = network_outputs(self.network, before, champion_mark)
                caption = f"Why the champion played square {self.moves[last]}: its outputs just before that move."
                return NetworkView(before, outputs, self.moves[last], caption)
        if self.over:
            outputs = network_outputs(self.network, self.board, X)
            return NetworkView(self.board, outputs, None, "The game is over: the champion's outputs, seen as X.")
        mark = player_to_move(self.board)
        move = network_move(self.network, self.board, mark)
        caption = f"The champion's outputs for your position: it would play square {move}."
        return NetworkView(self.board, network_outputs(self.network, self.board, mark), move, caption)

    def _opponent_turn(self) -> None:
        self._play(self._opponent_move(self.board))
        if not self.over:
            self.status = f"{self.opponent.capitalize()} played square {self.moves[-1]}. Your move."

    def _play(self, square: int) -> None:
        self.board = play(self.board, square)
        self.moves.append(int(square))
        if self.over:
            result = winner(self.board)
            if result == EMPTY:
                self.tally["draws"] += 1
                self.status = "Draw. Press New game to play again."
            elif result == self.human:
                self.tally["human"] += 1
                self.status = "You win! Press New game to play again."
            else:
                self.tally["opponent"] += 1
                self.status = f"{self.opponent.capitalize()} wins. Press New game to play again."


def output_color(value: float) -> str:
    """A hex colour for an output strength in [0, 1] on matplotlib's viridis scale (chapter 14)."""
    from matplotlib import colormaps, colors

    return colors.to_hex(colormaps["viridis"](float(np.clip(value, 0.0, 1.0))))


class PlayWidget:
    """An ipywidgets board for a :class:`GameSession`: it only draws the session and forwards clicks (chapter 14).

    ``squares`` are the nine buttons, ``new_game`` the button that restarts, ``opponent`` and ``side``
    the two pickers, ``status`` and ``score`` the text lines, ``heat`` the nine cells of the network's
    output heatmap. Display the widget with ``display(widget.view)``.
    """

    def __init__(self, session: GameSession) -> None:
        import ipywidgets as widgets

        self.session = session
        cell = widgets.Layout(width="64px", height="64px")
        self.squares = [widgets.Button(description=" ", layout=cell) for _ in range(9)]
        for square, button in enumerate(self.squares):
            button.on_click(lambda _button, square=square: self._safely(self.session.click, square))
        self.new_game = widgets.Button(description="New game", button_style="primary")
        self.new_game.on_click(lambda _button: self._safely(self.session.new_game))
        self.opponent = widgets.Dropdown(options=list(OPPONENT_KINDS), value=session.opponent, description="Opponent")
        self.side = widgets.Dropdown(options=[("X (first)", X), ("O (second)", O)], value=session.human,
                                     description="You play")  # fmt: skip
        self.opponent.observe(self._reconfigure, names="value")
        self.side.observe(self._reconfigure, names="value")
        self.status = widgets.HTML()
        self.score = widgets.HTML()
        self.heat = [widgets.HTML(layout=widgets.Layout(width="64px", height="64px")) for _ in range(9)]

        def three_by_three(cells):  # fixed 66-pixel rows and columns, not stretched to the panel beside it
            shape = widgets.Layout(grid_template_columns="repeat(3, 66px)", grid_template_rows="repeat(3, 66px)",
                                   align_self="flex-start")  # fmt: skip
            return widgets.GridBox(cells, layout=shape)

        grid, heatmap = three_by_three(self.squares), three_by_three(self.heat)
        self.explanation = widgets.HTML(layout=widgets.Layout(width="240px"))
        side_panel = widgets.VBox([self.explanation, heatmap], layout=widgets.Layout(margin="0 0 0 24px"))
        self.view = widgets.VBox([
            widgets.HBox([self.opponent, self.side, self.new_game]),
            widgets.HBox([grid, side_panel]),
            self.status, self.score,
        ])  # fmt: skip
        self.refresh()

    def _safely(self, action, *args) -> None:
        # A widget callback must never raise: whatever happens, the board stays usable and says why.
        try:
            action(*args)
        except Exception as error:  # noqa: BLE001 - shown to the reader instead of lost in a log
            self.session.status = f"Something went wrong: {error}. Press New game."
        self.refresh()

    def _reconfigure(self, _change=None) -> None:
        self._safely(self.session.configure, self.opponent.value, self.side.value)

    def refresh(self) -> None:
        """Redraw the board, the heatmap, the status line and the score from the session."""
        session = self.session
        for square, button in enumerate(self.squares):
            value = int(session.board[square])
            button.description = SYMBOLS[value] if value != EMPTY else " "
            button.button_style = "info" if value == X else ("danger" if value == O else "")
        view = session.network_view()
        for square, cell in enumerate(self.heat):
            if view.board[square] != EMPTY:  # a mark, in letters that do not look like digits
                style, font = "background:#d9d9d9;color:#555", "font-family:sans-serif;font-weight:bold"
                text = SYMBOLS[int(view.board[square])]
            else:
                value = view.outputs[square]
                ink = "white" if value < 0.6 else "black"
                style, font, text = (
                    f"background:{output_color(value)};color:{ink}",
                    "font-family:monospace",
                    f"{value:.2f}",
                )
            border = "3px solid #d62728" if square == view.move else "3px solid transparent"
            cell.value = (f'<div style="{style};border:{border};width:56px;height:56px;display:flex;'
                          f'align-items:center;justify-content:center;{font}">{text}</div>')  # fmt: skip
        self.explanation.value = f"<b>Why this move?</b><br>{view.caption}<br>(occupied squares grey, move outlined)"
        self.status.value = f"<b>{session.status}</b>"
        tally = session.tally
        self.score.value = (
            f"You {tally['human']} &nbsp; {session.opponent} {tally['opponent']} &nbsp; draws {tally['draws']}"
        )


def play_widget(network: Network | None = None, opponent: str = "champion", human: int = O, seed: int = 0):
    """Make a :class:`PlayWidget` against the saved champion (or ``network``) and return it (chapter 14).

    By default the reader plays O, so the champion opens as X, the side it was evolved for.
    """
    if network is None:
        network, _ = load_network(DEFAULT_CHAMPION)
    return PlayWidget(GameSession(network, opponent, human, seed))


# =====================================================================================================
# The command line: python -m ttt_helpers evolve ... (chapter 7) and evaluate ... (chapter 11)
# =====================================================================================================


def _payoff_argument(text: str) -> tuple[float, float, float]:
    try:
        return check_payoff([float(part) for part in text.split(",")])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected three numbers win,loss,draw such as 1,-10,0; got {text!r}"
        ) from None


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0; got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``python -m ttt_helpers`` (chapter 7)."""
    parser = argparse.ArgumentParser(prog="python -m ttt_helpers", description="Fogel (1993) tic-tac-toe experiments.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("evolve", help="run the evolutionary experiment and save every curve and final network")
    run.add_argument("--trials", type=_nonnegative_int, default=PAPER_EXPERIMENT.trials)
    run.add_argument("--generations", type=_nonnegative_int, default=PAPER_EXPERIMENT.generations)
    run.add_argument("--parents", type=_nonnegative_int, default=PAPER_EXPERIMENT.parents)
    run.add_argument("--seed", type=_nonnegative_int, default=1)
    run.add_argument("--out", required=True, help="the .npz file to write")
    run.add_argument("--payoff", type=_payoff_argument, default=PAPER_PAYOFF, help="win,loss,draw (default 1,-10,0)")
    run.add_argument("--rule-d", choices=("own", "opponent"), default="own",
                     help="rule (d) develops lines holding an O (own, the paper) or an X (opponent)")  # fmt: skip
    run.add_argument("--first-reply", choices=("cycle", "rules"), default="cycle",
                     help="O's first reply visits all eight squares (the paper) or follows the rules")  # fmt: skip
    run.add_argument("--strict-selection", action="store_true",
                     help="earn a selection point only against strictly lower scores (the textbook)")  # fmt: skip
    run.add_argument("--spread-is", choices=("std", "variance"), default="std",
                     help="0.05 is the standard deviation (the paper) or the variance of the weight noise")  # fmt: skip
    run.add_argument("--workers", type=_nonnegative_int, default=None, help="processes to use (default: all cores)")
    run.add_argument("--champion", help="also save the best network of trial 0 to this JSON file")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    evaluate_cmd = commands.add_parser("evaluate", help="exact analysis of a saved network")
    evaluate_cmd.add_argument("network", help="a network JSON file written by save_network")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ttt_helpers`` (chapter 7)."""
    import os

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "evolve":
        try:
            config = ExperimentConfig(
                parents=args.parents, generations=args.generations, trials=args.trials,
                rules=OpponentRules(rule_d_lines=args.rule_d, first_reply=args.first_reply),
                mutation=MutationSettings(spread_is=args.spread_is),
                selection=SelectionSettings(payoff=args.payoff, ties_win=not args.strict_selection),
            )  # fmt: skip
            workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
            check_count(workers, "--workers")
        except ValueError as error:
            parser.error(str(error))
        print(f"evolving: {config.trials} trials x {config.generations} generations, {config.parents} parents, "
              f"seed {args.seed}, {workers} worker(s)", file=sys.stderr)  # fmt: skip
        run = evolve(config, seed=args.seed, progress=not args.quiet, workers=workers)
        save_run(run, args.out)
        final = run.best_score[:, -1]
        print(f"wrote {args.out}: mean best score in the last generation {final.mean():.2f} "
              f"(trials range {final.min():g} to {final.max():g})")  # fmt: skip
        if args.champion:
            save_network(run.best_network(0), args.champion, **champion_provenance(run, 0))
            print(f"wrote {args.champion}: best network of trial 0 ({run.best_network(0).hidden_count} hidden nodes)")
        return 0
    try:
        network, provenance = load_network(args.network)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    print(evaluation_report(network, provenance))
    return 0


if __name__ == "__main__":
    sys.exit(main())
