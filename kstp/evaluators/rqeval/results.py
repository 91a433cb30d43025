"""Paper 3, RQEval: six behavioural dimensions of reasoning quality, deployment scenarios,
discriminant validity.

The six dimensions, and the grading of a completion they compare, are in
:mod:`kstp.evaluators.rqeval.dimensions`.

The deployment scenarios, weight vectors over the dimensions, are in
:mod:`kstp.evaluators.rqeval.scenarios`.

- **Overall scores** (:func:`overall_scores`): ``pooled`` (default; §4 and the
  release) computes each dimension over the pooled items of a model's runs, the 975
  items of the paper, with ES's token range taken over the pooled items; ``equal``
  averages the per-dataset scores, each dataset weighing equally (kstp's earlier
  reading). Rankings and scenario scores follow from the overall scores, so a
  dataset's size moves them, as in the Edge-scenario inversions of Table 8.

Discriminant validity (Table 9) is in :mod:`kstp.evaluators.rqeval.validity`.

Scores are written back: per Response (``extracted``, ``tokensOut``, and on primary
Responses ``ls``, ``stepPairs``, ``contradictions``, ``nliBackend`` and the item's
``ss``), per Run (``cq`` ... ``ss``, ``nliBackend``, ``similarityModel``,
``nliInvalid``) and per (model, dataset) as ``(:Learner)-[:SCORED_ON]->(:Dataset)``.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §4 (overall scores) (arXiv 2605.24661).
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from kstp.errors import ConfigError, UnknownIdError
from kstp.evaluators.rqeval.dimensions import (
    DIMENSIONS,
    NAME,
    VERSION,
    _mean,
    canonical_answer,
    consistency,
    correctness,
    efficiency,
    robustness,
    score_item,
    split_steps,
)
from kstp.evaluators.rqeval.prompts import PROMPTS, build_prompt, template_hash
from kstp.graph.store import GraphStore
from kstp.inference.backend import Backend, Completion, Sampling
from kstp.inference.runs import RunSpec, finish_run, generate_and_store, model_learner_id, open_run, write_verdicts
from kstp.inference.similarity import BertScore, NliBackend

__all__ = ["OVERALL", "overall_scores", "temperature_warning", "RqevalResult", "evaluate",
           "item_frame", "run_scores", "run_items", "stored_runs", "stored_scores", "dataset_scores"]

#: How a model's overall dimensions are formed: ``pooled`` (§4, the release, the default) or ``equal``.
OVERALL = ("pooled", "equal")

#: Prompts per generate call: a killed run loses at most one such chunk of work.
CHUNK = 32


def temperature_warning(sampling: Sampling) -> str | None:
    """The warning for a run whose K samples must coincide (temperature 0), else None."""
    if sampling.temperature == 0 and sampling.n > 1:
        return ("temperature 0: the K samples are identical, so CS and SS are trivially 1; "
                "use the paper's 0.7 for meaningful consistency and stability")
    return None


# ---- the run ---------------------------------------------------------------------------

def _select(items: pd.DataFrame, perturbations: int) -> pd.DataFrame:
    """One row per (item, chosen variant): the first ``perturbations`` variants of each
    item; an item left without one keeps a single row with no variant."""
    rank = items.groupby("questionId").cumcount()
    keep = items["variantId"].notna() & (rank < perturbations)
    chosen = items[keep]
    bare = items[~items["questionId"].isin(chosen["questionId"])].drop_duplicates("questionId")
    bare = bare.assign(variantId=None, variantText=None)
    return pd.concat([chosen, bare]).sort_values(["position", "questionId"], kind="stable")


def run_items(store: GraphStore, dataset: str, limit: int | None | list[str], perturbations: int) -> pd.DataFrame:
    """The items of a run and their chosen variants (``rqeval_items`` rows).

    ``limit``: the first N items, or a list of question ids, or None for all.

    Raises
    ------
    UnknownIdError
        When the dataset has no question with text and a gold answer.
    """
    items = store.frame("rqeval_items", {"dataset": dataset})
    order = list(dict.fromkeys(items["questionId"]))
    order = order[:limit] if isinstance(limit, int) else [q for q in order if q in set(limit)] if limit else order
    if not order:
        raise UnknownIdError(f"dataset {dataset!r} has no question with text and a gold answer in the graph; "
                             "ingest it first (kstp evaluate rqeval loads the RQEval files itself)")
    return _select(items[items["questionId"].isin(order)], perturbations)


def _stored_run(store: GraphStore, run_id: str) -> tuple[str, str, pd.DataFrame]:
    """(model, dataset, :func:`item_frame`) of a stored RQEval run.

    Raises
    ------
    UnknownIdError
        When ``run_id`` is not an RQEval run in the graph.
    """
    parts = run_id.split(":")
    model, dataset = ":".join(parts[1:-2]), parts[-2] if len(parts) >= 4 else ""
    runs = store.frame("runs_of", {"evaluator": NAME, "model": model, "dataset": dataset}) \
        if parts[0] == NAME and len(parts) >= 4 else pd.DataFrame(columns=["runId"])
    runs = runs[runs["runId"] == run_id]
    if runs.empty:
        raise UnknownIdError(f"no rqeval run {run_id!r} in the graph; list runs with kstp query runs_of")
    config = json.loads(runs.iloc[0]["config"])
    questions = config["options"]["questions"]
    items = run_items(store, dataset, None if questions == "all" else questions, config["options"]["perturbations"])
    return model, dataset, item_frame(items, store.frame("rqeval_responses", {"runId": run_id}),
                                      config["sampling"]["n"])


def stored_runs(store: GraphStore, run_ids: Sequence[str] | None = None) -> dict[tuple[str, str], pd.DataFrame]:
    """The :func:`item_frame` of each run, keyed by (model, dataset), recomputed from the graph.

    ``run_ids``: RQEval run ids; default: the scored run of every (model, dataset)
    (``SCORED_ON``).

    Raises
    ------
    UnknownIdError
        When a run id is not an RQEval run in the graph.
    """
    if run_ids is None:
        run_ids = list(store.frame("rqeval_scores", {"evaluator": NAME})["runId"])
    frames = {}
    for run_id in run_ids:
        model, dataset, frame = _stored_run(store, run_id)
        frames[(model, dataset)] = frame.assign(runId=run_id)
    return frames


def stored_scores(store: GraphStore, run_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """The six dimensions recomputed from stored responses, one row per run (no inference).

    Parameters
    ----------
    run_ids : sequence of str, optional
        RQEval run ids; default: the scored run of every (model, dataset)
        (``SCORED_ON``).

    Returns
    -------
    pandas.DataFrame
        ``model``, ``dataset``, ``runId``, ``items``, ``cq`` ... ``ss``.

    Raises
    ------
    UnknownIdError
        When a run id is not an RQEval run in the graph.
    """
    return dataset_scores(stored_runs(store, run_ids))


def dataset_scores(frames: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """One row per run (Table 7 shape): ``model, dataset, runId, items, cq ... ss`` from
    :func:`stored_runs` (``runId`` None where a frame has no such column)."""
    rows = [{"model": model, "dataset": dataset,
             "runId": frame["runId"].iloc[0] if "runId" in frame and len(frame) else None,
             "items": len(frame), **run_scores(frame)} for (model, dataset), frame in frames.items()]
    return pd.DataFrame(rows, columns=["model", "dataset", "runId", "items", *DIMENSIONS])


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _true(value) -> bool:
    return value is not None and not pd.isna(value) and bool(value)


def item_frame(items: pd.DataFrame, responses: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per item, what the dimensions need, from stored items and responses.

    Parameters
    ----------
    items : pandas.DataFrame
        Rows of the ``rqeval_items`` query for the run's items.
    responses : pandas.DataFrame
        Rows of the ``rqeval_responses`` query of the run.
    k : int
        Generations per item.

    Returns
    -------
    pandas.DataFrame
        Indexed by question id: ``correct`` (primary), ``answers`` (K canonical answers,
        None where missing), ``perturbed`` (correctness of each answered perturbation),
        ``tokens`` (primary output tokens), ``ls`` (primary trace; NaN before NLI ran;
        1 for a failed primary, a trace without steps, which §3.2 keeps in N),
        ``ss`` (NaN before it was computed), ``invalid`` (NLI pairs without a label).
    """
    by_id = responses.set_index(["questionId", "sampleIndex"])
    out = []
    for qid, group in items.groupby("questionId", sort=False):
        def get(sample, column, q=qid):
            return by_id[column].get((q, sample)) if (q, sample) in by_id.index else None

        variants = [v for v in group["variantId"] if isinstance(v, str) and (v, 0) in by_id.index]
        answers = [canonical_answer(get(i, "extracted"), get(i, "verdict")) for i in range(k)]
        tokens = get(0, "tokensOut")
        out.append({"questionId": qid, "correct": _true(get(0, "correct")),
                    "answers": answers,
                    "perturbed": [_true(by_id.loc[(v, 0), "correct"]) for v in variants],
                    "tokens": float(tokens) if tokens is not None and not pd.isna(tokens) else None,
                    "ls": get(0, "ls") if _text(get(0, "text")).strip() else 1.0, "ss": get(0, "ss")})
    return pd.DataFrame(out).set_index("questionId")


