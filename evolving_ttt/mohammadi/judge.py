"""Mohammadi et al. (2013): exact results of programs, the candidates, and the scripted judge (chapters 18 and 19).

After a run the paper's human player plays the run's best 20 programs and 20 random ones, and keeps
the N that play best as seeds of the next run. In the built book a scripted judge stands in for the
person, so that every number reproduces. It is a stand-in, and it rewards one thing only: it plays each
candidate against the perfect player, once as X and once as O, exactly (every line of play weighted by
its probability, :mod:`evolving_ttt.outcomes`), and keeps the candidates that lose least. Ties go to
the candidate that wins more against the uniformly random player, then to the smaller tree, then to
the better fitness rank.

Every exact result here treats a program that makes no move as playing the lowest empty square, as in
the co-evolution (:func:`evolving_ttt.mohammadi.programs.fallback_move`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from deap import gp

from evolving_ttt.game import O, X, check_count
from evolving_ttt.mohammadi.programs import program_move_table, program_policy
from evolving_ttt.outcomes import outcome_probabilities, perfect_policy, random_policy

OPPONENTS = ("perfect", "random")
"""The yardsticks a run measures its candidates against (chapter 19); any other policy can be passed too."""

SIDES = (X, O)
"""The order of the side axis of :func:`program_exact_results`: the program as X, then as O."""

RESULTS = ("win", "draw", "loss")
"""The order of the last axis of :func:`program_exact_results`, from the program's side."""


def opponent_policy(kind: str, mark: int) -> np.ndarray:
    """The policy table of the ``kind`` opponent playing ``mark`` (chapter 19).

    "perfect": uniform among the minimax-best moves; "random": uniform over the empty squares.
    """
    if kind not in OPPONENTS:
        raise ValueError(f"opponent must be one of {OPPONENTS} or a function of the mark; got {kind!r}")
    return perfect_policy(mark) if kind == "perfect" else random_policy(mark)


def program_exact_results(
    programs: Sequence[gp.PrimitiveTree] | np.ndarray,
    opponent: str | Callable[[int], np.ndarray] = "perfect",
    chunk: int = 16,
    taken: str = "square",
) -> np.ndarray:
    """Exact probabilities of (win, draw, loss) for each program as X and as O, shape (n, 2, 3) (chapter 19).

    ``programs`` is a list of programs or an array of their move tables. ``opponent`` is one of
    :data:`OPPONENTS` or a function from a mark to that opponent's policy table, such as Fogel's
    :func:`evolving_ttt.fogel_score.rule_base_policy`. Programs are judged ``chunk`` at a time (each
    policy table is 1.4 MB). ``taken`` is the reading of PLAY-AT on a taken square used to tabulate programs
    (move tables are used as they are).
    """
    check_count(chunk, "chunk")
    if isinstance(opponent, str):
        kind = opponent
        opponent = lambda mark: opponent_policy(kind, mark)
    elif not callable(opponent):
        raise ValueError(f"opponent must be one of {OPPONENTS} or a function of the mark; got {opponent!r}")
    if isinstance(programs, np.ndarray):
        tables = programs
    else:
        tables = np.stack([program_move_table(p, taken) for p in programs])
    # Programs with the same move table play alike (a population holds many copies): judge each table once.
    first_of: dict[bytes, int] = {}
    copy_of = np.array([first_of.setdefault(t.tobytes(), len(first_of)) for t in tables], dtype=int)
    tables = tables[np.unique(copy_of, return_index=True)[1]]
    results = np.zeros((len(tables), 2, 3))
    against = {mark: opponent(-mark) for mark in SIDES}
    for start in range(0, len(tables), chunk):
        block = tables[start : start + chunk]
        as_x = outcome_probabilities(np.stack([program_policy(t, X) for t in block]), against[X])
        as_o = outcome_probabilities(against[O], np.stack([program_policy(t, O) for t in block]))
        results[start : start + chunk, 0] = as_x  # (X wins, draw, O wins) is (win, draw, loss) for X
        results[start : start + chunk, 1] = as_o[:, ::-1]
    return results[copy_of]


def choose_candidates(fitness: np.ndarray, rng: np.random.Generator, best: int, others: int) -> np.ndarray:
    """The programs shown to the judge: the ``best`` fittest, then ``others`` drawn at random from the rest.

    Ranks by fitness, ties to the lower index (chapter 19).
    """
    order = np.argsort(-np.asarray(fitness), kind="stable")
    top, rest = order[:best], order[best:]
    drawn = rng.choice(rest, size=others, replace=False) if others else np.array([], dtype=int)
    return np.concatenate([top, drawn]).astype(int)


@dataclass(frozen=True)
class Verdict:
    """What the scripted judge saw and chose (chapter 19).

    Attributes
    ----------
    losses : (n,) float
        Each candidate's expected games lost to the perfect player, as X plus as O (0 to 2).
    random_wins : (n,) float
        Its expected games won against the random player, as X plus as O (0 to 2).
    order : (n,) int
        Candidates from the judge's favourite down.
    kept : (N,) int
        The first ``N`` of ``order``.
    """

    losses: np.ndarray
    random_wins: np.ndarray
    order: np.ndarray
    kept: np.ndarray


def scripted_judge(perfect: np.ndarray, random: np.ndarray, sizes: Sequence[int], keep: int) -> Verdict:
    """The stand-in for the person: keep the ``keep`` candidates that lose least to the perfect player (chapter 19).

    ``perfect`` and ``random`` are the candidates' :func:`program_exact_results` against those two opponents, in
    fitness-rank order. Ties go to more wins against the random player, then to the smaller tree, then
    to the better rank.
    """
    check_count(keep, "keep", minimum=0)
    losses = perfect[:, :, 2].sum(axis=1)
    random_wins = random[:, :, 0].sum(axis=1)
    # Round away floating-point noise so that equal results tie exactly.
    order = np.lexsort((np.arange(len(losses)), np.asarray(sizes), -np.round(random_wins, 12), np.round(losses, 12)))
    return Verdict(losses, random_wins, order, order[:keep])
