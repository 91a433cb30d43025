"""Option letters and yes/no answers: only where a reply states them unambiguously.

- **choice**: an option letter only where it is anchored ("answer is C", "the answer is
  clearly D", ``ANSWER: $B$``, "Answer: (C)", "réponse est C", ``\\boxed{C}``,
  ``\\boxed{E: <option text>}``, ``\\boxed{\\textbf{(B)}}``, a ``(B)`` closing the last line,
  "... I think it's B" closing the reply, or a reply that starts with ``B)``, ``(B)``,
  ``B.``, ``B。``), so gold ``D`` is never found inside a word such as "drastic", and
  "Because B is valid" names no option. An "I" before a lower-case word or an
  apostrophe ("Answer: I think it is D.") is the pronoun: the option is the first letter
  in the rest of its sentence. A letter past the question's option count
  (:func:`option_count`) is no option, so with fewer than nine options an "I" never is one.
- **yesno**: yes/no (true/false) only from an unambiguous signal: the final-answer phrase
  or box, or a reply that opens with it. The word right after the answer phrase decides
  ("The answer is no, even though some say yes." is no), unless the other word is joined
  to it ("yes and no", "yes/no", "yes or no"): that is no answer. A negated word is its
  opposite ("not yes" is no).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kstp.inference.grading.extraction import extract_final
from kstp.inference.grading.golds import CHOICES
from kstp.inference.grading.numbers import clean, parse_number

__all__ = ["option_count", "option_texts", "split_options", "grade_choice", "grade_yesno"]

# Words that may stand between an answer phrase and its letter ("the answer is clearly D", "is for sure D").
_FILLER = (r"(?:(?:clearly|definitely|probably|likely|most|obviously|surely|certainly|indeed|therefore|thus|hence"
           r"|for\s+sure|simply|just|actually|undoubtedly|the|letter|choice|option)\s+){0,3}")
# An option letter where it is anchored: after "answer", "option" or "choice" (``ANSWER: $B$``,
# "the answer is (C)"); at the start of a stated answer or reply (``E: <option text>``, ``(B)``,
# ``B)``); in parentheses closing the reply's last line ("so the correct one is (B).").
_PHRASE_LETTER_RE = re.compile(r"(?i:answer|option|choice|r[ée]ponse|respuesta|antwort)\s*(?i:is|est|es|ist)?\s*"
                               r"(?i:option\s*)?[:\s]*(?i:" + _FILLER + r")[*_(\[$]*\s*([A-J])"
                               r"\s*[)\]*_$]*(?![\w])")
_LEADING_LETTER_RE = re.compile(r"^\s*[*_$]*\s*(?:\(([A-J])\)|([A-J])(?:[).:。，、]|(?=[^\x00-\x7f])|\s*[*_$]*\s*$))")
_CLOSING_LETTER_RE = re.compile(r"\(([A-J])\)[\s.*_$]*$")
# "... therefore I think it's B": a letter closing the reply after a verb that states it
_CLOSING_STATED_RE = re.compile(r"(?:\bis|\bit['’]s|\bbe|\bchoose|\bpick|\bselect)\s+\(?([A-J])\)?[\s.*_$]*$",
                                re.IGNORECASE)
# "... the option that contributed the least is (A) Low taxes ...": a parenthesised letter stated by a copula in
# the reply's last line
_LAST_LINE_STATED_RE = re.compile(r"\b(?:is|are|be)\s+[*_]*\(([A-J])\)")
# The English pronoun, not option I: "I" before a lower-case word or an apostrophe ("I think", "I'm").
_PRONOUN_RE = re.compile(r"\s+[a-z]|['’]")
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|\n")
_LOOSE_LETTER_RE = re.compile(r"(?<![\w'’])\(?([A-J])\)?(?![\w'’])")
# An option line: a letter and ".", ")" or ":" opening the line ("A. 12", "(B) 14").
_OPTION_LINE_RE = re.compile(r"^\s*\(?([A-J])[.):]\s")


def option_count(question: str) -> int | None:
    """The number of lettered options a question text lists, or ``None`` if it lists none.

    An option is a line that opens with a letter and ``.``, ``)`` or ``:`` (``A. 12``,
    ``(B) 14``), or a parenthesised letter after a space (``(A) 3 (B) 4``, not
    ``P(E)``); the count is the run A, B, C, ... found, and fewer than two is none.

    Parameters
    ----------
    question : str
        The question text as the model sees it.

    Returns
    -------
    int or None

    Examples
    --------
    >>> option_count("Which is prime?\\nA. 4\\nB. 6\\nC. 7\\nD. 9\\nAnswer with A, B, C, or D.")
    4
    >>> option_count("Pick one: (A) 3 (B) 4 (C) 5") , option_count("What is 2 + 2?")
    (3, None)
    """
    found = {a or b for a, b in re.findall(r"(?m)^\s*\(?([A-J])[.):]\s|(?<!\S)\(([A-J])\)\s", question + " ")}
    count = next((i for i, letter in enumerate(CHOICES) if letter not in found), len(CHOICES))
    return count if count >= 2 else None


def split_options(text: str) -> tuple[str, str]:
    """A question's text as ``(question, options)``: its option lines from the first ``A.`` on.

    The options are a run of lettered lines that starts at ``A`` with ``B`` the next
    lettered line (``A. 4`` then ``B. 7``); anything else is question text, so the Roman
    numerals of a statement list ("I. f is continuous", "II. f is bounded") are no
    options. The answers evaluation's prompts split a stored text here, and the item
    loaders refuse a problem text that lists options itself by the same rule.

    Parameters
    ----------
    text : str
        A question's text, options (if any) as lines under the problem.

    Returns
    -------
    tuple of str
        The text before the options (right-stripped) and the option lines (``""``: none).

    Examples
    --------
    >>> split_options("Which is prime?\\nA. 4\\nB. 7")
    ('Which is prime?', 'A. 4\\nB. 7')
    >>> split_options("Which must be true?\\nI. f is continuous\\nII. f is bounded")[1]
    ''
    >>> split_options("What is 2 + 2?")
    ('What is 2 + 2?', '')
    """
    lines = text.splitlines()
    letters = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _OPTION_LINE_RE.match(line))]
    for (i, letter), (_, following) in zip(letters, letters[1:], strict=False):
        if (letter, following) == ("A", "B"):
            return "\n".join(lines[:i]).rstrip(), "\n".join(lines[i:]).strip()
    return text, ""


def option_texts(question: str) -> list[str] | None:
    """The texts of the lettered option lines of a question, in letter order, or None.

    The option lines are :func:`split_options`' (``A. 12``, ``B) 14``); a line that opens
    with no letter continues the option above it.

    Examples
    --------
    >>> option_texts("Which is prime?\\nA. 4\\nB. 7\\nC. 9"), option_texts("What is 2 + 2?")
    (['4', '7', '9'], None)
    """
    texts: list[str] = []
    for line in split_options(question)[1].splitlines():
        if (m := _OPTION_LINE_RE.match(line)) is not None and m.group(1) == CHOICES[len(texts)]:
            texts.append(line[m.end():].strip())
        elif texts and line.strip():
            texts[-1] = f"{texts[-1]} {line.strip()}"
    return texts if len(texts) >= 2 else None


def _same_text(said: str, option: str) -> bool:
    """Whether a stated answer is an option's text: the same value, or the same words (case, spacing, LaTeX aside)."""
    a, b = clean(said).strip(" .$"), clean(option).strip(" .$")
    values = parse_number(a), parse_number(b)
    if values[0] is not None and values[1] is not None:
        return bool(set(values[0]) & set(values[1]))
    return " ".join(a.lower().split()) == " ".join(b.lower().split()) != ""


