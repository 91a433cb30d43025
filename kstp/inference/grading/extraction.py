"""Where a reply states its final answer: boxes, the ``####`` delimiter, answer phrases, math.

A reasoning trace states its final answer late, so the latest statement counts, by
strength of the marker:

1. the last non-empty ``\\boxed{...}`` (``\\fbox`` too; nested braces allowed; an empty
   ``\\boxed{}`` mentioned later, "put the answer in \\boxed{}", is no answer), with the
   boxes just before it that a list word joins (``\\boxed{1}, \\boxed{2}``,
   ``\\boxed{6} \\text{ and } \\boxed{8}``; ``\\boxed{1} no no no \\boxed{2}`` is the last box);
2. the last GSM8K-style ``#### ...`` line, which beats any answer phrase;
3. the last answer phrase that states something: "the answer is ...", "Final Answer: ...",
   "the final answer, which is ...", a heading line "**Final Answer**" with the answer on
   the next line, display math (``\\[ 9 \\]``, ``$$ 9 $$``) on the lines after the phrase,
   "... 7 is the answer" / "7 is our answer", and the same phrases in French, Spanish,
   Portuguese, German, Italian and Chinese (réponse, respuesta, resposta, Antwort,
   risposta, 答案). A "Final Answer" phrase after the last box beats the box (a model that
   boxed its intermediate sums and then wrote "Final Answer: 10,455" answered 10,455);
4. where none of these is found, the grader of each answer type falls back on the last
   statement: the last math span (``$...$``, ``\\(...\\)``, ``\\[...\\]``, ``$$...$$``), the
   last number, the last line, or a reply that opens with its answer.

Markdown emphasis and code spans are read through. Every scan is linear in the length
of the reply (a 1 MB reply, 100,000 boxes or 10,000 nested braces take milliseconds).
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["Box", "boxes", "boxed_answer", "joined", "Phrase", "last_phrase", "delimited", "math_spans",
           "extract_final", "MARKDOWN_RE", "blank_markdown"]

MARKDOWN_RE = re.compile(r"\*\*|__|`+")
_BOX_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
_SIMPLE_BOX_RE = re.compile(r"\\(?:boxed|fbox)\s*\{([^{}]*)\}")
_FILLED_BOX_RE = re.compile(r"\\(?:boxed|fbox)\s*\{([^{}]*?\S[^{}]*)\}")
_BRACE_RE = re.compile(r"[{}]")
_NONSPACE_RE = re.compile(r"\S")
_DELIMITER_RE = re.compile(r"^[ \t]*####[ \t]*(\S.*?)[ \t]*$", re.MULTILINE)
_HEADING_RE = re.compile(r"\s*(?:final\s+)?answers?\s*:?\s*", re.IGNORECASE)
# An answer phrase's head. "answer" alone is a statement only with a copula or a colon
# ("Answer: 7", "the answer is 7"), a heading "Final Answer", or math right after it.
_HEAD_RE = re.compile(
    r"(?:(?P<final>\bfinal\s+answers?\b)|\b(?:the\s+)?answers?\b|\b(?:la\s+)?r[ée]ponse\b|\brespuesta\b|\bresposta\b"
    r"|\bantwort\b|\brisposta\b|答案)(?:\s*,?\s*(?:which|that)\s+(?=is\b))?", re.IGNORECASE)
_COPULA_RE = re.compile(r"\s*(?:(?:is|are|was|will\s+be|would\s+be|est|es|ist|é|è)\b|[:=：])\s*[:=：]?\s*",
                        re.IGNORECASE)
# "7 is the answer", "$x \le 2$ is our answer", "so 12 is the final answer"
_REVERSE_RE = re.compile(r"\s+(?:is|are|was|would\s+be|will\s+be)\s+(?:the|our|my)\s+(?:final\s+|correct\s+)?"
                         r"answers?\b", re.IGNORECASE)
# A phrase's answer ends at a line end or a sentence end (a period after a non-digit, or after a
# digit before a capital or the end: "is 9. Done"; not "is 3. 5 of them", nor 3.5), or 。.
_PHRASE_END_RE = re.compile(r"\n|(?<=[^\d\s])\.(?=\s|$)|(?<=\d)\.(?=\s+[A-Z]|\s*$)|。")
_SENTENCE_START_RE = re.compile(r"(?:\n|(?<=[^\d\s])\.\s|。|[!?]\s)")
_MATH_TOKEN_RE = re.compile(r"\$\$|\\\[|\\\]|\\\(|\\\)|(?<!\\)\$|\n")
_WINDOW = 2000  # how far past a phrase its answer is looked for
_MAX_JOINED = 50  # the most boxes read together as one answer


def blank_markdown(text: str) -> str:
    """``text`` with markdown emphasis and code marks turned to spaces (positions kept)."""
    return MARKDOWN_RE.sub(lambda m: " " * len(m.group()), text)


class Box(NamedTuple):
    """A closed ``\\boxed{...}``: where it starts and ends in the reply, where its content does, and
    how many boxes enclose it.

    The content is sliced only when asked for (:meth:`content`): slicing every one of
    10,000 nested boxes would copy the reply 10,000 times.
    """

    start: int
    end: int
    content_start: int
    content_end: int
    depth: int = 0

    def content(self, text: str) -> str:
        """What the box holds, stripped."""
        return text[self.content_start:self.content_end].strip()

    def empty(self, text: str) -> bool:
        """Whether the box holds nothing but spaces (``\\boxed{}`` mentioned as a format)."""
        return _NONSPACE_RE.search(text, self.content_start, self.content_end) is None


def boxes(text: str, last: int | None = None) -> list[Box]:
    """Every closed, non-empty ``\\boxed{...}`` / ``\\fbox{...}`` of ``text``, in the order they open.

    With ``last``, only the last ``last`` of them where no box holds a brace (and so none
    is nested): all a reply's final answer needs of 100,000 boxes.

    One regex pass where no box holds a brace; otherwise one pass over the braces from the
    first box on, with a stack of open boxes, so nested boxes and long replies stay linear.

    Examples
    --------
    >>> text = r"\\boxed{1} and \\boxed{} and \\boxed{\\frac{1}{2}} and \\boxed{"
    >>> [b.content(text) for b in boxes(text)]
    ['1', '\\\\frac{1}{2}']
    """
    first = _BOX_RE.search(text)
    if first is None:
        return []
    if len(_SIMPLE_BOX_RE.findall(text, first.start())) == len(_BOX_RE.findall(text, first.start())):
        # no box holds a brace: the regexes find them all (100,000 boxes in milliseconds)
        found = _FILLED_BOX_RE.finditer(text, first.start())
        return [Box(m.start(), m.end(), m.start(1), m.end(1)) for m in deque(found, maxlen=last)]
    opens = {m.end() - 1: m.start() for m in _BOX_RE.finditer(text, first.start())}
    found, stack, depth = [], [], 0  # stack: (brace position, box start or None for a plain brace)
    for m in _BRACE_RE.finditer(text, first.start()):
        if m.group() == "{":
            start = opens.get(m.start())
            stack.append((m.start(), start, depth))
            depth += start is not None
        elif stack:
            brace, start, depth = stack.pop()
            if start is not None:
                box = Box(start, m.end(), brace + 1, m.start(), depth)
                if not box.empty(text):
                    found.append(box)
    return sorted(found)


# Between two boxes that state one answer together: one list word (a comma, "and", "or", ";",
# "&"), with at most a few other words ("$\boxed{1}$ papers and $\boxed{2}$ bins").
_JOINER_RE = re.compile(r",?\s*\b(?:and|or)\b|[,;&]|\\text\s*\{\s*(?:,?\s*and|or)\s*\}", re.IGNORECASE)


def joined(text: str, between: str) -> bool:
    """Whether the text ``between`` two boxes joins them into one answer (one list word, few other words)."""
    if "\n\n" in between or re.search(r"[.!?]\s", between) or len(between) > 80:
        return False
    if len(_JOINER_RE.findall(between)) != 1:
        return False
    words = re.findall(r"[A-Za-z]+", _JOINER_RE.sub(" ", between))
    words = [w for w in words if w not in ("quad", "qquad", "text", "mathrm", "mbox")]
    return len(words) <= 4


def boxed_answer(text: str) -> tuple[str, int, int] | None:
    """The answer the boxes state: the last non-empty box with the boxes joined to it, and its span.

    Returns
    -------
    (str, int, int) or None
        The content (joined boxes as ``a, b``), where the first of them starts and where
        the last ends; ``None`` without a non-empty box.

    Examples
    --------
    >>> boxed_answer(r"So x = \\boxed{12}. (The instructions asked for the answer in \\boxed{}.)")[0]
    '12'
    >>> boxed_answer(r"\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}")[0]
    '(2, 2), (6, 2)'
    >>> boxed_answer(r"\\boxed{1} no no no no no \\boxed{2}")[0]
    '2'
    """
    outer = [b for b in boxes(text, last=_MAX_JOINED) if b.depth == 0]  # a box inside another is part of it
    if not outer:
        return None
    spans: list[tuple[int, int, str]] | None = None

    def one_formula(a: Box, b: Box, between: str) -> bool:
        """Both boxes in one math span, with no relation between them (``$\\boxed{1}\\boxed{2}$``)."""
        nonlocal spans
        if spans is None:
            spans = math_spans(text)
        i = bisect.bisect_right([s for s, _, _ in spans], a.start) - 1
        return i >= 0 and spans[i][1] >= b.end and not re.search(r"[=<>]", between)

    chosen = [outer[-1]]
    for box in reversed(outer[-_MAX_JOINED:-1]):
        between = text[box.end:chosen[-1].start]
        if not (not between.strip() or joined(text, between) or one_formula(box, chosen[-1], between)):
            break
        chosen.append(box)
    chosen.reverse()
    return ", ".join(b.content(text) for b in chosen), chosen[0].start, chosen[-1].end


def delimited(text: str) -> tuple[str, int] | None:
    """The answer after the last ``####`` at the start of a line (a heading "#### Final Answer" is none)."""
    last = None
    for m in _DELIMITER_RE.finditer(text):
        if not _HEADING_RE.fullmatch(m.group(1)):
            last = (m.group(1), m.start())
    return last


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """Every closed math span (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``): start, end, content.

    Inline ``$...$`` and ``\\(...\\)`` end at a line end (an unclosed one is no span); display
    math may span lines. One pass over the delimiters.

    Examples
    --------
    >>> [c for _, _, c in math_spans(r"so $x = 1$ and \\[ \\frac{1}{2} \\] then $5")]
    ['x = 1', '\\\\frac{1}{2}']
    """
    closers = {"$$": "$$", "\\[": "\\]", "\\(": "\\)", "$": "$"}
    spans, opened = [], None  # opened: (delimiter, position after it, start)
    for m in _MATH_TOKEN_RE.finditer(text):
        token = m.group()
        if opened is None:
            if token in closers:
                opened = (token, m.end(), m.start())
        elif token == "\n":
            if opened[0] in ("$", "\\("):
                opened = None
        elif token == closers[opened[0]]:
            content = text[opened[1]:m.start()].strip()
            if content:
                spans.append((opened[2], m.end(), content))
            opened = None
    return spans


