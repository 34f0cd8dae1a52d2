"""Chapter 22's capacity fit: the NNDTF's smoothed transfer functions, the polish, the stall count, the file."""

import json

import numpy as np
import pytest

from evolving_ttt.ling_lam import capacity, network


def training():
    return network.training_positions(3, 20)


def forward_gradient(genes, positions, tau, width):
    """The fit's own gradient of the stand-in (forward differences in one batched call)."""
    return stand_in(genes, positions, tau, width)[1]


def stand_in(genes, positions, tau, width):
    """The stand-in's value and forward-difference gradient at ``genes``, as the fit computes them."""
    n = len(genes)
    shifts = np.vstack([np.zeros(n), capacity.FINITE_STEP * np.eye(n)])
    values = capacity.smooth_fitness(capacity.smooth_outputs("nndtf", genes + shifts, positions.inputs, width),
                                     positions, tau)  # fmt: skip
    return float(values[0]), (values[1:] - values[0]) / capacity.FINITE_STEP


def saturated_nndtf():
    """An NNDTF whose every transfer function is a step in all but name: spreads tiny beside their arguments."""
    layout = network.NNDTF_LAYOUT
    genes = np.random.default_rng(5).uniform(-1, 1, network.NNDTF_GENES)
    genes[layout["input_weights"]] = np.where(genes[layout["input_weights"]] < 0, -1.0, 1.0)
    genes[layout["static_spread"]] = 0.001
    genes[layout["static_mean"]] = 0.25  # the input sums are multiples of 0.5: never within 0.05 of 0.25
    genes[layout["spread_link"]] = 0.001
    genes[layout["output_spread"]] = 0.001
    return genes


def test_width_zero_is_the_network_bit_for_bit():
    positions = network.all_x_positions()
    genes = np.random.default_rng(1).uniform(-1, 1, (40, network.NNDTF_GENES))
    genes[3, network.NNDTF_LAYOUT["static_spread"]] = 0.0  # spreads of 0: the sign, as in the network
    genes[4, network.NNDTF_LAYOUT["output_spread"]] = 0.0
    smooth = capacity.smooth_nndtf_outputs(genes, positions.inputs, 0.0)
    assert smooth.tobytes() == network.nndtf_outputs(genes, positions.inputs).tobytes()
    f, m, s = np.tile(np.linspace(-3, 3, 61), (3, 1)), 0.4, np.array([0.0, 0.3, -0.7])[:, None]
    assert capacity.smooth_transfer(f, m, s, 0.0).tobytes() == network.transfer(f, m, s).tobytes()


def test_widening_keeps_the_shape_and_flattens_the_steps():
    f = np.linspace(-2, 2, 41)
    wide = capacity.smooth_transfer(f, 0.0, 0.01, 0.5)
    assert np.all(np.diff(wide) >= 0) and np.all(np.abs(wide) < 1)  # rising, never saturated to +-1
    assert np.allclose(wide, capacity.smooth_transfer(f, 0.0, 0.51, 0.0), atol=1e-15, rtol=1e-14)  # spread |s| + w
    with pytest.raises(ValueError, match="width"):
        capacity.smooth_transfer(f, 0.0, 0.1, -0.1)
    with pytest.raises(ValueError, match="width"):
        capacity.smooth_transfer(f, 0.0, 0.1, float("nan"))


def test_the_smoothed_nndtf_has_a_gradient_where_the_network_has_none():
    positions, genes = training(), saturated_nndtf()
    outputs = network.nndtf_outputs(genes, positions.inputs)
    assert np.all(np.abs(outputs) == 1.0)  # every output saturated: a step of the output is out of reach
    assert np.all(forward_gradient(genes, positions, 2.0, 0.0) == 0.0)  # the old stand-in: exactly flat
    # Widened by 1.25 no transfer function can saturate with genes in the box (arguments below 10 from the mean).
    assert np.all(forward_gradient(genes, positions, 2.0, 1.25) != 0.0)


def test_the_old_fits_stall_point_has_a_gradient_now():
    """Restart 3 of the NNDTF on the paper's positions: the old fit (no widening) ended its first stage after two
    iterations on a gradient exactly 0 and never moved again; the first stage's width gives every gene a slope."""
    positions = capacity.position_set("random games")
    start = np.random.default_rng([1, 0, 3]).uniform(-1, 1, network.NNDTF_GENES)
    old = capacity.minimize_in_box(lambda x: tuple(-v for v in stand_in(x, positions, 2.0, 0.0)), start)
    for tau in capacity.TAUS:
        assert np.all(forward_gradient(old.x, positions, tau, 0.0) == 0.0)
    assert np.all(forward_gradient(old.x, positions, capacity.TAUS[0], capacity.WIDTHS[0]) != 0.0)


