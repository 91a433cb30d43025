"""The grading process: replies graded in a child, each within a time limit, a fresh child after a bad one."""

from __future__ import annotations

import time

from kstp.inference.backend import Completion
from kstp.inference.grader import Grader
from tests.inference import graders


def _replies(*texts: str) -> list[tuple]:
    return [(Completion(0, 42, text=t), "\\boxed{5}") for t in texts]


def test_a_reply_that_kills_the_grader_is_recorded_and_a_fresh_one_grades_the_rest():
    grader = Grader(timeout=5)
    try:
        got = grader.grade(graders.exits_on, _replies("\\boxed{5}", "boom", "\\boxed{5}"))
        assert got == [{"verdict": "correct", "correct": True},
                       {"verdict": "not gradable: the grader crashed on it", "correct": False},
                       {"verdict": "correct", "correct": True}]
        again = grader.grade(graders.same_text, _replies("\\boxed{4}"))  # the fresh child serves the next call
        assert again == [{"verdict": "wrong answer", "correct": False}]
    finally:
        grader.close()


def test_the_time_limit_is_per_reply_and_the_child_is_reused_otherwise():
    grader = Grader(timeout=1)
    try:
        start = time.monotonic()
        got = grader.grade(graders.stall_on, [(Completion(0, 42, text=t), "\\boxed{5}", "sleep")
                                              for t in ("sleep", "\\boxed{5}", "sleep", "x")])
        assert time.monotonic() - start < 10
        assert [g["verdict"] for g in got] == ["not gradable: the grader did not finish within 1 s", "correct",
                                               "not gradable: the grader did not finish within 1 s", "wrong answer"]
        assert grader.cpu_seconds() > 0
    finally:
        grader.close()


def test_a_grading_function_of_the_callers_folder_is_found_from_any_working_folder(tmp_path, monkeypatch):
    """The child imports from the parent's path, not only from its working folder: a grading module of the caller's
    project, imported by the parent from there, is graded with while the working folder is elsewhere."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "my_grading.py").write_text("def exact(completion, gold):\n"
                                           "    return {'verdict': 'mine', 'correct': completion.text == gold}\n")
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.chdir(elsewhere)
    import my_grading

    grader = Grader(timeout=5)
    try:
        assert grader.grade(my_grading.exact, _replies("\\boxed{5}", "5")) == [{"verdict": "mine", "correct": True},
                                                                               {"verdict": "mine", "correct": False}]
    finally:
        grader.close()
