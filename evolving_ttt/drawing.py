"""Drawing boards and trees of games with matplotlib, and boards as text (chapters 1 and 8).

``draw_board`` and ``board_to_text`` are introduced in chapter 1; ``GameNode``, ``tree_counts`` and
``draw_game_tree`` in chapter 8 (Fogel's Figure 3). The trees themselves are built by the systems
(for Fogel's network: :func:`evolving_ttt.fogel.trees.game_tree`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evolving_ttt.game import EMPTY, SYMBOLS, O, X, check_board_values


def board_to_text(board: Sequence[int] | np.ndarray) -> str:
    """A three-line picture of the board with grid lines, for printing (chapter 1)."""
    values = check_board_values(board)
    rows = [" " + " | ".join(SYMBOLS[int(v)] for v in values[r * 3 : r * 3 + 3]) for r in range(3)]
    return "\n---+---+---\n".join(rows)


def draw_board(
    board: Sequence[int] | np.ndarray,
    ax=None,
    *,
    xy: tuple[float, float] = (0.0, 0.0),
    size: float = 1.0,
    move_order: Sequence[int] | None = None,
    frame_color: str | None = None,
    title: str | None = None,
    fit: bool = True,
):
    """Draw a board as a small picture on a matplotlib axes (chapter 1; reused for trees of games).

    Parameters
    ----------
    board
        The board to draw.
    ax
        Axes to draw on; a new 1.6-inch figure is made when omitted.
    xy, size
        Lower-left corner and side length of the board in data coordinates, so that many boards can be
        placed on one axes (the trees of games in later chapters).
    move_order
        Optional sequence of squares in the order they were played; each mark then gets its move number
        as a subscript, as in Fogel's Figure 3.
    frame_color
        Optional colour of a frame around the board (used to mark wins, draws and losses).
    title
        Optional text under the board.
    fit
        Set the axes' limits to this board, with equal aspect and no axis lines. Turn it off to place
        many boards on one axes; then set the limits first, because marks are sized from the axes' scale.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    values = check_board_values(board)
    if ax is None:
        _, ax = plt.subplots(figsize=(1.6, 1.6 + (0.3 if title else 0)))
    x0, y0 = xy
    if fit:
        margin = 0.05 * size
        ax.set_xlim(x0 - margin, x0 + size + margin)
        ax.set_ylim(y0 - margin - (0.2 * size if title else 0), y0 + size + margin)
        ax.set_aspect("equal")
        ax.axis("off")
    # Marks are sized in points from the axes' scale, so that a board looks the same at any size.
    ax.apply_aspect()
    left, _ = ax.transData.transform((0.0, 0.0))
    right, _ = ax.transData.transform((1.0, 0.0))
    cell = size / 3
    cell_points = abs(right - left) * 72.0 / ax.figure.dpi * cell
    line_width = max(0.3, 0.035 * cell_points)
    for k in (1, 2):
        ax.plot([x0 + k * cell] * 2, [y0, y0 + size], color="0.3", lw=line_width)
        ax.plot([x0, x0 + size], [y0 + k * cell] * 2, color="0.3", lw=line_width)
    if frame_color is not None:
        ax.add_patch(plt.Rectangle((x0, y0), size, size, fill=False, edgecolor=frame_color, lw=2.5 * line_width))
    order = {int(s): i + 1 for i, s in enumerate(move_order)} if move_order is not None else {}
    font = 0.62 * cell_points
    for square in range(9):
        if values[square] == EMPTY:
            continue
        row, col = divmod(square, 3)
        cx, cy = x0 + (col + 0.45) * cell, y0 + size - (row + 0.5) * cell
        color = "tab:blue" if values[square] == X else "tab:red"
        ax.text(cx, cy, SYMBOLS[int(values[square])], ha="center", va="center", fontsize=font, color=color,
                fontweight="bold")  # fmt: skip
        if square in order:
            ax.text(cx + 0.33 * cell, cy - 0.25 * cell, str(order[square]), ha="center", va="center",
                    fontsize=0.42 * font, color=color)  # fmt: skip
    if title:
        ax.text(x0 + size / 2, y0 - 0.06 * size, title, ha="center", va="top", fontsize=max(6.0, 0.3 * cell_points))
    return ax




@dataclass
class GameNode:
    """A node of a tree of games (chapter 8).

    ``board`` is the position after ``moves``; ``children`` are the positions after the next move (an
    O reply followed, unless the game ended, by X's answer); a leaf has ``result`` +1, -1 or 0.
    """

    board: np.ndarray
    moves: list[int]
    children: list[GameNode] = field(default_factory=list)
    result: int | None = None

    def leaves(self) -> list[GameNode]:
        """The finished games below this node, left to right."""
        return [self] if not self.children else [leaf for child in self.children for leaf in child.leaves()]


def tree_counts(tree: GameNode) -> dict[str, int]:
    """Numbers of won, drawn and lost games (for X) at the leaves of a tree of games (chapter 8)."""
    results = [leaf.result for leaf in tree.leaves()]
    return {"wins": results.count(X), "draws": results.count(EMPTY), "losses": results.count(O)}


def draw_game_tree(tree: GameNode, ax=None, board_size: float = 0.8):
    """Draw a tree of games left to right: a board at every node, leaves framed by result (chapter 8).

    Leaves are stacked top to bottom; an inner node sits at the mean height of its children. Frames:
    green for a win of X, grey for a draw, red for a loss. Marks carry their move numbers.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    leaves = tree.leaves()
    depth_of = {}

    def place(node: GameNode, depth: int, counter: list[int]) -> float:
        if not node.children:
            y = -counter[0]
            counter[0] += 1
        else:
            y = float(np.mean([place(child, depth + 1, counter) for child in node.children]))
        depth_of[id(node)] = (depth, y)
        return y

    place(tree, 0, [0])
    max_depth = max(d for d, _ in depth_of.values())
    frame = {X: "tab:green", EMPTY: "0.5", O: "tab:red"}
    step_x = 1.5
    if ax is None:  # 0.85 inch per unit of board spacing, and no more
        width, height = max_depth * step_x + board_size + 0.2, len(leaves) - 1 + board_size + 0.2
        _, ax = plt.subplots(figsize=(0.85 * width, 0.85 * height))
    ax.set_xlim(-0.1, max_depth * step_x + board_size + 0.1)
    ax.set_ylim(-len(leaves) + 1 - 0.1, board_size + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")

    def draw(node: GameNode) -> None:
        depth, y = depth_of[id(node)]
        for child in node.children:
            child_depth, child_y = depth_of[id(child)]
            ax.plot([depth * step_x + board_size, child_depth * step_x],
                    [y + board_size / 2, child_y + board_size / 2], color="0.75", lw=0.8, zorder=0)  # fmt: skip
            draw(child)
        draw_board(node.board, ax, xy=(depth * step_x, y), size=board_size, move_order=node.moves,
                   frame_color=frame[node.result] if node.result is not None else None, fit=False)  # fmt: skip

    draw(tree)
    return ax
