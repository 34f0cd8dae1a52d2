"""The game of tic-tac-toe: boards, their encoding, the rules, and the base-3 board index (chapter 1).

The bottom of the package: every other module builds on this one, and it imports none of them.

Conventions used throughout the book
------------------------------------
* A *board* is a length-9 sequence in row-major order (squares 0..8, top-left to bottom-right) with
  ``X = +1``, ``O = -1`` and ``EMPTY = 0``: the input encoding of Fogel (1993).
* X always moves first.
* Every random function takes a :class:`numpy.random.Generator`; the same seed gives the same numbers,
  bit for bit.

What is here, in reading order: the marks and the winning lines; checking, reading and writing boards;
the rules (winner, legal moves, playing a move); counting positions and games; then the fast
representation that the batched code of every system uses, a board as a base-3 number with lookup
tables over all 19,683 of them. Small argument checks shared by all systems close the module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

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
    if not set(values.tolist()) <= {X, O, EMPTY}:
        bad = sorted({v.item() for v in values if v not in (X, O, EMPTY)})
        raise ValueError(f"board squares must be -1 (O), 0 (empty) or +1 (X); found {bad}")
    return values.astype(np.int8)


def line_winners(board: np.ndarray) -> set[int]:
    """Return the set of players (X and/or O) that own a complete line on ``board`` (chapter 1)."""
    sums = np.asarray(board)[WIN_LINES].sum(axis=1).tolist()  # one sum per line
    return {player for player in (X, O) if 3 * player in sums}


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
    marks = values.tolist()
    n_x, n_o = marks.count(X), marks.count(O)
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
    return bool(line_winners(values)) or EMPTY not in values.tolist()


def is_draw(board: Sequence[int] | np.ndarray) -> bool:
    """True when the board is full and nobody has a line (chapter 1)."""
    values = validate_board(board)
    return not line_winners(values) and EMPTY not in values.tolist()


def player_to_move(board: Sequence[int] | np.ndarray) -> int:
    """``X`` when both players have the same number of marks, else ``O`` (chapter 1)."""
    marks = validate_board(board).tolist()
    return X if marks.count(X) == marks.count(O) else O


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
    return [square for square, mark in enumerate(values.tolist()) if mark == EMPTY]


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
    marks = values.tolist()
    after[square] = X if marks.count(X) == marks.count(O) else O
    return after


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


def check_count(value: int, name: str, minimum: int = 1) -> int:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a whole number >= ``minimum`` (chapter 2)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}; got {value!r}")
    return int(value)


def check_probability(value: float, name: str) -> float:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a number in [0, 1] (chapter 3)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a probability in [0, 1]; got {value!r}")
    return float(value)


LARGEST_SETTING = 1e6
"""The largest size a real-valued setting may have (a payoff, a spread, a bonus, a shape): each system adds or
multiplies such values over many games, generations or tree nodes, and beyond a million a run can overflow or lose
every smaller term long before its end; no reading of any paper needs more."""


def check_number(value: float, name: str, minimum: float = 0.0, maximum: float = LARGEST_SETTING) -> float:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a finite number in [``minimum``, ``maximum``]
    (by default from 0 to :data:`LARGEST_SETTING`); the number as a ``float``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not minimum <= value <= maximum
    ):
        raise ValueError(f"{name} must be a number from {minimum:g} to {maximum:g}; got {value!r}")
    return float(value)


Player = Callable[[np.ndarray], int]
"""A player of X: a function from a board to the square it plays (chapter 3)."""


def check_instance(value: object, kind: type | tuple[type, ...], name: str, expected: str) -> None:
    """Raise ``ValueError`` naming the argument ``name`` unless ``value`` is a ``kind`` (chapter 1).

    ``expected`` says in words what the argument should be, for the message: bad arguments to public
    functions get a clear ``ValueError``, not an ``AttributeError`` from deep inside.
    """
    if not isinstance(value, kind):
        raise ValueError(f"{name} must be {expected}; got {type(value).__name__} {value!r:.60}")


def check_numbers(numbers: Sequence[int], name: str) -> list[int]:
    """``numbers`` as a list of ``int``, or ``ValueError`` naming ``name`` unless it is a sequence of whole
    numbers (trial or run numbers) (chapter 6)."""
    if isinstance(numbers, (str, bytes)) or not isinstance(numbers, (Sequence, np.ndarray)):
        raise ValueError(f"{name} must be a list of whole numbers; got {numbers!r:.60}")
    if not all(not isinstance(n, bool) and isinstance(n, (int, np.integer)) for n in numbers):
        raise ValueError(f"{name} must be a list of whole numbers; got {numbers!r:.60}")
    return [int(n) for n in numbers]


MEMORY_ESTIMATE_CAP = 2**62
"""The largest memory estimate given, in bytes: far beyond any machine, so any larger run is refused alike."""
