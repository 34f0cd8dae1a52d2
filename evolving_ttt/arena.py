"""The arena: the players of every system on the same exact yardsticks (book/21_arena.ipynb).

Each paper judged its player on its own terms. Here every player becomes an :class:`ArenaPlayer`, a
pair of policy tables (one for each side, :mod:`evolving_ttt.outcomes`), and all of them are measured
the same way, exactly, by walking the game tree with the players' move probabilities:

1. Fogel's yardstick: the expected 32-game protocol score against his rule base, as X;
2. win, draw and loss rates against the perfect player, the 10%-random perfect player and the random
   player, as X and as O;
3. the audit: can it lose, as X and as O, and in how many of the positions it can reach is one of its
   moves worse than the best move there;
4. a round robin among all players, both sides.

Evolved players are loaded from their files in ``book/data/``, so the arena judges exactly what the
system chapters saved. The module sits on top of the systems; nothing but the command line imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from evolving_ttt.al_khateeb.engine import load_evaluator
from evolving_ttt.al_khateeb.evaluator import move_values, one_ply_move
from evolving_ttt.al_khateeb.results import evaluator_policy
from evolving_ttt.fogel.exact import best_response, protocol_score, rule_base_policy
from evolving_ttt.fogel.network import load_network, network_move, network_outputs
from evolving_ttt.fogel.opponent import PAPER_RULES
from evolving_ttt.game import (
    MARK_DIGIT,
    POWERS_OF_3,
    SYMBOLS,
    O,
    X,
    board_index,
    check_instance,
    check_mark,
    is_game_over,
    player_to_move,
    validate_board,
)
from evolving_ttt.ling_lam.experiment import load_trained_network, network_policy
from evolving_ttt.ling_lam.heuristic import heuristic_encoding, heuristic_move, heuristic_policy, square_scores
from evolving_ttt.ling_lam.network import GRID_NUMBERS
from evolving_ttt.mohammadi.programs import program_move, program_path, program_policy
from evolving_ttt.mohammadi.series import DEFAULT_PROGRAM, load_program
from evolving_ttt.outcomes import (
    audit_policy,
    best_response_policy,
    check_policy,
    outcome_probabilities,
    perfect_policy,
    policy_table,
    random_policy,
)
from evolving_ttt.perfect import minimax_values

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
"""The folder of the saved players (every system chapter writes its players there)."""


@dataclass(frozen=True)
class Explanation:
    """Why a player moves where it does on one board: what the play chapter shows beside the board (chapter 14).

    Attributes
    ----------
    values
        Nine numbers, one per square, that the player's choice rests on (nan on occupied squares), or
        all nan when its reasons are not numbers.
    label
        What the numbers are ("output", "minimax value", ...).
    text
        One or two sentences; for a program, the path through it that reached the move.
    move
        The square the player plays (for a stochastic player, one of its likely squares).
    """

    values: np.ndarray
    label: str
    text: str
    move: int


@dataclass(frozen=True, eq=False)
class ArenaPlayer:
    """A player of either side, as two policy tables (book/21_arena.ipynb).

    Attributes
    ----------
    name, system, description
        What the player is called, which system (or reference) it comes from, and one line about it.
    x_policy, o_policy
        Its policy tables as X and as O, shape (19683, 9) each.
    training
        What making it cost, in words (games played or positions scored), or "" for reference players.
    explain
        ``explain(board, mark) -> Explanation``: why the player moves where it does (chapter 14).
    """

    name: str
    system: str
    description: str
    x_policy: np.ndarray = field(repr=False)
    o_policy: np.ndarray = field(repr=False)
    training: str = ""
    explain: Callable[[np.ndarray, int], Explanation] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_policy(self.x_policy, X, f"{self.name}'s x_policy", single=True)
        check_policy(self.o_policy, O, f"{self.name}'s o_policy", single=True)

    def policy(self, mark: int) -> np.ndarray:
        """The policy table of ``mark``."""
        return self.x_policy if check_mark(mark) == X else self.o_policy

    @property
    def deterministic(self) -> bool:
        """Whether the player always makes the same move on the same board."""
        return all(bool(np.all((table == 0) | (table == 1))) for table in (self.x_policy, self.o_policy))

    def move(self, board: Sequence[int] | np.ndarray, rng: np.random.Generator | None = None) -> int:
        """The player's move on ``board`` for the side to move; a stochastic player draws it from ``rng``.

        Raises
        ------
        ValueError
            If the board is not legal or the game is over, or a stochastic choice has no ``rng``.
        """
        values = validate_board(board)
        if is_game_over(values):
            raise ValueError("the game is over on this board; there is no move to make")
        row = self.policy(player_to_move(values))[board_index(values)]
        squares = np.flatnonzero(row)
        if len(squares) == 1:
            return int(squares[0])
        check_instance(rng, np.random.Generator, "rng", f"a numpy.random.Generator ({self.name} moves at random)")
        return int(rng.choice(squares, p=row[squares] / row[squares].sum()))


def table_player(
    name: str,
    system: str,
    description: str,
    move: Callable[[np.ndarray, int], int],
    training: str = "",
    explain: Callable[[np.ndarray, int], Explanation] | None = None,
) -> ArenaPlayer:
    """An :class:`ArenaPlayer` from a deterministic move function ``move(board, mark) -> square``."""
    return ArenaPlayer(
        name, system, description, policy_table(lambda board: move(board, X), X),
        policy_table(lambda board: move(board, O), O), training, explain,
    )  # fmt: skip


def square_values(board: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Nine values as floats with nan on the occupied squares of ``board`` (for an :class:`Explanation`)."""
    board = np.asarray(board)
    return np.where(board == 0, np.asarray(values, dtype=float), np.nan)


