"""The one import the chapters share: ``import ttt_helpers as th``.

This file defines nothing. The code lives in the package ``evolving_ttt``, one module per concern
(see its ``__init__``); this file re-exports the public names the chapters use, grouped by the chapter
that introduces them, so that ``th.NAME`` works in every chapter. ``python -m ttt_helpers ...`` runs
the command line (:mod:`evolving_ttt.cli`).
"""

import sys

if __name__ == "__main__":  # the command line: a signal while the package loads ends it quietly
    from evolving_ttt import program

    program.guard()

# fmt: off

# Chapters 2 and 9: portable numerics, the same bits on every processor (th.numerics.exp, ...)
from evolving_ttt import numerics

# Chapter 1: the game and its encoding (book/01_the_game.ipynb)
from evolving_ttt.game import (
    X, O, EMPTY, SYMBOLS, WIN_LINES, check_board_values, line_winners, validate_board, board_from_string,
    board_to_string, network_input, winner, is_game_over, is_draw, player_to_move, check_mark, legal_moves,
    play, GameCounts, reachable_positions, count_games, N_BOARDS, POWERS_OF_3, MARK_DIGIT, board_index,
    board_from_index, BoardTables, squares_to_list, board_tables,
)
from evolving_ttt.drawing import (
    board_to_text, draw_board,
)

# Chapter 2: the network (book/02_the_network.ipynb)
from evolving_ttt.fogel.network import (
    MIN_HIDDEN, MAX_HIDDEN, INITIAL_WEIGHT_RANGE, sigmoid, Network, check_hidden_count, network_preactivations,
    network_outputs, network_move, Population, hidden_slot_mask, stack_networks, concatenate_populations,
    random_population, random_network, population_preactivations, population_outputs, population_moves,
)
from evolving_ttt.game import (
    check_count, check_number, LARGEST_SETTING,
)

# Chapter 3: the near-perfect opponent (book/03_the_opponent.ipynb)
from evolving_ttt.rule_base import (
    GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME, OpponentRules, PAPER_RULES, rule_candidates, split_uniform,
    uniform_index, pick_uniform, near_perfect_move_given, near_perfect_move, first_reply_square, play_game,
    play_protocol, random_player, OpponentTables, opponent_tables, choice_positions, near_perfect_moves,
)
from evolving_ttt.fogel.network import network_player
from evolving_ttt.game import (
    check_probability, Player,
)

# Chapters 3 and 9: the batched engine (book/03_the_opponent.ipynb, book/09_making_it_fast.ipynb)
from evolving_ttt.fogel.engine import (
    EngineSteps, engine_steps, ENGINE_UNITS, BIAS_UNIT_SUM, engine_weights, empty_board_negated_sums, take_rows,
    first_best_squares, x_turn_numbers, x_turn_square_codes, Endgame, endgame_class, endgame, BoardTable,
    block_sizes, distinct_boards, Openings, check_openings_apply, concatenate_openings, protocol_openings,
    play_protocol_batch,
)

# Chapter 4: mutation (book/04_mutation.ipynb)
from evolving_ttt.fogel.mutation import (
    N_WEIGHTS_PADDED, MutationSettings, PAPER_MUTATION, MutationDraws, draw_mutation, structure_decisions,
    mutate_network, used_parameters, deletion_gathers, mutate_population, mutate,
)

# Chapter 5: scoring and selection (book/05_selection.ipynb)
from evolving_ttt.fogel_score import PAPER_PAYOFF, check_payoff
from evolving_ttt.fogel.selection import (
    SelectionSettings, PAPER_SELECTION, game_payoffs, pick_others, other_networks, pick_others_batch,
    selection_points, survivors, take_networks, GenerationDraws, draw_generation, GenerationResult,
    generation_step_readable, generation_step,
)
from evolving_ttt.fogel.network import (
    batch_rows,
)

# Chapter 6: evolution (book/06_evolution.ipynb)
from evolving_ttt.seeds import MAX_SEED, check_seed, trial_generators
from evolving_ttt.fogel.evolution import (
    FogelSettings, ExperimentConfig, PAPER_EXPERIMENT, EvolutionRun, merge_runs, keep_freed_memory, evolve,
    POPULATION_FIELDS, save_run, load_run, run_experiment,
)

