"""The system kit (evolving_ttt.kit) and the conformance check (evolving_ttt.conformance): what a new system gets for
free, the files it writes and refuses, and a check that fails for each way a system can break the tools above."""

import argparse
import json
from dataclasses import dataclass, field

import numpy as np
import pytest

from evolving_ttt import systems
from evolving_ttt.conformance import ConformanceError, check_conformance, same_bits
from evolving_ttt.examples.hill_climber import ClimbSettings, HillClimber
from evolving_ttt.kit import (
    KIT_PLAYER_FORMAT,
    KitSettings,
    SystemKit,
    parse_setting,
    setting_text,
    settings_from_dict,
    task_generator,
)


def test_a_task_generator_is_the_spawned_child_of_the_runs_seed():
    for seed, task in [(0, 0), (5, 3), (2**40, 17)]:
        spawned = np.random.default_rng(np.random.SeedSequence(seed).spawn(task + 1)[task])
        assert np.array_equal(task_generator(seed, task).random(4), spawned.random(4))
    assert not np.array_equal(task_generator(1, 0).random(4), task_generator(1, 1).random(4))


def test_settings_read_back_from_a_dictionary_and_refuse_unknown_or_bad_keys():
    assert ClimbSettings.from_dict(ClimbSettings(tasks=3).as_dict()) == ClimbSettings(tasks=3)
    with pytest.raises(ValueError, match="ClimbSettings has no setting 'restarts'; its settings are tasks, steps"):
        ClimbSettings.from_dict({"restarts": 2})
    with pytest.raises(ValueError, match="must be an object"):
        settings_from_dict(ClimbSettings, [1, 2])
    for value, kind in [(0.1, float), (True, bool), (7, int), ((1, 2), tuple[int, int]), ("x", str)]:
        assert parse_setting(setting_text(value), kind) == value


def test_the_command_options_come_from_the_settings_and_refuse_bad_text():
    parser = argparse.ArgumentParser()
    HillClimber().add_arguments(parser)
    args = parser.parse_args(["--tasks", "3", "--spread", "0.25"])
    assert HillClimber().settings_from_arguments(args) == ClimbSettings(tasks=3, spread=0.25)
    with pytest.raises(SystemExit):
        parser.parse_args(["--spread", "wide"])


def test_a_kit_system_must_define_its_own_parts_and_may_not_take_a_commands_name():
    with pytest.raises(ValueError, match="must define run_task, square_scores, move or policy_tables"):
        type("Empty", (SystemKit,), {"name": "e", "title": "E", "Settings": ClimbSettings,
                                     "PAPER_SETTINGS": ClimbSettings()})  # fmt: skip

    @dataclass(frozen=True)
    class Seeded(KitSettings):
        tasks: int = 1
        seed: int = 0

    with pytest.raises(ValueError, match="a setting may not be called 'seed'"):
        type("Clash", (HillClimber,), {"Settings": Seeded, "PAPER_SETTINGS": Seeded(), "SMALL_SETTINGS": Seeded()})


def test_player_and_record_files_load_back_and_refuse_another_system_or_a_bad_field(tmp_path):
    climber = HillClimber()
    record = climber.merge(climber.SMALL_SETTINGS, 3, climber.run_tasks(climber.SMALL_SETTINGS, 3, [0, 1]))
    climber.save_record(record, tmp_path / "r.json")
    assert same_bits(climber.load_record(tmp_path / "r.json"), record)
    climber.save_player(record.players[0], tmp_path / "p.json", seed=3)
    player, provenance = climber.load_player(tmp_path / "p.json")
    assert np.array_equal(player, record.players[0]) and provenance == {"seed": 3}
    with pytest.raises(ValueError, match="provenance may not set the format's own field"):
        climber.save_player(player, tmp_path / "q.json", system="other")
    data = json.loads((tmp_path / "p.json").read_text())
    for change, message in [({"system": "fogel"}, "is a player of 'fogel', not of hill-climber"),
                            ({"format": "x"}, f'needs "format": "{KIT_PLAYER_FORMAT}"'),
                            ({"player": [1, "a"]}, "the player must be an array of numbers"),
                            ({"player": [[1.0] * 9] * 2}, r"\(hill-climber player\)")]:  # fmt: skip
        (tmp_path / "bad.json").write_text(json.dumps({**data, **change}))
        with pytest.raises(ValueError, match=message):
            climber.load_player(tmp_path / "bad.json")
    text = json.loads((tmp_path / "r.json").read_text())
    (tmp_path / "bad.json").write_text(json.dumps({**text, "players": text["players"][:1]}))
    with pytest.raises(ValueError, match="field 'players' must list 2 players, one per task"):
        climber.load_record(tmp_path / "bad.json")
    for settings, message in [({"tasks": -1}, "tasks must be a whole number >= 1; got -1"),
                              ({"steps": 2.5}, "steps must be a whole number; got 2.5"),
                              ({"spread": "wide"}, "spread must be a number; got 'wide'")]:  # fmt: skip
        (tmp_path / "bad.json").write_text(json.dumps({**text, "settings": settings}))
        with pytest.raises(ValueError, match=f"bad.json: settings refused: .*{message}"):
            climber.load_record(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="steps must be a whole number; got True"):
        ClimbSettings(steps=True)
    assert ClimbSettings(spread=1).spread == 1.0 and isinstance(ClimbSettings(spread=1).spread, float)


# --- The conformance check fails where a system breaks what the tools above rely on ------------------------------


class SharedDraws(HillClimber):
    """Draws from one generator shared by the tasks: a task's result depends on the tasks before it."""

    name = "shared-draws"

    def run_tasks(self, settings, seed, tasks, progress=False):
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(9) for _ in tasks]


class Cheater(HillClimber):
    """Climbs as the hill climber does, but its players play square 0 on every board, taken or not."""

    name = "cheater"

    def points(self, player):
        x_table, o_table = HillClimber.policy_tables(self, player)
        return float(x_table.sum() + o_table.sum())

    def policy_tables(self, player):
        tables = np.zeros((2, 19683, 9))
        tables[:, :, 0] = 1.0
        return tables[0], tables[1]


class Forgetful(HillClimber):
    """Saves its players without their provenance."""

    name = "forgetful"

    def save_player(self, player, path, **provenance):
        super().save_player(player, path)


@dataclass(frozen=True)
class ListedSettings(KitSettings):
    tasks: int = 2
    steps: int = 1
    spread: float = 0.5
    squares: list = field(default_factory=list)  # a list cannot be written as a command's or a sweep's text


class Unsweepable(HillClimber):
    """A setting that a sweep cannot set."""

    name = "unsweepable"
    Settings, PAPER_SETTINGS, SMALL_SETTINGS = ListedSettings, ListedSettings(), ListedSettings()


@pytest.mark.parametrize(
    ("system", "check"),
    [(SharedDraws(), "any share"), (Cheater(), "record file"), (Forgetful(), "player file"),
     (Unsweepable(), "sweep keys")],  # fmt: skip
    ids=lambda value: getattr(value, "name", value),
)
def test_the_conformance_check_names_the_check_a_broken_system_fails(system, check):
    with pytest.raises(ConformanceError, match=f"{system.name!r} fails the conformance check {check!r}"):
        check_conformance(system)
    assert system.name not in [s.name for s in systems.registered_systems()]  # the check leaves no registration
