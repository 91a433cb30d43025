"""A reasoning trace written inside the reply: where it ends and the answer begins.

A reasoning model served without a reasoning parser (most vLLM deployments, llama.cpp,
a gateway) sends its thinking in ``content``, ahead of the answer. The trace explores:
"Maybe it is \\boxed{7}? No, let me add again." states no answer, so the answer is read
after the trace, and the trace is kept apart as reasoning (as a server's
``reasoning_content`` is). The spellings in the wild, each split at its *last* closing
marker:

- ``<think>`` ... ``</think>``: DeepSeek-R1 and its distills, QwQ, Qwen3 (rule ``</think>``);
- ``</think>`` alone: chat templates that open the tag in the prompt (R1 distills, QwQ)
  (rule ``</think>``);
- ``<thinking>`` ... ``</thinking>``: Claude-style prompts, some fine-tunes (rule ``</thinking>``);
- ``<|begin_of_thought|>`` ... ``<|end_of_thought|>``: Bespoke-Stratos, OpenThoughts, the
  answer inside ``<|begin_of_solution|>`` ... (rule ``<|end_of_thought|>``);
- Harmony's channels (gpt-oss): ``<|channel|>analysis<|message|>`` ...
  ``<|channel|>final<|message|>`` ..., or as text without its special tokens,
  ``analysis...assistantfinal...`` (rule ``harmony final channel``).

A trace that opens (at the start of the reply) and never closes never reached an
answer: the reply is cut in its reasoning (rule ``unclosed <think>`` and the like),
whatever number the unfinished thinking mentions. A closing marker alone is enough: a
template may have opened the tag in the prompt; where the caller knows that it did
(``opened=True``: DeepSeek-R1 distills' and QwQ's templates), a reply without the close
never closed its trace. Text without any of these markers is returned as it is.

A reply can also stop mid-thought without any marker, when the server's finish reason
is not at hand (a log from elsewhere, ``kstp grade``): :func:`unfinished` tells the
endings a reader takes for a cut: inside an open ``\\boxed{`` or math span, on an
operator, a comma or a word that cannot end a sentence ("... so 14 have two,",
"240/80 =", "the sum from"), or on a thinking interjection ("Wait,", "But I'm not sure.
Hmm.", "Alternatively").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Split", "split_trace", "unfinished", "UNCLOSED", "CUT"]

#: The start of the rule of a trace that never closed.
UNCLOSED = "unclosed"
#: The start of the rule of a reply that stops mid-thought (:func:`unfinished`).
CUT = "cut mid-thought"

# (opening, closing) of the tag spellings; the opening counts only at the start of the reply
_TAGS = (("<think>", "</think>"), ("<thinking>", "</thinking>"), ("<|begin_of_thought|>", "<|end_of_thought|>"))
_SOLUTION_RE = re.compile(r"<\|begin_of_solution\|>(.*?)(?:<\|end_of_solution\|>|$)", re.DOTALL)
# Harmony (gpt-oss): the final channel's message, up to its end token; as plain text (special tokens dropped by
# the detokenizer), "analysis<thinking>assistantfinal<answer>"
_HARMONY_FINAL_RE = re.compile(r"<\|channel\|>\s*final\s*(?:<\|constrain\|>\S*)?<\|message\|>")
_HARMONY_ANALYSIS_RE = re.compile(r"^\s*(?:<\|start\|>assistant)?<\|channel\|>\s*analysis\s*<\|message\|>")
_HARMONY_END_RE = re.compile(r"<\|(?:return|end|call)\|>")
_HARMONY_PLAIN_RE = re.compile(r"^\s*analysis(?=\S)(.*?)assistantfinal", re.DOTALL)


@dataclass(frozen=True)
class Split:
    """A reply split into its answer and its reasoning trace.

    Attributes
    ----------
    content : str
        The text to grade: after the trace, or the whole reply without a trace
        (``""`` where the trace never closed).
    reasoning : str or None
        The trace without its markers (None: no trace).
    rule : str or None
        The marker the split was made at (``</think>``, ``harmony final channel``),
        ``unclosed <think>`` where the trace never closed, None where there was no trace.
    """

    content: str
    reasoning: str | None = None
    rule: str | None = None

    @property
    def unclosed(self) -> bool:
        """Whether the reply is a trace that never closed (so it states no answer)."""
        return bool(self.rule) and self.rule.startswith(UNCLOSED)


def _harmony(text: str) -> Split | None:
    """Harmony's analysis and final channels, with their special tokens or as plain text."""
    finals = list(_HARMONY_FINAL_RE.finditer(text))
    if finals:
        final = finals[-1]
        analysis = _HARMONY_ANALYSIS_RE.sub("", text[:final.start()])
        answer = _HARMONY_END_RE.split(text[final.end():], maxsplit=1)[0]
        thinking = _HARMONY_END_RE.sub("\n", analysis).replace("<|start|>assistant", "").strip()
        return Split(answer.strip(), thinking or None, "harmony final channel")
    if (opened := _HARMONY_ANALYSIS_RE.match(text)) is not None:
        return Split("", _HARMONY_END_RE.sub("\n", text[opened.end():]).strip() or None, f"{UNCLOSED} harmony analysis")
    if (plain := _HARMONY_PLAIN_RE.match(text)) is not None:
        return Split(text[plain.end():].strip(), plain.group(1).strip() or None, "harmony final channel")
    return None