# Chapter 6: the run cache that shares long runs within a build (every system's run_* functions use it)
from evolving_ttt.run_cache import (
    RUN_CACHE_VARIABLE, cached_run,
)
from evolving_ttt.reading import read_record

# Chapter 7: the performance curve, Fogel's Figure 2 (book/07_figure2.ipynb)
from evolving_ttt.statistics import (
    t_quantile_975, mean_with_confidence,
)
from evolving_ttt.fogel.network import (
    NETWORK_FORMAT, save_network, load_network,
)
from evolving_ttt.fogel.evolution import (
    champion_provenance,
)

# Chapter 8: a tree of games, Fogel's Figure 3 (book/08_figure3.ipynb)
from evolving_ttt.drawing import (
    GameNode, tree_counts, draw_game_tree,
)
from evolving_ttt.fogel.trees import (
    game_tree,
)

# Chapter 10: exact expected scores and the best possible score (book/10_exact_scores.ipynb)
from evolving_ttt.fogel_score import (
    opponent_probabilities, o_reply_distribution, BestResponse, best_response, expectimax_walk,
)
from evolving_ttt.fogel.exact import game_payoff_moments, exact_score_readable, exact_scores, exact_score

# Chapter 11: perfect play and auditing a network (book/11_perfect_play.ipynb)
from evolving_ttt.perfect import (
    minimax_values, perfect_move, Audit, audit_player, lowest_square_player,
)
from evolving_ttt.fogel.exact import evaluation_report

# Players of every system as tables of move probabilities, and their exact results (chapter 11, used by every
# system and by the arena)
from evolving_ttt.outcomes import (
    POLICY_SHAPE, OUTCOMES, boards_to_move, check_policy, policy_table, random_policy, perfect_policy,
    outcome_table, outcome_probabilities, sample_games, sample_game, best_response_policy, favourable_values,
    PolicyAudit, audit_policy,
)
from evolving_ttt.fogel_score import rule_base_policy, protocol_score

# Chapter 13: the paper's ambiguities, five full experiments measured once and re-checked (book/13_ambiguities.ipynb)
from evolving_ttt.fogel.saved_readings import (
    READINGS_FILE as FOGEL_READINGS_FILE, READINGS_FORMAT as FOGEL_READINGS_FORMAT, fogel_readings,
    reading_measures, write_fogel_readings, load_fogel_readings, recheck_fogel_readings,
)

# Chapter 14: Al-Khateeb (2012), the system, readable and batched (book/14_al_khateeb_system.ipynb)
from evolving_ttt.al_khateeb.evaluator import (
    EVALUATOR_LAYERS, EVALUATOR_WEIGHTS, EVALUATOR_WEIGHT_LIMIT, INITIAL_STEP_SIZE, STEP_SIZE_TAU, VIEWS,
    WINNING_MOVES, WIN_VALUE, OnePlySettings, PAPER_ONE_PLY, check_weights, evaluator_layers, evaluate_boards,
    random_evaluators, move_values, one_ply_move, one_ply_player, self_adaptive_mutation, coevolution_game,
    round_robin_results, round_robin_totals, rank_population, AlKhateebSettings, AlKhateebConfig, PAPER_AL_KHATEEB,
    CoevolutionDraws, draw_coevolution, ReadableRun, coevolve_readable,
)
from evolving_ttt.al_khateeb.one_ply import (
    swapped_index, search_moves, play_new_games,
)
from evolving_ttt.al_khateeb.engine import (
    CoevolutionRun, merge_coevolution_runs, coevolve, RECORD_FIELDS,
    save_coevolution_run, load_coevolution_run, run_coevolution,
)

