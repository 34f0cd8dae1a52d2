"""The careful file layer of evolving_ttt.records: outputs made before a run and written whole, checked reading."""

import numpy as np
import pytest

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
