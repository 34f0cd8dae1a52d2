"""The one vocabulary of the systems (evolving_ttt.systems): every system speaks it, the registry lists them, the
command line, the arena and the play widget are built from it, and a task gives the same bits in any share, on any
executor, a Dask LocalCluster of two worker processes included."""

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pytest

from evolving_ttt import systems
from evolving_ttt.al_khateeb.evaluator import AlKhateebConfig
from evolving_ttt.arena import arena_report, catalogue
from evolving_ttt.cli import build_parser, main
from evolving_ttt.fogel.evolution import ExperimentConfig
from evolving_ttt.fogel.exact import exact_scores
from evolving_ttt.fogel.network import Network, load_network, random_network, save_network, stack_networks
from evolving_ttt.game import O, X, board_from_string
from evolving_ttt.ling_lam.experiment import LingLamConfig
from evolving_ttt.mohammadi.coevolution import MohammadiConfig
from evolving_ttt.outcomes import random_policy
from evolving_ttt.play import GameSession
from evolving_ttt.players import ArenaPlayer, table_player

# Small settings of every system: a few seconds each.
SMALL = {
    "fogel": ExperimentConfig(parents=6, generations=4, trials=3),
    "al-khateeb": AlKhateebConfig(runs=3, generations=3),
    "ling-lam": LingLamConfig(seeds=2, iterations=20),
    "mohammadi": MohammadiConfig(population=16, generations=2, runs=2, seeds_kept=2, best_candidates=4,
                                 random_candidates=4),  # fmt: skip
}


def leaves(value):
    """Every array and number inside a task result or record, in a fixed order, for comparing bits."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if hasattr(value, "__dataclass_fields__"):
        return [leaf for name in value.__dataclass_fields__ for leaf in leaves(getattr(value, name))]
    if hasattr(value, "arrays"):  # a Population
        return leaves(value.arrays())
    return [value]


def same_bits(a, b) -> bool:
    left, right = leaves(a), leaves(b)
    if len(left) != len(right):
        return False
    for x, y in zip(left, right, strict=True):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                return False
        elif not (x == y or (x != x and y != y)):
            return False
    return True


@pytest.fixture(scope="module")
def dask_address():
    distributed = pytest.importorskip("distributed")
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster:  # fmt: skip
        yield cluster.scheduler_address


def test_the_registry_holds_the_four_systems_in_the_books_order_and_each_speaks_the_vocabulary():
    names = [s.name for s in systems.registered_systems()]
    assert names[:4] == ["fogel", "al-khateeb", "ling-lam", "mohammadi"]
    for system in systems.registered_systems()[:4]:
        assert systems.check_system(system) is system
        assert isinstance(system, systems.System)  # the runtime-checkable Protocol
        assert isinstance(system.PAPER_SETTINGS, system.Settings)
        assert system.Settings.from_dict(system.PAPER_SETTINGS.as_dict()) == system.PAPER_SETTINGS
    assert [systems.get_system(s).name for s in ("evolve", "fogel", "ling-lam")] == ["fogel", "fogel", "ling-lam"]
    paper = {s.name: s.task_count(s.PAPER_SETTINGS) for s in systems.registered_systems()[:4]}
    assert paper == {"fogel": 20, "al-khateeb": 20, "ling-lam": 40, "mohammadi": 1}


@pytest.mark.parametrize("name", SMALL)
def test_a_task_gives_the_same_bits_in_any_share_and_the_record_saves_and_loads(name, tmp_path):
    system = systems.get_system(name)
    settings = SMALL[name]
    count = system.task_count(settings)
    together = system.run_tasks(settings, 5, list(range(count)))
    assert len(together) == count
    for task in range(count):  # alone, and in reverse order with the others
        assert same_bits(system.run_tasks(settings, 5, [task])[0], together[task])
    assert same_bits(system.run_tasks(settings, 5, list(range(count))[::-1])[::-1], together)
    if count > 1:  # another seed gives other results
        assert not same_bits(system.run_tasks(settings, 6, [0])[0], together[0])
    record = system.merge(settings, 5, together)
    assert same_bits(record, systems.run_system(system, settings, seed=5))
    path = tmp_path / ("record.json" if name == "mohammadi" else "record.npz")
    system.save_record(record, path)
    assert same_bits(system.load_record(path), record)
    players = system.record_players(record)
    assert len(players) == count
    for k, player in enumerate(players[:2]):
        file = tmp_path / f"player{k}.json"
        system.save_player(player, file, seed=5, task=k)
        loaded, provenance = system.load_player(file)
        assert provenance["seed"] == 5 and provenance["task"] == k
        for before, after in zip(system.policy_tables(player), system.policy_tables(loaded), strict=True):
            assert np.array_equal(before, after)
        arena_player = systems.system_player(system, loaded, f"{name} {k}")
        assert arena_player.system == system.title and arena_player.explain is not None


@pytest.mark.parametrize("name", SMALL)
def test_every_system_gives_the_same_bits_on_a_two_worker_dask_cluster(name, dask_address):
    system = systems.get_system(name)
    here = systems.run_system(system, SMALL[name], seed=2)
    there = systems.run_system(system, SMALL[name], seed=2, scheduler=dask_address)
    assert same_bits(here, there)
    assert same_bits(here, systems.run_system(system, SMALL[name], seed=2, workers=2))


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
        (lambda: systems.register_system(HillClimber(name="fogel")), "already registered"),
        (lambda: systems.register_player("me"), "player must be an ArenaPlayer"),
        (lambda: systems.unregister_player("nobody"), "no registered player named 'nobody'"),
    ],
)
def test_bad_use_of_the_registry_is_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- A throwaway system, registered from outside the package --------------------------------------------------


@dataclass(frozen=True)
class ClimbSettings:
    """A random-restart hill climber over Fogel's network: ``restarts`` tasks of ``steps`` steps."""

    restarts: int = 2
    steps: int = 6
    spread: float = 0.5

    def as_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        return cls(**data)


