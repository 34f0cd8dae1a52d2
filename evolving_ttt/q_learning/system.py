"""Tabular Q-learning as a system of the book (``python -m ttt_helpers q-learning``), built with the system kit.

The learner of :mod:`evolving_ttt.q_learning.learner` (OpenSpiel's ``QLearner``, bit for bit) becomes the book's
fifth system through :class:`evolving_ttt.kit.SystemKit`: the command line, sweeps, Dask, the arena and the play
widget take it as they take the four systems of the papers. This module holds:

* the settings (:class:`QLearningSettings`): the number of tasks, the opponent (Fogel's rule base or self-play),
  the games per task, the number of checkpoints, and OpenSpiel's step size, epsilon and discount;
* the training schedule (:func:`learn`): one task is one seed of training, drawing only from the task's generator.
  Against the rule base one Q-table learns both sides: the task's games alternate X, O, X, ..., X's drawing from
  the first child of the task's generator and O's from the second. The board says whose turn it is, so X's rows of
  the table and O's are different boards, and the two sides' training never meet: the table after ``g`` games is
  the same whichever order the two sides' games are played in, and wherever the checkpoints cut the training. In
  self-play the task's generator drives the one learner of both sides;
* the task's result, a :class:`~evolving_ttt.q_learning.player.QPlayer`: the Q-table and the learning curve of its
  greedy player at log-spaced checkpoints counted in games played (:func:`checkpoint_games`), on the book's exact
  yardsticks (:mod:`evolving_ttt.q_learning.player`, which also holds the player's JSON);
* the system (:class:`QLearningSystem`), whose names the module provides too (the registry loads a built-in system
  as a module, :data:`evolving_ttt.systems.BUILT_IN`), its two saved players of ``book/data`` (:data:`BOOK_PLAYERS`),
  and :func:`sweep_curves`, the learning curves of every task of a sweep's database.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.arguments import counted
from evolving_ttt.game import EMPTY, SYMBOLS, O, X, board_index, check_count, check_instance
from evolving_ttt.kit import (
    KIT_PLAYER_FORMAT,
    KIT_RECORD_FORMAT,
    KitRecord,
    KitSettings,
    SystemKit,
    setting_text,
    settings_keys,
    task_generator,
)
from evolving_ttt.players import ArenaPlayer, Explanation, square_values
from evolving_ttt.q_learning.engine import fast_train_against_rule_base, fast_train_self_play
from evolving_ttt.q_learning.learner import Q_SHAPE, QSettings, q_policy
from evolving_ttt.q_learning.player import (
    CURVE_RESULTS,
    LARGEST_CHECKPOINTS,
    LARGEST_EPISODES,
    LearningCurve,
    QPlayer,
    checkpoint_games,
    greedy_protocol_losses,
    greedy_yardsticks,
    json_text,
    player_from_json,
    player_json,
)
from evolving_ttt.records import DATA, check_provenance, write_checked
from evolving_ttt.rule_base import PAPER_RULES

OPPONENTS = ("rule-base", "self-play")
"""Whom the learner plays: Fogel's rule base (on both sides, in turn), or itself."""

TRAINING_CHUNK = 1_000_000
"""The most games one call of the learner plays: a longer stretch is played in pieces, which gives the same bits
as one call (``tests/test_q_learning_system.py``) and keeps the list of results a call makes small."""