@dataclass(frozen=True)
class Phrase:
    """An answer phrase: where its head starts, what it states, and whether it says "final answer"."""

    start: int
    answer: str
    final: bool


_DISPLAY_START_RE = re.compile(r"[ \t]*(?:\\\[|\$\$|\n)")


def _display_after(text: str, start: int) -> str | None:
    """The display math or the line that follows a phrase ending at ``start`` with nothing on its line."""
    if not _DISPLAY_START_RE.match(text, start):
        return None
    rest = text[start:start + _WINDOW]
    stripped = rest.lstrip(" \t")
    if stripped.startswith(("\\[", "$$")):
        spans = math_spans(stripped)
        return spans[0][2] if spans and spans[0][0] == 0 else None
    following = stripped.lstrip()
    if following.startswith(("\\[", "$$")):
        spans = math_spans(following)
        return spans[0][2] if spans and spans[0][0] == 0 else None
    line = following.split("\n", 1)[0].strip()
    return line or None


def _statement(text: str, m: re.Match) -> Phrase | None:
    """What the phrase whose head is ``m`` states (``None``: the word "answer" states nothing here)."""
    copula = _COPULA_RE.match(text, m.end())
    end = copula.end() if copula else m.end()
    display = _display_after(text, end)
    if display is not None and (copula or m.group("final") or text[end:end + 1].isspace()):
        return Phrase(m.start(), display, bool(m.group("final")))
    if not copula and not m.group("final"):
        rest = text[end:end + 3].lstrip()
        if not rest.startswith(("$", "\\(", "\\[")):
            return None  # "To answer this, ..." states nothing
    stop = _PHRASE_END_RE.search(text, end, end + _WINDOW)
    answer = text[end:stop.start() if stop else min(len(text), end + _WINDOW)].strip().strip("*_#: ").strip()
    answer = answer[:-1].rstrip() if answer.endswith(".") and not answer.endswith("..") else answer
    return Phrase(m.start(), answer, bool(m.group("final"))) if answer else None


