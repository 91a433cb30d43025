"""Population IITA (kstp.kst.iita_population) against DAKS 2.1-3's ``pop_iita``.

Reference: tests/data/kst/surmise_validate.json (``pop_iita_v1`` .. ``v3``), written by
tests/data/kst/surmise_validate.R: ``pop_iita(imp, 0.1, 0.05, 5, v = v)`` for the relation
``iita(R, 1)`` selects on DoignonFalmagne7's patterns, with the selection set from the
population and (``dataset = R``) from the data.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kstp.kst.blim import BlimError
from kstp.kst.iita import iita
from kstp.kst.iita_population import population_iita
from kstp.loaders.kstio import read_kst_file

DATA = Path(__file__).resolve().parents[1] / "data" / "kst"
REFERENCE = json.loads((DATA / "surmise_validate.json").read_text())


def _relation(pairs, m=5):
    out = np.zeros((m, m), bool)
    for i, j in pairs:
        out[i - 1, j - 1] = True
    return out


def _pairs(relation):
    return {(int(i) + 1, int(j) + 1) for i, j in zip(*np.nonzero(relation), strict=True)}


@pytest.mark.parametrize("variant", [1, 2, 3])
def test_population_iita_equals_daks_pop_iita(variant):
    ref = REFERENCE[f"pop_iita_v{variant}"]
    pop = population_iita(_relation(ref["imp"]), ref["careless"], ref["guess"], variant)
    found = dict(zip(("".join(map(str, r)) for r in pop.patterns.tolist()), pop.probability, strict=True))
    assert [found[p] for p in ref["patterns"]] == pytest.approx(ref["probability"], abs=1e-15)
    assert [_pairs(c) for c in pop.candidates] == [{tuple(p) for p in s} for s in ref["selection_set"]]
    assert pop.diff == pytest.approx(ref["diff"], abs=1e-15)
    assert pop.error_rate == pytest.approx(ref["error"], abs=1e-13)


@pytest.mark.parametrize("variant", [1, 2, 3])
def test_population_iita_of_a_samples_selection_set_equals_daks(variant):
    ref = REFERENCE[f"pop_iita_v{variant}"]
    responses = read_kst_file(DATA / "kstio" / "DoignonFalmagne7.dat").matrix
    sample = iita(responses, variant).candidates  # DAKS: ind_gen(ob_counter(dataset))
    assert [_pairs(c) for c in sample] == [{tuple(p) for p in s} for s in ref["data_selection_set"]]
    pop = population_iita(_relation(ref["imp"]), ref["careless"], ref["guess"], variant, candidates=sample)
    assert pop.diff == pytest.approx(ref["data_diff"], abs=1e-15)
    assert pop.error_rate == pytest.approx(ref["data_error"], abs=1e-13)


def test_population_iita_refusals():
    with pytest.raises(BlimError, match="not transitive"):
        population_iita(_relation([(1, 2), (2, 3)], 3), 0.1, 0.1)
    with pytest.raises(BlimError, match="in \\[0, 1\\)"):
        population_iita(_relation([(1, 2)], 2), 1.0, 0.1)
    with pytest.raises(BlimError, match="variant"):
        population_iita(_relation([(1, 2)], 2), 0.1, 0.1, variant=4)
