"""Answer checking: extract a model's final answer and compare it with the gold answer.

Extraction looks for the final answer where a reasoning trace states it, latest first:
the last ``\\boxed{...}`` (nested braces allowed; the bare word ``\\boxed`` is not a box),
else the last GSM8K-style ``#### ...`` final-answer delimiter, else the last "the answer
is ..." / "Final Answer: ..." phrase (markdown emphasis, code spans and a heading line
such as ``**Final Answer**`` read through; of a phrase the first number counts: "the
answer is 40, in all, so 25 and 15" is 40), else (numbers only) the last number in the
text. So a wrong value inside the reasoning followed by a correct boxed answer is
correct, and the reverse is wrong. Comparison is by answer type:

- **number**: parsed exactly as a fraction: thousands separators (``8,000``,
  ``9{,}500``, ``45,\\!000``, ``10\\,000``, ``10 000``), currency signs, U+2212 minus,
  decimals (``.5`` and ``-.25`` too, without a leading zero), scientific notation
  (``1e3``, ``4 \\times 10^{6}``, ``4\\cdot10^6``), ``3/4``, ``\\frac{1}{2}`` and
  ``\\tfrac78``, mixed numbers (``3 1/2`` and ``1\\frac{7}{8}`` = 15/8) and percentages
  by the percent policy. Equal when
  ``|answer - gold| <= 1e-6 * |gold|`` (a *relative* tolerance, for rounded decimals;
  a gold of 0 needs exactly 0). A number never matches inside a longer one: gold ``5``
  does not match ``25``. A number with a symbol attached (``\\pm 3``, ``3\\sqrt{2}``,
  ``3\\pi``, ``5!``, ``2^{10}``) is that value, computed exactly with sympy, never the
  bare number. A list of values where one is asked (``\\boxed{1,2}`` for gold 2, "the
  answer is 2 or 3") is a hedge and wrong.
- **set**: a gold naming several values (``1331 and 1728``, ``2, 3``, ``x = 1 or x =
  2``) needs the same values, in any order, joined by any of the separators (a comma,
  ``;``, ``&``, "and", "or"; LaTeX set braces read through; the boxes of the last line
  that has one are read together); half the set is wrong. A comma followed by exactly
  three digits is a thousands separator (``1,234`` is one number), any other comma
  separates values (``1,2``, ``1, 234``, ``1,2345``).
- **choice**: an option letter only where it is anchored ("answer is C", ``ANSWER:
  $B$``, "Answer: (C)", ``\\boxed{C}``, ``\\boxed{E: <option text>}``,
  ``\\boxed{\\textbf{(B)}}``, a ``(B)`` closing the last line, or a reply that starts with
  ``B)``, ``(B)``, ``B.``), so gold ``D`` is never found inside a word such as "drastic".
  An "I" before a lower-case word or an apostrophe ("Answer: I think it is D.") is the
  pronoun: the option is the first letter in the rest of its sentence. A letter past
  the question's option count (:func:`option_count`) is no option, so with fewer than
  nine options an "I" never is one.
- **yesno**: yes/no (true/false) only from an unambiguous signal: the final-answer
  phrase or box, or a reply that opens with it. The word right after the answer phrase
  decides ("The answer is no, even though some say yes." is no), unless the other word
  is joined to it ("yes and no", "yes/no", "yes or no"): that is no answer, and the
  verdict shows nothing extracted. A negated word is its opposite ("not yes" is no).
- **expression**: symbolic equivalence with math-verify (sympy underneath), checked
  again where math-verify is known to be loose: two exact constants (factorials,
  powers, radicals inside fractions) must agree to 40 significant digits, and a
  formula math-verify read only in part is compared as written (see ``tests``
  for the upstream Math-Verify issues).
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

__all__ = ["KINDS", "PERCENT_POLICIES", "Verdict", "grade", "extract_final", "parse_number", "infer_kind",
           "option_count"]

KINDS = ("auto", "number", "set", "choice", "yesno", "expression", "text")
PERCENT_POLICIES = ("either", "fraction", "as-written")
_CHOICES = "ABCDEFGHIJ"

_PHRASE_RE = re.compile(
    r"\b(?:final answers?|the answers?|answers?)\b\s*(?:is|are|:|=)?\s*[:=]?\s*(.+?)(?:\n|$|(?<=[^\d\s])\.(?=\s|$))",
    re.IGNORECASE)
_SCI = r"(?:\s*(?:\\times|\\cdot|×|·|\*)\s*10\s*\^\s*\{?\s*(?P<exp2>[-+−]?\d+)\s*\}?)"
_NUMBER_RE = re.compile(
    r"(?<![\w.^])(?P<sign>[-−–])?\s?\\?\$?\s?(?:(?P<whole>\d+)\s+(?P<mnum>\d+)/(?P<mden>\d+)"
    r"|(?P<num>\d+)\s*/\s*(?P<den>\d+)"
    r"|(?:(?P<int>\d{1,3}(?:(?:,|\{,\})\d{3})+|\d+)(?P<dec>\.\d+)?|(?P<point>\.\d+))"  # .5: no leading zero
    r"(?:[eE](?P<exp>[-+]?\d+)|" + _SCI + r")?)"
    r"(?P<pct>\s?\\?%)?(?![\w])")
_DELIMITER_RE = re.compile(r"^[ \t]*####[ \t]*(\S.*?)[ \t]*$", re.MULTILINE)
_FRAC_RE = re.compile(r"\\[dt]?frac\s*(?:\{\s*([-−]?\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))")
_BOX_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
# LaTeX spacing between digit groups: 45,\!000  10\,000  10{,}000  10 000 (a thin or plain space)
_GROUP_SPACING_RE = re.compile(r"(?<=\d)(?:,\\!|\{,\}|\\[,;:! ]|[  \u2009\u202f])(?=\d{3}(?!\d))")
_MARKDOWN_RE = re.compile(r"\*\*|__|`+")
_WRAPPERS_RE = re.compile(r"\\(?:text|textbf|mathrm|mathbf|textnormal|mbox)\s*\{([^{}]*)\}")
_INERT_RE = re.compile(r"\\left|\\right|\\displaystyle|\\[,;:! ]|\^\s*\{?\s*\\circ\s*\}?|°|\$|\\\(|\\\)")
# what may surround a number and still leave it that number: words (units), spacing, punctuation
_UNIT_RE = re.compile(r"(?<!\\)\b[A-Za-z]{2,}(?:\s*\^\s*\{?\d\}?)?|[\s.,;:]")
# a symbol that makes a number another value (\pm 3, 3\pi, 5!, 2^{10}, 3\sqrt{2}, 2i)
_SYMBOL_RE = re.compile(r"\\[A-Za-z]+|[!^√π±∓∞+*/()\[\]{}=<>_×·-]|(?<=\d)[a-zA-Z]\b")
# Between the values of a list: a comma that is no thousands separator (one followed by
# exactly three digits is: 1,234), a semicolon, "&", "and", "or".
_LIST_SEP_RE = re.compile(r"\s*(?:,(?!\d{3}(?!\d))|;|&|\b(?:and|or)\b)\s*", re.IGNORECASE)
_SET_BRACES_RE = re.compile(r"\\[{}]")
# a word (not a LaTeX command): a gold or a phrase list with one is prose, not a list
_WORD_RE = re.compile(r"(?<!\\)\b[A-Za-z]{2,}\b")
_PHRASE_END_RE = re.compile(r",\s|;\s|\s(?:so|since|because|which|as|and|or|for|in)\s", re.IGNORECASE)
_TOLERANCE = Fraction(1, 10**6)


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


def _boxes(text: str) -> list[tuple[int, str]]:
    """Every closed ``\\boxed{...}`` of ``text`` in order: where it starts and what it holds."""
    found = []
    for m in _BOX_RE.finditer(text):
        depth = 0
        for i in range(m.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                found.append((m.start(), text[m.end():i].strip()))
                break
    return found


def _last_boxed(text: str) -> str | None:
    boxes = _boxes(text)
    return boxes[-1][1] if boxes else None


def _is_heading(line: str) -> bool:
    return re.fullmatch(r"\s*(?:final\s+)?answers?\s*:?\s*", line, re.IGNORECASE) is not None


def extract_final(text: str) -> tuple[str | None, str | None]:
    """The stated final answer of ``text`` and where it was found.

    Returns
    -------
    (str or None, str or None)
        The last ``\\boxed{}`` content (``"boxed"``), else the text after the last
        ``####`` delimiter at the start of a line (``"delimiter"``), else the last answer
        phrase (``"phrase"``), else ``(None, None)``. Markdown emphasis and code spans
        are read through.

    Examples
    --------
    >>> extract_final(r"so 4 is wrong; \\boxed{\\frac{1}{2}}")
    ('\\\\frac{1}{2}', 'boxed')
    >>> extract_final("Final Answer: **73**")
    ('73', 'phrase')
    >>> extract_final("**Final Answer**\\n\\n`42`")
    ('42', 'phrase')
    >>> extract_final("so 40 + 12 = 52 answers\\n#### 52")
    ('52', 'delimiter')
    """
    boxed = _last_boxed(text)
    if boxed is not None:
        return boxed, "boxed"
    plain = _MARKDOWN_RE.sub("", text)
    delimited = [d for d in _DELIMITER_RE.findall(plain) if not _is_heading(d)]
    if delimited:
        return delimited[-1], "delimiter"
    phrases = [p.strip().strip("*_#: ").strip() for p in _PHRASE_RE.findall(plain)]
    phrases = [p for p in phrases if p]
    if phrases:
        return phrases[-1], "phrase"
    return None, None


def _normalise(text: str, grouped: bool = False) -> str:
    r"""LaTeX fractions as ``a/b`` (a digit before one makes a mixed number), digit-group spacing removed."""
    text = _FRAC_RE.sub(lambda m: f" {m.group(1) or m.group(2)}/{m.group(3) or m.group(4)}", text)
    return _GROUP_SPACING_RE.sub(lambda m: "," if "," in m.group(0) else "", text) if grouped else text


def _value(m: re.Match) -> Fraction | None:
    sign = -1 if m.group("sign") else 1
    if m.group("whole"):
        return sign * (int(m.group("whole")) + Fraction(int(m.group("mnum")), int(m.group("mden"))))
    if m.group("num"):
        den = int(m.group("den"))
        return sign * Fraction(int(m.group("num")), den) if den else None
    digits = (m.group("int") or "0").replace("{,}", "").replace(",", "") + (m.group("dec") or m.group("point") or "")
    exp = int((m.group("exp") or m.group("exp2") or "0").replace("−", "-"))
    return sign * Fraction(digits) * Fraction(10) ** exp


def _admissible(m: re.Match, value: Fraction, percent: str) -> list[Fraction]:
    if not m.group("pct"):
        return [value]
    return {"either": [value / 100, value], "fraction": [value / 100], "as-written": [value]}[percent]


def _matches(text: str) -> list[re.Match]:
    return [m for m in _NUMBER_RE.finditer(text) if _value(m) is not None]


def _numbers(text: str, percent: str, grouped: bool = False) -> list[list[Fraction]]:
    """Every number in ``text``, each as its admissible values under the percent policy."""
    return [_admissible(m, _value(m), percent) for m in _matches(_normalise(text, grouped))]


def parse_number(text: str, percent: str = "either") -> list[Fraction] | None:
    """The admissible values of ``text`` read as one number, or ``None``.

    Examples
    --------
    >>> parse_number("\\\\$9{,}500")
    [Fraction(9500, 1)]
    >>> parse_number("3 1/2")
    [Fraction(7, 2)]
    >>> parse_number("1\\\\frac{7}{8}")
    [Fraction(15, 8)]
    >>> parse_number("45,\\\\!000")
    [Fraction(45000, 1)]
    >>> parse_number("4 \\\\times 10^{6}")
    [Fraction(4000000, 1)]
    >>> parse_number("50%")
    [Fraction(1, 2), Fraction(50, 1)]
    >>> parse_number("twelve") is None
    True
    """
    numbers = _numbers(text, percent, grouped=True)
    return numbers[-1] if len(numbers) == 1 else None


def _close(a: Fraction, gold: Fraction) -> bool:
    """Equal within the relative tolerance: ``|a - gold| <= 1e-6 * |gold|``."""
    return abs(a - gold) <= _TOLERANCE * abs(gold)


def infer_kind(gold: str) -> str:
    """The answer type a gold answer implies: choice, yesno, set, number, text or expression.

    Two or more values joined by list separators and no other word are a set. A gold
    note that states a number (``"0.12, lab: 0.28"``) is a number: its first one.
    Words only, one of them at least three letters long (``"impossible"``), is text.

    >>> [infer_kind(g) for g in ("C", "yes", "0.40", "x^2+1", "0.12, lab: 0.28", "impossible", "4e6", "2, 3")]
    ['choice', 'yesno', 'number', 'expression', 'number', 'text', 'number', 'set']
    """
    gold = gold.strip()
    if len(gold) == 1 and gold.upper() in _CHOICES:
        return "choice"
    if gold.lower() in ("yes", "no", "true", "false"):
        return "yesno"
    if (_LIST_SEP_RE.search(gold) and not _WORD_RE.search(_LIST_SEP_RE.sub(" ", gold))
            and len(_listed(_clean(gold), "as-written")) >= 2):
        return "set"  # "1331 and 1728", "2, 3", "x = 1 or x = 2"
    if parse_number(gold, "as-written") is not None and _bare(_normalise(gold, grouped=True)):
        return "number"
    if _numbers(gold, "as-written") and re.search(r"(?<!\\)\b[a-zA-Z]{3,}\b", gold):
        return "number"  # a gold note such as "0.12, lab: 0.28": its first number is the answer
    if re.fullmatch(r"[A-Za-z][A-Za-z' ,.;-]*", gold) and re.search(r"[A-Za-z]{3,}", gold):
        return "text"
    return "expression"


def _residue(text: str, matches: list[re.Match]) -> str:
    """``text`` without its numbers, units and spacing: what could change a number's value."""
    for m in reversed(matches):
        text = text[:m.start()] + " " + text[m.end():]
    return _UNIT_RE.sub("", text)


