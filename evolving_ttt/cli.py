"""The command line: one subcommand per registered system (``evolve``, ``al-khateeb``, ``ling-lam``,
``mohammadi``: :mod:`evolving_ttt.systems`), ``evaluate`` (chapter 11) and ``arena`` (chapter 20).

Every system command is built from the registry and works the same way: the system's own options, and
``--seed``, ``--out``, ``--workers``, ``--scheduler`` and ``--quiet``; every argument and output path is checked
before the run starts; the tasks run on local processes or a Dask cluster (:mod:`evolving_ttt.parallel`).
The top of the package: nothing imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from evolving_ttt.arena import arena_report, format_arena_table
from evolving_ttt.arguments import whole_number
from evolving_ttt.fogel.exact import evaluation_report
from evolving_ttt.fogel.network import load_network
from evolving_ttt.game import check_count
from evolving_ttt.parallel import LOCAL_SCHEDULER, check_scheduler, default_workers
from evolving_ttt.systems import get_system, registered_systems, run_system


def check_output_path(path: str | Path, option: str) -> Path:
    """Raise ``ValueError`` unless a file can be written at ``path``; say which ``option`` is wrong (chapter 7).

    Every command checks its output files before it starts, so that a long run is never lost at its end.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option} {path}: is a directory; give a file name")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{option} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"{option} {path}: cannot write there (permission denied)")
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
        raise ValueError(
            f"{what} needs about {needed / 2**30:,.1f} GiB of memory; this machine has {total / 2**30:,.1f} GiB "
            f"(the limit is {share:.0%} of it). {advice}"
        )


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``python -m ttt_helpers``, one subcommand per registered system (chapter 7)."""
    systems = registered_systems()
    parser = argparse.ArgumentParser(
        prog="python -m ttt_helpers",
        description="Evolved tic-tac-toe players of " + ", ".join(s.title for s in systems) + ": run each system's "
        "experiment, analyse a saved network, and measure every player of the book in the arena.",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True)
    for system in systems:
        run = commands.add_parser(system.command, help=system.description, description=system.description)
        system.add_arguments(run)
        run.add_argument("--seed", type=whole_number, default=1)
        run.add_argument("--out", required=True, help="the file to write the record of every task to")
        run.add_argument("--workers", type=whole_number, default=None,
                         help="local processes to use (default: all cores); with --scheduler local, the cluster's "
                              "worker processes")  # fmt: skip
        run.add_argument("--scheduler", default=None,
                         help="run the tasks on a Dask cluster: 'local' starts one on this machine, or give the "
                              "address of a running scheduler such as tcp://10.0.0.5:8786")  # fmt: skip
        run.add_argument("--quiet", action="store_true", help="no progress bar")
        run.set_defaults(system=system)
    evaluate_cmd = commands.add_parser("evaluate", help="exact analysis of a saved Fogel network")
    evaluate_cmd.add_argument("network", help="a network JSON file written by save_network")
    arena_cmd = commands.add_parser("arena", help="every player of the book on the same exact yardsticks")
    arena_cmd.add_argument("--json", help="also write the full table and the round robin to this JSON file")
    _add_sweep_parser(commands, systems)
    return parser


def _add_sweep_parser(commands, systems) -> None:
    sweep_cmd = commands.add_parser("sweep", help="a grid of settings of any system over many seeds, kept in SQLite")
    actions = sweep_cmd.add_subparsers(dest="action", required=True)
    run = actions.add_parser("run", help="run the sweep's tasks not yet recorded in --db")
    run.add_argument("sweep_system", metavar="SYSTEM", choices=[s.name for s in systems],
                     help=f"one of {', '.join(s.name for s in systems)}")  # fmt: skip
    run.add_argument("--set", dest="grid", action="append", default=[], metavar="KEY=V1,V2,...",
                     help="a setting by its dotted path and the values to sweep (the grid is their product); "
                          "a tuple's items are separated by '/'")  # fmt: skip
    run.add_argument("--seeds", type=whole_number, required=True, help="seeds 1 to N in every cell")
    run.add_argument("--db", required=True, help="the SQLite file that keeps the sweep (created if missing)")
    run.add_argument("--workers", type=whole_number, default=None, help="local processes (default: all cores)")
    run.add_argument("--scheduler", default=None, help="'local' or the address of a Dask scheduler")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    status = actions.add_parser("status", help="print how many of the sweep's tasks are done")
    status.add_argument("--db", required=True)
    export = actions.add_parser("export", help="write the sweep's table, one row per task, as CSV")
    export.add_argument("--db", required=True)
    export.add_argument("--csv", required=True, help="the CSV file to write")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ttt_helpers`` (chapter 7)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "system", None) is not None:
        return system_command(args.system, parser, args)
    if args.command == "arena":
        return _arena_command(parser, args)
    if args.command == "sweep":
        return _sweep_command(parser, args)
    try:
        network, provenance = load_network(args.network)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    print(evaluation_report(network, provenance))
    return 0


def system_command(system, parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run a system's command: check everything, run every task, write the record and the system's files."""
    try:
        settings = system.settings_from_arguments(args)
        workers = args.workers if args.workers is not None else default_workers()
        check_count(workers, "--workers")
        scheduler = check_scheduler(args.scheduler)
        outputs = {"--out": check_output_path(args.out, "--out")}
        for option, path in system.extra_outputs(args).items():
            outputs[option] = check_output_path(path, option)
        paths = [path.resolve() for path in outputs.values()]
        if len(set(paths)) != len(paths):
            named = ", ".join(f"{option} {path}" for option, path in outputs.items())
            raise ValueError(f"every output must be a different file; got {named}")
        if scheduler in (None, LOCAL_SCHEDULER):
            needed = system.estimated_memory(settings, workers)
            check_memory(needed, f"{system.command} with {system.describe(settings)}",
                         advice="Use fewer tasks, a smaller population or fewer workers.")  # fmt: skip
    except ValueError as error:
        parser.error(str(error))
    where = f"{workers} worker(s)"
    if scheduler is not None:
        local = scheduler == LOCAL_SCHEDULER
        where = f"a local Dask cluster of {where}" if local else f"the Dask scheduler {scheduler}"
    print(f"{system.command}: {system.describe(settings)}, seed {args.seed}, {where}", file=sys.stderr)
    try:
        record = run_system(system, settings, args.seed, workers, scheduler, progress=not args.quiet)
    except ValueError as error:  # a scheduler that cannot be reached
        parser.error(str(error))
    system.save_record(record, args.out)
    print(f"wrote {args.out}: {system.summary(record)}")
    for line in system.write_outputs(record, args):
        print(line)
    return 0


