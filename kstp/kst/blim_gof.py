"""Goodness of fit of a BLIM: a parametric bootstrap of G^2, and residuals per pattern.

:func:`bootstrap_p` draws learners from a fitted model (:func:`simulate_counts`) and refits
it as pks's ``gof.blim`` does; :func:`residuals` gives the deviance or Pearson residual of
every response pattern as pks's ``residuals.blim``. Both take a :class:`~kstp.kst.blim.BlimFit`.

References
----------
Heller & Wickelmaier 2013, "Minimum discrepancy estimation in probabilistic knowledge
structures", Electronic Notes in Discrete Mathematics 42; R package pks, ``gof.blim``
and ``residuals.blim``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kstp.kst.blim import (
    BlimError,
    BlimFit,
    _distances,
    _groups,
    _likelihood_g2,
    _log_p_r_given_k,
    _log_rates,
    _pooled,
    fit_blim,
    pattern_probabilities,
    response_patterns,
)

__all__ = ["simulate", "simulate_counts", "Bootstrap", "bootstrap_p", "residuals"]


def simulate(states, p_k, beta, eta, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` learners from a BLIM: each a state by ``p_k``, then each answer independently (pks ``simulate``).

    Parameters
    ----------
    states : array-like of shape (states, items), 0/1
    p_k : array-like of shape (states,)
        State probabilities (normalised here).
    beta, eta : array-like of shape (items,)
        Careless-error and lucky-guess rates: an item of the state is answered wrongly
        with probability beta, an item outside it rightly with probability eta.
    n : int
        Learners to draw.
    rng : numpy.random.Generator
        The random stream (seed it for a reproducible draw).

    Returns
    -------
    answers : ndarray of shape (n, items), uint8
    drawn : ndarray of shape (n,)
        Each learner's state (row of ``states``).

    Raises
    ------
    BlimError
        When a probability or rate lies outside [0, 1], or the probabilities sum to 0.

    Examples
    --------
    No errors: every learner answers its state.

    >>> answers, drawn = simulate([[0, 0], [1, 0], [1, 1]], [0, 1, 0], [0, 0], [0, 0], 3, np.random.default_rng(1))
    >>> answers.tolist(), drawn.tolist()
    ([[1, 0], [1, 0], [1, 0]], [1, 1, 1])

    References
    ----------
    R package pks, ``simulate.blim``: states drawn with ``sample(prob = P.K)``, answers
    with ``rbinom`` from P(correct | K) = 1 - beta (q in K) or eta (q not in K).
    """
    states = np.asarray(states, dtype=bool)
    p_k, beta, eta = (np.asarray(v, dtype=np.float64) for v in (p_k, beta, eta))
    for name, values in (("state probability", p_k), ("careless-error rate", beta), ("lucky-guess rate", eta)):
        bad = (values < 0) | (values > 1) | np.isnan(values)
        if bad.any():
            raise BlimError(f"a {name} must lie in [0, 1]; got {values[bad][0]}")
    if p_k.sum() <= 0:
        raise BlimError("the state probabilities sum to 0")
    drawn = rng.choice(len(p_k), size=n, p=p_k / p_k.sum())
    k = states[drawn]
    answers = (rng.random(k.shape) < np.where(k, 1 - beta, eta)).astype(np.uint8)
    return answers, drawn


def simulate_counts(fit: BlimFit, rng: np.random.Generator, n: int | None = None):
    """Draw ``n`` (default: as many as fitted) learners from the fitted BLIM (:func:`simulate`).

    Returns distinct patterns and counts, as :func:`response_patterns`.
    """
    answers, _ = simulate(fit.states, fit.p_k, fit.beta, fit.eta, fit.n_learners if n is None else n, rng)
    patterns, counts, _ = response_patterns(answers)
    return patterns, counts


@dataclass
class Bootstrap:
    """A parametric bootstrap of a fit: the p value of G^2 and the spread of the refitted rates."""

    p: float  # share of refits with G^2* >= G^2; Monte Carlo SE sqrt(p (1 - p) / samples)
    g2: np.ndarray  # (samples,)
    beta_sd: np.ndarray  # (items,): standard deviation of the refitted beta (bootstrap standard error)
    eta_sd: np.ndarray  # (items,)


