"""Running RQEval (paper 3, §3.2, §3.4): ask a model for every item of a dataset, store
and grade its completions, judge its traces, and write the scores back.

:func:`evaluate` asks each item's question K times (sample 0 is the primary answer) and
each of up to P perturbations once, under a prompt style of
:mod:`kstp.evaluators.rqeval.prompts`, through the run engine
(:func:`~kstp.inference.runs.generate_and_store`: a killed run resumes, having lost at
most one store group). An NLI backend then labels the consecutive steps of
each primary trace (LS) and a BERTScore model compares the K traces of each item (SS).

Scores are written back: per Response (``extracted``, ``tokensOut``, and on primary
Responses ``ls``, ``stepPairs``, ``contradictions``, ``nliBackend`` and the item's
``ss``), per Run (``cq`` ... ``ss``, ``nliBackend``, ``similarityModel``,
``nliInvalid``) and per (model, dataset) as ``(:Learner)-[:SCORED_ON]->(:Dataset)``.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §3.2 (dimensions), §3.4 (prompt) (arXiv 2605.24661).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from kstp.errors import ConfigError
from kstp.evaluators.rqeval.dimensions import (
    GRADING,
    NAME,
    ROBUSTNESS,
    VERSION,
    _mean,
    grade_reply,
    split_steps,
    stability_trace,
)
from kstp.evaluators.rqeval.judges import notes
from kstp.evaluators.rqeval.prompts import PROMPTS, build_prompt, template_hash
from kstp.evaluators.rqeval.release_grading import RULE
from kstp.evaluators.rqeval.results import _text, item_frame, run_items, run_scores
from kstp.graph.store import GraphStore
from kstp.inference.backend import Backend, RejectedRequestError, Sampling
from kstp.inference.grading import GRADER_VERSION, option_count, option_texts
from kstp.inference.runs import (
    Generation,
    Grading,
    RunSpec,
    finish_run,
    generate_and_store,
    model_learner_id,
    open_run,
)
from kstp.inference.similarity import BertScore, NliBackend

__all__ = ["SAMPLING", "RqevalResult", "evaluate", "temperature_warning"]

#: §3.4's sampling: temperature 0.7 and 256 output tokens, no top-p (None is not sent: the provider's
#: default), as the release's gateway payload (models/asu_model.py) sends only these two.
SAMPLING = {"temperature": 0.7, "top_p": None, "max_tokens": 256}



def temperature_warning(sampling: Sampling) -> str | None:
    """The warning for a run whose K samples must coincide (temperature 0), else None."""
    if sampling.temperature == 0 and sampling.n > 1:
        return ("temperature 0: the K samples are identical, so CS and SS are trivially 1; "
                "use the paper's 0.7 for meaningful consistency and stability")
    return None


@dataclass
class RqevalResult:
    """Outcome of one (model, dataset) run."""

    run_id: str
    model: str
    dataset: str
    resumed: bool
    requested: int
    generated: int
    items: pd.DataFrame
    scores: dict[str, float]
    nli_backend: str
    nli_invalid: int
    similarity_model: str
    robustness: str = "paper"
    slots: int = 3
    grading: str = "release"
    pending: int = 0
    last_failure: str | None = None
    rates: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """The run's six dimensions, the standard errors of those that are means over items (``cqStderr``,
        ``lsStderr``, ``ssStderr``: sample sd over sqrt(items)), its judges with ``notes`` on those that are
        not the release's (:func:`~kstp.evaluators.rqeval.judges.notes`), and its counts and pace."""
        from kstp.inference.statistics import mean_stderr

        per_item = {"cq": self.items["correct"].astype(float), "ls": self.items["ls"].astype(float).dropna(),
                    "ss": self.items["ss"].astype(float).dropna()} if len(self.items) else {}
        return {"model": self.model, "dataset": self.dataset, "runId": self.run_id, "items": len(self.items),
                **self.scores, **{f"{d}Stderr": mean_stderr(v.to_numpy()) for d, v in per_item.items()},
                "nliBackend": self.nli_backend, "nliInvalid": self.nli_invalid,
                "similarityModel": self.similarity_model,
                "notes": notes([self.nli_backend], [self.similarity_model]), "robustness": self.robustness,
                "perturbationSlots": self.slots, "grading": self.grading, "resumed": self.resumed,
                "requested": self.requested, "generatedNow": self.generated, "pending": self.pending, **self.rates}


