"""The one vocabulary of the systems (evolving_ttt.systems): every system speaks it, the registry lists them, the
command line, the arena and the play widget are built from it, and a task gives the same bits in any share, on any
executor, a Dask LocalCluster of two worker processes included."""

import argparse
import importlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evolving_ttt import studies, systems
from evolving_ttt.arena import arena_report, catalogue
from evolving_ttt.cli import build_parser, main
from evolving_ttt.conformance import check_conformance, same_bits
from evolving_ttt.examples.hill_climber import ClimbSettings, HillClimber
from evolving_ttt.fogel.network import random_network
from evolving_ttt.game import O, X, board_from_string
from evolving_ttt.outcomes import random_policy
from evolving_ttt.play import GameSession
from evolving_ttt.players import ArenaPlayer, table_player
from evolving_ttt.sweeps import sweep

BOOK = [importlib.import_module(module) for module in systems.BUILT_IN]  # the papers' four, then Q-learning
SMALL = {system.name: system.SMALL_SETTINGS for system in BOOK}
SILENT = [system.title for system in BOOK if getattr(system, "claims", None) is None]  # built-ins stating no claims


def test_the_registry_holds_the_four_systems_in_the_books_order_and_each_speaks_the_vocabulary():
    names = [s.name for s in systems.registered_systems()]
    assert names[:4] == ["fogel", "al-khateeb", "ling-lam", "mohammadi"] and names == [s.name for s in BOOK]
    for system in systems.registered_systems():
        assert systems.check_system(system) is system
        assert isinstance(system, systems.System)  # the runtime-checkable Protocol
        assert isinstance(system.PAPER_SETTINGS, system.Settings)
        assert system.Settings.from_dict(system.PAPER_SETTINGS.as_dict()) == system.PAPER_SETTINGS
    assert [systems.get_system(s).name for s in ("evolve", "fogel", "ling-lam")] == ["fogel", "fogel", "ling-lam"]
    paper = {s.name: s.task_count(s.PAPER_SETTINGS) for s in systems.registered_systems()[:4]}
    assert paper == {"fogel": 20, "al-khateeb": 20, "ling-lam": 40, "mohammadi": 1}


@pytest.mark.slow
@pytest.mark.parametrize("name", [*SMALL, "hill-climber"])
def test_every_system_passes_the_conformance_check_on_a_local_pool_and_a_dask_cluster(name, dask_address):
    system = HillClimber() if name == "hill-climber" else systems.get_system(name)
    passed = check_conformance(system, scheduler=dask_address)
    assert passed == ["names", "settings", "sweep keys", "command", "tasks", "same bits twice", "any share",
                      "local pool", "Dask", "measures", "record file", "players", "player file", "sweep"]  # fmt: skip


def test_every_registered_system_is_one_the_conformance_check_runs_in_make_test():
    assert [s.name for s in systems.registered_systems()] == list(SMALL)  # none added without a check above


@pytest.mark.slow
def test_fogels_batched_policy_tables_are_the_readable_ones(champion):
    from evolving_ttt.fogel import system as fogel

    networks = [champion[0], *(random_network(np.random.default_rng(k)) for k in range(3))]
    for network in networks:
        for batched, readable in zip(fogel.policy_tables(network), fogel.readable_policy_tables(network), strict=True):
            assert np.array_equal(batched, readable)


@pytest.mark.slow
def test_the_readable_entry_points_take_a_scheduler_too(dask_address):
    from evolving_ttt.al_khateeb.engine import coevolve
    from evolving_ttt.fogel.evolution import evolve
    from evolving_ttt.ling_lam.experiment import train

    assert same_bits(evolve(SMALL["fogel"], 4, scheduler=dask_address), evolve(SMALL["fogel"], 4))
    assert same_bits(coevolve(SMALL["al-khateeb"], 4, scheduler=dask_address), coevolve(SMALL["al-khateeb"], 4))
    assert same_bits(train("baseline", SMALL["ling-lam"], 4, scheduler=dask_address),
                     train("baseline", SMALL["ling-lam"], 4))  # fmt: skip


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: systems.run_tasks(systems.get_system("fogel"), SMALL["fogel"], 1, [3]), "tasks must be distinct"),
        (lambda: systems.run_tasks(systems.get_system("fogel"), SMALL["fogel"], 1, [0, 0]), "tasks must be distinct"),
        (lambda: systems.run_tasks(systems.get_system("fogel"), SMALL["al-khateeb"], 1), "settings must be a"),
        (lambda: systems.run_system("fogel", SMALL["fogel"], seed=-1), "seed must be a whole number"),
        (lambda: systems.run_system("fogel", SMALL["fogel"], scheduler=3), "scheduler must be None"),
        (lambda: systems.run_system("fogel", SMALL["fogel"], workers=0), "workers must be a whole number >= 1"),
        (lambda: systems.get_system("chess"), "no system named 'chess'; the systems are fogel, al-khateeb"),
        (lambda: systems.register_system(object()), "a system must provide name, command"),
        (lambda: systems.register_system(type("Clash", (HillClimber,), {"name": "fogel"})()), "already registered"),
        (lambda: systems.register_player("me"), "player must be an ArenaPlayer"),
        (lambda: systems.unregister_player("nobody"), "no registered player named 'nobody'"),
    ],
)
def test_bad_use_of_the_registry_is_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- The example system of chapter 25, registered from outside the package -------------------------------------


