"""Every file the project reads, read with checks: one ``ValueError`` naming the file and the field (chapter 6).

:func:`read_json`, :func:`read_npz` and :class:`Fields` read a file and check every field; :func:`read_npz` (defined
in :mod:`evolving_ttt.archives`) checks every member of an archive before it reads a byte of any array.

Each system saves its players in ``book/data/`` as JSON with a ``format`` name and a ``version``. Reading one
begins with the same three checks, defined here once (:func:`read_record`): the file can be read and is JSON, it is
a file of the expected format, and of a version this code reads. The system's loader then checks its own fields.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from evolving_ttt.archives import read_npz as read_npz  # the systems read records through this module

T = TypeVar("T")


# --- Reading: one ValueError naming the file and the field -------------------------------------------------------

JSON_DEPTH_LIMIT = 200
"""The deepest nesting of lists and objects a JSON file of the project may have."""


_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
"""A JSON string, or an unterminated one running to the end of the text."""
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_OPENING = ord("["), ord("{")


def _json_depth_ok(text: str, limit: int) -> bool:
    """Whether lists and objects nest at most ``limit`` deep in ``text``, brackets inside strings not counted.

    Strings are removed first (an unterminated one takes the rest of the text), then the running depth of the
    brackets left is summed with numpy: the same answer as walking the text one character at a time."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).encode("ascii")
    if len(brackets) <= limit:
        return True
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == _OPENING[0]) | (codes == _OPENING[1]), 1, -1)
    return int(np.cumsum(steps).max()) <= limit


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
        return _loads(text)
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
        return _loads(text)
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


_RISKY_NUMBER = re.compile(r"[0-9]{31}|[eE][+-]?[0-9]{3}")
"""What only a number that could break a rule of :func:`parse_json` holds: 31 digits in a row, or an exponent of
three digits or more (``e`` or ``E``, an optional sign, three digits)."""
SHORT_TEXT = 4096
"""Texts shorter than this are searched with :data:`_RISKY_NUMBER`; longer ones with numpy, which is quicker there."""


def _numbers_need_checks(text: str) -> bool:
    """Whether a number in ``text`` could be infinite as a float or an integer of more than 30 digits
    (:data:`_RISKY_NUMBER`): in a short text (a sweep row's settings or measures) by the pattern, in a long one by
    :func:`_risky_numbers_by_bytes`, a few milliseconds for a file of half a megabyte."""
    if len(text) < SHORT_TEXT:
        return _RISKY_NUMBER.search(text) is not None
    return _risky_numbers_by_bytes(text)


def _risky_numbers_by_bytes(text: str) -> bool:
    """:data:`_RISKY_NUMBER` found with vectorized comparisons over the text's bytes."""
    codes = np.frombuffer(b" " + text.encode("utf-8", "surrogatepass") + b"    ", dtype=np.uint8)
    digit = (codes >= ord("0")) & (codes <= ord("9"))
    edges = np.diff(digit.view(np.int8))  # 1 where a run of digits starts, -1 after it ends (the spaces close both)
    if (np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1) >= 31).any():
        return True
    exponent = np.flatnonzero((codes == ord("e")) | (codes == ord("E")))
    exponent = exponent[exponent < codes.size - 4]
    signed = (codes[exponent + 1] == ord("+")) | (codes[exponent + 1] == ord("-"))
    start = exponent + 1 + signed
    return bool((digit[start] & digit[start + 1] & digit[start + 2]).any())


def _loads(text: str) -> object:
    """``json.loads`` by the project's number rules (:func:`parse_json`): the hooks that check each number run only
    when a number could break a rule, so that a file of ordinary numbers is parsed at ``json.loads``'s speed."""
    if _numbers_need_checks(text):
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int)
    return json.loads(text, parse_constant=_refuse_constant)


_LIST, _NUMBER_TYPES = {list}, {int, float}
"""The exact types :func:`_plain_numbers` allows (``type(True)`` is ``bool``, so true/false is not a number)."""


def _plain_numbers(value: object, depth: int) -> bool:
    """Whether ``value`` is lists exactly ``depth`` deep of Python ints and floats only (a bool is not one): the
    common case of :meth:`Fields.numbers`, checked a level at a time with no item-by-item stack."""
    level = [value]
    for _ in range(depth):
        if not set(map(type, level)) <= _LIST:
            return False
        level = list(itertools.chain.from_iterable(level))
    return set(map(type, level)) <= _NUMBER_TYPES


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
        if not _plain_numbers(value, len(shape)):  # walked again, item by item, to say what is wrong
            self._check_number_lists(name, value, shape)
        try:
            array = np.array(value, dtype=float)
        except (ValueError, TypeError, OverflowError):
            raise self.fail(name, "is not a regular array of numbers (rows of different lengths?)") from None
        return Fields(self.path, {name: array}, self.kind).array(name, "f", shape, low, high)

    def _check_number_lists(self, name: str, value: object, shape: tuple[int | None, ...]) -> None:
        """Walk lists of numbers item by item, raising the first problem found (what `numbers` says is wrong)."""
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
                value = _loads(value)
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


def read_record(path: str | Path, file_format: str, kind: str, version: int = 1, oldest: int | None = None) -> dict:
    """The JSON object in ``path`` after checking that it is a ``kind`` of format ``file_format``, of a version from
    ``oldest`` (default ``version``) to ``version``.

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
    oldest = version if oldest is None else oldest
    if record.get("version") not in range(oldest, version + 1):
        reads = f"version {version}" if oldest == version else f"versions {oldest} to {version}"
        raise ValueError(f"{path}: unsupported version {record.get('version')!r}; this code reads {reads}")
    return record


def check_record_format(
    fields: Fields, file_format: str, version: int, hint: str = "", oldest: int | None = None
) -> int:
    """Check the ``format`` and ``version`` arrays of an ``.npz`` record and return its version (chapter 6).

    The versions read are ``oldest`` (default ``version``) to ``version``. A record without either array is of
    version 0, written before records named their format, and is read as version 1 (the arrays are the same).
    ``hint`` is added to the error when the format is another one.
    """
    if not fields.has("format") and not fields.has("version"):
        return 0
    found = fields.text("format")
    if found != file_format:
        raise fields.fail("format", f"is {found!r}; expected {file_format!r}{hint}")
    return fields.integer("version", version if oldest is None else oldest, version)


SETTINGS_FIELD, OLD_SETTINGS_FIELD = "settings", "config"
"""The field a file holds its settings under, and its name in the versions before (issue 36, one vocabulary)."""


def settings_field(fields: Fields, version: int, renamed_in: int, prefix: str = "", suffix: str = "") -> str:
    """The field that holds the settings in a file of ``version``: ``prefix + "config" + suffix`` before version
    ``renamed_in``, ``prefix + "settings" + suffix`` from it on (the settings were renamed in that version).

    Raises
    ------
    ValueError
        Naming the file and the field, if the file holds its settings under the other version's name.
    """
    new, old = SETTINGS_FIELD, OLD_SETTINGS_FIELD
    name, other = (new, old) if version >= renamed_in else (old, new)
    name, other = prefix + name + suffix, prefix + other + suffix
    if fields.has(other):
        before = f"{OLD_SETTINGS_FIELD!r} before version {renamed_in}, {SETTINGS_FIELD!r} from it on"
        raise fields.fail(other, f"is not a field of version {version}: its settings are under {name!r} ({before})")
    return name
