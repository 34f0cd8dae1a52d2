"""Playing against the evolved network: the game session and the ipywidgets board (chapter 14).

:class:`GameSession` holds the rules of a game between a person and an opponent and never raises on
a click; :class:`PlayWidget` only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolving_ttt.fogel.network import Network, load_network, network_move, network_outputs
from evolving_ttt.fogel.opponent import PAPER_RULES, near_perfect_move
from evolving_ttt.game import EMPTY, SYMBOLS, O, Player, X, check_mark, is_game_over, play, player_to_move, winner
from evolving_ttt.perfect import perfect_move

OPPONENT_KINDS = ("champion", "rule base", "perfect")
"""The opponents a reader can play against (chapter 14)."""

DEFAULT_CHAMPION = Path(__file__).resolve().parents[1] / "book" / "data" / "champion.json"
"""Where the reproduction's champion is saved (chapter 7)."""


def opponent_player(kind: str, mark: int, rng: np.random.Generator, network: Network | None = None) -> Player:
    """A move function for ``kind`` ("champion", "rule base" or "perfect") playing ``mark`` (chapter 14).

    The champion was evolved as X; as O it sees the board with the colours swapped. The rule base plays
    either side with the paper's rules (its first reply follows the rules too). The perfect player takes
    a move of best game-theoretic value.
    """
    if kind not in OPPONENT_KINDS:
        raise ValueError(f"opponent must be one of {OPPONENT_KINDS}; got {kind!r}")
    check_mark(mark)
    if kind == "champion":
        if network is None:
            raise ValueError("the champion opponent needs a network")
        return lambda board: network_move(network, board, mark)
    if kind == "rule base":
        return lambda board: near_perfect_move(board, rng, PAPER_RULES, mark)
    return perfect_move


def play_out(x_player: Player, o_player: Player) -> tuple[int, list[int]]:
    """Play one game between two move functions; return the winner (+1, -1, 0) and the moves (chapter 14)."""
    board = np.zeros(9, dtype=np.int8)
    moves: list[int] = []
    while not is_game_over(board):
        square = (x_player if player_to_move(board) == X else o_player)(board)
        board = play(board, square)
        moves.append(square)
    return winner(board), moves


@dataclass(frozen=True)
class NetworkView:
    """What the heatmap shows: the champion's outputs on a board, and the square it chose there (chapter 14).

    Attributes
    ----------
    board
        The position the outputs belong to (occupied squares are greyed out).
    outputs
        The champion's nine outputs on ``board``, from the side it plays there.
    move
        The square the champion chose (or would choose) on ``board``; None once the game is over.
    caption
        One sentence saying which of these it is.
    """

    board: np.ndarray
    outputs: np.ndarray
    move: int | None
    caption: str