def probability_explanation(policy: Callable[[int], np.ndarray], text: str) -> Callable[[np.ndarray, int], Explanation]:
    """An ``explain`` that shows a player's move probabilities and says ``text`` (for stochastic players)."""

    def explain(board: np.ndarray, mark: int) -> Explanation:
        row = policy(mark)[board_index(board)]
        return Explanation(square_values(board, row), "probability", text, int(np.argmax(row)))

    return explain


# --- The reference players --------------------------------------------------------------------------


def best_response_player() -> ArenaPlayer:
    """The best reply to Fogel's rule base on either side, payoff +1 / -10 / 0 (chapter 10's ceiling player).

    As X it is :func:`evolving_ttt.fogel.exact.best_response` (its opening is chosen for the protocol's
    cycled first replies); on boards that player never meets, and as O, it is the expectimax reply to
    the rule base's move probabilities.
    """
    payoff = (1.0, -10.0, 0.0)
    x_table, x_values = best_response_policy(rule_base_policy(O), X, payoff)
    ceiling = best_response()
    rows = np.flatnonzero(ceiling.policy >= 0)
    x_table[rows] = 0.0
    x_table[rows, ceiling.policy[rows]] = 1.0
    o_table, o_values = best_response_policy(rule_base_policy(X), O, payoff)
    tables = {X: (x_table, x_values), O: (o_table, o_values)}

    def explain(board: np.ndarray, mark: int) -> Explanation:
        table, values = tables[mark]
        i = board_index(board)
        after = [values[i + MARK_DIGIT[mark] * POWERS_OF_3[s]] if board[s] == 0 else np.nan for s in range(9)]
        move = int(np.argmax(table[i]))
        return Explanation(square_values(board, after), "expected payoff",
                           f"The expected payoff of each move against the rule base (+1 win, -10 loss, 0 draw); "
                           f"it plays square {move}.", move)  # fmt: skip

    return ArenaPlayer("best response", "reference", "expectimax against the rule base (chapter 10)",
                       x_table, o_table, explain=explain)  # fmt: skip


def perfect_explanation(random_move_probability: float) -> Callable[[np.ndarray, int], Explanation]:
    """The perfect player's reasons: the game-theoretic value of each move, from its side."""

    def explain(board: np.ndarray, mark: int) -> Explanation:
        i = board_index(board)
        values = [mark * minimax_values()[i + MARK_DIGIT[mark] * POWERS_OF_3[s]] + 0.0 if board[s] == 0 else np.nan
                  for s in range(9)]  # fmt: skip
        best = [s for s in range(9) if values[s] == np.nanmax(values)]
        text = f"Value of each move with best play from then on (+1 win, 0 draw, -1 loss): best {best}, one at random."
        if random_move_probability:
            text += f" {random_move_probability:.0%} of the time it plays any empty square instead."
        return Explanation(square_values(board, values), "minimax value", text, best[0])

    return explain


