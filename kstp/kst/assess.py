"""Adaptive assessment on a listed knowledge structure under the BLIM: prior, update, questioning, stopping.

A learner's state is unknown; a probability on the states of a structure K (the prior:
a BLIM fit's state probabilities, or uniform) is sharpened by each answer with the
multiplicative rule (Doignon & Falmagne 1999, ch. 10-11; Falmagne & Doignon 2011,
ch. 13): after a correct answer to q every state holding q is weighed by 1 - beta_q and
every other by eta_q; after a wrong one by beta_q and 1 - eta_q; then the weights are
normalised. Under the BLIM (local independence given the state) this is Bayes' rule,
so the posterior after any answers does not depend on their order.

The next question comes from a questioning rule (:data:`RULES`):

- ``half-split``: the unasked question whose mass L_q = P(q in K) is closest to 1/2
  (the half-split rule of Doignon & Falmagne 1999, ch. 10, and of R's mycaas; ties
  within 4 decimals are drawn from the seeded stream, as mycaas draws them);
- ``entropy``: the unasked question whose answer is expected to leave the least
  posterior entropy, i.e. the most mutual information I(R_q; K) between the answer and
  the state (the "informative" rule of the same chapter);
- ``variance``: the unasked question whose answer is expected to leave the least
  posterior variance of the number of unasked questions the learner would answer
  right, i.e. of the predicted accuracy (the minimum expected posterior variance
  criterion of Bayesian adaptive testing, van der Linden 1998, applied to that score).
  Half-split and entropy sharpen the state; a question that settles one isolated item
  splits the states as evenly as one that settles a hundred equally informative ones,
  and this rule prefers the latter;
- ``random``: uniformly among the unasked questions, the baseline.

The assessment stops (:data:`STOPS`) when the most likely state's posterior passes a
threshold (``threshold``: strictly greater, as mycaas's ``likelihood_maximization``;
Heller & Repitsch 2012), or, under the other criterion mycaas offers, when every item's
mass L_q lies outside a band (``items``: mycaas's ``items_discrimination``; Donadello et
al. 2017), when no unasked question is informative (``uninformative``: each
answer's mutual information with the state is below a floor, in bits), when the budget
of questions is spent (``budget``), or when every question has been asked
(``exhausted``). Its outcome is the most likely state with its posterior, its fringes,
the path (questions in order, answers, posterior after each) and the predicted accuracy
and PSR over all questions with intervals from the posterior predictive distribution
(:func:`predict`).

Assumes a listed structure small enough to hold a (states,) vector and, for the
``entropy`` rule, a (questions, states) matrix; for domains whose states cannot be
listed see :mod:`kstp.kst.assess_large`. Pure numpy: no graph, no I/O.

References
----------
Doignon, J.-P., & Falmagne, J.-C. (1999). *Knowledge Spaces*. Springer, ch. 10-11
(stochastic assessment procedures, the multiplicative updating and the half-split
questioning rule). Falmagne, J.-C., & Doignon, J.-P. (2011). *Learning Spaces*.
Springer, ch. 13 (probabilistic assessment). Heller, J., & Repitsch, C. (2012).
Exploiting prior information in stochastic knowledge assessment. *Methodology* 8(1),
12-22, doi:10.1027/1614-2241/a000035. van der Linden, W. J. (1998). Bayesian item selection criteria for adaptive
testing. *Psychometrika* 63(2), 201-216, doi:10.1007/BF02294775. Donadello, I., Spoto, A., Sambo, F., Badaloni, S.,
Granziol, U., & Vidotto, G. (2017). ATS-PD: An adaptive testing system for psychological
disorders. *Educational and Psychological Measurement* 77(5), 792-815. Brancaccio, A., & Granziol, U., R package
mycaas 0.0.1 (CRAN 2024): ``updating``, ``half_split``, ``stopping_criterion``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kstp.errors import KstpError
from kstp.kst.assess_predict import Prediction, pattern_psr, predict

__all__ = ["RULES", "STOPS", "AssessmentError", "check_rule", "check_model", "update", "mastery", "information",
           "half_split_ties", "expected_variance", "choose", "Step", "Outcome", "Procedure", "StopRules",
           "inner_fringe", "outer_fringe", "predict", "Prediction", "pattern_psr", "MIN_INFORMATION"]

#: Questioning rules: the half-split rule, the most informative question, the least expected variance of the
#: predicted accuracy, a random one.
RULES = ("half-split", "entropy", "variance", "random")
#: Why an assessment stopped.
STOPS = ("threshold", "items", "uninformative", "budget", "exhausted")
#: Mutual information (bits) below which an answer counts as telling nothing about the state.
MIN_INFORMATION = 1e-4
_ROUND = 4  # mycaas compares |2 L_q - 1| rounded to 4 decimals: ties within that are drawn at random


class AssessmentError(KstpError):
    """An assessment cannot run as asked (unknown rule, rates outside [0, 1], a question asked twice, ...)."""


def check_rule(rule: str) -> str:
    """``rule`` if it is one of :data:`RULES`.

    Raises
    ------
    AssessmentError
        On any other value, naming the rules.

    >>> check_rule("entropy")
    'entropy'
    """
    if rule not in RULES:
        raise AssessmentError(f"unknown questioning rule {rule!r}; use one of {', '.join(RULES)}")
    return rule


def check_model(states, beta, eta, prior=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The structure, rates and prior as arrays, checked: ``(states, beta, eta, prior)``.

    Parameters
    ----------
    states : array-like of shape (states, items), 0/1
    beta, eta : array-like of shape (items,)
        Careless-error and lucky-guess rates, in [0, 1].
    prior : array-like of shape (states,), optional
        Non-negative weights (normalised here); default uniform.

    Raises
    ------
    AssessmentError
        On a width that does not match the rates, a rate outside [0, 1] or NaN, a prior
        of the wrong length, negative or summing to 0.

    >>> s, b, e, p = check_model([[0, 0], [1, 0], [1, 1]], [0.1, 0.1], [0.2, 0.2])
    >>> p.tolist()
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """
    states = np.asarray(states, dtype=bool)
    beta, eta = np.asarray(beta, dtype=np.float64), np.asarray(eta, dtype=np.float64)
    if states.ndim != 2 or not len(states):
        raise AssessmentError("the structure needs at least one state, as a (states, items) 0/1 matrix")
    n = states.shape[1]
    for name, rate in (("careless-error rate (beta)", beta), ("lucky-guess rate (eta)", eta)):
        if rate.shape != (n,):
            raise AssessmentError(f"{n} items but {rate.size} {name}s; give one per item")
        bad = np.isnan(rate) | (rate < 0) | (rate > 1)
        if bad.any():
            raise AssessmentError(f"a {name} must lie in [0, 1]; item {int(np.flatnonzero(bad)[0])} has "
                                  f"{rate[bad][0]}")
    if prior is None:
        prior = np.full(len(states), 1 / len(states))
    else:
        prior = np.asarray(prior, dtype=np.float64)
        if prior.shape != (len(states),):
            raise AssessmentError(f"{len(states)} states but {prior.size} prior probabilities")
        if np.isnan(prior).any() or (prior < 0).any() or prior.sum() <= 0:
            raise AssessmentError("the prior must be non-negative with a positive sum")
        prior = prior / prior.sum()
    return states, beta, eta, prior


