"""Fogel's control study (chapter 20): the robustness method applied to the one paper whose result comes back.

Two sweeps, committed to ``book/data/studies/``, vary one setting each around the paper's: the number of parents
(``fogel_population``) and the mutation's spread (``fogel_spread``), 20 seeds of one trial per cell. Every task's
final best network is measured on the arena's yardsticks by the sweep itself; this module adds the measure of the
paper's own claim about Figure 3, whether the network ever loses in the tree of games against the rule base when
the rule base makes no random move, and the claim as the one verdict rule reads it (:func:`control_claims`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from evolving_ttt.drawing import tree_counts
from evolving_ttt.fogel.network import Network, load_network, network_player, population_moves, stack_networks
from evolving_ttt.fogel.trees import game_tree
from evolving_ttt.game import MARK_DIGIT, POWERS_OF_3, O, X, board_from_index, board_tables, check_instance
from evolving_ttt.outcomes import boards_to_move
from evolving_ttt.records import STUDIES
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules, rule_candidates
from evolving_ttt.store import SweepStore
from evolving_ttt.verdicts import Cell, Claim, Measure, Sample

CONTROL_STUDIES = ("fogel_population", "fogel_spread")
"""The names of the control study's databases in ``book/data/studies/`` (chapter 20)."""


def never_loses(network: Network, rules: OpponentRules = PAPER_RULES) -> bool:
    """Whether ``network`` loses no game of its tree against the rule base without random moves (chapter 20).

    This is the paper's claim about its Figure 3: the best network of a trial "never loses" when the rule base makes
    no error. The tree is the one of chapter 8 (:func:`~evolving_ttt.fogel.trees.game_tree`).
    """
    return tree_counts(game_tree(network_player(network), rules))["losses"] == 0


def never_loses_many(networks: Sequence[Network], rules: OpponentRules = PAPER_RULES) -> list[bool]:
    """:func:`never_loses` for many networks at once, from their move tables (chapter 20; equal, tested).

    Every network's move on every board where X is to move comes from one batch
    (:func:`~evolving_ttt.fogel.network.population_moves`); the walk then follows the tree of :func:`never_loses`
    over board numbers (O's replies as :func:`~evolving_ttt.rule_base.rule_candidates` gives them, each board's
    once) and stops at the first loss.
    """
    check_instance(rules, OpponentRules, "rules", "an OpponentRules")
    networks = list(networks)
    if not networks:
        return []
    tables, rows = board_tables(), boards_to_move(X)
    moves = np.full((len(networks), len(tables.boards)), -1, dtype=np.int64)
    moves[:, rows] = population_moves(stack_networks(networks), np.broadcast_to(tables.boards[rows],
                                                                                 (len(networks), len(rows), 9)))
    replies: dict[tuple[int, bool], list[int]] = {}

    def o_replies(index: int, first: bool) -> list[int]:
        key = (index, first and rules.first_reply == "cycle")
        if key not in replies:
            board = board_from_index(index)
            replies[key] = [int(s) for s in np.flatnonzero(board == 0)] if key[1] else rule_candidates(board, rules)
        return replies[key]

    def loses(own: np.ndarray, index: int, first: bool) -> bool:  # O to move on board ``index``
        if tables.over[index]:
            return bool(tables.winner[index] == O)
        for reply in o_replies(index, first):
            after_o = index + MARK_DIGIT[O] * int(POWERS_OF_3[reply])
            if tables.over[after_o]:
                if tables.winner[after_o] == O:
                    return True
                continue
            if loses(own, after_o + MARK_DIGIT[X] * int(POWERS_OF_3[own[after_o]]), False):
                return True
        return False

    return [not loses(own, MARK_DIGIT[X] * int(POWERS_OF_3[own[0]]), True) for own in moves]


def network_from_text(text: str, folder: str | Path | None = None) -> Network:
    """A network from the text of its saved file (as a sweep database keeps it), read and checked by
    :func:`~evolving_ttt.fogel.network.load_network`; the file is written in ``folder`` (default: a new temporary
    folder, removed at once)."""
    if folder is not None:
        path = Path(folder) / "network.json"
        path.write_text(text)
        return load_network(path)[0]
    with tempfile.TemporaryDirectory() as folder:
        return network_from_text(text, folder)


