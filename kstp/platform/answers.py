"""Answer checking: extract a model's final answer and compare it with the gold answer.

Extraction looks for the final answer where a reasoning trace states it, latest first:
the last ``\\boxed{...}`` (nested braces allowed), else the last GSM8K-style ``#### ...``
final-answer delimiter, else the last "the answer is ..." / "Final Answer: ..." phrase,
else (numbers only) the last number in the text. So a wrong
value inside the reasoning followed by a correct boxed answer is correct, and the
reverse is wrong. Comparison is by answer type:

- **number**: parsed exactly as a fraction: thousands separators (``8,000``,
  ``9{,}500``), currency signs, U+2212 minus, decimals, ``1e3``, ``3/4``,
  ``\\frac{1}{2}``, mixed numbers (``3 1/2`` = 7/2) and percentages by the percent
  policy; equal when exactly equal or within a relative 1e-6 (rounded decimals). A
  number never matches inside a longer one: gold ``5`` does not match ``25``.
- **choice**: an option letter only where it is anchored ("answer is C", "Answer:
  (C)", ``\\boxed{C}``, or a reply that starts with the letter), so gold ``D`` is never
  found inside a word such as "drastic".
- **yesno**: yes/no (true/false) only from an unambiguous signal: the final-answer
  phrase or box, or a reply that opens with it; both words there is no answer.
- **expression**: symbolic equivalence with math-verify (sympy underneath).
- **text**: a short worded gold ("impossible"): its words, case and punctuation
  aside, must appear in order and whole in the stated final answer.

A gold answer written as a note that states a number ("Responses that round to 0.06
were considered correct.", "0.12, lab: 0.28") is read as its first number.

Percent policy: ``either`` (default) accepts ``50%`` for gold 0.5 and for gold 50;
``fraction`` reads ``50%`` as 0.5 only; ``as-written`` as 50 only.

Every verdict says what was extracted, how, and why it failed: "no answer found" is
not "wrong answer".
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from fractions import Fraction

__all__ = ["KINDS", "PERCENT_POLICIES", "Verdict", "grade", "extract_final", "parse_number", "infer_kind"]

KINDS = ("auto", "number", "choice", "yesno", "expression", "text")
PERCENT_POLICIES = ("either", "fraction", "as-written")
_CHOICES = "ABCDEFGHIJ"

_PHRASE_RE = re.compile(
    r"(?:final answer|the answer|answer)\s*(?:is|:|=)?\s*[:=]?\s*(.+?)(?:\n|$|(?<=[^\d\s])\.(?=\s|$))",
    re.IGNORECASE)
_NUMBER_RE = re.compile(
    r"(?<![\w.])(?P<sign>[-−–])?\s?\\?\$?\s?(?:(?P<whole>\d+)\s+(?P<mnum>\d+)/(?P<mden>\d+)"
    r"|(?P<num>\d+)\s*/\s*(?P<den>\d+)"
    r"|(?P<int>\d{1,3}(?:(?:,|\{,\})\d{3})+|\d+)(?P<dec>\.\d+)?(?:[eE](?P<exp>[-+]?\d+))?)"
    r"(?P<pct>\s?\\?%)?(?![\w])")
_DELIMITER_RE = re.compile(r"^[ \t]*####[ \t]*(\S.*?)[ \t]*$", re.MULTILINE)
_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{\s*([-−]?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


@dataclass(frozen=True)
class Verdict:
    """The grade of one answer.

    Attributes
    ----------
    kind : str
        The answer type compared (``number``, ``choice``, ``yesno``, ``expression``).
    extracted : str or None
        What was taken as the final answer, normalised (``None``: nothing found).
    method : str or None
        Where it came from: ``boxed``, ``delimiter`` (``####``), ``phrase``,
        ``last-number``, ``leading``, ``last-line``.
    correct : bool
    reason : str
        ``correct``, ``wrong answer``, ``no answer found`` or ``unparseable answer``.
    """

    kind: str
    extracted: str | None
    method: str | None
    correct: bool
    reason: str

    def as_dict(self) -> dict:
        return asdict(self)


def _last_boxed(text: str) -> str | None:
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    open_at = text.find("{", start)
    if open_at < 0:
        return None
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at + 1:i].strip()
    return None


def extract_final(text: str) -> tuple[str | None, str | None]:
    """The stated final answer of ``text`` and where it was found.

    Returns
    -------
    (str or None, str or None)
        The last ``\\boxed{}`` content (``"boxed"``), else the text after the last
        ``####`` delimiter at the start of a line (``"delimiter"``), else the last answer
        phrase (``"phrase"``), else ``(None, None)``.

    Examples
    --------
    >>> extract_final(r"so 4 is wrong; \\boxed{\\frac{1}{2}}")
    ('\\\\frac{1}{2}', 'boxed')
    >>> extract_final("Final Answer: **73**")
    ('73', 'phrase')
    >>> extract_final("so 40 + 12 = 52 answers\\n#### 52")
    ('52', 'delimiter')
    """
    boxed = _last_boxed(text)
    if boxed is not None:
        return boxed, "boxed"
    delimited = _DELIMITER_RE.findall(text)
    if delimited:
        return delimited[-1], "delimiter"
    phrases = _PHRASE_RE.findall(text)
    if phrases:
        return phrases[-1].strip().strip("*_ ").strip(), "phrase"
    return None, None


def _numbers(text: str, percent: str) -> list[list[Fraction]]:
    """Every number in ``text``, each as its admissible values under the percent policy."""
    text = _FRAC_RE.sub(lambda m: f"{m.group(1)}/{m.group(2)}", text)
    out = []
    for m in _NUMBER_RE.finditer(text):
        sign = -1 if m.group("sign") else 1
        if m.group("whole"):
            value = int(m.group("whole")) + Fraction(int(m.group("mnum")), int(m.group("mden")))
        elif m.group("num"):
            if int(m.group("den")) == 0:
                continue
            value = Fraction(int(m.group("num")), int(m.group("den")))
        else:
            digits = m.group("int").replace("{,}", "").replace(",", "") + (m.group("dec") or "")
            value = Fraction(digits) * Fraction(10) ** int(m.group("exp") or 0)
        value *= sign
        if m.group("pct"):
            out.append({"either": [value / 100, value], "fraction": [value / 100], "as-written": [value]}[percent])
        else:
            out.append([value])
    return out


def parse_number(text: str, percent: str = "either") -> list[Fraction] | None:
    """The admissible values of ``text`` read as one number, or ``None``.

    Examples
    --------
    >>> parse_number("\\\\$9{,}500")
    [Fraction(9500, 1)]
    >>> parse_number("3 1/2")
    [Fraction(7, 2)]
    >>> parse_number("50%")
    [Fraction(1, 2), Fraction(50, 1)]
    >>> parse_number("twelve") is None
    True
    """
    numbers = _numbers(text, percent)
    return numbers[-1] if len(numbers) == 1 else None


def _close(a: Fraction, b: Fraction) -> bool:
    return a == b or abs(a - b) <= Fraction(1, 10**6) * max(1, abs(b))


def infer_kind(gold: str) -> str:
    """The answer type a gold answer implies: choice, yesno, number, text or expression.

    A gold note that states a number (``"0.12, lab: 0.28"``) is a number: its first one.
    Words only, one of them at least three letters long (``"impossible"``), is text.

    >>> [infer_kind(g) for g in ("C", "yes", "0.40", "x^2+1", "0.12, lab: 0.28", "impossible")]
    ['choice', 'yesno', 'number', 'expression', 'number', 'text']
    """
    gold = gold.strip()
    if len(gold) == 1 and gold.upper() in _CHOICES:
        return "choice"
    if gold.lower() in ("yes", "no", "true", "false"):
        return "yesno"
    if parse_number(gold, "as-written") is not None and not re.search(r"[a-zA-Z]", gold.replace("frac", "")):
        return "number"
    if _numbers(gold, "as-written") and re.search(r"(?<!\\)\b[a-zA-Z]{3,}\b", gold):
        return "number"  # a gold note such as "0.12, lab: 0.28": its first number is the answer
    if re.fullmatch(r"[A-Za-z][A-Za-z' ,.;-]*", gold) and re.search(r"[A-Za-z]{3,}", gold):
        return "text"
    return "expression"


def _grade_number(text: str, gold: str, percent: str) -> Verdict:
    numbers = _numbers(gold, "as-written")
    if not numbers:
        raise ValueError(f"gold answer {gold!r} is not a number")
    gold_values = numbers[0]
    candidate, method = extract_final(text)
    if candidate is None:
        numbers = _numbers(text, percent)
        if not numbers:
            return Verdict("number", None, None, False, "no answer found")
        values, method, shown = numbers[-1], "last-number", None
    else:
        found = _numbers(candidate, percent)
        if not found:
            return Verdict("number", candidate, method, False, "unparseable answer")
        values, shown = found[-1], None
    shown = str(values[-1] if len(values) == 1 else values[0])
    ok = any(_close(v, gold_values[0]) for v in values)
    return Verdict("number", shown, method, ok, "correct" if ok else "wrong answer")


_CHOICE_PATTERNS = (
    re.compile(r"(?i:answer|option|choice)\s*(?i:is)?\s*(?i:option\s*)?[:\s]*[*_(\[]*\s*([A-J])\s*[)\]*_]*(?![\w])"),
    re.compile(r"^\s*[*_]*(?:\(([A-J])\)|([A-J])[).:])"),
)


def _grade_choice(text: str, gold: str) -> Verdict:
    gold = gold.strip().upper()
    candidate, method = extract_final(text)
    letter = None
    if method in ("boxed", "delimiter"):
        m = re.fullmatch(r"\s*(?:\\text\{)?\(?([A-J])\)?\}?\s*", candidate)
        letter = m.group(1) if m else None
    if letter is None:
        hits = [(m.start(), m.group(1)) for m in _CHOICE_PATTERNS[0].finditer(text)]
        if hits:
            letter, method = hits[-1][1], "phrase"
    if letter is None and (m := _CHOICE_PATTERNS[1].match(text)):
        letter, method = m.group(1) or m.group(2), "leading"
    if letter is None:
        return Verdict("choice", None, None, False, "no answer found")
    return Verdict("choice", letter, method, letter == gold, "correct" if letter == gold else "wrong answer")


_YES, _NO = {"yes", "true"}, {"no", "false"}


def _grade_yesno(text: str, gold: str) -> Verdict:
    gold_yes = gold.strip().lower() in _YES
    candidate, method = extract_final(text)
    # A leading "Yes and no." / "yes/no" keeps both words, so it stays ambiguous.
    if candidate is None and (m := re.match(r"\s*[*_]*((?:yes|no|true|false)(?:\s*(?:,|/|and|or)\s*"
                                            r"(?:yes|no|true|false))*)\b", text, re.IGNORECASE)):
        candidate, method = m.group(1), "leading"
    if candidate is None:
        return Verdict("yesno", None, None, False, "no answer found")
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", candidate)}
    says_yes, says_no = bool(words & _YES), bool(words & _NO)
    if says_yes == says_no:
        return Verdict("yesno", candidate, method, False, "no answer found")
    ok = says_yes == gold_yes
    return Verdict("yesno", "yes" if says_yes else "no", method, ok, "correct" if ok else "wrong answer")


def _grade_expression(text: str, gold: str) -> Verdict:
    from math_verify import parse, verify

    candidate, method = extract_final(text)
    if candidate is None:
        return Verdict("expression", None, None, False, "no answer found")
    target = parse(f"${candidate}$")
    if not target:
        return Verdict("expression", candidate, method, False, "unparseable answer")
    ok = bool(verify(parse(f"${gold}$"), target))
    return Verdict("expression", candidate, method, ok, "correct" if ok else "wrong answer")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _grade_text(text: str, gold: str) -> Verdict:
    candidate, method = extract_final(text)
    if candidate is None:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        candidate, method = (lines[-1], "last-line") if lines else (None, None)
    if candidate is None:
        return Verdict("text", None, None, False, "no answer found")
    said, wanted = _words(candidate), _words(gold)
    ok = any(said[i:i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1))
    return Verdict("text", " ".join(said), method, ok, "correct" if ok else "wrong answer")


def grade(text: str, gold: str, kind: str = "auto", percent: str = "either") -> Verdict:
    """Extract the final answer of ``text`` and compare it with ``gold`` by answer type.

    Parameters
    ----------
    text : str
        A model's reply (a reasoning trace ending in its answer).
    gold : str
        The gold answer.
    kind : {"auto", "number", "choice", "yesno", "expression", "text"}
        Answer type; ``auto`` infers it from the gold answer (:func:`infer_kind`).
    percent : {"either", "fraction", "as-written"}
        How a percentage in the reply is read (see the module notes).

    Returns
    -------
    Verdict

    Raises
    ------
    ValueError
        On an unknown kind or percent policy, or a number kind with a gold answer
        that is not a number.

    Examples
    --------
    >>> grade("the total is $29.00.", "29").correct
    True
    >>> grade("That is drastic.", "D").reason
    'no answer found'
    >>> grade("I get 25 apples.", "5").reason
    'wrong answer'
    """
    if kind not in KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; use one of {', '.join(KINDS)}")
    if percent not in PERCENT_POLICIES:
        raise ValueError(f"unknown percent policy {percent!r}; use one of {', '.join(PERCENT_POLICIES)}")
    kind = infer_kind(gold) if kind == "auto" else kind
    if kind == "number":
        return _grade_number(text, gold, percent)
    if kind == "choice":
        return _grade_choice(text, gold)
    if kind == "yesno":
        return _grade_yesno(text, gold)
    if kind == "text":
        return _grade_text(text, gold)
    return _grade_expression(text, gold)