def _bare(text: str) -> bool:
    """Whether ``text`` is one number and nothing that changes it (units and spacing aside)."""
    matches = _matches(text)
    return len(matches) == 1 and not _SYMBOL_RE.search(_residue(text, matches))


def _exact_value(text: str) -> Fraction | None:
    """The value of a LaTeX constant (``3\\pi``, ``5!``) to 40 digits; ``None`` if not one real number."""
    parsed, whole = _expression(text)
    parsed = [p for p in parsed if not isinstance(p, str)]
    if not whole or not parsed or not getattr(parsed[0], "is_number", False) or parsed[0].free_symbols:
        return None
    value = parsed[0].evalf(40)
    if not value.is_real:
        return None
    return Fraction(str(value))


def _clean(candidate: str) -> str:
    text = _WRAPPERS_RE.sub(lambda m: f" {m.group(1)} ", candidate)
    text = _GROUP_SPACING_RE.sub(lambda m: "," if "," in m.group(0) else "", text)
    return _INERT_RE.sub(" ", _MARKDOWN_RE.sub("", text))


def _shown(values: list[Fraction]) -> str:
    """One value as a verdict shows it: the value as written where a percentage reads two ways."""
    return str(values[-1] if len(values) == 1 else values[0])


def _element(element: str, percent: str) -> tuple[list[Fraction], str] | None:
    """One stated value (``x = 3``, ``3 cm``, ``3\\sqrt{2}``): its admissible values and how it
    reads (a number as its value, a constant as written); ``None``: not one value."""
    text = _normalise(element.rsplit("=", 1)[-1], grouped=True)
    matches = _matches(text)
    if not matches:
        return None
    if len(matches) == 1 and not _SYMBOL_RE.search(_residue(text, matches)):
        values = _admissible(matches[0], _value(matches[0]), percent)
        return values, _shown(values)
    exact = _exact_value(text.strip())
    return ([exact], element.rsplit("=", 1)[-1].strip()) if exact is not None else None


