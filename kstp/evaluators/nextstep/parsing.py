"""Paper 2's answer validation: a completion becomes a valid, invalid or missing answer.

Answers are JSON (:func:`kstp.evaluators.nextstep.prompts.answer_schema`), requested
through the backend's structured output and always re-validated here
(:func:`parse_answer`). Malformed JSON, extra prose, schema violations, out-of-range or
duplicate positions, missing justifications, a no-recommendation reason that does not
match an empty list, refusals and truncation are *invalid* and score as incorrect; a
transport failure with no output is *technically missing*: retried, reported apart,
never scored.

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2-§5.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kstp.evaluators.nextstep.prompts import answer_schema
from kstp.inference.backend import TRANSPORT_ERROR, Completion
from kstp.inference.replies import tidy

if TYPE_CHECKING:
    import jsonschema

__all__ = ["INVALID_KINDS", "Answer", "parse_answer"]

#: Kinds of invalid answer, in the order they are checked.
INVALID_KINDS = ("refusal", "empty output", "truncated", "malformed JSON", "extra prose", "position out of range",
                 "missing justification", "invalid prerequisite pair", "schema violation", "duplicate position",
                 "no-recommendation reason mismatch")


@dataclass(frozen=True)
class Answer:
    """A parsed answer: ``validity`` is ``valid``, ``invalid`` (with ``kind``) or ``missing``.

    ``positions`` (recommended, in answer order) and ``pairs`` (P1) are set when valid.
    """

    validity: str
    kind: str | None = None
    positions: tuple[int, ...] | None = None
    pairs: tuple[tuple[int, int], ...] | None = None


_REFUSAL = re.compile(r"\b(I can(no|')t|I am unable|I'm unable|I won't|I'm sorry|as an AI)\b", re.IGNORECASE)


def _error_kind(error: jsonschema.ValidationError) -> str:
    path = [p for p in error.absolute_path if isinstance(p, str)]
    if error.validator in ("minimum", "maximum") and ("position" in path or "prerequisitePairs" in path):
        return "position out of range" if "position" in path else "invalid prerequisite pair"
    if error.validator == "maxItems" and path == ["recommendations"]:
        return "duplicate position"  # more entries than tasks
    if "justification" in path or (error.validator == "required" and "'justification'" in error.message):
        return "missing justification"
    if "prerequisitePairs" in path:
        return "invalid prerequisite pair"
    return "schema violation"


def parse_answer(completion: Completion, tasks: int, condition: str) -> Answer:
    """Validate one completion against :func:`answer_schema` and the rules it cannot state.

    Examples
    --------
    >>> ok = Completion(0, 1, text='{"recommendations": [{"position": 2, "justification": "ready"}], '
    ...                 '"noRecommendationReason": null}', finish_reason="stop")
    >>> parse_answer(ok, 3, "P0")
    Answer(validity='valid', kind=None, positions=(2,), pairs=())
    >>> parse_answer(Completion(0, 1, error="transport: timeout"), 3, "P0").validity
    'missing'
    >>> parse_answer(Completion(0, 1, text="Sure! " + ok.text, finish_reason="stop"), 3, "P0").kind
    'extra prose'
    """
    import jsonschema
    completion = tidy(completion)  # a reasoning trace written before the JSON is no part of it
    text = completion.text
    if completion.finish_reason == "content_filter":
        return Answer("invalid", "refusal")
    if text is None or not text.strip():
        if (completion.error or "").startswith(TRANSPORT_ERROR):
            return Answer("missing", completion.error)
        if (completion.error or "").startswith("refused"):
            return Answer("invalid", "refusal")
        return Answer("invalid", "empty output")
    if completion.finish_reason == "length":
        return Answer("invalid", "truncated")
    stripped = text.strip()
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        start = stripped.find("{")
        try:
            json.JSONDecoder().raw_decode(stripped[start:])
            return Answer("invalid", "extra prose" if start >= 0 else "malformed JSON")
        except json.JSONDecodeError:
            return Answer("invalid", "refusal" if _REFUSAL.search(stripped) else "malformed JSON")
    errors = list(jsonschema.Draft202012Validator(answer_schema(tasks, condition)).iter_errors(data))
    if errors:
        found = {_error_kind(e) for e in errors}
        return Answer("invalid", next(k for k in INVALID_KINDS if k in found))
    items = data["recommendations"]
    if any(not item["justification"].strip() for item in items):
        return Answer("invalid", "missing justification")
    positions = tuple(item["position"] for item in items)
    if len(set(positions)) < len(positions):
        return Answer("invalid", "duplicate position")
    pairs = tuple(tuple(p) for p in data.get("prerequisitePairs", []))
    if any(a == b for a, b in pairs):
        return Answer("invalid", "invalid prerequisite pair")
    reason = data["noRecommendationReason"]
    if (not positions) != (isinstance(reason, str) and bool(reason.strip())):
        return Answer("invalid", "no-recommendation reason mismatch")
    return Answer("valid", None, positions, pairs)
