"""The same-bits battery: a fixed set of computations, each reduced to the sha256 of its exact bytes (chapter 9).

    python tests/same_bits_battery.py OUT.json [--refresh] [--parts NAME,...] [--dump DIR] [--probe FILE]
                                      [--processes N]

writes ``{part: sha256 hex}`` to ``OUT.json``. Every part is computed from fixed seeds and committed files only, so
two machines (or two emulated processors, ``tests/test_same_bits.py``) that compute the same bits print the same
hashes. The parts (:data:`PARTS`):

- ``numerics``: the portable ``exp``, ``tanh``, ``sigmoid``, ``log``, ``power`` and ``fixed_matmul`` of
  :mod:`evolving_ttt.numerics` on fixed grids and seeded arrays, as raw float64 bytes;
- ``fogel_run`` and ``mohammadi_run``: a short run of each system through the registry
  (:func:`evolving_ttt.systems.run_system`), its record saved by the system's own ``save_record``;
- ``fogel_sweep_task`` and ``mohammadi_sweep_task``: one task of a small sweep each, built from a sweep definition
  and run by :func:`evolving_ttt.sweeps.run_sweep_task` as a sweep's worker runs it: its measures and saved player;
- ``arena_yardsticks``: the arena's exact yardsticks and round robin of every system's saved players
  (``book/data``), every number at full precision;
- ``glance``: the findings, read from the committed sweep databases in ``book/data/studies`` and judged by the one
  verdict rule: the printed Markdown, and every claim's bootstrap intervals and p values at full precision.

- ``al_khateeb_run`` and ``al_khateeb_sweep_task``: the same for Al-Khateeb's co-evolution, whose evaluator runs
  on the portable ``tanh`` and whose mutation on the portable ``exp``;
- ``ling_lam_run`` and ``ling_lam_sweep_task``: the same for Ling and Lam's two GAs, whose networks run in the
  fused kernels on the portable ``exp`` and ``tanh`` (vectorized loops on wide processors, scalar on others) and
  whose mutation on the portable ``power``;
- ``ling_lam_capacity``: a restart of chapter 22's capacity fit for each network (the optimizer's own projected
  L-BFGS on the portable smooth fitness, the NNDTF's transfer functions widened, then the polish), its fitness at
  each step and its genes;
- ``mcts``: OpenSpiel's Monte Carlo tree search (:mod:`evolving_ttt.mcts`, whose UCT score takes the portable
  ``log``): whole search trees of 100 and 1,000 simulations from fixed boards and seeds (every node's square,
  player, visits, total reward and proven outcome, the move, and the Mersenne Twister's state after), and the count
  rows of 20 boards at 100 simulations, 100 searches each, as a player's table holds them.

Options: ``--refresh`` also writes the note that ``tests/same_bits_hashes.json`` carries (kept from ``OUT.json``
if it has one), so ``python tests/same_bits_battery.py tests/same_bits_hashes.json --refresh`` renews the committed
hashes; ``--parts`` computes only some parts; ``--dump DIR`` writes each part's hashed bytes to ``DIR/PART.bin``,
to compare two environments byte by byte when their hashes differ; ``--probe FILE`` writes what this process sees
of the processor (numpy's dispatch targets, glibc's active AVX2 and FMA, OpenBLAS's kernel, numba's target), so
that the test can check that an emulation took effect; ``--processes N`` computes N parts at a time (`make test`'s
run before the tests uses two, beside the strict build).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

NOTE_KEY = "note"
NOTE = (
    "The same-bits battery's hashes (tests/same_bits_battery.py), computed as is on an x86-64 machine with the "
    "pinned packages of requirements.txt. tests/test_same_bits.py runs the battery under emulated processors "
    "and requires every hash to equal these. Refresh them only when a change to the code is meant to change a "
    "part's bits: python tests/same_bits_battery.py tests/same_bits_hashes.json --refresh (this note is kept)."
)
"""The note of the committed hashes file, written by ``--refresh`` when the file has none."""


def canonical_json(value: object) -> bytes:
    """``value`` as JSON with sorted keys; floats as ``repr`` (json's own: the shortest text that reads back the
    same double), so every bit of every number is in the text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def array_bytes(named: dict[str, np.ndarray]) -> bytes:
    """The arrays by name, in sorted name order, each as its name, dtype, shape and raw bytes."""
    parts = []
    for name in sorted(named):
        array = np.ascontiguousarray(named[name])
        parts.append(f"{name}|{array.dtype.str}|{array.shape}|".encode() + array.tobytes())
    return b"\n".join(parts)


