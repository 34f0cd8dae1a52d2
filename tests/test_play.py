"""Chapter 26: the game session and the play widget against every player of the book, by simulated clicks."""

import dataclasses
import html
import random
import re

import numpy as np
import pytest

from evolving_ttt.arena import catalogue
from evolving_ttt.fogel.network import load_network, network_move, network_outputs, sigmoid
from evolving_ttt.game import EMPTY, SYMBOLS, O, X, board_index, is_game_over, legal_moves, play, winner
from evolving_ttt.perfect import perfect_move
from evolving_ttt.play import (
    DEFAULT_CHAMPION,
    OPPONENT_KINDS,
    GameSession,
    PlayWidget,
    opponent_player,
    output_color,
    play_out,
    play_widget,
    value_text,
)
from evolving_ttt.players import ArenaPlayer

PLAYERS = catalogue()
NAMES = [player.name for player in PLAYERS]
MARK_OF_DESCRIPTION = {"X": X, "O": O, " ": EMPTY}
GAME_OVER = "The game is over. Press New game to play again."
HEAT_CELL = re.compile(r'<div style="background:([^;]+);color:([^;]+);border:([^;]+);[^"]*">([^<]*)</div>')


@pytest.fixture(scope="module")
def network():
    return load_network(DEFAULT_CHAMPION)[0]


# --- helpers --------------------------------------------------------------------------------------------


def button_board(widget):
    """The board as the nine buttons show it."""
    return np.array([MARK_OF_DESCRIPTION[b.description] for b in widget.squares], dtype=np.int8)


def result_key(board, human):
    """Which tally column a finished board belongs to, from the person's point of view."""
    result = winner(board)
    return "draws" if result == EMPTY else ("wins" if result == human else "losses")


def end_status(session):
    return {
        "wins": "You win! Press New game to play again.",
        "draws": "Draw. Press New game to play again.",
        "losses": f"{session.opponent} wins. Press New game to play again.",
    }[result_key(session.board, session.human)]


def replay(moves):
    board = np.zeros(9, dtype=np.int8)
    for square in moves:
        board = play(board, square)
    return board


def check_view(widget):
    """The widget shows exactly its session: buttons, the opponent's reasons, status line and tally."""
    session = widget.session
    assert np.array_equal(button_board(widget), session.board)
    for square, button in enumerate(widget.squares):
        assert button.button_style == {X: "info", O: "danger", EMPTY: ""}[int(session.board[square])]
    # The reasons, recomputed here from the moves: the opponent's explanation on the board before its last move,
    # or, before it has moved, on the current board for the side to move.
    mark = -session.human
    turns = [k for k in range(len(session.moves)) if (X if k % 2 == 0 else O) == mark]
    if turns:
        board, side = replay(session.moves[: turns[-1]]), mark
        assert session.view().explanation.move == session.moves[turns[-1]] or not session.player.deterministic
    elif session.over:
        board = None
    else:
        board, side = session.board, -mark
    if board is None:
        assert all(cell.value == "" for cell in widget.heat)
    else:
        explanation = session.player.explain(board, side)
        values = explanation.values
        for square, cell in enumerate(widget.heat):
            match = HEAT_CELL.fullmatch(cell.value)
            assert match, cell.value
            background, _ink, border, text = match.groups()
            assert ("#d62728" in border) == (square == explanation.move)
            if board[square] != EMPTY:
                assert background == "#d9d9d9" and text == SYMBOLS[int(board[square])]
            else:  # a number, or a blank where the player gives none (a program's reasons are its path)
                assert text == (value_text(values[square]) if np.isfinite(values[square]) else "")
        # the chosen square has positive probability in the player's policy
        assert session.player.policy(side)[board_index(board), explanation.move] > 0
    assert widget.status.value == f"<b>{session.status}</b>"
    for (name, side_played), record in session.tally.items():
        row = f"<tr><td>{name}</td><td>{side_played}</td><td>{record['wins']}</td><td>{record['draws']}</td>"
        assert row in widget.score.value
    assert not session.status.startswith("Something went wrong")


