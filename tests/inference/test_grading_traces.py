"""Reasoning traces, replies cut mid-thought, and the answers people write (issue 41, section 3): each case
graded by hand, and their neighbours."""

from __future__ import annotations

import pytest

from kstp.inference.grading import grade, option_texts
from kstp.inference.grading.traces import split_trace, unfinished

THINK = "<think>\nMaybe it is \\boxed{7}? No, let me add again.\n</think>\n\nThe answer is 5."


@pytest.mark.parametrize(("reply", "rule"), [
    (THINK, "</think>"),
    ("Maybe it is \\boxed{7}? No.\n</think>\nThe answer is 5.", "</think>"),
    ("<thinking>is it \\boxed{7}?</thinking>\\boxed{5}", "</thinking>"),
    ("<|begin_of_thought|>7?<|end_of_thought|>\n<|begin_of_solution|>\\boxed{5}<|end_of_solution|>",
     "<|end_of_thought|>"),
    ("<|channel|>analysis<|message|>7?<|end|><|start|>assistant<|channel|>final<|message|>\\boxed{5}<|return|>",
     "harmony final channel"),
    ("analysis7? No.assistantfinal\\boxed{5}", "harmony final channel"),
    # two traces: the answer is after the last close
    ("<think>7?</think>so far 7.<think>No: 5.</think>The answer is 5.", "</think>"),
])
def test_the_answer_is_read_after_the_trace(reply, rule):
    verdict = grade(reply, "5")
    assert (verdict.correct, verdict.extracted, verdict.trace) == (True, "5", rule)


@pytest.mark.parametrize(("reply", "opened", "rule"), [
    ("<think>\nMaybe it is 5? Wait,", False, "unclosed <think>"),
    ("<thinking>So 5.", False, "unclosed <thinking>"),
    ("<|channel|>analysis<|message|>So it is 5.", False, "unclosed harmony analysis"),
    # the prompt opened the trace: a reply without </think> never closed it, even one that ends a sentence
    ("Let me see: 2 + 3 = 5. So I think that's right.", True, "unclosed <think> (opened by the prompt)"),
])
def test_a_trace_that_never_closed_answers_nothing(reply, opened, rule):
    verdict = grade(reply, "5", opened=opened)
    assert (verdict.correct, verdict.reason, verdict.trace) == (False, "no answer found", rule)


def test_opened_changes_nothing_where_the_trace_closed():
    assert grade("2 + 3 = 5.</think>The answer is 5.", "5", opened=True).correct
    assert split_trace("no trace here", opened=False).rule is None


@pytest.mark.parametrize(("reply", "ending"), [
    ("The answer is 6 hours. Wait, but let me check once more. 240/80 =", "ends on '='"),
    ("so even if it's 80, 10 is", "ends on 'is'"),
    ("Total: 14 have two,", "ends on ','"),
    ("the sum from ", "ends on 'from'"),
    ("The answer is 5. But I'm not sure. Hmm.", "ends on 'Hmm.'"),
    ("So 5 it is. Wait,", "ends on 'Wait,'"),
    ("So x = 5. Alternatively", "ends on 'Alternatively'"),
    ("Therefore the answer is 36, after \\(\\boxed{", "ends inside \\boxed{"),
    ("So $$x = 5", "ends inside a math span"),
    ("We get 5 \\cdot", "ends on '\\\\cdot'"),
])
def test_a_reply_that_stops_mid_thought_answers_nothing(reply, ending):
    verdict = grade(reply, "5" if "36" not in reply else "36")
    assert (verdict.correct, verdict.reason, verdict.trace) == (False, "no answer found", f"cut mid-thought ({ending})")


@pytest.mark.parametrize(("reply", "gold"), [
    ("The answer is 5", "5"),
    ("so 14 + 1 = 15\n#### 15", "15"),
    ("\\boxed{5}", "5"),
    ("The best answer is B.", "B"),
    ("The answer is (B) Paris", "B"),
    ("\\frac{3}{4}i", "\\frac34i"),
    ("Final Answer: The final answer is $x^2 + 1$. I hope it is correct.", "x^2+1"),
    ("The answer is yes", "yes"),
    ("The answer is 5, which is prime.", "5"),
    ("8 - 3 = 5, so she has 5 apples left (none rotten).", "5"),
])
def test_a_finished_reply_is_not_taken_for_a_cut_one(reply, gold):
    assert unfinished(reply) is None
    assert grade(reply, gold).correct


