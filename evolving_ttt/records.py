"""Reading the book's JSON data files: every saved player and record starts the same way (chapters 7, 16, 18, 20).

Each system saves its players in ``book/data/`` as JSON with a ``format`` name and a ``version``. Reading one
begins with the same three checks, defined here once: the file can be read and is JSON, it is a file of the
expected format, and of a version this code reads. The system's loader then checks its own fields.
"""

from __future__ import annotations

import json
from pathlib import Path


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
