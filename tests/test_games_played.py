"""``games_played`` of every system: the games one task plays while it learns, checked by counting them.

Each system's ``games_played(settings, task)`` is a formula in its settings. Here a real task runs at two tiny
settings with the function that plays the games wrapped so that it counts them (boards of a batch, or games of a
readable loop), and the count must equal the formula; the two settings differ in every factor, so a formula wrong
in one factor fails. The paper's figures are then derived again from the settings, independently of the formulas.
Ling and Lam play no games: their ``games_played`` is the positions the GA looks at, counted the same way.
"""

import numpy as np
import pytest

from evolving_ttt.al_khateeb import engine as ak_engine
from evolving_ttt.al_khateeb import evaluator as ak_evaluator
from evolving_ttt.al_khateeb import robust as ak_robust
from evolving_ttt.al_khateeb import system as al_khateeb
from evolving_ttt.al_khateeb.evaluator import AlKhateebSettings
from evolving_ttt.fogel import selection as fogel_selection
from evolving_ttt.fogel import system as fogel
from evolving_ttt.fogel.evolution import FogelSettings
from evolving_ttt.fogel.selection import SelectionSettings
from evolving_ttt.ling_lam import experiment as ll_experiment
from evolving_ttt.ling_lam import system as ling_lam
from evolving_ttt.ling_lam.experiment import LingLamSettings
from evolving_ttt.ling_lam.ga import TraditionalGASettings
from evolving_ttt.ling_lam.network import fitness, ling_lam_outputs
from evolving_ttt.mohammadi import coevolution as mo_coevolution
from evolving_ttt.mohammadi import system as mohammadi
from evolving_ttt.mohammadi.coevolution import MohammadiSettings
from evolving_ttt.rule_base import GAMES_PER_EVALUATION, OpponentRules

SYSTEMS = (fogel, al_khateeb, ling_lam, mohammadi)


def counting(monkeypatch, module, name: str, count) -> list[int]:
    """Wrap ``module.name`` so that each call adds ``count(result, *args)`` to the returned list."""
    real, seen = getattr(module, name), []

    def wrapped(*args, **kwargs):
        result = real(*args, **kwargs)
        seen.append(int(count(result, *args)))
        return result

    monkeypatch.setattr(module, name, wrapped)
    return seen


# --- Fogel: 2P networks x 32 games against the rule base, every generation -------------------------------------

FOGEL_TINY = [
    (FogelSettings(parents=6, generations=2, trials=3), 2, 2 * 12 * 32),
    (FogelSettings(parents=3, generations=3, trials=1, rules=OpponentRules(first_reply="rules"),
                   selection=SelectionSettings(comparisons=2)), 0, 3 * 6 * 32),
]  # fmt: skip


@pytest.mark.parametrize(("settings", "task", "expected"), FOGEL_TINY)
def test_fogel_counts_the_games_a_trial_plays(monkeypatch, settings, task, expected):
    # Every game of a generation is one result of the batched protocol: count the results it returns.
    shapes = []
    games = counting(monkeypatch, fogel_selection, "play_protocol_batch",
                     lambda results, *args: shapes.append(results.shape) or results.size)  # fmt: skip
    (result,) = fogel.run_tasks(settings, 7, [task])
    assert result.trial_numbers == (task,)
    assert shapes == [(1, 2 * settings.parents, GAMES_PER_EVALUATION)] * settings.generations
    assert sum(games) == fogel.games_played(settings, task) == expected


# --- Al-Khateeb: a round robin every generation, and the hall of fame --------------------------------------------

AL_KHATEEB_TINY = [
    (AlKhateebSettings(population=4, parents=2, generations=3, runs=2), 1, 3 * 4 * 3),
    (AlKhateebSettings(population=6, parents=2, generations=3, runs=1, hall_of_fame=2), 0, 3 * 6 * 5 + 2 * 6 * 2 * 2),
]


@pytest.mark.slow
@pytest.mark.parametrize(("settings", "task", "expected"), AL_KHATEEB_TINY)
def test_al_khateeb_counts_the_games_a_run_plays(monkeypatch, settings, task, expected):
    # The readable run plays one game per call of coevolution_game (the round robin's and the hall of fame's).
    readable = counting(monkeypatch, ak_evaluator, "coevolution_game", lambda *_: 1)
    hall = counting(monkeypatch, ak_robust, "coevolution_game", lambda *_: 1)
    run = ak_robust.coevolve_general_readable(settings, 5, task)
    assert len(readable) + len(hall) == al_khateeb.games_played(settings, task) == expected
    n, h = settings.population, settings.hall_of_fame
    assert (len(readable), len(hall)) == (settings.generations * n * (n - 1), (settings.generations - 1) * 2 * n * h)
    # It is the task the system runs: the engine's run is the same bits.
    (task_run,) = al_khateeb.run_tasks(settings, 5, [task])
    np.testing.assert_array_equal(task_run.totals[0], run.totals)
    np.testing.assert_array_equal(task_run.weights[0], run.weights)


def test_al_khateeb_engine_keeps_the_games_of_surviving_parents(monkeypatch):
    # With a hall of fame the engine plays every game through _table_games: it plays the readable games but the
    # P (P - 1) games between two surviving parents of each generation after the first, whose results it keeps.
    settings, task, _ = AL_KHATEEB_TINY[1]
    games = counting(monkeypatch, ak_engine, "_table_games", lambda winners, *_: len(winners))
    al_khateeb.run_tasks(settings, 5, [task])
    p = settings.parents
    assert sum(games) == al_khateeb.games_played(settings, task) - (settings.generations - 1) * p * (p - 1)