def _option_of(said: str | None, texts: Sequence[str] | None) -> str | None:
    """The letter of the one option whose text ``said`` states (``\\boxed{200}`` with option C = 200 is C); None
    where it states none, or several options share the text."""
    if not said or not texts:
        return None
    found = [CHOICES[i] for i, option in enumerate(texts) if _same_text(said, option)]
    return found[0] if len(found) == 1 else None


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


# Inspect's "ANSWER: $LETTER" in lower case ("ANSWER: b"): a lone lower-case letter after "answer:" or "answer is"
# that ends its line ("the answer is a number" names no option)
_LOWER_LETTER_RE = re.compile(r"(?i:\banswer)\s*(?i:is|:)\s*[*_(\[$]*\s*([a-j])\s*[)\]*_$]*\s*\.?\s*$", re.MULTILINE)
# an option letter joined to another by a list word: "(A) and (B)", "B or C", "A, B"
_JOINED_BEFORE_RE = re.compile(r"(?<![\w'’])\(?[A-J]\)?\s*(?:,|&|/|\band\b|\bor\b)\s*[*_$]*\(?\s*$")
_JOINED_AFTER_RE = re.compile(r"\s*\)?[*_$]*\s*(?:,|&|/|\band\b|\bor\b)\s*[*_$]*\(?[A-J]\)?(?![\w'’])")


def _joined(text: str, at: int) -> bool:
    """Whether the option letter at ``at`` is named together with another ("(A) and (B)", "B or C"): two options
    named are no answer."""
    return bool(_JOINED_BEFORE_RE.search(text[max(0, at - 40):at]) or _JOINED_AFTER_RE.match(text, at + 1))


def _lists_options(text: str) -> bool:
    """Whether ``text`` opens with an option listing (``A. ...`` then ``B. ...``): its first letter states nothing."""
    question, listing = split_options(text.strip())
    return bool(listing) and not question.strip()


