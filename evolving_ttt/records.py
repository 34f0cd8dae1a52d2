"""The book's files: its JSON data files, the benchmarks' figures, and the cache that shares long runs (chapter 6).

Each system saves its players in ``book/data/`` as JSON with a ``format`` name and a ``version``. Reading one
begins with the same three checks, defined here once: the file can be read and is JSON, it is a file of the
expected format, and of a version this code reads. The system's loader then checks its own fields.

The scripts in ``bench/`` record their headline figures in ``bench/results/`` (:func:`save_benchmark`), and the
chapters that quote a wall time read it from there (:func:`load_benchmark`) rather than typing it.

Several chapters of one build need the same long run. :func:`cached_run` computes it once per build and shares
it through the folder named by ``TTT_RUN_CACHE``; every system's ``run_*`` function goes through it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

Run = TypeVar("Run")

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
"""The folder of the book's saved players and results (every system chapter writes its players there)."""

BENCH_RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
"""The folder where the benchmark scripts record their figures (one ``NAME.json`` per script ``bench/NAME.py``)."""

BENCHMARK_FORMAT = "ttt-benchmark"
"""The ``format`` field of a benchmark's figures file."""

RUN_CACHE_VARIABLE = "TTT_RUN_CACHE"
"""The environment variable naming the folder where the chapters of one build share long runs (chapter 6)."""


def read_record(path: str | Path, file_format: str, kind: str, version: int = 1) -> dict:
    """The JSON object in ``path`` after checking that it is a ``kind`` of format ``file_format``, version ``version``.

    Raises
    ------
    ValueError
        Naming the file and what is wrong: it cannot be read, is not JSON, is another format or another version.
    """
    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except OSError as error:
        raise ValueError(f"{path} could not be read: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(record, dict) or record.get("format") != file_format:
        raise ValueError(f'{path} is not {kind}: it needs "format": "{file_format}"')
    if record.get("version") != version:
        raise ValueError(f"{path}: unsupported version {record.get('version')!r}; this code reads version {version}")
    return record


def _check_figures(figures: object, where: str) -> dict[str, float | list[float]]:
    if not isinstance(figures, dict) or not figures:
        raise ValueError(f"{where}: figures must be a non-empty mapping from names to numbers")
    for key, value in figures.items():
        values = value if isinstance(value, list) else [value]
        if not isinstance(key, str) or not values or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
        ):
            raise ValueError(f"{where}: figure {key!r} must be a finite number or a list of them; got {value!r}")
    return figures


def save_benchmark(name: str, figures: dict[str, float | list[float]], folder: str | Path = BENCH_RESULTS) -> Path:
    """Record the figures of ``bench/{name}.py`` as ``{folder}/{name}.json`` (written whole or not at all)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a benchmark script's name such as 'ling_lam'; got {name!r}")
    figures = _check_figures(dict(figures), f"benchmark {name}")
    path = Path(folder) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"format": BENCHMARK_FORMAT, "version": 1, "script": f"bench/{name}.py", "cores": os.cpu_count(),
              "figures": figures}  # fmt: skip
    partial = path.with_name(f"{name}.partial.json")
    partial.write_text(json.dumps(record, indent=1) + "\n")
    partial.replace(path)
    return path


def load_benchmark(name: str, folder: str | Path = BENCH_RESULTS) -> dict[str, float | list[float]]:
    """The figures ``bench/{name}.py`` last recorded (chapter 20 quotes the systems' wall times from them).

    Raises
    ------
    ValueError
        Naming the file when it is missing, not a benchmark's figures, or holds anything but finite numbers.
    """
    path = Path(folder) / f"{name}.json"
    record = read_record(path, BENCHMARK_FORMAT, "a benchmark's figures")
    return _check_figures(record.get("figures"), str(path))


def cached_run(
    name: str, key: dict, suffix: str, compute: Callable[[], Run], save: Callable[[Run, Path], None],
    load: Callable[[Path], Run],
) -> Run:
    """``compute()``, shared within a build through the folder named by ``TTT_RUN_CACHE`` (chapter 6).

    Without the variable (a reader running a chapter) the run is always computed. With it, the run is saved
    as ``{name}-{hash of key}{suffix}`` and a later call with the same ``key`` reads it back instead. ``make
    test`` points the variable at a folder it empties first, so that it computes every run once; ``make book``
    keeps the folder until the code changes. The file is written under a temporary name and then renamed: a
    complete file or none, safe if two processes race.
    """
    folder = os.environ.get(RUN_CACHE_VARIABLE)
    if not folder:
        return compute()
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    path = Path(folder) / f"{name}-{digest}{suffix}"
    if path.exists():
        return load(path)
    run = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{name}-{digest}.partial{suffix}")
    save(run, partial)
    partial.replace(path)
    return run