class GameSession:
    """A game between a human and an opponent, with the rules and the score; no drawing (chapter 14).

    Parameters
    ----------
    network
        The evolved champion: the "champion" opponent, and the network whose outputs are shown.
    opponent
        "champion", "rule base" or "perfect".
    human
        The side the human plays: ``X`` (moves first) or ``O``.
    seed
        Seed of the rule base's random choices.

    Attributes
    ----------
    board, moves, status, tally
        The position, the squares played, a sentence for the status line, and the wins of the human,
        the opponent and the draws against the current opponent and side (changing either restarts it).
    """

    def __init__(self, network: Network, opponent: str = "champion", human: int = X, seed: int = 0) -> None:
        if not isinstance(network, Network):
            raise ValueError(f"network must be a Network; got {type(network).__name__}")
        self.network = network
        self.rng = np.random.default_rng(seed)
        self.configure(opponent, human)

    def configure(self, opponent: str, human: int) -> None:
        """Choose the opponent and the human's side, restart the score, and start a new game."""
        if human not in (X, O):
            raise ValueError(f"human must be X (+1) or O (-1); got {human!r}")
        self._opponent_move = opponent_player(opponent, -human, self.rng, self.network)
        self.opponent, self.human = opponent, human
        self.tally = {"human": 0, "opponent": 0, "draws": 0}
        self.new_game()

    @property
    def over(self) -> bool:
        """Whether the current game has finished."""
        return is_game_over(self.board)

    def new_game(self) -> None:
        """Clear the board; if the opponent plays X it makes its first move at once."""
        self.board = np.zeros(9, dtype=np.int8)
        self.moves: list[int] = []
        self.status = "Your move." if self.human == X else ""
        if self.human == O:
            self._opponent_turn()

    def click(self, square: int) -> bool:
        """The human plays ``square``; the opponent answers. Returns whether the move was made.

        A click on an occupied square, outside the board, or after the game has ended changes nothing
        and explains why in :attr:`status`.
        """
        if self.over:
            self.status = "The game is over. Press New game to play again."
            return False
        if isinstance(square, bool) or not isinstance(square, (int, np.integer)) or not 0 <= square <= 8:
            self.status = f"There is no square {square!r}; squares are 0 to 8."
            return False
        if self.board[square] != EMPTY:
            self.status = f"Square {square} is taken. Choose an empty square."
            return False
        self._play(square)
        if not self.over:
            self._opponent_turn()
        return True

    def network_view(self) -> NetworkView:
        """Why the champion moved where it did, or, against another opponent, what it would play here.

        Against the champion, once it has moved in this game: its outputs on the board just before its
        last move, and that move. Otherwise: its outputs on the current board from the side to move (X
        once the game is over), and the move it would make.
        """
        champion_mark = -self.human
        if self.opponent == "champion":
            mine = [i for i, _ in enumerate(self.moves) if (X if i % 2 == 0 else O) == champion_mark]
            if mine:
                last = mine[-1]
                before = np.zeros(9, dtype=np.int8)
                for square in self.moves[:last]:
                    before = play(before, square)
                outputs = network_outputs(self.network, before, champion_mark)
                caption = f"Why the champion played square {self.moves[last]}: its outputs just before that move."
                return NetworkView(before, outputs, self.moves[last], caption)
        if self.over:
            outputs = network_outputs(self.network, self.board, X)
            return NetworkView(self.board, outputs, None, "The game is over: the champion's outputs, seen as X.")
        mark = player_to_move(self.board)
        move = network_move(self.network, self.board, mark)
        caption = f"The champion's outputs for your position: it would play square {move}."
        return NetworkView(self.board, network_outputs(self.network, self.board, mark), move, caption)

    def _opponent_turn(self) -> None:
        self._play(self._opponent_move(self.board))
        if not self.over:
            self.status = f"{self.opponent.capitalize()} played square {self.moves[-1]}. Your move."

    def _play(self, square: int) -> None:
        self.board = play(self.board, square)
        self.moves.append(int(square))
        if self.over:
            result = winner(self.board)
            if result == EMPTY:
                self.tally["draws"] += 1
                self.status = "Draw. Press New game to play again."
            elif result == self.human:
                self.tally["human"] += 1
                self.status = "You win! Press New game to play again."
            else:
                self.tally["opponent"] += 1
                self.status = f"{self.opponent.capitalize()} wins. Press New game to play again."


def output_color(value: float) -> str:
    """A hex colour for an output strength in [0, 1] on matplotlib's viridis scale (chapter 14)."""
    from matplotlib import colormaps, colors

    return colors.to_hex(colormaps["viridis"](float(np.clip(value, 0.0, 1.0))))


