"""Mohammadi et al. (2013): the programs, their text form and the lazy interpreter (chapter 18).

A player is a tree over the nine board positions ``pos00`` ... ``pos22`` (the terminals) and the seven
functions AND, OR, IF, MINE, YOURS, OPEN and PLAY-AT. The trees are DEAP ``PrimitiveTree`` objects built
on :data:`PRIMITIVES`, so DEAP's generators and variation operators work on them directly. DEAP's own
``compile`` would evaluate every argument before each call (and so fire PLAY-AT in both branches of an
IF): this module interprets the trees itself, lazily, with the paper's NIL semantics.

What the paper leaves open, and what this module does (the chapter explains each choice):

* NIL is Python's ``None`` in the readable interpreter and ``-1`` in the batched one.
* AND, OR and IF evaluate their arguments left to right and only as far as they need (as in Lisp):
  AND skips its second argument when the first is NIL, OR skips its second when the first is a position,
  IF evaluates exactly one of its two branches.
* PLAY-AT on an empty square places the mark and ends the turn at once (nothing else in the tree runs).
  On an occupied square, or with a NIL argument, it places nothing and returns its argument, and the walk
  goes on (the paper: "it returns the position otherwise"). The other reading, ``taken="nil"``, makes
  PLAY-AT on an occupied square return NIL instead; every interpreter here takes that argument.
* A walk that ends without placing a mark is *no move*. The game stays legal: the lowest empty square is
  played on the program's behalf (:func:`fallback_move`), and the program earns no point for that move.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import numpy as np
from deap import gp

from evolving_ttt.game import EMPTY, N_BOARDS, O, X, board_tables, check_mark, legal_moves, validate_board

# --- The primitive set ---------------------------------------------------------------------------------------

TERMINAL_NAMES = tuple(f"pos{row}{column}" for row in range(3) for column in range(3))
"""The nine terminals in square order: ``pos<row><column>`` is square ``3 * row + column`` (chapter 18)."""

TERMINAL_SQUARES = {name: square for square, name in enumerate(TERMINAL_NAMES)}
"""The square (0 to 8) each terminal names (chapter 18)."""

TAKEN_READINGS = ("square", "nil")
"""What PLAY-AT returns on an occupied square: the square (the book's reading) or NIL (the other) (chapter 18)."""


def check_taken(taken: str) -> str:
    """Raise ``ValueError`` unless ``taken`` is one of :data:`TAKEN_READINGS` (chapter 18)."""
    if taken not in TAKEN_READINGS:
        raise ValueError(f"taken must be one of {TAKEN_READINGS}; got {taken!r}")
    return taken


FUNCTION_ARITIES = {"AND": 2, "OR": 2, "IF": 3, "MINE": 1, "YOURS": 1, "OPEN": 1, "PLAY-AT": 1}
"""The seven functions and their numbers of arguments (chapter 18)."""


def _never_compiled(*_arguments):  # DEAP wants a callable per primitive; the book never calls them
    raise RuntimeError("Mohammadi programs are interpreted by run_program, not compiled by DEAP")


def make_primitive_set() -> gp.PrimitiveSet:
    """A DEAP primitive set with the paper's seven functions and nine position terminals (chapter 18).

    Every node returns "a position or NIL", a single type, so an untyped ``gp.PrimitiveSet`` fits. The
    primitives' callables raise if DEAP ever compiles a tree: the book interprets trees lazily instead.
    """
    primitives = gp.PrimitiveSet("MOHAMMADI", 0)
    for name, arity in FUNCTION_ARITIES.items():
        primitives.addPrimitive(_never_compiled, arity, name=name)
    for square, name in enumerate(TERMINAL_NAMES):
        primitives.addTerminal(square, name=name)
    return primitives


PRIMITIVES = make_primitive_set()
"""The primitive set every program of the book is built on (chapter 18)."""


# --- Text form: printing and parsing ------------------------------------------------------------------------


PROGRAM_HEIGHT_LIMIT = 100
"""The tallest program the book reads, prints or plays: height (depth of the deepest node) at most 100 (chapter 18).

Five times the paper's depth limit of 20 (:class:`~evolving_ttt.mohammadi.coevolution.MohammadiSettings` refuses a
``depth_limit`` above it). :func:`parse_program` refuses a deeper text with a ``ValueError``, and the interpreters
refuse a deeper tree, so that no program, however deeply nested its file, can exhaust Python's stack.
"""


def check_program(program: object, name: str = "program", limit: int | None = PROGRAM_HEIGHT_LIMIT) -> gp.PrimitiveTree:
    """Raise ``ValueError`` naming ``name`` unless ``program`` is one whole tree of :data:`PRIMITIVES` (chapter 18).

    A DEAP ``PrimitiveTree`` whose nodes are the book's functions and terminals with their arities, in prefix
    order, forming exactly one tree, of height at most ``limit`` (:data:`PROGRAM_HEIGHT_LIMIT`; ``None``: any).
    Checked in one pass without recursion; a program checked before, here or by the fast engine
    (:func:`remember_checked`), is only compared with the copy of its nodes kept then. Returns the program.
    """
    if not isinstance(program, gp.PrimitiveTree):
        raise ValueError(f"{name} must be a program (a deap.gp.PrimitiveTree; parse_program makes one from text); "
                         f"got {type(program).__name__} {program!r:.60}")  # fmt: skip
    known = _CHECKED.get(id(program))
    if known is not None and known[0] == program:
        if limit is not None and known[1] > limit:
            raise ValueError(f"{name} is deeper than {limit} levels (the book's limit, PROGRAM_HEIGHT_LIMIT)")
        return program
    if not len(program):
        raise ValueError(f"{name} is an empty tree; a program has at least one node")
    open_slots, height = [0], 0  # the depths of the argument slots still to fill
    for position, node in enumerate(program):
        if not open_slots:
            raise ValueError(f"{name} holds nodes after its complete tree (node {position}, "
                             f"{getattr(node, 'name', node)!r:.40})")  # fmt: skip
        depth = open_slots.pop()
        node_name = getattr(node, "name", None)
        known = isinstance(node_name, str) and (node_name in FUNCTION_ARITIES or node_name in TERMINAL_SQUARES)
        arity = FUNCTION_ARITIES.get(node_name, 0) if known else -1
        if not known or getattr(node, "arity", None) != arity:
            raise ValueError(f"{name}: node {position} ({node_name!r:.40}) is not one of the book's functions or "
                             "terminals")  # fmt: skip
        height = max(height, depth)
        if limit is not None and height > limit:
            raise ValueError(f"{name} is deeper than {limit} levels (the book's limit, PROGRAM_HEIGHT_LIMIT)")
        open_slots.extend([depth + 1] * arity)
    if open_slots:
        raise ValueError(f"{name} is incomplete: its last function lacks {len(open_slots)} argument(s)")
    remember_checked(program, height)  # the next check of the same nodes (every move of a game, say) is a comparison
    return program


_CHECKED: dict[int, tuple[list, int]] = {}
"""Programs known to be whole trees, by ``id``: a copy of their nodes when they were checked, and their height."""

CHECKED_KEPT = 1024
"""How many checked programs :func:`remember_checked` keeps (the latest; a population is 128)."""


def remember_checked(program: gp.PrimitiveTree, height: int) -> None:
    """Note that ``program``, as its nodes are now, is one whole tree of height ``height``.

    :func:`check_program` calls it after a walk, and the fast engine (:mod:`evolving_ttt.mohammadi.bitsets`), which
    checks a program on its own way to its move table, after its own: :func:`check_program` then compares the
    program with the copy of its nodes kept here (a comparison in C, most nodes being the very same objects)
    instead of walking it again. A program changed since, or another object that took its ``id``, differs from the
    copy (or has the same nodes, so the same answer).
    """
    _CHECKED[id(program)] = (list(program), height)
    if len(_CHECKED) > CHECKED_KEPT:
        del _CHECKED[next(iter(_CHECKED))]


def program_to_text(program: gp.PrimitiveTree) -> str:
    """The program on one line, such as ``PLAY-AT(OR(OPEN(pos11), pos00))``; :func:`parse_program` reads it back.

    The same text as DEAP's ``str(program)``, written in one pass with an explicit stack (no recursion, and linear
    time however deep the tree). Introduced in chapter 18.
    """
    check_program(program, limit=None)
    pieces: list[str] = []
    open_functions: list[list[int]] = []  # for each function still open: [its arity, arguments begun]
    for node in program:
        if open_functions:
            if open_functions[-1][1]:
                pieces.append(", ")
            open_functions[-1][1] += 1
        if node.arity:
            pieces.append(f"{node.name}(")
            open_functions.append([node.arity, 0])
            continue
        pieces.append(node.name)
        while open_functions and open_functions[-1][1] == open_functions[-1][0]:  # its last argument is written
            pieces.append(")")
            open_functions.pop()
    return "".join(pieces)


_TOKEN = re.compile(r"\s*(?:([A-Za-z][A-Za-z0-9_-]*)|(\()|(\))|(,)|(\S))")


_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_-]*|\S")
"""The tokens of a program's text for :func:`_read_program`: the names, and every other character but white space."""


