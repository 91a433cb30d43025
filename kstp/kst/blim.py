"""The basic local independence model (BLIM) of a knowledge structure, fitted to response patterns.

A knowledge structure K (a family of item sets holding the empty set and the whole
domain Q) gets a probability pi_K for each state; each item q a careless-error rate
beta_q (the learner's state holds q, the answer is wrong) and a lucky-guess rate eta_q
(it does not, the answer is right). Given the state, answers are independent::

    P(R | K) = prod_{q in K \\ R} beta_q prod_{q in K & R} (1 - beta_q)
               prod_{q in R \\ K} eta_q prod_{q not in R | K} (1 - eta_q),
    P(R) = sum_K P(R | K) pi_K.

Estimation follows pks::blim (Heller & Wickelmaier 2013) step for step, so that the
same structure, method and starting values give the same estimates: maximum likelihood
by EM (ML); minimum discrepancy (MD), one step that spreads each pattern evenly over
its least distant states; and MDML, EM restricted to those states. Goodness of fit,
degrees of freedom, AIC and BIC are pks's too (see :func:`fit_blim`, Notes); the
parametric bootstrap of the fit and the residuals are in :mod:`kstp.kst.blim_gof`.

Everything is matrix arithmetic over (distinct response patterns) x (states); nothing
loops over learners or states. Assumes complete 0/1 response patterns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from kstp.errors import KstpError

__all__ = ["METHODS", "BlimError", "BlimFit", "fit_blim", "response_patterns", "delineate",
           "check_structure", "posterior", "pattern_probabilities", "most_likely_states", "outer_fringe",
           "covering_states"]

#: Estimation methods, as pks::blim names them.
METHODS = ("ML", "MD", "MDML")
_EPS = 1e-6  # pks keeps every free beta and eta in [eps, 1 - eps]


class BlimError(KstpError):
    """A BLIM cannot be fitted as asked (not a knowledge structure, bad constraint, ...)."""


def response_patterns(responses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct response patterns, their counts, and each learner's pattern index.

    Parameters
    ----------
    responses : ndarray of shape (learners, items), values 0 or 1

    Returns
    -------
    patterns : ndarray of shape (distinct patterns, items), uint8
    counts : ndarray of shape (distinct patterns,), int64
    inverse : ndarray of shape (learners,): the row of ``patterns`` of each learner

    Examples
    --------
    >>> p, n, i = response_patterns(np.array([[1, 0], [1, 0], [0, 0]]))
    >>> p.tolist(), n.tolist(), i.tolist()
    ([[0, 0], [1, 0]], [1, 2], [1, 1, 0])
    """
    patterns, inverse, counts = np.unique(np.asarray(responses, dtype=np.uint8), axis=0,
                                          return_inverse=True, return_counts=True)
    return patterns, counts.astype(np.int64), inverse.ravel()


def delineate(skills: np.ndarray, max_skills: int = 24) -> np.ndarray:
    """The knowledge structure delineated by a conjunctive skill function (pks::delineate).

    Item q is solvable in a competence state T (a set of skills) iff it needs no skill
    outside T; the delineated states are {q : skills(q) within T} for every T.

    Parameters
    ----------
    skills : ndarray of shape (items, skills), 0/1
        The Q-matrix: which skills each item needs (all of them: conjunctive).
    max_skills : int
        Refuse more skills than this (2^skills competence states are visited).

    Returns
    -------
    ndarray of shape (states, items), uint8
        Distinct states, smallest first, then those holding earlier items first.

    Raises
    ------
    BlimError
        When there are more than ``max_skills`` skills.

    Examples
    --------
    Items a {s}, b {t}, c {s, t}: four competence states, four knowledge states.

    >>> delineate(np.array([[1, 0], [0, 1], [1, 1]])).tolist()
    [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1]]

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, ch. 4 (skill maps, delineation).
    """
    skills = np.asarray(skills, dtype=bool)
    n_items, n_skills = skills.shape
    if n_skills > max_skills:
        raise BlimError(f"{n_skills} skills: delineation visits 2^{n_skills} competence states, more than "
                        f"2^{max_skills}; delineate on fewer skills or use the knowledge space (--structure space)")
    need = skills.astype(np.int64) @ (1 << np.arange(n_skills, dtype=np.int64))  # skill mask of each item
    competences = np.arange(1 << n_skills, dtype=np.int64)
    solvable = (need[None, :] & ~competences[:, None]) == 0  # (competence states, items)
    states = np.unique(solvable.astype(np.uint8), axis=0)
    return _sorted_states(states)