class Shadow:
    """Replays the opponent's choices independently: the same player and a generator with the same seed."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def move(self, session, board):
        return session.player.move(board, self.rng)


def totals(session):
    return {key: dict(record) for key, record in session.tally.items()}


def click_and_check(widget, square, shadow=None):
    """Click a square button and check board, moves, status and tally against what the rules say."""
    session = widget.session
    board, moves, tally = session.board.copy(), list(session.moves), totals(session)
    was_over = is_game_over(board)
    widget.squares[square].click()
    check_view(widget)
    if was_over or board[square] != EMPTY:
        # Nothing changes, and the status line says why.
        assert np.array_equal(session.board, board) and session.moves == moves and totals(session) == tally
        assert session.status == (GAME_OVER if was_over else f"Square {square} is taken. Choose an empty square.")
        return False
    after_person = play(board, square)
    assert session.moves[: len(moves) + 1] == [*moves, square]
    if is_game_over(after_person):
        assert np.array_equal(session.board, after_person) and len(session.moves) == len(moves) + 1
    else:
        reply = session.moves[-1]
        assert len(session.moves) == len(moves) + 2
        assert np.array_equal(session.board, play(after_person, reply))
        if shadow is not None:
            assert reply == shadow.move(session, after_person)
    key = (session.opponent, SYMBOLS[session.human])
    expected = {k: dict(v) for k, v in tally.items()}
    if is_game_over(session.board):
        record = expected.setdefault(key, {"wins": 0, "draws": 0, "losses": 0})
        record[result_key(session.board, session.human)] += 1
        assert session.status == end_status(session)
    else:
        assert session.status == f"{session.opponent} played square {session.moves[-1]}. Your move."
    assert {k: v for k, v in totals(session).items() if sum(v.values())} == {
        k: v for k, v in expected.items() if sum(v.values())
    }
    return True


def check_fresh_game(widget, shadow=None):
    """After New game or a picker change: an empty board, or the opponent's single opening move."""
    session = widget.session
    check_view(widget)
    if session.human == X:
        assert session.moves == [] and not session.board.any()
        assert session.status == "Your move."
    else:
        assert len(session.moves) == 1
        assert np.count_nonzero(session.board) == 1 and session.board[session.moves[0]] == X
        assert session.status == f"{session.opponent} played square {session.moves[0]}. Your move."
        if shadow is not None:
            assert session.moves[0] == shadow.move(session, np.zeros(9, dtype=np.int8))


# --- whole games through the widget, against every player -----------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("human", [X, O], ids=["human-X", "human-O"])
@pytest.mark.parametrize("opponent", NAMES)
def test_whole_games_by_clicking_the_widget(opponent, human):
    seed = 11
    widget = play_widget(opponent=opponent, human=human, seed=seed)
    shadow = Shadow(seed)
    chooser = random.Random(f"{opponent}/{human}")
    check_fresh_game(widget, shadow)
    games = 4
    for game in range(games):
        while not widget.session.over:
            board = widget.session.board
            if chooser.random() < 0.15 and np.count_nonzero(board):
                square = int(chooser.choice(np.flatnonzero(board)))  # an occupied square: nothing may happen
            elif game % 2 == 0:
                square = perfect_move(board)  # a strong person
            else:
                square = chooser.choice(legal_moves(board))  # a careless one
            click_and_check(widget, square, shadow)
        if opponent in ("perfect", "best response"):
            assert winner(widget.session.board) != human, f"the {opponent} player lost"
        # A click after the end changes nothing.
        click_and_check(widget, chooser.randrange(9), shadow)
        before = totals(widget.session)
        widget.new_game.click()
        assert totals(widget.session) == before
        check_fresh_game(widget, shadow)
    assert sum(widget.session.record.values()) == games