def _reverse_statement(text: str, m: re.Match) -> Phrase | None:
    """"so 7 is the answer": the end of the sentence before the reverse phrase."""
    before = text[max(0, m.start() - 300):m.start()]
    starts = list(_SENTENCE_START_RE.finditer(before))
    answer = before[starts[-1].end():] if starts else before
    answer = answer.strip().strip("*_#: ").strip()
    return Phrase(m.start() - len(before) + before.find(answer), answer, False) if answer else None


# Literal pieces of every phrase head: found with str.find at C speed, then each hit is read with
# the phrase regexes in a small window (the regexes alone scan a megabyte in a quarter second).
_HEAD_KEYS = ("nswer", "NSWER", "ponse", "PONSE", "espuesta", "ESPUESTA", "esposta", "ESPOSTA", "ntwort", "NTWORT",
              "isposta", "ISPOSTA", "答案")


def _heads(text: str, after: int) -> Iterator[tuple[int, object, re.Match]]:
    """The phrase heads (forward and reverse) that start at ``after`` or later, latest first."""
    hits = set()
    for key in _HEAD_KEYS:
        at = text.find(key, after)
        while at >= 0:
            hits.add(at)
            at = text.find(key, at + 1)
    seen = set()
    for at in sorted(hits, reverse=True):
        found = [(m.start(), _statement, m) for m in _HEAD_RE.finditer(text, max(after, at - 16), at + 48)]
        found += [(m.start(), _reverse_statement, m) for m in _REVERSE_RE.finditer(text, max(after, at - 80), at + 16)]
        for head in sorted(found, key=lambda h: h[0], reverse=True):
            if (head[0], head[1]) not in seen:
                seen.add((head[0], head[1]))
                yield head


