"""Every file the project writes: outputs made before a run and written whole or not at all (chapter 6).

:class:`Output` and :func:`prepare_outputs` make a command's outputs real before its run starts and put each in
place whole at the end; :func:`save_npz`, :func:`write_atomic`, :func:`write_text_atomic` and :func:`write_checked`
do the same for savers called from Python, and a saver's file is read back by its own loader before it is put in
place. Reading with checks is :mod:`evolving_ttt.reading`, the benchmarks' figures :mod:`evolving_ttt.benchmarks`,
the cache that shares long runs within a build :mod:`evolving_ttt.run_cache`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np

from evolving_ttt.archives import NPZ_EXPANDED_LIMIT, check_npz

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
"""The folder of the book's saved players and results (every system chapter writes its players there)."""

STUDIES = DATA / "studies"
"""The folder of the robustness studies' sweep databases (chapters 20 to 23), read with :mod:`evolving_ttt.studies`."""


# --- Writing: outputs made before a run, written whole or not at all ---------------------------------------------


_PENDING_STOP: list[type[BaseException]] = []


def note_stop(kind: type[BaseException]) -> None:
    """Remember that a signal asked the program to stop with ``kind`` (``KeyboardInterrupt`` or a subclass).

    A command's signal handler calls this before it raises ``kind``. Python code can lose that exception: raised
    inside a ctypes callback (numba's compiler has some), it is only reported and the run goes on. Remembered here,
    the stop is raised again before any output is put in place (:meth:`Output.write`, :meth:`Output.commit`) and
    between tasks (:mod:`evolving_ttt.parallel`), so an interrupted command never writes its files.
    """
    if not _PENDING_STOP:
        _PENDING_STOP.append(kind)


def raise_pending_stop() -> None:
    """Raise the stop :func:`note_stop` remembered, if any; the remembered stop stays until :func:`clear_stop`."""
    if _PENDING_STOP:
        raise _PENDING_STOP[0]()


def stop_pending() -> bool:
    """Whether a stop is remembered (:func:`note_stop`)."""
    return bool(_PENDING_STOP)


def clear_stop() -> None:
    """Forget any remembered stop (a command does, as it starts and as it ends)."""
    _PENDING_STOP.clear()


class Output:
    """One file a command or a run will write, made real before the run starts (issue 27's rules).

    Creating it checks, in the first second rather than after an hour's run: that the name carries ``suffix`` when
    one is required, that the folder exists, that nothing but a file stands at the path, that an existing file is
    only replaced with ``force``, and that the folder accepts a new file (a temporary file is created beside the
    target, ``.NAME.partial-PID``). :meth:`write` fills the temporary file and renames it over the target: the
    target is the old file or the new one, never half of one. :meth:`discard` removes the temporary file.
    """

    def __init__(self, path: str | Path, what: str = "output", suffix: str | None = None, force: bool = False):
        self.path = check_path(path, what)
        self.what = what
        if suffix is not None and self.path.suffix != suffix:
            raise ValueError(f"{what} {self.path} must be named with the suffix {suffix} (for example run{suffix})")
        folder = self.path.parent
        if not folder.is_dir():
            raise ValueError(f"{what} {self.path}: the folder {folder} does not exist")
        if self.path.is_dir():
            raise ValueError(f"{what} {self.path} is a folder; give a file name")
        if self.path.exists() and not force:
            raise ValueError(f"{what} {self.path} exists; choose another name, or force to replace it (--force)")
        self.temporary = temporary_name(self.path, str(os.getpid()))
        try:
            with open(self.temporary, "xb"):
                pass
        except FileExistsError:
            raise ValueError(f"{what} {self.path}: {self.temporary} is in the way (another writer?)") from None
        except OSError as error:
            raise ValueError(f"{what} {self.path} cannot be written: {error.strerror}") from None

    def write(self, fill: Callable[[BinaryIO], None]) -> Path:
        """Write the file with ``fill(binary_file)`` and put it in place; returns the path."""
        try:
            with open(self.temporary, "wb") as handle:
                fill(handle)
                handle.flush()
                os.fsync(handle.fileno())
            raise_pending_stop()
            os.replace(self.temporary, self.path)
        except BaseException:
            self.discard()
            raise
        return self.path

    def commit(self) -> Path:
        """Put the already filled temporary file (written by a saver to :attr:`temporary`) in place."""
        try:
            raise_pending_stop()
            os.replace(self.temporary, self.path)
        except OSError as error:
            self.discard()
            raise ValueError(f"{self.what} {self.path} could not be written: {error.strerror}") from None
        except BaseException:
            self.discard()
            raise
        return self.path

    def write_text(self, text: str) -> Path:
        """Write ``text`` (UTF-8) and put the file in place."""
        return self.write(lambda handle: handle.write(text.encode()))

    def discard(self) -> None:
        """Remove the temporary file, if it is still there (the target is left as it was)."""
        with contextlib.suppress(FileNotFoundError):
            self.temporary.unlink()


