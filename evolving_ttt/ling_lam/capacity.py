"""Can the network hold the paper's fitness at all? A continuous optimizer against the GA (chapter 22).

The fitness (31) of a network is a step function of its genes: the output ``y`` picks a square through
``ceil(8 y)``, so the fitness is flat almost everywhere and no gradient helps. To ask what the networks *can*
represent, apart from what the paper's GAs find, this module fits them with a continuous optimizer to a smooth
stand-in of (31), then reports the true (31) of what it found.

* :func:`smooth_fitness` is the stand-in: each output's step is blurred by a logistic of width ``tau`` (in
  units of ``8 y``), so that the fitness is the expected score of a slightly noisy move; as ``tau`` goes to 0 it
  becomes (31) itself.
* :func:`minimize_in_box` is the optimizer: a projected L-BFGS with a backtracking line search, every gene boxed.
  Its vector steps are elementwise and its dot products exactly rounded (``math.fsum``), so with the portable
  networks and functions (chapter 9) a fit gives the same bits on every processor, unlike scipy's L-BFGS-B, whose
  vector steps run through BLAS.
* :func:`fit_network` runs it on the stand-in, genes boxed in [-1, 1], with ``tau`` lowered in stages
  (continuation); the gradient is a forward difference computed for all genes in one batched network call.
* :func:`capacity_study` does many seeded restarts for several networks and position sets; :func:`save_capacity`
  and :func:`load_capacity` keep the results as JSON (format ``ling-lam-capacity``) in ``book/data/studies``.

Run from the command line (the full study of chapter 22)::

    python -m evolving_ttt.ling_lam.capacity --restarts 24 --seed 1 --out book/data/studies/ling_lam_capacity.json
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
from evolving_ttt.ling_lam.network import (
    NETWORK_KINDS,
    TRAINING_SOURCES,
    TrainingSet,
    fitness,
    gene_count,
    ling_lam_outputs,
    training_positions,
)
from evolving_ttt.records import Fields, check_path, json_text, read_record, write_checked

TAUS = (2.0, 0.5, 0.1, 0.02)
"""The widths of the blur, in units of ``8 y`` (one step of the move rule is 1), lowered stage by stage."""
FINITE_STEP = 1e-6
"""The step of the forward differences."""
CAPACITY_FORMAT = "ling-lam-capacity"
"""The ``format`` field of a capacity study's JSON file."""
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


@dataclass(frozen=True)
class Fit:
    """One restart of :func:`fit_network`: the genes and the true fitness (31) after each stage of ``taus``."""

    genes: np.ndarray
    stage_fitness: tuple[float, ...]
    best_genes: np.ndarray
    best_fitness: float
    evaluations: int


def fit_network(kind: str, training: TrainingSet, rng: np.random.Generator, hidden: int = 8,
                taus: Sequence[float] = TAUS, max_iterations: int = 300) -> Fit:  # fmt: skip
    """Fit a ``kind`` network to ``training`` from random genes: :func:`minimize_in_box` on :func:`smooth_fitness`.

    The genes start uniform in [-1, 1) from ``rng``. Each stage maximises the stand-in at one ``tau`` (at most
    ``max_iterations`` iterations) from where the last stage stopped; after each stage the true (31) of the genes
    is taken. ``best_genes`` are those of the stage with the highest true fitness (the first of equals).
    """
    if kind not in NETWORK_KINDS:
        raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {kind!r}")
    check_instance(training, TrainingSet, "training", "a TrainingSet")
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    check_count(max_iterations, "max_iterations")
    if not taus or any(not isinstance(t, (int, float)) or isinstance(t, bool) or not t > 0 for t in taus):
        raise ValueError(f"taus must be a non-empty list of numbers > 0; got {taus!r}")
    n = gene_count(kind, hidden)
    genes = rng.uniform(-1.0, 1.0, n)
    shifts = np.vstack([np.zeros(n), FINITE_STEP * np.eye(n)])  # the point and its n forward neighbours
    count = [0]

    def value_and_gradient(x: np.ndarray, tau: float) -> tuple[float, np.ndarray]:
        values = smooth_fitness(ling_lam_outputs(kind, x + shifts, training.inputs), training, tau)
        count[0] += n + 1
        return -float(values[0]), -(values[1:] - values[0]) / FINITE_STEP

    stages, best, best_genes = [], -1.0, genes
    for tau in taus:
        found = minimize_in_box(lambda x, tau=float(tau): value_and_gradient(x, tau), genes, -1.0, 1.0,
                                max_iterations)  # fmt: skip
        genes = found.x
        true = float(fitness(ling_lam_outputs(kind, genes, training.inputs), training))
        stages.append(true)
        if true > best:
            best, best_genes = true, genes.copy()
    return Fit(genes, tuple(stages), best_genes, best, count[0])


def position_set(source: str, count: int = 100, seed: int = 2011) -> TrainingSet:
    """A position set by name: a training source of :data:`TRAINING_SOURCES`, or :data:`ALL_POSITIONS`."""
    if source == ALL_POSITIONS:
        return training_positions(seed, 2201, "uniform positions")
    if source not in TRAINING_SOURCES:
        raise ValueError(f"source must be one of {(*TRAINING_SOURCES, ALL_POSITIONS)}; got {source!r}")
    return training_positions(seed, count, source)