def test_each_tally_column_and_end_message_is_reached():
    # A person's win: the line 0, 1, 2 beats the champion playing O (it never blocks square 2).
    widget = play_widget(opponent="Fogel champion", human=X, seed=0)
    for square in (0, 1, 2):
        click_and_check(widget, square)
    assert widget.session.record == {"wins": 1, "draws": 0, "losses": 0}
    assert widget.session.status == "You win! Press New game to play again."
    # A loss: against the perfect player, taking the lowest empty square loses.
    widget.opponent.value = "perfect"
    while not widget.session.over:
        click_and_check(widget, legal_moves(widget.session.board)[0])
    assert widget.session.record == {"wins": 0, "draws": 0, "losses": 1}
    assert widget.session.status == "perfect wins. Press New game to play again."
    # A draw: perfect play on both sides.
    widget.new_game.click()
    while not widget.session.over:
        click_and_check(widget, perfect_move(widget.session.board))
    assert widget.session.record == {"wins": 0, "draws": 1, "losses": 1}
    # The tally keeps every opponent played, like a table of games against people.
    assert widget.session.tally == {
        ("Fogel champion", "X"): {"wins": 1, "draws": 0, "losses": 0},
        ("perfect", "X"): {"wins": 0, "draws": 1, "losses": 1},
    }
    assert "<tr><td>perfect</td><td>X</td><td>0</td><td>1</td><td>1</td></tr>" in widget.score.value


# --- single behaviours ----------------------------------------------------------------------------------


def test_click_on_an_occupied_square_changes_nothing():
    widget = play_widget(opponent="rule base", human=X, seed=5)
    widget.squares[4].click()
    session = widget.session
    assert len(session.moves) == 2
    board, moves = session.board.copy(), list(session.moves)
    for square in moves:
        widget.squares[square].click()
        assert np.array_equal(session.board, board) and session.moves == moves
        assert session.status == f"Square {square} is taken. Choose an empty square."
        check_view(widget)


def test_changing_a_picker_starts_a_new_game_and_keeps_the_tally():
    seed = 3
    widget = play_widget(opponent="Fogel champion", human=X, seed=seed)
    shadow = Shadow(seed)
    session = widget.session
    for opponent, side in [("rule base", X), ("rule base", O), ("perfect", O), ("random", O), ("Fogel champion", X),
                           ("best response", X)]:  # fmt: skip
        tally = totals(session)
        if opponent != widget.opponent.value:
            widget.opponent.value = opponent
            assert session.opponent == opponent
            check_fresh_game(widget, shadow)
        if side != widget.side.value:
            widget.side.value = side
            assert session.human == side
            check_fresh_game(widget, shadow)
        assert {k: v for k, v in totals(session).items() if sum(v.values())} == {
            k: v for k, v in tally.items() if sum(v.values())
        }  # abandoned games are not counted
        while not session.over:
            click_and_check(widget, legal_moves(session.board)[0], shadow)
    assert sum(sum(r.values()) for r in session.tally.values()) == 6


@pytest.mark.slow
def test_long_random_sequence_of_clicks_never_breaks_the_widget():
    seed = 2024
    widget = play_widget(opponent="rule base", human=X, seed=seed)
    shadow = Shadow(seed)
    session = widget.session
    chooser = random.Random(seed)
    finished = 0
    seen = set()
    for _ in range(400):
        action = chooser.random()
        if action < 0.85:
            was_over = session.over
            click_and_check(widget, chooser.randrange(9), shadow)
            finished += int(session.over and not was_over)
        elif action < 0.93:
            widget.new_game.click()
            check_fresh_game(widget, shadow)
        elif action < 0.97:
            widget.opponent.value = chooser.choice([n for n in NAMES if n != widget.opponent.value])
            check_fresh_game(widget, shadow)
        else:
            widget.side.value = -widget.side.value
            check_fresh_game(widget, shadow)
        seen.add((session.opponent, session.human))
        assert sum(sum(r.values()) for r in session.tally.values()) == finished
    assert finished >= 20 and len(seen) >= 6


