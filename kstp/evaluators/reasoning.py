"""Paper 1, Appendix C: LLM-as-judge reasoning scores of a model's answers, beside PSR.

A judge model reads each primary answer (sample 0) of a model's latest ``answers`` run
on a dataset and scores the reasoning trace on three dimensions, each an integer 1-5
(Figure 6's scale), higher is better:

- **relevance**: the steps are grounded in the problem;
- **coherence**: each step follows logically from the steps before it;
- **accuracy**: the steps and the final answer are correct.

Relevance and coherence are the two dimensions of Do et al. (2025); paper 1 adds
accuracy and names Do et al. for all three, with GPT-4.1-mini as judge. Paper 1 prints
no judge prompt, so the instruction is kstp's (:data:`SYSTEM_PROMPT`, :data:`USER_TEMPLATE`,
part of the run's template hash); any backend can judge (``openai`` with
``gpt-4.1-mini`` is the paper's). Do et al. score each step from its preceding context
(CaSE); paper 1 scores traces, and so does kstp: one reply per trace.

The judge answers with a JSON object ``{"relevance": r, "coherence": c, "accuracy": a}``
(structured output where the backend has it); a reply that is not such an object with
integers in 1..5 is asked again (next seed) up to ``retries`` times, then recorded as
unscored. Every judge reply is stored as a Response of the judge's run before it is
read; the scores are written onto the judged Responses (``reasoningRelevance``,
``reasoningCoherence``, ``reasoningAccuracy``, ``reasoningRunId``). Unscored traces
leave the means' denominators and are counted.

Figure 6 (:func:`figure6`): per model, (a) the three mean scores, (b) micro PSR and the
PSR = 1 share of its question-level distribution.

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", Appendix C, Figure 6 (arXiv 2609.05245). Do, Hwang, Han, Oh, Yun 2025,
"What Defines Good Reasoning in LLMs? Dissecting Reasoning Steps with Multi-Aspect
Evaluation" (arXiv 2510.20603).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from kstp.errors import UnknownIdError
from kstp.graph.store import GraphStore
from kstp.inference.backend import Backend, Message, RejectedRequestError, Sampling
from kstp.inference.runs import RunSpec, finish_run, generate_and_store, model_learner_id, open_run

__all__ = ["NAME", "VERSION", "DIMENSIONS", "HIGHER_IS_BETTER", "SCALE", "SAMPLING", "SCORE_SCHEMA",
           "build_prompt", "score_item", "aggregate", "figure6", "ReasoningResult", "evaluate"]

NAME = "reasoning"
VERSION = "1.0"
DIMENSIONS = ("relevance", "coherence", "accuracy")
HIGHER_IS_BETTER = dict.fromkeys(DIMENSIONS, True)
#: The score range of every dimension (Figure 6's axis, "Reasoning Score (1-5)").
SCALE = (1, 5)
SCORE_SCHEMA = {"type": "object", "required": list(DIMENSIONS), "additionalProperties": False,
                "properties": {d: {"type": "integer", "minimum": SCALE[0], "maximum": SCALE[1]} for d in DIMENSIONS}}
#: A judge scores deterministically: temperature 0, a short answer.
SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=64, json_schema=SCORE_SCHEMA)
SYSTEM_PROMPT = ("You grade the reasoning of a solution to a mathematics problem. Score each aspect from 1 "
                 "(poor) to 5 (excellent): relevance: every step is grounded in the problem; coherence: every "
                 "step follows logically from the steps before it; accuracy: the steps and the final answer "
                 "are correct. Answer only with a JSON object "
                 '{"relevance": <1-5>, "coherence": <1-5>, "accuracy": <1-5>}.')
USER_TEMPLATE = "Problem:\n{problem}\n\nSolution:\n{solution}"
#: Hash of the judge prompt, stored on the Run so a template change is a new configuration.
TEMPLATE_HASH = hashlib.sha256((SYSTEM_PROMPT + "\x00" + USER_TEMPLATE).encode()).hexdigest()
_COLUMNS = {d: f"reasoning{d.capitalize()}" for d in DIMENSIONS}


def build_prompt(problem: str, solution: str) -> list[Message]:
    """The judge's chat for one reasoning trace.

    Examples
    --------
    >>> build_prompt("2 + 3?", "2 + 3 = 5, so \\\\boxed{5}")[1]["content"]
    'Problem:\\n2 + 3?\\n\\nSolution:\\n2 + 3 = 5, so \\\\boxed{5}'
    """
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_TEMPLATE.format(problem=problem, solution=solution)}]


def score_item(text: str | None) -> dict[str, int] | None:
    """Read one judge reply: the three scores, or None when it is not a valid score object.

    A Markdown code fence around the object is allowed; every dimension must be an
    integer in :data:`SCALE` (``true`` is no integer here).

    Examples
    --------
    >>> score_item('{"relevance": 5, "coherence": 4, "accuracy": 2}')
    {'relevance': 5, 'coherence': 4, 'accuracy': 2}
    >>> score_item('```json\\n{"relevance": 5, "coherence": 6, "accuracy": 2}\\n```') is None
    True
    """
    if text is None:
        return None
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    scores = {d: value.get(d) for d in DIMENSIONS}
    if not all(isinstance(s, int) and not isinstance(s, bool) and SCALE[0] <= s <= SCALE[1] for s in scores.values()):
        return None
    return scores


def aggregate(scores: pd.DataFrame) -> dict:
    """Mean score per dimension over the scored traces, with its standard error, and the counts.

    The standard error is the sample standard deviation (``ddof=1``) over the square root of
    the traces scored (:func:`~kstp.inference.statistics.mean_stderr`; one trace per question).

    Parameters
    ----------
    scores : pandas.DataFrame
        One row per judged trace, a column per dimension (NaN: unscored).

    Examples
    --------
    >>> figures = aggregate(pd.DataFrame({"relevance": [5, 4, None], "coherence": [3, 4, None],
    ...                                   "accuracy": [1, 2, None]}))
    >>> figures["traces"], figures["scored"], figures["relevance"], figures["relevanceStderr"]
    (3, 2, 4.5, 0.5)
    """
    from kstp.inference.statistics import mean_stderr

    scored = scores.dropna(subset=list(DIMENSIONS))
    out = {"traces": len(scores), "scored": len(scored)}
    for d in DIMENSIONS:
        out[d] = float(scored[d].mean()) if len(scored) else float("nan")
    return out | {f"{d}Stderr": mean_stderr(scored[d].to_numpy(float)) for d in DIMENSIONS}


def figure6(reasoning: Mapping[str, dict], psr_rows: Mapping[str, dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The data of Figure 6: (a) mean reasoning scores and (b) PSR figures per model.

    Parameters
    ----------
    reasoning : mapping of str to dict
        Per model, its :func:`aggregate` figures.
    psr_rows : mapping of str to dict
        Per model, its row of :func:`kstp.evaluators.psr.summarize` (``psrMicro``,
        ``psr 1.0``); a model missing here gets NaN.

    Returns
    -------
    scores : pandas.DataFrame
        Models (rows, in the given order) x :data:`DIMENSIONS`, in 1..5.
    psr : pandas.DataFrame
        The same models x ``psrMicro``, ``psr = 1.0 rate``, in [0, 1].

    Examples
    --------
    >>> s, p = figure6({"m": {"relevance": 4.5, "coherence": 4.0, "accuracy": 3.0}},
    ...                {"m": {"psrMicro": 0.8, "psr 1.0": 0.25}})
    >>> s.loc["m"].tolist(), p.loc["m"].tolist()
    ([4.5, 4.0, 3.0], [0.8, 0.25])
    """
    models = list(reasoning)
    scores = pd.DataFrame([[reasoning[m][d] for d in DIMENSIONS] for m in models], index=models,
                          columns=list(DIMENSIONS), dtype=float)
    psr = pd.DataFrame([[psr_rows.get(m, {}).get("psrMicro"), psr_rows.get(m, {}).get("psr 1.0")] for m in models],
                       index=models, columns=["psrMicro", "psr = 1.0 rate"], dtype=float)
    return scores, psr


