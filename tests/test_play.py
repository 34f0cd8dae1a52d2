"""Chapter 14: the game session and the play widget, driven by simulated button clicks."""

import random
import re

import numpy as np
import pytest

from evolving_ttt.fogel.network import load_network, network_move, network_outputs, sigmoid
from evolving_ttt.game import EMPTY, SYMBOLS, O, X, is_game_over, legal_moves, play, player_to_move, winner
from evolving_ttt.perfect import perfect_move
from evolving_ttt.play import (
    DEFAULT_CHAMPION,
    OPPONENT_KINDS,
    GameSession,
    opponent_player,
    output_color,
    play_out,
    play_widget,
)

MARK_OF_DESCRIPTION = {"X": X, "O": O, " ": EMPTY}
END_STATUS = {
    "human": "You win! Press New game to play again.",
    "draws": "Draw. Press New game to play again.",
}
GAME_OVER = "The game is over. Press New game to play again."
HEAT_CELL = re.compile(r'<div style="background:([^;]+);color:([^;]+);border:([^;]+);[^"]*">([^<]*)</div>')


@pytest.fixture(scope="module")
def network():
    return load_network(DEFAULT_CHAMPION)[0]


# --- helpers --------------------------------------------------------------------------------------------


def button_board(widget):
    """The board as the nine buttons show it."""
    return np.array([MARK_OF_DESCRIPTION[b.description] for b in widget.squares], dtype=np.int8)


def tally_key(board, human):
    """Which tally column a finished board belongs to, from the human's point of view."""
    result = winner(board)
    return "draws" if result == EMPTY else ("human" if result == human else "opponent")


def end_status(session):
    key = tally_key(session.board, session.human)
    return END_STATUS.get(key, f"{session.opponent.capitalize()} wins. Press New game to play again.")


def check_view(widget, network):
    """The widget shows exactly its session: buttons, heatmap, status line and score."""
    session = widget.session
    assert np.array_equal(button_board(widget), session.board)
    for square, button in enumerate(widget.squares):
        expected_style = {X: "info", O: "danger", EMPTY: ""}[int(session.board[square])]
        assert button.button_style == expected_style
    # The heatmap, recomputed here from the moves: against the champion, its outputs just before its last move
    # and that move; otherwise its outputs for the current board from the side to move, and the move it would make.
    board, mark, move = expected_heatmap(session, network)
    outputs = network_outputs(network, board, mark)
    for square, cell in enumerate(widget.heat):
        match = HEAT_CELL.fullmatch(cell.value)
        assert match, cell.value
        background, _ink, border, text = match.groups()
        assert ("#d62728" in border) == (square == move)
        if board[square] != EMPTY:
            assert background == "#d9d9d9"
            assert text == SYMBOLS[int(board[square])]
        else:
            assert background == output_color(outputs[square])
            assert text == f"{outputs[square]:.2f}"
            assert 0.0 <= float(text) <= 1.0
    assert widget.status.value == f"<b>{session.status}</b>"
    tally = session.tally
    assert widget.score.value == (
        f"You {tally['human']} &nbsp; {session.opponent} {tally['opponent']} &nbsp; draws {tally['draws']}"
    )
    assert not session.status.startswith("Something went wrong")


def expected_heatmap(session, network):
    """(board, the champion's mark on it, the outlined square) that the heatmap must show."""
    champion = -session.human
    if session.opponent == "champion":
        champion_turns = [i for i in range(len(session.moves)) if (X if i % 2 == 0 else O) == champion]
        if champion_turns:
            last = champion_turns[-1]
            board = np.zeros(9, dtype=np.int8)
            for square in session.moves[:last]:
                board = play(board, square)
            assert network_move(network, board, champion) == session.moves[last]
            return board, champion, session.moves[last]
    if is_game_over(session.board):
        return session.board, X, None
    mark = player_to_move(session.board)
    return session.board, mark, network_move(network, session.board, mark)


class Shadow:
    """Replays the opponent's choices independently: same kind, same side, and a generator with the same seed."""

    def __init__(self, network, seed):
        self.network = network
        self.rng = np.random.default_rng(seed)

    def move(self, kind, mark, board):
        return opponent_player(kind, mark, self.rng, self.network)(board)


