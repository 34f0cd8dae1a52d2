"""Every file the project reads or writes: outputs made before a run and written whole, checked reading, and the
benchmarks' figures (chapter 6).

:class:`Output` and :func:`prepare_outputs` make a command's outputs real before its run starts and put each in
place whole at the end; :func:`save_npz`, :func:`write_atomic` and :func:`write_text_atomic` do the same for
savers called from Python. :func:`read_json`, :func:`read_npz` and :class:`Fields` read a file and check every
field, and fail with one ``ValueError`` naming the file and the field; :func:`read_npz` (defined in
:mod:`evolving_ttt.archives`) checks every member of an archive before it reads a byte of any array.

Each system saves its players in ``book/data/`` as JSON with a ``format`` name and a ``version``. Reading one
begins with the same three checks, defined here once: the file can be read and is JSON, it is a file of the
expected format, and of a version this code reads. The system's loader then checks its own fields.

The scripts in ``bench/`` record their headline figures in ``bench/results/`` (:func:`save_benchmark`), and the
chapters that quote a wall time read it from there (:func:`load_benchmark`) rather than typing it.

The cache that shares long runs within a build is :mod:`evolving_ttt.run_cache`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, TypeVar

import numpy as np

from evolving_ttt.archives import NPZ_EXPANDED_LIMIT, check_npz
from evolving_ttt.archives import read_npz as read_npz  # the systems read records through this module

T = TypeVar("T")

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
"""The folder of the book's saved players and results (every system chapter writes its players there)."""

STUDIES = DATA / "studies"
"""The folder of the robustness studies' sweep databases (chapters 20 to 23), read with :mod:`evolving_ttt.studies`."""

BENCH_RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
"""The folder where the benchmark scripts record their figures (one ``NAME.json`` per script ``bench/NAME.py``)."""

BENCHMARK_FORMAT = "ttt-benchmark"
"""The ``format`` field of a benchmark's figures file."""


# --- Writing: outputs made before a run, written whole or not at all ---------------------------------------------


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
            os.replace(self.temporary, self.path)
        except BaseException:
            self.discard()
            raise
        return self.path

    def commit(self) -> Path:
        """Put the already filled temporary file (written by a saver to :attr:`temporary`) in place."""
        try:
            os.replace(self.temporary, self.path)
        except OSError as error:
            self.discard()
            raise ValueError(f"{self.what} {self.path} could not be written: {error.strerror}") from None
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


# --- Reading: one ValueError naming the file and the field -------------------------------------------------------

JSON_DEPTH_LIMIT = 200
"""The deepest nesting of lists and objects a JSON file of the project may have."""


def _json_depth_ok(text: str, limit: int) -> bool:
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return False
        elif char in "]}":
            depth -= 1
    return True


def _refuse_constant(name: str) -> None:
    raise ValueError(f"the number {name} is not allowed")


def parse_json(text: str, limit: int = JSON_DEPTH_LIMIT) -> object:
    """The JSON value of ``text`` by the project's rules: no NaN or infinities, no number too large for a float,
    no integer of more than 30 digits, no nesting deeper than ``limit``; ``ValueError`` saying what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"it is {type(text).__name__}, not a JSON text")
    if not _json_depth_ok(text, limit):
        raise ValueError(f"it nests deeper than {limit} levels")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except (json.JSONDecodeError, ValueError, RecursionError) as error:
        raise ValueError(f"it is not valid JSON: {error}") from None


def read_json(path: str | Path, limit: int = JSON_DEPTH_LIMIT) -> object:
    """The JSON value in ``path``; ``ValueError`` naming the file if it cannot be read, is not JSON, holds NaN or
    infinities, numbers too large for a float, or nests deeper than ``limit``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{path} could not be read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    if not _json_depth_ok(text, limit):
        raise ValueError(f"{path} is not a file of this project: it nests deeper than {limit} levels")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except (json.JSONDecodeError, ValueError, RecursionError) as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is too large")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:
        raise ValueError(f"the integer {text[:20]}... has more than 30 digits")
    return int(text)


