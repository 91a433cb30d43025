"""The six dimensions of RQEval (paper 3, §3.2), pure: CQ, CS, RS, LS, ES and SS from the
graded completions of a run, and the grading of one completion.

For every item of a dataset the model answers the question ``K`` times (sample 0 is the
primary answer) and each of up to ``P`` perturbations once; every completion is stored
as a Response before it is graded (:func:`score_item`) by the release's answer matching
(:mod:`~kstp.evaluators.rqeval.release_grading`, the default: the paper's Tables come from
it) or, with ``grading="kstp"``, kstp's type-aware answer checker
(:mod:`kstp.inference.grading`). The graded answer (``Response.extracted``) is the
canonical answer the dimensions compare. From them, for N items (all higher-is-better, each in [0, 1]):

- **CQ** correctness: ``CQ = (1/N) Σ_i c_i``, ``c_i`` = 1 when the primary answer is
  correct (a failed or truncated completion is incorrect).
- **CS** consistency: ``CS = (1/N) Σ_i (2 / (K(K-1))) Σ_{j<k} 1[a_ij = a_ik]``, the mean
  pairwise agreement of the K canonical answers; a missing answer agrees with nothing.
- **RS** robustness: ``RS = (1/|C|) Σ_{i∈C} (1/P) Σ_{p=1}^{P} c_ip`` over C, the items
  whose primary answer is correct, with P the run's fixed number of perturbation slots
  (3 in the paper); an empty or unanswered slot counts as a failure, so an item of C
  without perturbations scores 0 (rule ``paper``, §3.2 and the release's
  ``metrics/robustness.py``). Rule ``present`` (kstp's earlier reading) divides by the
  perturbations present, ``P_i``, and leaves items without any out of C. ``RS = 0``
  when C is empty.
- **LS** logical coherence: ``LS = 1 - (1/N) Σ_i (1/(n_i - 1)) Σ_j ψ(s_j, s_{j+1})``,
  s the sentences (steps) of the primary trace, ψ = 1 when the NLI backend labels the
  pair contradiction; a trace of fewer than two steps contributes 0 contradictions
  (scores 1). N counts every item: a failed primary (no text) is a trace without
  steps and scores 1, as in §3.2 and the release (it is not dropped).
- **ES** efficiency: ``ES = (1/N) Σ_i H(c_i, 1 - T_i)``, H the harmonic mean (0 when
  both are 0), ``T_i = (t_i - t_min)/(t_max - t_min)`` the primary answer's output
  token count min-max normalised within the run (``T_i = 0`` when all are equal; an
  item without a token count is a failure: c_i = 0, so its term is 0).
- **SS** stability: ``SS = (1/N) Σ_i (2/(K(K-1))) Σ_{j<k} F1(r_ij, r_ik)``, the mean
  pairwise BERTScore F1 of the K traces (an empty trace scores 0 against anything), each
  trace with its full stops removed as the release compares them (:func:`stability_trace`).

At temperature 0 the K samples coincide and CS and SS are trivially 1 (a warning says so).
The evaluator's :data:`NAME` and :data:`VERSION` live here, beside the metrics the version
stamps on every run.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §3.2 (arXiv 2605.24661).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import numpy as np

from kstp.errors import ConfigError
from kstp.evaluators.answers import score_item as grade_completion
from kstp.evaluators.rqeval import release_grading
from kstp.inference.backend import Completion
from kstp.inference.grading import Verdict, grade
from kstp.inference.replies import tidy
from kstp.inference.runs import verdict_properties

__all__ = ["NAME", "VERSION", "DIMENSIONS", "HIGHER_IS_BETTER", "ROBUSTNESS", "SLOTS", "GRADING", "score_item",
           "canonical_answer", "split_steps", "stability_trace",
           "correctness", "consistency", "robustness", "logical_coherence", "efficiency", "stability"]

NAME = "rqeval"
VERSION = "1.1"
DIMENSIONS = ("cq", "cs", "rs", "ls", "es", "ss")
HIGHER_IS_BETTER = dict.fromkeys(DIMENSIONS, True)
#: How RS counts perturbations: ``paper`` (a fixed P slots, an empty one a failure; the default) or
#: ``present`` (over the perturbations present, items without one dropped).
ROBUSTNESS = ("paper", "present")
#: The paper's P, perturbation slots per item (§3.2, Table 2).
SLOTS = 3
#: How a reply is graded: ``release`` (the authors' ``metrics/answer_extraction.py``, the default:
#: :mod:`~kstp.evaluators.rqeval.release_grading`) or ``kstp`` (kstp's general grader).
GRADING = ("release", "kstp")
_STEP_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")


def score_item(completion: Completion, gold: str, answer_type: str | None = None,
               options: int | list[str] | None = None, grading: str = "release") -> Verdict:
    """Grade one completion by the answer type (and option count) of its question.

    ``grading`` ``release`` (the default) grades as the authors' release does
    (:mod:`~kstp.evaluators.rqeval.release_grading`: the gold's kind decides, a reply cut
    at the token cap is graded like any other, the verdict's ``method`` is ``release``);
    a completion without text is incorrect with its reason. ``kstp``: failures (no text,
    an error, a truncated reply) are incorrect with their reason, as in
    :func:`kstp.evaluators.answers.score_item`, and the rest get kstp's type-aware grade.

    >>> reply = Completion(0, 1, text="5 + 20 = 25.\\n#### 25", finish_reason="stop")
    >>> score_item(reply, "5", "number").correct, score_item(reply, "5", "number", grading="kstp").correct
    (False, False)
    >>> cut = Completion(0, 1, text="Yes. Hamsters are prey animals, so", finish_reason="length")
    >>> score_item(cut, "yes", "yesno").correct, score_item(cut, "yes", "yesno", grading="kstp").reason
    (True, 'truncated')
    """
    if grading == "kstp":
        if completion.text is None or not completion.text.strip() or completion.finish_reason == "length":
            return grade_completion(completion, gold)
        return grade(completion.text, gold, answer_type or "auto", options=options)
    text = tidy(completion).text
    if not (text or "").strip():
        return Verdict("none", None, None, False, completion.error or "empty output")
    correct, said = release_grading.matches(text, gold)
    kind = release_grading.gold_kind(gold)
    if said is None:
        return Verdict(kind, None, None, False, "no answer found")
    return Verdict(kind, said, "release", correct, "correct" if correct else "wrong answer")


def grade_reply(completion: Completion, gold: str, answer_type: str | None = None,
                options: int | list[str] | None = None, grading: str = "release") -> dict:
    """The Response properties of :func:`score_item`'s verdict: the grading function of a run."""
    return verdict_properties(score_item(completion, gold, answer_type, options, grading))


def canonical_answer(extracted: str | None, reason: str | None) -> str | None:
    """The canonical answer of a graded completion: its extracted answer when it was
    graded as an answer (``correct`` or ``wrong answer``), else None (no answer found,
    an ambiguous yes/no, unparseable, a failure).

    >>> canonical_answer("yes or no", "no answer found") is None, canonical_answer("7/2", "wrong answer")
    (True, '7/2')
    """
    return extracted if isinstance(extracted, str) and reason in ("correct", "wrong answer") else None


def split_steps(trace: str | None) -> list[str]:
    """The reasoning steps of a trace: its sentences (split after . ! ? and at line breaks).

    >>> split_steps("First, 2 + 3 = 5. Then 5 x 1.5 = 7.5!\\nFinal Answer: 7.5")
    ['First, 2 + 3 = 5.', 'Then 5 x 1.5 = 7.5!', 'Final Answer: 7.5']
    """
    return [s.strip() for s in _STEP_RE.split(trace or "") if s and s.strip()]


def stability_trace(trace: str | None) -> str:
    """The trace SS compares, as the release builds it: its pieces between full stops, stripped and joined by
    spaces (every full stop gone, a decimal point too: the release's models split the response at ``"."`` into
    ``reasoning_steps`` and ``evaluation/evaluator.py`` joins them with ``" "``).

    >>> stability_trace("First, 2 + 3 = 5. Then 5 x 1.5 = 7.5.\\nFinal Answer: 7.5")
    'First, 2 + 3 = 5 Then 5 x 1 5 = 7 5 Final Answer: 7 5'
    """
    return " ".join(piece.strip() for piece in (trace or "").split(".") if piece.strip())


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def correctness(correct: Sequence[bool]) -> float:
    """CQ: the share of items whose primary answer is correct (NaN for no items).

    >>> correctness([True, False, True, True])
    0.75
    """
    return _mean([float(bool(c)) for c in correct])


def _agreement(answers: Sequence[str | None]) -> float:
    pairs = list(itertools.combinations(answers, 2))
    if not pairs:
        return float("nan")
    return sum(a is not None and a == b for a, b in pairs) / len(pairs)


def consistency(answers: Sequence[Sequence[str | None]]) -> float:
    """CS: mean over items of the pairwise agreement of the K canonical answers.

    ``None`` (no answer) agrees with nothing; fewer than two answers give NaN.

    >>> consistency([["4", "4", "4"], ["4", "5", "4"], [None, None, "3"]])
    0.4444444444444444
    """
    return _mean([_agreement(a) for a in answers])


def robustness(primary_correct: Sequence[bool], perturbed_correct: Sequence[Sequence[bool]],
               slots: int | Sequence[int] = SLOTS, rule: str = "paper") -> float:
    """RS: over the correctly answered items, the mean share of perturbations answered correctly.

    Parameters
    ----------
    primary_correct : sequence of bool, length N
        Whether each item's primary answer is correct (C is the items where it is).
    perturbed_correct : sequence of sequences of bool, length N
        Per item, the correctness of each perturbation that was asked and answered.
    slots : int or sequence of int (length N)
        P, the perturbation slots of an item (the run's ``--p``); ``paper`` divides by it.
    rule : {"paper", "present"}
        ``paper``: ``(1/P) Σ_p c_ip``, a slot without an answered perturbation a failure.
        ``present``: the share over the perturbations present; items without one leave C.

    Returns
    -------
    float
        RS in [0, 1]; 0 when C is empty (the paper's convention), and under ``paper``
        for a run without slots (P = 0), as the release returns.

    Raises
    ------
    ConfigError
        On an unknown ``rule``.

    Examples
    --------
    Item 2 is wrong and leaves C; item 4 has no perturbation. Paper: (1/3 + 1/3 + 0)/3;
    present: (1/2 + 1/1)/2.

    >>> correct, perturbed = [True, False, True, True], [[True, False], [True, True, True], [True], []]
    >>> round(robustness(correct, perturbed), 4), robustness(correct, perturbed, rule="present")
    (0.2222, 0.75)
    >>> robustness([False], [[True]])
    0.0

    References
    ----------
    Senol, Agrawal, Liu 2026, §3.2, the RS equation with P = 3 (arXiv 2605.24661);
    senolali/RQEval ``metrics/robustness.py`` (fixed P, missing slots score 0).
    """
    if rule not in ROBUSTNESS:
        raise ConfigError(f"unknown robustness rule {rule!r}; use {', '.join(ROBUSTNESS)}")
    per_item = [slots] * len(primary_correct) if isinstance(slots, (int, np.integer)) else list(slots)
    if rule == "present":
        shares = [sum(map(bool, p)) / len(p) for c, p in zip(primary_correct, perturbed_correct, strict=True)
                  if c and len(p)]
    else:
        # only the first P answers count, as the release truncates to its fixed P; P = 0 scores 0 there too
        shares = [sum(map(bool, list(p)[:n])) / n if n > 0 else 0.0
                  for c, p, n in zip(primary_correct, perturbed_correct, per_item, strict=True) if c]
    return _mean(shares) if shares else 0.0


def logical_coherence(labels: Sequence[Sequence[str]]) -> float:
    """LS: 1 minus the mean over items of the share of consecutive step pairs labelled
    contradiction; an item without pairs (one step or none) has share 0.

    >>> logical_coherence([["entailment", "contradiction"], [], ["neutral", "neutral", "contradiction", "neutral"]])
    0.75
    """
    return 1.0 - _mean([sum(x == "contradiction" for x in item) / len(item) if item else 0.0 for item in labels])


def efficiency(correct: Sequence[bool], tokens: Sequence[float | None]) -> float:
    """ES: mean over items of the harmonic mean of c_i and 1 - T_i (T_i the min-max
    normalised token count; 0 when all counts are equal; 0/0 harmonic mean is 0).

    >>> efficiency([True, True, False], [10, 30, 20])  # T = 0, 1, 0.5 -> H = 1, 0, 0
    0.3333333333333333
    """
    known = [t for t in tokens if t is not None and not np.isnan(t)]
    low, high = (min(known), max(known)) if known else (0, 0)
    terms = []
    for c, t in zip(correct, tokens, strict=True):
        if t is None or np.isnan(t):
            terms.append(0.0)
            continue
        concise = 1.0 - ((t - low) / (high - low) if high > low else 0.0)
        c = float(bool(c))
        terms.append(2 * c * concise / (c + concise) if c + concise else 0.0)
    return _mean(terms)


def stability(f1: Sequence[Sequence[float]]) -> float:
    """SS: mean over items of the mean pairwise BERTScore F1 of the K traces.

    >>> round(stability([[0.9, 0.8, 0.7], [1.0]]), 12)
    0.9
    """
    return _mean([_mean(item) for item in f1])