@pytest.fixture()
def hill_climber():
    system = systems.register_system(HillClimber())
    yield system
    systems.unregister_system(system.name)


@pytest.mark.slow
def test_a_new_system_registered_from_outside_appears_everywhere_without_another_file_changing(
    hill_climber, tmp_path, capsys
):
    # the command line: its help, options generated from its settings, and a whole run with the common options
    assert "hill-climber" in build_parser().format_help()
    out = tmp_path / "climb.json"
    assert main(["hill-climber", "--tasks", "3", "--steps", "4", "--seed", "4", "--out", str(out), "--quiet",
                 "--workers", "2"]) == 0  # fmt: skip
    assert f"wrote {out}: 3 players, one per task" in capsys.readouterr().out
    record = hill_climber.load_record(out)
    assert record.seed == 4 and record.settings == ClimbSettings(tasks=3, steps=4) and len(record.players) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["climb.json"]  # nothing else, no temporaries
    alone = hill_climber.run_tasks(ClimbSettings(tasks=3, steps=4), 4, [2])[0]
    assert np.array_equal(record.players[2], alone)
    with pytest.raises(SystemExit):
        main(["hill-climber", "--steps", "many", "--out", str(tmp_path / "x.json")])
    assert "argument --steps: expected a whole number for steps; got 'many'" in capsys.readouterr().err
    # a sweep of its settings, on the local pool
    table = sweep(hill_climber, {"steps": [1, 2]}, 1, tmp_path / "climb.sqlite", workers=2, progress=False)
    assert len(table) == 8 and set(table["steps"]) == {1, 2}
    # its players in the arena's table and the play widget's opponents
    player = systems.register_player(systems.system_player(hill_climber, record.players[0], "hill climber"))
    try:
        assert "hill climber" in [row["name"] for row in arena_report()["players"]]
        session = GameSession("hill climber", human=O)
        assert session.player.system == "Hill climber (chapter 25)" and session.board.any()  # it has moved first
    finally:
        systems.unregister_player(player.name)
    # the table at a glance says that it states no claims
    assert studies.systems_without_claims() == [*SILENT, "Hill climber (chapter 25)"]
    silent = ", ".join([*SILENT, "Hill climber (chapter 25)"])
    assert f"Registered systems that state no claims to judge: {silent}." in studies.glance_markdown(
        pd.DataFrame(columns=list(studies.GLANCE_COLUMNS)))  # fmt: skip
    # and it goes again
    systems.unregister_system("hill-climber")
    assert "hill-climber" not in build_parser().format_help()
    assert studies.systems_without_claims() == SILENT
    systems.register_system(hill_climber)


OUTSIDE = {  # a system in a module the Dask workers cannot import: an object of its own class, or the module itself
    "object": "from evolving_ttt.examples.hill_climber import HillClimber\n\n"
              "class Mine(HillClimber):\n    name = 'my-climber'\n\nSYSTEM = Mine()\n",
    "module": "from evolving_ttt.examples.hill_climber import HillClimber\nfrom evolving_ttt.systems import "
              "REQUIRED_NAMES\n\n_kit = HillClimber()\nglobals().update({n: getattr(_kit, n) for n in "
              "REQUIRED_NAMES})\nname = command = 'my-climber'\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", OUTSIDE)
def test_a_system_registered_from_a_module_the_workers_cannot_import_runs_a_sweep_on_dask(
    kind, tmp_path, dask_address, monkeypatch
):
    (tmp_path / f"my_climber_{kind}.py").write_text(OUTSIDE[kind])
    monkeypatch.syspath_prepend(str(tmp_path))  # here only: the cluster's workers started without it
    module = __import__(f"my_climber_{kind}")
    system = systems.register_system(module.SYSTEM if kind == "object" else module)
    try:
        here = sweep(system, {"tasks": [2], "steps": [2]}, 1, tmp_path / "here.sqlite", workers=1, progress=False)
        there = sweep(system, {"tasks": [2], "steps": [2]}, 1, tmp_path / "there.sqlite", scheduler=dask_address,
                      progress=False)  # fmt: skip
    finally:
        systems.unregister_system("my-climber")
    columns = [c for c in here.columns if c not in ("wall_time", "worker")]
    pd.testing.assert_frame_equal(here[columns], there[columns])
    assert len(here) == 2


