"""Mohammadi et al. (2013): the fast engine, move tables from sets of boards held as bits (chapter 18).

A co-evolution spends most of its time building the move tables of its new programs (the trees grow to over a
thousand nodes in 100 generations). The batched interpreter of chapter 18
(:func:`~evolving_ttt.mohammadi.programs.program_moves`) walks a tree once for all 4,520 boards where a game goes
on, and hands every node the numpy array of the row numbers that reach it; its cost is a dozen numpy calls per
node it visits, whatever the number of rows. This engine makes the same lazy walk, node for node, with two changes:

* a set of boards is one Python integer whose bit ``i`` stands for board ``i``, so a node's work is a few
  operations on 4,520-bit integers (the masks of the boards where a square holds the mover's mark, the
  opponent's, or nothing are computed once); a node's value is a dictionary from each value (a square, NIL, or
  MOVED) to the set of boards on which the node takes it;
* a program is first turned into one small integer code per node (:func:`program_codes`), and a compiled pass
  over the codes (:func:`program_shape`) finds where each subtree ends, checks that the codes form one whole
  tree, and measures its height, in place of a Python loop over every node. The program is then known to be
  valid, and :func:`~evolving_ttt.mohammadi.programs.check_program` remembers it (a variation step checks every
  parent again).

:class:`BitsetTables` is :class:`~evolving_ttt.mohammadi.coevolution.TableCache` for this engine. The tests assert
that :func:`bitset_move_table` equals :func:`~evolving_ttt.mohammadi.programs.program_move_table` on many random and
evolved programs under both readings of PLAY-AT, and that a series run with either engine gives the same record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import numba
import numpy as np
from deap import gp

from evolving_ttt.game import N_BOARDS, board_tables
from evolving_ttt.mohammadi.programs import (
    FUNCTION_ARITIES,
    NIL,
    PRIMITIVES,
    PROGRAM_HEIGHT_LIMIT,
    TERMINAL_NAMES,
    check_program,
    check_taken,
    playable_boards,
    remember_checked,
)
from evolving_ttt.numerics import JIT_OPTIONS

ENGINES = ("batched", "bitsets")
"""How a co-evolution builds its move tables (chapter 18): "batched", the batched interpreter
(:func:`~evolving_ttt.mohammadi.programs.program_move_table` behind
:class:`~evolving_ttt.mohammadi.coevolution.TableCache`), or "bitsets", this module. Both give the same tables,
hence the same runs, bit for bit; "bitsets" is the faster and the default."""


def check_engine(engine: object) -> str:
    """Raise ``ValueError`` unless ``engine`` is one of :data:`ENGINES`; return it."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r:.60}")
    return engine


# --- Programs as codes ---------------------------------------------------------------------------------------------

NODE_NAMES = (*TERMINAL_NAMES, *FUNCTION_ARITIES)
"""The node of each code: codes 0 to 8 are the terminals (the code is the square), 9 to 15 the functions."""

_CODE_OF_NAME = {name: code for code, name in enumerate(NODE_NAMES)}
_CODE_OF_NODE = {id(PRIMITIVES.mapping[name]): code for name, code in _CODE_OF_NAME.items()}
_ARITIES = np.array([FUNCTION_ARITIES.get(name, 0) for name in NODE_NAMES], dtype=np.int64)
AND, OR, IF, MINE, YOURS, OPEN, PLAY_AT = (_CODE_OF_NAME[name] for name in FUNCTION_ARITIES)


def program_codes(program: gp.PrimitiveTree) -> np.ndarray:
    """The code of each node of ``program`` (:data:`NODE_NAMES`), as an int8 array in prefix order.

    The nodes of :data:`~evolving_ttt.mohammadi.programs.PRIMITIVES` (all that DEAP's generators and the parser
    make) are looked up by identity, in one pass in C; any other node is checked by
    :func:`~evolving_ttt.mohammadi.programs.check_program` (``ValueError`` if it is not one of the book's) and
    looked up by name. Only the nodes are checked here: :func:`program_shape` checks the tree.
    """
    if not isinstance(program, gp.PrimitiveTree) or not len(program):
        check_program(program)  # raises with its message
    try:
        return np.fromiter(map(_CODE_OF_NODE.__getitem__, map(id, program)), dtype=np.int8, count=len(program))
    except KeyError:
        check_program(program, limit=None)
        return np.array([_CODE_OF_NAME[node.name] for node in program], dtype=np.int8)


