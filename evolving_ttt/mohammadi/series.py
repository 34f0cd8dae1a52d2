"""Mohammadi et al. (2013): a series of runs with a judge between them, its record, and saved programs (chapter 19).

:class:`Coevolution` holds a series in progress: the population, the random generator and the record.
:meth:`Coevolution.run` plays one run of co-evolution; :meth:`Coevolution.judge` shows its candidates to a
judge and :meth:`Coevolution.reseed` starts the next population from the kept programs. :func:`evolve_series`
does all of it with the scripted judge; the interactive panel (:mod:`evolving_ttt.mohammadi.panel`) does it
with a person. :func:`run_series` caches whole series in the ``TTT_RUN_CACHE`` folder, as
:func:`evolving_ttt.fogel.evolution.run_experiment` does for Fogel's runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from deap import gp

from evolving_ttt.game import check_count, check_instance
from evolving_ttt.mohammadi.bitsets import BitsetTables, check_engine
from evolving_ttt.mohammadi.coevolution import (
    PAPER_MOHAMMADI,
    MohammadiSettings,
    TableCache,
    playat_bonus_counts,
    random_programs,
    round_robin_wins,
    sample_groups,
    tournament,
    vary,
)
from evolving_ttt.mohammadi.judge import OPPONENTS, choose_candidates, program_exact_results, scripted_judge
from evolving_ttt.mohammadi.programs import (
    NIL,
    TAKEN_READINGS,
    check_program,
    parse_program,
    playable_boards,
    playat_count,
    program_height,
    program_to_text,
)
from evolving_ttt.reading import SWEEP_PROVENANCE, Fields, read_record, settings_field
from evolving_ttt.records import check_path, write_checked
from evolving_ttt.run_cache import cached_run

GENERATION_STATISTICS = (
    "mean_fitness", "best_fitness", "mean_wins", "std_wins", "mean_playats", "root_playat", "single_root_playat",
    "no_playat", "mean_size", "no_move_rate",
)  # fmt: skip
"""What the record keeps for every generation, a value each (chapter 19).

Fitness is mean points per double game; wins are single games won in the generation's chains;
``root_playat`` is the share of programs whose root is a PLAY-AT, ``single_root_playat`` the share whose only
PLAY-AT is the root, ``no_playat`` the share
without any; ``no_move_rate`` the share of (program, board) pairs, over every board where a game goes on,
on which the program places no mark.
"""


@dataclass
class RunRecord:
    """The end of one run, as the judge saw it (chapter 19).

    Attributes
    ----------
    population : list of str
        The final population, as program texts.
    heights : (population,) int
        The height (depth of the deepest node) of each final program.
    fitness, wins : (population,)
        Mean points per double game and games won in the final generation's chains.
    round_robin : (population,)
        Games won when every pair of the final population plays a double game.
    candidates : (best + random,) int
        Indices of the programs shown to the judge: the fittest first, then random others.
    results : dict opponent -> (candidates, 2, 3)
        Exact (win, draw, loss) of each candidate as X and as O against each opponent of
        :data:`~evolving_ttt.mohammadi.judge.OPPONENTS`.
    kept : list of int
        The candidates (positions in ``candidates``) the judge kept; the scripted judge's ranking
        is in ``judge_order``.
    judge_order : list of int
        The scripted judge's ranking of the candidates (computed whoever judges).
    """

    population: list[str]
    heights: np.ndarray
    fitness: np.ndarray
    wins: np.ndarray
    round_robin: np.ndarray
    candidates: np.ndarray
    results: dict[str, np.ndarray]
    kept: list[int] = field(default_factory=list)
    judge_order: list[int] = field(default_factory=list)

    def candidate_texts(self) -> list[str]:
        """The candidates' programs, as text."""
        return [self.population[i] for i in self.candidates]

    def as_dict(self) -> dict:
        return {
            "population": self.population, "heights": self.heights.tolist(), "fitness": self.fitness.tolist(),
            "wins": self.wins.tolist(), "round_robin": self.round_robin.tolist(),
            "candidates": self.candidates.tolist(), "results": {k: v.tolist() for k, v in self.results.items()},
            "kept": list(self.kept), "judge_order": list(self.judge_order),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict, settings: MohammadiSettings = PAPER_MOHAMMADI) -> RunRecord:
        """The inverse of :meth:`as_dict` for a run of a series with settings ``settings``, every field checked as
        :func:`load_series` checks a file's (``ValueError`` naming the field)."""
        check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
        return _run_record(Path("data"), data, 1, settings)


