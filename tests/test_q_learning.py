"""The tabular Q-learner of evolving_ttt.q_learning against OpenSpiel's QLearner, to the bit.

Both learners are fed the same uniform numbers: OpenSpiel's ``QLearner`` draws with ``np.random.choice`` (numpy's
global legacy state), which the tests replace by the ``choice`` of a ``RandomState`` built on one MT19937 bit
generator, while the book's learner (and the rule base on both sides) draws from a ``Generator`` on that same bit
generator. Legacy ``choice`` with probabilities draws one double, exactly as ``Generator.random`` does, so the two
sides consume one stream in the same order, and their Q-tables must agree in every bit.
"""

import ast

import numpy as np
import pyspiel
import pytest
from open_spiel.python import rl_environment, rl_tools
from open_spiel.python.algorithms.tabular_qlearner import QLearner

from evolving_ttt.fogel_score import rule_base_policy
from evolving_ttt.game import EMPTY, O, X, board_from_index, board_index, board_tables
from evolving_ttt.outcomes import boards_to_move, check_policy, outcome_probabilities
from evolving_ttt.q_learning import (
    QSettings,
    epsilon_greedy_given,
    q_policy,
    rule_base_move_given,
    train_against_rule_base,
    train_self_play,
)
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules, first_reply_square, near_perfect_move, rule_candidates
from evolving_ttt.rule_base import near_perfect_move_given as readable_rule_base_move

PLANE_MARK = np.array([EMPTY, O, X])
"""What each of the three planes of OpenSpiel's tic-tac-toe observation marks (tests/test_openspiel_game.py)."""

SPIEL_PLAYER = {X: 0, O: 1}

UNUSUAL = QSettings(step_size=0.35, epsilon=0.3, discount=0.9)
"""Settings away from OpenSpiel's defaults, so that a mix-up of step size, epsilon or discount shows."""


def shared_streams(seed: int) -> tuple[np.random.RandomState, np.random.Generator, np.random.Generator]:
    """A legacy RandomState and a Generator on one MT19937 (OpenSpiel's side), and the book's own Generator."""
    bits = np.random.MT19937(seed)
    return np.random.RandomState(bits), np.random.Generator(bits), np.random.Generator(np.random.MT19937(seed))


def spiel_learner(player: int, settings: QSettings) -> QLearner:
    return QLearner(
        player_id=player,
        num_actions=9,
        step_size=settings.step_size,
        epsilon_schedule=rl_tools.ConstantSchedule(settings.epsilon),
        discount_factor=settings.discount,
    )


def board_of_key(key: str) -> np.ndarray:
    """The board of one of OpenSpiel's state keys: the printed observation tensor (3 planes x 9 cells)."""
    planes = np.array(ast.literal_eval(key)).reshape(3, 9)
    assert np.array_equal(planes.sum(axis=0), np.ones(9))
    return PLANE_MARK[planes.argmax(axis=0)].astype(np.int8)


def spiel_table(learners: list[QLearner]) -> tuple[np.ndarray, np.ndarray]:
    """OpenSpiel's Q-values as a (19683, 9) table, and a mask of the entries its dictionaries hold."""
    table, held = np.zeros((19683, 9)), np.zeros((19683, 9), dtype=bool)
    for learner in learners:
        for key, values in learner._q_values.items():
            i = board_index(board_of_key(key))
            for action, value in values.items():
                assert not held[i, action]  # the two sides never share a board
                table[i, action], held[i, action] = value, True
    return table, held


def spiel_against_rule_base(
    episodes: int, seed: int, settings: QSettings, rules: OpponentRules, mark: int, monkeypatch
) -> tuple[QLearner, list[int]]:
    """OpenSpiel's QLearner playing ``mark`` in its rl_environment against the book's readable rule base."""
    legacy, generator, _ = shared_streams(seed)
    monkeypatch.setattr(np.random, "choice", legacy.choice)
    env = rl_environment.Environment("tic_tac_toe")
    learner = spiel_learner(SPIEL_PLAYER[mark], settings)
    results = []
    for episode in range(episodes):
        time_step, opponent_moves = env.reset(), 0
        while not time_step.last():
            if time_step.observations["current_player"] == SPIEL_PLAYER[mark]:
                action = learner.step(time_step).action
            else:
                board = np.array([{"x": X, "o": O, ".": EMPTY}[c] for c in str(env.get_state) if not c.isspace()])
                if mark == X and rules.first_reply == "cycle" and opponent_moves == 0:
                    action = first_reply_square(board, episode)
                else:
                    action = near_perfect_move(board, generator, rules, -mark)
                opponent_moves += 1
            time_step = env.step([action])
        learner.step(time_step)
        results.append(int(time_step.rewards[0]))
    return learner, results