def test_the_smoothed_fitness_tends_to_the_fitness_as_the_width_shrinks():
    positions = training()
    genes = np.random.default_rng(7).uniform(-1, 1, (8, network.NNDTF_GENES))
    exact_outputs = network.nndtf_outputs(genes, positions.inputs)
    exact = network.fitness(exact_outputs, positions)
    gaps, blurred = [], []
    for width in (0.5, 1e-2, 1e-4, 1e-6, 1e-8, 1e-10):
        outputs = capacity.smooth_nndtf_outputs(genes, positions.inputs, width)
        gaps.append(np.abs(outputs - exact_outputs).max())
        blurred.append(np.abs(capacity.smooth_fitness(outputs, positions, max(width, 1e-10)) - exact).max())
        if width <= 1e-6:
            assert np.array_equal(network.fitness(outputs, positions), exact)
    assert gaps[0] > 0.1 and all(a > b for a, b in zip(gaps, gaps[1:], strict=False)) and gaps[-1] < 1e-8
    assert blurred[0] > 0.1 and blurred[-1] < 1e-9  # both sharpened: the stand-in becomes (31)


@pytest.mark.slow
def test_stall_count_on_constructed_restarts():
    assert capacity.stalled([0.5, 0.5, 0.5, 0.5])
    assert not capacity.stalled([0.4, 0.5, 0.5, 0.5])  # a later stage changed the fitness
    assert not capacity.stalled([0.5, 0.5, 0.5, 0.49])  # a drop is a change too
    assert not capacity.stalled([0.5])  # a single stage has nothing to refine
    record = capacity.capacity_study([("nndtf", "quiet games", 2)], restarts=2, seed=3, taus=(0.5, 0.1),
                                     widths=(0.1, 0.05), max_iterations=3, polish_sweeps=1)  # fmt: skip
    rows = record["targets"][0]["restarts"]
    assert [row["stalled"] for row in rows] == [capacity.stalled(row["stage_fitness"]) for row in rows]
    assert record["targets"][0]["stalled"] == sum(row["stalled"] for row in rows)


def test_polish_only_climbs_and_reports_the_true_fitness():
    positions = training()
    genes = np.random.default_rng(4).uniform(-1, 1, network.BASELINE_GENES)
    before = network.fitness(network.baseline_outputs(genes, positions.inputs), positions)
    found = capacity.polish("baseline", positions, genes, sweeps=2)
    assert found.fitness > before and found.sweeps <= 2
    assert found.fitness == network.fitness(network.baseline_outputs(found.genes, positions.inputs), positions)
    assert np.all(np.abs(found.genes) <= 1) and found.evaluations == found.sweeps * network.BASELINE_GENES * (
        len(capacity.POLISH_GRID) + len(capacity.POLISH_NUDGES))  # fmt: skip
    none = capacity.polish("baseline", positions, genes, sweeps=0)
    assert none.fitness == before and none.genes.tobytes() == genes.tobytes() and none.evaluations == 0


def test_fit_network_reports_the_true_fitness_and_the_stages():
    positions = training()
    fit = capacity.fit_network("nndtf", positions, np.random.default_rng(0), taus=(1.0, 0.1), widths=(0.1, 0.02),
                               max_iterations=20, polish_sweeps=1)  # fmt: skip
    assert fit.best_fitness >= max(fit.stage_fitness) and len(fit.stage_fitness) == 2
    assert fit.best_fitness == network.fitness(network.nndtf_outputs(fit.best_genes, positions.inputs), positions)
    start = np.random.default_rng(0).uniform(-1, 1, network.NNDTF_GENES)
    assert fit.start_fitness == network.fitness(network.nndtf_outputs(start, positions.inputs), positions)
    assert fit.stalled == capacity.stalled(fit.stage_fitness)
    bare = capacity.fit_network("nndtf", positions, np.random.default_rng(0), taus=(1.0, 0.1), widths=(0.1, 0.02),
                                max_iterations=20, polish_sweeps=0)  # fmt: skip
    assert bare.best_fitness == max(bare.stage_fitness) and bare.stage_fitness == fit.stage_fitness
    with pytest.raises(ValueError, match="one value per stage"):
        capacity.fit_network("nndtf", positions, np.random.default_rng(0), taus=(1.0, 0.1))
    with pytest.raises(ValueError, match="widths"):
        capacity.fit_network("nndtf", positions, np.random.default_rng(0), taus=(1.0,), widths=(-1.0,))