@dataclass
class SeriesRecord:
    """Everything a series of runs leaves behind (chapter 19).

    ``statistics[name]`` has one value per generation of the whole series (``runs x generations``),
    for each name of :data:`GENERATION_STATISTICS`; ``runs`` holds a :class:`RunRecord` per run.
    """

    settings: MohammadiSettings
    seed: int
    statistics: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in GENERATION_STATISTICS})
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def config(self) -> MohammadiSettings:
        """The old name of :attr:`settings`, kept for one release (read-only)."""
        return self.settings

    def curve(self, name: str) -> np.ndarray:
        """One statistic over the generations of the series, shape (runs so far, generations)."""
        if name not in self.statistics:
            raise ValueError(f"no statistic {name!r}; the record has {GENERATION_STATISTICS}")
        return np.array(self.statistics[name]).reshape(-1, self.settings.generations)

    def champion(self) -> str:
        """The series' champion: the judge's favourite kept program of the last run, or its fittest program
        when nobody judged (``judge="none"``)."""
        last = self.runs[-1]
        return last.population[last.candidates[series_provenance(self)["candidate"]]]

    def as_dict(self) -> dict:
        return {"settings": self.settings.as_dict(), "seed": self.seed, "statistics": self.statistics,
                "runs": [r.as_dict() for r in self.runs]}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> SeriesRecord:
        """The inverse of :meth:`as_dict`, every field checked as :func:`load_series` checks a file's."""
        return _series_record(Path("data"), data, SERIES_VERSION)


def generation_statistics(programs, tables: np.ndarray, result, playats: np.ndarray | None = None) -> dict[str, float]:
    """The values of :data:`GENERATION_STATISTICS` for one evaluated generation (chapter 19).

    ``playats``: the programs' PLAY-AT counts if known (:attr:`~evolving_ttt.mohammadi.bitsets.BitsetTables.playats`);
    by default they are counted.
    """
    playats = np.array([playat_count(p) for p in programs]) if playats is None else np.asarray(playats)
    if len(playats) != len(programs):
        raise ValueError(f"playats must hold one PLAY-AT count per program ({len(programs)}); got {len(playats)}")
    root_playat = np.array([p[0].name == "PLAY-AT" for p in programs])
    playable, _ = playable_boards()
    return {
        "mean_fitness": float(result.fitness.mean()), "best_fitness": float(result.fitness.max()),
        "mean_wins": float(result.wins.mean()), "std_wins": float(result.wins.std()),
        "mean_playats": float(playats.mean()), "root_playat": float(root_playat.mean()),
        "single_root_playat": float(np.mean(root_playat & (playats == 1))),
        "no_playat": float(np.mean(playats == 0)), "mean_size": float(np.mean([len(p) for p in programs])),
        "no_move_rate": float(np.mean(tables[:, playable] == NIL)),
    }  # fmt: skip


