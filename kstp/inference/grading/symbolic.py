"""Formulas through math-verify and sympy, within the bounds of :mod:`.limits`.

math-verify (HuggingFace's checker, sympy underneath) reads LaTeX into sympy objects and
compares them (:func:`read`, :func:`equivalent`); kstp checks its work where it is known
to be loose: two exact constants must agree to 40 significant digits (math-verify rounds
to 6 decimals), and a formula it read only in part is no reading (``1 - \\frac{1}{\\mathrm{e}}``
read as ``1``, ``tests/inference/test_grading*.py`` hold the upstream cases). Every
formula is size-checked first (:func:`~.limits.check_magnitude`), and math-verify's own
``signal.alarm`` timeouts are off: they would cancel the caller's :func:`~.limits.deadline`,
and they fail outside the main thread.
"""

from __future__ import annotations

import logging
import re
from fractions import Fraction

from kstp.inference.grading.limits import check_magnitude, paused

__all__ = ["load", "radians", "normalise", "read", "equivalent", "exact_value", "is_constant"]


class _NoTimeoutWarning(logging.Filter):
    """Drop math-verify's warning that its own timeout is off: kstp bounds the time itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Timeout is disabled")


_loaded = False
# One pair of each shape math-verify's parser meets: its ANTLR parser learns a shape's
# prediction on first sight (up to a second for a tuple of fractions), after that in milliseconds.
_WARM_UP = (("$x^2+1$", "$1+x^2$"), ("$(1, 3]$", "$[1, 3)$"),
            (r"$(\frac{4}{3}, -\frac{1}{3})$", r"$(\frac{4}{3}, \frac{1}{3})$"), (r"$\frac{1}{2}$", r"$\sqrt{2}$"),
            (r"$\{1, 2\}$", "$1, 2$"), (r"$x \le 2$", "$x < 3$"), ("$y = 2x + 1$", "$2x - y + 1 = 0$"),
            (r"$\begin{pmatrix} 1 \\ 2 \end{pmatrix}$", r"$\begin{pmatrix} 1 & 2 \end{pmatrix}$"),
            (r"$x \in [-2, 7]$", r"$(2, 12) \cup (12, 102)$"), (r"$\sin^2(x)$", r"$1 - \cos^2(x)$"),
            (r"$F_n = \sum_{k=0}^{n-1} F_k F_{n-k-1}$", r"$f(x) = \int_0^1 x^2 \, dx$"))


def load() -> None:
    """Import math-verify and sympy and warm them up (about a second, once per process).

    The first parse builds math-verify's LaTeX parser and the first comparisons fill
    sympy's caches (a few hundred milliseconds); done here, no reply's time budget pays it.
    """
    global _loaded
    if _loaded:
        return
    with paused():  # the reply being graded when this first runs does not pay for it
        from math_verify import parse, verify

        for name in ("math_verify.parser", "math_verify.grader"):
            logging.getLogger(name).addFilter(_NoTimeoutWarning())
        for gold, said in _WARM_UP:
            verify(parse(gold, parsing_timeout=None), parse(said, parsing_timeout=None), timeout_seconds=None)
    _loaded = True


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# Spellings math-verify reads otherwise than a person does, rewritten before it reads them:
# degrees inside a trig function (\cos 60^\circ is cos(pi/3), not cos(60 radians))
_DEGREES_RE = re.compile(r"(\\(?:sin|cos|tan|cot|sec|csc))\s*([({]?)\s*(-?\d+(?:\.\d+)?)\s*"
                         r"(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree)")
# the empty set in its other spellings (\varnothing is read as a symbol, \{\} sometimes as nothing)
_EMPTY_SET_RE = re.compile(r"\\varnothing|\\left\\\{\s*\\right\\\}|\\\{\s*\\\}|∅")
# a power followed by more factors (a^2bc, a^{2} b c): math-verify stops after the power; parenthesised it reads on
_POWER_THEN_FACTOR_RE = re.compile(r"(?<![\\A-Za-z])([A-Za-z0-9])\^(\{[^{}]*\}|[A-Za-z0-9])\s*(?=[A-Za-z])")


def radians(text: str) -> str:
    """``text`` with each angle in degrees inside a trig function written in radians (``\\cos 60^\\circ`` is
    ``\\cos \\frac{60\\pi}{180}``); a degree sign elsewhere is left for the caller (60° is 60)."""
    return _DEGREES_RE.sub(lambda m: f"{m.group(1)}{m.group(2) or ' '}\\frac{{{m.group(3)}\\pi}}{{180}}", text)


def normalise(text: str) -> str:
    """A formula with the spellings math-verify misreads rewritten: degrees inside trig functions in
    radians, the empty set as ``\\emptyset``, a power followed by more factors parenthesised.

    Examples
    --------
    >>> normalise(r"\\cos 60^\\circ"), normalise(r"\\sin(30^{\\circ})")
    ('\\\\cos \\\\frac{60\\\\pi}{180}', '\\\\sin(\\\\frac{30\\\\pi}{180})')
    >>> normalise(r"\\varnothing"), normalise(r"\\{ \\}"), normalise("a^2bc"), normalise(r"\\pi^2 r")
    ('\\\\emptyset', '\\\\emptyset', '(a^2)bc', '\\\\pi^2 r')
    """
    text = _EMPTY_SET_RE.sub(r"\\emptyset", radians(text))
    return _POWER_THEN_FACTOR_RE.sub(r"(\1^\2)", text)


def read(text: str) -> tuple[list, bool]:
    """math-verify's reading of the formula ``text`` and whether it covered all of it.

    Returns
    -------
    (list, bool)
        math-verify's parse (sympy objects, then the string it matched), and ``False``
        where what it matched is a proper prefix of ``text``.

    Raises
    ------
    TooLarge
        ``text`` is past the size limits (:func:`~.limits.check_magnitude`).
    """
    check_magnitude(text)  # before anything is imported or parsed
    load()
    from math_verify import parse

    text = re.sub(r"\\sqrt\s*\(([^()]*)\)", r"\\sqrt{\1}", text)  # \sqrt(2): Math-Verify #41
    text = normalise(text)
    parsed = parse(f"${text}$", parsing_timeout=None)
    matched = next((p for p in parsed if isinstance(p, str)), "")
    whole = not _squash(text).startswith(_squash(matched)) or _squash(matched) == _squash(text)
    return parsed, whole


def is_constant(expr) -> bool:
    """Whether ``expr`` is an exact real or complex constant (no symbol, no float)."""
    import sympy

    return (isinstance(expr, sympy.Expr) and expr.is_number and not expr.free_symbols
            and not expr.has(sympy.Float))


def _exactly_equal(a, b) -> bool:
    """Two exact sympy constants agree to 40 significant digits (relative)."""
    import sympy

    if a.is_Rational and b.is_Rational:
        return bool(a == b)
    x, y = sympy.N(a, 50), sympy.N(b, 50)
    return bool(x == y or abs(x - y) <= sympy.Float(10, 50) ** -40 * max(abs(x), abs(y)))


def equivalent(wanted: list, said: list) -> bool:
    """Whether two math-verify readings are equal: math-verify's verdict, re-checked exactly for constants."""
    import sympy
    from math_verify import verify

    if any(w == s and not w.has(sympy.zoo, sympy.nan) for w in wanted for s in said
           if isinstance(w, sympy.Basic) and isinstance(s, sympy.Basic)):
        return True  # the same sympy object (F_k F_{n-k-1} is F_{n-k-1} F_k), no 12/0 (12:00): no need to simplify
    ok = bool(verify(wanted, said, timeout_seconds=None))
    if ok and wanted and said and is_constant(wanted[0]) and is_constant(said[0]):
        ok = _exactly_equal(wanted[0], said[0])  # math-verify compares constants to 6 decimals
    if not ok and wanted and said:
        ok = _equal_for_positive(wanted[0], said[0])
    return ok