def prepare_outputs(outputs: dict[str, tuple[str | Path, str | None]], force: bool = False) -> dict[str, Output]:
    """``{what: (path, suffix)}`` made into :class:`Output` files, after checking that no two are the same file.

    On any error, the temporary files already made are removed, and the ``ValueError`` names the output.
    """
    seen: dict[Path, str] = {}
    for what, (path, _) in outputs.items():
        where = Path(path).resolve()
        if where in seen:
            raise ValueError(f"{what} and {seen[where]} are the same file, {path}; give each its own name")
        seen[where] = what
    made: dict[str, Output] = {}
    try:
        for what, (path, suffix) in outputs.items():
            made[what] = Output(path, what, suffix, force)
    except BaseException:
        for output in made.values():
            output.discard()
        raise
    return made


def write_atomic(path: str | Path, fill: Callable[[BinaryIO], None], what: str = "file") -> Path:
    """Write ``path`` whole or not at all, replacing any file there (for savers called from Python)."""
    return Output(path, what, force=True).write(fill)


def write_text_atomic(path: str | Path, text: str, what: str = "file") -> Path:
    """:func:`write_atomic` of a text."""
    return Output(path, what, force=True).write_text(text)


def check_path(path: object, name: str = "path") -> Path:
    """``path`` as a :class:`~pathlib.Path`, or ``ValueError`` naming ``name`` if it is not a file name.

    A name that ends in a path separator names a folder; it is refused rather than read as the file without the
    separator (``Path("out.npz/")`` is ``out.npz``).
    """
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ValueError(f"{name} must be a file name (a str or a pathlib.Path); got {path!r:.60}")
    text = os.fspath(path)
    if isinstance(text, bytes):
        raise ValueError(f"{name} must be a file name (a str or a pathlib.Path); got {path!r:.60}")
    if text.endswith(("/", os.sep)):
        raise ValueError(f"{name} {text} ends in '/', so it names a folder; give a file name")
    return Path(text)


def same_file(first: str | Path, second: str | Path) -> bool:
    """Whether two names reach one file: the same resolved path, or (both existing) the same file by device and
    inode, as hard links are."""
    first, second = Path(first), Path(second)
    if first.resolve() == second.resolve():
        return True
    try:
        return first.exists() and second.exists() and os.path.samefile(first, second)
    except OSError:
        return False


def check_apart(outputs: dict[str, str | Path], inputs: dict[str, str | Path]) -> None:
    """Raise ``ValueError`` if an output reaches the same file as an input (``{option: path}`` each), whatever
    ``--force`` says: an output never replaces what the command reads."""
    for option, path in outputs.items():
        for source, read in inputs.items():
            if same_file(path, read):
                raise ValueError(f"{option} {path} is the file {source} reads ({read}); an output may not replace an "
                                 "input, even with --force; give another name")  # fmt: skip


TEMPORARY_NAME_BYTES = 120
"""The longest part of a target's name kept in its temporary file's name (a folder allows names of 255 bytes)."""