def click_and_check(widget, network, square, shadow=None):
    """Click a square button and check board, moves, status and tally against what the rules say."""
    session = widget.session
    board, moves, tally = session.board.copy(), list(session.moves), dict(session.tally)
    was_over = is_game_over(board)
    widget.squares[square].click()
    check_view(widget, network)
    if was_over or board[square] != EMPTY:
        # Nothing changes, and the status line says why.
        assert np.array_equal(session.board, board) and session.moves == moves and session.tally == tally
        assert session.status == (GAME_OVER if was_over else f"Square {square} is taken. Choose an empty square.")
        return False
    after_human = play(board, square)
    assert player_to_move(board) == session.human
    assert session.moves[: len(moves) + 1] == [*moves, square]
    if is_game_over(after_human):
        assert np.array_equal(session.board, after_human) and len(session.moves) == len(moves) + 1
    else:
        reply = session.moves[-1]
        assert len(session.moves) == len(moves) + 2
        assert np.array_equal(session.board, play(after_human, reply))
        if shadow is not None:
            assert reply == shadow.move(session.opponent, -session.human, after_human)
    expected_tally = dict(tally)
    if is_game_over(session.board):
        expected_tally[tally_key(session.board, session.human)] += 1
        assert session.status == end_status(session)
    else:
        assert session.status == f"{session.opponent.capitalize()} played square {session.moves[-1]}. Your move."
    assert session.tally == expected_tally
    return True


def check_fresh_game(widget, network, shadow=None):
    """After New game or a picker change: an empty board, or the opponent's single opening move."""
    session = widget.session
    check_view(widget, network)
    if session.human == X:
        assert session.moves == [] and not session.board.any()
        assert session.status == "Your move."
    else:
        assert len(session.moves) == 1
        assert np.count_nonzero(session.board) == 1 and session.board[session.moves[0]] == X
        assert session.status == f"{session.opponent.capitalize()} played square {session.moves[0]}. Your move."
        if shadow is not None:
            assert session.moves[0] == shadow.move(session.opponent, X, np.zeros(9, dtype=np.int8))


# --- whole games through the widget ---------------------------------------------------------------------


@pytest.mark.parametrize("human", [X, O], ids=["human-X", "human-O"])
@pytest.mark.parametrize("opponent", OPPONENT_KINDS)
def test_whole_games_by_clicking_the_widget(network, opponent, human):
    seed = 11
    widget = play_widget(network, opponent=opponent, human=human, seed=seed)
    shadow = Shadow(network, seed)
    chooser = random.Random(f"{opponent}/{human}")
    check_fresh_game(widget, network, shadow)
    games = 6
    for game in range(games):
        while not widget.session.over:
            board = widget.session.board
            if chooser.random() < 0.15 and np.count_nonzero(board):
                square = int(chooser.choice(np.flatnonzero(board)))  # an occupied square: nothing may happen
            elif game % 2 == 0:
                square = perfect_move(board)  # a strong human
            else:
                square = chooser.choice(legal_moves(board))  # a careless one
            click_and_check(widget, network, square, shadow)
        if opponent == "perfect":
            assert winner(widget.session.board) != human, "the perfect player lost"
        # A click after the end changes nothing.
        click_and_check(widget, network, chooser.randrange(9), shadow)
        before = dict(widget.session.tally)
        widget.new_game.click()
        assert widget.session.tally == before
        check_fresh_game(widget, network, shadow)
    assert sum(widget.session.tally.values()) == games
    if opponent == "perfect":
        assert widget.session.tally["human"] == 0


def test_each_tally_column_and_end_message_is_reached(network):
    # A human win: the perfect line 0, 1, 2 beats the champion playing O (it never blocks square 2).
    widget = play_widget(network, opponent="champion", human=X, seed=0)
    for square in (0, 1, 2):
        click_and_check(widget, network, square)
    assert widget.session.tally == {"human": 1, "opponent": 0, "draws": 0}
    assert widget.session.status == "You win! Press New game to play again."
    # An opponent win: against the perfect player, taking the lowest empty square loses.
    widget = play_widget(network, opponent="perfect", human=X, seed=0)
    while not widget.session.over:
        click_and_check(widget, network, legal_moves(widget.session.board)[0])
    assert widget.session.tally == {"human": 0, "opponent": 1, "draws": 0}
    assert widget.session.status == "Perfect wins. Press New game to play again."
    # A draw: perfect play on both sides.
    widget.new_game.click()
    while not widget.session.over:
        click_and_check(widget, network, perfect_move(widget.session.board))
    assert widget.session.tally == {"human": 0, "opponent": 1, "draws": 1}
    assert widget.session.status == "Draw. Press New game to play again."
    assert widget.score.value == "You 0 &nbsp; perfect 1 &nbsp; draws 1"


# --- single behaviours ----------------------------------------------------------------------------------


