"""Chapter 18: the fast engine of Mohammadi's system gives the batched interpreter's tables and the same series."""

import numpy as np
import pytest
from deap import gp

from evolving_ttt.mohammadi import bitsets as bs
from evolving_ttt.mohammadi import coevolution as co
from evolving_ttt.mohammadi import programs as pr
from evolving_ttt.mohammadi import series as se


def tangled_program(rng: np.random.Generator, depth: int, squares: np.ndarray) -> gp.PrimitiveTree:
    """A random tree over few squares and mostly functions, so that values of different branches collide."""
    names = list(pr.FUNCTION_ARITIES)
    nodes = []

    def grow(level: int) -> None:
        if level == depth or rng.random() < 0.25:
            nodes.append(pr.PRIMITIVES.mapping[pr.TERMINAL_NAMES[rng.choice(squares)]])
            return
        name = names[rng.integers(len(names))]
        nodes.append(pr.PRIMITIVES.mapping[name])
        for _ in range(pr.FUNCTION_ARITIES[name]):
            grow(level + 1)

    grow(0)
    return gp.PrimitiveTree(nodes)


GROWING = co.MohammadiSettings(population=32, generations=100, runs=1, group_size=3, best_candidates=4,
                               random_candidates=4, seeds_kept=2)  # fmt: skip
"""A run long enough for its trees to grow to hundreds of nodes."""


def evolved_programs() -> list[gp.PrimitiveTree]:
    """The last population of a run long enough for its trees to grow to hundreds of nodes."""
    series = se.Coevolution(GROWING, seed=5)
    series.run()
    return series.population


@pytest.mark.slow
@pytest.mark.parametrize("taken", pr.TAKEN_READINGS)
def test_bitset_tables_equal_the_batched_interpreters(taken):
    rng = np.random.default_rng(18)
    programs = [tangled_program(rng, 12, rng.choice(9, size=size, replace=False)) for size in (2, 3) * 200]
    programs += co.random_programs(rng, 100, 20)
    texts = ("PLAY-AT(pos11)", "OR(MINE(pos00), YOURS(pos00))", "IF(PLAY-AT(pos00), PLAY-AT(pos01), PLAY-AT(pos02))",
             "PLAY-AT(OR(IF(OPEN(pos00), pos11, MINE(OPEN(pos11))), pos11))")  # OR: NIL met before a square it gives
    programs += [pr.parse_program(text) for text in texts]
    for program in programs:
        assert np.array_equal(bs.bitset_move_table(program, taken), pr.program_move_table(program, taken))


@pytest.mark.slow
def test_bitset_tables_equal_the_batched_interpreters_on_evolved_programs():
    programs = evolved_programs()
    assert max(len(program) for program in programs) > 300
    for taken in pr.TAKEN_READINGS:
        for program in programs:
            assert np.array_equal(bs.bitset_move_table(program, taken), pr.program_move_table(program, taken))


def test_a_programs_shape_is_its_ends_height_and_playat_count():
    rng = np.random.default_rng(3)
    programs = co.random_programs(rng, 60, 20) + [tangled_program(rng, 12, np.arange(9)) for _ in range(60)]
    for program in programs:
        shape = bs.program_shape(program)
        assert [bs.NODE_NAMES[code] for code in shape.codes] == [node.name for node in program]
        assert shape.ends == pr.subtree_ends(program)
        assert shape.height == pr.program_height(program)
        assert shape.playats == pr.playat_count(program)


def test_nodes_equal_to_the_books_but_not_the_same_objects_are_read_by_name():
    program = pr.parse_program("IF(MINE(pos00), PLAY-AT(pos11), OR(pos22, pos01))")
    copies = gp.PrimitiveTree([gp.Terminal(node.value, True, object) if not node.arity else
                               gp.Primitive(node.name, [object] * node.arity, object) for node in program])  # fmt: skip
    assert [node.name for node in copies] == [node.name for node in program]
    assert np.array_equal(bs.program_codes(copies), bs.program_codes(program))
    assert np.array_equal(bs.bitset_move_table(copies), pr.program_move_table(program))


