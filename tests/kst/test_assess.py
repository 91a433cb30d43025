"""Adaptive assessment on a listed structure: the update, the questioning rules and the stopping rules held to
hand-computed posteriors and to R's mycaas (tests/data/assess/PROVENANCE.md)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kstp.evaluators import psr
from kstp.kst.assess import (
    AssessmentError,
    Procedure,
    choose,
    half_split_ties,
    information,
    inner_fringe,
    mastery,
    pattern_psr,
    predict,
    update,
)

MYCAAS = json.loads((Path(__file__).resolve().parents[1] / "data" / "assess" / "mycaas_reference.json").read_text())
CASES = ["mycaas_example1", "DoignonFalmagne7", "DoignonFalmagne7_uniform", "endm_K", "endm_K_uniform"]

#: The diamond a < b, a < c, b and c < d: states {}, {a}, {a,b}, {a,c}, {a,b,c}, Q.
DIAMOND = np.array([[0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1]])


def _case(name):
    c = MYCAAS[name]
    states = np.array([[int(ch) for ch in s] for s in c["states"]])
    return c, states, np.array(c["beta"], float), np.array(c["eta"], float), np.array(c["prior"], float)


# ---- the update, by hand ------------------------------------------------------------------------------------
def test_update_equals_the_hand_computed_posterior():
    # beta = 0.1, eta = 0.2 everywhere, uniform prior. A correct answer to b weighs the states holding b
    # ({a,b}, {a,b,c}, Q) by 0.9 and the others by 0.2: (0.2, 0.2, 0.9, 0.2, 0.9, 0.9) / 3.3.
    post = update(np.full(6, 1 / 6), DIAMOND, 1, True, [0.1] * 4, [0.2] * 4)
    assert post == pytest.approx(np.array([0.2, 0.2, 0.9, 0.2, 0.9, 0.9]) / 3.3)
    # then a wrong answer to d: Q by beta = 0.1, the rest by 1 - eta = 0.8
    post = update(post, DIAMOND, 3, False, [0.1] * 4, [0.2] * 4)
    weights = np.array([0.2 * 0.8, 0.2 * 0.8, 0.9 * 0.8, 0.2 * 0.8, 0.9 * 0.8, 0.9 * 0.1])
    assert post == pytest.approx(weights / weights.sum())
    assert mastery(post, DIAMOND)[1] == pytest.approx((0.72 + 0.72 + 0.09) / weights.sum())


def test_update_does_not_depend_on_the_order_of_the_answers():
    rates = ([0.1, 0.05, 0.2, 0.15], [0.2, 0.1, 0.05, 0.3])
    answers = [(0, True), (3, False), (2, True)]
    results = []
    for order in itertools.permutations(answers):
        post = np.full(6, 1 / 6)
        for item, correct in order:
            post = update(post, DIAMOND, item, correct, *rates)
        results.append(post)
    assert all(r == pytest.approx(results[0]) for r in results)


def test_update_refuses_an_answer_no_state_allows():
    # no guessing and only {} possible: a correct answer to a cannot happen
    with pytest.raises(AssessmentError, match="correct answer to item 0 is impossible"):
        update([1, 0, 0, 0, 0, 0], DIAMOND, 0, True, [0.1] * 4, [0.0] * 4)


def test_information_is_the_entropy_reduction_computed_by_hand():
    post = np.full(6, 1 / 6)
    beta, eta = np.full(4, 0.1), np.full(4, 0.2)
    info = information(post, DIAMOND, beta, eta)
    for q in range(4):  # H(posterior) - E[H(posterior after the answer)], by updating both ways
        held = mastery(post, DIAMOND)[q]
        p1 = held * 0.9 + (1 - held) * 0.2
        after = [update(post, DIAMOND, q, c, beta, eta) for c in (False, True)]
        entropy = [-(a[a > 0] * np.log2(a[a > 0])).sum() for a in after]
        expected = np.log2(6) - ((1 - p1) * entropy[0] + p1 * entropy[1])
        assert info[q] == pytest.approx(expected)
    # b and c split the six states 3 : 3, a 5 : 1, d 1 : 5
    assert info[1] == pytest.approx(info[2]) and info[1] > info[0] > 0


def test_entropy_rule_asks_the_question_of_least_expected_entropy():
    _, states, beta, eta, prior = _case("DoignonFalmagne7")
    post = update(prior, states, 0, True, beta, eta)
    pool = [1, 2, 3, 4]

    def expected_entropy(q):
        p1 = post @ np.where(states[:, q], 1 - beta[q], eta[q])
        out = 0.0
        for c, p in ((True, p1), (False, 1 - p1)):
            a = update(post, states, q, c, beta, eta)
            out -= p * (a[a > 0] * np.log2(a[a > 0])).sum()
        return out

    assert choose("entropy", post, states, beta, eta, pool) == [min(pool, key=expected_entropy)]


def test_a_batch_grows_by_the_most_joint_information():
    beta, eta = np.full(4, 0.1), np.full(4, 0.1)
    post = np.full(6, 1 / 6)

    def joint(batch):  # I(R_B; K) by listing every answer pattern of the batch
        p = np.ones((1, 6))
        for q in batch:
            pq = np.where(DIAMOND[:, q], 1 - beta[q], eta[q])
            p = np.concatenate([p * (1 - pq), p * pq])
        marginal = p @ post
        noise = -(post * (p * np.log2(p)).sum(axis=0)).sum()
        return -(marginal * np.log2(marginal)).sum() - noise

    first = choose("entropy", post, DIAMOND, beta, eta, [0, 1, 2, 3])[0]
    batch = choose("entropy", post, DIAMOND, beta, eta, [0, 1, 2, 3], batch=2)
    assert batch[0] == first
    assert joint(batch) == pytest.approx(max(joint([first, q]) for q in range(4) if q != first))
    assert len(set(choose("random", post, DIAMOND, beta, eta, [0, 1, 2, 3], batch=3))) == 3


def test_fringes_of_the_diamond():
    assert inner_fringe(DIAMOND, 4).tolist() == [False, True, True, False]  # {a,b,c}: b or c came last
    assert inner_fringe(DIAMOND, 0).tolist() == [False] * 4


# ---- mycaas ------------------------------------------------------------------------------------------------
def test_half_split_example_equals_mycaas():
    ex = MYCAAS["mycaas_half_split_example"]
    _, states, *_ = _case("mycaas_example1")
    ties = half_split_ties(ex["likelihood"], states, np.array(ex["pool"]) - 1)
    assert (ties + 1).tolist() == ex["ties"] == [2, 4]


@pytest.mark.parametrize("name", CASES)
def test_posteriors_ties_and_stops_equal_mycaas(name):
    c, states, beta, eta, prior = _case(name)
    for sequence in c["sequences"]:
        post, asked = prior, []
        for step in sequence["steps"]:
            pool = [q for q in range(states.shape[1]) if q not in asked]
            assert (half_split_ties(post, states, pool) + 1).tolist() == sorted(np.atleast_1d(step["ties_before"]))
            item = step["item"] - 1
            post = update(post, states, item, bool(step["correct"]), beta, eta)
            asked.append(item)
            assert post == pytest.approx(np.array(step["posterior"]), abs=1e-12)
            assert (post.max() > 0.5) == step["stop_0.5"]
            held = mastery(post, states)
            assert bool(((held < 0.2) | (held > 0.8)).all()) == step["stop_items_0.2_0.8"]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("criterion", ["assessments", "assessments_items_0.2_0.8"])
def test_whole_assessments_replay_mycaas(name, criterion):
    """mycaas's simulated assessments, replayed: each question is in kstp's half-split tie set, the posterior
    after each answer is mycaas's, and kstp stops after the same question, in the same state."""
    c, states, beta, eta, prior = _case(name)
    band = (0.2, 0.8) if criterion.startswith("assessments_items") else None
    for run in c[criterion]:
        p = Procedure(states, beta, eta, prior, threshold=c["threshold"], band=band)
        questions, answers = np.atleast_1d(run["questions"]) - 1, np.atleast_1d(run["answers"])
        for q, r in zip(questions, answers, strict=True):
            assert p.stopped() is None
            assert q in half_split_ties(p.posterior, states, p.pool())
            p.record(q, bool(r))
        assert p.stopped() in ("threshold", "items", "exhausted")
        assert len(p.path) == run["asked"]
        assert p.posterior == pytest.approx(np.array(run["posterior"]), abs=1e-12)
        assert p.outcome().state + 1 == run["state"]


