"""The cache that shares long runs within one build of the book (chapter 6).

Several chapters of one build need the same long run. :func:`cached_run` computes it once per build and shares
it through the folder named by ``TTT_RUN_CACHE``; every system's ``run_*`` function goes through it. Every entry
is checked against its key file and its checksum before it is used; a damaged entry is computed again, with a
:class:`RunCacheWarning`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from evolving_ttt.reading import read_json

Run = TypeVar("Run")

RUN_CACHE_VARIABLE = "TTT_RUN_CACHE"
"""The environment variable naming the folder where the chapters of one build share long runs (chapter 6)."""

RUN_CACHE_KEY_FORMAT = "ttt-run-cache-key"
"""The ``format`` field of the key file written beside every run-cache entry (:func:`cached_run`)."""

RUN_CACHE_LOCK = ".run-cache.lock"
"""The file in the cache folder that readers share and a writer holds alone while it puts an entry in place."""

COMPUTING_SUFFIX = ".computing"
"""The suffix of an entry's second lock file (``.{entry}.computing``), held by the one process computing its run."""


class RunCacheWarning(UserWarning):
    """A run-cache entry that could not be used (damaged, of another key) or stored; the run is computed anyway."""


def cached_run(
    name: str,
    key: dict,
    suffix: str,
    compute: Callable[[], Run],
    save: Callable[[Run, Path], None],
    load: Callable[[Path], Run],
) -> Run:
    """``compute()``, shared within a build through the folder named by ``TTT_RUN_CACHE`` (chapter 6).

    Without the variable (a reader running a chapter) the run is always computed. With it, the run is saved
    as ``{name}-{hash of key}{suffix}`` and a later call with the same ``key`` reads it back instead. ``make
    test`` points the variable at a folder it empties first, so that it computes every run once; ``make book``
    keeps the folder until the code changes.

    Each entry has a key file beside it, ``{name}-{hash of key}{suffix}.key``, holding the key itself (the
    settings and the seed) and the SHA-256 of the entry. An entry is used only if its key file names the same key
    and its bytes have that checksum and ``load`` reads it (a ``ValueError`` from ``load`` counts as damage);
    otherwise a :class:`RunCacheWarning` names the file and the run is computed again and replaces it. The folder
    is checked (made if missing) before the run is computed: a ``ValueError`` says when it is a file or cannot be
    written. Each writer saves under its own temporary name (process id and a random part) and renames the entry
    and then its key file into place while it holds the folder's lock (readers share the lock), so concurrent
    writers of one key never collide and a reader never sees half of an entry: the first complete entry stays. A
    run computed but not stored (a full disk) is returned all the same, with a warning.

    One key is computed by one process at a time: a caller holds the entry's own lock file
    (``.{entry}.computing``) from its look into the cache until its run is stored, so a second chapter that asks
    for the same run meanwhile waits and then reads the entry instead of computing the run a second time. The lock
    goes with the process that holds it, however that process ends.
    """
    if not isinstance(name, str) or not name or name.startswith(".") or any(c in name for c in "/\\\0"):
        raise ValueError(f"name must be a plain file name such as 'run'; got {name!r}")
    if not isinstance(suffix, str) or (suffix and (suffix[0] != "." or any(c in suffix for c in "/\\\0"))):
        raise ValueError(f"suffix must be '' or a file suffix such as '.npz'; got {suffix!r}")
    for what, function in (("compute", compute), ("save", save), ("load", load)):
        if not callable(function):
            raise ValueError(f"{what} must be a function; got {function!r}")
    setting = os.environ.get(RUN_CACHE_VARIABLE)
    if not setting:
        return compute()
    if not isinstance(key, dict):
        raise ValueError(f"key must be a dict (the run's settings and seed); got {key!r}")
    try:
        key_text = json.dumps(key, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"key must be a JSON object of finite numbers, text, lists and objects; {error}") from None
    folder = _run_cache_folder(setting)
    digest = hashlib.sha256(key_text.encode()).hexdigest()[:20]
    entry = folder / f"{name}-{digest}{suffix}"
    if entry.is_dir():
        raise ValueError(f"{RUN_CACHE_VARIABLE}: {entry} is a folder where the run's cache entry goes; remove it")
    with _file_lock(entry.with_name(f".{entry.name}{COMPUTING_SUFFIX}"), exclusive=True):
        with _run_cache_lock(folder, exclusive=False):
            problem, checksum = _check_cache_entry(entry, key_text)
            if problem is None:
                try:
                    return load(entry)
                except (ValueError, OSError) as error:  # whole as written, but not a run its loader accepts
                    problem = f"could not be read ({error})"
        if problem:
            warnings.warn(f"run cache: {entry} {problem}; computing the run again", RunCacheWarning, stacklevel=2)
        run = compute()
        _store_cache_entry(run, entry, name, key_text, save, digest, suffix, refused=checksum)
    return run


