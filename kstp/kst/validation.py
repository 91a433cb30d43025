"""How well a knowledge structure fits response patterns: gamma, VC, DI, DA, and nested fits compared.

Deterministic validation indices of a structure against complete 0/1 response patterns
(Schrepp 1999; kst's ``kvalidate``, kstMatrix's ``kmvalidate``), and the likelihood-ratio
test between nested probabilistic fits (pks's ``anova.blim``). Assumes complete patterns
on the structure's items, in its column order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from kstp.errors import KstpError

__all__ = ["Validation", "validate", "min_distances", "pattern_distances", "deviance_table", "DA_ITEM_LIMIT",
           "BLOCK_CELLS"]

#: Items up to which DA is computed: its reference is every one of the 2^items patterns.
DA_ITEM_LIMIT = 24


@dataclass
class Validation:
    """Validation indices of a structure on response patterns (each as kst / kstMatrix name it).

    Attributes
    ----------
    gamma : float
        (concordant - discordant) / (concordant + discordant) over the surmise pairs
        (kst's ``gamma``; NaN when no pattern is either, e.g. a trivial relation).
    concordant, discordant : int
        Over every pair p < q of the surmise relation (p a prerequisite of q) and every
        pattern: p solved and q not (kst's ``nc``), q solved and p not (``nd``).
    vc : float
        The violational coefficient: discordant / (patterns x non-reflexive surmise pairs)
        (kst's ``vc``; NaN without such pairs).
    di : float
        The discrepancy index: the mean distance (symmetric difference) from a pattern to
        its nearest state (kst's ``di``, kstMatrix's ``DI``).
    distances : list of int
        How many patterns lie at distance 0, 1, ..., items (kstMatrix's ``dist``).
    da : float or None
        The distance agreement coefficient di / dpot (kst's and kstMatrix's ``DA``); None
        above :data:`DA_ITEM_LIMIT` items, NaN when dpot is 0 (every pattern is a state).
    dpot : float or None
        The mean distance of all 2^items patterns to their nearest state.
    """

    gamma: float
    concordant: int
    discordant: int
    vc: float
    di: float
    distances: list[int]
    da: float | None
    dpot: float | None

    def as_dict(self) -> dict:
        """JSON-ready, NaN as None."""
        def clean(x):
            return None if isinstance(x, float) and np.isnan(x) else x
        return {"gamma": clean(self.gamma), "concordant": self.concordant, "discordant": self.discordant,
                "VC": clean(self.vc), "DI": self.di, "DA": clean(self.da), "dpot": self.dpot,
                "distances": self.distances}


#: Cells (patterns x states) of one block of :func:`min_distances`: 16 MiB of float32 per temporary array.
BLOCK_CELLS = 2**22


def min_distances(patterns, states, block: int = 65_536) -> np.ndarray:
    """(patterns,) int: the least symmetric difference from each pattern to a state.

    Patterns go in blocks of at most ``block`` rows and :data:`BLOCK_CELLS` pattern-state
    cells, so memory stays bounded with many states.

    >>> min_distances([[1, 1, 0], [0, 0, 1]], [[0, 0, 0], [1, 0, 0], [1, 1, 1]]).tolist()
    [1, 1]
    """
    r = np.asarray(patterns, dtype=np.float32)
    k = np.asarray(states, dtype=np.float32)
    out = np.empty(len(r), np.int64)
    size_k = k.sum(axis=1)
    block = max(1, min(block, BLOCK_CELLS // max(1, len(k))))
    for start in range(0, len(r), block):
        chunk = r[start:start + block]
        d = chunk.sum(axis=1)[:, None] + size_k[None, :] - 2 * (chunk @ k.T)
        out[start:start + block] = np.rint(d.min(axis=1)).astype(np.int64)
    return out


def pattern_distances(states, n: int) -> np.ndarray:
    """(2^n,) uint8: the least distance from every pattern (bit i: item i) to a state.

    A breadth-first search of the hypercube from the states: each of the 2^n patterns is
    reached once, n neighbours each, so time is O(n 2^n) and memory a byte a pattern,
    whatever the number of states (comparing every pattern with every state is
    O(n 2^n states)). For DA's reference, the mean over all patterns.

    >>> pattern_distances([[0, 0], [1, 1]], 2).tolist()  # 00, 10, 01, 11
    [0, 1, 1, 0]
    """
    bits = np.left_shift(1, np.arange(n, dtype=np.int64))
    dist = np.full(2**n, 255, np.uint8)
    frontier = np.asarray(states, dtype=np.int64).reshape(-1, n) @ bits
    dist[frontier] = 0
    level = 0
    while frontier.size:
        level += 1
        for bit in bits:
            near = frontier ^ bit
            near = near[dist[near] == 255]
            dist[near] = level
        frontier = np.flatnonzero(dist == level)
    return dist


def validate(states, patterns) -> Validation:
    """Gamma, VC, DI and DA of a structure on response patterns.

    Parameters
    ----------
    states : ndarray of shape (S, n), 0/1
        The structure (any family of states; its surmise relation gives gamma and VC).
    patterns : ndarray of shape (N, n), 0/1
        One row per learner (repeated patterns count each time).

    Returns
    -------
    Validation

    Raises
    ------
    KstpError
        When the two have different numbers of items, or there are no patterns or no states.

    Examples
    --------
    A chain {} < {a} < {a, b}: one surmise pair a < b; patterns 10 (concordant), 01
    (discordant, distance 1), 11.

    >>> v = validate([[0, 0], [1, 0], [1, 1]], [[1, 0], [0, 1], [1, 1]])
    >>> v.gamma, v.vc, round(v.di, 4), v.distances, v.da
    (0.0, 0.3333333333333333, 0.3333, [2, 1, 0], 1.3333333333333333)

    Notes
    -----
    gamma and VC count over the surmise relation (p < q when every state holding q holds
    p), as kst's ``kvalidate`` does through ``as.relation``.

    References
    ----------
    Schrepp, M. (1999). On the empirical construction of implications between bi-valued
    test items. *Mathematical Social Sciences*, 38, 361-375 (gamma, VC); Schrepp (1999),
    *Methods of Psychological Research Online* 4(2) (DI, DA). kst 0.5-4 ``kvalidate``;
    kstMatrix 2.3-4 ``kmvalidate``.
    """
    k = np.asarray(states, dtype=np.uint8)
    r = np.asarray(patterns, dtype=np.uint8)
    if k.ndim != 2 or r.ndim != 2 or k.shape[1] != r.shape[1]:
        raise KstpError(f"the structure has {k.shape[-1]} items and the patterns {r.shape[-1]}: give patterns on "
                        "the structure's items")
    if not len(k) or not len(r):
        raise KstpError("no states or no response patterns to validate")
    n = k.shape[1]
    kf = k.astype(np.float64)
    relation = ((1 - kf).T @ kf) == 0  # [p, q]: every state holding q holds p
    np.fill_diagonal(relation, False)
    rf = r.astype(np.float64)
    solved_not = rf.T @ (1 - rf)  # [p, q]: patterns with p solved and q not
    concordant = int(solved_not[relation].sum())
    discordant = int(solved_not.T[relation].sum())
    pairs = int(relation.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        gamma = float(np.float64(concordant - discordant) / np.float64(concordant + discordant))
        vc = float(np.float64(discordant) / np.float64(len(r) * pairs))
    da = dpot = None
    if n <= DA_ITEM_LIMIT:  # every pattern's distance at once; the learners' are looked up
        table = pattern_distances(k, n)
        d = table[r.astype(np.int64) @ np.left_shift(1, np.arange(n, dtype=np.int64))].astype(np.int64)
        dpot = float(table.mean(dtype=np.float64))
    else:
        d = min_distances(r, k)
    distances = np.bincount(d, minlength=n + 1).tolist()
    di = float(d.mean())
    if dpot is not None:
        da = di / dpot if dpot else float("nan")
    return Validation(gamma, concordant, discordant, vc, di, distances, da, dpot)


def deviance_table(*fits) -> list[dict]:
    """The likelihood-ratio tests between nested fits, as pks's ``anova.blim`` prints them.

    Each row has the fit's residual df and deviance (G^2 against the saturated model); from
    the second on, the difference to the row before (``df``, ``deviance``) and its
    chi-square p value. Give the fits from the most restricted to the least.

    Parameters
    ----------
    *fits : BlimFit or SlmFit
        Two or more fits of the same response patterns.

    Returns
    -------
    list of dict
        ``{"model", "residDf", "residDeviance", "df", "deviance", "p"}`` per fit (None
        in the first row's last three).

    Raises
    ------
    KstpError
        With fewer than two fits, or fits of different response patterns.

    References
    ----------
    pks 0.6-0 ``anova.blim`` (Heller & Wickelmaier 2013).
    """
    if len(fits) < 2:
        raise KstpError("a likelihood-ratio test compares two or more fits")
    data = {(np.asarray(f.patterns).tobytes(), np.asarray(f.counts).tobytes()) for f in fits if hasattr(f, "counts")}
    if len(data) > 1:
        raise KstpError("the fits are of different response patterns; compare fits of the same data")
    rows = []
    for i, f in enumerate(fits):
        row = {"model": i + 1, "residDf": int(f.df), "residDeviance": float(f.g2), "df": None, "deviance": None,
               "p": None}
        if i:
            df, dev = fits[i - 1].df - f.df, fits[i - 1].g2 - f.g2
            row.update(df=int(df), deviance=float(dev), p=float(stats.chi2.sf(dev, df)) if df > 0 else None)
        rows.append(row)
    return rows