def _listed(text: str, percent: str, leading: bool = False) -> list[tuple[list[Fraction], str]]:
    """The values a cleaned answer states, in order: each one's admissible values and reading.

    Values are separated by a comma that is not a thousands separator, ``;``, ``&``,
    "and" or "or"; LaTeX set braces are read through. Every element must be a value,
    else ``[]``. With ``leading`` (an answer phrase, which runs on into its sentence):
    the word-free values the phrase opens with, up to its first sentence end ("2 and 3,
    since 5 is odd" is 2 and 3).
    """
    if leading:
        text = re.split(r"\.(?=\s|$)", text, maxsplit=1)[0]
    elements = [e for e in _LIST_SEP_RE.split(_SET_BRACES_RE.sub(" ", text)) if e.strip()]
    values = []
    for element in elements:
        value = None if leading and _WORD_RE.search(element) else _element(element, percent)
        if value is None:
            if leading:
                break
            return []
        values.append(value)
    return values


def _candidate_values(candidate: str, method: str, percent: str) -> tuple[list[Fraction] | None, str]:
    """The admissible values a stated answer gives, and how it reads (``None``: unparseable).

    A list of values (``1, 2``; ``2 or 3``) where one value is asked is a hedge: no value
    is admissible.
    """
    text = _clean(candidate)
    listed = _listed(text, percent, leading=method == "phrase")
    if len(listed) >= 2:
        return [], ", ".join(shown for _, shown in listed)
    text = text.rsplit("=", 1)[-1]
    if method == "phrase":
        text = _PHRASE_END_RE.split(text, 1)[0]
    text = _normalise(text, grouped=True)
    matches = _matches(text)
    if not matches:
        return None, candidate
    chosen = matches[0] if method == "phrase" else matches[-1]
    if _SYMBOL_RE.search(_residue(text, matches)):
        exact = _exact_value(text.strip())
        return ([exact] if exact is not None else []), candidate.strip()
    values = _admissible(chosen, _value(chosen), percent)
    return values, _shown(values)