def _equal_for_positive(a, b) -> bool:
    """Two formulas with radicals equal where their variables are positive (``\\sqrt{1/n}`` and
    ``\\frac{1}{\\sqrt{n}}``), as a reader of a competition answer takes them; never where either holds an
    absolute value (``|x|`` is no ``\\sqrt{x^2}`` written as ``x``), and only where a radical is in play."""
    import sympy

    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)) or a.has(sympy.Abs) or b.has(sympy.Abs):
        return False
    free = a.free_symbols | b.free_symbols
    radical = any(p.exp.is_Rational and not p.exp.is_Integer for e in (a, b) for p in e.atoms(sympy.Pow))
    if not free or not radical:
        return False
    positive = {s: sympy.Symbol(s.name, positive=True) for s in free if isinstance(s, sympy.Symbol)}
    return sympy.simplify((a - b).subs(positive)) == 0


def exact_value(text: str) -> Fraction | None:
    """The value of a LaTeX constant (``3\\pi``, ``5!``, ``6\\sqrt{2}``) to 40 digits; ``None`` if not one real number.

    Examples
    --------
    >>> float(exact_value(r"6\\sqrt{2}"))
    8.48528137423857
    >>> exact_value("x + 1") is None
    True
    """
    parsed, whole = read(text)
    parsed = [p for p in parsed if not isinstance(p, str)]
    if not whole or not parsed or not getattr(parsed[0], "is_number", False) or parsed[0].free_symbols:
        return None
    value = parsed[0].evalf(40)
    if not value.is_real or not value.is_finite:
        return None
    return Fraction(str(value))
