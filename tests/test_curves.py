"""Learning curves by games played (evolving_ttt.curves, chapter 27): the exact measures of a point, the points of a
curve study, the committed points file and its loader, and the rule that says after how many games most runs'
players never lose."""

import json

import numpy as np
import pandas as pd
import pytest

from evolving_ttt import curves
from evolving_ttt.fogel import study as fogel_study
from evolving_ttt.fogel.system import policy_tables as network_tables
from evolving_ttt.game import O, X
from evolving_ttt.outcomes import outcome_probabilities, perfect_policy, random_policy
from evolving_ttt.rule_base import PAPER_RULES
from evolving_ttt.sweeps import sweep


def test_the_perfect_player_never_loses_and_the_random_player_does():
    perfect = curves.point_measures(perfect_policy(X), perfect_policy(O))
    assert perfect["losses_rule_base"] == 0.0 and perfect["loss_perfect_x"] == 0.0
    assert perfect["loss_perfect_o"] == 0.0
    random = curves.point_measures(random_policy(X), random_policy(O))
    assert random["losses_rule_base"] > 1.0 and random["loss_perfect_x"] > 0.5 and random["loss_perfect_o"] > 0.5
    # against the random player, exactly the arena's outcome tables
    as_x = outcome_probabilities(perfect_policy(X), random_policy(O))
    assert perfect["points_random_x"] == as_x[0] + 0.5 * as_x[1]


def test_losses_to_the_rule_base_are_zero_exactly_when_the_tree_walk_finds_no_loss(champion):
    network, _ = champion
    x_table, o_table = network_tables(network)
    measures = curves.point_measures(x_table, o_table)
    assert (measures["losses_rule_base"] == 0.0) == fogel_study.never_loses(network, PAPER_RULES)
    random = curves.point_measures(random_policy(X), random_policy(O))
    # the expected losses of the 32 games and the protocol score's losses at -10 each agree
    assert 0.0 < random["losses_rule_base"] < 32.0


def _table(shares: dict[str, dict[int, int]]) -> pd.DataFrame:
    """A points table: for each method and length, 20 runs of which ``k`` never lose to the rule base."""
    rows = []
    for method, lengths in shares.items():
        for games, k in lengths.items():
            for seed in range(1, 21):
                never = seed <= k
                rows.append({"study": "curves_test", "system": "test", "method": method, "cell": 0, "seed": seed,
                             "task": 0, "games": games, "fogel_score": 20.0 if never else -10.0,
                             "losses_rule_base": 0.0 if never else 1.5, "loss_perfect_x": 0.0,
                             "loss_perfect_o": 0.25, "points_random_x": 0.9, "points_random_o": 0.7})  # fmt: skip
    return pd.DataFrame(rows)


def test_games_until_takes_the_first_length_from_which_every_longer_one_gives_it():
    table = _table({"steady": {10: 5, 100: 18, 1000: 20}, "fading": {10: 2, 100: 19, 1000: 10},
                    "never": {10: 0, 100: 3}})  # fmt: skip
    found = curves.games_until(table, "losses_rule_base")
    assert found["steady"][0] == 100 and found["steady"][1].startswith("18 of 20 runs")
    assert found["fading"][0] is None and found["fading"][1].startswith("10 of 20 runs")  # the longest length
    assert found["never"][0] is None
    # 14 of 20 is not enough: its Wilson interval reaches below one half; 15 of 20 is
    assert curves.games_until(_table({"m": {10: 14}}), "losses_rule_base")["m"][0] is None
    assert curves.games_until(_table({"m": {10: 15}}), "losses_rule_base")["m"][0] == 10
    with pytest.raises(ValueError, match="measure must be one of"):
        curves.games_until(table, "fogel_score")