def _attached(text: str, m: re.Match) -> bool:
    """Whether a symbol is attached to the number ``m`` (``3\\pi``, ``\\pm 3``, ``5!``, ``2^{10}``)."""
    before, after = text[max(0, m.start() - 6):m.start()], text[m.end():m.end() + 6]
    return bool(re.search(r"(?:\\pm|\\mp|±|∓|\\sqrt\s*\{?|√|\^\s*\{?)\s*$", before)
                or re.match(r"\s*(?:\\pi|π|!|\\sqrt|√|\^|\\cdot\s*\\?[a-zA-Z]|i\b)", after))


def _same_set(said: list[tuple[list[Fraction], str]], wanted: list[tuple[list[Fraction], str]]) -> bool:
    """Every stated value is a gold value and every gold value is stated (order and repeats aside)."""
    def match(values: list[Fraction], gold: list[Fraction]) -> bool:
        return any(_close(v, gold[0]) for v in values)
    return (all(any(match(s, w) for w, _ in wanted) for s, _ in said)
            and all(any(match(s, w) for s, _ in said) for w, _ in wanted))


def _grade_set(text: str, gold: str, percent: str) -> Verdict:
    wanted = _listed(_clean(gold), "as-written")
    if len(wanted) < 2:
        raise ValueError(f"gold answer {gold!r} is not a set of values")
    candidate, method = extract_final(text)
    if candidate is None:
        return Verdict("set", None, None, False, "no answer found")
    if method == "boxed":  # one box per value: "$\\boxed{1331}$ and $\\boxed{1728}$" on the last boxed line
        boxes = _boxes(text)
        line = text.rfind("\n", 0, boxes[-1][0]) + 1
        candidate = ", ".join(content for start, content in boxes if start >= line and not _BOX_RE.search(content))
    said = _listed(_clean(candidate), percent, leading=method == "phrase")
    if not said:
        return Verdict("set", candidate, method, False, "unparseable answer")
    ok = _same_set(said, wanted)
    return Verdict("set", ", ".join(shown for _, shown in said), method, ok, "correct" if ok else "wrong answer")


