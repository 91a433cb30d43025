"""The simple learning model (kstp.kst.slm) against pks 0.6-0's ``slm``.

Reference: tests/data/kst/blim_identify.json, written by tests/data/kst/blim_identify.R:
``slm(DoignonFalmagne7$K, DoignonFalmagne7$N.R, method)`` for ML, MD and MDML (pks's example
learning space and its 1000 response patterns, read here from the kstIO files kstIO wrote).
"""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from kstp.kst.blim import BlimError, response_patterns
from kstp.kst.slm import fit_slm, slm_state_probabilities
from kstp.loaders.kstio import read_kst_file

DATA = Path(__file__).resolve().parents[1] / "data" / "kst"
PKS = json.loads((DATA / "blim_identify.json").read_text())["slm_DoignonFalmagne7"]


@pytest.mark.parametrize("method", ["ML", "MD", "MDML"])
def test_fit_slm_equals_pks(method):
    states = read_kst_file(DATA / "kstio" / "DoignonFalmagne7.spc").matrix
    assert ["".join(map(str, row)) for row in states] == PKS["states"]
    patterns, counts, _ = response_patterns(read_kst_file(DATA / "kstio" / "DoignonFalmagne7.dat").matrix)
    fit, ref = fit_slm(states, patterns, counts, list("abcde"), method), PKS[method]
    assert (fit.iterations, fit.df, fit.n_parameters, fit.converged) == (ref["iter"], ref["df"], ref["npar"], True)
    for mine, theirs in ((fit.g, "g"), (fit.p_k, "P_K"), (fit.beta, "beta"), (fit.eta, "eta")):
        assert mine == pytest.approx(ref[theirs], abs=1e-12)
    assert (fit.g2, fit.log_likelihood, fit.discrepancy) == pytest.approx(
        (ref["G2"], ref["loglik"], ref["discrepancy"]), abs=1e-9)


def test_state_probabilities_of_a_learning_space_sum_to_one_by_hand():
    # {}, {a}, {b}, {a,b}, {a,b,c}: pi_{} = (1-g_a)(1-g_b), pi_{a} = g_a (1-g_b), pi_{b} = g_b (1-g_a),
    # pi_{a,b} = g_a g_b (1-g_c), pi_Q = g_a g_b g_c
    states = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1]])
    ga, gb, gc = 0.3, 0.6, 0.2
    found = slm_state_probabilities(states, np.array([ga, gb, gc]))
    assert found == pytest.approx([(1 - ga) * (1 - gb), ga * (1 - gb), gb * (1 - ga), ga * gb * (1 - gc),
                                   ga * gb * gc], abs=1e-15)
    for g in product((0.1, 0.5, 0.9), repeat=3):
        assert slm_state_probabilities(states, np.array(g)).sum() == pytest.approx(1, abs=1e-15)


@pytest.mark.parametrize(("states", "said"), [
    ([[0, 0], [1, 0], [0, 1], [1, 1], [0, 0]], "lists a state twice"),
    ([[0, 0, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1]], "not well-graded"),  # {a,b} and {b,c}: no single item in
    ([[0, 0], [1, 0], [0, 1], [1, 1]], None),  # the power set is a learning space: fitted
])
def test_fit_slm_refuses_what_is_not_a_learning_space(states, said):
    states = np.array(states)
    patterns, counts = np.array([[0] * states.shape[1], [1] * states.shape[1]]), np.array([5, 5])
    if said is None:
        assert fit_slm(states, patterns, counts, method="MD").converged
        return
    with pytest.raises(BlimError, match=said):
        fit_slm(states, patterns, counts)


def test_fit_slm_refuses_a_structure_not_closed_under_union():
    states = read_kst_file(DATA / "kstio" / "endm.kst").matrix  # endm's K: pks's slm stops (is.knowledgespace)
    patterns, counts, _ = response_patterns(read_kst_file(DATA / "kstio" / "endm.dat").matrix)
    with pytest.raises(BlimError, match="needs a learning space .* not closed under union"):
        fit_slm(states, patterns, counts)
