"""The BLIM and its goodness of fit (kstp.kst.blim, kstp.kst.blim_gof) against hand-computed
examples and R's pks 0.6-0 (tests/data/blim/pks_reference.json); one file, as the residuals
are checked inside each ML fit against the same reference.

The reference was produced by tests/data/blim/pks_reference.R on the shared probability
(pks's own `probability` data, b101-b112) and fraction-subtraction responses
(pks_<dataset>.json beside it); the tests read the JSON and need no R.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kstp.kst import blim, blim_gof
from kstp.kst.blim import BlimError, delineate, fit_blim, response_patterns
from kstp.kst.spaces import KnowledgeSpace

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "blim"
DATASETS = {"probability_pks": "responses_full.csv", "frcsub": "responses.csv"}


@pytest.fixture(scope="module")
def pks():
    return {key: value for dataset in DATASETS if (REFERENCE / f"pks_{dataset}.json").exists()
            for key, value in json.loads((REFERENCE / f"pks_{dataset}.json").read_text()).items()}


def _data(data_root, dataset):
    responses = pd.read_csv(data_root / "responses" / dataset / DATASETS[dataset], index_col=0)
    q = pd.read_csv(data_root / "responses" / dataset / "qmatrix.csv", index_col=0)
    return responses, q


def _space(q: pd.DataFrame) -> np.ndarray:
    """The knowledge space of skill inclusion (Eq. 1, reflexive rule, on a skill map), via kstp's spaces."""
    skills = {i: set(q.columns[q.loc[i] == 1]) for i in q.index}
    pairs = [(a, b) for a in q.index for b in q.index if a != b and skills[a] <= skills[b]]
    states = KnowledgeSpace.build(list(q.index), pairs).states()
    return np.array([[int(i in s) for i in q.index] for s in states], dtype=np.uint8)


def _structure(q, kind):
    return _space(q) if kind == "space" else delineate(q.to_numpy())


def _patterns(states) -> list[str]:
    return ["".join(map(str, row)) for row in np.asarray(states, dtype=int)]


# ---- hand-computed examples -----------------------------------------------------------------
def test_fit_blim_md_hand_example():
    # States {}, {a}, {a, b}; pattern {b} (10 learners) is at distance 1 from {} and {a, b}: 5 each.
    k = np.array([[0, 0], [1, 0], [1, 1]])
    fit = fit_blim(k, np.array([[0, 0], [1, 0], [1, 1], [0, 1]]), np.array([30, 30, 30, 10]), ["a", "b"], "MD")
    assert fit.p_k == pytest.approx([35 / 100, 30 / 100, 35 / 100])
    # beta_a: of the 65 in states holding a, the 5 of {b} miss a; beta_b: states holding b hold 35, none miss b.
    assert fit.beta == pytest.approx([5 / 65, 1e-6])
    assert fit.eta == pytest.approx([1e-6, 5 / 65])
    assert fit.discrepancy == pytest.approx(0.1) and fit.discrepancy_table == {0: 90, 1: 10}
    assert fit.iterations == 1 and fit.n_parameters == 2 + 2 + 2 and fit.df == 3 - 6


def test_fit_blim_fixed_zero_rates_give_observed_shares():
    # One item, states {} and {a}, no errors allowed: pi equals the observed shares, exactly.
    fit = fit_blim(np.array([[0], [1]]), np.array([[0], [1]]), np.array([3, 7]), ["a"], "ML",
                   beta_fix=np.array([0.0]), eta_fix=np.array([0.0]))
    assert fit.p_k == pytest.approx([0.3, 0.7])
    assert fit.log_likelihood == pytest.approx(3 * np.log(0.3) + 7 * np.log(0.7))
    assert fit.g2 == pytest.approx(0.0, abs=1e-12) and fit.n_parameters == 1 and fit.df == 0
    assert np.isnan(fit.beta_se).all()  # fixed rates have no standard error


def test_fit_blim_ml_raises_likelihood_over_md():
    k = np.array([[0, 0], [1, 0], [1, 1]])
    r, n = np.array([[0, 0], [1, 0], [1, 1], [0, 1]]), np.array([30, 30, 30, 10])
    assert fit_blim(k, r, n, method="ML").log_likelihood > fit_blim(k, r, n, method="MD").log_likelihood


@pytest.mark.parametrize(("states", "text"), [
    ([[1, 0], [1, 1]], "the empty set is not a state (every state holds a)"),
    ([[0, 0], [1, 0]], "the whole domain is not a state (no state holds b)"),
    ([[0, 0], [1, 1], [1, 1]], "lists a state twice"),
])
def test_check_structure_refuses_non_structures(states, text):
    with pytest.raises(BlimError, match=text.replace("(", r"\(").replace(")", r"\)")):
        blim.check_structure(np.array(states), ["a", "b"])


