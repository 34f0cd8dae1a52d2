"""Means with 95% confidence limits across independent runs (chapter 7, used by every system's curves)."""

from __future__ import annotations

import math

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
