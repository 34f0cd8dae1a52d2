"""The one verdict rule: how the book decides whether a paper's claim comes back (chapter 20).

A system states each of its papers' headline claims as a :class:`Claim` before any data is read: the measure, its
range, the threshold the paper's figure sets, and the direction of the test. The evidence is a :class:`Cell` per
setting tried, each a :class:`Sample` of runs (seeds 1 to 10 or 20), labelled by what it changes from the paper's
setting: nothing (``"paper"``), a detail the paper leaves open (``"open reading"``) or a setting it states
(``"stated setting"``). :func:`verdict` applies the rule and names one of :data:`CATEGORIES`:

1. If the threshold lies beyond what any player can reach (the claim's :class:`Bound`), *impossible as stated*.
2. A cell *gives the claim* when its whole 95% interval lies on the claimed side of the threshold.
3. If the paper's own cell gives it, *reproduces*, unless its control (the same cell without the claimed cause)
   gives it too: then *explained by another cause*.
4. Otherwise the other cell with the best estimate is the candidate. Chosen as the best of many, it is judged only on
   held-out seeds that did not choose it (its ``confirmation``; a candidate without one is an error). If the
   confirmation gives the claim, *reproduces under an open reading* or *returns only when a stated setting is
   changed* (or *explained by another cause*, by its control); if not, *not under any setting tried*.

The rule also reports, for the candidate, its p value on the seeds that chose it corrected (Holm) for the number of
cells it was chosen from. Intervals are those of :mod:`evolving_ttt.statistics`: Wilson for shares of runs,
bootstrap (BCa) for means and differences of means, so that none leaves its measure's range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from evolving_ttt.statistics import (
    difference_interval,
    holm_adjusted,
    mean_interval,
    permutation_p_value,
    share_interval,
    share_p_value,
)

CATEGORIES = {
    "reproduces": "the paper's own setting gives the claim",
    "reproduces under an open reading": "a setting that reads a detail the paper leaves open gives the claim, on "
                                        "held-out seeds",
    "returns only when a stated setting is changed": "only a setting that changes what the paper states gives the "
                                                     "claim, on held-out seeds",
    "explained by another cause": "the figure returns, but a control without the claimed cause reaches it too",
    "not under any setting tried": "no setting tried gives the claim (the best on held-out seeds)",
    "impossible as stated": "no player could reach the paper's figure",
}  # fmt: skip
"""The verdicts the rule can give, with what each means."""

HELD_OUT_RUNS = 20
"""The fewest runs on held-out seeds a confirmation needs."""

CHANGES = ("paper", "open reading", "stated setting")
"""What a cell changes from the paper's setting."""


@dataclass(frozen=True)
class Sample:
    """The runs of one cell on one measure.

    ``kind`` is ``"share"`` (values 0 or 1: the share of runs meeting a condition, Wilson interval), ``"mean"``
    (bootstrap interval of the mean) or ``"difference"`` (the mean of ``values`` minus that of ``others``, two
    independent groups of runs). ``seeds`` says which seeds ran, in words ("1 to 10")."""

    kind: Literal["share", "mean", "difference"]
    values: tuple[float, ...]
    seeds: str
    others: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("share", "mean", "difference"):
            raise ValueError(f"Sample: kind must be 'share', 'mean' or 'difference'; got {self.kind!r}")
        if not self.values or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in self.values):
            raise ValueError(f"Sample: values must be one or more finite numbers; got {self.values!r:.80}")
        if self.kind == "share" and not all(v in (0, 1) for v in self.values):
            raise ValueError("Sample: a share's values are 0 or 1 (a run meets the condition or not)")
        if (self.kind == "difference") != bool(self.others):
            raise ValueError("Sample: a difference needs the second group (others), and only a difference has one")

    @property
    def n(self) -> int:
        """How many runs (of the first group, for a difference)."""
        return len(self.values)

    def interval(self) -> tuple[float, float, float]:
        """The estimate with its 95% interval."""
        if self.kind == "share":
            return share_interval(int(sum(self.values)), self.n)
        if self.kind == "difference":
            return difference_interval(self.values, self.others)
        return mean_interval(self.values)

    def p_value(self, threshold: float) -> float:
        """One-sided p value of "the measure exceeds ``threshold``": exact binomial for a share, a sign-flip or
        permutation test for a mean or a difference (:func:`evolving_ttt.statistics.permutation_p_value`)."""
        if self.kind == "share":
            return share_p_value(int(sum(self.values)), self.n, threshold)
        return permutation_p_value(self.values, threshold, self.others if self.kind == "difference" else None)


def run_sample(runs, values, kind: str = "mean", others=()) -> Sample:
    """The :class:`Sample` of a table of runs (anything with a ``seed`` column, such as a sweep table): ``values``
    names one of its columns or gives one number per run, ``others`` the second group's numbers of a difference;
    the seeds are those of the runs."""
    picked = runs[values] if isinstance(values, str) else values
    return Sample(kind, tuple(float(v) for v in picked), f"{min(runs['seed'])} to {max(runs['seed'])}",
                  tuple(float(v) for v in others))


