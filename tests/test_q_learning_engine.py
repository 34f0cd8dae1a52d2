"""The compiled Q-learning loops (evolving_ttt.q_learning.engine) against the readable ones the chapter shows: the
same Q-table and results to the bit, and the generator left in the same state."""

import numpy as np
import pytest

from evolving_ttt.game import O, X
from evolving_ttt.q_learning.engine import fast_train_against_rule_base, fast_train_self_play
from evolving_ttt.q_learning.learner import QSettings, train_against_rule_base, train_self_play
from evolving_ttt.rule_base import OpponentRules

SETTINGS = [QSettings(), QSettings(step_size=0.35, epsilon=0.3, discount=0.9), QSettings(epsilon=0.0),
            QSettings(epsilon=1.0)]  # fmt: skip
RULES = [
    OpponentRules(),
    OpponentRules(0.0, "opponent", "rules"),
    OpponentRules(1.0),
    OpponentRules(0.37, "own", "rules"),
]


def same(readable, compiled, rng_a, rng_b):
    assert readable.q.dtype == compiled.q.dtype == np.float64
    assert np.array_equal(readable.q.view(np.uint64), compiled.q.view(np.uint64))
    assert readable.results.dtype == compiled.results.dtype == np.int8
    assert np.array_equal(readable.results, compiled.results)
    assert np.array_equal(rng_a.bit_generator.random_raw(3), rng_b.bit_generator.random_raw(3))  # same state after


@pytest.mark.slow
@pytest.mark.parametrize("mark", [X, O])
@pytest.mark.parametrize("case", range(4))
def test_against_rule_base_same_bits(mark, case):
    settings, rules = SETTINGS[case], RULES[case]
    a, b = np.random.default_rng(100 + case), np.random.default_rng(100 + case)
    readable = train_against_rule_base(1500, a, settings, rules, mark, first_episode=case * 3)
    compiled = fast_train_against_rule_base(1500, b, settings, rules, mark, first_episode=case * 3)
    same(readable, compiled, a, b)
    assert set(np.unique(readable.results)) <= {-1, 0, 1} and len(np.unique(readable.results)) >= 2


@pytest.mark.parametrize("case", range(4))
def test_self_play_same_bits(case):
    a, b = np.random.default_rng(200 + case), np.random.default_rng(200 + case)
    same(train_self_play(1500, a, SETTINGS[case]), fast_train_self_play(1500, b, SETTINGS[case]), a, b)


def test_continued_tables_and_other_bit_generators():
    a, b = np.random.Generator(np.random.MT19937(5)), np.random.Generator(np.random.MT19937(5))
    readable, compiled = train_self_play(700, a), fast_train_self_play(700, b)
    same(readable, compiled, a, b)
    q = compiled.q.copy()
    continued = fast_train_against_rule_base(400, b, q=q, first_episode=700, mark=O)
    assert np.array_equal(q, compiled.q)  # the table passed in is not modified
    same(train_against_rule_base(400, a, q=readable.q, first_episode=700, mark=O), continued, a, b)
    assert not np.array_equal(continued.q, compiled.q)


def test_no_games_and_bad_input():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    empty = fast_train_self_play(0, rng)
    assert empty.results.shape == (0,) and not empty.q.any() and rng.bit_generator.state == state
    with pytest.raises(ValueError, match="q must be a float64 array of shape"):
        fast_train_self_play(1, rng, q=np.zeros((9, 9)))
    with pytest.raises(ValueError, match="finite"):
        fast_train_against_rule_base(1, rng, q=np.full((19683, 9), np.nan))
    with pytest.raises(ValueError, match="rng"):
        fast_train_against_rule_base(1, 0)
    with pytest.raises(ValueError, match="episodes"):
        fast_train_self_play(-1, rng)
    with pytest.raises(ValueError, match="mark"):
        fast_train_against_rule_base(1, rng, mark=2)
