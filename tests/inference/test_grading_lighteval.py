"""lighteval's extractive-match test cases against kstp's grader.

Source: huggingface/lighteval, ``tests/unit/metrics/test_extractive_match.py``, commit 3fd1526
(233 cases), as data in ``tests/data/grading/lighteval.jsonl``. ``compare_strings(gold, pred)``
takes the gold first; each case is graded as a new user would, ``grade(reply, gold)`` with
default options. The multilingual cases (French, Chinese, Arabic, Hindi replies; a peer
language setting) are no kind kstp claims: it must read them right or refuse them.
"""

from __future__ import annotations

import pytest

from tests.inference.peer_cases import check_provenance, convention_documented, graded, params, refused

SUITE, REPO = "lighteval", "huggingface/lighteval"
FILE = "tests/unit/metrics/test_extractive_match.py"

#: kstp's verdict (default options) on the settings cases outside the agreement, and why it is right.
OUTSIDE = {
    # precision=2 / 4: at the default 6 decimals 0.33 is not 1/3, nor 0.3333
    f"{FILE}::test_complex_math_expressions[7]": False,
    f"{FILE}::test_complex_math_expressions[13]": False,
    f"{FILE}::test_precision[0]": False,
    # a gold of prose around a letter ("C Cecile", "A Peter\nCelina bum", "... the answer is\n(C) Cecile"):
    # lighteval reads the letter out of the gold; kstp's choice gold is the letter, so these golds are text
    # and expressions, which the replies "C" and "A" do not state
    **{f"{FILE}::test_extraction_abc[{i}]": False for i in (7, 8, 9, 10)},
}


def test_lighteval_cases_name_their_source():
    check_provenance(SUITE, REPO)
    multilingual = {c.values[0]["id"] for c in params(SUITE, "out: multilingual")}
    assert {c.values[0]["id"] for c in params(SUITE, "out")} - multilingual == set(OUTSIDE)


@pytest.mark.parametrize("case", params(SUITE, "in"))
def test_lighteval_in_scope_case_agrees(case):
    verdict = graded(case)
    assert verdict.correct is case["expected"], verdict


@pytest.mark.parametrize("case", params(SUITE, "convention"))
def test_lighteval_convention_differs_as_the_readme_says(case):
    assert graded(case).correct is not case["expected"]
    assert convention_documented(case), case["scope"]


@pytest.mark.parametrize("case", params(SUITE, "out: multilingual"))
def test_lighteval_multilingual_case_is_read_right_or_refused(case):
    verdict = graded(case)
    assert verdict.correct is case["expected"] or refused(verdict), verdict


@pytest.mark.parametrize("case", [p for p in params(SUITE, "out") if p.values[0]["id"] in OUTSIDE])
def test_lighteval_out_of_scope_case_has_the_default_verdict(case):
    assert graded(case).correct is OUTSIDE[case["id"]]