def bootstrap_p(fit: BlimFit, n_samples: int, seed: int = 0,
                progress: Callable[[int, int], None] | None = None) -> Bootstrap:
    """Parametric bootstrap of ``fit``: p value of G^2 and bootstrap standard errors of beta and eta.

    Each sample draws as many learners as were fitted from the fitted model and refits
    it with the same structure, method, constraints and starting values (pks's
    defaults). p is the share of samples with G^2* >= G^2. ``progress(done, n_samples)``
    is called after each refit. ML refits run side by side (:func:`_refit_ml`), each the
    EM of :func:`~kstp.kst.blim.fit_blim` step for step.

    Raises
    ------
    BlimError
        When ``n_samples`` < 2.
    """
    if n_samples < 2:
        raise BlimError(f"a bootstrap needs at least 2 samples, got {n_samples}")
    rng = np.random.default_rng(seed)
    samples = [simulate_counts(fit, rng) for _ in range(n_samples)]  # the draws do not depend on the refits
    if fit.method == "ML":
        g2, beta, eta, _ = _refit_ml(fit, samples, progress)
        rates = np.stack([beta, eta], axis=1)
    else:
        o = fit.options
        g2, rates = np.empty(n_samples), np.empty((n_samples, 2, len(fit.items)))
        for b, (patterns, counts) in enumerate(samples):
            refit = fit_blim(fit.states, patterns, counts, fit.items, fit.method, beta_fix=o["beta_fix"],
                             eta_fix=o["eta_fix"], beta_equal=o["beta_equal"], eta_equal=o["eta_equal"],
                             inc_radius=o["inc_radius"], tol=o["tol"], max_iter=o["max_iter"], zeropad=o["zeropad"],
                             standard_errors=False)
            g2[b], rates[b] = refit.g2, (refit.beta, refit.eta)
            if progress is not None:
                progress(b + 1, n_samples)
    sd = rates.std(axis=0, ddof=1)
    return Bootstrap(float((g2 >= fit.g2).mean()), g2, sd[0], sd[1])


#: Cells of the (refits, patterns, states) array one batch of :func:`_refit_ml` holds: 16 MB of float64.
_BATCH_CELLS = 2_000_000


def _refit_ml(fit: BlimFit, samples: list[tuple[np.ndarray, np.ndarray]],
              progress: Callable[[int, int], None] | None = None):
    """ML refits of ``fit``'s structure and constraints to each ``(patterns, counts)`` of ``samples``, from
    pks's starting values, as :func:`~kstp.kst.blim.fit_blim` fits each, side by side.

    One refit's EM step on 58 states and 200 patterns is a score of small numpy calls (about 100 µs, and
    a refit takes hundreds to thousands of steps); here each call serves a batch of refits, arrays of
    (refits, patterns, states) with each refit's patterns padded by patterns of count 0 (they add exact
    zeros to every sum): 1.5-1.7 times as fast (``python -m benchmarks blim``). A refit leaves the
    batch when no parameter moved more than ``tol`` (or a step gave NaN, where fit_blim stops too) or
    after ``max_iter`` steps.

    Returns
    -------
    g2 : ndarray (samples,)
    beta, eta : ndarray (samples, items)
    iterations : ndarray (samples,), int
    """
    o, n_items = fit.options, len(fit.items)
    k = fit.states.astype(np.float64)
    not_k = 1 - k
    beta_fix, eta_fix = o["beta_fix"], o["eta_fix"]
    free_beta, free_eta = np.isnan(beta_fix), np.isnan(eta_fix)
    beta_eq, eta_eq = _groups(o["beta_equal"], n_items, "beta_equal"), _groups(o["eta_equal"], n_items, "eta_equal")
    blocked = [_distances(p, fit.states, beta_fix, eta_fix)[1] for p, _ in samples]
    n_samples, n_states = len(samples), len(k)
    g2, iterations = np.empty(n_samples), np.zeros(n_samples, dtype=np.int64)
    beta_out, eta_out = np.empty((n_samples, n_items)), np.empty((n_samples, n_items))
    width = max(len(p) for p, _ in samples)
    size = max(1, _BATCH_CELLS // (width * n_states))
    done = 0
    for first in range(0, n_samples, size):
        index = np.arange(first, min(first + size, n_samples))
        # Each pattern with a 1 appended: one product gives R . slope_K + base_K (log P(R | K) pi_K).
        r = np.zeros((len(index), width, n_items + 1))
        r[:, :, n_items] = 1
        c = np.zeros((len(index), width))
        impossible = None if all(b is None for b in blocked) else np.zeros((len(index), width, n_states), bool)
        for row, b in enumerate(index):
            patterns, counts = samples[b]
            r[row, :len(patterns), :n_items], c[row, :len(patterns)] = patterns, counts
            if impossible is not None and blocked[b] is not None:
                impossible[row, :len(patterns)] = blocked[b]
        n = c.sum(axis=1)
        p_k = np.full((len(index), n_states), 1 / n_states)
        beta = np.tile(np.where(free_beta, 0.1, beta_fix), (len(index), 1))
        eta = np.tile(np.where(free_eta, 0.1, eta_fix), (len(index), 1))
        steps = np.zeros(len(index), dtype=np.int64)
        ones = np.ones(n_states)
        with np.errstate(invalid="ignore", divide="ignore"):
            while len(index):
                lb, l1b, le, l1e = _log_rates(beta, eta)
                slope = np.empty((len(index), n_items + 1, n_states))  # (refits, items + base, states)
                slope[:, :n_items] = k.T * (l1b - lb)[:, :, None] + not_k.T * (le - l1e)[:, :, None]
                slope[:, n_items] = lb @ k.T + l1e @ not_k.T + np.log(p_k)
                m = r @ slope  # log P(R | K) pi_K, as _log_p_r_given_k per refit
                if impossible is not None:
                    m[impossible] = -np.inf
                np.exp(m, out=m)
                # m(R, K) = N(R) P(K | R) = w_R m_RK, w = N(R) / P(R); the sums below take w rather than
                # scaling m: (refits, patterns, items) products, not (refits, patterns, states) ones
                w = np.divide(c, m @ ones, out=np.zeros_like(c), where=c > 0)
                mass = (w[:, None, :] @ m)[:, 0]
                correct = (r[:, :, :n_items] * w[:, :, None]).transpose(0, 2, 1) @ m  # (refits, items, states)
                correct_total, correct_in = correct.sum(axis=2), np.einsum("ajs,sj->aj", correct, k)
                held = mass @ k
                new = (mass / n[:, None], _pooled(beta_eq, held - correct_in, held, free_beta, beta_fix),
                       _pooled(eta_eq, correct_total - correct_in, n[:, None] - held, free_eta, eta_fix))
                moved = np.max([np.abs(a - b).max(axis=1) for a, b in zip(new, (p_k, beta, eta), strict=True)],
                               axis=0)
                p_k, beta, eta = new
                steps += 1
                finished = ~(moved > o["tol"]) | (steps >= o["max_iter"])  # NaN ends it, as in fit_blim
                for row in np.flatnonzero(finished):
                    b = index[row]
                    patterns, counts = samples[b]
                    log_prk = _log_p_r_given_k(patterns.astype(np.float64), k, beta[row], eta[row], blocked[b])
                    g2[b] = _likelihood_g2(log_prk, p_k[row], counts.astype(np.float64), n_items <= o["zeropad"])[1]
                    beta_out[b], eta_out[b], iterations[b] = beta[row], eta[row], steps[row]
                    done += 1
                    if progress is not None:
                        progress(done, n_samples)
                if finished.any():
                    keep = ~finished
                    index, r, c, n, p_k, beta, eta, steps = (a[keep] for a in (index, r, c, n, p_k, beta, eta, steps))
                    impossible = None if impossible is None else impossible[keep]
    return g2, beta_out, eta_out, iterations


def _all_patterns(n_items: int) -> np.ndarray:
    codes = np.arange(1 << n_items, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_items)) & 1).astype(np.uint8)