# Chapter 15: Al-Khateeb (2012), the results, as the paper measured them and exactly (book/15_al_khateeb_results.ipynb)
from evolving_ttt.al_khateeb.engine import (
    EVALUATOR_FORMAT, save_evaluator, load_evaluator,
)
from evolving_ttt.al_khateeb.results import (
    AL_KHATEEB_TABLE_1, AL_KHATEEB_TABLE_2, AL_KHATEEB_TABLE_3, AfterstateTables, afterstate_tables,
    evaluator_moves, moves_to_policies, evaluator_policies, evaluator_policy, evaluator_exact_results,
    progress_curve, final_round_robin, game_points, WelchTest, welch_test, match_record, choose_ttt,
    ttt_provenance,
)
from evolving_ttt.al_khateeb.saved_results import (
    RESULTS_FILE as AL_KHATEEB_RESULTS_FILE, RESULTS_FORMAT as AL_KHATEEB_RESULTS_FORMAT, PROGRESS_EVERY,
    READING_GENERATIONS, progress_checkpoints, progress_yardsticks, other_readings, reading_config,
    write_al_khateeb_results, load_al_khateeb_results, recheck_al_khateeb_results,
)
from evolving_ttt.al_khateeb.bounds import (
    WINS_ONLY, binomial_tail, Table3Bounds, table3_bounds, deterministic_perfect_policy, split_totals, splits_giving,
    Table2Splits, table2_splits,
)

# Chapters 16-17: Ling and Lam (2011), the heuristic, the NNDTF and the improved GA (book/16_ling_lam_system.ipynb,
# book/17_ling_lam_results.ipynb)
from evolving_ttt.ling_lam.heuristic import (
    HEURISTIC_EMPTY, LINE_SCORES, LINES_THROUGH, heuristic_encoding, line_values, square_scores, score_table,
    heuristic_move, heuristic_policy, worked_example_boards,
)
from evolving_ttt.ling_lam.network import (
    N_HIDDEN, HIDDEN_ORDERS, NNDTF_LAYOUT, NNDTF_GENES, BASELINE_LAYOUT, BASELINE_GENES, GRID_NUMBERS,
    SQUARES_BY_GRID_NUMBER, NEXT_NEURON, PREVIOUS_NEURON, check_genes, EXPONENT_FLOOR, transfer, nndtf_output,
    nndtf_outputs, baseline_output, baseline_outputs, move_tables, output_steps, output_squares, NETWORK_KINDS,
    ling_lam_outputs,
    TrainingSet, TRAINING_SOURCES, training_positions, fitness, all_x_positions,
)
from evolving_ttt.ling_lam.ga import (
    LOWER, UPPER, REPLACEMENT_READINGS, ImprovedGASettings, TraditionalGASettings, PAPER_IMPROVED_GA,
    PAPER_TRADITIONAL_GA, improved_draw_count, traditional_draw_count, random_chromosomes, roulette,
    crossover_candidates, mutants, replace_worst, arithmetic_crossover, nonuniform_mutation, GARun, improved_ga,
    traditional_ga,
)
from evolving_ttt.ling_lam.engine import (
    ENGINES as LING_LAM_ENGINES, improved_ga_lockstep, traditional_ga_lockstep,
)
from evolving_ttt.ling_lam.experiment import (
    PAPER_FITNESS, LING_LAM_TABLE_1, METHODS, LingLamSettings, LingLamConfig, PAPER_LING_LAM, fitness_function,
    method_generators, TrainingRun, train, run_training, save_training_runs, load_training_runs,
    save_runs_summary, load_runs_summary, TrainedNetwork, save_trained_network, load_trained_network,
    network_move_table, network_policy, play_from_positions, two_by_two_positions,
)

# Chapters 18 and 19: Mohammadi et al. (2013), genetic programming, fitnessless co-evolution and a human judge
# (book/18_mohammadi_system.ipynb, book/19_mohammadi_results.ipynb)
from evolving_ttt.mohammadi.programs import (
    TERMINAL_NAMES, TERMINAL_SQUARES, FUNCTION_ARITIES, make_primitive_set, PRIMITIVES, program_to_text,
    parse_program, program_lines, playat_count, run_program, fallback_move, program_move, NIL, program_moves,
    playable_boards, prune_program, program_move_table, program_policy, ProgramPlayer,
)
from evolving_ttt.mohammadi.bitsets import (
    ENGINES as MOHAMMADI_ENGINES, bitset_move_table, BitsetTables,
)
from evolving_ttt.mohammadi.coevolution import (
    MohammadiSettings, MohammadiConfig, PAPER_MOHAMMADI, playat_bonus_counts, deap_random, random_programs,
    mutate_below_root, variation_operators, vary, double_game_points, play_double_games, double_game, sample_groups,
    tournament, tournament_readable, round_robin_wins,
)
from evolving_ttt.mohammadi.judge import (
    program_exact_results, scripted_judge,
)
from evolving_ttt.mohammadi.series import (
    GENERATION_STATISTICS, RunRecord, SeriesRecord, Coevolution, evolve_series, save_series, load_series,
    run_series, series_provenance, DEFAULT_PROGRAM, series_games, PROGRAM_FORMAT, save_program, load_program,
)
from evolving_ttt.mohammadi.panel import (
    JudgeSession, JudgePanel, judge_panel,
)

