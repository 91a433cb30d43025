"""IITA in population quantities: what each variant's diff would be if a known BLIM generated the data.

A quasi-order (prerequisite relation) with one careless-error rate and one lucky-guess rate
for every item is a BLIM on its quasi-ordinal space with equally likely states; its
pattern probabilities give the population counterexample proportions b and solution
proportions p, and :func:`kstp.kst.iita.diff_and_rate` gives each competing relation's
population diff and error rate (DAKS's ``pop_iita``; Sargin & Ünlü 2009). The competing
relations come from the inductive generation on the population b, or are given (e.g. a
sample's selection set, :attr:`kstp.kst.iita.IitaResult.candidates`). Assumes a transitive
relation on at most :data:`ITEM_LIMIT` items (all 2^items patterns are listed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kstp.kst.blim import BlimError
from kstp.kst.iita import IITA_VARIANTS, _candidates, diff_and_rate
from kstp.kst.spaces import KnowledgeSpace

__all__ = ["PopulationIita", "population_iita", "ITEM_LIMIT"]

#: Items up to which the population is computed (2^items patterns x states).
ITEM_LIMIT = 16


@dataclass
class PopulationIita:
    """Population IITA (DAKS's ``pop_iita`` names in the comments).

    Attributes
    ----------
    patterns : ndarray of shape (2^items, items), uint8
        Every response pattern, the first item varying slowest (``pop.matrix``).
    probability : ndarray of shape (2^items,)
        Each pattern's population probability (``pop.matrix``'s last column).
    candidates : list of ndarray (items, items) bool
        The competing relations, ``[p, q]``: p is a prerequisite of q (``selection.set``).
    diff, error_rate : ndarray of shape (candidates,)
        Each one's population diff and error rate (``pop.diff``, ``error.pop``).
    """

    variant: int
    patterns: np.ndarray
    probability: np.ndarray
    candidates: list[np.ndarray]
    diff: np.ndarray
    error_rate: np.ndarray


def population_iita(relation, careless: float, guess: float, variant: int = 1,
                    candidates: list | None = None) -> PopulationIita:
    """Population diff of every competing relation under the BLIM of ``relation`` (DAKS's ``pop_iita``).

    Parameters
    ----------
    relation : ndarray of shape (items, items), bool
        ``relation[p, q]``: p is a prerequisite of q; transitive (a quasi-order).
    careless, guess : float
        Every item's careless-error and lucky-guess rate, in [0, 1).
    variant : {1, 2, 3}
        1 minimised corrected, 2 corrected, 3 original.
    candidates : list of ndarray (items, items) bool, optional
        The competing relations; default the inductive generation on the population b
        (DAKS without ``dataset`` and ``A``); a sample's selection set gives DAKS's
        ``dataset =``.

    Returns
    -------
    PopulationIita

    Raises
    ------
    BlimError
        On an unknown variant, rates outside [0, 1), a relation that is not square or not
        transitive, or more than :data:`ITEM_LIMIT` items.

    Examples
    --------
    a < b with no errors: states {}, {a}, {a, b} equally likely; the relation itself fits
    the population exactly, a and b equivalent does not.

    >>> pop = population_iita(np.array([[0, 1], [0, 0]], dtype=bool), 0.0, 0.0)
    >>> pop.probability.round(4).tolist(), [c.astype(int).tolist() for c in pop.candidates]
    ([0.3333, 0.0, 0.3333, 0.3333], [[[0, 1], [0, 0]], [[0, 1], [1, 0]]])
    >>> pop.diff.round(6).tolist()
    [0.0, 0.011111]

    References
    ----------
    Sargin & Ünlü 2009, Mathematical Social Sciences 58(3), 376-392,
    doi:10.1016/j.mathsocsci.2009.06.001; DAKS 2.1-3 ``pop_iita`` (Ünlü & Sargin 2010).
    """
    if variant not in IITA_VARIANTS:
        raise BlimError(f"unknown IITA variant {variant!r}; use 1 (minimized corrected), 2 (corrected), 3 (original)")
    if not (0 <= careless < 1 and 0 <= guess < 1):
        raise BlimError(f"careless {careless!r} and guess {guess!r}: each rate is in [0, 1)")
    rel = np.asarray(relation, dtype=bool)
    m = len(rel)
    if rel.shape != (m, m) or m < 2:
        raise BlimError(f"a relation of shape {rel.shape}: give an items x items matrix of at least 2 items")
    if m > ITEM_LIMIT:
        raise BlimError(f"{m} items: the population lists all 2^items patterns, so at most {ITEM_LIMIT} items")
    closed = rel | np.eye(m, dtype=bool)
    if not np.array_equal((closed.astype(np.int64) @ closed.astype(np.int64)) > 0, closed):
        raise BlimError("the relation is not transitive: population IITA takes a quasi-order (its closure, say)")
    names = [str(j) for j in range(m)]
    space = KnowledgeSpace.build(names, [(names[p], names[q]) for p, q in zip(*np.nonzero(rel), strict=True)
                                         if p != q])
    states = np.array([[names[j] in s for j in range(m)] for s in space.states()], dtype=np.float64)
    patterns = ((np.arange(2**m)[:, None] >> np.arange(m - 1, -1, -1)[None, :]) & 1).astype(np.uint8)
    x = patterns.astype(np.float64)
    # P(R | K): careless on what K holds and R misses, guess on what R holds and K does not
    log_terms = (np.log(careless) if careless else -np.inf, np.log1p(-careless), np.log(guess) if guess else -np.inf,
                 np.log1p(-guess))
    with np.errstate(invalid="ignore"):
        log_p = np.zeros((len(x), len(states)))
        for weight, (rx, kx) in zip(log_terms, (((1 - x), states), (x, states), (x, 1 - states), (1 - x, 1 - states)),
                                    strict=True):
            counts = rx @ kx.T
            log_p = log_p + np.where(counts > 0, counts * weight, 0.0)
    probability = np.exp(log_p).mean(axis=1)
    b = (1 - x).T @ (probability[:, None] * x)
    p = x.T @ probability
    np.fill_diagonal(b, 0.0)
    chain = _candidates(b) if candidates is None else [np.asarray(c, dtype=bool) for c in candidates]
    fitted = [diff_and_rate(b, p, 1.0, c, variant) for c in chain]
    return PopulationIita(variant, patterns, probability, chain, np.array([f[0] for f in fitted]),
                          np.array([f[1] for f in fitted]))
