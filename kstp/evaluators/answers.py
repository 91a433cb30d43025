"""Paper 1, NB1: a model answers the same questions as the students.

Each question is put to the model with a chain-of-thought prompt in the paper's shape
(system: reason step by step, final answer in ``\\boxed{}``; user: the question, with
its options for multiple choice). Two prompt sets (``prompt``, part of the run's
template hash, so a run with the other set is a different run): ``kstp`` (default,
what earlier runs used: a system line of kstp's wording, the problem after
"Problem:") and ``paper``, Prompt 1 of Appendix A verbatim
(``prompts/paper1_evaluation.yaml``). Every completion is stored as a Response before it
is graded (:mod:`kstp.inference.grading`); the primary sample (index 0) of each
question becomes the model learner's ``ANSWERED {correct, runId}`` edge, so PSR
compares the model with the human learners on the same items. The model's failures
(an empty reply, a refusal it writes, truncated output, no answer found) are recorded
with their reason and count as incorrect: they never leave the denominator. A request
that got no reply (transport failures after retries) is no answer of the model: it is
not stored, the run stays incomplete and the next run asks it; a request the server
rejects as wrong stops the run (:mod:`kstp.inference.runs`). A reasoning model whose
content is empty is graded on its reasoning. Defaults follow the paper: temperature
0.6, top-p 0.95, seed 42.

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", §3.3 and Appendix A (arXiv 2609.05245).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pandas as pd

from kstp.errors import ConfigError
from kstp.evaluators.prompting import PromptTemplate
from kstp.evaluators.prompts import load as load_prompt
from kstp.graph.store import GraphStore
from kstp.graph.structures import answerable_questions
from kstp.inference.backend import (
    OVERFLOW,
    Backend,
    Completion,
    Message,
    RejectedRequestError,
    Sampling,
)
from kstp.inference.grading import GRADER_VERSION, Verdict, grade, option_count, option_texts
from kstp.inference.grading.traces import UNCLOSED
from kstp.inference.replies import TRACE_RULE, tidy
from kstp.inference.runs import (
    Generation,
    Grading,
    RunSpec,
    finish_run,
    generate_and_store,
    model_learner_id,
    open_run,
    run_truncation,
    verdict_properties,
)
from kstp.inference.statistics import ESTIMATORS, sample_statistics

__all__ = ["NAME", "VERSION", "HIGHER_IS_BETTER", "SYSTEM_PROMPT", "PROMPTS", "DEFAULT_PROMPT", "check_prompt",
           "template_hash", "template_of", "build_prompt", "score_item", "grade_reply", "aggregate",
           "AnswersResult", "evaluate"]

NAME = "answers"
VERSION = "1.0"
HIGHER_IS_BETTER = {"accuracy": True}
SYSTEM_PROMPT = ("You are a careful mathematics student. Work through the problem step by step, "
                 "then write only your final answer inside \\boxed{}.")
USER_TEMPLATE = "Problem:\n{text}"
_PAPER = load_prompt("paper1_evaluation")
#: The prompt sets by name: (system, user template); ``paper`` is Prompt 1 of paper 1.
PROMPTS = {"kstp": (SYSTEM_PROMPT, USER_TEMPLATE), "paper": (_PAPER["system"], _PAPER["user"])}
DEFAULT_PROMPT = "kstp"


def check_prompt(prompt: str) -> None:
    """Raise :class:`ConfigError` unless ``prompt`` names a set of :data:`PROMPTS`."""
    if prompt not in PROMPTS:
        raise ConfigError(f"unknown answer prompt set {prompt!r}; use one of {', '.join(PROMPTS)}")


def template_hash(prompt: str = DEFAULT_PROMPT) -> str:
    """Hash of a prompt set's texts, stored on the Run so a template change is a new configuration."""
    check_prompt(prompt)
    return hashlib.sha256("\x00".join(PROMPTS[prompt]).encode()).hexdigest()


def template_of(prompt: str | PromptTemplate = DEFAULT_PROMPT) -> PromptTemplate:
    """The template of a prompt set's name (its hash :func:`template_hash`'s), or ``prompt`` itself.

    Raises
    ------
    ConfigError
        On an unknown prompt set.

    Examples
    --------
    >>> template_of("kstp").hash() == template_hash("kstp")
    True
    """
    if isinstance(prompt, PromptTemplate):
        return prompt
    check_prompt(prompt)
    system, user = PROMPTS[prompt]
    return PromptTemplate(prompt, system, user, builtin_hash=template_hash(prompt))