def _read_program(text: str) -> list | None:
    """The nodes of the program ``text``, or None if it is not one (then :func:`_explain_program` says why).

    The same grammar as :func:`_explain_program`, read without keeping the tokens' places: the series files hold
    thousands of programs of hundreds of nodes each, read back whenever a run is loaded.
    """
    tokens = _WORDS.findall(text)
    count, mapping, nodes = len(tokens), PRIMITIVES.mapping, []
    left: list[int] = []  # for each function still open, its arguments still to come after the current one
    cursor = 0
    while cursor < count:
        name = tokens[cursor]
        cursor += 1
        arity = FUNCTION_ARITIES.get(name)
        if arity is not None:
            if len(left) >= PROGRAM_HEIGHT_LIMIT or cursor >= count or tokens[cursor] != "(":
                return None
            nodes.append(mapping[name])
            left.append(arity - 1)
            cursor += 1
            continue
        if name not in TERMINAL_SQUARES:
            return None
        nodes.append(mapping[name])
        while left:  # a whole argument was read: the next one, or the end of the function
            if cursor >= count:
                return None
            if left[-1]:
                if tokens[cursor] != ",":
                    return None
                left[-1] -= 1
                cursor += 1
                break
            if tokens[cursor] != ")":
                return None
            left.pop()
            cursor += 1
        if not left:
            return nodes if cursor == count else None
    return None


