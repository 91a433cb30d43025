"""Prompt templates reproduced from the papers, kept as data files (one per prompt).

Each ``<name>.yaml`` holds the texts of one prompt and its ``source`` (paper, appendix,
prompt number); the comment at its top says what is verbatim and what layout is kstp's.
The evaluators read them by name; a file's texts are part of the evaluator's template
hash, so a run with a paper prompt is a different run from one with kstp's own prompt.
:func:`choices_of` reads a multiple-choice question's options out of its text for the
prompts that lay them out on a line of their own (Prompt 3's ``Options`` and ``Answer
Choices``).

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", Appendix A, Prompts 1-3 (arXiv 2609.05245).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import yaml

from kstp.errors import ConfigError
from kstp.inference.grading.choices import split_options

__all__ = ["load", "choices_of"]


@cache
def load(name: str) -> dict[str, str]:
    """The texts of the prompt file ``<name>.yaml``, by key (``source``, ``system``, ``user`` ...).

    Raises
    ------
    ConfigError
        When no prompt file has that name.

    Examples
    --------
    >>> load("paper1_evaluation")["user"]
    '{text}'
    """
    path = resources.files(__name__) / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.name.removesuffix(".yaml") for p in resources.files(__name__).iterdir()
                       if p.name.endswith(".yaml"))
        raise ConfigError(f"no prompt file {name!r}; known: {', '.join(known)}")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


_OPTION = re.compile(r"^\s*\(?([A-J])[.):]\s+(.*)$")


def choices_of(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A question's text as its problem and its options ``(letter, text)``, read from its lettered option lines.

    What Prompt 3's option lines show (paper 1, Appendix A; the kstp text convention is
    :func:`kstp.loaders.items.option_lines`).

    A line that opens no option continues the one before. A text without option lines
    (an open question, or options written inline) is all problem.

    Examples
    --------
    >>> choices_of("Which is prime?\\nA. 4\\nB. 7")
    ('Which is prime?', [('A', '4'), ('B', '7')])
    >>> choices_of("What is 2 + 2?")
    ('What is 2 + 2?', [])
    """
    problem, block = split_options(text)
    options: list[tuple[str, str]] = []
    for line in block.splitlines():
        found = _OPTION.match(line)
        if found:
            options.append((found.group(1), found.group(2).strip()))
        elif options and line.strip():
            options[-1] = (options[-1][0], f"{options[-1][1]} {line.strip()}")
    return (problem, options) if options else (text, [])
