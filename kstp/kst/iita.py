"""Prerequisite relations learned from response data: item tree analysis (ITA) and inductive ITA.

Both count, for every ordered item pair (p, q), the learners who solved q but not p:
counterexamples to "p is a prerequisite of q" (b[p, q]). ITA (Van Leeuwe 1974; Schrepp
1999; pks::ita) keeps the pairs with at most L counterexamples, for a threshold L at
which that relation is transitive, chosen to minimise the discrepancy between the data
and the knowledge space of the relation. IITA (Schrepp 2003; Sargin & Ünlü 2009; R
DAKS) builds a chain of transitive relations by raising the tolerance step by step and
picks the one whose expected counterexamples, under a single error rate, fit b best
(``diff``), in three variants: original, corrected and minimised corrected (DAKS's
``v = 3, 2, 1``).

Assumes complete 0/1 response matrices (learners x items). Pairs are (p, q) with p the
prerequisite, i.e. DAKS's implication (i, j) "solving j implies solving i".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kstp.kst.blim import BlimError
from kstp.kst.spaces import KnowledgeSpace

__all__ = ["counterexamples", "iita", "IitaResult", "ita", "ItaResult", "IITA_VARIANTS", "diff_and_rate"]

#: DAKS's variant numbers: 1 minimised corrected (Sargin & Ünlü 2009), 2 corrected, 3 original.
IITA_VARIANTS = {1: "minimized corrected", 2: "corrected", 3: "original"}


def counterexamples(responses: np.ndarray) -> np.ndarray:
    """b[p, q]: how many learners solved q but not p (0 on the diagonal).

    >>> counterexamples(np.array([[1, 0], [0, 1], [1, 1]])).tolist()
    [[0, 1], [1, 0]]
    """
    r = np.asarray(responses, dtype=np.int64)
    return (1 - r).T @ r


def _transitive(relation: np.ndarray) -> bool:
    """Whether a boolean relation (reflexive or not) is transitive: p<q, q<s imply p<s."""
    r = relation.astype(np.int64)
    return bool(np.all(relation[(r @ r) > 0]))


# ---- item tree analysis ---------------------------------------------------------------------
@dataclass
class ItaResult:
    """ITA's threshold, the relation it selects and that relation's knowledge space."""

    threshold: int
    transitive_thresholds: list[int]
    counterexamples: np.ndarray  # (items, items)
    relation: np.ndarray  # (items, items) bool, reflexive: relation[p, q] = p is a prerequisite of q
    states: np.ndarray | None  # (states, items) uint8
    discrepancy: dict[str, float] | None  # fit, complexity, total


def _space_states(relation: np.ndarray, limit: int) -> np.ndarray:
    n = len(relation)
    names = [str(i) for i in range(n)]
    pairs = [(names[p], names[q]) for p, q in zip(*np.nonzero(relation), strict=True) if p != q]
    states = KnowledgeSpace.build(names, pairs).states(limit)
    out = np.zeros((len(states), n), dtype=np.uint8)
    for row, state in enumerate(states):
        out[row, [int(i) for i in state]] = 1
    return out


#: States per block of the distance matrix: memory follows the block (patterns x 4096 x 4 bytes
#: for each of three arrays), not the space, which may hold hundreds of thousands of states.
DISTANCE_BLOCK = 4096


def _discrepancy(responses: np.ndarray, states: np.ndarray) -> tuple[float, float]:
    """pks: mean over patterns of the least distance to a state (fit), and over states to a pattern."""
    r = responses.astype(np.int32)
    to_state = np.full(len(r), np.iinfo(np.int32).max)
    to_pattern = 0
    for start in range(0, len(states), DISTANCE_BLOCK):
        k = states[start:start + DISTANCE_BLOCK].astype(np.int32)
        d = r @ (1 - k).T + (1 - r) @ k.T
        np.minimum(to_state, d.min(axis=1), out=to_state)
        to_pattern += int(d.min(axis=0).sum())
    return float(to_state.mean()), to_pattern / len(states)


def ita(responses: np.ndarray, threshold: int | None = None, search: str = "local",
        space_limit: int = 200_000) -> ItaResult:
    """Item tree analysis as pks::ita (with ``makeK = TRUE``).

    Parameters
    ----------
    responses : ndarray (learners, items), 0/1
    threshold : int, optional
        Accept at most this many counterexamples; by default searched: from the largest
        transitive threshold down, ``local`` stops when the total discrepancy (fit +
        complexity) gets worse, ``global`` tries all and keeps the least.
    space_limit : int
        Refuse a relation whose knowledge space has more states.

    Raises
    ------
    BlimError
        When ``threshold`` gives an intransitive relation, or ``search`` is unknown.
    TooManyStatesError
        When a space on the way has more than ``space_limit`` states.

    Examples
    --------
    a is solved by everyone who solves b: one counterexample pair, threshold 0.

    >>> r = np.array([[1, 1], [1, 0], [0, 0], [1, 0]])
    >>> result = ita(r)
    >>> result.threshold, result.relation.astype(int).tolist()
    (0, [[1, 1], [0, 1]])

    References
    ----------
    Van Leeuwe 1974, "Item tree analysis"; Schrepp 1999, Mathematical Social Sciences
    38(3), 361-375, doi:10.1016/S0165-4896(99)00025-6.
    """
    if search not in ("local", "global"):
        raise BlimError(f"unknown ITA search {search!r}; use local or global")
    responses = np.asarray(responses, dtype=np.uint8)
    b = counterexamples(responses)
    levels = [int(v) for v in np.unique(b) if _transitive(b <= v)]

    def total(level: int) -> float:
        return sum(_discrepancy(responses, _space_states(b <= level, space_limit)))

    if threshold is None:
        candidates = levels[::-1]
        threshold = candidates[0]
        if len(candidates) > 1:
            best = total(candidates[0])
            for previous, level in zip(candidates, candidates[1:], strict=False):
                value = total(level)
                if search == "local" and best < value:
                    threshold = previous  # pks: the level before the first worse one
                    break
                if best > value:
                    best, threshold = value, level
    relation = b <= threshold
    if not _transitive(relation):
        raise BlimError(f"the relation with at most {threshold} counterexamples is not transitive; "
                        f"transitive thresholds: {', '.join(map(str, levels))}")
    states = _space_states(relation, space_limit)
    fit, complexity = _discrepancy(responses, states)
    return ItaResult(threshold, levels, b, relation, states,
                     {"fit": fit, "complexity": complexity, "total": fit + complexity})


# ---- inductive item tree analysis -------------------------------------------------------------
@dataclass
class IitaResult:
    """IITA's selected relation (irreflexive pairs), its error rate and every candidate's fit."""

    variant: int
    relation: np.ndarray  # (items, items) bool, relation[p, q] = p is a prerequisite of q, p != q
    error_rate: float
    diff: np.ndarray  # (candidates,)
    error_rates: np.ndarray  # (candidates,)
    candidates: list[np.ndarray]
    selected: int  # index into candidates


def _candidates(b: np.ndarray) -> list[np.ndarray]:
    """DAKS's ind_gen: the inductively generated chain of transitive relations."""
    n = len(b)
    off = ~np.eye(n, dtype=bool)
    accepted = (b == b.min()) & off
    chain = [accepted.copy()]
    for level in np.unique(b[b > 0]):
        added = (b <= level) & off & ~accepted
        while True:  # drop added pairs that would break transitivity, until none does
            both = accepted | added
            drop = np.zeros_like(added)
            for i, j in zip(*np.nonzero(added), strict=True):
                # (i, j) with (j, h) but not (i, h); or with (h, i) but not (h, j); h not i or j
                h = np.ones(n, dtype=bool)
                h[[i, j]] = False
                if np.any(h & both[j] & ~both[i]) or np.any(h & both[:, i] & ~both[:, j]):
                    drop[i, j] = True
                    both[i, j] = False
            if not drop.any():
                break
            added &= ~drop
        accepted = accepted | added
        chain.append(accepted.copy())
    unique: list[np.ndarray] = []
    for relation in chain:
        if relation.any() and not any(np.array_equal(relation, u) for u in unique):
            unique.append(relation)
    return unique


