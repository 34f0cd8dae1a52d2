"""Chapter 18: Mohammadi's programs, their text form, the lazy interpreters, variation and double games."""

import random

import numpy as np
import pytest
from deap import gp

from evolving_ttt.game import EMPTY, O, X, board_from_string, board_tables
from evolving_ttt.mohammadi import coevolution as co
from evolving_ttt.mohammadi import programs as pr
from evolving_ttt.mohammadi import series as se
from evolving_ttt.outcomes import policy_table


def run(text, board, mark=X):
    return pr.run_program(pr.parse_program(text), board_from_string(board), mark)


# --- NIL semantics, one function at a time ----------------------------------------------------------------------
# On "X.. .O. ..." square 0 is X's, square 4 is O's, the rest are empty. PLAY-AT(f) plays f's value if that square
# is empty, so "no move" means f returned NIL or an occupied square.

BOARD = "X.. .O. ..."  # one mark each: X is to move (the tests also ask O's view of it)


@pytest.mark.parametrize(
    ("text", "mark", "expected"),
    [
        ("OPEN(pos01)", X, 1), ("OPEN(pos00)", X, None),  # pos00 is taken: NIL
        ("MINE(pos00)", X, None),  # mine, but occupied: PLAY-AT places nothing
        ("IF(MINE(pos00), pos01, pos02)", X, 1), ("IF(MINE(pos00), pos01, pos02)", O, 2),
        ("IF(YOURS(pos11), pos12, pos22)", X, 5), ("IF(YOURS(pos11), pos12, pos22)", O, 8),
        ("IF(OPEN(pos11), pos12, pos22)", X, 8),
        ("AND(OPEN(pos01), pos02)", X, 2), ("AND(OPEN(pos00), pos02)", X, None),
        ("AND(pos02, OPEN(pos00))", X, None),
        ("OR(OPEN(pos00), pos02)", X, 2), ("OR(pos01, pos02)", X, 1), ("OR(OPEN(pos00), YOURS(pos22))", X, None),
        ("MINE(OPEN(pos00))", X, None),  # NIL passes through MINE
        ("OPEN(YOURS(pos11))", O, None),  # O's own mark is not YOURS for O
    ],
)  # fmt: skip
def test_each_function_follows_the_papers_nil_semantics(text, mark, expected):
    assert run(f"PLAY-AT({text})", BOARD, mark) == expected


def test_if_is_lazy_only_the_chosen_branch_runs():
    # Both branches hold a PLAY-AT on an empty square; only the chosen one may fire.
    assert run("IF(pos00, PLAY-AT(pos01), PLAY-AT(pos02))", "... ... ...") == 1
    assert run("IF(OPEN(pos11), PLAY-AT(pos01), PLAY-AT(pos02))", BOARD) == 2
    # AND skips its second argument after a NIL; OR skips its second after a position.
    assert run("AND(OPEN(pos00), PLAY-AT(pos01))", BOARD) is None
    assert run("OR(pos22, PLAY-AT(pos01))", BOARD) is None
    assert run("OR(OPEN(pos00), PLAY-AT(pos01))", BOARD) == 1


def test_play_at_ends_the_turn_at_the_first_mark_it_places():
    assert run("AND(PLAY-AT(pos01), PLAY-AT(pos02))", BOARD) == 1
    assert run("IF(PLAY-AT(pos22), PLAY-AT(pos01), PLAY-AT(pos02))", BOARD) == 8
    # On an occupied square it places nothing, returns the position, and the walk goes on.
    assert run("AND(PLAY-AT(pos00), PLAY-AT(pos01))", BOARD) == 1
    assert run("IF(PLAY-AT(pos11), PLAY-AT(pos02), PLAY-AT(pos01))", BOARD) == 2
    # A NIL argument: nothing placed, NIL returned.
    assert run("OR(PLAY-AT(OPEN(pos00)), PLAY-AT(pos21))", BOARD) == 7


