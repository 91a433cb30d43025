"""Paper 2's prompts: the four conditions, the presentations of a catalogue and the answer schema.

- **Conditions.** P0: descriptions and the mastered set only. P1: the model first
  returns the direct prerequisite pairs it infers, then recommends. P2: the direct
  (cover) relations are supplied, with the statement that prerequisites are
  transitive. P3: every admissible state is supplied with the one-task extension
  rule (all states of the space, also when the coverage samples the states asked
  about). The fringe itself never appears in a prompt.
- **Presentation.** Tasks appear under temporary 1-based positions, never their ids.
  Per catalogue, ``orders`` permutations are derived from SHA-256 seeds
  (:func:`presentation`) and reused across states, conditions and models; mastered
  sets, supplied pairs and states, and answers all pass through the same
  permutation and back.
- **Answers** are JSON (:func:`answer_schema`), requested through the backend's
  structured output and always re-validated
  (:func:`kstp.evaluators.nextstep.parsing.parse_answer`).

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2-§5.
"""

from __future__ import annotations

import hashlib
import json
import math

from kstp.errors import ConfigError
from kstp.inference.backend import Message
from kstp.loaders.catalogues import Catalogue

__all__ = ["CONDITIONS", "presentation", "build_prompt", "answer_schema"]

CONDITIONS = ("P0", "P1", "P2", "P3")

SYSTEM_PROMPT = (
    "You advise a learner on what to study next. You see a numbered list of learning tasks and the tasks the "
    "learner has already mastered. Some tasks build on others: a task can be learned only once every task it "
    "depends on has been mastered. Reply with one JSON object and nothing else.")
_TASKS = "Tasks, numbered 1 to {n}:\n{tasks}\n\nTasks the learner has mastered: {mastered}."
_GOAL = ("Recommend every task the learner is ready to learn next: each task not yet mastered whose prerequisites "
         "are all mastered. Recommend all such tasks and no other.")
_CONDITION_TEXT = {
    "P0": "Judge from the task descriptions alone which tasks depend on which.",
    "P1": ("First work out which tasks are direct prerequisites of which and list each such pair [a, b] "
           "(task a must be mastered right before task b can be learned) under \"prerequisitePairs\". Then use "
           "those pairs to choose the recommendations."),
    "P2": ("The direct prerequisite relations are the pairs [a, b] below: task a must be mastered before task b. "
           "Prerequisites are transitive: if a comes before b and b before c, then a also comes before c.\n"
           "Pairs: {pairs}"),
    "P3": ("These are all admissible knowledge states, the sets of tasks a learner can have mastered, each "
           "respecting every prerequisite:\n{states}\nA task can be learned next exactly when adding that one task "
           "to the mastered set gives another admissible state."),
}
_FORMAT = ("Answer with JSON of the form {example}. Give each recommended task by its number with a short "
           "justification. If no task can be learned next, give an empty list and say why in "
           "\"noRecommendationReason\"; otherwise \"noRecommendationReason\" is null.")
_EXAMPLE = '{"recommendations": [{"position": 2, "justification": "..."}], "noRecommendationReason": null}'
_EXAMPLE_P1 = ('{"prerequisitePairs": [[1, 2]], "recommendations": [{"position": 2, "justification": "..."}], '
               '"noRecommendationReason": null}')
#: Hash of every template, stored on the Run so a wording change is a new configuration.
TEMPLATE_HASH = hashlib.sha256(json.dumps([SYSTEM_PROMPT, _TASKS, _GOAL, _CONDITION_TEXT, _FORMAT, _EXAMPLE,
                                           _EXAMPLE_P1], sort_keys=True).encode()).hexdigest()