def test_click_on_an_occupied_square_changes_nothing(network):
    widget = play_widget(network, opponent="rule base", human=X, seed=5)
    widget.squares[4].click()
    session = widget.session
    assert len(session.moves) == 2
    board, moves, tally = session.board.copy(), list(session.moves), dict(session.tally)
    for square in moves:
        widget.squares[square].click()
        assert np.array_equal(session.board, board) and session.moves == moves and session.tally == tally
        assert session.status == f"Square {square} is taken. Choose an empty square."
        assert widget.status.value == f"<b>Square {square} is taken. Choose an empty square.</b>"
        check_view(widget, network)


def test_click_after_the_end_changes_nothing(network):
    widget = play_widget(network, opponent="perfect", human=X, seed=0)
    while not widget.session.over:
        widget.squares[legal_moves(widget.session.board)[0]].click()
    session = widget.session
    board, moves, tally = session.board.copy(), list(session.moves), dict(session.tally)
    empty = [int(s) for s in np.flatnonzero(board == EMPTY)]
    assert empty, "this game should end before the board is full"
    for square in [*empty, *moves[:2]]:
        widget.squares[square].click()
        assert np.array_equal(session.board, board) and session.moves == moves and session.tally == tally
        assert session.status == GAME_OVER
        check_view(widget, network)


def test_new_game_resets_board_and_moves_but_keeps_the_tally(network):
    for human in (X, O):
        widget = play_widget(network, opponent="perfect", human=human, seed=0)
        while not widget.session.over:
            widget.squares[legal_moves(widget.session.board)[0]].click()
        tally = dict(widget.session.tally)
        assert sum(tally.values()) == 1
        widget.new_game.click()
        assert widget.session.tally == tally
        check_fresh_game(widget, network)
        # New game in the middle of a game: the abandoned game is not counted.
        widget.squares[legal_moves(widget.session.board)[0]].click()
        widget.new_game.click()
        assert widget.session.tally == tally
        check_fresh_game(widget, network)


def test_changing_a_picker_starts_a_new_game(network):
    seed = 3
    widget = play_widget(network, opponent="champion", human=X, seed=seed)
    shadow = Shadow(network, seed)
    session = widget.session
    widget.squares[0].click()
    assert len(session.moves) == 2
    tally = dict(session.tally)
    for opponent, side in [("rule base", X), ("rule base", O), ("perfect", O), ("champion", O),
                           ("champion", X), ("rule base", X)]:  # fmt: skip
        if opponent != widget.opponent.value:
            widget.opponent.value = opponent
            # Changing the opponent alone starts a game with the current side.
            assert session.opponent == opponent
            check_fresh_game(widget, network, shadow)
        if side != widget.side.value:
            widget.side.value = side
            assert session.human == side
            check_fresh_game(widget, network, shadow)
            if side == O:
                assert len(session.moves) == 1  # the opponent has moved exactly once
        assert session.opponent == opponent and session.human == side
        assert session.tally == tally  # abandoned games are not counted
        # Play one move so that the next change has something to throw away.
        if not session.over:
            click_and_check(widget, network, legal_moves(session.board)[0], shadow)


def test_long_random_sequence_of_clicks_never_breaks_the_widget(network):
    seed = 2024
    widget = play_widget(network, opponent="rule base", human=X, seed=seed)
    shadow = Shadow(network, seed)
    session = widget.session
    chooser = random.Random(seed)
    finished = total_finished = 0  # games finished since the last picker change (the tally restarts), and in all
    kinds_seen, sides_seen = set(), set()
    for _ in range(500):
        action = chooser.random()
        if action < 0.85:
            was_over = session.over
            click_and_check(widget, network, chooser.randrange(9), shadow)
            if session.over and not was_over:
                finished += 1
                total_finished += 1
                if session.opponent == "perfect":
                    assert winner(session.board) != session.human, "the perfect player lost"
        elif action < 0.93:
            widget.new_game.click()
            check_fresh_game(widget, network, shadow)
        elif action < 0.97:
            widget.opponent.value = chooser.choice([k for k in OPPONENT_KINDS if k != widget.opponent.value])
            check_fresh_game(widget, network, shadow)
            finished = 0
        else:
            widget.side.value = -widget.side.value
            check_fresh_game(widget, network, shadow)
            finished = 0
        kinds_seen.add(session.opponent)
        sides_seen.add(session.human)
        assert sum(session.tally.values()) == finished
    assert total_finished >= 20
    assert kinds_seen == set(OPPONENT_KINDS) and sides_seen == {X, O}


