"""Answer extraction and comparison: the cases the inference issue lists, and more."""

from __future__ import annotations

import pytest

from kstp.platform.answers import grade, infer_kind

U_MINUS = "\u2212"


@pytest.mark.parametrize("text, gold, extracted", [
    ("the total is $29.00.", "29", "29"),
    (r"\boxed{8,000}", "8000", "8000"),
    (r"\boxed{\$9{,}500}", "9500", "9500"),
    ("Final Answer: **73**", "73", "73"),
    (r"\boxed{\frac{1}{2}}", "0.5", "1/2"),
    ("3/4", "0.75", "3/4"),
    ("3 1/2", "7/2", "7/2"),
    (f"{U_MINUS}7", "-7", "-7"),
    ("1e3", "1000", "1000"),
    ("The answer is 0.40", "0.4", "2/5"),
    ("So we need -2.5 cups.", "-5/2", "-5/2"),
    (r"Thus $x = \dfrac{3}{8}$, so \boxed{3/8}", "0.375", "3/8"),
])
def test_number_answers_match(text, gold, extracted):
    verdict = grade(text, gold)
    assert (verdict.kind, verdict.correct, verdict.reason, verdict.extracted) == ("number", True, "correct", extracted)


@pytest.mark.parametrize("text, gold, policy, correct", [
    ("50%", "0.5", "either", True), ("50%", "50", "either", True),
    ("50%", "0.5", "fraction", True), ("50%", "50", "fraction", False),
    ("50%", "0.5", "as-written", False), ("50%", "50", "as-written", True),
    (r"\boxed{28\%}", "28", "either", True), (r"\boxed{28\%}", "0.28", "either", True),
])
def test_percent_policy(text, gold, policy, correct):
    assert grade(text, gold, percent=policy).correct is correct


def test_short_gold_never_matches_inside_another_token():
    assert grade("That would be drastic.", "D").reason == "no answer found"
    assert grade("There are 25 marbles.", "5").reason == "wrong answer"
    assert grade("There are 25 marbles.", "5").extracted == "25"
    assert grade("Version 1.5 of the answer", "5").correct is False


def test_final_boxed_answer_wins_over_reasoning():
    assert grade(r"First I thought 12, but recounting gives \boxed{14}.", "14").correct
    wrong = grade(r"Then \boxed{12}. Some say 14 though.", "14")
    assert (wrong.correct, wrong.extracted, wrong.method) == (False, "12", "boxed")


def test_no_answer_is_not_a_wrong_answer():
    verdict = grade("I am not sure how to solve this.", "4")
    assert (verdict.correct, verdict.reason, verdict.extracted) == (False, "no answer found", None)
    assert grade(r"\boxed{banana}", "4").reason == "unparseable answer"


@pytest.mark.parametrize("text, gold, correct, reason", [
    ("The answer is C.", "C", True, "correct"),
    ("Answer: (B)", "B", True, "correct"),
    (r"so \boxed{D}", "D", True, "correct"),
    ("B. Because the slope is positive.", "B", True, "correct"),
    ("The answer is a tricky one; I pick option A", "A", True, "correct"),
    ("Answer: A", "C", False, "wrong answer"),
    ("I cannot decide.", "A", False, "no answer found"),
])
def test_choice_letters_must_be_anchored(text, gold, correct, reason):
    verdict = grade(text, gold)
    assert (verdict.kind, verdict.correct, verdict.reason) == ("choice", correct, reason)


@pytest.mark.parametrize("text, gold, correct, reason", [
    ("Yes, because rain falls.", "yes", True, "correct"),
    ("So the answer is no.", "no", True, "correct"),
    (r"\boxed{No}", "yes", False, "wrong answer"),
    ("The answer is yes or no depending on the day.", "yes", False, "no answer found"),
    ("It might be, I do not know.", "no", False, "no answer found"),
])
def test_yes_no_needs_an_unambiguous_signal(text, gold, correct, reason):
    verdict = grade(text, gold)
    assert (verdict.correct, verdict.reason) == (correct, reason)


def test_expressions_by_symbolic_equivalence():
    assert grade(r"\boxed{(x+1)^2}", "x^2+2x+1", kind="expression").correct
    assert not grade(r"\boxed{(x-1)^2}", "x^2+2x+1", kind="expression").correct


def test_infer_kind_and_bad_arguments():
    assert [infer_kind(g) for g in ("B", "No", "-3", "11/12", r"\frac{1}{2}", "2x")] == \
        ["choice", "yesno", "number", "number", "number", "expression"]
    with pytest.raises(ValueError, match="unknown answer kind 'words'"):
        grade("x", "1", kind="words")
    with pytest.raises(ValueError, match="gold answer 'abc' is not a number"):
        grade("1", "abc", kind="number")


def test_gold_notes_are_read_as_their_first_number():
    assert grade(r"\boxed{0.06}", "Responses that round to 0.06 were considered correct.").correct
    assert grade(r"\boxed{0.12}", "0.12, lab: 0.28").correct
    assert not grade(r"\boxed{0.28}", "0.12, lab: 0.28").correct


@pytest.mark.parametrize("text, gold, correct, extracted, method", [
    ("47 + 52 + 57 = 156 and 156 / 3 = 52\n#### 52", "52", True, "52", "delimiter"),
    ("The answer is 12.\n#### 52", "52", True, "52", "delimiter"),
    ("#### 52\nThe answer is 12.", "52", True, "52", "delimiter"),
    ("So 5 + 20 = 25\n#### 25", "5", False, "25", "delimiter"),
    ("Total 1,250 dollars.\n####  $1,250 ", "1250", True, "1250", "delimiter"),
    (r"#### 7 but \boxed{8}", "8", True, "8", "boxed"),
])
def test_gsm8k_delimiter_is_the_final_answer(text, gold, correct, extracted, method):
    verdict = grade(text, gold, kind="number")
    assert (verdict.correct, verdict.extracted, verdict.method) == (correct, extracted, method)


@pytest.mark.parametrize("text, gold, kind, correct, reason", [
    ("Dividing leaves a drastic change.\n#### D", "D", "choice", True, "correct"),
    ("It is a Dense set, so D", "D", "choice", False, "no answer found"),
    ("Yes and no.\n#### yes", "yes", "yesno", True, "correct"),
    ("There is no such number; it is impossible.", "impossible", "text", True, "correct"),
    ("Final Answer: Impossible!", "impossible", "text", True, "correct"),
    ("Final Answer: possible", "impossible", "text", False, "wrong answer"),
    ("The answer is yes, if you start near the North Pole.", "yes, if starting near the north pole", "text",
     False, "wrong answer"),
    ("", "impossible", "text", False, "no answer found"),
])
def test_type_aware_protocol_for_letters_yes_no_and_words(text, gold, kind, correct, reason):
    verdict = grade(text, gold)
    assert (verdict.kind, verdict.correct, verdict.reason) == (kind, correct, reason)