# --- The parts -----------------------------------------------------------------------------------------------------


def numerics_part() -> bytes:
    """The portable elementary functions on fixed grids, and fixed-order products of seeded arrays."""
    from evolving_ttt import numerics

    rng = np.random.default_rng(20240901)  # uniform draws only: integer bits scaled by 2^-53, the same everywhere
    bases = np.concatenate([[0.0, 1.0, 0.5, np.nextafter(0.0, 1.0)], rng.random(100_000)])
    exponents = np.concatenate([[0.0, 0.0, 3.0, 1.0], 3.0 * rng.random(100_000)])
    a3, b3 = 2.0 * rng.random((64, 9, 10)) - 1.0, 2.0 * rng.random((64, 10, 9)) - 1.0
    a2, b2 = 2.0 * rng.random((200, 50)) - 1.0, 2.0 * rng.random((50, 30)) - 1.0
    vector = 2.0 * rng.random(50) - 1.0
    wide = np.linspace(-745.0, 709.0, 200_001)  # linspace multiplies and adds: exact IEEE steps on every processor
    small = np.linspace(-40.0, 40.0, 200_001)
    # Logarithmic grids as mantissa x 2^exponent (ldexp is exact): np.geomspace calls np.power, which numpy
    # dispatches by processor, so its grid itself would differ from one processor to another.
    mantissas = np.linspace(1.0, 2.0, 101)[:-1]
    positive = np.ldexp(mantissas[None, :], np.arange(-997, 997)[:, None]).reshape(-1)  # 1e-300 .. 1e300
    subnormal = np.ldexp(mantissas[None, :], np.arange(-1074, -1021)[:, None]).reshape(-1)
    return array_bytes({
        "exp_wide": numerics.exp(wide),
        "exp_small": numerics.exp(small),
        "exp_special": numerics.exp(np.array([0.0, -0.0, 1.0, -1.0, 709.78, 709.79, -745.13, -745.14, 1e-300,
                                              np.inf, -np.inf, np.nan])),
        "tanh": numerics.tanh(np.linspace(-30.0, 30.0, 200_001)),
        "tanh_small": numerics.tanh(np.linspace(-0.3, 0.3, 20_001)),
        "sigmoid": numerics.sigmoid(small),
        "log": numerics.log(positive),
        "log_near_one": numerics.log(np.linspace(0.5, 2.0, 20_001)),
        "log_subnormal": numerics.log(subnormal),
        "power": numerics.power(bases, exponents),
        "matmul_batched": numerics.fixed_matmul(a3, b3),
        "matmul_2d": numerics.fixed_matmul(a2, b2),
        "matmul_vector": numerics.fixed_matmul(a2, vector),
    })  # fmt: skip


def _record_bytes(system, record) -> bytes:
    """A record saved by its system's ``save_record``: a JSON record's exact text; an ``.npz`` record's arrays
    (a zip archive stamps its members with the time of writing, so its bytes are read back array by array)."""
    with tempfile.TemporaryDirectory() as folder:
        suffix = ".npz" if system.name == "fogel" else ".json"
        path = Path(folder) / f"record{suffix}"
        system.save_record(record, path)
        if suffix == ".json":
            return path.read_bytes()
        with np.load(path, allow_pickle=False) as archive:
            return array_bytes({name: archive[name] for name in archive.files})


def fogel_run_part() -> bytes:
    """Four trials of 200 generations of Fogel's experiment (50 parents, the paper's settings otherwise)."""
    from evolving_ttt.fogel.evolution import FogelSettings
    from evolving_ttt.systems import get_system, run_system

    system = get_system("fogel")
    record = run_system(system, FogelSettings(parents=50, generations=200, trials=4), seed=11)
    return _record_bytes(system, record)


def al_khateeb_run_part() -> bytes:
    """Al-Khateeb's co-evolution: 2 runs of 60 generations of 20 networks (the evaluator's tanh, the mutation's exp)."""
    from evolving_ttt.al_khateeb.evaluator import AlKhateebSettings
    from evolving_ttt.systems import get_system, run_system

    system = get_system("al-khateeb")
    record = run_system(system, AlKhateebSettings(generations=60, runs=2), seed=11)
    return _record_bytes(system, record)


