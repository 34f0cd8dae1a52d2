"""The command line: one subcommand per registered system (``evolve``, ``al-khateeb``, ``ling-lam``,
``mohammadi``: :mod:`evolving_ttt.systems`), ``evaluate`` (chapter 11), ``arena`` (chapter 24), ``sweep``
(chapter 20) and ``mcts``, which estimates the arena's Monte Carlo tree search players (chapter 27).

Every system command is built from the registry and works the same way: the system's own options, and
``--seed``, ``--out``, ``--workers``, ``--scheduler``, ``--quiet`` and ``--force``; the tasks run on local
processes or a Dask cluster (:mod:`evolving_ttt.parallel`).

Every command checks all it is given before it starts, and writes its files whole, under exactly the names
given, or not at all (issue 27):

- every output (``--out``, ``--champion``, ``--json``, ``--csv``, the files of ``--data-dir``) is made before the
  run (:func:`evolving_ttt.records.prepare_outputs`: a temporary file beside the target), so a path that cannot be
  written fails in the first second, not after an hour's run; each is put in place whole when the command ends;
- a name must carry its format's suffix (``.npz`` for a run record, ``.json`` for a player or a series, ``.csv``
  for a sweep's table): another name is refused before the run, so the file written is always the file named;
- two outputs of one command may not be the same file, and an existing file is replaced only with ``--force``;
- a bad argument, path or file is one line ``error: ...`` and exit status 2, never a traceback;
- Ctrl-C (SIGINT) or SIGTERM removes the temporary files, leaves every old file as it was, prints
  ``interrupted: nothing was written`` and exits with status 130 (SIGINT) or 143 (SIGTERM).

The top of the package: nothing imports it.
"""

from __future__ import annotations

import _thread
import argparse
import json
import os
import re
import signal
import sqlite3
import stat
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from evolving_ttt.arena import arena_report, catalogue, format_arena_table
from evolving_ttt.arguments import counted, whole_number
from evolving_ttt.fogel.exact import evaluation_report
from evolving_ttt.fogel.network import load_network
from evolving_ttt.game import check_count
from evolving_ttt.kit import COMMAND_OPTIONS
from evolving_ttt.mcts import BUDGETS, SAMPLES
from evolving_ttt.mcts_players import PLAYERS_SEED
from evolving_ttt.parallel import LOCAL_SCHEDULER, check_scheduler, default_workers, forget_interrupt_in_exec
from evolving_ttt.records import (
    DATA,
    Output,
    check_apart,
    check_path,
    clear_stop,
    note_stop,
    prepare_outputs,
    raise_pending_stop,
    stop_pending,
)
from evolving_ttt.systems import check_settings, get_system, player_from_file, registered_systems, run_system

INTERRUPTED_SIGINT, INTERRUPTED_SIGTERM = 130, 143
"""The exit statuses of a command stopped by Ctrl-C (SIGINT) and by SIGTERM (128 + the signal's number)."""

LOCAL_WORKER_MEMORY = 150e6
"""Bytes of memory a worker process of a local Dask cluster takes before it runs anything (chapter 7)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread by :func:`main`'s handler so that it unwinds like Ctrl-C."""


_STOP_CAUGHT = threading.Event()
"""Set once :func:`main` has caught the stop (or has ended): the handler raises no more, the repeater ends."""

STOP_REPEAT_SECONDS = 1.0
"""How often a stop that :func:`main` has not caught yet is raised again in the main thread."""


def _raise_stop(signum, frame) -> None:
    """The command's handler of SIGINT and SIGTERM: raise ``KeyboardInterrupt`` or :class:`Terminated`.

    A library can lose that exception: raised inside a ctypes callback (numba's compiler has some), it is only
    reported, and the run would go on. So the handler also remembers the stop
    (:func:`~evolving_ttt.records.note_stop`: no output is put in place after it), quiets Python's reports of
    exceptions it cannot raise (the command says in one line that it was interrupted), and, the first time,
    starts a thread that raises the stop again in the main thread every :data:`STOP_REPEAT_SECONDS` until
    :func:`main` has caught it.
    """
    if _STOP_CAUGHT.is_set():
        return
    kind = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
    if not stop_pending():
        threading.Thread(target=_repeat_stop, args=(signum,), name="repeat-stop", daemon=True).start()
    note_stop(kind)
    sys.unraisablehook = _quiet
    raise kind()