@numba.njit(**JIT_OPTIONS)
def _tree_shape(codes: np.ndarray, arities: np.ndarray) -> tuple[np.ndarray, int]:
    """Where each subtree ends and the height, or a height of -1 if the codes are not exactly one tree."""
    n = len(codes)
    ends = np.zeros(n, dtype=np.int64)
    open_slots = 1
    for i in range(n):
        if open_slots == 0:
            return ends, -1
        open_slots += arities[codes[i]] - 1
    if open_slots != 0:
        return ends, -1
    for i in range(n - 1, -1, -1):
        end = i + 1
        for _ in range(arities[codes[i]]):
            end = ends[end]
        ends[i] = end
    depths = np.zeros(2 * n + 1, dtype=np.int64)  # the depths of the argument slots still to fill, as a stack
    top, height = 1, 0
    for i in range(n):
        top -= 1
        depth = depths[top]
        height = max(height, depth)
        for _ in range(arities[codes[i]]):
            depths[top] = depth + 1
            top += 1
    return ends, height


@dataclass(frozen=True)
class ProgramShape:
    """A checked program as the fast engine reads it.

    Attributes
    ----------
    codes : list of int
        The code of each node (:data:`NODE_NAMES`), in prefix order.
    ends : list of int
        ``ends[i]`` is the index just past the subtree rooted at node ``i``
        (:func:`~evolving_ttt.mohammadi.programs.subtree_ends`).
    height : int
        The depth of the deepest node (:func:`~evolving_ttt.mohammadi.programs.program_height`).
    playats : int
        How many PLAY-AT nodes the program holds (:func:`~evolving_ttt.mohammadi.programs.playat_count`).
    """

    codes: list[int]
    ends: list[int]
    height: int
    playats: int


def program_shape(program: gp.PrimitiveTree, codes: np.ndarray | None = None) -> ProgramShape:
    """The codes, subtree ends, height and PLAY-AT count of ``program``, which is checked on the way.

    ``codes``: the program's :func:`program_codes`, if already at hand. Raises ``ValueError`` where
    :func:`~evolving_ttt.mohammadi.programs.check_program` does, with its message: the program must be one whole
    tree of the book's nodes, at most :data:`~evolving_ttt.mohammadi.programs.PROGRAM_HEIGHT_LIMIT` deep. A valid
    program is remembered as checked.
    """
    codes = program_codes(program) if codes is None else codes
    ends, height = _tree_shape(codes, _ARITIES)
    if not 0 <= height <= PROGRAM_HEIGHT_LIMIT:
        check_program(program)  # raises with its message
        raise AssertionError("check_program accepted a program that is not one tree")  # pragma: no cover
    remember_checked(program, int(height))
    return ProgramShape(codes.tolist(), ends.tolist(), int(height), int(np.count_nonzero(codes == PLAY_AT)))


# --- Sets of boards as bits ------------------------------------------------------------------------------------------


def _to_bits(mask: np.ndarray) -> int:
    """The integer whose bit ``i`` is ``mask[i]``."""
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")


