"""Ling and Lam's compiled engine (evolving_ttt/ling_lam/loops.py) against the readable GAs, bit for bit.

Every reading of the settings the GAs support: the replacement of Figure 7, the hidden order, the hidden size,
the subset probability, w, p_a, the traditional forms and rates, populations odd and even, both networks under
both GAs, training sets cut into many chunks and into one.
"""

import numpy as np
import pytest

from evolving_ttt.ling_lam import engine, experiment, fused, ga, loops, network

FIELDS = ("best_fitness", "population_best", "population", "fitness", "champions", "champion_fitness", "evaluations")


def same_runs(first: ga.GARun, second: ga.GARun) -> bool:
    return all(np.array_equal(getattr(first, name), getattr(second, name)) for name in FIELDS)


def readable_runs(readable, evaluate, n, seeds, settings) -> ga.GARun:
    """The readable GA's runs, one per seed, stacked as the engines stack them."""
    runs = [readable(evaluate, n, np.random.default_rng(s), settings) for s in seeds]
    stacked = {name: np.concatenate([getattr(r, name) for r in runs]) for name in FIELDS[:-1]}
    return ga.GARun(**stacked, evaluations=runs[0].evaluations)


@pytest.fixture(params=[20, 3], ids=["chunks of 20", "chunks of 3"])
def chunk(request, monkeypatch):
    monkeypatch.setattr(loops, "CHUNK", request.param)
    monkeypatch.setattr(engine, "DRAW_BLOCK", 9)  # several blocks in a short run
    return request.param


IMPROVED = [
    ("nndtf", 8, "simultaneous", {}),
    ("nndtf", 8, "simultaneous", {"replacement": "figure"}),
    ("nndtf", 8, "sequential", {"replacement": "figure", "subset_probability": 0.2}),
    ("nndtf", 1, "simultaneous", {"w": 0.0, "acceptance": 1.0}),
    ("nndtf", 2, "simultaneous", {"w": 1.0, "acceptance": 0.0, "population": 2}),
    ("nndtf", 3, "sequential", {"subset_probability": 1.0, "population": 5}),
    ("baseline", 8, "simultaneous", {"subset_probability": 0.0}),
    ("baseline", 2, "simultaneous", {"replacement": "figure", "population": 3}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "hidden", "order", "changes"), IMPROVED)
def test_compiled_improved_ga_is_the_readable_one(kind, hidden, order, changes, chunk):
    evaluate = experiment.fitness_function(kind, network.training_positions(count=45), order)
    n = network.gene_count(kind, hidden)
    settings = ga.ImprovedGASettings(**{"iterations": 40, **changes})
    compiled = engine.improved_ga_lockstep(evaluate, n, [np.random.default_rng(s) for s in (1, 2)], settings,
                                           engine="compiled")  # fmt: skip
    assert same_runs(compiled, readable_runs(ga.improved_ga, evaluate, n, (1, 2), settings))


TRADITIONAL = [
    ("baseline", 8, {}),
    ("baseline", 8, {"form": "generational"}),
    ("baseline", 3, {"form": "generational", "population": 7, "crossover": 1.0, "mutation": 0.5}),
    ("baseline", 1, {"crossover": 0.0, "mutation": 1.0, "shape": 0.0, "population": 2}),
    ("nndtf", 8, {"shape": 2.5}),
    ("nndtf", 2, {"form": "generational", "population": 5, "mutation": 0.0}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "hidden", "changes"), TRADITIONAL)
def test_compiled_traditional_ga_is_the_readable_one(kind, hidden, changes, chunk):
    evaluate = experiment.fitness_function(kind, network.training_positions(count=45))
    n = network.gene_count(kind, hidden)
    settings = ga.TraditionalGASettings(**{"iterations": 30, **changes})
    compiled = engine.traditional_ga_lockstep(evaluate, n, [np.random.default_rng(s) for s in (3, 4)], settings,
                                              engine="compiled")  # fmt: skip
    assert same_runs(compiled, readable_runs(ga.traditional_ga, evaluate, n, (3, 4), settings))
    if settings.form == "generational":  # the generational entry point takes either engine too
        again = engine.generational_ga_lockstep(evaluate, n, [np.random.default_rng(s) for s in (3, 4)], settings)
        assert same_runs(again, compiled)


def test_the_paper_methods_train_the_same_runs_on_both_engines():
    settings = experiment.LingLamSettings(seeds=2, iterations=150)
    for method in ("nndtf", "baseline"):
        old = experiment.train(method, settings, seed=3, engine="lockstep")
        new = experiment.train(method, settings, seed=3, engine="compiled")
        assert np.array_equal(old.best_fitness, new.best_fitness) and np.array_equal(old.champions, new.champions)
        assert np.array_equal(old.population_best, new.population_best)


