"""Al-Khateeb (2012): what no player could score in the paper's Tables 2 and 3, computed exactly (chapter 15).

The paper's TTT won 28 of 50 games against a perfect player that makes 10% random moves (its Table 3), and drew
43 and lost 7 of 50 against a perfect online program (its Table 2). Both records can be checked without TTT:

* :func:`table3_bounds` gives the most wins any player can expect against the nearly perfect player, exactly over
  all positions (:func:`evolving_ttt.outcomes.best_response_policy`), a looser bound in which every choice of that
  player goes the other side's way (:func:`evolving_ttt.outcomes.favourable_values`), and the chance of 28 wins or
  more in 50 games (:func:`binomial_tail`).
* :func:`table2_splits` uses the fact that a deterministic player meets a deterministic opponent in one game per
  side, so 50 games repeat at most two games: ``k`` as X and ``50 - k`` as O. :func:`split_totals` lists the
  totals of every ``k``, and :func:`splits_giving` the ``k`` that give a record.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb

import numpy as np

from evolving_ttt.al_khateeb.results import AL_KHATEEB_TABLE_2, AL_KHATEEB_TABLE_3
from evolving_ttt.game import O, X, check_count, check_mark, check_probability
from evolving_ttt.outcomes import best_response_policy, favourable_values, perfect_policy, policy_table, sample_game
from evolving_ttt.perfect import perfect_move
from evolving_ttt.players import ArenaPlayer

PAPER_GAMES = 50
"""The games of each of the paper's Tables 2 and 3 (chapter 15)."""

WINS_ONLY = (1.0, 0.0, 0.0)
"""The payoff (win, loss, draw) that counts wins alone: the best reply to it wins as often as any player can."""

RESULTS = ("win", "draw", "loss")
"""A game's result from the player's side, in the order of the paper's tables (chapter 15)."""


def binomial_tail(games: int, probability: float, at_least: int) -> float:
    """The chance of ``at_least`` or more successes in ``games`` independent trials of chance ``probability``.

    Computed in exact rational arithmetic (:class:`fractions.Fraction` and :func:`math.comb`) from the exact value
    of the float ``probability``, and rounded once to a float, so it is the same to the bit on every machine.

    Raises
    ------
    ValueError
        If ``games`` or ``at_least`` is not a whole number >= 0, or ``probability`` is not in [0, 1].
    """
    games, at_least = check_count(games, "games", minimum=0), check_count(at_least, "at_least", minimum=0)
    p = Fraction(check_probability(probability, "probability"))
    p_powers, q_powers = [Fraction(1)], [Fraction(1)]  # p**k and (1 - p)**k by exact products, never pow()
    for _ in range(games):
        p_powers.append(p_powers[-1] * p)
        q_powers.append(q_powers[-1] * (1 - p))
    return float(sum(comb(games, k) * p_powers[k] * q_powers[games - k] for k in range(at_least, games + 1)))


@dataclass(frozen=True)
class Table3Bounds:
    """The most wins any player can expect against the paper's nearly perfect player (chapter 15).

    Attributes
    ----------
    random_move_probability
        The chance that the opponent plays a uniformly random empty square instead of a perfect move (the
        paper's 0.1).
    paper_wins, paper_draws, paper_losses, games
        The paper's Table 3: TTT's record in 50 games.
    best_wins_x, best_wins_o
        The win probability of the best reply to that opponent (:func:`evolving_ttt.outcomes.perfect_policy`,
        which picks at random among its perfect moves), as X and as O: no player wins more often.
    favourable_wins_x, favourable_wins_o
        A bound for every opponent the paper's words allow: each perfect move is the one of best game-theoretic
        value that is best for the player, and each random move is the opponent's worst.
    tail_probability, favourable_tail_probability
        The chance of ``paper_wins`` or more wins in ``games`` games at the larger win probability of the two
        sides (X's), and at the larger favourable one. Games count as independent trials; since no game, on
        either side, can be won more often, no split of the games between the sides makes the record likelier.
    """

    random_move_probability: float
    paper_wins: int
    paper_draws: int
    paper_losses: int
    games: int
    best_wins_x: float
    best_wins_o: float
    favourable_wins_x: float
    favourable_wins_o: float
    tail_probability: float
    favourable_tail_probability: float

    @property
    def best_expected_wins(self) -> dict[str, float]:
        """The most wins any player can expect in the paper's ``games`` games, playing every game as X or as O."""
        return {"X": self.games * self.best_wins_x, "O": self.games * self.best_wins_o}

    @property
    def favourable_expected_wins(self) -> dict[str, float]:
        """The same under the favourable bound."""
        return {"X": self.games * self.favourable_wins_x, "O": self.games * self.favourable_wins_o}


def table3_bounds(random_move_probability: float = 0.1) -> Table3Bounds:
    """The bounds on the paper's Table 3 against a perfect player making random moves with this chance (chapter 15).

    The best reply maximises the win probability alone (:data:`WINS_ONLY`) by expectimax over all positions; the
    favourable bound is :func:`evolving_ttt.outcomes.favourable_values` with the same payoff, a backward induction
    in which the opponent's perfect move (chance ``1 - random_move_probability``) is the best for the player
    among the moves of best game-theoretic value, and its random move is the best for the player among all moves.
    No way of breaking the perfect player's ties and no way of choosing its random moves can give more.

    Raises
    ------
    ValueError
        If ``random_move_probability`` is not in [0, 1].
    """
    p = check_probability(random_move_probability, "random_move_probability")
    best = [float(best_response_policy(perfect_policy(-mark, p), mark, WINS_ONLY)[1][0]) for mark in (X, O)]
    favourable = [float(favourable_values(mark, p, WINS_ONLY)[0]) for mark in (X, O)]
    wins, draws, losses = AL_KHATEEB_TABLE_3  # the paper's Table 3: TTT against the nearly perfect player
    games = wins + draws + losses
    return Table3Bounds(p, wins, draws, losses, games, *best, *favourable, binomial_tail(games, max(best), wins),
                        binomial_tail(games, max(favourable), wins))  # fmt: skip


