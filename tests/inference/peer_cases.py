"""The field's answer-checker test suites as data, for the ``test_grading_<suite>.py`` files.

Each suite's cases are in ``tests/data/grading/<suite>.jsonl``, extracted from the peer's
public test file by ``tools/peer_grading_cases.py`` (with :mod:`ast`; none of the peer's
code is in kstp): one JSON object a case, naming its repository, commit, file, test and
line, with the gold, the reply, the peer's expected verdict, the peer settings the test
passes, and its scope (``in``; ``convention: ...``, kstp's documented difference;
``out: ...``, a kind or setting kstp does not claim; ``peer error: ...``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from kstp.inference.grading import Verdict, grade

DATA = Path(__file__).resolve().parents[1] / "data" / "grading"
README = Path(__file__).resolve().parents[2] / "README.md"
#: The commit each suite was extracted at (the data files say it case by case too).
COMMITS = {"math-verify": "5d148cfaaf99214c2e4ffb4bc497ab042c592a7a",
           "lighteval": "3fd15266bc8448b797e61462d293aa3fd40b3580",
           "hendrycks-math": "985bdc1696e88e8643f081a0ff4719da39f2ae2a",
           "skyrl": "a9564572eb8e91076be43c1bd5e4615e3de17265",
           "open-r1": "1416fa0cf21595d2083b399a2a0bbddd7f6e9563"}


@cache
def cases(suite: str) -> tuple[dict, ...]:
    """Every case of a suite, in the order of its source file."""
    with open(DATA / f"{suite}.jsonl", encoding="utf-8") as lines:
        return tuple(json.loads(line) for line in lines)


def params(suite: str, scope: str) -> list:
    """The cases of a suite whose scope starts with ``scope`` (``in``, ``convention``, ``out``, ``peer error``),
    as pytest parameters named by case id."""
    return [pytest.param(case, id=case["id"].split("/")[-1]) for case in cases(suite)
            if case["scope"] == scope or (scope != "in" and case["scope"].startswith(scope))]


def graded(case: dict) -> Verdict:
    """kstp's verdict on a case, as a new user gets it: ``grade(reply, gold)`` with default options.

    A case that ran out of time is graded once more: math-verify's LaTeX parser learns a
    formula's shape on first sight (half a second for a ``\\sum`` equation), which a loaded
    machine can push past the grader's budget; the second call finds the shape learned and
    the parse cached. Every verdict asserted is still the grader's own.
    """
    verdict = grade(case["reply"], case["gold"])
    if verdict.reason.startswith("not gradable: too slow"):
        verdict = grade(case["reply"], case["gold"])
    return verdict


def refused(verdict: Verdict) -> bool:
    """Whether a verdict declines to judge ("not supported: ...", "not gradable: ...")."""
    return verdict.reason.startswith(("not supported", "not gradable"))


def check_provenance(suite: str, repo: str) -> None:
    """Every case names the peer's repository, the pinned commit, its file, test and line."""
    found = cases(suite)
    assert found, f"no cases for {suite}"
    assert {c["repo"] for c in found} == {repo}
    assert {c["commit"] for c in found} == {COMMITS[suite]}
    assert all(c["file"] and c["test"].startswith("test") and c["line"] > 0 for c in found)
    assert len({c["id"] for c in found}) == len(found)


def convention_documented(case: dict) -> bool:
    """Whether the README's grading section states the convention the case's scope names."""
    return case["scope"].removeprefix("convention: ") in README.read_text(encoding="utf-8")
