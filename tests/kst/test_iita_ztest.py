"""IITA's Z test (kstp.kst.iita_ztest) against DAKS 2.1-3's ``z_test`` and a Monte Carlo.

Reference: tests/data/kst/surmise_validate.json (``ztest_v1``, ``ztest_v2``), written by
tests/data/kst/surmise_validate.R: ``z_test(R, iita(R, v)$implications, v = v)`` and
``z_test(R, sel[[2]], imp_alt = sel[[3]], v = v)`` on DoignonFalmagne7's 1000 patterns. diff
equals DAKS's; the variance is the delta method's with an exact gradient, held to finite
differences and to the spread of diff over resampled data. DAKS's Z differs: its variance is
not the spread of diff (checked below), see kstp.kst.iita_ztest.z_test's Notes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kstp.kst.blim import BlimError
from kstp.kst.iita import diff_and_rate, iita
from kstp.kst.iita_ztest import diff_gradient, z_test
from kstp.loaders.kstio import read_kst_file

DATA = Path(__file__).resolve().parents[1] / "data" / "kst"
REFERENCE = json.loads((DATA / "surmise_validate.json").read_text())
R = read_kst_file(DATA / "kstio" / "DoignonFalmagne7.dat").matrix.astype(np.int64)


def _relation(pairs):
    out = np.zeros((5, 5), bool)
    for i, j in pairs:
        out[i - 1, j - 1] = True
    return out


def _diff(proportions, patterns, relation, variant):
    x = patterns.astype(np.float64)
    return diff_and_rate((1 - x).T @ (proportions[:, None] * x), x.T @ proportions, 1.0, relation, variant)[0]


@pytest.mark.parametrize("variant", [1, 2])
def test_z_test_diff_equals_daks_and_relation_is_iitas(variant):
    ref = REFERENCE[f"ztest_v{variant}"]
    relation = _relation(ref["imp"])
    assert np.array_equal(iita(R, variant).relation, relation)
    t = z_test(R, relation, variant=variant)
    assert t.diff[0] == pytest.approx(ref["diff"], abs=1e-15)
    pair = z_test(R, _relation(ref["imp2"]), _relation(ref["imp3"]), variant=variant)
    assert pair.diff == pytest.approx(tuple(ref["diff_alt"]), abs=1e-15)
    assert t.conf[0] < t.diff[0] < t.conf[1] and 0 < t.p_value < 1e-3


@pytest.mark.parametrize("variant", [1, 2])
def test_gradient_equals_finite_differences(variant):
    relation = iita(R, variant).relation
    diff, patterns, gradient = diff_gradient(R, relation, variant)
    counts = np.array([np.all(R == p, axis=1).sum() for p in patterns])
    rho = counts / len(R)
    assert diff == pytest.approx(_diff(rho, patterns, relation, variant), abs=1e-15)
    for c in range(len(patterns)):
        e = np.zeros(len(patterns))
        e[c] = 1e-6
        numeric = (_diff(rho + e, patterns, relation, variant) - _diff(rho - e, patterns, relation, variant)) / 2e-6
        assert gradient[c] == pytest.approx(numeric, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("variant", [1, 2])
def test_variance_is_the_spread_of_diff_over_resampled_data_where_daks_is_not(variant):
    ref = REFERENCE[f"ztest_v{variant}"]
    relation = _relation(ref["imp"])
    t = z_test(R, relation, variant=variant)
    _, patterns, _ = diff_gradient(R, relation, variant)
    rho = np.array([np.all(R == p, axis=1).sum() for p in patterns]) / len(R)
    rng = np.random.default_rng(48)
    draws = [_diff(rng.multinomial(len(R), rho) / len(R), patterns, relation, variant) for _ in range(2000)]
    spread = np.var(draws) * len(R)
    assert spread == pytest.approx(t.variance, rel=0.12)
    daks = (np.sqrt(len(R)) * ref["diff"] / ref["z"]) ** 2  # the variance DAKS's Z implies
    assert not 0.5 < daks / spread < 2


def test_z_test_refusals():
    with pytest.raises(BlimError, match="variants 1 .* and 2"):
        z_test(R, np.zeros((5, 5), bool), variant=3)
    with pytest.raises(BlimError, match="shape"):
        z_test(R, np.zeros((4, 4), bool))
    with pytest.raises(BlimError, match="variance is 0"):
        z_test(np.ones((10, 3), int), np.eye(3, k=1, dtype=bool))