# --- Settings ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QLearningSettings(KitSettings):
    """The settings of a Q-learning run.

    Attributes
    ----------
    tasks
        Tasks of the run: one task is one seed of training, from its own generator.
    opponent
        ``"rule-base"``: Fogel's rule base, the learner playing X and O in turn (the rule base's first reply as O
        cycles through the eight squares, as in the paper's protocol); ``"self-play"``: the learner on both sides.
    episodes
        Games each task plays, counted over both sides.
    checkpoints
        How many times a task measures its greedy player: at log-spaced game counts from 100 (or ``episodes``, if
        fewer) to ``episodes`` (:func:`checkpoint_games`). They do not change the training.
    step_size, epsilon, discount
        OpenSpiel's ``QLearner`` settings (:class:`~evolving_ttt.q_learning.learner.QSettings`), its defaults.
    """

    tasks: int = 20
    opponent: str = "rule-base"
    episodes: int = 1_000_000
    checkpoints: int = 13
    step_size: float = 0.1
    epsilon: float = 0.2
    discount: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_count(self.tasks, "tasks")
        if self.opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {', '.join(OPPONENTS)}; got {self.opponent!r:.40}")
        if not 1 <= self.episodes <= LARGEST_EPISODES:
            raise ValueError(f"episodes must be a whole number from 1 to {LARGEST_EPISODES:,}; got {self.episodes!r}")
        if not 1 <= self.checkpoints <= LARGEST_CHECKPOINTS:
            raise ValueError(f"checkpoints must be a whole number from 1 to {LARGEST_CHECKPOINTS}; got "
                             f"{self.checkpoints!r}")  # fmt: skip
        checkpoint_games(self.episodes, self.checkpoints)
        self.learner()

    def learner(self) -> QSettings:
        """The learner's own settings (``ValueError`` naming a step size, epsilon or discount out of range)."""
        return QSettings(step_size=self.step_size, epsilon=self.epsilon, discount=self.discount)


DEFAULT_SETTINGS = QLearningSettings()
"""20 tasks of 1,000,000 games against the rule base, measured at 13 checkpoints (100, 215, 464, 1,000, ... games:
three a decade), with OpenSpiel's step size, epsilon and discount: the system's ``PAPER_SETTINGS`` (there is no
paper; these are the book's defaults). After a million games the self-play players of tasks 0 to 3 of seed 1 never
lose to the perfect player on either side (after 464,158 games, three of the four); against the rule base, X stops
losing to it within some 50,000 games, while O still loses 7% to 33% of its games to it after a million, its losses
going up and down from checkpoint to checkpoint rather than falling."""


# --- Training ------------------------------------------------------------------------------------------------------


def _train(q: np.ndarray, games: int, first: int, rng: np.random.Generator, mark: int | None,
           learner: QSettings) -> np.ndarray:  # fmt: skip
    """``q`` after ``games`` more games (against the rule base as ``mark``, or self-play for ``None``), in pieces
    of at most :data:`TRAINING_CHUNK` games; ``first`` numbers the first game (the rule base's cycled reply). The
    compiled loops of :mod:`~evolving_ttt.q_learning.engine` play them, the same bits as the readable ones."""
    for start in range(0, games, TRAINING_CHUNK):
        n = min(TRAINING_CHUNK, games - start)
        if mark is None:
            q = fast_train_self_play(n, rng, learner, q).q
        else:
            q = fast_train_against_rule_base(n, rng, learner, PAPER_RULES, mark, q, first + start).q
    return q