def _repeat_stop(signum: int) -> None:
    while not _STOP_CAUGHT.wait(STOP_REPEAT_SECONDS):
        if not stop_pending():
            return
        _thread.interrupt_main(signum)


def _quiet(unraisable: object) -> None:
    """An ``unraisablehook`` that reports nothing (set once the command is interrupted)."""


def check_output_paths(
    outputs: dict[str, tuple[str | Path, str | None]], force: bool = False, inputs: dict[str, str | Path] | None = None
) -> dict[str, Output]:
    """Make every output of a command before its run: ``{option: (path, suffix)}`` -> ``{option: Output}``.

    Raises ``ValueError`` naming the option (and nothing is left behind) if two options name the same file, a
    name lacks its ``suffix``, the path is a folder or a device or FIFO, its folder is missing, a file is there
    and ``force`` is false, or no file can be created there (chapter 7); and, whatever ``force`` says, if an
    output is one of the command's ``inputs`` (``{option: path}``), by name or by hard link. Each
    :class:`~evolving_ttt.records.Output` holds a temporary file; write it and
    :meth:`~evolving_ttt.records.Output.commit` it, or :meth:`~evolving_ttt.records.Output.discard` it.
    """
    seen: dict[Path, str] = {}
    for option, (path, suffix) in outputs.items():
        if not str(path) or str(path) == ".":
            raise ValueError(f"{option}: give a file name")
        path = check_path(path, option)
        try:
            where = path.resolve()
            if where in seen:
                raise ValueError(f"{option} and {seen[where]} are the same file, {path}; every output must be a "
                                 "different file")  # fmt: skip
            seen[where] = option
            if path.is_dir():
                raise ValueError(f"{option} {path} is a directory; give a file name")
            if suffix is not None and path.suffix != suffix:
                raise ValueError(f"{option} {path}: the file is written as {suffix}; give a name ending in {suffix}")
            if path.exists() and not stat.S_ISREG(path.stat().st_mode):
                raise ValueError(f"{option} {path} is not a regular file (a device, FIFO or socket); give a file name")
            if path.exists() and not force:
                raise ValueError(f"{option} {path} exists; give another name, or --force to replace it")
        except OSError as error:
            raise ValueError(f"{option} {path}: {error.strerror or error}") from None
    check_apart({option: path for option, (path, _) in outputs.items()}, inputs or {})
    return prepare_outputs({option: (path, suffix) for option, (path, suffix) in outputs.items()}, force)


def check_input_file(path: str | Path, option: str) -> Path:
    """``path`` if it is a regular file; ``ValueError`` naming ``option`` otherwise (never waits on a FIFO)."""
    path = check_path(path, option)
    try:
        if not path.exists():
            raise ValueError(f"{option} {path}: no such file")
        if not path.is_file():
            kind = "a directory" if path.is_dir() else "not a regular file"
            raise ValueError(f"{option} {path} is {kind}; give a file")
    except OSError as error:
        raise ValueError(f"{option} {path}: {error.strerror or error}") from None
    return path


