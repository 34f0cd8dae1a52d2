"""Playing against every player of the book: the game session and the ipywidgets board (chapter 26).

:class:`GameSession` holds the rules of a game between a person and any player of the arena's catalogue
(:mod:`evolving_ttt.arena`), with a tally per opponent, and never raises on a click; :class:`PlayWidget`
only draws it, with the opponent's reasons for its last move beside the board. A reader's own player brings its
own ``explain`` (chapter 25): when it raises or returns something other than an
:class:`~evolving_ttt.players.Explanation`, the game goes on and the reasons panel says so in one line.
``opponent_player`` and ``play_out`` are the small move functions chapter 26 uses to replay the champion's games.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolving_ttt.arena import catalogue
from evolving_ttt.fogel.network import Network, network_move
from evolving_ttt.game import (
    EMPTY,
    SYMBOLS,
    O,
    Player,
    X,
    board_index,
    check_instance,
    check_mark,
    is_game_over,
    play,
    player_to_move,
    winner,
)
from evolving_ttt.perfect import perfect_move
from evolving_ttt.players import ArenaPlayer, Explanation
from evolving_ttt.rule_base import PAPER_RULES, near_perfect_move

OPPONENT_KINDS = ("champion", "rule base", "perfect")
"""The opponents a reader can play against (chapter 26)."""

DEFAULT_CHAMPION = Path(__file__).resolve().parents[1] / "book" / "data" / "champion.json"
"""Where the reproduction's champion is saved (chapter 7)."""


