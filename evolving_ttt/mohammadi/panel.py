"""Mohammadi et al. (2013): the reader as the judge, a session and its ipywidgets panel (chapter 19).

:class:`JudgeSession` is the interactive fitness of the paper without any drawing: after a run it holds
the candidates (the run's fittest programs and some random ones), lets a person play any of them from
either side, keeps the set of candidates ticked for the next run, and starts that run. It never raises
on a user action: a bad action changes nothing and says why in :attr:`JudgeSession.status`.
:class:`JudgePanel` only draws a session and forwards the clicks.
"""

from __future__ import annotations

import numpy as np

from evolving_ttt.game import EMPTY, SYMBOLS, O, X, is_game_over, play, winner
from evolving_ttt.mohammadi.coevolution import PAPER_MOHAMMADI, MohammadiSettings
from evolving_ttt.mohammadi.programs import ProgramPlayer, parse_program, playat_count, program_to_text, prune_program
from evolving_ttt.mohammadi.series import Coevolution


class JudgeSession:
    """A person judging a series of runs: play the candidates, tick the keepers, start the next run (chapter 19).

    Parameters
    ----------
    settings
        The series' settings (``judge`` is ignored: the person judges).
    seed
        Seed of the series.

    Attributes
    ----------
    series
        The :class:`~evolving_ttt.mohammadi.series.Coevolution` in progress.
    selected
        The candidate being played (a position in the candidate list).
    human
        The side the person plays, ``X`` or ``O``.
    kept
        The candidates ticked for the next run.
    board, moves, status
        The current game against the selected candidate, and a sentence for the status line.
    tally
        Per candidate, the person's wins, the program's wins and the draws so far in this run.
    """

    def __init__(self, settings: MohammadiSettings = PAPER_MOHAMMADI, seed: int = 1) -> None:
        self.series = Coevolution(settings, seed)
        self.human = O
        self._start_run()

    # --- the run and its candidates

    def _start_run(self) -> None:
        record = self.series.run()
        self.candidates = [parse_program(text) for text in record.candidate_texts()]
        self.players = [ProgramPlayer(program, self.series.settings.taken) for program in self.candidates]
        self._pruned: dict[int, str] = {}
        self.fitness = record.fitness[record.candidates]
        self.kept: set[int] = set()
        self.tally = {k: {"human": 0, "program": 0, "draws": 0} for k in range(len(self.candidates))}
        self.selected = 0
        self.new_game()

    @property
    def run_number(self) -> int:
        """Runs finished so far (the candidates come from the last one)."""
        return len(self.series.record.runs)

    def candidate_label(self, k: int) -> str:
        """A line describing candidate ``k``: its rank, fitness, size and PLAY-AT count."""
        best = self.series.settings.best_candidates
        origin = f"best #{k + 1}" if k < best else f"random #{k - best + 1}"
        program = self.candidates[k]
        return (f"{k}: {origin}, fitness {self.fitness[k]:.1f}, {len(program)} nodes, "
                f"{playat_count(program)} PLAY-AT")  # fmt: skip

    def pruned_text(self, k: int) -> str:
        """Candidate ``k`` without the subtrees no board reaches (the same moves), as text; computed once."""
        if k not in self._pruned:
            self._pruned[k] = program_to_text(prune_program(self.candidates[k], taken=self.series.settings.taken))
        return self._pruned[k]

    def select(self, k: int) -> bool:
        """Play candidate ``k`` from now on (a new game starts)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(self.candidates):
            self.status = f"There is no candidate {k!r}; candidates are 0 to {len(self.candidates) - 1}."
            return False
        self.selected = int(k)
        self.new_game()
        return True

    def set_side(self, human: int) -> bool:
        """The person plays ``human`` (X moves first) from the next game on; a new game starts."""
        if human not in (X, O):
            self.status = f"You can play X (+1) or O (-1), not {human!r}."
            return False
        self.human = human
        self.new_game()
        return True

    def keep(self, k: int, value: bool = True) -> bool:
        """Tick (or untick) candidate ``k`` as a seed of the next run."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(self.candidates):
            self.status = f"There is no candidate {k!r} to keep."
            return False
        if value:
            self.kept.add(int(k))
        else:
            self.kept.discard(int(k))
        return True

    def next_run(self) -> bool:
        """Start the next run from the ticked candidates and new random programs; then show its candidates."""
        kept = sorted(self.kept)
        if len(kept) > self.series.settings.population:
            self.status = f"At most {self.series.settings.population} programs can be kept."
            return False
        self.series.reseed(kept)
        self._start_run()
        self.status = (f"Run {self.run_number} finished, seeded with {len(kept)} kept program"
                       f"{'' if len(kept) == 1 else 's'}. " + self.status)  # fmt: skip
        return True

    # --- the game against the selected candidate

    @property
    def over(self) -> bool:
        """Whether the current game has finished."""
        return is_game_over(self.board)

    def new_game(self) -> None:
        """Clear the board; if the program plays X it opens at once."""
        self.board = np.zeros(9, dtype=np.int8)
        self.moves: list[int] = []
        self.status = "Your move."
        if self.human == O:
            self._program_turn()

    def click(self, square: int) -> bool:
        """The person plays ``square`` and the program answers; returns whether the move was made."""
        if self.over:
            self.status = "The game is over. Press New game to play again."
            return False
        if isinstance(square, bool) or not isinstance(square, (int, np.integer)) or not 0 <= square <= 8:
            self.status = f"There is no square {square!r}; squares are 0 to 8."
            return False
        if self.board[square] != EMPTY:
            self.status = f"Square {square} is taken. Choose an empty square."
            return False
        self._play(int(square))
        if not self.over:
            self._program_turn()
        return True

    def _program_turn(self) -> None:
        player = self.players[self.selected]
        own = player.made_move(self.board)
        square = player(self.board)
        self._play(square)
        if not self.over:
            note = "" if own else " (its tree placed no mark: the lowest empty square was played for it)"
            self.status = f"Candidate {self.selected} played square {square}{note}. Your move."

    def _play(self, square: int) -> None:
        self.board = play(self.board, square)
        self.moves.append(square)
        if self.over:
            result = winner(self.board)
            tally = self.tally[self.selected]
            if result == EMPTY:
                tally["draws"] += 1
                self.status = "Draw. Press New game to play again."
            elif result == self.human:
                tally["human"] += 1
                self.status = "You win! Press New game to play again."
            else:
                tally["program"] += 1
                self.status = f"Candidate {self.selected} wins. Press New game to play again."