def machine_memory() -> int | None:
    """The machine's physical memory in bytes, or ``None`` where the system does not say (chapter 7)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(
    needed: int, what: str, share: float = 0.75, advice: str = "Use fewer parents, trials or workers."
) -> None:
    """Raise ``ValueError`` if ``needed`` bytes exceed ``share`` of the machine's memory (chapter 7)."""
    total = machine_memory()
    if total is not None and needed > share * total:
        amount = f"{needed / 2**30:,.1f}" if needed < 2**30 * 1e15 else f"{needed / 2**30:.1e}"
        raise ValueError(
            f"{what} needs about {amount} GiB of memory; this machine has {total / 2**30:,.1f} GiB "
            f"(the limit is {share:.0%} of it). {advice}"
        )


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``python -m ttt_helpers``, one subcommand per registered system (chapter 7)."""
    systems = registered_systems()
    parser = argparse.ArgumentParser(
        prog="python -m ttt_helpers",
        formatter_class=_HelpFormatter,
        description="Evolved tic-tac-toe players of " + ", ".join(s.title for s in systems) + ": run each system's "
        "experiment, analyse a saved network, and measure every player of the book in the arena.",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True)
    for system in systems:
        run = commands.add_parser(system.command, help=system.description, description=system.description,
                                  aliases=list(getattr(system, "command_aliases", ())),
                                  formatter_class=_HelpFormatter)  # fmt: skip
        system.add_arguments(run)
        run.add_argument("--seed", type=whole_number, default=1,
                         help="the run's seed: task t draws from its own generator spawned from it")  # fmt: skip
        run.add_argument("--out", required=True, help="the file to write the record of every task to")
        run.add_argument("--workers", type=whole_number, default=None,
                         help="local processes to use (default: all cores); with --scheduler local, the cluster's "
                              "worker processes")  # fmt: skip
        run.add_argument("--scheduler", default=None,
                         help="run the tasks on a Dask cluster: 'local' starts one on this machine, or give the "
                              "address of a running scheduler such as tcp://10.0.0.5:8786")  # fmt: skip
        run.add_argument("--quiet", action="store_true", help="no progress bar")
        _add_force(run)
        run.set_defaults(system=system)
    evaluate_cmd = commands.add_parser(
        "evaluate", help="every exact yardstick of a saved player of any system",
        description="A player saved by any system's command (--champion, --data-dir) or save_player, measured "
                    "exactly like the book's players in the arena (chapter 24); for Fogel's networks, first the "
                    "exact analysis of chapter 11.",
    )  # fmt: skip
    evaluate_cmd.add_argument("network", metavar="FILE", help="a player's JSON file, of any system")
    arena_cmd = commands.add_parser(
        "arena", help="every player of the book on the same exact yardsticks",
        description="Every player the book saved in book/data, and every registered player, measured exactly "
                    "(every game enumerated, none sampled) against the perfect and the random player, as X and as O, "
                    "and against each other (chapter 24).",
        formatter_class=_HelpFormatter,
    )  # fmt: skip
    arena_cmd.add_argument("--json", help="also write the full table and the round robin to this .json file")
    arena_cmd.add_argument("--add", nargs="+", default=[], metavar="FILE",
                           help="players saved by any system (JSON files) to measure beside the book's")  # fmt: skip
    _add_force(arena_cmd)
    plot_cmd = commands.add_parser(
        "plot", help="draw a run record's curves or a sweep's cells into a PNG file",
        description="Draw a result file into a PNG picture: a run record of any system (its curves over the "
                    "generations or iterations: the mean over its tasks and their range), or a sweep's database "
                    "(every cell's mean of one yardstick with its 95% interval).",
        formatter_class=_HelpFormatter,
    )  # fmt: skip
    plot_cmd.add_argument("file", metavar="FILE", help="a run record (--out of a system's command) or a sweep's --db")
    plot_cmd.add_argument("--out", required=True, help="the .png file to write")
    plot_cmd.add_argument("--measure", default="points_perfect_x", help="the yardstick drawn for a sweep")
    _add_force(plot_cmd)
    _add_sweep_parser(commands, systems)
    mcts_cmd = commands.add_parser(
        "mcts", help="estimate the arena's MCTS players and save their counts",
        description="Estimate OpenSpiel's Monte Carlo tree search players (MCTSBot, random roll-outs) of each budget: "
                    "on every board, --samples seeded searches, and how many chose each square, for X and for O "
                    "(chapter 27). The arena reads book/data/mcts_players.npz, made with the defaults.",
        formatter_class=_HelpFormatter,
    )  # fmt: skip
    mcts_cmd.add_argument("--out", required=True,
                          help="the .npz file to write (the book's is book/data/mcts_players.npz)")  # fmt: skip
    mcts_cmd.add_argument("--budgets", type=_whole_numbers, default=BUDGETS,
                          help="simulations per move, one player each, comma-separated")  # fmt: skip
    mcts_cmd.add_argument("--samples", type=whole_number, default=SAMPLES, help="searches per board")
    mcts_cmd.add_argument("--seed", type=whole_number, default=PLAYERS_SEED,
                          help="board i's searches draw from a generator spawned from it with key (i,)")  # fmt: skip
    mcts_cmd.add_argument("--workers", type=whole_number, default=None,
                          help="local processes to use (default: all cores); the file is the same for any number")
    mcts_cmd.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_force(mcts_cmd)
    return parser


def _whole_numbers(text: str) -> tuple[int, ...]:
    """An ``argparse`` type: comma-separated whole numbers (``10,100,1000``)."""
    return tuple(whole_number(part.strip()) for part in text.split(","))


class _HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless it has none (None, off) or its help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.required or action.default in (None, False, [], argparse.SUPPRESS) or "default" in text:
            return text
        shown = ",".join(f"{v:g}" for v in action.default) if isinstance(action.default, tuple) else "%(default)s"
        return f"{text} (default: {shown})" if text else f"(default: {shown})"


def _subparser(parser: argparse.ArgumentParser, args: argparse.Namespace | None) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` ran, for its usage line in an error; the top parser otherwise."""
    if args is None:
        return parser
    found = parser
    for dest in ("command", "action"):
        name = getattr(args, dest, None)
        groups = [a for a in found._actions if isinstance(a, argparse._SubParsersAction)]
        if name is None or not groups or name not in groups[0].choices:
            break
        found = groups[0].choices[name]
    return found