@cache
def reference_players() -> tuple[ArenaPlayer, ...]:
    """The yardstick players: random, Fogel's rule base, perfect, 10%-random perfect, best response."""
    random = {X: random_policy(X), O: random_policy(O)}
    rules = {X: rule_base_policy(X), O: rule_base_policy(O)}
    return (
        ArenaPlayer("random", "reference", "a uniformly random empty square", random[X], random[O],
                    explain=probability_explanation(random.get, "Every empty square is equally likely.")),
        ArenaPlayer("rule base", "Fogel (1993)", "Fogel's near-perfect rules, 10% random moves, either side",
                    rules[X], rules[O], explain=probability_explanation(rules.get,
                    "Steps (b)-(e) name the candidate squares (win, block, build a line, anything); one is taken at "
                    "random, and 10% of the time any empty square instead.")),
        ArenaPlayer("perfect", "reference", "minimax, at random among the best moves",
                    perfect_policy(X), perfect_policy(O), explain=perfect_explanation(0.0)),
        ArenaPlayer("perfect, 10% random", "reference", "the perfect player with a 10% random move",
                    perfect_policy(X, 0.1), perfect_policy(O, 0.1), explain=perfect_explanation(0.1)),
        best_response_player(),
    )  # fmt: skip


def fogel_champion(path: str | Path = DATA / "champion.json") -> ArenaPlayer:
    """Fogel's champion network from its file; as O it plays through the colour swap (chapter 14)."""
    network, provenance = load_network(path)
    training = "50 parents + 50 offspring x 32 games x 800 generations = 2,560,000 games per trial"

    def explain(board: np.ndarray, mark: int) -> Explanation:
        move = network_move(network, board, mark)
        side = "" if mark == X else " (as O it sees the board with the colours swapped)"
        return Explanation(
            square_values(board, network_outputs(network, board, mark)),
            "output",
            f"The network's nine outputs{side}; it plays its strongest empty square, {move}.",
            move,
        )

    return table_player("Fogel champion", "Fogel (1993)",
                        f"9-{network.hidden_count}-9 network, seed {provenance.get('seed')}",
                        lambda board, mark: network_move(network, board, mark), training, explain)  # fmt: skip


def al_khateeb_ttt(path: str | Path = DATA / "al_khateeb_ttt.json") -> ArenaPlayer:
    """Al-Khateeb's TTT: the co-evolved 9-5-3-1 evaluator with a one-ply search, on either side (chapters 15, 16)."""
    weights, _steps, provenance = load_evaluator(path)

    def explain(board: np.ndarray, mark: int) -> Explanation:
        moves, values = move_values(weights, board)
        move = one_ply_move(weights, board)
        shown = np.full(9, np.nan)
        shown[moves] = values
        return Explanation(shown, "evaluator's value of the board after the move",
                           f"The evaluator judges the board after each legal move, seen from the mover's side; "
                           f"it plays the best, square {move}.", move)  # fmt: skip

    experiment = provenance.get("experiment", {})
    training = (f"{experiment.get('runs', 20)} runs x {experiment.get('generations', 2000):,} generations x 380 "
                f"round-robin games = {experiment.get('runs', 20) * experiment.get('generations', 2000) * 380:,} "
                "games")  # fmt: skip
    return ArenaPlayer("Al-Khateeb TTT", "Al-Khateeb (2012)",
                       f"9-5-3-1 tanh evaluator, run {provenance.get('run')}, one-ply search",
                       evaluator_policy(weights, X), evaluator_policy(weights, O), training, explain)  # fmt: skip


def mohammadi_champion(path: str | Path = DEFAULT_PROGRAM) -> ArenaPlayer:
    """Mohammadi's champion program, on either side (chapters 19, 20); the lowest empty square where it is silent."""
    program, provenance = load_program(path)

    def explain(board: np.ndarray, mark: int) -> Explanation:
        move = program_move(program, board, mark)
        return Explanation(np.full(9, np.nan), "none: a program does not score squares",
                           f"Path through the program: {program_path(program, board, mark)}.", move)  # fmt: skip

    config = provenance.get("config", {})
    runs, generations = config.get("runs"), config.get("generations")
    training = (f"{runs} runs x {generations} generations of fitnessless co-evolution, 128 programs, and a judge"
                if runs and generations else "fitnessless co-evolution and a judge")  # fmt: skip
    return ArenaPlayer("Mohammadi champion", "Mohammadi et al. (2013)", f"a program of {len(program)} nodes",
                       program_policy(program, X), program_policy(program, O), training, explain)  # fmt: skip


