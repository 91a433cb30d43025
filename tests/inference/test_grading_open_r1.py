"""open-r1's accuracy-reward test cases against kstp's grader.

Source: huggingface/open-r1, ``tests/test_rewards.py``, commit 1416fa0: the completions and
solutions of the ``accuracy_reward`` tests (5 cases; reward 1.0 is correct), as data in
``tests/data/grading/open-r1.jsonl``. The length and cosine rewards built on the same
completions assert reward sizes, not verdicts, and are left out.
"""

from __future__ import annotations

import pytest

from tests.inference.peer_cases import check_provenance, graded, params

SUITE, REPO = "open-r1", "huggingface/open-r1"


def test_open_r1_cases_name_their_source():
    check_provenance(SUITE, REPO)
    assert len(params(SUITE, "in")) == 5


@pytest.mark.parametrize("case", params(SUITE, "in"))
def test_open_r1_case_agrees(case):
    verdict = graded(case)
    assert verdict.correct is case["expected"], verdict
