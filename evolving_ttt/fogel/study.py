"""Fogel's control study (chapter 20): the robustness method applied to the one paper whose result comes back.

Two sweeps, committed to ``book/data/studies/``, vary one setting each around the paper's: the number of parents
(``fogel_population``) and the mutation's spread (``fogel_spread``), 20 seeds of one trial per cell. Every task's
final best network is measured on the arena's yardsticks by the sweep itself; this module adds the measure of the
paper's own claim about Figure 3, whether the network ever loses in the tree of games against the rule base when
the rule base makes no random move, and the rows of the introduction's table (:func:`control_glance`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from evolving_ttt.drawing import tree_counts
from evolving_ttt.fogel.network import Network, load_network
from evolving_ttt.fogel.opponent import PAPER_RULES, OpponentRules, network_player
from evolving_ttt.fogel.trees import game_tree
from evolving_ttt.records import STUDIES
from evolving_ttt.statistics import mean_interval, share_interval
from evolving_ttt.store import SweepStore

CONTROL_STUDIES = ("fogel_population", "fogel_spread")
"""The names of the control study's databases in ``book/data/studies/`` (chapter 20)."""


def never_loses(network: Network, rules: OpponentRules = PAPER_RULES) -> bool:
    """Whether ``network`` loses no game of its tree against the rule base without random moves (chapter 20).

    This is the paper's claim about its Figure 3: the best network of a trial "never loses" when the rule base makes
    no error. The tree is the one of chapter 8 (:func:`~evolving_ttt.fogel.trees.game_tree`).
    """
    return tree_counts(game_tree(network_player(network), rules))["losses"] == 0


def network_from_text(text: str) -> Network:
    """A network from the text of its saved file (as a sweep database keeps it), read and checked by
    :func:`~evolving_ttt.fogel.network.load_network`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "network.json"
        path.write_text(text)
        return load_network(path)[0]


def control_rows(name: str, folder: Path = STUDIES) -> list[dict]:
    """The tasks of one control study's database as dicts: the swept settings (``parents``, ``weight_spread``),
    ``seed``, the sweep's measures, and ``never_loses`` of the task's final best network (chapter 20)."""
    path = Path(folder) / f"{name}.sqlite"
    if not path.is_file():
        raise ValueError(f"no study database {path}; run the command of chapter 20 that makes it")
    with SweepStore(path) as store:
        rows = store.rows()
    found = []
    for row in rows:
        settings = row["settings"]
        found.append({"cell": row["cell"], "seed": row["seed"], "parents": settings["parents"],
                      "weight_spread": settings["mutation"]["weight_spread"], **row["measures"],
                      "never_loses": never_loses(network_from_text(row["player"]))})  # fmt: skip
    return found


def control_glance(folder: Path = STUDIES) -> list[dict]:
    """Fogel's row of the introduction's table, from the control study's databases (chapter 20).

    The claim is the paper's about Figure 3: the best network of a trial never loses to the rule base when the
    rule base makes no random move. ``book`` is the share of trials at the paper's setting (50 parents, spread
    0.05) whose final best network never loses, with its Wilson interval; ``best`` the highest share of any cell.
    """
    cells: dict[tuple[str, object], list[bool]] = {}
    scores: dict[tuple[str, object], list[float]] = {}
    paper: list[bool] = []
    for name, key in zip(CONTROL_STUDIES, ("parents", "weight_spread"), strict=True):
        for row in control_rows(name, folder):
            cells.setdefault((key, row[key]), []).append(row["never_loses"])
            scores.setdefault((key, row[key]), []).append(row["fogel_score"])
            if name == CONTROL_STUDIES[0] and row["parents"] == 50 and row["weight_spread"] == 0.05:
                paper.append(row["never_loses"])  # the paper's cell is in both sweeps: the same 20 trials
    if not paper:
        raise ValueError("the control study has no cell with the paper's setting (50 parents, spread 0.05)")
    share, low, high = share_interval(sum(paper), len(paper))
    (key, value), best = max(cells.items(), key=lambda item: (sum(item[1]) / len(item[1]), -len(item[1])))
    best_share, best_low, best_high = share_interval(sum(best), len(best))
    score = mean_interval(scores[(key, value)])
    label = {"parents": "parents", "weight_spread": "mutation spread"}[key]
    verdict = "holds" if low > 0.5 else ("holds in some trials" if share > 0 else "does not hold")
    return [{
        "paper": "Fogel (1993)",
        "claim": "the best evolved network never loses to the rule base when it makes no random move",
        "paper_figure": "the tree of Figure 3, typical of all 20 trials",
        "book": f"{sum(paper)} of {len(paper)} trials ({share:.0%}, 95% interval {low:.0%} to {high:.0%})",
        "best": f"{sum(best)} of {len(best)} trials ({best_share:.0%}, {best_low:.0%} to {best_high:.0%}); "
                f"exact score {score[0]:.1f} ({score[1]:.1f} to {score[2]:.1f})",
        "setting": f"{label} {value}",
        "verdict": verdict,
    }]  # fmt: skip
