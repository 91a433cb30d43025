"""Comparing a reply's stated answer with the gold, by answer type: the :func:`grade` entry point.

The gold is read first (:func:`~.golds.read_gold`), the reply's answer is found
(:mod:`.extraction`), read as the gold's type asks (:mod:`.numbers`, :mod:`.choices`,
:mod:`.symbolic`) and compared:

- **number**: exactly, ``|answer - gold| <= 1e-6 * |gold|`` (a relative tolerance, for
  rounded decimals; a gold of 0 needs exactly 0); a constant (``4\\pi``) to 40 digits. A
  list of values where one is asked (``\\boxed{1,2}`` for gold 2, "the answer is 2 or 3") is
  a hedge and wrong. Without a marked answer: the last statement, a math span read whole
  (``$\\frac{1+\\sqrt{5}}{2}$`` is no 2) or the last number.
- **set**: the same values in any order, joined by any list words; half the set is wrong.
- **expression**: math-verify's equivalence of the two, both read whole (:mod:`.symbolic`);
  a gold it cannot read whole is compared as written.
- **text**: the gold's words, case and punctuation aside, in order and whole in the answer.
- **choice**, **yesno**: :mod:`.choices`.

Every verdict says what was extracted, how, and why it failed: "no answer found" is not
"wrong answer", and "not gradable: too large / too slow" (:mod:`.limits`) and "not
supported: ..." are neither.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from fractions import Fraction

from kstp.inference.grading import symbolic
from kstp.inference.grading.choices import grade_choice, grade_yesno
from kstp.inference.grading.extraction import blank_markdown, extract_final, math_spans
from kstp.inference.grading.golds import CHOICES, KINDS, GoldReading, read
from kstp.inference.grading.limits import GRADE_S, MAX_DIGITS, NotGradable, TooLarge, deadline
from kstp.inference.grading.numbers import (
    PERCENT_POLICIES,
    admissible,
    ascii_digits,
    attached,
    clean,
    close,
    has_symbol,
    last_relation_side,
    listed,
    matches,
    normalise,
    same_set,
    shown,
    value,
)
from kstp.inference.grading.traces import split_trace, unfinished

__all__ = ["Verdict", "grade"]

# Chat-template tokens: a reply that runs on into a new turn ends where the turn starts.
_TURN_RE = re.compile(r"(?<=.)<\|im_start\|>.*", re.DOTALL)
_SPECIAL_TOKEN_RE = re.compile(r"<\|[A-Za-z_]+\|>")
# A phrase's answer that opens with its value (after a sign, bracket or math delimiter).
_OPENS_WITH_VALUE_RE = re.compile(r"\s*[-−+(\[{$]*\s*(?:\d|\.\d|\\[dtc]?frac|\\sqrt|\\pi|\\infty|\\\()")
_COPULA_IN_RE = re.compile(r"\s(?:is|are|was|equals|be|=)\s|=|\\approx", re.IGNORECASE)
_VALUE_END_RE = re.compile(r",\s|;\s|\s(?:so|since|because|which|as|and|or|for|in)\s", re.IGNORECASE)
# a formula around a number: LaTeX commands, digits, operators, brackets, and spaces between them
_MATH_CHAR = r"[0-9.+\-−*/^_=(){}\[\]!|√π±×·]"
_FORMULA_RUN_RE = re.compile(rf"(?:\\[A-Za-z]+|{_MATH_CHAR}|[ \t](?=\\|{_MATH_CHAR}))+")
_NUMBER_REACH = 2 * MAX_DIGITS
# numerals written as words in CJK: a reply that answers 十三 is not read, and says so
_CJK_NUMERALS_RE = re.compile(r"[零一二三四五六七八九十百千万两]")


@dataclass(frozen=True)
class Verdict:
    """The grade of one answer.

    Attributes
    ----------
    kind : str
        The answer type compared (``number``, ``set``, ``choice``, ``yesno``, ``expression``,
        ``text``; ``none`` where a failed completion was never graded).
    extracted : str or None
        What was taken as the final answer, normalised (``None``: nothing found).
    method : str or None
        Where it came from: ``boxed``, ``delimiter`` (``####``), ``phrase``, ``last-math``,
        ``last-number``, ``leading``, ``last-line``.
    correct : bool
    reason : str
        ``correct``, ``wrong answer``, ``no answer found``, ``unparseable answer``,
        ``not gradable: too large (...)``, ``not gradable: too slow (...)`` or ``not supported: ...``.
    trace : str or None
        How the reply's reasoning ended: where a trace inside it was split off
        (:func:`~.traces.split_trace`'s rule: ``</think>``, ``unclosed <think>``, ...), or
        ``cut mid-thought (...)`` where it stops before an answer (:func:`~.traces.unfinished`);
        None where it held no trace and ends as a finished reply does.
    """

    kind: str
    extracted: str | None
    method: str | None
    correct: bool
    reason: str
    trace: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _verdict(kind: str, extracted: str | None, method: str | None, ok: bool) -> Verdict:
    return Verdict(kind, extracted, method, ok, "correct" if ok else "wrong answer")


def _reply(text: str) -> str:
    """The reply without chat-template tokens, and cut where a new turn starts (``<|im_start|>user``)."""
    return _SPECIAL_TOKEN_RE.sub(" ", _TURN_RE.sub("", text))


def _stated_value(answer: str) -> str:
    """The part of a phrase's answer from its value on: "The number of points is 19" is ``19``.

    A negated answer states no value ("the answer is not 5"), unless a later clause does
    ("not 5, it is 6" is 6).
    """
    if _OPENS_WITH_VALUE_RE.match(answer):
        return answer
    sentence = re.split(r"\.(?=\s|$)", answer, maxsplit=1)[0]
    after = [m.end() for m in _COPULA_IN_RE.finditer(sentence) if re.search(r"\d", sentence[m.end():])]
    if after:
        return sentence[after[-1]:]
    if re.match(r"\s*(?:not|never|neither)\b", sentence, re.IGNORECASE):
        return ""
    first = re.search(r"\(?\s*(?:[-−]?\s?\$?\d|\\[dtc]?frac)", sentence)
    return sentence[first.start():] if first else answer


def _last_statement(text: str) -> tuple[str | None, str | None]:
    """Where no answer is marked: the last math span holding a digit, or the last number after it.

    A last number with a symbol attached is read with its formula (``so we get 3\\pi`` is 3π,
    ``\\frac{1}{2} + \\frac{1}{72}`` is 37/72), never as the bare number.
    """
    spans = [s for s in math_spans(text) if re.search(r"\d", s[2])]
    tail = _around_last_digit(ascii_digits(text[spans[-1][1]:] if spans else text))
    normalised = normalise(tail, grouped=True)
    found = matches(normalised)
    if found:
        last = found[-1]
        if attached(normalised, last):
            run = next(r for r in _FORMULA_RUN_RE.finditer(normalised) if r.start() <= last.start() < r.end())
            return run.group().strip(" .,;:"), "last-number"
        return last.group(0), "last-number"
    if spans:
        return spans[-1][2], "last-math"
    return None, None


def _around_last_digit(text: str) -> str:
    """The end of ``text`` from a little before its last digit: where its last number is.

    A number scan of a megabyte takes a quarter second; the last number needs only the
    stretch before the last digit (a numeral longer than that is past the size limit anyway).
    """
    last = max(text.rfind(d) for d in "0123456789")
    if last < 0:
        return ""
    start = max(0, last - _NUMBER_REACH)
    if start and text[start - 1].isdigit() and text[start].isdigit():
        raise TooLarge(f"a numeral of more than {_NUMBER_REACH:,} digits")
    return text[start:]


def _number_values(candidate: str, method: str, percent: str) -> tuple[list[Fraction] | None, str]:
    """The admissible values a stated answer gives, and how it reads (``None``: unparseable).

    A list of values (``1, 2``; ``2 or 3``) where one value is asked is a hedge: no value
    is admissible (the same value said twice, ``\\boxed{7} \\boxed{7}``, is that value).
    """
    text = clean(candidate)
    if method == "phrase":
        text = _stated_value(text)
    found_list = listed(text, percent, leading=method == "phrase")
    if len({tuple(values) for values, _ in found_list}) >= 2:  # one value said twice is no hedge
        return [], ", ".join(reading for _, reading in found_list)
    if len(found_list) >= 2:
        return found_list[0]
    text = last_relation_side(text)
    if method == "phrase":
        text = _VALUE_END_RE.split(text, 1)[0]
    normalised = normalise(text, grouped=True)
    found = matches(normalised)
    if not found:
        return None, candidate
    chosen = found[0] if method == "phrase" else found[-1]
    if has_symbol(normalised, found):
        exact = symbolic.exact_value(text.strip())
        return ([exact] if exact is not None else []), candidate.strip()
    values = admissible(chosen, value(chosen), percent)
    return values, shown(values)


def _gold_number(reading: GoldReading) -> Fraction:
    text = clean(reading.text)
    normalised = normalise(text, grouped=True)
    found = matches(normalised)
    if found and not has_symbol(normalised, found):
        return value(found[0])
    exact = symbolic.exact_value(reading.text) if found else None
    if exact is None:
        raise ValueError(f"gold answer {reading.text!r} is not a number")
    return exact


def _grade_number(text: str, reading: GoldReading, percent: str) -> Verdict:
    gold = _gold_number(reading)
    candidate, method = extract_final(text)
    if candidate is None:
        candidate, method = _last_statement(blank_markdown(text))
        if candidate is None:
            if _CJK_NUMERALS_RE.search(text[-200:]):
                return Verdict("number", None, None, False, "not supported: numerals written as words (十三)")
            return Verdict("number", None, None, False, "no answer found")
    values, reads = _number_values(candidate, method, percent)
    if values is None:
        return Verdict("number", candidate, method, False, "unparseable answer")
    return _verdict("number", reads, method, any(close(v, gold) for v in values))


def _grade_set(text: str, reading: GoldReading, percent: str) -> Verdict:
    wanted = listed(clean(reading.text), "as-written")
    if len(wanted) < 2:
        raise ValueError(f"gold answer {reading.text!r} is not a set of values")
    candidate, method = extract_final(text)
    if candidate is None:
        candidate, method = _last_math_or_line(text)
    if candidate is None:
        return Verdict("set", None, None, False, "no answer found")
    said = listed(clean(candidate), percent, leading=method == "phrase")
    if not said:
        return Verdict("set", candidate, method, False, "unparseable answer")
    return _verdict("set", ", ".join(reads for _, reads in said), method, same_set(said, wanted))


def _last_math_or_line(text: str) -> tuple[str | None, str | None]:
    """Where no answer is marked: the last math span, else a short last line."""
    plain = blank_markdown(text)
    spans = math_spans(plain)
    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    if spans and (not lines or spans[-1][1] >= len(plain.rstrip()) - len(lines[-1])):
        return spans[-1][2], "last-math"
    if lines and len(lines[-1]) <= 200:
        return lines[-1], "last-line"
    return (spans[-1][2], "last-math") if spans else (None, None)


def _formula(candidate: str, method: str) -> str:
    """The formula a stated answer holds: its last math span, or the answer from its value on."""
    spans = math_spans(candidate)
    if spans:
        return spans[-1][2]
    text = candidate.strip().rstrip(".").strip()
    if method == "phrase" and re.match(r"[A-Za-z]{2,}\s", text):
        copula = list(_COPULA_IN_RE.finditer(text))
        if copula:
            return text[copula[-1].end():].strip()
    return text


def _as_written(text: str) -> str:
    return re.sub(r"\s+|\\[,;:! ]|\\left|\\right", "", text)


def _grade_expression(text: str, reading: GoldReading) -> Verdict:
    candidate, method = extract_final(text)
    if candidate is None:
        candidate, method = _last_math_or_line(text)
    if candidate is None:
        return Verdict("expression", None, None, False, "no answer found")
    formula = _formula(candidate, method)
    wanted, gold_whole = symbolic.read(reading.text)
    said, said_whole = symbolic.read(formula)
    if not [w for w in wanted if not isinstance(w, str)] or not gold_whole:
        # math-verify cannot read the gold whole (1 - \frac{1}{\mathrm{e}} read as 1): compare as written
        return _verdict("expression", formula, method, _as_written(formula) == _as_written(reading.text))
    if not [s for s in said if not isinstance(s, str)]:
        return Verdict("expression", formula, method, False, "unparseable answer")
    if not said_whole:
        return _verdict("expression", formula, method, _as_written(formula) == _as_written(reading.text))
    return _verdict("expression", formula, method, symbolic.equivalent(wanted, said))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _grade_text(text: str, reading: GoldReading) -> Verdict:
    candidate, method = extract_final(text)
    if candidate is None:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        candidate, method = (lines[-1], "last-line") if lines else (None, None)
    if candidate is None:
        return Verdict("text", None, None, False, "no answer found")
    said, wanted = _words(clean(candidate)), _words(reading.text)
    ok = any(said[i:i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1))
    return _verdict("text", " ".join(said), method, ok)


def grade(text: str, gold: str, kind: str = "auto", percent: str = "either",
          options: int | Sequence[str] | None = None, opened: bool = False) -> Verdict:
    """Extract the final answer of ``text`` and compare it with ``gold`` by answer type.

    Parameters
    ----------
    text : str
        A model's reply (a reasoning trace ending in its answer).
    gold : str
        The gold answer.
    kind : {"auto", "number", "set", "choice", "yesno", "expression", "text"}
        Answer type; ``auto`` infers it from the gold answer (:func:`~.golds.infer_kind`).
    percent : {"either", "fraction", "as-written"}
        How a percentage in the reply is read: ``either`` accepts ``50%`` for gold 0.5 and
        for gold 50, ``fraction`` reads it as 0.5 only, ``as-written`` as 50 only.
    options : int or sequence of str, optional
        How many lettered options the question has (2-10, :func:`~.choices.option_count`
        of its text), or their texts in letter order (:func:`~.choices.option_texts`); a
        letter past them is no option, so with fewer than 9 an "I" never is one. With the
        texts, a boxed or stated answer that is one option's text is that option
        (``\\boxed{200}`` with option C = 200 is C). ``None``: A-J.
    opened : bool
        The prompt opened the reasoning trace (a chat template ending in ``<think>``, as
        DeepSeek-R1 distills' and QwQ's do): a reply without ``</think>`` never closed it,
        and states no answer.

    Returns
    -------
    Verdict
        The answer is read after a reasoning trace written in the reply (``<think>`` ...
        ``</think>`` and the other spellings of :mod:`.traces`; :attr:`Verdict.trace` says
        where it was split); a trace that never closed, or a reply that visibly stops
        mid-thought (:func:`~.traces.unfinished`: inside ``\\boxed{``, on "Wait," or "=",
        ...), is "no answer found", with ``trace`` saying why. Never raises on a reply: one
        too large or too slow to compare is graded "not gradable: ..." (:mod:`.limits`), one
        of a kind kstp does not read "not supported: ...".

    Raises
    ------
    ValueError
        On an unknown kind or percent policy, an option count outside 2-10, a number
        (set) kind with a gold answer that is not a number (set), or a choice gold past
        the options.

    Examples
    --------
    >>> grade("the total is $29.00.", "29").correct
    True
    >>> grade("That is drastic.", "D").reason
    'no answer found'
    >>> grade("I get 25 apples.", "5").reason
    'wrong answer'
    >>> grade(r"\\boxed{6}", r"6\\sqrt{2}\\text{ inches}").correct
    False
    >>> grade(r"\\boxed{10^{10^{10^{10}}}}", "5").reason
    'not gradable: too large (a power or factorial past 10^10000)'
    """
    if kind not in KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; use one of {', '.join(KINDS)}")
    if percent not in PERCENT_POLICIES:
        raise ValueError(f"unknown percent policy {percent!r}; use one of {', '.join(PERCENT_POLICIES)}")
    texts = None if options is None or isinstance(options, int) else list(options)
    count = len(texts) if texts is not None else options
    if count is not None and not 2 <= count <= len(CHOICES):
        raise ValueError(f"option count {count} is outside 2-{len(CHOICES)}")
    reading, split = None, split_trace(text, opened)
    try:
        with deadline(GRADE_S):
            reading = read(gold, kind)
            reply = _reply(split.content)
            cut = split.rule if split.unclosed else unfinished(reply)
            if cut is not None:  # the reasoning never reached an answer: a number inside it is none
                return Verdict(reading.kind, None, None, False, "no answer found", cut)
            return replace(_grade(reply, reading, percent, count, texts), trace=split.rule)
    except NotGradable as exc:
        return Verdict(reading.kind if reading else "none" if kind == "auto" else kind, None, None, False, exc.reason,
                       split.rule)


def _grade(text: str, reading: GoldReading, percent: str, options: int | None, texts: list[str] | None) -> Verdict:
    if reading.kind == "choice":
        letter, method = grade_choice(text, reading.text.strip().upper(), options, texts)
        if letter is None:
            return Verdict("choice", None, None, False, "no answer found")
        return _verdict("choice", letter, method, letter == reading.text.strip().upper())
    if reading.kind == "yesno":
        says_yes, method = grade_yesno(text)
        if says_yes is None:
            return Verdict("yesno", None, None, False, "no answer found")
        gold_yes = reading.text.lower() in ("yes", "true")
        return _verdict("yesno", "yes" if says_yes else "no", method, says_yes == gold_yes)
    if reading.kind == "number":
        return _grade_number(text, reading, percent)
    if reading.kind == "set":
        return _grade_set(text, reading, percent)
    if reading.kind == "text":
        return _grade_text(text, reading)
    return _grade_expression(text, reading)