def _grade_number(text: str, gold: str, percent: str) -> Verdict:
    numbers = _numbers(gold, "as-written", grouped=True)
    if not numbers:
        raise ValueError(f"gold answer {gold!r} is not a number")
    gold_value = numbers[0][0]
    candidate, method = extract_final(text)
    if candidate is None:
        normalised = _normalise(text)
        matches = _matches(normalised)
        if not matches:
            return Verdict("number", None, None, False, "no answer found")
        last, method = matches[-1], "last-number"
        if _attached(normalised, last):  # "so we get 3\pi": not the bare number
            shown = normalised[max(0, last.start() - 4):last.end() + 4].strip()
            return Verdict("number", shown, method, False, "wrong answer")
        values = _admissible(last, _value(last), percent)
        shown = _shown(values)
    else:
        values, shown = _candidate_values(candidate, method, percent)
        if values is None:
            return Verdict("number", candidate, method, False, "unparseable answer")
    ok = any(_close(v, gold_value) for v in values)
    return Verdict("number", shown, method, ok, "correct" if ok else "wrong answer")


# An option letter where it is anchored: after "answer", "option" or "choice" (``ANSWER: $B$``,
# "the answer is (C)"); at the start of a stated answer or reply (``E: <option text>``, ``(B)``,
# ``B)``); in parentheses closing the reply's last line ("so the correct one is (B).").
_PHRASE_LETTER_RE = re.compile(r"(?i:answer|option|choice)\s*(?i:is)?\s*(?i:option\s*)?[:\s]*[*_(\[$]*\s*([A-J])"
                               r"\s*[)\]*_$]*(?![\w])")
