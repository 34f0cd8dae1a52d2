"""Players of either side as two policy tables: the common form of every player of the book (chapters 26, 24).

Every system's players, the reference players and a reader's own player all become an :class:`ArenaPlayer`: a name,
the system it comes from, and its policy tables as X and as O (:mod:`evolving_ttt.outcomes`). The arena measures
them (chapter 24), the play widget and the page's board play them (chapter 26). :func:`table_player` makes one from
a deterministic move function, such as a reader writes in chapter 25.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from evolving_ttt.game import (
    O,
    X,
    board_index,
    check_instance,
    check_mark,
    is_game_over,
    player_to_move,
    validate_board,
)
from evolving_ttt.outcomes import check_policy, policy_table


@dataclass(frozen=True)
class Explanation:
    """Why a player moves where it does on one board: what the play chapter shows beside the board (chapter 26).

    Attributes
    ----------
    values
        Nine numbers, one per square, that the player's choice rests on (nan on occupied squares), or
        all nan when its reasons are not numbers.
    label
        What the numbers are ("output", "minimax value", ...).
    text
        One or two sentences; for a program, the path through it that reached the move.
    move
        The square the player plays (for a stochastic player, one of its likely squares).
    """

    values: np.ndarray
    label: str
    text: str
    move: int


@dataclass(frozen=True, eq=False)
class ArenaPlayer:
    """A player of either side, as two policy tables (book/24_arena.ipynb).

    Attributes
    ----------
    name, system, description
        What the player is called, which system (or reference) it comes from, and one line about it.
    x_policy, o_policy
        Its policy tables as X and as O, shape (19683, 9) each.
    training
        What making it cost, in words (games played or positions scored), or "" for reference players.
    explain
        ``explain(board, mark) -> Explanation``: why the player moves where it does (chapter 26).
    """

    name: str
    system: str
    description: str
    x_policy: np.ndarray = field(repr=False)
    o_policy: np.ndarray = field(repr=False)
    training: str = ""
    explain: Callable[[np.ndarray, int], Explanation] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_policy(self.x_policy, X, f"{self.name}'s x_policy", single=True)
        check_policy(self.o_policy, O, f"{self.name}'s o_policy", single=True)

    def policy(self, mark: int) -> np.ndarray:
        """The policy table of ``mark``."""
        return self.x_policy if check_mark(mark) == X else self.o_policy

    @property
    def deterministic(self) -> bool:
        """Whether the player always makes the same move on the same board."""
        return all(bool(np.all((table == 0) | (table == 1))) for table in (self.x_policy, self.o_policy))

    def move(self, board: Sequence[int] | np.ndarray, rng: np.random.Generator | None = None) -> int:
        """The player's move on ``board`` for the side to move; a stochastic player draws it from ``rng``.

        Raises
        ------
        ValueError
            If the board is not legal or the game is over, or a stochastic choice has no ``rng``.
        """
        values = validate_board(board)
        if is_game_over(values):
            raise ValueError("the game is over on this board; there is no move to make")
        row = self.policy(player_to_move(values))[board_index(values)]
        squares = np.flatnonzero(row)
        if len(squares) == 1:
            return int(squares[0])
        check_instance(rng, np.random.Generator, "rng", f"a numpy.random.Generator ({self.name} moves at random)")
        return int(rng.choice(squares, p=row[squares] / row[squares].sum()))


def table_player(
    name: str,
    system: str,
    description: str,
    move: Callable[[np.ndarray, int], int],
    training: str = "",
    explain: Callable[[np.ndarray, int], Explanation] | None = None,
) -> ArenaPlayer:
    """An :class:`ArenaPlayer` from a deterministic move function ``move(board, mark) -> square``."""
    return ArenaPlayer(
        name, system, description, policy_table(lambda board: move(board, X), X),
        policy_table(lambda board: move(board, O), O), training, explain,
    )  # fmt: skip


def square_values(board: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Nine values as floats with nan on the occupied squares of ``board`` (for an :class:`Explanation`)."""
    board = np.asarray(board)
    return np.where(board == 0, np.asarray(values, dtype=float), np.nan)


def probability_explanation(policy: Callable[[int], np.ndarray], text: str) -> Callable[[np.ndarray, int], Explanation]:
    """An ``explain`` that shows a player's move probabilities and says ``text`` (for stochastic players)."""

    def explain(board: np.ndarray, mark: int) -> Explanation:
        row = policy(mark)[board_index(board)]
        return Explanation(square_values(board, row), "probability", text, int(np.argmax(row)))

    return explain