@pytest.fixture(scope="module")
def small_study(tmp_path_factory):
    record = capacity.capacity_study([("nndtf", "quiet games", 2), ("baseline", "quiet games", 1)], restarts=2,
                                     seed=3, taus=(0.5, 0.1), widths=(0.1, 0.05), max_iterations=3,
                                     polish_sweeps=1)  # fmt: skip
    path = tmp_path_factory.mktemp("capacity") / "c.json"
    capacity.save_capacity(record, path)
    return record, path


@pytest.mark.slow
def test_the_file_keeps_the_new_fields(small_study):
    record, path = small_study
    loaded = capacity.load_capacity(path)
    assert loaded["widths"] == [0.1, 0.05] and loaded["polish_sweeps"] == 1 and loaded["version"] == 2
    for target in loaded["targets"]:
        assert target["stalled"] == sum(row["stalled"] for row in target["restarts"])
        assert all(row["polish_sweeps"] <= 1 and 0 <= row["start_fitness"] <= 1 for row in target["restarts"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("widths"), "widths"),
        (lambda r: r.update(widths=[0.1]), "widths"),
        (lambda r: r.update(widths=[0.1, -0.05]), "widths"),
        (lambda r: r.pop("polish_sweeps"), "polish_sweeps"),
        (lambda r: r["targets"][0].pop("stalled"), "stalled"),
        (lambda r: r["targets"][0].update(stalled=r["targets"][0]["stalled"] + 1), "stalled"),
        (lambda r: r["targets"][0]["restarts"][0].update(stalled="no"), "stalled"),
        (lambda r: r["targets"][0]["restarts"][0].update(stalled=not r["targets"][0]["restarts"][0]["stalled"]),
         "stalled"),
        (lambda r: r["targets"][0]["restarts"][0].pop("start_fitness"), "start_fitness"),
        (lambda r: r["targets"][0]["restarts"][0].update(start_fitness=1.5), "start_fitness"),
        (lambda r: r["targets"][0]["restarts"][0].update(stage_fitness=[0.5]), "stage_fitness"),
        (lambda r: r["targets"][0]["restarts"][0].update(polish_sweeps=2), "polish_sweeps"),
        (lambda r: r["targets"][0]["restarts"][0].update(best_fitness=0.0), "best_fitness"),
        (lambda r: r["targets"][0].update(best_fitness=0.0), "best_fitness"),
        (lambda r: r.update(version=1), "version"),
    ],
)  # fmt: skip
@pytest.mark.slow
def test_the_loader_refuses_missing_or_wrong_new_fields(small_study, tmp_path, change, message):
    record, _ = small_study
    broken = json.loads(json.dumps(record))
    change(broken)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match=message):
        capacity.load_capacity(path)
    with pytest.raises(ValueError):
        capacity.save_capacity(broken, tmp_path / "saved.json")
    assert not (tmp_path / "saved.json").exists()


@pytest.mark.slow
def test_an_interrupted_study_goes_on_from_its_progress(small_study):
    record, _ = small_study
    targets = [("nndtf", "quiet games", 2), ("baseline", "quiet games", 1)]
    kept = []
    partial = json.loads(json.dumps(record))
    partial["targets"] = partial["targets"][:1]
    partial["targets"][0]["restarts"][0]["seconds"] = 123.0  # taken from the progress, not fitted again
    again = capacity.capacity_study(targets, restarts=2, seed=3, taus=(0.5, 0.1), widths=(0.1, 0.05),
                                    max_iterations=3, polish_sweeps=1, done=partial,
                                    on_target=lambda r: kept.append(len(r["targets"])))  # fmt: skip
    assert again["targets"][0]["restarts"][0]["seconds"] == 123.0 and kept == [2]  # kept after the new target
    assert again["targets"][1]["best_genes"] == record["targets"][1]["best_genes"]
    with pytest.raises(ValueError, match="other settings"):
        capacity.capacity_study(targets, restarts=2, seed=4, taus=(0.5, 0.1), widths=(0.1, 0.05), max_iterations=3,
                                polish_sweeps=1, done=partial)  # fmt: skip