def temporary_name(path: Path, tag: str) -> Path:
    """The temporary file beside ``path`` that a writer fills first: ``.NAME.partial-TAG``, with a long ``NAME``
    cut to :data:`TEMPORARY_NAME_BYTES` bytes and a hash of the whole, so that it fits wherever ``path`` fits."""
    name = path.name
    encoded = name.encode("utf-8", "surrogateescape")
    if len(encoded) > TEMPORARY_NAME_BYTES:
        head = encoded[:TEMPORARY_NAME_BYTES].decode("utf-8", "ignore")
        name = f"{head}-{hashlib.sha256(encoded).hexdigest()[:16]}"
    return path.with_name(f".{name}.partial-{tag}")


def check_provenance(provenance: dict, own_fields: Sequence[str], what: str) -> None:
    """``ValueError`` if a provenance keyword would override one of the format's ``own_fields``."""
    clash = sorted(set(provenance) & set(own_fields))
    if clash:
        raise ValueError(f"provenance may not set the format's own field(s) {clash} of {what}; "
                         "they are written by the saver")  # fmt: skip


def json_text(record: object, path: str | Path, indent: int | None = 1) -> str:
    """``record`` as JSON text, or ``ValueError`` naming ``path`` if it is not plain JSON (NaN, objects...)."""
    try:
        return json.dumps(record, indent=indent, allow_nan=False) + "\n"
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"{path} was not written: what it would hold is not plain JSON ({error})") from None


def write_checked(path: str | Path, text: str, load: Callable[[Path], object], what: str) -> Path:
    """Write ``text`` at exactly ``path``, whole or not at all, once ``load`` has read it back without complaint.

    The text goes to a temporary file beside ``path`` (:class:`Output`); ``load``, the format's loader, reads
    that file with all its checks, and only then is it renamed over ``path``. So a saver can never write a file
    that its loader refuses: it raises ``ValueError`` and leaves ``path`` as it was.
    """
    return _write_verified(path, what, lambda handle: handle.write(text.encode("utf-8")), load, "its loader")


def _write_verified(path: str | Path, what: str, fill: Callable[[BinaryIO], object],
                    check: Callable[[Path], object], checker: str) -> Path:  # fmt: skip
    """Fill a temporary file beside ``path``, let ``check`` read it, and only then put it in place; a
    ``ValueError`` from ``check`` leaves ``path`` as it was and says that ``checker`` would refuse the file."""
    output = Output(path, what, force=True)
    try:
        with open(output.temporary, "wb") as handle:
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        check(output.temporary)
    except ValueError as error:
        output.discard()
        reason = str(error).replace(str(output.temporary), "the file")
        raise ValueError(f"{what} {path} was not written: {checker} would refuse it ({reason})") from None
    except BaseException:
        output.discard()
        raise
    return output.commit()


def save_npz(path: str | Path, arrays: dict[str, np.ndarray], what: str = "record") -> Path:
    """Compressed ``.npz`` of ``arrays`` at exactly ``path`` (numpy adds no suffix to an open file), atomically.

    The archive is checked as :func:`read_npz` checks one before reading it (:func:`~evolving_ttt.archives.check_npz`)
    before it is put in place: a saver never writes a record its reader refuses, such as arrays that expand beyond
    :data:`~evolving_ttt.archives.NPZ_EXPANDED_LIMIT` (refused before anything is compressed) or pickled objects.

    Raises
    ------
    ValueError
        Naming the file, when it cannot be written or would not be read back; ``path`` is left as it was.
    """
    expanded = sum(np.asarray(array).nbytes for array in arrays.values())
    if expanded > NPZ_EXPANDED_LIMIT:
        raise ValueError(f"{what} {path} was not written: its arrays hold {expanded:,} bytes, more than read_npz "
                         f"reads ({NPZ_EXPANDED_LIMIT:,})")  # fmt: skip
    return _write_verified(path, what, lambda handle: np.savez_compressed(handle, **arrays),
                           lambda temporary: check_npz(temporary, what), "read_npz")  # fmt: skip


def record_arrays(path: Path, values: dict[str, object], kind: str) -> dict[str, np.ndarray]:
    """``values`` as the arrays a saver writes, each converted once (``ValueError`` naming the one that cannot)."""
    arrays = {}
    for name, value in values.items():
        try:
            arrays[name] = np.asarray(value)
        except (ValueError, TypeError, OverflowError):
            raise ValueError(f"{path} was not written: the {kind}'s {name} is not a regular array") from None
    return arrays
