"""Tabular Q-learning with the arithmetic of OpenSpiel's ``QLearner``: the learner, and a system of the book.

* ``learner``: the Q-learner over the base-3 board index, bit for bit OpenSpiel's ``QLearner`` on the same random
  numbers (``tests/test_q_learning.py``), trained against Fogel's rule base or in self-play, and its greedy player
  as a policy table;
* ``engine``: the learner's two training loops compiled with numba, the same bits as ``learner``'s
  (``tests/test_q_learning_engine.py``), about fifty times as fast; the system trains with them;
* ``player``: a task's result, the Q-table and the learning curve of its greedy player on the book's exact
  yardsticks, and its JSON;
* ``system``: the learner as the book's fifth system (``python -m ttt_helpers q-learning``), built with the system
  kit (:class:`evolving_ttt.kit.SystemKit`): one task is one seed of training, its result the learned player and
  its learning curve on the book's exact yardsticks.

The public names of the four are re-exported here (``from evolving_ttt.q_learning import train_against_rule_base``).
"""

from evolving_ttt.q_learning.engine import fast_train_against_rule_base, fast_train_self_play
from evolving_ttt.q_learning.learner import (
    Q_SHAPE,
    QSettings,
    QTraining,
    epsilon_greedy_given,
    q_policy,
    rule_base_move_given,
    train_against_rule_base,
    train_self_play,
)
from evolving_ttt.q_learning.player import (
    CURVE_RESULTS,
    LearningCurve,
    QPlayer,
    checkpoint_games,
    greedy_protocol_losses,
    greedy_yardsticks,
    player_from_json,
    player_json,
)
from evolving_ttt.q_learning.system import (
    DEFAULT_SETTINGS,
    OPPONENTS,
    SYSTEM,
    QLearningSettings,
    QLearningSystem,
    learn,
    sweep_curves,
)

__all__ = [
    "CURVE_RESULTS",
    "DEFAULT_SETTINGS",
    "OPPONENTS",
    "Q_SHAPE",
    "LearningCurve",
    "QLearningSettings",
    "QLearningSystem",
    "QPlayer",
    "QSettings",
    "QTraining",
    "SYSTEM",
    "checkpoint_games",
    "epsilon_greedy_given",
    "fast_train_against_rule_base",
    "fast_train_self_play",
    "greedy_protocol_losses",
    "greedy_yardsticks",
    "learn",
    "player_from_json",
    "player_json",
    "q_policy",
    "rule_base_move_given",
    "sweep_curves",
    "train_against_rule_base",
    "train_self_play",
]