@pytest.mark.parametrize(("reply", "gold"), [
    ("\\boxed{\\cos 60^\\circ}", "\\frac{1}{2}"),
    ("\\boxed{\\sin 30^{\\circ}}", "\\frac{1}{2}"),
    ("\\boxed{\\tan(45^\\circ)}", "1"),
    ("\\boxed{2\\cos 60°}", "1"),
    ("\\boxed{60^\\circ}", "60"),  # a degree sign alone is the number
    ("\\boxed{a^2bc}", "a^{2}bc"),
    ("\\boxed{a^2 bc}", "a^{2}bc"),
    ("\\boxed{\\emptyset}", "\\varnothing"),
    ("\\boxed{\\{\\}}", "\\varnothing"),
    ("\\boxed{\\varnothing}", "\\emptyset"),
    ("\\boxed{\\sqrt{1/n}}", "\\frac{1}{\\sqrt{n}}"),
    ("\\boxed{\\frac{\\sqrt{n}}{n}}", "\\frac{1}{\\sqrt{n}}"),
    ("\\boxed{\\sqrt[3]{1/n}}", "\\frac{1}{\\sqrt[3]{n}}"),
    ("ANSWER: b", "B"),
    ("The answer is (c).", "C"),
])
def test_answers_people_write_are_read_as_a_person_reads_them(reply, gold):
    verdict = grade(reply, gold)
    assert (verdict.correct, verdict.reason) == (True, "correct"), verdict


@pytest.mark.parametrize(("reply", "gold"), [
    ("\\boxed{\\cos 60}", "\\frac{1}{2}"),  # 60 radians
    ("\\boxed{\\cos 30^\\circ}", "\\frac{1}{2}"),
    ("\\boxed{a^3bc}", "a^{2}bc"),
    ("\\boxed{ab^2c}", "a^{2}bc"),
    ("\\boxed{\\{0\\}}", "\\varnothing"),
    ("\\boxed{\\sqrt{n}}", "\\frac{1}{\\sqrt{n}}"),
    ("\\boxed{x}", "|x|"),  # never assumed positive where an absolute value is in play
    ("The answer is a number.", "A"),
])
def test_their_wrong_neighbours_stay_wrong(reply, gold):
    assert not grade(reply, gold).correct


@pytest.mark.parametrize(("reply", "gold"), [
    ("A. 12\nB. 14\nC. 16\nD. 18", "A"),  # only the option list again
    ("A. 12\nB. 14\nC. 16\nD. 18", "B"),
    ("So the answer is (A) and (B).", "A"),
    ("So the answer is (A) and (B).", "B"),
    ("Answer: (B) or (C)", "B"),
    ("The answer is B and C.", "C"),
    ("\\boxed{A, B}", "A"),
])
def test_a_reply_that_names_two_options_or_only_lists_them_names_none(reply, gold):
    verdict = grade(reply, gold, options=4)
    assert (verdict.correct, verdict.reason) == (False, "no answer found")


@pytest.mark.parametrize(("reply", "gold"), [
    ("The answer is for sure D, it can't be A or B", "D"),
    ("A. 12 is too small.\nB. 14 is right.\nSo the option that fits is (B) 14, as shown.", "B"),
    ("Based on the analysis, the one that contributed the least is (A) Low taxes, as it helps.", "A"),
])
def test_one_option_named_among_others_is_the_answer(reply, gold):
    assert grade(reply, gold, options=4).correct


QUESTION = "How many pages?\nA. 100\nB. 150\nC. 200\nD. 250"


@pytest.mark.parametrize(("reply", "method"), [
    ("so 40 * 5 = 200, and \\boxed{200}", "option-text"),
    ("\\boxed{\\$200}", "option-text"),
    ("The answer is 200.", "option-text"),
    ("\\boxed{C}", "boxed"),
    ("The answer is (C).", "phrase"),
])
def test_a_boxed_or_stated_option_text_is_its_letter(reply, method):
    """Paper 1's release reads \\boxed{200} with option C = 200 as C (issue 47); kstp does for every
    multiple-choice grading given the options' texts."""
    verdict = grade(reply, "C", options=option_texts(QUESTION))
    assert (verdict.correct, verdict.extracted, verdict.method) == (True, "C", method)


@pytest.mark.parametrize("reply", ["\\boxed{300}", "The answer is 200 or 250.", "\\boxed{200}, \\boxed{250}"])
def test_no_option_or_two_options_by_text_is_no_answer(reply):
    verdict = grade(reply, "C", options=option_texts(QUESTION))
    assert (verdict.correct, verdict.reason) == (False, "no answer found")


def test_an_option_text_two_options_share_names_none():
    assert grade("\\boxed{5}", "A", options=option_texts("Pick\nA. 5\nB. 5\nC. 6")).reason == "no answer found"


def test_the_answers_evaluation_grades_by_the_options_texts():
    from kstp.evaluators.answers import score_item
    from kstp.inference.backend import Completion

    verdict = score_item(Completion(0, 42, text="40 * 5 = 200, so \\boxed{200}", finish_reason="stop"), "C",
                         option_texts(QUESTION))
    assert (verdict.correct, verdict.method) == (True, "option-text")