def test_a_walk_without_a_placed_mark_is_no_move_and_the_fallback_is_the_lowest_empty_square():
    program = pr.parse_program("OR(MINE(pos00), pos22)")
    board = board_from_string(BOARD)
    assert pr.run_program(program, board, X) is None
    player = pr.ProgramPlayer(program)
    assert not player.made_move(board) and player(board) == 1 == pr.fallback_move(board)
    with pytest.raises(ValueError, match="game is over"):
        pr.fallback_move(board_from_string("XXX OO. ..."))


# --- Text form ---------------------------------------------------------------------------------------------------


def random_trees(seed, count, depth=8):
    return co.random_programs(np.random.default_rng(seed), count, depth)


def test_print_and_parse_round_trip_on_random_programs():
    for program in random_trees(0, 200, 12):
        text = pr.program_to_text(program)
        back = pr.parse_program(text)
        assert [n.name for n in back] == [n.name for n in program]
        assert pr.program_to_text(back) == text
    assert pr.program_to_text(pr.parse_program("  PLAY-AT( OR(pos11 ,pos00))\n")) == "PLAY-AT(OR(pos11, pos00))"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected a function or a terminal at the end of the text"),
        ("PLAY-AT(pos11", r"expected '\)' closing PLAY-AT \(it takes 1 argument\) at the end of the text"),
        ("AND(pos11)", r"expected ',' before argument 2 of AND \(it takes 2\) at character 9"),
        ("IF(pos00, pos01, pos02, pos10)", r"expected '\)' closing IF .* at character 22"),
        ("MOVE(pos11)", r"unknown name 'MOVE' at character 0"),
        ("OPEN(pos33)", r"unknown name 'pos33' at character 5"),
        ("pos11 pos12", r"unexpected 'pos12' after the complete program, at character 6"),
        ("OPEN[pos11]", r"unexpected character '\[' at character 4"),
        ("OR(, pos11)", r"expected a function or a terminal at character 3, found ','"),
    ],
)
def test_malformed_programs_say_where_they_fail_to_parse(text, message):
    with pytest.raises(ValueError, match=message):
        pr.parse_program(text)


def test_program_lines_indent_children_below_their_function():
    assert pr.program_lines(pr.parse_program("IF(OPEN(pos11), PLAY-AT(pos11), pos00)")) == (
        "IF\n  OPEN\n    pos11\n  PLAY-AT\n    pos11\n  pos00"
    )


# --- The batched interpreter and the tables -------------------------------------------------------------------


def test_batched_interpreter_agrees_with_the_readable_one_on_every_board():
    tables = board_tables()
    index, to_move = pr.playable_boards()
    assert len(index) == 4520
    rng = np.random.default_rng(5)
    programs = random_trees(1, 40, 10) + [pr.parse_program("IF(PLAY-AT(pos11), PLAY-AT(pos00), OR(pos22, pos20))")]
    for program in programs:
        table = pr.program_move_table(program)
        for i in rng.choice(index, 150, replace=False):
            expected = pr.run_program(program, tables.boards[i], int(tables.to_move[i]))
            assert table[i] == (-1 if expected is None else expected)


@pytest.mark.slow
def test_program_policy_is_the_tabulated_program_player():
    for program in random_trees(2, 3, 10):
        for mark in (X, O):
            assert np.array_equal(pr.program_policy(program, mark), policy_table(pr.ProgramPlayer(program), mark))


# --- DEAP variation ---------------------------------------------------------------------------------------------


def test_deap_random_reproduces_and_restores_pythons_random_state():
    random.seed(123)
    before = random.random()
    random.seed(123)
    first = [pr.program_to_text(p) for p in random_trees(7, 20)]
    again = [pr.program_to_text(p) for p in random_trees(7, 20)]
    assert first == again and len(set(first)) > 10
    assert random.random() == before  # the global state was left as it was


def test_random_programs_respect_the_initial_depth_and_start_with_a_function():
    programs = co.random_programs(np.random.default_rng(3), 300, 20)
    heights = [p.height for p in programs]
    assert 1 <= min(heights) and max(heights) <= 20
    assert all(p[0].arity > 0 for p in programs)


