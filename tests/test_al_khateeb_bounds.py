"""Al-Khateeb (2012): the bounds on the paper's Tables 2 and 3 (evolving_ttt.al_khateeb.bounds), checked against a
brute-force walk of the game tree written here from scratch, scipy's binomial, and toy deterministic players."""

from fractions import Fraction
from functools import cache
from math import comb

import numpy as np
import pytest

from evolving_ttt.al_khateeb.bounds import (
    RESULTS,
    WINS_ONLY,
    binomial_tail,
    deterministic_perfect_policy,
    split_totals,
    splits_giving,
    table2_splits,
    table3_bounds,
)
from evolving_ttt.al_khateeb.results import AL_KHATEEB_TABLE_2, AL_KHATEEB_TABLE_3
from evolving_ttt.al_khateeb.system import al_khateeb_ttt
from evolving_ttt.game import O, X, legal_moves, play, winner
from evolving_ttt.outcomes import (
    audit_policy,
    best_response_policy,
    favourable_values,
    outcome_probabilities,
    perfect_policy,
    random_policy,
)
from evolving_ttt.perfect import lowest_square_player, perfect_move
from evolving_ttt.players import ArenaPlayer, table_player

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def line_winner(board: tuple) -> int:
    return next((board[a] for a, b, c in LINES if board[a] != 0 and board[a] == board[b] == board[c]), 0)


def children(board: tuple) -> list[tuple]:
    mover = X if board.count(0) % 2 == 1 else O
    return [board[:s] + (mover,) + board[s + 1 :] for s in range(9) if board[s] == 0]


@cache
def game_value(board: tuple) -> int:
    """+1 X wins, 0 draw, -1 O wins with best play: plain minimax over tuples, independent of the package."""
    if line_winner(board) or 0 not in board:
        return line_winner(board)
    values = [game_value(child) for child in children(board)]
    return max(values) if board.count(0) % 2 == 1 else min(values)


def brute_force_wins(mark: int, p: Fraction, favourable: bool) -> Fraction:
    """The largest win probability of ``mark`` against a perfect player making random moves with chance ``p``,
    in exact fractions: uniform ties and random moves, or (``favourable``) the ones best for ``mark``."""

    @cache
    def wins(board: tuple) -> Fraction:
        if line_winner(board) or 0 not in board:
            return Fraction(line_winner(board) == mark)
        kids = children(board)
        chances = [wins(child) for child in kids]
        mover = X if board.count(0) % 2 == 1 else O
        if mover == mark:
            return max(chances)
        theirs = [mover * game_value(child) for child in kids]
        perfect = [c for c, v in zip(chances, theirs, strict=True) if v == max(theirs)]
        if favourable:
            return (1 - p) * max(perfect) + p * max(chances)
        return (1 - p) * sum(perfect) / len(perfect) + p * sum(chances) / len(chances)

    return wins((0,) * 9)


@pytest.fixture(scope="module")
def bounds():
    return table3_bounds()


@pytest.mark.parametrize("p", [Fraction(1, 10), Fraction(3, 10)])
def test_the_best_reply_and_the_favourable_bound_are_what_a_brute_force_walk_gives(p, bounds):
    computed = bounds if p == Fraction(1, 10) else table3_bounds(float(p))
    assert computed.random_move_probability == float(p)
    for mark, best, favourable in ((X, computed.best_wins_x, computed.favourable_wins_x),
                                   (O, computed.best_wins_o, computed.favourable_wins_o)):  # fmt: skip
        assert best == pytest.approx(float(brute_force_wins(mark, p, False)), rel=1e-12, abs=0)
        assert favourable == pytest.approx(float(brute_force_wins(mark, p, True)), rel=1e-12, abs=0)


def test_the_best_reply_wins_that_often_when_it_plays_and_the_favourable_bound_is_never_below(bounds):
    for mark, best, favourable in ((X, bounds.best_wins_x, bounds.favourable_wins_x),
                                   (O, bounds.best_wins_o, bounds.favourable_wins_o)):  # fmt: skip
        opponent = perfect_policy(-mark, 0.1)
        reply, _ = best_response_policy(opponent, mark, WINS_ONLY)
        outcome = outcome_probabilities(reply, opponent) if mark == X else outcome_probabilities(opponent, reply)
        assert outcome[0 if mark == X else 2] == pytest.approx(best, abs=1e-12)
        assert favourable >= best
        # The win-minus-loss reply of chapter 11 cannot win more often than the reply that counts wins alone.
        other, values = best_response_policy(opponent, mark)
        other_outcome = outcome_probabilities(other, opponent) if mark == X else outcome_probabilities(opponent, other)
        assert other_outcome[0 if mark == X else 2] <= best + 1e-12 and np.isfinite(values[0])


