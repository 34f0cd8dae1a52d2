"""Fogel (1993): the near-perfect rule-based opponent and the 32-game protocol (chapter 3).

The rule base is Fogel's opponent and the yardstick every system's players are measured against (chapter 24), so
it lives below the systems: Fogel's subpackage plays its networks against it, and the others measure with it.

Read first: :class:`OpponentRules` and :func:`rule_candidates`, the rule base as the paper states it,
then :func:`near_perfect_move` and :func:`play_game`, the readable one-move-at-a-time game. After them
comes the vectorized opponent: the same rules as lookup tables over the base-3 board index
(:func:`opponent_tables`), written independently so that the two check each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.game import (
    EMPTY,
    N_BOARDS,
    SYMBOLS,
    WIN_LINES,
    O,
    Player,
    X,
    board_tables,
    check_mark,
    check_probability,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    squares_to_list,
    validate_board,
    winner,
)

GAMES_PER_EVALUATION = 32
"""Each network plays four sets of eight games (chapter 3)."""

OPPONENT_MOVES_PER_GAME = 4
"""O moves at most four times in a game (plies 2, 4, 6 and 8) (chapter 3)."""


@dataclass(frozen=True)
class OpponentRules:
    """The settings of the rule-based opponent (chapter 3).

    Attributes
    ----------
    random_move_probability
        Chance of step (a), a move to a uniformly random empty square: 0.1 in the paper.
    rule_d_lines
        Step (d) moves into a line that holds one mark and two empty squares. ``"own"`` (the default,
        the paper's reading): the mark is an O, the opponent's own. ``"opponent"``: the mark is an X,
        as the textbook restatement and published student reimplementations read it.
    first_reply
        ``"cycle"`` (the default, the paper's protocol): in every set of eight games O's first reply
        visits each of the eight squares X left empty once, with no random move. ``"rules"``: O's first
        reply is chosen by steps (a)-(e) like every later move.
    """

    random_move_probability: float = 0.1
    rule_d_lines: str = "own"
    first_reply: str = "cycle"

    def __post_init__(self) -> None:
        check_probability(self.random_move_probability, "random_move_probability")
        if self.rule_d_lines not in ("own", "opponent"):
            raise ValueError(f"rule_d_lines must be 'own' or 'opponent'; got {self.rule_d_lines!r}")
        if self.first_reply not in ("cycle", "rules"):
            raise ValueError(f"first_reply must be 'cycle' or 'rules'; got {self.first_reply!r}")


PAPER_RULES = OpponentRules()
"""The opponent exactly as Fogel (1993) describes it (chapter 3)."""


def rule_candidates(board: Sequence[int] | np.ndarray, rules: OpponentRules = PAPER_RULES, mark: int = O) -> list[int]:
    """The squares steps (b)-(e) of the rule base allow O on ``board``, in increasing order (chapter 3).

    (b) squares that complete a line of O's; else (c) squares that block a line of two X's; else
    (d) the empty squares of lines holding one mark (an O, or an X with ``rule_d_lines="opponent"``)
    and two empty squares; else (e) every empty square. O picks uniformly among the candidates.
    With ``mark=X`` the same rules play X, with the roles of the marks swapped (chapter 26).

    Raises
    ------
    ValueError
        If the board is not legal or it is not ``mark``'s turn in a game still going on.
    """
    values = validate_board(board)
    if player_to_move(values) != check_mark(mark) or is_game_over(values):
        raise ValueError(
            f"the rule base plays {SYMBOLS[mark]} here: it needs a board where {SYMBOLS[mark]} is to move "
            "and the game is not over"
        )
    d_mark = mark if rules.rule_d_lines == "own" else -mark
    steps = [[], [], []]  # (b) win, (c) block, (d) develop a line
    for line in WIN_LINES:
        marks = list(values[line])
        gaps = [int(s) for s in line if values[s] == EMPTY]
        if marks.count(mark) == 2 and len(gaps) == 1:
            steps[0] += gaps
        if marks.count(-mark) == 2 and len(gaps) == 1:
            steps[1] += gaps
        if marks.count(d_mark) == 1 and len(gaps) == 2:
            steps[2] += gaps
    for squares in steps:
        if squares:
            return sorted(set(squares))
    return legal_moves(values)  # (e)


def split_uniform(u: np.ndarray | float, probability: float) -> tuple[np.ndarray, np.ndarray]:
    """Use one uniform number for a coin flip and a fresh uniform pick (chapter 3).

    Returns ``(heads, v)``: ``heads = u < probability`` and ``v``, the position of ``u`` inside the
    part of [0, 1) it fell in, rescaled to [0, 1). ``v`` is uniform and independent of ``heads``, so
    one random number per O move decides both whether O moves at random and where it moves.
    """
    u = np.asarray(u, dtype=float)
    heads = u < probability
    if probability in (0.0, 1.0):  # one side is empty: u itself is the fresh pick
        return heads, u
    return heads, np.where(heads, u / probability, (u - probability) / (1.0 - probability))


def uniform_index(u: np.ndarray | float, count: np.ndarray | int) -> np.ndarray:
    """``floor(u * count)`` for uniform ``u`` in [0, 1): a uniform choice among ``count`` items (chapter 3).

    Clipped to ``count - 1``, because rounding can make ``u * count`` equal ``count`` for ``u`` just
    below 1. Every random pick in the book goes through here, so the readable and the batched code
    choose alike.
    """
    count = np.asarray(count, dtype=np.int64)
    return np.minimum((np.asarray(u) * count).astype(np.int64), count - 1)


def pick_uniform(squares: np.ndarray, count: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Pick ``squares[..., floor(v * count)]``: a uniform choice among the first ``count`` entries (chapter 3)."""
    k = uniform_index(v, count)
    return np.take_along_axis(np.asarray(squares), k[..., None], axis=-1)[..., 0]


def near_perfect_move_given(
    board: Sequence[int] | np.ndarray, u: float, rules: OpponentRules = PAPER_RULES, mark: int = O
) -> int:
    """The rule base's move on ``board`` given its uniform random number ``u`` in [0, 1) (chapter 3).

    With probability ``rules.random_move_probability`` (``u`` below it) the move is a random empty
    square (step a); otherwise it is a random choice among :func:`rule_candidates`. ``mark=X`` lets the
    rule base play X (chapter 26).
    """
    explore, v = split_uniform(u, rules.random_move_probability)
    squares = legal_moves(board) if explore else rule_candidates(board, rules, mark)
    if not squares:
        raise ValueError("the game is over on this board; the rule base has no move to make")
    return int(pick_uniform(np.array(squares), np.array(len(squares)), v))


def near_perfect_move(
    board: Sequence[int] | np.ndarray, rng: np.random.Generator, rules: OpponentRules = PAPER_RULES, mark: int = O
) -> int:
    """The rule base's move on ``board``, drawing its one uniform number from ``rng`` (chapter 3)."""
    return near_perfect_move_given(board, rng.random(), rules, mark)


def first_reply_square(board: np.ndarray, game: int) -> int:
    """O's first reply in game ``game`` of the protocol under the paper's cycling rule (chapter 3).

    Game ``g`` answers with the ``(g mod 8)``-th empty square in increasing order, so each set of eight
    games tries each of the eight replies once.
    """
    return legal_moves(board)[game % 8]


def play_game(
    player: Player,
    opponent_uniforms: Sequence[float],
    rules: OpponentRules = PAPER_RULES,
    game: int = 0,
) -> tuple[int, list[int]]:
    """Play one game of ``player`` (X) against the rule base (O): the readable, one-move-at-a-time loop (chapter 3).

    Parameters
    ----------
    player
        X's policy: board -> square.
    opponent_uniforms
        Four uniform numbers in [0, 1), one for each O move (the first is unused when the first reply cycles).
    rules
        The opponent's settings.
    game
        Index of the game in the 32-game protocol (chooses the cycled first reply).

    Returns
    -------
    (result, moves)
        ``result`` is +1 if X wins, -1 if O wins, 0 for a draw; ``moves`` lists the squares played.
    """
    board = np.zeros(9, dtype=np.int8)
    moves: list[int] = []
    o_moves = 0
    while not is_game_over(board):
        if player_to_move(board) == X:
            square = player(board)
        elif o_moves == 0 and rules.first_reply == "cycle":
            square = first_reply_square(board, game)
            o_moves += 1
        else:
            square = near_perfect_move_given(board, opponent_uniforms[o_moves], rules)
            o_moves += 1
        board = play(board, square)
        moves.append(square)
    return winner(board), moves


def play_protocol(player: Player, uniforms: np.ndarray, rules: OpponentRules = PAPER_RULES) -> np.ndarray:
    """Results (+1, -1, 0) of the 32 games of one evaluation, with ``uniforms`` of shape (32, 4) (chapter 3)."""
    uniforms = np.asarray(uniforms)
    if uniforms.shape != (GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME):
        raise ValueError(f"uniforms must have shape (32, 4); got {uniforms.shape}")
    return np.array([play_game(player, uniforms[g], rules, g)[0] for g in range(GAMES_PER_EVALUATION)])


def random_player(rng: np.random.Generator) -> Player:
    """A player of X that moves to a uniformly random empty square (chapter 3)."""
    return lambda board: int(rng.choice(legal_moves(board)))


# --- The vectorized opponent ------------------------------------------------------------------------


@dataclass(frozen=True)
class OpponentTables:
    """The rule base as lookup tables over the base-3 board index (chapter 3).

    ``candidates[i, :n_candidates[i]]`` are the squares steps (b)-(e) allow on board ``i`` (in
    increasing order) wherever O is to move in an unfinished legal game; elsewhere ``n_candidates`` is 0.
    """

    candidates: np.ndarray
    n_candidates: np.ndarray
    choices: np.ndarray
    n_choices: np.ndarray


@cache
def candidate_masks(rule_d_lines: str = "own", mark: int = O) -> np.ndarray:
    """The squares steps (b)-(e) allow ``mark`` on every board at once, from line counts (chapters 3 and 10).

    ``masks[i, s]`` is True where ``s`` is a candidate on board ``i``, on every legal unfinished board where
    ``mark`` is to move; rows of other boards are all False. This is written independently of
    :func:`rule_candidates` (whole-table array operations instead of a loop over lines) so that the two can check
    each other. The array is shared between calls: do not write to it.
    """
    if rule_d_lines not in ("own", "opponent"):
        raise ValueError(f"rule_d_lines must be 'own' or 'opponent'; got {rule_d_lines!r}")
    mark = check_mark(mark)
    tables = board_tables()
    cells = tables.boards[:, WIN_LINES]  # (19683, 8 lines, 3 cells)
    n_own, n_other, n_gap = ((cells == v).sum(axis=2) for v in (mark, -mark, EMPTY))
    d_count = n_own if rule_d_lines == "own" else n_other
    step_lines = [(n_own == 2) & (n_gap == 1), (n_other == 2) & (n_gap == 1), (d_count == 1) & (n_gap == 2)]
    candidates = tables.empty.copy()  # step (e) unless an earlier step applies
    decided = np.zeros(N_BOARDS, dtype=bool)
    for lines in step_lines:
        # Scatter: a square is a candidate if it is an empty cell of any selected line.
        mask = np.zeros((N_BOARDS, 9), dtype=bool)
        for cell in range(3):
            np.logical_or.at(mask, (np.arange(N_BOARDS)[:, None], WIN_LINES[None, :, cell]),
                             lines & (cells[:, :, cell] == EMPTY))  # fmt: skip
        use = ~decided & mask.any(axis=1)
        candidates[use] = mask[use]
        decided |= use
    to_move = tables.legal & ~tables.over & (tables.to_move == mark)
    masks = candidates & to_move[:, None]
    masks.flags.writeable = False
    return masks


@cache
def opponent_tables(rule_d_lines: str = "own") -> OpponentTables:
    """Build the rule base's candidate tables for every board at once (:func:`candidate_masks` of O) (chapter 3)."""
    tables = board_tables()
    candidate_list, n_candidates = squares_to_list(candidate_masks(rule_d_lines, O))
    # For the batched move: row 2 * i + 0 lists the rule squares of board i, row 2 * i + 1 its empty squares.
    choices = np.stack([candidate_list, tables.empty_list], axis=1).reshape(-1)
    n_choices = np.stack([n_candidates, tables.n_empty], axis=1).reshape(-1).astype(np.int64)
    return OpponentTables(candidate_list, n_candidates, choices, n_choices)


def choice_positions(index: np.ndarray, heads: np.ndarray, v: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Where the rule base's choice lies in a flattened ``(2 * 19683, 9)`` table of choices (chapter 3).

    Row ``2 * i`` of the table holds board ``i``'s rule squares, row ``2 * i + 1`` its empty squares;
    ``heads`` picks the row and ``floor(v * count)`` the entry, as :func:`pick_uniform` does.
    """
    row = 2 * index + heads
    return 9 * row + uniform_index(v, counts[row])


def near_perfect_moves(index: np.ndarray, u: np.ndarray, rules: OpponentRules = PAPER_RULES) -> np.ndarray:
    """The rule base's moves on many boards at once, by table lookup (chapter 3).

    ``index`` holds base-3 board indices (O to move) and ``u`` one uniform number per board; the result
    is what :func:`near_perfect_move_given` returns for each pair.
    """
    rule_tables = opponent_tables(rules.rule_d_lines)
    explore, v = split_uniform(u, rules.random_move_probability)
    return rule_tables.choices[choice_positions(np.asarray(index), explore, v, rule_tables.n_choices)]