def test_mutation_never_changes_the_root_and_always_changes_a_subtree_below_it():
    settings = co.MohammadiSettings(depth_limit=20, initial_depth=20)
    _, mutation = co.variation_operators(settings)
    rng = np.random.default_rng(4)
    changed = 0
    for program in co.random_programs(rng, 300, 8):
        before = [n.name for n in program]
        with co.deap_random(rng):
            (child,) = mutation(gp.PrimitiveTree(list(program)))
        assert child[0].name == before[0]
        changed += [n.name for n in child] != before
    assert changed > 150  # a subtree may be replaced by an equal one, but mostly it differs
    lone = gp.PrimitiveTree([pr.PRIMITIVES.mapping["pos11"]])
    assert co.mutate_below_root(lone, None, pr.PRIMITIVES)[0] is lone


def test_the_depth_limit_holds_under_crossover_and_mutation():
    settings = co.MohammadiSettings(initial_depth=6, depth_limit=6, mutation_depth=4, crossover=1.0, mutation=1.0)
    rng = np.random.default_rng(8)
    population = co.random_programs(rng, 64, 6)
    grew_past = 0
    for _ in range(15):
        unlimited = co.MohammadiSettings(initial_depth=6, depth_limit=60, mutation_depth=4, crossover=1.0,
                                         mutation=1.0)  # fmt: skip
        grew_past += max(p.height for p in co.vary(population, np.random.default_rng(1), unlimited)) > 6
        population = co.vary(population, rng, settings)
        assert max(p.height for p in population) <= 6
    assert grew_past > 0  # without the limit the same operators do exceed it


def test_vary_leaves_the_parents_alone_and_copies_without_crossover_or_mutation():
    parents = random_trees(9, 10)
    texts = [pr.program_to_text(p) for p in parents]
    settings = co.MohammadiSettings(crossover=0.0, mutation=0.0)
    children = co.vary(parents, np.random.default_rng(0), settings)
    assert [pr.program_to_text(c) for c in children] == texts
    co.vary(parents, np.random.default_rng(0), co.MohammadiSettings(crossover=1.0, mutation=1.0))
    assert [pr.program_to_text(p) for p in parents] == texts


# --- Double games -----------------------------------------------------------------------------------------------

# Takes the first empty square of 0, 4, 8, 2, 6: a PLAY-AT on a taken square returns it (not NIL), so AND goes on.
DIAGONAL = "AND(PLAY-AT(pos00), AND(PLAY-AT(pos11), AND(PLAY-AT(pos22), AND(PLAY-AT(pos02), PLAY-AT(pos20)))))"
SILENT = "OR(MINE(pos00), YOURS(pos00))"  # never places a mark: the fallback plays the lowest empty square


def test_double_game_points_follow_the_table():
    results = [(1, 1), (1, 0), (0, 1), (1, -1), (-1, 1), (0, 0), (0, -1), (-1, -1)]
    expected = [20, 10, 10, 5, 5, 2, 1, 0]
    assert co.double_game_points(*np.array(results).T).tolist() == expected


def test_a_double_game_scored_by_hand():
    # DIAGONAL as X: 0; SILENT (fallback) 1; X 4; O 2; X 8 wins. As O against SILENT's X: X 0 (fallback),
    # O 4, X 1, O 8, X 2 wins the top row. One win, one loss: 5 points each, plus the bonuses.
    settings = co.MohammadiSettings(playat_bonus=1.0, move_bonus=1.0)
    a, b = pr.parse_program(DIAGONAL), pr.parse_program(SILENT)
    a_points, b_points, a_results, b_results = co.double_game(a, b, settings)
    assert a_results == (1, -1) and b_results == (-1, 1)
    assert a_points == 5 + 5 * 1 + (3 + 2) * 1  # five PLAY-ATs, three moves as X and two as O
    assert b_points == 5 + 0 + 0  # no PLAY-AT, no move of its own
    any_config = co.MohammadiSettings(playat_counted="any")
    assert co.double_game(a, b, any_config)[0] == 5 + 1 + 5


