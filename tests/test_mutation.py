"""Chapter 4: mutation of one network (readable) and of a padded population (batched)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from evolving_ttt.fogel.mutation import (
    N_WEIGHTS_PADDED,
    PAPER_MUTATION,
    MutationDraws,
    MutationSettings,
    draw_mutation,
    mutate,
    mutate_network,
    mutate_population,
    structure_decisions,
)
from evolving_ttt.fogel.network import (
    Network,
    hidden_slot_mask,
    network_outputs,
    population_outputs,
    random_network,
    random_population,
    stack_networks,
)
from evolving_ttt.game import board_tables

ARRAY_NAMES = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")


def draws_of(draws, i):
    return MutationDraws(draws.noise[i], draws.structure[i])


def assert_same_network(a, b):
    assert a.hidden_count == b.hidden_count
    for name in ARRAY_NAMES:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def assert_padding_is_zero(pop):
    unused = ~hidden_slot_mask(pop.hidden_count)
    assert np.all(pop.hidden_weights[unused] == 0)
    assert np.all(pop.hidden_bias[unused] == 0)
    assert np.all(np.moveaxis(pop.output_weights, -1, -2)[unused] == 0)


def random_network_with(rng, hidden):
    """A random network with exactly ``hidden`` hidden nodes."""
    return Network(rng.uniform(-0.5, 0.5, (hidden, 9)), rng.uniform(-0.5, 0.5, hidden),
                     rng.uniform(-0.5, 0.5, (9, hidden)), rng.uniform(-0.5, 0.5, 9))  # fmt: skip


def population_with_counts(rng, counts):
    return stack_networks([random_network_with(rng, int(h)) for h in counts])


def test_noise_parts_follow_the_documented_order():
    draws = MutationDraws(noise=np.arange(199.0), structure=np.zeros(3))
    hw, hb, ow, ob = draws.noise_parts()
    assert N_WEIGHTS_PADDED == 199
    assert np.array_equal(hw, np.arange(90.0).reshape(10, 9))
    assert np.array_equal(hb, np.arange(90.0, 100.0))
    assert np.array_equal(ow, np.arange(100.0, 190.0).reshape(9, 10))
    assert np.array_equal(ob, np.arange(190.0, 199.0))


def test_draw_mutation_shapes_and_reproducibility():
    a = draw_mutation(np.random.default_rng(1), (2, 3))
    b = draw_mutation(np.random.default_rng(1), (2, 3))
    assert a.noise.shape == (2, 3, 199) and a.structure.shape == (2, 3, 3)
    assert np.array_equal(a.noise, b.noise) and np.array_equal(a.structure, b.structure)
    assert np.all((a.structure >= 0) & (a.structure < 1))
    assert draw_mutation(np.random.default_rng(1), 4).noise.shape == (4, 199)


SETTINGS = [
    PAPER_MUTATION,
    MutationSettings(spread_is="variance"),
    MutationSettings(structure_change_probability=1.0),
    MutationSettings(weight_spread=0.3, structure_change_probability=0.0),
    MutationSettings(weight_spread=0.0, structure_change_probability=1.0),
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_mutate_population_is_mutate_network_bit_for_bit(settings):
    rng = np.random.default_rng(31)
    counts = np.tile(np.arange(1, 11), 30)  # every H, including both bounds, 30 times
    parents = population_with_counts(rng, counts)
    draws = draw_mutation(rng, len(counts))
    children = mutate_population(parents, draws, settings)
    assert_padding_is_zero(children)
    grew = shrank = 0
    for i in range(len(counts)):
        child = mutate_network(parents.network(i), draws_of(draws, i), settings)
        assert_same_network(children.network(i), child)
        grew += child.hidden_count > counts[i]
        shrank += child.hidden_count < counts[i]
    if settings.structure_change_probability == 1.0:
        # all but the dropped changes (a growth at H=10, a deletion at H=1) happen
        assert grew + shrank > 0.85 * len(counts)
    if settings.structure_change_probability == 0.0:
        assert grew == shrank == 0


def test_mutation_on_a_batched_population_shape():
    rng = np.random.default_rng(2)
    parents = random_population(rng, 12).reshape(3, 4)
    draws = draw_mutation(rng, (3, 4))
    children = mutate_population(parents, draws)
    assert children.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            d = MutationDraws(draws.noise[i, j], draws.structure[i, j])
            assert_same_network(children.network((i, j)), mutate_network(parents.network((i, j)), d))


@hypothesis_settings(max_examples=12)
@given(st.integers(0, 2**32 - 1))
def test_hidden_count_stays_within_bounds_over_a_long_lineage(seed):
    rng = np.random.default_rng(seed)
    pop = random_population(rng, 40)
    always = MutationSettings(structure_change_probability=1.0)
    seen = set()
    for _ in range(80):
        before = pop.hidden_count.copy()
        pop = mutate(pop, rng, always)
        assert np.all((pop.hidden_count >= 1) & (pop.hidden_count <= 10))
        assert np.all(np.abs(pop.hidden_count - before) <= 1)
        seen |= set(pop.hidden_count.tolist())
    assert_padding_is_zero(pop)
    assert {1, 10} <= seen  # the walk reaches both bounds (where the change is dropped)


def test_readable_lineage_stays_within_bounds():
    rng = np.random.default_rng(9)
    net = random_network(rng)
    counts = []
    for _ in range(400):
        net = mutate_network(net, draw_mutation(rng, ()), MutationSettings(structure_change_probability=1.0))
        counts.append(net.hidden_count)
    assert min(counts) >= 1 and max(counts) <= 10
    assert min(counts) == 1 or max(counts) == 10  # a 400-step walk on 1..10 meets a bound


def test_a_new_node_changes_no_output(legal_unfinished_indices):
    rng = np.random.default_rng(17)
    counts = np.tile(np.arange(1, 10), 2)
    parents = population_with_counts(rng, counts)
    draws = draw_mutation(rng, len(counts))
    draws.structure[:] = [0.0, 0.0, 0.5]  # change: yes; add: yes
    settings = MutationSettings(weight_spread=0.0)
    children = mutate_population(parents, draws, settings)
    assert np.array_equal(children.hidden_count, counts + 1)
    boards = board_tables().boards[legal_unfinished_indices]
    batch = np.broadcast_to(boards, (len(counts), *boards.shape))
    assert np.array_equal(population_outputs(children, batch), population_outputs(parents, batch))
    for i in range(0, len(counts), 4):
        child = mutate_network(parents.network(i), draws_of(draws, i), settings)
        assert child.hidden_count == counts[i] + 1
        assert np.all(child.hidden_weights[-1] == 0) and child.hidden_bias[-1] == 0
        assert np.all(child.output_weights[:, -1] == 0)
        for board in boards[::25]:
            assert np.allclose(network_outputs(child, board), network_outputs(parents.network(i), board),
                               rtol=1e-13, atol=0)  # fmt: skip


@pytest.mark.parametrize(("settings", "sigma"), [(PAPER_MUTATION, 0.05), (MutationSettings(spread_is="variance"),
                                                                           math.sqrt(0.05))])  # fmt: skip
def test_weight_noise_has_the_stated_spread(settings, sigma):
    assert settings.sigma == pytest.approx(sigma, rel=1e-15)
    rng = np.random.default_rng(23)
    parents = random_population(rng, 2000)
    draws = draw_mutation(rng, 2000)
    draws.structure[:, 0] = 0.99  # no structural change
    children = mutate_population(parents, draws, settings)
    assert np.array_equal(children.hidden_count, parents.hidden_count)
    used = hidden_slot_mask(parents.hidden_count)
    steps = np.concatenate([
        (children.hidden_weights - parents.hidden_weights)[used].ravel(),
        (children.hidden_bias - parents.hidden_bias)[used],
        np.moveaxis(children.output_weights - parents.output_weights, -1, -2)[used].ravel(),
        (children.output_bias - parents.output_bias).ravel(),
    ])  # fmt: skip
    assert len(steps) > 100_000
    assert np.std(steps) == pytest.approx(sigma, rel=0.02)
    assert abs(np.mean(steps)) < 4 * sigma / math.sqrt(len(steps))
    assert np.all(steps != 0)  # every used weight moves
    assert_padding_is_zero(children)


def test_parents_are_not_modified():
    rng = np.random.default_rng(5)
    parents = random_population(rng, 50)
    before = [a.copy() for a in parents.arrays()]
    draws = draw_mutation(rng, 50)
    draws.structure[:, 0] = 0.0  # every parent changes structure
    mutate_population(parents, draws)
    mutate(parents, rng)
    for a, b in zip(parents.arrays(), before, strict=True):
        assert np.array_equal(a, b)
    net = parents.network(0)
    copies = [getattr(net, name).copy() for name in ARRAY_NAMES]
    mutate_network(net, draws_of(draws, 0))
    for name, copy in zip(ARRAY_NAMES, copies, strict=True):
        assert np.array_equal(getattr(net, name), copy)


@pytest.mark.parametrize(("u", "doomed"), [(0.0, 0), (0.19, 0), (0.2, 1), (0.5, 2), (0.79, 3), (0.8, 4), (0.9999, 4)])
def test_deletion_removes_node_floor_u_h_and_keeps_order(u, doomed):
    h = 5
    # node j is recognisable: all its weights and its bias equal j + 1
    net = Network(np.repeat(np.arange(1.0, h + 1)[:, None], 9, axis=1), np.arange(1.0, h + 1),
                    np.repeat(np.arange(1.0, h + 1)[None, :], 9, axis=0), np.zeros(9))  # fmt: skip
    draws = MutationDraws(noise=np.zeros(199), structure=np.array([0.0, 0.9, u]))  # change, delete, which
    settings = MutationSettings(weight_spread=0.0)
    child = mutate_network(net, draws, settings)
    kept = [j + 1.0 for j in range(h) if j != doomed]
    assert child.hidden_count == 4
    assert child.hidden_bias.tolist() == kept
    assert child.hidden_weights[:, 0].tolist() == kept
    assert child.output_weights[0].tolist() == kept
    batched = mutate_population(stack_networks([net]), MutationDraws(draws.noise[None], draws.structure[None]),
                                  settings)  # fmt: skip
    assert_same_network(batched.network(0), child)
    assert_padding_is_zero(batched)


def test_structure_decisions_by_hand():
    counts = np.array([5, 5, 5, 10, 1, 10, 1])
    structure = np.array([
        [0.6, 0.1, 0.5],  # no change (0.6 >= 0.5)
        [0.4, 0.1, 0.5],  # grow
        [0.4, 0.7, 0.5],  # shrink, node floor(0.5 * 5) = 2
        [0.1, 0.2, 0.5],  # grow at 10: dropped
        [0.1, 0.8, 0.5],  # shrink at 1: dropped
        [0.1, 0.8, 0.95],  # shrink at 10, node 9
        [0.1, 0.2, 0.5],  # grow at 1
    ])  # fmt: skip
    grow, shrink, doomed = structure_decisions(counts, structure, 0.5)
    assert grow.tolist() == [False, True, False, False, False, False, True]
    assert shrink.tolist() == [False, False, True, False, False, True, False]
    assert doomed[[2, 5]].tolist() == [2, 9]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weight_spread": -0.01}, r"weight_spread must be a number from 0 to 1e\+06; got -0.01"),
        ({"weight_spread": float("nan")}, r"weight_spread must be a number from 0 to 1e\+06; got nan"),
        ({"weight_spread": float("inf")}, r"weight_spread must be a number from 0 to 1e\+06; got inf"),
        ({"weight_spread": 1e308}, r"weight_spread must be a number from 0 to 1e\+06; got 1e\+308"),
        ({"weight_spread": "0.05"}, r"weight_spread must be a number from 0 to 1e\+06; got '0.05'"),
        ({"weight_spread": True}, r"weight_spread must be a number from 0 to 1e\+06; got True"),
        ({"spread_is": "sd"}, r"spread_is must be 'std' or 'variance'; got 'sd'"),
        ({"structure_change_probability": 1.5}, r"structure_change_probability must be a probability in \[0, 1\]"),
        ({"structure_change_probability": -1}, r"structure_change_probability must be a probability"),
    ],
)
def test_mutation_settings_reject_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MutationSettings(**kwargs)
