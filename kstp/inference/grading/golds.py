"""Reading a gold answer: what it is (its answer type) and how it is compared.

A gold is read whole or compared whole, never by a piece of it:

- its math delimiters (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) are read through, and
  a gold written as a worked solution is its boxed answer (several boxes joined by a list
  word are a list: ``\\boxed{1} and \\boxed{2}``);
- **choice**: an upper-case option letter ``A``-``J`` (also ``(D)``, ``(D) Alina``, ``D)``);
- **yesno**: yes, no, true, false;
- **number**: one number, with a unit set aside (``10\\text{ units}``, ``15\\mbox{ cm}^2``,
  ``0.06 \\text{ yuan}``), or one constant (``6\\sqrt{2}\\text{ inches}`` is 6√2, ``4\\pi`` is 4π);
  a prose note stating one number ("Responses that round to 0.06 were considered
  correct.") or a value with a labelled variant ("0.12, lab: 0.28": the variant is
  another question's) is that number;
- **set**: several values joined by list words, no other word (``1331 and 1728``, ``2, 3``,
  ``x = 1 or x = 2``, ``{1,2,3}``), compared in any order;
- **text**: words only, one of three letters or more ("impossible", "Evelyn");
- **expression**: anything else, compared whole through math-verify: formulas,
  equations and relations, tuples and intervals (ordered, brackets count), matrices,
  sets of tuples. A gold math-verify cannot read whole is compared as written.

:func:`read_gold` says which reading it took; ``kstp grade`` prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kstp.inference.grading.extraction import boxed_answer, extract_final, math_spans
from kstp.inference.grading.limits import GRADE_S, NotGradable, deadline
from kstp.inference.grading.numbers import (
    bare,
    clean,
    has_symbol,
    list_separated,
    listed,
    matches,
    normalise,
    parse_number,
    wordless,
)
from kstp.inference.grading.symbolic import exact_value

__all__ = ["KINDS", "CHOICES", "GoldReading", "read_gold", "read", "infer_kind", "unwrap"]

KINDS = ("auto", "number", "set", "choice", "yesno", "expression", "text")
CHOICES = "ABCDEFGHIJ"

# an option letter, alone or before its option text: "C", "(D)", "(D) Alina", "D) Alina", "D. Alina", "D: Alina"
_CHOICE_GOLD_RE = re.compile(r"(?:\(([A-J])\)|([A-J])[).:])(?:\s+\S.*)?|([A-J])", re.DOTALL)
# a unit written as text after a number: \text{ inches}, \mbox{ cm}^2, "square units", "cm"
_UNIT_TEXT_RE = re.compile(r"\\(?:text|mbox|mathrm|textrm|textnormal)\s*\{\s*([A-Za-z][A-Za-z .]*?)\s*\}"
                           r"(?:\s*\^\s*\{?[23]\}?)?")
_TRAILING_WORDS_RE = re.compile(r"(?<=[\d}])\s+((?:[A-Za-z]{2,}\.?\s*)+)(?:\^\s*\{?[23]\}?)?$")
_NOTE_VARIANT_RE = re.compile(r"^\s*([^,;]+?)\s*[,;]\s*[A-Za-z][\w ]*:\s*\S.*$")
_LIST_WORDS = {"and", "or"}


@dataclass(frozen=True)
class GoldReading:
    """How a gold answer is read.

    Attributes
    ----------
    kind : str
        The answer type it is compared as (:data:`KINDS` but ``auto``).
    text : str
        The gold as compared: delimiters and a worked solution's box read through, a unit set aside.
    reading : str
        In words, how it is compared ("number 10 (unit 'units' set aside)").
    """

    kind: str
    text: str
    reading: str


def unwrap(gold: str) -> str:
    """The gold without math delimiters around it, or a worked solution's boxed answer.

    Examples
    --------
    >>> unwrap("$$(1, +\\\\infty)$$"), unwrap(r"so $x=1/5$, or $\\boxed{20}$ percent.")
    ('(1, +\\\\infty)', '20')
    >>> unwrap("$21,16$ or $11$")
    '21,16 or 11'
    """
    text = gold.strip()
    boxed = boxed_answer(text)
    if boxed is not None:
        return boxed[0]
    if len(text) > 80 and re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}\s+[A-Za-z]{3,}", text):
        stated, _ = extract_final(text)  # a worked solution ending "Final Answer: The final answer is $28\%$."
        if stated is not None:
            text = stated
    spans = math_spans(text)
    if len(spans) == 1 and spans[0][0] == 0 and spans[0][1] == len(text):
        return spans[0][2]
    if spans:
        # inline math among words ("$21,16$ or $11$"): the delimiters go, the words stay
        pieces, last = [], 0
        for start, end, content in spans:
            pieces += [text[last:start], content]
            last = end
        return ("".join(pieces) + text[last:]).strip()
    return text


def _choice(text: str) -> str | None:
    m = _CHOICE_GOLD_RE.fullmatch(text.strip())
    return (m.group(1) or m.group(2) or m.group(3)) if m else None


def _unit(text: str) -> tuple[str, str | None]:
    """``text`` without a unit written after its value, and the unit (``None``: none)."""
    m = _UNIT_TEXT_RE.search(text)
    if m and m.end() == len(text.rstrip(" .")) and text[:m.start()].strip():
        return text[:m.start()].strip(), m.group(1).strip()
    m = _TRAILING_WORDS_RE.search(text)
    if m and not set(m.group(1).lower().split()) & _LIST_WORDS and text[:m.start()].strip():
        return text[:m.start()].strip(), m.group(1).strip()
    return text, None


def read_gold(gold: str, kind: str = "auto") -> GoldReading:
    """Read a gold answer: its answer type, the text compared, and the reading in words.

    A gold too large to read (``10^{10^{10}}``) is read as "not gradable: ..." rather than
    raising; :func:`~.compare.grade` then grades every reply so.

    Parameters
    ----------
    gold : str
        The gold answer as the dataset writes it.
    kind : str
        One of :data:`KINDS`; ``auto`` infers it.

    Returns
    -------
    GoldReading

    Examples
    --------
    >>> read_gold(r"6\\sqrt{2}\\text{ inches}").reading
    "number 6\\\\sqrt{2} (a constant, compared to 40 digits; unit 'inches' set aside)"
    >>> read_gold(r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}").kind
    'expression'
    >>> read_gold("$10\\\\text{ units}$").reading
    "number 10 (unit 'units' set aside)"
    """
    try:
        with deadline(GRADE_S):
            return read(gold, kind)
    except NotGradable as exc:
        return GoldReading("expression" if kind == "auto" else kind, gold, exc.reason)


def read(gold: str, kind: str = "auto") -> GoldReading:
    """:func:`read_gold` without its time budget: a gold past the size limits raises :class:`~.limits.NotGradable`."""
    text = unwrap(gold)
    if kind != "auto":
        return GoldReading(kind, text, f"{kind} (as asked)")
    letter = _choice(text)
    if letter:
        return GoldReading("choice", letter, f"option letter {letter}")
    if text.lower() in ("yes", "no", "true", "false"):
        return GoldReading("yesno", text, f"yes/no: {text.lower()}")
    cleaned = clean(text)
    if re.search(r"\\begin\s*\{(?:[pbBvV]?matrix|array)\}", text):
        return GoldReading("expression", text, "matrix, compared whole through math-verify")
    tuples = _assigned_tuples(cleaned)
    if tuples:
        return GoldReading("expression", tuples, f"set of tuples {tuples} (written as assignments), compared whole "
                                                 "through math-verify")
    if (list_separated(cleaned) and wordless(cleaned) and not re.search(r"[()\[\]]", cleaned)
            and len(_safe_listed(cleaned)) >= 2):
        return GoldReading("set", cleaned, "list of values, compared in any order")
    value_text, unit = _unit(text)
    note = f"; unit {unit!r} set aside" if unit else ""
    normalised = normalise(clean(value_text), grouped=True)
    if parse_number(clean(value_text), "as-written") is not None and bare(normalised):
        return GoldReading("number", value_text, f"number {clean(value_text)}" + (f" ({note[2:]})" if note else ""))
    if _is_constant(value_text):
        return GoldReading("number", value_text, f"number {value_text} (a constant, compared to 40 digits{note})")
    if "\\" not in text and "$" not in text:
        found = matches(normalise(text, grouped=True))
        if len(found) == 1 and re.search(r"[A-Za-z]{3,}", text) and not has_symbol(normalise(text, True), found):
            return GoldReading("number", text, f"number {found[0].group().strip()} (the one number of a note)")
        variant = _NOTE_VARIANT_RE.match(text)
        if variant and parse_number(variant.group(1), "as-written") is not None:
            return GoldReading("number", variant.group(1),
                               f"number {variant.group(1)} (a labelled variant set aside: {text[variant.end(1):]!r})")
    if re.fullmatch(r"[A-Za-z][A-Za-z' ,.;-]*", cleaned) and re.search(r"[A-Za-z]{3,}", cleaned):
        return GoldReading("text", cleaned, "text: its words, in order")
    return GoldReading("expression", text, "expression, compared whole through math-verify")


_ASSIGNMENT_RE = re.compile(r"\s*([A-Za-z](?:_\{?\w+\}?)?)\s*=\s*([^=,;]+?)\s*")


def _assigned_tuples(text: str) -> str | None:
    """``p=5,q=2;p=7,q=2`` as the tuples ``(5, 2), (7, 2)``: groups by ``;`` naming the same variables in order."""
    groups = [g for g in text.split(";") if g.strip()]
    if len(groups) < 2:
        return None
    rows, names = [], None
    for group in groups:
        parts = [_ASSIGNMENT_RE.fullmatch(p) for p in group.split(",")]
        if not all(parts) or len(parts) < 2:
            return None
        if names is None:
            names = [m.group(1) for m in parts]
        if [m.group(1) for m in parts] != names or len(set(names)) != len(names):
            return None
        rows.append("(" + ", ".join(m.group(2) for m in parts) + ")")
    return ", ".join(rows)


def _safe_listed(text: str) -> list:
    try:
        return listed(text, "as-written")
    except NotGradable:
        return []


def _is_constant(text: str) -> bool:
    """Whether ``text`` is one real constant with a symbol in it (``4\\pi``, ``6\\sqrt{2}``, ``2^{10}``)."""
    cleaned = clean(text)
    found = matches(normalise(cleaned, grouped=True))
    if not found or not has_symbol(normalise(cleaned, grouped=True), found) or re.search(r"[=<>]|\\[lg]eq?\b", text):
        return False
    try:
        return exact_value(text) is not None
    except NotGradable:
        return False


def infer_kind(gold: str) -> str:
    """The answer type a gold answer implies: choice, yesno, set, number, text or expression.

    Examples
    --------
    >>> [infer_kind(g) for g in ("C", "yes", "0.40", "x^2+1", "0.12, lab: 0.28", "impossible", "4e6", "2, 3")]
    ['choice', 'yesno', 'number', 'expression', 'number', 'text', 'number', 'set']
    >>> [infer_kind(g) for g in (r"6\\sqrt{2}\\text{ inches}", r"(\\frac{1}{2}, 3]", "(D) Alina", "$e$")]
    ['number', 'expression', 'choice', 'expression']
    """
    return read_gold(gold).kind