# ---- procedure -----------------------------------------------------------------------------------------------
def test_procedure_stops_on_its_budget_and_when_nothing_is_informative():
    p = Procedure(DIAMOND, [0.1] * 4, [0.1] * 4, threshold=1.0, budget=2)
    for q in p.next(batch=5):  # the batch is cut to the budget
        p.record(q, True)
    assert len(p.path) == 2 and p.stopped() == "budget" and p.next() == []
    # error-free answers that pin the state leave nothing to learn: the posterior is one state
    exact = Procedure(DIAMOND, [0.0] * 4, [0.0] * 4, threshold=1.0)
    while not exact.stopped():
        q = exact.next()[0]
        exact.record(q, bool(DIAMOND[3, q]))
    assert exact.stopped() == "uninformative" and exact.outcome().state == 3 and len(exact.path) < 4


def test_procedure_refuses_bad_input_in_one_line():
    with pytest.raises(AssessmentError, match="unknown questioning rule 'halfsplit'; use one of half-split"):
        Procedure(DIAMOND, [0.1] * 4, [0.1] * 4, rule="halfsplit")
    with pytest.raises(AssessmentError, match="4 items but 3 careless-error rate"):
        Procedure(DIAMOND, [0.1] * 3, [0.1] * 4)
    with pytest.raises(AssessmentError, match=r"lucky-guess rate \(eta\) must lie in \[0, 1\]; item 2 has 1.5"):
        Procedure(DIAMOND, [0.1] * 4, [0.1, 0.1, 1.5, 0.1])
    with pytest.raises(AssessmentError, match="6 states but 2 prior"):
        Procedure(DIAMOND, [0.1] * 4, [0.1] * 4, prior=[0.5, 0.5])
    with pytest.raises(AssessmentError, match=r"threshold is a posterior probability in \(0, 1\], not 1.5"):
        Procedure(DIAMOND, [0.1] * 4, [0.1] * 4, threshold=1.5)
    p = Procedure(DIAMOND, [0.1] * 4, [0.1] * 4)
    p.record(0, True)
    with pytest.raises(AssessmentError, match="item 0 was answered already"):
        p.record(0, False)
    with pytest.raises(AssessmentError, match="item 7 is not one of the structure's 4 items"):
        p.record(7, False)


