"""RQEval's answer matching as its authors' release does it: the rules of ``metrics/answer_extraction.py``
(``extract_answer``, ``canonical_gold``, ``is_correct``), written again in kstp.

The paper says its corrected matching protocol "is implemented in the released code",
and CQ, CS and RS all go through it there; Tables 3-9 come from it. The rules, by the
gold's kind (read from the gold alone, whatever the item's answer type):

- **number** (a gold of digits, commas and points): the number after the first ``####``,
  else the *last* number of the reply, as a float; equal within 1e-3. A reply that
  states its answer first and explains after ("The answer is $18. She sells 9 eggs at 2
  dollars each.") is read at its last number (2).
- **yes/no** (yes, no, true, false): the earliest signal word in the reply's first
  sentence (its first 80 characters), yes-words (yes, true, correct, indeed) against
  no-words (no, false, incorrect, not, never, unlikely, cannot, ...); without one, a reply
  that says only yes/true or only no/false anywhere.
- **choice** (a single letter A-D): the first anchored letter, tried pattern by pattern
  ("answer: C", "correct option is B", "... conclusion ... is D", "is D", a reply
  opening with its letter, "(C)" anywhere), else a letter opening the last line.
- **text**: the normalised gold contained in the normalised reply, else the whole reply
  when it is at most 60 characters.

A reply cut at the token cap is graded like any other (an early "Yes." counts), and a
reply with nothing to extract is wrong. kstp's own grader (:mod:`kstp.inference.grading`)
differs on purpose (the stated final answer, never a cut reply, option letters past D);
``evaluate rqeval --grading kstp`` uses it, and the README's paper-3 table lists how the
two differ. ``tests/data/rqeval/release_grading.jsonl`` holds the release's own verdicts
on real and hand-made replies, and kstp's are tested against them case by case.

References
----------
Senol, Agrawal, Liu 2026, Experimental Setup (reproducibility note) (arXiv 2605.24661);
github.com/senolali/RQEval, ``metrics/answer_extraction.py``.
"""

from __future__ import annotations

import re

__all__ = ["RULE", "gold_kind", "extract", "canonical_gold", "matches"]

#: The grading rule's name and version, recorded on each Response it grades (``graderVersion``).
RULE = "release:answer_extraction"

_NUMBER_RE = re.compile(r"-?[\d,]+\.?\d*")
_DELIMITED_RE = re.compile(r"####\s*(-?[\d,.]+)")
# The release's anchors for an option letter A-D, tried in this order over the whole reply; only the "is D" anchor
# is case-sensitive (so "is a" never reads as option A), the others take a lower-case letter too.
_CHOICE_ANCHORS = (
    re.compile(r"\banswer\s*(?:is)?\s*:?\s*\**\(?([ABCD])\)?(?![A-Za-z])", re.IGNORECASE),
    re.compile(r"\bcorrect\s+(?:answer|option|choice|conclusion|interpretation)\s*(?:is)?\s*:?\s*\**\(?([ABCD])\)?"
               r"(?![A-Za-z])", re.IGNORECASE),
    re.compile(r"\b(?:conclusion|interpretation|option|choice)\b[^.\n]{0,80}?\bis\s*:?\s*\**\(?([ABCD])(?![A-Za-z])",
               re.IGNORECASE),
    re.compile(r"\bis\s*:?\s*\**\(?([ABCD])\)?(?![A-Za-z])"),
    re.compile(r"^\s*#*\s*\**\(?([ABCD])\)?[).:\s]"),
    re.compile(r"\(([ABCD])\)"),
)
_LINE_LETTER_RE = re.compile(r"^\**\(?([ABCD])\)?[).:\s*]")
_YES = ("yes", "true", "correct", "indeed")
_NO = ("no", "false", "incorrect", "not correct", "untrue", "not", "never", "unlikely", "doubtful", "cannot",
       "impossible")


def _normalised(text) -> str:
    """Lower case, runs of spaces as one, trailing punctuation and stars dropped."""
    return re.sub(r"\s+", " ", str(text).lower().strip().rstrip(".,;:!?*"))