def _mohammadi_settings():
    from evolving_ttt.mohammadi.coevolution import MohammadiSettings

    return MohammadiSettings(population=96, generations=8, runs=3, seeds_kept=4, best_candidates=8, random_candidates=8)


def mohammadi_run_part() -> bytes:
    """One series of Mohammadi's co-evolution: 3 runs of 8 generations of 96 programs, the judge between runs."""
    from evolving_ttt.systems import get_system, run_system

    system = get_system("mohammadi")
    record = run_system(system, _mohammadi_settings(), seed=11)
    return _record_bytes(system, record)


def _sweep_task_bytes(system_name: str, assignments: list[str], seeds: int, key: tuple[int, int, int]) -> bytes:
    """One task of the sweep ``assignments`` x ``seeds``, run as :func:`evolving_ttt.studies.rerun_check` runs a
    recorded one: its key, settings, measures and saved player (not its wall time or worker)."""
    from evolving_ttt.sweeps import grid_cells, parse_grid, run_sweep_task, sweep_definition, sweep_tasks
    from evolving_ttt.systems import get_system

    system = get_system(system_name)
    definition = sweep_definition(system, parse_grid(system, assignments), seeds)
    if key not in sweep_tasks(system, definition):
        raise ValueError(f"{key} is not a task of the sweep {definition}")
    cell, seed, task = key
    found = run_sweep_task(system.name, (cell, seed, task, grid_cells(system, definition["grid"])[cell]))
    return canonical_json({"key": list(found["key"]), "settings": found["settings"], "measures": found["measures"],
                           "player": found["player"]})  # fmt: skip


def fogel_sweep_task_part() -> bytes:
    """Cell 1 (spread 0.1), seed 2 of a sweep of one trial of 30 generations of 20 parents."""
    grid = ["parents=20", "generations=30", "trials=1", "mutation.weight_spread=0.05,0.1"]
    return _sweep_task_bytes("fogel", grid, 2, (1, 2, 0))


def mohammadi_sweep_task_part() -> bytes:
    """Cell 1 (bonuses as a tie-break), seed 2 of a sweep of small series."""
    grid = ["population=48", "generations=4", "runs=2", "seeds_kept=2", "best_candidates=4", "random_candidates=4",
            "bonus_role=added,tie_break"]  # fmt: skip
    return _sweep_task_bytes("mohammadi", grid, 2, (1, 2, 0))


def al_khateeb_sweep_task_part() -> bytes:
    """Cell 1 (rules judge winning moves), seed 2 of a sweep of one run of 40 generations."""
    grid = ["runs=1", "generations=40", "player.winning_moves=evaluator,rules"]
    return _sweep_task_bytes("al-khateeb", grid, 2, (1, 2, 0))


def ling_lam_run_part() -> bytes:
    """Ling and Lam's both methods, sequential hidden order: 3 runs of 400 iterations each."""
    from evolving_ttt.ling_lam.experiment import LingLamSettings
    from evolving_ttt.systems import get_system, run_system

    system = get_system("ling-lam")
    record = run_system(system, LingLamSettings(seeds=3, iterations=400, order="sequential"), seed=11)
    return _record_bytes(system, record)


def ling_lam_sweep_task_part() -> bytes:
    """Cell 1 (the baseline), seed 2 of a sweep of one run of 300 iterations on 25 positions, generational GA."""
    grid = ["seeds=1", "iterations=300", "training_count=25", "traditional.form=generational", "methods=nndtf,baseline"]
    return _sweep_task_bytes("ling-lam", grid, 2, (1, 2, 0))


def ling_lam_capacity_part() -> bytes:
    """A restart of the capacity fit for each network on the quiet positions, two stages of 40 iterations and a
    polish of two sweeps: the baseline, and the NNDTF with its transfer functions widened."""
    from evolving_ttt.ling_lam.capacity import fit_network, position_set

    positions = position_set("quiet games")
    data = b""
    for kind, target in (("baseline", 5), ("nndtf", 4)):
        fit = fit_network(kind, positions, np.random.default_rng([1, target, 0]), taus=(0.5, 0.05),
                          widths=(0.1, 0.02), max_iterations=40, polish_sweeps=2)  # fmt: skip
        data += canonical_json([fit.start_fitness, *fit.stage_fitness, fit.best_fitness, fit.polish_sweeps])
        data += array_bytes({"genes": fit.genes, "best": fit.best_genes})
    return data