def test_the_summary_gives_shares_and_means_with_intervals_in_their_ranges():
    summary = curves.curve_summary(_table({"steady": {10: 5, 100: 20}}))
    assert summary["games"].tolist() == [10, 100] and summary["n"].tolist() == [20, 20]
    assert summary["never_losses_rule_base"].tolist() == [0.25, 1.0]
    assert summary["never_loss_perfect_o"].tolist() == [0.0, 0.0]
    for column in [c for c in summary.columns if c.startswith("never_")]:
        assert summary[column].between(0.0, 1.0).all()
    first = summary.iloc[0]
    assert first["fogel_score_low"] <= first["fogel_score"] <= first["fogel_score_high"]
    assert summary.iloc[1]["fogel_score"] == 20.0


@pytest.fixture(scope="module")
def tiny_study(tmp_path_factory):
    """A curve study of Fogel at 1 and 2 generations (a population of 4), 2 seeds, and its points file."""
    folder = tmp_path_factory.mktemp("curves")
    sweep("fogel", {"generations": [1, 2], "parents": [4], "selection.comparisons": [3], "trials": [1]}, seeds=2,
          db=folder / "curves_tiny.sqlite", workers=1, progress=False)  # fmt: skip
    path = folder / "points.json"
    count = curves.write_learning_curves(path, folder=folder, command="test")
    return folder, path, count


def test_a_curve_study_gives_one_point_per_task_counted_in_games(tiny_study):
    folder, path, count = tiny_study
    table = curves.load_learning_curves(path)
    assert count == len(table) == 4
    # 2P networks x 32 games a generation; the length of training is not part of the method's name
    assert sorted(table["games"].unique()) == [1 * 8 * 32, 2 * 8 * 32]
    assert table["method"].unique().tolist() == ["Fogel (1993)"]
    assert "generations" not in table["method"].iloc[0]
    assert curves.recheck_points(table, [("curves_tiny", 1, 2, 0)], folder=folder) == 1
    tampered = table.copy()
    tampered.loc[(tampered.cell == 1) & (tampered.seed == 2), "fogel_score"] += 1e-12
    with pytest.raises(ValueError, match="fogel_score"):
        curves.recheck_points(tampered, [("curves_tiny", 1, 2, 0)], folder=folder)


def test_writing_the_points_refuses_to_replace_a_study_it_reads(tiny_study):
    folder, _, _ = tiny_study
    before = (folder / "curves_tiny.sqlite").read_bytes()
    with pytest.raises(ValueError, match="curve study this reads"):
        curves.write_learning_curves(folder / "curves_tiny.sqlite", folder=folder)
    assert (folder / "curves_tiny.sqlite").read_bytes() == before
    with pytest.raises(ValueError, match="no curve study"):
        curves.write_learning_curves(folder / "x.json", folder=folder / "nothing")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="other"), "format must be"),
        (lambda d: d.update(version=2), "version must be 1"),
        (lambda d: d.update(measures=["fogel_score"]), "measures must be"),
        (lambda d: d.update(points=[]), "points must be a non-empty list"),
        (lambda d: d["points"][0].update(games=0), r"points\[0\]: games must be a whole number >= 1"),
        (lambda d: d["points"][1].update(loss_perfect_x=1.5), r"points\[1\]: loss_perfect_x must lie from 0 to 1"),
        (lambda d: d["points"][0].pop("method"), r"points\[0\]: method must be a non-empty text"),
        (lambda d: d["points"][0].update(extra=1), "unknown field 'extra'"),
        (lambda d: d["points"][2].update(fogel_score="high"), "fogel_score must be a finite number"),
    ],
)
def test_the_loader_names_what_is_wrong(tiny_study, tmp_path, change, message):
    _, path, _ = tiny_study
    document = json.loads(path.read_text())
    change(document)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=message):
        curves.load_learning_curves(broken)


def test_the_committed_points_file_holds_every_curve_study():
    table = curves.load_learning_curves()
    assert set(table["study"]) == {db.stem for db in curves.curve_studies()}
    assert (table.groupby(["method", "games"])["seed"].nunique() == 20).all()
    assert np.isfinite(table[list(curves.CURVE_MEASURES)].to_numpy()).all()
