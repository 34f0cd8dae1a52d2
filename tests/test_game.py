"""Chapter 1: the game, its encoding and the base-3 lookup tables."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_ttt.drawing import board_to_text, draw_board
from evolving_ttt.game import (
    EMPTY,
    N_BOARDS,
    GameCounts,
    O,
    X,
    board_from_index,
    board_from_string,
    board_index,
    board_tables,
    board_to_string,
    count_games,
    is_draw,
    is_game_over,
    legal_moves,
    network_input,
    play,
    player_to_move,
    squares_to_list,
    validate_board,
    winner,
)

# A list of choice numbers: move k plays the (choice % number of legal moves)-th legal square.
move_choices = st.lists(st.integers(min_value=0, max_value=10_000), min_size=0, max_size=9)


def play_choices(choices):
    """The boards met while playing the given choice numbers from the empty board (stops when the game ends)."""
    board = np.zeros(9, dtype=np.int8)
    boards = [board]
    for k in choices:
        moves = legal_moves(board)
        if not moves:
            break
        board = play(board, moves[k % len(moves)])
        boards.append(board)
    return boards


def independent_winner(board):
    """Who owns a line, written out without WIN_LINES (0 if nobody)."""
    b = [int(v) for v in board]
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    owners = {b[i] for i, j, k in lines if b[i] != 0 and b[i] == b[j] == b[k]}
    assert len(owners) <= 1
    return owners.pop() if owners else 0


# --- counts -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_reachable_positions_are_the_5478_distinct_legal_boards(reachable):
    assert len(reachable) == 5478
    assert len({b.tobytes() for b in reachable}) == 5478
    assert np.array_equal(reachable[0], np.zeros(9))
    # breadth-first: the number of marks never decreases along the list
    marks = [int(np.count_nonzero(b)) for b in reachable]
    assert marks == sorted(marks)
    assert np.bincount(marks).tolist() == [1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78]


@pytest.mark.slow
def test_count_games_matches_the_known_totals():
    assert count_games() == GameCounts(games=255168, x_wins=131184, o_wins=77904, draws=46080)


@pytest.mark.slow
def test_legal_table_is_exactly_the_reachable_positions(reachable):
    tables = board_tables()
    assert int(tables.legal.sum()) == 5478
    reachable_indices = board_index(np.array(reachable))
    assert set(np.flatnonzero(tables.legal).tolist()) == set(reachable_indices.tolist())


def test_validate_board_accepts_exactly_the_legal_table_boards():
    tables = board_tables()
    accepted = np.zeros(N_BOARDS, dtype=bool)
    for i, board in enumerate(tables.boards):
        try:
            validate_board(board)
        except ValueError:
            continue
        accepted[i] = True
    assert np.array_equal(accepted, tables.legal)


def test_tables_agree_with_the_scalar_functions_on_reachable_boards(reachable):
    tables = board_tables()
    for board in reachable[::3]:  # every third position of the breadth-first list: all depths, all outcomes
        i = board_index(board)
        assert tables.winner[i] == winner(board) == independent_winner(board)
        assert tables.over[i] == is_game_over(board)
        assert tables.to_move[i] == player_to_move(board)
        assert tables.n_empty[i] == np.count_nonzero(board == 0)
        assert np.array_equal(tables.empty[i], board == 0)
        assert is_draw(board) == (tables.over[i] and tables.winner[i] == 0)
        if not tables.over[i]:
            assert tables.empty_list[i, : tables.n_empty[i]].tolist() == legal_moves(board)
            assert np.all(tables.empty_list[i, tables.n_empty[i] :] == -1)
        else:
            assert legal_moves(board) == []


def test_tables_are_read_only():
    tables = board_tables()
    with pytest.raises(ValueError, match="read-only"):
        tables.winner[0] = 1


# --- hypothesis: random games ---------------------------------------------------------------------------


@given(move_choices)
def test_random_games_agree_with_the_tables(choices):
    tables = board_tables()
    for board in play_choices(choices):
        i = board_index(board)
        assert tables.legal[i]
        assert tables.winner[i] == winner(board) == independent_winner(board)
        assert tables.over[i] == is_game_over(board)
        assert tables.to_move[i] == player_to_move(board)
        if not tables.over[i]:
            assert tables.empty_list[i, : tables.n_empty[i]].tolist() == legal_moves(board)


@given(move_choices)
def test_string_and_index_round_trips(choices):
    for board in play_choices(choices):
        text = board_to_string(board)
        assert np.array_equal(board_from_string(text), board)
        assert np.array_equal(board_from_string(board_to_string(board, "/")), board)
        assert np.array_equal(board_from_index(board_index(board)), board)
        assert isinstance(board_index(board), int)


@given(move_choices)
def test_play_puts_the_movers_mark_and_leaves_the_input_alone(choices):
    boards = play_choices(choices)
    for before, after in zip(boards, boards[1:], strict=False):
        keep = before.copy()
        changed = np.flatnonzero(after != before)
        assert len(changed) == 1
        square = int(changed[0])
        assert before[square] == EMPTY
        assert after[square] == player_to_move(before)
        assert np.array_equal(play(before, square), after)
        assert np.array_equal(before, keep)


def test_board_index_round_trip_on_all_boards():
    indices = np.arange(N_BOARDS)
    boards = board_from_index(indices)
    assert boards.shape == (N_BOARDS, 9)
    assert set(np.unique(boards).tolist()) == {-1, 0, 1}
    assert np.array_equal(board_index(boards), indices)
    # place values: square s contributes digit * 3**s with X=1, O=2
    assert board_index([1, 0, 0, 0, 0, 0, 0, 0, 0]) == 1
    assert board_index([0, -1, 0, 0, 0, 0, 0, 0, 0]) == 6
    assert board_index([0, 0, 0, 0, 0, 0, 0, 0, 1]) == 3**8
    assert np.array_equal(board_from_index(3**8 * 2), [0, 0, 0, 0, 0, 0, 0, 0, -1])


def test_board_index_keeps_batch_shape():
    boards = board_from_index(np.arange(24).reshape(2, 3, 4))
    assert boards.shape == (2, 3, 4, 9)
    assert np.array_equal(board_index(boards), np.arange(24).reshape(2, 3, 4))


@pytest.mark.parametrize("index", [-1, N_BOARDS, [0, 3**9]])
def test_board_from_index_rejects_out_of_range(index):
    with pytest.raises(ValueError, match="board indices run from 0 to 19682"):
        board_from_index(index)


def test_board_index_rejects_wrong_width():
    with pytest.raises(ValueError, match="9 squares in the last axis"):
        board_index(np.zeros((4, 8)))


def test_squares_to_list():
    mask = np.array([[True, False, True, False, False, False, False, False, True], [False] * 9, [True] * 9])
    squares, count = squares_to_list(mask)
    assert count.tolist() == [3, 0, 9]
    assert squares.tolist() == [[0, 2, 8, -1, -1, -1, -1, -1, -1], [-1] * 9, list(range(9))]


# --- the paper's encoding and worked example ---------------------------------------------------------


def test_paper_worked_example():
    board = board_from_string("XO. .XO ...")
    assert board.dtype == np.int8
    assert board.tolist() == [1, -1, 0, 0, 1, -1, 0, 0, 0]
    inputs = network_input(board)
    assert inputs.dtype == float
    assert inputs.tolist() == [1.0, -1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0]
    assert np.array_equal(board_from_string("XO./.XO/..."), board)
    assert np.array_equal(board_from_string("xo_-xo_-_"), board)
    assert board_to_string(board) == "XO. .XO ..."
    assert board_to_string(board, "/") == "XO./.XO/..."
    assert board_to_text(board) == " X | O | .\n---+---+---\n . | X | O\n---+---+---\n . | . | ."


def test_game_state_functions_on_hand_boards():
    x_won = board_from_string("XXX OO. ...")
    assert winner(x_won) == X and is_game_over(x_won) and not is_draw(x_won)
    assert legal_moves(x_won) == []
    o_won = board_from_string("OOO XX. X..")
    assert winner(o_won) == O and is_game_over(o_won)
    drawn = board_from_string("XOX XOO OXX")
    assert winner(drawn) == EMPTY and is_game_over(drawn) and is_draw(drawn)
    assert legal_moves(drawn) == []
    going = board_from_string("XO. .X. ...")
    assert not is_game_over(going) and player_to_move(going) == O
    assert legal_moves(going) == [2, 3, 5, 6, 7, 8]
    assert play(going, 8).tolist() == [1, -1, 0, 0, 1, 0, 0, 0, -1]
    # X completing two lines at once is a legal (and won) board
    double = board_from_string("XXX XOO XOO")
    assert winner(double) == X


# --- errors -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("board", "message"),
    [
        ([0] * 8, r"exactly 9 squares.*got shape \(8,\)"),
        ([0] * 10, r"exactly 9 squares"),
        (np.zeros((3, 3)), r"exactly 9 squares.*\(3, 3\)"),
        ([2, 0, 0, 0, 0, 0, 0, 0, 0], r"-1 \(O\), 0 \(empty\) or \+1 \(X\); found \[2\]"),
        ([0.5, 0, 0, 0, 0, 0, 0, 0, 0], r"found \[0\.5\]"),
        ([0, 0, 0, 0, 0, 0, 0, 0, "X"], r"board squares must be -1 \(O\), 0 \(empty\) or \+1 \(X\); found"),
    ],
)
def test_bad_board_values(board, message):
    with pytest.raises(ValueError, match=message):
        validate_board(board)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("XX. ... ...", r"impossible piece counts: X has 2 and O has 0"),
        ("O.. ... ...", r"impossible piece counts: X has 0 and O has 1"),
        ("XO. O.. ...", r"impossible piece counts: X has 1 and O has 2"),
        ("XXX OOO ...", r"two winners"),
        ("XXX OO. O..", r"X has a line, so X moved last"),
        ("OOO XX. X.X", r"O has a line, so O moved last"),
        ("XO. .XO ..", r"exactly 9 squares"),
        ("XO. .XO ...X", r"exactly 9 squares"),
        ("XO. .XZ ...", r"unknown board symbols \['Z'\]"),
        ("XO. .X0 ...", r"unknown board symbols \['0'\]"),
    ],
)
def test_bad_board_strings(text, message):
    with pytest.raises(ValueError, match=message):
        board_from_string(text)


def test_play_on_an_occupied_square():
    board = board_from_string("XO. ... ...")
    with pytest.raises(ValueError, match=r"square 1 is occupied by O; empty squares are \[2, 3, 4, 5, 6, 7, 8\]"):
        play(board, 1)


def test_play_after_the_game_ended():
    with pytest.raises(ValueError, match="already over"):
        play(board_from_string("XXX OO. ..."), 5)
    with pytest.raises(ValueError, match="already over"):
        play(board_from_string("XOX XOO OXX"), 0)


@pytest.mark.parametrize("square", [9, -1, 1.5, True, False, "3", None, 2.0])
def test_play_rejects_non_squares(square):
    with pytest.raises(ValueError, match="a move must be a square index 0..8"):
        play(np.zeros(9, dtype=np.int8), square)


def test_play_accepts_numpy_integers():
    assert play(np.zeros(9, dtype=np.int8), np.int64(4)).tolist() == [0, 0, 0, 0, 1, 0, 0, 0, 0]


def test_draw_board_places_every_mark_and_move_number():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    board = board_from_string("XO. .XO ...")
    ax = draw_board(board, move_order=[0, 1, 4, 5], title="example")
    texts = [x.get_text() for x in ax.texts]
    assert sorted(texts) == sorted(["X", "O", "X", "O", "1", "2", "3", "4", "example"])
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="exactly 9 squares"):
        draw_board([0] * 8)
