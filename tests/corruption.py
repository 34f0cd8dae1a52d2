"""Corruptions of valid files for the property tests of every loader (tests/test_files_*.py).

A file is damaged as bytes (truncated at a random byte, random bytes flipped) or as a JSON document (a value
deleted, replaced or inserted anywhere, including NaN, infinities, numbers too large for a float, integers of 400
digits and nesting 100,000 deep, written through :data:`SENTINELS`). :func:`refused` is the one acceptable failure:
a ``ValueError`` naming the file.
"""

import copy
import json

import numpy as np
from hypothesis import strategies as st

SENTINELS = {
    "@NAN@": "NaN", "@INF@": "Infinity", "@NINF@": "-Infinity", "@E400@": "1e400", "@BIGINT@": str(10**400),
    "@DEEP@": "[" * 100_000 + "]" * 100_000, "@DEEP201@": "[" * 201 + "]" * 201,
}  # fmt: skip
"""Values json.dumps cannot write (or would recurse on), put into the text in place of their placeholder."""

COMMON_REPLACEMENTS = [
    *SENTINELS, 10**29, -(10**29), 10**31, 2**63, "0.5", "text", "", True, False, None, [], {}, [0.5], [[0.5]],
    {"a": 1}, 0, -1, 0.0, -0.0, 1.5, 1e308, 5e-324,
]  # fmt: skip
"""Values a JSON field may be replaced by: the sentinels, numbers at the edges, every JSON type."""


def json_paths(value: object) -> list[tuple]:
    """Every path (keys and indices) to a value in a JSON document, the document itself first; no recursion."""
    paths, stack = [], [((), value)]
    while stack:
        path, item = stack.pop()
        paths.append(path)
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        stack.extend((path + (key,), child) for key, child in children)
    return paths


def corrupt_json(record: dict, operation: str, index: int, value: object = None) -> object:
    """``record`` with one value deleted, replaced, or one added beside it."""
    record = copy.deepcopy(record)
    path = json_paths(record)[index % len(json_paths(record))]
    if not path:
        return value if operation == "replace" else record
    parent = record
    for key in path[:-1]:
        parent = parent[key]
    if operation == "delete":
        del parent[path[-1]]
    elif operation == "replace":
        parent[path[-1]] = value
    elif isinstance(parent, list):
        parent.insert(path[-1], value)
    else:
        parent["extra_field"] = value
    return record


def json_text(record: object) -> str:
    text = json.dumps(record, indent=1)
    for placeholder, literal in SENTINELS.items():
        text = text.replace(json.dumps(placeholder), literal)
    return text


def flip(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    changed = bytearray(data)
    for position, mask in flips:
        changed[position % len(changed)] ^= mask
    return bytes(changed)


byte_damage = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, 10**6)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=4)),
)


def json_changes(extra: list) -> st.SearchStrategy:
    """One deletion, replacement or insertion anywhere in a JSON document (values: the common ones + ``extra``)."""
    return st.one_of(
        st.tuples(st.just("delete"), st.integers(0, 10**4), st.none()),
        st.tuples(st.sampled_from(["replace", "insert"]), st.integers(0, 10**4),
                  st.sampled_from([*COMMON_REPLACEMENTS, *extra])),
    )  # fmt: skip


def damaged(data: bytes, damage: tuple) -> bytes:
    kind, detail = damage
    return data[: detail % (len(data) + 1)] if kind == "truncate" else flip(data, detail)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def refused(load, path) -> bool:
    """True if ``load(path)`` raises a ValueError naming the file; any other exception fails the test."""
    try:
        load(path)
    except ValueError as error:
        assert path.name in str(error), str(error)
        return True
    return False


# --- One field of a JSON file changed by path (tests/test_files_ling_lam.py, tests/test_files_mohammadi.py) ---


def value_paths(value) -> list[tuple]:
    """The path (keys and indices) of every value inside a JSON value, the value itself excluded, sorted; no
    recursion."""
    paths, stack = [], [((), value)]
    while stack:
        path, value = stack.pop()
        if path:
            paths.append(path)
        if isinstance(value, dict):
            stack.extend(((*path, key), item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, index), item) for index, item in enumerate(value))
    return sorted(paths, key=str)


def json_type(value) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    return {int: "number", float: "number", str: "text", list: "list", dict: "object"}[type(value)]


OTHER_TYPES = {"True": True, "None": None, "number": 7, "text": "x", "list": [], "object": {}}
SENTINEL = "@@corruption@@"
TEXT_OF = {"nan": "NaN", "huge": "1" + "0" * 400, "deep": "[" * 100_000 + "]" * 100_000}
"""What a value becomes, by corruption: NaN, an integer of 400 digits, nesting 100,000 deep."""


def corrupted_json(raw: bytes, path: tuple, how: str, replacement=None) -> bytes:
    """The JSON ``raw`` with the value at ``path`` deleted (``how="delete"``), made one of :data:`TEXT_OF`, or
    replaced by ``replacement``."""
    record = json.loads(raw)
    *parents, last = path
    holder = record
    for key in parents:
        holder = holder[key]
    if how == "delete":
        del holder[last]
    else:
        holder[last] = SENTINEL if how in TEXT_OF else replacement
    text = json.dumps(record)
    return text.replace(json.dumps(SENTINEL), TEXT_OF[how]).encode() if how in TEXT_OF else text.encode()