_LEADING_LETTER_RE = re.compile(r"^\s*[*_$]*\s*(?:\(([A-J])\)|([A-J])(?:[).:]|\s*[*_$]*\s*$))")
_CLOSING_LETTER_RE = re.compile(r"\(([A-J])\)[\s.*_$]*$")
# The English pronoun, not option I: "I" before a lower-case word or an apostrophe ("I think", "I'm").
_PRONOUN_RE = re.compile(r"\s+[a-z]|['’]")
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|\n")
_LOOSE_LETTER_RE = re.compile(r"(?<![\w'’])\(?([A-J])\)?(?![\w'’])")


def option_count(question: str) -> int | None:
    """The number of lettered options a question text lists, or ``None`` if it lists none.

    An option is a line that opens with a letter and ``.``, ``)`` or ``:`` (``A. 12``,
    ``(B) 14``), or a parenthesised letter after a space (``(A) 3 (B) 4``, not
    ``P(E)``); the count is the run A, B, C, ... found, and fewer than two is none.

    Examples
    --------
    >>> option_count("Which is prime?\\nA. 4\\nB. 6\\nC. 7\\nD. 9\\nAnswer with A, B, C, or D.")
    4
    >>> option_count("Pick one: (A) 3 (B) 4 (C) 5") , option_count("What is 2 + 2?")
    (3, None)
    """
    found = {a or b for a, b in re.findall(r"(?m)^\s*\(?([A-J])[.):]\s|(?<!\S)\(([A-J])\)\s", question + " ")}
    count = next((i for i, letter in enumerate(_CHOICES) if letter not in found), len(_CHOICES))
    return count if count >= 2 else None


