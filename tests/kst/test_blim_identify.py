"""Identifiability of BLIM parameters (kstp.kst.blim_identify) against pks 0.6-0 and by hand.

Reference: tests/data/kst/blim_identify.json, written by tests/data/kst/blim_identify.R:
pks's ``jacobian`` and ``blimit`` (rank, parameters) at fixed parameter values on a hand-made
structure, endm's K and DoignonFalmagne7, and the rank of pks's jacobian on chess DST3.

The hand-made structure {}, {a}, {a,b}, {a,c}, {a,b,c} is forward-graded in a (adding a to
the only state without it, {}, gives a state) and backward-graded in b and c (removing b or
c from any state that holds it gives a state): by Heller (2017), eta_a, beta_b and beta_c
trade off with the state probabilities, and nothing else does. The first test shows the
trade-off of eta_a by hand: a second parameter set with another eta_a gives every pattern
the same probability.
"""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from kstp.kst.blim_identify import MAX_CELLS, identifiability, jacobian
from kstp.loaders.kstio import read_kst_file

DATA = Path(__file__).resolve().parents[1] / "data" / "kst"
PKS = json.loads((DATA / "blim_identify.json").read_text())
HAND = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])


def _p_r(states, beta, eta, p_k):
    """P(R) of all 2^n patterns from the definition: sum_K pi_K prod_q P(r_q | q in K)."""
    out = []
    for pattern in product((0, 1), repeat=states.shape[1]):
        total = 0.0
        for state, pi in zip(states, p_k, strict=True):
            term = pi
            for r, k, b, e in zip(pattern, state, beta, eta, strict=True):
                term *= (1 - b if r else b) if k else (e if r else 1 - e)
            total += term
        out.append(total)
    return np.array(out)


def test_the_guess_rate_of_a_trades_off_with_the_states_by_hand():
    beta, eta = np.array([0.1, 0.15, 0.2]), np.array([0.2, 0.1, 0.05])
    p_k = np.array([0.2, 0.2, 0.2, 0.2, 0.2])
    # {} and {a} differ in a alone: their masses 0.4 and a's share of correct answers in them,
    # 0.2 eta_a + 0.2 (1 - beta_a) = 0.22, are all the data see of them. Move eta_a to 0.3:
    # pi_{} (0.3 - 0.9) = 0.22 - 0.4 * 0.9, so pi_{} = 0.14 / 0.6 and pi_{a} = 0.4 - pi_{}.
    moved = p_k.copy()
    moved[0] = 0.14 / 0.6
    moved[1] = 0.4 - moved[0]
    other = _p_r(HAND, beta, np.array([0.3, 0.1, 0.05]), moved)
    assert other == pytest.approx(_p_r(HAND, beta, eta, p_k), abs=1e-15)
    result = identifiability(HAND, ["a", "b", "c"])
    assert result.beta_identified.tolist() == [True, False, False]  # beta_b, beta_c (backward-graded)
    assert result.eta_identified.tolist() == [False, True, True]  # eta_a (forward-graded)
    assert [n for n in result.unidentified if not n.startswith("probability")] == ["careless b", "careless c",
                                                                                    "guess a"]


@pytest.mark.parametrize("name", ["hand", "endm_K", "DoignonFalmagne7"])
def test_jacobian_and_rank_equal_pks(name):
    ref = PKS[name]
    states = np.array([[int(c) for c in p] for p in ref["states"]])
    found = jacobian(states, ref["beta"], ref["eta"], ref["P_K"])
    # pks leaves out the last pattern (1...1: the others' probabilities imply it); rows in expand.grid's order
    assert found[:-1] == pytest.approx(np.array(ref["jacobian"]), abs=1e-13)
    assert found.sum(axis=0) == pytest.approx(0, abs=1e-13)  # probabilities sum to 1 in every direction
    result = identifiability(states, ref["items"])
    assert (result.rank, result.n_parameters, result.null_dimension) == (ref["rank"], ref["npar"], ref["nsd"])


def test_endm_identifies_everything_and_doignon_falmagne7_not_its_graded_items():
    endm = identifiability(np.array([[int(c) for c in p] for p in PKS["endm_K"]["states"]]), list("abcd"))
    assert endm.unidentified == [] and endm.beta_identified.all() and endm.eta_identified.all()
    # pks's blimit: BETA4, BETA5 trade off with PI (backward-graded in d, e), ETA1, ETA2 too (forward-graded in a, b)
    df7 = identifiability(read_kst_file(DATA / "kstio" / "DoignonFalmagne7.spc").matrix, list("abcde"))
    assert [n for n in df7.unidentified if not n.startswith("probability")] == ["careless d", "careless e",
                                                                                 "guess a", "guess b"]


def test_chess_dst3_rank_equals_pks():
    result = identifiability(read_kst_file(DATA / "kstio" / "chess_dst3.kst").matrix, [f"q{j}" for j in range(16)])
    ref = PKS["chess_dst3"]
    assert (result.rank, result.n_parameters) == (ref["rank"], ref["npar"])


@pytest.mark.parametrize(("constraints", "rank", "parameters", "rates"), [
    ({"eta_equal": [[0, 1, 2]]}, 6, 8, ["careless b", "careless c"]),  # one guess rate: b and c fix it
    ({"beta_fix": [np.nan, 0.05, 0.05]}, 7, 8, ["guess a"]),
    ({"beta_fix": [np.nan, 0.05, 0.05], "eta_fix": [0.1, np.nan, np.nan]}, 7, 7, []),  # 7 cells, 7 parameters
])
def test_constraints_give_identifiability_back(constraints, rank, parameters, rates):
    result = identifiability(HAND, ["a", "b", "c"], **constraints)
    assert (result.rank, result.n_parameters) == (rank, parameters)
    assert [n for n in result.unidentified if not n.startswith("probability")] == rates


def test_a_structure_too_large_to_list_its_patterns_is_not_checked():
    assert 2**27 * 2 > MAX_CELLS  # the bound is in cells, patterns x states
    states = np.vstack([np.zeros(27, np.uint8), np.ones(27, np.uint8)])
    result = identifiability(states, [f"q{j}" for j in range(27)])
    assert not result.checked and result.rank is None and "2^27 response patterns x 2 states" in result.reason
