"""The prompts of RQEval (paper 3, §3.4): the chat sent for a question, by prompt style.

- ``neutral`` (default) sends the item's question as the only message, no system
  prompt and no format instruction: the neutral prompt of §3.4, which the release
  also sends.
- ``structured`` is kstp's earlier prompt (one sentence per step, a closing
  ``Final Answer:`` line, an answer-type hint).

A Run stores the hash of its style's templates (:func:`template_hash`), so changing a
template starts a new configuration rather than resuming an old one.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §3.4 (arXiv 2605.24661).
"""

from __future__ import annotations

import hashlib
import json

from kstp.errors import ConfigError
from kstp.inference.backend import Message

__all__ = ["PROMPTS", "SYSTEM_PROMPT", "ANSWER_HINTS", "USER_TEMPLATE", "build_prompt", "template_hash"]

SYSTEM_PROMPT = ("Solve the problem step by step. Write each reasoning step as one short sentence. "
                 "End with a last line of the form 'Final Answer: <answer>'.")
ANSWER_HINTS = {"number": "a number", "choice": "the option letter", "yesno": "yes or no",
                "text": "a short phrase", "expression": "an expression"}
USER_TEMPLATE = "{text}\n\nGive {hint} as the final answer."
#: Prompt styles: ``neutral`` (§3.4 and the release, the default), ``structured`` (kstp's earlier prompt).
PROMPTS = ("neutral", "structured")


def template_hash(prompt: str = "neutral") -> str:
    """Hash of the templates of a prompt style, stored on the Run so a change is a new configuration."""
    parts = ["neutral"] if prompt == "neutral" else [SYSTEM_PROMPT, USER_TEMPLATE,
                                                     json.dumps(ANSWER_HINTS, sort_keys=True)]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def build_prompt(text: str, answer_type: str | None, prompt: str = "neutral") -> list[Message]:
    """The chat for one question under a prompt style of :data:`PROMPTS`.

    ``neutral``: the question alone (§3.4; the release's prompt). ``structured``:
    reason in sentences and end with ``Final Answer: ...``, with an answer-type hint.

    Raises
    ------
    ConfigError
        On an unknown prompt style.

    >>> build_prompt("Is 9 prime?", "yesno")
    [{'role': 'user', 'content': 'Is 9 prime?'}]
    >>> build_prompt("Is 9 prime?", "yesno", "structured")[1]["content"]
    'Is 9 prime?\\n\\nGive yes or no as the final answer.'
    """
    if prompt not in PROMPTS:
        raise ConfigError(f"unknown prompt style {prompt!r}; use {', '.join(PROMPTS)}")
    if prompt == "neutral":
        return [{"role": "user", "content": text}]
    hint = ANSWER_HINTS.get(answer_type or "", "the answer")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_TEMPLATE.format(text=text, hint=hint)}]
