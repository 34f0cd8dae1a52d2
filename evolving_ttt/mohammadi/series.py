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

from evolving_ttt.game import check_count
from evolving_ttt.mohammadi.coevolution import (
    PAPER_MOHAMMADI,
    MohammadiConfig,
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
    parse_program,
    playable_boards,
    playat_count,
    program_height,
    program_to_text,
)
from evolving_ttt.records import cached_run, read_record

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
    def from_dict(cls, data: dict) -> RunRecord:
        return cls(
            population=list(data["population"]), heights=np.array(data["heights"], dtype=int),
            fitness=np.array(data["fitness"]), wins=np.array(data["wins"]),
            round_robin=np.array(data["round_robin"]), candidates=np.array(data["candidates"], dtype=int),
            results={k: np.array(v) for k, v in data["results"].items()}, kept=list(data["kept"]),
            judge_order=list(data["judge_order"]),
        )  # fmt: skip


@dataclass
class SeriesRecord:
    """Everything a series of runs leaves behind (chapter 19).

    ``statistics[name]`` has one value per generation of the whole series (``runs x generations``),
    for each name of :data:`GENERATION_STATISTICS`; ``runs`` holds a :class:`RunRecord` per run.
    """

    config: MohammadiConfig
    seed: int
    statistics: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in GENERATION_STATISTICS})
    runs: list[RunRecord] = field(default_factory=list)

    def curve(self, name: str) -> np.ndarray:
        """One statistic over the generations of the series, shape (runs so far, generations)."""
        if name not in self.statistics:
            raise ValueError(f"no statistic {name!r}; the record has {GENERATION_STATISTICS}")
        return np.array(self.statistics[name]).reshape(-1, self.config.generations)

    def champion(self) -> str:
        """The series' champion: the judge's favourite kept program of the last run, or its fittest program
        when nobody judged (``judge="none"``)."""
        last = self.runs[-1]
        return last.population[last.candidates[series_provenance(self)["candidate"]]]

    def as_dict(self) -> dict:
        return {"config": self.config.as_dict(), "seed": self.seed, "statistics": self.statistics,
                "runs": [r.as_dict() for r in self.runs]}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> SeriesRecord:
        return cls(config=MohammadiConfig.from_dict(data["config"]), seed=int(data["seed"]),
                   statistics={k: list(v) for k, v in data["statistics"].items()},
                   runs=[RunRecord.from_dict(r) for r in data["runs"]])  # fmt: skip


