"""A reply made fit to store and grade: its inline reasoning trace split off, bad code units replaced.

Deployed servers send what no test server did. A reasoning model without a reasoning
parser writes its thinking into ``content`` (``<think> ... </think>``): the answer is the
text after it, the thinking is the reply's reasoning, as a server's
``reasoning_content`` is (:mod:`kstp.inference.grading.traces`). A reply cut in the
middle of an emoji carries a lone UTF-16 surrogate (``"\\ud83d"`` is valid JSON), which
no UTF-8 store can hold: it becomes U+FFFD, and the row says so. Both are recorded on
the completion (:attr:`Completion.extra`): ``traceRule`` (where the trace was split) and
``textRepair`` (what was replaced), so a stored Response says what was done to it.
:func:`tidy` is idempotent: a tidied reply comes back as it is.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kstp.inference.backend import Completion
from kstp.inference.grading.traces import split_trace

__all__ = ["tidy", "repair_text", "TRACE_RULE", "TEXT_REPAIR"]

#: ``Completion.extra`` (and Response property) naming where an inline reasoning trace was split off.
TRACE_RULE = "traceRule"
#: ``Completion.extra`` (and Response property) saying which code units were replaced.
TEXT_REPAIR = "textRepair"

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def repair_text(text: str | None) -> tuple[str | None, int]:
    """``text`` with every lone UTF-16 surrogate replaced by U+FFFD, and how many there were.

    >>> repair_text("a split emoji \\ud83d")
    ('a split emoji \\ufffd', 1)
    >>> repair_text("fine 😀")
    ('fine 😀', 0)
    """
    if text is None:
        return None, 0
    repaired, count = _SURROGATE_RE.subn("\ufffd", text)
    return repaired, count


def tidy(completion: Completion) -> Completion:
    """The completion with lone surrogates replaced and an inline reasoning trace moved to its reasoning.

    Parameters
    ----------
    completion : Completion
        A completion as a backend returned it (or as it was stored).

    Returns
    -------
    Completion
        ``text`` the answer after the trace (``""`` where the trace never closed),
        ``reasoning`` the server's reasoning followed by the inline trace, and in
        ``extra`` the ``traceRule`` and the ``textRepair`` where either applied.

    Examples
    --------
    >>> done = tidy(Completion(0, 42, text="<think>\\nIs it 7?\\n</think>\\n\\nThe answer is 5."))
    >>> done.text, done.reasoning, done.extra
    ('The answer is 5.', 'Is it 7?', {'traceRule': '</think>'})
    >>> tidy(Completion(0, 42, text="so 5 \\ud83d")).extra
    {'textRepair': '1 lone UTF-16 surrogate replaced with U+FFFD'}
    """
    text, bad_text = repair_text(completion.text)
    reasoning, bad_reasoning = repair_text(completion.reasoning)
    extra = dict(completion.extra)
    if bad_text + bad_reasoning:
        count = bad_text + bad_reasoning
        extra[TEXT_REPAIR] = f"{count} lone UTF-16 surrogate{'s' if count > 1 else ''} replaced with U+FFFD"
    split = split_trace(text)
    if split.rule is not None:
        text = split.content
        reasoning = "\n\n".join(part for part in (reasoning, split.reasoning) if part) or None
        extra[TRACE_RULE] = split.rule
    if text == completion.text and reasoning == completion.reasoning and extra == completion.extra:
        return completion
    return replace(completion, text=text, reasoning=reasoning, extra=extra)
