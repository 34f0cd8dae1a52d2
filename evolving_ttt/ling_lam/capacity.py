"""Can the network hold the paper's fitness at all? A continuous optimizer against the GA (chapter 22).

The fitness (31) of a network is a step function of its genes: the output ``y`` picks a square through
``ceil(8 y)``, so the fitness is flat almost everywhere and no gradient helps. To ask what the networks *can*
represent, apart from what the paper's GAs find, this module fits them with a continuous optimizer to a smooth
stand-in of (31), polishes the result on (31) itself, and reports the true (31) of what it found: a lower bound
of what the network can hold, never a ceiling.

* :func:`smooth_fitness` is the stand-in: each output's step is blurred by a logistic of width ``tau`` (in
  units of ``8 y``), so that the fitness is the expected score of a slightly noisy move; as ``tau`` goes to 0 it
  becomes (31) itself.
* :func:`smooth_outputs` are the outputs it blurs: the baseline's own, and the NNDTF's with each of its transfer
  functions widened by a width ``w`` (:func:`smooth_transfer`, :func:`smooth_nndtf_outputs`). With small
  spreads the NNDTF's transfer functions are steps inside the network, flat (exactly, in double precision) or
  steep, and blurring the output alone left the fit on a gradient of exactly 0 or a useless one.
* :func:`minimize_in_box` is the optimizer: a projected L-BFGS with a backtracking line search, every gene boxed.
  Its vector steps are elementwise and its dot products exactly rounded (``math.fsum``), so with the portable
  networks and functions (chapter 9) a fit gives the same bits on every processor, unlike scipy's L-BFGS-B, whose
  vector steps run through BLAS.
* :func:`fit_network` runs it on the stand-in, genes boxed in [-1, 1], with ``tau`` and ``w`` lowered in stages
  (continuation; the gradient is a forward difference computed for all genes in one batched network call), then
  :func:`polish` scans one gene at a time on (31) itself. :func:`stalled` says whether a restart's later stages
  changed nothing.
* :func:`capacity_study` does many seeded restarts for several networks and position sets; :func:`save_capacity`
  and :func:`load_capacity` keep the results as JSON (format ``ling-lam-capacity``) in ``book/data/studies``.

Run from the command line (the full study of chapter 22)::

    python -m evolving_ttt.ling_lam.capacity --restarts 24 --seed 1 --out book/data/studies/ling_lam_capacity.json \
        --progress /tmp/ling_lam_capacity_progress.json

(about 20 minutes on two cores; ``--progress`` lets an interrupted run go on where it stopped).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolving_ttt import numerics
from evolving_ttt.game import check_count, check_instance
from evolving_ttt.ling_lam.fused import EXPONENT_FLOOR
from evolving_ttt.ling_lam.network import (
    N_INPUTS,
    NETWORK_KINDS,
    TRAINING_SOURCES,
    TrainingSet,
    fitness,
    gene_count,
    hidden_of,
    ling_lam_outputs,
    nndtf_layout,
    training_positions,
)
from evolving_ttt.reading import Fields, read_record
from evolving_ttt.records import check_path, json_text, same_file, write_checked

TAUS = (2.0, 0.5, 0.1, 0.02)
"""The widths of the blur, in units of ``8 y`` (one step of the move rule is 1), lowered stage by stage."""
WIDTHS = (0.1, 0.05, 0.02, 0.01)
"""The NNDTF's smoothing widths, stage by stage with :data:`TAUS`: each of its transfer functions is widened by this
(:func:`smooth_transfer`), in units of the transfer function's own argument. Small on purpose: in a pilot on the
paper's positions, a first stage wide enough that no transfer function can saturate (1.25) ended lower, the fit
letting the width do the smoothing while it drove the spreads towards 0."""
FINITE_STEP = 1e-6
"""The step of the forward differences."""
CAPACITY_FORMAT = "ling-lam-capacity"
"""The ``format`` field of a capacity study's JSON file."""
CAPACITY_VERSION = 2
"""Its ``version``: 2 since the NNDTF's transfer functions are smoothed too (``widths``) and stalls are counted."""
ALL_POSITIONS = "all positions"
"""The name of the position set of all 2,201 positions with X to move (besides :data:`TRAINING_SOURCES`)."""


