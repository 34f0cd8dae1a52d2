"""The careful file layer of evolving_ttt.records: outputs made before a run and written whole, checked reading."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from evolving_ttt import reading as rd
from evolving_ttt import records as r


def test_outputs_and_readers_refuse_bad_paths_and_bad_files_with_a_value_error_naming_them(tmp_path):
    p = tmp_path / "a.json"
    out = r.Output(p, "--out", ".json")
    assert out.temporary.exists()
    out.write_text('{"a": 1}')
    assert rd.read_json(p) == {"a": 1} and not out.temporary.exists()
    with pytest.raises(ValueError, match="exists"):
        r.Output(p)
    with pytest.raises(ValueError, match="suffix"):
        r.Output(tmp_path / "b.txt", suffix=".npz")
    with pytest.raises(ValueError, match="does not exist"):
        r.Output(tmp_path / "nope" / "b.npz")
    with pytest.raises(ValueError, match="same file"):
        r.prepare_outputs({"--out": (tmp_path / "c.npz", None), "--champion": (tmp_path / "c.npz", None)})
    r.save_npz(tmp_path / "run.txt", {"x": np.arange(3)})
    assert (tmp_path / "run.txt").exists() and not (tmp_path / "run.txt.npz").exists()
    assert rd.read_npz(tmp_path / "run.txt", "run")["x"].tolist() == [0, 1, 2]
    (tmp_path / "bad.npz").write_bytes((tmp_path / "run.txt").read_bytes()[:40])
    with pytest.raises(ValueError, match="bad.npz"):
        rd.read_npz(tmp_path / "bad.npz", "run")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="deeper"):
        rd.read_json(tmp_path / "deep.json")
    (tmp_path / "big.json").write_text('{"w": 1e400}')
    with pytest.raises(ValueError, match="big.json"):
        rd.read_json(tmp_path / "big.json")
    (tmp_path / "nan.json").write_text('{"w": NaN}')
    with pytest.raises(ValueError):
        rd.read_json(tmp_path / "nan.json")
    f = rd.Fields(p, {"a": np.array([1.0, np.nan]), "n": 3, "s": "x"}, "thing")
    with pytest.raises(ValueError, match="'a' holds NaN"):
        f.array("a")
    with pytest.raises(ValueError, match="'n' is 3"):
        f.integer("n", 0, 2)
    with pytest.raises(ValueError, match="'z' is missing"):
        f.get("z")
    np.save(tmp_path / "one.npy", np.arange(3))
    with pytest.raises(ValueError, match="one array"):
        rd.read_npz(tmp_path / "one.npy", "run")


def test_fields_check_known_provenance_by_type_when_present_and_leave_absent_fields_alone(tmp_path):
    # Issue 37: a field of the wrong type is refused by name, never read as absent (and replaced by a default).
    f = rd.Fields(tmp_path / "p.json", {"seed": "1", "config": [1, 2], "note": "x", "run": 3, "lines": ["a", 1]},
                 "player")  # fmt: skip
    with pytest.raises(ValueError, match=r"p\.json \(player\): field 'config' must be an object; it is a list"):
        f.config("config", dict)
    with pytest.raises(ValueError, match=r"p\.json \(player\): field 'seed' must be a whole number"):
        f.provenance(counts=("seed",))
    with pytest.raises(ValueError, match=r"field 'lines' must be a list of texts"):
        f.texts("lines")
    assert f.optional(f.integer, "run", 0) == 3 and f.optional(f.integer, "absent", 0) is None
    f.provenance(counts=("run", "trial"), texts=("note",), settings={"absent": None})
    with pytest.raises(ValueError, match=r"field 'note' must be an object; it is a text 'x'"):
        f.provenance(settings={"note": None})
    for text, reason in (('{"a": NaN}', "NaN is not allowed"), ("[" * 300 + "]" * 300, "deeper than 200"),
                         ("{", "not valid JSON"), (b"{}", "not a JSON text")):  # fmt: skip
        with pytest.raises(ValueError, match=reason):
            rd.parse_json(text)


def test_a_remembered_stop_keeps_every_output_out_of_place(tmp_path):
    old = tmp_path / "kept.json"
    old.write_text("old")
    try:
        r.note_stop(KeyboardInterrupt)
        r.note_stop(ValueError)  # the first stop stays
        written = r.Output(tmp_path / "new.json", "--out", ".json")
        with pytest.raises(KeyboardInterrupt):
            written.write_text("new")
        replaced = r.Output(old, "--out", ".json", force=True)
        replaced.temporary.write_text("filled by a saver")
        with pytest.raises(KeyboardInterrupt):
            replaced.commit()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"] and old.read_text() == "old"
    finally:
        r.clear_stop()
    r.raise_pending_stop()  # nothing remembered: no exception
    assert r.Output(tmp_path / "new.json", "--out", ".json").write_text("new").read_text() == "new"


def _depth_by_walking(text, limit):
    """The depth check walked one character at a time: the reference ``reading._json_depth_ok`` must equal."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return False
        elif char in "]}":
            depth -= 1
    return True