def spiel_self_play(episodes: int, seed: int, settings: QSettings, monkeypatch) -> tuple[list[QLearner], list[int]]:
    """OpenSpiel's example: one QLearner per player, every agent stepped with the final time step."""
    legacy, _, _ = shared_streams(seed)
    monkeypatch.setattr(np.random, "choice", legacy.choice)
    env = rl_environment.Environment("tic_tac_toe")
    learners = [spiel_learner(player, settings) for player in (0, 1)]
    results = []
    for _ in range(episodes):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([learners[player].step(time_step).action])
        for learner in learners:
            learner.step(time_step)
        results.append(int(time_step.rewards[0]))
    return learners, results


def assert_same_bits(ours: np.ndarray, theirs: np.ndarray, held: np.ndarray) -> None:
    assert ours.dtype == theirs.dtype == np.float64
    assert np.array_equal(ours.view(np.int64)[held], theirs.view(np.int64)[held])
    assert np.array_equal(ours.view(np.int64)[~held], np.zeros(np.count_nonzero(~held), dtype=np.int64))


# --- The two decisions --------------------------------------------------------------------------------------------


def numpys_legacy_choice_given(probs: np.ndarray, u: float) -> int:
    """What ``RandomState.choice(9, p=probs)`` returns when its one uniform number is ``u`` (numpy's mtrand.pyx)."""
    cdf = probs.cumsum()
    cdf /= cdf[-1]
    return int(cdf.searchsorted(u, side="right"))


def boundaries(points: list[float]) -> list[float]:
    """Each point and the doubles on either side of it, kept in [0, 1): where a rounding slip changes a choice."""
    near = [float(v) for x in points for v in (np.nextafter(x, 0.0), x, np.nextafter(x, 1.0))]
    return [u for u in near if 0.0 <= u < 1.0]


@pytest.mark.slow
def test_the_epsilon_greedy_choice_is_numpys_legacy_choice_on_openspiels_probabilities():
    rng = np.random.default_rng(3)
    legacy, ours = np.random.RandomState(np.random.MT19937(11)), np.random.Generator(np.random.MT19937(11))
    learner = spiel_learner(0, QSettings())
    for case in range(2000):
        values = rng.choice([0.0, 0.25, -0.5, 1.0 / 3.0], size=9).tolist()  # few values: many ties
        moves = tuple(sorted(rng.choice(9, size=int(rng.integers(1, 10)), replace=False).tolist()))
        epsilon = [0.0, 0.2, 1.0, 0.37, 1e-3, 0.1][case % 6]
        learner._q_values["board"] = dict(enumerate(values))
        _, probs = learner._epsilon_greedy("board", list(moves), epsilon)
        # The same uniform number on both sides: numpy's choice from the stream, and ours with it.
        u = ours.random()
        expected = int(legacy.choice(range(9), p=probs))
        assert numpys_legacy_choice_given(probs, u) == expected
        assert epsilon_greedy_given(values, moves, epsilon, u) == expected
        # And at the edges of every square's share, where a different rounding would choose otherwise.
        cdf = probs.cumsum()
        for u in boundaries((cdf / cdf[-1]).tolist() + (cdf / cdf[-1] / 2).tolist() + [0.0]):
            assert epsilon_greedy_given(values, moves, epsilon, u) == numpys_legacy_choice_given(probs, u)


@pytest.mark.slow
def test_the_rule_base_move_is_the_readable_rule_bases():
    tables = board_tables()
    rng = np.random.default_rng(5)
    for rules in (PAPER_RULES, OpponentRules(random_move_probability=0.3, rule_d_lines="opponent")):
        p = rules.random_move_probability
        for mark in (O, X):
            for k, i in enumerate(boards_to_move(mark)[::2].tolist()):
                board = tables.boards[i]
                us = [float(rng.random())]
                if k % 12 == 0:  # the edges of each square's share: among the empty squares, and the rule squares
                    n, m = int(tables.n_empty[i]), len(rule_candidates(board, rules, mark))
                    us += boundaries([j / n * p for j in range(n + 1)] + [p + j / m * (1 - p) for j in range(m + 1)])
                for u in us:
                    assert rule_base_move_given(i, u, rules, mark) == readable_rule_base_move(board, u, rules, mark)
    with pytest.raises(ValueError, match="no move"):
        rule_base_move_given(int(board_index(np.array([X, X, X, O, O, 0, 0, 0, 0]))), 0.5, PAPER_RULES, O)


# --- Whole trainings against OpenSpiel's learner ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "rules", "mark", "episodes"),
    [
        (QSettings(), PAPER_RULES, X, 1500),
        (UNUSUAL, OpponentRules(random_move_probability=0.25, first_reply="rules"), X, 600),
        (UNUSUAL, PAPER_RULES, O, 600),
    ],
)
@pytest.mark.slow
def test_training_against_the_rule_base_gives_openspiels_q_table(settings, rules, mark, episodes, monkeypatch):
    learner, spiel_results = spiel_against_rule_base(episodes, 7, settings, rules, mark, monkeypatch)
    theirs, held = spiel_table([learner])
    ours = train_against_rule_base(episodes, shared_streams(7)[2], settings, rules, mark)
    assert ours.results.tolist() == spiel_results
    assert np.count_nonzero(theirs) > 300  # a real test: many values learned
    assert_same_bits(ours.q, theirs, held)