def _phrase_letter(text: str, m: re.Match, letters: tuple[str, ...]) -> str | None:
    """The option an answer phrase names; after the pronoun "I", the first option in the rest of its sentence."""
    letter = m.group(1)
    if letter == "I" and _PRONOUN_RE.match(text, m.end(1)):
        end = _SENTENCE_END_RE.search(text, m.end(1))
        rest = text[m.end(1):end.start() if end else len(text)]
        return next((x.group(1) for x in _LOOSE_LETTER_RE.finditer(rest)
                     if x.group(1) in letters and not (x.group(1) == "I" and _PRONOUN_RE.match(rest, x.end(1)))),
                    None)
    return letter if letter in letters else None


def _grade_choice(text: str, gold: str, options: int | None) -> Verdict:
    letters = tuple(_CHOICES[:options] if options else _CHOICES)
    gold = gold.strip().upper()
    if gold not in letters:
        raise ValueError(f"gold answer {gold!r} is not one of the options {letters[0]}-{letters[-1]}")
    plain = _clean(text)  # \text{C}, \textbf{(B)}, $B$ and markdown read through
    candidate, method = extract_final(text)
    letter = None
    if method in ("boxed", "delimiter"):
        m = _LEADING_LETTER_RE.match(_clean(candidate))
        letter = (m.group(1) or m.group(2)) if m else None
    if letter not in letters:
        lines = plain.rstrip().rsplit("\n", 1)
        closing = _CLOSING_LETTER_RE.search(lines[-1])
        # by the letter's place, latest last; a phrase's letter that also closes the line stays a phrase
        hits = [(len(plain) - len(lines[-1]) + closing.start(1), closing.group(1), "last-line")] if closing else []
        hits += [(m.start(1), _phrase_letter(plain, m, letters), "phrase") for m in _PHRASE_LETTER_RE.finditer(plain)]
        hits = sorted((h for h in hits if h[1] in letters), key=lambda h: h[0])
        letter, method = hits[-1][1:] if hits else (None, None)
    if letter is None and (m := _LEADING_LETTER_RE.match(plain)) and (m.group(1) or m.group(2)) in letters:
        letter, method = m.group(1) or m.group(2), "leading"
    if letter is None:
        return Verdict("choice", None, None, False, "no answer found")
    return Verdict("choice", letter, method, letter == gold, "correct" if letter == gold else "wrong answer")


_YES, _NO = {"yes", "true"}, {"no", "false"}
_YESNO_WORD = r"(?:yes|no|true|false)\b"
# a yes/no joined to another: "yes and no", "Yes/No", "yes or no", "no, yes" ("No, no!" is no)
_JOINED_RE = re.compile(rf"\W*({_YESNO_WORD})\s*(?:,|/|&|\band\b|\bor\b)\s*({_YESNO_WORD})", re.IGNORECASE)
_FIRST_WORD_RE = re.compile(r"\W*([A-Za-z]+)")
_NEGATED_RE = re.compile(rf"\W*not\s+({_YESNO_WORD})", re.IGNORECASE)  # "the answer is not yes" is no


def _grade_yesno(text: str, gold: str) -> Verdict:
    gold_yes = gold.strip().lower() in _YES
    candidate, method = extract_final(text)
    if candidate is None and (m := re.match(rf"\s*[*_]*(?={_YESNO_WORD})", text, re.IGNORECASE)):
        candidate, method = text[m.end():], "leading"
    if candidate is None:
        return Verdict("yesno", None, None, False, "no answer found")
    said = _clean(candidate)
    first = _FIRST_WORD_RE.match(said)
    if negated := _NEGATED_RE.match(said):
        says_yes, ambiguous = negated.group(1).lower() in _NO, False
    elif first and first.group(1).lower() in _YES | _NO:
        # the word right after the answer phrase decides: "no, even though some say yes" is no
        says_yes, joined = first.group(1).lower() in _YES, _JOINED_RE.match(said)
        ambiguous = bool(joined) and (joined.group(2).lower() in _YES) != says_yes
    else:
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", said)}
        says_yes, ambiguous = bool(words & _YES), bool(words & _YES) == bool(words & _NO)
    if ambiguous:  # both words, or neither: nothing was answered
        return Verdict("yesno", None, None, False, "no answer found")
    ok = says_yes == gold_yes
    return Verdict("yesno", "yes" if says_yes else "no", method, ok, "correct" if ok else "wrong answer")