def test_batched_double_games_agree_with_the_readable_ones():
    programs = random_trees(11, 24, 10) + [pr.parse_program(DIAGONAL), pr.parse_program(SILENT)]
    settings = co.MohammadiSettings(playat_bonus=0.5, move_bonus=2.0)
    tables = np.stack([pr.program_move_table(p) for p in programs])
    playats = co.playat_bonus_counts(programs, settings)
    rng = np.random.default_rng(2)
    a, b = rng.integers(len(programs), size=60), rng.integers(len(programs), size=60)
    games = co.play_double_games(tables, playats, a, b, settings)
    for k in range(60):
        a_points, b_points, a_results, b_results = co.double_game(programs[a[k]], programs[b[k]], settings)
        assert (games.a_points[k], games.b_points[k]) == (a_points, b_points)
        assert tuple(games.a_results[k]) == a_results and tuple(games.b_results[k]) == b_results


def test_games_between_tables_are_legal_and_end_when_the_game_is_over():
    programs = random_trees(12, 16, 10)
    tables = np.stack([pr.program_move_table(p) for p in programs])
    x, o = np.nonzero(~np.eye(16, dtype=bool))
    games = co.play_games(tables, x, o)
    assert set(np.unique(games.result)) <= {X, O, EMPTY}
    assert np.all(games.x_moves <= 5) and np.all(games.o_moves <= 4)
    wins = co.round_robin_wins(tables)
    assert wins.sum() == np.count_nonzero(games.result)
    assert np.all(wins <= 2 * 15)


# --- The tournament chain ---------------------------------------------------------------------------------------


def test_sample_groups_never_meet_themselves_and_hold_distinct_opponents():
    groups = co.sample_groups(np.random.default_rng(0), 50, 6)
    assert groups.shape == (50, 6)
    for i, group in enumerate(groups):
        assert i not in group and len(set(group)) == 6 and group.min() >= 0 and group.max() < 50
    counts = np.bincount(co.sample_groups(np.random.default_rng(1), 4, 3).ravel(), minlength=4)
    assert counts.tolist() == [3, 3, 3, 3]  # with 4 individuals and groups of 3, everyone meets everyone


def test_the_chain_keeps_the_double_game_winner_and_agrees_with_the_readable_chain():
    programs = random_trees(13, 30, 10) + [pr.parse_program(DIAGONAL)]
    settings = co.MohammadiSettings(population=31, group_size=5, best_candidates=5, random_candidates=5, seeds_kept=3)
    tables = np.stack([pr.program_move_table(p) for p in programs])
    playats = co.playat_bonus_counts(programs, settings)
    groups = co.sample_groups(np.random.default_rng(3), 31, 5)
    result = co.tournament(tables, playats, groups, settings)
    assert np.array_equal(result.winners, co.tournament_readable(programs, groups, settings))
    # Each chain's winner is its holder or one of its group.
    for i in range(31):
        assert result.winners[i] == i or result.winners[i] in groups[i]
    assert result.double_games.sum() == 2 * 31 * 5 and result.games.sum() == 4 * 31 * 5
    # A chain whose holder beats everyone keeps its holder: give program 30 a huge PLAY-AT bonus.
    boosted = playats.copy()
    boosted[30] = 1000
    assert co.tournament(tables, boosted, groups, settings).winners[30] == 30
    assert np.all(co.tournament(tables, boosted, groups, settings).winners[np.any(groups == 30, axis=1)] == 30)


def test_config_refuses_bad_settings():
    with pytest.raises(ValueError, match="group_size must be below the population"):
        co.MohammadiSettings(population=4, group_size=4)
    with pytest.raises(ValueError, match="crossover must be a probability"):
        co.MohammadiSettings(crossover=1.5)
    with pytest.raises(ValueError, match="judge must be one of"):
        co.MohammadiSettings(judge="human")
    with pytest.raises(ValueError, match="seeds_kept .* exceeds"):
        co.MohammadiSettings(seeds_kept=41)
    with pytest.raises(ValueError, match="playat_counted must be one of"):
        co.MohammadiSettings(playat_counted="some")
    with pytest.raises(ValueError, match="depth_limit"):
        co.MohammadiSettings(initial_depth=20, depth_limit=10)
    assert co.MohammadiSettings.from_dict(co.PAPER_MOHAMMADI.as_dict()) == co.PAPER_MOHAMMADI