def build_prompt(text: str, prompt: str = DEFAULT_PROMPT) -> list[Message]:
    """The chat for one question (options, if any, are part of the question text).

    Raises
    ------
    ConfigError
        On an unknown prompt set.

    Examples
    --------
    >>> build_prompt("2 + 3 = ?", "paper")[1]
    {'role': 'user', 'content': '2 + 3 = ?'}
    """
    check_prompt(prompt)
    system, user = PROMPTS[prompt]
    return [{"role": "system", "content": system}, {"role": "user", "content": user.format(text=text)}]


def score_item(completion: Completion, gold: str, options: int | list[str] | None = None) -> Verdict:
    """Grade one completion (``options``: the question's option texts or count, :func:`~kstp.inference.grading.grade`).

    A reasoning trace written in the content (``<think>`` ... ``</think>``) is split off
    first (:func:`~kstp.inference.replies.tidy`): the answer is read after it, and a trace
    that never closed is "no answer found" (cut at ``max_tokens``: "truncated (in the
    reasoning)"); the verdict's ``trace`` names the rule. A reply whose content is empty is
    graded on its reasoning (a reasoning model's thinking returned apart,
    :attr:`Completion.reasoning`), and the reason says so.
    A truncated completion (``finish_reason == "length"``: the reply never reached its
    final answer, so the last number in it is no answer) is incorrect, "truncated",
    whether or not any content came before the cut; a completion with neither content
    nor reasoning is incorrect with its ``error`` as the reason (else "empty output").

    Examples
    --------
    >>> score_item(Completion(0, 42, text="So \\boxed{12}", finish_reason="stop"), "12").correct
    True
    >>> score_item(Completion(0, 42, text="First, 3 + 4 = 7, then", finish_reason="length"), "7").reason
    'truncated'
    >>> score_item(Completion(0, 42, text=None, reasoning="3 * 4 = 12, so \\boxed{12}", finish_reason="stop"),
    ...            "12").reason
    'correct (graded on the reasoning: the content was empty)'
    """
    completion = tidy(completion)  # a reply stored before kstp split inline traces is split here
    content = (completion.text or "").strip()
    text = content or (completion.reasoning or "").strip()
    rule = completion.extra.get(TRACE_RULE)
    if (completion.error or "").startswith(_APART):  # filtered by the provider, a prompt over the window: ungraded
        return Verdict("none", None, None, False, completion.error, rule)
    if completion.finish_reason == "length":
        return Verdict("none", None, None, False, "truncated (in the reasoning)" if text and not content
                       else "truncated", rule)
    if rule is not None and rule.startswith(UNCLOSED):  # its thinking never closed: no answer, whatever it mentions
        return Verdict("none", None, None, False, "no answer found", rule)
    if not text:
        return Verdict("none", None, None, False, completion.error or "empty output")
    verdict = grade(text, gold, options=options)
    verdict = verdict if verdict.trace is not None or rule is None else replace(verdict, trace=rule)
    return verdict if content else replace(verdict, reason=f"{verdict.reason} (graded on the reasoning: "
                                                           "the content was empty)")


#: The failures counted apart (:func:`aggregate`): neither the model's answer nor its own failure.
_APART = ("filtered", OVERFLOW)


def grade_reply(completion: Completion, gold: str, options: int | list[str] | None = None) -> dict:
    """The Response properties of :func:`score_item`'s verdict: the grading function of a run."""
    return verdict_properties(score_item(completion, gold, options))


@dataclass
class AnswersResult:
    """Outcome of one evaluation run."""

    run_id: str
    resumed: bool
    requested: int
    generated: int
    responses: pd.DataFrame
    pending: int = 0
    last_failure: str | None = None
    rates: dict = field(default_factory=dict)
    dataset: str | None = None
    model: str | None = None
    tag: str | None = None
    shots: int = 0

    def summary(self) -> dict:
        """:func:`aggregate` of the questions asked now, the run id, ``pending`` (requests the next run asks),
        the pace of the completions asked now (:meth:`~kstp.inference.runs.Generation.rates`) and the
        ``estimators`` of its standard errors, pass@k and majority vote
        (:data:`~kstp.inference.statistics.ESTIMATORS`)."""
        figures = aggregate(self.responses)
        return {"model": self.model, "dataset": self.dataset, "tag": self.tag, "shots": self.shots} | figures \
            | {"runId": self.run_id, "resumed": self.resumed, "requested": self.requested,
               "generatedNow": self.generated, "pending": self.pending} | self.rates \
            | {"estimators": _estimators(figures)}


