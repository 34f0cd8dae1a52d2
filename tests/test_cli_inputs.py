"""Every argument vector of the command line ends in exit 0 or a one-line error with exit 2, never a traceback, a
lost run, a file written under another name or an old file replaced without ``--force`` (issue 27).

The property test builds random argument vectors from the real parser (every subcommand and option of
:func:`evolving_ttt.cli.build_parser`) with random values: small, zero, negative, huge and malformed numbers, texts,
and paths to new files, existing files, folders, folders named like an output, missing folders, unwritable places
and a FIFO. Sizes default to tiny ones so that every vector that runs, runs in a fraction of a second. The plain
tests below it cover each case of the issue's paragraphs 'Runs lost at the end', 'Output names that lie' and
'Arguments'.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import re
import shutil
import signal
import sqlite3
import tempfile
import threading
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from evolving_ttt import cli
from evolving_ttt.records import DATA

# --- The vectors ---------------------------------------------------------------------------------------------------

SMALL_NUMBERS = ("0", "1", "2", "3")
ODD_NUMBERS = ("-1", "+2", " 3", "1.5", "1e3", "x", "", "nan", "0x10", "1_0", "\u0663")
HUGE_NUMBERS = (str(10**12), str(10**18), str(2**63), "1" + "0" * 400)


def numbers(*fine: str) -> tuple[str, ...]:
    return (*fine, *SMALL_NUMBERS, *ODD_NUMBERS, *HUGE_NUMBERS)


OUTPUT_PATHS = (
    "{tmp}/new.npz", "{tmp}/new.json", "{tmp}/new.csv", "{tmp}/run.txt", "{tmp}/old.npz", "{tmp}/old.json",
    "{tmp}/old.csv", "{tmp}", "{tmp}/dir.npz", "{tmp}/dir.json", "{tmp}/missing/x.npz", "{tmp}/missing/x.json",
    "/proc/x.npz", "/proc/x.json", "{tmp}/fifo", "", "{tmp}/" + "n" * 250 + ".json",
)  # fmt: skip
"""Where a vector asks for an output: new files (right and wrong suffix), existing files, a folder, folders named like
an output, missing folders, a place nobody can create a file in (not even root), a FIFO, no name, a name too long."""

DATABASES = (
    "{tmp}/new.sqlite", "{tmp}/sweep.sqlite", "{tmp}/old.csv", "{tmp}/empty", "{tmp}", "{tmp}/missing/s.sqlite",
    "/proc/x.sqlite", "{tmp}/fifo",
)  # fmt: skip
NETWORKS = (
    "{tmp}/old.json", "{tmp}/old.npz", "{tmp}", "{tmp}/missing.json", "/proc/x.json", "{tmp}/fifo", "{tmp}/empty",
    "{data}/al_khateeb_ttt.json", "{tmp}/deep.json",
)  # fmt: skip
FOLDERS = ("{tmp}", "{tmp}/missing", "{tmp}/old.json", "/proc", "{tmp}/full", "{tmp}/fifo")

VALUES = {
    "--trials": numbers(), "--generations": numbers(), "--parents": numbers("6", "7"), "--runs": numbers(),
    "--seeds": numbers(), "--iterations": numbers("500"), "--population": numbers("8", "12"),
    "--seeds-kept": numbers(), "--workers": numbers(), "--seed": numbers(), "--tasks": numbers(),
    "--out": OUTPUT_PATHS, "--champion": OUTPUT_PATHS, "--json": OUTPUT_PATHS, "--csv": OUTPUT_PATHS,
    "--db": DATABASES, "--data-dir": FOLDERS, "network": NETWORKS,
    "--payoff": ("1,-10,0", "1,-1,0", "1,2", "a,b,c", "1,nan,0", "1e400,0,0", ""),
    "--methods": ("baseline", "nndtf", "nndtf,baseline", "fogel", "", ",", "baseline,baseline"),
    "--scheduler": ("", "  "),
    "--budgets": ("10", "10,20", "2", "1", "20,10", "10,10", "", ",", "x", "10,1e3", str(10**6)),
    "--samples": numbers("1", "2", "70000"),
}  # fmt: skip
"""The values a vector may give each option (options with choices get their choices and a wrong word)."""

TINY = {
    "evolve": ["--trials", "1", "--generations", "2", "--parents", "6", "--out", "{tmp}/new.npz"],
    "fogel": ["--trials", "1", "--generations", "2", "--parents", "6", "--out", "{tmp}/new.npz"],
    "al-khateeb": ["--runs", "1", "--generations", "2", "--out", "{tmp}/new.npz"],
    "ling-lam": ["--seeds", "1", "--iterations", "2", "--methods", "baseline", "--out", "{tmp}/new.npz"],
    "mohammadi": ["--runs", "1", "--generations", "1", "--population", "8", "--seeds-kept", "2", "--out",
                  "{tmp}/new.json"],
}  # fmt: skip
"""Every system command starts from tiny sizes (a random option given later wins, as argparse reads the last)."""
MCTS_TINY = ["--budgets", "10", "--samples", "1", "--out", "{tmp}/new.npz", "--quiet", "--workers", "1"]
"""So does the command that estimates the MCTS players (one search of 10 simulations per board)."""

SWEEP_CELLS = {
    "fogel": {"parents": "6", "generations": "1", "trials": "1"},
    "al-khateeb": {"runs": "1", "generations": "1"},
    "ling-lam": {"seeds": "1", "iterations": "2", "methods": "baseline"},
    "mohammadi": {"population": "8", "generations": "1", "runs": "1", "seeds_kept": "2", "best_candidates": "2",
                  "random_candidates": "2"},
}  # fmt: skip
"""A tiny sweep of each system; a vector changes one or two of its settings."""

SWEEP_VALUES = ("0", "1", "2", "1,2", "-1", "x", "", str(10**12), "1e400")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser by its name, ``sweep run`` and its siblings included."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                nested = subcommands(sub)
                found |= {f"{name} {k}": v for k, v in nested.items()} if nested else {name: sub}
    return found


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and "-h" not in a.option_strings]


def vector(choose, tmp: Path) -> list[str]:
    """A random argument vector; ``choose(sequence)`` picks one item (hypothesis' draw, or a seeded generator)."""
    parser = cli.build_parser()
    commands = subcommands(parser)
    name = choose(sorted(commands))
    sub = commands[name]
    argv = name.split()
    if argv[0] in TINY:
        argv += TINY[argv[0]] + ["--quiet", "--workers", "1"]
    elif name == "mcts":
        argv += MCTS_TINY
    elif name == "evaluate":
        argv.append(choose(NETWORKS))
    elif name == "sweep run":
        system = choose([*SWEEP_CELLS, "chess"])
        cells = dict(SWEEP_CELLS.get(system, SWEEP_CELLS["fogel"]))
        for _ in range(choose((0, 0, 1, 2))):
            cells[choose([*cells, "mutation.foo"])] = choose(SWEEP_VALUES)
        argv.append(system)
        for key, value in cells.items():
            argv += ["--set", f"{key}={value}"]
        argv += ["--seeds", "1", "--db", "{tmp}/new.sqlite", "--workers", "1", "--quiet"]
    elif name in ("sweep status", "sweep export", "sweep check"):
        argv += ["--db", "{tmp}/sweep.sqlite"]
        if name == "sweep export":
            argv += ["--csv", "{tmp}/new.csv"]
    for _ in range(choose((0, 1, 1, 2, 3)) if options(sub) else 0):
        action = choose(options(sub))
        option = action.option_strings[-1]
        if action.nargs == 0:
            argv.append(option)
        elif action.choices is not None:
            argv += [option, choose([*action.choices, "bogus"])]
        else:
            argv += [option, choose(VALUES.get(option, NUMBERS_OR_TEXT))]
    if choose(range(10)) == 0 and "--out" in argv:  # a required option left out
        at = argv.index("--out")
        del argv[at : at + 2]
    if choose(range(12)) == 0:
        argv.append(choose(("--bogus", "extra", "-", "--")))
    if choose(range(12)) == 0:
        argv = argv[: choose(range(len(argv) + 1))]  # cut short anywhere
    data = str(DATA)
    return [part.replace("{tmp}", str(tmp)).replace("{data}", data) for part in argv]


NUMBERS_OR_TEXT = numbers("word", "{tmp}/new.json")


def make_files(tmp: Path, database: Path | None) -> None:
    """The files every vector may meet: old outputs, a folder named like an output, a FIFO, a sweep database."""
    for name in ("old.npz", "old.json", "old.csv"):
        (tmp / name).write_text("an old file that must survive\n")
    (tmp / "empty").write_bytes(b"")
    (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for name in ("dir.npz", "dir.json", "full"):
        (tmp / name).mkdir()
    for name in ("ling_lam_runs.json", "ling_lam_baseline.json", "ling_lam_nndtf.json"):
        (tmp / "full" / name).write_text("an old file that must survive\n")
    os.mkfifo(tmp / "fifo")
    if database is not None:
        shutil.copy(database, tmp / "sweep.sqlite")


def snapshot(tmp: Path) -> dict[str, bytes | None]:
    found = {}
    for path in tmp.rglob("*"):
        if path.is_file() and not path.name.startswith("sweep.sqlite") and not path.name.startswith("new.sqlite"):
            found[str(path.relative_to(tmp))] = path.read_bytes()
        elif not path.is_file():
            found[str(path.relative_to(tmp))] = None
    return found


class Hang(BaseException):
    """A vector that ran past its time (raised by an alarm)."""


def run_main(argv: list[str], seconds: int = 60) -> tuple[int | None, str, str, str | None]:
    """``cli.main(argv)`` in this process: (exit code, stdout, stderr, the escaped exception's text or None)."""
    out, err = io.StringIO(), io.StringIO()
    escaped = None
    code: int | None = None

    def alarm(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except Hang as hang:
        escaped = f"Hang: {hang}"
    except BaseException as error:  # noqa: B036 - a test of what escapes, whatever it is
        escaped = f"{type(error).__name__}: {error}"[:300]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue(), escaped


def named_outputs(argv: list[str]) -> list[str]:
    """The output files a vector names (the last of each option, as argparse reads them)."""
    found = {}
    for k, part in enumerate(argv[:-1]):
        if part in ("--out", "--champion", "--json", "--csv"):
            found[part] = argv[k + 1]
    return list(found.values())


def classify(argv: list[str], tmp: Path, before: dict, result) -> tuple[str, str]:
    """One of clear (exit 2, one error line), ok (exit 0, every file as named), traceback, hang, lost (a run was
    computed and then not written, or an old file was damaged), silent (exit 0 with a wrong answer: an output under
    another name, an old file replaced without --force, debris left), unclear (exit 2 without one error line).

    A sweep's ``--db`` is no output: it is created, or resumed in place, by design (an empty file is an empty
    database, as SQLite has it)."""
    code, out, err, escaped = result
    after = snapshot(tmp)
    databases = {Path(argv[k + 1]).name for k, part in enumerate(argv[:-1]) if part == "--db"}
    changed = [name for name, content in before.items()
               if after.get(name, b"gone") != content and name not in databases]  # fmt: skip
    new = sorted(set(after) - set(before))
    started = any(line.endswith("worker(s)") for line in err.splitlines())
    if escaped is not None:
        return ("hang" if escaped.startswith("Hang") else "lost" if started else "traceback"), escaped
    if "Traceback" in err:
        return "traceback", err[-300:]
    if code not in (0, 2):
        return "traceback", f"exit {code}: {err[-300:]}"
    if code == 2:
        if changed:
            return "lost", f"old files changed although the command failed: {changed}"
        if started:
            return "lost", f"the run started, then: {err.strip().splitlines()[-1]}"
        lines = [line for line in err.splitlines() if "error:" in line]
        if len(lines) != 1 or not err.strip().splitlines()[-1].count("error:"):
            return "unclear", err[-300:]
        if new:
            return "silent", f"the command failed but left {new}"
        return "clear", lines[0]
    named = named_outputs(argv)
    if "--data-dir" in argv:
        folder = Path(argv[len(argv) - 1 - argv[::-1].index("--data-dir") + 1])
        named += [str(folder / f"ling_lam_{n}.json") for n in ("runs", "baseline", "nndtf")
                  if f"wrote {folder / f'ling_lam_{n}.json'}" in out]  # fmt: skip
    wanted = {str(Path(name).resolve().relative_to(tmp.resolve())) for name in named
              if Path(name).resolve().is_relative_to(tmp.resolve())}  # fmt: skip
    stray = [name for name in new if name not in wanted and not name.startswith("new.sqlite")]
    if stray:
        return "silent", f"exit 0 but wrote {stray}, not only {sorted(wanted)}"
    if changed and "--force" not in argv:
        return "silent", f"exit 0 and replaced {changed} without --force"
    if any(name not in after for name in wanted):
        return "silent", f"exit 0 but {sorted(wanted - set(after))} missing"
    if argv[0] == "ling-lam" and "--iterations" in argv and argv[len(argv) - argv[::-1].index("--iterations")] == "0":
        return "silent", "ling-lam trained nothing and wrote a file"
    return "ok", out[-100:]


@pytest.fixture(scope="module")
def sweep_database(tmp_path_factory):
    """A finished tiny sweep (for status, export, and a run of another sweep on the same file)."""
    from evolving_ttt.sweeps import sweep

    db = tmp_path_factory.mktemp("sweep") / "sweep.sqlite"
    sweep("fogel", [f"{k}={v}" for k, v in SWEEP_CELLS["fogel"].items()], 1, db, workers=1, progress=False)
    return db


@pytest.mark.slow
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(data=st.data())
def test_every_argument_vector_ends_in_exit_0_or_a_one_line_error(data, sweep_database):
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        make_files(tmp, sweep_database)
        argv = vector(lambda items: data.draw(st.sampled_from(list(items))), tmp)
        before = snapshot(tmp)
        result = run_main(argv)
        kind, detail = classify(argv, tmp, before, result)
        event(f"{argv[0] if argv else 'no command'}: {kind}")
        assert kind in ("clear", "ok"), f"{kind}: {argv!r}\n{detail}"
        assert not [p for p in tmp.rglob("*.partial*")], f"a temporary file was left: {argv!r}"


# --- The plain cases of the issue --------------------------------------------------------------------------------

TINY_ARGV = {name: [name, *(part for part in argv if part != "--out" and not part.startswith("{tmp}"))] + ["--quiet",
             "--workers", "1"] for name, argv in TINY.items()}  # fmt: skip
"""Each system command at tiny sizes, without ``--out``."""


def refused(argv: list[str], capsys, pattern: str) -> str:
    """Run ``argv``, which must end in exit 2 and one error line matching ``pattern``; return that line."""
    code, _, err, escaped = run_main(argv)
    assert escaped is None, escaped
    assert code == 2, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert re.search(pattern, lines[0]), lines[0]
    return lines[0]


@pytest.fixture()
def no_run(monkeypatch):
    """Make any run that starts fail the test: every refusal below must come before the run."""

    def must_not_run(*args, **kwargs):
        raise AssertionError("the run started although its arguments were refused")

    monkeypatch.setattr(cli, "run_system", must_not_run)


def old_file(path: Path) -> Path:
    path.write_text("an old file that must survive\n")
    return path


def untouched(path: Path) -> bool:
    return path.read_text() == "an old file that must survive\n"


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# Runs lost at the end: every output is made before the run, so a path nobody can write fails in the first second.


@pytest.mark.parametrize("command", list(TINY))
@pytest.mark.parametrize("where", ["/proc/run{suffix}", "{tmp}/missing/run{suffix}", "{tmp}/dir{suffix}"])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(command, where, tmp_path, capsys, no_run):
    suffix = ".json" if command == "mohammadi" else ".npz"
    (tmp_path / f"dir{suffix}").mkdir()  # a folder named like the output
    out = where.format(tmp=tmp_path, suffix=suffix)
    refused([*TINY_ARGV[command], "--out", out], capsys, rf"--out {re.escape(out)}")
    assert files(tmp_path) == [f"dir{suffix}"]


@pytest.mark.parametrize("command", ["evolve", "al-khateeb", "mohammadi"])
def test_a_champion_that_cannot_be_written_is_refused_before_the_run(command, tmp_path, capsys, no_run):
    suffix = ".json" if command == "mohammadi" else ".npz"
    out = str(tmp_path / f"run{suffix}")
    for champion in ("/proc/champion.json", str(tmp_path / "missing" / "c.json"), str(tmp_path)):
        refused([*TINY_ARGV[command], "--out", out, "--champion", champion], capsys, rf"--champion {champion}")
    assert files(tmp_path) == []


def test_ling_lams_data_dir_files_are_made_before_the_run(tmp_path, capsys, no_run):
    argv = [*TINY_ARGV["ling-lam"], "--iterations", "500", "--out", str(tmp_path / "run.npz")]
    refused([*argv, "--data-dir", "/proc"], capsys, r"--data-dir \(runs\) /proc/ling_lam_runs.json cannot be written")
    refused([*argv, "--data-dir", str(tmp_path / "missing")], capsys, r"--data-dir .*: no such folder")
    old_file(tmp_path / "ling_lam_baseline.json")
    refused([*argv, "--data-dir", str(tmp_path)], capsys, r"--data-dir \(baseline\) .*ling_lam_baseline.json exists")
    assert files(tmp_path) == ["ling_lam_baseline.json"] and untouched(tmp_path / "ling_lam_baseline.json")


def test_a_name_without_its_suffix_is_refused_even_beside_a_folder_named_like_the_output(tmp_path, capsys, no_run):
    (tmp_path / "run.npz").mkdir()  # numpy would have written run.npz when asked for run
    refused([*TINY_ARGV["evolve"], "--out", str(tmp_path / "run")], capsys, r"give a name ending in \.npz")
    assert files(tmp_path) == ["run.npz"]


# Output names that lie: the file written is exactly the file named, or nothing.


@pytest.mark.parametrize(
    ("command", "name", "suffix"),
    [("evolve", "run.txt", ".npz"), ("al-khateeb", "run.txt", ".npz"), ("ling-lam", "run", ".npz"),
     ("mohammadi", "series.npz", ".json")],
)  # fmt: skip
def test_a_name_the_format_cannot_have_is_refused_up_front_saying_why(command, name, suffix, tmp_path, capsys, no_run):
    line = refused([*TINY_ARGV[command], "--out", str(tmp_path / name)], capsys, rf"--out .*{re.escape(name)}")
    assert f"give a name ending in {suffix}" in line
    assert files(tmp_path) == []


@pytest.mark.parametrize("command", list(TINY))
def test_every_command_writes_exactly_the_names_given_and_nothing_else(command, tmp_path, capsys):
    suffix = ".json" if command == "mohammadi" else ".npz"
    argv = [*TINY_ARGV[command], "--out", str(tmp_path / f"record{suffix}")]
    expected = [f"record{suffix}"]
    if command != "ling-lam":
        argv += ["--champion", str(tmp_path / "champion.json")]
        expected.append("champion.json")
    else:
        argv += ["--iterations", "500", "--methods", "baseline", "--data-dir", str(tmp_path)]
        expected += ["ling_lam_baseline.json", "ling_lam_runs.json"]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert files(tmp_path) == sorted(expected)  # no temporaries, no record.npz.npz
    for name in expected:
        assert f"wrote {tmp_path / name}" in printed


def test_two_outputs_may_not_be_one_file(tmp_path, capsys, no_run):
    same = str(tmp_path / "a.json")
    refused([*TINY_ARGV["mohammadi"], "--out", same, "--champion", same], capsys,
            r"--champion and --out are the same file")  # fmt: skip
    refused([*TINY_ARGV["evolve"], "--out", str(tmp_path / "a.npz"), "--champion", str(tmp_path / "a.npz")], capsys,
            r"--champion and --out are the same file")  # fmt: skip
    assert files(tmp_path) == []


@pytest.mark.parametrize("option", ["--out", "--champion"])
def test_an_existing_file_is_replaced_only_with_force(option, tmp_path, capsys):
    out, champion = tmp_path / "series.json", tmp_path / "champion.json"
    old_file(out if option == "--out" else champion)
    argv = [*TINY_ARGV["mohammadi"], "--out", str(out), "--champion", str(champion)]
    refused(argv, capsys, rf"{option} .* exists; give another name, or --force to replace it")
    assert untouched(out if option == "--out" else champion) and len(files(tmp_path)) == 1
    assert cli.main([*argv, "--force"]) == 0
    assert json.loads(out.read_text())["seed"] == 1 and "program" in json.loads(champion.read_text())
    assert files(tmp_path) == ["champion.json", "series.json"]


@pytest.mark.slow
def test_arena_json_and_sweep_csv_are_exact_atomic_and_replaced_only_with_force(tmp_path, capsys, sweep_database):
    report, table = old_file(tmp_path / "arena.json"), old_file(tmp_path / "table.csv")
    refused(["arena", "--json", str(report)], capsys, r"--json .*arena.json exists; .* --force")
    refused(["arena", "--json", str(tmp_path / "arena.txt")], capsys, r"give a name ending in \.json")
    refused(["sweep", "export", "--db", str(sweep_database), "--csv", str(table)], capsys, r"--csv .*table.csv exists")
    refused(["sweep", "export", "--db", str(sweep_database), "--csv", str(tmp_path / "t.txt")], capsys,
            r"give a name ending in \.csv")  # fmt: skip
    assert untouched(report) and untouched(table) and files(tmp_path) == ["arena.json", "table.csv"]
    assert cli.main(["arena", "--json", str(report), "--force"]) == 0
    assert cli.main(["sweep", "export", "--db", str(sweep_database), "--csv", str(table), "--force"]) == 0
    assert "Fogel champion" in [row["name"] for row in json.loads(report.read_text())["players"]]
    assert table.read_text().startswith("cell,seed,task,")
    assert files(tmp_path) == ["arena.json", "table.csv"]


def test_a_saver_that_adds_npz_to_the_name_still_writes_the_name_given(tmp_path, capsys):
    from evolving_ttt import systems
    from evolving_ttt.fogel import system as fogel

    def save_record(record, path):
        np.savez(str(path), seed=record.seed)  # numpy adds .npz to a name without it

    other = types.SimpleNamespace(**{name: getattr(fogel, name) for name in systems.REQUIRED_NAMES})
    other.name = other.command = "numpy-savez"
    other.save_record = save_record
    systems.register_system(other)
    try:
        out = tmp_path / "run.npz"
        assert cli.main(["numpy-savez", *TINY_ARGV["evolve"][1:], "--out", str(out)]) == 0
    finally:
        systems.unregister_system("numpy-savez")
    assert files(tmp_path) == ["run.npz"]
    with np.load(out) as saved:
        assert int(saved["seed"]) == 1


# Errors below the command line, at the end of a run, and interruptions: nothing partial, the old file untouched.


def test_a_value_error_from_a_saver_at_the_end_is_a_usage_error_and_leaves_the_old_file(tmp_path, capsys, monkeypatch):
    from evolving_ttt.fogel import system as fogel

    def broken(record, path):
        Path(path).write_bytes(b"half a recor")
        raise ValueError("the disk said no")

    monkeypatch.setattr(fogel, "save_record", broken)
    out = old_file(tmp_path / "run.npz")
    refused([*TINY_ARGV["evolve"], "--out", str(out), "--force"], capsys,
            r"error: the run finished but its files could not be written, and nothing was: the disk said no$")
    assert untouched(out) and files(tmp_path) == ["run.npz"]


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_command_exits_130_or_143_with_one_line_and_writes_nothing(
    stop, code, tmp_path, capsys, monkeypatch
):
    run_system = cli.run_system

    def interrupted(*args, **kwargs):
        record = run_system(*args, **kwargs)
        os.kill(os.getpid(), stop)  # the signal arrives after the run, while the outputs are temporary files
        return record

    class NotMains(Exception):
        pass

    def fallback(signum, frame):  # if main installed no handler of its own, fail here rather than end pytest
        raise NotMains()

    monkeypatch.setattr(cli, "run_system", interrupted)
    out, champion = old_file(tmp_path / "run.npz"), tmp_path / "champion.json"
    previous = signal.signal(signal.SIGTERM, fallback)
    try:
        assert cli.main([*TINY_ARGV["evolve"], "--out", str(out), "--champion", str(champion), "--force"]) == code
        assert signal.getsignal(signal.SIGTERM) is fallback  # main put the handler back
    finally:
        signal.signal(signal.SIGTERM, previous)
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "interrupted: nothing was written" and "Traceback" not in err
    assert untouched(out) and files(tmp_path) == ["run.npz"]


# Arguments.


def test_evolve_parents_blames_the_option_given(tmp_path, capsys, no_run):
    line = refused([*TINY_ARGV["evolve"], "--parents", "1", "--out", str(tmp_path / "r.npz")], capsys, r"--parents 1")
    assert "comparisons (10)" not in line and "--parents must be at least 6" in line


def test_ling_lam_refuses_zero_iterations_like_every_other_zero(tmp_path, capsys, no_run):
    refused([*TINY_ARGV["ling-lam"], "--iterations", "0", "--out", str(tmp_path / "r.npz")], capsys,
            r"--iterations must be a whole number >= 1; got 0")  # fmt: skip
    for command, option in [("evolve", "--generations"), ("al-khateeb", "--runs"), ("mohammadi", "--generations")]:
        suffix = ".json" if command == "mohammadi" else ".npz"
        refused([*TINY_ARGV[command], option, "0", "--out", str(tmp_path / f"r{suffix}")], capsys,
                rf"{option[2:]} must be a whole number >= 1; got 0")  # fmt: skip
    assert files(tmp_path) == []


def test_mohammadis_memory_estimate_counts_population_generations_and_runs():
    from evolving_ttt.mohammadi import system as mohammadi
    from evolving_ttt.mohammadi.coevolution import MohammadiSettings

    small = MohammadiSettings(population=64, generations=2, runs=2, seeds_kept=2)
    base = mohammadi.estimated_memory(small, 1)
    assert 85e6 < base < 200e6  # 85 MB measured with 64 programs
    for change in ({"population": 640}, {"generations": 20_000}, {"runs": 200}):
        assert mohammadi.estimated_memory(dataclasses.replace(small, **change), 1) > base * 1.1, change
    # the round robin of every run grows with the square of the population
    big = mohammadi.estimated_memory(dataclasses.replace(small, population=20_000), 1)
    assert big > 100 * 20_000**2


@pytest.mark.parametrize(
    ("command", "option"),
    [("evolve", "--generations"), ("evolve", "--trials"), ("evolve", "--parents"), ("al-khateeb", "--generations"),
     ("al-khateeb", "--runs"), ("ling-lam", "--iterations"), ("ling-lam", "--seeds"), ("mohammadi", "--population"),
     ("mohammadi", "--generations"), ("mohammadi", "--runs")],
)  # fmt: skip
@pytest.mark.parametrize("count", [10**12, 2**63 - 1])
def test_an_absurd_count_is_refused_by_the_memory_estimate_before_anything_is_allocated(
    command, option, count, tmp_path, capsys, no_run
):
    suffix = ".json" if command == "mohammadi" else ".npz"
    argv = [*TINY_ARGV[command], option, str(count), "--out", str(tmp_path / f"r{suffix}")]
    if command == "mohammadi" and option == "--population":
        argv += ["--seeds-kept", "2"]
    refused(argv, capsys, rf"{'fogel' if command == 'evolve' else command} with .* needs about .* GiB of memory")
    assert files(tmp_path) == []


@pytest.mark.parametrize("count", [2**63, 10**400, "1" * 5000])
def test_a_count_beyond_64_bits_is_refused_by_the_argument_itself(count, tmp_path, capsys, no_run):
    refused([*TINY_ARGV["evolve"], "--generations", str(count), "--out", str(tmp_path / "r.npz")], capsys,
            r"argument --generations: expected a whole number")  # fmt: skip


@pytest.mark.parametrize("network", ["{tmp}", "{tmp}/missing.json", "/proc/x.json", "{tmp}/fifo", "{tmp}/empty"])
def test_evaluate_refuses_a_folder_a_missing_file_and_a_fifo_in_one_line(network, tmp_path, capsys):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "empty").write_bytes(b"")
    refused(["evaluate", network.format(tmp=tmp_path)], capsys, r"error: .*")  # a FIFO would wait forever


@pytest.mark.parametrize(
    ("db", "pattern"),
    [("{tmp}", r"is a directory"), ("{tmp}/missing/s.sqlite", r"the folder .* does not exist"),
     ("/proc/s.sqlite", r"cannot be created"), ("{tmp}/text.sqlite", r"not a sweep database \(not an SQLite file\)"),
     ("{tmp}/fifo", r"is not a regular file"), ("{tmp}/other.sqlite", r"holds no sweep; give a new file")],
)  # fmt: skip
def test_a_sweep_database_that_is_not_one_is_a_one_line_error_and_stays_as_it_was(db, pattern, tmp_path, capsys):
    (tmp_path / "text.sqlite").write_text("not a database at all\n" * 10)
    with sqlite3.connect(tmp_path / "other.sqlite") as other:  # another program's database
        other.execute("CREATE TABLE notes (text TEXT)")
    other.close()
    os.mkfifo(tmp_path / "fifo")
    before = {name: (tmp_path / name).read_bytes() for name in ("text.sqlite", "other.sqlite")}
    path = db.format(tmp=tmp_path)
    cells = [a for k, v in SWEEP_CELLS["fogel"].items() for a in ("--set", f"{k}={v}")]
    argv = ["sweep", "run", "fogel", *cells, "--seeds", "1", "--db", path, "--quiet", "--workers", "1"]
    refused(argv, capsys, rf"--db {re.escape(path)}.*{pattern}")
    if db != "{tmp}/missing/s.sqlite" and db != "/proc/s.sqlite":
        refused(["sweep", "status", "--db", path], capsys, rf"--db {re.escape(path)}")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert files(tmp_path) == ["fifo", "other.sqlite", "text.sqlite"]


def test_a_sweep_too_large_is_refused_before_its_database_is_made(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    refused(["sweep", "run", "fogel", "--set", "parents=6", "--set", "generations=1", "--set", "trials=1",
             "--seeds", str(10**12), "--db", str(db)], capsys, r"more than 1,000,000 tasks")  # fmt: skip
    refused(["sweep", "run", "fogel", "--set", "parents=6", "--set", "generations=1", "--set", f"trials={10**9}",
             "--seeds", "1", "--db", str(db)], capsys, r"tasks .* more than 1,000,000")  # fmt: skip
    refused(["sweep", "run", "fogel", "--set", "parents=6", "--set", f"generations={10**12}", "--set", "trials=1",
             "--seeds", "1", "--db", str(db), "--workers", "1"], capsys, r"sweep fogel .* GiB")  # fmt: skip
    assert files(tmp_path) == []


def test_the_players_script_is_written_whole_at_exactly_the_path(tmp_path):
    from evolving_ttt.arena import reference_players
    from evolving_ttt.static_board import write_players_script

    players = reference_players()[:2]
    path = old_file(tmp_path / "players.js.txt")
    assert write_players_script(players, path) == path  # a Python function replaces the file: it is called on purpose
    assert path.read_text().startswith("// Written by evolving_ttt.static_board") and files(tmp_path) == [path.name]
    with pytest.raises(ValueError, match="is a folder"):
        write_players_script(players, tmp_path)
    with pytest.raises(ValueError, match="players must be a sequence of ArenaPlayer"):
        write_players_script(["not a player"], path)
    assert path.read_text().startswith("// Written by") and files(tmp_path) == [path.name]