def ling_lam_players(data: str | Path = DATA) -> tuple[ArenaPlayer, ...]:
    """Ling and Lam's heuristic (the teacher), and the trained NNDTF and baseline network (chapters 17 and 18).

    All three score squares for X; as O they see the board with the colours swapped.
    """
    data = Path(data)

    def heuristic_explain(board: np.ndarray, mark: int) -> Explanation:
        move = heuristic_move(board, mark)
        return Explanation(square_values(board, square_scores(board, mark)), "heuristic score",
                           f"The heuristic adds up the scores of the lines through each empty square; it plays the "
                           f"highest, square {move}.", move)  # fmt: skip

    heuristic = ArenaPlayer("Ling-Lam heuristic", "Ling and Lam (2011)", "the move-scoring heuristic of Section 2",
                            heuristic_policy(X), heuristic_policy(O), "designed by hand",
                            heuristic_explain)  # fmt: skip
    players = [heuristic]
    for name, file in (("Ling-Lam NNDTF", "ling_lam_nndtf.json"), ("Ling-Lam baseline", "ling_lam_baseline.json")):
        network, provenance = load_trained_network(data / file)

        def explain(board: np.ndarray, mark: int, network=network) -> Explanation:
            output = float(network.outputs(heuristic_encoding((np.asarray(board) * mark)[None]))[0])
            target = 5 + 4 * output
            move = network.move(board)
            distance = -np.abs(GRID_NUMBERS - target)
            return Explanation(square_values(board, distance), "minus the distance of the grid number to 5 + 4y",
                               f"The network's output is y = {output:.3f}, grid number 5 + 4y = {target:.2f}; it "
                               f"plays the empty square whose grid number is closest: square {move} (grid "
                               f"number {GRID_NUMBERS[move]}).", move)  # fmt: skip

        genes = "114-gene 9-8-1 NNDTF" if network.kind == "nndtf" else "89-gene 9-8-1 tanh network"
        players.append(ArenaPlayer(
            name, "Ling and Lam (2011)", f"{genes}, fitness {provenance.get('fitness', float('nan')):.4f}",
            network_policy(network, X), network_policy(network, O),
            f"{provenance.get('iterations', 0):,} GA iterations imitating the heuristic on 100 positions", explain,
        ))  # fmt: skip
    return tuple(players)


# --- The yardsticks ---------------------------------------------------------------------------------

OPPONENTS = ("perfect", "perfect, 10% random", "random")
"""The players every player is measured against, by name (yardstick 2)."""


def results_as(player: ArenaPlayer, opponent: ArenaPlayer, mark: int) -> np.ndarray:
    """Exact (win, draw, loss) probabilities of ``player`` playing ``mark`` against ``opponent``."""
    if check_mark(mark) == X:
        return outcome_probabilities(player.x_policy, opponent.o_policy)
    return outcome_probabilities(opponent.x_policy, player.o_policy)[::-1]


@dataclass(frozen=True)
class ArenaRow:
    """Every yardstick of one player (book/21_arena.ipynb)."""

    name: str
    system: str
    protocol_score: float
    results: dict[str, dict[str, tuple[float, float, float]]]
    can_lose: dict[str, bool]
    mistakes: dict[str, tuple[int, int]]

    def as_dict(self) -> dict:
        """Plain numbers and strings, for JSON."""
        return {
            "name": self.name, "system": self.system, "protocol_score": self.protocol_score,
            "results": {k: {s: list(v) for s, v in d.items()} for k, d in self.results.items()},
            "can_lose": self.can_lose,
            "mistakes": {s: {"positions": p, "mistakes": m} for s, (m, p) in self.mistakes.items()},
        }  # fmt: skip


def measure(player: ArenaPlayer, references: Sequence[ArenaPlayer] | None = None) -> ArenaRow:
    """All yardsticks of ``player``: protocol score, results against the reference opponents, the audit."""
    check_instance(player, ArenaPlayer, "player", "an ArenaPlayer")
    by_name = {p.name: p for p in (references or reference_players())}
    results = {
        name: {SYMBOLS[mark]: tuple(float(v) for v in results_as(player, by_name[name], mark)) for mark in (X, O)}
        for name in OPPONENTS
    }
    audits = {SYMBOLS[mark]: audit_policy(player.policy(mark), mark) for mark in (X, O)}
    return ArenaRow(
        player.name, player.system, protocol_score(player.x_policy, PAPER_RULES), results,
        {side: a.can_lose for side, a in audits.items()},
        {side: (a.mistakes, a.positions) for side, a in audits.items()},
    )  # fmt: skip