def _sorted_states(states: np.ndarray) -> np.ndarray:
    weights = states.astype(np.float64) @ (2.0 ** -np.arange(1, states.shape[1] + 1))
    return states[np.lexsort((-weights, states.sum(axis=1)))]


def check_structure(states: np.ndarray, items) -> None:
    """Refuse a family that is not a knowledge structure on ``items``.

    Raises
    ------
    BlimError
        When the empty set or the whole domain is missing, a state is listed twice,
        or the width differs from the number of items; the message names which.

    Examples
    --------
    >>> check_structure(np.array([[0, 0], [1, 1]]), ["a", "b"])
    >>> check_structure(np.array([[1, 0], [1, 1]]), ["a", "b"])
    Traceback (most recent call last):
    ...
    kstp.kst.blim.BlimError: not a knowledge structure: the empty set is not a state (every state holds a)
    """
    states = np.asarray(states, dtype=np.uint8)
    items = list(items)
    if states.ndim != 2 or states.shape[1] != len(items):
        raise BlimError(f"the structure has {states.shape[-1]} item columns for {len(items)} items")
    if not (states.sum(axis=1) == 0).any():
        always = [q for i, q in zip(states.all(axis=0), items, strict=True) if i]
        raise BlimError("not a knowledge structure: the empty set is not a state"
                        + (f" (every state holds {', '.join(always)})" if always else ""))
    if not states.all(axis=1).any():
        never = [q for i, q in zip(states.any(axis=0), items, strict=True) if not i]
        raise BlimError("not a knowledge structure: the whole domain is not a state"
                        + (f" (no state holds {', '.join(never)})" if never else ""))
    if len(np.unique(states, axis=0)) != len(states):
        raise BlimError("the structure lists a state twice")


@dataclass
class BlimFit:
    """A fitted BLIM: estimates, fit statistics and what they were computed from.

    Attributes
    ----------
    states : ndarray (states, items), uint8
    patterns, counts : distinct response patterns (patterns, items) and their frequencies
    p_k : ndarray (states,)
        State probabilities pi_K, summing to 1.
    beta, eta : ndarray (items,)
        Careless-error and lucky-guess rates.
    beta_se, eta_se : ndarray (items,)
        Standard errors (NaN for fixed parameters and those on the boundary).
    g2, df, p_value : likelihood-ratio statistic against the saturated model, its
        degrees of freedom and chi-square p value.
    aic, bic : information criteria as R's ``AIC``/``BIC`` compute them on a pks fit.
    discrepancy : mean minimum distance (symmetric difference) from patterns to states.
    converged : bool
        Whether the EM stopped because no parameter moved more than ``tol`` (always
        True for MD, one step); False when it stopped at ``max_iter`` (pks warns
        "iteration maximum has been exceeded").
    last_change : float
        The largest change of a parameter in the last step (NaN for MD).
    """

    items: tuple[str, ...]
    method: str
    states: np.ndarray
    patterns: np.ndarray
    counts: np.ndarray
    p_k: np.ndarray
    beta: np.ndarray
    eta: np.ndarray
    iterations: int
    log_likelihood: float
    g2: float
    df: int
    p_value: float
    n_parameters: int
    aic: float
    bic: float
    discrepancy: float
    discrepancy_table: dict[int, int]
    errors: dict[str, float]
    padded: bool
    converged: bool = True
    last_change: float = float("nan")
    beta_se: np.ndarray = field(default=None)
    eta_se: np.ndarray = field(default=None)
    options: dict = field(default_factory=dict)

    @property
    def n_learners(self) -> int:
        return int(self.counts.sum())