def presentation(catalogue: Catalogue, order: int) -> tuple[str, ...]:
    """Task ids in presented order for presentation ``order`` (position k + 1 shows item k).

    The seed of ``order`` is ``SHA-256("<catalogue id>:<order>:<salt>")``; tasks are
    sorted by ``SHA-256(seed + task id)``. The salt starts at 0 and is raised until
    the permutation differs from those of the earlier orders (while that is
    possible), so two presentations of a catalogue always differ.

    Examples
    --------
    >>> from kstp.loaders.catalogues import make_catalogue
    >>> c = make_catalogue("toy", "Toy", [("a", "x"), ("b", "y"), ("c", "z")], [])
    >>> first, second = presentation(c, 0), presentation(c, 1)
    >>> sorted(first) == ["a", "b", "c"] and first != second
    True
    """
    earlier: list[tuple[str, ...]] = []
    distinct = math.factorial(len(catalogue.tasks))
    for k in range(order + 1):
        salt = 0
        while True:
            seed = hashlib.sha256(f"{catalogue.id}:{k}:{salt}".encode()).hexdigest()
            perm = tuple(sorted(catalogue.task_ids, key=lambda t, s=seed: hashlib.sha256((s + t).encode()).digest()))
            if perm not in earlier or len(earlier) >= distinct:
                break
            salt += 1
        earlier.append(perm)
    return earlier[order]


def _positions(order: tuple[str, ...], ids) -> list[int]:
    where = {t: k + 1 for k, t in enumerate(order)}
    return sorted(where[i] for i in ids)


def _listing(sets: list[list[int]]) -> str:
    return "; ".join("{" + ", ".join(map(str, s)) + "}" for s in sets)


def build_prompt(catalogue: Catalogue, state, condition: str, order: tuple[str, ...]) -> list[Message]:
    """The chat for one (state, condition, presentation); ids appear only as positions.

    Raises
    ------
    ConfigError
        On an unknown condition.
    """
    if condition not in CONDITIONS:
        raise ConfigError(f"unknown condition {condition!r}; use {', '.join(CONDITIONS)}")
    described = {t.id: t.description for t in catalogue.tasks}
    tasks = "\n".join(f"{k + 1}. {described[t]}" for k, t in enumerate(order))
    mastered = ", ".join(map(str, _positions(order, state))) or "none"
    extra = _CONDITION_TEXT[condition]
    if condition == "P2":
        pairs = sorted([_positions(order, [p])[0], _positions(order, [q])[0]] for p, q in catalogue.prerequisites)
        extra = extra.format(pairs=", ".join(f"[{a}, {b}]" for a, b in pairs) or "none (the tasks are independent)")
    elif condition == "P3":
        states = sorted((_positions(order, s) for s in catalogue.admissible_states()), key=lambda s: (len(s), s))
        extra = extra.format(states=_listing(states))
    example = _EXAMPLE_P1 if condition == "P1" else _EXAMPLE
    user = "\n\n".join([_TASKS.format(n=len(order), tasks=tasks, mastered=mastered), _GOAL, extra,
                        _FORMAT.format(example=example)])
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def answer_schema(tasks: int, condition: str) -> dict:
    """The JSON schema of an answer over ``tasks`` positions (P1 adds ``prerequisitePairs``).

    Passed to the backend as :attr:`Sampling.json_schema` and re-checked locally; what
    a schema cannot say (distinct positions, the reason exactly when the list is
    empty) is checked by :func:`kstp.evaluators.nextstep.parsing.parse_answer`.
    """
    position = {"type": "integer", "minimum": 1, "maximum": tasks}
    recommendation = {"type": "object", "properties": {"position": position,
                                                       "justification": {"type": "string", "minLength": 1}},
                      "required": ["position", "justification"], "additionalProperties": False}
    # At most one entry per task: a longer list must repeat a position (and the bound
    # lets a grammar end the list).
    properties = {"recommendations": {"type": "array", "items": recommendation, "maxItems": tasks},
                  "noRecommendationReason": {"type": ["string", "null"]}}
    if condition == "P1":
        pair = {"type": "array", "items": position, "minItems": 2, "maxItems": 2}
        properties = {"prerequisitePairs": {"type": "array", "items": pair, "maxItems": tasks * (tasks - 1) // 2},
                      **properties}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