from evolving_ttt.cli import (
    build_parser, main,
)

# Chapter 20: is it the paper or a detail? Sweeps, robustness studies, and Fogel (1993) as the control
from evolving_ttt.store import (
    SweepStore, describe_definition,
)
from evolving_ttt.kit import (
    settings_keys, with_setting, with_settings, parse_setting, setting_text, kind_name,
)
from evolving_ttt.sweeps import (
    parse_grid, grid_cells, sweep_definition, sweep_tasks, yardsticks,
    reference_yardsticks, sweep, sweep_player,
)
from evolving_ttt.tables import (
    YARDSTICKS, sweep_table, STUDIES, study_path, study_table, cell_summary, swept_columns, cell_label,
    CONFIRMATION_SEEDS, confirmations, confirmation_command, study_command,
    study_command as al_khateeb_sweep_command,  # its name before chapters 20 to 23 shared study_command
)
from evolving_ttt.statistics import (
    mean_interval, difference_interval, share_interval, t_interval, holm_adjusted,
)
from evolving_ttt.verdicts import (
    CATEGORIES, Sample, Measure, Cell, Bound, Claim, Verdict, verdict, verdict_text, interval_text,
)
from evolving_ttt.studies import (
    GLANCE_COLUMNS, GLANCE_HEADINGS, rerun_check, BuildCheck, build_check, BUILD_CHECK_SECONDS, plot_intervals,
    all_claims, at_a_glance, glance_markdown, findings_markdown, systems_without_claims,
)
from evolving_ttt.fogel.study import (
    CONTROL_STUDIES, never_loses, never_loses_many, network_from_text, control_rows, control_claims,
)

# Chapter 21: Al-Khateeb (2012) under every reading: a deeper search, the share that breeds, a hall of fame
from evolving_ttt.al_khateeb.search import (
    leaf_value, minimax_value, search_values, alpha_beta, search_move, search_player, search_positions, search_tables,
)
from evolving_ttt.al_khateeb.robust import (
    hall_of_fame_points, coevolve_general_readable,
)
from evolving_ttt.al_khateeb.study import (
    STUDY_SWEEPS as AL_KHATEEB_STUDIES,
    study_tasks as al_khateeb_study_tasks, study_cells as al_khateeb_study_cells, champion_curves,
    task_numbers as al_khateeb_task_numbers, claims as al_khateeb_claims, table3_claim,
)
from evolving_ttt.al_khateeb.system import (
    champion_generations,
)

# Chapter 22: Ling and Lam (2011) under every reading: what the network can hold, the GA's form, the positions
from evolving_ttt.ling_lam.capacity import (
    smooth_fitness, fit_network, position_set, capacity_study, save_capacity, load_capacity,
)
from evolving_ttt.ling_lam.robustness import (
    STUDY_NAMES as LING_LAM_STUDIES, trained_networks, fitness_cells, claims as ling_lam_claims,
)

# Chapter 23: Mohammadi et al. (2013) under every reading: the bonus, crossover at the root, many seeds
from evolving_ttt.mohammadi.robustness import (
    competent_program_text, competent_program, bonus_test, STUDY_SWEEPS as MOHAMMADI_STUDIES, PAPER_CELL as
    MOHAMMADI_PAPER_CELL, SINGLE_ROOT_MAJORITY, sweep_command as mohammadi_sweep_command, random_player_points,
    study_tables as mohammadi_study_tables, study_summary as mohammadi_study_summary, claims as mohammadi_claims,
    lowest_square_points,
)