class Coevolution:
    """A series of runs in progress: population, generator and record (chapter 19).

    Parameters
    ----------
    settings
        The settings.
    seed
        Seed of the one ``numpy.random.Generator`` every random choice of the series comes from.
    engine
        How move tables are built (:data:`~evolving_ttt.mohammadi.bitsets.ENGINES`): "bitsets", the fast engine
        (the default), or "batched", chapter 18's batched interpreter. The record is the same, bit for bit.
    """

    def __init__(self, settings: MohammadiSettings = PAPER_MOHAMMADI, seed: int = 1, engine: str = "bitsets") -> None:
        if not isinstance(settings, MohammadiSettings):
            raise ValueError(f"settings must be a MohammadiSettings; got {type(settings).__name__}")
        self.settings = settings
        self.seed = check_count(seed, "seed", minimum=0)
        self.engine = check_engine(engine)
        self.rng = np.random.default_rng(seed)
        self.record = SeriesRecord(settings, self.seed)
        self.population: list[gp.PrimitiveTree] = random_programs(self.rng, settings.population, settings.initial_depth)
        self._tables = BitsetTables() if engine == "bitsets" else TableCache()

    @property
    def config(self) -> MohammadiSettings:
        """The old name of :attr:`settings`, kept for one release (read-only)."""
        return self.settings

    def generation(self):
        """Evaluate the population by its chains, record it, and return the :class:`Tournament`."""
        settings = self.settings
        tables = self._tables.of(self.population, settings.taken)
        counts = self._tables.playats if self.engine == "bitsets" else None  # the batched engine counts them
        playats = playat_bonus_counts(self.population, settings, counts)
        groups = sample_groups(self.rng, settings.population, settings.group_size)
        result = tournament(tables, playats, groups, settings)
        for name, value in generation_statistics(self.population, tables, result, counts).items():
            self.record.statistics[name].append(value)
        return result, tables

    def run(self, progress=None) -> RunRecord:
        """One run: ``generations`` evaluations with variation between them; then the candidates, measured.

        ``progress`` is called with no argument after each generation (for a progress bar).
        """
        settings = self.settings
        result, tables = self.generation()
        for _ in range(settings.generations - 1):
            if progress is not None:
                progress()
            self.population = vary([self.population[i] for i in result.winners], self.rng, settings)
            result, tables = self.generation()
        if progress is not None:
            progress()
        candidates = choose_candidates(result.fitness, self.rng, settings.best_candidates, settings.random_candidates)
        results = {kind: program_exact_results(tables[candidates], kind) for kind in OPPONENTS}
        sizes = [len(self.population[i]) for i in candidates]
        verdict = scripted_judge(results["perfect"], results["random"], sizes, settings.seeds_kept)
        record = RunRecord(
            population=[program_to_text(p) for p in self.population],
            heights=np.array([program_height(p) for p in self.population]), fitness=result.fitness, wins=result.wins,
            round_robin=round_robin_wins(tables), candidates=candidates, results=results,
            judge_order=[int(k) for k in verdict.order],
        )  # fmt: skip
        self.record.runs.append(record)
        return record

    def judge(self) -> list[int]:
        """The configured judge's picks among the last run's candidates (positions in its candidate list)."""
        last = self.record.runs[-1]
        keep = self.settings.seeds_kept
        if self.settings.judge == "perfect":
            kept = last.judge_order[:keep]
        elif self.settings.judge == "random":
            kept = sorted(int(k) for k in self.rng.choice(len(last.candidates), size=keep, replace=False))
        else:
            kept = []
        last.kept = list(kept)
        return list(kept)

    def reseed(self, kept: list[int] | None) -> None:
        """Start the next run: the kept candidates and new random programs (chapter 19).

        ``kept`` lists positions in the last run's candidate list. With ``None`` (nobody judges) the
        population carries on unchanged.
        """
        if kept is None:
            return
        last = self.record.runs[-1]
        for k in kept:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(last.candidates):
                raise ValueError(f"kept must list candidate positions 0 to {len(last.candidates) - 1}; got {k!r}")
        if len(set(kept)) != len(kept):
            raise ValueError(f"kept lists a candidate twice: {kept}")
        if len(kept) > self.settings.population:
            raise ValueError(f"cannot keep {len(kept)} programs in a population of {self.settings.population}")
        last.kept = [int(k) for k in kept]
        seeds = [parse_program(last.population[last.candidates[k]]) for k in kept]
        fresh = random_programs(self.rng, self.settings.population - len(seeds), self.settings.initial_depth)
        self.population = seeds + fresh