class JudgePanel:
    """An ipywidgets panel for a :class:`JudgeSession`: it only draws the session and forwards clicks (chapter 19).

    ``candidate`` and ``side`` are the pickers, ``squares`` the nine board buttons, ``new_game`` and
    ``next_run`` the two buttons, ``keep`` one checkbox per candidate, ``status``, ``program`` and
    ``summary`` the text. Display it with ``display(panel.view)``.
    """

    def __init__(self, session: JudgeSession) -> None:
        import ipywidgets as widgets

        self.session = session
        self._refreshing = False
        cell = widgets.Layout(width="56px", height="56px")
        self.squares = [widgets.Button(description=" ", layout=cell) for _ in range(9)]
        for square, button in enumerate(self.squares):
            button.on_click(lambda _b, square=square: self._safely(self.session.click, square))
        self.candidate = widgets.Dropdown(description="Candidate", layout=widgets.Layout(width="460px"))
        self.side = widgets.Dropdown(options=[("O (second)", O), ("X (first)", X)], value=session.human,
                                     description="You play")  # fmt: skip
        self.new_game = widgets.Button(description="New game", button_style="primary")
        self.next_run = widgets.Button(description="Next run with the ticked", button_style="warning",
                                       layout=widgets.Layout(width="220px"))  # fmt: skip
        self.candidate.observe(self._on_candidate, names="value")
        self.side.observe(lambda change: self._safely(self.session.set_side, change["new"]), names="value")
        self.new_game.on_click(lambda _b: self._safely(self.session.new_game))
        self.next_run.on_click(lambda _b: self._safely(self.session.next_run))
        self.status, self.program, self.summary = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.keep_box = widgets.GridBox(layout=widgets.Layout(grid_template_columns="repeat(5, 110px)"))
        self.keep: list = []
        grid = widgets.GridBox(self.squares, layout=widgets.Layout(grid_template_columns="repeat(3, 58px)"))
        self.view = widgets.VBox([
            self.summary,
            widgets.HBox([self.candidate, self.side, self.new_game]),
            widgets.HBox([grid, self.program]),
            self.status,
            widgets.HTML("<b>Keep for the next run:</b>"), self.keep_box, self.next_run,
        ])  # fmt: skip
        self._build_candidates()

    def _safely(self, action, *args) -> None:
        # A widget callback must never raise: whatever happens, the panel stays usable and says why.
        if self._refreshing:
            return
        rebuild = action == self.session.next_run
        try:
            action(*args)
        except Exception as error:  # noqa: BLE001 - shown to the reader instead of lost in a log
            self.session.status = f"Something went wrong: {error}. Press New game."
        if rebuild:
            self._build_candidates()
        else:
            self.refresh()

    def _on_candidate(self, change) -> None:
        if change["new"] is not None:
            self._safely(self.session.select, change["new"])

    def _on_keep(self, k: int, change) -> None:
        self._safely(self.session.keep, k, bool(change["new"]))

    def _build_candidates(self) -> None:
        """New candidates (after a run): the picker's options and one checkbox each."""
        import ipywidgets as widgets

        session = self.session
        self._refreshing = True
        try:
            self.candidate.options = [(session.candidate_label(k), k) for k in range(len(session.candidates))]
            self.candidate.value = session.selected
            self.keep = [widgets.Checkbox(value=k in session.kept, description=str(k), indent=False,
                                          layout=widgets.Layout(width="100px"))
                         for k in range(len(session.candidates))]  # fmt: skip
            for k, box in enumerate(self.keep):
                box.observe(lambda change, k=k: self._on_keep(k, change), names="value")
            self.keep_box.children = self.keep
        finally:
            self._refreshing = False
        self.refresh()

    def refresh(self) -> None:
        """Redraw everything from the session."""
        session = self.session
        self._refreshing = True
        try:
            for square, button in enumerate(self.squares):
                value = int(session.board[square])
                button.description = SYMBOLS[value] if value != EMPTY else " "
                button.button_style = "info" if value == X else ("danger" if value == O else "")
            self.candidate.value = session.selected
            self.side.value = session.human
            for k, box in enumerate(self.keep):
                box.value = k in session.kept
        finally:
            self._refreshing = False
        self.status.value = f"<b>{session.status}</b>"
        tally = session.tally[session.selected]
        text = session.pruned_text(session.selected)
        shown = text if len(text) <= 900 else text[:900] + " ..."
        self.program.value = (f'<div style="margin-left:16px;max-width:520px;font-size:12px">'
                              f'<b>{session.candidate_label(session.selected)}</b><br>'
                              f'Its tree without the parts no board reaches (the same moves):<br>'
                              f'<span style="font-family:monospace;font-size:11px;word-break:break-all">{shown}</span>'
                              f'</div>')  # fmt: skip
        self.summary.value = (
            f"<b>Run {session.run_number}</b>: {len(session.candidates)} candidates, {len(session.kept)} ticked. "
            f"Against candidate {session.selected}: you {tally['human']}, it {tally['program']}, "
            f"draws {tally['draws']}."
        )


def judge_panel(settings: MohammadiSettings = PAPER_MOHAMMADI, seed: int = 1) -> JudgePanel:
    """Run a first run and return a :class:`JudgePanel` on its candidates (chapter 19)."""
    return JudgePanel(JudgeSession(settings, seed))