def parse_program(text: str) -> gp.PrimitiveTree:
    """Read a program written by :func:`program_to_text` (chapter 18).

    Read in one pass with an explicit stack of the functions still open, so that no text, however deeply
    nested, can exhaust Python's stack; a program taller than :data:`PROGRAM_HEIGHT_LIMIT` is refused.

    Raises
    ------
    ValueError
        Saying at which character the text stops being a program, and what was expected there.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a program's text (a str such as 'PLAY-AT(pos11)'); got {type(text).__name__}")
    nodes = _read_program(text)
    if nodes is None:
        nodes = _explain_program(text)  # raises, saying where the text stops being a program
    return gp.PrimitiveTree(nodes)


def _explain_program(text: str) -> list:
    """:func:`parse_program` token by token, keeping each token's place for the error it raises; the nodes, if
    ``text`` is a program after all."""
    tokens = []  # (kind, value, position)
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:  # only trailing white space is left
            break
        name, opening, closing, comma, other = match.groups()
        start = match.start(match.lastindex)
        if other is not None:
            raise ValueError(f"program text: unexpected character {other!r} at character {start}")
        kind = "name" if name is not None else ("(" if opening else (")" if closing else ","))
        tokens.append((kind, name, start))
        position = match.end()
    nodes = []
    cursor = 0

    def where() -> str:
        return f"character {tokens[cursor][2]}" if cursor < len(tokens) else "the end of the text"

    def found() -> str:
        return repr(tokens[cursor][1] or tokens[cursor][0]) if cursor < len(tokens) else "nothing"

    def expect(kind: str, what: str) -> None:
        nonlocal cursor
        if cursor >= len(tokens) or tokens[cursor][0] != kind:
            raise ValueError(f"program text: expected {what} at {where()}, found {found()}")
        cursor += 1

    calls: list[list] = []  # the functions still open: [name, arguments begun]
    while True:
        if cursor >= len(tokens) or tokens[cursor][0] != "name":
            raise ValueError(f"program text: expected a function or a terminal at {where()}, found {found()}")
        name, at = tokens[cursor][1], tokens[cursor][2]
        if name in TERMINAL_SQUARES:
            nodes.append(PRIMITIVES.mapping[name])
            cursor += 1
        elif name in FUNCTION_ARITIES:
            if len(calls) >= PROGRAM_HEIGHT_LIMIT:
                raise ValueError(f"program text: the program is deeper than {PROGRAM_HEIGHT_LIMIT} levels at "
                                 f"character {at} (the book's limit, PROGRAM_HEIGHT_LIMIT)")  # fmt: skip
            nodes.append(PRIMITIVES.mapping[name])
            cursor += 1
            expect("(", f"'(' after {name}")
            calls.append([name, 1])
            continue  # its first argument
        else:
            known = ", ".join([*FUNCTION_ARITIES, "pos00 ... pos22"])
            raise ValueError(f"program text: unknown name {name!r} at character {at}; expected one of {known}")
        while calls:  # a whole argument was read: the next argument, or the end of the function
            function, begun = calls[-1]
            arity = FUNCTION_ARITIES[function]
            if begun < arity:
                expect(",", f"',' before argument {begun + 1} of {function} (it takes {arity})")
                calls[-1][1] += 1
                break
            expect(")", f"')' closing {function} (it takes {arity} argument{'s' if arity > 1 else ''})")
            calls.pop()
        if not calls:
            break
    if cursor != len(tokens):
        raise ValueError(f"program text: unexpected {tokens[cursor][1] or tokens[cursor][0]!r} after the "
                         f"complete program, at {where()}")  # fmt: skip
    return nodes


def program_lines(program: gp.PrimitiveTree, indent: str = "  ") -> str:
    """The program as an indented tree, one node per line, children below their function (chapter 18).

    The indentation grows with the depth, so the program must be at most :data:`PROGRAM_HEIGHT_LIMIT` deep.
    """
    check_program(program)
    lines = []
    depths = [0]
    for node in program:
        depth = depths.pop()
        lines.append(indent * depth + node.name)
        depths.extend([depth + 1] * node.arity)
    return "\n".join(lines)


def program_height(program: gp.PrimitiveTree) -> int:
    """The depth of the deepest node (the root has depth 0): DEAP's ``PrimitiveTree.height``, twice as fast.

    The depth limit checks every child of every generation, so this is on the hot path (chapter 18): only the
    type is checked here (:func:`check_program` checks a whole tree).
    """
    if not isinstance(program, gp.PrimitiveTree):
        raise ValueError(f"program must be a deap.gp.PrimitiveTree; got {type(program).__name__}")
    depths, best = [0], 0
    pop, extend = depths.pop, depths.extend
    for node in program:
        depth = pop()
        if depth > best:
            best = depth
        if node.arity:
            extend([depth + 1] * node.arity)
    return best


def playat_count(program: gp.PrimitiveTree) -> int:
    """How many PLAY-AT nodes the program holds (chapter 18)."""
    if not isinstance(program, gp.PrimitiveTree):
        raise ValueError(f"program must be a deap.gp.PrimitiveTree; got {type(program).__name__}")
    return sum(1 for node in program if node.name == "PLAY-AT")


# --- The readable interpreter: one board, lazily -------------------------------------------------------------


def subtree_ends(program: Sequence) -> list[int]:
    """``ends[i]`` is the index just past the subtree rooted at node ``i`` of the prefix list (chapter 18).

    One pass from the right: a leaf ends at ``i + 1``; a function's subtree ends where its last child's does.
    """
    ends = [0] * len(program)
    for i in range(len(program) - 1, -1, -1):
        end = i + 1
        for _ in range(program[i].arity):
            end = ends[end]
        ends[i] = end
    return ends


class _Played(Exception):
    """Raised by PLAY-AT when it places a mark: the walk of the tree stops there."""

    def __init__(self, square: int) -> None:
        self.square = square


def run_program(
    program: gp.PrimitiveTree, board: Sequence[int] | np.ndarray, mark: int, taken: str = "square",
    path: list[int] | None = None,
) -> int | None:
    """Walk the tree on ``board`` for the player ``mark``; the square played, or None for no move (chapter 18).

    Depth first, left to right, and lazily: a node evaluates an argument only when the paper's definition
    needs its value. The first PLAY-AT that finds an empty square ends the walk. On an occupied square
    PLAY-AT returns the square (``taken="square"``) or NIL (``taken="nil"``). If ``path`` is a list, it
    ends holding the positions of the nodes from the root to the PLAY-AT that moved (chapter 26 shows it).
    The program must pass :func:`check_program` (at most :data:`PROGRAM_HEIGHT_LIMIT` deep).
    """
    check_program(program)
    if path is not None and not isinstance(path, list):
        raise ValueError(f"path must be a list (or None); got {type(path).__name__}")
    return _run_program(program, validate_board(board), check_mark(mark), check_taken(taken), path)


def _run_program(program: gp.PrimitiveTree, board: np.ndarray, mark: int, taken: str, path: list[int] | None):
    """:func:`run_program` on checked arguments (the walk recurses, at most twice per level of the tree)."""
    ends = subtree_ends(program)
    stack = path if path is not None else []

    def value(i: int) -> int | None:  # a square, or None for NIL; the stack holds the nodes being evaluated
        stack.append(i)
        result = evaluate(i)
        stack.pop()
        return result

    def evaluate(i: int) -> int | None:
        name = program[i].name
        if name in TERMINAL_SQUARES:
            return TERMINAL_SQUARES[name]
        first = i + 1
        if name == "IF":  # the condition, then exactly one branch
            second = ends[first]
            third = ends[second]
            return value(second) if value(first) is not None else value(third)
        if name == "AND":  # the second argument only if the first is not NIL
            return value(ends[first]) if value(first) is not None else None
        if name == "OR":  # the first non-NIL argument
            left = value(first)
            return left if left is not None else value(ends[first])
        square = value(first)
        if square is None:  # MINE, YOURS, OPEN and PLAY-AT all pass NIL on
            return None
        if name == "MINE":
            return square if board[square] == mark else None
        if name == "YOURS":
            return square if board[square] == -mark else None
        if name == "OPEN":
            return square if board[square] == EMPTY else None
        if board[square] == EMPTY:  # PLAY-AT on an empty square: the move, and the end of the turn
            raise _Played(square)
        return square if taken == "square" else None  # an occupied square: nothing placed

    try:
        value(0)
    except _Played as played:
        return played.square
    return None


def program_path(
    program: gp.PrimitiveTree, board: Sequence[int] | np.ndarray, mark: int, taken: str = "square"
) -> str:
    """The path through ``program`` that reached the PLAY-AT that moved on ``board``, in words (chapter 26).

    For example ``IF > OR > PLAY-AT pos11 (square 4)``; a program that makes no move says so.
    """
    path: list[int] = []
    square = run_program(program, board, mark, taken, path)
    if square is None:
        return "no PLAY-AT reached an empty square: the lowest empty square is played for it"
    names = [program[i].name for i in path]
    argument = program[path[-1] + 1].name if program[path[-1] + 1].name in TERMINAL_SQUARES else "..."
    return " > ".join(names[:-1] + [f"{names[-1]} {argument} (square {square})"])


def fallback_move(board: Sequence[int] | np.ndarray) -> int:
    """The square played for a program that makes no move: the lowest empty square (chapter 18)."""
    moves = legal_moves(board)
    if not moves:
        raise ValueError("the game is over on this board; there is no move to make")
    return moves[0]


def program_move(program: gp.PrimitiveTree, board: Sequence[int] | np.ndarray, mark: int, taken: str = "square") -> int:
    """The square ``program`` plays for ``mark`` on ``board``: its own move, or the fallback square (chapter 18).

    A move function ``(board, mark) -> square`` for tools that take one (the arena, the play widget).
    """
    move = run_program(program, board, mark, taken)
    return move if move is not None else fallback_move(board)


# --- The batched interpreter: every board at once --------------------------------------------------------------

NIL = -1
"""NIL in the batched interpreter (chapter 18)."""

MOVED = -2
"""The batched interpreter's mark for a board on which a PLAY-AT has already placed the mark (chapter 18)."""

