"""RQEval graded as its authors' release grades (issue 47): kstp's rewrite of the release's
``metrics/answer_extraction.py`` against the release's own verdicts, case by case, and the runs it grades.

``tests/data/rqeval/release_grading.jsonl`` holds the release's ``extract_answer`` and ``is_correct`` on
hand-made replies (the issue's examples and each rule's neighbours), real published replies
(``tests/data/grading/real-replies.jsonl``: GSM8K and MMLU-Pro with a gold of A-D) and the local model's
RQEval replies at the paper's 256 tokens; ``tools/rqeval_release_cases.py`` ran the release's functions
(github.com/senolali/RQEval at the commit each row names) to write it. The release's code is not in kstp.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kstp.evaluators import rqeval as rq
from kstp.evaluators.rqeval import release_grading
from kstp.inference.backend import Completion

DATA = Path(__file__).resolve().parents[1] / "data" / "rqeval" / "release_grading.jsonl"
CASES = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def test_the_release_cases_name_their_source_and_cover_each_kind():
    assert {(c["repo"], c["file"]) for c in CASES} == {("senolali/RQEval", "metrics/answer_extraction.py")}
    kinds = {release_grading.gold_kind(c["gold"]) for c in CASES}
    assert kinds == {"number", "yesno", "choice", "text"}
    assert len({c["id"] for c in CASES}) == len(CASES) >= 300
    assert sum(c["id"].startswith("smollm2/") for c in CASES) >= 60
    assert sum(c["finish_reason"] == "length" for c in CASES) >= 10  # replies cut at the cap are among them


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kstp_grades_each_reply_as_the_release_does(case):
    assert release_grading.matches(case["reply"], case["gold"]) == (case["correct"], case["extracted"])


@pytest.mark.parametrize(("reply", "finish", "gold", "release", "kstp"), [
    # an early answer in a reply cut at the 256-token cap: right in the release, truncated in kstp
    ("Yes. Hamsters are prey animals, so they are often", "length", "yes", True, False),
    ("The answer is B. Option B says that the", "length", "B", True, False),
    # the release credits the last number, kstp the stated answer
    ("The answer is $18. She sells 9 eggs at 2 dollars each.", "stop", "18", False, True),
])
def test_the_issues_examples_differ_as_the_readme_says(reply, finish, gold, release, kstp):
    completion = Completion(0, 1, text=reply, finish_reason=finish)
    assert rq.score_item(completion, gold).correct is release
    assert rq.score_item(completion, gold, grading="kstp").correct is kstp


def test_a_reply_with_nothing_to_extract_is_no_answer_and_a_failure_keeps_its_reason():
    none = rq.score_item(Completion(0, 1, text="That is drastic.", finish_reason="stop"), "D")
    assert (none.correct, none.extracted, none.reason) == (False, None, "no answer found")
    failed = rq.score_item(Completion(0, 1, text=None, error="empty: the reply has no content"), "D")
    assert (failed.correct, failed.reason) == (False, "empty: the reply has no content")


def test_cq_of_the_local_models_strategyqa_replies_by_each_rule():
    """The issue measured CQ .167 (kstp) against .267 (release) on 30 StrategyQA replies of the local model;
    these 30 replies, graded here both ways (the release's verdicts are the release's own)."""
    rows = [c for c in CASES if c["id"].startswith("smollm2/strategyqa:")]
    assert len(rows) == 30
    release = sum(c["correct"] for c in rows) / len(rows)
    kstp = sum(rq.score_item(Completion(0, 1, text=c["reply"], finish_reason=c["finish_reason"]), c["gold"],
                             "yesno", grading="kstp").correct for c in rows) / len(rows)
    # 8 of 30 by the release's rule (an early "Yes."/"No." in a reply cut at 256 tokens counts), 5 by kstp's
    assert (release, kstp) == (pytest.approx(8 / 30), pytest.approx(5 / 30))