def smooth_fitness(outputs: np.ndarray, training: TrainingSet, tau: float) -> np.ndarray:
    """The smooth stand-in of (31) for outputs (..., P): the expected score when ``8 y`` is blurred by ``tau``.

    Step ``k`` (0 to 16) of :func:`~evolving_ttt.ling_lam.network.output_steps` holds for ``8 y`` in
    ``(k - 9, k - 8]`` (the end steps reach to infinity); its weight is the difference of two logistics of width
    ``tau`` at those bounds. The result is the weighted sum of the steps' scores over the positions, divided by
    the best total, as in (31); it lies in [0, 1] and tends to (31) as ``tau`` tends to 0.
    """
    check_instance(training, TrainingSet, "training", "a TrainingSet")
    if not isinstance(tau, (int, float)) or isinstance(tau, bool) or not tau > 0:
        raise ValueError(f"tau must be a number > 0; got {tau!r}")
    bounds = np.arange(-8, 8) + 0.0  # the upper bounds of steps 0 to 15 in units of 8 y: -8, ..., 7
    below = numerics.sigmoid((bounds - 8.0 * np.asarray(outputs)[..., None]) / tau)  # P(8 y <= bound), (..., P, 16)
    weights = np.diff(below, axis=-1, prepend=0.0, append=1.0)  # (..., P, 17)
    return (weights * training.score_by_step).sum(axis=(-1, -2)) / training.best_total


