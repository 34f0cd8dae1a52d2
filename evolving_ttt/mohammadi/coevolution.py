"""Mohammadi et al. (2013): double games, the tournament chain and fitnessless co-evolution (chapter 18).

One population of programs (:mod:`evolving_ttt.mohammadi.programs`) plays itself. Each individual opens a
*chain*: it plays a double game (each side starts once) against the first member of a random group of
others, the winner of that double game meets the next member, and the last winner enters the parent
pool. The pool is varied with DEAP's one-point crossover (probability 0.8, otherwise the pair is copied)
and a uniform subtree mutation that never touches the root (probability 0.5), under a depth limit.

Games are played between *move tables* (:func:`evolving_ttt.mohammadi.programs.program_move_table`): a program's
move on every board, computed once by the batched lazy interpreter, so that a whole round of chains is a
few array lookups. :func:`double_game` plays one double game the readable way, through
:class:`~evolving_ttt.mohammadi.programs.ProgramPlayer`; the tests assert that the two agree.

DEAP draws its random numbers from Python's ``random`` module. Every DEAP call of the book runs inside
:func:`deap_random`, which seeds that module from the run's ``numpy.random.Generator`` and restores its
state afterwards: the same seed gives the same programs, bit for bit.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from deap import gp

from evolving_ttt.game import (
    MARK_DIGIT,
    POWERS_OF_3,
    O,
    X,
    board_tables,
    check_count,
    check_instance,
    check_number,
    check_probability,
)
from evolving_ttt.mohammadi.programs import (
    PRIMITIVES,
    PROGRAM_HEIGHT_LIMIT,
    ProgramPlayer,
    check_program,
    check_taken,
    parse_program,
    playat_count,
    program_height,
    program_move_table,
)

# --- Randomness for DEAP ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def deap_random(rng: np.random.Generator) -> Iterator[None]:
    """Run DEAP's random choices from ``rng``: seed Python's ``random`` from it, restore it afterwards (chapter 18)."""
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    saved = random.getstate()
    random.seed(int(rng.integers(2**63)))
    try:
        yield
    finally:
        random.setstate(saved)


# --- Settings ---------------------------------------------------------------------------------------------------

OUTCOME_POINTS = {(2, 0): 20.0, (1, 0): 10.0, (1, 1): 5.0, (0, 0): 2.0, (0, 1): 1.0, (0, 2): 0.0}
"""Points for a double game by (games won, games lost): the paper's 20 and 5, and our draws (chapter 18)."""

PLAYAT_READINGS = ("each", "any")
"""How the PLAY-AT bonus counts: per PLAY-AT node of the tree (the paper's "number"), or once for any (chapter 18)."""

JUDGES = ("perfect", "random", "none")
"""Who picks the seeds of the next run: the scripted judge, a control that picks at random, or nobody (chapter 19)."""

BONUS_ROLES = ("added", "tie_break")
"""How the bonuses decide a double game: added to the outcome points, the program with more points winning (the
book's reading), or only breaking ties between equal outcome points (the other reading, chapter 23)."""

LATER_SETTINGS = ("bonus_role", "crossover_root")
"""Settings added after the first files were written (chapter 23): a file without them states the book's reading,
so :meth:`MohammadiSettings.from_dict` fills them in with their defaults."""