# Chapter 24: the arena, every system's players on the same exact yardsticks
from evolving_ttt.benchmarks import BENCH_RESULTS, BENCHMARK_FORMAT, save_benchmark, load_benchmark
from evolving_ttt.players import (
    Explanation, ArenaPlayer, table_player, square_values, probability_explanation,
)
from evolving_ttt.arena import (
    perfect_explanation, best_response_player, reference_players, catalogue, OPPONENTS,
    results_as, ArenaRow, measure, round_robin, round_robin_points, head_to_head, arena_report, format_arena_table,
)
from evolving_ttt.fogel.system import (
    fogel_champion,
)
from evolving_ttt.al_khateeb.system import (
    Evaluator, al_khateeb_ttt,
)
from evolving_ttt.ling_lam.system import (
    LingLamTask, ling_lam_players,
)
from evolving_ttt.mohammadi.system import (
    mohammadi_champion,
)

# Chapter 25: one vocabulary for every system, the registry, runs on any executor, and a reader's own player
from evolving_ttt.systems import (
    System, REQUIRED_NAMES, OPTIONAL_NAMES, BUILT_IN, check_system, check_settings, register_system, unregister_system,
    registered_systems,
    get_system, register_player, unregister_player, registered_players, run_tasks, run_system, system_player,
    player_from_file, read_by_any_system, system_reference, resolve_system,
)
# Chapter 25: the system kit, the conformance check, and the example system built with them
from evolving_ttt.kit import (
    KitSettings, SystemKit, KitRecord, KIT_RECORD_FORMAT, KIT_PLAYER_FORMAT, COMMAND_OPTIONS, task_generator,
    settings_from_dict,
)
from evolving_ttt.conformance import (
    check_conformance, ConformanceError, same_bits,
)
from evolving_ttt.examples.hill_climber import (
    ClimbSettings, HillClimber,
)
from evolving_ttt.parallel import (
    LOCAL_SCHEDULER, default_workers, split_tasks, TaskRunner, run_shared,
)
# Chapter 26: play against every player of the book (book/26_play.ipynb)
from evolving_ttt.play import (
    OPPONENT_KINDS, DEFAULT_CHAMPION, opponent_player, play_out, View, GameSession, value_text, output_color,
    PlayWidget, play_widget,
)

# Chapter 26: the board of the rendered page, which plays without a kernel
from evolving_ttt.static_board import (
    encode_side, decode_side, players_script, write_players_script,
)

# Chapter 27: evolution beside learning and search (OpenSpiel's Monte Carlo tree search, estimated and saved)
from evolving_ttt.mcts import (
    UCT_C, BUDGETS, SAMPLES, MAX_SIMULATIONS, BOARD_CHOICES as MCTS_BOARD_CHOICES, board_random_state, SearchTree,
    mcts_search, mcts_move, mcts_counts, MCTSEstimate, estimate_policy, mcts_policy, mcts_player, estimated_player,
    row_standard_errors, YARDSTICK_OPPONENTS, yardstick_spread,
)
from evolving_ttt.mcts_players import (
    PLAYERS_FORMAT as MCTS_PLAYERS_FORMAT, PLAYERS_FILE as MCTS_PLAYERS_FILE, PLAYERS_SEED as MCTS_PLAYERS_SEED,
    MCTSPlayers, check_mcts_settings, make_mcts_players, save_mcts_players, load_mcts_players,
)
from evolving_ttt.arena import (
    mcts_players,
)
# Chapter 27: Q-learning (OpenSpiel's QLearner, the book's fifth system) and learning curves by games played
from evolving_ttt.q_learning import (
    QLearningSettings, QLearningSystem, QPlayer, LearningCurve, OPPONENTS as Q_OPPONENTS, CURVE_RESULTS, QSettings,
    train_against_rule_base, train_self_play, q_policy, checkpoint_games, greedy_yardsticks, greedy_protocol_losses,
    learn as q_learn, sweep_curves, fast_train_against_rule_base, fast_train_self_play,
)
from evolving_ttt.curves import (
    CURVES_FILE, CURVES_FORMAT, CURVE_MEASURES, NEVER_LOSES, MOST_RUNS, MOST_RUNS_RULE, curve_studies, point_measures,
    player_measures, study_points, write_learning_curves, load_learning_curves, recheck_points, curve_summary,
    games_until, learning_glance, learning_markdown,
)

# The command line: python -m ttt_helpers evolve | evaluate | arena | al-khateeb | ling-lam | mohammadi | mcts

if __name__ == "__main__":
    program.release()
    program.finish(main())