def control_rows(name: str, folder: Path = STUDIES) -> list[dict]:
    """The tasks of one control study's database as dicts: the swept settings (``parents``, ``weight_spread``),
    ``seed``, the sweep's measures, and ``never_loses`` of the task's final best network (chapter 20).

    ``never_loses`` comes from :func:`never_loses_many`, once per database file as it is (its size and time of
    change): chapter 20's table and the claims of :func:`control_claims` share it."""
    path = Path(folder) / f"{name}.sqlite"
    if not path.is_file():
        raise ValueError(f"no study database {path}; run the command of chapter 20 that makes it")
    status = path.stat()
    return [dict(row) for row in _control_rows(str(path.resolve()), status.st_size, status.st_mtime_ns)]


@cache
def _control_rows(path: str, size: int, changed: int) -> tuple[dict, ...]:
    with SweepStore(path) as store:
        rows = store.rows()
    with tempfile.TemporaryDirectory() as folder:
        clean = never_loses_many([network_from_text(row["player"], folder) for row in rows])
    found = []
    for row, never_lost in zip(rows, clean, strict=True):
        settings = row["settings"]
        found.append({"cell": row["cell"], "seed": row["seed"], "parents": settings["parents"],
                      "weight_spread": settings["mutation"]["weight_spread"], **row["measures"],
                      "never_loses": never_lost})  # fmt: skip
    return tuple(found)


NEVER_LOSES = Measure("share of trials whose final best network never loses to the rule base without random moves",
                      0.0, 1.0, unit="%")
"""The measure of Fogel's claim about Figure 3 (chapter 20)."""

PAPER_SETTING = {"parents": 50, "weight_spread": 0.05}
"""The paper's setting in the control study's two swept keys."""


def control_claims(folder: Path = STUDIES) -> list[Claim]:
    """Fogel's claim, stated for the one verdict rule (:func:`evolving_ttt.verdicts.verdict`), from the control
    study's databases (chapter 20).

    The claim is the paper's about Figure 3: the best network of a trial never loses to the rule base when the rule
    base makes no random move, which the paper calls typical of its trials; so the test is that *more than half*
    of the trials' final best networks never lose. The paper's setting (50 parents, spread 0.05) is the first cell;
    every other number of parents and spread tried is a cell that changes a setting the paper states.
    """
    cells: dict[tuple[str, object], list[bool]] = {}
    for name, key in zip(CONTROL_STUDIES, ("parents", "weight_spread"), strict=True):
        for row in control_rows(name, folder):
            if row["parents"] == PAPER_SETTING["parents"] and row["weight_spread"] == PAPER_SETTING["weight_spread"]:
                key_value = ("paper", None)  # the paper's cell is in both sweeps: the same 20 trials
                if name != CONTROL_STUDIES[0]:
                    continue
            else:
                key_value = (key, row[key])
            cells.setdefault(key_value, []).append(row["never_loses"])
    if ("paper", None) not in cells:
        raise ValueError("the control study has no cell with the paper's setting (50 parents, spread 0.05)")
    labels = {"parents": "parents", "weight_spread": "mutation spread"}
    found = [Cell("50 parents, mutation spread 0.05", "paper", _share(cells.pop(("paper", None))))]
    found += [Cell(f"{labels[key]} {value}", "stated setting", _share(runs)) for (key, value), runs in cells.items()]
    return [Claim(
        paper="Fogel (1993)",
        claim="the best evolved network never loses to the rule base when it makes no random move",
        paper_figure="the tree of Figure 3, typical of all 20 trials",
        measure=NEVER_LOSES, threshold=0.5, direction="above", cells=tuple(found), chapter="20_fogel_control",
    )]  # fmt: skip


def _share(runs: list[bool]) -> Sample:
    return Sample("share", tuple(float(run) for run in runs), f"1 to {len(runs)}")