def test_the_bounds_at_the_ends_perfect_play_and_pure_chance():
    never = table3_bounds(0.0)  # a perfect player never loses, whatever its ties
    assert never.best_wins_x == never.best_wins_o == never.favourable_wins_x == never.favourable_wins_o == 0
    assert never.tail_probability == 0 and never.best_expected_wins == {"X": 0, "O": 0}
    chance = table3_bounds(1.0)  # all its moves random: the best reply to the random player
    for mark, best in ((X, chance.best_wins_x), (O, chance.best_wins_o)):
        _, values = best_response_policy(random_policy(-mark), mark, WINS_ONLY)
        assert best == pytest.approx(values[0], abs=1e-12)
        assert favourable_values(mark, 1.0, WINS_ONLY)[0] == 1.0  # every move its worst: the player always wins


def test_no_player_can_expect_the_papers_wins_and_the_tail_is_the_binomial_tail(bounds):
    from scipy import stats  # here, not at the top: importing it takes about a second
    assert (bounds.paper_wins, bounds.paper_draws, bounds.paper_losses) == AL_KHATEEB_TABLE_3
    assert bounds.games == sum(AL_KHATEEB_TABLE_3)
    assert bounds.best_wins_x >= bounds.best_wins_o and bounds.favourable_wins_x >= bounds.favourable_wins_o
    assert bounds.best_expected_wins["X"] == bounds.games * bounds.best_wins_x < bounds.paper_wins
    assert bounds.favourable_expected_wins["X"] == bounds.games * bounds.favourable_wins_x < bounds.paper_wins
    assert bounds.tail_probability == binomial_tail(bounds.games, bounds.best_wins_x, bounds.paper_wins)
    assert bounds.favourable_tail_probability == binomial_tail(bounds.games, bounds.favourable_wins_x, 28)
    assert bounds.tail_probability < bounds.favourable_tail_probability < 0.01
    assert bounds.tail_probability == pytest.approx(stats.binom.sf(27, 50, bounds.best_wins_x), rel=1e-9)


@pytest.mark.parametrize(("games", "probability", "at_least"),
                         [(50, 0.23475520833333338, 28), (50, 0.5, 25), (7, 0.1, 0), (7, 0.9, 7), (3, 0.0, 1),
                          (3, 1.0, 3), (3, 0.3, 4), (0, 0.4, 0)])  # fmt: skip
def test_the_binomial_tail_is_the_exact_sum_rounded_once(games, probability, at_least):
    from scipy import stats  # here, not at the top: importing it takes about a second
    p = Fraction(probability)
    exact = sum((comb(games, k) * p**k * (1 - p) ** (games - k) for k in range(at_least, games + 1)), Fraction(0))
    assert binomial_tail(games, probability, at_least) == float(exact)
    assert binomial_tail(games, probability, at_least) == pytest.approx(
        stats.binom.sf(at_least - 1, games, probability), rel=1e-9, abs=1e-300
    )


def test_bad_arguments_are_refused_with_a_clear_message():
    for bad in (1.5, -0.1, True, "0.1", float("nan")):
        with pytest.raises(ValueError, match="random_move_probability must be a probability"):
            table3_bounds(bad)
    with pytest.raises(ValueError, match="games must be a whole number >= 0"):
        binomial_tail(-1, 0.5, 0)
    with pytest.raises(ValueError, match="at_least must be a whole number >= 0"):
        binomial_tail(50, 0.5, 2.5)
    with pytest.raises(ValueError, match="probability must be a probability"):
        binomial_tail(50, 1.01, 3)
    with pytest.raises(ValueError, match="result_as_x must be one of win, draw, loss; got 'won'"):
        split_totals("won", "draw")
    with pytest.raises(ValueError, match="result_as_o must be one of"):
        split_totals("win", None)
    with pytest.raises(ValueError, match="record must be three whole numbers"):
        splits_giving((43, 7), "draw", "loss")
    with pytest.raises(ValueError, match="each number of record must be a whole number >= 0"):
        splits_giving((0, -43, 7), "draw", "loss")
    with pytest.raises(ValueError, match="player must be an ArenaPlayer"):
        table2_splits("TTT")
    coin = ArenaPlayer("coin", "test", "random", random_policy(X), random_policy(O))
    with pytest.raises(ValueError, match="coin plays at random.*needs a deterministic player"):
        table2_splits(coin)