def _add_force(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true", help="replace output files that exist (refused otherwise)")


def _add_sweep_parser(commands, systems) -> None:
    sweep_cmd = commands.add_parser(
        "sweep", help="a grid of settings of any system over many seeds, kept in SQLite",
        description="Sweep any setting of any system over many seeds (chapter 20): run a grid into a SQLite "
                    "database (resumable), count what is done, re-run recorded tasks to check their bits, or "
                    "export one row per task as CSV.",
    )  # fmt: skip
    actions = sweep_cmd.add_subparsers(dest="action", required=True)
    run = actions.add_parser(
        "run", help="run the sweep's tasks not yet recorded in --db",
        formatter_class=_HelpFormatter,
        description="Run every task of the grid x seeds not yet recorded in --db; the same command resumes it.",
    )  # fmt: skip
    run.add_argument("sweep_system", metavar="SYSTEM", choices=[s.name for s in systems],
                     help=f"one of {', '.join(s.name for s in systems)}")  # fmt: skip
    run.add_argument("--set", dest="grid", action="append", default=[], metavar="KEY=V1,V2,...",
                     help="a setting by its dotted path and the values to sweep (the grid is their product); "
                          "a tuple's items are separated by '/'")  # fmt: skip
    run.add_argument("--seeds", type=whole_number, required=True, help="how many seeds every cell runs")
    run.add_argument("--first-seed", type=whole_number, default=1,
                     help="the first seed; held-out seeds (say 1001 to 1020) confirm a cell that seeds 1 to 10 "
                          "chose")  # fmt: skip
    run.add_argument("--db", required=True,
                     help="the SQLite file that keeps the sweep (created if missing; a run of the same sweep "
                          "resumes it)")  # fmt: skip
    run.add_argument("--workers", type=whole_number, default=None, help="local processes (default: all cores)")
    run.add_argument("--scheduler", default=None, help="'local' or the address of a Dask scheduler")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    status = actions.add_parser("status", help="print how many of the sweep's tasks are done",
                                description="Print how many of the sweep's tasks are recorded in --db.")  # fmt: skip
    status.add_argument("--db", required=True, help="the sweep's SQLite file")
    summary = actions.add_parser("summary", help="print every cell's yardsticks: means, 95% intervals, n",
                                 description="Print, for every cell of the sweep in --db, the mean of each of the "
                                             "arena's yardsticks over its tasks, with its 95% bootstrap interval "
                                             "and the number of tasks (chapter 20).")  # fmt: skip
    summary.add_argument("--db", required=True, help="the sweep's SQLite file (read, never written)")
    check = actions.add_parser("check", help="re-run recorded tasks and check that they give the same bits",
                               description="Re-run the tasks recorded in --db (all, or --tasks of them evenly "
                                           "spread) and check every measure and saved player against the "
                                           "database to the bit (chapter 20); the first difference is an error.")
    check.add_argument("--db", required=True, help="the sweep's SQLite file (read, never written)")
    check.add_argument("--tasks", type=whole_number, default=None,
                       help="how many tasks: the first recorded, the last and the ones evenly between (default: all)")
    check.add_argument("--workers", type=whole_number, default=None, help="local processes (default: all cores)")
    check.add_argument("--scheduler", default=None, help="'local' or the address of a Dask scheduler")
    check.add_argument("--quiet", action="store_true", help="no progress bar")
    export = actions.add_parser("export", help="write the sweep's table, one row per task, as CSV",
                                description="Write the sweep's table as CSV: one row per task, its settings and "
                                            "its measures (chapter 20).")  # fmt: skip
    export.add_argument("--db", required=True, help="the sweep's SQLite file (read, never written)")
    export.add_argument("--csv", required=True, help="the .csv file to write")
    _add_force(export)


def _one_line(error: BaseException) -> str:
    """An error's message on one line (with the file named, for an ``OSError``)."""
    if isinstance(error, OSError) and not isinstance(error, sqlite3.Error):
        where = f"{error.filename}: " if error.filename else ""
        text = f"{where}{error.strerror or error}"
    elif isinstance(error, MemoryError):
        text = "ran out of memory; use smaller settings or fewer workers"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ttt_helpers`` (chapter 7): the exit status.

    0 when the command did its work; 2 (through ``argparse``: the usage and one line ``error: ...``) for any bad
    argument, path or file, whatever raised the ``ValueError`` (the settings, a loader, a saver at the end); 130
    after Ctrl-C and 143 after SIGTERM, with one line ``interrupted: ...``. Temporary outputs are removed on every
    way out but success, so an old file is never touched and no partial file is left.
    """
    outputs: list[Output] = []
    parser, args, previous, hook = None, None, {}, sys.unraisablehook
    clear_stop()
    _STOP_CAUGHT.clear()
    if threading.current_thread() is threading.main_thread():
        previous = {signum: signal.signal(signum, _raise_stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return _command(args, outputs)
    except KeyboardInterrupt as interruption:
        return _interrupted(interruption, args, outputs)
    except Exception as error:
        if stop_pending():  # the stop, turned into another exception by a library: numba's dispatcher, stopped
            try:  # while it loads a kernel from its cache, raises SystemError with the stop as its cause
                raise_pending_stop()  # the stop the handler remembered (records.note_stop)
            except KeyboardInterrupt as interruption:
                return _interrupted(interruption, args, outputs)
        if not isinstance(error, (ValueError, OSError, MemoryError, sqlite3.Error)):
            raise
        _discard(outputs)
        (_subparser(parser, args) if parser is not None else build_parser()).error(_one_line(error))
    finally:
        _STOP_CAUGHT.set()
        _discard(outputs)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        clear_stop()
        sys.unraisablehook = hook  # after an interrupt, program.finish keeps Python's closing down quiet


def _interrupted(interruption: KeyboardInterrupt, args: argparse.Namespace | None, outputs: list[Output]) -> int:
    """What :func:`main` does once stopped: no output kept, one line, the exit status of the signal."""
    _STOP_CAUGHT.set()
    forget_interrupt_in_exec()  # numba's compiling would otherwise make Python end by SIGINT (parallel.py)
    _discard(outputs)
    print(f"interrupted: {_interrupted_note(args)}", file=sys.stderr)
    return INTERRUPTED_SIGTERM if isinstance(interruption, Terminated) else INTERRUPTED_SIGINT


def _interrupted_note(args: argparse.Namespace | None) -> str:
    if args is not None and getattr(args, "command", None) == "sweep" and getattr(args, "action", None) == "run":
        return f"the tasks finished so far are kept in {args.db}; run the same command to go on"
    return "nothing was written"


def _discard(outputs: list[Output]) -> None:
    """Remove the temporary files of ``outputs`` (a committed output has none left)."""
    for output in outputs:
        output.discard()
        _numpy_suffixed(output).unlink(missing_ok=True)


def _numpy_suffixed(output: Output) -> Path:
    return output.temporary.with_name(output.temporary.name + ".npz")


def _fill(output: Output, save: Callable[[Path], object]) -> None:
    """Fill ``output``'s temporary file with ``save(path)``.

    The book's savers write exactly the path given; a saver of a system registered from outside that calls
    ``numpy.savez(path)`` gets ``.npz`` added to the name, and that file is moved onto the temporary one.
    """
    save(output.temporary)
    suffixed = _numpy_suffixed(output)
    if suffixed.exists():
        os.replace(suffixed, output.temporary)


def _command(args: argparse.Namespace, outputs: list[Output]) -> int:
    if getattr(args, "system", None) is not None:
        return system_command(args.system, args, outputs)
    if args.command == "arena":
        return _arena_command(args, outputs)
    if args.command == "sweep":
        return _sweep_command(args, outputs)
    if args.command == "mcts":
        return _mcts_command(args, outputs)
    if args.command == "plot":
        from evolving_ttt.plots import plot_file

        source = check_input_file(args.file, "FILE")
        (png,) = check_output_paths({"--out": (args.out, ".png")}, args.force, {"FILE": source}).values()
        outputs.append(png)
        words = []
        png.write(lambda handle: words.append(plot_file(source, handle, args.measure)))
        print(f"wrote {png.path}: {words[0]}")
        return 0
    path = check_input_file(args.network, "FILE")
    try:
        network, provenance = load_network(path)
    except ValueError:
        network = None
    if network is not None:
        print(evaluation_report(network, provenance))
        print()
    player = player_from_file(path)
    report = arena_report([*catalogue(), player])  # beside the book's players, so that its round robin means something
    print(format_arena_table(report))
    print(f"{player.name}: the last row; the rows above are the book's players (python -m ttt_helpers arena)")
    return 0


def settings_of_command(system, args: argparse.Namespace):
    """The settings a system's command asks for, checked by :func:`~evolving_ttt.systems.check_settings` before
    any file is made; a refusal names the option as typed (``--seeds-kept 0: seeds_kept must be ...``)."""
    try:
        return check_settings(system, system.settings_from_arguments(args))
    except (ValueError, TypeError, OverflowError) as error:
        message = " ".join(str(error).split())
        if not message.startswith("--"):
            found = []
            for name, value in vars(args).items():
                hit = None if name in COMMAND_OPTIONS else re.search(rf"(?<![\w.-]){re.escape(name)}\b", message)
                if hit is not None:
                    found.append((hit.start(), -len(name), name, value))
            if found:
                _, _, name, value = min(found)
                shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value) if isinstance(
                    value, (tuple, list)) else value  # fmt: skip
                message = f"--{name.replace('_', '-')} {shown}: {message}"
        raise ValueError(message) from None


def system_command(system, args: argparse.Namespace, outputs: list[Output] | None = None) -> int:
    """Run a system's command: check everything and make its outputs, run every task, then put the record and
    the system's files in place (chapter 7). ``outputs`` collects the outputs made, for :func:`main` to discard
    on an error or an interruption."""
    outputs = [] if outputs is None else outputs
    settings = settings_of_command(system, args)
    workers = args.workers if args.workers is not None else default_workers()
    check_count(workers, "--workers")
    scheduler = check_scheduler(args.scheduler)
    if scheduler in (None, LOCAL_SCHEDULER):
        needed = system.estimated_memory(settings, workers)
        if scheduler == LOCAL_SCHEDULER:
            needed += int(workers * LOCAL_WORKER_MEMORY)
        check_memory(needed, f"{system.command} with {system.describe(settings)}",
                     advice="Use fewer tasks, a smaller population or fewer workers.")  # fmt: skip
    wanted = {"--out": (args.out, None), **system.extra_outputs(args)}
    for option in wanted:  # the names as typed: a system's extra_outputs may have made them Paths, dropping a '/'
        typed = getattr(args, option[2:].replace("-", "_"), None) if " " not in option else None
        if isinstance(typed, str):
            check_path(typed, option)
    made = check_output_paths(wanted, args.force)
    outputs.extend(made.values())
    where = f"{workers} worker(s)"
    if scheduler is not None:
        local = scheduler == LOCAL_SCHEDULER
        where = f"a local Dask cluster of {where}" if local else f"the Dask scheduler {scheduler}"
    print(f"{system.command}: {system.describe(settings)}, seed {args.seed}, {where}", file=sys.stderr)
    record = run_system(system, settings, args.seed, workers, scheduler, progress=not args.quiet)
    temporaries = {option: output.temporary for option, output in made.items() if option != "--out"}
    try:
        _fill(made["--out"], lambda path: system.save_record(record, path))
        written = system.write_outputs(record, args, temporaries)
    except ValueError as error:  # a saver names the temporary file it was given: name the output instead
        message = str(error)
        for option, output in made.items():
            message = message.replace(str(output.temporary), f"{option} {output.path}")
            message = message.replace(output.temporary.name, f"{option} {output.path}")
        raise ValueError(f"the run finished but its files could not be written, and nothing was: {message}") from None
    if set(written) != set(temporaries):
        raise ValueError(f"{system.name}: write_outputs wrote {sorted(written)}; the outputs are {sorted(temporaries)}")
    for option, path in temporaries.items():
        suffixed = _numpy_suffixed(made[option])
        if suffixed.exists():
            os.replace(suffixed, path)
    for output in made.values():
        output.commit()
    print(f"wrote {made['--out'].path}: {system.summary(record)}")
    for option, words in written.items():
        print(f"wrote {made[option].path}: {words}")
    return 0


def _sweep_command(args: argparse.Namespace, outputs: list[Output]) -> int:
    """``sweep run``, ``sweep status``, ``sweep summary``, ``sweep check`` and ``sweep export`` (chapter 20)."""
    from evolving_ttt.store import SweepStore
    from evolving_ttt.sweeps import check_sweep_size, parse_grid, status_line, sweep, sweep_definition, sweep_table
    from evolving_ttt.sweeps import sweep_summary as summary_text

    if args.action == "status":
        with SweepStore(args.db) as store:
            print(status_line(store))
        return 0
    if args.action == "summary":
        print(summary_text(check_input_file(args.db, "--db")))
        return 0
    if args.action == "check":
        from evolving_ttt.studies import rerun_check

        db = check_input_file(args.db, "--db")
        with SweepStore(db) as store:
            definition, tasks = store.definition, len(store.done())
        system = get_system(definition["system"])
        workers = min(args.workers if args.workers is not None else default_workers(), max(tasks, 1))
        scheduler = check_scheduler(args.scheduler)
        if scheduler is None:
            needed = max(system.estimated_memory(cell, 1) for cell in check_sweep_size(system, definition)) * workers
            check_memory(needed, f"sweep check of {db} on {workers} worker(s)", advice="Use fewer workers.")
        report = rerun_check(db, count=args.tasks, workers=workers, scheduler=scheduler, progress=not args.quiet)
        print(f"{counted(len(report), 'task')} re-run: every measure and player the same bits as recorded")
        return 0
    if args.action == "export":
        (csv,) = check_output_paths({"--csv": (args.csv, ".csv")}, args.force, {"--db": args.db}).values()
        outputs.append(csv)
        table = sweep_table(check_input_file(args.db, "--db"))
        csv.write_text(table.to_csv(index=False))
        print(f"wrote {csv.path}: {counted(len(table), 'task')}")
        return 0
    system = get_system(args.sweep_system)
    definition = sweep_definition(system, parse_grid(system, args.grid), args.seeds, args.first_seed)
    workers = args.workers if args.workers is not None else default_workers()
    check_count(workers, "--workers")
    scheduler = check_scheduler(args.scheduler)
    cells = check_sweep_size(system, definition)
    if scheduler in (None, LOCAL_SCHEDULER):
        needed = max(system.estimated_memory(cell, 1) for cell in cells) * (workers if scheduler is None else 1)
        if scheduler == LOCAL_SCHEDULER:
            needed += int(workers * LOCAL_WORKER_MEMORY)
        check_memory(needed, f"sweep {system.name} on {workers} worker(s)",
                     advice="Use smaller settings or fewer workers.")  # fmt: skip
    SweepStore(args.db, definition).close()  # created, or checked to hold this sweep, before anything runs
    sweep(system, args.grid, args.seeds, args.db, workers, scheduler, progress=not args.quiet,
          first_seed=args.first_seed)
    if args.quiet:
        with SweepStore(args.db) as store:
            print(status_line(store))
    return 0


def _arena_command(args: argparse.Namespace, outputs: list[Output]) -> int:
    """``arena``: the table, and with ``--json`` the whole report (chapter 24)."""
    book_files = {f"the arena (book/data/{path.relative_to(DATA)})": path for path in sorted(DATA.rglob("*"))
                  if path.is_file()}  # fmt: skip
    made = check_output_paths({"--json": (args.json, ".json")}, args.force, book_files) if args.json else {}
    outputs.extend(made.values())
    added = [player_from_file(check_input_file(path, "--add")) for path in args.add]
    report = arena_report([*catalogue(), *added] if added else None)
    text = json.dumps(report, indent=1, allow_nan=False) + "\n"
    print(format_arena_table(report))
    if made:
        made["--json"].write_text(text)
        print(f"wrote {made['--json'].path}")
    return 0


def _mcts_command(args: argparse.Namespace, outputs: list[Output]) -> int:
    """``mcts``: estimate the MCTS players of every budget and write their counts (chapter 27)."""
    import time

    from evolving_ttt.mcts_players import (
        MAX_SHARES,
        check_mcts_settings,
        command_text,
        make_mcts_players,
        save_mcts_players,
    )

    budgets = check_mcts_settings(args.budgets, args.samples, args.seed)[0]
    workers = args.workers if args.workers is not None else default_workers()
    check_count(workers, "--workers")
    check_memory(int(min(workers, MAX_SHARES) * LOCAL_WORKER_MEMORY), f"mcts on {workers} worker(s)",
                 advice="Use fewer workers.")  # fmt: skip
    command = command_text(args.out, budgets, args.samples, args.seed)
    (out,) = check_output_paths({"--out": (args.out, ".npz")}, args.force).values()
    outputs.append(out)
    print(f"mcts: budgets {', '.join(map(str, budgets))}, {args.samples} searches per board, seed {args.seed}, "
          f"{workers} worker(s)", file=sys.stderr)  # fmt: skip
    start = time.perf_counter()
    players = make_mcts_players(budgets, args.samples, args.seed, workers=workers, progress=not args.quiet,
                                command=command)  # fmt: skip
    seconds = time.perf_counter() - start
    try:
        _fill(out, lambda path: save_mcts_players(players, path, force=True))
    except ValueError as error:
        raise ValueError(str(error).replace(str(out.temporary), f"--out {out.path}")) from None
    out.commit()
    print(f"wrote {out.path}: the MCTS players of {', '.join(map(str, budgets))} simulations, {args.samples} "
          f"searches per board, in {seconds:.1f} s")  # fmt: skip
    return 0