@dataclass
class ReasoningResult:
    """Outcome of one judge run: the judged traces with their scores."""

    run_id: str
    resumed: bool
    model: str
    answers_run: str
    generated: int
    traces: pd.DataFrame
    pending: int = 0
    last_failure: str | None = None

    def summary(self) -> dict:
        return {"runId": self.run_id, "resumed": self.resumed, "model": self.model, "answersRun": self.answers_run,
                "generatedNow": self.generated, "pending": self.pending, **aggregate(self.traces)}


def evaluate(store: GraphStore, judge: Backend, dataset: str, model: str, sampling: Sampling = SAMPLING,
             retries: int = 2, new_run: bool = False,
             progress: Callable[[int, int], None] | None = None) -> ReasoningResult:
    """Judge the reasoning of ``model``'s latest ``answers`` run on ``dataset`` with ``judge``.

    Parameters
    ----------
    model : str
        The answering model, as its ``answers`` run names it.
    sampling : Sampling
        The judge's sampling (:data:`SAMPLING` by default); ``n`` is ignored: one reply
        per trace, then one per retry.
    retries : int
        Further attempts after a reply that is not a valid score object.

    Raises
    ------
    UnknownIdError
        When ``model`` has no ``answers`` run on ``dataset``, or the run has no answer text.
    ConfigChangedError
        When the configuration changed and ``new_run`` is false.
    """
    runs = store.frame("runs_of", {"evaluator": "answers", "model": model, "dataset": dataset})
    if runs.empty:
        raise UnknownIdError(f"model {model!r} has no answers run on dataset {dataset!r}; run kstp evaluate answers "
                             "first")
    answers_run = runs.iloc[0]["runId"]
    responses = store.frame("run_responses", {"runId": answers_run})
    traces = responses[(responses["sampleIndex"] == 0) & responses["text"].notna()].reset_index(drop=True)
    if traces.empty:
        raise UnknownIdError(f"answers run {answers_run} has no answer text to judge")
    texts = store.frame("dataset_questions", {"dataset": dataset}).set_index("questionId")["text"]
    spec = RunSpec.of(judge, NAME, VERSION, dataset, sampling, TEMPLATE_HASH,
                      {"judged": model, "answersRun": answers_run, "retries": retries})
    run_id, resumed = open_run(store, spec, new_run)
    learner = model_learner_id(judge.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": judge.model}]))
    judged = dict(zip(traces["questionId"], traces["responseId"], strict=True))
    chats = {q: build_prompt(texts.get(q) or "", t) for q, t in zip(traces["questionId"], traces["text"],
                                                                    strict=True)}
    found: dict[str, dict[str, int]] = {}
    status, done, pending, last_failure = "interrupted", 0, 0, None
    try:
        waiting = list(chats)
        for attempt in range(retries + 1):
            # attempt k is sample k (seed + k); a reply stored by an earlier run is linked, not asked again
            generation = generate_and_store(store, judge, run_id, learner, {q: chats[q] for q in waiting}, sampling,
                                            samples={q: [attempt] for q in waiting},
                                            progress=progress)
            done += generation.stored
            if generation.pending:  # no reply is no score: the next run asks again, from this attempt
                pending, last_failure = generation.pending, generation.last_failure
                break
            replies = store.frame("run_responses", {"runId": run_id})
            replies = replies[(replies["sampleIndex"] == attempt) & replies["questionId"].isin(waiting)]
            scored = {q: s for q, t in zip(replies["questionId"], replies["text"], strict=True)
                      if (s := score_item(t)) is not None}
            if scored:  # the scores go onto the judged Responses
                store.write_nodes("Response", pd.DataFrame(
                    [{"id": judged[q], **{_COLUMNS[d]: v[d] for d in DIMENSIONS}, "reasoningRunId": run_id}
                     for q, v in scored.items()]))
            found.update(scored)
            waiting = [q for q in waiting if q not in found]
            if not waiting:
                break
        status = "incomplete" if pending else "finished"
    except RejectedRequestError:
        status = "failed"
        raise
    finally:
        table = traces[["responseId", "questionId"]].copy()
        for d in DIMENSIONS:
            table[d] = [found.get(q, {}).get(d) for q in table["questionId"]]
        table = table.astype({d: float for d in DIMENSIONS})
        finish_run(store, run_id, status, requested=len(chats), completed=len(found),
                   failed=len(chats) - len(found) - pending, pending=pending)
    return ReasoningResult(run_id, resumed, model, answers_run, done, table, pending, last_failure)