def _run_cache_folder(setting: str) -> Path:
    """The cache folder named by the variable, made if missing; ``ValueError`` if it cannot hold entries."""
    folder = Path(setting).expanduser()
    where = f"{RUN_CACHE_VARIABLE}={setting}"
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{where}: is a file, not a folder; name a folder for the run cache (it is made if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".probe-", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        reason = error.strerror or error
        raise ValueError(f"{where}: the run-cache folder cannot be made or written ({reason})") from None
    return folder


def _run_cache_lock(folder: Path, exclusive: bool):
    """The folder's lock, shared (readers) or exclusive (a writer putting an entry in place), where the system has
    ``fcntl``; elsewhere nothing (the entry and its key file are checked against each other all the same)."""
    return _file_lock(folder / RUN_CACHE_LOCK, exclusive)


@contextlib.contextmanager
def _file_lock(path: Path, exclusive: bool):
    """``flock`` on the file at ``path`` (made if missing), shared or exclusive, for the duration; nothing where the
    system has no ``fcntl``."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        handle = open(path, "a+b")
    except OSError as error:
        raise ValueError(f"{RUN_CACHE_VARIABLE}: {path} cannot be opened ({error})") from None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            locked = True
        except OSError:  # pragma: no cover - a file system without locks (some network ones)
            locked = False
        try:
            yield
        finally:
            if locked:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_cache_entry(entry: Path, key_text: str) -> tuple[str | None, str | None]:
    """``(None, checksum)`` if ``entry`` and its key file hold the run of ``key_text`` whole; ``("", None)`` if
    there is no entry; else ``(what is wrong with it, None)``."""
    if not entry.exists():
        return "", None
    if not entry.is_file():
        return "is not a file", None
    key_file = entry.with_name(entry.name + ".key")
    if not key_file.exists():
        return f"has no key file {key_file.name} (damaged, or written by an older version)", None
    try:
        record = read_json(key_file)
    except ValueError as error:
        return f"has a damaged key file ({error})", None
    if not isinstance(record, dict) or record.get("format") != RUN_CACHE_KEY_FORMAT or record.get("version") != 1:
        return f"has a key file {key_file.name} that is not a run-cache key ({RUN_CACHE_KEY_FORMAT}, version 1)", None
    stored = record.get("key")
    if json.dumps(stored, sort_keys=True) != key_text:
        asked = json.loads(key_text)
        differ = sorted(k for k in set(asked) | set(stored) if asked.get(k) != stored.get(k)) if isinstance(
            stored, dict) else ["key"]  # fmt: skip
        return f"holds the run of another key (its {', '.join(map(str, differ))} differ from the run asked for)", None
    checksum = record.get("sha256")
    if not isinstance(checksum, str) or len(checksum) != 64:
        return f"has a key file {key_file.name} without a SHA-256 checksum", None
    try:
        if _file_sha256(entry) != checksum:
            return f"does not match the checksum in {key_file.name} (damaged, or replaced by another file)", None
    except OSError as error:
        return f"could not be read ({error.strerror or error})", None
    return None, checksum


def _store_cache_entry(run: Run, entry: Path, name: str, key_text: str, save: Callable[[Run, Path], None],
                       digest: str, suffix: str, refused: str | None = None) -> None:  # fmt: skip
    """Save ``run`` and its key file under names of this writer's own, then put both in place under the lock,
    unless a whole entry of the key (another writer's, but not the one with checksum ``refused`` that the loader
    refused) is already there; a failure to store is a warning (the run is not lost)."""
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    partial = entry.with_name(f".{name}-{digest}.partial-{token}{suffix}")
    key_partial = entry.with_name(f".{name}-{digest}.key.partial-{token}")
    try:
        save(run, partial)
        if not partial.is_file():
            raise ValueError(f"the saver wrote nothing at {partial.name}")
        record = {
            "format": RUN_CACHE_KEY_FORMAT, "version": 1, "entry": entry.name, "key": json.loads(key_text),
            "sha256": _file_sha256(partial), "bytes": partial.stat().st_size,
        }  # fmt: skip
        with open(key_partial, "wb") as handle:
            handle.write((json.dumps(record, indent=1, sort_keys=True) + "\n").encode())
            handle.flush()
            os.fsync(handle.fileno())
        with _run_cache_lock(entry.parent, exclusive=True):
            problem, checksum = _check_cache_entry(entry, key_text)
            if problem is not None or checksum == refused:  # none yet, or damaged: this one goes in
                os.replace(partial, entry)
                os.replace(key_partial, entry.with_name(entry.name + ".key"))
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        warnings.warn(f"run cache: the run could not be stored as {entry} ({reason}); it is returned, not shared",
                      RunCacheWarning, stacklevel=3)  # fmt: skip
    finally:
        for leftover in (partial, key_partial):
            with contextlib.suppress(OSError):
                leftover.unlink()