_UNARY_TARGET = {"MINE": 1, "YOURS": -1, "OPEN": 0}  # the value the square must hold, seen from the mover


def program_moves(
    program: gp.PrimitiveTree,
    boards: np.ndarray,
    marks: np.ndarray,
    visited: np.ndarray | None = None,
    taken: str = "square",
) -> np.ndarray:
    """The readable interpreter run on many boards at once; ``-1`` where the program makes no move (chapter 18).

    ``boards`` has shape ``(n, 9)`` and ``marks`` shape ``(n,)`` (the side the program plays on each
    board); the program must pass :func:`check_program`. The trick: every node is evaluated on exactly the
    rows where the readable interpreter would evaluate it. A node receives the row numbers that reach it and
    returns one value per row: a square, :data:`NIL`, or :data:`MOVED` for rows on which a PLAY-AT below it
    has already played (those rows take no further part, as the readable walk stops there). IF sends each
    row down one branch only. If ``visited`` (a boolean array, one entry per node) is given, the nodes
    evaluated on at least one board are set to True in it. ``taken`` is the reading of PLAY-AT on an occupied square.
    """
    check_program(program)
    occupied = NIL if check_taken(taken) == "nil" else None
    boards = np.asarray(boards)
    own = (boards * np.asarray(marks)[:, None]).astype(np.int8)  # +1 the mover's mark, -1 the opponent's
    moves = np.full(len(boards), NIL, dtype=np.int8)
    ends = subtree_ends(program)

    def value(i: int, rows: np.ndarray) -> np.ndarray:
        node = program[i]
        name = node.name
        if name in TERMINAL_SQUARES:
            if visited is not None and len(rows):
                visited[i] = True
            return np.full(len(rows), TERMINAL_SQUARES[name], dtype=np.int8)
        result = np.full(len(rows), NIL, dtype=np.int8)
        if len(rows) == 0:
            return result
        if visited is not None:
            visited[i] = True
            visited[i + 1] |= program[i + 1].name in TERMINAL_SQUARES  # a constant first argument is read
        first = i + 1
        child = program[first].name
        if child in TERMINAL_SQUARES:  # a constant first argument: the same branch for every row, no masks
            square = TERMINAL_SQUARES[child]
            if name == "OR":
                return np.full(len(rows), square, dtype=np.int8)
            if name == "AND":
                return value(ends[first], rows)
            if name == "IF":
                return value(ends[first], rows)
            held = own[rows, square]
            if name == "PLAY-AT":
                placed = held == 0
                moves[rows[placed]] = square
                return np.where(placed, MOVED, square if occupied is None else occupied).astype(np.int8)
            return np.where(held == _UNARY_TARGET[name], square, NIL).astype(np.int8)
        if name in ("IF", "AND", "OR"):
            condition = value(first, rows)
            result[condition == MOVED] = MOVED
            if name == "OR":
                result = np.where(condition >= 0, condition, result)
                later = condition == NIL
                result[later] = value(ends[first], rows[later])
            elif name == "AND":
                later = condition >= 0
                result[later] = value(ends[first], rows[later])
            else:
                second = ends[first]
                yes, no = condition >= 0, condition == NIL
                result[yes] = value(second, rows[yes])
                result[no] = value(ends[second], rows[no])
            return result
        square = value(first, rows)
        valid = square >= 0
        held = np.full(len(rows), 9, dtype=np.int8)  # 9: no square
        held[valid] = own[rows[valid], square[valid]]
        result[square == MOVED] = MOVED
        if name == "PLAY-AT":
            placed = valid & (held == 0)
            moves[rows[placed]] = square[placed]
            result[placed] = MOVED
            keep = valid & ~placed  # occupied: the position (or NIL) is returned
            result[keep] = square[keep] if occupied is None else occupied
        else:
            hit = valid & (held == _UNARY_TARGET[name])
            result[hit] = square[hit]
        return result

    value(0, np.arange(len(boards)))
    return moves


