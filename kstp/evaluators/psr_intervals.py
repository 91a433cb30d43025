"""Confidence intervals of PSR over learners: a percentile bootstrap of the learners' means.

The summary rows of :mod:`kstp.evaluators.psr` (accuracy, micro and macro PSR of a group
of learners) are means over learners; resampling the learners gives their spread.

References
----------
Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13 (the percentile interval).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["bootstrap", "PROGRESS_EVERY_S"]

#: The figures :func:`bootstrap` gives an interval for.
_SPREAD = ("accuracy", "psrMicro", "psrMacro")


#: Seconds between two calls of a bootstrap's ``progress`` (a bootstrap shorter than this calls it never).
PROGRESS_EVERY_S = 1.0


def bootstrap(learners: pd.DataFrame, samples: int = 1000, seed: int = 0, level: float = 0.95,
              progress: Callable[[int], None] | None = None) -> dict:
    """Percentile confidence intervals of the mean accuracy, micro and macro PSR over learners.

    Each of ``samples`` resamples draws as many learners as there are, with
    replacement, and takes the means as :func:`summarize` does (a learner without a PSR
    counts in accuracy only); the interval is the ``(1 - level) / 2`` and ``(1 + level) /
    2`` quantiles of the resampled means.

    Parameters
    ----------
    learners : pandas.DataFrame
        Columns ``accuracy``, ``psrMicro``, ``psrMacro`` (NaN where undefined), one row per learner.
    samples : int
        Resamples, at least 2.
    seed : int
        Seed of the resampling.
    level : float
        Confidence level in (0, 1).
    progress : callable, optional
        ``progress(done)``, resamples drawn so far, every :data:`PROGRESS_EVERY_S` seconds and once at the
        end of a bootstrap that called it before (a short one, the default 1,000 resamples, never does).

    Returns
    -------
    dict
        ``<figure>Low`` and ``<figure>High`` for accuracy, psrMicro and psrMacro (None
        where no resample has a value, or for fewer than two learners: a single learner
        has no spread over learners), with ``bootstrapSamples`` and ``ciLevel``.

    Raises
    ------
    ValueError
        On fewer than 2 samples or a level outside (0, 1).

    Examples
    --------
    >>> rows = pd.DataFrame({"accuracy": [0.5, 1.0], "psrMicro": [0.5, float("nan")], "psrMacro": [0.25, 1.0]})
    >>> ci = bootstrap(rows, 200, seed=1)
    >>> ci["accuracyLow"], ci["accuracyHigh"], ci["psrMicroLow"], ci["psrMicroHigh"]
    (0.5, 1.0, 0.5, 0.5)

    References
    ----------
    Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13 (the percentile interval).
    """
    if samples < 2 or not 0 < level < 1:
        raise ValueError(f"a bootstrap needs at least 2 samples and a level in (0, 1); got {samples}, {level}")
    n = len(learners)
    out: dict = {"bootstrapSamples": samples, "ciLevel": level}
    if n < 2:
        return out | {f"{f}{end}": None for f in _SPREAD for end in ("Low", "High")}
    rng = np.random.default_rng(seed)
    values = learners[list(_SPREAD)].to_numpy(np.float64)
    present = ~np.isnan(values)
    stacked = np.hstack([np.nan_to_num(values), present.astype(np.float64)])  # sums, then counts, per figure
    means = np.empty((samples, len(_SPREAD)))
    said, next_at = False, time.monotonic() + PROGRESS_EVERY_S
    with np.errstate(invalid="ignore", divide="ignore"):
        for b in range(samples):  # a resample as how often each learner is drawn: one bincount, one product
            sums = np.bincount(rng.integers(0, n, size=n), minlength=n) @ stacked
            means[b] = sums[:len(_SPREAD)] / sums[len(_SPREAD):]
            if progress is not None and b % 1024 == 1023 and time.monotonic() >= next_at:
                progress(b + 1)
                said, next_at = True, time.monotonic() + PROGRESS_EVERY_S
    if said:
        progress(samples)
    low, high = (1 - level) / 2, (1 + level) / 2
    for j, figure in enumerate(_SPREAD):
        column = means[:, j][~np.isnan(means[:, j])]
        out[f"{figure}Low"] = float(np.quantile(column, low)) if len(column) else None
        out[f"{figure}High"] = float(np.quantile(column, high)) if len(column) else None
    return out
