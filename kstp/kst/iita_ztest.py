"""Asymptotic tests on IITA's ``diff``: the Z test of one relation's fit, or of two relations against each other.

Under a multinomial model on the response patterns, ``diff / N^2`` (:func:`kstp.kst.iita.iita`)
is a smooth function of the pattern proportions, so by the delta method
sqrt(N) (diff / N^2 - mu) is asymptotically normal with variance g' (diag(rho) - rho rho') g,
g the gradient of diff / N^2 in the proportions rho (Ünlü & Sargin 2008; DAKS's ``z_test``).
The gradient here is exact (a complex-step derivative of diff in the counterexample and
solution frequencies, carried to the patterns through their linear map), so only the
observed patterns enter, and its value has been held to a Monte Carlo of resampled data.
Variants 1 (minimised corrected) and 2 (corrected), as DAKS. Assumes complete 0/1 patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from kstp.kst.blim import BlimError
from kstp.kst.iita import _diff_and_rate

__all__ = ["ZTest", "diff_gradient", "z_test"]

_STEP = 1e-30  # complex step: no cancellation, so any tiny step is exact to rounding


@dataclass
class ZTest:
    """A Z test on IITA's diff (DAKS's ``z_test`` names in the comments).

    Attributes
    ----------
    z : float
        sqrt(N) (d - mu) / sd (``Z.value``), d the diff / N^2 of one relation or the
        difference of two relations' (first minus second).
    p_value : float
        Two-sided (``p.value``).
    conf : tuple of float
        The ``conf_level`` interval for d (``conf``).
    diff : tuple of float
        diff / N^2 of each relation (``diff_value``).
    variance : float
        The asymptotic variance of sqrt(N) d.
    learners : int
    """

    z: float
    p_value: float
    conf: tuple[float, float]
    diff: tuple[float, ...]
    variance: float
    learners: int


def diff_gradient(responses, relation, variant: int = 1) -> tuple[float, np.ndarray, np.ndarray]:
    """diff / N^2 of a relation and its gradient in the proportions of the observed patterns.

    Parameters
    ----------
    responses : ndarray of shape (N, items), 0/1
    relation : ndarray of shape (items, items), bool
        ``relation[p, q]``: p is a prerequisite of q (DAKS's implication (p, q)).
    variant : {1, 2}

    Returns
    -------
    diff : float
    patterns : ndarray of shape (P, items)
        The distinct observed patterns.
    gradient : ndarray of shape (P,)
        d diff / d rho of each pattern.
    """
    r = np.asarray(responses, dtype=np.int64)
    n_learners, m = r.shape
    patterns, counts = np.unique(r, axis=0, return_counts=True)
    rho = counts / n_learners
    x = patterns.astype(np.float64)
    b = (1 - x).T @ (rho[:, None] * x)  # b[p, q]: proportion solving q, not p
    p = x.T @ rho
    rel = np.asarray(relation, dtype=bool)
    diff = _diff_and_rate(b, p, 1.0, rel, variant)[0]
    d_b, d_p = np.zeros((m, m)), np.zeros(m)
    for i in range(m):
        for j in range(m):
            if i != j:
                bc = b.astype(np.complex128)
                bc[i, j] += 1j * _STEP
                d_b[i, j] = _diff_and_rate(bc, p.astype(np.complex128), 1.0, rel, variant)[0].imag / _STEP
        pc = p.astype(np.complex128)
        pc[i] += 1j * _STEP
        d_p[i] = _diff_and_rate(b.astype(np.complex128), pc, 1.0, rel, variant)[0].imag / _STEP
    gradient = np.einsum("ci,ij,cj->c", 1 - x, d_b, x) + x @ d_p
    return float(diff), patterns, gradient


def z_test(responses, relation, alternative_relation=None, variant: int = 1, mu: float = 0.0,
           conf_level: float = 0.95) -> ZTest:
    """The Z test of IITA's diff for one relation, or for the difference between two (DAKS's ``z_test``).

    Parameters
    ----------
    responses : ndarray of shape (N, items), 0/1
    relation : ndarray of shape (items, items), bool
        ``relation[p, q]``: p is a prerequisite of q.
    alternative_relation : ndarray of shape (items, items), bool, optional
        Test diff(relation) - diff(alternative_relation) = mu instead.
    variant : {1, 2}
        1 minimised corrected, 2 corrected (DAKS has no test for the original).
    mu : float
        The value of diff / N^2 (or of the difference) under the null hypothesis.
    conf_level : float

    Returns
    -------
    ZTest

    Raises
    ------
    BlimError
        On a variant other than 1 or 2, fewer than 2 items, a relation of another size,
        or a zero asymptotic variance (e.g. every learner gave the same pattern).

    Examples
    --------
    a is a prerequisite of b and of c, on 35 learners:

    >>> r = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 0, 1], [1, 1, 1], [0, 1, 0], [1, 1, 0]] * 5)
    >>> t = z_test(r, np.array([[0, 1, 1], [0, 0, 0], [0, 0, 0]], dtype=bool))
    >>> round(t.diff[0], 6), round(t.z, 3), round(t.p_value, 3)
    (0.001499, 1.151, 0.25)

    Notes
    -----
    With a second relation the variance is that of the difference (its gradient is the
    difference of the two gradients). DAKS 2.1-3 adds the two variances instead, and
    its gradient of a single diff leaves out the derivative of some expected counts
    (e.g. of (1 - p_p) p_q in p_p for an unrelated pair at a pattern solving p but not q), so
    its Z differs from this one; diff itself equals DAKS's (tests/kst/test_iita_ztest.py).

    References
    ----------
    Ünlü, A. & Sargin, A. (2008). Maximum likelihood methods for inductive item tree
    analysis. Ünlü & Sargin (2010), DAKS, *Journal of Statistical Software* 37(2),
    doi:10.18637/jss.v037.i02.
    """
    if variant not in (1, 2):
        raise BlimError(f"the Z test is defined for IITA variants 1 (minimized corrected) and 2 (corrected), not "
                        f"{variant!r}")
    r = np.asarray(responses, dtype=np.int64)
    if r.ndim != 2 or r.shape[1] < 2:
        raise BlimError("the Z test needs a learners x items matrix with at least 2 items")
    relations = [relation] if alternative_relation is None else [relation, alternative_relation]
    for rel in relations:
        if np.shape(rel) != (r.shape[1], r.shape[1]):
            raise BlimError(f"a relation of shape {np.shape(rel)} for {r.shape[1]} items")
    fitted = [diff_gradient(r, rel, variant) for rel in relations]
    gradient = fitted[0][2] - (fitted[1][2] if len(fitted) > 1 else 0)
    d = fitted[0][0] - (fitted[1][0] if len(fitted) > 1 else 0)
    rho = np.unique(r, axis=0, return_counts=True)[1] / len(r)
    variance = float(rho @ gradient**2 - (rho @ gradient) ** 2)
    if variance <= 0:
        raise BlimError("the asymptotic variance is 0: diff does not move with the pattern proportions here (e.g. "
                        "every learner gave the same pattern), so there is no Z test")
    n = len(r)
    z = float(np.sqrt(n) * (d - mu) / np.sqrt(variance))
    half = float(stats.norm.ppf(1 - (1 - conf_level) / 2) * np.sqrt(variance / n))
    return ZTest(z, float(2 * min(stats.norm.cdf(z), stats.norm.sf(z))), (d - half, d + half),
                 tuple(f[0] for f in fitted), variance, n)