class PlayWidget:
    """An ipywidgets board for a :class:`GameSession`: it only draws the session and forwards clicks (chapter 14).

    ``squares`` are the nine buttons, ``new_game`` the button that restarts, ``opponent`` and ``side``
    the two pickers, ``status`` and ``score`` the text lines, ``heat`` the nine cells of the network's
    output heatmap. Display the widget with ``display(widget.view)``.
    """

    def __init__(self, session: GameSession) -> None:
        import ipywidgets as widgets

        self.session = session
        cell = widgets.Layout(width="64px", height="64px")
        self.squares = [widgets.Button(description=" ", layout=cell) for _ in range(9)]
        for square, button in enumerate(self.squares):
            button.on_click(lambda _button, square=square: self._safely(self.session.click, square))
        self.new_game = widgets.Button(description="New game", button_style="primary")
        self.new_game.on_click(lambda _button: self._safely(self.session.new_game))
        self.opponent = widgets.Dropdown(options=list(OPPONENT_KINDS), value=session.opponent, description="Opponent")
        self.side = widgets.Dropdown(options=[("X (first)", X), ("O (second)", O)], value=session.human,
                                     description="You play")  # fmt: skip
        self.opponent.observe(self._reconfigure, names="value")
        self.side.observe(self._reconfigure, names="value")
        self.status = widgets.HTML()
        self.score = widgets.HTML()
        self.heat = [widgets.HTML(layout=widgets.Layout(width="64px", height="64px")) for _ in range(9)]

        def three_by_three(cells):  # fixed 66-pixel rows and columns, not stretched to the panel beside it
            shape = widgets.Layout(grid_template_columns="repeat(3, 66px)", grid_template_rows="repeat(3, 66px)",
                                   align_self="flex-start")  # fmt: skip
            return widgets.GridBox(cells, layout=shape)

        grid, heatmap = three_by_three(self.squares), three_by_three(self.heat)
        self.explanation = widgets.HTML(layout=widgets.Layout(width="240px"))
        side_panel = widgets.VBox([self.explanation, heatmap], layout=widgets.Layout(margin="0 0 0 24px"))
        self.view = widgets.VBox([
            widgets.HBox([self.opponent, self.side, self.new_game]),
            widgets.HBox([grid, side_panel]),
            self.status, self.score,
        ])  # fmt: skip
        self.refresh()

    def _safely(self, action, *args) -> None:
        # A widget callback must never raise: whatever happens, the board stays usable and says why.
        try:
            action(*args)
        except Exception as error:  # noqa: BLE001 - shown to the reader instead of lost in a log
            self.session.status = f"Something went wrong: {error}. Press New game."
        self.refresh()

    def _reconfigure(self, _change=None) -> None:
        self._safely(self.session.configure, self.opponent.value, self.side.value)

    def refresh(self) -> None:
        """Redraw the board, the heatmap, the status line and the score from the session."""
        session = self.session
        for square, button in enumerate(self.squares):
            value = int(session.board[square])
            button.description = SYMBOLS[value] if value != EMPTY else " "
            button.button_style = "info" if value == X else ("danger" if value == O else "")
        view = session.network_view()
        for square, cell in enumerate(self.heat):
            if view.board[square] != EMPTY:  # a mark, in letters that do not look like digits
                style, font = "background:#d9d9d9;color:#555", "font-family:sans-serif;font-weight:bold"
                text = SYMBOLS[int(view.board[square])]
            else:
                value = view.outputs[square]
                ink = "white" if value < 0.6 else "black"
                style, font, text = (
                    f"background:{output_color(value)};color:{ink}",
                    "font-family:monospace",
                    f"{value:.2f}",
                )
            border = "3px solid #d62728" if square == view.move else "3px solid transparent"
            cell.value = (f'<div style="{style};border:{border};width:56px;height:56px;display:flex;'
                          f'align-items:center;justify-content:center;{font}">{text}</div>')  # fmt: skip
        self.explanation.value = f"<b>Why this move?</b><br>{view.caption}<br>(occupied squares grey, move outlined)"
        self.status.value = f"<b>{session.status}</b>"
        tally = session.tally
        self.score.value = (
            f"You {tally['human']} &nbsp; {session.opponent} {tally['opponent']} &nbsp; draws {tally['draws']}"
        )


def play_widget(network: Network | None = None, opponent: str = "champion", human: int = O, seed: int = 0):
    """Make a :class:`PlayWidget` against the saved champion (or ``network``) and return it (chapter 14).

    By default the reader plays O, so the champion opens as X, the side it was evolved for.
    """
    if network is None:
        network, _ = load_network(DEFAULT_CHAMPION)
    return PlayWidget(GameSession(network, opponent, human, seed))