def test_fit_blim_refuses_unknown_method_and_bad_fix():
    k, r, n = np.array([[0], [1]]), np.array([[1]]), np.array([1])
    with pytest.raises(BlimError, match="unknown method 'EM'"):
        fit_blim(k, r, n, method="EM")
    with pytest.raises(BlimError, match=r"\[0, 1\); got 1.5"):
        fit_blim(k, r, n, eta_fix=np.array([1.5]))


def test_delineate_conjunctive_hand_example():
    # a needs s, b needs t, c needs s and t; a fourth item d needs nothing and is in every state.
    assert delineate(np.array([[1, 0], [0, 1], [1, 1]])).tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1]]
    with_free = delineate(np.array([[1, 0], [0, 0]]))
    assert with_free.tolist() == [[0, 1], [1, 1]]
    with pytest.raises(BlimError, match="the empty set is not a state"):
        blim.check_structure(with_free, ["a", "d"])


def test_outer_fringe_and_covering_states_hand_example():
    # {}, {a}, {a, b}, {a, c}, {a, b, c}, and {a, b, c, d} only after all three.
    k = np.array([[0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1]])
    assert blim.outer_fringe(k, 1).tolist() == [False, True, True, False]
    assert blim.outer_fringe(k, 4).tolist() == [False, False, False, True]
    assert blim.covering_states(k, 1).tolist() == [2, 3]
    assert blim.covering_states(k, 5).tolist() == []


def test_most_likely_states_posterior_hand_example():
    # Two states {} and {a}, pi = (0.5, 0.5), beta = eta = 0.2: P({} | a right) = 0.2 / (0.2 + 0.8) = 0.2.
    fit = fit_blim(np.array([[0], [1]]), np.array([[0], [1]]), np.array([1, 1]), method="ML",
                   beta_fix=np.array([0.2]), eta_fix=np.array([0.2]))
    assert fit.p_k == pytest.approx([0.5, 0.5])
    best, post = blim.most_likely_states(fit, np.array([[1], [0]]))
    assert best.tolist() == [1, 0] and post == pytest.approx([0.8, 0.8])


def test_residuals_saturated_fit_are_zero():
    fit = fit_blim(np.array([[0], [1]]), np.array([[0], [1]]), np.array([3, 7]), beta_fix=np.array([0.0]),
                   eta_fix=np.array([0.0]))
    _, mu, pearson = blim_gof.residuals(fit, "pearson")
    assert mu == pytest.approx([0.3, 0.7]) and pearson == pytest.approx([0, 0], abs=1e-12)


# ---- held equal to pks ----------------------------------------------------------------------
FITS = [(d, s, m) for d in DATASETS for s in ("space", "delineated") for m in ("ML", "MD", "MDML")]


@pytest.mark.parametrize(("dataset", "kind", "method"), FITS)
def test_fit_blim_equals_pks(data_root, pks, dataset, kind, method):
    ref = pks[f"{dataset}/{kind}/{method}"]
    responses, q = _data(data_root, dataset)
    states = _structure(q, kind)
    assert sorted(_patterns(states)) == sorted(ref["states"])  # the same structure as R built
    patterns, counts, _ = response_patterns(responses.to_numpy())
    fit = fit_blim(states, patterns, counts, list(q.index), method)
    order = [_patterns(states).index(p) for p in ref["states"]]
    assert np.abs(fit.p_k[order] - ref["P_K"]).max() < 1e-4
    assert np.abs(fit.beta - ref["beta"]).max() < 1e-4 and np.abs(fit.eta - ref["eta"]).max() < 1e-4
    assert fit.iterations == ref["iter"]
    assert (fit.df, fit.n_parameters) == (ref["df"], ref["npar"])
    for ours, theirs in ((fit.g2, "G2"), (fit.log_likelihood, "loglik"), (fit.aic, "AIC"), (fit.bic, "BIC"),
                         (fit.discrepancy, "discrepancy")):
        assert ours == pytest.approx(ref[theirs], abs=1e-4)
    if not np.isnan(float(ref["pval"])):  # jsonlite writes R's NaN as "NaN"
        assert fit.p_value == pytest.approx(ref["pval"], abs=1e-6)  # pks: 1 - pchisq, 0 when tiny
    else:  # df <= 0 (frcsub's space has more states than response patterns): pks's pchisq gives NaN
        assert fit.df <= 0 and np.isnan(fit.p_value)
    assert [fit.errors["careless"], fit.errors["guess"]] == pytest.approx(ref["nerror"], abs=1e-4)
    if method == "ML":
        index = {p: i for i, p in enumerate(_patterns(blim_gof.residuals(fit)[0]))}
        _, _, deviance = blim_gof.residuals(fit)
        _, _, pearson = blim_gof.residuals(fit, "pearson")
        rows = [index[p] for p in ref["residual_patterns"]]
        assert np.abs(deviance[rows] - ref["residuals_deviance"]).max() < 1e-4
        assert np.abs(pearson[rows] - ref["residuals_pearson"]).max() < 1e-4