def test_pruning_keeps_every_move_and_drops_the_subtrees_no_board_reaches():
    program = pr.parse_program("IF(pos11, PLAY-AT(OPEN(pos11)), AND(PLAY-AT(pos00), pos22))")
    assert pr.program_to_text(pr.prune_program(program)) == "IF(pos11, PLAY-AT(OPEN(pos11)), pos00)"
    rng = np.random.default_rng(6)
    programs = co.random_programs(rng, 40, 12)
    settings = co.MohammadiSettings(depth_limit=12, initial_depth=12)
    for _ in range(3):
        programs = co.vary(programs, rng, settings)
    shrank = 0
    for program in programs:
        pruned = pr.prune_program(program)
        assert np.array_equal(pr.program_move_table(pruned), pr.program_move_table(program))
        assert len(pruned) <= len(program)
        shrank += len(pruned) < len(program)
    assert shrank > 5


def test_the_other_reading_makes_play_at_on_a_taken_square_nil():
    # Under taken="nil" OR becomes a priority list of squares, and AND stops at a taken square.
    board = board_from_string(BOARD)
    for text, square_reading, nil_reading in [
        ("OR(PLAY-AT(pos00), PLAY-AT(pos12))", None, 5),
        ("AND(PLAY-AT(pos00), PLAY-AT(pos12))", 5, None),
        ("IF(PLAY-AT(pos11), PLAY-AT(pos02), PLAY-AT(pos01))", 2, 1),
        ("PLAY-AT(OPEN(pos21))", 7, 7),
    ]:
        program = pr.parse_program(text)
        assert pr.run_program(program, board, X) == square_reading
        assert pr.run_program(program, board, X, taken="nil") == nil_reading
    with pytest.raises(ValueError, match="taken must be one of"):
        pr.run_program(pr.parse_program("PLAY-AT(pos00)"), board, X, taken="occupied")
    with pytest.raises(ValueError, match="taken must be one of"):
        co.MohammadiSettings(taken="none")


def test_batched_interpreter_agrees_with_the_readable_one_under_the_other_reading():
    tables = board_tables()
    index, to_move = pr.playable_boards()
    rng = np.random.default_rng(15)
    for program in random_trees(16, 25, 10):
        table = pr.program_move_table(program, taken="nil")
        for i in rng.choice(index, 150, replace=False):
            expected = pr.run_program(program, tables.boards[i], int(tables.to_move[i]), taken="nil")
            assert table[i] == (-1 if expected is None else expected)
        pruned = pr.prune_program(program, taken="nil")
        assert np.array_equal(pr.program_move_table(pruned, taken="nil"), table)
    settings = co.MohammadiSettings(taken="nil")
    programs = random_trees(17, 12, 10)
    tables_nil = np.stack([pr.program_move_table(p, "nil") for p in programs])
    playats = co.playat_bonus_counts(programs, settings)
    games = co.play_double_games(tables_nil, playats, np.arange(12), np.arange(12)[::-1], settings)
    for k in range(12):
        assert co.double_game(programs[k], programs[11 - k], settings)[:2] == (games.a_points[k], games.b_points[k])


def test_program_height_is_deaps_height():
    programs = co.random_programs(np.random.default_rng(21), 200, 20)
    assert [pr.program_height(p) for p in programs] == [p.height for p in programs]


def test_program_path_names_the_nodes_from_the_root_to_the_play_at_that_moved():
    program = pr.parse_program("IF(OPEN(pos11), PLAY-AT(pos11), AND(PLAY-AT(pos00), pos22))")
    empty = board_from_string("... ... ...")
    assert pr.program_path(program, empty, X) == "IF > PLAY-AT pos11 (square 4)"
    centre_taken = board_from_string("... .X. ...")
    assert pr.program_path(program, centre_taken, O) == "IF > AND > PLAY-AT pos00 (square 0)"
    silent = pr.parse_program(SILENT)
    assert "no PLAY-AT reached an empty square" in pr.program_path(silent, empty, X)
    # the traced walk plays the same square as the plain one
    for board in (empty, centre_taken):
        assert pr.program_move(program, board, X if not board.any() else O) == int(
            pr.program_path(program, board, X if not board.any() else O).split("square ")[1].rstrip(")")
        )


