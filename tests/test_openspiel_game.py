"""The book's game layer against OpenSpiel's tic-tac-toe, on every reachable position.

OpenSpiel (``pyspiel.load_game("tic_tac_toe")``) is the reference implementation the Q-learning and MCTS comparisons
will use, so its rules must be the book's rules. Its game tree is walked from the initial state once (module fixture),
keeping one state per distinct board, and every position is compared with ``evolving_ttt.game`` and
``evolving_ttt.perfect.minimax_values``: the positions themselves, the legal moves, the end of the game, the winner,
the player to move and the game-theoretic value, the latter found on the OpenSpiel side by OpenSpiel's own
alpha-beta search.

OpenSpiel's conventions, checked here rather than assumed: player 0 is ``x`` and moves first (the book's X), player 1
is ``o``; action ``a`` marks cell ``a``, and cells run row-major from the top left (the book's squares); a finished
state has ``current_player() == pyspiel.PlayerId.TERMINAL`` and returns +1/-1 to the winner/loser, 0/0 for a draw.
"""

from dataclasses import dataclass

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms.minimax import alpha_beta_search

from evolving_ttt.game import (
    EMPTY,
    O,
    X,
    board_index,
    board_tables,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    winner,
)
from evolving_ttt.perfect import minimax_values, perfect_move

SPIEL_PLAYER = {X: 0, O: 1}
"""OpenSpiel's player id of each of the book's marks."""

CELL_SYMBOL = {"x": X, "o": O, ".": EMPTY}
"""The symbols of OpenSpiel's board string (``str(state)``: three rows of ``x``, ``o`` and ``.``)."""

PLANE_MARK = (EMPTY, O, X)
"""What each plane of OpenSpiel's observation tensor (shape 3 x 9, one entry per cell) marks."""


@dataclass(frozen=True)
class SpielPosition:
    """What OpenSpiel says about one position, and the children of each of its legal actions."""

    board: np.ndarray
    state: pyspiel.State
    children: dict[int, bytes]


def board_of(state: pyspiel.State) -> np.ndarray:
    """The book's board (int8, row-major, X = +1, O = -1) read from OpenSpiel's board string."""
    cells = [c for c in str(state) if not c.isspace()]
    assert len(cells) == 9, str(state)
    return np.array([CELL_SYMBOL[c] for c in cells], dtype=np.int8)


@pytest.fixture(scope="module")
def game() -> pyspiel.Game:
    return pyspiel.load_game("tic_tac_toe")


@pytest.fixture(scope="module")
def spiel_positions(game) -> dict[bytes, SpielPosition]:
    """Every position OpenSpiel reaches from its initial state (depth first), keyed by the board's bytes."""
    positions: dict[bytes, SpielPosition] = {}

    def walk(state: pyspiel.State) -> bytes:
        board = board_of(state)
        key = board.tobytes()
        if key not in positions:
            children = {int(action): walk(state.child(action)) for action in state.legal_actions()}
            positions[key] = SpielPosition(board=board, state=state, children=children)
        return key

    walk(game.new_initial_state())
    return positions


@pytest.fixture(scope="module")
def spiel_alpha_beta(game, spiel_positions) -> dict[bytes, tuple[float, int | None]]:
    """OpenSpiel's alpha-beta value and best action of every position, for the player to move (half a second).

    On a finished position the value is player 0's return and the action None.
    """
    return {
        key: alpha_beta_search(game, state=position.state.clone())
        if not position.state.is_terminal()
        else (position.state.player_return(0), None)
        for key, position in spiel_positions.items()
    }


@pytest.mark.slow
def test_openspiel_reaches_exactly_the_books_reachable_positions(spiel_positions, reachable):
    assert len(spiel_positions) == 5478
    assert set(spiel_positions) == {board.tobytes() for board in reachable}
    # And exactly the boards the book's lookup tables call legal.
    indices = {board_index(position.board) for position in spiel_positions.values()}
    assert indices == set(np.flatnonzero(board_tables().legal).tolist())


def test_the_board_string_agrees_with_the_observation_tensor(spiel_positions):
    """Two views of OpenSpiel's board, one a string and one indexed by cell, read as the same board."""
    for position in spiel_positions.values():
        for player in (0, 1):
            planes = np.array(position.state.observation_tensor(player)).reshape(3, 9)
            assert np.array_equal(planes.sum(axis=0), np.ones(9))
            assert np.array_equal(np.array(PLANE_MARK)[planes.argmax(axis=0)], position.board)


@pytest.mark.slow
def test_action_a_puts_the_movers_mark_on_square_a(spiel_positions):
    """OpenSpiel's action numbering is the book's square numbering, and its player 0 is X."""
    for position in spiel_positions.values():
        state = position.state
        if state.is_terminal():
            continue
        mover = X if state.current_player() == 0 else O
        for action, child_key in position.children.items():
            expected = position.board.copy()
            expected[action] = mover
            assert np.array_equal(spiel_positions[child_key].board, expected)
            assert np.array_equal(spiel_positions[child_key].board, play(position.board, action))
            symbol = "x" if mover == X else "o"
            assert state.action_to_string(state.current_player(), action) == f"{symbol}({action // 3},{action % 3})"


def test_legal_moves_agree(spiel_positions):
    tables = board_tables()
    for position in spiel_positions.values():
        actions = [int(a) for a in position.state.legal_actions()]
        assert legal_moves(position.board) == actions
        i = board_index(position.board)
        book_moves = [] if tables.over[i] else tables.empty_list[i, : tables.n_empty[i]].tolist()
        assert book_moves == actions


def test_game_over_and_winner_agree(spiel_positions):
    tables = board_tables()
    for position in spiel_positions.values():
        state, board = position.state, position.board
        i = board_index(board)
        assert is_game_over(board) == state.is_terminal() == bool(tables.over[i])
        returns = state.returns()
        # X's return is the winner's mark: +1 X won, -1 O won, 0 drawn or not finished; the game is zero-sum.
        assert winner(board) == returns[SPIEL_PLAYER[X]] == tables.winner[i]
        assert returns[SPIEL_PLAYER[O]] == -returns[SPIEL_PLAYER[X]]
        if not state.is_terminal():
            assert returns == [0.0, 0.0]


def test_player_to_move_agrees(spiel_positions):
    tables = board_tables()
    for position in spiel_positions.values():
        state, board = position.state, position.board
        if state.is_terminal():
            assert state.current_player() == pyspiel.PlayerId.TERMINAL
            continue
        assert state.current_player() == SPIEL_PLAYER[player_to_move(board)]
        assert state.current_player() == SPIEL_PLAYER[int(tables.to_move[board_index(board)])]


def test_minimax_values_agree_with_openspiels_alpha_beta(spiel_positions, spiel_alpha_beta):
    values = minimax_values()
    seen = np.zeros(values.shape, dtype=bool)
    for key, position in spiel_positions.items():
        value, _ = spiel_alpha_beta[key]
        state = position.state
        # Alpha-beta scores for the player to move; the book scores for X.
        x_value = value if state.is_terminal() or state.current_player() == 0 else -value
        i = board_index(position.board)
        assert values[i] == x_value
        seen[i] = True
    # No value is left on a board OpenSpiel never reaches.
    assert np.isnan(values[~seen]).all()


@pytest.mark.slow
def test_alpha_beta_and_perfect_move_choose_the_same_square(spiel_positions, spiel_alpha_beta):
    """At its root alpha-beta keeps the first action with the best value, as perfect_move keeps the lowest square."""
    for key, position in spiel_positions.items():
        _, action = spiel_alpha_beta[key]
        if action is not None:
            assert perfect_move(position.board) == action
