"""The prompts of RQEval (paper 3, §3.4): the chat sent for a question, by prompt style.

- ``neutral`` (default) sends the minimal neutral system prompt of §3.4
  (:data:`NEUTRAL_SYSTEM_PROMPT`, which the paper gave its gateway-routed models) and
  the item's question, no format instruction.
- ``bare`` sends the question as the only message: §3.4's DeepSeek-V3 setting ("no
  system prompt required"), kstp's earlier ``neutral``.
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

__all__ = ["PROMPTS", "NEUTRAL_SYSTEM_PROMPT", "SYSTEM_PROMPT", "ANSWER_HINTS", "USER_TEMPLATE", "build_prompt",
           "template_hash"]

#: Paper 3, §3.4, verbatim: the "minimal neutral system prompt" sent to the gateway-routed models (the
#: release sends it too: models/asu_model.py, ``system_prompt``).
NEUTRAL_SYSTEM_PROMPT = "You are a helpful assistant."
SYSTEM_PROMPT = ("Solve the problem step by step. Write each reasoning step as one short sentence. "
                 "End with a last line of the form 'Final Answer: <answer>'.")
ANSWER_HINTS = {"number": "a number", "choice": "the option letter", "yesno": "yes or no",
                "text": "a short phrase", "expression": "an expression"}
USER_TEMPLATE = "{text}\n\nGive {hint} as the final answer."
#: Prompt styles: ``neutral`` (§3.4's system prompt, the default), ``bare`` (§3.4's DeepSeek-V3 setting, no
#: system prompt), ``structured`` (kstp's earlier prompt).
PROMPTS = ("neutral", "bare", "structured")


def template_hash(prompt: str = "neutral") -> str:
    """Hash of the templates of a prompt style, stored on the Run so a change is a new configuration."""
    parts = {"neutral": [NEUTRAL_SYSTEM_PROMPT], "bare": ["neutral"]}.get(
        prompt, [SYSTEM_PROMPT, USER_TEMPLATE, json.dumps(ANSWER_HINTS, sort_keys=True)])
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def build_prompt(text: str, answer_type: str | None, prompt: str = "neutral") -> list[Message]:
    """The chat for one question under a prompt style of :data:`PROMPTS`.

    ``neutral``: §3.4's system prompt, then the question. ``bare``: the question alone.
    ``structured``: reason in sentences and end with ``Final Answer: ...``, with an
    answer-type hint.

    Raises
    ------
    ConfigError
        On an unknown prompt style.

    >>> build_prompt("Is 9 prime?", "yesno")
    [{'role': 'system', 'content': 'You are a helpful assistant.'}, {'role': 'user', 'content': 'Is 9 prime?'}]
    >>> build_prompt("Is 9 prime?", "yesno", "bare")
    [{'role': 'user', 'content': 'Is 9 prime?'}]
    >>> build_prompt("Is 9 prime?", "yesno", "structured")[1]["content"]
    'Is 9 prime?\\n\\nGive yes or no as the final answer.'
    """
    if prompt not in PROMPTS:
        raise ConfigError(f"unknown prompt style {prompt!r}; use {', '.join(PROMPTS)}")
    if prompt == "bare":
        return [{"role": "user", "content": text}]
    if prompt == "neutral":
        return [{"role": "system", "content": NEUTRAL_SYSTEM_PROMPT}, {"role": "user", "content": text}]
    hint = ANSWER_HINTS.get(answer_type or "", "the answer")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_TEMPLATE.format(text=text, hint=hint)}]