@pytest.mark.parametrize("hidden", [1, 2, 3, 8])
def test_the_update_of_one_gene_is_the_whole_network(hidden):
    rng = np.random.default_rng(hidden)
    inputs = network.training_positions(count=30).inputs
    columns = np.ascontiguousarray(inputs.T)
    n = network.gene_count("nndtf", hidden)
    base = rng.uniform(-1, 1, n)
    scratch = np.empty((fused.SCRATCH_LAYERS, hidden, len(inputs)))
    kept, updated, whole = np.empty(len(inputs)), np.empty(len(inputs)), np.empty(len(inputs))
    fused.nndtf_network(base, columns, hidden, False, scratch, kept)
    static, z = scratch[1].copy(), scratch[2].copy()
    for gene in range(n):
        changed = base.copy()
        changed[gene] = rng.uniform(-1, 1)
        scratch[1], scratch[2] = static, z
        fused.nndtf_update(changed, columns, hidden, gene, scratch, updated)
        fused.nndtf_network(changed, columns, hidden, False, np.empty_like(scratch), whole)
        assert np.array_equal(updated, whole), gene
        assert np.array_equal(whole, network.nndtf_outputs(changed, inputs))


def test_the_compiled_fitness_is_the_readable_fitness_and_the_bounds_hold():
    training = network.training_positions(count=67)
    rng = np.random.default_rng(5)
    for kind in ("nndtf", "baseline"):
        genes = rng.uniform(-1, 1, (6, network.gene_count(kind)))
        for chunk in (1, 7, 67, 100):
            layout = loops.scoring(training, chunk)
            assert layout.chunks.shape[1:] == (9, chunk) and layout.bounds[-1] == layout.floors[-1] == 0
            assert layout.bounds[0] == training.score_by_step.max(axis=1).sum()
            assert np.all(np.diff(layout.bounds) <= 0) and np.all(layout.floors <= layout.bounds)
            out = np.empty(len(genes))
            loops.population_fitness(genes, out, kind == "nndtf", 8, False, *layout)
            assert np.array_equal(out, experiment.fitness_function(kind, training)(genes))


def test_the_compiled_step_is_output_steps_on_every_boundary():
    eighths = np.arange(-72, 73) / 64  # every multiple of 1/64 from -9/8 to 9/8: each step's edges and beyond
    outputs = np.concatenate([eighths, np.nextafter(eighths, 2), np.nextafter(eighths, -2)])
    scores = np.arange(17, dtype=np.int64)[None, None, :].repeat(len(outputs), axis=1)
    for k, y in enumerate(outputs):
        assert loops._moves_score(scores[:, k : k + 1], 0, np.array([y])) == network.output_steps(y)


def test_mutation_exponents_are_the_readable_ones():
    exponents = loops.mutation_exponents(7, 5.0)
    assert not exponents.flags.writeable
    assert list(exponents) == [ga.scalar_power(1.0 - t / 7, 5.0) for t in range(1, 8)]


def test_the_engines_refuse_what_they_cannot_run(capsys):
    evaluate = experiment.fitness_function("nndtf", network.training_positions(count=10))
    rngs = [np.random.default_rng(0)]
    settings = ga.ImprovedGASettings(iterations=2)
    with pytest.raises(ValueError, match="engine must be one of"):
        engine.improved_ga_lockstep(evaluate, 114, rngs, settings, engine="fast")
    with pytest.raises(ValueError, match="needs evaluate to be a NetworkFitness"):
        engine.improved_ga_lockstep(lambda genes: genes.sum(axis=1), 114, rngs, settings, engine="compiled")
    with pytest.raises(ValueError, match="14 h \\+ 2"):
        engine.traditional_ga_lockstep(evaluate, 89, rngs, ga.TraditionalGASettings(iterations=2), engine="compiled")
    with pytest.raises(ValueError, match="kind must be one of"):
        network.NetworkFitness("cnn", network.training_positions(count=10))
    with pytest.raises(ValueError, match="order must be one of"):
        network.NetworkFitness("nndtf", network.training_positions(count=10), "backwards")
    with pytest.raises(ValueError, match="chunk must be a whole number"):
        loops.scoring(network.training_positions(count=10), 0)
    run = engine.improved_ga_lockstep(evaluate, 114, rngs, settings, progress="training")  # a bar on stderr
    assert "training" in capsys.readouterr().err and run.best_fitness.shape == (1, 3)
