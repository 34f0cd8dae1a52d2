"""The MCTS players in the arena: the committed file (book/data/mcts_players.npz), its loader, writer and command.

The file holds, per budget and side, how many of 100 seeded searches chose each square on every board to move
(evolving_ttt.mcts_players). A sample of its rows is recomputed here with mcts_counts, to the bit; every way a copy
can be damaged is refused with an error naming the array; and the arena's players read from it measure exactly as
the players estimated afresh.
"""

import os

import numpy as np
import pytest

from evolving_ttt import mcts_players as saved
from evolving_ttt.arena import catalogue, mcts_players, measure, reference_players
from evolving_ttt.cli import main
from evolving_ttt.game import N_BOARDS, O, X, board_from_string, board_index
from evolving_ttt.mcts import BUDGETS, SAMPLES, UCT_C, mcts_counts, mcts_player, yardstick_spread
from evolving_ttt.numerics import NUMERICS
from evolving_ttt.outcomes import boards_to_move
from evolving_ttt.players import table_player
from evolving_ttt.static_board import decode_side, encode_side
from evolving_ttt.systems import register_player, registered_systems, unregister_player

FILE = saved.PLAYERS_FILE


@pytest.fixture(scope="module")
def players():
    return saved.load_mcts_players()


@pytest.fixture(scope="module")
def arrays():
    with np.load(FILE, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def test_the_committed_file_holds_the_books_three_players(players):
    assert FILE.name == "mcts_players.npz" and FILE.parent.name == "data"
    assert players.budgets == BUDGETS == (10, 100, 1000)
    assert (players.samples, players.seed, players.uct_c, players.solve) == (SAMPLES, saved.PLAYERS_SEED, UCT_C, True)
    assert players.numerics == NUMERICS
    assert players.provenance["command"] == (
        "python -m ttt_helpers mcts --out book/data/mcts_players.npz --budgets 10,100,1000 --samples 100 --seed 1"
    )
    for counts in (players.x_counts, players.o_counts):
        assert counts.dtype == np.uint8 and counts.shape == (3, N_BOARDS, 9)


@pytest.mark.parametrize("mark", [X, O], ids=["X", "O"])
@pytest.mark.parametrize("simulations", BUDGETS)
def test_a_sample_of_rows_recomputes_to_the_bit(players, simulations, mark):
    rows = boards_to_move(mark)
    rng = np.random.default_rng([27, simulations, mark + 1])
    first = board_index(board_from_string("... ... ..." if mark == X else "... .X. ..."))
    boards = np.unique(np.concatenate([[first], rng.choice(rows, 29, replace=False)]))
    assert first in rows and len(boards) == 30
    stored = (players.x_counts if mark == X else players.o_counts)[BUDGETS.index(simulations)]
    again = mcts_counts(boards, simulations, players.samples, players.seed, players.uct_c, players.solve)
    assert again.dtype == np.int64 and np.array_equal(again, stored[boards])
    estimate = players.estimate(simulations, mark)
    assert np.array_equal(estimate.indices, rows) and np.array_equal(estimate.counts, stored[rows])


def test_the_arena_lists_the_mcts_players_after_the_systems_and_before_the_readers():
    found = mcts_players()
    assert [(p.name, p.system) for p in found] == [("MCTS 10", "mcts"), ("MCTS 100", "mcts"), ("MCTS 1000", "mcts")]
    assert found[1].description == ("OpenSpiel's MCTSBot with random roll-outs, 100 simulations per move; move "
                                    "probabilities estimated from 100 seeded searches per board")  # fmt: skip
    assert all(not p.deterministic for p in found)
    names = [p.name for p in catalogue()]
    before = len(reference_players()) + sum(len(system.book_players()) for system in registered_systems())
    assert names[before : before + 3] == ["MCTS 10", "MCTS 100", "MCTS 1000"]
    mine = register_player(table_player("lowest square", "reader", "", lambda b, m: int(np.flatnonzero(b == 0)[0])))
    try:
        assert [p.name for p in catalogue()][before:] == ["MCTS 10", "MCTS 100", "MCTS 1000", "lowest square"]
        assert catalogue()[-1] is mine
    finally:
        unregister_player("lowest square")


@pytest.mark.slow
def test_the_saved_player_measures_exactly_as_the_player_estimated_afresh(players):
    fresh = mcts_player(10, samples=SAMPLES, seed=saved.PLAYERS_SEED)
    arena_player = mcts_players()[0]
    assert np.array_equal(arena_player.x_policy, fresh.x_policy)
    assert np.array_equal(arena_player.o_policy, fresh.o_policy)
    assert measure(arena_player) == measure(fresh)
    x, o = players.estimate(10, X), players.estimate(10, O)
    spread = yardstick_spread(x, o, replicates=2, seed=0)
    assert spread["protocol score"][0] == pytest.approx(measure(arena_player).protocol_score, abs=1e-12)


@pytest.mark.slow
def test_the_page_board_carries_the_mcts_players_exactly_in_the_weighted_form():
    for player in mcts_players():
        for mark in (X, O):
            epsilon, codes = encode_side(player.policy(mark), mark, player.name)
            assert epsilon == 0.0 and codes.startswith("w") and len(codes) < 40_000
            assert np.array_equal(decode_side(epsilon, codes, mark), player.policy(mark))
    with pytest.raises(ValueError, match="damaged"):
        decode_side(0.0, "w0012", X)
    with pytest.raises(ValueError, match="no move on board 0"):
        decode_side(0.0, "w" + "0" * N_BOARDS, X)


# --- Damaged copies -------------------------------------------------------------------------------------------------


def _occupied_count(a):
    """Move one count of an O board from an empty square to an occupied one (the row still sums to samples)."""
    counts = a["o_counts"].copy()
    board = board_index(board_from_string("X.. ... ..."))
    square = int(np.flatnonzero(counts[1, board])[0])
    counts[1, board, square] -= 1
    counts[1, board, 0] += 1  # square 0 holds X's mark
    a["o_counts"] = counts


def _row(a, name, board, change):
    """Add ``change`` to one count of ``board`` (at a square the searches chose, or at square 4 on a row of zeros)."""
    counts = a[name].copy()
    chosen = np.flatnonzero(counts[0, board])
    square = chosen[0] if len(chosen) else 4
    counts[0, board, square] = int(counts[0, board, square]) + change
    a[name] = counts


DAMAGES = {
    "format": (lambda a: a.update(format=np.array("ttt-mcts-player")), "'format'"),
    "version": (lambda a: a.update(version=np.array(2)), "'version'"),
    "missing samples": (lambda a: a.pop("samples"), "'samples' is missing"),
    "missing o_counts": (lambda a: a.pop("o_counts"), "'o_counts' is missing"),
    "budgets decreasing": (lambda a: a.update(budgets=a["budgets"][::-1].copy()), "'budgets'"),
    "budget of one simulation": (lambda a: a.update(budgets=np.array([1, 100, 1000])), "'budgets'"),
    "samples 0": (lambda a: a.update(samples=np.array(0)), "'samples'"),
    "seed negative": (lambda a: a.update(seed=np.array(-1)), "'seed'"),
    "uct_c negative": (lambda a: a.update(uct_c=np.array(-2.0)), "'uct_c'"),
    "solve a number": (lambda a: a.update(solve=np.array(1)), "'solve'"),
    "numerics empty": (lambda a: a.update(numerics=np.array("")), "'numerics'"),
    "provenance not JSON": (lambda a: a.update(provenance=np.array("{command")), "'provenance'"),
    "provenance without command": (lambda a: a.update(provenance=np.array('{"made": 1}')), "'provenance'"),
    "row short of samples": (lambda a: _row(a, "x_counts", 0, -1), "'x_counts' has a row summing to 99"),
    "row over samples": (lambda a: _row(a, "x_counts", 0, 1), "'x_counts' has a row summing to 101"),
    "count where O is not to move": (lambda a: _row(a, "o_counts", 0, 1), "'o_counts' has counts on a board"),
    "count on an occupied square": (_occupied_count, "'o_counts' has a count on an occupied square"),
    "counts as int64": (lambda a: a.update(x_counts=a["x_counts"].astype(np.int64)), "'x_counts' must be .*uint8"),
    "counts as float": (lambda a: a.update(o_counts=a["o_counts"].astype(float)), "'o_counts' must be .*uint8"),
    "counts of two budgets": (lambda a: a.update(x_counts=a["x_counts"][:2].copy()), "'x_counts' has shape"),
    "counts of 9 boards": (lambda a: a.update(o_counts=a["o_counts"][:, :9].copy()), "'o_counts' has shape"),
}


@pytest.mark.parametrize("damage", DAMAGES, ids=list(DAMAGES))
def test_a_damaged_copy_is_refused_naming_the_array(tmp_path, arrays, damage):
    change, message = DAMAGES[damage]
    copy = {name: value.copy() for name, value in arrays.items()}
    change(copy)
    path = tmp_path / "damaged.npz"
    np.savez_compressed(path, **copy)
    with pytest.raises(ValueError, match=message) as refused:
        saved.load_mcts_players(path)
    assert str(path) in str(refused.value)


def test_a_file_that_is_not_an_archive_is_refused(tmp_path):
    path = tmp_path / "empty.npz"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        saved.load_mcts_players(path)
    with pytest.raises(ValueError, match="no such file"):
        saved.load_mcts_players(tmp_path / "missing.npz")


# --- Writing --------------------------------------------------------------------------------------------------------


def _small():
    return saved.make_mcts_players((10, 12), samples=3, seed=5)


@pytest.mark.slow  # seconds (make test, not make test-fast)
def test_a_written_file_reads_back_and_its_rows_are_the_searches_of_any_worker(tmp_path):
    small = _small()
    assert small.provenance["command"].startswith("evolving_ttt.mcts_players.make_mcts_players(budgets=[10, 12]")
    path = saved.save_mcts_players(small, tmp_path / "small.npz")
    back = saved.load_mcts_players(path)
    assert back.budgets == (10, 12) and back.provenance == small.provenance
    assert np.array_equal(back.x_counts, small.x_counts) and np.array_equal(back.o_counts, small.o_counts)
    boards = boards_to_move(O)[::300]
    assert np.array_equal(back.o_counts[1, boards], mcts_counts(boards, 12, 3, 5))
    assert back.player(12).name == "MCTS 12"
    with pytest.raises(ValueError, match="one of the budgets"):
        back.estimate(100, X)


@pytest.mark.slow  # seconds (make test, not make test-fast)
def test_writing_never_replaces_a_file_unless_forced_and_leaves_nothing_half_written(tmp_path, monkeypatch):
    small = _small()
    with pytest.raises(ValueError, match="exists"):  # the arena's own file, above all
        saved.save_mcts_players(small, FILE)
    target = tmp_path / "players.npz"
    target.write_bytes(b"the old file")
    with pytest.raises(ValueError, match="exists"):
        saved.save_mcts_players(small, target)
    assert target.read_bytes() == b"the old file"
    damaged = saved.MCTSPlayers(**{**small.__dict__, "x_counts": small.x_counts[:, ::-1].copy()})
    with pytest.raises(ValueError, match="x_counts"):
        saved.save_mcts_players(damaged, target, force=True)

    def broken_write(handle, **arrays):
        handle.write(b"PK\x03\x04 half an archive")
        raise OSError("the disk is full")

    monkeypatch.setattr(np, "savez_compressed", broken_write)
    with pytest.raises(OSError, match="disk is full"):
        saved.save_mcts_players(small, target, force=True)
    assert target.read_bytes() == b"the old file" and sorted(os.listdir(tmp_path)) == ["players.npz"]
    monkeypatch.undo()
    saved.save_mcts_players(small, target, force=True)
    assert saved.load_mcts_players(target).budgets == (10, 12)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: saved.make_mcts_players((), 3), "budgets"),
        (lambda: saved.make_mcts_players("10", 3), "budgets"),
        (lambda: saved.make_mcts_players((100, 10), 3), "budgets"),
        (lambda: saved.make_mcts_players((1,), 3), "budgets"),
        (lambda: saved.make_mcts_players((10**6,), 3), "budgets"),
        (lambda: saved.make_mcts_players((10,), 0), "samples"),
        (lambda: saved.make_mcts_players((10,), 70_000), "samples"),
        (lambda: saved.make_mcts_players((10,), 3, seed=-1), "seed"),
        (lambda: saved.make_mcts_players((10,), 3, uct_c=-1.0), "uct_c"),
        (lambda: saved.make_mcts_players((10,), 3, solve=1), "solve"),
        (lambda: saved.save_mcts_players("players", "x.npz"), "players"),
    ],
)
def test_bad_settings_are_refused_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- The command ----------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_command_writes_the_file_and_refuses_to_replace_it(tmp_path, capsys):
    out = tmp_path / "mcts.npz"
    argv = ["mcts", "--out", str(out), "--budgets", "10,20", "--samples", "2", "--seed", "4", "--workers", "2"]
    assert main([*argv, "--quiet"]) == 0
    assert "wrote" in capsys.readouterr().out
    made = saved.load_mcts_players(out)
    assert made.provenance["command"] == saved.command_text(out, (10, 20), 2, 4)
    assert (made.budgets, made.samples, made.seed) == ((10, 20), 2, 4)
    boards = boards_to_move(X)[::400]
    assert np.array_equal(made.x_counts[1, boards], mcts_counts(boards, 20, 2, 4))
    before = out.read_bytes()
    with pytest.raises(SystemExit) as exit_status:
        main([*argv, "--quiet"])
    assert exit_status.value.code == 2 and "exists" in capsys.readouterr().err
    assert out.read_bytes() == before
    with pytest.raises(SystemExit):
        main(["mcts", "--out", str(tmp_path / "other.npz"), "--budgets", "100,10", "--quiet"])
    assert "budgets" in capsys.readouterr().err and not (tmp_path / "other.npz").exists()
    with pytest.raises(SystemExit):
        main(["mcts", "--out", str(tmp_path / "other.json"), "--budgets", "10", "--quiet"])
    assert ".npz" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["mcts.npz"]
