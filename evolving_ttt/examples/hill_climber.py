"""A fifth system in the kit's terms: hill climbing nine square preferences (chapter 25)."""

from dataclasses import dataclass

import numpy as np

from evolving_ttt.game import O, X
from evolving_ttt.kit import KitSettings, SystemKit, task_generator
from evolving_ttt.outcomes import outcome_probabilities, random_policy


@dataclass(frozen=True)
class ClimbSettings(KitSettings):
    tasks: int = 4  # independent climbs, one per task
    steps: int = 40  # steps of each climb
    spread: float = 0.5  # the standard deviation of a step's change to each preference


class HillClimber(SystemKit):
    """A player is nine preferences: it plays the empty square it prefers most."""

    name, title = "hill-climber", "Hill climber (chapter 25)"
    Settings, PAPER_SETTINGS, SMALL_SETTINGS = ClimbSettings, ClimbSettings(), ClimbSettings(tasks=2, steps=3)

    def run_task(self, settings, seed, task):
        rng = task_generator(seed, task)
        best = rng.standard_normal(9)
        for _ in range(settings.steps):  # a step is kept when it scores more
            step = best + settings.spread * rng.standard_normal(9)
            best = step if self.points(step) > self.points(best) else best
        return best

    def points(self, player):
        """Expected points against the random player, as X plus as O (a win 1, a draw 1/2)."""
        x_table, o_table = self.policy_tables(player)
        as_x, as_o = outcome_probabilities(x_table, random_policy(O)), outcome_probabilities(random_policy(X), o_table)
        return as_x[0] + as_x[1] / 2 + as_o[2] + as_o[1] / 2

    def square_scores(self, player, boards):
        return np.broadcast_to(player, boards.shape)