def diff_and_rate(b: np.ndarray, p: np.ndarray, n: float, relation: np.ndarray, variant: int) -> tuple[float, float]:
    """IITA's ``diff`` of one relation and its error rate, from counterexamples and solution counts.

    ``b`` (items, items) and ``p`` (items,) as counts of ``n`` learners, or as relative
    frequencies with ``n = 1`` (``diff`` is then divided by n^2); ``relation[p, q]``: p is a
    prerequisite of q (irreflexive). The formulas are in :func:`iita`'s Notes.
    """
    diff, gamma = _diff_and_rate(b, p, n, relation, variant)
    return float(diff), float(gamma)


def _diff_and_rate(b, p, n, relation, variant):
    """:func:`diff_and_rate` in the arrays' own type (complex for the complex-step derivative)."""
    m = len(p)
    off = ~np.eye(m, dtype=bool)
    a = relation & off
    pi, pj = p[:, None] * np.ones(m), np.ones(m)[:, None] * p  # pi[p, q] = p_p, pj[p, q] = p_q
    reverse = a.T & ~a & off  # (q, p) in A, (p, q) not
    if variant == 1:
        x1 = (-2 * b * pi + 2 * pi * pj - 2 * pi ** 2)[reverse].sum()
        x2 = (-2 * b * pj)[a].sum()
        x3 = (2 * pi ** 2)[reverse].sum()
        x4 = (2 * pj ** 2)[a].sum()
        gamma = -(x1 + x2) / (x3 + x4)
    else:
        gamma = (b / pj)[a].mean()
    expected = np.where(a, gamma * pj, (1 - pi / n) * pj)
    if variant == 3:
        expected = np.where(a, expected, expected * (1 - gamma))
    else:
        expected = np.where(reverse, pj - pi + pi * gamma, expected)
    expected[~off] = 0
    return ((b - expected) ** 2).sum() / (m * m - m), gamma