@cache
def playable_boards() -> tuple[np.ndarray, np.ndarray]:
    """Indices of every legal board on which the game goes on (4,520), and the side to move there (chapter 18)."""
    tables = board_tables()
    index = np.flatnonzero(tables.legal & ~tables.over)
    return index, tables.to_move[index]


def prune_program(program: gp.PrimitiveTree, filler: str = "pos00", taken: str = "square") -> gp.PrimitiveTree:
    """The same player with every subtree that no board ever evaluates replaced by ``filler`` (chapter 19).

    Over all 4,520 boards where a game goes on, the batched interpreter notes which nodes it evaluates; a
    subtree it never enters cannot change any move, so a single terminal can stand in for it. The move
    table of the result equals the program's.
    """
    if filler not in TERMINAL_NAMES:
        raise ValueError(f"filler must be a terminal, one of {TERMINAL_NAMES}; got {filler!r:.40}")
    index, to_move = playable_boards()
    visited = np.zeros(len(program), dtype=bool)
    program_moves(program, board_tables().boards[index], to_move, visited, taken)
    ends = subtree_ends(program)
    nodes, i = [], 0
    while i < len(program):
        if visited[i]:
            nodes.append(program[i])
            i += 1
        else:
            nodes.append(PRIMITIVES.mapping[filler])
            i = ends[i]
    return gp.PrimitiveTree(nodes)