def run_scores(frame: pd.DataFrame) -> dict[str, float]:
    """The six dimensions of a run from its :func:`item_frame`.

    LS averages the stored per-item LS (1 - contradiction share), the same as
    :func:`logical_coherence` on the labels.
    """
    return {"cq": correctness(frame["correct"]), "cs": consistency(list(frame["answers"])),
            "rs": robustness(frame["correct"], list(frame["perturbed"])),
            "ls": _mean(frame["ls"].astype(float).dropna()), "es": efficiency(frame["correct"], list(frame["tokens"])),
            "ss": _mean(frame["ss"].astype(float).dropna())}


def overall_scores(frames: Mapping[tuple[str, str], pd.DataFrame], how: str = "pooled") -> pd.DataFrame:
    """A model's overall dimensions from the item frames of its runs (one per dataset).

    Parameters
    ----------
    frames : mapping of (model, dataset) to pandas.DataFrame
        :func:`item_frame` of each run.
    how : {"pooled", "equal"}
        ``pooled`` (default; paper 3, §4, and the release): :func:`run_scores` over the
        concatenated items of the model's runs, so a dataset weighs by its items and
        ES's token range spans them all. ``equal``: the mean of the per-dataset
        scores, each dataset weighing equally.

    Returns
    -------
    pandas.DataFrame
        One row per model: ``model``, ``datasets``, ``items``, ``cq`` ... ``ss``.

    Raises
    ------
    ConfigError
        On an unknown ``how``.

    Examples
    --------
    >>> def frame(correct):
    ...     return pd.DataFrame({"correct": correct, "answers": [["1", "1"]] * len(correct),
    ...                          "perturbed": [[]] * len(correct), "tokens": [10.0] * len(correct),
    ...                          "ls": 1.0, "ss": 1.0})
    >>> runs = {("m", "x"): frame([True]), ("m", "y"): frame([False, False, False])}
    >>> overall_scores(runs)["cq"].item(), overall_scores(runs, "equal")["cq"].item()
    (0.25, 0.5)
    """
    if how not in OVERALL:
        raise ConfigError(f"unknown overall scoring {how!r}; use {', '.join(OVERALL)}")
    models: dict[str, list[tuple[str, pd.DataFrame]]] = {}
    for (model, dataset), frame in frames.items():
        models.setdefault(model, []).append((dataset, frame))
    rows = []
    for model, runs in models.items():
        if how == "pooled":
            scores = run_scores(pd.concat([f for _, f in runs]))
        else:
            per = pd.DataFrame([run_scores(f) for _, f in runs])
            scores = {d: float(per[d].mean()) for d in DIMENSIONS}
        rows.append({"model": model, "datasets": len(runs), "items": sum(len(f) for _, f in runs), **scores})
    return pd.DataFrame(rows, columns=["model", "datasets", "items", *DIMENSIONS])


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

    def summary(self) -> dict:
        return {"model": self.model, "dataset": self.dataset, "runId": self.run_id, "items": len(self.items),
                **self.scores, "nliBackend": self.nli_backend, "nliInvalid": self.nli_invalid,
                "similarityModel": self.similarity_model, "resumed": self.resumed, "requested": self.requested,
                "generatedNow": self.generated}