def _generate(store, backend, run_id, learner, requests, sampling, progress, window, rule) -> Generation:
    """Ask for every pending (prompt, sample) of ``requests`` and store and grade the completions by ``rule``
    (:data:`~kstp.evaluators.rqeval.dimensions.GRADING`; stored replies graded by the other rule are graded again).

    ``requests`` maps a question id to ``(messages, gold, answer type, sample indices, option count)``.
    """
    grading = Grading(grade_reply, {q: (r[1], r[2], r[4], rule) for q, r in requests.items()},
                      version=RULE if rule == "release" else GRADER_VERSION)
    return generate_and_store(store, backend, run_id, learner, {q: r[0] for q, r in requests.items()}, sampling,
                              grading, samples={q: r[3] for q, r in requests.items()}, progress=progress,
                              window=window)


def _score_coherence(store, responses: pd.DataFrame, originals: list[str], nli: NliBackend) -> int:
    """NLI over the consecutive steps of every primary trace not yet judged by ``nli``.

    A primary completion without text (a failure) has no pairs to judge and gets no
    stored LS; :func:`item_frame` scores it 1 (§3.2 keeps it in N). Returns the pairs
    the judge left without a label (counted as not contradicting).
    """
    primary = responses[(responses["sampleIndex"] == 0) & responses["questionId"].isin(originals)
                        & responses["text"].notna()]
    todo = primary[primary["nliBackend"].fillna("") != nli.name]
    pairs, owners = [], []
    for rid, text in zip(todo["responseId"], todo["text"], strict=True):
        steps = split_steps(text)
        for a, b in itertools.pairwise(steps):
            pairs.append((a, b))
            owners.append(rid)
    labels = nli.classify(pairs)
    per: dict[str, list[str]] = {rid: [] for rid in todo["responseId"]}
    for rid, label in zip(owners, labels, strict=True):
        per[rid].append(label)
    if per:
        store.write_nodes("Response", pd.DataFrame([
            {"id": rid, "ls": 1.0 - (sum(x == "contradiction" for x in ls) / len(ls) if ls else 0.0),
             "stepPairs": len(ls), "contradictions": sum(x == "contradiction" for x in ls), "nliBackend": nli.name}
            for rid, ls in per.items()]))
    return sum(label == "invalid" for label in labels)


def _score_stability(store, responses: pd.DataFrame, originals: list[str], similarity: BertScore, k: int) -> None:
    """Mean pairwise BERTScore F1 of the K traces of each item (full stops removed, as the release compares them),
    written on its primary Response."""
    pairs, owners = [], []
    for _, group in responses[responses["questionId"].isin(originals)].groupby("questionId"):
        texts = dict(zip(group["sampleIndex"], group["text"], strict=True))
        primary = group.loc[group["sampleIndex"] == 0, "responseId"]
        if primary.empty:
            continue
        for i, j in itertools.combinations(range(k), 2):
            pairs.append((stability_trace(_text(texts.get(i))), stability_trace(_text(texts.get(j)))))
            owners.append(primary.iloc[0])
    f1 = similarity.f1(pairs)
    per: dict[str, list[float]] = {}
    for rid, value in zip(owners, f1, strict=True):
        per.setdefault(rid, []).append(value)
    if per:
        store.write_nodes("Response", pd.DataFrame([{"id": rid, "ss": _mean(v)} for rid, v in per.items()]))