def _estimators(figures: dict) -> dict:
    """The :data:`~kstp.inference.statistics.ESTIMATORS` of the figures a summary holds."""
    k = figures.get("samplesPerQuestion", 0)
    named = ["accuracyStderr", "meanSampleAccuracyStderr", *(["passAtK", "majorityAtK"] if k >= 2 else [])]
    return {name: ESTIMATORS[name] for name in named}


def _stored_figures(store: GraphStore, run_id: str, figures: dict, sampling: Sampling) -> str:
    """The run's figures as its log has them, for the Run node (``figures``, JSON): :func:`aggregate`'s (pass@k,
    maj@k and their standard errors included), their ``estimators`` and the ``truncation`` of its replies."""
    kept = {k: _finite(v) if isinstance(v, float) else v for k, v in figures.items()}
    return json.dumps({**kept, "estimators": _estimators(figures),
                       "truncation": run_truncation(store, run_id, sampling.max_tokens, sampling.context)},
                      sort_keys=True)


def _finite(value: float | None) -> float | None:
    """A figure for the Run node: None where it is missing or NaN (one question has no standard error)."""
    return None if value is None or value != value else value


def aggregate(responses: pd.DataFrame) -> dict:
    """Accuracy of the primary samples with its standard error, pass@k, majority vote, failure counts.

    Every stored completion is in the denominator; its failures (``failed``: an error
    such as an empty reply) count as incorrect. The figures and their estimators are
    :func:`~kstp.inference.statistics.sample_statistics`'.

    Parameters
    ----------
    responses : pandas.DataFrame
        One row per sample: ``questionId, sampleIndex, correct, extracted, verdict, error``.

    Returns
    -------
    dict
        ``questions, samples, accuracy, accuracyStderr, meanSampleAccuracy,
        meanSampleAccuracyStderr, samplesPerQuestion``, with K >= 2 samples per question
        ``passAt1 .. passAtK`` and ``majorityAtK`` each with its ``...Stderr``, then
        ``failed, noAnswer, truncated`` (``truncated``: replies cut at ``max_tokens``, in
        the content or in the reasoning).

    Examples
    --------
    >>> replies = pd.DataFrame({"questionId": ["q1", "q1", "q2", "q2"], "sampleIndex": [0, 1, 0, 1],
    ...                         "correct": [True, True, False, True], "extracted": ["5", "5", "4", "3"],
    ...                         "verdict": ["correct", "correct", "wrong answer", "correct"], "error": None})
    >>> figures = aggregate(replies)  # q2's vote is a tie, which goes to sample 0's wrong 4
    >>> figures["accuracy"], figures["passAt2"], figures["majorityAt2"], figures["failed"]
    (0.5, 1.0, 0.5, 0)
    """
    primary = responses[responses["sampleIndex"] == 0]
    verdicts = responses["verdict"].fillna("")
    # "truncated" and "truncated (in the reasoning)" (a reasoning model cut while thinking): both were cut
    return {"questions": int(primary["questionId"].nunique()), "samples": len(responses),
            **sample_statistics(responses),
            "failed": int(responses["error"].notna().sum()),
            "noAnswer": int(verdicts.eq("no answer found").sum()),
            "truncated": int(verdicts.isin(("truncated", "truncated (in the reasoning)")).sum()),
            "filtered": int(verdicts.str.startswith("filtered").sum()),
            "overflow": int(verdicts.str.startswith(OVERFLOW).sum())}