def test_a_failing_callback_is_reported_on_the_status_line():
    widget = play_widget(opponent="Fogel champion", human=X, seed=0)

    def broken(square):
        raise RuntimeError(f"boom on {square}")

    widget.session.click = broken
    widget.squares[3].click()
    assert widget.status.value == "<b>Something went wrong: boom on 3. Press New game.</b>"
    assert not widget.session.board.any()


@pytest.mark.parametrize("square", [9, -1, "a", 2.0, True, None])
def test_click_outside_the_board_changes_nothing(square):
    session = GameSession("rule base", O, seed=1)
    board, moves = session.board.copy(), list(session.moves)
    assert session.click(square) is False
    assert np.array_equal(session.board, board) and session.moves == moves
    assert session.status == f"There is no square {square!r}; squares are 0 to 8."


def test_game_session_rejects_a_bad_opponent_side_or_players():
    with pytest.raises(ValueError, match=r"opponent must be one of .*; got 'grandmaster'"):
        GameSession("grandmaster")
    for side in (0, 2, "X", True):
        with pytest.raises(ValueError, match=rf"human must be X \(\+1\) or O \(-1\); got {re.escape(repr(side))}"):
            GameSession("perfect", side)
    with pytest.raises(ValueError, match="players must be a sequence of ArenaPlayer"):
        GameSession("perfect", X, players=["perfect"])
    with pytest.raises(ValueError, match="got 'Perfect'"):
        play_widget(opponent="Perfect")


def test_the_view_explains_the_opponents_last_move_and_uses_the_colour_swap(network):
    session = GameSession("Fogel champion", O, seed=0)  # the champion opens as X
    view = session.view()
    assert not view.board.any() and view.explanation.move == session.moves[0] == network_move(network, view.board)
    assert f"square {session.moves[0]}" in view.caption
    session.click(legal_moves(session.board)[0])  # the champion answers; the view moves on to that answer
    view = session.view()
    assert np.count_nonzero(view.board) == 2 and view.explanation.move == session.moves[-1]
    shown = view.explanation.values
    assert np.allclose(shown[view.board == EMPTY], network_outputs(network, view.board)[view.board == EMPTY])
    # As O, the outputs are the raw formula on the colour-swapped board.
    session = GameSession("Fogel champion", X, seed=0)
    session.click(0)
    view = session.view()
    x = -view.board.astype(float)
    raw = sigmoid(network.output_weights @ sigmoid(network.hidden_weights @ x - network.hidden_bias)
                  - network.output_bias)  # fmt: skip
    assert np.allclose(view.explanation.values[view.board == EMPTY], raw[view.board == EMPTY])


def test_the_perfect_players_reasons_are_minimax_values():
    session = GameSession("perfect", X, seed=0)
    session.click(0)  # perfect (O) must take the centre
    view = session.view()
    assert session.moves[-1] == 4 == view.explanation.move
    values = view.explanation.values
    assert values[4] == 0 and np.nanmax(np.delete(values, 4)) == -1


def test_value_text_and_output_color():
    assert value_text(0.1234) == "0.12" and value_text(-9.5) == "-9.50"
    assert value_text(873324.0) == "873k" and value_text(256.0) == "256"
    assert output_color(0.0) == "#440154" and output_color(1.0) == "#fde725"  # viridis' two ends
    assert output_color(-3.0) == output_color(0.0) and output_color(7.0) == output_color(1.0)


# --- the move functions of chapter 26's replays -------------------------------------------------------------


def test_opponent_player_rejects_a_bad_mark_kind_or_missing_network():
    rng = np.random.default_rng(0)
    for mark in (0, 2):
        with pytest.raises(ValueError, match=rf"mark must be X \(\+1\) or O \(-1\); got {mark}"):
            opponent_player("perfect", mark, rng)
    with pytest.raises(ValueError, match="opponent must be one of"):
        opponent_player("minimax", X, rng)
    with pytest.raises(ValueError, match="the champion opponent needs a network"):
        opponent_player("champion", O, rng)


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