def evolve_series(
    settings: MohammadiSettings = PAPER_MOHAMMADI, seed: int = 1, progress: bool | str = True, engine: str = "bitsets"
):
    """A whole series with the configured judge between runs; returns its :class:`SeriesRecord` (chapter 19).

    ``progress``: False for none, True for a tqdm bar, or a string to label it. ``engine``: how move tables are
    built (:class:`Coevolution`); either gives the same record.
    """
    _check_progress(progress)
    series = Coevolution(settings, seed, engine)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        label = progress if isinstance(progress, str) else f"{settings.judge} judge, seed {seed}"
        bar = tqdm(total=settings.runs * settings.generations, desc=label, unit="gen")
    try:
        for run in range(settings.runs):
            series.run(progress=bar.update if bar is not None else None)
            kept = series.judge()
            if run + 1 < settings.runs:
                series.reseed(kept if settings.judge != "none" else None)
    finally:
        if bar is not None:
            bar.close()
    return series.record


SERIES_FORMAT = "mohammadi-series"
"""The ``format`` field of a series record (chapter 19). Earlier files, without a format field, lived only in the run
cache, which a change of the package empties."""

SERIES_VERSION = 2
"""The ``version`` :func:`save_series` writes; :func:`load_series` reads 1 and 2, which differ only in the name of the
settings' field (``config`` in version 1, ``settings`` in version 2)."""

SHARE_STATISTICS = ("root_playat", "single_root_playat", "no_playat", "no_move_rate")
"""The statistics of :data:`GENERATION_STATISTICS` that are shares, between 0 and 1."""


def _check_progress(progress: object) -> None:
    if not isinstance(progress, (bool, str)):
        raise ValueError(f"progress must be True, False or a label (a str); got {type(progress).__name__}")


def _to_json(data: dict, path: str | Path) -> str:
    try:
        return json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path} was not written: what it would hold is not plain JSON ({error})") from None


def save_series(record: SeriesRecord, path: str | Path) -> None:
    """Write a series record as JSON, whole or not at all, at exactly ``path`` (chapter 19).

    Fields: ``format`` (``"mohammadi-series"``), ``version`` (2), then those of :meth:`SeriesRecord.as_dict`:
    ``settings``, ``seed``, ``statistics`` and ``runs``. The record is checked by :func:`load_series`'s rules
    first: a record the loader would refuse raises ``ValueError`` and writes nothing.
    """
    check_instance(record, SeriesRecord, "record", "a SeriesRecord (evolve_series returns one)")
    path = check_path(path)
    try:
        data = record.as_dict()
    except (AttributeError, TypeError, ValueError) as error:
        raise ValueError(f"record is not a complete series record ({error})") from None
    text = _to_json({"format": SERIES_FORMAT, "version": SERIES_VERSION, **data}, path)
    write_checked(path, text, load_series, "series record")


def _numbers(fields: Fields, name: str, value: object, ndim: int) -> None:
    """Refuse anything but (nested lists of) numbers, ``ndim`` deep: no booleans, texts or null (one pass)."""
    level = [value]
    for _ in range(ndim):
        if not all(isinstance(item, list) for item in level):
            raise fields.fail(name, f"must be a list {ndim} deep of numbers")
        level = [item for items in level for item in items]
    if not all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in level):
        raise fields.fail(name, "must hold only numbers (no true/false, texts or null)")


def _integers(fields: Fields, name: str, low: int, high: int, length: int | None = None) -> list[int]:
    value = fields.get(name)
    if not isinstance(value, list) or not all(isinstance(k, int) and not isinstance(k, bool) for k in value):
        raise fields.fail(name, "must be a list of whole numbers")
    if length is not None and len(value) != length:
        raise fields.fail(name, f"must hold {length} numbers; it holds {len(value)}")
    if any(not low <= k <= high for k in value):
        raise fields.fail(name, f"must hold numbers from {low} to {high}")
    if len(set(value)) != len(value):
        raise fields.fail(name, "lists a number twice")
    return [int(k) for k in value]