def smooth_transfer(f: np.ndarray, mean: np.ndarray, spread: np.ndarray, width: float) -> np.ndarray:
    """The NNDTF's transfer function (7) with its bell widened: its spread ``s`` becomes ``|s| + w``.

    ``sign(f - m) (1 - exp(-(f - m)^2 / (2 (|s| + w)^2)))``. With a small spread the transfer function (7) is a
    step in all but name: an argument more than about ``8.6 |s|`` from the mean gives exactly -1 or 1 in double
    precision, and one at less than ``|s|`` barely moves, so a small change of a gene leaves the output as it was
    and the gradient is exactly 0, or it jumps, and a gradient is no guide. Widened, no transfer function is
    steeper than one of spread ``w``. The spread is widened by adding, not in quadrature (``s^2 + w^2``), so that
    its own slope at ``s = 0`` is not 0: a fit that drove a spread to 0 while ``w`` did the smoothing can still
    raise it when ``w`` shrinks. At ``w = 0`` this is :func:`~evolving_ttt.ling_lam.network.transfer` itself, the
    same operations in the same order (the same bits).
    """
    if not isinstance(width, (int, float)) or isinstance(width, bool) or not width >= 0 or width == math.inf:
        raise ValueError(f"width must be a finite number >= 0; got {width!r}")
    d = np.subtract(f, mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        widened = np.abs(spread) + width  # exactly |s| at w = 0, and |s| |s| is s s bit for bit
        factor = -0.5 / (widened * widened)  # -inf at s = w = 0, as in (7)'s limit
        e = np.asarray(d * d * factor)  # the exponent, <= 0; nan where f = m and s = w = 0
    np.fmin(e, 0.0, out=e)  # nan -> 0
    np.maximum(e, EXPONENT_FLOOR, out=e)  # changes no bit of the result (see network.transfer)
    e = numerics.exp(e)
    np.subtract(1.0, e, out=e)
    return np.copysign(e, d, out=e)


SMOOTH_ROWS = 16
"""Networks computed at once by :func:`smooth_nndtf_outputs`: a few at a time keep the arrays in the cache."""


def smooth_nndtf_outputs(genes: np.ndarray, inputs: np.ndarray, width: float) -> np.ndarray:
    """Outputs (..., P) of NNDTFs (..., 14 h + 2) on encoded boards (P, 9), every transfer function widened by
    ``width`` (:func:`smooth_transfer`): the static ones, the dynamic ones and the output's.

    The hidden order is the paper setting's ``"simultaneous"``. Elementwise numpy with the portable ``exp``, every
    sum from 0 in the order of :func:`~evolving_ttt.ling_lam.fused.nndtf_kernel`: at ``width = 0`` the outputs are
    :func:`~evolving_ttt.ling_lam.network.nndtf_outputs`' bit for bit (tested), and at any width the same bits on
    every processor.
    """
    genes, inputs = np.asarray(genes, dtype=float), np.asarray(inputs, dtype=float)
    if inputs.ndim != 2 or inputs.shape[1] != N_INPUTS:
        raise ValueError(f"inputs must be encoded boards (P, {N_INPUTS}); got shape {inputs.shape}")
    hidden = hidden_of("nndtf", genes.shape[-1] if genes.ndim else 0)
    layout = nndtf_layout(hidden)
    flat = genes.reshape(-1, genes.shape[-1])
    out = np.empty((len(flat), len(inputs)))
    for start in range(0, len(flat), SMOOTH_ROWS):
        rows = flat[start : start + SMOOTH_ROWS]
        part = {name: rows[:, where] for name, where in layout.items()}
        weights = part["input_weights"].reshape(len(rows), N_INPUTS, hidden)
        sums = np.zeros((len(rows), hidden, len(inputs)))
        for i in range(N_INPUTS):  # input by input, as the engine adds them
            sums += inputs[:, i] * weights[:, i, :, None]
        static = smooth_transfer(sums, part["static_mean"][..., None], part["static_spread"][..., None], width)
        after, before = np.roll(static, -1, axis=1), np.roll(static, 1, axis=1)  # neurons j + 1 and j - 1
        z = smooth_transfer(static, part["mean_link"][..., None] * after, part["spread_link"][..., None] * before,
                            width)  # fmt: skip
        total = np.zeros((len(rows), len(inputs)))
        for j in range(hidden):
            total += z[:, j] * part["output_weights"][:, j, None]
        out[start : start + len(rows)] = smooth_transfer(total, part["output_mean"], part["output_spread"], width)
    return out.reshape(*genes.shape[:-1], len(inputs))


def smooth_outputs(kind: str, genes: np.ndarray, inputs: np.ndarray, width: float) -> np.ndarray:
    """The outputs the fit's stand-in sees: the NNDTF's with its transfer functions widened by ``width``
    (:func:`smooth_nndtf_outputs`), the baseline's as they are (its tanh units have no steps to smooth: with genes in
    [-1, 1] their arguments stay below 11 in size, where tanh still has a slope)."""
    if kind == "nndtf":
        return smooth_nndtf_outputs(genes, inputs, width)
    return ling_lam_outputs(kind, genes, inputs)


MEMORY = 10
"""The step pairs :func:`minimize_in_box` keeps for its curvature estimate (scipy's L-BFGS-B default)."""
SUFFICIENT_DECREASE = 1e-4
"""The Armijo constant of the line search: a step is taken when it gains this share of the slope's promise."""
GRADIENT_TOLERANCE = 1e-5
"""Stop when no component of the projected gradient exceeds this (scipy's ``pgtol`` default)."""
VALUE_TOLERANCE = 2.220446049250313e-09
"""Stop when a step lowers the value by less than this share of it (scipy's ``ftol`` default)."""
LINE_SEARCH_STEPS = 30
"""The most halvings of the step in one line search; the search stops when none gives a decrease."""


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """The dot product, exactly rounded (``math.fsum`` of the exact-per-element products' roundings)."""
    return math.fsum((a * b).tolist())


@dataclass(frozen=True)
class BoxMinimum:
    """What :func:`minimize_in_box` found: the point, its value, the iterations and the evaluations it took."""

    x: np.ndarray
    value: float
    iterations: int
    evaluations: int


def minimize_in_box(value_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]], start: np.ndarray,
                    lower: float = -1.0, upper: float = 1.0, max_iterations: int = 300) -> BoxMinimum:  # fmt: skip
    """Minimize a function of a vector with every component in ``[lower, upper]``: a projected L-BFGS.

    Each iteration holds the components that sit on a bound with the gradient pushing outward, takes the L-BFGS
    direction (the last :data:`MEMORY` step pairs, restricted to the free components; the steepest descent when
    that is no descent direction), and halves the step from 1 until the projected point passes the Armijo test.
    It stops after ``max_iterations`` iterations, when the projected gradient is below
    :data:`GRADIENT_TOLERANCE`, when a step gains less than :data:`VALUE_TOLERANCE` of the value, or when no step
    of the line search decreases the value. Every operation is elementwise or an exactly rounded sum, so the
    result has the same bits on every processor whenever ``value_and_gradient`` does.
    """
    check_count(max_iterations, "max_iterations")
    if not (np.isfinite(lower) and np.isfinite(upper) and lower < upper):
        raise ValueError(f"the box must have finite bounds lower < upper; got [{lower!r}, {upper!r}]")
    x = np.clip(np.asarray(start, dtype=np.float64), lower, upper)
    value, gradient = value_and_gradient(x)
    evaluations, pairs = 1, deque(maxlen=MEMORY)
    iteration = 0
    while iteration < max_iterations:
        held = ((x <= lower) & (gradient > 0)) | ((x >= upper) & (gradient < 0))
        projected = np.where(held, 0.0, gradient)
        if np.abs(projected).max() <= GRADIENT_TOLERANCE:
            break
        iteration += 1
        direction, curvature = projected.copy(), []
        for step, change in reversed(pairs):  # the two-loop recursion on the free components
            step, change = np.where(held, 0.0, step), np.where(held, 0.0, change)
            agreement = _dot(step, change)
            if agreement > 0.0:
                alpha = _dot(step, direction) / agreement
                direction = direction - alpha * change
                curvature.append((step, change, agreement, alpha))
        if curvature:
            step, change, agreement, _ = curvature[0]
            direction = direction * (agreement / _dot(change, change))
        for step, change, agreement, alpha in reversed(curvature):
            direction = direction + (alpha - _dot(change, direction) / agreement) * step
        direction = -direction
        if not _dot(direction, projected) < 0.0:
            direction, curvature = -projected, []
        length = 1.0 if curvature else min(1.0, 1.0 / float(np.abs(projected).max()))
        for _ in range(LINE_SEARCH_STEPS):
            trial = np.clip(x + length * direction, lower, upper)
            trial_value, trial_gradient = value_and_gradient(trial)
            evaluations += 1
            if trial_value <= value + SUFFICIENT_DECREASE * _dot(gradient, trial - x) and trial_value < value:
                break
            length *= 0.5
        else:
            break
        pairs.append((trial - x, trial_gradient - gradient))
        gain = value - trial_value
        x, value, gradient = trial, trial_value, trial_gradient
        if gain <= VALUE_TOLERANCE * max(abs(value), abs(value + gain), 1.0):
            break
    return BoxMinimum(x, float(value), iteration, evaluations)