def evaluate(store: GraphStore, backend: Backend, dataset: str, sampling: Sampling, limit: int | None = None,
             new_run: bool = False, progress: Callable[..., None] | None = None,
             window: int | None = None, prompt: str | PromptTemplate = DEFAULT_PROMPT,
             tag: str | None = None) -> AnswersResult:
    """Run (or resume) the evaluation of ``backend``'s model on the questions of ``dataset``.

    Parameters
    ----------
    sampling : Sampling
        ``n`` samples per question; sample 0 is the primary one.
    limit : int, optional
        Only the first ``limit`` questions (by position) that have text and a gold
        answer: a run asked for more before resumes and reports only these.
    new_run : bool
        Allow a configuration that differs from the latest run's.
    progress : callable, optional
        ``progress(done, total, note=...)`` as completions arrive (``note`` where it takes one).
    window : int, optional
        Requests in flight (default: the backend's ``window``).
    prompt : str or PromptTemplate
        The prompt set, a key of :data:`PROMPTS` (``paper``: paper 1's Prompt 1), or a
        template (:func:`~kstp.evaluators.prompting.load_prompt_file`, with few-shot
        exemplars): its hash is part of the run's identity, its text recorded on the run.
    tag : str, optional
        A replicate's name (``--tag``, ``--repeat``): part of the run's identity and of
        every completion's cache key, so the same configuration under another tag is a
        run of its own whose requests are asked again; without a tag the run is the one
        it always was.

    Returns
    -------
    AnswersResult
        Its ``responses`` are those of the questions asked now; ``pending`` counts
        requests that got no reply (the run's status is then ``incomplete``).

    Raises
    ------
    ConfigError
        On an unknown prompt set.
    UnknownIdError
        When the dataset has no question with text and a gold answer.
    ConfigChangedError
        When the configuration changed and ``new_run`` is false.
    RejectedRequestError
        When the server rejects a request as wrong (the run's status is ``failed``).
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, after every completion that arrived is stored and graded; its
        ``result`` attribute is the :class:`AnswersResult` of what is stored (the run ``interrupted``).
    """
    template = template_of(prompt)
    questions = answerable_questions(store, dataset, limit)
    spec = RunSpec.of(backend, NAME, VERSION, dataset, sampling, template.hash(),
                      {"questions": questions["questionId"].tolist() if limit is not None else "all"},
                      tag=tag, prompt_template=template.record())
    run_id, resumed = open_run(store, spec, new_run)
    learner = model_learner_id(backend.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": backend.model}]))
    chats = {q: template.chat(t) for q, t in zip(questions["questionId"], questions["text"], strict=True)}
    gold = dict(zip(questions["questionId"], questions["answer"], strict=True))
    # the options' texts (a boxed option text is its letter), else their count: a letter past them is no answer
    choices = {q: option_texts(t) or option_count(t)
               for q, t in zip(questions["questionId"], questions["text"], strict=True)}

    grading = Grading(grade_reply, {q: (gold[q], choices[q]) for q in chats}, version=GRADER_VERSION)
    status, generation, interrupted = "interrupted", Generation(len(chats) * sampling.n, 0), None
    try:
        generation = generate_and_store(store, backend, run_id, learner, chats, sampling, grading,
                                        progress=progress, window=window)
        status = generation.status
    except RejectedRequestError:
        status = "failed"
        raise
    except KeyboardInterrupt as exc:  # raised again below, carrying what is stored
        interrupted = exc
    finally:
        responses = store.frame("run_responses", {"runId": run_id})
        primary = responses[(responses["sampleIndex"] == 0) & responses["verdict"].notna()]  # graded ones
        store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame({
            "from_id": learner, "to_id": primary["questionId"],
            "correct": primary["correct"].fillna(False).astype(bool), "runId": run_id}))
        figures = aggregate(responses) if len(responses) else {}
        finish_run(store, run_id, status, requested=generation.requested,
                   completed=int(responses["error"].isna().sum()), failed=int(responses["error"].notna().sum()),
                   pending=generation.pending, correct=int(primary["correct"].fillna(False).astype(bool).sum()),
                   accuracy=figures.get("accuracy"), accuracyStderr=_finite(figures.get("accuracyStderr")),
                   figures=_stored_figures(store, run_id, figures, sampling), **generation.rates())
    result = AnswersResult(run_id, resumed, generation.requested, generation.stored,
                           responses[responses["questionId"].isin(chats)], generation.pending,
                           generation.last_failure, generation.rates(), dataset, backend.model, tag,
                           len(template.shots))
    if interrupted is not None:
        interrupted.result = result  # the run as stored when Ctrl-C came: its log can still be written
        raise interrupted
    return result