def _to_mask(bits: int, count: int) -> np.ndarray:
    """The boolean array of the first ``count`` bits of ``bits`` (the inverse of :func:`_to_bits`)."""
    packed = np.frombuffer(bits.to_bytes((count + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(packed, count=count, bitorder="little").astype(bool)


@cache
def square_bits() -> dict[int, tuple[int, ...]]:
    """For MINE, YOURS and OPEN, the set of playable boards (bits) on which each square holds what it asks for.

    Bit ``i`` stands for board ``i`` of :func:`~evolving_ttt.mohammadi.programs.playable_boards`: the mover's mark
    (MINE), the opponent's (YOURS), or nothing (OPEN, which PLAY-AT needs too).
    """
    index, to_move = playable_boards()
    own = board_tables().boards[index] * to_move[:, None]
    wanted = {MINE: 1, YOURS: -1, OPEN: 0}
    return {code: tuple(_to_bits(own[:, square] == value) for square in range(9)) for code, value in wanted.items()}


MOVED = -2
"""The value of a node on the boards where a PLAY-AT below it has placed the mark (as in the batched interpreter)."""


def bitset_moves(shape: ProgramShape, taken: str = "square") -> np.ndarray:
    """The program's move on every playable board, ``-1`` for no move: what ``program_moves`` returns on them.

    The walk of :func:`~evolving_ttt.mohammadi.programs.program_moves`, with sets of boards held as bits: a node
    is evaluated on the boards that reach it, children only where the readable walk would evaluate them, and a
    PLAY-AT on an empty square records the move and takes those boards out of the rest of the walk.
    """
    occupied_nil = check_taken(taken) == "nil"
    codes, ends = shape.codes, shape.ends
    targets = square_bits()
    empty = targets[OPEN]
    moves = [0] * 9

    def add(values: dict[int, int], value: int, bits: int) -> None:
        values[value] = values.get(value, 0) | bits

    def value(i: int, rows: int) -> dict[int, int]:  # rows is not empty
        code = codes[i]
        if code < 9:
            return {code: rows}
        first = i + 1
        argument = value(first, rows)
        result: dict[int, int] = {}
        if code <= IF:  # AND, OR, IF: the first argument decides which other argument each board evaluates
            chosen = 0
            for square, bits in argument.items():
                if square >= 0:
                    if code == OR:
                        add(result, square, bits)
                    else:
                        chosen |= bits
                elif square == MOVED:
                    add(result, MOVED, bits)
                elif code == OR:
                    for later, later_bits in value(ends[first], bits).items():
                        add(result, later, later_bits)
                elif code == AND:
                    add(result, NIL, bits)
                else:
                    for later, later_bits in value(ends[ends[first]], bits).items():
                        add(result, later, later_bits)
            if chosen:
                for later, later_bits in value(ends[first], chosen).items():
                    add(result, later, later_bits)
            return result
        held = empty if code == PLAY_AT else targets[code]
        for square, bits in argument.items():
            if square < 0:  # NIL and MOVED pass on
                add(result, square, bits)
                continue
            hit = bits & held[square]
            rest = bits ^ hit
            if code == PLAY_AT:
                if hit:
                    moves[square] |= hit
                    add(result, MOVED, hit)
                if rest:
                    add(result, NIL if occupied_nil else square, rest)
            else:
                if hit:
                    add(result, square, hit)
                if rest:
                    add(result, NIL, rest)
        return result

    count = len(playable_boards()[0])
    value(0, (1 << count) - 1)
    result = np.full(count, NIL, dtype=np.int8)
    for square, bits in enumerate(moves):
        if bits:
            result[_to_mask(bits, count)] = square
    return result


def bitset_move_table(program: gp.PrimitiveTree | ProgramShape, taken: str = "square") -> np.ndarray:
    """:func:`~evolving_ttt.mohammadi.programs.program_move_table` by the fast engine: the same int8 array."""
    shape = program if isinstance(program, ProgramShape) else program_shape(program)
    index, _ = playable_boards()
    table = np.full(N_BOARDS, NIL, dtype=np.int8)
    table[index] = bitset_moves(shape, taken)
    return table


@dataclass
class BitsetTables:
    """:class:`~evolving_ttt.mohammadi.coevolution.TableCache` for the fast engine (chapter 18).

    Keyed by the programs' codes; keeps each table with the program's PLAY-AT count, and only those of the latest
    call, so that copies and survivors are read once.
    """

    tables: dict[bytes, tuple[np.ndarray, ProgramShape]] = field(default_factory=dict)
    playats: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))

    def of(self, programs: Sequence[gp.PrimitiveTree], taken: str = "square") -> np.ndarray:
        """The move tables of ``programs`` under the ``taken`` reading, shape (len(programs), 19683).

        Afterwards :attr:`playats` holds the programs' PLAY-AT counts. One cache serves one reading.
        """
        check_taken(taken)
        codes = [program_codes(program) for program in programs]
        keys = [code.tobytes() for code in codes]
        fresh: dict[bytes, tuple[np.ndarray, ProgramShape]] = {}
        for key, code, program in zip(keys, codes, programs, strict=True):
            known = fresh.get(key) or self.tables.get(key)
            if known is None:
                shape = program_shape(program, code)
                known = (bitset_move_table(shape, taken), shape)
            else:  # the same nodes as a program checked before: this copy is valid too
                remember_checked(program, known[1].height)
            fresh[key] = known
        self.tables = fresh
        self.playats = np.array([fresh[key][1].playats for key in keys], dtype=int)
        return np.stack([fresh[key][0] for key in keys])