def residuals(fit: BlimFit, kind: str = "deviance") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Residuals per response pattern as pks's ``residuals.blim``.

    Over all 2^items patterns when the fit was zero-padded (items <= zeropad), else
    over the observed ones. Deviance residuals: sign(y - mu) sqrt(2 N (y log(y / mu) -
    (y - mu))); Pearson: (y - mu) sqrt(N / mu), with y and mu the observed and fitted
    relative frequencies.

    Returns
    -------
    patterns : ndarray (patterns, items)
    fitted : ndarray (patterns,), the fitted relative frequencies mu
    residual : ndarray (patterns,)

    Raises
    ------
    BlimError
        On an unknown ``kind``.
    """
    if kind not in ("deviance", "pearson"):
        raise BlimError(f"unknown residual kind {kind!r}; use deviance or pearson")
    n = fit.n_learners
    patterns = _all_patterns(len(fit.items)) if fit.padded else fit.patterns
    observed = np.zeros(len(patterns))
    index = {row.tobytes(): i for i, row in enumerate(patterns)}
    for row, c in zip(fit.patterns, fit.counts, strict=True):
        observed[index[row.tobytes()]] = c
    mu = pattern_probabilities(fit, patterns)
    if not fit.padded and mu.sum() < 1:
        mu = mu / mu.sum()
    y = observed / n
    if kind == "pearson":
        return patterns, mu, (y - mu) * np.sqrt(n) / np.sqrt(mu)
    if fit.df <= 0:
        return patterns, mu, np.zeros(len(mu))
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = 2 * n * (y * np.log(np.where(y == 0, 1, y / mu)) - (y - mu))
    res = np.sqrt(np.maximum(dev, 0))
    return patterns, mu, np.where(y > mu, res, -res)
