"""Means with 95% confidence limits across independent runs (chapter 7, used by every system's curves), and the
intervals of the robustness studies (chapter 20).

- :func:`mean_with_confidence`: the t limits of learning curves, as the papers draw them (chapter 7);
- :func:`mean_interval`: a mean over runs with its 95% bootstrap interval (BCa), which never leaves the range of the
  values themselves, and so never the range of their measure (no "-1.1 draws in 50");
- :func:`difference_interval`: the same for the difference of two groups' means;
- :func:`share_interval`: a share of runs with its Wilson interval, and :func:`share_p_value` its exact one-sided
  binomial test; :func:`permutation_p_value` the one-sided test of a mean or of a difference of means;
- :func:`holm_adjusted`: p values corrected for the number of cells a best one was chosen from.

Everything here gives the same bits on every machine: the bootstrap draws from a seeded generator, its means are
sums of sorted rows, and the normal distribution is computed from the package's portable ``exp`` and ``log``
(:mod:`evolving_ttt.numerics`), never from a processor-dispatched or library-dependent function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from evolving_ttt.game import check_count
from evolving_ttt.numerics import exp_scalar, log_scalar


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (chapter 7).

    For df >= 5 it uses the Cornish-Fisher expansion of Abramowitz and Stegun (26.7.5) around the normal
    quantile 1.959964, accurate to about 1e-4; for df 1 to 4 it returns the tabulated values.
    """
    df = check_count(df, "df")
    if df <= 4:
        return (12.706204736174698, 4.302652729749464, 3.182446305284263, 2.7764451051977987)[df - 1]
    z = 1.959963984540054
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return float(z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4)


def mean_with_confidence(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over trials (axis 0) with approximate 95% confidence limits, ``mean -+ t * sd / sqrt(n)`` (chapter 7)."""
    curves = np.asarray(curves, dtype=float)
    n = curves.shape[0]
    if n < 2:
        raise ValueError("confidence limits need at least 2 trials")
    mean = curves.mean(axis=0)
    half_width = t_quantile_975(n - 1) * curves.std(axis=0, ddof=1) / math.sqrt(n)
    return mean, mean - half_width, mean + half_width


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``values`` with its 95% t interval (which can leave the measure's range: prefer
    :func:`mean_interval`); the interval is NaN for fewer than 2 values."""
    values = _finite_values(values, "t_interval")
    mean = float(values.mean())
    if values.size < 2:
        return mean, math.nan, math.nan
    half = t_quantile_975(values.size - 1) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half, mean + half


def _finite_values(values, name: str) -> np.ndarray:
    try:
        values = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} needs one or more finite numbers; got {values!r:.80}") from None
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"{name} needs one or more finite numbers; got {values!r:.80}")
    return values


# --- The normal distribution, portable ----------------------------------------------------------------------------

_ERFC_COEFFICIENTS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
                      1.48851587, -0.82215223, 0.17087277)  # fmt: skip
"""Chebyshev fit of erfc (Press et al., Numerical Recipes, ``erfcc``): relative error below 1.2e-7 everywhere."""


def normal_cdf(x: float) -> float:
    """The standard normal distribution function, to about 1e-7, from the portable ``exp`` (the bootstrap's
    percentile levels need no more)."""
    z = abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = 0.0
    for coefficient in reversed(_ERFC_COEFFICIENTS[1:]):
        poly = t * (coefficient + poly)
    tail = t * exp_scalar(-z * z + _ERFC_COEFFICIENTS[0] + poly)  # erfc(|x| / sqrt 2)
    return 1.0 - 0.5 * tail if x >= 0 else 0.5 * tail


_ACKLAM = (
    (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
     -3.066479806614716e01, 2.506628277459239e00),
    (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
     -1.328068155288572e01),
    (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
     4.374664141464968e00, 2.938163982698783e00),
    (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00),
)  # fmt: skip
"""Acklam's rational approximations of the normal quantile (relative error below 1.2e-9)."""


def _polynomial(coefficients: Sequence[float], x: float) -> float:
    value = 0.0
    for coefficient in coefficients:
        value = value * x + coefficient
    return value


def normal_quantile(p: float) -> float:
    """The standard normal quantile of ``p`` in (0, 1), to about 1e-9 (Acklam), from the portable ``log``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"normal_quantile needs a probability strictly between 0 and 1; got {p!r}")
    a, b, c, d = _ACKLAM
    if 0.02425 <= p <= 1 - 0.02425:
        q = p - 0.5
        r = q * q
        return q * _polynomial(a, r) / (_polynomial(b, r) * r + 1.0)
    q = math.sqrt(-2.0 * log_scalar(p if p < 0.5 else 1.0 - p))
    value = _polynomial(c, q) / (_polynomial(d, q) * q + 1.0)
    return value if p < 0.5 else -value


# --- Bootstrap intervals -------------------------------------------------------------------------------------------

BOOTSTRAP_RESAMPLES = 9_999
"""How many resamples a bootstrap interval draws."""

BOOTSTRAP_SEED = 2013
"""The seed of every bootstrap's generator, so that an interval is a function of its values alone."""