POLISH_SWEEPS = 20
"""The most sweeps of :func:`polish` after the gradient stages (it stops earlier when a sweep gains nothing)."""
POLISH_GRID = np.arange(-64, 65) / 64.0
"""The values :func:`polish` tries for each gene anywhere in the box: -1 to 1 in steps of 1/64 (exact)."""
POLISH_NUDGES = np.array([math.ldexp(sign, -k) for k in range(7, 15) for sign in (1.0, -1.0)])
"""The small moves :func:`polish` also tries from each gene's value: plus and minus 2^-7 to 2^-14 (exact)."""


@dataclass(frozen=True)
class Polish:
    """What :func:`polish` found: the genes, their true fitness (31), the sweeps made and the networks evaluated."""

    genes: np.ndarray
    fitness: float
    sweeps: int
    evaluations: int


def polish(kind: str, training: TrainingSet, genes: np.ndarray, sweeps: int = POLISH_SWEEPS) -> Polish:
    """Raise the true fitness (31) of ``genes`` without a gradient: exhaustive scans one gene at a time.

    A sweep takes the genes in order; for each it evaluates, with the network's own outputs and (31) itself, every
    value of :data:`POLISH_GRID` and the current value moved by each of :data:`POLISH_NUDGES` (kept in the box),
    the other genes held, and keeps the best if it is strictly fitter (the first of equals). The fitness is a step
    function of each gene, flat between steps, so a scan crosses the flats that stop a gradient. It stops after
    ``sweeps`` sweeps or after a sweep that changed nothing. No random numbers, elementwise sums and exact
    integer scores: the same bits on every processor.
    """
    check_count(sweeps, "sweeps", 0)
    genes = np.array(genes, dtype=float)
    best = float(fitness(ling_lam_outputs(kind, genes, training.inputs), training))
    done = evaluations = 0
    while done < sweeps:
        done += 1
        improved = False
        for i in range(len(genes)):
            values = np.concatenate([POLISH_GRID, np.clip(genes[i] + POLISH_NUDGES, -1.0, 1.0)])
            trials = np.repeat(genes[None], len(values), axis=0)
            trials[:, i] = values
            found = fitness(ling_lam_outputs(kind, trials, training.inputs), training)
            evaluations += len(values)
            k = int(np.argmax(found))
            if found[k] > best:
                best, genes, improved = float(found[k]), trials[k].copy(), True
        if not improved:
            break
    return Polish(genes, best, done, evaluations)


