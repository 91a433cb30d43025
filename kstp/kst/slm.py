"""The simple learning model (SLM): a BLIM whose state probabilities come from one learning rate per item.

In a learning space (a knowledge space that is well-graded) a learner learns item q,
once it is in the outer fringe, with probability g_q, independently; the state
probabilities follow (Doignon & Falmagne 1999, §11; Falmagne & Doignon 2011)::

    pi_K = prod_{q in K} g_q prod_{q in outer fringe of K} (1 - g_q),

and answers are the BLIM's (careless-error rate beta_q, lucky-guess rate eta_q). The
parameters are 2 n + n instead of the BLIM's 2 n + states - 1. Estimation follows
pks::slm step for step (ML by EM, MD, MDML; as :func:`kstp.kst.blim.fit_blim`), so that the
same space, method and starting values give pks's estimates. Assumes complete 0/1
response patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from kstp.kst.analysis import Structure
from kstp.kst.blim import (
    _EPS,
    BlimError,
    _em_inputs,
    _likelihood_g2,
    _log_p_r_given_k,
    _nearest_states,
    _pooled,
)

__all__ = ["SlmFit", "fit_slm", "slm_state_probabilities"]


def slm_state_probabilities(states, g) -> np.ndarray:
    """pi_K = prod_{q in K} g_q prod_{q in outer fringe of K} (1 - g_q) for each state (pks's ``getSlmPK``).

    Parameters
    ----------
    states : ndarray of shape (S, n), 0/1
        A learning space (the probabilities sum to 1 only there).
    g : ndarray of shape (n,)
        Learning rates in (0, 1).

    Examples
    --------
    A chain {} < {a} < {a, b}: pi = (1 - g_a, g_a (1 - g_b), g_a g_b).

    >>> slm_state_probabilities(np.array([[0, 0], [1, 0], [1, 1]]), np.array([0.5, 0.2])).round(12).tolist()
    [0.5, 0.4, 0.1]
    """
    states = np.asarray(states, dtype=np.uint8)
    outer = _outer_fringes(states)
    log_g, log_1g = np.log(np.asarray(g, dtype=np.float64)), np.log1p(-np.asarray(g, dtype=np.float64))
    return np.exp(states @ log_g + outer @ log_1g)


def _outer_fringes(states: np.ndarray) -> np.ndarray:
    """(S, n) 0/1: q is outside K and K + {q} is a state."""
    known = {row.tobytes() for row in states}
    out = np.zeros(states.shape, np.uint8)
    for i, row in enumerate(states):
        for q in np.flatnonzero(row == 0):
            grown = row.copy()
            grown[q] = 1
            out[i, q] = grown.tobytes() in known
    return out


@dataclass
class SlmFit:
    """A fitted SLM: learning rates ``g``, the state probabilities they give, beta and eta, fit statistics.

    Attributes as :class:`kstp.kst.blim.BlimFit` (``g2``, ``df``, ``aic``, ``bic`` likewise pks's),
    with ``g`` (items,) the learning rates.
    """

    items: tuple[str, ...]
    method: str
    states: np.ndarray
    g: np.ndarray
    p_k: np.ndarray
    beta: np.ndarray
    eta: np.ndarray
    iterations: int
    converged: bool
    log_likelihood: float
    g2: float
    df: int
    p_value: float
    n_parameters: int
    aic: float
    bic: float
    discrepancy: float


def fit_slm(states, patterns, counts, items=None, method: str = "ML", *, beta=None, eta=None, g=None,
            beta_fix=None, eta_fix=None, beta_equal=None, eta_equal=None, inc_radius: int = 0, tol: float = 1e-7,
            max_iter: int = 10_000, zeropad: int = 16) -> SlmFit:
    """Fit an SLM by ML (EM), MD or MDML, as pks::slm does.

    Parameters
    ----------
    states : ndarray of shape (S, n), 0/1
        A learning space: closed under union and well-graded (pks: a knowledge space
        that is downgradable).
    patterns, counts, items, method, beta, eta, beta_fix, eta_fix, beta_equal, eta_equal, inc_radius, tol,
    max_iter, zeropad
        As :func:`kstp.kst.blim.fit_blim`.
    g : ndarray of shape (n,), optional
        Starting learning rates (pks's default 0.1).

    Returns
    -------
    SlmFit

    Raises
    ------
    BlimError
        When ``states`` is not a learning space, and as :func:`kstp.kst.blim.fit_blim`.

    Notes
    -----
    The EM step is the BLIM's for beta and eta (with pi from g); g_q is the mass m(R, K)
    on states holding q over that on states holding q or having it in their outer
    fringe (pks's ``slmEM``). Parameters: the free beta and eta classes plus n.

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, §11.3 (the simple learning model);
    pks 0.6-0, ``slm`` (Wickelmaier, Heller, Anselmi).
    """
    states, patterns, counts, items, beta_fix, eta_fix, beta_eq, eta_eq = _em_inputs(
        method, tol, max_iter, states, patterns, counts, items, beta_fix, eta_fix, beta_equal, eta_equal)
    n_items = states.shape[1]
    structure = Structure.build(items, states)
    if not structure.is_space() or not structure.is_well_graded():
        lacks = "not closed under union" if not structure.is_space() else "not well-graded"
        raise BlimError(f"the simple learning model needs a learning space (closed under union and well-graded); "
                        f"this structure is {lacks}")
    outer = _outer_fringes(states).astype(np.float64)
    n = counts.sum()
    beta = np.full(n_items, 0.1) if beta is None else np.asarray(beta, dtype=np.float64).copy()
    eta = np.full(n_items, 0.1) if eta is None else np.asarray(eta, dtype=np.float64).copy()
    g = np.full(n_items, 0.1) if g is None else np.asarray(g, dtype=np.float64).copy()
    beta = np.where(np.isnan(beta_fix), beta, beta_fix)
    eta = np.where(np.isnan(eta_fix), eta, eta_fix)

    impossible, d_min, admitted = _nearest_states(patterns, states, beta_fix, eta_fix, inc_radius)
    em, md = method != "MD", method != "ML"
    r, k = patterns.astype(np.float64), states.astype(np.float64)
    free_beta, free_eta = np.isnan(beta_fix), np.isnan(eta_fix)
    iterations, max_diff = 0, 2 * tol
    with np.errstate(invalid="ignore", divide="ignore"):
        while max_diff > tol and iterations < max_iter and (em or iterations == 0):
            old = np.concatenate([beta, eta, g])
            if em:
                m = np.exp(_log_p_r_given_k(r, k, beta, eta, impossible, np.log(slm_state_probabilities(states, g))))
                if md:
                    m *= admitted
            else:
                m = admitted.astype(np.float64)
            m *= (counts / m.sum(axis=1))[:, None]
            mass = m.sum(axis=0)
            correct = r.T @ m
            correct_in = np.einsum("js,sj->j", correct, k)
            held = k.T @ mass
            beta = _pooled(beta_eq, held - correct_in, held, free_beta, beta_fix)
            eta = _pooled(eta_eq, correct.sum(axis=1) - correct_in, n - held, free_eta, eta_fix)
            g = held / (held + outer.T @ mass)  # learnt, over learnt or ready to be learnt
            g = np.clip(np.where(np.isnan(g), _EPS, g), _EPS, 1 - _EPS)
            max_diff = np.abs(np.concatenate([beta, eta, g]) - old).max()
            iterations += 1

    p_k = slm_state_probabilities(states, g)
    padded = n_items <= zeropad
    log_likelihood, g2 = _likelihood_g2(_log_p_r_given_k(r, k, beta, eta, impossible), p_k, counts, padded)
    n_parameters = int(np.linalg.matrix_rank(beta_eq) - (~free_beta).sum() + np.linalg.matrix_rank(eta_eq)
                       - (~free_eta).sum() + n_items)
    df = int(min(2**n_items - 1 if padded else len(patterns), n) - n_parameters)
    return SlmFit(items, method, states, g, p_k, beta, eta, iterations, not em or bool(max_diff <= tol),
                  log_likelihood, g2, df, float(stats.chi2.sf(g2, df)) if df > 0 else float("nan"), n_parameters,
                  -2 * log_likelihood + 2 * n_parameters,
                  -2 * log_likelihood + np.log(len(patterns)) * n_parameters, float((counts * d_min).sum() / n))