def opponent_player(kind: str, mark: int, rng: np.random.Generator, network: Network | None = None) -> Player:
    """A move function for ``kind`` ("champion", "rule base" or "perfect") playing ``mark`` (chapter 26).

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
    """Play one game between two move functions; return the winner (+1, -1, 0) and the moves (chapter 26)."""
    board = np.zeros(9, dtype=np.int8)
    moves: list[int] = []
    while not is_game_over(board):
        square = (x_player if player_to_move(board) == X else o_player)(board)
        board = play(board, square)
        moves.append(square)
    return winner(board), moves


@dataclass(frozen=True)
class View:
    """What the panel beside the board shows: a player's reasons on one board (chapter 26).

    Attributes
    ----------
    board
        The position the reasons belong to (occupied squares are greyed out).
    explanation
        The opponent's :class:`~evolving_ttt.players.Explanation` on ``board``.
    caption
        One sentence saying which board this is.
    failure
        "" for a player that explained itself; otherwise one line saying why its ``explain`` failed, which is
        then also ``explanation.text`` (the values are all nan and the move is the square it played, or the
        square its policy favours).
    """

    board: np.ndarray
    explanation: Explanation
    caption: str
    failure: str = ""


def error_text(error: BaseException) -> str:
    """``"KindOfError: message"`` on one line (at most about 200 characters) for a status line or a panel."""
    try:
        message = " ".join(str(error).split())
    except Exception:  # noqa: BLE001 - an exception whose message cannot be made is still reported by its kind
        message = ""
    if len(message) > 200:
        message = message[:199] + "\u2026"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def checked_explanation(explanation: object) -> Explanation:
    """``explanation`` if it is an :class:`~evolving_ttt.players.Explanation` the play widget can draw.

    Values given as any sequence of nine real numbers are returned as a float array (in a new Explanation).

    Raises
    ------
    TypeError
        If it is not an Explanation, or its label or text is not a str.
    ValueError
        If its values are not nine numbers or its move is not a square 0..8.
    """
    if not isinstance(explanation, Explanation):
        raise TypeError(f"explain must return an Explanation; got {type(explanation).__name__}")
    values = np.asarray(explanation.values)
    if values.shape != (9,) or values.dtype.kind not in "biuf":
        raise ValueError(f"an Explanation's values must be nine numbers; got {values.dtype} values of shape "
                         f"{values.shape}")  # fmt: skip
    for name in ("label", "text"):
        if not isinstance(getattr(explanation, name), str):
            raise TypeError(f"an Explanation's {name} must be a str; got {type(getattr(explanation, name)).__name__}")
    move = explanation.move
    if isinstance(move, bool) or not isinstance(move, (int, np.integer)) or not 0 <= move <= 8:
        raise ValueError(f"an Explanation's move must be a square 0..8; got {move!r}")
    if isinstance(explanation.values, np.ndarray) and values.dtype.kind == "f":
        return explanation
    return Explanation(values.astype(float), explanation.label, explanation.text, int(move))


class GameSession:
    """A game between a person and any player of the book, with the rules and the tally; no drawing (chapter 26).

    Parameters
    ----------
    opponent
        The name of a player of ``players`` (by default the arena's catalogue, :func:`evolving_ttt.arena.catalogue`).
    human
        The side the person plays: ``X`` (moves first) or ``O``.
    seed
        Seed of the random choices of stochastic opponents.
    players
        The players to choose from.

    Attributes
    ----------
    board, moves, status
        The position, the squares played, and a sentence for the status line.
    failure
        "" while the game can go on; otherwise why the opponent could not move (its ``move`` raised or gave a
        square that cannot be played). Clicks are then refused until a new game.
    tally
        ``tally[(opponent, side)]`` counts the person's wins, draws and losses against each opponent from each
        side, over the whole session (like the tables of games against people in Al-Khateeb (2012)).
    """

    def __init__(
        self, opponent: str = "Fogel champion", human: int = X, seed: int = 0,
        players: Sequence[ArenaPlayer] | None = None,
    ) -> None:  # fmt: skip
        players = catalogue() if players is None else list(players)
        for player in players:
            check_instance(player, ArenaPlayer, "players", "a sequence of ArenaPlayer")
        self.players = {player.name: player for player in players}
        self.rng = np.random.default_rng(seed)
        self.tally: dict[tuple[str, str], dict[str, int]] = {}
        self.configure(opponent, human)

    def configure(self, opponent: str, human: int) -> None:
        """Choose the opponent and the person's side and start a new game (the tally is kept)."""
        if opponent not in self.players:
            raise ValueError(f"opponent must be one of {list(self.players)}; got {opponent!r}")
        if isinstance(human, bool) or human not in (X, O):
            raise ValueError(f"human must be X (+1) or O (-1); got {human!r}")
        self.opponent, self.human = opponent, int(human)
        self.new_game()

    @property
    def player(self) -> ArenaPlayer:
        """The opponent."""
        return self.players[self.opponent]

    @property
    def record(self) -> dict[str, int]:
        """The person's wins, draws and losses against the current opponent from the current side."""
        return self.tally.setdefault((self.opponent, SYMBOLS[self.human]), {"wins": 0, "draws": 0, "losses": 0})

    @property
    def over(self) -> bool:
        """Whether the current game has finished."""
        return is_game_over(self.board)

    def new_game(self) -> None:
        """Clear the board; if the opponent plays X it makes its first move at once."""
        self.board = np.zeros(9, dtype=np.int8)
        self.moves: list[int] = []
        self.status = "Your move."
        self.failure = ""
        if self.human == O:
            self._opponent_turn()

    def click(self, square: int) -> bool:
        """The person plays ``square``; the opponent answers. Returns whether the move was made.

        A click on an occupied square, outside the board, after the game has ended, or after the opponent
        could not move changes nothing and explains why in :attr:`status`.
        """
        if self.failure:
            self.status = f"{self.failure} Press New game."
            return False
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

    def view(self) -> View | None:
        """Why the opponent made its last move; before it has moved, what it would play in the person's place.

        ``None`` when the opponent cannot explain itself or there is nothing to explain. The opponent's
        ``explain`` is a reader's code (chapter 25): if it raises or returns anything but a well-formed
        :class:`~evolving_ttt.players.Explanation`, the view says so in :attr:`View.failure` instead of raising.
        """
        if self.player.explain is None:
            return None
        mark = -self.human
        turns = [k for k in range(len(self.moves)) if (X if k % 2 == 0 else O) == mark]
        if turns:
            before = np.zeros(9, dtype=np.int8)
            for square in self.moves[: turns[-1]]:
                before = play(before, square)
            caption = f"Why {self.opponent} played square {self.moves[turns[-1]]}:"
            return self._explained(before, mark, self.moves[turns[-1]], caption)
        if self.over or self.failure:
            return None
        caption = f"What {self.opponent} would play in your place:"
        side = player_to_move(self.board)
        likely = int(np.argmax(self.player.policy(side)[board_index(self.board)]))
        return self._explained(self.board.copy(), side, likely, caption)

    def _explained(self, board: np.ndarray, mark: int, move: int, caption: str) -> View:
        # The player's explain gets a copy of the board, so that it cannot change the game or the view.
        explain: Callable[[np.ndarray, int], Explanation] = self.player.explain
        try:
            return View(board, checked_explanation(explain(board.copy(), mark)), caption)
        except Exception as error:  # noqa: BLE001 - a reader's explain may raise anything; the game goes on
            failure = f"This player's explanation failed: {error_text(error)}"
            return View(board, Explanation(np.full(9, np.nan), "", failure, move), caption, failure)

    def _opponent_turn(self) -> None:
        # The move comes from the player's policy tables; a player whose move method fails stops the game.
        try:
            self._play(self.player.move(self.board.copy(), self.rng))
        except Exception as error:  # noqa: BLE001 - reported on the status line, never raised on a click
            self.failure = f"{self.opponent} could not move: {error_text(error)}."
            self.status = f"{self.failure} Press New game."
            return
        if not self.over:
            self.status = f"{self.opponent} played square {self.moves[-1]}. Your move."

    def _play(self, square: int) -> None:
        self.board = play(self.board, square)
        self.moves.append(int(square))
        if self.over:
            result = winner(self.board)
            if result == EMPTY:
                self.record["draws"] += 1
                self.status = "Draw. Press New game to play again."
            elif result == self.human:
                self.record["wins"] += 1
                self.status = "You win! Press New game to play again."
            else:
                self.record["losses"] += 1
                self.status = f"{self.opponent} wins. Press New game to play again."


def value_text(value: float) -> str:
    """A number for a heat cell: two decimals for small values, thousands as k for the heuristic's (chapter 26)."""
    if abs(value) >= 1e4:
        return f"{value / 1e3:.0f}k"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.2f}"


