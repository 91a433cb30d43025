"""Reading a stated answer as a value: a number, a constant, or a list of them.

Numbers are parsed exactly as fractions: thousands separators (``8,000``, ``9{,}500``,
``45,\\!000``, ``32,\\! 349``, ``14 {, }916``, ``10\\,000``, ``10 000``), currency signs,
U+2212 minus, decimals (``.5`` and ``-.25`` too), scientific notation (``1e3``,
``4 \\times 10^{6}``), ``3/4``, ``\\frac{1}{2}`` and ``\\tfrac78``, mixed numbers (``3 1/2``,
``1\\frac{7}{8}``) and percentages by the percent policy. A unit may follow, spaced
(``3 cm``, ``10\\text{ units}``) or glued (``3.5kg``, ``1,000.99m²``), and a number glued to
text of another script is read (``3页``), but a number never matches inside a longer
token (``K2A`` holds no 2, ``25`` no 5). Digits of other scripts (``٩٢``) read as digits.

A number with a symbol attached (``\\pm 3``, ``3\\sqrt{2}``, ``3\\pi``, ``5!``, ``2^{10}``) is
that value, computed exactly with sympy (:func:`~.symbolic.exact_value`), never the bare
number. A comma followed by exactly three digits is a thousands separator; any other
comma separates values (``1,2``; ``1, 234``; the decimal comma ``1,5`` is a list, see the
README's grading conventions).

Sizes are bounded (:mod:`.limits`): a numeral past 1,000 digits or an exponent past
10,000 is refused as too large rather than computed.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from fractions import Fraction

from kstp.inference.grading.limits import MAX_DIGITS, MAX_EXPONENT, TooLarge
from kstp.inference.grading.symbolic import exact_value, radians

__all__ = ["PERCENT_POLICIES", "parse_number", "numbers", "matches", "value", "admissible", "close", "shown",
           "clean", "normalise", "bare", "has_symbol", "listed", "element", "attached", "same_set", "NUMBER_RE"]

PERCENT_POLICIES = ("either", "fraction", "as-written")

# Units that may be glued to a number (3.5kg, 12cm, 1,000.99m², 5km/h): a known unit, not any
# letters, so that 3xy or 2ab stay expressions.
_GLUED_UNIT = (r"(?:km|cm|mm|nm|m|kg|mg|g|lbs?|oz|ft|yd|mi|mph|kmh|km/h|m/s|s|sec|min|h|hr|hrs|ml|mL|l|L|"
               r"cal|kcal|kJ|J|kW|W|Hz|kHz|MHz|GHz|GB|MB|KB|kB|TB|px|pcs|°[CF]?|℃)(?:\^?\{?[23]\}?|[²³])?")
_SCI = r"(?:\s*(?:\\times|\\cdot|×|·|\*)\s*10\s*\^\s*\{?\s*(?P<exp2>[-+−]?\d+)\s*\}?)"
# Boundaries are ASCII: a number glued to another script's text (3页) is a number; to a Latin letter or digit not.
NUMBER_RE = re.compile(
    r"(?<![A-Za-z0-9_.^])(?P<sign>[-−–])?\s?\\?\$?\s?(?:(?P<whole>\d+)\s+(?P<mnum>\d+)/(?P<mden>\d+)"
    r"|(?P<num>\d+)\s*/\s*(?P<den>\d+)"
    r"|(?:(?P<int>[1-9]\d{0,2}(?:(?:,|\{,\})\d{3})+|\d+)(?P<dec>\.\d+)?|(?P<point>\.\d+))"  # .5: no leading zero
    r"(?:[eE](?P<exp>[-+]?\d+)|" + _SCI + r")?)"
    r"(?P<pct>\s?\\?%)?(?:" + _GLUED_UNIT + r"(?![A-Za-z0-9_]))?(?![A-Za-z0-9_])")
_FRAC_RE = re.compile(r"\\[dtc]?frac\s*(?:\{\s*([-−]?\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))")
# LaTeX spacing between digit groups: 45,\!000  32,\! 349  14 {, }916  10\,000  10{,}000  10 000
_GROUP_SPACING_RE = re.compile(
    r"(?<=\d)(?:,\\!\s?|\s?\{\s*,\s*\}\s?|\\[,;:! ]|[  \u2009\u202f])(?=\d{3}(?!\d))")
_MARKDOWN_RE = re.compile(r"\*\*|__|`+")
_WRAPPERS_RE = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|textnormal|mbox|operatorname)\s*\{([^{}]*)\}")
_INERT_RE = re.compile(r"\\left|\\right|\\displaystyle|\\[,;:! ]|\\q?quad|\^\s*\{?\s*\\circ\s*\}?|°|\$|\\\(|\\\)"
                       r"|\\\[|\\\]")
# a LaTeX command glued to a number (\approx11, \le5): the command ends where the digits start
_GLUED_COMMAND_RE = re.compile(r"(\\[A-Za-z]+)(?=\d)")
# what may surround a number and still leave it that number: words (units), spacing, punctuation
_UNIT_RE = re.compile(r"(?<!\\)\b[A-Za-z]{2,}(?:\s*\^\s*\{?\d\}?|[²³])?|[\s.,;:]|[^\x00-\x7f√π±∓∞×·≈≤≥≠]")
# a symbol that makes a number another value (\pm 3, 3\pi, 5!, 2^{10}, 3\sqrt{2}, 2i)
_SYMBOL_RE = re.compile(r"\\[A-Za-z]+|[!^√π±∓∞+*/()\[\]{}=<>_×·-]|(?<=\d)[a-zA-Z]\b")
# Between the values of a list: a comma that is no thousands separator (one followed by
# exactly three digits is: 1,234), a semicolon, "&", "and", "or".
_LIST_SEP_RE = re.compile(r"\s*(?:,(?!\d{3}(?!\d))|;|&|\b(?:and|or)\b)\s*", re.IGNORECASE)
_EMPTY_PARENS_RE = re.compile(r"(?<![A-Za-z\\])\(\s*\)")
_SET_BRACES_RE = re.compile(r"\\[{}]")
_WORD_RE = re.compile(r"(?<!\\)\b[A-Za-z]{2,}\b")
# the relations of a chain: x = 5+5+1 = 7 = 11, x \approx 11
_EQUALS_RE = re.compile(r"(?<![<>!\\])=|\\equiv|≡")
_APPROX_RE = re.compile(r"\\approx|≈|\\simeq|\\sim\b")
_TOLERANCE = Fraction(1, 10**6)


@functools.cache
def _digit_table() -> dict[int, str]:
    """The decimal digits of every script (Arabic-Indic, Devanagari, fullwidth ...) as ASCII digits."""
    return {c: str(unicodedata.digit(chr(c))) for c in range(0x80, 0x20000) if unicodedata.category(chr(c)) == "Nd"}


def ascii_digits(text: str) -> str:
    """``text`` with the decimal digits of every script written as ASCII digits."""
    return text if text.isascii() else text.translate(_digit_table())


def normalise(text: str, grouped: bool = False) -> str:
    r"""LaTeX fractions as ``a/b`` (a digit before one makes a mixed number), digit-group spacing removed."""
    text = _FRAC_RE.sub(lambda m: f" {m.group(1) or m.group(2)}/{m.group(3) or m.group(4)}", ascii_digits(text))
    return _GROUP_SPACING_RE.sub(lambda m: "," if "," in m.group(0) else "", text) if grouped else text


def value(m: re.Match) -> Fraction | None:
    """The exact value of a :data:`NUMBER_RE` match (``None``: a zero denominator).

    Raises
    ------
    TooLarge
        More than :data:`~.limits.MAX_DIGITS` digits, or an exponent past :data:`~.limits.MAX_EXPONENT`.
    """
    sign = -1 if m.group("sign") else 1
    if len(m.group(0)) > MAX_DIGITS:
        raise TooLarge(f"a numeral of {len(m.group(0)):,} characters")
    if m.group("whole"):
        return sign * (int(m.group("whole")) + Fraction(int(m.group("mnum")), int(m.group("mden"))))
    if m.group("num"):
        den = int(m.group("den"))
        return sign * Fraction(int(m.group("num")), den) if den else None
    digits = (m.group("int") or "0").replace("{,}", "").replace(",", "") + (m.group("dec") or m.group("point") or "")
    exp = int((m.group("exp") or m.group("exp2") or "0").replace("−", "-"))
    if abs(exp) > MAX_EXPONENT:
        raise TooLarge(f"a power of ten 10^{exp}")
    return sign * Fraction(digits) * Fraction(10) ** exp


def admissible(m: re.Match, number: Fraction, percent: str) -> list[Fraction]:
    """The values a number admits under the percent policy (``50%``: 0.5 and 50 with ``either``)."""
    if not m.group("pct"):
        return [number]
    return {"either": [number / 100, number], "fraction": [number / 100], "as-written": [number]}[percent]


def matches(text: str) -> list[re.Match]:
    """The numbers of an already normalised ``text`` (zero denominators left out)."""
    return [m for m in NUMBER_RE.finditer(text) if value(m) is not None]


def numbers(text: str, percent: str, grouped: bool = False) -> list[list[Fraction]]:
    """Every number in ``text``, each as its admissible values under the percent policy."""
    return [admissible(m, value(m), percent) for m in matches(normalise(text, grouped))]


def parse_number(text: str, percent: str = "either") -> list[Fraction] | None:
    """The admissible values of ``text`` read as one number, or ``None``.

    Parameters
    ----------
    text : str
        A number as written (LaTeX or plain).
    percent : {"either", "fraction", "as-written"}
        How a percentage reads: both ways, as a fraction, or as written.

    Returns
    -------
    list of Fraction or None
        One value, or two for a percentage under ``either``; ``None`` unless ``text`` holds one number.

    Examples
    --------
    >>> parse_number("\\\\$9{,}500")
    [Fraction(9500, 1)]
    >>> parse_number("3 1/2")
    [Fraction(7, 2)]
    >>> parse_number("1\\\\frac{7}{8}")
    [Fraction(15, 8)]
    >>> parse_number("45,\\\\!000"), parse_number("32,\\\\! 349")
    ([Fraction(45000, 1)], [Fraction(32349, 1)])
    >>> parse_number("4 \\\\times 10^{6}")
    [Fraction(4000000, 1)]
    >>> parse_number("50%")
    [Fraction(1, 2), Fraction(50, 1)]
    >>> parse_number("1,000.99m²"), parse_number("3页")
    ([Fraction(100099, 100)], [Fraction(3, 1)])
    >>> parse_number("twelve") is None
    True
    """
    found = numbers(text, percent, grouped=True)
    return found[-1] if len(found) == 1 else None


def close(a: Fraction, gold: Fraction) -> bool:
    """Equal within the relative tolerance: ``|a - gold| <= 1e-6 * |gold|``."""
    return abs(a - gold) <= _TOLERANCE * abs(gold)


def shown(values: list[Fraction]) -> str:
    """One value as a verdict shows it: the value as written where a percentage reads two ways."""
    return str(values[-1] if len(values) == 1 else values[0])


def clean(candidate: str) -> str:
    """A stated answer with LaTeX wrappers, spacing, delimiters and markdown read through."""
    text = _WRAPPERS_RE.sub(lambda m: f" {m.group(1)} ", candidate)
    text = _GROUP_SPACING_RE.sub(lambda m: "," if "," in m.group(0) else "", ascii_digits(text))
    text = _GLUED_COMMAND_RE.sub(r"\1 ", text)
    text = _INERT_RE.sub(" ", _MARKDOWN_RE.sub("", radians(text))).strip()  # \cos 60^\circ: its degrees count
    while len(text) > 1 and text[0] == "{" and text[-1] == "}" and _balanced(text[1:-1]):
        text = text[1:-1].strip()  # bare braces around a list: \boxed{{2, 3}}, a gold written {1,2,3}
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def residue(text: str, found: list[re.Match]) -> str:
    """``text`` without its numbers, units and spacing: what could change a number's value.

    Parentheses around a number alone are no symbol (``(2/5)``), those of ``f(2)`` are.
    """
    for m in reversed(found):
        text = text[:m.start()] + " " + text[m.end():]
    return _EMPTY_PARENS_RE.sub("", _UNIT_RE.sub("", text))


def has_symbol(text: str, found: list[re.Match]) -> bool:
    """Whether something besides numbers, units and spacing could change the value (``3\\pi``, ``2^{10}``)."""
    return bool(_SYMBOL_RE.search(residue(text, found)))


def bare(text: str) -> bool:
    """Whether a normalised ``text`` is one number and nothing that changes it (units and spacing aside)."""
    found = matches(text)
    return len(found) == 1 and not has_symbol(text, found)


def last_relation_side(text: str) -> str:
    """What a chain of relations ends on: ``x = 5+5+1 = 11`` is ``11``; ``text`` if there is no relation.

    An approximation after an exact value is not the answer: ``x = 1/3 \\approx 0.33`` is
    ``1/3``, ``\\frac{9.5}{3.14159} \\approx 3.01`` the fraction; ``x \\approx 11`` is ``11``.

    Examples
    --------
    >>> last_relation_side("x = 5+5+1 = 7 = 11"), last_relation_side(r"x=1/3\\approx1.3")
    ('11', '1/3')
    >>> last_relation_side(r"x\\approx11")
    '11'
    """
    parts = _EQUALS_RE.split(text)
    side = parts[-1].strip() if len(parts) > 1 and parts[-1].strip() else text
    approx = _APPROX_RE.split(side)
    if len(approx) > 1:
        exact = approx[0].strip()
        if exact and re.search(r"\d", exact) and not re.search(r"(?<!\\)\b[a-zA-Z]\b", exact):
            return exact
        return approx[-1].strip() if approx[-1].strip() else side
    return side


def element(text: str, percent: str) -> tuple[list[Fraction], str] | None:
    """One stated value (``x = 3``, ``3 cm``, ``3\\sqrt{2}``): its admissible values and how it
    reads (a number as its value, a constant as written); ``None``: not one value."""
    side = last_relation_side(text)
    normalised = normalise(side, grouped=True)
    found = matches(normalised)
    if not found:
        return None
    if len(found) == 1 and not has_symbol(normalised, found):
        values = admissible(found[0], value(found[0]), percent)
        return values, shown(values)
    exact = exact_value(side.strip())
    return ([exact], side.strip()) if exact is not None else None


def listed(text: str, percent: str, leading: bool = False) -> list[tuple[list[Fraction], str]]:
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
    for item in elements:
        read = None if leading and _WORD_RE.search(item) else element(item, percent)
        if read is None:
            if leading:
                break
            return []
        values.append(read)
    return values


def attached(text: str, m: re.Match) -> bool:
    """Whether a symbol is attached to the number ``m`` (``3\\pi``, ``\\pm 3``, ``5!``, ``2^{10}``)."""
    before, after = text[max(0, m.start() - 6):m.start()], text[m.end():m.end() + 6]
    return bool(re.search(r"(?:\\pm|\\mp|±|∓|\\sqrt\s*\{?|√|\^\s*\{?|[-+*/]\s*)$", before)
                or re.match(r"\s*(?:\\pi|π|!|\\sqrt|√|\^|\\cdot\s*\\?[a-zA-Z]|i\b|[-+*/]\s*[\d\\a-z(])", after))


def same_set(said: list[tuple[list[Fraction], str]], wanted: list[tuple[list[Fraction], str]]) -> bool:
    """Every stated value is a gold value and every gold value is stated (order and repeats aside)."""
    def match(values: list[Fraction], gold: list[Fraction]) -> bool:
        return any(close(v, gold[0]) for v in values)
    return (all(any(match(s, w) for w, _ in wanted) for s, _ in said)
            and all(any(match(s, w) for s, _ in said) for w, _ in wanted))


def list_separated(text: str) -> bool:
    """Whether ``text`` holds a list separator (a comma that is no thousands separator, ``;``, ``&``, and, or)."""
    return bool(_LIST_SEP_RE.search(text))


def wordless(text: str) -> bool:
    """Whether ``text`` is free of words (LaTeX commands and list words aside)."""
    return not _WORD_RE.search(_LIST_SEP_RE.sub(" ", text))