def learn(settings: QLearningSettings, seed: int, task: int) -> QPlayer:
    """Task ``task`` of a run with ``seed``: train, measuring the greedy player at every checkpoint.

    All random numbers come from ``task_generator(seed, task)`` (:func:`evolving_ttt.kit.task_generator`). Against
    the rule base the games alternate X, O, X, ...: after ``g`` games X has played ``(g + 1) // 2`` (numbered from 0
    for the rule base's cycled first reply, as O) and O ``g // 2``. X's games draw from the task generator's first
    child (``spawn(2)``) and O's from its second; since X's rows and O's are different boards, each stretch between
    two checkpoints plays its X games, then its O games. In self-play the task's generator is the learner's. The
    table carried from one checkpoint to the next gives the same bits as training in one call.
    """
    check_instance(settings, QLearningSettings, "settings", "QLearningSettings")
    rng, learner = task_generator(seed, task), settings.learner()
    streams = dict(zip((X, O), rng.spawn(2), strict=True)) if settings.opponent == "rule-base" else {}
    schedule = checkpoint_games(settings.episodes, settings.checkpoints)
    q, played, scores, results, losses = np.zeros(Q_SHAPE), 0, [], [], []
    for games in schedule:
        if settings.opponent == "self-play":
            q = _train(q, games - played, played, rng, None, learner)
        else:
            for mark, before, after in ((X, (played + 1) // 2, (games + 1) // 2), (O, played // 2, games // 2)):
                q = _train(q, after - before, before, streams[mark], mark, learner)
        played = games
        score, found = greedy_yardsticks(q)
        scores.append(score)
        results.append(found)
        losses.append(greedy_protocol_losses(q))
    q.flags.writeable = False
    curve = LearningCurve(np.array(schedule, dtype=np.int64), np.array(scores), np.stack(results), np.array(losses))
    return QPlayer(q, curve)


def training_words(settings: QLearningSettings, seed: int) -> str:
    """A task's training in words (``"1,000,000 games of self-play, seed 1"``), as a saved player's provenance
    gives it to the arena."""
    against = "against Fogel's rule base, as X and as O in turn" if settings.opponent == "rule-base" else "of self-play"
    return f"{settings.episodes:,} games {against}, seed {seed}"


# --- The system ----------------------------------------------------------------------------------------------------


BOOK_PLAYERS = (
    ("Q-learning (rule base)", "q_learning_rule_base.json"),
    ("Q-learning (self-play)", "q_learning_self_play.json"),
)
"""The system's saved players in ``book/data``, by name in the arena: the greedy player of seed 1, task 0, at the
default settings with either opponent (made by the command in each file's ``command``)."""

_OWN_FIELDS = ("format", "version", "system", "player")


class QLearningSystem(SystemKit):
    """Tabular Q-learning (OpenSpiel's ``QLearner``) against Fogel's rule base or in self-play: a task is one seed
    of training, its result a :class:`QPlayer` (the Q-table and its learning curve); the record is the kit's
    (:class:`~evolving_ttt.kit.KitRecord`), its players those results."""

    name = "q-learning"
    title = "Q-learning (OpenSpiel)"
    description = "Tabular Q-learning, OpenSpiel's QLearner: against Fogel's rule base or in self-play"
    Settings = QLearningSettings
    PAPER_SETTINGS = DEFAULT_SETTINGS
    SMALL_SETTINGS = QLearningSettings(tasks=2, episodes=300, checkpoints=3)
    """Two tasks of 300 games, measured at 100, 173 and 300 games, for the conformance check."""

    # The work ---------------------------------------------------------------------------------------------------

    def run_task(self, settings: QLearningSettings, seed: int, task: int) -> QPlayer:
        """One seed of training (:func:`learn`)."""
        return learn(settings, seed, task)

    def task_measures(self, settings: QLearningSettings, result: QPlayer) -> dict[str, float]:
        """The final checkpoint's yardsticks: Fogel's protocol score, the points and the chance of a loss against
        the perfect player as X and as O, the chance of a loss against the random player, and the boards the
        Q-table values (``points_perfect_*`` are the sweep's own yardsticks, the same bits)."""
        curve = result.curve
        measures = {"protocol_score": float(curve.protocol_score[-1])}
        for name in ("perfect_x", "perfect_o"):
            measures[f"points_{name}"] = float(curve.points(name)[-1])
        for name in CURVE_RESULTS:
            measures[f"loss_{name}"] = float(curve.result(name)[-1, 2])
        measures["boards_valued"] = float(np.any(result.q != 0, axis=1).sum())
        return measures

    def games_played(self, settings: QLearningSettings, task: int = 0) -> int:
        """Games one task plays while it learns: ``episodes`` (both sides' games against the rule base counted)."""
        check_instance(settings, QLearningSettings, "settings", "QLearningSettings")
        check_count(task, "task", minimum=0)
        return settings.episodes

    def learning_curve(self, player: QPlayer) -> list[tuple[int, dict[str, float]]]:
        """The task's player at each checkpoint, as :mod:`evolving_ttt.curves` measures a point: ``(games,
        measures)`` with Fogel's score, the protocol's expected losses to the rule base, the chance of a loss to the
        perfect player as X and as O, and the points against the random player as X and as O."""
        check_instance(player, QPlayer, "player", "a QPlayer")
        curve = player.curve
        columns = {
            "fogel_score": curve.protocol_score, "losses_rule_base": curve.protocol_losses,
            "loss_perfect_x": curve.result("perfect_x")[:, 2], "loss_perfect_o": curve.result("perfect_o")[:, 2],
            "points_random_x": curve.points("random_x"), "points_random_o": curve.points("random_o"),
        }  # fmt: skip
        return [(int(g), {name: float(values[k]) for name, values in columns.items()})
                for k, g in enumerate(curve.games)]  # fmt: skip

    def record_curves(self, record: KitRecord) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each task's protocol score and chance of a loss against the perfect player as X and as O, by games
        played, for ``python -m ttt_helpers plot``."""
        curves = [player.curve for player in record.players]
        games = curves[0].games
        return {
            "Fogel's protocol score (expected, of 32)": (games, np.stack([c.protocol_score for c in curves])),
            "loss to the perfect player as X": (games, np.stack([c.result("perfect_x")[:, 2] for c in curves])),
            "loss to the perfect player as O": (games, np.stack([c.result("perfect_o")[:, 2] for c in curves])),
        }

    # The player -------------------------------------------------------------------------------------------------

    def policy_tables(self, player: QPlayer) -> tuple[np.ndarray, np.ndarray]:
        """The greedy player's policy tables as X and as O (ties shared equally)."""
        check_instance(player, QPlayer, "player", "a QPlayer")
        return q_policy(player.q, X), q_policy(player.q, O)

    def explain(self, player: QPlayer) -> Callable[[np.ndarray, int], Explanation]:
        """The learned value of each move on the board, for the side to move."""

        def explanation(board: np.ndarray, mark: int) -> Explanation:
            values = player.q[board_index(board)]
            empty = np.asarray(board) == EMPTY
            greedy = np.flatnonzero(empty & (values == values[empty].max()))
            if not np.any(values):
                text = ("Training never valued this board: every move is worth 0.0, so it plays any empty square "
                        "at random.")  # fmt: skip
            else:
                choice = f"square {greedy[0]}" if len(greedy) == 1 else f"one of {greedy.tolist()} at random"
                text = (f"The value training learned for each move of {SYMBOLS[mark]} (its estimate of the result: +1 "
                        f"a win, 0 a draw, -1 a loss); it plays the best, {choice}.")  # fmt: skip
            return Explanation(square_values(board, values), "Q-value", text, int(greedy[0]))

        return explanation

    def player_to_json(self, player: QPlayer) -> dict:
        """:func:`player_json`."""
        return player_json(player)

    def player_from_json(self, data: Any) -> QPlayer:
        """:func:`player_from_json`."""
        return player_from_json(data)

    def save_player(self, player: QPlayer, path: str | Path, **provenance: Any) -> None:
        """The kit's player file (:data:`~evolving_ttt.kit.KIT_PLAYER_FORMAT`), each row of the Q-table on one line."""
        check_provenance(provenance, _OWN_FIELDS, f"a {self.name} player")
        data = {"format": KIT_PLAYER_FORMAT, "version": 1, "system": self.name, "player": player_json(player),
                **provenance}  # fmt: skip
        write_checked(path, json_text(data, path), self.load_player, f"{self.name} player")

    def book_players(self) -> tuple[ArenaPlayer, ...]:
        """The saved players of :data:`BOOK_PLAYERS`."""
        return tuple(self.book_player(DATA / file, name) for name, file in BOOK_PLAYERS)

    def book_player(self, path: str | Path, name: str) -> ArenaPlayer:
        """A saved player as the arena and the play widget know it, named ``name``, its training from its file."""
        player, provenance = self.load_player(path)
        training = provenance.get("training", "")
        training = training if isinstance(training, str) else ""
        valued = int(np.any(player.q != 0, axis=1).sum())
        return ArenaPlayer(name, self.title, f"greedy on a Q-table of {valued:,} boards, ties at random",
                           *self.policy_tables(player), training, self.explain(player))  # fmt: skip

    # The record -------------------------------------------------------------------------------------------------

    def save_record(self, record: KitRecord, path: str | Path) -> None:
        """The kit's record (:data:`~evolving_ttt.kit.KIT_RECORD_FORMAT`), each row of a Q-table on one line."""
        data = {"format": KIT_RECORD_FORMAT, "version": 1, "system": self.name, "settings": record.settings.as_dict(),
                "seed": record.seed, "players": [player_json(p) for p in record.players]}  # fmt: skip
        write_checked(path, json_text(data, path), self.load_record, f"{self.name} record")

    def load_record(self, path: str | Path) -> KitRecord:
        """The kit's checks, and every player's checkpoints those of the record's settings."""
        record = super().load_record(path)
        schedule = checkpoint_games(record.settings.episodes, record.settings.checkpoints)
        for task, player in enumerate(record.players):
            if tuple(player.curve.games.tolist()) != schedule:
                raise ValueError(f"{path} ({self.name} record): field 'players[{task}].curve.games' must be the "
                                 f"settings' checkpoints {list(schedule)!r:.80}")  # fmt: skip
        return record

    # The command ------------------------------------------------------------------------------------------------

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """One option per setting, and ``--player``."""
        super().add_arguments(parser)
        parser.add_argument("--player", help="also save task 0's player (its Q-table and learning curve) to this "
                                             "JSON file, with the command that made it")  # fmt: skip

    def extra_outputs(self, args: argparse.Namespace) -> dict[str, tuple[Path, str | None]]:
        """The record (``--out``, ``.json``) and, with ``--player``, task 0's player (``.json``)."""
        outputs = {"--out": (Path(args.out), ".json")}
        if getattr(args, "player", None):
            outputs["--player"] = (Path(args.player), ".json")
        return outputs

    def write_outputs(self, record: KitRecord, args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, str]:
        """``--player``: task 0's player, with its seed, settings and the command that made it."""
        if "--player" not in paths:
            return {}
        player, settings = record.players[0], record.settings
        self.save_player(player, paths["--player"], description="task 0's greedy player and its learning curve",
                         training=training_words(settings, record.seed), seed=record.seed, task=0,
                         settings=settings.as_dict(),
                         command=self.command_line(settings, record.seed, args.out, args.player))  # fmt: skip
        return {"--player": f"task 0's player, protocol score {player.curve.protocol_score[-1]:.2f}"}

    def command_line(self, settings: QLearningSettings, seed: int, out: str, player: str | None = None) -> str:
        """The command that runs ``settings`` with ``seed`` (its settings other than the defaults)."""
        changed = [key for key in settings_keys(settings) if getattr(settings, key) != getattr(DEFAULT_SETTINGS, key)]
        options = [f"--{key.replace('_', '-')} {setting_text(getattr(settings, key))}" for key in changed]
        saved = [f"--player {player}"] if player else []
        return " ".join(["python -m ttt_helpers", self.command, *options, f"--seed {seed}", f"--out {out}", *saved])

    def estimated_memory(self, settings: QLearningSettings, workers: int) -> int:
        """250 MB per local process (the board and rule tables, a Q-table as Python floats and as an array, the
        exact measures), and 10 bytes per game of the longest piece of training (its list of results)."""
        longest = min(settings.episodes, TRAINING_CHUNK)
        return (250_000_000 + 10 * longest) * max(int(workers), 1)

    def describe(self, settings: QLearningSettings) -> str:
        """``"20 tasks x 1,000,000 games against the rule base, 13 checkpoints"``."""
        against = "against the rule base" if settings.opponent == "rule-base" else "of self-play"
        return (f"{counted(settings.tasks, 'task')} x {counted(settings.episodes, 'game')} {against}, "
                f"{counted(settings.checkpoints, 'checkpoint')}")  # fmt: skip

    def summary(self, record: KitRecord) -> str:
        """The tasks' final protocol scores, and how many never lose to the perfect player as X and as O."""
        curves = [player.curve for player in record.players]
        scores = np.array([c.protocol_score[-1] for c in curves])
        safe = [sum(int(c.result(name)[-1, 2] == 0) for c in curves) for name in ("perfect_x", "perfect_o")]
        n = len(curves)
        return (f"{counted(n, 'player')}, one per task, after {curves[0].games[-1]:,} games each: Fogel's protocol "
                f"score {scores.mean():.2f} on average (from {scores.min():.2f} to {scores.max():.2f}); never loses "
                f"to the perfect player as X in {safe[0]} of {n}, as O in {safe[1]} of {n}")  # fmt: skip


SYSTEM = QLearningSystem()
"""The system. The registry loads the book's systems as modules (:data:`evolving_ttt.systems.BUILT_IN`), so the
module provides the system's names too, each the instance's."""

name, command, title, description = SYSTEM.name, SYSTEM.command, SYSTEM.title, SYSTEM.description
Settings, PAPER_SETTINGS, SMALL_SETTINGS = SYSTEM.Settings, SYSTEM.PAPER_SETTINGS, SYSTEM.SMALL_SETTINGS
task_count, run_tasks, merge = SYSTEM.task_count, SYSTEM.run_tasks, SYSTEM.merge
save_record, load_record, record_players = SYSTEM.save_record, SYSTEM.load_record, SYSTEM.record_players
task_measures, record_curves = SYSTEM.task_measures, SYSTEM.record_curves
save_player, load_player, policy_tables = SYSTEM.save_player, SYSTEM.load_player, SYSTEM.policy_tables
explain, book_players = SYSTEM.explain, SYSTEM.book_players
add_arguments, settings_from_arguments = SYSTEM.add_arguments, SYSTEM.settings_from_arguments
extra_outputs, estimated_memory, write_outputs = SYSTEM.extra_outputs, SYSTEM.estimated_memory, SYSTEM.write_outputs
describe, summary = SYSTEM.describe, SYSTEM.summary
games_played, learning_curve = SYSTEM.games_played, SYSTEM.learning_curve


def sweep_curves(db: str | Path):
    """The learning curve of every task of a Q-learning sweep's database, read from its saved players.

    Returns
    -------
    pandas.DataFrame
        One row per task and checkpoint: ``cell``, ``seed``, ``task``, the cell's settings, ``games``,
        ``protocol_score``, and for each opponent of :data:`CURVE_RESULTS` its ``win_``, ``draw_``, ``loss_`` and
        ``points_`` (1 a win, 1/2 a draw) columns (``points_perfect_x``, ...).

    Raises
    ------
    ValueError
        If ``db`` is not a sweep of this system, or a saved player is not one (naming the task and the field).
    """
    import pandas as pd

    from evolving_ttt.store import SweepStore

    with SweepStore(db) as store:
        if store.definition["system"] != SYSTEM.name:
            raise ValueError(f"--db {db} is a sweep of {store.definition['system']}, not of {SYSTEM.name}")
        rows = store.rows()
    table = []
    for row in rows:
        key = {"cell": row["cell"], "seed": row["seed"], "task": row["task"]}
        try:
            curve = player_from_json(json.loads(row["player"]).get("player")).curve
        except (ValueError, AttributeError) as error:
            raise ValueError(f"--db {db}: task {tuple(key.values())}: {error}") from None
        settings = {field.name: row["settings"].get(field.name) for field in fields(QLearningSettings)}
        for k, games in enumerate(curve.games.tolist()):
            found = {"games": games, "protocol_score": float(curve.protocol_score[k])}
            for name in CURVE_RESULTS:
                win, draw, loss = (float(v) for v in curve.result(name)[k])
                found |= {f"win_{name}": win, f"draw_{name}": draw, f"loss_{name}": loss,
                          f"points_{name}": win + draw / 2}  # fmt: skip
            table.append({**key, **settings, **found})
    return pd.DataFrame(table)
