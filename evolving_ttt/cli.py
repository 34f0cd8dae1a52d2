"""The command line: ``evolve`` (chapter 7), ``evaluate`` (chapter 11), ``arena`` (chapter 21) and one subcommand
per later system (``ling-lam``, chapter 18).

The top of the package: it imports the systems and nothing imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from evolving_ttt.arena import arena_report, format_arena_table
from evolving_ttt.fogel.evolution import (
    PAPER_EXPERIMENT,
    ExperimentConfig,
    champion_provenance,
    estimated_memory,
    evolve,
    save_run,
)
from evolving_ttt.fogel.exact import evaluation_report
from evolving_ttt.fogel.mutation import MutationSettings
from evolving_ttt.fogel.network import load_network, save_network
from evolving_ttt.fogel.opponent import OpponentRules
from evolving_ttt.fogel.selection import PAPER_PAYOFF, SelectionSettings, check_payoff
from evolving_ttt.game import check_count


def _payoff_argument(text: str) -> tuple[float, float, float]:
    try:
        return check_payoff([float(part) for part in text.split(",")])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected three numbers win,loss,draw such as 1,-10,0; got {text!r}"
        ) from None


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0; got {text!r}")
    return value


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
    """The command-line parser of ``python -m ttt_helpers`` (chapter 7)."""
    parser = argparse.ArgumentParser(prog="python -m ttt_helpers", description="Fogel (1993) tic-tac-toe experiments.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("evolve", help="run the evolutionary experiment and save every curve and final network")
    run.add_argument("--trials", type=_nonnegative_int, default=PAPER_EXPERIMENT.trials)
    run.add_argument("--generations", type=_nonnegative_int, default=PAPER_EXPERIMENT.generations)
    run.add_argument("--parents", type=_nonnegative_int, default=PAPER_EXPERIMENT.parents)
    run.add_argument("--seed", type=_nonnegative_int, default=1)
    run.add_argument("--out", required=True, help="the .npz file to write")
    run.add_argument("--payoff", type=_payoff_argument, default=PAPER_PAYOFF, help="win,loss,draw (default 1,-10,0)")
    run.add_argument("--rule-d", choices=("own", "opponent"), default="own",
                     help="rule (d) develops lines holding an O (own, the paper) or an X (opponent)")  # fmt: skip
    run.add_argument("--first-reply", choices=("cycle", "rules"), default="cycle",
                     help="O's first reply visits all eight squares (the paper) or follows the rules")  # fmt: skip
    run.add_argument("--strict-selection", action="store_true",
                     help="earn a selection point only against strictly lower scores (the textbook)")  # fmt: skip
    run.add_argument("--spread-is", choices=("std", "variance"), default="std",
                     help="0.05 is the standard deviation (the paper) or the variance of the weight noise")  # fmt: skip
    run.add_argument("--workers", type=_nonnegative_int, default=None, help="processes to use (default: all cores)")
    run.add_argument("--champion", help="also save the best network of trial 0 to this JSON file")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    evaluate_cmd = commands.add_parser("evaluate", help="exact analysis of a saved network")
    evaluate_cmd.add_argument("network", help="a network JSON file written by save_network")
    arena_cmd = commands.add_parser("arena", help="every player of the book on the same exact yardsticks")
    arena_cmd.add_argument("--json", help="also write the full table and the round robin to this JSON file")
    _add_ling_lam_parser(commands)

    _al_khateeb_parser(commands)

    _mohammadi_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ttt_helpers`` (chapter 7)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "al-khateeb":
        return _al_khateeb_command(parser, args)
    if args.command == "mohammadi":
        return _mohammadi_command(args, parser)
    if args.command == "evolve":
        try:
            config = ExperimentConfig(
                parents=args.parents, generations=args.generations, trials=args.trials,
                rules=OpponentRules(rule_d_lines=args.rule_d, first_reply=args.first_reply),
                mutation=MutationSettings(spread_is=args.spread_is),
                selection=SelectionSettings(payoff=args.payoff, ties_win=not args.strict_selection),
            )  # fmt: skip
            workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
            check_count(workers, "--workers")
            check_output_path(args.out, "--out")
            if args.champion:
                check_output_path(args.champion, "--champion")
            check_memory(
                estimated_memory(config, workers), f"a run of {config.trials} trials x {config.parents} parents"
            )
        except ValueError as error:
            parser.error(str(error))
        print(f"evolving: {config.trials} trials x {config.generations} generations, {config.parents} parents, "
              f"seed {args.seed}, {workers} worker(s)", file=sys.stderr)  # fmt: skip
        run = evolve(config, seed=args.seed, progress=not args.quiet, workers=workers)
        save_run(run, args.out)
        final = run.best_score[:, -1]
        print(f"wrote {args.out}: mean best score in the last generation {final.mean():.2f} "
              f"(trials range {final.min():g} to {final.max():g})")  # fmt: skip
        if args.champion:
            save_network(run.best_network(0), args.champion, **champion_provenance(run, 0))
            print(f"wrote {args.champion}: best network of trial 0 ({run.best_network(0).hidden_count} hidden nodes)")
        return 0
    if args.command == "arena":
        return _arena_command(parser, args)
    if args.command == "ling-lam":
        return _ling_lam_command(args, parser)
    try:
        network, provenance = load_network(args.network)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    print(evaluation_report(network, provenance))
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


# ----------------------------------------------------------------------------------------------------------
# Ling and Lam (2011): python -m ttt_helpers ling-lam ... (chapters 17-18)
# ----------------------------------------------------------------------------------------------------------


def _add_ling_lam_parser(commands) -> None:
    from evolving_ttt.ling_lam.experiment import METHODS, PAPER_LING_LAM
    from evolving_ttt.ling_lam.ga import REPLACEMENT_READINGS
    from evolving_ttt.ling_lam.network import HIDDEN_ORDERS, TRAINING_SOURCES

    run = commands.add_parser("ling-lam", help="train Ling and Lam's NNDTF and the baseline for many seeds")
    run.add_argument("--seeds", type=_nonnegative_int, default=PAPER_LING_LAM.seeds, help="runs per method (20)")
    run.add_argument("--iterations", type=_nonnegative_int, default=PAPER_LING_LAM.iterations)
    run.add_argument("--seed", type=_nonnegative_int, default=1)
    run.add_argument("--out", required=True, help="the .npz file to write (every curve and trained network)")
    run.add_argument("--methods", default="nndtf,baseline",
                     help=f"comma-separated, from {', '.join(METHODS)} (default nndtf,baseline)")  # fmt: skip
    run.add_argument("--order", choices=HIDDEN_ORDERS, default=PAPER_LING_LAM.order,
                     help="how the hidden neurons read their neighbours (default simultaneous)")  # fmt: skip
    run.add_argument("--replacement", choices=REPLACEMENT_READINGS, default=PAPER_LING_LAM.replacement,
                     help="Figure 7 read as the paper's text (default) or its pseudocode")  # fmt: skip
    run.add_argument("--training-source", choices=TRAINING_SOURCES, default=PAPER_LING_LAM.training_source)
    run.add_argument("--data-dir", help="also write ling_lam_runs.json and the fittest network of each method "
                     "(ling_lam_<method>.json) into this folder, as in book/data")  # fmt: skip
    run.add_argument("--workers", type=_nonnegative_int, default=None, help="processes to use (default: all cores)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")


# -----------------------------------------------------------------------------------------------------
# Al-Khateeb (2012): python -m ttt_helpers al-khateeb ... (chapters 15 and 16)
# -----------------------------------------------------------------------------------------------------


def _al_khateeb_parser(commands) -> None:
    from evolving_ttt.al_khateeb.evaluator import PAPER_AL_KHATEEB, VIEWS, WINNING_MOVES

    run = commands.add_parser(
        "al-khateeb", help="run Al-Khateeb's co-evolution (20 runs x 2,000 generations) and save TTT"
    )
    run.add_argument("--runs", type=_nonnegative_int, default=PAPER_AL_KHATEEB.runs)
    run.add_argument("--generations", type=_nonnegative_int, default=PAPER_AL_KHATEEB.generations)
    run.add_argument("--seed", type=_nonnegative_int, default=1)
    run.add_argument("--out", required=True, help="the .npz file to write the record of every run to")
    run.add_argument("--champion", help="also save TTT, the winner of the final round robin, to this JSON file")
    run.add_argument("--view", choices=VIEWS, default="mover",
                     help="boards seen from the mover's side (default) or always from X's")  # fmt: skip
    run.add_argument("--winning-moves", choices=WINNING_MOVES, default="evaluator",
                     help="a winning move is judged by the network (default) or taken by the rules")  # fmt: skip
    run.add_argument("--workers", type=_nonnegative_int, default=None, help="processes to use (default: all cores)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")


def _ling_lam_command(args, parser: argparse.ArgumentParser) -> int:
    """``python -m ttt_helpers ling-lam``: train, then write the runs (and the book's data files if asked)."""
    from evolving_ttt.ling_lam.experiment import (
        METHODS,
        SUMMARY_CURVE_STEP,
        LingLamConfig,
        save_runs_summary,
        save_trained_network,
        save_training_runs,
        train,
    )

    try:
        config = LingLamConfig(seeds=args.seeds, iterations=args.iterations, order=args.order,
                               replacement=args.replacement, training_source=args.training_source)  # fmt: skip
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        unknown = [m for m in methods if m not in METHODS]
        if not methods or unknown or len(set(methods)) != len(methods):
            raise ValueError(f"--methods must list distinct methods from {', '.join(METHODS)}; got {args.methods!r}")
        workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
        check_count(workers, "--workers")
        check_output_path(args.out, "--out")
        from evolving_ttt.ling_lam.experiment import estimated_memory as training_memory

        check_memory(training_memory(config, len(methods)), f"training {config.seeds} seeds", advice="Use fewer seeds.")
        data_files = {}
        if args.data_dir:
            folder = Path(args.data_dir)
            if not folder.is_dir():
                raise ValueError(f"--data-dir {folder}: no such folder")
            data_files = {name: check_output_path(folder / f"ling_lam_{name}.json", "--data-dir")
                          for name in ["runs", *methods]}  # fmt: skip
            if config.iterations % SUMMARY_CURVE_STEP:
                raise ValueError(
                    f"--data-dir keeps every {SUMMARY_CURVE_STEP}th point of the curves: "
                    f"--iterations must be a multiple of {SUMMARY_CURVE_STEP}"
                )
    except ValueError as error:
        parser.error(str(error))
    command = "python -m ttt_helpers ling-lam " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["ling-lam"] else None
    print(f"ling-lam: {', '.join(methods)}; {config.seeds} seeds x {config.iterations} iterations, seed {args.seed}, "
          f"{workers} worker(s)", file=sys.stderr)  # fmt: skip
    runs = {m: train(m, config, args.seed, progress=not args.quiet, workers=workers) for m in methods}
    save_training_runs(runs, args.out)
    print(f"wrote {args.out}")
    for method, run in runs.items():
        f = run.champion_fitness
        print(f"  {method}: fitness of the trained networks: mean {f.mean():.4f}, range {f.min():.4f} to {f.max():.4f}")
    if data_files:
        save_runs_summary(runs, data_files["runs"], SUMMARY_CURVE_STEP, command=command or "ling-lam")
        print(f"wrote {data_files['runs']}")
        for method, run in runs.items():
            save_trained_network(run.network(), data_files[method], **run.provenance())
            print(f"wrote {data_files[method]}: the fittest of the {config.seeds} {method} runs")
    return 0


def _al_khateeb_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``python -m ttt_helpers al-khateeb``: every argument and output path is checked before the run starts."""
    from evolving_ttt.al_khateeb.engine import coevolve, save_coevolution_run, save_evaluator
    from evolving_ttt.al_khateeb.evaluator import AlKhateebConfig, OnePlySettings
    from evolving_ttt.al_khateeb.results import choose_ttt, ttt_provenance

    try:
        config = AlKhateebConfig(
            generations=args.generations, runs=args.runs,
            player=OnePlySettings(view=args.view, winning_moves=args.winning_moves),
        )  # fmt: skip
        workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
        check_count(workers, "--workers")
        if Path(args.out).suffix != ".npz":
            raise ValueError(f"--out {args.out}: the record is a .npz file; give a name ending in .npz")
        check_output_path(args.out, "--out")
        from evolving_ttt.al_khateeb.engine import estimated_memory as coevolution_memory

        check_memory(coevolution_memory(config), f"a co-evolution of {config.runs} runs", advice="Use fewer runs.")
        if args.champion:
            if Path(args.champion).suffix != ".json":
                raise ValueError(f"--champion {args.champion}: TTT is saved as JSON; give a name ending in .json")
            check_output_path(args.champion, "--champion")
    except ValueError as error:
        parser.error(str(error))
    print(f"co-evolving: {config.runs} runs x {config.generations} generations, {config.population} networks, "
          f"seed {args.seed}, {workers} worker(s)", file=sys.stderr)  # fmt: skip
    run = coevolve(config, seed=args.seed, progress=not args.quiet, workers=workers)
    save_coevolution_run(run, args.out)
    best = run.totals[:, -1].max(axis=1)
    print(f"wrote {args.out}: best round-robin total in the last generation {best.mean():.2f} on average "
          f"(runs range {best.min()} to {best.max()}, out of 38)")  # fmt: skip
    if args.champion:
        row, points = choose_ttt(run)
        save_evaluator(run.weights[row, 0], run.steps[row, 0], args.champion, **ttt_provenance(run, row, points))
        print(f"wrote {args.champion}: TTT is the player of run {run.run_numbers[row]}, "
              f"{points[row]} points in the final round robin")  # fmt: skip
    return 0


# =====================================================================================================
# Mohammadi et al. (2013): python -m ttt_helpers mohammadi ... (chapter 20)
# =====================================================================================================


def _mohammadi_parser(commands) -> None:
    from evolving_ttt.mohammadi.coevolution import JUDGES, PAPER_MOHAMMADI, PLAYAT_READINGS

    default = PAPER_MOHAMMADI
    run = commands.add_parser("mohammadi", help="Mohammadi et al. (2013): co-evolve programs, a judge between runs")
    run.add_argument("--runs", type=_nonnegative_int, default=default.runs)
    run.add_argument("--generations", type=_nonnegative_int, default=default.generations, help="per run")
    run.add_argument("--population", type=_nonnegative_int, default=default.population)
    run.add_argument("--seed", type=_nonnegative_int, default=1)
    run.add_argument("--judge", choices=JUDGES, default=default.judge,
                     help="who keeps the seeds of the next run: the scripted judge (perfect), a random pick, "
                          "or nobody (the population carries on)")  # fmt: skip
    run.add_argument("--seeds-kept", type=_nonnegative_int, default=default.seeds_kept)
    run.add_argument("--playat-counted", choices=PLAYAT_READINGS, default=default.playat_counted,
                     help="the PLAY-AT bonus is paid per PLAY-AT node (each) or once for any")  # fmt: skip
    run.add_argument("--taken", choices=("square", "nil"), default=default.taken,
                     help="what PLAY-AT returns on an occupied square: the square (default) or NIL")  # fmt: skip
    run.add_argument("--out", required=True, help="the JSON file to write the series record to")
    run.add_argument("--champion", help="also save the champion program to this JSON file")
    run.add_argument("--quiet", action="store_true", help="no progress bar")


def _mohammadi_command(args, parser) -> int:
    """``python -m ttt_helpers mohammadi``: a series of runs, its record, and its champion (chapter 20)."""
    from evolving_ttt.fogel.exact import rule_base_policy
    from evolving_ttt.mohammadi.coevolution import MohammadiConfig
    from evolving_ttt.mohammadi.judge import program_exact_results
    from evolving_ttt.mohammadi.programs import parse_program, playat_count
    from evolving_ttt.mohammadi.series import evolve_series, save_program, save_series, series_provenance

    try:
        config = MohammadiConfig(
            runs=args.runs, generations=args.generations, population=args.population, judge=args.judge,
            seeds_kept=args.seeds_kept, playat_counted=args.playat_counted, taken=args.taken,
            best_candidates=min(20, args.population), random_candidates=min(20, max(args.population - 20, 0)),
        )  # fmt: skip
        check_output_path(args.out, "--out")
        if args.champion:
            check_output_path(args.champion, "--champion")
    except ValueError as error:
        parser.error(str(error))
    print(f"co-evolving: {config.runs} runs x {config.generations} generations, population {config.population}, "
          f"{config.judge} judge, seed {args.seed}", file=sys.stderr)  # fmt: skip
    record = evolve_series(config, seed=args.seed, progress=not args.quiet)
    save_series(record, args.out)
    print(f"wrote {args.out}")
    for number, run in enumerate(record.runs, start=1):
        best = run.results["perfect"][:, :, 2].sum(axis=1).min()
        print(f"  run {number}: mean fitness {run.fitness.mean():.1f}; fewest expected losses to the perfect player "
              f"among the candidates {best:.3f} of 2 games")  # fmt: skip
    champion = parse_program(record.champion())
    provenance = series_provenance(record)
    rule_base = program_exact_results([champion], rule_base_policy, taken=config.taken)[0]
    print(f"champion ({provenance['chosen_as']}): {len(champion)} nodes, {playat_count(champion)} PLAY-AT")
    print(f"  expected losses to the perfect player {provenance['losses_to_perfect']:.3f} of 2 games; "
          f"against the rule base: wins {rule_base[:, 0].sum():.3f}, losses {rule_base[:, 2].sum():.3f}")  # fmt: skip
    if args.champion:
        save_program(champion, args.champion, **provenance)
        print(f"wrote {args.champion}")
    return 0