# --- a reader's player whose explain (or move) misbehaves (issue 37) ------------------------------------------

BY_NAME = {player.name: player for player in PLAYERS}
EXPLANATION_FAILED = "Why this move?</b><br>This player's explanation failed: "


def raising_explain(board, mark):
    raise ValueError("no reasons today")


def with_explain(explain, base="Fogel champion", name="mine"):
    """A copy of a catalogue player, renamed, whose ``explain`` is ``explain`` (as a reader might register it)."""
    return dataclasses.replace(BY_NAME[base], name=name, explain=explain)


def check_failed_explanation(widget, error):
    """The widget shows its session, and the reasons panel says, on one line, that the explanation failed."""
    session = widget.session
    assert np.array_equal(button_board(widget), session.board)
    assert widget.status.value == f"<b>{session.status}</b>"
    assert not session.status.startswith("Something went wrong")
    assert widget.explanation.value.endswith(EXPLANATION_FAILED + error)
    assert "<br>" not in widget.explanation.value.split(EXPLANATION_FAILED)[1]
    view = session.view()
    if view is None:
        assert all(cell.value == "" for cell in widget.heat)
        return
    assert view.explanation.text == "This player's explanation failed: " + html.unescape(error)
    for square, cell in enumerate(widget.heat):  # the marks, no numbers, the move outlined
        background, _ink, border, text = HEAT_CELL.fullmatch(cell.value).groups()
        assert text == (SYMBOLS[int(view.board[square])] if view.board[square] != EMPTY else "")
        assert ("#d62728" in border) == (square == view.explanation.move)


@pytest.mark.parametrize("base", ["Fogel champion", "rule base"])
@pytest.mark.parametrize("human", [X, O], ids=["human-X", "human-O"])
def test_a_raising_explain_does_not_break_the_widget_and_moves_still_follow_the_policy(human, base):
    seed = 4
    mine = with_explain(raising_explain, base)
    widget = play_widget(opponent="mine", human=human, seed=seed, players=[*PLAYERS, mine])
    shadow = Shadow(seed)
    for game in range(3):
        check_failed_explanation(widget, "ValueError: no reasons today")
        if human == O:  # the opponent's opening, from its policy tables
            assert widget.session.moves == [shadow.move(widget.session, np.zeros(9, dtype=np.int8))]
        while not widget.session.over:
            board = widget.session.board
            square = perfect_move(board) if game % 2 == 0 else legal_moves(board)[-1]
            assert click_and_check_moves(widget, square, shadow)
            check_failed_explanation(widget, "ValueError: no reasons today")
        widget.new_game.click()
    assert sum(widget.session.record.values()) == 3


def click_and_check_moves(widget, square, shadow):
    """Click an empty square; the opponent's reply is the one its policy tables give."""
    session = widget.session
    before = play(session.board, square)
    widget.squares[square].click()
    if not is_game_over(before):
        assert session.moves[-1] == shadow.move(session, before)
        assert np.array_equal(session.board, play(before, session.moves[-1]))
    return True


def test_choosing_a_player_whose_explain_raises_with_the_picker_and_back():
    mine = with_explain(raising_explain)
    widget = play_widget(opponent="Fogel champion", human=X, seed=0, players=[*PLAYERS, mine])
    widget.opponent.value = "mine"  # the picker's callback used to raise here
    assert widget.session.opponent == "mine"
    check_failed_explanation(widget, "ValueError: no reasons today")
    widget.side.value = O
    assert len(widget.session.moves) == 1
    check_failed_explanation(widget, "ValueError: no reasons today")
    widget.squares[legal_moves(widget.session.board)[0]].click()
    assert len(widget.session.moves) == 3
    check_failed_explanation(widget, "ValueError: no reasons today")
    widget.opponent.value = "Fogel champion"
    check_fresh_game(widget)
    assert "failed" not in widget.explanation.value