def _generate(store, backend, run_id, learner, requests, sampling, progress, chunk) -> tuple[int, int]:
    """Ask for every pending (prompt, sample) of ``requests`` and store and grade the completions.

    ``requests`` maps a question id to ``(messages, gold, answer type, sample indices)``;
    returns (completions requested, completions generated now).
    """
    def grade_chunk(rows: pd.DataFrame, completions: list[Completion]) -> None:
        verdicts = [score_item(c, requests[q][1], requests[q][2])
                    for q, c in zip(rows["question"], completions, strict=True)]
        write_verdicts(store, rows["id"], verdicts)

    return generate_and_store(store, backend, run_id, learner, {q: r[0] for q, r in requests.items()}, sampling,
                              grade_chunk, samples={q: r[3] for q, r in requests.items()}, chunk=chunk,
                              progress=progress)


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
    """Mean pairwise BERTScore F1 of the K traces of each item, written on its primary Response."""
    pairs, owners = [], []
    for _, group in responses[responses["questionId"].isin(originals)].groupby("questionId"):
        texts = dict(zip(group["sampleIndex"], group["text"], strict=True))
        primary = group.loc[group["sampleIndex"] == 0, "responseId"]
        if primary.empty:
            continue
        for i, j in itertools.combinations(range(k), 2):
            pairs.append((_text(texts.get(i)), _text(texts.get(j))))
            owners.append(primary.iloc[0])
    f1 = similarity.f1(pairs)
    per: dict[str, list[float]] = {}
    for rid, value in zip(owners, f1, strict=True):
        per.setdefault(rid, []).append(value)
    if per:
        store.write_nodes("Response", pd.DataFrame([{"id": rid, "ss": _mean(v)} for rid, v in per.items()]))