def test_split_totals_and_splits_match_an_enumeration_of_every_split():
    for rx in RESULTS:
        for ro in RESULTS:
            totals = split_totals(rx, ro, 12)
            assert len(totals) == 13 and all(sum(total) == 12 for total in totals)
            for k, total in enumerate(totals):
                games = [rx] * k + [ro] * (12 - k)
                assert total == tuple(games.count(r) for r in RESULTS)
            for record in ((0, 9, 3), (5, 0, 7), (0, 12, 0), (1, 1, 10)):
                assert splits_giving(record, rx, ro) == tuple(k for k in range(13) if totals[k] == record)
    # Only one result as X and the other as O, taken 43 and 7 times, give the paper's 43 draws and 7 losses.
    found = {(rx, ro): splits_giving(AL_KHATEEB_TABLE_2, rx, ro) for rx in RESULTS for ro in RESULTS}
    assert {pair: ks for pair, ks in found.items() if ks} == {("draw", "loss"): (43,), ("loss", "draw"): (7,)}


def play_out(x_move, o_move) -> tuple[str, list[int], int]:
    """One game between two move functions, played square by square with the game's own rules."""
    board, moves = np.zeros(9, dtype=np.int8), []
    while legal_moves(board):
        square = x_move(board) if len(moves) % 2 == 0 else o_move(board)
        moves.append(square)
        board = play(board, square)
    return board, moves, winner(board)


@pytest.mark.slow
def test_table2_splits_of_a_toy_player_that_draws_as_x_and_loses_as_o():
    def half(board, mark):
        return perfect_move(board) if mark == X else lowest_square_player(board)

    player = table_player("half", "test", "perfect as X, lowest square as O", half)
    found = table2_splits(player)
    _, moves_x, won_x = play_out(player.move, perfect_move)
    _, moves_o, won_o = play_out(perfect_move, player.move)
    assert found.game_as_x == tuple(moves_x) and found.game_as_o == tuple(moves_o)
    assert (found.result_as_x, found.result_as_o) == (RESULTS[1 - won_x], RESULTS[1 + won_o]) == ("draw", "loss")
    assert found.splits == (43,) and found.totals[43] == AL_KHATEEB_TABLE_2
    assert found.by_results[found.result_as_x, found.result_as_o] == found.splits
    assert (found.paper_wins, found.paper_draws, found.paper_losses, found.games) == (*AL_KHATEEB_TABLE_2, 50)
    perfect = table2_splits(table_player("perfect", "test", "", lambda board, mark: perfect_move(board)))
    assert (perfect.result_as_x, perfect.result_as_o, perfect.splits) == ("draw", "draw", ())
    assert set(perfect.totals) == {(0, 50, 0)}


@pytest.mark.slow
def test_table2_splits_of_the_books_ttt_are_its_exact_games_against_the_deterministic_perfect_player():
    ttt = al_khateeb_ttt()
    found = table2_splits(ttt)
    assert found.player == ttt.name
    for mark, result, tables in ((X, found.result_as_x, (ttt.x_policy, deterministic_perfect_policy(O))),
                                 (O, found.result_as_o, (deterministic_perfect_policy(X), ttt.o_policy))):  # fmt: skip
        outcome = outcome_probabilities(*tables)
        as_player = outcome if mark == X else outcome[::-1]  # (win, draw, loss) for the player
        assert np.array_equal(as_player, np.eye(3)[RESULTS.index(result)])  # one game, certain
    assert found.splits == found.by_results[found.result_as_x, found.result_as_o]
    assert found.totals == split_totals(found.result_as_x, found.result_as_o)


@pytest.mark.slow
def test_the_deterministic_perfect_player_never_loses_and_cannot_be_changed():
    for mark in (X, O):
        table = deterministic_perfect_policy(mark)
        assert np.all((table == 0) | (table == 1)) and not table.flags.writeable
        assert audit_policy(table, mark).worst_value == 0 and not audit_policy(table, mark).can_lose
        assert deterministic_perfect_policy(mark) is table