def _resampled_means(groups: Sequence[np.ndarray]) -> tuple[float, np.ndarray]:
    """The statistic (one group's mean, or the first group's mean minus the second's) and its bootstrap values.

    Each resample is sorted before it is summed, and the statistic itself is the first row of the same sum, so a
    resample holding the same values as the data gives exactly the same number (on every machine)."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    found = []
    for values in groups:
        n = values.size
        rows = np.empty((BOOTSTRAP_RESAMPLES + 1, n))
        rows[0] = values
        rows[1:] = values[rng.integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))]
        rows.sort(axis=1)
        found.append(np.add.reduce(rows, axis=1) / n)
    means = found[0] - found[1] if len(found) == 2 else found[0]
    return float(means[0]), means[1:]


def _acceleration(groups: Sequence[np.ndarray]) -> float:
    """The BCa acceleration from the jackknife: every value of every group left out in turn."""
    leave_out = []
    for k, values in enumerate(groups):
        others = [float(np.mean(g)) for j, g in enumerate(groups) if j != k]
        for i in range(values.size):
            mean = math.fsum(np.delete(values, i)) / (values.size - 1)
            leave_out.append(mean if k == 0 else -mean)
            if len(groups) == 2:
                leave_out[-1] += -others[0] if k == 0 else others[0]
    jack = np.array(leave_out)
    centre = math.fsum(jack) / jack.size
    spread = math.fsum((centre - jack) ** 2)
    return 0.0 if spread == 0 else math.fsum((centre - jack) ** 3) / (6.0 * spread**1.5)


def _order_statistic(sorted_values: np.ndarray, level: float) -> float:
    """The ``level`` quantile of sorted values, linearly between the two nearest."""
    position = level * (sorted_values.size - 1)
    low = math.floor(position)
    high = min(low + 1, sorted_values.size - 1)
    fraction = position - low
    return float(sorted_values[low] + fraction * (sorted_values[high] - sorted_values[low]))


def _bca(groups: Sequence[np.ndarray]) -> tuple[float, float, float]:
    statistic, resampled = _resampled_means(groups)
    resampled = np.sort(resampled)
    if resampled[0] == resampled[-1]:
        return statistic, statistic, statistic
    below = (np.count_nonzero(resampled < statistic) + 0.5 * np.count_nonzero(resampled == statistic)) / resampled.size
    levels = (0.025, 0.975)
    if 0.0 < below < 1.0:
        bias = normal_quantile(below)
        a = _acceleration(groups)
        adjusted = []
        for level in levels:
            z = bias + normal_quantile(level)
            adjusted.append(normal_cdf(bias + z / (1.0 - a * z)))
        levels = tuple(adjusted)
    low, high = (_order_statistic(resampled, level) for level in levels)
    return statistic, min(low, statistic), max(high, statistic)


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``values`` with its 95% bootstrap interval (BCa, :data:`BOOTSTRAP_RESAMPLES` resamples).

    The interval lies within the smallest and the largest value, so within the range of whatever they measure; it is
    empty of width when all values are equal. It is NaN for a single value.

    Raises
    ------
    ValueError
        Unless ``values`` is one or more finite numbers.
    """
    values = _finite_values(values, "mean_interval")
    if values.size < 2:
        return float(values[0]), math.nan, math.nan
    return _bca([values])