def program_move_table(program: gp.PrimitiveTree, taken: str = "square") -> np.ndarray:
    """The program's move on every board, as an int8 array over the 19,683 base-3 indices (chapter 18).

    On each legal unfinished board the program plays the side to move; ``-1`` where it makes no move,
    and on finished or illegal boards. Fallback moves are *not* filled in (see :func:`with_fallback`).
    """
    index, to_move = playable_boards()
    table = np.full(N_BOARDS, NIL, dtype=np.int8)
    table[index] = program_moves(program, board_tables().boards[index], to_move, taken=taken)
    return table


def with_fallback(table: np.ndarray) -> np.ndarray:
    """A move table with the lowest empty square filled in wherever the program makes no move (chapter 18)."""
    index, _ = playable_boards()
    filled = np.array(table, dtype=np.int8, copy=True)
    missing = index[filled[index] == NIL]
    filled[missing] = board_tables().empty_list[missing, 0]
    return filled


def program_policy(program: gp.PrimitiveTree | np.ndarray, mark: int, taken: str = "square") -> np.ndarray:
    """The program as a policy table of shape (19683, 9) for the side ``mark`` (chapter 18).

    Row ``i`` is one-hot on the square the program plays on board ``i`` (the fallback square where it
    makes no move); zero rows where ``mark`` is not to move or the game is over, as
    :func:`evolving_ttt.outcomes.policy_table` builds them. ``program`` may also be a move table.
    """
    check_mark(mark)
    if isinstance(program, np.ndarray) and program.shape != (N_BOARDS,):
        raise ValueError(f"program must be a program or its move table of shape ({N_BOARDS},); got {program.shape}")
    table = program if isinstance(program, np.ndarray) else program_move_table(program, taken)
    filled = with_fallback(table)
    index, to_move = playable_boards()
    rows = index[to_move == mark]
    policy = np.zeros((N_BOARDS, 9))
    policy[rows, filled[rows]] = 1.0
    return policy


class ProgramPlayer:
    """A program as a move function ``board -> square`` with its moves memoised per board (chapter 18).

    A program is deterministic, so its move on a board never changes: the tree is walked once per board
    and the answer kept. ``made_move(board)`` says whether the program itself moved there (False: the
    fallback square was played for it).
    """

    def __init__(self, program: gp.PrimitiveTree, taken: str = "square") -> None:
        self.program = check_program(program)
        self.taken = check_taken(taken)
        self._moves: dict[bytes, int | None] = {}

    def own_move(self, board: np.ndarray) -> int | None:
        """The program's own move on ``board`` for the side to move, or None (memoised)."""
        board = validate_board(board)
        key = board.tobytes()
        if key not in self._moves:
            mark = X if np.count_nonzero(board == X) == np.count_nonzero(board == O) else O
            self._moves[key] = _run_program(self.program, board, mark, self.taken, None)
        return self._moves[key]

    def made_move(self, board: np.ndarray) -> bool:
        """Whether the program itself places a mark on ``board``."""
        return self.own_move(board) is not None

    def __call__(self, board: np.ndarray) -> int:
        move = self.own_move(board)
        return move if move is not None else fallback_move(board)