@dataclass(frozen=True)
class Fit:
    """One restart of :func:`fit_network`: the genes after the gradient stages, the true fitness (31) at the start
    and after each stage, and the polish's genes and fitness (``best_genes``, ``best_fitness``: at least the best
    stage's) and sweeps."""

    genes: np.ndarray
    stage_fitness: tuple[float, ...]
    best_genes: np.ndarray
    best_fitness: float
    evaluations: int
    start_fitness: float
    polish_sweeps: int

    @property
    def stalled(self) -> bool:
        """Whether the restart stalled (:func:`stalled`)."""
        return stalled(self.stage_fitness)


def stalled(stage_fitness: Sequence[float]) -> bool:
    """Whether a restart stalled: every stage after the first ended with the true fitness (31) it began with.

    That is, its true fitness after each stage equals its fitness after the first: the continuation's sharper
    stages, which are there to refine what the first stage found, changed nothing. (The first stage is left out:
    from random genes it nearly always changes the fitness, even when the fit then sticks where it landed; a fit with
    a single stage never stalls; the polish after the stages is not looked at.) This is the mark of a fit held by a
    gradient that is exactly 0 or useless, as most of the NNDTF's were before its transfer functions were widened
    (chapter 22); a fit that simply converged in its first stage is counted too, so the count is an upper bound on
    the fits held back that way.
    """
    return len(stage_fitness) > 1 and all(value == stage_fitness[0] for value in stage_fitness[1:])


