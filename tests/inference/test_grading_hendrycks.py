"""hendrycks/math's ``is_equiv`` test cases against kstp's grader.

Source: hendrycks/math, ``modeling/math_equivalence_test.py``, commit 985bdc1 (16 cases, one a
test method), as data in ``tests/data/grading/hendrycks-math.jsonl``. ``is_equiv(test_in,
test_out)`` is symmetric; ``test_in`` is taken as the gold and ``test_out`` as the reply, graded
as a new user would, ``grade(reply, gold)`` with default options. hendrycks/math compares
normalised strings, so a list in another order is not equal; kstp compares a list of values in
any order (the README's grading conventions).
"""

from __future__ import annotations

import pytest

from tests.inference.peer_cases import check_provenance, convention_documented, graded, params

SUITE, REPO = "hendrycks-math", "hendrycks/math"


def test_hendrycks_cases_name_their_source():
    check_provenance(SUITE, REPO)
    assert len(params(SUITE, "in")) + len(params(SUITE, "convention")) == 16


@pytest.mark.parametrize("case", params(SUITE, "in"))
def test_hendrycks_in_scope_case_agrees(case):
    verdict = graded(case)
    assert verdict.correct is case["expected"], verdict


@pytest.mark.parametrize("case", params(SUITE, "convention"))
def test_hendrycks_convention_differs_as_the_readme_says(case):
    assert graded(case).correct is not case["expected"]
    assert convention_documented(case), case["scope"]
