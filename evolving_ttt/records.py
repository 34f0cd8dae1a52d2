"""The book's files: reading its JSON data files, and the cache that shares long runs within a build (chapter 6).

Each system saves its players in ``book/data/`` as JSON with a ``format`` name and a ``version``. Reading one
begins with the same three checks, defined here once: the file can be read and is JSON, it is a file of the
expected format, and of a version this code reads. The system's loader then checks its own fields.

Several chapters of one build need the same long run. :func:`cached_run` computes it once per build and shares
it through the folder named by ``TTT_RUN_CACHE``; every system's ``run_*`` function goes through it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

Run = TypeVar("Run")

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
"""The folder of the book's saved players and results (every system chapter writes its players there)."""

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


def cached_run(
    name: str, key: dict, suffix: str, compute: Callable[[], Run], save: Callable[[Run, Path], None],
    load: Callable[[Path], Run],
) -> Run:
    """``compute()``, shared within a build through the folder named by ``TTT_RUN_CACHE`` (chapter 6).

    Without the variable (a reader running a chapter) the run is always computed. With it, the run is saved
    as ``{name}-{hash of key}{suffix}`` and a later call with the same ``key`` reads it back instead. ``make
    book`` and ``make test`` point the variable at a folder they empty first, so a build computes every run
    once. The file is written under a temporary name and then renamed: a complete file or none, safe if two
    processes race.
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
