"""The benchmarks' figures: ``bench/NAME.py`` records its headline figures in ``bench/results/NAME.json``
(:func:`save_benchmark`), and the chapters that quote a wall time read them from there (:func:`load_benchmark`)
rather than typing them."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from evolving_ttt.reading import Fields, read_record

BENCH_RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
"""The folder where the benchmark scripts record their figures (one ``NAME.json`` per script ``bench/NAME.py``)."""

BENCHMARK_FORMAT = "ttt-benchmark"
"""The ``format`` field of a benchmark's figures file."""


def _check_figures(figures: object, where: str) -> dict[str, float | list[float]]:
    if not isinstance(figures, dict) or not figures:
        raise ValueError(f"{where}: figures must be a non-empty mapping from names to numbers")
    for key, value in figures.items():
        values = value if isinstance(value, list) else [value]
        if (
            not isinstance(key, str)
            or not values
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)
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
    """The figures ``bench/{name}.py`` last recorded (chapter 24 quotes the systems' wall times from them).

    Raises
    ------
    ValueError
        Naming the file when it is missing, not a benchmark's figures, or holds anything but finite numbers (the
        ``script`` must be a text, ``cores`` a whole number or null, as :func:`save_benchmark` writes them).
    """
    path = Path(folder) / f"{name}.json"
    record = read_record(path, BENCHMARK_FORMAT, "a benchmark's figures")
    fields = Fields(path, record, "a benchmark's figures")
    fields.provenance(texts=("script",))
    if record.get("cores") is not None:
        fields.integer("cores", 1)
    return _check_figures(record.get("figures"), str(path))
