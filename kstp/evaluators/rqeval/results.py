"""RQEval's results read back from the graph (paper 3, §3.2, §4): the items of a run,
per-item frames of its stored responses, and from them the six dimensions of each run
(Table 7) and of each model (overall).

A run's :func:`item_frame` holds per item what the dimensions need: the primary
answer's correctness, the K canonical answers, the correctness of each perturbation,
the primary output tokens, and the LS and SS stored by the run. The scores follow from
the frames alone, so a report recomputes them from stored responses without inference
(:func:`stored_scores`).

A model's overall scores (:func:`overall_scores`, one of :data:`OVERALL`): ``pooled``
(default; §4 and the release) computes each dimension over the pooled items of a
model's runs, the 975 items of the paper, with ES's token range taken over the pooled
items; ``equal`` averages the per-dataset scores, each dataset weighing equally (kstp's
earlier reading). Rankings and scenario scores follow from the overall scores, so a
dataset's size moves them, as in the Edge-scenario inversions of Table 8.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §3.2 (dimensions), §4 and Tables 7-8 (scores per run and
overall) (arXiv 2605.24661).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pandas as pd

from kstp.errors import ConfigError, UnknownIdError
from kstp.evaluators.rqeval.dimensions import (
    DIMENSIONS,
    NAME,
    SLOTS,
    _mean,
    canonical_answer,
    consistency,
    correctness,
    efficiency,
    robustness,
)
from kstp.graph.store import GraphStore

__all__ = ["OVERALL", "run_items", "item_frame", "run_scores", "dataset_scores", "overall_scores", "stored_runs",
           "stored_scores"]

#: How a model's overall dimensions are formed: ``pooled`` (§4, the release, the default) or ``equal``.
OVERALL = ("pooled", "equal")


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
                                      config["sampling"]["n"], config["options"]["perturbations"])


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


def stored_scores(store: GraphStore, run_ids: Sequence[str] | None = None, robustness: str = "paper") -> pd.DataFrame:
    """The six dimensions recomputed from stored responses, one row per run (no inference).

    Parameters
    ----------
    run_ids : sequence of str, optional
        RQEval run ids; default: the scored run of every (model, dataset)
        (``SCORED_ON``).
    robustness : {"paper", "present"}
        RS's rule (:func:`~kstp.evaluators.rqeval.dimensions.robustness`).

    Returns
    -------
    pandas.DataFrame
        ``model``, ``dataset``, ``runId``, ``items``, ``cq`` ... ``ss``.

    Raises
    ------
    UnknownIdError
        When a run id is not an RQEval run in the graph.
    """
    return dataset_scores(stored_runs(store, run_ids), robustness)


def dataset_scores(frames: Mapping[tuple[str, str], pd.DataFrame], robustness: str = "paper") -> pd.DataFrame:
    """One row per run, in Table 7's shape: ``model, dataset, runId, items`` and the six dimensions
    ``cq`` to ``ss``, from :func:`stored_runs` (``runId`` None where a frame has no such column),
    RS by the rule ``robustness``."""
    rows = [{"model": model, "dataset": dataset,
             "runId": frame["runId"].iloc[0] if "runId" in frame and len(frame) else None,
             "items": len(frame), **run_scores(frame, robustness)} for (model, dataset), frame in frames.items()]
    return pd.DataFrame(rows, columns=["model", "dataset", "runId", "items", *DIMENSIONS])


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _true(value) -> bool:
    return value is not None and not pd.isna(value) and bool(value)


def item_frame(items: pd.DataFrame, responses: pd.DataFrame, k: int, slots: int = SLOTS) -> pd.DataFrame:
    """Per item, what the dimensions need, from stored items and responses.

    Parameters
    ----------
    items : pandas.DataFrame
        Rows of the ``rqeval_items`` query for the run's items.
    responses : pandas.DataFrame
        Rows of the ``rqeval_responses`` query of the run.
    k : int
        Generations per item.
    slots : int
        P, the run's perturbation slots per item (its ``perturbations`` option; 3 in the
        paper), which RS's ``paper`` rule divides by.

    Returns
    -------
    pandas.DataFrame
        Indexed by question id: ``correct`` (primary), ``answers`` (K canonical answers,
        None where missing), ``perturbed`` (correctness of each answered perturbation),
        ``tokens`` (primary output tokens), ``ls`` (primary trace; NaN before NLI ran;
        1 for a failed primary, a trace without steps, which §3.2 keeps in N),
        ``ss`` (NaN before it was computed), ``slots`` (P).
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
                    "ls": get(0, "ls") if _text(get(0, "text")).strip() else 1.0, "ss": get(0, "ss"),
                    "slots": slots})
    return pd.DataFrame(out).set_index("questionId")


def run_scores(frame: pd.DataFrame, robustness_rule: str = "paper") -> dict[str, float]:
    """The six dimensions of a run from its :func:`item_frame`.

    LS averages the stored per-item LS (1 - contradiction share), the same as
    :func:`logical_coherence` on the labels. RS follows ``robustness_rule`` (``paper``:
    the frame's ``slots``, P = 3 where a frame has none; ``present``); an unknown rule
    raises ConfigError.
    """
    slots = [int(n) for n in frame["slots"]] if "slots" in frame else SLOTS
    return {"cq": correctness(frame["correct"]), "cs": consistency(list(frame["answers"])),
            "rs": robustness(frame["correct"], list(frame["perturbed"]), slots, robustness_rule),
            "ls": _mean(frame["ls"].astype(float).dropna()), "es": efficiency(frame["correct"], list(frame["tokens"])),
            "ss": _mean(frame["ss"].astype(float).dropna())}


def overall_scores(frames: Mapping[tuple[str, str], pd.DataFrame], how: str = "pooled",
                   robustness: str = "paper") -> pd.DataFrame:
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
    robustness : {"paper", "present"}
        RS's rule (:func:`run_scores`).

    Returns
    -------
    pandas.DataFrame
        One row per model: ``model``, ``datasets``, ``items``, ``cq`` ... ``ss``.

    Raises
    ------
    ConfigError
        On an unknown ``how`` or ``robustness``.

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
            scores = run_scores(pd.concat([f for _, f in runs]), robustness)
        else:
            per = pd.DataFrame([run_scores(f, robustness) for _, f in runs])
            scores = {d: float(per[d].mean()) for d in DIMENSIONS}
        rows.append({"model": model, "datasets": len(runs), "items": sum(len(f) for _, f in runs), **scores})
    return pd.DataFrame(rows, columns=["model", "datasets", "items", *DIMENSIONS])