def _likelihood(states: np.ndarray, item: int, correct: bool, beta: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """P(answer to ``item`` | K) per state: (states,)."""
    held = states[:, item]
    if correct:
        return np.where(held, 1 - beta[item], eta[item])
    return np.where(held, beta[item], 1 - eta[item])


def update(posterior, states, item: int, correct: bool, beta, eta) -> np.ndarray:
    """The posterior after one answer: the multiplicative rule (Bayes' rule under the BLIM).

    Parameters
    ----------
    posterior : array-like of shape (states,)
        The current distribution on the states (sums to 1).
    states : array-like of shape (states, items), 0/1
    item : int
        The question answered (column of ``states``).
    correct : bool
    beta, eta : array-like of shape (items,)

    Returns
    -------
    ndarray of shape (states,)
        Sums to 1.

    Raises
    ------
    AssessmentError
        When the answer is impossible under every state of positive probability (a
        rate of 0 rules it out): the posterior would be 0 everywhere.

    Examples
    --------
    Two items, a before b; no careless errors, guessing 0.2. A correct answer to b
    leaves {a, b} (weight 1) against {} and {a} (0.2 each):

    >>> update([1/3, 1/3, 1/3], [[0, 0], [1, 0], [1, 1]], 1, True, [0, 0], [0.2, 0.2]).round(4).tolist()
    [0.1429, 0.1429, 0.7143]

    References
    ----------
    Falmagne & Doignon 2011, *Learning Spaces*, §13.10 (the multiplicative rule); R's
    mycaas ``updating``.
    """
    posterior = np.asarray(posterior, dtype=np.float64)
    states = np.asarray(states, dtype=bool)
    weights = posterior * _likelihood(states, item, correct, np.asarray(beta, np.float64), np.asarray(eta, np.float64))
    total = weights.sum()
    if not total > 0:
        raise AssessmentError(f"the {'correct' if correct else 'wrong'} answer to item {item} is impossible under "
                              "every state still possible (a careless or guess rate of 0 rules it out)")
    return weights / total


def mastery(posterior, states) -> np.ndarray:
    """L_q = P(q in K) under ``posterior``, per item: (items,).

    >>> mastery([0.5, 0.25, 0.25], [[0, 0], [1, 0], [1, 1]]).tolist()
    [0.5, 0.25]
    """
    return np.asarray(posterior, dtype=np.float64) @ np.asarray(states, dtype=np.float64)


def _h(p: np.ndarray) -> np.ndarray:
    """Binary entropy in bits, 0 at 0 and 1."""
    p = np.clip(p, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -(p * np.log2(p) + (1 - p) * np.log2(1 - p))
    return np.nan_to_num(out)


def information(posterior, states, beta, eta) -> np.ndarray:
    """Mutual information I(R_q; K) in bits between each item's answer and the state: (items,).

    I(R_q; K) = H(R_q) - sum_K pi_K H(R_q | K), with P(R_q = 1 | K) = 1 - beta_q for
    q in K and eta_q otherwise. Maximising it minimises the expected posterior entropy
    (the ``entropy`` rule); it is 0 exactly when the answer's distribution is the same
    under every state of positive probability.

    >>> information([0.5, 0.5], [[0], [1]], [0.0], [0.0]).tolist()  # a perfect split: one bit
    [1.0]
    >>> information([1.0, 0.0], [[0], [1]], [0.1], [0.1]).tolist()  # the state is known already
    [0.0]
    """
    pi = np.asarray(posterior, dtype=np.float64)
    beta, eta = np.asarray(beta, np.float64), np.asarray(eta, np.float64)
    held = mastery(pi, states)
    p_correct = held * (1 - beta) + (1 - held) * eta
    noise = held * _h(1 - beta) + (1 - held) * _h(eta)
    return np.maximum(_h(p_correct) - noise, 0.0)


def half_split_ties(posterior, states, pool) -> np.ndarray:
    """The items of ``pool`` whose ``|2 L_q - 1|`` is least (within 4 decimals, as mycaas rounds): (ties,), sorted.

    >>> half_split_ties([0.5, 0.25, 0.25], [[0, 0], [1, 0], [1, 1]], [0, 1]).tolist()
    [0]

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, ch. 10 (the half-split questioning
    rule); R's mycaas ``half_split`` (the same rounding, its random draw among ties).
    """
    pool = np.asarray(pool, dtype=np.int64)
    if not len(pool):
        raise AssessmentError("no question left to ask")
    split = np.round(np.abs(2 * mastery(posterior, states)[pool] - 1), _ROUND)
    return np.sort(pool[split == split.min()])


def expected_variance(posterior, states, beta, eta, pool) -> np.ndarray:
    """E_r[Var(T | r)] for each item of ``pool``: the expected posterior variance of T after its answer r.

    T = sum over the unasked items q (``pool``) of (1 - beta_q - eta_q) [q in K]: how the
    number of right answers to the unasked questions depends on the state (the rest of
    it, sum eta_q, is the same in every state). The ``variance`` rule asks the item that
    minimises it.

    Parameters
    ----------
    posterior : array-like of shape (states,)
    states : array-like of shape (states, items), 0/1
    beta, eta : array-like of shape (items,)
    pool : sequence of int

    Returns
    -------
    ndarray of shape (len(pool),)

    Examples
    --------
    Two independent items, no errors, uniform prior: T = [a in K] + [b in K] has variance
    1/2; either answer settles its item, leaving 1/4.

    >>> expected_variance([0.25] * 4, [[0, 0], [1, 0], [0, 1], [1, 1]], [0, 0], [0, 0], [0, 1]).tolist()
    [0.25, 0.25]

    References
    ----------
    van der Linden 1998, *Psychometrika* 63(2), 201-216 (minimum expected posterior variance).
    """
    pi = np.asarray(posterior, np.float64)
    held = np.asarray(states, dtype=np.float64)
    beta, eta = np.asarray(beta, np.float64), np.asarray(eta, np.float64)
    pool = np.asarray(pool, dtype=np.int64)
    t = held[:, pool] @ (1 - beta[pool] - eta[pool])  # (states,)
    p1 = held[:, pool] * (1 - beta[pool]) + (1 - held[:, pool]) * eta[pool]  # (states, pool): P(right | K)
    out = np.zeros(len(pool))
    for weights in (p1, 1 - p1):
        joint = pi[:, None] * weights  # P(K, r) per candidate
        mass = joint.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (t @ joint) / mass
            var = ((t * t) @ joint) / mass - mean * mean
        out += np.where(mass > 0, mass * np.maximum(var, 0.0), 0.0)
    return out


def _joint_batch(posterior: np.ndarray, states: np.ndarray, beta: np.ndarray, eta: np.ndarray, pool: np.ndarray,
                 first: int, size: int) -> list[int]:
    """Greedily grow a batch from ``first``: each next item the one that adds most to the joint information
    I(R_B; K) = H(R_B) - sum_K pi_K H(R_B | K), answers independent given the state."""
    chosen = [first]
    held = states.astype(np.float64)
    # P(r_B | K) for each answer pattern r_B of the batch so far: (patterns, states)
    p1 = held[:, first] * (1 - beta[first]) + (1 - held[:, first]) * eta[first]
    table = np.stack([1 - p1, p1])
    noise = _h(p1)  # sum over the batch of H(R_q | K), per state
    rest = [int(q) for q in pool if q != first]
    while len(chosen) < size and rest:
        best, best_gain, best_table = None, -1.0, None
        base = table * posterior
        for q in rest:
            pq = held[:, q] * (1 - beta[q]) + (1 - held[:, q]) * eta[q]
            joint = np.concatenate([base * (1 - pq), base * pq]).sum(axis=1)
            gain = -np.sum(joint[joint > 0] * np.log2(joint[joint > 0])) - posterior @ (noise + _h(pq))
            if gain > best_gain + 1e-12:
                best, best_gain, best_table = q, gain, pq
        chosen.append(best)
        rest.remove(best)
        table = np.concatenate([table * (1 - best_table), table * best_table])
        noise = noise + _h(best_table)
    return chosen


def choose(rule: str, posterior, states, beta, eta, pool, rng: np.random.Generator | None = None,
           batch: int = 1) -> list[int]:
    """The next question(s) to ask under ``rule``.

    Parameters
    ----------
    rule : {"half-split", "entropy", "variance", "random"}
    posterior : array-like of shape (states,)
    states : array-like of shape (states, items), 0/1
    beta, eta : array-like of shape (items,)
    pool : sequence of int
        The items that may be asked (not asked yet).
    rng : numpy.random.Generator, optional
        Draws the random rule's question and the half-split rule's ties (default: a
        generator seeded 0).
    batch : int
        How many questions to ask at once (a model answers them in parallel). Past the
        first (the rule's own choice), each next one adds the most to the joint mutual
        information of the batch's answers with the state; the random rule draws them.

    Returns
    -------
    list of int
        ``min(batch, len(pool))`` distinct items.

    Raises
    ------
    AssessmentError
        On an unknown rule, an empty pool or a batch below 1.

    Examples
    --------
    A chain a < b < c, uniform prior: b splits the four states in half.

    >>> K = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> choose("half-split", [0.25] * 4, K, [0.1] * 3, [0.1] * 3, [0, 1, 2])
    [1]
    >>> choose("entropy", [0.25] * 4, K, [0.1] * 3, [0.1] * 3, [0, 1, 2], batch=2)
    [1, 0]
    """
    check_rule(rule)
    if batch < 1:
        raise AssessmentError(f"a batch holds at least one question, not {batch}")
    pool = np.asarray(pool, dtype=np.int64)
    if not len(pool):
        raise AssessmentError("no question left to ask")
    rng = rng if rng is not None else np.random.default_rng(0)
    size = min(batch, len(pool))
    if rule == "random":
        return [int(q) for q in rng.choice(pool, size=size, replace=False)]
    posterior = np.asarray(posterior, np.float64)
    states = np.asarray(states, dtype=bool)
    beta, eta = np.asarray(beta, np.float64), np.asarray(eta, np.float64)
    if rule == "half-split":
        ties = half_split_ties(posterior, states, pool)
        first = int(ties[0] if len(ties) == 1 else rng.choice(ties))
    elif rule == "entropy":
        info = information(posterior, states, beta, eta)[pool]
        first = int(pool[np.flatnonzero(info >= info.max() - 1e-12)[0]])
    else:
        left = expected_variance(posterior, states, beta, eta, pool)
        first = int(pool[np.flatnonzero(left <= left.min() + 1e-12)[0]])
    if size == 1:
        return [first]
    return _joint_batch(posterior, states, beta, eta, pool, first, size)


def inner_fringe(states, state: int) -> np.ndarray:
    """Items q of state K such that K - {q} is a state (boolean, per item): what was learnt last.

    >>> K = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])
    >>> inner_fringe(K, 4).tolist()
    [False, True, True]

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, Def. 4.1.6 (the inner fringe).
    """
    states = np.asarray(states, dtype=bool)
    k = states[state]
    shrunk = (k & ~states).sum(axis=1) == 1  # states missing exactly one item of K ...
    shrunk &= (states <= k).all(axis=1)  # ... and nothing outside K
    return k & (k & ~states[shrunk]).any(axis=0) if shrunk.any() else np.zeros_like(k)


def outer_fringe(states, state: int) -> np.ndarray:
    """Items q outside state K such that K + {q} is a state (boolean, per item): what to learn next.

    >>> K = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])
    >>> outer_fringe(K, 1).tolist()
    [False, True, True]
    """
    from kstp.kst.blim import outer_fringe as blim_outer

    return blim_outer(np.asarray(states), state)


@dataclass(frozen=True)
class Step:
    """One question of an assessment and what it left: the answer, the most likely state and its posterior.

    On the surmise relation (:mod:`kstp.kst.assess_large`) no state is listed: ``state`` and
    ``posterior`` are None, ``entropy`` is the sum of the items' classes' binary entropies
    (an upper bound of the posterior's) and ``uncertain`` counts the items whose mass is
    still inside the stopping band.
    """

    item: int
    correct: bool
    state: int | None  # most likely state (row of the structure; the first on ties) after the answer
    posterior: float | None  # its posterior probability
    entropy: float  # posterior entropy in bits
    uncertain: int | None = None

    def as_dict(self, items=None) -> dict:
        """The step with the question's name (``items[item]``) where ``items`` is given, JSON-ready."""
        out = {"question": items[self.item] if items is not None else self.item, "correct": self.correct,
               "state": self.state, "posterior": self.posterior, "entropy": self.entropy}
        return out if self.uncertain is None else out | {"uncertain": self.uncertain}


@dataclass
class Outcome:
    """Where an assessment ended."""

    state: int | None  # row of the structure (None on the surmise relation: no state is listed)
    items_in_state: np.ndarray  # (items,) bool
    posterior: float | None  # the state's posterior (None on the surmise relation)
    inner_fringe: np.ndarray  # (items,) bool
    outer_fringe: np.ndarray  # (items,) bool
    path: list[Step]
    stopped: str | None  # one of STOPS, or None while it may go on
    entropy: float
    prediction: Prediction | None = None
    mastery: np.ndarray = field(default=None)  # (items,) P(q in K) at the end

    @property
    def asked(self) -> list[int]:
        return [s.item for s in self.path]


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


class StopRules:
    """What both procedures share (:class:`Procedure`, :class:`~kstp.kst.assess_large.SurmiseProcedure`): the
    questions not asked yet and why an assessment stops, read from the item masses and informations each gives."""

    observed: dict[int, bool]
    path: list
    band: tuple[float, float] | None
    budget: int | None
    min_information: float

    @property
    def n_items(self) -> int:
        raise NotImplementedError

    def _threshold_met(self) -> bool:
        """Whether the most likely state's posterior passed the threshold (a listed structure's rule)."""
        return False

    def _item_mastery(self) -> np.ndarray:
        """L_q = P(q in K | answers) per item: (items,)."""
        raise NotImplementedError

    def _item_information(self) -> np.ndarray:
        """Mutual information (bits) between each item's answer and the state: (items,)."""
        raise NotImplementedError

    def pool(self) -> np.ndarray:
        """The items not asked yet."""
        asked = np.zeros(self.n_items, dtype=bool)
        asked[list(self.observed)] = True
        return np.flatnonzero(~asked)

    def stopped(self) -> str | None:
        """Why the assessment stops now (one of :data:`STOPS`), or None to go on."""
        if self._threshold_met():
            return "threshold"
        if self.band is not None:
            held = self._item_mastery()
            if ((held < self.band[0]) | (held > self.band[1])).all():
                return "items"
        if self.budget is not None and len(self.path) >= self.budget:
            return "budget"
        pool = self.pool()
        if not len(pool):
            return "exhausted"
        if self._item_information()[pool].max() < self.min_information:
            return "uninformative"
        return None


class Procedure(StopRules):
    """One adaptive assessment on a listed structure: ask :meth:`next`, give :meth:`record`, read :meth:`outcome`.

    Parameters
    ----------
    states : array-like of shape (states, items), 0/1
        The knowledge structure.
    beta, eta : array-like of shape (items,)
        Careless-error and lucky-guess rates (a BLIM fit's, or chosen).
    prior : array-like of shape (states,), optional
        State probabilities (a BLIM fit's ``p_k``); default uniform.
    rule : {"half-split", "entropy", "variance", "random"}
    threshold : float
        Stop once the most likely state's posterior is greater than this (1 never stops here).
    band : (float, float), optional
        Stop instead once every item's mass L_q is below ``band[0]`` or above ``band[1]``
        (mycaas's ``items_discrimination``); ``threshold`` is then not used.
    budget : int, optional
        Stop after this many questions.
    min_information : float
        Stop when no unasked question's answer carries this much information (bits).
    seed : int
        Seeds the random rule and the half-split rule's ties.

    Raises
    ------
    AssessmentError
        As :func:`check_model` and :func:`check_rule`; a threshold outside (0, 1], a band that is
        not 0 <= low <= high <= 1, or a budget below 0.

    Examples
    --------
    A chain a < b < c with small errors, uniform prior: the half-split rule asks b,
    then c after a right answer; a right answer there leaves Q with 0.45125 / 0.4775.

    >>> p = Procedure([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], [0.05] * 3, [0.05] * 3, threshold=0.8)
    >>> p.next(), p.record(1, True), p.next(), p.record(2, True), p.stopped()
    ([1], None, [2], None, 'threshold')
    >>> out = p.outcome()
    >>> out.state, round(out.posterior, 3), out.outer_fringe.tolist()
    (3, 0.945, [False, False, False])
    """

    def __init__(self, states, beta, eta, prior=None, rule: str = "half-split", threshold: float = 0.5,
                 budget: int | None = None, min_information: float = MIN_INFORMATION, seed: int = 0,
                 band: tuple[float, float] | None = None):
        self.states, self.beta, self.eta, self.prior = check_model(states, beta, eta, prior)
        self.rule = check_rule(rule)
        if not 0 < threshold <= 1:
            raise AssessmentError(f"the stopping threshold is a posterior probability in (0, 1], not {threshold}")
        if budget is not None and budget < 0:
            raise AssessmentError(f"the question budget cannot be negative ({budget})")
        if band is not None and not 0 <= band[0] <= band[1] <= 1:
            raise AssessmentError(f"the items' band is (low, high) with 0 <= low <= high <= 1, not {tuple(band)}")
        self.threshold, self.budget, self.min_information = threshold, budget, min_information
        self.band = None if band is None else (float(band[0]), float(band[1]))
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.posterior = self.prior.copy()
        self.path: list[Step] = []
        self.observed: dict[int, bool] = {}

    @property
    def n_items(self) -> int:
        return self.states.shape[1]

    def _threshold_met(self) -> bool:
        return self.band is None and self.posterior.max() > self.threshold

    def _item_mastery(self) -> np.ndarray:
        return mastery(self.posterior, self.states)

    def _item_information(self) -> np.ndarray:
        return information(self.posterior, self.states, self.beta, self.eta)

    def next(self, batch: int = 1) -> list[int]:
        """The question(s) to ask now (at most what is left of the budget); [] once :meth:`stopped`."""
        if self.stopped():
            return []
        if self.budget is not None:
            batch = min(batch, self.budget - len(self.path))
        return choose(self.rule, self.posterior, self.states, self.beta, self.eta, self.pool(), self.rng, batch)

    def record(self, item: int, correct: bool) -> None:
        """Take the answer to ``item``.

        Raises
        ------
        AssessmentError
            When ``item`` is no item of the structure or was answered already.
        """
        item = int(item)
        if not 0 <= item < self.n_items:
            raise AssessmentError(f"item {item} is not one of the structure's {self.n_items} items")
        if item in self.observed:
            raise AssessmentError(f"item {item} was answered already; each question is asked once")
        self.posterior = update(self.posterior, self.states, item, bool(correct), self.beta, self.eta)
        self.observed[item] = bool(correct)
        best = int(self.posterior.argmax())
        self.path.append(Step(item, bool(correct), best, float(self.posterior[best]), _entropy(self.posterior)))

    def outcome(self, pairs=None, draws: int = 0, level: float = 0.95) -> Outcome:
        """The most likely state (the first on ties) with its posterior and fringes, the path, and the prediction.

        Parameters
        ----------
        pairs : array-like of shape (pairs, 2), optional
            Prerequisite pairs (p, q) by item index: PSR is predicted too.
        draws : int
            States drawn from the posterior for the intervals (0: none, no prediction).
        level : float
            Coverage of the intervals.
        """
        best = int(self.posterior.argmax())
        held = mastery(self.posterior, self.states)
        prediction = None
        if draws:
            observed = np.zeros(self.n_items, dtype=bool)
            observed[list(self.observed)] = True
            p_correct = held * (1 - self.beta) + (1 - held) * self.eta
            answers = np.array([self.observed.get(q, False) for q in range(self.n_items)], dtype=np.float64)
            expected = float(np.where(observed, answers, p_correct).mean())
            rng = np.random.default_rng([self.seed, len(self.path)])  # the questions' stream is left alone
            rows = rng.choice(len(self.states), size=draws, p=self.posterior)
            prediction = predict(self.states[rows], self.beta, self.eta, self.observed, rng, pairs, expected, level)
        return Outcome(best, self.states[best].copy(), float(self.posterior[best]), inner_fringe(self.states, best),
                       outer_fringe(self.states, best), list(self.path), self.stopped(), _entropy(self.posterior),
                       prediction, held)