def evaluate(store: GraphStore, backend: Backend, dataset: str, sampling: Sampling, perturbations: int,
             nli: NliBackend, similarity: BertScore, limit: int | None = None, new_run: bool = False,
             progress: Callable[..., None] | None = None, window: int | None = None,
             prompt: str = "neutral", robustness: str = "paper", grading: str = "release") -> RqevalResult:
    """Run (or resume) RQEval of ``backend``'s model on ``dataset`` and write the scores back.

    Parameters
    ----------
    sampling : Sampling
        ``n`` = K generations per item (sample 0 primary); perturbations are asked
        once each with the same sampling (sample 0).
    perturbations : int
        P, the most perturbations asked per item (the first P stored variants).
    nli : NliBackend
        Labels consecutive steps for LS; its name is recorded with every LS.
    similarity : BertScore
        BERTScore model for SS.
    limit : int, optional
        Only the first ``limit`` items.
    new_run : bool
        Allow a configuration that differs from the latest run's.
    progress : callable, optional
        ``progress(done, total, note=...)`` as completions arrive (``note`` where it takes one).
    window : int, optional
        Requests in flight (default: the backend's ``window``).
    prompt : {"neutral", "bare", "structured"}
        Prompt style (:func:`build_prompt`; default the paper's neutral prompt).
    robustness : {"paper", "present"}
        RS's rule (:func:`~kstp.evaluators.rqeval.dimensions.robustness`): ``paper``
        divides by P = ``perturbations`` slots, an empty one a failure. A scoring choice,
        not the run's configuration: it is recorded on the Run, and a resumed run may
        change it.
    grading : {"release", "kstp"}
        How replies are graded (:func:`~kstp.evaluators.rqeval.dimensions.score_item`):
        the release's answer matching (the default) or kstp's grader. A scoring choice too:
        recorded on the Run (``gradingRule``); a resumed run with the other one grades the
        stored replies again and asks nothing new for them.

    Returns
    -------
    RqevalResult

    Raises
    ------
    UnknownIdError
        When the dataset has no question with text and a gold answer.
    ConfigChangedError
        When the configuration changed and ``new_run`` is false.
    ConfigError
        On negative ``perturbations`` or an unknown ``prompt``, ``robustness`` or ``grading``.
    """
    if robustness not in ROBUSTNESS:
        raise ConfigError(f"unknown robustness rule {robustness!r}; use {', '.join(ROBUSTNESS)}")
    if grading not in GRADING:
        raise ConfigError(f"unknown grading rule {grading!r}; use {', '.join(GRADING)}")
    if perturbations < 0:
        raise ConfigError(f"perturbations = {perturbations}; need P >= 0")
    if prompt not in PROMPTS:
        raise ConfigError(f"unknown prompt style {prompt!r}; use {', '.join(PROMPTS)}")
    if (message := temperature_warning(sampling)) is not None:
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    items = run_items(store, dataset, limit, perturbations)
    order = list(dict.fromkeys(items["questionId"]))
    options = {"perturbations": perturbations, "questions": order if limit is not None else "all", "prompt": prompt}
    spec = RunSpec.of(backend, NAME, VERSION, dataset, sampling, template_hash(prompt), options)
    run_id, resumed = open_run(store, spec, new_run)
    learner = model_learner_id(backend.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": backend.model}]))
    requests = {}
    for row in items.drop_duplicates("questionId").itertuples():
        requests[row.questionId] = (build_prompt(row.text, row.answerType, prompt), row.answer, row.answerType,
                                    list(range(sampling.n)), option_texts(row.text) or option_count(row.text))
    for row in items[items["variantId"].notna()].itertuples():
        requests[row.variantId] = (build_prompt(row.variantText, row.answerType, prompt), row.answer,
                                   row.answerType, [0],
                                   option_texts(row.variantText) or option_count(row.variantText))
    status, requested, generated = "interrupted", 0, 0
    generation = Generation(0, 0)
    try:
        generation = _generate(store, backend, run_id, learner, requests, sampling, progress, window, grading)
        requested, generated, status = generation.requested, generation.stored, generation.status
    except RejectedRequestError:
        status = "failed"
        raise
    finally:
        responses = store.frame("rqeval_responses", {"runId": run_id})
        primary = responses[(responses["sampleIndex"] == 0) & responses["questionId"].isin(order)
                            & responses["verdict"].notna()]  # graded ones
        store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame({
            "from_id": learner, "to_id": primary["questionId"],
            "correct": primary["correct"].fillna(False).astype(bool), "runId": run_id}))
        if status not in ("finished", "incomplete"):
            finish_run(store, run_id, status)
    invalid = _score_coherence(store, responses, order, nli)
    _score_stability(store, responses, order, similarity, sampling.n)
    frame = item_frame(items, store.frame("rqeval_responses", {"runId": run_id}), sampling.n, perturbations)
    scores = run_scores(frame, robustness)
    finish_run(store, run_id, status, requested=requested, completed=int(responses["error"].isna().sum()),
               failed=int(responses["error"].notna().sum()), correct=int(frame["correct"].sum()),
               accuracy=scores["cq"], robustnessRule=robustness, perturbationSlots=perturbations, gradingRule=grading,
               nliBackend=nli.name, similarityModel=similarity.name, nliInvalid=invalid,
               **scores, **generation.rates())
    store.write_relationships("SCORED_ON", "Learner", "Dataset", pd.DataFrame([{
        "from_id": learner, "to_id": dataset, "evaluator": NAME, "runId": run_id, "items": len(frame), **scores}]))
    return RqevalResult(run_id, backend.model, dataset, resumed, requested, generated, frame, scores, nli.name,
                        invalid, similarity.name, robustness, perturbations, grading,
                        generation.pending, generation.last_failure, generation.rates())
