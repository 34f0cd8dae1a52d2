"""The table versions of Fogel's yardstick (evolving_ttt.fogel_score) against the readable ones they replace in use:
best_response against expectimax_walk, and rule_base_policy against rule_candidates on every board, to the bit."""

import numpy as np
import pytest

from evolving_ttt.fogel_score import PAPER_PAYOFF, best_response, expectimax_walk, rule_base_policy
from evolving_ttt.game import N_BOARDS, O, X, board_tables
from evolving_ttt.outcomes import boards_to_move
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules, candidate_masks, rule_candidates


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules", "payoff"),
    [(PAPER_RULES, PAPER_PAYOFF), (OpponentRules(0.0, "opponent", "rules"), (1.0, -1.0, 0.5)),
     (OpponentRules(0.37, "own", "cycle"), (3.0, 2.0, -7.25))],
)  # fmt: skip
def test_best_response_is_the_walk_to_the_bit(rules, payoff):
    walk, table = expectimax_walk(rules, payoff), best_response(rules, payoff)
    assert table.ceiling == walk.ceiling and table.opening == walk.opening
    assert np.array_equal(table.policy, walk.policy) and table.policy.dtype == walk.policy.dtype
    assert same_bits(table.values, walk.values)  # nan where the walk never went: the empty board, and more
    unvalued = np.isnan(walk.values)
    assert unvalued[0] and unvalued.sum() == (1 if rules.first_reply == "rules" else 10) + (N_BOARDS - 5478)
    assert not table.values.flags.writeable and not table.policy.flags.writeable
    assert best_response(rules, payoff) is table  # computed once


def test_the_walk_checks_its_arguments():
    with pytest.raises(ValueError, match="rules must be an OpponentRules"):
        expectimax_walk("paper")
    with pytest.raises(ValueError, match="payoff"):
        expectimax_walk(PAPER_RULES, (1.0, 1.0, 1.0))


def readable_policy(mark: int, rules: OpponentRules) -> np.ndarray:
    """The rule base as a policy table, board by board from rule_candidates."""
    tables, p = board_tables(), rules.random_move_probability
    table = np.zeros((N_BOARDS, 9))
    for i in boards_to_move(mark):
        candidates = rule_candidates(tables.boards[i], rules, mark)
        table[i] = p * tables.empty[i] / tables.n_empty[i]
        table[i, candidates] += (1 - p) / len(candidates)
    return table


@pytest.mark.slow
@pytest.mark.parametrize("mark", [X, O])
@pytest.mark.parametrize("rules", [PAPER_RULES, OpponentRules(0.3, "opponent")])
def test_rule_base_policy_is_the_rules_on_every_board(mark, rules):
    assert same_bits(rule_base_policy(mark, rules), readable_policy(mark, rules))
    masks = candidate_masks(rules.rule_d_lines, mark)
    assert set(np.flatnonzero(masks.any(axis=1))) == set(boards_to_move(mark).tolist())


def test_candidate_masks_check_their_arguments():
    with pytest.raises(ValueError, match="rule_d_lines must be 'own' or 'opponent'"):
        candidate_masks("mine", O)
    with pytest.raises(ValueError, match="mark"):
        candidate_masks("own", 0)
