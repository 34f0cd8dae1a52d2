"""Al-Khateeb (2012): the 9-5-3-1 board evaluator and its co-evolution, readable version (chapter 14).

Everything here is written for reading, one game and one network at a time; chapter
``book/14_al_khateeb_system.ipynb`` shows it piece by piece. The batched engine of
:mod:`evolving_ttt.al_khateeb.engine` runs the same experiment for all runs at once and is checked
against :func:`coevolve_readable` for the same random numbers.

Conventions
-----------
* A network is a flat vector of its 72 weights and biases (:data:`EVALUATOR_WEIGHTS`), layer by
  layer: the 9 x 5 input weights (``w[s, j]``: square s to hidden node j), the 5 biases of the
  first hidden layer, the 5 x 3 weights and 3 biases of the second, the 3 x 1 weights and the bias
  of the output. Biases are added.
* Boards are as everywhere in the book: X = +1, O = -1, empty = 0, X moves first.
* Every random number comes from a :class:`numpy.random.Generator`; the draws of a generation are
  made by :func:`draw_coevolution` so that the readable code and the engine use the same ones.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from evolving_ttt.game import (
    Player,
    X,
    check_count,
    check_instance,
    check_mark,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    winner,
)
from evolving_ttt.numerics import exp, tanh
from evolving_ttt.seeds import check_seed, trial_generators  # one generator per run, as for Fogel's trials

EVALUATOR_LAYERS = (9, 5, 3, 1)
"""Nodes per layer of Al-Khateeb's evaluator: 9 inputs, hidden layers of 5 and 3, one output (chapter 14)."""

EVALUATOR_WEIGHTS = sum((n_in + 1) * n_out for n_in, n_out in pairwise(EVALUATOR_LAYERS))
"""Weights and biases of one evaluator: 9*5+5 + 5*3+3 + 3*1+1 = 72, the paper's N_w (chapter 14)."""

EVALUATOR_WEIGHT_LIMIT = 0.5
"""Initial weights and biases are uniform on [-0.5, 0.5] (chapter 14)."""

INITIAL_STEP_SIZE = 0.05
"""Every self-adaptive step size starts at 0.05 (chapter 14)."""

STEP_SIZE_TAU = 1 / math.sqrt(2 * math.sqrt(EVALUATOR_WEIGHTS))
"""The learning rate of the step sizes, tau = 1 / sqrt(2 sqrt(72)), about 0.2427 (chapter 14)."""

VIEWS = ("mover", "x")
"""How the evaluator sees a board: from the side of the player who just moved, or always from X's (chapter 14)."""

WINNING_MOVES = ("evaluator", "rules")
"""Who judges a move that completes a line: the evaluator like any other move, or the rules (chapter 14)."""

WIN_VALUE = 2.0
"""The value the rules give a winning move: above any output of the evaluator, which lies in [-1, 1] (chapter 14)."""

MAX_DEPTH = 9
"""The deepest search a player may make: nine plies see every game to its end (chapter 21)."""

STEP_SIZES = ("weight", "player")
"""How many step sizes a network carries: one per weight, as the paper's equations say, or one per player (chapter
21)."""


def _check_choice(value: str, choices: Sequence[str], name: str) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {value!r}")
    return value


@dataclass(frozen=True)
class OnePlySettings:
    """The readings of how the evaluator picks a move; the defaults are the book's (chapter 14).

    Attributes
    ----------
    view
        ``"mover"`` (default): the board after the move is shown with the mover's pieces as +1 and the
        opponent's as -1, so one network plays both sides and always takes the highest value.
        ``"x"``: the board is always shown as it is (X = +1); X takes the highest value, O the lowest.
    winning_moves
        ``"evaluator"`` (default): a move that completes a line is judged by the network like any
        other. ``"rules"``: it gets :data:`WIN_VALUE`, so a player never misses a win in one. In a deeper
        search the same reading holds at every node: with ``"rules"`` a finished game with a line is worth
        :data:`WIN_VALUE` to its winner and ``-WIN_VALUE`` to its loser (chapter 21).
    depth
        How many plies the player looks ahead (chapter 21): 1 (default) is the book's one-ply player; with
        ``d`` plies a minimax search judges the boards ``d`` plies on with the evaluator and plays the move whose
        worst case is best (:mod:`evolving_ttt.al_khateeb.search`).
    """

    view: str = "mover"
    winning_moves: str = "evaluator"
    depth: int = 1

    def __post_init__(self) -> None:
        _check_choice(self.view, VIEWS, "view")
        _check_choice(self.winning_moves, WINNING_MOVES, "winning_moves")
        if (
            isinstance(self.depth, bool)
            or not isinstance(self.depth, (int, np.integer))
            or not (1 <= self.depth <= MAX_DEPTH)
        ):
            raise ValueError(f"depth must be a whole number of plies from 1 to {MAX_DEPTH}; got {self.depth!r}")

    def as_dict(self) -> dict:
        """The reading as a dict; ``depth`` only when it is not 1, so that the book's one-ply records keep their
        keys."""
        return {"view": self.view, "winning_moves": self.winning_moves,
                **({"depth": int(self.depth)} if self.depth != 1 else {})}  # fmt: skip