def mcts_part() -> bytes:
    """Search trees of 100 and 1,000 simulations from four boards, two seeds each, and the count rows of 20 boards
    (10 for each side, spread over the board index) at 100 simulations, 100 searches per board, seed 1."""
    from evolving_ttt.game import O, X, board_from_string
    from evolving_ttt.mcts import mcts_counts, mcts_search
    from evolving_ttt.outcomes import boards_to_move

    named = {}
    for b, text in enumerate(("... ... ...", "X.. ... ...", "X.O .X. ...", "XO. .X. O..")):
        for simulations in (100, 1000):
            for seed in (1, 2):
                rng = np.random.RandomState(seed)
                tree = mcts_search(board_from_string(text), simulations, rng)
                key = f"{b}_{simulations}_{seed}"
                for field in ("action", "player", "visits", "reward", "outcome", "first", "count"):
                    named[f"{key}_{field}"] = getattr(tree, field)
                named[f"{key}_move"] = np.array([tree.move, tree.simulations, rng.get_state()[2]], np.int64)
                named[f"{key}_state"] = rng.get_state()[1]
    rows = np.concatenate([boards_to_move(X)[::240][:10], boards_to_move(O)[::200][:10]])
    named["counts_rows"] = rows
    named["counts"] = mcts_counts(rows, 100, 100, 1)
    return array_bytes(named)


def arena_yardsticks_part() -> bytes:
    """The arena's report of every system's saved players (``book/data``): every yardstick and their round robin."""
    from evolving_ttt.arena import arena_report
    from evolving_ttt.systems import registered_systems

    players = [player for system in registered_systems() for player in system.book_players()]
    return canonical_json(arena_report(players))


def glance_part() -> bytes:
    """The findings, read from the committed sweep databases and judged by the one verdict rule: the table at a
    glance and the Findings page as printed, then every claim's intervals and p values at full precision."""
    from evolving_ttt.studies import all_claims, at_a_glance, findings_markdown, glance_markdown
    from evolving_ttt.verdicts import verdict

    claims = all_claims()
    table = at_a_glance(claims)
    numbers = []
    for claim in claims:
        found = verdict(claim)
        cells = [[cell.sample.interval(), cell.sample.p_value(claim.threshold)] for cell in claim.cells]
        numbers.append([claim.claim, found.category, found.interval, found.holm_p, cells])
    return (glance_markdown(table) + findings_markdown(table)).encode() + canonical_json(numbers)


PARTS: dict[str, Callable[[], bytes]] = {
    "numerics": numerics_part,
    "fogel_run": fogel_run_part,
    "mohammadi_run": mohammadi_run_part,
    "fogel_sweep_task": fogel_sweep_task_part,
    "mohammadi_sweep_task": mohammadi_sweep_task_part,
    "al_khateeb_run": al_khateeb_run_part,
    "al_khateeb_sweep_task": al_khateeb_sweep_task_part,
    "ling_lam_run": ling_lam_run_part,
    "ling_lam_sweep_task": ling_lam_sweep_task_part,
    "ling_lam_capacity": ling_lam_capacity_part,
    "arena_yardsticks": arena_yardsticks_part,
    "glance": glance_part,
    "mcts": mcts_part,
}
"""The battery's parts, by name, in the order they run: each returns the bytes its hash is taken of."""


# --- What this process sees of the processor ------------------------------------------------------------------------


def _glibc_active() -> dict[str, bool] | None:
    """Whether glibc uses AVX2 and FMA (after ``GLIBC_TUNABLES``), from ``__x86_get_cpuid_feature_leaf`` (glibc 2.33
    and later, x86 only); ``None`` where it cannot tell."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        leaf = ctypes.CDLL(None).__x86_get_cpuid_feature_leaf
    except (AttributeError, OSError):
        return None

    class Registers(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint32) for name in ("eax", "ebx", "ecx", "edx")]

    class Feature(ctypes.Structure):
        _fields_ = [("cpuid", Registers), ("active", Registers)]

    leaf.restype, leaf.argtypes = ctypes.POINTER(Feature), [ctypes.c_uint]
    first, seventh = leaf(0).contents, leaf(1).contents  # cpuid leaf 1 (FMA: ecx bit 12), leaf 7 (AVX2: ebx bit 5)
    return {"FMA": bool(first.active.ecx >> 12 & 1), "AVX2": bool(seventh.active.ebx >> 5 & 1)}


def _openblas_core() -> str | None:
    """The kernel OpenBLAS picked (``OPENBLAS_CORETYPE`` overrides it), from numpy's bundled OpenBLAS; ``None`` if
    numpy's BLAS is another one."""
    folder = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for library in sorted(folder.glob("libscipy_openblas*")):
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"):
            try:
                function = getattr(ctypes.CDLL(str(library)), name)
            except (AttributeError, OSError):
                continue
            function.restype = ctypes.c_char_p
            return function().decode()
    return None