def split_trace(text: str | None, opened: bool = False) -> Split:
    """Split a reply's reasoning trace from its answer (see the module's table of spellings).

    Parameters
    ----------
    text : str or None
        A reply as the server sent it (``content``).
    opened : bool
        The prompt opened the trace (the chat template ends in ``<think>``): a reply with
        no closing marker never closed it.

    Returns
    -------
    Split
        ``Split(text)`` (no rule) where the reply holds no trace marker.

    Examples
    --------
    >>> split_trace("<think>\\nMaybe \\\\boxed{7}? No.\\n</think>\\n\\nThe answer is 5.")
    Split(content='The answer is 5.', reasoning='Maybe \\\\boxed{7}? No.', rule='</think>')
    >>> split_trace("Okay, 2 + 3 = 5.\\n</think>\\n\\\\boxed{5}").content
    '\\\\boxed{5}'
    >>> split_trace("<think>\\nWait, is it 7? Hmm.").rule
    'unclosed <think>'
    >>> split_trace("The answer is 5.")
    Split(content='The answer is 5.', reasoning=None, rule=None)
    """
    if not text:
        return Split(text or "")
    for opening, closing in _TAGS:
        at = text.rfind(closing)
        if at >= 0:
            before, after = text[:at], text[at + len(closing):]
            start = before.lstrip()
            thinking = start[len(opening):] if start.startswith(opening) else before
            if (solution := _SOLUTION_RE.search(after)) is not None:
                after = solution.group(1)
            return Split(after.strip(), thinking.strip() or None, closing)
        if text.lstrip().startswith(opening):
            return Split("", text.lstrip()[len(opening):].strip() or None, f"{UNCLOSED} {opening}")
    if "<|channel|>" in text or text.lstrip().startswith("analysis"):
        return _harmony(text) or Split(text)
    if opened:
        return Split("", text.strip() or None, f"{UNCLOSED} <think> (opened by the prompt)")
    return Split(text)


# Words that cannot end a finished sentence: a reply ending on one was cut ("... 10 is", "the sum from")
_DANGLING = frozenset("""a an the and or but so then than that which who whose if because since as of to from
with without for in on at by into onto over under between about is are was were be been being am has have had do
does did will would can could should may might must shall let let's we you it its it's this these those
there their our my your not no plus minus times over equals gives get gets got""".split())
_OPERATOR_END_RE = re.compile(r"(?:[=+\-*/^_(\[{,:;\\]|\\(?:cdot|times|div|pm|le|ge|leq|geq|approx|frac|sqrt|"
                              r"left|quad|qquad|implies|Rightarrow|to))$")
_INTERJECTION_RE = re.compile(r"(?:hmm+|wait|hold on|alternatively|actually|no,? wait|but i['’]?m not sure|"
                              r"i['’]?m not sure|let me (?:check|think|verify|see|double-check|re\w+)(?: again)?|"
                              r"let['’]?s (?:check|see|verify)(?: again)?|maybe|perhaps|or maybe)\W*", re.IGNORECASE)
_LAST_SENTENCE_RE = re.compile(r"(?:^|(?<=[.!?])\s+|\n)([^\n.!?]*[.!?]*\W*)$")
_BOX_OPEN_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")


def _open_box(text: str) -> bool:
    """Whether the last ``\\boxed{`` never closes."""
    start = max((m.end() for m in _BOX_OPEN_RE.finditer(text)), default=None)
    if start is None:
        return False
    depth = 1
    for char in text[start:]:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return False
    return True


def unfinished(text: str) -> str | None:
    """How ``text`` visibly stops mid-thought, or None where it ends as a finished reply does.

    Parameters
    ----------
    text : str
        A reply's answer part (its trace split off).

    Returns
    -------
    str or None
        ``cut mid-thought (...)`` naming the ending: inside ``\\boxed{``, inside a math
        span, on an operator or a comma, on a word that cannot end a sentence, or on a
        thinking interjection.

    Examples
    --------
    >>> unfinished("Total is 80k + 144k. Dividing, 240/80 ="), unfinished("so even if it's 80, 10 is")
    ("cut mid-thought (ends on '=')", "cut mid-thought (ends on 'is')")
    >>> unfinished("The answer is 5. But I'm not sure. Hmm."), unfinished(r"Therefore \\(\\boxed{")
    ("cut mid-thought (ends on 'Hmm.')", 'cut mid-thought (ends inside \\\\boxed{)')
    >>> unfinished(r"The answer is \boxed{5}."), unfinished("So the answer is B"), unfinished("#### 18")
    (None, None, None)
    """
    end = text.rstrip().rstrip("*_` \t")
    if not end:
        return None
    if _open_box(end):
        return f"{CUT} (ends inside \\boxed{{)"
    if end.rfind("\\(") > end.rfind("\\)") or end.rfind("\\[") > end.rfind("\\]") or end.count("$$") % 2:
        return f"{CUT} (ends inside a math span)"
    sentence = _LAST_SENTENCE_RE.search(end)
    if sentence is not None and _INTERJECTION_RE.fullmatch(sentence.group(1).strip()):
        return f"{CUT} (ends on {sentence.group(1).strip()!r})"
    if (operator := _OPERATOR_END_RE.search(end)) is not None:
        return f"{CUT} (ends on {operator.group()!r})"
    last_word = re.search(r"(?<=\s)([A-Za-z'’]+)$", end)  # a word of prose (not the i of 3/4 i)
    if last_word is not None and last_word.group(1) in _DANGLING:
        return f"{CUT} (ends on {last_word.group(1)!r})"
    return None
