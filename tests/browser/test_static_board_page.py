"""The play chapter's board in the rendered page: whole games by clicks, every reply checked against Python."""

from pathlib import Path

import numpy as np
import pytest

from evolving_ttt.arena import catalogue
from evolving_ttt.game import O, X, board_index, play, winner

PAGE = Path(__file__).resolve().parents[2] / "_build" / "html" / "book" / "26_play.html"
PLAYERS = catalogue()


def open_board(page):
    page.goto(PAGE.as_uri())
    page.wait_for_selector("#ttt-static-play[data-ready='true']", timeout=60000)


@pytest.fixture(scope="module")
def board_page(module_page):
    """The play chapter's page, opened once for all the games of this module (in each test process), as a reader
    plays one opponent after another on the same page."""
    open_board(module_page)
    return module_page


def tally_numbers(page) -> list[int]:
    """The numbers of the tally line: games won, drawn and lost against the chosen opponent."""
    tally = page.inner_text("#ttt-static-tally")
    return [int(word) for word in tally.replace(",", " ").replace(".", " ").split() if word.isdigit()]


def moves_on_page(page):
    text = page.get_attribute("#ttt-static-play", "data-moves")
    return [int(s) for s in text.split(",")] if text else []


def check_replies(moves, player, human):
    """Every move the page made for ``player`` has positive probability in its Python policy table."""
    board = np.zeros(9, dtype=np.int8)
    for k, square in enumerate(moves):
        mark = X if k % 2 == 0 else O
        if mark != human:
            row = player.policy(mark)[board_index(board)]
            assert row[square] > 0, f"{player.name} played {square} on {board.tolist()}; Python gives {row.tolist()}"
            if player.deterministic:
                assert row[square] == 1
        board = play(board, square)
    return board


@pytest.mark.parametrize("human", [X, O], ids=["human X", "human O"])
@pytest.mark.parametrize("index", range(len(PLAYERS)), ids=[p.name for p in PLAYERS])
def test_whole_games_against_every_opponent_from_both_sides(board_page, index, human):
    player, page = PLAYERS[index], board_page
    page.select_option("#ttt-static-opponent", str(index))
    page.select_option("#ttt-static-side", str(human))
    played = sum(tally_numbers(page))  # the tally counts every game against this opponent, from either side
    rng = np.random.default_rng(index * 2 + (human == O))
    for _ in range(3):
        page.click("#ttt-static-new")
        for _ in range(9):
            if page.get_attribute("#ttt-static-play", "data-result") is not None:
                break
            free = page.locator(".ttt-square:not([disabled])")
            count = free.count()
            assert count > 0
            # the human clicks a random empty square (and sometimes an occupied one, which must change nothing)
            before = moves_on_page(page)
            if before and rng.random() < 0.2:
                page.click(f".ttt-square[data-square='{before[0]}']", force=True)
                assert moves_on_page(page) == before
            free.nth(int(rng.integers(count))).click()
        result = page.get_attribute("#ttt-static-play", "data-result")
        assert result is not None, "the game did not end"
        board = check_replies(moves_on_page(page), player, human)
        assert int(result) == winner(board)
        status = page.inner_text("#ttt-static-status")
        expected = "Draw." if winner(board) == 0 else ("You win" if winner(board) == human else f"{player.name} wins")
        assert status.startswith(expected)
    assert sum(tally_numbers(page)) == played + 3, page.inner_text("#ttt-static-tally")
    assert page.errors == []


def test_the_opponent_a_reader_meets_first_is_fogels_champion(page):
    open_board(page)
    chosen = page.eval_on_selector("#ttt-static-opponent", "select => select.value")
    assert PLAYERS[int(chosen)].name == "Fogel champion"
    page.click(".ttt-square[data-square='4']")  # the first game is against it, with no choice made
    assert len(moves_on_page(page)) == 2
    check_replies(moves_on_page(page), PLAYERS[int(chosen)], X)
