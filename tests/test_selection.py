"""Chapter 5: scoring, comparisons, selection and one whole generation (readable and batched)."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_ttt.fogel.engine import protocol_openings
from evolving_ttt.fogel.evolution import PAPER_EXPERIMENT, FogelSettings
from evolving_ttt.fogel.mutation import PAPER_MUTATION, MutationDraws, MutationSettings
from evolving_ttt.fogel.network import random_population, stack_networks
from evolving_ttt.fogel.selection import (
    PAPER_SELECTION,
    GenerationDraws,
    SelectionSettings,
    draw_generation,
    game_payoffs,
    generation_step,
    generation_step_readable,
    pick_others,
    pick_others_batch,
    selection_points,
    survivors,
    take_networks,
)
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules

ARRAY_NAMES = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")


@st.composite
def comparison_cases(draw):
    n = draw(st.integers(2, 30))
    q = draw(st.integers(1, n - 1))
    seed = draw(st.integers(0, 2**32 - 1))
    return n, q, np.random.default_rng(seed).random((n, q))


@given(comparison_cases())
def test_pick_others_gives_distinct_others(case):
    n, q, u = case
    for i in range(n):
        others = pick_others(i, n, u[i])
        assert len(others) == q
        assert len(set(others)) == q
        assert i not in others
        assert all(0 <= j < n for j in others)


@given(comparison_cases(), st.integers(1, 3))
def test_pick_others_batch_matches_pick_others_row_by_row(case, copies):
    n, q, u = case
    u = np.concatenate([u * (1 - 0.1 * c) for c in range(copies)]).reshape(copies, n, q)  # a batch of populations
    batch = pick_others_batch(n, u)
    assert batch.shape == (copies, n, q)
    for c in range(copies):
        for i in range(n):
            assert batch[c, i].tolist() == pick_others(i, n, u[c, i])


def test_pick_others_uses_the_extreme_uniforms_correctly():
    # u = 0 keeps the list order; u just below 1 swaps with the last candidate
    assert pick_others(0, 5, np.zeros(4)) == [1, 2, 3, 4]
    assert pick_others(2, 5, np.zeros(2)) == [0, 1]
    assert pick_others(0, 5, np.full(1, np.nextafter(1.0, 0.0))) == [4]
    assert pick_others_batch(5, np.full((5, 1), np.nextafter(1.0, 0.0)))[:, 0].tolist() == [4, 4, 4, 4, 3]


def test_pick_others_is_uniform_over_ordered_pairs():
    n, q, draws = 5, 2, 24_000
    u = np.random.default_rng(41).random((draws, q))
    picks = pick_others_batch(n, u.reshape(draws // n, n, q)).reshape(draws, q)
    rows = np.tile(np.arange(n), draws // n)
    for i in range(n):
        mine = picks[rows == i]
        pairs = list(itertools.permutations([j for j in range(n) if j != i], 2))
        counts = [int(np.sum((mine[:, 0] == a) & (mine[:, 1] == b))) for a, b in pairs]
        assert sum(counts) == len(mine)
        expected = len(mine) / len(pairs)
        chi2 = sum((c - expected) ** 2 / expected for c in counts)
        assert chi2 < 31.26  # 99.9% quantile of chi-square with 11 degrees of freedom


def test_pick_others_rejects_too_many_comparisons():
    with pytest.raises(ValueError, match=r"comparisons must be at most population size - 1 = 3; got 4"):
        pick_others_batch(4, np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"comparisons must be at most population size - 1 = 3; got 4"):
        pick_others(0, 4, np.zeros(4))
    assert sorted(pick_others(0, 4, np.zeros(3))) == [1, 2, 3]


def test_selection_points_by_hand():
    scores = np.array([3.0, 1.0, 3.0, 0.0])
    opponents = np.array([[1, 2], [0, 3], [0, 1], [1, 2]])
    assert selection_points(scores, opponents, ties_win=True).tolist() == [2, 1, 2, 0]
    assert selection_points(scores, opponents, ties_win=False).tolist() == [1, 1, 1, 0]
    batched = selection_points(np.stack([scores, -scores]), np.stack([opponents, opponents]), ties_win=True)
    assert batched.tolist() == [[2, 1, 2, 0], [1, 1, 1, 2]]


def test_survivors_by_hand():
    points = np.array([2, 5, 2, 7, 5])
    keys = np.array([0.1, 0.3, 0.9, 0.2, 0.8])
    assert survivors(points, keys, 3).tolist() == [3, 4, 1]
    assert survivors(points, keys, 5).tolist() == [3, 4, 1, 2, 0]
    assert survivors(np.stack([points, points[::-1]]), np.stack([keys, keys]), 2).tolist() == [[3, 4], [1, 3]]


def test_game_payoffs():
    results = np.array([[1, -1, 0, 1], [0, 0, -1, 1]])
    assert game_payoffs(results).tolist() == [[1, -10, 0, 1], [0, 0, -10, 1]]
    assert game_payoffs(results, (2, -3, 0.5)).tolist() == [[2, -3, 0.5, 2], [0.5, 0.5, -3, 2]]
    assert game_payoffs(results, (1, -1, 0)).sum() == 1
    with pytest.raises(ValueError, match="payoff must be three finite numbers"):
        game_payoffs(results, (1, -1))


def test_take_networks_per_population():
    pop = random_population(np.random.default_rng(3), 8).reshape(2, 4)
    taken = take_networks(pop, np.array([[3, 0], [1, 1]]))
    assert taken.shape == (2, 2)
    for (i, j), source in {(0, 0): (0, 3), (0, 1): (0, 0), (1, 0): (1, 1), (1, 1): (1, 1)}.items():
        for a, b in zip(taken[i, j].arrays(), pop[source].arrays(), strict=True):
            assert np.array_equal(a, b)


def test_draw_generation_into_a_buffer_gives_the_same_numbers():
    fresh = draw_generation(np.random.default_rng(4), 6, 5)
    buffer = GenerationDraws(MutationDraws(np.empty((2, 6, 199)), np.empty((2, 6, 3))),
                               np.empty((2, 12, 32, 4)), np.empty((2, 12, 5)), np.empty((2, 12)))  # fmt: skip
    draw_generation(np.random.default_rng(4), 6, 5, out=buffer[1])
    assert fresh.games.shape == (12, 32, 4) and fresh.comparisons.shape == (12, 5) and fresh.ties.shape == (12,)
    for a, b in ((fresh.mutation.noise, buffer.mutation.noise[1]), (fresh.mutation.structure,
                 buffer.mutation.structure[1]), (fresh.games, buffer.games[1]),
                 (fresh.comparisons, buffer.comparisons[1]), (fresh.ties, buffer.ties[1])):  # fmt: skip
        assert np.array_equal(a, b)


# --- one generation: readable versus batched ---------------------------------------------------------------

CASES = [
    ("paper seed 0", 0, 6, PAPER_RULES, PAPER_MUTATION, PAPER_SELECTION),
    ("paper seed 1", 1, 6, PAPER_RULES, PAPER_MUTATION, PAPER_SELECTION),
    ("textbook readings", 2, 5, OpponentRules(rule_d_lines="opponent", first_reply="rules"),
     MutationSettings(spread_is="variance"), SelectionSettings(payoff=(1, -1, 0), comparisons=5, ties_win=False)),
    ("mixed", 3, 4, OpponentRules(rule_d_lines="opponent", random_move_probability=0.3),
     MutationSettings(structure_change_probability=1.0), SelectionSettings(payoff=(1, -1, 0), comparisons=3)),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "seed", "parents", "rules", "mutation", "selection"), CASES, ids=[c[0] for c in CASES]
)
def test_generation_step_matches_the_readable_step(name, seed, parents, rules, mutation, selection):
    rng = np.random.default_rng(seed)
    population = random_population(rng, parents)
    draws = draw_generation(rng, parents, selection.comparisons)
    step = generation_step(population, draws, rules, mutation, selection)
    networks = [population.network(i) for i in range(parents)]
    new_parents, scores, points, chosen = generation_step_readable(networks, draws, rules, mutation, selection)
    assert np.array_equal(step.scores, scores)
    assert np.array_equal(step.points, points)
    assert np.array_equal(step.chosen, chosen)
    kept = stack_networks(new_parents)
    for a, b in zip(step.parents.arrays(), kept.arrays(), strict=True):
        assert np.array_equal(a, b)
    # bookkeeping: the survivors are the chosen scored networks, ranked by points
    assert len(set(chosen.tolist())) == parents
    assert np.all(np.diff(points[chosen]) <= 0)
    assert points.max() <= selection.comparisons and points.min() >= 0
    for a, b in zip(step.parents.arrays(), step.scored[chosen].arrays(), strict=True):
        assert np.array_equal(a, b)
    for a, b in zip(step.scored[:parents].arrays(), population.arrays(), strict=True):
        assert np.array_equal(a, b)
    win, loss, _ = selection.payoff
    assert np.all((scores <= 32 * win) & (scores >= 32 * loss))


def test_generation_step_on_several_trials_at_once():
    rng = np.random.default_rng(12)
    parents = random_population(rng, 12).reshape(2, 6)
    draws = [draw_generation(rng, 6) for _ in range(2)]
    stacked = GenerationDraws(
        MutationDraws(np.stack([d.mutation.noise for d in draws]), np.stack([d.mutation.structure for d in draws])),
        np.stack([d.games for d in draws]), np.stack([d.comparisons for d in draws]), np.stack([d.ties for d in draws]),
    )  # fmt: skip
    together = generation_step(parents, stacked)
    for k in range(2):
        alone = generation_step(parents[k], draws[k])
        assert np.array_equal(together.scores[k], alone.scores)
        assert np.array_equal(together.chosen[k], alone.chosen)
        for a, b in zip(together.parents[k].arrays(), alone.parents.arrays(), strict=True):
            assert np.array_equal(a, b)


def test_carried_openings_give_the_same_generations_and_are_the_survivors_own():
    rng = np.random.default_rng(13)
    parents = random_population(rng, 16).reshape(2, 8)
    carried, openings = parents, None
    for _ in range(4):
        draws = draw_generation(rng, 8)
        draws = GenerationDraws(
            MutationDraws(np.stack([draws.mutation.noise] * 2), np.stack([draws.mutation.structure] * 2)),
            np.stack([draws.games] * 2), np.stack([draws.comparisons] * 2), np.stack([draws.ties] * 2),
        )  # fmt: skip
        fresh = generation_step(carried, draws)  # openings played again
        step = generation_step(carried, draws, openings=openings)
        assert np.array_equal(fresh.scores, step.scores) and np.array_equal(fresh.chosen, step.chosen)
        # the carried openings are exactly what the survivors would play
        own = protocol_openings(step.parents)
        assert step.openings.shape == (2, 8)
        assert np.array_equal(step.openings.boards, own.boards)
        assert np.array_equal(step.openings.negated_sums, own.negated_sums)
        carried, openings = step.parents, step.openings
    other_rules = OpponentRules(first_reply="rules")
    assert generation_step(carried, draws, other_rules).openings is None  # no openings without cycled replies
    with pytest.raises(ValueError, match="cycles its first reply"):
        generation_step(carried, draws, other_rules, openings=openings)


# --- settings validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"payoff": (1, -10)}, r"payoff must be three finite numbers \(win, loss, draw\); got \(1, -10\)"),
        ({"payoff": (1, -10, 0, 0)}, r"payoff must be three finite numbers"),
        ({"payoff": [[1, -10, 0]]}, r"payoff must be three finite numbers"),
        ({"payoff": (1, float("nan"), 0)}, r"payoff must be three finite numbers"),
        ({"payoff": (1, float("inf"), 0)}, r"payoff must be three finite numbers"),
        ({"payoff": "1,-10,0"}, r"payoff must be three finite numbers"),
        ({"payoff": None}, r"payoff must be three finite numbers"),
        ({"comparisons": 0}, r"comparisons must be a whole number >= 1; got 0"),
        ({"comparisons": 2.5}, r"comparisons must be a whole number >= 1"),
        ({"ties_win": "yes"}, r"ties_win must be True or False; got 'yes'"),
        ({"ties_win": 1}, r"ties_win must be True or False"),
    ],
)
def test_selection_settings_reject_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SelectionSettings(**kwargs)


@pytest.mark.parametrize("payoff", [("win", "loss", "draw"), (1, -10, [0])], ids=["words", "ragged"])
def test_a_payoff_of_non_numbers_is_rejected_naming_the_payoff(payoff):
    with pytest.raises(ValueError, match="payoff must be three finite numbers"):
        SelectionSettings(payoff=payoff)


def test_selection_settings_store_the_payoff_as_floats():
    settings = SelectionSettings(payoff=[2, -3, 1])
    assert settings.payoff == (2.0, -3.0, 1.0) and all(type(v) is float for v in settings.payoff)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"parents": 5}, r"comparisons \(10\) must be at most 2 \* parents - 1 = 9"),
        ({"parents": 3, "selection": SelectionSettings(comparisons=6)}, r"comparisons \(6\) .* = 5"),
        ({"parents": -5}, r"parents must be a whole number >= 1; got -5"),
        ({"parents": 0}, r"parents must be a whole number >= 1"),
        ({"parents": 50.0}, r"parents must be a whole number >= 1"),
        ({"generations": 0}, r"generations must be a whole number >= 1; got 0"),
        ({"trials": 0}, r"trials must be a whole number >= 1; got 0"),
        ({"trials": True}, r"trials must be a whole number >= 1"),
        ({"rules": "own"}, r"rules must be a OpponentRules"),
        ({"mutation": None}, r"mutation must be a MutationSettings"),
        ({"selection": (1, -10, 0)}, r"selection must be a SelectionSettings"),
    ],
)
def test_experiment_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FogelSettings(**kwargs)


def test_experiment_config_accepts_the_smallest_population_for_its_comparisons():
    assert FogelSettings(parents=6).parents == 6  # 2 * 6 - 1 = 11 >= 10
    assert FogelSettings(parents=1, selection=SelectionSettings(comparisons=1)).parents == 1


def test_experiment_config_dict_round_trip():
    import json

    settings = FogelSettings(
        parents=7, generations=3, trials=2,
        rules=OpponentRules(random_move_probability=0.2, rule_d_lines="opponent", first_reply="rules"),
        mutation=MutationSettings(weight_spread=0.1, spread_is="variance", structure_change_probability=0.3),
        selection=SelectionSettings(payoff=(2, -1, 0.5), comparisons=4, ties_win=False),
    )  # fmt: skip
    data = json.loads(json.dumps(settings.as_dict()))
    assert data["selection"]["payoff"] == [2.0, -1.0, 0.5]
    assert FogelSettings.from_dict(data) == settings
    assert FogelSettings.from_dict(PAPER_EXPERIMENT.as_dict()) == PAPER_EXPERIMENT


@pytest.mark.parametrize("results", [[1, 2, 0], [0.5, 1, -1], [-3]])
def test_game_payoffs_reject_values_that_are_not_game_results(results):
    with pytest.raises(ValueError, match="results must be"):
        game_payoffs(np.array(results))


def test_take_networks_rejects_an_index_for_other_populations():
    pop = random_population(np.random.default_rng(3), 8).reshape(2, 4)
    with pytest.raises(ValueError, match="index must have shape"):
        take_networks(pop, np.array([[0, 1], [2, 3], [1, 1]]))