@given(st.text(alphabet='[]{}"\\ax\n', max_size=60), st.integers(0, 6))
def test_the_depth_check_is_the_character_walk(text, limit):
    assert rd._json_depth_ok(text, limit) == _depth_by_walking(text, limit)


def test_the_depth_check_on_strings_brackets_and_an_unterminated_string():
    deep = "[" * 201 + "]" * 201
    cases = ((deep, False), (f'"{deep}"', True), (f'["\\"{deep}"]', True), (f'"a\\\\"{deep}', False),
             (f'["unterminated {deep}', True), ("]]]]" + "[" * 203, True), ("[" * 200, True))  # fmt: skip
    for text, expected in cases:
        assert rd._json_depth_ok(text, 200) == _depth_by_walking(text, 200) == expected, text[:30]


@given(st.lists(st.sampled_from(["1", "12", "123", "9" * 29, "9" * 30, "e", "E", "+", "-", "e+", "E-", ".", ", ", '"',
                                  "é"]), max_size=12).map("".join))  # fmt: skip
@example("1e+308")
@example("2E-400")
@example("1e-99, 1e400")
@example("é" + "9" * 31)
@example("9" * 30 + ".5")
def test_a_risky_number_is_found_alike_by_the_pattern_and_by_the_bytes(text):
    assert (rd._RISKY_NUMBER.search(text) is not None) == rd._risky_numbers_by_bytes(text)


@given(st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(10**40), 10**40),
                          st.sampled_from(["1e999", "-2E+400", "1e-999", "9" * 31, "-" + "9" * 30, "1" * 320 + ".5",
                                           "12345.6e99", "0.000e308"])), max_size=8))  # fmt: skip
def test_numbers_parse_as_with_the_checking_hooks_or_are_refused_alike(items):
    text = "[" + ", ".join(item if isinstance(item, str) else json.dumps(item) for item in items) + "]"

    def hooked():
        return json.loads(text, parse_constant=rd._refuse_constant, parse_float=rd._finite_float,
                          parse_int=rd._bounded_int)  # fmt: skip

    try:
        expected = hooked()
    except ValueError as error:
        with pytest.raises(ValueError, match=re.escape(str(error))):
            rd._loads(text)
        return
    found = rd._loads(text)
    assert [(type(v), v) for v in found] == [(type(v), v) for v in expected]


@given(st.recursive(st.one_of(st.floats(allow_nan=False), st.integers(), st.booleans(), st.none(), st.text(max_size=2)),
                    lambda inner: st.lists(inner, max_size=3), max_leaves=12), st.integers(1, 3))  # fmt: skip
def test_numbers_accepts_and_refuses_as_the_item_by_item_walk(value, depth):
    fields = rd.Fields(Path("n.json"), {"a": value}, "test")
    try:
        fields._check_number_lists("a", value, (None,) * depth)
        walked = None
    except ValueError as error:
        walked = str(error)
    assert rd._plain_numbers(value, depth) <= (walked is None)  # the fast check passes only what the walk passes
    try:
        fields.numbers("a", (None,) * depth)
    except ValueError as error:
        assert walked is None or str(error) == walked
    else:
        assert walked is None