# --- Mohammadi: chains of double games, every generation of every run of the series -----------------------------

MOHAMMADI_TINY = [
    (MohammadiSettings(population=8, generations=2, runs=2, group_size=3, initial_depth=6, depth_limit=8,
                       seeds_kept=2, best_candidates=3, random_candidates=2), 2 * 2 * 8 * 3 * 2),
    (MohammadiSettings(population=10, generations=3, runs=1, group_size=2, initial_depth=5, depth_limit=7,
                       seeds_kept=1, best_candidates=2, random_candidates=1, judge="random"), 1 * 3 * 10 * 2 * 2),
]  # fmt: skip


@pytest.mark.parametrize(("settings", "expected"), MOHAMMADI_TINY)
def test_mohammadi_counts_the_games_a_series_plays(monkeypatch, settings, expected):
    # play_games plays a batch of single games: the chains' (two per double game) and each run's final round robin.
    double = counting(monkeypatch, mo_coevolution, "play_double_games", lambda games, tables, playats, a, b, *_: len(a))
    single = counting(monkeypatch, mo_coevolution, "play_games", lambda games, *_: len(games.result))
    (record,) = mohammadi.run_tasks(settings, 3, [0])
    assert len(record.runs) == settings.runs
    assert len(double) == settings.runs * settings.generations * settings.group_size  # one batch per chain step
    assert 2 * sum(double) == mohammadi.games_played(settings) == expected
    n = settings.population
    round_robins = settings.runs * n * (n - 1)  # a statistic of each run's end, not counted
    assert sum(single) == mohammadi.games_played(settings) + round_robins


# --- Ling and Lam: no games; positions looked at by the GA ---------------------------------------------------------

LING_LAM_TINY = [
    (LingLamSettings(seeds=2, iterations=6, population=4, training_count=12),
     {0: (4 + 7 * 6) * 12, 3: (4 + 2 * 6) * 12}),
    (LingLamSettings(seeds=1, iterations=5, population=3, training_count=7,
                     methods=("baseline-improved-ga", "nndtf-traditional-ga"),
                     traditional=TraditionalGASettings(form="generational")),
     {0: (3 + 7 * 5) * 7, 1: (3 + 3 * 5) * 7}),
]  # fmt: skip


@pytest.mark.parametrize(("settings", "expected"), LING_LAM_TINY)
def test_ling_lam_counts_the_positions_a_run_looks_at(monkeypatch, settings, expected):
    # A fitness that counts every (network, position) output; not a NetworkFitness, so the readable lockstep
    # engine runs the task and calls it for every evaluation.
    looked = []

    def counting_fitness(kind, training, order="simultaneous"):
        def evaluate(genes):
            outputs = ling_lam_outputs(kind, genes, training.inputs, order)
            assert outputs.shape == (len(genes), settings.training_count)
            looked.append(outputs.size)
            return fitness(outputs, training)

        return evaluate

    truths = {task: ling_lam.run_tasks(settings, 4, [task])[0] for task in expected}  # the compiled engine
    monkeypatch.setattr(ll_experiment, "fitness_function", counting_fitness)
    for task, positions in expected.items():
        looked.clear()
        (result,) = ling_lam.run_tasks(settings, 4, [task])
        truth = truths[task]
        assert (result.method, result.run) == ling_lam.task_of(settings, task)
        np.testing.assert_array_equal(result.best_fitness, truth.best_fitness)  # the same run
        assert sum(looked) == ling_lam.positions_looked_at(settings, task) == positions
        assert ling_lam.games_played(settings, task) == positions
        assert result.evaluations * settings.training_count == positions == truth.evaluations * settings.training_count


# --- The paper's settings ------------------------------------------------------------------------------------------


def test_games_played_with_the_papers_settings():
    f = fogel.PAPER_SETTINGS
    assert fogel.games_played(f) == f.generations * (f.parents + f.parents) * 32 == 2_560_000
    a = al_khateeb.PAPER_SETTINGS
    assert a.hall_of_fame == 0
    assert al_khateeb.games_played(a) == a.generations * a.population * (a.population - 1) == 760_000
    m = mohammadi.PAPER_SETTINGS
    double_games = m.runs * m.generations * m.population * m.group_size
    assert mohammadi.games_played(m) == 2 * double_games == 61_440
    ll = ling_lam.PAPER_SETTINGS
    assert ll.methods == ("nndtf", "baseline")
    nndtf = (ll.population + (4 + 3) * ll.iterations) * ll.training_count  # 4 crossover candidates, 3 mutants
    baseline = (ll.population + 2 * ll.iterations) * ll.training_count  # 2 children
    for task in range(ling_lam.task_count(ll)):
        assert ling_lam.games_played(ll, task) == (nndtf if task % 2 == 0 else baseline)
    assert (nndtf, baseline) == (35_001_000, 10_001_000)
    assert ling_lam.fitness_evaluations(ll, 0) == 350_010


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: s.name)
def test_games_played_checks_its_arguments(system):
    settings = system.SMALL_SETTINGS
    assert isinstance(system.GAME_DEFINITION, str) and system.GAME_DEFINITION
    assert system.games_played(settings) == system.games_played(settings, 0) > 0
    for task in (-1, system.task_count(settings), True, 0.0):
        with pytest.raises(ValueError, match="task"):
            system.games_played(settings, task)
    with pytest.raises(ValueError, match="settings"):
        system.games_played(object())
