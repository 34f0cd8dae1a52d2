"""The one verdict rule (evolving_ttt.verdicts) and the intervals it rests on (evolving_ttt.statistics): bootstrap
intervals that never leave their measure's range, exact binomial and Holm-corrected p values, each category of the
rule on constructed claims, and every claim of the book judged from the committed databases."""

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_ttt import statistics, studies, verdicts
from evolving_ttt.verdicts import Bound, Cell, Claim, Measure, Sample, change_of, interval_text, verdict

DRAWS = Measure("draws in 50", 0.0, 50.0, digits=1)


def sample(values, seeds="1 to 10", kind="mean", others=()):
    return Sample(kind, tuple(float(v) for v in values), seeds, tuple(float(v) for v in others))


# --- Intervals ------------------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=2, max_size=25))
def test_the_bootstrap_interval_never_leaves_the_values_range(values):
    mean, low, high = statistics.mean_interval(values)
    assert min(values) <= low <= mean <= high <= max(values)


def test_the_bootstrap_interval_is_bca_and_close_to_scipys():
    from scipy import stats

    values = np.random.default_rng(7).normal(size=12)
    mean, low, high = statistics.mean_interval(values)
    found = stats.bootstrap((values,), np.mean, method="BCa", n_resamples=9999, random_state=0).confidence_interval
    assert mean == pytest.approx(values.mean(), abs=1e-15)
    assert low == pytest.approx(found.low, abs=0.03) and high == pytest.approx(found.high, abs=0.03)
    assert statistics.mean_interval(values) == (mean, low, high)  # a function of the values alone


def test_an_interval_of_equal_values_has_no_width_and_one_value_none():
    assert statistics.mean_interval([50.0] * 10) == (50.0, 50.0, 50.0)
    assert math.isnan(statistics.mean_interval([3.0])[1])
    assert interval_text(DRAWS, sample([50.0] * 10)) == "50.0 in all 10 runs"


def test_the_difference_interval_resamples_both_groups():
    first, second = [0.9, 0.92, 0.95, 0.97], [0.5, 0.55, 0.6, 0.58, 0.52]
    difference, low, high = statistics.difference_interval(first, second)
    assert difference == pytest.approx(np.mean(first) - np.mean(second))
    assert min(first) - max(second) <= low < difference < high <= max(first) - min(second)


def test_the_normal_functions_are_accurate():
    assert statistics.normal_quantile(0.975) == pytest.approx(1.959963984540054, abs=1e-8)
    assert statistics.normal_quantile(0.001) == pytest.approx(-3.090232306167813, abs=1e-7)
    assert statistics.normal_cdf(1.0) == pytest.approx(0.8413447460685429, abs=2e-7)
    assert statistics.normal_cdf(-2.5) == pytest.approx(0.006209665325776132, abs=2e-8)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        statistics.normal_quantile(1.0)


def test_the_share_p_value_is_the_exact_binomial_tail():
    exact = sum(Fraction(math.comb(20, j)) / 2**20 for j in range(17, 21))
    assert statistics.share_p_value(17, 20, 0.5) == pytest.approx(float(exact), rel=1e-12)
    assert statistics.share_p_value(0, 10, 0.5) == 1.0
    with pytest.raises(ValueError, match="threshold"):
        statistics.share_p_value(3, 10, 1.5)


def test_holm_corrects_for_the_number_of_cells():
    assert statistics.holm_adjusted([0.005, 0.2, 0.01]) == pytest.approx([0.015, 0.2, 0.02])
    assert statistics.holm_adjusted([0.04, 0.04]) == pytest.approx([0.08, 0.08])


# --- The rule on constructed claims ---------------------------------------------------------------------------------


def claim(*cells, bound=None, threshold=43.0, control=""):
    return Claim("Test (2026)", "draws most games", "43 of 50", DRAWS, threshold, "at least", tuple(cells), bound,
                 control)  # fmt: skip


HIGH, LOW = sample([47, 48, 49, 48, 47, 49, 48, 48, 47, 49]), sample([3, 5, 2, 4, 6, 3, 2, 5, 4, 3])
HELD_HIGH, HELD_LOW = sample([48] * 10 + [47] * 10, "1001 to 1020"), sample([30] * 20, "1001 to 1020")
PART = sample([48] * 5, "1001 to 1005")


def test_the_paper_setting_that_gives_the_claim_reproduces():
    found = verdict(claim(Cell("paper", "paper", HIGH), Cell("other", "open reading", LOW)))
    assert found.category == "reproduces" and found.cell.setting == "paper" and found.holm_p is None


def test_a_control_that_reaches_the_claim_too_explains_it_by_another_cause():
    found = verdict(claim(Cell("paper", "paper", HIGH, control=HIGH), control="generation 1's champions"))
    assert found.category == "explained by another cause" and "generation 1's champions" in found.reason