def last_phrase(text: str, after: int = 0, final: bool = False) -> Phrase | None:
    """The last answer phrase of ``text`` (markdown blanked) that states something, or ``None``.

    Parameters
    ----------
    text : str
        The reply, markdown blanked (:func:`blank_markdown`).
    after : int
        Only phrases that start here or later.
    final : bool
        Only "final answer" phrases (a phrase inside the answer of a "Final Answer:" one is one).

    Examples
    --------
    >>> last_phrase("The answer is 40, in all.\\nFinal Answer: The number of points is 19.").answer
    'The number of points is 19'
    >>> last_phrase("so 7 is the answer.").answer, last_phrase("Final Answer: The final answer is 9. Done").answer
    ('so 7', '9')
    """
    heads = _heads(text, after)
    stated = (p for p in (read(text, m) for _, read, m in heads) if p is not None)
    current = next(stated, None)
    while current is not None:
        earlier = next(stated, None)
        if earlier is not None and earlier.start < current.start and current.answer in earlier.answer:
            current = Phrase(current.start, current.answer, current.final or earlier.final)
        if current.final or not final:
            return current
        current = earlier
    return None


def extract_final(text: str) -> tuple[str | None, str | None]:
    """The stated final answer of ``text`` and where it was found.

    Parameters
    ----------
    text : str
        A model's reply.

    Returns
    -------
    (str or None, str or None)
        The last box's content with the boxes joined to it (``"boxed"``), unless a "Final
        Answer" phrase follows it; else the text after the last ``####`` line
        (``"delimiter"``); else the last answer phrase (``"phrase"``); else ``(None, None)``.
        Markdown emphasis and code spans are read through.

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
    >>> extract_final(r"$\\boxed{200}$ then $\\boxed{255}$, so $10,455. Final Answer: The final answer is $10,455$.")
    ('$10,455$', 'phrase')
    """
    boxed = boxed_answer(text)
    plain = blank_markdown(text)
    if boxed is not None:
        after = last_phrase(plain, after=boxed[2], final=True)
        if after is not None and re.search(r"\d|\$|\\\(", after.answer):
            return after.answer, "phrase"
        return boxed[0], "boxed"
    delimiter = delimited(plain)
    if delimiter is not None:
        return delimiter[0], "delimiter"
    said = last_phrase(plain)
    if said is not None:
        return said.answer, "phrase"
    return None, None
