"""Grading functions for the run engine's tests: module-level, so the grading process imports them."""

from __future__ import annotations

import time

from kstp.inference.backend import Completion


def same_text(completion: Completion, gold: str) -> dict:
    """Correct when the reply is ``gold`` exactly."""
    return {"verdict": "correct" if completion.text == gold else "wrong answer", "correct": completion.text == gold}


def stall_on(completion: Completion, gold: str, bad: str) -> dict:
    """As :func:`same_text`, but a reply ``bad`` never finishes in Python (a sleep) or in C (a power tower)."""
    if completion.text == bad:
        time.sleep(3600) if bad == "sleep" else pow(10, 10**12)
    return same_text(completion, gold)


def fails_on(completion: Completion, gold: str) -> dict:
    """As :func:`same_text`, but raises on a reply that is not ``gold``."""
    if completion.text != gold:
        raise ValueError(f"cannot read {completion.text!r}")
    return same_text(completion, gold)


def exits_on(completion: Completion, gold: str) -> dict:
    """As :func:`same_text`, but the grading process dies on a reply that is not ``gold``."""
    if completion.text != gold:
        import os

        os._exit(3)
    return same_text(completion, gold)