@pytest.mark.slow
@pytest.mark.parametrize(("settings", "episodes"), [(QSettings(), 1500), (UNUSUAL, 600)])
def test_self_play_gives_openspiels_two_q_tables_to_the_bit(settings, episodes, monkeypatch):
    learners, spiel_results = spiel_self_play(episodes, 8, settings, monkeypatch)
    theirs, held = spiel_table(learners)
    ours = train_self_play(episodes, shared_streams(8)[2], settings)
    assert ours.results.tolist() == spiel_results
    assert np.count_nonzero(theirs[boards_to_move(X)]) > 300 and np.count_nonzero(theirs[boards_to_move(O)]) > 300
    assert_same_bits(ours.q, theirs, held)


def test_the_policy_has_openspiels_probabilities(monkeypatch):
    learners, _ = spiel_self_play(400, 9, UNUSUAL, monkeypatch)
    q = train_self_play(400, shared_streams(9)[2], UNUSUAL).q
    tables = board_tables()
    for mark in (X, O):
        for epsilon in (0.0, UNUSUAL.epsilon):
            policy = q_policy(q, mark, epsilon)
            for i in boards_to_move(mark)[::4].tolist():
                key = str([float(v) for v in np.stack([tables.boards[i] == m for m in PLANE_MARK]).reshape(-1)])
                moves = tables.empty_list[i, : tables.n_empty[i]].tolist()
                _, probs = learners[SPIEL_PLAYER[mark]]._epsilon_greedy(key, moves, epsilon)
                assert np.array_equal(policy[i], probs)


# --- The book's own properties ------------------------------------------------------------------------------------


def test_the_greedy_policy_plays_only_empty_squares_and_only_best_values():
    training = train_against_rule_base(3000, np.random.default_rng(1))
    tables = board_tables()
    for mark, q in ((X, training.q), (O, train_self_play(3000, np.random.default_rng(2)).q)):
        policy = check_policy(q_policy(q, mark), mark, single=True)  # only empty squares; rows sum to 1
        assert not policy[tables.over].any()
        rows = boards_to_move(mark)
        values = np.where(tables.empty[rows], q[rows], -np.inf)
        best = values == values.max(axis=1, keepdims=True)
        assert np.array_equal(policy[rows] > 0, best)
        assert np.count_nonzero(q[rows]) > 1000


def test_the_learned_player_beats_the_untrained_one():
    """Learning does something: against the rule base, the greedy X of 3,000 episodes loses far less often than
    the uniformly random choice of an all-zero table (exact outcome probabilities, nothing sampled)."""
    rule_base = rule_base_policy(O, PAPER_RULES)
    untrained = outcome_probabilities(q_policy(np.zeros((19683, 9)), X), rule_base)
    learned = outcome_probabilities(q_policy(train_against_rule_base(3000, np.random.default_rng(1)).q, X), rule_base)
    assert learned[2] < untrained[2] / 2


def test_a_seed_gives_the_same_training_and_continuing_is_training_longer():
    for train in (train_self_play, train_against_rule_base):
        a, b = train(500, np.random.default_rng(4)), train(500, np.random.default_rng(4))
        assert np.array_equal(a.q.view(np.int64), b.q.view(np.int64)) and np.array_equal(a.results, b.results)
        other = train(500, np.random.default_rng(5))
        assert not np.array_equal(a.q, other.q)
        rng = np.random.default_rng(4)
        first = train(300, rng)
        extra = {"first_episode": 300} if train is train_against_rule_base else {}
        rest = train(200, rng, q=first.q, **extra)
        assert np.array_equal(rest.q.view(np.int64), a.q.view(np.int64))
        assert np.array_equal(np.concatenate([first.results, rest.results]), a.results)


def test_the_table_passed_in_is_not_modified_and_bad_arguments_are_refused():
    q = np.zeros((19683, 9))
    train_self_play(50, np.random.default_rng(0), q=q)
    assert not q.any()
    with pytest.raises(ValueError, match="epsilon"):
        QSettings(epsilon=1.5)
    with pytest.raises(ValueError, match="q must"):
        train_self_play(1, np.random.default_rng(0), q=np.zeros((9, 9)))
    with pytest.raises(ValueError, match="finite"):
        train_against_rule_base(1, np.random.default_rng(0), q=np.full((19683, 9), np.nan))
    with pytest.raises(ValueError, match="rng"):
        train_against_rule_base(1, 0)
    with pytest.raises(ValueError, match="mark"):
        q_policy(q, 0)
    assert board_from_index(0).tolist() == [0] * 9
    assert pyspiel.load_game("tic_tac_toe").num_distinct_actions() == 9