PAPER_ONE_PLY = OnePlySettings()
"""The book's reading of the paper: boards seen by the mover, winning moves left to the evaluator (chapter 14)."""


def check_weights(weights: np.ndarray, name: str = "weights") -> np.ndarray:
    """Return ``weights`` as a float array after checking that its last axis holds 72 finite numbers (chapter 14)."""
    if isinstance(weights, (str, bytes)):
        raise ValueError(f"{name} must be an array of {EVALUATOR_WEIGHTS} numbers; got {weights!r:.60}")
    try:
        weights = np.asarray(weights, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be an array of {EVALUATOR_WEIGHTS} numbers; got {weights!r:.60}") from None
    if weights.shape[-1:] != (EVALUATOR_WEIGHTS,):
        raise ValueError(f"{name} must have {EVALUATOR_WEIGHTS} weights in the last axis; got shape {weights.shape}")
    if not np.all(np.isfinite(weights)):
        raise ValueError(f"{name} must be finite numbers")
    return weights


def evaluator_layers(weights: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split one network's 72 numbers into ``(weights, biases)`` per layer: (9, 5) and (5,), (5, 3) and (3,),
    (3, 1) and (1,) (chapter 14)."""
    weights = check_weights(weights)
    layers, start = [], 0
    for n_in, n_out in pairwise(EVALUATOR_LAYERS):
        matrix = weights[..., start : start + n_in * n_out].reshape(weights.shape[:-1] + (n_in, n_out))
        start += n_in * n_out
        layers.append((matrix, weights[..., start : start + n_out]))
        start += n_out
    return layers


def evaluate_boards(weights: np.ndarray, boards: np.ndarray) -> np.ndarray:
    """The evaluator's value of each board, in [-1, 1]: tanh on every hidden node and on the output (chapter 14).

    ``weights`` has shape ``(..., 72)`` and ``boards`` ``(..., 9)``; their leading axes broadcast, so
    one network can judge many boards, or many networks one board each. This one function serves the
    readable player, the batched engine and the policy tables alike.

    Each node adds its inputs one at a time, in a fixed order (bias first, then input 0, 1, ...).
    Floating-point sums depend on their order, and a matrix product may sum in a different order
    for one board than for a million; with a fixed order a board gets the same value, bit for bit,
    whichever batch it is judged in, so that the engine and the readable code make the same moves.
    The arrays are held features first (``(9, ...)``), so that numpy's inner loops run along the long
    axis of boards rather than across a layer's few nodes.
    """
    weights = check_weights(weights)
    boards = np.asarray(boards, dtype=float)
    if boards.shape[-1:] != (9,):
        raise ValueError(f"boards must have 9 squares in the last axis; got shape {boards.shape}")
    batch = np.broadcast_shapes(boards.shape[:-1], weights.shape[:-1])
    values = np.moveaxis(boards, -1, 0)  # (9, ...): one row per input node
    params = np.moveaxis(weights, -1, 0)
    params = params.reshape((EVALUATOR_WEIGHTS,) + (1,) * (len(batch) - params.ndim + 1) + params.shape[1:])
    start = 0
    for n_in, n_out in pairwise(EVALUATOR_LAYERS):
        matrix = params[start : start + n_in * n_out].reshape((n_in, n_out) + params.shape[1:])
        start += n_in * n_out
        total = np.array(np.broadcast_to(params[start : start + n_out], (n_out,) + batch))  # the biases
        start += n_out
        for k in range(n_in):
            total += values[k] * matrix[k]
        values = tanh(total)
    return values[0]


def random_evaluators(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` networks with weights and biases uniform on [-0.5, 0.5], shape ``(count, 72)`` (chapter 14)."""
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator (np.random.default_rng(seed))")
    count = check_count(count, "count")
    return rng.uniform(-EVALUATOR_WEIGHT_LIMIT, EVALUATOR_WEIGHT_LIMIT, size=(count, EVALUATOR_WEIGHTS))


def move_values(
    weights: np.ndarray, board: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY
) -> tuple[list[int], np.ndarray]:
    """The one-ply search: every legal move of the side to move, and how much that side likes it (chapter 14).

    Each move is played on a copy of the board and the evaluator judges the result. With the view
    ``"mover"`` the result is shown with the mover's pieces as +1 (for O: the board times -1); with
    ``"x"`` it is shown as it is, and O's values are negated, so that every player takes the highest.
    With winning moves judged by the ``"rules"``, a move that completes a line is worth
    :data:`WIN_VALUE`.
    """
    mark = player_to_move(board)
    moves = legal_moves(board)
    afterstates = np.array([play(board, square) for square in moves])
    if settings.view == "mover":
        values = evaluate_boards(weights, mark * afterstates)
    else:
        values = mark * evaluate_boards(weights, afterstates)
    if settings.winning_moves == "rules":
        wins = np.array([winner(after) == mark for after in afterstates])
        values = np.where(wins, WIN_VALUE, values)
    return moves, values


def one_ply_move(weights: np.ndarray, board: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY) -> int:
    """The move the evaluator picks: the highest value, ties to the lowest square (chapter 14)."""
    moves, values = move_values(weights, board, settings)
    return moves[int(np.argmax(values))]  # argmax returns the first of equal values: the lowest square


def one_ply_player(weights: np.ndarray, mark: int, settings: OnePlySettings = PAPER_ONE_PLY) -> Player:
    """A move function (board -> square) for the evaluator playing ``mark`` (chapter 14)."""
    weights, mark = check_weights(weights).copy(), check_mark(mark)
    _settings(settings, "settings")

    def player(board: np.ndarray) -> int:
        if player_to_move(board) != mark:
            raise ValueError(f"this player plays {'X' if mark == X else 'O'}, but the board has the other side to move")
        return one_ply_move(weights, board, settings)

    return player


def self_adaptive_mutation(
    weights: np.ndarray, steps: np.ndarray, step_normals: np.ndarray, weight_normals: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One offspring per parent: each step size is multiplied by exp(tau N), then each weight moves by
    step size times N, with fresh standard normal numbers N for every weight (chapter 14).

    The weight moves by the *new* step size, the order the paper writes the two equations in. Any
    leading batch axes are allowed; returns ``(offspring weights, offspring step sizes)``.
    """
    new_steps = steps * exp(STEP_SIZE_TAU * step_normals)
    return weights + new_steps * weight_normals, new_steps


Mover = Callable[[np.ndarray, np.ndarray, "OnePlySettings"], int]
"""How an evaluator picks its move: ``move(weights, board, settings) -> square``, such as :func:`one_ply_move`."""


def coevolution_game(
    x_weights: np.ndarray, o_weights: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY, move: Mover = one_ply_move
) -> tuple[int, list[int]]:
    """Play one game between two evaluators; returns ``(winner, moves)``, winner +1 X, -1 O, 0 draw (chapter 14).

    Each picks its moves with ``move``: one ply here, a deeper search in chapter 21."""
    board = np.zeros(9, dtype=np.int8)
    moves = []
    while not is_game_over(board):
        weights = x_weights if player_to_move(board) == X else o_weights
        square = move(weights, board, settings)
        board = play(board, square)
        moves.append(square)
    return winner(board), moves


def round_robin_results(
    population: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY, move: Mover = one_ply_move
) -> np.ndarray:
    """Every network plays every other once as X and once as O, picking its moves with ``move`` (chapter 14).

    Returns ``results[i, j]``: the winner (+1 X, -1 O, 0 draw) of the game with network ``i`` as X and
    ``j`` as O; the diagonal is 0. With 20 networks that is 380 games.
    """
    population = check_weights(population, "population")
    if population.ndim != 2:
        raise ValueError(f"population must have shape (networks, {EVALUATOR_WEIGHTS}); got {population.shape}")
    check_instance(settings, OnePlySettings, "settings", "a OnePlySettings")  # the move function checks its depth
    n = population.shape[0]
    results = np.zeros((n, n), dtype=np.int8)
    for i in range(n):
        for j in range(n):
            if i != j:
                results[i, j] = coevolution_game(population[i], population[j], settings, move)[0]
    return results


def round_robin_totals(results: np.ndarray) -> np.ndarray:
    """Each network's total at +1 a win, 0 a draw, -1 a loss (chapter 14).

    As X, network ``i`` scores ``results[i, j]``; as O it scores ``-results[j, i]``.
    """
    results = np.asarray(results, dtype=np.int64)
    return results.sum(axis=-1) - results.sum(axis=-2)


def rank_population(totals: np.ndarray, tie_keys: np.ndarray) -> np.ndarray:
    """Positions of the networks from the highest total down; equal totals in the order of random keys (chapter 14)."""
    totals, tie_keys = np.asarray(totals), np.asarray(tie_keys)
    if totals.dtype.kind not in "iuf" or tie_keys.dtype.kind not in "iuf" or totals.shape != tie_keys.shape:
        raise ValueError(f"totals and tie_keys must be arrays of numbers of one shape; got {totals!r:.60} and "
                         f"{tie_keys!r:.60}")  # fmt: skip
    return np.lexsort((tie_keys, -totals), axis=-1)


@dataclass(frozen=True)
class AlKhateebSettings:
    """One experiment; the defaults are Al-Khateeb's (chapter 14).

    Attributes
    ----------
    population
        Networks per population (20); each generation they play a full round robin.
    parents
        How many of them survive (10). In the paper each makes one offspring, so the population is twice the
        parents; any divisor of the population smaller than it is allowed, and then each parent makes
        ``population / parents - 1`` offspring (the share that breeds, chapter 21).
    generations
        Generations per run (2,000).
    runs
        Independent runs (20): the paper evolves 20 players.
    player
        How a network picks its move (:class:`OnePlySettings`).
    step_sizes
        ``"weight"`` (default): every weight carries its own step size, as the paper's equations say;
        ``"player"``: one step size per network, as its step 3 can be read (chapter 21).
    hall_of_fame
        Not in the paper (chapter 21): how many past champions, drawn at random from the networks ranked first
        in earlier generations, every network also plays each generation, once as X and once as O; their
        results count in its total for selection (Rosin and Belew's hall of fame). 0 (default): none.
    """

    population: int = 20
    parents: int = 10
    generations: int = 2000
    runs: int = 20
    player: OnePlySettings = PAPER_ONE_PLY
    step_sizes: str = "weight"
    hall_of_fame: int = 0

    def __post_init__(self) -> None:
        check_count(self.population, "population", minimum=2)
        check_count(self.parents, "parents")
        check_count(self.generations, "generations")
        check_count(self.runs, "runs")
        if self.parents >= self.population or self.population % self.parents:
            raise ValueError(
                f"each parent makes the same number of offspring (one in the paper, so the population is twice the "
                f"parents): the parents must divide the population and be fewer; got population {self.population} "
                f"and parents {self.parents}"
            )
        if not isinstance(self.player, OnePlySettings):
            raise ValueError(f"player must be OnePlySettings; got {type(self.player).__name__}")
        _check_choice(self.step_sizes, STEP_SIZES, "step_sizes")
        check_count(self.hall_of_fame, "hall_of_fame", minimum=0)

    @property
    def offspring(self) -> int:
        """How many offspring each generation makes: the population minus the parents (chapter 21)."""
        return self.population - self.parents

    def is_paper_procedure(self) -> bool:
        """Whether this is the paper's procedure as chapter 14 reads it (one offspring per parent, one step size
        per weight, no hall of fame, a one-ply player), the one :func:`coevolve_readable` runs (chapter 21)."""
        return (2 * self.parents == self.population and self.step_sizes == "weight" and self.hall_of_fame == 0
                and self.player.depth == 1)  # fmt: skip

    def as_dict(self) -> dict:
        """The experiment as a dict; the settings of chapter 21 only when they differ from the paper's, so that
        the records of chapters 14 and 15 keep their keys."""
        extra = {"step_sizes": self.step_sizes} if self.step_sizes != "weight" else {}
        extra |= {"hall_of_fame": self.hall_of_fame} if self.hall_of_fame else {}
        return {"population": self.population, "parents": self.parents, "generations": self.generations,
                "runs": self.runs, "player": self.player.as_dict(), **extra}  # fmt: skip

    @classmethod
    def from_dict(cls, record: dict) -> AlKhateebSettings:
        """The configuration written by :meth:`as_dict`; ``ValueError`` saying what is wrong if it is not one."""
        check_instance(record, dict, "record", "a dict written by AlKhateebSettings.as_dict")
        try:
            return cls(**{**record, "player": OnePlySettings(**record["player"])})
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"not a co-evolution configuration: {error}") from None


PAPER_AL_KHATEEB = AlKhateebSettings()
"""Al-Khateeb's experiment: 20 networks, 10 parents, 2,000 generations, 20 runs (chapter 14)."""

AlKhateebConfig = AlKhateebSettings  # old name, kept for one release


@dataclass(frozen=True)
class CoevolutionDraws:
    """The random numbers of one generation of one run (chapter 14).

    Attributes
    ----------
    tie_keys : (population,)
        Uniform keys that order networks with equal totals.
    step_normals : (offspring, 72), or (offspring, 1) with one step size per player
        The standard normal numbers of the offspring's step sizes.
    weight_normals : (offspring, 72)
        The standard normal numbers of the offspring's weights.
    hall_keys : (hall_of_fame,)
        Uniform keys that pick the past champions of the generation (chapter 21; none in the paper).
    """

    tie_keys: np.ndarray
    step_normals: np.ndarray
    weight_normals: np.ndarray
    hall_keys: np.ndarray = field(default_factory=lambda: np.zeros(0))


def draw_coevolution(rng: np.random.Generator, settings: AlKhateebSettings = PAPER_AL_KHATEEB) -> CoevolutionDraws:
    """Draw one generation's random numbers, always in the same order (chapter 14).

    The tie keys, then the step-size normals, then the weight normals, then (with a hall of fame, chapter 21)
    the keys of the past champions.
    """
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    check_instance(settings, AlKhateebSettings, "settings", "an AlKhateebSettings")
    shape = (settings.offspring, EVALUATOR_WEIGHTS)
    step_shape = shape if settings.step_sizes == "weight" else (settings.offspring, 1)
    ties, steps, weights = rng.random(settings.population), rng.standard_normal(step_shape), rng.standard_normal(shape)
    hall = rng.random(settings.hall_of_fame) if settings.hall_of_fame else np.zeros(0)
    return CoevolutionDraws(ties, steps, weights, hall)


@dataclass(frozen=True)
class ReadableRun:
    """The record of one run of :func:`coevolve_readable` (chapter 14).

    Attributes
    ----------
    totals : (generations, population)
        Every network's round-robin total, in population order.
    best_weights : (generations, 72)
        The network ranked first in each generation.
    best_ids : (generations,)
        Its number: networks are numbered in order of birth within the run (the first population
        0 to 19, then 10 offspring per generation).
    mean_step : (generations,)
        The mean step size of the population that played each generation.
    weights, steps : (population, 72)
        The population after the last generation: the ranked parents, then their offspring.
    """

    totals: np.ndarray
    best_weights: np.ndarray
    best_ids: np.ndarray
    mean_step: np.ndarray
    weights: np.ndarray
    steps: np.ndarray


def coevolve_readable(settings: AlKhateebSettings = PAPER_AL_KHATEEB, seed: int = 1, run: int = 0) -> ReadableRun:
    """Run number ``run`` of an experiment, one game at a time (chapter 14).

    Steps 1 to 8 of the paper: 20 random networks with step sizes 0.05; each generation a round robin,
    the 10 best kept (equal totals in random order) and one offspring of each by self-adaptive
    mutation. Slow (a few seconds a generation); :func:`evolving_ttt.al_khateeb.engine.coevolve` gives
    the same result for all runs at once.
    """
    if not 0 <= run < settings.runs:
        raise ValueError(f"run must be a run number from 0 to {settings.runs - 1}; got {run!r}")
    rng = trial_generators(seed, settings.runs)[run]
    n, p, g_count = settings.population, settings.parents, settings.generations
    weights = random_evaluators(rng, n)
    steps = np.full((n, EVALUATOR_WEIGHTS), INITIAL_STEP_SIZE)
    ids = np.arange(n)
    totals, best_weights = np.zeros((g_count, n), dtype=np.int64), np.zeros((g_count, EVALUATOR_WEIGHTS))
    best_ids, mean_step = np.zeros(g_count, dtype=np.int64), np.zeros(g_count)
    for g in range(g_count):
        draws = draw_coevolution(rng, settings)
        totals[g] = round_robin_totals(round_robin_results(weights, settings.player))
        mean_step[g] = steps.mean()
        ranked = rank_population(totals[g], draws.tie_keys)[:p]
        best_weights[g], best_ids[g] = weights[ranked[0]], ids[ranked[0]]
        offspring, offspring_steps = self_adaptive_mutation(
            weights[ranked], steps[ranked], draws.step_normals, draws.weight_normals
        )
        weights = np.concatenate([weights[ranked], offspring])
        steps = np.concatenate([steps[ranked], offspring_steps])
        ids = np.concatenate([ids[ranked], n + g * p + np.arange(p)])
    return ReadableRun(totals, best_weights, best_ids, mean_step, weights, steps)


# --- Arguments checked at the door -----------------------------------------------------------------------------
# Chapter 14 prints the readable functions above as they are, line for line. The checks of their arguments (a
# ValueError naming a wrong argument, rather than an AttributeError or a TypeError from deep inside) are put
# around them here, so that the printed code stays the paper's steps. inspect.getsource still shows each function
# itself (functools.wraps records it as __wrapped__).


def _numbers(value: object, name: str) -> None:
    try:
        kind = np.asarray(value).dtype.kind
    except (TypeError, ValueError, OverflowError):
        kind = "O"
    if kind not in "biuf":
        raise ValueError(f"{name} must be an array of numbers; got {value!r:.60}")


def _settings_type(value: object, name: str) -> None:
    check_instance(value, OnePlySettings, name, "a OnePlySettings")


def _settings(value: object, name: str) -> None:
    _settings_type(value, name)
    if value.depth != 1:
        raise ValueError(f"{name}: this function searches one ply; for depth {value.depth} use "
                         "evolving_ttt.al_khateeb.search (search_values, search_move)")  # fmt: skip


def _config(value: object, name: str) -> None:
    check_instance(value, AlKhateebSettings, name, "an AlKhateebSettings")
    if not value.is_paper_procedure():
        raise ValueError(f"{name}: coevolve_readable runs the paper's procedure (one offspring per parent, one step "
                         "size per weight, no hall of fame, one ply); for the settings of chapter 21 use "
                         "evolving_ttt.al_khateeb.robust.coevolve_general_readable")  # fmt: skip


def _run_number(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole run number; got {value!r:.60}")


def _checked(function: Callable, **checks: Callable[[object, str], None]) -> Callable:
    """``function`` with ``checks[name](argument, name)`` applied to its arguments first."""
    signature = inspect.signature(function)
    names = list(signature.parameters)
    plain = all(p.kind == p.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())

    @functools.wraps(function)
    def checked(*args, **kwargs):
        if plain and not kwargs and len(args) == len(names):  # every argument by position: nothing to bind
            arguments = dict(zip(names, args, strict=True))
        else:
            try:
                arguments = signature.bind(*args, **kwargs).arguments
            except TypeError as error:
                raise ValueError(f"{function.__name__}: {error}") from None
        for name, check in checks.items():
            if name in arguments:
                check(arguments[name], name)
        return function(*args, **kwargs)

    return checked


evaluate_boards = _checked(evaluate_boards, boards=_numbers)
move_values = _checked(move_values, board=_numbers, settings=_settings)
coevolution_game = _checked(coevolution_game, settings=_settings_type)  # the move function checks the depth
self_adaptive_mutation = _checked(self_adaptive_mutation, weights=_numbers, steps=_numbers,
                                  step_normals=_numbers, weight_normals=_numbers)  # fmt: skip
round_robin_totals = _checked(round_robin_totals, results=_numbers)
coevolve_readable = _checked(coevolve_readable, settings=_config, seed=lambda seed, name: check_seed(seed, name),
                             run=_run_number)  # fmt: skip