def _array(fields: Fields, name: str, kind: str, shape: tuple, low: float | None = None, high: float | None = None):
    if 0 in shape and fields.get(name) == []:  # no candidates: JSON keeps no trace of the other axes
        return np.zeros(shape, dtype=np.int64 if kind == "i" else float)
    _numbers(fields, name, fields.get(name), len(shape))
    return fields.array(name, kind, shape, low, high)


RUN_FIELDS = ("population", "heights", "fitness", "wins", "round_robin", "candidates", "results", "kept",
              "judge_order")  # fmt: skip


def _run_record(path: Path, data: object, run: int, settings: MohammadiSettings) -> RunRecord:
    """Run ``run`` of a series file, every field checked against the settings."""
    fields = Fields(path, data, f"series record, run {run}")
    unknown = sorted(map(str, set(fields.data) - set(RUN_FIELDS)))
    if unknown:
        raise fields.fail(unknown[0], "is not a field of a run")
    n = settings.population
    population = fields.get("population")
    if not isinstance(population, list) or len(population) != n:
        raise fields.fail("population", f"must be a list of the {n} programs' texts")
    programs = []
    for k, text in enumerate(population):
        if not isinstance(text, str):
            raise fields.fail("population", f"must hold program texts; program {k} is {type(text).__name__}")
        try:
            programs.append(parse_program(text))
        except ValueError as error:
            raise fields.fail("population", f"program {k}: {error}") from None
    heights = _array(fields, "heights", "i", (n,), 0)
    if heights.tolist() != [program_height(program) for program in programs]:
        raise fields.fail("heights", "does not match the programs' heights")
    shown = settings.best_candidates + settings.random_candidates
    candidates = _integers(fields, "candidates", 0, n - 1, shown)
    results = fields.get("results")
    if not isinstance(results, dict) or sorted(results) != sorted(OPPONENTS):
        raise fields.fail("results", f"must be an object with the opponents {list(OPPONENTS)}")
    checked = {}
    for opponent in OPPONENTS:
        where = Fields(path, results, f"series record, run {run}, results")
        probabilities = _array(where, opponent, "f", (shown, 2, 3), 0.0, 1.0)
        if not np.allclose(probabilities.sum(axis=2), 1.0, rtol=0, atol=1e-9):
            raise where.fail(opponent, "must hold (win, draw, loss) probabilities that sum to 1")
        checked[opponent] = probabilities
    order = _integers(fields, "judge_order", 0, shown - 1, shown)
    kept = _integers(fields, "kept", 0, shown - 1)
    return RunRecord(
        population=list(population), heights=heights, fitness=_array(fields, "fitness", "f", (n,), 0.0),
        wins=_array(fields, "wins", "i", (n,), 0), round_robin=_array(fields, "round_robin", "f", (n,), 0, 2 * (n - 1)),
        candidates=np.array(candidates, dtype=int), results=checked, kept=kept, judge_order=order,
    )  # fmt: skip


def load_series(path: str | Path) -> SeriesRecord:
    """Read a series record written by :func:`save_series` (chapter 19), checking every field.

    Raises
    ------
    ValueError
        Naming the file and the field: a missing or unreadable file, not JSON, not a series record (a file
        without the ``format`` field included), a version other than 1 and 2, or a field that is missing, of the
        wrong type or shape, out of range, or inconsistent with the settings (so many programs, runs, generations);
        settings under the other version's name (``config`` in version 1, ``settings`` in version 2).
    """
    path = check_path(path)
    record = read_record(path, SERIES_FORMAT, "a series record written by save_series", SERIES_VERSION, oldest=1)
    return _series_record(path, record, record["version"])