def _sweep_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``sweep run``, ``sweep status`` and ``sweep export`` (chapter 21)."""
    from evolving_ttt.store import SweepStore
    from evolving_ttt.sweeps import parse_grid, status_line, sweep, sweep_definition, sweep_table

    try:
        if args.action == "run":
            system = get_system(args.sweep_system)
            definition = sweep_definition(system, parse_grid(system, args.grid), args.seeds)
            check_count(args.workers if args.workers is not None else 1, "--workers")
            check_scheduler(args.scheduler)
            SweepStore(args.db, definition).close()  # created, or checked to hold this sweep, before anything runs
        elif args.action == "status":
            with SweepStore(args.db) as store:
                print(status_line(store))
            return 0
        else:
            check_output_path(args.csv, "--csv")
            table = sweep_table(args.db)
    except ValueError as error:
        parser.error(str(error))
    if args.action == "export":
        table.to_csv(args.csv, index=False)
        print(f"wrote {args.csv}: {len(table)} tasks")
        return 0
    try:
        sweep(system, args.grid, args.seeds, args.db, args.workers, args.scheduler, progress=not args.quiet)
    except ValueError as error:  # a scheduler that cannot be reached
        parser.error(str(error))
    if args.quiet:
        with SweepStore(args.db) as store:
            print(status_line(store))
    return 0


def _arena_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        if args.json:
            check_output_path(args.json, "--json")
        report = arena_report()
    except (OSError, ValueError) as error:
        parser.error(str(error))
    print(format_arena_table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0