def round_robin(players: Sequence[ArenaPlayer]) -> np.ndarray:
    """Exact outcomes of every pairing, shape (n, n, 3): row player as X against column player as O.

    The last axis is (X wins, draw, O wins). The diagonal is each player against itself.
    """
    for player in players:
        check_instance(player, ArenaPlayer, "players", "a sequence of ArenaPlayer")
    xs = np.stack([p.x_policy for p in players])
    results = np.empty((len(players), len(players), 3))
    for j, opponent in enumerate(players):  # one column at a time keeps the memory small
        results[:, j] = outcome_probabilities(xs, opponent.o_policy)
    return results


def round_robin_points(outcomes: np.ndarray) -> np.ndarray:
    """Each player's expected points per game over the round robin, both sides: 1 a win, 1/2 a draw.

    Games against itself are left out.
    """
    n = outcomes.shape[0]
    as_x = outcomes[..., 0] + 0.5 * outcomes[..., 1]  # (i as X against j)
    as_o = outcomes[..., 2] + 0.5 * outcomes[..., 1]  # (j as O against i): transpose below
    off = ~np.eye(n, dtype=bool)
    return ((as_x * off).sum(axis=1) + (as_o * off).sum(axis=0)) / (2 * (n - 1))


@cache
def catalogue() -> tuple[ArenaPlayer, ...]:
    """Every player of the book: the reference players, then each system's saved players (book/21_arena.ipynb).

    Built once per process (tabulating the players takes a few seconds) and shared.
    """
    return (*reference_players(), fogel_champion(), al_khateeb_ttt(), *ling_lam_players(), mohammadi_champion())


def arena_report(players: Sequence[ArenaPlayer] | None = None) -> dict:
    """Every yardstick of every player, and the round robin, as plain numbers (for JSON and the command line)."""
    players = list(catalogue() if players is None else players)
    rows = [measure(player) for player in players]
    outcomes = round_robin(players)
    points = round_robin_points(outcomes)
    return {
        "players": [dict(row.as_dict(), description=p.description, training=p.training, round_robin_points=float(q))
                    for row, p, q in zip(rows, players, points, strict=True)],
        "round_robin": {"order": [p.name for p in players], "outcomes_x_row_o_column": outcomes.tolist()},
    }  # fmt: skip


def format_arena_table(report: dict) -> str:
    """The arena's table as text: one row per player, wins/draws/losses in percent (book/21_arena.ipynb)."""

    def wdl(triple):
        return "/".join(f"{100 * v:.0f}" for v in triple)

    header = (f"{'player':<24}{'system':<22}{'Fogel score':>12}  {'perfect X':>11} {'perfect O':>11}  "
              f"{'10% perf. X':>11} {'10% perf. O':>11}  {'random X':>10} {'random O':>10}  "
              f"{'loses X/O':>9}  {'mistakes X':>11} {'mistakes O':>11}  {'RR points':>9}")  # fmt: skip
    lines = [header, "-" * len(header)]
    for row in report["players"]:
        r, m = row["results"], row["mistakes"]
        loses = "/".join("yes" if row["can_lose"][s] else "no" for s in ("X", "O"))
        lines.append(
            f"{row['name']:<24}{row['system']:<22}{row['protocol_score']:>12.2f}  "
            f"{wdl(r['perfect']['X']):>11} {wdl(r['perfect']['O']):>11}  "
            f"{wdl(r['perfect, 10% random']['X']):>11} {wdl(r['perfect, 10% random']['O']):>11}  "
            f"{wdl(r['random']['X']):>10} {wdl(r['random']['O']):>10}  {loses:>9}  "
            f"{m['X']['mistakes']:>4}/{m['X']['positions']:<6} {m['O']['mistakes']:>4}/{m['O']['positions']:<6}  "
            f"{row['round_robin_points']:>9.3f}"
        )
    lines.append("results: win/draw/loss in percent, exact; Fogel score: expected 32-game protocol score as X "
                 "(max 32); mistakes: positions with a move worse than the best / positions reached; RR: round-robin "
                 "points per game (1 win, 1/2 draw)")  # fmt: skip
    return "\n".join(lines)