def _series_record(path: Path, record: object, version: int) -> SeriesRecord:
    """The series record of ``version`` in the JSON object ``record`` (read from ``path``), every field checked."""
    fields = Fields(path, record, "series record")
    name = settings_field(fields, version, 2)
    unknown = sorted(map(str, set(record) - {"format", "version", name, "seed", "statistics", "runs"}))
    if unknown:
        raise fields.fail(unknown[0], "is not a field of a series record")
    settings = fields.config(name, MohammadiSettings)
    seed = fields.integer("seed", 0)
    runs = fields.get("runs")
    if not isinstance(runs, list) or not 1 <= len(runs) <= settings.runs:
        raise fields.fail("runs", f"must be a list of 1 to {settings.runs} runs (the settings' runs)")
    statistics = fields.get("statistics")
    if not isinstance(statistics, dict) or sorted(statistics) != sorted(GENERATION_STATISTICS):
        raise fields.fail("statistics", f"must be an object with exactly the statistics {list(GENERATION_STATISTICS)}")
    where = Fields(path, statistics, "series record, statistics")
    generations = len(runs) * settings.generations
    checked = {}
    for name in GENERATION_STATISTICS:
        high = 1.0 if name in SHARE_STATISTICS else None
        checked[name] = _array(where, name, "f", (generations,), 0.0, high).tolist()
    return SeriesRecord(settings, seed, checked, [_run_record(path, r, k + 1, settings) for k, r in enumerate(runs)])


def run_series(settings: MohammadiSettings = PAPER_MOHAMMADI, seed: int = 1, progress: bool | str = True):
    """:func:`evolve_series`, shared within a build through the ``TTT_RUN_CACHE`` folder (chapter 19).

    As :func:`evolving_ttt.fogel.evolution.run_experiment`: when the variable names a folder, a finished
    series is saved there under a name derived from its settings and seed and read back by later calls.
    """
    check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
    seed = check_count(seed, "seed", minimum=0)
    _check_progress(progress)
    key = {"mohammadi": settings.as_dict(), "seed": int(seed)}
    compute = lambda: evolve_series(settings, seed, progress)
    return cached_run("mohammadi", key, ".json", compute, save_series, load_series)


def series_provenance(record: SeriesRecord) -> dict:
    """Where a series' champion comes from, for :func:`save_program` (chapter 19)."""
    check_instance(record, SeriesRecord, "record", "a SeriesRecord")
    if not record.runs or not len(record.runs[-1].candidates):
        raise ValueError("record has no champion: its last run showed no candidates (or it has no run)")
    last = record.runs[-1]
    position = last.kept[0] if record.settings.judge == "perfect" and last.kept else 0
    perfect, random = last.results["perfect"][position], last.results["random"][position]
    judged = record.settings.judge == "perfect" and bool(last.kept)
    how = "the scripted judge's first pick" if judged else "the fittest program of the last generation"
    return {
        "seed": record.seed, "settings": record.settings.as_dict(), "run": len(record.runs),
        "candidate": int(position), "chosen_as": how,
        "losses_to_perfect": float(perfect[:, 2].sum()), "wins_against_random": float(random[:, 0].sum()),
    }  # fmt: skip


# --- The champion file ---------------------------------------------------------------------------------------------

DEFAULT_PROGRAM = Path(__file__).resolve().parents[2] / "book" / "data" / "mohammadi_champion.json"
"""Where chapter 19's champion is saved (chapter 19)."""


def series_games(settings: MohammadiSettings) -> int:
    """Games a series plays in its chains: runs x generations x population x group size x 2 (chapter 19)."""
    check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
    return settings.runs * settings.generations * settings.population * settings.group_size * 2


PROGRAM_FORMAT = "mohammadi-ttt-program"
"""The ``format`` field of a saved program (chapter 19)."""

PROGRAM_VERSION = 1
"""The ``version`` of a saved program, the only one. Its provenance may hold settings under two names, both read as
:class:`MohammadiSettings`: ``settings`` (what :func:`series_provenance` and a sweep's task write) and ``config``
(the name :func:`series_provenance` wrote before; the book's committed champion holds it). The rename needed no new
version: version 1 already had ``settings``, and the players a sweep saved in the studies' databases stay the same
bytes, which the build's re-runs of sweep tasks compare."""