class HillClimber:
    """Every name of :class:`evolving_ttt.systems.System`, in a few lines each."""

    Settings, PAPER_SETTINGS = ClimbSettings, ClimbSettings()

    def __init__(self, name="hill-climber"):
        self.name = self.command = name
        self.title, self.description = "Hill climber (test)", "random-restart hill climbing of Fogel's network"

    def task_count(self, settings):
        return settings.restarts

    def run_tasks(self, settings, seed, tasks, progress=False):
        found = []
        for task in tasks:
            rng = np.random.default_rng([seed, task])
            best = random_network(rng)
            score = exact_scores(stack_networks([best]))[0][0]
            for _ in range(settings.steps):
                arrays = {k: v + rng.normal(0, settings.spread, v.shape) for k, v in vars(best).items()}
                candidate = Network(**arrays)
                candidate_score = exact_scores(stack_networks([candidate]))[0][0]
                if candidate_score > score:
                    best, score = candidate, candidate_score
            found.append((best, float(score)))
        return found

    def merge(self, settings, seed, results):
        return {"seed": seed, "networks": [n for n, _ in results], "scores": [s for _, s in results]}

    def save_record(self, record, path):
        arrays = {f"{k}_{name}": v for k, n in enumerate(record["networks"]) for name, v in vars(n).items()}
        with open(path, "wb") as handle:  # exactly the path given: numpy adds no suffix to an open file
            np.savez(handle, seed=record["seed"], scores=record["scores"], **arrays)

    def load_record(self, path):
        with np.load(path) as data:
            names = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")
            networks = [Network(*(data[f"{k}_{n}"] for n in names)) for k in range(len(data["scores"]))]
            return {"seed": int(data["seed"]), "networks": networks, "scores": data["scores"].tolist()}

    def record_players(self, record):
        return list(record["networks"])

    def task_measures(self, settings, result):
        return {"exact_score": result[1]}

    def save_player(self, player, path, **provenance):
        save_network(player, path, **provenance)

    def load_player(self, path):
        return load_network(path)

    def policy_tables(self, player):
        from evolving_ttt.fogel.system import policy_tables

        return policy_tables(player)

    def explain(self, player):
        return None

    def book_players(self):
        best = max(self.run_tasks(self.PAPER_SETTINGS, 0, [0, 1]), key=lambda found: found[1])[0]
        return (systems.system_player(self, best, "hill climber", "the best of two climbs"),)

    def add_arguments(self, parser):
        parser.add_argument("--restarts", type=int, default=2)
        parser.add_argument("--best", help="also save the best network to this JSON file")

    def settings_from_arguments(self, args):
        return ClimbSettings(restarts=args.restarts)

    def extra_outputs(self, args):
        outputs = {"--out": (Path(args.out), ".npz")}
        if args.best:
            outputs["--best"] = (Path(args.best), ".json")
        return outputs

    def estimated_memory(self, settings, workers):
        return 10**8

    def describe(self, settings):
        return f"{settings.restarts} restarts"

    def summary(self, record):
        return f"best exact score {max(record['scores']):.2f}"

    def write_outputs(self, record, args, paths):
        if "--best" not in paths:
            return {}
        best = int(np.argmax(record["scores"]))
        save_network(record["networks"][best], paths["--best"], restart=best)
        return {"--best": f"the best climb, restart {best}"}