def evaluate(store: GraphStore, backend: Backend, dataset: str, sampling: Sampling, perturbations: int,
             nli: NliBackend, similarity: BertScore, limit: int | None = None, new_run: bool = False,
             progress: Callable[[int, int], None] | None = None, chunk: int = CHUNK,
             prompt: str = "neutral") -> RqevalResult:
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
        ``progress(done, total)`` as completions arrive.
    prompt : {"neutral", "structured"}
        Prompt style (:func:`build_prompt`; default the paper's neutral prompt).

    Returns
    -------
    RqevalResult

    Raises
    ------
    UnknownIdError
        When the dataset has no question with text and a gold answer.
    ConfigChangedError
        When the configuration changed and ``new_run`` is false.
    """
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
                                    list(range(sampling.n)))
    for row in items[items["variantId"].notna()].itertuples():
        requests[row.variantId] = (build_prompt(row.variantText, row.answerType, prompt), row.answer,
                                   row.answerType, [0])
    status, requested, generated = "interrupted", 0, 0
    try:
        requested, generated = _generate(store, backend, run_id, learner, requests, sampling, progress, chunk)
        status = "finished"
    finally:
        responses = store.frame("rqeval_responses", {"runId": run_id})
        primary = responses[(responses["sampleIndex"] == 0) & responses["questionId"].isin(order)]
        store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame({
            "from_id": learner, "to_id": primary["questionId"],
            "correct": primary["correct"].fillna(False).astype(bool), "runId": run_id}))
        if status != "finished":
            finish_run(store, run_id, status)
    invalid = _score_coherence(store, responses, order, nli)
    _score_stability(store, responses, order, similarity, sampling.n)
    frame = item_frame(items, store.frame("rqeval_responses", {"runId": run_id}), sampling.n)
    scores = run_scores(frame)
    finish_run(store, run_id, status, requested=requested, completed=int(responses["error"].isna().sum()),
               failed=int(responses["error"].notna().sum()), correct=int(frame["correct"].sum()),
               accuracy=scores["cq"], nliBackend=nli.name, similarityModel=similarity.name, nliInvalid=invalid,
               **scores)
    store.write_relationships("SCORED_ON", "Learner", "Dataset", pd.DataFrame([{
        "from_id": learner, "to_id": dataset, "evaluator": NAME, "runId": run_id, "items": len(frame), **scores}]))
    return RqevalResult(run_id, backend.model, dataset, resumed, requested, generated, frame, scores, nli.name,
                        invalid, similarity.name)