@dataclass(frozen=True)
class MohammadiSettings:
    """Every setting of a series of co-evolutionary runs (chapter 18).

    The paper's values where it gives them (population 128, depth 20, crossover 0.8, reproduction 0.2,
    mutation 0.5, 20 best and 20 random candidates shown to the judge); the rest are the book's choices.

    Attributes
    ----------
    population
        Individuals in the one population.
    generations
        Generations per run (the paper does not say).
    runs
        Runs in the series; between two runs the judge keeps ``seeds_kept`` programs and the rest of the
        next population is new random programs (with ``judge="none"`` the population simply carries on).
    group_size
        Opponents in each individual's chain (the paper does not say).
    crossover, mutation
        Probability that a pair of parents is crossed over (otherwise both are copied), and that a child
        is mutated.
    initial_depth
        Initial trees are grown (DEAP's ``genGrow``) with a height of at most this.
    depth_limit
        No child taller than this survives crossover or mutation (DEAP's ``staticLimit``; the parent is kept).
        At most :data:`~evolving_ttt.mohammadi.programs.PROGRAM_HEIGHT_LIMIT` (100), the tallest program the
        book reads back.
    mutation_depth
        Subtrees that mutation inserts are grown with a height of at most this.
    playat_bonus, move_bonus
        Points per PLAY-AT node in the tree, and per move the program makes itself, in each double game.
    playat_counted
        "each": the PLAY-AT bonus is paid for every PLAY-AT node (the paper: "regarding the number");
        "any": it is paid once, for having at least one (the other reading, chapter 19).
    taken
        What PLAY-AT returns on an occupied square: "square" (the book's reading of "it returns the position
        otherwise") or "nil" (the other reading, chapter 19).
    judge
        One of :data:`JUDGES`.
    seeds_kept
        Programs the judge keeps for the next run (the paper's N).
    best_candidates, random_candidates
        The judge sees the best programs of the run's last generation and some random others.
    bonus_role
        One of :data:`BONUS_ROLES`: "added", the bonuses are added to the outcome points and the program with more
        points wins the double game (the book's reading); "tie_break", the outcome points decide and the bonuses
        only break a tie between equal outcome points (chapter 23). Fitness is the points either way.
    crossover_root
        Whether crossover may pick the root of a parent (the paper forbids only mutation there; chapter 23).
        False: DEAP's ``cxOnePoint``, which never picks a root (the book's reading).
    """

    population: int = 128
    generations: int = 15
    runs: int = 4
    group_size: int = 4
    crossover: float = 0.8
    mutation: float = 0.5
    initial_depth: int = 20
    depth_limit: int = 20
    mutation_depth: int = 4
    playat_bonus: float = 1.0
    move_bonus: float = 1.0
    playat_counted: str = "each"
    taken: str = "square"
    judge: str = "perfect"
    seeds_kept: int = 10
    best_candidates: int = 20
    random_candidates: int = 20
    bonus_role: str = "added"
    crossover_root: bool = False

    def __post_init__(self) -> None:
        check_count(self.population, "population", minimum=2)
        check_count(self.generations, "generations")
        check_count(self.runs, "runs")
        check_count(self.group_size, "group_size")
        if self.group_size >= self.population:
            raise ValueError(f"group_size must be below the population ({self.population}); got {self.group_size}")
        check_probability(self.crossover, "crossover")
        check_probability(self.mutation, "mutation")
        check_count(self.initial_depth, "initial_depth")
        check_count(self.depth_limit, "depth_limit")
        if self.depth_limit > PROGRAM_HEIGHT_LIMIT:
            raise ValueError(f"depth_limit must be at most {PROGRAM_HEIGHT_LIMIT} (the tallest program the book "
                             f"reads back); got {self.depth_limit}")  # fmt: skip
        if self.depth_limit < self.initial_depth:
            raise ValueError(f"depth_limit ({self.depth_limit}) must be at least initial_depth ({self.initial_depth})")
        check_count(self.mutation_depth, "mutation_depth", minimum=0)
        for name in ("playat_bonus", "move_bonus"):
            check_number(getattr(self, name), name)
        if self.playat_counted not in PLAYAT_READINGS:
            raise ValueError(f"playat_counted must be one of {PLAYAT_READINGS}; got {self.playat_counted!r}")
        check_taken(self.taken)
        if self.judge not in JUDGES:
            raise ValueError(f"judge must be one of {JUDGES}; got {self.judge!r}")
        check_count(self.seeds_kept, "seeds_kept")  # a judge who keeps nothing is no judge
        check_count(self.best_candidates, "best_candidates", minimum=0)
        check_count(self.random_candidates, "random_candidates", minimum=0)
        shown = self.best_candidates + self.random_candidates
        if shown > self.population:
            raise ValueError(f"best_candidates + random_candidates ({shown}) exceed the population ({self.population})")
        if self.seeds_kept > shown:
            raise ValueError(f"seeds_kept ({self.seeds_kept}) exceeds the candidates shown to the judge ({shown})")
        if self.bonus_role not in BONUS_ROLES:
            raise ValueError(f"bonus_role must be one of {BONUS_ROLES}; got {self.bonus_role!r}")
        if not isinstance(self.crossover_root, bool):
            raise ValueError(f"crossover_root must be True or False; got {self.crossover_root!r}")

    def as_dict(self) -> dict:
        """The settings as a plain dictionary (for JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> MohammadiSettings:
        """The inverse of :meth:`as_dict`; unknown and missing keys are an error (a file states every setting),
        except the :data:`LATER_SETTINGS`, which a file written before them lacks: they take their defaults."""
        if not isinstance(data, dict):
            raise ValueError(f"data must be a dict of settings; got {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown settings {sorted(map(str, unknown))}")
        missing = set(cls.__dataclass_fields__) - set(data) - set(LATER_SETTINGS)
        if missing:
            raise ValueError(f"missing settings {sorted(missing)}")
        return cls(**data)


PAPER_MOHAMMADI = MohammadiSettings()
"""The series the chapters run: the paper's settings and the book's choices (chapter 18)."""

MohammadiConfig = MohammadiSettings  # old name, kept for one release


def playat_bonus_counts(
    programs: Sequence[gp.PrimitiveTree], settings: MohammadiSettings, counts: np.ndarray | None = None
) -> np.ndarray:
    """How many times each program earns the PLAY-AT bonus in a double game, by ``settings.playat_counted``.

    ``counts``: the programs' PLAY-AT counts if known (the fast engine keeps them); by default they are counted.
    """
    counts = np.array([playat_count(p) for p in programs]) if counts is None else np.asarray(counts)
    if len(counts) != len(programs):
        raise ValueError(f"counts must hold one PLAY-AT count per program ({len(programs)}); got {len(counts)}")
    return counts if settings.playat_counted == "each" else np.minimum(counts, 1)


# --- Programs: random ones and variation -------------------------------------------------------------------------


def random_programs(rng: np.random.Generator, count: int, max_depth: int = 20) -> list[gp.PrimitiveTree]:
    """``count`` new programs grown by DEAP's ``genGrow`` with heights 1 to ``max_depth`` (chapter 18).

    The root is always a function (height at least 1). Grow picks a terminal at each node with probability
    9/16, the share of terminals in the primitive set, so most trees stay far below the limit.
    """
    check_count(count, "count", minimum=0)
    check_count(max_depth, "max_depth")
    if max_depth > PROGRAM_HEIGHT_LIMIT:
        raise ValueError(f"max_depth must be at most {PROGRAM_HEIGHT_LIMIT}; got {max_depth}")
    with deap_random(rng):
        return [gp.PrimitiveTree(gp.genGrow(PRIMITIVES, 1, max_depth)) for _ in range(count)]


def mutate_below_root(individual: gp.PrimitiveTree, expr, pset: gp.PrimitiveSet) -> tuple[gp.PrimitiveTree]:
    """DEAP's ``mutUniform``, except that the replaced subtree never starts at the root (chapter 18).

    A node other than the root is picked uniformly and its subtree replaced by ``expr(pset=pset)``. A tree
    of one node has nothing below its root and is returned unchanged.
    """
    if len(individual) < 2:
        return (individual,)
    index = random.randrange(1, len(individual))
    individual[individual.searchSubtree(index)] = expr(pset=pset)
    return (individual,)


def crossover_anywhere(first: gp.PrimitiveTree, second: gp.PrimitiveTree) -> tuple[gp.PrimitiveTree, gp.PrimitiveTree]:
    """One-point crossover that may pick any node, the root included (``crossover_root=True``, chapter 23).

    DEAP's ``cxOnePoint`` picks a node below the root in each parent; here each parent's node is drawn uniformly
    from all of its nodes, and the subtrees below them are swapped. A picked root hands over the whole tree, so a
    child can take a new root (or even become a single terminal). Changes its arguments in place, as DEAP does.
    """
    index1 = random.randrange(len(first))
    index2 = random.randrange(len(second))
    slice1, slice2 = first.searchSubtree(index1), second.searchSubtree(index2)
    first[slice1], second[slice2] = second[slice2], first[slice1]
    return first, second


def variation_operators(settings: MohammadiSettings):
    """DEAP's crossover and our root-preserving mutation, both under DEAP's ``staticLimit`` on height (chapter 18).

    Returns ``(crossover, mutation)``: ``crossover(a, b) -> [a', b']`` and ``mutation(a) -> [a']``, which
    change their arguments in place, as DEAP's operators do; a child taller than ``settings.depth_limit`` is
    replaced by a copy of one of its parents.
    """
    limit = gp.staticLimit(key=program_height, max_value=settings.depth_limit)

    def grow(pset):
        return gp.genGrow(pset, 0, settings.mutation_depth)

    crossover = limit(crossover_anywhere if settings.crossover_root else gp.cxOnePoint)
    mutation = limit(lambda individual: mutate_below_root(individual, grow, PRIMITIVES))
    return crossover, mutation


def vary(parents: Sequence[gp.PrimitiveTree], rng: np.random.Generator, settings: MohammadiSettings) -> list:
    """The next population from the parent pool: crossover or reproduction per pair, then mutation (chapter 18).

    Parents are taken in pairs in pool order (the pool is already in random order: it follows the
    individuals' random groups). Each pair is crossed over with probability ``settings.crossover`` and
    copied otherwise; then each child is mutated with probability ``settings.mutation``. The parents are
    not changed.
    """
    check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
    if isinstance(parents, (str, bytes)) or not isinstance(parents, Sequence):
        raise ValueError(f"parents must be a list of programs; got {type(parents).__name__}")
    for parent in parents:
        check_program(parent, "each parent")
    crossover, mutation = variation_operators(settings)
    children = [gp.PrimitiveTree(list(parent)) for parent in parents]
    with deap_random(rng):
        for k in range(0, len(children) - 1, 2):
            if random.random() < settings.crossover:
                children[k], children[k + 1] = crossover(children[k], children[k + 1])
        for k in range(len(children)):
            if random.random() < settings.mutation:
                (children[k],) = mutation(children[k])
    return children


# --- Games between move tables -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Games:
    """Results of a batch of games (chapter 18).

    Attributes
    ----------
    result : (n,) int8
        +1 X won, -1 O won, 0 draw.
    x_moves, o_moves : (n,) int8
        Moves each side's program made itself (fallback moves played for it are not counted).
    """

    result: np.ndarray
    x_moves: np.ndarray
    o_moves: np.ndarray


def _check_tables(tables: object) -> None:
    if not isinstance(tables, np.ndarray) or tables.ndim != 2 or tables.shape[1] != len(board_tables().boards):
        raise ValueError(f"tables must be an array of move tables, one row of {len(board_tables().boards)} per "
                         f"program; got {type(tables).__name__} {getattr(tables, 'shape', '')}")  # fmt: skip


def play_games(tables: np.ndarray, x_players: np.ndarray, o_players: np.ndarray) -> Games:
    """Play game ``k`` between program ``x_players[k]`` (X) and ``o_players[k]`` (O), all at once (chapter 18).

    ``tables`` holds one move table per program (shape ``(programs, 19683)``, -1 for no move). Every game
    advances one ply per step: a lookup of the mover's square on the current board index, the lowest empty
    square where the program makes no move, and the index updated by the mark's digit.
    """
    _check_tables(tables)
    boards = board_tables()
    x_players, o_players = np.asarray(x_players), np.asarray(o_players)
    index = np.zeros(len(x_players), dtype=np.int64)
    over = np.zeros(len(x_players), dtype=bool)
    moves = {X: np.zeros(len(x_players), dtype=np.int8), O: np.zeros(len(x_players), dtype=np.int8)}
    for ply in range(9):
        mark, players = (X, x_players) if ply % 2 == 0 else (O, o_players)
        own = tables[players, index]
        square = np.where(own >= 0, own, boards.empty_list[index, 0]).astype(np.int64)
        moves[mark] += (own >= 0) & ~over
        index = np.where(over, index, index + MARK_DIGIT[mark] * POWERS_OF_3[square])
        over = boards.over[index]
    return Games(result=boards.winner[index].copy(), x_moves=moves[X], o_moves=moves[O])


def double_game_points(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Outcome points of a double game from one player's side, by :data:`OUTCOME_POINTS` (chapter 18).

    ``first`` and ``second`` are that player's results in its two games: +1 won, 0 draw, -1 lost.
    """
    first, second = np.asarray(first), np.asarray(second)
    wins = (first > 0).astype(int) + (second > 0)
    losses = (first < 0).astype(int) + (second < 0)
    lookup = np.zeros((3, 3))
    for (won, lost), points in OUTCOME_POINTS.items():
        lookup[won, lost] = points
    return lookup[wins, losses]


@dataclass(frozen=True)
class DoubleGames:
    """Results of double games between players ``a`` and ``b``: ``a`` is X in the first game (chapter 18).

    Attributes
    ----------
    a_results, b_results : (n, 2) int8
        Each player's result in game 1 and game 2 (+1 win, 0 draw, -1 loss).
    a_points, b_points : (n,) float
        Outcome points plus the PLAY-AT and move bonuses.
    bonus_role : str
        How the points decide (:data:`BONUS_ROLES`, :func:`holder_wins`).
    """

    a_results: np.ndarray
    b_results: np.ndarray
    a_points: np.ndarray
    b_points: np.ndarray
    bonus_role: str = "added"

    @property
    def a_wins(self) -> np.ndarray:
        """Whether ``a`` wins the double game (:func:`holder_wins`): a tie goes to ``a``."""
        return holder_wins(self.a_points, self.b_points, self.a_results, self.b_results, self.bonus_role)


def holder_wins(a_points, b_points, a_results, b_results, bonus_role: str = "added"):
    """Whether ``a`` (the chain's holder) wins the double game against ``b``; a tie goes to ``a`` (chapters 18, 23).

    ``bonus_role="added"``: ``a`` has at least as many points (outcome points plus bonuses). ``"tie_break"``: ``a``
    has more outcome points (:func:`double_game_points` of its results, shape (..., 2)), or as many and at least as
    many points, that is at least as large a bonus. Works on one double game or on arrays of them.
    """
    if bonus_role not in BONUS_ROLES:
        raise ValueError(f"bonus_role must be one of {BONUS_ROLES}; got {bonus_role!r}")
    at_least = np.asarray(a_points) >= np.asarray(b_points)
    if bonus_role == "added":
        return at_least
    a_results, b_results = np.asarray(a_results), np.asarray(b_results)
    a_outcome = double_game_points(a_results[..., 0], a_results[..., 1])
    b_outcome = double_game_points(b_results[..., 0], b_results[..., 1])
    return (a_outcome > b_outcome) | ((a_outcome == b_outcome) & at_least)


def play_double_games(
    tables: np.ndarray, playats: np.ndarray, a: np.ndarray, b: np.ndarray, settings: MohammadiSettings
) -> DoubleGames:
    """Double games between programs ``a[k]`` and ``b[k]`` (chapter 18): ``a`` plays X first, then ``b`` does.

    Each side earns the outcome points of :func:`double_game_points`, ``settings.playat_bonus`` times its
    entry of ``playats`` (:func:`playat_bonus_counts`), and ``settings.move_bonus`` per move its program
    made in the two games; ``settings.bonus_role`` says how the points decide the winner.
    """
    first = play_games(tables, a, b)
    second = play_games(tables, b, a)
    a_results = np.stack([first.result, -second.result], axis=1).astype(np.int8)
    b_results = -a_results
    a_moves = first.x_moves.astype(int) + second.o_moves
    b_moves = first.o_moves.astype(int) + second.x_moves
    a_points = double_game_points(*a_results.T) + settings.playat_bonus * playats[a] + settings.move_bonus * a_moves
    b_points = double_game_points(*b_results.T) + settings.playat_bonus * playats[b] + settings.move_bonus * b_moves
    return DoubleGames(a_results, b_results, a_points, b_points, settings.bonus_role)


def double_game(a: gp.PrimitiveTree, b: gp.PrimitiveTree, settings: MohammadiSettings = PAPER_MOHAMMADI):
    """One double game played move by move through :class:`ProgramPlayer` (the readable version, chapter 18).

    Returns ``(a_points, b_points, a_results, b_results)`` as :func:`play_double_games` scores them.
    """
    check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
    check_program(a, "a")
    check_program(b, "b")
    players = {"a": ProgramPlayer(a, settings.taken), "b": ProgramPlayer(b, settings.taken)}
    results = {"a": [], "b": []}
    moves = {"a": 0, "b": 0}
    for x_name, o_name in (("a", "b"), ("b", "a")):
        board = np.zeros(9, dtype=np.int8)
        side = {X: x_name, O: o_name}
        mark = X
        tables = board_tables()
        index = 0
        while not tables.over[index]:
            player = players[side[mark]]
            moves[side[mark]] += player.made_move(board)
            square = player(board)
            board[square] = mark
            index += MARK_DIGIT[mark] * int(POWERS_OF_3[square])
            mark = -mark
        outcome = int(tables.winner[index])
        results[x_name].append(outcome)
        results[o_name].append(-outcome)
    playats = dict(zip("ab", playat_bonus_counts([a, b], settings), strict=True))
    points = {
        name: float(double_game_points(*results[name])) + settings.playat_bonus * playats[name]
        + settings.move_bonus * moves[name]
        for name in "ab"
    }  # fmt: skip
    return points["a"], points["b"], tuple(results["a"]), tuple(results["b"])


# --- The tournament chain ---------------------------------------------------------------------------------------


def sample_groups(rng: np.random.Generator, population: int, group_size: int) -> np.ndarray:
    """For each individual ``i``, ``group_size`` distinct others in random order, shape (population, group_size).

    Drawn from the ``population - 1`` others (numbers at or above ``i`` shift up by one, so ``i`` never
    meets itself) (chapter 18).
    """
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    check_count(population, "population", minimum=2)
    check_count(group_size, "group_size")
    if group_size >= population:
        raise ValueError(f"group_size must be below the population ({population}); got {group_size}")
    draws = np.stack([rng.choice(population - 1, size=group_size, replace=False) for _ in range(population)])
    return draws + (draws >= np.arange(population)[:, None])


@dataclass(frozen=True)
class Tournament:
    """One generation's chains (chapter 18).

    Attributes
    ----------
    groups : (n, k) int
        Each individual's sampled opponents, in the order it meets them.
    winners : (n,) int
        The last winner of each chain: the parent pool.
    points, double_games, wins, games : (n,) float / int
        Per individual, over every double game it played in this generation (as chain holder or as a
        group member): the points it earned, the double games, the single games it won, and the games.
    """

    groups: np.ndarray
    winners: np.ndarray
    points: np.ndarray
    double_games: np.ndarray
    wins: np.ndarray
    games: np.ndarray

    @property
    def fitness(self) -> np.ndarray:
        """Mean points per double game: how the run ranks its programs (there is no other fitness)."""
        return self.points / np.maximum(self.double_games, 1)


def tournament(tables: np.ndarray, playats: np.ndarray, groups: np.ndarray, settings: MohammadiSettings) -> Tournament:
    """Run every chain: individual ``i`` meets ``groups[i, 0]``, the winner meets ``groups[i, 1]``, ... (chapter 18).

    The chains are independent, so step ``r`` of all of them is one batch of double games.
    """
    _check_tables(tables)
    check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
    if not isinstance(groups, np.ndarray) or groups.ndim != 2 or len(groups) != len(tables):
        raise ValueError(f"groups must be an array (programs, group size) of opponents, one row per table; got "
                         f"{type(groups).__name__} {getattr(groups, 'shape', '')}")  # fmt: skip
    n, k = groups.shape
    holder = np.arange(n)
    points = np.zeros(n)
    double_count = np.zeros(n, dtype=int)
    wins = np.zeros(n, dtype=int)
    for r in range(k):
        challenger = groups[:, r]
        games = play_double_games(tables, playats, holder, challenger, settings)
        for players, earned, results in ((holder, games.a_points, games.a_results),
                                         (challenger, games.b_points, games.b_results)):  # fmt: skip
            np.add.at(points, players, earned)
            np.add.at(double_count, players, 1)
            np.add.at(wins, players, (results > 0).sum(axis=1))
        holder = np.where(games.a_wins, holder, challenger)
    return Tournament(groups, holder, points, double_count, wins, 2 * double_count)


def tournament_readable(
    programs: Sequence[gp.PrimitiveTree], groups: np.ndarray, settings: MohammadiSettings = PAPER_MOHAMMADI
) -> np.ndarray:
    """The parent pool of :func:`tournament`, one chain at a time with :func:`double_game` (chapter 18)."""
    winners = []
    for i, group in enumerate(groups):
        holder = i
        for challenger in group:
            holder_points, challenger_points, holder_results, challenger_results = double_game(
                programs[holder], programs[challenger], settings
            )
            won = holder_wins(holder_points, challenger_points, holder_results, challenger_results, settings.bonus_role)
            holder = holder if won else int(challenger)
        winners.append(holder)
    return np.array(winners)


def round_robin_wins(tables: np.ndarray) -> np.ndarray:
    """Games each program wins when every pair plays a double game (each side once with each other), shape (n,).

    Of ``2 (n - 1)`` games per program (chapter 19).
    """
    n = len(tables)
    x, o = np.nonzero(~np.eye(n, dtype=bool))
    games = play_games(tables, x, o)
    return np.bincount(x, weights=games.result > 0, minlength=n) + np.bincount(o, weights=games.result < 0, minlength=n)


# --- A population with its move tables ----------------------------------------------------------------------------


@dataclass
class TableCache:
    """Move tables of programs, so that copies and survivors are interpreted once (chapter 18).

    Keyed by the sequence of node names, which is the program (cheaper to build than its text).
    Only the tables of the latest call are kept.
    """

    tables: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)

    def of(self, programs: Sequence[gp.PrimitiveTree], taken: str = "square") -> np.ndarray:
        """The move tables of ``programs`` under the ``taken`` reading, shape (len(programs), 19683).

        One cache serves one reading: a series never changes it.
        """
        keys = [tuple(node.name for node in program) for program in programs]
        fresh = {}
        for key, program in zip(keys, programs, strict=True):
            if key not in fresh:
                fresh[key] = self.tables[key] if key in self.tables else program_move_table(program, taken)
        self.tables = fresh
        return np.stack([fresh[key] for key in keys])


def programs_from_texts(texts: Sequence[str]) -> list[gp.PrimitiveTree]:
    """Parse a list of program texts (as runs store them) (chapter 18)."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise ValueError(f"texts must be a list of program texts; got {type(texts).__name__}")
    return [parse_program(text) for text in texts]