PROGRAM_PROVENANCE = {
    "counts": ("run", "candidate", *SWEEP_PROVENANCE), "texts": ("chosen_as",),
    "numbers": ("losses_to_perfect", "wins_against_random"), "settings": {"settings": MohammadiSettings,
                                                                          "config": MohammadiSettings},
}  # fmt: skip
"""The provenance fields of a saved program that :func:`load_program` checks when present
(:meth:`~evolving_ttt.reading.Fields.provenance`): those of :func:`series_provenance` and of a sweep's task (and, in a
file written before, ``config``: a :class:`MohammadiSettings` too)."""


def save_program(program: gp.PrimitiveTree | str, path: str | Path, **provenance) -> None:
    """Save a program as JSON: its text, which :func:`parse_program` reads back, and its provenance (chapter 19).

    The file holds ``{"format": "mohammadi-ttt-program", "version": 1, "program": "PLAY-AT(...)",
    "provenance": {...}}``; the provenance is JSON (seed, settings, how it was chosen), kept apart from the
    format's own fields; the fields :func:`load_program` knows must be of their type. Written whole or not at all,
    at exactly ``path``, once :func:`load_program` reads it back: a program taller than
    :data:`~evolving_ttt.mohammadi.programs.PROGRAM_HEIGHT_LIMIT`, or a provenance that is not plain JSON or has a
    known field of the wrong type, raises ``ValueError`` and writes nothing.
    """
    if isinstance(program, str):
        text = program
        parse_program(text)
    else:
        check_program(program)
        text = program_to_text(program)
    path = check_path(path)
    data = {"format": PROGRAM_FORMAT, "version": PROGRAM_VERSION, "program": text, "provenance": provenance}
    try:
        encoded = json.dumps(data, indent=1, allow_nan=False) + "\n"
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path} was not written: the provenance is not plain JSON ({error})") from None
    write_checked(path, encoded, load_program, "saved program")


def load_program(path: str | Path) -> tuple[gp.PrimitiveTree, dict]:
    """Read a program saved by :func:`save_program`; returns ``(program, provenance)`` (chapter 19).

    The provenance the book's savers write is checked where present (:data:`PROGRAM_PROVENANCE`): ``taken`` one
    of :data:`~evolving_ttt.mohammadi.programs.TAKEN_READINGS`, ``settings`` an object of :class:`MohammadiSettings`
    settings, ``seed``, ``run``, ``candidate``, ``sweep_cell`` and ``task`` whole numbers, ``chosen_as`` a text,
    ``losses_to_perfect`` and ``wins_against_random`` numbers; ``config``, the older name of the series' settings
    (the book's champion holds it), is checked the same way (:data:`PROGRAM_VERSION`). A
    player's reading comes from them (``taken``, else the settings'), so a field of the wrong type is refused,
    never replaced by a default.

    Raises
    ------
    ValueError
        Naming the file and what is wrong: not JSON, another format or version, a missing field, a provenance
        field of the wrong type, or a program text that does not parse (with the character where it fails) or is
        taller than :data:`~evolving_ttt.mohammadi.programs.PROGRAM_HEIGHT_LIMIT`.
    """
    path = check_path(path)
    data = read_record(path, PROGRAM_FORMAT, "a saved program", PROGRAM_VERSION)
    if not isinstance(data.get("program"), str):
        raise ValueError(f'{path}: "program" must be the program\'s text, such as "PLAY-AT(pos11)"')
    provenance = data.get("provenance", {})
    if not isinstance(provenance, dict):
        raise ValueError(f'{path}: "provenance" must be a JSON object')
    fields = Fields(path, provenance, "saved program, provenance")
    fields.optional(fields.text, "taken", TAKEN_READINGS)
    fields.provenance(**PROGRAM_PROVENANCE)
    try:
        program = parse_program(data["program"])
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return program, provenance