class Fields:
    """The fields of one file, each read with a check that fails with one ``ValueError`` naming file and field.

    ``data`` is what :func:`read_npz` or :func:`read_json` returned (a mapping). Every method takes the field's
    name and returns its value converted (arrays as numpy arrays, whole numbers as ``int``).
    """

    def __init__(self, path: str | Path, data: object, kind: str):
        self.path, self.kind = Path(path), kind
        if not isinstance(data, dict):
            raise ValueError(f"{self.path} is not a {kind}: it holds {type(data).__name__}, not an object")
        self.data = data

    def fail(self, name: str, problem: str) -> ValueError:
        """The error for field ``name``."""
        return ValueError(f"{self.path} ({self.kind}): field {name!r} {problem}")

    def has(self, name: str) -> bool:
        return name in self.data

    def get(self, name: str) -> object:
        if name not in self.data:
            raise self.fail(name, "is missing")
        return self.data[name]

    def array(self, name: str, kind: str = "f", shape: tuple[int | None, ...] | None = None,
              low: float | None = None, high: float | None = None) -> np.ndarray:  # fmt: skip
        """A numeric array of dtype kind ``kind`` ("f" float, "i" whole numbers, "b" booleans), ``shape`` (None
        for any length on that axis), finite, within ``[low, high]``."""
        value = self.get(name)
        try:
            array = np.asarray(value)
        except (ValueError, TypeError):
            raise self.fail(name, "is not an array of numbers") from None
        if array.dtype == object or array.dtype.kind not in "biuf":
            raise self.fail(name, f"must hold numbers; it holds {array.dtype}")
        if kind in "fi" and array.dtype.kind == "b" or kind == "b" and array.dtype.kind != "b":
            raise self.fail(name, "must hold true/false" if kind == "b" else "must hold numbers; it holds booleans")
        if kind == "i" and array.dtype.kind == "f":
            if not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
                raise self.fail(name, "must hold whole numbers")
        if shape is not None and (
            array.ndim != len(shape)
            or any(want is not None and have != want for have, want in zip(array.shape, shape, strict=True))
        ):
            expected = tuple("any" if size is None else size for size in shape)
            raise self.fail(name, f"has shape {array.shape}; expected {expected}")
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise self.fail(name, "holds NaN or an infinity")
        if array.size and low is not None and array.min() < low:
            raise self.fail(name, f"holds {array.min()}, below {low}")
        if array.size and high is not None and array.max() > high:
            raise self.fail(name, f"holds {array.max()}, above {high}")
        if kind == "i" and array.size and np.abs(array).max() >= 2.0**63:
            raise self.fail(name, f"holds {np.abs(array).max():.3g}, a whole number too large for 64 bits")
        return array.astype(np.int64) if kind == "i" else array.astype(float) if kind == "f" else array

    def numbers(self, name: str, shape: tuple[int | None, ...], low: float | None = None,
                high: float | None = None) -> np.ndarray:  # fmt: skip
        """A float array field: in an ``.npz``, an array of floats; in JSON, lists ``len(shape)`` deep of numbers.

        A JSON text such as ``"0.5"``, ``true`` or ``null`` is refused, not converted, and so is a list nested
        deeper than ``shape`` says; the nesting is walked with an explicit stack.
        """
        value = self.get(name)
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "b":
                raise self.fail(name, "must hold numbers; it holds booleans")
            if value.dtype.kind != "f":
                raise self.fail(name, f"must hold numbers (floating point); it holds {value.dtype}")
            return self.array(name, "f", shape, low, high)
        stack = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            if isinstance(item, list):
                if depth >= len(shape):
                    raise self.fail(name, f"must be a {len(shape)}-dimensional array of numbers; it nests deeper")
                stack.extend((entry, depth + 1) for entry in item)
            elif depth != len(shape):
                raise self.fail(name, f"must be a list {len(shape)} deep of numbers; it holds {item!r:.40}")
            elif isinstance(item, bool) or not isinstance(item, (int, float)):
                raise self.fail(name, f"must hold numbers only; it holds {type(item).__name__} {item!r:.40} (only "
                                      "numbers are allowed: no true/false, texts or null)")  # fmt: skip
        try:
            array = np.array(value, dtype=float)
        except (ValueError, TypeError, OverflowError):
            raise self.fail(name, "is not a regular array of numbers (rows of different lengths?)") from None
        return Fields(self.path, {name: array}, self.kind).array(name, "f", shape, low, high)

    def integer(self, name: str, low: int | None = None, high: int | None = None) -> int:
        value = self.get(name)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise self.fail(name, f"must be a whole number; it is {value!r:.40}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(name, f"is {value}; expected {low if low is not None else '...'} to "
                                  f"{high if high is not None else '...'}")  # fmt: skip
        return int(value)

    def number(self, name: str, low: float | None = None, high: float | None = None) -> float:
        value = self.get(name)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise self.fail(name, f"must be a number; it is {value!r:.40}")
        value = float(value)
        if not math.isfinite(value) or (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(name, f"is {value}; expected a finite number from {low} to {high}")
        return value

    def text(self, name: str, choices: Sequence[str] | None = None) -> str:
        value = self.get(name)
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == "U":
            value = str(value)
        if not isinstance(value, str) or (choices is not None and value not in choices):
            expected = f"one of {list(choices)}" if choices is not None else "a text"
            raise self.fail(name, f"must be {expected}; it is {value!r:.40}")
        return value

    def texts(self, name: str) -> list[str]:
        """A list of texts."""
        value = self.get(name)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(name, f"must be a list of texts; it is {value!r:.40}")
        return value

    def settings(self, name: str, settings_type: type) -> object:
        """A settings dataclass stored as a JSON text (``.npz``) or object (JSON), through its ``from_dict``."""
        value = self.get(name)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = str(value)
        if isinstance(value, str):
            if not _json_depth_ok(value, JSON_DEPTH_LIMIT):
                raise self.fail(name, "nests too deep")
            try:  # the number rules of read_json: no NaN or infinities, no float or integer too large
                value = json.loads(value, parse_constant=_refuse_constant, parse_float=_finite_float,
                                   parse_int=_bounded_int)  # fmt: skip
            except (json.JSONDecodeError, RecursionError):
                raise self.fail(name, "is not valid JSON") from None
            except ValueError as error:  # a number the parse hooks refuse
                raise self.fail(name, f"holds invalid settings: {error}") from None
        if not isinstance(value, dict):
            raise self.fail(name, "must be an object of settings")
        try:
            return settings_type.from_dict(value)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as error:
            raise self.fail(name, f"holds invalid settings: {error}") from None

    def mapping(self, name: str) -> dict:
        """A JSON object (a dict); a text, list, number, true/false or null is refused."""
        value = self.get(name)
        if not isinstance(value, dict):
            raise self.fail(name, f"must be an object; it is {_json_kind(value)} {value!r:.40}")
        return value

    def config(self, name: str, settings_type: type) -> object:
        """Settings stored as a JSON object (not as a text, as an ``.npz`` holds them): :meth:`settings`."""
        self.mapping(name)
        return self.settings(name, settings_type)

    def optional(self, read: Callable[..., T], name: str, *args: object) -> T | None:
        """``read(name, *args)`` (one of the methods above) if the field is present, else ``None``: a field a file
        may lack, such as provenance, but that must be right when it is there."""
        return read(name, *args) if self.has(name) else None

    def provenance(self, counts: Sequence[str] = (), texts: Sequence[str] = (), numbers: Sequence[str] = (),
                   settings: dict[str, type | None] | None = None) -> None:  # fmt: skip
        """Check the provenance fields a system's savers write, each only when present: ``counts`` whole numbers
        from 0, ``texts``, ``numbers`` (finite) and ``settings`` JSON objects, read by the settings type given
        (``from_dict``) or, for ``None``, only checked to be objects. A sweep saves every task's player with
        ``sweep_cell``, ``seed``, ``task`` and ``settings`` (:data:`SWEEP_PROVENANCE`).

        Other fields are free-form provenance: a loader returns them as they are and reads none of them.
        """
        for name in counts:
            self.optional(self.integer, name, 0)
        for name in texts:
            self.optional(self.text, name)
        for name in numbers:
            self.optional(self.number, name)
        for name, settings_type in (settings or {}).items():
            if settings_type is None:
                self.optional(self.mapping, name)
            else:
                self.optional(self.config, name, settings_type)


SWEEP_PROVENANCE = ("sweep_cell", "seed", "task")
"""The whole numbers a sweep saves with every task's player (:func:`evolving_ttt.sweeps.run_sweep_task`), beside the
cell's ``settings``."""


def _json_kind(value: object) -> str:
    """The JSON type of ``value`` in words."""
    if isinstance(value, bool) or value is None:
        return "true/false" if value is not None else "null"
    kinds = {int: "a number", float: "a number", str: "a text", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


def read_record(path: str | Path, file_format: str, kind: str, version: int = 1) -> dict:
    """The JSON object in ``path`` after checking that it is a ``kind`` of format ``file_format``, version ``version``.

    Raises
    ------
    ValueError
        Naming the file and what is wrong: it cannot be read, is not JSON, is another format or another version.
    """
    path = Path(path)
    record = read_json(path)
    if not isinstance(record, dict) or record.get("format") != file_format:
        raise ValueError(f'{path} is not {kind}: it needs "format": "{file_format}"')
    if record.get("version") is not None and type(record.get("version")) is not int:
        raise ValueError(f"{path}: field 'version' must be a whole number; got {record.get('version')!r:.40}")
    if record.get("version") != version:
        raise ValueError(f"{path}: unsupported version {record.get('version')!r}; this code reads version {version}")
    return record


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