def test_a_built_in_system_is_sent_to_workers_by_its_module_name():
    fogel = systems.get_system("fogel")
    reference = systems.system_reference(fogel)
    assert reference.startswith("module:evolving_ttt.fogel.system@") and reference.endswith("fogel/system.py")
    assert systems.resolve_system(reference) is fogel
    assert systems.resolve_system("fogel") is fogel


def test_a_readers_player_joins_the_catalogue_and_the_play_widget_and_leaves_again():
    def centre_first(board, mark):
        return 4 if board[4] == 0 else int(np.flatnonzero(board == 0)[0])

    mine = table_player("centre first", "reader", "the centre, else the lowest empty square", centre_first)
    before = len(catalogue())
    systems.register_player(mine)
    try:
        assert catalogue()[-1] is mine and len(catalogue()) == before + 1
        session = GameSession("centre first", human=O)
        assert session.board[4] == X  # it opened in the centre
        assert mine.move(board_from_string("X.. .O. ...")) == 1
    finally:
        systems.unregister_player("centre first")
    assert len(catalogue()) == before
    with pytest.raises(ValueError, match="opponent must be one of"):
        GameSession("centre first")
    with pytest.raises(ValueError, match="o_policy"):  # a table that plays where it is not to move
        ArenaPlayer("broken", "reader", "", random_policy(X), random_policy(X))


# --- The command line: --scheduler local writes the same bits ------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments",
    [
        ["evolve", "--trials", "4", "--generations", "50", "--seed", "3"],
        ["al-khateeb", "--runs", "3", "--generations", "20", "--seed", "3"],
        ["ling-lam", "--seeds", "3", "--iterations", "100", "--seed", "3"],
        ["mohammadi", "--runs", "2", "--generations", "2", "--population", "24", "--seeds-kept", "2", "--seed", "3"],
    ],
    ids=lambda a: a[0],
)
def test_a_command_on_a_dask_cluster_writes_exactly_the_same_file(arguments, tmp_path, capsys, dask_address):
    """The first command starts a local cluster of its own (``--scheduler local``); the others, whose only
    difference from it is the system, send their tasks to the session's cluster (its address), which is quicker
    than starting one each."""
    suffix = ".json" if arguments[0] == "mohammadi" else ".npz"
    here, there = tmp_path / f"here{suffix}", tmp_path / f"there{suffix}"
    scheduler = "local" if arguments[0] == "evolve" else dask_address
    assert main([*arguments, "--out", str(here), "--quiet"]) == 0
    assert main([*arguments, "--out", str(there), "--quiet", "--scheduler", scheduler, "--workers", "2"]) == 0
    expected = "a local Dask cluster of 2 worker(s)" if scheduler == "local" else f"the Dask scheduler {scheduler}"
    assert expected in capsys.readouterr().err
    assert here.read_bytes() == there.read_bytes()
    if suffix == ".json":
        assert json.loads(here.read_text())["seed"] == 3


@pytest.mark.slow
def test_a_scheduler_that_cannot_be_reached_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TTT_DASK_CONNECT_TIMEOUT", "1")  # refused connections are retried for this long
    with pytest.raises(SystemExit) as stop:
        main(["evolve", "--trials", "1", "--generations", "1", "--out", str(tmp_path / "a.npz"), "--quiet",
              "--scheduler", "tcp://127.0.0.1:9"])  # fmt: skip
    assert stop.value.code == 2
    assert "scheduler tcp://127.0.0.1:9: cannot connect" in capsys.readouterr().err
    assert not (tmp_path / "a.npz").exists()


def test_two_outputs_of_one_command_may_not_be_the_same_file(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["mohammadi", "--out", str(tmp_path / "a.json"), "--champion", str(tmp_path / "a.json"), "--quiet"])
    assert "--champion and --out are the same file" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the same file by another name
        main(["mohammadi", "--out", str(tmp_path / "a.json"), "--champion", str(tmp_path / "x" / ".." / "a.json")])
    assert "every output must be a different file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_arguments_module_gives_one_line_errors():
    from evolving_ttt.arguments import whole_number

    assert whole_number("7") == 7
    for bad in ("-1", "x", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected a whole number >= 0"):
            whole_number(bad)


@pytest.mark.parametrize("module", ["cli", "arena", "play", "static_board"])
def test_the_tools_above_the_systems_import_no_system_but_through_the_registry(module):
    import ast

    tree = ast.parse((Path(systems.__file__).parent / f"{module}.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    reaching = {name for name in imported if name.split(".")[1:2] in (["al_khateeb"], ["ling_lam"], ["mohammadi"])}
    assert reaching == set()
    # Fogel's network stays: the evaluate command and the play chapter's readable network player are Fogel's own,
    # not a system's entry in the registry. The rule base, every system's yardstick, is below the systems.
    fogel = {name for name in imported if ".fogel." in name}
    assert fogel <= {"evolving_ttt.fogel.exact", "evolving_ttt.fogel.network"}
