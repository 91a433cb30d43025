"""Adaptive assessment on the surmise relation: the Gibbs sampler held to the posterior enumerated by hand over the
skills, the variance rule's choice, the study's figures."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import beta as beta_function

from kstp.kst.assess import AssessmentError, Procedure, expected_variance, update
from kstp.kst.assess_large import SurmiseProcedure, draw_states
from kstp.kst.assess_study import by_threshold, curve, simulate_listed, simulate_surmise
from kstp.kst.spaces import KnowledgeSpace

#: a < b < c, a < d, and e with f mutual prerequisites (one class) above b
ITEMS = ["a", "b", "c", "d", "e", "f"]
PAIRS = [("a", "b"), ("b", "c"), ("a", "d"), ("b", "e"), ("e", "f"), ("f", "e")]


def _enumerated(space, items, beta, eta, answers):
    """P(q in K | answers) by listing every skill vector z (one skill per class), its ability integrated out:
    P(z) = B(1 + |z|, 1 + m - |z|), K = the items whose class's down-set has every skill."""
    m = len(space.classes)
    cls = space._class_of()
    below = {c: {c} | {p for p in range(m) if space.below[c] >> p & 1} for c in range(m)}
    num, total = np.zeros(len(items)), 0.0
    for z in itertools.product([0, 1], repeat=m):
        mastered = np.array([all(z[p] for p in below[cls[q]]) for q in items])
        w = beta_function(1 + sum(z), 1 + m - sum(z))
        for q, right in answers:
            w *= ((1 - beta[q]) if mastered[q] else eta[q]) if right else (beta[q] if mastered[q] else 1 - eta[q])
        num += w * mastered
        total += w
    return num / total


@pytest.mark.parametrize("answers", [[], [(2, True)], [(2, True), (3, False)], [(4, True), (1, False)],
                                     [(0, False), (5, True)]])
def test_gibbs_masses_equal_the_enumerated_posterior(answers):
    space = KnowledgeSpace.build(ITEMS, PAIRS)
    beta, eta = np.array([0.1, 0.05, 0.2, 0.1, 0.15, 0.1]), np.array([0.2, 0.1, 0.05, 0.25, 0.1, 0.1])
    exact = _enumerated(space, ITEMS, beta, eta, answers)
    p = SurmiseProcedure(space, beta, eta, ITEMS, chains=400, sweeps=50, seed=4)
    if answers:
        p.record_many(answers, sweeps=600)
    # 400 chains x 600 sweeps: Monte Carlo error well under 0.02
    assert p.mastery() == pytest.approx(exact, abs=0.02)
    assert p.mastery()[4] == p.mastery()[5]  # e and f are one class


def test_draw_states_are_down_sets_with_the_prior_masses():
    space = KnowledgeSpace.build(ITEMS, PAIRS)
    k = draw_states(space, 20_000, np.random.default_rng(1))
    assert (k[:, 1] <= k[:, 0]).all() and (k[:, 2] <= k[:, 1]).all() and (k[:, 4] == k[:, 5]).all()
    # a needs one skill: E[rho] = 1/2; b two: E[rho^2] = 1/3; c three: 1/4
    assert k[:, :3].mean(axis=0) == pytest.approx([1 / 2, 1 / 3, 1 / 4], abs=0.01)


def test_variance_rule_asks_what_tells_about_many_questions():
    # ten equally informative items (one class) and an isolated one: both split the states in half, but an
    # answer in the class settles ten items
    items = [f"c{j}" for j in range(10)] + ["x"]
    pairs = [(f"c{j}", f"c{(j + 1) % 10}") for j in range(10)]
    space = KnowledgeSpace.build(items, pairs)
    rates = np.full(11, 0.1)
    variance = SurmiseProcedure(space, rates, rates, items, rule="variance", seed=1)
    assert variance.next()[0] < 10
    assert variance.next(batch=3) == [variance.next()[0], 10]  # one question per class
    # the listed procedure on the same structure agrees: the class leaves the least variance
    states = np.array([[0] * 11, [0] * 10 + [1], [1] * 10 + [0], [1] * 11])
    left = expected_variance(np.full(4, 0.25), states, rates, rates, list(range(11)))
    assert left[:10] == pytest.approx([left[0]] * 10) and left[0] < left[10]
    assert Procedure(states, rates, rates, rule="variance").next() == [0]


def test_expected_variance_equals_updating_both_ways():
    states = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])
    beta, eta = np.array([0.1, 0.2, 0.05]), np.array([0.1, 0.05, 0.3])
    post = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    pool = [0, 1, 2]
    t = states @ (1 - beta - eta)
    for q, got in zip(pool, expected_variance(post, states, beta, eta, pool), strict=True):
        p1 = post @ np.where(states[:, q], 1 - beta[q], eta[q])
        want = 0.0
        for right, p in ((True, p1), (False, 1 - p1)):
            after = update(post, states, q, right, beta, eta)
            want += p * (after @ t**2 - (after @ t) ** 2)
        assert got == pytest.approx(want)


def test_surmise_procedure_stops_and_refuses():
    space = KnowledgeSpace.build(ITEMS, PAIRS)
    rates = np.full(6, 0.1)
    p = SurmiseProcedure(space, rates, rates, ITEMS, budget=2, band=(0.0, 1.0))
    p.record_many([(q, True) for q in p.next(batch=5)])
    assert len(p.path) == 2 and p.stopped() == "budget" and p.next() == []
    out = p.outcome(draws=64)
    assert out.state is None and out.items_in_state.dtype == bool and out.prediction.draws == 64
    asked = p.path[0].item
    with pytest.raises(AssessmentError, match=f"item {asked} was answered already"):
        p.record(asked, True)
    with pytest.raises(AssessmentError, match="6 items but 2 careless-error rate"):
        SurmiseProcedure(space, [0.1, 0.1], rates, ITEMS)
    with pytest.raises(AssessmentError, match="unknown questioning rule"):
        SurmiseProcedure(space, rates, rates, ITEMS, rule="split")


# ---- the study -------------------------------------------------------------------------------------------------
def test_listed_study_counts_questions_and_recoveries():
    states = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]])
    runs = simulate_listed(states, [0.25] * 4, [0.0] * 3, [0.0] * 3, "half-split", 8, seed=3)
    # no errors: two half-split questions identify any of the four states of a chain
    assert (runs.distance[:, 1] == 0).all() and (runs.posterior[:, 1] == 1).all()
    row = by_threshold(runs, [0.9])[0]
    assert (row["asked"], row["exact"], row["withinOne"], row["accuracyError"]) == (2.0, 1.0, 1.0, 0.0)
    assert [r["exact"] for r in curve(runs)][1:] == [1.0, 1.0]


def test_surmise_study_predicts_accuracy_of_known_states():
    space = KnowledgeSpace.build(ITEMS, PAIRS)
    truth = draw_states(space, 6, np.random.default_rng(2))
    runs = simulate_surmise(space, np.zeros(6), np.zeros(6), truth, "variance", budget=6, seed=1, draws=32)
    # every question asked without errors: the accuracy is known exactly
    assert (runs.asked == 6).all() and runs.accuracy == pytest.approx(truth.mean(axis=1))
    assert runs.summary()["withinTwoPoints"] == 1.0