def _expression(text: str) -> tuple[list, bool]:
    """math-verify's reading of ``text`` and whether it covered all of it."""
    from math_verify import parse

    text = re.sub(r"\\sqrt\s*\(([^()]*)\)", r"\\sqrt{\1}", text)  # \sqrt(2): Math-Verify #41
    parsed = parse(f"${text}$")
    read = next((p for p in parsed if isinstance(p, str)), "")
    squash = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    whole = not squash(text).startswith(squash(read)) or squash(read) == squash(text)
    return parsed, whole


def _exactly_equal(a, b) -> bool:
    """Two exact sympy constants agree to 40 significant digits (relative)."""
    import sympy

    if a.is_Rational and b.is_Rational:
        return bool(a == b)
    x, y = sympy.N(a, 50), sympy.N(b, 50)
    return bool(x == y or abs(x - y) <= sympy.Float(10, 50) ** -40 * max(abs(x), abs(y)))


def _constant(expr) -> bool:
    import sympy

    return (isinstance(expr, sympy.Expr) and expr.is_number and not expr.free_symbols
            and not expr.has(sympy.Float))


def _grade_expression(text: str, gold: str) -> Verdict:
    from math_verify import verify

    candidate, method = extract_final(text)
    if candidate is None:
        return Verdict("expression", None, None, False, "no answer found")
    target, target_whole = _expression(candidate)
    if not target:
        return Verdict("expression", candidate, method, False, "unparseable answer")
    wanted, gold_whole = _expression(gold)
    if not (target_whole and gold_whole):
        # math-verify read a prefix only (1 - \frac{1}{\mathrm{e}} as 1): compare as written
        ok = re.sub(r"\s+", "", candidate) == re.sub(r"\s+", "", gold)
    else:
        ok = bool(verify(wanted, target))
        if ok and wanted and _constant(wanted[0]) and _constant(target[0]):
            ok = _exactly_equal(wanted[0], target[0])  # math-verify compares tiny constants loosely
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


def grade(text: str, gold: str, kind: str = "auto", percent: str = "either", options: int | None = None) -> Verdict:
    """Extract the final answer of ``text`` and compare it with ``gold`` by answer type.

    Parameters
    ----------
    text : str
        A model's reply (a reasoning trace ending in its answer).
    gold : str
        The gold answer.
    kind : {"auto", "number", "set", "choice", "yesno", "expression", "text"}
        Answer type; ``auto`` infers it from the gold answer (:func:`infer_kind`).
    percent : {"either", "fraction", "as-written"}
        How a percentage in the reply is read (see the module notes).
    options : int, optional
        How many lettered options the question has (2-10, :func:`option_count` of its
        text); a letter past them is no option, so with fewer than 9 an "I" never is
        one. ``None``: A-J.

    Returns
    -------
    Verdict

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
    """
    if kind not in KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; use one of {', '.join(KINDS)}")
    if percent not in PERCENT_POLICIES:
        raise ValueError(f"unknown percent policy {percent!r}; use one of {', '.join(PERCENT_POLICIES)}")
    if options is not None and not 2 <= options <= len(_CHOICES):
        raise ValueError(f"option count {options} is outside 2-{len(_CHOICES)}")
    kind = infer_kind(gold) if kind == "auto" else kind
    if kind == "number":
        return _grade_number(text, gold, percent)
    if kind == "set":
        return _grade_set(text, gold, percent)
    if kind == "choice":
        return _grade_choice(text, gold, options)
    if kind == "yesno":
        return _grade_yesno(text, gold)
    if kind == "text":
        return _grade_text(text, gold)
    return _grade_expression(text, gold)