def test_a_failing_callback_is_reported_on_the_status_line(network):
    widget = play_widget(network, opponent="champion", human=X, seed=0)

    def broken(square):
        raise RuntimeError(f"boom on {square}")

    widget.session.click = broken
    widget.squares[3].click()
    assert widget.status.value == "<b>Something went wrong: boom on 3. Press New game.</b>"
    assert not widget.session.board.any()


# --- the session without a widget -----------------------------------------------------------------------


@pytest.mark.parametrize("square", [9, -1, "a", 2.0, True, None])
def test_click_outside_the_board_changes_nothing(network, square):
    session = GameSession(network, "rule base", O, seed=1)
    board, moves, tally = session.board.copy(), list(session.moves), dict(session.tally)
    assert session.click(square) is False
    assert np.array_equal(session.board, board) and session.moves == moves and session.tally == tally
    assert session.status == f"There is no square {square!r}; squares are 0 to 8."


def test_game_session_rejects_a_bad_opponent_side_or_network(network):
    with pytest.raises(ValueError, match=r"opponent must be one of .*; got 'grandmaster'"):
        GameSession(network, "grandmaster")
    for side in (0, 2, "X"):
        with pytest.raises(ValueError, match=rf"human must be X \(\+1\) or O \(-1\); got {re.escape(repr(side))}"):
            GameSession(network, "perfect", side)
    with pytest.raises(ValueError, match="network must be a Network; got str"):
        GameSession("champion.json")
    with pytest.raises(ValueError, match="got 'Perfect'"):
        play_widget(network, opponent="Perfect")


def test_opponent_player_rejects_a_bad_mark_kind_or_missing_network():
    rng = np.random.default_rng(0)
    for mark in (0, 2):
        with pytest.raises(ValueError, match=rf"mark must be X \(\+1\) or O \(-1\); got {mark}"):
            opponent_player("perfect", mark, rng)
    with pytest.raises(ValueError, match="opponent must be one of"):
        opponent_player("minimax", X, rng)
    with pytest.raises(ValueError, match="the champion opponent needs a network"):
        opponent_player("champion", O, rng)


def test_network_view_is_the_colour_swapped_output_for_o(network):
    session = GameSession(network, "perfect", X, seed=0)
    session.click(4)  # the perfect player answers, so X is to move
    assert np.array_equal(session.network_view().outputs, network_outputs(network, session.board))
    session = GameSession(network, "perfect", O, seed=0)  # the perfect player opened: O is to move
    x = -session.board.astype(float)
    raw = sigmoid(network.output_weights @ sigmoid(network.hidden_weights @ x - network.hidden_bias)
                    - network.output_bias)  # fmt: skip
    assert np.array_equal(session.network_view().outputs, raw)
    assert not np.array_equal(raw, network_outputs(network, session.board, X))


def test_network_view_explains_the_champions_last_move(network):
    session = GameSession(network, "champion", O, seed=0)  # the champion opens as X
    view = session.network_view()
    assert not view.board.any() and view.move == session.moves[0] == network_move(network, view.board)
    assert f"square {view.move}" in view.caption
    reply = legal_moves(session.board)[0]
    session.click(reply)  # the champion answers; the view moves on to that answer
    view = session.network_view()
    assert np.count_nonzero(view.board) == 2 and view.move == session.moves[-1]
    assert np.array_equal(view.outputs, network_outputs(network, view.board, X))


def test_changing_the_opponent_restarts_the_tally(network):
    session = GameSession(network, "perfect", X, seed=0)
    while not session.over:
        session.click(legal_moves(session.board)[0])
    assert sum(session.tally.values()) == 1
    session.configure("rule base", X)
    assert session.tally == {"human": 0, "opponent": 0, "draws": 0}


def test_output_color_spans_viridis_and_clips():
    assert output_color(0.0) == "#440154"  # viridis' dark end
    assert output_color(1.0) == "#fde725"  # viridis' bright end
    assert output_color(-3.0) == output_color(0.0) and output_color(7.0) == output_color(1.0)
    assert len({output_color(v) for v in np.linspace(0, 1, 11)}) == 11


def test_play_out_plays_legal_complete_games(network):
    rng = np.random.default_rng(7)
    for x_kind in OPPONENT_KINDS:
        for o_kind in OPPONENT_KINDS:
            result, moves = play_out(opponent_player(x_kind, X, rng, network),
                                       opponent_player(o_kind, O, rng, network))  # fmt: skip
            board = np.zeros(9, dtype=np.int8)
            for square in moves:
                assert not is_game_over(board)
                board = play(board, square)
            assert is_game_over(board) and winner(board) == result
            if "perfect" in (x_kind, o_kind) and x_kind != o_kind:
                perfect_mark = X if x_kind == "perfect" else O
                assert result != -perfect_mark