def _pooled(eq: np.ndarray, numerator: np.ndarray, denominator: np.ndarray, free: np.ndarray,
            fixed: np.ndarray) -> np.ndarray:
    """pks's M step for one kind of rate: pooled within equality classes, kept in [eps, 1 - eps],
    fixed values reset. ``numerator`` and ``denominator`` are (items,), or (fits, items) for many fits."""
    rate = (eq @ numerator.T).T / (eq @ denominator.T).T
    rate = np.clip(np.where(np.isnan(rate), _EPS, rate), _EPS, 1 - _EPS)
    return np.where(free, rate, fixed)


def _log_rates(beta: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """log beta, log(1 - beta), log eta, log(1 - eta), stacked on a first axis of 4 (a rate of 0 gives -690, not
    -inf); ``beta`` and ``eta`` are (items,), or (fits, items) for many fits."""
    return np.log(np.maximum(np.stack([beta, 1 - beta, eta, 1 - eta]), 1e-300))


def _slope_base(k: np.ndarray, beta: np.ndarray, eta: np.ndarray, log_prior: np.ndarray | float,
                not_k: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """log P(R | K) = R . slope_K + base_K: the gain of each correct answer (states, items) and the log
    probability of all answers wrong plus ``log_prior`` (states,). ``not_k`` is ``1 - k`` where the caller
    keeps it (an EM step: the same values, not made again each step)."""
    lb, l1b, le, l1e = _log_rates(beta, eta)
    not_k = 1 - k if not_k is None else not_k
    return k * (l1b - lb) + not_k * (le - l1e), k @ lb + not_k @ l1e + log_prior


def _log_p_r_given_k(r: np.ndarray, k: np.ndarray, beta: np.ndarray, eta: np.ndarray,
                     impossible: np.ndarray | None, log_prior: np.ndarray | float = 0.0,
                     not_k: np.ndarray | None = None) -> np.ndarray:
    """log P(R | K) + ``log_prior``, (patterns, states), as one matrix product; -inf where a
    fixed zero rules it out. ``r`` and ``k`` are the patterns and states as float arrays."""
    slope, base = _slope_base(k, beta, eta, log_prior, not_k)
    out = r @ slope.T
    out += base
    if impossible is not None:
        out[impossible] = -np.inf
    return out


def _likelihood_g2(log_prk: np.ndarray, p_k: np.ndarray, counts: np.ndarray, padded: bool) -> tuple[float, float]:
    """log L and G^2 of a fit from log P(R | K) (patterns, states), pi (states,) and the counts (patterns,);
    without zero padding P(R) is renormalised over the observed patterns (pks)."""
    p_r = np.exp(log_prk) @ p_k
    if not padded and p_r.sum() < 1:
        p_r = p_r / p_r.sum()
    seen = counts > 0
    log_likelihood = float((np.log(p_r[seen]) * counts[seen]).sum())
    return log_likelihood, float(2 * (counts[seen] * np.log(counts[seen] / (counts.sum() * p_r[seen]))).sum())


def _distances(patterns: np.ndarray, states: np.ndarray, beta_fix: np.ndarray,
               eta_fix: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Symmetric differences |R xor K| (patterns, states); and where a fixed zero rate forbids K."""
    r = patterns.astype(np.int32)
    k = states.astype(np.int32)
    d = r @ (1 - k).T + (1 - r) @ k.T
    no_guess = (eta_fix == 0).astype(np.int32)  # R holds q outside K: needs a guess
    no_slip = (beta_fix == 0).astype(np.int32)  # K holds q outside R: needs a careless error
    if not no_guess.any() and not no_slip.any():
        return d, None
    impossible = ((r * no_guess) @ (1 - k).T + (1 - r) @ (k * no_slip).T) > 0
    return d, impossible


def _groups(classes, n: int, what: str) -> np.ndarray:
    """The equality matrix of pks: 1 on the diagonal and within each class of items."""
    eq = np.eye(n)
    for group in classes or ():
        group = list(group)
        if any(not 0 <= i < n for i in group):
            raise BlimError(f"{what} names item index {group} outside 0..{n - 1}")
        eq[np.ix_(group, group)] = 1
    return eq


def _fixed(values, n: int, what: str) -> np.ndarray:
    out = np.full(n, np.nan) if values is None else np.asarray(values, dtype=np.float64)
    if out.shape != (n,):
        raise BlimError(f"{what} needs one value (or NaN for free) per item: {n}, got {out.shape}")
    bad = ~np.isnan(out) & ((out < 0) | (out >= 1))
    if bad.any():
        raise BlimError(f"{what}: a fixed rate must lie in [0, 1); got {out[bad][0]}")
    return out


def _em_inputs(method, tol, max_iter, states, patterns, counts, items, beta_fix, eta_fix, beta_equal, eta_equal):
    """The checked inputs of an EM fit (:func:`fit_blim`, :func:`kstp.kst.slm.fit_slm`): states and patterns
    as uint8 arrays, counts as float, item names, fixed rates (NaN where free) and equality classes.

    Raises
    ------
    BlimError
        An unknown method, tol <= 0 or max_iter < 1, a structure :func:`check_structure` refuses,
        patterns of another number of items, or fixed rates or classes of the wrong shape.
    """
    if method not in METHODS:
        raise BlimError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if not tol > 0 or int(max_iter) < 1:
        raise BlimError(f"the EM needs tol > 0 and max_iter >= 1; got tol {tol}, max_iter {max_iter}")
    states = np.asarray(states, dtype=np.uint8)
    patterns = np.asarray(patterns, dtype=np.uint8)
    counts = np.asarray(counts, dtype=np.float64)
    n_items = states.shape[1]
    items = tuple(items) if items is not None else tuple(f"q{j}" for j in range(n_items))
    check_structure(states, items)
    if patterns.ndim != 2 or patterns.shape[1] != n_items:
        raise BlimError(f"response patterns have {patterns.shape[-1]} items, the structure {n_items}")
    return (states, patterns, counts, items, _fixed(beta_fix, n_items, "beta_fix"), _fixed(eta_fix, n_items, "eta_fix"),
            _groups(beta_equal, n_items, "beta_equal"), _groups(eta_equal, n_items, "eta_equal"))


def _nearest_states(patterns, states, beta_fix, eta_fix, inc_radius: int):
    """For an EM fit (:func:`fit_blim`, :func:`kstp.kst.slm.fit_slm`): the (pattern, state) pairs a fixed
    rate of 0 makes impossible (None: none), each pattern's least distance to a possible state, and the
    states within ``inc_radius`` of that least distance (MD's admitted states), shape (patterns, states)."""
    d, impossible = _distances(patterns, states, beta_fix, eta_fix)
    d_masked = d if impossible is None else np.where(impossible, np.iinfo(np.int32).max, d)
    d_min = d_masked.min(axis=1)
    return impossible, d_min, d_masked <= (d_min + inc_radius)[:, None]


def fit_blim(states, patterns, counts, items=None, method: str = "ML", *, p_k=None, beta=None, eta=None,
             beta_fix=None, eta_fix=None, beta_equal=None, eta_equal=None, inc_radius: int = 0,
             tol: float = 1e-7, max_iter: int = 10_000, zeropad: int = 16, standard_errors: bool = True) -> BlimFit:
    """Fit a BLIM by ML (EM), MD or MDML, as pks::blim does.

    Parameters
    ----------
    states : ndarray of shape (states, items), 0/1
        The knowledge structure (checked by :func:`check_structure`).
    patterns, counts : ndarray (patterns, items) and (patterns,)
        Distinct response patterns and how many learners gave each (:func:`response_patterns`).
    items : sequence of str, optional
        Item names (default ``q0, q1, ...``).
    method : {"ML", "MD", "MDML"}
    p_k, beta, eta : ndarray, optional
        Starting values; pks's defaults: uniform pi, beta = eta = 0.1.
    beta_fix, eta_fix : ndarray (items,), optional
        Fixed rates, NaN where free.
    beta_equal, eta_equal : list of lists of int, optional
        Classes of item indices whose rates are held equal.
    inc_radius : int
        MD and MDML also admit states this much farther than the least distant ones.
    tol, max_iter : float, int
        EM stops when no parameter moves more than ``tol`` (> 0), or after ``max_iter``
        (>= 1) steps; then ``converged`` is False unless the last step moved no more
        than ``tol``.
    zeropad : int
        Up to this many items the goodness of fit runs over all 2^items patterns (pks).
    standard_errors : bool
        Compute standard errors of beta and eta (see Notes).

    Returns
    -------
    BlimFit

    Raises
    ------
    BlimError
        On an unknown method, a family that is not a knowledge structure, a pattern of
        the wrong width, a bad constraint, ``tol <= 0`` or ``max_iter < 1``.

    Examples
    --------
    Two items, a before b: states {}, {a}, {a, b}.

    >>> K = np.array([[0, 0], [1, 0], [1, 1]])
    >>> R = np.array([[0, 0], [1, 0], [1, 1], [0, 1]])
    >>> fit = fit_blim(K, R, np.array([30, 30, 30, 10]), ["a", "b"], "MD")
    >>> fit.p_k.round(3).tolist(), fit.beta.round(3).tolist(), fit.eta.round(3).tolist()
    ([0.35, 0.3, 0.35], [0.077, 0.0], [0.0, 0.077])
    >>> fit.discrepancy
    0.1

    Pattern {b} lies at distance 1 from {} and {a, b} and is split evenly between them,
    so beta_a = 5 / 65 (the 5 of {b} in {a, b} miss a; 30 + 35 learners sit in states holding a).

    Notes
    -----
    EM step (Heller & Wickelmaier 2013): m(R, K) = N(R) P(K | R), restricted for MD
    and MDML to the states at least distance from R; pi_K = sum_R m(R, K) / N;
    beta_q = sum m(R, K) [q in K, q not in R] / sum m(R, K) [q in K], eta_q likewise
    over q not in K; rates in an equality class pool numerators and denominators.
    MD is that single step with m(R, K) spread evenly.

    G^2 = 2 sum_R N(R) log(N(R) / (N P(R))); df = min(2^items - 1, N) - parameters
    when items <= ``zeropad`` (else distinct patterns instead of 2^items - 1); without
    padding P(R) is renormalised over the observed patterns (pks). Parameters: states - 1
    plus the free beta and eta classes. AIC = -2 log L + 2 k and BIC = -2 log L + k log n
    with n the number of distinct observed patterns, as R's ``BIC`` takes it from a pks
    fit. Standard errors (not in pks) come from the observed information estimated by
    the outer product of the per-pattern scores of log P(R) in the free parameters
    (pi with the last state's probability implied), inverted by pseudo-inverse; they
    are NaN for fixed rates and rates at the boundary.

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, §11 (the BLIM). Heller & Wickelmaier
    2013, "Minimum discrepancy estimation in probabilistic knowledge structures",
    Electronic Notes in Discrete Mathematics 42, 49-56, doi:10.1016/j.endm.2013.05.145.
    """
    states, patterns, counts, items, beta_fix, eta_fix, beta_eq, eta_eq = _em_inputs(
        method, tol, max_iter, states, patterns, counts, items, beta_fix, eta_fix, beta_equal, eta_equal)
    n_states, n_items = states.shape
    n = counts.sum()
    p_k = np.full(n_states, 1 / n_states) if p_k is None else np.asarray(p_k, dtype=np.float64)
    beta = np.full(n_items, 0.1) if beta is None else np.asarray(beta, dtype=np.float64).copy()
    eta = np.full(n_items, 0.1) if eta is None else np.asarray(eta, dtype=np.float64).copy()
    beta = np.where(np.isnan(beta_fix), beta, beta_fix)
    eta = np.where(np.isnan(eta_fix), eta, eta_fix)

    impossible, d_min, admitted = _nearest_states(patterns, states, beta_fix, eta_fix, inc_radius)
    em, md = method != "MD", method != "ML"

    r = patterns.astype(np.float64)
    k = states.astype(np.float64)
    free_beta, free_eta = np.isnan(beta_fix), np.isnan(eta_fix)
    # MDML's mass lies on the admitted (pattern, state) pairs only, a few per pattern (481 of 143,592 on
    # frcsub's 372 states): its E step runs on those pairs, not on the (patterns, states) matrix.
    pairs = _Pairs(r, k, admitted, impossible) if em and md else None
    not_k = 1 - k
    iterations, max_diff = 0, 2 * tol
    with np.errstate(invalid="ignore", divide="ignore"):
        while max_diff > tol and iterations < max_iter and (em or iterations == 0):
            old = np.concatenate([p_k, beta, eta])
            if pairs is not None:
                mass, correct_total, correct_in = pairs.e_step(beta, eta, p_k, counts)
            else:
                if em:  # in place: this (patterns, states) matrix is the whole cost of a step
                    m = _log_p_r_given_k(r, k, beta, eta, impossible, np.log(p_k), not_k)
                    np.exp(m, out=m)  # P(R | K) pi_K
                else:
                    m = admitted.astype(np.float64)
                m *= (counts / m.sum(axis=1))[:, None]  # m(R, K) = N(R) P(K | R)
                mass = m.sum(axis=0)  # N pi_K
                correct = r.T @ m  # (items, states): mass of correct answers to q in state K
                correct_total, correct_in = correct.sum(axis=1), np.einsum("js,sj->j", correct, k)
            p_k = mass / n
            held = k.T @ mass  # mass on states holding q
            beta = _pooled(beta_eq, held - correct_in, held, free_beta, beta_fix)
            eta = _pooled(eta_eq, correct_total - correct_in, n - held, free_eta, eta_fix)
            max_diff = np.abs(np.concatenate([p_k, beta, eta]) - old).max()
            iterations += 1

    padded = n_items <= zeropad
    log_prk = _log_p_r_given_k(r, k, beta, eta, impossible)
    log_likelihood, g2 = _likelihood_g2(log_prk, p_k, counts, padded)
    n_parameters = int(n_states - 1 + np.linalg.matrix_rank(beta_eq) - (~np.isnan(beta_fix)).sum()
                       + np.linalg.matrix_rank(eta_eq) - (~np.isnan(eta_fix)).sum())
    cells = 2 ** n_items - 1 if padded else len(patterns)
    df = int(min(cells, n) - n_parameters)
    mastered = states.T.astype(np.float64) @ p_k  # P(q in K)
    table = {int(v): int(counts[d_min == v].sum()) for v in np.unique(d_min)}
    fit = BlimFit(
        items=items, method=method, states=states, patterns=patterns, counts=counts.astype(np.int64),
        p_k=p_k, beta=beta, eta=eta, iterations=iterations, log_likelihood=log_likelihood, g2=g2, df=df,
        p_value=float(stats.chi2.sf(g2, df)) if df > 0 else float("nan"), n_parameters=n_parameters,
        aic=-2 * log_likelihood + 2 * n_parameters, bic=-2 * log_likelihood + np.log(len(patterns)) * n_parameters,
        discrepancy=float((counts * d_min).sum() / n), discrepancy_table=table,
        errors={"careless": float((beta * mastered).sum()), "guess": float((eta * (1 - mastered)).sum())},
        padded=padded, converged=not em or bool(max_diff <= tol), last_change=float(max_diff) if em else float("nan"),
        options={"beta_fix": beta_fix, "eta_fix": eta_fix, "beta_equal": beta_equal, "eta_equal": eta_equal,
                 "inc_radius": inc_radius, "tol": tol, "max_iter": max_iter, "zeropad": zeropad},
    )
    if standard_errors:
        fit.beta_se, fit.eta_se = _standard_errors(fit, log_prk, beta_eq, eta_eq)
    else:
        fit.beta_se = fit.eta_se = np.full(n_items, np.nan)
    return fit


class _Pairs:
    """MDML's E step on the admitted (pattern, state) pairs alone: the dense step's sums, term for term."""

    def __init__(self, r: np.ndarray, k: np.ndarray, admitted: np.ndarray, impossible: np.ndarray | None):
        self.rows, self.cols = np.nonzero(admitted)
        self.r, self.k = r[self.rows], k[self.cols]  # (pairs, items)
        self.blocked = None if impossible is None else impossible[self.rows, self.cols]
        self.k_full, self.n_patterns, self.n_states = k, r.shape[0], k.shape[0]

    def e_step(self, beta: np.ndarray, eta: np.ndarray, p_k: np.ndarray,
               counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """N pi_K (states,), and per item the mass of correct answers and of those in a state holding it."""
        slope, base = _slope_base(self.k_full, beta, eta, np.log(p_k))
        m = np.einsum("pj,pj->p", self.r, slope[self.cols]) + base[self.cols]
        if self.blocked is not None:
            m[self.blocked] = -np.inf
        np.exp(m, out=m)  # P(R | K) pi_K on each pair
        m *= (counts / np.bincount(self.rows, m, self.n_patterns))[self.rows]  # m(R, K) = N(R) P(K | R)
        correct = self.r * m[:, None]
        return np.bincount(self.cols, m, self.n_states), correct.sum(axis=0), (correct * self.k).sum(axis=0)


def _standard_errors(fit: BlimFit, log_prk: np.ndarray, beta_eq: np.ndarray,
                     eta_eq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors of beta and eta from the outer product of per-pattern scores."""
    prk = np.exp(log_prk)
    joint = prk * fit.p_k[None, :]
    p_r = joint.sum(axis=1)
    post = joint / p_r[:, None]  # P(K | R)
    r, k = fit.patterns.astype(np.float64), fit.states.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # d log P(R) / d beta_q = sum_K P(K|R) [q in K] ((1 - r_q) / beta_q - r_q / (1 - beta_q)); eta alike.
        score_beta = (post @ k) * ((1 - r) / fit.beta - r / (1 - fit.beta))
        score_eta = (post @ (1 - k)) * (r / fit.eta - (1 - r) / (1 - fit.eta))
    score_pi = (prk[:, :-1] - prk[:, -1:]) / p_r[:, None]
    blocks, owners = [score_pi], []
    for scores, eq, fixed, values, name in ((score_beta, beta_eq, fit.options["beta_fix"], fit.beta, "beta"),
                                            (score_eta, eta_eq, fit.options["eta_fix"], fit.eta, "eta")):
        for rep in np.unique(eq.argmax(axis=1)):  # one free parameter per equality class
            members = np.flatnonzero(eq[rep] > 0)
            free = members[np.isnan(fixed[members])]
            if not len(free) or values[rep] <= _EPS * 1.01 or values[rep] >= 1 - _EPS * 1.01:
                continue
            blocks.append(scores[:, free].sum(axis=1, keepdims=True))
            owners.append((name, free))
    se = {"beta": np.full(len(fit.items), np.nan), "eta": np.full(len(fit.items), np.nan)}
    if not owners:
        return se["beta"], se["eta"]
    scores = np.hstack(blocks)
    information = scores.T @ (scores * fit.counts[:, None])
    covariance = np.linalg.pinv(information, hermitian=True)
    variances = np.diag(covariance)[score_pi.shape[1]:]
    for (name, free), v in zip(owners, variances, strict=True):
        se[name][free] = np.sqrt(v) if v > 0 else np.nan
    return se["beta"], se["eta"]


def _fitted_log_p_r_given_k(fit: BlimFit, patterns: np.ndarray) -> np.ndarray:
    """log P(R | K) under ``fit`` for each pattern (rows) and state (columns)."""
    patterns = np.asarray(patterns, dtype=np.uint8)
    _, impossible = _distances(patterns, fit.states, fit.options["beta_fix"], fit.options["eta_fix"])
    return _log_p_r_given_k(patterns.astype(np.float64), fit.states.astype(np.float64), fit.beta, fit.eta,
                            impossible)


def posterior(fit: BlimFit, patterns: np.ndarray | None = None) -> np.ndarray:
    """P(K | R) for each pattern (rows) and state (columns) under ``fit``; rows sum to 1.

    >>> K = np.array([[0, 0], [1, 0], [1, 1]])
    >>> fit = fit_blim(K, K, np.array([1, 1, 1]), method="MD")
    >>> posterior(fit, np.array([[1, 0]])).round(3).tolist()
    [[0.0, 1.0, 0.0]]
    """
    log_joint = _fitted_log_p_r_given_k(fit, fit.patterns if patterns is None else patterns)
    with np.errstate(divide="ignore"):
        log_joint = log_joint + np.log(fit.p_k)[None, :]
    log_joint -= log_joint.max(axis=1, keepdims=True)
    joint = np.exp(log_joint)
    return joint / joint.sum(axis=1, keepdims=True)


def pattern_probabilities(fit: BlimFit, patterns: np.ndarray) -> np.ndarray:
    """P(R) = sum_K P(R | K) pi_K of each response pattern R (rows of ``patterns``) under ``fit``.

    >>> K = np.array([[0, 0], [1, 0], [1, 1]])
    >>> fit = fit_blim(K, K, np.array([1, 1, 1]), method="MD")
    >>> pattern_probabilities(fit, np.array([[0, 1], [1, 0]])).round(3).tolist()
    [0.0, 0.333]
    """
    return np.exp(_fitted_log_p_r_given_k(fit, patterns)) @ fit.p_k


def most_likely_states(fit: BlimFit, patterns: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each pattern's most probable state (row of ``fit.states``; the first on ties) and its posterior."""
    post = posterior(fit, patterns)
    best = post.argmax(axis=1)
    return best, post[np.arange(len(post)), best]


def outer_fringe(states: np.ndarray, state: int) -> np.ndarray:
    """Items q outside state K such that K + {q} is a state of the structure (boolean, per item).

    >>> K = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])
    >>> outer_fringe(K, 1).tolist()
    [False, True, True]

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, Def. 4.1.6 (the item-level fringe).
    """
    states = np.asarray(states, dtype=bool)
    k = states[state]
    grown = (states & ~k).sum(axis=1) == 1  # states holding K plus exactly one more item ...
    grown &= (states | ~k).all(axis=1)  # ... and all of K
    return states[grown].any(axis=0) & ~k


def covering_states(states: np.ndarray, state: int) -> np.ndarray:
    """Rows of the states that cover state K: proper supersets of K with no state strictly between.

    Where the structure is not a space (a delineated one), the outer fringe can be
    empty although K is not Q: the covering states then say what comes next.

    >>> K = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 1]])
    >>> covering_states(K, 0).tolist(), covering_states(K, 1).tolist()
    ([1], [2])
    """
    states = np.asarray(states, dtype=bool)
    k = states[state]
    sizes = states.sum(axis=1)
    above = np.flatnonzero((states | ~k).all(axis=1) & (sizes > k.sum()))
    above = above[np.argsort(sizes[above], kind="stable")]
    # a covers K iff no other superset of K lies strictly inside a; smallest first, a superset inside a is
    # inside a covering one already kept, so each is held against those alone (not all pairs: 20,000 states)
    kept: list[int] = []
    for a in above:
        if not kept or not (states[kept] <= states[a]).all(axis=1).any():
            kept.append(int(a))
    return np.array(sorted(kept), dtype=np.int64)
