"""Validation indices and likelihood-ratio tests (kstp.kst.validation) against kst, kstMatrix and pks.

Reference: tests/data/kst/surmise_validate.json, written by tests/data/kst/surmise_validate.R:
kst 0.5-4's ``kvalidate`` (gamma, VC, DI, DA), kstMatrix 2.3-4's ``kmvalidate`` (distance
distribution, DI, DA) on kstMatrix's ``xpl``, pks's DoignonFalmagne7, endm's K and chess DST1
with their response patterns; pks 0.6-0's ``anova`` of three nested BLIMs of DoignonFalmagne7.
"""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from kstp.errors import KstpError
from kstp.kst.blim import fit_blim, response_patterns
from kstp.kst.slm import fit_slm
from kstp.kst.validation import deviance_table, min_distances, pattern_distances, validate
from kstp.loaders.kstio import read_kst_file

DATA = Path(__file__).resolve().parents[1] / "data" / "kst"
REFERENCE = json.loads((DATA / "surmise_validate.json").read_text())


def _rows(patterns):
    return np.array([[int(c) for c in p] for p in patterns], dtype=np.uint8)


@pytest.mark.parametrize("name", ["xpl", "DoignonFalmagne7", "endm_K", "chess_dst1"])
def test_validation_indices_equal_kst_and_kstmatrix(name):
    ref = REFERENCE[f"validate_{name}"]
    v = validate(_rows(ref["states"]), _rows(ref["data"]))
    if ref["gamma"] is None:  # endm's K: a trivial surmise relation, 0/0 in kst too
        assert np.isnan(v.gamma) and np.isnan(v.vc) and (v.concordant, v.discordant) == (0, 0)
    else:
        assert (v.concordant, v.discordant) == (ref["nc"], ref["nd"]) and ref["vc_nd"] == ref["nd"]
        assert (v.gamma, v.vc) == pytest.approx((ref["gamma"], ref["vc"]), abs=1e-12)
    assert (v.di, v.da, v.dpot) == pytest.approx((ref["di"], ref["da"], ref["dpot"]), abs=1e-12)
    assert (v.di, v.da) == pytest.approx((ref["km_DI"], ref["km_DA"]), abs=1e-12)
    assert v.distances == [ref["km_dist"][str(d)] for d in range(len(ref["km_dist"]))]
    assert {str(d): c for d, c in enumerate(v.distances) if c} == ref["di_dist"]


def test_min_distances_by_brute_force():
    rng = np.random.default_rng(48)
    states = rng.integers(0, 2, size=(7, 5))
    every = np.array(list(product((0, 1), repeat=5)))
    brute = [min(int(np.abs(r - k).sum()) for k in states) for r in every]
    assert min_distances(every, states).tolist() == brute



def test_pattern_distances_by_brute_force():
    rng = np.random.default_rng(48)
    states = rng.integers(0, 2, size=(9, 6))
    every = (np.arange(64)[:, None] >> np.arange(6)[None, :]) & 1  # pattern x: item i is bit i
    assert pattern_distances(states, 6).tolist() == min_distances(every, states).tolist()


def test_validation_memory_stays_bounded_with_many_states():
    """16 items, 1,000 states: DA compared all 65,536 patterns with every state in blocks of 65,536 x states
    float32 cells (262 MB an array here, 4.2 GB at the 17,241 states of a random 16-item family, which failed
    with a traceback; 24 s and 3.7 GB at 24 items). Its search of the hypercube holds a byte a pattern."""
    import tracemalloc

    rng = np.random.default_rng(48)
    states = np.unique(np.vstack([np.zeros(16), np.ones(16), rng.integers(0, 2, (1_000, 16))]), axis=0)
    patterns = rng.integers(0, 2, (300, 16))
    tracemalloc.start()
    try:
        v = validate(states, patterns)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20
    assert v.di == pytest.approx(min_distances(patterns, states).mean(), abs=1e-12)
    tracemalloc.start()
    try:
        min_distances(rng.integers(0, 2, (70_000, 30)), rng.integers(0, 2, (1_000, 30)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 96 * 2**20  # the patterns themselves are 17 MB as float32

def test_validation_refuses_patterns_on_other_items():
    with pytest.raises(KstpError, match="the structure has 2 items and the patterns 3"):
        validate([[0, 0], [1, 1]], [[0, 0, 1]])


def test_deviance_table_equals_pks_anova():
    ref = REFERENCE["anova_DoignonFalmagne7"]
    states = read_kst_file(DATA / "kstio" / "DoignonFalmagne7.spc").matrix
    patterns, counts, _ = response_patterns(read_kst_file(DATA / "kstio" / "DoignonFalmagne7.dat").matrix)
    every = [list(range(5))]
    fits = [fit_blim(states, patterns, counts, list("abcde"), beta_equal=every, eta_equal=every),
            fit_blim(states, patterns, counts, list("abcde"), beta_equal=every),
            fit_blim(states, patterns, counts, list("abcde"))]
    table = deviance_table(*fits)
    assert [r["residDf"] for r in table] == ref["resid_df"]
    assert [r["residDeviance"] for r in table] == pytest.approx(ref["resid_dev"], abs=1e-6)
    assert [r["df"] for r in table[1:]] == ref["df"][1:] and table[0]["df"] is None
    assert [r["deviance"] for r in table[1:]] == pytest.approx(ref["deviance"][1:], abs=1e-6)
    assert [r["p"] for r in table[1:]] == pytest.approx(ref["p"][1:], abs=1e-6)
    slm = fit_slm(states, patterns, counts, list("abcde"))  # the SLM is nested in the BLIM on a learning space
    assert deviance_table(slm, fits[2])[1]["df"] == slm.df - fits[2].df
    with pytest.raises(KstpError, match="different response patterns"):
        deviance_table(fits[0], fit_blim(states, patterns, counts * 2, list("abcde")))
    with pytest.raises(KstpError, match="two or more"):
        deviance_table(fits[0])
