"""SkyRL's AIME and GSM8K reward test cases against kstp's grader.

Source: NovaSky-AI/SkyRL, ``skyrl-gym/tests/test_aime.py`` and ``test_gsm8k.py``, commit a956457
(13 cases), as data in ``tests/data/grading/skyrl.jsonl``: ``(output, ground_truth, expected)``,
a positive reward being correct. SkyRL's rewards are format-strict training signals (a GSM8K
answer without ``####`` earns nothing, answers are compared as normalised strings); kstp grades
the answer a reply states, by value (the README's grading conventions).
"""

from __future__ import annotations

import pytest

from tests.inference.peer_cases import check_provenance, convention_documented, graded, params

SUITE, REPO = "skyrl", "NovaSky-AI/SkyRL"


def test_skyrl_cases_name_their_source():
    check_provenance(SUITE, REPO)
    assert len(params(SUITE, "in")) + len(params(SUITE, "convention")) == 13


@pytest.mark.parametrize("case", params(SUITE, "in"))
def test_skyrl_in_scope_case_agrees(case):
    verdict = graded(case)
    assert verdict.correct is case["expected"], verdict


@pytest.mark.parametrize("case", params(SUITE, "convention"))
def test_skyrl_convention_differs_as_the_readme_says(case):
    assert graded(case).correct is not case["expected"]
    assert convention_documented(case), case["scope"]
