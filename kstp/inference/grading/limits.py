"""What grading one reply may cost: sizes refused before any work, and a time limit around it.

A reply is untrusted input, and a checker that evaluates it can be made to run for ever:
``10^{10^{10^{10}}}`` is a number of ten billion digits, which sympy (and Python's own
integers) would compute exactly, in C, where no signal interrupts it. So two bounds:

- **sizes, checked before evaluating**: a numeral of more than :data:`MAX_DIGITS` digits,
  a power of ten past ``10^``:data:`MAX_EXPONENT`, a power tower or a factorial whose
  value would have more than :data:`MAX_DIGITS_OUT` digits, and a formula longer than
  :data:`MAX_SYMBOLIC_CHARS` characters handed to sympy are refused (:class:`TooLarge`),
  estimated from the text alone (:func:`check_magnitude`);
- **time**: :func:`deadline` stops what runs in Python past its budget (:class:`TooSlow`).
  It uses ``SIGALRM`` (an interval timer), so it works in a process's main thread, and
  shares the timer with an outer one (the earlier of the two fires; the outer one is
  re-armed after). In another thread it is a no-op: there the size checks bound the work,
  and a caller that needs a hard limit runs grading in a separate process.

Both end in a verdict "not gradable: too large (...)" or "not gradable: too slow (...)",
never in an exception to the caller.
"""

from __future__ import annotations

import math
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["NotGradable", "TooLarge", "TooSlow", "deadline", "paused", "check_magnitude", "GRADE_S", "MAX_DIGITS",
           "MAX_EXPONENT", "MAX_DIGITS_OUT", "MAX_SYMBOLIC_CHARS"]

#: Time budget of one ``grade()`` call, in seconds: four times the slowest peer case on a quiet machine
#: (0.5 s), so that a loaded machine does not make a slow but legitimate formula not gradable; the calls
#: themselves run well under 1 s (``python -m benchmarks grading`` prints the worst).
GRADE_S = 2.0
#: The longest numeral read exactly (a longer run of digits is no answer anyone wrote by hand).
MAX_DIGITS = 1000
#: The largest power of ten read in scientific notation (``1e10000``).
MAX_EXPONENT = 10_000
#: The most digits a power or factorial may have before it is refused (``2^{33219}`` is about 10^10000).
MAX_DIGITS_OUT = 10_000
#: The longest formula handed to sympy / math-verify.
MAX_SYMBOLIC_CHARS = 1_000


class NotGradable(BaseException):
    """A reply that cannot be graded within the bounds; ``reason`` is the verdict's reason.

    A ``BaseException``, as ``KeyboardInterrupt`` is: math-verify (and sympy in places)
    turn any ``Exception`` raised inside them into "no parse" or "not equal", which would
    make a reply that ran out of time a wrong one.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class TooLarge(NotGradable):
    """A number or formula past the size limits."""

    def __init__(self, what: str):
        super().__init__(f"not gradable: too large ({what})")


class TooSlow(NotGradable):
    """Grading that ran past its time budget."""

    def __init__(self, seconds: float):
        super().__init__(f"not gradable: too slow (past {seconds:g} s)")


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`TooSlow` in the block once it has run ``seconds`` (main thread; elsewhere a no-op).

    An outer interval timer keeps its due time: if it is due first, its handler runs
    when it fires, and it is re-armed with what is left of it when the block ends.

    Examples
    --------
    >>> with deadline(0.5):
    ...     sum(range(1000))
    499500
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    start = time.monotonic()
    due = start + seconds
    outer_delay, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_due = start + outer_delay if outer_delay > 0 else None
    outer_handler = signal.getsignal(signal.SIGALRM)

    def expire(signum, frame):
        if time.monotonic() >= due - 1e-3:
            raise TooSlow(seconds)
        if callable(outer_handler):  # the outer timer came due first
            outer_handler(signum, frame)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_delay) if outer_due else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_due is not None:
            signal.setitimer(signal.ITIMER_REAL, max(outer_due - time.monotonic(), 1e-6), outer_interval)


@contextmanager
def paused() -> Iterator[None]:
    """Stop the clock of an enclosing :func:`deadline` (or any interval timer) for the block; restart it after.

    For one-off work that is no reply's cost: importing and warming up sympy and math-verify.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    remaining, interval = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if remaining > 0:
            signal.setitimer(signal.ITIMER_REAL, remaining, interval)


# The tokens that set a magnitude: numerals, symbols, brackets, powers and factorials.
_TOKEN_RE = re.compile(r"(\d+)(?:\.\d+)?|(\\[A-Za-z]+|[A-Za-z])|([{(\[])|([})\]])|(\^|\*\*)|(!=)|(!)")
_LOG2 = math.log10(2)


def _log10_size(text: str) -> float:
    """log10 of an upper bound of the magnitudes ``text`` can denote through numerals, powers and factorials.

    One pass over the tokens with a stack of bracket groups (a group is an operand of the
    size of the largest thing in it); a symbol counts as 10, so ``x^{10^{10}}``, symbolic
    as it is, is sized by its exponent. ``inf`` where the bound overflows.
    """
    frames = [[None, None, 0.0]]  # per group: last operand's size, a power's pending base, largest size

    def operand(size: float) -> None:
        frame = frames[-1]
        if frame[1] is not None:  # the exponent of a pending power
            size = math.inf if size > 300 else max(frame[1], _LOG2) * 10 ** size
            frame[1] = None
        frame[0] = size
        frame[2] = max(frame[2], size)

    for m in _TOKEN_RE.finditer(text):
        numeral, symbol, opening, closing, power, _, factorial = m.groups()
        if numeral is not None:
            operand(len(numeral) if len(numeral) > 300 else math.log10(int(numeral) + 1))
        elif symbol is not None:
            operand(1.0)
        elif opening:
            frames.append([None, None, 0.0])
        elif closing and len(frames) > 1:
            operand(frames.pop()[2])
        elif power:
            frames[-1][1] = frames[-1][0] if frames[-1][0] is not None else 1.0
        elif factorial and frames[-1][0] is not None:
            n_log = frames[-1][0]
            operand_size = math.inf if n_log > 300 else 10 ** n_log * max(n_log, 1.0)  # log10(n!) <= n log10(n)
            frames[-1][0] = operand_size
            frames[-1][2] = max(frames[-1][2], operand_size)
    return max(frame[2] for frame in frames)


def check_magnitude(text: str) -> None:
    """Refuse (:class:`TooLarge`) a formula whose evaluation could be too large to compute.

    Parameters
    ----------
    text : str
        A LaTeX or plain formula about to be read as a number or handed to sympy.

    Raises
    ------
    TooLarge
        Longer than :data:`MAX_SYMBOLIC_CHARS` (so no numeral in it is longer), or a power or
        factorial of more than :data:`MAX_DIGITS_OUT` digits.

    Examples
    --------
    >>> check_magnitude("2^{10} + 5!")
    >>> check_magnitude(r"10^{10^{10^{10}}}")
    Traceback (most recent call last):
    ...
    kstp.inference.grading.limits.TooLarge: not gradable: too large (a power or factorial past 10^10000)
    """
    if len(text) > MAX_SYMBOLIC_CHARS:
        raise TooLarge(f"a formula of {len(text):,} characters; at most {MAX_SYMBOLIC_CHARS:,} are compared")
    if _log10_size(text) > MAX_DIGITS_OUT:
        raise TooLarge(f"a power or factorial past 10^{MAX_DIGITS_OUT}")