@pytest.mark.parametrize("dataset", list(DATASETS))
def test_fit_blim_constraints_equal_pks(data_root, pks, dataset):
    ref = pks[f"{dataset}/delineated/ML-constrained"]
    responses, q = _data(data_root, dataset)
    patterns, counts, _ = response_patterns(responses.to_numpy())
    eta_fix = np.full(len(q), np.nan)
    eta_fix[6] = 0.05
    fit = fit_blim(delineate(q.to_numpy()), patterns, counts, list(q.index), "ML", beta_equal=[[0, 1, 2]],
                   eta_equal=[[3, 4, 5]], eta_fix=eta_fix)
    assert fit.beta[0] == fit.beta[1] == fit.beta[2] and fit.eta[3] == fit.eta[5] and fit.eta[6] == 0.05
    assert np.abs(fit.beta - ref["beta"]).max() < 1e-4 and np.abs(fit.eta - ref["eta"]).max() < 1e-4
    assert (fit.n_parameters, fit.df, fit.iterations) == (ref["npar"], ref["df"], ref["iter"])
    assert fit.g2 == pytest.approx(ref["G2"], abs=1e-4)


def test_bootstrap_p_within_monte_carlo_error_of_pks(data_root, pks):
    ref = pks["probability_pks/delineated/ML-bootstrap"]
    responses, q = _data(data_root, "probability_pks")
    patterns, counts, _ = response_patterns(responses.to_numpy())
    fit = fit_blim(delineate(q.to_numpy()), patterns, counts, list(q.index), "ML")
    samples = 40
    sample = blim_gof.bootstrap_p(fit, samples, seed=1)
    p, g2 = sample.p, sample.g2
    assert len(g2) == samples and (g2 > 0).all()
    # Bootstrap standard errors of beta are close to the observed-information ones on this data
    # (each item is mastered by hundreds of learners); measured: within a factor of 1.5 throughout.
    assert (np.abs(np.log(sample.beta_sd / fit.beta_se)) < np.log(1.5)).all()
    pooled = (ref["p"] * ref["B"] + p * samples) / (ref["B"] + samples)
    error = np.sqrt(max(pooled * (1 - pooled), 1 / ref["B"]) * (1 / ref["B"] + 1 / samples))
    assert abs(p - ref["p"]) <= 3 * error


@pytest.mark.parametrize("constrained", [False, True], ids=["free", "fixed-and-equal"])
def test_bootstrap_refits_side_by_side_equal_fit_blim_one_at_a_time(data_root, constrained, monkeypatch):
    """bootstrap_p's ML refits run in batches (blim_gof._refit_ml): each equals fit_blim on the same draw, step
    for step (the same number of EM steps) and to 1e-12 in G2 and the rates; the constrained case has a
    fixed zero guess rate (pairs ruled out), a fixed careless rate and an equality class."""
    responses, q = _data(data_root, "probability_pks")
    patterns, counts, _ = response_patterns(responses.to_numpy())
    n = len(q)
    options = {}
    if constrained:
        options = {"beta_fix": np.r_[0.05, np.full(n - 1, np.nan)], "eta_fix": np.r_[np.full(6, np.nan), 0.0,
                                                                                     np.full(n - 7, np.nan)],
                   "beta_equal": [[1, 2, 3]]}
    fit = fit_blim(_space(q), patterns, counts, list(q.index), "ML", **options)
    rng = np.random.default_rng(3)
    samples = [blim_gof.simulate_counts(fit, rng) for _ in range(6)]
    # batches of three: a second batch, and refits leaving a batch at different steps
    monkeypatch.setattr(blim_gof, "_BATCH_CELLS", 3 * max(len(p) for p, _ in samples) * len(fit.states))
    g2, beta, eta, iterations = blim_gof._refit_ml(fit, samples)
    for b, (p, c) in enumerate(samples):
        one = fit_blim(fit.states, p, c, fit.items, "ML", standard_errors=False, **options)
        assert iterations[b] == one.iterations and len(set(iterations)) > 1
        assert g2[b] == pytest.approx(one.g2, rel=1e-12)
        assert np.abs(beta[b] - one.beta).max() < 1e-12 and np.abs(eta[b] - one.eta).max() < 1e-12
    if constrained:
        assert (beta[:, 0] == 0.05).all() and (eta[:, 6] == 0).all() and (beta[:, 1] == beta[:, 3]).all()


def test_covering_states_equal_the_definition_on_random_families():
    """Proper supersets of K with no state strictly between, by the definition, over all pairs."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        k = np.unique(rng.integers(0, 2, size=(int(rng.integers(2, 40)), 6)).astype(bool), axis=0)
        for state in range(len(k)):
            sup = [a for a in range(len(k)) if (k[a] >= k[state]).all() and k[a].sum() > k[state].sum()]
            want = [a for a in sup if not any(b != a and (k[b] <= k[a]).all() for b in sup)]
            assert blim.covering_states(k, state).tolist() == want