def capacity_study(
    targets: Sequence[tuple[str, str, int]], restarts: int, seed: int = 1, taus: Sequence[float] = TAUS,
    max_iterations: int = 300, progress: bool = False,
) -> dict:  # fmt: skip
    """Fit each target ``(kind, source, restarts)`` ``restarts`` times (at most, capped by the target's own count).

    Restart ``r`` of target ``t`` starts from ``numpy.random.default_rng([seed, t, r])``, so any restart can be
    re-run alone. Returns the record :func:`save_capacity` writes: the settings, and per target every restart's
    true fitness after each stage and its best, plus the genes of the best restart.
    """
    check_count(restarts, "restarts")
    check_count(seed, "seed", 0)
    results = []
    for t, (kind, source, cap) in enumerate(targets):
        training = position_set(source)
        rows, best = [], None
        for r in range(min(restarts, check_count(cap, "a target's restarts"))):
            start = time.perf_counter()
            fit = fit_network(kind, training, np.random.default_rng([seed, t, r]), taus=taus,
                              max_iterations=max_iterations)  # fmt: skip
            rows.append({"restart": r, "stage_fitness": list(fit.stage_fitness), "best_fitness": fit.best_fitness,
                         "evaluations": fit.evaluations, "seconds": round(time.perf_counter() - start, 2)})  # fmt: skip
            if best is None or fit.best_fitness > best[0]:
                best = (fit.best_fitness, fit.best_genes)
            if progress:
                print(f"{kind} on {source}: restart {r}: {fit.best_fitness:.4f}", file=sys.stderr, flush=True)
        results.append({"kind": kind, "source": source, "positions": len(training.boards), "restarts": rows,
                        "best_fitness": best[0], "best_genes": best[1].tolist()})  # fmt: skip
    return {"format": CAPACITY_FORMAT, "version": 1, "seed": seed, "taus": list(taus),
            "max_iterations": max_iterations, "targets": results}  # fmt: skip


def save_capacity(record: dict, path: str | Path) -> None:
    """Write a :func:`capacity_study` record as JSON, whole or not at all, once :func:`load_capacity` reads it."""
    path = check_path(path)
    write_checked(path, json_text(record, path, indent=None), load_capacity, "Ling-Lam capacity study")


def load_capacity(path: str | Path) -> dict:
    """Read a file of :func:`save_capacity`, checking its fields; ``ValueError`` naming the file and the field."""
    path = check_path(path)
    record = read_record(path, CAPACITY_FORMAT, "a Ling-Lam capacity study")
    top = Fields(path, record, "a Ling-Lam capacity study")
    top.integer("seed", 0)
    top.integer("max_iterations", 1)
    taus = top.get("taus")
    top.numbers("taus", (len(taus) if isinstance(taus, list) and taus else 1,), 0.0)
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
        for row in rows:
            row_fields = Fields(path, row, f"a Ling-Lam capacity study, target {k}, a restart")
            row_fields.integer("restart", 0)
            value = row_fields.number("best_fitness", 0.0, 1.0)
            stages = row_fields.get("stage_fitness")
            row_fields.numbers("stage_fitness", (len(stages) if isinstance(stages, list) and stages else 1,), 0.0, 1.0)
            row_fields.integer("evaluations", 0)
            row_fields.number("seconds", 0.0)
            if value > best:
                raise fields.fail("best_fitness", "is below a restart's best fitness")
    return record


PAPER_TARGETS = (
    ("nndtf", "random games", 24), ("baseline", "random games", 24),
    ("nndtf", "uniform positions", 10), ("baseline", "uniform positions", 10),
    ("nndtf", "quiet games", 10), ("baseline", "quiet games", 10),
    ("nndtf", ALL_POSITIONS, 3), ("baseline", ALL_POSITIONS, 3),
)  # fmt: skip
"""The targets of chapter 22's study: (network, position set, most restarts). The paper's setting gets the most;
all 2,201 positions cost 22 times as much per restart."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evolving_ttt.ling_lam.capacity``: the capacity study of chapter 22 into a JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restarts", type=int, default=24, help="restarts per target (at most the target's cap)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-iterations", type=int, default=300, help="optimizer iterations per stage")
    parser.add_argument("--out", required=True, help="the JSON file to write (.json)")
    parser.add_argument(
        "--without-all-positions", action="store_true", help="leave out the targets on all 2,201 positions"
    )
    args = parser.parse_args(argv)
    if not args.out.endswith(".json"):
        parser.error("--out must end in .json")
    targets = [t for t in PAPER_TARGETS if not (args.without_all_positions and t[1] == ALL_POSITIONS)]
    record = capacity_study(targets, args.restarts, args.seed, TAUS, args.max_iterations, progress=True)
    save_capacity(record, args.out)
    for target in record["targets"]:
        print(f"{target['kind']:>8} on {target['source']:<18}: best fitness (31) {target['best_fitness']:.4f} "
              f"over {len(target['restarts'])} restarts")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