def invalid_programs() -> list:
    terminal, play_at = pr.PRIMITIVES.mapping["pos00"], pr.PRIMITIVES.mapping["PLAY-AT"]
    deep = gp.PrimitiveTree([play_at] * (pr.PROGRAM_HEIGHT_LIMIT + 1) + [terminal])
    return [
        "PLAY-AT(pos11)", gp.PrimitiveTree([]), gp.PrimitiveTree([play_at]),
        gp.PrimitiveTree([terminal, terminal]), deep,
        gp.PrimitiveTree([pr.PRIMITIVES.mapping["AND"], terminal, gp.Terminal(3, True, object)]),
    ]  # fmt: skip


@pytest.mark.parametrize("program", invalid_programs())
def test_the_fast_engine_refuses_what_check_program_refuses_with_its_message(program):
    with pytest.raises(ValueError) as expected:
        pr.check_program(program)
    for make in (bs.program_shape, bs.bitset_move_table, lambda p: bs.BitsetTables().of([p])):
        with pytest.raises(ValueError) as raised:
            make(program)
        assert str(raised.value) == str(expected.value)


def test_a_remembered_program_is_checked_again_once_changed():
    program = pr.parse_program("AND(OPEN(pos01), IF(pos00, pos11, PLAY-AT(pos22)))")
    bs.program_shape(program)  # remembered as checked, height 3
    assert pr.check_program(program) is program
    with pytest.raises(ValueError, match="deeper than 2 levels"):
        pr.check_program(program, limit=2)
    del program[-1]  # no longer a whole tree
    with pytest.raises(ValueError, match="incomplete"):
        pr.check_program(program)


def test_the_bitset_cache_equals_the_table_cache_and_counts_playats():
    rng = np.random.default_rng(4)
    programs = co.random_programs(rng, 20, 20)
    programs += [gp.PrimitiveTree(list(programs[3])), programs[3], programs[0]]  # a copy and repeats
    bitsets, batched = bs.BitsetTables(), co.TableCache()
    for taken in pr.TAKEN_READINGS:
        bitsets, batched = bs.BitsetTables(), co.TableCache()
        for chosen in (programs, programs[::-1], programs[5:]):
            assert np.array_equal(bitsets.of(chosen, taken), batched.of(chosen, taken))
            assert bitsets.playats.tolist() == [pr.playat_count(p) for p in chosen]
    assert len(bitsets.tables) == len({pr.program_to_text(p) for p in programs[5:]})


def series_configs() -> list[co.MohammadiSettings]:
    small = dict(population=16, generations=4, runs=2, group_size=3, best_candidates=4, random_candidates=2,
                 seeds_kept=2)  # fmt: skip
    return [
        co.MohammadiSettings(**small), co.MohammadiSettings(**small, taken="nil", playat_counted="any"),
        co.MohammadiSettings(**small, judge="none", bonus_role="tie_break", crossover_root=True),
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("settings", series_configs())
def test_a_series_is_the_same_with_either_engine(settings):
    records = [se.evolve_series(settings, seed=7, progress=False, engine=engine).as_dict() for engine in bs.ENGINES]
    assert records[0] == records[1]


@pytest.mark.slow
def test_a_long_run_with_grown_trees_is_the_same_with_either_engine():
    records = [se.evolve_series(GROWING, seed=5, progress=False, engine=engine).as_dict() for engine in bs.ENGINES]
    assert max(records[0]["statistics"]["mean_size"]) > 300  # the trees grew
    assert records[0] == records[1]


@pytest.mark.parametrize("engine", ["fast", None, 1])
def test_an_unknown_engine_is_refused(engine):
    with pytest.raises(ValueError, match="engine must be one of"):
        se.Coevolution(series_configs()[0], seed=1, engine=engine)


def test_known_playat_counts_are_used_and_must_match_the_programs():
    programs = co.random_programs(np.random.default_rng(6), 5, 10)
    counts = np.array([pr.playat_count(p) for p in programs])
    assert co.playat_bonus_counts(programs, co.PAPER_MOHAMMADI, counts).tolist() == counts.tolist()
    with pytest.raises(ValueError, match="one PLAY-AT count per program"):
        co.playat_bonus_counts(programs, co.PAPER_MOHAMMADI, counts[:3])
