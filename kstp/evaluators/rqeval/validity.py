"""Discriminant validity of RQEval's dimensions (paper 3, §4.5, Table 9, Figures 4-5): are
the six dimensions distinct?

:func:`discriminant_validity` correlates every pair of dimensions over (model, dataset)
observations: Pearson r and its p-value, a paired bootstrap interval, and the partial
correlation controlling for CQ. Each pair gets significance stars from p (``***`` <
.001, ``**`` < .01, ``*`` < .05, ``ns``), ``independent`` (``|r|`` below the paper's
0.50) and Table 9's interpretation (:func:`correlation_category`). :func:`layer_summary`
reads the table as Figure 5's two layers: outcome (CQ, CS, RS, ES) and trace (LS, SS).

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §4.5, Table 9, Figures 4 and 5 (arXiv 2605.24661).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kstp.errors import InputError
from kstp.evaluators.rqeval.dimensions import DIMENSIONS

__all__ = ["STRUCTURAL", "OUTCOME", "TRACE", "discriminant_validity", "partial_correlation", "significance",
           "correlation_category", "layer_summary"]

#: Table 9's structural pairs (△), dependent by definition or through the shared answer extraction.
STRUCTURAL = {("cq", "cs"): "shared extraction pipeline", ("cq", "rs"): "definitional", ("cq", "es"): "definitional"}
#: Figure 5's layers: dimensions scored from canonical final answers, and from reasoning traces.
OUTCOME, TRACE = ("cq", "cs", "rs", "es"), ("ls", "ss")
#: Below this ``|r|`` a non-significant pair is negligible (✓) rather than weak (∼): kstp's cut (Cohen's
#: 0.1); Table 9 prints no threshold, and its ✓ pairs have |r| <= .083, its ∼ ones >= .229.
NEGLIGIBLE = 0.1


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


def correlation_category(a: str, b: str, r: float, p: float, independent: float = 0.5) -> str:
    """Table 9's interpretation of the pair (a, b) with Pearson r and p-value p.

    ``structural`` (△) for the pairs of :data:`STRUCTURAL`, whatever r is; else
    ``negligible`` (✓) when ``|r|`` < :data:`NEGLIGIBLE` and p >= .05; ``weak`` (∼) below
    ``independent`` (the paper's 0.50); else ``moderate`` (!, "moderate or higher");
    ``undefined`` for NaN (a constant dimension).

    >>> [correlation_category("cq", "es", 0.2, 0.3), correlation_category("ls", "es", 0.001, 0.995),
    ...  correlation_category("cs", "ss", 0.458, 0.014), correlation_category("rs", "ss", 0.637, 0.0001)]
    ['structural', 'negligible', 'weak', 'moderate']

    References
    ----------
    Senol, Agrawal, Liu 2026, Table 9 (column Interpretation) and §4.5.
    """
    if (a, b) in STRUCTURAL or (b, a) in STRUCTURAL:
        return "structural"
    if r is None or np.isnan(r):
        return "undefined"
    if abs(r) < NEGLIGIBLE and not p < 0.05:
        return "negligible"
    return "weak" if abs(r) < independent else "moderate"


def layer_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Figure 5's reading of a :func:`discriminant_validity` table: its pairs by layer block.

    Blocks: ``outcome`` (pairs within CQ, CS, RS, ES), ``LS-outcome`` and
    ``SS-outcome`` (each trace dimension with the outcome ones) and ``LS-SS``.

    Returns
    -------
    pandas.DataFrame
        One row per block: ``block``, ``pairs``, ``rMin`` and ``rMax`` (of r),
        ``significant`` (pairs with p < .05).

    >>> t = pd.DataFrame({"a": ["cq", "cq", "ls"], "b": ["cs", "ls", "ss"], "r": [0.9, 0.1, -0.2],
    ...                   "p": [0.001, 0.6, 0.3]})
    >>> layer_summary(t).values.tolist()
    [['outcome', 1, 0.9, 0.9, 1], ['LS-outcome', 1, 0.1, 0.1, 0], ['LS-SS', 1, -0.2, -0.2, 0]]
    """
    def block(a: str, b: str) -> str:
        trace = [d for d in (a, b) if d in TRACE]
        return "outcome" if not trace else "LS-SS" if len(trace) == 2 else f"{trace[0].upper()}-outcome"
    order = ["outcome", "LS-outcome", "SS-outcome", "LS-SS"]
    blocks = table.assign(block=[block(a, b) for a, b in zip(table["a"], table["b"], strict=True)])
    rows = [{"block": name, "pairs": len(g), "rMin": float(g["r"].min()), "rMax": float(g["r"].max()),
             "significant": int((g["p"] < 0.05).sum())}
            for name in order if len(g := blocks[blocks["block"] == name])]
    return pd.DataFrame(rows, columns=["block", "pairs", "rMin", "rMax", "significant"])


def discriminant_validity(scores: pd.DataFrame, control: str = "cq", resamples: int = 10_000, seed: int = 42,
                          level: float = 0.95, threshold: float = 0.5) -> pd.DataFrame:
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

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``a``, ``b``, ``n``, ``r``, ``p`` (scipy.stats.pearsonr),
        ``ciLow``, ``ciHigh`` (percentile interval of the scipy.stats.bootstrap
        distribution; resamples where r is undefined, e.g. one observation drawn n
        times, are left out), ``partialR``, ``partialP`` (controlling for
        ``control``; NaN for pairs that contain it), ``independent`` (``|r|`` <
        threshold; None when r is undefined because a dimension is constant),
        ``stars`` (:func:`significance` of p) and ``category`` (Table 9's
        interpretation, :func:`correlation_category`): the columns of paper 3, Table 9.

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
                     "category": correlation_category(a, b, r, float(result.pvalue), threshold)})
    return pd.DataFrame(rows)