def test_a_best_other_cell_is_judged_on_its_held_out_seeds():
    opened = verdict(claim(Cell("paper", "paper", LOW), Cell("deep", "open reading", HIGH, HELD_HIGH)))
    assert opened.category == "reproduces under an open reading" and opened.sample is HELD_HIGH
    stated = verdict(claim(Cell("paper", "paper", LOW), Cell("few", "stated setting", HIGH, HELD_HIGH)))
    assert stated.category == "returns only when a stated setting is changed"
    failed = verdict(claim(Cell("paper", "paper", LOW), Cell("deep", "open reading", HIGH, HELD_LOW)))
    assert failed.category == "not under any setting tried" and "1001 to 1020" in failed.reason
    caused = verdict(claim(Cell("paper", "paper", LOW),
                           Cell("deep", "open reading", HIGH, HELD_HIGH, confirmation_control=HELD_HIGH)))  # fmt: skip
    assert caused.category == "explained by another cause"


def test_the_candidate_is_the_best_estimate_and_needs_a_confirmation():
    cells = (Cell("paper", "paper", LOW), Cell("a", "open reading", sample([40] * 10), HELD_LOW),
             Cell("b", "open reading", HIGH, HELD_HIGH), Cell("c", "open reading", sample([30] * 10)))  # fmt: skip
    assert verdict(claim(*cells)).cell.setting == "b"
    with pytest.raises(ValueError, match="no confirmation on held-out seeds; run: python -m"):
        command = "python -m ttt_helpers sweep run x"
        verdict(claim(Cell("paper", "paper", LOW), Cell("b", "open reading", HIGH, confirm_command=command)))
    with pytest.raises(ValueError, match="has 5 of its 20 held-out runs; resume it: python -m"):
        verdict(claim(Cell("paper", "paper", LOW), Cell("b", "open reading", HIGH, PART, confirm_command=command)))


def test_the_holm_p_counts_every_other_cell():
    few = verdict(claim(Cell("paper", "paper", LOW), Cell("b", "open reading", HIGH, HELD_HIGH)))
    middling = [Cell(f"c{i}", "open reading", sample([44, 40, 46] * 3)) for i in range(8)]
    many = verdict(claim(Cell("paper", "paper", LOW), *middling, Cell("b", "open reading", HIGH, HELD_HIGH)))
    assert many.cells_tried == 9 and few.cells_tried == 1
    assert 0 < few.holm_p <= many.holm_p <= 1


def test_a_threshold_beyond_the_bound_is_impossible_as_stated():
    found = verdict(claim(bound=Bound(11.74, "the best response wins 11.74"), threshold=28.0))
    assert found.category == "impossible as stated" and "11.74" in found.reason
    reachable = verdict(claim(Cell("paper", "paper", HIGH), bound=Bound(50.0, "all games")))
    assert reachable.category == "reproduces"


def test_claims_and_samples_refuse_what_the_rule_cannot_read():
    with pytest.raises(ValueError, match="outside the measure's range"):
        claim(Cell("paper", "paper", HIGH), threshold=60.0)
    with pytest.raises(ValueError, match="direction"):
        Claim("T", "c", "f", DRAWS, 43.0, "most", (Cell("paper", "paper", HIGH),))
    with pytest.raises(ValueError, match="needs cells to judge, or a bound"):
        claim()
    with pytest.raises(ValueError, match="at most one cell is the paper's"):
        claim(Cell("paper", "paper", HIGH), Cell("again", "paper", HIGH))
    with pytest.raises(ValueError, match="a share's values are 0 or 1"):
        Sample("share", (0.5, 1.0), "1 to 2")
    with pytest.raises(ValueError, match="finite numbers"):
        Sample("mean", (math.nan,), "1")
    with pytest.raises(ValueError, match="change must be one of"):
        Cell("x", "guess", HIGH)


def test_changes_are_told_apart_by_the_keys_the_paper_states():
    paper = {"generations": 2000, "player": {"view": "mover"}}
    assert change_of(paper, paper, {"generations"}) == "paper"
    assert change_of({"generations": 2000, "player": {"view": "mover", "depth": 3}}, paper, {"generations"}) == (
        "open reading"
    )
    assert change_of({"generations": 500, "player": {"view": "mover", "depth": 3}}, paper, {"generations"}) == (
        "stated setting"
    )


# --- The book's claims, from the committed databases ----------------------------------------------------------------


@pytest.fixture(scope="module")
def book_claims():
    return studies.all_claims()


@pytest.mark.slow
def test_every_claim_is_judged_and_names_a_category(book_claims):
    table = studies.at_a_glance()
    assert len(table) == len(book_claims) >= 9
    assert set(table["verdict"]) <= set(verdicts.CATEGORIES)
    assert "impossible as stated" in set(table["verdict"])


