"""Chapter 22's additions to Ling and Lam: the generational GA, the hidden size, the position sets, the capacity fit."""

import json

import numpy as np
import pytest

from evolving_ttt.game import EMPTY, X, board_index, is_game_over
from evolving_ttt.ling_lam import capacity, engine, experiment, ga, network, system
from evolving_ttt.ling_lam.heuristic import score_table


def small_training():
    return network.training_positions(3, 20)


@pytest.mark.parametrize("engine_name", ["lockstep", "compiled"])
@pytest.mark.parametrize("kind", ["nndtf", "baseline"])
@pytest.mark.parametrize("population", [6, 7])
def test_generational_readable_and_lockstep_agree(kind, population, engine_name):
    training = small_training()
    evaluate = experiment.fitness_function(kind, training)
    n = network.gene_count(kind)
    settings = ga.TraditionalGASettings(population=population, iterations=25, form="generational")
    readable = [ga.traditional_ga(evaluate, n, np.random.default_rng(s), settings) for s in (5, 6)]
    lockstep = engine.traditional_ga_lockstep(evaluate, n, [np.random.default_rng(s) for s in (5, 6)], settings,
                                              engine=engine_name)  # fmt: skip
    for k, run in enumerate(readable):
        assert np.array_equal(run.champions[0], lockstep.champions[k])
        assert np.array_equal(run.best_fitness[0], lockstep.best_fitness[k])
        assert np.array_equal(run.population[0], lockstep.population[k])
    assert lockstep.evaluations == population + population * 25


def test_generational_keeps_its_best_and_differs_from_steady_state():
    training = small_training()
    evaluate = experiment.fitness_function("baseline", training)
    settings = ga.TraditionalGASettings(iterations=40, form="generational")
    run = ga.traditional_ga(evaluate, network.BASELINE_GENES, np.random.default_rng(1), settings)
    assert np.all(np.diff(run.best_fitness[0]) >= 0)
    assert run.champion_fitness[0] == evaluate(run.champions)[0] == run.fitness[0].max()
    steady = ga.traditional_ga(evaluate, network.BASELINE_GENES, np.random.default_rng(1),
                               ga.TraditionalGASettings(iterations=40))  # fmt: skip
    assert not np.array_equal(steady.champions, run.champions)
    assert steady.evaluations == 10 + 2 * 40 and run.evaluations == 10 + 10 * 40


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="form must be one of"):
        ga.TraditionalGASettings(form="elitist")
    for hidden in (0, 65, True, 2.5):
        with pytest.raises(ValueError, match="hidden"):
            experiment.LingLamSettings(hidden=hidden)
    with pytest.raises(ValueError, match="training_source"):
        experiment.LingLamSettings(training_source="all")
    with pytest.raises(ValueError, match="hidden"):
        network.nndtf_layout(0)
    with pytest.raises(ValueError, match="14 h \\+ 2"):
        network.hidden_of("nndtf", 115)
    with pytest.raises(ValueError, match="11 h \\+ 1"):
        network.hidden_of("baseline", 11)
    with pytest.raises(ValueError, match="kind"):
        network.gene_count("tanh", 8)


@pytest.mark.parametrize("hidden", [1, 3, 5, 8])
@pytest.mark.parametrize("order", network.HIDDEN_ORDERS)
def test_any_hidden_size_readable_and_vectorized_agree(hidden, order):
    rng = np.random.default_rng(hidden)
    n = network.gene_count("nndtf", hidden)
    assert n == 14 * hidden + 2 and network.hidden_of("nndtf", n) == hidden
    assert network.nndtf_layout(hidden)["output_spread"].stop == n
    assert network.baseline_layout(hidden)["output_bias"].stop == network.gene_count("baseline", hidden)
    genes, inputs = rng.uniform(-1, 1, (3, n)), small_training().inputs
    batch = network.nndtf_outputs(genes, inputs, order)
    for b in range(3):
        for p in range(0, len(inputs), 7):
            assert abs(network.nndtf_output(genes[b], inputs[p], order) - batch[b, p]) < 1e-12


def test_paper_size_layouts_are_unchanged():
    assert network.nndtf_layout() == network.NNDTF_LAYOUT and network.gene_count("nndtf") == 114
    assert network.baseline_layout() == network.BASELINE_LAYOUT and network.gene_count("baseline") == 89


