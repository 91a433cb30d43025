"""Discriminant validity of RQEval's dimensions (paper 3, §5, Table 9): are the six
dimensions distinct?

:func:`discriminant_validity` correlates every pair of dimensions over (model, dataset)
observations: Pearson r and its p-value, a paired bootstrap interval, and the partial
correlation controlling for CQ. Each pair gets significance stars from p (``***`` <
.001, ``**`` < .01, ``*`` < .05, ``ns``) and a category by ``|r|``: ``independent`` below
the paper's 0.50, ``moderate`` below 0.70, ``strong`` from 0.70 (the 0.70 cut is a
convention of kstp, not the paper's).

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §5 and Table 9 (arXiv 2605.24661).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kstp.errors import InputError
from kstp.evaluators.rqeval.dimensions import DIMENSIONS

__all__ = ["discriminant_validity", "partial_correlation", "significance", "correlation_category"]


def _pearson(x, y, axis=-1):
    xm = x - x.mean(axis=axis, keepdims=True)
    ym = y - y.mean(axis=axis, keepdims=True)
    return (xm * ym).sum(axis=axis) / np.sqrt((xm * xm).sum(axis=axis) * (ym * ym).sum(axis=axis))


def partial_correlation(x: Sequence[float], y: Sequence[float], z: Sequence[float]) -> tuple[float, float]:
    """Pearson correlation of x and y controlling for z, and its two-sided p-value.

    Computed from residuals: x and y are each regressed on z (least squares with an
    intercept) and the residuals correlated. This equals
    ``(r_xy - r_xz r_yz) / sqrt((1 - r_xz²)(1 - r_yz²))``. The p-value uses
    ``t = r sqrt((n - 3)/(1 - r²))`` with n - 3 degrees of freedom.

    >>> r, p = partial_correlation([1, 2, 3, 4, 5, 6], [1, 3, 2, 4, 6, 5], [0, 0, 0, 1, 1, 1])
    >>> round(r, 6)
    0.5
    """
    from scipy import stats
    x, y, z = (np.asarray(v, float) for v in (x, y, z))
    design = np.column_stack([np.ones_like(z), z])
    rx = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
    ry = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    r = float(_pearson(rx, ry))
    df = len(x) - 3
    if df < 1 or np.isnan(r):
        return r, float("nan")
    t = r * np.sqrt(df / max(1 - r * r, 1e-300))
    return r, float(2 * stats.t.sf(abs(t), df))


def significance(p: float) -> str:
    """Table 9's stars of a p-value: ``***`` < .001, ``**`` < .01, ``*`` < .05, else ``ns`` (NaN: "").

    >>> [significance(p) for p in (0.0004, 0.003, 0.049, 0.05, float("nan"))]
    ['***', '**', '*', 'ns', '']
    """
    if p is None or np.isnan(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "ns"


def correlation_category(r: float, independent: float = 0.5, strong: float = 0.7) -> str:
    """Table 9's category of a correlation by ``|r|``: ``independent`` below ``independent``
    (the paper's 0.50), ``moderate`` below ``strong`` (0.70, kstp's convention), else
    ``strong``; ``undefined`` for NaN (a constant dimension).

    >>> [correlation_category(r) for r in (-0.172, 0.5, -0.69, 0.71, float("nan"))]
    ['independent', 'moderate', 'moderate', 'strong', 'undefined']
    """
    if r is None or np.isnan(r):
        return "undefined"
    return "independent" if abs(r) < independent else "moderate" if abs(r) < strong else "strong"


def discriminant_validity(scores: pd.DataFrame, control: str = "cq", resamples: int = 10_000, seed: int = 42,
                          level: float = 0.95, threshold: float = 0.5, strong: float = 0.7) -> pd.DataFrame:
    """Pearson r of all 15 dimension pairs over (model, dataset) observations.

    Parameters
    ----------
    scores : pandas.DataFrame
        One row per observation, columns ``cq`` ... ``ss`` (n >= 4 rows).
    control : str
        The dimension partial correlations control for (paper: CQ).
    resamples : int
        Bootstrap resamples (pairs resampled together) for the percentile interval.
    seed : int
        Seed of the bootstrap generator.
    level : float
        Confidence level of the interval.
    threshold : float
        ``|r|`` below it counts as independent (paper: 0.50).
    strong : float
        ``|r|`` from it is a ``strong`` correlation (kstp's convention, 0.70).

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``a``, ``b``, ``n``, ``r``, ``p`` (scipy.stats.pearsonr),
        ``ciLow``, ``ciHigh`` (percentile interval of the scipy.stats.bootstrap
        distribution; resamples where r is undefined, e.g. one observation drawn n
        times, are left out), ``partialR``, ``partialP`` (controlling for
        ``control``; NaN for pairs that contain it), ``independent`` (``|r|`` <
        threshold; None when r is undefined because a dimension is constant),
        ``stars`` (:func:`significance` of p) and ``category``
        (:func:`correlation_category`): the columns of paper 3, Table 9.

    Raises
    ------
    InputError
        When a dimension column is missing or there are fewer than 4 observations.
    """
    from scipy import stats
    missing = [d for d in DIMENSIONS if d not in scores.columns]
    if missing:
        raise InputError(f"scores lack the column {missing[0]!r}; need {', '.join(DIMENSIONS)}")
    data = scores[list(DIMENSIONS)].astype(float).dropna()
    if len(data) < 4:
        raise InputError(f"{len(data)} complete observations; discriminant validity needs at least 4")
    rows = []
    rng = np.random.default_rng(seed)
    tails = [100 * (1 - level) / 2, 100 * (1 + level) / 2]
    for a, b in itertools.combinations(DIMENSIONS, 2):
        x, y = data[a].to_numpy(), data[b].to_numpy()
        with warnings.catch_warnings():
            # a constant dimension (or resample) has no correlation: NaN, documented above
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", stats.ConstantInputWarning)
            result = stats.pearsonr(x, y)
            boot = stats.bootstrap((x, y), _pearson, paired=True, vectorized=True, n_resamples=resamples,
                                   confidence_level=level, method="percentile", random_state=rng)
            low, high = np.nanpercentile(boot.bootstrap_distribution, tails) \
                if np.isfinite(boot.bootstrap_distribution).any() else (np.nan, np.nan)
            pr, pp = (partial_correlation(x, y, data[control].to_numpy())
                      if control not in (a, b) else (float("nan"), float("nan")))
        r = float(result.statistic)
        rows.append({"a": a, "b": b, "n": len(x), "r": r, "p": float(result.pvalue),
                     "ciLow": float(low), "ciHigh": float(high), "partialR": pr, "partialP": pp,
                     "independent": None if np.isnan(r) else bool(abs(r) < threshold),
                     "stars": significance(float(result.pvalue)),
                     "category": correlation_category(r, threshold, strong)})
    return pd.DataFrame(rows)