def gold_kind(gold: str) -> str:
    """The release's kind of a gold: ``yesno``, ``choice`` (one of A-D), ``number`` or ``text``.

    >>> [gold_kind(g) for g in ("Yes", "c", "1,234.5", "Paris", "E")]
    ['yesno', 'choice', 'number', 'text', 'text']
    """
    g = _normalised(gold)
    if g in ("yes", "no", "true", "false"):
        return "yesno"
    if len(g) == 1 and g.upper() in "ABCD":
        return "choice"
    if re.fullmatch(r"-?[\d,.]+", g.replace(" ", "")):
        return "number"
    return "text"


def _float_text(text: str) -> str | None:
    try:
        return repr(float(text.replace(",", "")))
    except ValueError:
        return None


def _earliest(words: tuple[str, ...], text: str) -> int | None:
    """Where the first of ``words`` stands in ``text`` as a word (None: nowhere)."""
    found = [m.start() for w in words if (m := re.search(rf"(?:^|\s){re.escape(w)}(?:\s|$|[.,;:!?])", text))]
    return min(found, default=None)


def _yesno(reply: str) -> str | None:
    text = _normalised(reply)
    first = text.split(".")[0][:80]  # the first sentence decides
    no, yes = _earliest(_NO, first), _earliest(_YES, first)
    if no is not None or yes is not None:
        return "yes" if no is None or (yes is not None and yes <= no) else "no"
    says_yes = any(re.search(rf"\b{w}\b", text) for w in ("yes", "true"))
    says_no = any(re.search(rf"\b{w}\b", text) for w in ("no", "false"))
    return ("yes" if says_yes else "no") if says_yes != says_no else None


def _choice(reply: str) -> str | None:
    for anchor in _CHOICE_ANCHORS:
        if (m := anchor.search(reply)) is not None:
            return m.group(1).upper()
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    if lines and (m := _LINE_LETTER_RE.match(lines[-1] + " ")) is not None:
        return m.group(1)
    return None


def extract(reply: str | None, gold: str) -> str | None:
    """The release's canonical answer of ``reply`` for ``gold``'s kind, or None where it finds none.

    Returns
    -------
    str or None
        A number as ``repr(float)`` (``'18.0'``), ``yes``/``no``, a letter, ``contains:<gold>``
        or a short normalised reply for text; None for an empty reply or nothing found.

    Examples
    --------
    >>> extract("The answer is $18. She sells 9 eggs at 2 dollars each.", "18")
    '2.0'
    >>> extract("Yes. Because hamsters eat", "yes"), extract("The answer is b, I think", "B")
    ('yes', 'B')
    """
    text = str(reply or "")
    if not text.strip():
        return None
    kind = gold_kind(gold)
    if kind == "number":
        delimited = _DELIMITED_RE.search(text)
        numbers = [delimited.group(1)] if delimited else _NUMBER_RE.findall(text)
        return _float_text(numbers[-1]) if numbers else None
    if kind == "yesno":
        return _yesno(text)
    if kind == "choice":
        return _choice(text)
    said, wanted = _normalised(text), _normalised(gold)
    if wanted and wanted in said:
        return f"contains:{wanted}"
    return said if len(said) <= 60 else None


def canonical_gold(gold: str) -> str:
    """The gold in :func:`extract`'s form (``'18.0'``, ``yes``, ``B``, ``contains:paris``)."""
    kind, g = gold_kind(gold), _normalised(gold)
    if kind == "number":
        value = _float_text(g.replace(" ", ""))
        return value if value is not None else g
    if kind == "yesno":
        return "yes" if g in ("yes", "true") else "no"
    return g.upper() if kind == "choice" else f"contains:{g}"


def matches(reply: str | None, gold: str) -> tuple[bool, str | None]:
    """Whether ``reply`` is correct for ``gold`` by the release's rule, and its canonical answer.

    Numbers agree within 1e-3, everything else exactly in canonical form; a reply with
    nothing to extract is wrong.

    >>> matches("so 3 + 4 = 7\\n#### 7", "7"), matches("That is drastic.", "D")
    ((True, '7.0'), (False, None))
    """
    said = extract(reply, gold)
    if said is None:
        return False, None
    wanted = canonical_gold(gold)
    if gold_kind(gold) == "number":
        try:
            return abs(float(said) - float(wanted)) < 1e-3, said
        except ValueError:
            return said == wanted, said
    return said == wanted, said