def check_stages(taus: Sequence[float], widths: Sequence[float]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The stages' blurs ``taus`` (numbers > 0) and NNDTF widths ``widths`` (numbers >= 0), one of each per stage."""

    def numbers(values: object, name: str, low: float, strict: bool) -> tuple[float, ...]:
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values or any(
            not isinstance(v, (int, float)) or isinstance(v, bool) or not (v > low if strict else v >= low)
            or v == math.inf for v in values
        ):  # fmt: skip
            relation = ">" if strict else ">="
            raise ValueError(f"{name} must be a non-empty list of finite numbers {relation} {low}; got {values!r}")
        return tuple(float(v) for v in values)

    taus, widths = numbers(taus, "taus", 0.0, True), numbers(widths, "widths", 0.0, False)
    if len(taus) != len(widths):
        raise ValueError(f"taus and widths must have one value per stage; got {len(taus)} and {len(widths)}")
    return taus, widths


def fit_network(kind: str, training: TrainingSet, rng: np.random.Generator, hidden: int = 8,
                taus: Sequence[float] = TAUS, max_iterations: int = 300, widths: Sequence[float] | None = None,
                polish_sweeps: int = POLISH_SWEEPS) -> Fit:  # fmt: skip
    """Fit a ``kind`` network to ``training`` from random genes: :func:`minimize_in_box` on :func:`smooth_fitness`,
    then :func:`polish`.

    The genes start uniform in [-1, 1) from ``rng``. Stage ``k`` maximises the stand-in at blur ``taus[k]`` of
    the outputs :func:`smooth_outputs` gives at width ``widths[k]`` (the NNDTF's transfer functions widened; by
    default :data:`WIDTHS` for the NNDTF, which needs as many stages as it has, and nothing for the baseline, which
    has no steps inside), at most ``max_iterations`` iterations, from where the last stage stopped. Before the
    first stage and after each one the true (31) of the genes is taken, with the network's own outputs (no blur,
    no widening). The genes of the stage with the highest true fitness (the first of equals) are then polished
    (at most ``polish_sweeps`` sweeps; 0 for none): ``best_genes`` and ``best_fitness`` are the polish's.
    """
    if kind not in NETWORK_KINDS:
        raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {kind!r}")
    check_instance(training, TrainingSet, "training", "a TrainingSet")
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    check_count(max_iterations, "max_iterations")
    check_count(polish_sweeps, "polish_sweeps", 0)
    if widths is None:
        widths = WIDTHS if kind == "nndtf" else [0.0] * (len(taus) if isinstance(taus, Sequence) else 1)
    taus, widths = check_stages(taus, widths)
    n = gene_count(kind, hidden)
    genes = rng.uniform(-1.0, 1.0, n)
    shifts = np.vstack([np.zeros(n), FINITE_STEP * np.eye(n)])  # the point and its n forward neighbours
    count = [0]

    def value_and_gradient(x: np.ndarray, tau: float, width: float) -> tuple[float, np.ndarray]:
        values = smooth_fitness(smooth_outputs(kind, x + shifts, training.inputs, width), training, tau)
        count[0] += n + 1
        return -float(values[0]), -(values[1:] - values[0]) / FINITE_STEP

    def true_fitness(x: np.ndarray) -> float:
        return float(fitness(ling_lam_outputs(kind, x, training.inputs), training))

    start = true_fitness(genes)
    stages, best, best_genes = [], -1.0, genes
    for tau, width in zip(taus, widths, strict=True):
        found = minimize_in_box(lambda x, tau=tau, width=width: value_and_gradient(x, tau, width), genes, -1.0, 1.0,
                                max_iterations)  # fmt: skip
        genes = found.x
        true = true_fitness(genes)
        stages.append(true)
        if true > best:
            best, best_genes = true, genes.copy()
    polished = polish(kind, training, best_genes, polish_sweeps)
    return Fit(genes, tuple(stages), polished.genes, polished.fitness, count[0] + polished.evaluations, start,
               polished.sweeps)  # fmt: skip


def position_set(source: str, count: int = 100, seed: int = 2011) -> TrainingSet:
    """A position set by name: a training source of :data:`TRAINING_SOURCES`, or :data:`ALL_POSITIONS`."""
    if source == ALL_POSITIONS:
        return training_positions(seed, 2201, "uniform positions")
    if source not in TRAINING_SOURCES:
        raise ValueError(f"source must be one of {(*TRAINING_SOURCES, ALL_POSITIONS)}; got {source!r}")
    return training_positions(seed, count, source)


def capacity_study(
    targets: Sequence[tuple[str, str, int]], restarts: int, seed: int = 1, taus: Sequence[float] = TAUS,
    max_iterations: int = 300, progress: bool = False, widths: Sequence[float] = WIDTHS,
    polish_sweeps: int = POLISH_SWEEPS, done: dict | None = None, on_target: Callable[[dict], None] | None = None,
) -> dict:  # fmt: skip
    """Fit each target ``(kind, source, restarts)`` ``restarts`` times (at most, capped by the target's own count).

    Restart ``r`` of target ``t`` starts from ``numpy.random.default_rng([seed, t, r])``, so any restart can be
    re-run alone. Returns the record :func:`save_capacity` writes: the settings (the stages' ``taus`` and
    ``widths``, the NNDTF's alone; the polish's most sweeps), and per target every restart's true fitness at the
    start and after each stage, its best after the polish and the polish's sweeps, whether it stalled
    (:func:`stalled`), the count of stalled restarts, and the genes of the best restart.

    ``done``, a record of an earlier, interrupted study with the same settings, lends its targets: target ``t`` is
    taken from it, not fitted again, when it is the same network, position set and number of restarts (the same
    seeds give the same bits). ``on_target`` is called with the record so far after each target, to keep it.
    """
    check_count(restarts, "restarts")
    check_count(seed, "seed", 0)
    check_count(polish_sweeps, "polish_sweeps", 0)
    taus, widths = check_stages(taus, widths)
    record = {"format": CAPACITY_FORMAT, "version": CAPACITY_VERSION, "seed": seed, "taus": list(taus),
              "widths": list(widths), "max_iterations": max_iterations, "polish_sweeps": polish_sweeps,
              "targets": []}  # fmt: skip
    settings = ("seed", "taus", "widths", "max_iterations", "polish_sweeps")
    if done is not None and any(done.get(key) != record[key] for key in settings):
        raise ValueError(f"the earlier study was made with other settings: {[done.get(key) for key in settings]} "
                         f"against {[record[key] for key in settings]}")  # fmt: skip
    results = record["targets"]
    for t, (kind, source, cap) in enumerate(targets):
        count = min(restarts, check_count(cap, "a target's restarts"))
        earlier = done["targets"][t] if done is not None and t < len(done["targets"]) else None
        if earlier is not None and (earlier["kind"], earlier["source"], len(earlier["restarts"])) == (
            kind, source, count
        ):  # fmt: skip
            results.append(earlier)
            continue
        training = position_set(source)
        rows, best = [], None
        for r in range(count):
            start = time.perf_counter()
            fit = fit_network(kind, training, np.random.default_rng([seed, t, r]), taus=taus,
                              max_iterations=max_iterations, widths=widths, polish_sweeps=polish_sweeps)  # fmt: skip
            rows.append({"restart": r, "start_fitness": fit.start_fitness, "stage_fitness": list(fit.stage_fitness),
                         "stalled": fit.stalled, "best_fitness": fit.best_fitness, "polish_sweeps": fit.polish_sweeps,
                         "evaluations": fit.evaluations, "seconds": round(time.perf_counter() - start, 2)})  # fmt: skip
            if best is None or fit.best_fitness > best[0]:
                best = (fit.best_fitness, fit.best_genes)
            if progress:
                print(f"{kind} on {source}: restart {r}: {fit.best_fitness:.4f}{' (stalled)' if fit.stalled else ''}",
                      file=sys.stderr, flush=True)  # fmt: skip
        results.append({"kind": kind, "source": source, "positions": len(training.boards), "restarts": rows,
                        "stalled": sum(row["stalled"] for row in rows), "best_fitness": best[0],
                        "best_genes": best[1].tolist()})  # fmt: skip
        if on_target is not None:
            on_target(record)
    return record


def save_capacity(record: dict, path: str | Path) -> None:
    """Write a :func:`capacity_study` record as JSON, whole or not at all, once :func:`load_capacity` reads it."""
    path = check_path(path)
    write_checked(path, json_text(record, path, indent=None), load_capacity, "Ling-Lam capacity study")


def load_capacity(path: str | Path) -> dict:
    """Read a file of :func:`save_capacity`, checking its fields; ``ValueError`` naming the file and the field.

    Besides each field's type and range: ``widths`` has one value per stage of ``taus``, every restart one
    fitness per stage, its ``best_fitness`` (after the polish) at least the highest of them, its ``polish_sweeps``
    at most the record's, and its ``stalled`` what :func:`stalled` says of its stages; a target's ``stalled``
    counts its stalled restarts and its ``best_fitness`` is its restarts' highest.
    """
    path = check_path(path)
    record = read_record(path, CAPACITY_FORMAT, "a Ling-Lam capacity study", CAPACITY_VERSION)
    top = Fields(path, record, "a Ling-Lam capacity study")
    top.integer("seed", 0)
    top.integer("max_iterations", 1)
    sweeps = top.integer("polish_sweeps", 0)
    taus = top.get("taus")
    stages = len(taus) if isinstance(taus, list) and taus else 1
    top.numbers("taus", (stages,), 0.0)
    if not all(tau > 0 for tau in taus):
        raise top.fail("taus", "must be numbers > 0")
    top.numbers("widths", (stages,), 0.0)
    targets = top.get("targets")
    if not isinstance(targets, list) or not targets:
        raise top.fail("targets", "must be a non-empty list")
    for k, target in enumerate(targets):
        fields = Fields(path, target, f"a Ling-Lam capacity study, target {k}")
        kind = fields.text("kind", NETWORK_KINDS)
        fields.text("source", (*TRAINING_SOURCES, ALL_POSITIONS))
        fields.integer("positions", 1)
        best = fields.number("best_fitness", 0.0, 1.0)
        genes = fields.get("best_genes")
        if not isinstance(genes, list) or len(genes) not in (gene_count(kind, h) for h in range(1, 65)):
            raise fields.fail("best_genes", f"must be the genes of a {kind} network")
        fields.numbers("best_genes", (len(genes),), -1.0, 1.0)
        rows = fields.get("restarts")
        if not isinstance(rows, list) or not rows:
            raise fields.fail("restarts", "must be a non-empty list")
        count, highest = 0, -1.0
        for row in rows:
            row_fields = Fields(path, row, f"a Ling-Lam capacity study, target {k}, a restart")
            row_fields.integer("restart", 0)
            row_fields.number("start_fitness", 0.0, 1.0)
            values = row_fields.numbers("stage_fitness", (stages,), 0.0, 1.0).tolist()
            value = row_fields.number("best_fitness", 0.0, 1.0)
            if value < max(values):
                raise row_fields.fail("best_fitness", "is below the highest of its stages' fitness")
            row_fields.integer("polish_sweeps", 0, sweeps)
            flag = row_fields.get("stalled")
            if not isinstance(flag, bool) or flag != stalled(values):
                raise row_fields.fail("stalled", f"must be true or false, {stalled(values)} for its fitness")
            row_fields.integer("evaluations", 0)
            row_fields.number("seconds", 0.0)
            count, highest = count + flag, max(highest, value)
        if fields.integer("stalled", 0) != count:
            raise fields.fail("stalled", f"must count the stalled restarts ({count})")
        if best != highest:
            raise fields.fail("best_fitness", "is not its restarts' highest fitness")
    return record


PAPER_TARGETS = (
    ("nndtf", "random games", 24), ("baseline", "random games", 24),
    ("nndtf", "uniform positions", 10), ("baseline", "uniform positions", 10),
    ("nndtf", "quiet games", 10), ("baseline", "quiet games", 10),
    ("nndtf", ALL_POSITIONS, 2), ("baseline", ALL_POSITIONS, 2),
)  # fmt: skip
"""The targets of chapter 22's study: (network, position set, most restarts). The paper's setting gets the most;
all 2,201 positions cost 22 times as much per restart (the NNDTF's about five minutes), so they get two."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evolving_ttt.ling_lam.capacity``: the capacity study of chapter 22 into a JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restarts", type=int, default=24, help="restarts per target (at most the target's cap)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-iterations", type=int, default=300, help="optimizer iterations per stage")
    parser.add_argument("--polish-sweeps", type=int, default=POLISH_SWEEPS, help="most sweeps of the polish")
    parser.add_argument("--out", required=True, help="the JSON file to write (.json)")
    parser.add_argument("--progress", help="a JSON file that keeps the targets done so far, written after each "
                        "one; an interrupted study given the same file goes on from it")  # fmt: skip
    parser.add_argument(
        "--without-all-positions", action="store_true", help="leave out the targets on all 2,201 positions"
    )
    args = parser.parse_args(argv)
    if not args.out.endswith(".json") or (args.progress is not None and not args.progress.endswith(".json")):
        parser.error("--out and --progress must end in .json")
    if args.progress is not None and same_file(args.progress, args.out):
        parser.error("--progress must be another file than --out")
    targets = [t for t in PAPER_TARGETS if not (args.without_all_positions and t[1] == ALL_POSITIONS)]
    done = load_capacity(args.progress) if args.progress is not None and Path(args.progress).exists() else None
    keep = None if args.progress is None else (lambda record: save_capacity(record, args.progress))
    start = time.perf_counter()
    record = capacity_study(targets, args.restarts, args.seed, TAUS, args.max_iterations, progress=True, widths=WIDTHS,
                            polish_sweeps=args.polish_sweeps, done=done, on_target=keep)  # fmt: skip
    save_capacity(record, args.out)  # whole or not at all: the file there is replaced only by a complete study
    if args.progress is not None:
        Path(args.progress).unlink()
    for target in record["targets"]:
        print(f"{target['kind']:>8} on {target['source']:<18}: best fitness (31) {target['best_fitness']:.4f} "
              f"over {len(target['restarts'])} restarts, {target['stalled']} stalled")  # fmt: skip
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