@dataclass(frozen=True)
class Measure:
    """A claim's measure: its name in words, its range, and the digits it is printed with."""

    name: str
    low: float
    high: float
    digits: int = 2
    unit: str = ""

    def text(self, value: float) -> str:
        """A value of the measure as printed: a share as a percentage, else with :attr:`digits` digits."""
        return f"{value:.0%}" if self.unit == "%" else f"{value:.{self.digits}f}{self.unit}"


@dataclass(frozen=True)
class Cell:
    """One setting tried: its words, what it changes, its sample, and (for a candidate) its confirmation on
    held-out seeds and its control (the same measure with the claimed cause left out), when the claim has one;
    ``note`` says what a verdict that rests on the cell should add (another view of the same runs)."""

    setting: str
    change: Literal["paper", "open reading", "stated setting"]
    sample: Sample
    confirmation: Sample | None = None
    control: Sample | None = None
    confirmation_control: Sample | None = None
    confirm_command: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.change not in CHANGES:
            raise ValueError(f"Cell {self.setting!r}: change must be one of {', '.join(CHANGES)}; got {self.change!r}")


@dataclass(frozen=True)
class Bound:
    """What no player can exceed on the claim's measure, and how it is known (in words)."""

    value: float
    reason: str


@dataclass(frozen=True)
class Claim:
    """A paper's headline claim, stated before any data is read.

    The claim holds where the measure is ``at least`` (or ``above``) ``threshold``; ``cells`` are every setting
    tried (the first, if any, the paper's own); ``bound``, if known, the most any player can reach; ``control``
    says in words what a cell's control is ("generation 1's champions", for a claim about evolution)."""

    paper: str
    claim: str
    paper_figure: str
    measure: Measure
    threshold: float
    direction: Literal["at least", "above"]
    cells: tuple[Cell, ...] = ()
    bound: Bound | None = None
    control: str = ""
    chapter: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("at least", "above"):
            raise ValueError(f"Claim {self.claim!r}: direction must be 'at least' or 'above'; got {self.direction!r}")
        if not self.measure.low <= self.threshold <= self.measure.high:
            raise ValueError(f"Claim {self.claim!r}: the threshold {self.threshold} lies outside the measure's range "
                             f"{self.measure.low} to {self.measure.high}")  # fmt: skip
        if sum(cell.change == "paper" for cell in self.cells) > 1:
            raise ValueError(f"Claim {self.claim!r}: at most one cell is the paper's setting")
        if not self.cells and self.bound is None:
            raise ValueError(f"Claim {self.claim!r}: a claim needs cells to judge, or a bound")

    def gives(self, sample: Sample) -> bool:
        """Whether the whole 95% interval of ``sample`` lies on the claimed side of the threshold."""
        _, low, _ = sample.interval()
        return low >= self.threshold if self.direction == "at least" else low > self.threshold


@dataclass(frozen=True)
class Verdict:
    """What :func:`verdict` found: the category, the cell it rests on (``None`` for a bound), the interval it rests
    on, how many cells were tried (the other settings, for a candidate), the candidate's Holm-adjusted p value
    among them, and the reason in words."""

    category: str
    cell: Cell | None
    interval: tuple[float, float, float] | None
    sample: Sample | None
    cells_tried: int
    holm_p: float | None
    reason: str = field(default="")


def interval_text(measure: Measure, sample: Sample) -> str:
    """A sample's estimate and 95% interval in words, within the measure's range: "17 of 20 runs (85%, 95% interval
    64% to 95%)", "47.4 (95% interval 45.9 to 48.6; 20 runs)", or "50.0 in all 20 runs" when every run gave the same
    value. Raises ``ValueError`` if the interval leaves the measure's range (it cannot, by construction)."""
    estimate, low, high = sample.interval()
    for value in (estimate, low, high):
        if not math.isnan(value) and not measure.low - 1e-12 <= value <= measure.high + 1e-12:
            raise ValueError(f"{measure.name}: {value} lies outside the measure's range {measure.low} to "
                             f"{measure.high}")  # fmt: skip
    runs = f"{sample.n} runs" if sample.kind != "difference" else f"{sample.n} and {len(sample.others)} runs"
    if sample.kind == "share":
        return f"{int(sum(sample.values))} of {sample.n} runs ({estimate:.0%}, 95% interval {low:.0%} to {high:.0%})"
    if math.isnan(low):
        return f"{measure.text(estimate)} (one run: no interval)"
    if low == high:
        return f"{measure.text(estimate)} in all {runs}"
    sign = "+" if sample.kind == "difference" and estimate > 0 else ""
    return f"{sign}{measure.text(estimate)} (95% interval {measure.text(low)} to {measure.text(high)}; {runs})"