@pytest.fixture()
def hill_climber():
    system = systems.register_system(HillClimber())
    yield system
    systems.unregister_system(system.name)


def test_a_new_system_registered_from_outside_appears_everywhere_without_another_file_changing(
    hill_climber, tmp_path, capsys
):
    # the command line: its help and a whole run, with the common options
    assert "hill-climber" in build_parser().format_help()
    out, best = tmp_path / "climb.npz", tmp_path / "best.json"
    assert main(["hill-climber", "--restarts", "3", "--seed", "4", "--out", str(out), "--quiet", "--workers", "2",
                 "--best", str(best)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert f"wrote {out}: best exact score" in printed and f"wrote {best}: the best climb, restart" in printed
    record = hill_climber.load_record(out)
    assert record["seed"] == 4 and len(record["networks"]) == 3
    restart = int(np.argmax(record["scores"]))
    assert np.array_equal(load_network(best)[0].hidden_weights, record["networks"][restart].hidden_weights)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.json", "climb.npz"]  # nothing else, no temporaries
    alone = hill_climber.run_tasks(ClimbSettings(restarts=3), 4, [2])[0]
    assert np.array_equal(record["networks"][2].hidden_weights, alone[0].hidden_weights)
    # the arena's table and the play widget's opponents
    assert "hill climber" in [row["name"] for row in arena_report()["players"]]
    session = GameSession("hill climber", human=O)
    assert session.player.system == "Hill climber (test)" and session.board.any()  # it has made its first move
    # and it goes again
    systems.unregister_system("hill-climber")
    assert "hill climber" not in [p.name for p in catalogue()]
    assert "hill-climber" not in build_parser().format_help()
    systems.register_system(hill_climber)


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
def test_a_command_on_a_local_dask_cluster_writes_exactly_the_same_file(arguments, tmp_path, capsys):
    suffix = ".json" if arguments[0] == "mohammadi" else ".npz"
    here, there = tmp_path / f"here{suffix}", tmp_path / f"there{suffix}"
    assert main([*arguments, "--out", str(here), "--quiet"]) == 0
    assert main([*arguments, "--out", str(there), "--quiet", "--scheduler", "local", "--workers", "2"]) == 0
    assert "a local Dask cluster of 2 worker(s)" in capsys.readouterr().err
    assert here.read_bytes() == there.read_bytes()
    if suffix == ".json":
        assert json.loads(here.read_text())["seed"] == 3


def test_a_scheduler_that_cannot_be_reached_is_a_usage_error(tmp_path, capsys):
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
    # Fogel's network and rule base stay: the evaluate command, the rule-base player and the play chapter's
    # readable opponents are Fogel's own, not a system's entry in the registry.
    assert {name for name in imported if ".fogel." in name} <= {
        "evolving_ttt.fogel.exact", "evolving_ttt.fogel.network", "evolving_ttt.fogel.opponent"
    }