def grade_choice(text: str, gold: str, options: int | None,
                 texts: Sequence[str] | None = None) -> tuple[str | None, str | None]:
    """The option letter ``text`` states and where (``(None, None)``: none).

    A reply that names two options ("the answer is (A) and (B)", ``\\boxed{A, B}``) or only
    repeats the option list states none. With the options' ``texts`` (:func:`option_texts`),
    a boxed or stated answer that is one option's text is that option (method
    ``option-text``): ``\\boxed{200}`` with option C = 200 is C, as paper 1's release reads it.

    Raises
    ------
    ValueError
        ``gold`` is not one of the options.

    Examples
    --------
    >>> grade_choice("So the answer is (A) and (B).", "B", 4), grade_choice("A. 3\\nB. 4\\nC. 5", "A", 3)
    ((None, None), (None, None))
    >>> grade_choice("ANSWER: b", "B", 4), grade_choice("The answer is for sure D, it can't be A or B", "D", 4)
    (('B', 'phrase'), ('D', 'phrase'))
    """
    letters = tuple(CHOICES[:options] if options else CHOICES)
    if gold not in letters:
        raise ValueError(f"gold answer {gold!r} is not one of the options {letters[0]}-{letters[-1]}")
    plain = clean(text)  # \text{C}, \textbf{(B)}, $B$ and markdown read through
    candidate, method = extract_final(text)
    letter, found_by = None, method
    if method in ("boxed", "delimiter"):
        m = _LEADING_LETTER_RE.match(clean(candidate))
        letter = (m.group(1) or m.group(2)) if m else None
        if letter not in letters and (letter := _option_of(candidate, texts)) is not None:
            return letter, "option-text"
    if letter not in letters:
        lines = plain.rstrip().rsplit("\n", 1)
        start = len(plain.rstrip()) - len(lines[-1])
        # by the letter's place, latest last; a phrase's letter that also closes the line stays a phrase
        closing = _CLOSING_LETTER_RE.search(lines[-1])
        hits = [(start + closing.start(1), closing.group(1), "last-line")] if closing else []
        hits += [(m.start(1), _phrase_letter(plain, m, letters), "phrase") for m in _PHRASE_LETTER_RE.finditer(plain)]
        stated = _CLOSING_STATED_RE.search(lines[-1])
        if stated and not any(h[0] >= start for h in hits):  # "I think it's B" closing a line no phrase anchors
            hits.append((start + stated.start(1), stated.group(1), "last-line"))
        if not any(h[0] >= start for h in hits):
            hits += [(start + m.start(1), m.group(1), "last-line") for m in _LAST_LINE_STATED_RE.finditer(lines[-1])]
        hits += [(m.start(1), m.group(1).upper(), "phrase") for m in _LOWER_LETTER_RE.finditer(plain)]
        hits = sorted((h for h in hits if h[1] in letters), key=lambda h: (h[0], h[2] == "phrase"))
        if hits and _joined(plain, hits[-1][0]):
            return None, None  # "the answer is (A) and (B)": two options named
        letter, method = hits[-1][1:] if hits else (None, None)
    if letter is None and found_by == "phrase" and (letter := _option_of(candidate, texts)) is not None:
        return letter, "option-text"  # "The answer is 200." with option C = 200
    if letter is None and (m := _LEADING_LETTER_RE.match(plain)) and (m.group(1) or m.group(2)) in letters \
            and not _lists_options(plain):
        letter, method = m.group(1) or m.group(2), "leading"
    return letter, method if letter else None


_YES, _NO = {"yes", "true"}, {"no", "false"}
_YESNO_WORD = r"(?:yes|no|true|false)\b"
# a yes/no joined to another: "yes and no", "Yes/No", "yes or no", "no, yes" ("No, no!" is no)
_JOINED_RE = re.compile(rf"\W*({_YESNO_WORD})\s*(?:,|/|&|\band\b|\bor\b)\s*({_YESNO_WORD})", re.IGNORECASE)
_FIRST_WORD_RE = re.compile(r"\W*([A-Za-z]+)")
_NEGATED_RE = re.compile(rf"\W*not\s+({_YESNO_WORD})", re.IGNORECASE)  # "the answer is not yes" is no


def grade_yesno(text: str) -> tuple[bool | None, str | None]:
    """Whether ``text`` answers yes (``True``), no (``False``) or neither (``None``), and where."""
    candidate, method = extract_final(text)
    if candidate is None and (m := re.match(rf"\s*[*_]*(?={_YESNO_WORD})", text, re.IGNORECASE)):
        candidate, method = text[m.end():], "leading"
    if candidate is None:
        return None, None
    said = clean(candidate)
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
        return None, None
    return says_yes, method