def verdict(claim: Claim) -> Verdict:
    """The one verdict rule (see the module's docstring) applied to ``claim``.

    Raises
    ------
    ValueError
        If the candidate cell (the best other cell, when the paper's does not give the claim) has no confirmation
        on held-out seeds, naming the command that makes one.
    """
    bound = claim.bound
    if bound is not None and claim.threshold > bound.value:
        reason = f"the paper's figure needs {claim.measure.text(claim.threshold)}, but {bound.reason}"
        return Verdict("impossible as stated", None, None, None, len(claim.cells), None, reason)
    paper = next((cell for cell in claim.cells if cell.change == "paper"), None)
    if paper is not None and claim.gives(paper.sample):
        return _judged(claim, paper, paper.sample, paper.control, 1, None)
    others = [cell for cell in claim.cells if cell.change != "paper"]
    if not others:
        return Verdict("not under any setting tried", paper, paper.sample.interval() if paper else None,
                       paper.sample if paper else None, len(claim.cells), None,
                       "the paper's setting does not give it, and no other setting was tried")  # fmt: skip
    estimates = [cell.sample.interval()[0] for cell in others]
    best = max(range(len(others)), key=lambda i: (estimates[i], -i))  # ties: the cell listed first
    candidate = others[best]
    holm = holm_adjusted([cell.sample.p_value(claim.threshold) for cell in others])[best]
    command = candidate.confirm_command or "a sweep of it"
    if candidate.confirmation is None:
        raise ValueError(f"{claim.paper}: {claim.claim!r}: the best other setting, {candidate.setting}, has no "
                         f"confirmation on held-out seeds; run: {command}")  # fmt: skip
    if candidate.confirmation.n < HELD_OUT_RUNS:
        runs = candidate.confirmation.n
        raise ValueError(f"{claim.paper}: {claim.claim!r}: the confirmation of {candidate.setting} has {runs} of "
                         f"its {HELD_OUT_RUNS} held-out runs; resume it: {command}")  # fmt: skip
    return _judged(claim, candidate, candidate.confirmation, candidate.confirmation_control, len(others), holm)


def _judged(claim: Claim, cell: Cell, sample: Sample, control: Sample | None, tried: int, holm: float | None):
    interval = sample.interval()
    side = f"{'at or above' if claim.direction == 'at least' else 'above'} {claim.measure.text(claim.threshold)}"
    where = "the paper's setting" if cell.change == "paper" else f"the best other setting ({cell.setting})"
    seeds = f"seeds {sample.seeds}" if cell.change == "paper" else f"held-out seeds {sample.seeds}"
    if not claim.gives(sample):
        return Verdict("not under any setting tried", cell, interval, sample, tried, holm,
                       f"{where} gives {interval_text(claim.measure, sample)} on {seeds}, an interval not wholly "
                       f"{side}")  # fmt: skip
    if control is not None and claim.gives(control):
        return Verdict("explained by another cause", cell, interval, sample, tried, holm,
                       f"{where} gives {interval_text(claim.measure, sample)} on {seeds}, but {claim.control} "
                       f"reach it too: {interval_text(claim.measure, control)}")  # fmt: skip
    category = {"paper": "reproduces", "open reading": "reproduces under an open reading",
                "stated setting": "returns only when a stated setting is changed"}[cell.change]  # fmt: skip
    return Verdict(category, cell, interval, sample, tried, holm,
                   f"{where} gives {interval_text(claim.measure, sample)} on {seeds}, the whole interval "
                   f"{side}")  # fmt: skip


def verdict_text(claim: Claim, found: Verdict | None = None) -> str:
    """The verdict in one line, as the book and the README print it: the category, then why."""
    found = verdict(claim) if found is None else found
    chosen = ""
    if found.holm_p is not None:
        tried = found.cells_tried
        others = "the only other setting" if tried == 1 else f"the best of {tried} other settings"
        chosen = f" (chosen as {others}; on the seeds that chose it, p = {found.holm_p:.3f} after Holm's correction)"
    note = f"; {found.cell.note}" if found.cell is not None and found.cell.note else ""
    return f"{found.category}: {found.reason}{chosen}{note}"


def _flat(settings: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            flat |= _flat(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = tuple(value) if isinstance(value, list) else value
    return flat


def changed_keys(settings: dict, paper: dict) -> list[str]:
    """The dotted keys whose values differ between a cell's settings and the paper's (or that only one has)."""
    mine, theirs = _flat(settings), _flat(paper)
    return sorted(key for key in mine.keys() | theirs.keys() if mine.get(key, None) != theirs.get(key, None))


def change_of(settings: dict, paper: dict, stated: frozenset[str] | set[str]) -> str:
    """What a cell changes (:data:`CHANGES`): ``"paper"`` if nothing, ``"stated setting"`` if any key the paper
    states (``stated``), ``"open reading"`` otherwise."""
    changed = changed_keys(settings, paper)
    if not changed:
        return "paper"
    return "stated setting" if any(key in stated for key in changed) else "open reading"