# ---- prediction ----------------------------------------------------------------------------------------------
def test_pattern_psr_equals_kstp_psr_on_complete_patterns():
    rng = np.random.default_rng(3)
    patterns = rng.integers(0, 2, size=(30, 5))
    pairs = np.array([[0, 1], [0, 2], [1, 3], [2, 3], [3, 4], [0, 4]])
    micro, macro = pattern_psr(patterns, pairs)
    names = [f"q{j}" for j in range(5)]
    answers = pd.DataFrame([{"learnerId": f"l{i:02d}", "questionId": names[j], "correct": bool(patterns[i, j])}
                            for i in range(30) for j in range(5)])
    prerequisites = pd.DataFrame({"fromId": [names[p] for p, _ in pairs], "toId": [names[q] for _, q in pairs]})
    table = psr.aggregate(answers, psr.score_pairs(answers, prerequisites))
    assert np.allclose(micro, table["psrMicro"].to_numpy(), equal_nan=True)
    assert np.allclose(macro, table["psrMacro"].to_numpy(), equal_nan=True)


def test_prediction_mean_is_the_posterior_expectation_and_its_interval_covers_it():
    p = Procedure(DIAMOND, [0.1] * 4, [0.2] * 4, threshold=1.0, budget=2)
    p.record(1, True)
    p.record(3, False)
    out = p.outcome(pairs=[[0, 1], [0, 2], [1, 3], [2, 3]], draws=4000)
    held = mastery(p.posterior, DIAMOND)
    # asked: b right, d wrong; unasked a and c predicted 0.9 L + 0.2 (1 - L)
    expected = (1 + 0 + sum(0.9 * held[q] + 0.2 * (1 - held[q]) for q in (0, 2))) / 4
    pred = out.prediction
    assert pred.accuracy == pytest.approx(expected)
    assert pred.accuracy_interval[0] <= expected <= pred.accuracy_interval[1]
    assert 0 <= pred.psr_micro_interval[0] <= pred.psr_micro <= pred.psr_micro_interval[1] <= 1
    # the draws alone: within Monte Carlo error of the exact mean
    direct = predict(DIAMOND[np.random.default_rng(0).choice(6, 4000, p=p.posterior)], [0.1] * 4, [0.2] * 4,
                     {1: True, 3: False}, np.random.default_rng(1))
    assert direct.accuracy == pytest.approx(expected, abs=0.01)