@pytest.mark.parametrize("kind", ["nndtf", "baseline"])
def test_small_networks_train_save_and_load(kind, tmp_path):
    settings = experiment.LingLamSettings(seeds=2, iterations=30, hidden=3, methods=(kind,))
    run = experiment.train(kind, settings, seed=2)
    assert run.champions.shape == (2, network.gene_count(kind, 3))
    net = run.network()
    assert net.hidden == 3
    experiment.save_trained_network(net, tmp_path / "n.json", **run.provenance())
    loaded, provenance = experiment.load_trained_network(tmp_path / "n.json")
    assert np.array_equal(loaded.genes, net.genes) and provenance["experiment"]["hidden"] == 3
    assert np.array_equal(experiment.network_move_table(loaded), experiment.network_move_table(net))
    record = json.loads((tmp_path / "n.json").read_text())
    record["layout"] = experiment._layout_record(kind)  # the paper's layout with 3 hidden neurons' genes
    (tmp_path / "bad.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match="genes"):
        experiment.load_trained_network(tmp_path / "bad.json")
    experiment.save_training_runs({kind: run}, tmp_path / "runs.npz")
    assert np.array_equal(experiment.load_training_runs(tmp_path / "runs.npz")[kind].champions, run.champions)


def test_settings_written_before_chapter_22_load_with_the_defaults():
    record = experiment.PAPER_LING_LAM.as_dict()
    del record["hidden"], record["traditional"]["form"]
    assert experiment.LingLamSettings.from_dict(record) == experiment.PAPER_LING_LAM
    record["traditional"]["kind"] = "generational"
    with pytest.raises(ValueError, match="unknown settings"):
        experiment.LingLamSettings.from_dict(record)


@pytest.mark.slow
def test_new_position_sources():
    every = network.all_x_positions()
    whole = network.training_positions(1, len(every.boards), "uniform positions")
    assert sorted(board_index(whole.boards).tolist()) == sorted(board_index(every.boards).tolist())
    with pytest.raises(ValueError, match="at most"):
        network.training_positions(1, len(every.boards) + 1, "uniform positions")
    quiet = network.training_positions(4, 60, "quiet games")
    assert (score_table(X)[board_index(quiet.boards)].max(axis=1) < network.QUIET_SCORE).all()
    assert all(not is_game_over(b) and (b == EMPTY).sum() >= 2 for b in quiet.boards)
    games = network.training_positions(4, 60)
    assert (score_table(X)[board_index(games.boards)].max(axis=1) >= network.QUIET_SCORE).any()


@pytest.mark.slow
def test_task_measures_give_fitness_on_all_and_paper_positions():
    settings = experiment.LingLamSettings(seeds=1, iterations=20, training_count=30, methods=("baseline",))
    (result,) = system.run_tasks(settings, 3, [0])
    measures = system.task_measures(settings, result)
    every, paper = network.all_x_positions(), experiment.PAPER_LING_LAM.training()
    assert measures["fitness"] == result.champion_fitness
    assert measures["fitness_all"] == network.fitness(network.baseline_outputs(result.champion, every.inputs), every)
    paper_fitness = network.fitness(network.baseline_outputs(result.champion, paper.inputs), paper)
    assert measures["fitness_paper_positions"] == paper_fitness
    assert measures["evaluations"] == 10 + 2 * 20


def test_smooth_fitness_tends_to_the_fitness():
    training = small_training()
    rng = np.random.default_rng(2)
    y = rng.uniform(-1, 1, (6, len(training.boards)))
    y = np.where(np.abs(8 * y - np.round(8 * y)) < 0.01, y + 0.01, y)  # away from the steps' edges
    exact = network.fitness(y, training)
    assert np.allclose(capacity.smooth_fitness(y, training, 1e-4), exact, atol=1e-12)
    blurred = capacity.smooth_fitness(y, training, 3.0)
    assert np.all((blurred > 0) & (blurred < 1)) and not np.allclose(blurred, exact)
    with pytest.raises(ValueError, match="tau"):
        capacity.smooth_fitness(y, training, 0.0)


def test_minimize_in_box_finds_a_boxed_quadratic_minimum():
    # A quadratic whose unconstrained minimum (0.5, -3, 2, 0.25) lies outside the box in two components.
    centre = np.array([0.5, -3.0, 2.0, 0.25])
    scales = np.array([1.0, 4.0, 0.5, 10.0])
    calls = []

    def value_and_gradient(x):
        calls.append(x.copy())
        return float(np.sum(scales * (x - centre) ** 2)), 2 * scales * (x - centre)

    found = capacity.minimize_in_box(value_and_gradient, np.array([0.9, 0.9, -0.9, -0.9]))
    assert np.allclose(found.x, [0.5, -1.0, 1.0, 0.25], atol=1e-6)
    assert found.evaluations == len(calls) and 0 < found.iterations < 50
    assert all(np.all(np.abs(x) <= 1) for x in calls)  # never evaluated outside the box
    again = capacity.minimize_in_box(value_and_gradient, np.array([0.9, 0.9, -0.9, -0.9]))
    assert again.x.tobytes() == found.x.tobytes()
    capped = capacity.minimize_in_box(value_and_gradient, np.array([0.9, 0.9, -0.9, -0.9]), max_iterations=1)
    assert capped.iterations == 1 and capped.value > found.value
    with pytest.raises(ValueError, match="lower < upper"):
        capacity.minimize_in_box(value_and_gradient, np.zeros(4), 1.0, -1.0)
    with pytest.raises(ValueError, match="max_iterations"):
        capacity.minimize_in_box(value_and_gradient, np.zeros(4), max_iterations=0)


def test_dot_is_exactly_rounded():
    a = np.array([1e16, 1.0, -1e16, 1.0])
    assert capacity._dot(a, np.ones(4)) == 2.0  # a left-to-right float sum gives 1.0, a pairwise one 0.0


def test_fit_network_reports_the_true_fitness_of_its_genes(tmp_path):
    training = small_training()
    fit = capacity.fit_network("baseline", training, np.random.default_rng(0), taus=(1.0, 0.1), max_iterations=20)
    assert fit.best_fitness >= max(fit.stage_fitness)  # the polish keeps the best stage's genes or fitter ones
    assert fit.best_fitness == network.fitness(network.baseline_outputs(fit.best_genes, training.inputs), training)
    assert np.all(np.abs(fit.best_genes) <= 1) and fit.evaluations > 0
    with pytest.raises(ValueError, match="kind"):
        capacity.fit_network("tanh", training, np.random.default_rng(0))
    with pytest.raises(ValueError, match="taus"):
        capacity.fit_network("nndtf", training, np.random.default_rng(0), taus=())


@pytest.mark.slow
def test_capacity_file_round_trip_and_refusals(tmp_path):
    record = capacity.capacity_study([("baseline", "quiet games", 2)], restarts=2, seed=3, taus=(0.5,),
                                     widths=(0.1,), max_iterations=5, polish_sweeps=1)  # fmt: skip
    capacity.save_capacity(record, tmp_path / "c.json")
    loaded = capacity.load_capacity(tmp_path / "c.json")
    assert loaded["targets"][0]["best_fitness"] == max(r["best_fitness"] for r in record["targets"][0]["restarts"])
    again = capacity.capacity_study([("baseline", "quiet games", 2)], restarts=2, seed=3, taus=(0.5,),
                                    widths=(0.1,), max_iterations=5, polish_sweeps=1)  # fmt: skip
    assert again["targets"][0]["best_genes"] == record["targets"][0]["best_genes"]
    record["targets"][0]["best_fitness"] = 0.0
    with pytest.raises(ValueError, match="restarts' highest"):
        capacity.save_capacity(record, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()
    with pytest.raises(ValueError, match="source"):
        capacity.position_set("every position")


def synthetic_study(nndtf_elsewhere, baseline_elsewhere):
    import pandas as pd

    from evolving_ttt.ling_lam import robustness

    rng = np.random.default_rng(0)
    rows = []
    for study, setting, means in ((robustness.PAPER_STUDY, "the paper's", (0.78, 0.58)),
                                  ("other", "hidden=4", (nndtf_elsewhere, baseline_elsewhere))):  # fmt: skip
        for method, mean in zip(("nndtf", "baseline"), means, strict=True):
            for seed in range(1, 11):
                row = {m: 0.5 for m in robustness.MEASURES}
                row |= {"study": study, "setting": setting, "method": method, "seed": seed,
                        "fitness": mean + 0.001 * rng.standard_normal()}  # fmt: skip
                rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_claims_read_each_cell_once_and_label_what_it_changes():
    from evolving_ttt.ling_lam import robustness

    nndtf, baseline, lead = robustness.claims()
    cells = robustness.fitness_cells(robustness.trained_networks())
    paper = cells[(cells.study == robustness.PAPER_STUDY) & (cells.setting == "the paper's")].set_index("method")
    for found, method in ((nndtf, "nndtf"), (baseline, "baseline")):
        (here,) = [cell for cell in found.cells if cell.change == "paper"]
        assert np.mean(here.sample.values) == pytest.approx(paper.loc[method].fitness)
        assert len(found.cells) == (cells.method == method).sum()
    assert nndtf.threshold == 0.9605 and baseline.threshold == 0.9456 and lead.threshold == 0
    few = [cell for cell in nndtf.cells if cell.setting == "25 training positions instead of 100"]
    assert few[0].change == "stated setting" and few[0].confirmation.n == 20
    quiet = [cell for cell in nndtf.cells if cell.setting == "training positions from quiet games"]
    assert quiet[0].change == "open reading"
    assert all(cell.sample.kind == "difference" for cell in lead.cells)


def test_setting_labels_name_what_differs_from_the_paper():
    from evolving_ttt.ling_lam import robustness

    keys = ["seeds", "methods", "iterations", "traditional.form"]
    paper = {"seeds": 1, "methods": ("nndtf",), "iterations": 50_000, "traditional.form": "steady-state"}
    assert robustness.setting_label(paper, keys) == "the paper's"
    other = paper | {"iterations": 10_000, "traditional.form": "generational"}
    assert robustness.setting_label(other, keys) == "iterations=10,000, traditional.form=generational"
