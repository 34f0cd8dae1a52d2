"""Means with 95% confidence limits across independent runs (chapter 7, used by every system's curves), and the
intervals of the robustness studies (chapter 20): a mean's t interval and a proportion's Wilson interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from evolving_ttt.game import check_count


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


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``values`` with its 95% t interval; the interval is NaN for fewer than 2 values."""
    try:
        values = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"mean_interval needs one or more finite numbers; got {values!r:.80}") from None
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"mean_interval needs one or more finite numbers; got {values!r:.80}")
    mean = float(values.mean())
    if values.size < 2:
        return mean, math.nan, math.nan
    half = t_quantile_975(values.size - 1) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half, mean + half


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