def iita(responses: np.ndarray, variant: int = 1) -> IitaResult:
    """Inductive item tree analysis as R DAKS's ``iita(dataset, v)``.

    Parameters
    ----------
    responses : ndarray (learners, items), 0/1
    variant : {1, 2, 3}
        1 minimised corrected (the recommended one), 2 corrected, 3 original.

    Returns
    -------
    IitaResult
        The candidate with the least ``diff`` (the first on ties).

    Raises
    ------
    BlimError
        On an unknown variant, fewer than 2 items, no learner or no item solved, or
        (variants 2 and 3, as DAKS) an item nobody solved.

    Examples
    --------
    Everyone who solves b solves a, and a is easier: a is learned as a prerequisite of b.

    >>> r = np.array([[1, 1], [1, 0], [0, 0], [1, 0], [1, 1]])
    >>> iita(r).relation.astype(int).tolist()
    [[0, 1], [0, 0]]

    Notes
    -----
    With p_q the number of learners solving q, N learners, m items and a candidate
    relation A, the expected counterexamples are gamma p_q for (p, q) in A; (1 - p_p /
    N) p_q for pairs unrelated either way; for (q, p) in A but not (p, q): p_q - p_p +
    gamma p_p (corrected, minimised) or (1 - p_p / N) p_q (1 - gamma) (original).
    diff = sum (b - expected)^2 / (m^2 - m). gamma is the mean of b[p, q] / p_q over A
    (original, corrected), or the least-squares rate (minimised corrected; Sargin &
    Ünlü 2009, eq. for gamma*).

    References
    ----------
    Sargin & Ünlü 2009, "Inductive item tree analysis: corrections, improvements, and
    comparisons", Mathematical Social Sciences 58(3), 376-392,
    doi:10.1016/j.mathsocsci.2009.06.001. Ünlü & Sargin 2010, DAKS, J. Stat. Softw. 37(2).
    """
    if variant not in IITA_VARIANTS:
        raise BlimError(f"unknown IITA variant {variant!r}; use 1 (minimized corrected), 2 (corrected), 3 (original)")
    r = np.asarray(responses, dtype=np.int64)
    n, m = r.shape
    if m < 2 or n < 1:  # no candidate relation to choose among, or nothing to count on
        raise BlimError(f"IITA needs at least 2 items and 1 learner; got {m} item{'s' * (m != 1)} and {n} "
                        f"learner{'s' * (n != 1)}")
    if not r.any():
        raise BlimError("no learner solved any item: IITA has no counterexample rate to estimate")
    b = counterexamples(r).astype(np.float64)
    if variant != 1 and (b.sum(axis=0) == 0).any():
        raise BlimError("each item must be solved at least once (IITA corrected and original variants)")
    p = r.sum(axis=0).astype(np.float64)
    candidates = _candidates(b.astype(np.int64))
    diffs, rates = np.empty(len(candidates)), np.empty(len(candidates))
    for c, a in enumerate(candidates):
        diffs[c], rates[c] = diff_and_rate(b, p, n, a, variant)
    best = int(np.argmin(diffs))
    return IitaResult(variant, candidates[best], float(rates[best]), diffs, rates, candidates, best)