def difference_interval(first: Sequence[float], second: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``first`` minus the mean of ``second`` (two independent groups of runs), with its 95% bootstrap
    interval (BCa, each group resampled on its own). NaN interval unless both groups have 2 values or more."""
    first = _finite_values(first, "difference_interval")
    second = _finite_values(second, "difference_interval")
    if first.size < 2 or second.size < 2:
        return float(first.mean() - second.mean()), math.nan, math.nan
    return _bca([first, second])


EXACT_FLIPS = 12
"""Up to this many runs a sign-flip test enumerates every pattern of signs; beyond, it draws
:data:`BOOTSTRAP_RESAMPLES` of them."""


def _rows_at_least(rows: np.ndarray, observed: float) -> int:
    """How many rows of ``rows`` have an exactly rounded sum (``math.fsum``) of at least ``observed``.

    numpy's row sums decide every row whose sum lies clearly to one side of ``observed``: a sum of ``n`` terms in any
    order is within ``n * eps * sum(|x|)`` of the exact sum, whatever the processor. Only the rows within that
    distance (and a few units in the last place) are summed again exactly, so the count is the one ``math.fsum``
    gives row by row, on every machine."""
    if rows.shape[0] == 0:
        return 0
    approximate = rows.sum(axis=1)
    scale = np.abs(rows).sum(axis=1)
    band = 2.0 * (rows.shape[1] + 2) * np.finfo(float).eps * scale + 4.0 * np.finfo(float).eps * (
        abs(observed) + np.abs(approximate)) + np.finfo(float).tiny  # fmt: skip
    above = approximate - observed > band
    close = np.flatnonzero(np.abs(approximate - observed) <= band)
    return int(above.sum()) + sum(math.fsum(rows[i]) >= observed for i in close)


def permutation_p_value(values: Sequence[float], threshold: float, others: Sequence[float] | None = None) -> float:
    """One-sided p value of "the mean exceeds ``threshold``" (a sign-flip test of ``values - threshold``, exact up to
    :data:`EXACT_FLIPS` runs) or, with ``others``, of "the mean of ``values`` minus the mean of ``others`` exceeds
    ``threshold``" (a permutation test of the two groups' labels). Sums are exactly rounded (``math.fsum``), so that
    ties count the same on every machine; drawn patterns count as ``(k + 1) / (B + 1)``."""
    first = _finite_values(values, "permutation_p_value")
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    if others is None:
        shifted = first - threshold
        observed = math.fsum(shifted)
        if shifted.size <= EXACT_FLIPS:
            patterns = 1 - 2 * ((np.arange(2**shifted.size)[:, None] >> np.arange(shifted.size)) & 1)
            return _rows_at_least(patterns * shifted, observed) / len(patterns)
        patterns = rng.choice((-1.0, 1.0), size=(BOOTSTRAP_RESAMPLES, shifted.size))
        return (_rows_at_least(patterns * shifted, observed) + 1) / (BOOTSTRAP_RESAMPLES + 1)
    second = _finite_values(others, "permutation_p_value")
    pooled, n = np.concatenate([first, second]), first.size

    def gap(sample: np.ndarray) -> float:
        return math.fsum(sample[:n]) / n - math.fsum(sample[n:]) / (sample.size - n)

    observed = gap(pooled)
    # Each row shuffled in place, in order: the same draws, and so the same rows, as one rng.permutation(pooled)
    # after another.
    samples = rng.permuted(np.tile(pooled, (BOOTSTRAP_RESAMPLES, 1)), axis=1)
    # Each mean within (size + 2) * eps * sum(|x|) / count of its exactly rounded value, the division and the
    # difference a few units in the last place more: only the permutations this close to the observed gap are
    # computed again with exactly rounded sums, as gap() computes them.
    eps = np.finfo(float).eps
    mean_first, mean_second = samples[:, :n].sum(axis=1) / n, samples[:, n:].sum(axis=1) / (pooled.size - n)
    approximate = mean_first - mean_second
    spread = np.abs(mean_first) + np.abs(mean_second) + abs(observed)
    band = (2.0 * (pooled.size + 2) * eps * np.abs(samples).sum(axis=1) / min(n, pooled.size - n)
            + 8.0 * eps * spread + np.finfo(float).tiny)  # fmt: skip
    close = np.flatnonzero(np.abs(approximate - observed) <= band)
    hits = int((approximate - observed > band).sum()) + sum(gap(samples[i]) >= observed for i in close)
    return (hits + 1) / (BOOTSTRAP_RESAMPLES + 1)


def share_p_value(k: int, n: int, threshold: float) -> float:
    """Exact one-sided binomial p value of "the share exceeds ``threshold``" after ``k`` of ``n``:
    P(K >= k) for K ~ Binomial(n, threshold)."""
    share_interval(k, n)  # the checks of k and n
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"share_p_value: the threshold must be a share from 0 to 1; got {threshold!r}")
    return min(1.0, math.fsum(math.comb(n, j) * threshold**j * (1 - threshold) ** (n - j) for j in range(k, n + 1)))


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down correction of p values for the number of tests (cells) they come from, in their order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def share_interval(k: int, n: int) -> tuple[float, float, float]:
    """The share ``k / n`` with its 95% Wilson score interval (for proportions, such as runs that drew).

    Raises
    ------
    ValueError
        Unless ``n`` is a whole number >= 1 and ``k`` a whole number from 0 to ``n``.
    """
    for value, name in ((k, "k"), (n, "n")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"share_interval: {name} must be a whole number; got {value!r}")
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"share_interval needs 0 <= k <= n and n >= 1; got k={k}, n={n}")
    z = 1.959963984540054
    share = k / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return share, low, high
