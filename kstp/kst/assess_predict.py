"""What an adaptive assessment predicts over every question: accuracy and PSR with intervals from the posterior.

A learner's answers over all questions are the answers given where asked and, where not,
drawn as the BLIM says (right with 1 - beta_q where q is in the state, eta_q where not),
from states drawn from the posterior; accuracy and PSR (as :mod:`kstp.evaluators.psr`
computes it on recorded patterns) are read off each drawn pattern, the intervals from
their quantiles. Shared by the
listed procedure (:mod:`kstp.kst.assess`) and the surmise one (:mod:`kstp.kst.assess_large`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["pattern_psr", "Prediction", "predict"]


def pattern_psr(patterns, pairs) -> tuple[np.ndarray, np.ndarray]:
    """Micro and macro PSR of complete 0/1 response patterns: ((patterns,), (patterns,)), NaN where undefined.

    For a pattern x and prerequisite pairs (p, q) (p a prerequisite of q), over the
    questions q answered correctly that have a prerequisite: micro PSR pools the pairs,
    sum x_p / count; macro PSR averages each q's share of correct prerequisites. Every
    question of a complete pattern was attempted, so paper 1's two denominators (the
    release's, over attempted prerequisites, and Eq. 2's) agree (:mod:`kstp.evaluators.psr`).

    Parameters
    ----------
    patterns : array-like of shape (patterns, items), 0/1
    pairs : array-like of shape (pairs, 2), int
        Item indices (p, q), p a prerequisite of q.

    Examples
    --------
    q2 needs q0 and q1; the pattern solves q0 and q2 but not q1:

    >>> micro, macro = pattern_psr([[1, 0, 1]], [[0, 2], [1, 2]])
    >>> micro.tolist(), macro.tolist()
    ([0.5], [0.5])

    References
    ----------
    Cui, Do, Sachan 2026, Eq. 2-4 (arXiv 2609.05245).
    """
    x = np.asarray(patterns, dtype=np.float64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    n = x.shape[1]
    if not len(pairs):
        nan = np.full(len(x), np.nan)
        return nan, nan.copy()
    from scipy import sparse

    # m[p, q] = 1 for each pair: x @ m gives, per q, how many of its prerequisites are correct
    m = sparse.csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    m.data[:] = 1.0  # a pair listed twice counts once
    need = np.asarray(m.sum(axis=0)).ravel()  # prerequisites per q
    satisfied = np.asarray((m.T @ x.T).T)  # (patterns, items)
    scored = x * (need > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        micro = (scored * satisfied).sum(axis=1) / (scored * need).sum(axis=1)
        share = np.where(need > 0, satisfied / np.where(need > 0, need, 1), 0.0)
        macro = (scored * share).sum(axis=1) / scored.sum(axis=1)
    return micro, macro


@dataclass(frozen=True)
class Prediction:
    """Predicted figures over all questions: each a mean and an equal-tailed interval of the posterior predictive."""

    accuracy: float
    accuracy_interval: tuple[float, float]
    psr_micro: float | None = None
    psr_micro_interval: tuple[float, float] | None = None
    psr_macro: float | None = None
    psr_macro_interval: tuple[float, float] | None = None
    draws: int = 0
    level: float = 0.95

    def as_dict(self) -> dict:
        """The figures with camelCase keys, JSON-ready."""
        out = {"accuracy": self.accuracy, "accuracyInterval": list(self.accuracy_interval)}
        if self.psr_micro is not None:
            out |= {"psrMicro": self.psr_micro, "psrMicroInterval": list(self.psr_micro_interval),
                    "psrMacro": self.psr_macro, "psrMacroInterval": list(self.psr_macro_interval)}
        return out | {"draws": self.draws, "level": self.level}


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if not len(values):
        return (float("nan"), float("nan"))
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return (float(lo), float(hi))


def predict(state_draws: np.ndarray, beta, eta, observed: dict[int, bool], rng: np.random.Generator,
            pairs=None, expected_accuracy: float | None = None, level: float = 0.95) -> Prediction:
    """Accuracy (and PSR) over all questions, predicted from the posterior: mean and interval.

    Each draw is a state from the posterior (``state_draws``); the unasked questions are
    answered as the BLIM says (1 - beta_q in the state, eta_q outside), the asked ones
    keep their observed answers. Accuracy's mean is exact where ``expected_accuracy`` is
    given (the posterior expectation, :meth:`kstp.kst.assess.Procedure.outcome` passes it); the
    intervals, and the PSR means, come from the draws.

    Parameters
    ----------
    state_draws : ndarray of shape (draws, items), 0/1
        States drawn from the posterior.
    beta, eta : array-like of shape (items,)
    observed : dict of item index to bool
        The answers given.
    rng : numpy.random.Generator
    pairs : array-like of shape (pairs, 2), optional
        Prerequisite pairs (p, q) by item index, for PSR (:func:`pattern_psr`).
    expected_accuracy : float, optional
    level : float
        Coverage of the intervals.

    Returns
    -------
    Prediction

    Examples
    --------
    Every draw in state {a}, no errors, b was answered right (a guess): accuracy 1.

    >>> p = predict(np.array([[1, 0]] * 10), [0, 0], [0, 0], {1: True}, np.random.default_rng(0))
    >>> p.accuracy, p.accuracy_interval
    (1.0, (1.0, 1.0))
    """
    k = np.asarray(state_draws, dtype=bool)
    beta, eta = np.asarray(beta, np.float64), np.asarray(eta, np.float64)
    answers = rng.random(k.shape) < np.where(k, 1 - beta, eta)
    if observed:
        asked = np.fromiter(observed.keys(), np.int64, len(observed))
        answers[:, asked] = np.fromiter(observed.values(), bool, len(observed))
    accuracy = answers.mean(axis=1)
    mean = float(accuracy.mean()) if expected_accuracy is None else float(expected_accuracy)
    out = {"accuracy": mean, "accuracy_interval": _interval(accuracy, level), "draws": len(k), "level": level}
    if pairs is not None and len(pairs):
        micro, macro = pattern_psr(answers, pairs)
        out |= {"psr_micro": float(np.nanmean(micro)) if (~np.isnan(micro)).any() else float("nan"),
                "psr_micro_interval": _interval(micro, level),
                "psr_macro": float(np.nanmean(macro)) if (~np.isnan(macro)).any() else float("nan"),
                "psr_macro_interval": _interval(macro, level)}
    return Prediction(**out)