EMULATION_VARIABLES = ("NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "GLIBC_TUNABLES", "OPENBLAS_CORETYPE",
                       "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")  # fmt: skip
"""The environment variables that change what numpy, glibc, OpenBLAS or numba run on (tests/test_same_bits.py sets
them to emulate other processors)."""


def probe() -> dict:
    """What this process sees of the processor, for checking that an emulation took effect, and which of
    :data:`EMULATION_VARIABLES` its environment sets."""
    import numba
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return {
        "machine": platform.machine(),
        "numpy_dispatch": [target for target in __cpu_dispatch__ if __cpu_features__.get(target)],
        "glibc_active": _glibc_active(),
        "openblas_core": _openblas_core(),
        "numba_cpu": {"name": numba.config.CPU_NAME, "features": numba.config.CPU_FEATURES},
        "emulation_variables": {name: os.environ[name] for name in EMULATION_VARIABLES if name in os.environ},
    }


# --- The command ---------------------------------------------------------------------------------------------------


def _part_hash(name: str, dump: Path | None) -> tuple[str, float]:
    """The sha256 of part ``name`` and the CPU seconds it took; with ``dump``, its bytes are written there too."""
    start = time.process_time()
    data = PARTS[name]()
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / f"{name}.bin").write_bytes(data)
    return hashlib.sha256(data).hexdigest(), time.process_time() - start


LONGEST_PART = "ling_lam_run"
"""The part that takes longest (it compiles Ling and Lam's loops): with several processes it is started first."""


def run_battery(names: list[str], dump: Path | None = None, processes: int = 1) -> dict[str, str]:
    """The sha256 of every part in ``names``, in that order; with ``dump``, each part's bytes are also written there.

    With ``processes`` > 1 the parts are computed in that many processes at once (forked where the platform can),
    the longest first: each part's bits do not depend on the process that computes it.
    """
    found = {}

    def report(name: str, result: tuple[str, float]) -> None:
        found[name] = result
        print(f"{name}: {result[0][:16]} ({result[1]:.1f} s of CPU)", file=sys.stderr)

    if processes == 1:
        for name in names:
            report(name, _part_hash(name, dump))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        order = sorted(names, key=lambda name: name != LONGEST_PART)
        with ProcessPoolExecutor(processes, mp_context=context) as pool:
            futures = {pool.submit(_part_hash, name, dump): name for name in order}
            for future in as_completed(futures):
                report(futures[future], future.result())
    return {name: found[name][0] for name in names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the JSON file to write: {part: sha256 hex}")
    parser.add_argument("--refresh", action="store_true",
                        help="also write the committed file's note (kept from OUT if it has one)")  # fmt: skip
    parser.add_argument("--parts", help=f"comma-separated parts to compute (default all: {', '.join(PARTS)})")
    parser.add_argument("--dump", type=Path, help="write each part's hashed bytes to DUMP/PART.bin")
    parser.add_argument("--probe", type=Path, help="write what this process sees of the processor to this JSON file")
    parser.add_argument("--processes", type=int, default=1, help="compute this many parts at once (default 1)")
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error(f"--processes must be a whole number >= 1; got {args.processes}")
    names = list(PARTS) if args.parts is None else [name.strip() for name in args.parts.split(",")]
    unknown = [name for name in names if name not in PARTS]
    if unknown:
        parser.error(f"unknown parts {', '.join(unknown)}; the parts are {', '.join(PARTS)}")
    if args.refresh and args.parts is not None:
        parser.error("--refresh renews every hash: give no --parts")
    if args.probe is not None:
        args.probe.write_text(json.dumps(probe(), indent=1) + "\n")
    hashes = run_battery(names, args.dump, args.processes)
    if args.refresh:
        note = NOTE
        if args.out.is_file():
            note = json.loads(args.out.read_text()).get(NOTE_KEY, NOTE)
        hashes = {NOTE_KEY: note, **hashes}
    args.out.write_text(json.dumps(hashes, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