@pytest.mark.slow
def test_every_interval_of_every_claim_lies_in_its_measures_range(book_claims):
    for found in book_claims:
        for cell in found.cells:
            for part in (cell.sample, cell.confirmation, cell.control, cell.confirmation_control):
                if part is not None:
                    estimate, low, high = part.interval()
                    assert found.measure.low <= low <= estimate <= high <= found.measure.high, (found.claim, cell)
                    interval_text(found.measure, part)


@pytest.mark.slow
def test_every_verdict_that_rests_on_another_cell_rests_on_twenty_held_out_seeds(book_claims):
    for found in book_claims:
        judged = verdict(found)
        if judged.cell is not None and judged.cell.change != "paper":
            assert judged.sample is judged.cell.confirmation and judged.sample.n >= 20
            assert judged.sample.seeds == "1001 to 1020"


NUMBER = r"(-?\d+(?:\.\d+)?)"
PERCENT = re.compile(r"(-?\d+(?:\.\d+)?)% to (-?\d+(?:\.\d+)?)%")
BRACKETS = re.compile(r"\[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]")


def test_no_printed_interval_of_draws_in_fifty_or_of_a_share_leaves_its_range():
    """Every "95% interval A to B", "A% to B%" and, on a line of points a game, "[A, B]" the chapters print: A <= B;
    draws of 50 within 0 and 50; percentages within 0 and 100; fitness and points within 0 and 1."""
    import json
    from pathlib import Path

    pattern = re.compile(rf"95% (?:interval )?{NUMBER}(%?) to {NUMBER}(%?)")
    for path in sorted(Path("book").glob("*.ipynb")):
        notebook = json.loads(path.read_text())
        for cell in notebook["cells"]:
            for output in cell.get("outputs", []):
                text = "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
                for line in text.splitlines():
                    for low, percent, high, _ in pattern.findall(line):
                        low, high = float(low), float(high)
                        assert low <= high, (path.name, line)
                        if percent:
                            assert 0 <= low and high <= 100, (path.name, line)
                        if "draws" in line and "50" in line:
                            assert 0 <= low and high <= 50, (path.name, line)
                        if "fitness" in line and "minus" not in line:
                            assert 0 <= low and high <= 1, (path.name, line)
                    for low, high in PERCENT.findall(line):
                        assert 0 <= float(low) <= float(high) <= 100, (path.name, line)
                    if "points a game" in line:
                        for low, high in BRACKETS.findall(line):
                            assert 0 <= float(low) <= float(high) <= 1, (path.name, line)


def test_the_permutation_p_values_are_exact_where_they_can_be():
    assert statistics.permutation_p_value([1.0, 2.0, 3.0, 4.0, 5.0], 0.0) == 1 / 32  # only all signs + reach it
    assert statistics.permutation_p_value([1.0, -1.0], 0.0) == 3 / 4
    two = statistics.permutation_p_value([0.9, 0.95, 0.97], 0.0, [0.5, 0.6, 0.55])
    assert two == pytest.approx(1 / 20, abs=0.01)  # one labelling in C(6, 3) = 20 is as extreme
    many = statistics.permutation_p_value(np.arange(20) - 5.0, 0.0)
    assert 0 < many < 0.01 and many == statistics.permutation_p_value(np.arange(20) - 5.0, 0.0)


def fsum_count(rows, observed):
    """The rows whose exactly rounded sum is at least ``observed``, one ``math.fsum`` at a time."""
    return sum(math.fsum(row) >= observed for row in rows)


def test_rows_are_counted_by_their_exactly_rounded_sums_even_where_numpys_sum_rounds_the_other_way():
    cancelling = np.array([[1e16, 1.0, -1e16]] * 3)
    assert cancelling.sum(axis=1)[0] == 0.0 and math.fsum(cancelling[0]) == 1.0  # numpy loses the 1, fsum keeps it
    assert statistics._rows_at_least(cancelling, 1.0) == fsum_count(cancelling, 1.0) == 3
    rng = np.random.default_rng(7)
    for values in (rng.integers(0, 4, (500, 9)) / 3, rng.integers(0, 10, (500, 25)) / 10, rng.normal(size=(500, 7))):
        signs = rng.choice((-1.0, 1.0), size=values.shape)
        for observed in (0.0, math.fsum(values[0]), math.fsum(values[1] * signs[1]), 1 / 3, -0.1):
            assert statistics._rows_at_least(values * signs, observed) == fsum_count(values * signs, observed)
    assert statistics._rows_at_least(np.empty((0, 4)), 0.0) == 0


@pytest.mark.slow
def test_a_cells_note_follows_the_verdict_that_rests_on_it():
    noted = claim(Cell("paper", "paper", LOW), Cell("few", "stated setting", HIGH, HELD_HIGH, note="on 100: 0.55"))
    assert verdicts.verdict_text(noted).endswith("; on 100: 0.55")
    assert "on 100" not in verdicts.verdict_text(claim(Cell("paper", "paper", HIGH, note="")))