def generation_statistics(programs, tables: np.ndarray, result) -> dict[str, float]:
    """The values of :data:`GENERATION_STATISTICS` for one evaluated generation (chapter 19)."""
    playats = np.array([playat_count(p) for p in programs])
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
    config
        The settings.
    seed
        Seed of the one ``numpy.random.Generator`` every random choice of the series comes from.
    """

    def __init__(self, config: MohammadiConfig = PAPER_MOHAMMADI, seed: int = 1) -> None:
        if not isinstance(config, MohammadiConfig):
            raise ValueError(f"config must be a MohammadiConfig; got {type(config).__name__}")
        self.config = config
        self.seed = check_count(seed, "seed", minimum=0)
        self.rng = np.random.default_rng(seed)
        self.record = SeriesRecord(config, self.seed)
        self.population: list[gp.PrimitiveTree] = random_programs(self.rng, config.population, config.initial_depth)
        self._tables = TableCache()

    def generation(self):
        """Evaluate the population by its chains, record it, and return the :class:`Tournament`."""
        config = self.config
        tables = self._tables.of(self.population, config.taken)
        playats = playat_bonus_counts(self.population, config)
        groups = sample_groups(self.rng, config.population, config.group_size)
        result = tournament(tables, playats, groups, config)
        for name, value in generation_statistics(self.population, tables, result).items():
            self.record.statistics[name].append(value)
        return result, tables

    def run(self, progress=None) -> RunRecord:
        """One run: ``generations`` evaluations with variation between them; then the candidates, measured.

        ``progress`` is called with no argument after each generation (for a progress bar).
        """
        config = self.config
        result, tables = self.generation()
        for _ in range(config.generations - 1):
            if progress is not None:
                progress()
            self.population = vary([self.population[i] for i in result.winners], self.rng, config)
            result, tables = self.generation()
        if progress is not None:
            progress()
        candidates = choose_candidates(result.fitness, self.rng, config.best_candidates, config.random_candidates)
        results = {kind: program_exact_results(tables[candidates], kind) for kind in OPPONENTS}
        sizes = [len(self.population[i]) for i in candidates]
        verdict = scripted_judge(results["perfect"], results["random"], sizes, config.seeds_kept)
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
        keep = self.config.seeds_kept
        if self.config.judge == "perfect":
            kept = last.judge_order[:keep]
        elif self.config.judge == "random":
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
        if len(kept) > self.config.population:
            raise ValueError(f"cannot keep {len(kept)} programs in a population of {self.config.population}")
        last.kept = [int(k) for k in kept]
        seeds = [parse_program(last.population[last.candidates[k]]) for k in kept]
        fresh = random_programs(self.rng, self.config.population - len(seeds), self.config.initial_depth)
        self.population = seeds + fresh


def evolve_series(config: MohammadiConfig = PAPER_MOHAMMADI, seed: int = 1, progress: bool | str = True):
    """A whole series with the configured judge between runs; returns its :class:`SeriesRecord` (chapter 19).

    ``progress``: False for none, True for a tqdm bar, or a string to label it.
    """
    series = Coevolution(config, seed)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        label = progress if isinstance(progress, str) else f"{config.judge} judge, seed {seed}"
        bar = tqdm(total=config.runs * config.generations, desc=label, unit="gen")
    try:
        for run in range(config.runs):
            series.run(progress=bar.update if bar is not None else None)
            kept = series.judge()
            if run + 1 < config.runs:
                series.reseed(kept if config.judge != "none" else None)
    finally:
        if bar is not None:
            bar.close()
    return series.record


def save_series(record: SeriesRecord, path: str | Path) -> None:
    """Write a series record as JSON (chapter 19)."""
    Path(path).write_text(json.dumps(record.as_dict()))


def load_series(path: str | Path) -> SeriesRecord:
    """Read a series record written by :func:`save_series` (chapter 19)."""
    try:
        data = json.loads(Path(path).read_text())
        return SeriesRecord.from_dict(data)
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a series record written by save_series ({error})") from None


def run_series(config: MohammadiConfig = PAPER_MOHAMMADI, seed: int = 1, progress: bool | str = True):
    """:func:`evolve_series`, shared within a build through the ``TTT_RUN_CACHE`` folder (chapter 19).

    As :func:`evolving_ttt.fogel.evolution.run_experiment`: when the variable names a folder, a finished
    series is saved there under a name derived from its settings and seed and read back by later calls.
    """
    key = {"mohammadi": config.as_dict(), "seed": int(seed)}
    compute = lambda: evolve_series(config, seed, progress)
    return cached_run("mohammadi", key, ".json", compute, save_series, load_series)


def series_provenance(record: SeriesRecord) -> dict:
    """Where a series' champion comes from, for :func:`save_program` (chapter 19)."""
    last = record.runs[-1]
    position = last.kept[0] if record.config.judge == "perfect" and last.kept else 0
    perfect, random = last.results["perfect"][position], last.results["random"][position]
    judged = record.config.judge == "perfect" and bool(last.kept)
    how = "the scripted judge's first pick" if judged else "the fittest program of the last generation"
    return {
        "seed": record.seed, "config": record.config.as_dict(), "run": len(record.runs),
        "candidate": int(position), "chosen_as": how,
        "losses_to_perfect": float(perfect[:, 2].sum()), "wins_against_random": float(random[:, 0].sum()),
    }  # fmt: skip


# --- The champion file ---------------------------------------------------------------------------------------------

DEFAULT_PROGRAM = Path(__file__).resolve().parents[2] / "book" / "data" / "mohammadi_champion.json"
"""Where chapter 19's champion is saved (chapter 19)."""


def series_games(config: MohammadiConfig) -> int:
    """Games a series plays in its chains: runs x generations x population x group size x 2 (chapter 19)."""
    return config.runs * config.generations * config.population * config.group_size * 2


PROGRAM_FORMAT = "mohammadi-ttt-program"
"""The ``format`` field of a saved program (chapter 19)."""


def save_program(program: gp.PrimitiveTree | str, path: str | Path, **provenance) -> None:
    """Save a program as JSON: its text, which :func:`parse_program` reads back, and its provenance (chapter 19).

    The file holds ``{"format": "mohammadi-ttt-program", "version": 1, "program": "PLAY-AT(...)",
    "provenance": {...}}``; the provenance is free-form JSON (seed, settings, how it was chosen).
    """
    text = program if isinstance(program, str) else program_to_text(program)
    parse_program(text)  # never write a file that cannot be read back
    data = {"format": PROGRAM_FORMAT, "version": 1, "program": text, "provenance": provenance}
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def load_program(path: str | Path) -> tuple[gp.PrimitiveTree, dict]:
    """Read a program saved by :func:`save_program`; returns ``(program, provenance)`` (chapter 19).

    Raises
    ------
    ValueError
        Naming the file and what is wrong: not JSON, another format or version, a missing field, or a
        program text that does not parse (with the character where it fails).
    """
    data = read_record(path, PROGRAM_FORMAT, "a saved program")
    if not isinstance(data.get("program"), str):
        raise ValueError(f'{path}: "program" must be the program\'s text, such as "PLAY-AT(pos11)"')
    provenance = data.get("provenance", {})
    if not isinstance(provenance, dict):
        raise ValueError(f'{path}: "provenance" must be a JSON object')
    try:
        program = parse_program(data["program"])
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return program, provenance