@cache
def deterministic_perfect_policy(mark: int) -> np.ndarray:
    """The perfect player of ``mark`` that breaks ties by the lowest square (:func:`~evolving_ttt.perfect.perfect_move`)
    as a policy table, read-only (chapter 15)."""
    table = policy_table(perfect_move, check_mark(mark))
    table.flags.writeable = False
    return table


def split_totals(result_as_x: str, result_as_o: str, games: int = PAPER_GAMES) -> tuple[tuple[int, int, int], ...]:
    """The (wins, draws, losses) of ``games`` games with one result as X and one as O, for ``k`` = 0 to ``games``
    games as X (chapter 15).

    Raises
    ------
    ValueError
        If a result is not one of :data:`RESULTS`, or ``games`` is not a whole number >= 0.
    """
    for name, result in (("result_as_x", result_as_x), ("result_as_o", result_as_o)):
        if result not in RESULTS:
            raise ValueError(f"{name} must be one of {', '.join(RESULTS)}; got {result!r}")
    games = check_count(games, "games", minimum=0)
    totals = []
    for k in range(games + 1):
        counts = dict.fromkeys(RESULTS, 0)
        counts[result_as_x] += k
        counts[result_as_o] += games - k
        totals.append(tuple(counts[r] for r in RESULTS))
    return tuple(totals)


def splits_giving(record: tuple[int, int, int], result_as_x: str, result_as_o: str) -> tuple[int, ...]:
    """The numbers ``k`` of games as X for which one result as X and one as O give ``record`` (wins, draws, losses)
    in ``sum(record)`` games; empty if none does (chapter 15).

    Raises
    ------
    ValueError
        If ``record`` is not three whole numbers >= 0, or a result is not one of :data:`RESULTS`.
    """
    if not isinstance(record, (tuple, list)) or len(record) != 3:
        raise ValueError(f"record must be three whole numbers (wins, draws, losses); got {record!r}")
    record = tuple(check_count(n, "each number of record", minimum=0) for n in record)
    totals = split_totals(result_as_x, result_as_o, sum(record))
    return tuple(k for k, total in enumerate(totals) if total == record)


@dataclass(frozen=True)
class Table2Splits:
    """What the paper's Table 2 asks of a deterministic player against a deterministic perfect player (chapter 15).

    Attributes
    ----------
    player
        The player's name.
    paper_wins, paper_draws, paper_losses, games
        The paper's Table 2: TTT's record in 50 games against the online program.
    result_as_x, result_as_o
        The result (one of :data:`RESULTS`) of the one game the player can play as X, and as O.
    game_as_x, game_as_o
        The squares of those two games, in the order they are played.
    totals
        The (wins, draws, losses) of the 50 games when the player takes X in ``k`` of them, for ``k`` = 0 to 50.
    splits
        The ``k`` whose totals are the paper's record; empty if no split of sides gives it.
    by_results
        For every pair (result as X, result as O), the ``k`` that give the paper's record: the argument holds for
        any deterministic player.
    """

    player: str
    paper_wins: int
    paper_draws: int
    paper_losses: int
    games: int
    result_as_x: str
    result_as_o: str
    game_as_x: tuple[int, ...]
    game_as_o: tuple[int, ...]
    totals: tuple[tuple[int, int, int], ...]
    splits: tuple[int, ...]
    by_results: dict[tuple[str, str], tuple[int, ...]]


def table2_splits(player: ArenaPlayer) -> Table2Splits:
    """The paper's Table 2 for a deterministic player, such as chapter 15's TTT
    (:func:`evolving_ttt.al_khateeb.system.al_khateeb_ttt`) (chapter 15).

    The opponent is :func:`deterministic_perfect_policy`. Both players always make the same move on the same
    board, so each side has exactly one game: the player's 50 games are ``k`` copies of its game as X and
    ``50 - k`` of its game as O, whatever the order in which the sides were taken.

    Raises
    ------
    ValueError
        If ``player`` is not an :class:`evolving_ttt.players.ArenaPlayer`, or does not play deterministically.
    """
    if not isinstance(player, ArenaPlayer):
        raise ValueError(f"player must be an ArenaPlayer (a player of either side); got {type(player).__name__}")
    if not player.deterministic:
        raise ValueError(f"{player.name} plays at random, so its games against a deterministic player are not one "
                         "per side; table2_splits needs a deterministic player")  # fmt: skip
    games, results = {}, {}
    for mark in (X, O):
        tables = (player.x_policy, deterministic_perfect_policy(O)) if mark == X else (deterministic_perfect_policy(X),
                                                                                       player.o_policy)  # fmt: skip
        winner, moves = sample_game(*tables, np.random.default_rng(0))  # no move is random: any seed gives this game
        results[mark], games[mark] = RESULTS[1 - winner * mark], tuple(moves)
    record = AL_KHATEEB_TABLE_2  # the paper's Table 2: TTT against the online program
    by_results = {(rx, ro): splits_giving(record, rx, ro) for rx in RESULTS for ro in RESULTS}
    return Table2Splits(player.name, *record, sum(record), results[X], results[O], games[X], games[O],
                        split_totals(results[X], results[O], sum(record)), by_results[results[X], results[O]],
                        by_results)  # fmt: skip
