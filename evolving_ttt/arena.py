"""The arena: the players of every system on the same exact yardsticks (book/24_arena.ipynb).

Each paper judged its player on its own terms. Here every player becomes an :class:`ArenaPlayer`, a
pair of policy tables (one for each side, :mod:`evolving_ttt.outcomes`), and all of them are measured
the same way, exactly, by walking the game tree with the players' move probabilities:

1. Fogel's yardstick: the expected 32-game protocol score against his rule base, as X;
2. win, draw and loss rates against the perfect player, the 10%-random perfect player and the random
   player, as X and as O;
3. the audit: can it lose, as X and as O, and in how many of the positions it can reach is one of its
   moves worse than the best move there;
4. a round robin among all players, both sides.

Evolved players come from the registry of systems (:mod:`evolving_ttt.systems`): each system loads its players
from their files in ``book/data/``, so the arena judges exactly what the system chapters saved. A reader's own
player joins through :func:`evolving_ttt.systems.register_player` (chapter 25). Beside them, searchers to measure
evolution against: OpenSpiel's Monte Carlo tree search at 10, 100 and 1,000 simulations per move
(:func:`mcts_players`, chapter 27), read from their committed file (:mod:`evolving_ttt.mcts_players`). The players
themselves are :class:`~evolving_ttt.players.ArenaPlayer` objects (:mod:`evolving_ttt.players`). The module sits
on top of the systems.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.fogel_score import best_response, protocol_score, rule_base_policy
from evolving_ttt.game import MARK_DIGIT, POWERS_OF_3, SYMBOLS, O, X, board_index, check_instance, check_mark
from evolving_ttt.mcts_players import PLAYERS_FILE, load_mcts_players
from evolving_ttt.outcomes import (
    audit_policy,
    best_response_policy,
    outcome_probabilities,
    perfect_policy,
    random_policy,
)
from evolving_ttt.perfect import minimax_values
from evolving_ttt.players import ArenaPlayer, Explanation, probability_explanation, square_values
from evolving_ttt.rule_base import PAPER_RULES
from evolving_ttt.systems import registered_players, registered_systems, registry_version

# --- The reference players --------------------------------------------------------------------------


def best_response_player() -> ArenaPlayer:
    """The best reply to Fogel's rule base on either side, payoff +1 / -10 / 0 (chapter 10's ceiling player).

    As X it is :func:`evolving_ttt.fogel_score.best_response` (its opening is chosen for the protocol's
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


@cache
def mcts_players() -> tuple[ArenaPlayer, ...]:
    """OpenSpiel's MCTSBot with random roll-outs at 10, 100 and 1,000 simulations per move ("MCTS 10", "MCTS 100",
    "MCTS 1000", system ``"mcts"``; chapter 27): each a distribution over squares estimated from 100 seeded
    searches per board, read from ``book/data/mcts_players.npz`` (:mod:`evolving_ttt.mcts_players`), not searched.
    """
    return load_mcts_players(PLAYERS_FILE).players()


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
    """Every yardstick of one player (book/24_arena.ipynb)."""

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


def head_to_head(outcomes: np.ndarray, names: Sequence[str], player: str, opponent: str) -> tuple[float, float, float]:
    """Expected points per game (1 a win, 1/2 a draw) of ``player`` against ``opponent`` in a round robin's
    ``outcomes`` (:func:`round_robin`) of the players named ``names``: as X, as O, and the mean of the two
    (chapters 24 and 25).

    Raises
    ------
    ValueError
        If a name is not one of ``names``.
    """
    names = list(names)
    if len(names) != outcomes.shape[0]:
        raise ValueError(f"names must name the {outcomes.shape[0]} players of the round robin; got {len(names)} names")
    for name in (player, opponent):
        if name not in names:
            raise ValueError(f"no player named {name!r} in the round robin; the players are {', '.join(names)}")
    i, j = names.index(player), names.index(opponent)
    as_x = float(outcomes[i, j, 0] + 0.5 * outcomes[i, j, 1])
    as_o = float(outcomes[j, i, 2] + 0.5 * outcomes[j, i, 1])
    return as_x, as_o, (as_x + as_o) / 2


def catalogue() -> tuple[ArenaPlayer, ...]:
    """Every player of the book: the reference players, each registered system's saved players, the MCTS players
    (:func:`mcts_players`), then the players registered with :func:`evolving_ttt.systems.register_player`
    (book/24_arena.ipynb, chapter 25).

    Built from the registry (:mod:`evolving_ttt.systems`) and kept until the registry changes: tabulating the
    players takes a few seconds.
    """
    version = registry_version()
    if _CATALOGUE.get("version") != version:
        systems = tuple(player for system in registered_systems() for player in _book_players(system))
        _CATALOGUE.update(version=version, players=(*reference_players(), *systems, *mcts_players(),
                                                   *registered_players()))  # fmt: skip
    return _CATALOGUE["players"]


_CATALOGUE: dict = {}
_SYSTEM_PLAYERS: dict = {}


def _book_players(system) -> tuple[ArenaPlayer, ...]:
    """A system's saved players, tabulated once per system object."""
    key = (system.name, id(system))
    if key not in _SYSTEM_PLAYERS:
        _SYSTEM_PLAYERS[key] = tuple(system.book_players())
    return _SYSTEM_PLAYERS[key]


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
    """The arena's table as text: one row per player, wins/draws/losses in percent (book/24_arena.ipynb)."""

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