def output_color(value: float) -> str:
    """A hex colour for an output strength in [0, 1] on matplotlib's viridis scale (chapter 26)."""
    from matplotlib import colormaps, colors

    return colors.to_hex(colormaps["viridis"](float(np.clip(value, 0.0, 1.0))))


class PlayWidget:
    """An ipywidgets board for a :class:`GameSession`: it only draws the session and forwards clicks (chapter 26).

    ``squares`` are the nine buttons, ``new_game`` the button that restarts, ``opponent`` and ``side``
    the two pickers, ``status`` the status line, ``score`` the tally against every opponent played so far,
    ``heat`` the nine cells of the opponent's reasons and ``explanation`` their caption. Display the widget
    with ``display(widget.view)``.
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
        self.opponent = widgets.Dropdown(options=list(session.players), value=session.opponent, description="Opponent",
                                         layout=widgets.Layout(width="300px"))  # fmt: skip
        self.side = widgets.Dropdown(options=[("X (first)", X), ("O (second)", O)], value=session.human,
                                     description="You play")  # fmt: skip
        self.opponent.observe(self._reconfigure, names="value")
        self.side.observe(self._reconfigure, names="value")
        self.status = widgets.HTML()
        self.status.add_class("ttt-status")  # names for the browser test of `make play`
        self.score = widgets.HTML()
        self.score.add_class("ttt-tally")
        self.heat = [widgets.HTML(layout=widgets.Layout(width="64px", height="64px")) for _ in range(9)]

        def three_by_three(cells):  # fixed 66-pixel rows and columns, not stretched to the panel beside it
            shape = widgets.Layout(grid_template_columns="repeat(3, 66px)", grid_template_rows="repeat(3, 66px)",
                                   align_self="flex-start")  # fmt: skip
            return widgets.GridBox(cells, layout=shape)

        grid, heatmap = three_by_three(self.squares), three_by_three(self.heat)
        self.explanation = widgets.HTML(layout=widgets.Layout(width="300px"))
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
        """Redraw the board, the reasons, the status line and the tally from the session."""
        session = self.session
        for square, button in enumerate(self.squares):
            value = int(session.board[square])
            button.description = SYMBOLS[value] if value != EMPTY else " "
            button.button_style = "info" if value == X else ("danger" if value == O else "")
        try:
            self._draw_reasons(session.view())
        except Exception as error:  # noqa: BLE001 - a redraw must not raise; the rest of the board is still drawn
            for cell in self.heat:
                cell.value = ""
            reason = html.escape(error_text(error), quote=False)
            self.explanation.value = f"<b>Why this move?</b><br>The reasons could not be shown: {reason}"
        self.status.value = f"<b>{html.escape(session.status, quote=False)}</b>"
        rows = "".join(
            f"<tr><td>{name}</td><td>{side}</td><td>{r['wins']}</td><td>{r['draws']}</td><td>{r['losses']}</td></tr>"
            for (name, side), r in session.tally.items()
        )
        self.score.value = ("<table><tr><th>opponent</th><th>you played</th><th>won</th><th>drawn</th><th>lost</th>"
                            f"</tr>{rows}</table>")  # fmt: skip

    def _draw_reasons(self, view: View | None) -> None:
        if view is None:
            for cell in self.heat:
                cell.value = ""
            silent = self.session.player.explain is None
            reasons = "This player gives no reasons." if silent else "No move to explain yet."
            self.explanation.value = f"<b>Why this move?</b><br>{reasons}"
            return
        values = view.explanation.values
        shown = values[np.isfinite(values)]
        low, high = (float(shown.min()), float(shown.max())) if shown.size else (0.0, 1.0)
        for square, cell in enumerate(self.heat):
            if view.board[square] != EMPTY:  # a mark, in letters that do not look like digits
                style, font = "background:#d9d9d9;color:#555", "font-family:sans-serif;font-weight:bold"
                text = SYMBOLS[int(view.board[square])]
            elif not np.isfinite(values[square]):
                style, font, text = "background:#f4f4f4;color:#555", "font-family:monospace", ""
            else:
                shade = (values[square] - low) / (high - low) if high > low else 1.0
                ink = "white" if shade < 0.6 else "black"
                style, font = f"background:{output_color(shade)};color:{ink}", "font-family:monospace"
                text = value_text(values[square])
            border = "3px solid #d62728" if square == view.explanation.move else "3px solid transparent"
            cell.value = (f'<div style="{style};border:{border};width:56px;height:56px;display:flex;'
                          f'align-items:center;justify-content:center;{font}">{text}</div>')  # fmt: skip
        if view.failure:  # one line, escaped: the message may quote anything
            self.explanation.value = f"<b>Why this move?</b><br>{html.escape(view.failure, quote=False)}"
            return
        key = f"(numbers: {view.explanation.label}; occupied squares grey, move outlined)"
        self.explanation.value = f"<b>Why this move?</b><br>{view.caption} {view.explanation.text}<br>{key}"


def play_widget(opponent: str = "Fogel champion", human: int = O, seed: int = 0,
                players: Sequence[ArenaPlayer] | None = None) -> PlayWidget:  # fmt: skip
    """Make a :class:`PlayWidget` against any player of the book and return it (chapter 26).

    By default the reader plays O against Fogel's champion, so the champion opens as X, the side it was
    evolved for.
    """
    return PlayWidget(GameSession(opponent, human, seed, players))
