"""What servers say when a prompt is over their context window, read into numbers.

vLLM's 400 "maximum context length is 4096 tokens ... (4800 in the messages, ...)" and "The decoder
prompt (length 4800) is longer than the maximum model length of 4096", llama.cpp's "exceeds the
available context size" (with ``n_ctx`` and ``n_prompt_tokens`` in its body) and OpenAI's
``context_length_exceeded``. Used by :mod:`~kstp.inference.backends.openai_compat`: a prompt
alone over the window is that question's failure (``overflow: ...``), not the run's.
"""

from __future__ import annotations

import re

from kstp.inference.backend import OVERFLOW

__all__ = ["window_numbers", "overflow"]

_NUMBER = r"(\d[\d,]*)"
# (pattern, group of the window, group of the prompt's tokens) of the servers' words for a prompt over the window
_WINDOW_WORDS = (
    (re.compile(rf"maximum context length is {_NUMBER} tokens.*?(?:requested {_NUMBER} tokens \({_NUMBER} in the "
                rf"messages|(?:request|messages) (?:has|resulted in) {_NUMBER} (?:input )?tokens)", re.I | re.S),
     1, (3, 4)),
    (re.compile(rf"(?:decoder prompt \(length {_NUMBER}\)|prompt length of {_NUMBER}) is longer than the "
                rf"maximum model length of {_NUMBER}", re.I), 3, (1, 2)),
    (re.compile(r"exceeds the available context size|context_length_exceeded|maximum context length", re.I),
     None, ()),
)


def _count(text: str | None) -> int | None:
    return int(text.replace(",", "")) if text else None


def window_numbers(said: str, body) -> tuple[bool, int | None, int | None]:
    """Whether the server's words say the request is over its context window, and the window and the
    prompt's tokens where they say them (llama.cpp gives them as ``n_ctx`` and ``n_prompt_tokens``)."""
    inner = body.get("error", body) if isinstance(body, dict) else {}
    inner = inner if isinstance(inner, dict) else {}
    for pattern, window_group, prompt_groups in _WINDOW_WORDS:
        found = pattern.search(said) or (pattern.search(str(inner.get("code") or inner.get("type") or ""))
                                         if window_group is None else None)
        if found is not None:
            window = _count(found.group(window_group)) if window_group else _count(str(inner.get("n_ctx") or ""))
            prompt = next((_count(found.group(g)) for g in prompt_groups if found.group(g)), None) if prompt_groups \
                else _count(str(inner.get("n_prompt_tokens") or ""))
            return True, window, prompt
    return False, None, None


def overflow(said: str, body, cap: int | None) -> str | None:
    """The ``overflow: ...`` error of a question whose prompt alone is over the server's window, or None.

    A prompt that fits but leaves too little for the ``max_tokens`` sent (``cap``) is no
    overflow: the cap is the user's to change, and the run stops.

    >>> overflow("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
    ...           "(4800 in the messages, 200 in the completion).", {}, 200)
    "overflow: the prompt is too long for the server's window (4,800 prompt tokens, window 4,096 tokens)"
    >>> overflow("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
    ...           "(3000 in the messages, 2000 in the completion).", {}, 2000) is None
    True
    """
    over, window, prompt = window_numbers(said, body)
    if not over or (prompt is not None and window is not None and prompt < window) or \
            (prompt is None and cap is not None):
        return None
    numbers = ", ".join(part for part in (f"{prompt:,} prompt tokens" if prompt is not None else "",
                                          f"window {window:,} tokens" if window is not None else "") if part)
    return f"{OVERFLOW}: the prompt is too long for the server's window" + (f" ({numbers})" if numbers else "")
