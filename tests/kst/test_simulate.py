"""Simulation from a BLIM (kstp.kst.blim_gof.simulate, pks's ``simulate.blim``), and recovery by the fit.

The generating model is the one pks's ``endm`` help page simulates from (Heller & Wickelmaier
2013): the structure ``endm$K`` (not a space), P.K = (.1, .15, .15, .2, .2, .1, .1), every
beta and eta 0.1. Expected pattern probabilities are computed here by hand from the BLIM's
definition (Doignon & Falmagne 1999, §11), not by kstp.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from kstp.kst.blim import BlimError, fit_blim, response_patterns
from kstp.kst.blim_gof import simulate
from kstp.loaders.kstio import read_kst_file

K = read_kst_file(Path(__file__).resolve().parents[1] / "data" / "kst" / "kstio" / "endm.kst").matrix
P_K = np.array([0.1, 0.15, 0.15, 0.2, 0.2, 0.1, 0.1])
RATE = np.full(4, 0.1)


def _by_hand(pattern) -> float:
    """P(R) = sum_K pi_K prod_q P(r_q | K), straight from the definition."""
    total = 0.0
    for state, weight in zip(K, P_K, strict=True):
        p = weight
        for r, k in zip(pattern, state, strict=True):
            p *= (1 - 0.1 if r else 0.1) if k else (0.1 if r else 1 - 0.1)
        total += p
    return total


def test_simulated_patterns_follow_the_model():
    answers, drawn = simulate(K, P_K, RATE, RATE, 20_000, np.random.default_rng(7))
    assert answers.shape == (20_000, 4) and set(np.unique(answers)) <= {0, 1}
    # each state drawn in proportion to P.K (chi-square, 6 df)
    assert stats.chisquare(np.bincount(drawn, minlength=7), 20_000 * P_K).pvalue > 1e-3
    patterns = list(product((0, 1), repeat=4))
    expected = np.array([_by_hand(p) for p in patterns])
    assert expected.sum() == pytest.approx(1.0)
    seen = {tuple(row): 0 for row in patterns}
    for row in answers.tolist():
        seen[tuple(row)] += 1
    assert stats.chisquare([seen[p] for p in patterns], 20_000 * expected).pvalue > 1e-3


def test_fit_on_simulated_data_recovers_the_generating_parameters():
    # 200,000 learners cost no more to fit than 200 (the fit runs over the 16 distinct patterns). The
    # rates are weakly identified in this K (eta of b: a standard error of about 0.009 even here, from
    # the spread of repeated simulations), so the bounds are three to four standard errors.
    answers, _ = simulate(K, P_K, RATE, RATE, 200_000, np.random.default_rng(11))
    patterns, counts, _ = response_patterns(answers)
    fit = fit_blim(K, patterns, counts, method="ML")
    assert np.abs(fit.p_k - P_K).max() < 0.015
    assert np.abs(fit.beta - 0.1).max() < 0.025 and np.abs(fit.eta - 0.1).max() < 0.025


def test_simulation_is_seeded():
    a, _ = simulate(K, P_K, RATE, RATE, 50, np.random.default_rng(3))
    b, _ = simulate(K, P_K, RATE, RATE, 50, np.random.default_rng(3))
    c, _ = simulate(K, P_K, RATE, RATE, 50, np.random.default_rng(4))
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def test_simulation_refuses_rates_outside_the_unit_interval():
    with pytest.raises(BlimError, match="a careless-error rate must lie in \\[0, 1\\]; got 1.5"):
        simulate(K, P_K, np.full(4, 1.5), RATE, 5, np.random.default_rng(0))
