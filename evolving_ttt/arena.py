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

from evolving_ttt.fogel.exact import best_response, protocol_score, rule_base_policy
from evolving_ttt.fogel.network import load_network, network_move
from evolving_ttt.fogel.opponent import PAPER_RULES
from evolving_ttt.game import (
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
from evolving_ttt.outcomes import (
    POLICY_SHAPE,
    audit_policy,
    best_response_policy,
    check_policy,
    outcome_probabilities,
    perfect_policy,
    policy_table,
    random_policy,
)

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
"""The folder of the saved players (every system chapter writes its players there)."""


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
    """

    name: str
    system: str
    description: str
    x_policy: np.ndarray = field(repr=False)
    o_policy: np.ndarray = field(repr=False)
    training: str = ""

    def __post_init__(self) -> None:
        check_policy(self.x_policy, X, f"{self.name}'s x_policy")
        check_policy(self.o_policy, O, f"{self.name}'s o_policy")
        for table in (self.x_policy, self.o_policy):
            if table.shape != POLICY_SHAPE:
                raise ValueError(f"{self.name}: each policy must be one table of shape (19683, 9)")

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
    name: str, system: str, description: str, move: Callable[[np.ndarray, int], int], training: str = ""
) -> ArenaPlayer:
    """An :class:`ArenaPlayer` from a deterministic move function ``move(board, mark) -> square``."""
    return ArenaPlayer(
        name, system, description, policy_table(lambda board: move(board, X), X),
        policy_table(lambda board: move(board, O), O), training,
    )  # fmt: skip


# --- The reference players --------------------------------------------------------------------------


def best_response_player() -> ArenaPlayer:
    """The best reply to Fogel's rule base on either side, payoff +1 / -10 / 0 (chapter 10's ceiling player).

    As X it is :func:`evolving_ttt.fogel.exact.best_response` (its opening is chosen for the protocol's
    cycled first replies); on boards that player never meets, and as O, it is the expectimax reply to
    the rule base's move probabilities.
    """
    payoff = (1.0, -10.0, 0.0)
    x_table, _ = best_response_policy(rule_base_policy(O), X, payoff)
    ceiling = best_response()
    rows = np.flatnonzero(ceiling.policy >= 0)
    x_table[rows] = 0.0
    x_table[rows, ceiling.policy[rows]] = 1.0
    o_table, _ = best_response_policy(rule_base_policy(X), O, payoff)
    return ArenaPlayer("best response", "reference", "expectimax against the rule base (chapter 10)",
                       x_table, o_table)  # fmt: skip


@cache
def reference_players() -> tuple[ArenaPlayer, ...]:
    """The yardstick players: random, Fogel's rule base, perfect, 10%-random perfect, best response."""
    return (
        ArenaPlayer("random", "reference", "a uniformly random empty square", random_policy(X), random_policy(O)),
        ArenaPlayer("rule base", "Fogel (1993)", "Fogel's near-perfect rules, 10% random moves, either side",
                    rule_base_policy(X), rule_base_policy(O)),
        ArenaPlayer("perfect", "reference", "minimax, at random among the best moves",
                    perfect_policy(X), perfect_policy(O)),
        ArenaPlayer("perfect, 10% random", "reference", "the perfect player with a 10% random move",
                    perfect_policy(X, 0.1), perfect_policy(O, 0.1)),
        best_response_player(),
    )  # fmt: skip


def fogel_champion(path: str | Path = DATA / "champion.json") -> ArenaPlayer:
    """Fogel's champion network from its file; as O it plays through the colour swap (chapter 14)."""
    network, provenance = load_network(path)
    training = "50 parents + 50 offspring x 32 games x 800 generations = 2,560,000 games per trial"
    return table_player("Fogel champion", "Fogel (1993)",
                        f"9-{network.hidden_count}-9 network, seed {provenance.get('seed')}",
                        lambda board, mark: network_move(network, board, mark), training)  # fmt: skip


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



def catalogue() -> list[ArenaPlayer]:
    """Every player of the book: the reference players, then each system's saved players (book/21_arena.ipynb)."""
    return [*reference_players(), fogel_champion()]