# --- Arguments of the wrong type ------------------------------------------------------------------------------------

_PROGRAM = pr.parse_program("PLAY-AT(pos11)")
_BOARD = np.zeros(9, dtype=np.int8)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pr.parse_program(None), "text must be a program's text"),
        (lambda: pr.parse_program(b"PLAY-AT(pos11)"), "text must be a program's text"),
        (lambda: pr.program_to_text("PLAY-AT(pos11)"), "program must be a program"),
        (lambda: pr.program_lines(None), "program must be a program"),
        (lambda: pr.program_height([1, 2]), "program must be a deap.gp.PrimitiveTree"),
        (lambda: pr.playat_count(None), "program must be a deap.gp.PrimitiveTree"),
        (lambda: pr.run_program(None, _BOARD, 1), "program must be a program"),
        (lambda: pr.run_program(_PROGRAM, None, 1), "a board must have exactly 9 squares"),
        (lambda: pr.run_program(_PROGRAM, _BOARD, 1, path="x"), "path must be a list"),
        (lambda: pr.program_move_table("PLAY-AT(pos11)"), "program must be a program"),
        (lambda: pr.program_policy(None, 1), "program must be a program"),
        (lambda: pr.program_policy(np.zeros(5), 1), "move table of shape"),
        (lambda: pr.prune_program(_PROGRAM, filler=3), "filler must be a terminal"),
        (lambda: pr.ProgramPlayer(None), "program must be a program"),
        (lambda: pr.ProgramPlayer(_PROGRAM)(None), "a board must have exactly 9 squares"),
        (lambda: co.random_programs("rng", 3), "rng must be a numpy.random.Generator"),
        (lambda: co.vary(None, np.random.default_rng(0), co.PAPER_MOHAMMADI), "parents must be a list"),
        (lambda: co.vary([_PROGRAM], np.random.default_rng(0), None), "settings must be a MohammadiSettings"),
        (lambda: co.vary(["PLAY-AT(pos11)"], np.random.default_rng(0), co.PAPER_MOHAMMADI), "each parent"),
        (lambda: co.double_game(None, _PROGRAM), "a must be a program"),
        (lambda: co.double_game(_PROGRAM, _PROGRAM, "paper"), "settings must be a MohammadiSettings"),
        (lambda: co.MohammadiSettings.from_dict(None), "data must be a dict"),
        (lambda: co.programs_from_texts("PLAY-AT(pos11)"), "texts must be a list"),
        (lambda: co.play_games(None, [0], [0]), "tables must be an array of move tables"),
        (lambda: co.tournament(np.zeros((2, 19683), np.int8), np.zeros(2), None, co.PAPER_MOHAMMADI), "groups"),
        (lambda: co.sample_groups(None, 3, 2), "rng must be a numpy.random.Generator"),
        (lambda: se.evolve_series("config"), "settings must be a MohammadiSettings"),
        (lambda: se.evolve_series(seed="1", progress=False), "seed must be a whole number"),
        (lambda: se.evolve_series(progress=None), "progress must be"),
        (lambda: se.run_series("config"), "settings must be a MohammadiSettings"),
        (lambda: se.Coevolution(None), "settings must be a MohammadiSettings"),
        (lambda: se.save_series({}, "s.json"), "record must be a SeriesRecord"),
        (lambda: se.load_series(None), "path must be a file name"),
        (lambda: se.save_program(None, "p.json"), "program must be a program"),
        (lambda: se.save_program(_PROGRAM, 7), "path must be a file name"),
        (lambda: se.load_program(None), "path must be a file name"),
        (lambda: se.series_provenance(None), "record must be a SeriesRecord"),
        (lambda: se.series_games("config"), "settings must be a MohammadiSettings"),
        (lambda: se.SeriesRecord.from_dict(None), "not a series record"),
    ],
)
def test_public_functions_name_the_argument_of_the_wrong_type(call, message):
    with pytest.raises(ValueError, match=message):
        call()