def explanation_of(board, mark, **changes):
    """The Fogel champion's explanation on ``board`` with some fields changed."""
    return dataclasses.replace(BY_NAME["Fogel champion"].explain(board, mark), **changes)


WRONG_EXPLANATIONS = {
    "None": (lambda board, mark: None, "TypeError: explain must return an Explanation; got NoneType"),
    "a number": (lambda board, mark: 4, "TypeError: explain must return an Explanation; got int"),
    "a tuple": (
        lambda board, mark: (np.zeros(9), "output", "why", 4),
        "TypeError: explain must return an Explanation; got tuple",
    ),
    "three values": (
        lambda board, mark: explanation_of(board, mark, values=np.zeros(3)),
        "ValueError: an Explanation's values must be nine numbers; got float64 values of shape (3,)",
    ),
    "text values": (
        lambda board, mark: explanation_of(board, mark, values=np.array(list("abcdefghi"))),
        "ValueError: an Explanation's values must be nine numbers; got &lt;U1 values of shape (9,)",
    ),
    "None values": (
        lambda board, mark: explanation_of(board, mark, values=None),
        "ValueError: an Explanation's values must be nine numbers; got object values of shape ()",
    ),
    "move off the board": (
        lambda board, mark: explanation_of(board, mark, move=9),
        "ValueError: an Explanation's move must be a square 0..8; got 9",
    ),
    "move as text": (
        lambda board, mark: explanation_of(board, mark, move="4"),
        "ValueError: an Explanation's move must be a square 0..8; got '4'",
    ),
    "move as a bool": (
        lambda board, mark: explanation_of(board, mark, move=True),
        "ValueError: an Explanation's move must be a square 0..8; got True",
    ),
    "label not text": (
        lambda board, mark: explanation_of(board, mark, label=None),
        "TypeError: an Explanation's label must be a str; got NoneType",
    ),
    "text not text": (
        lambda board, mark: explanation_of(board, mark, text=["why"]),
        "TypeError: an Explanation's text must be a str; got list",
    ),
    "not callable": ("reasons", "TypeError: 'str' object is not callable"),
}


@pytest.mark.parametrize("case", list(WRONG_EXPLANATIONS))
def test_an_explain_that_returns_a_wrong_type_is_reported_in_the_reasons_panel(case):
    explain, error = WRONG_EXPLANATIONS[case]
    seed = 8
    widget = play_widget(opponent="mine", human=O, seed=seed, players=[with_explain(explain)])
    shadow = Shadow(seed)
    check_failed_explanation(widget, error)
    while not widget.session.over:
        click_and_check_moves(widget, legal_moves(widget.session.board)[0], shadow)
        check_failed_explanation(widget, error)


def test_a_list_of_nine_numbers_is_accepted_as_an_explanations_values():
    def listed(board, mark):
        return explanation_of(board, mark, values=[float(v) for v in explanation_of(board, mark).values])

    widget = play_widget(opponent="mine", human=X, seed=0, players=[with_explain(listed)])
    widget.squares[0].click()
    check_view(widget)
    assert "failed" not in widget.explanation.value


def test_the_failure_is_one_escaped_line_and_the_session_reports_it_too():
    def shouting(board, mark):
        raise ValueError("line one\n  <b>line two</b> & more")

    session = GameSession("mine", O, seed=0, players=[with_explain(shouting)])
    view = session.view()  # the session copes too: the played move, the board, and the failure as the text
    assert view.explanation.move == session.moves[0] and not view.board.any()
    assert np.isnan(view.explanation.values).all()
    assert view.explanation.text == "This player's explanation failed: ValueError: line one <b>line two</b> & more"
    assert view.failure == view.explanation.text
    widget = play_widget(opponent="mine", human=O, seed=0, players=[with_explain(shouting)])
    check_failed_explanation(widget, "ValueError: line one &lt;b&gt;line two&lt;/b&gt; &amp; more")

    def silent(board, mark):
        raise RuntimeError

    widget = play_widget(opponent="mine", human=X, seed=0, players=[with_explain(silent)])
    check_failed_explanation(widget, "RuntimeError")
    assert widget.session.view().explanation.move == network_move(load_network(DEFAULT_CHAMPION)[0], np.zeros(9))


def test_an_explain_that_scribbles_on_its_board_changes_neither_the_game_nor_the_view():
    def scribbling(board, mark):
        explanation = BY_NAME["Fogel champion"].explain(board, mark)
        board[:] = X
        return explanation

    widget = play_widget(opponent="mine", human=X, seed=0, players=[with_explain(scribbling)])
    assert not widget.session.board.any() and button_board(widget).tolist() == [EMPTY] * 9
    for square in (0, 1, 2):
        widget.squares[square].click()
        moves = widget.session.moves
        last_reply = max(k for k in range(len(moves)) if k % 2 == 1)  # the champion plays O
        assert np.array_equal(widget.session.board, replay(moves))
        assert np.array_equal(widget.session.view().board, replay(moves[:last_reply]))
    assert widget.session.record == {"wins": 1, "draws": 0, "losses": 0}  # the champion never blocks square 2


class FaultyMove(ArenaPlayer):
    """A player whose ``move`` method is overridden and fails (or returns a square that cannot be played)."""

    def move(self, board, rng=None):
        if self.training == "raise":
            raise RuntimeError("lost my tables")
        return int(np.flatnonzero(np.asarray(board) != EMPTY)[0]) if np.any(board) else "centre"


@pytest.mark.parametrize("fault, error", [
    ("raise", "RuntimeError: lost my tables"),
    ("occupied", "ValueError: square 0 is occupied by X; empty squares are [1, 2, 3, 4, 5, 6, 7, 8]"),
])  # fmt: skip
def test_an_opponent_whose_move_fails_stops_the_game_without_raising(fault, error):
    base = BY_NAME["Fogel champion"]
    faulty = FaultyMove("faulty", base.system, "", base.x_policy, base.o_policy, fault, base.explain)
    session = GameSession("faulty", X, seed=0, players=[faulty, base])
    assert session.click(0) is True  # the person's move is made; the opponent's fails
    assert session.moves == [0] and session.failure == f"faulty could not move: {error}."
    assert session.status == f"faulty could not move: {error}. Press New game."
    assert session.click(4) is False and session.moves == [0]  # no move for the person in the opponent's place
    assert session.status == f"faulty could not move: {error}. Press New game."
    assert session.view() is None and session.record == {"wins": 0, "draws": 0, "losses": 0}
    widget = PlayWidget(session)
    widget.squares[4].click()
    assert session.moves == [0] and widget.status.value == f"<b>{html.escape(session.status, quote=False)}</b>"
    assert widget.explanation.value == "<b>Why this move?</b><br>No move to explain yet."
    widget.side.value = O  # the opponent's opening move fails at once; nothing raises
    assert session.moves == [] and session.failure
    widget.opponent.value = "Fogel champion"
    assert session.failure == "" and len(session.moves) == 1
    check_fresh_game(widget)
    widget.new_game.click()
    check_fresh_game(widget)


def test_widget_redraw_never_raises_even_when_the_view_does():
    widget = play_widget(opponent="rule base", human=X, seed=0)

    def broken_view():
        raise RuntimeError("<drawing> failed")

    widget.session.view = broken_view
    widget.squares[4].click()
    assert len(widget.session.moves) == 2 and np.array_equal(button_board(widget), widget.session.board)
    assert widget.status.value == f"<b>{widget.session.status}</b>"
    assert all(cell.value == "" for cell in widget.heat)
    assert widget.explanation.value == ("<b>Why this move?</b><br>The reasons could not be shown: "
                                        "RuntimeError: &lt;drawing&gt; failed")  # fmt: skip
