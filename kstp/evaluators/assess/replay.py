"""Assessments replayed on recorded answers, and the simulation study on a model.

- :func:`replay_learners`: each recorded learner (who answered every question) is left
  out of the BLIM fit, assessed adaptively with their own recorded answers as the
  oracle, and compared with the state their full answers give under that fit.
- :func:`replay_run`: a stored model run that answered every question is replayed: the
  adaptive prediction of accuracy and PSR against the full run's own figures, and the
  questions and tokens an assessment would have saved.
- :func:`study`: learners drawn from the model (:mod:`kstp.kst.assess_study`), per rule.

Nothing here writes to the graph.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from kstp.errors import KstpError, UnknownIdError
from kstp.evaluators.assess.model import AssessmentModel, Settings
from kstp.evaluators.assess.record import DRAWS
from kstp.graph.store import GraphStore
from kstp.kst.assess import RULES
from kstp.kst.assess_large import draw_states
from kstp.kst.assess_predict import pattern_psr
from kstp.kst.assess_study import by_threshold, curve, replay_patterns, simulate_listed, simulate_surmise

__all__ = ["replay_learners", "replay_run", "study", "THRESHOLDS"]

#: Stopping thresholds a study reports.
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def _run_to_end(procedure, oracle: np.ndarray, batch: int = 1) -> None:
    while True:
        chosen = procedure.next(batch)
        if not chosen:
            return
        for q in chosen:
            procedure.record(q, bool(oracle[q]))


def replay_learners(store: GraphStore, model: AssessmentModel, settings: Settings, learners: int | None = None,
                    seed: int = 0, leave_one_out: bool = True,
                    progress: Callable[[int, int], None] | None = None) -> dict:
    """Replay recorded learners adaptively and compare each with the state of their full answers.

    Parameters
    ----------
    model : AssessmentModel
        A dataset's BLIM fit (``structure="fit"``): its states, and, with ``leave_one_out``,
        the fit is redone without each learner (:func:`~kstp.kst.assess_study.replay_patterns`;
        the method of the stored fit).
    learners : int, optional
        A random sample of this many (seeded by ``seed``); default every learner who answered
        every question.
    progress : callable, optional
        ``progress(done, total)`` after each learner.

    Returns
    -------
    dict
        ``learners``, ``asked`` (mean), ``exact`` and ``withinOne`` (shares whose adaptive
        state is the full-data state, or one item from it), ``distance`` (mean),
        ``accuracyError`` (mean absolute difference between the predicted accuracy and the
        learner's recorded one) and ``rows`` (per learner).

    Raises
    ------
    KstpError
        When the model is not a listed structure of a dataset's fit.
    """
    from kstp.evaluators.blim import response_data

    if model.states is None or model.dataset is None or model.identity.get("structure") != "fit":
        raise KstpError("learners are replayed on a dataset's BLIM fit (--structure fit)")
    data = response_data(store, model.dataset)
    column = {q: j for j, q in enumerate(data.items)}
    order = [column[q] for q in model.items]
    matrix = data.matrix[:, order]
    chosen = np.arange(len(matrix))
    if learners is not None and learners < len(chosen):
        chosen = np.sort(np.random.default_rng(seed).choice(chosen, learners, replace=False))
    method = _fit_method(store, model.identity["fit"])
    result = replay_patterns(model.states, matrix, method, model.prior, model.beta, model.eta, settings, chosen,
                             leave_one_out, progress)
    table = pd.DataFrame(result.pop("rows"))
    table.insert(0, "learnerId", [data.learners[i] for i in chosen])
    return {"dataset": model.dataset, **result, "rows": table.to_dict("records")}


def _fit_method(store: GraphStore, run_id: str) -> str:
    """The estimation method of the stored BLIM fit ``run_id`` (ML where the graph does not say)."""
    import json

    run = store.frame("run_by_id", {"runId": run_id})
    if run.empty:
        return "ML"
    return json.loads(run.iloc[0]["config"] or "{}").get("method", "ML")


def _no_responses(store: GraphStore, run_id: str, dataset: str | None) -> str:
    """Why ``run_id`` cannot be replayed: no such run, or a run without responses; and the answers runs of
    ``dataset`` that can be (the closest first)."""
    from difflib import get_close_matches

    exists = not store.frame("run_by_id", {"runId": run_id}).empty
    runs = [r for r in store.frame("evaluator_runs", {"evaluator": "answers", "dataset": dataset or ""})["runId"]
            if isinstance(r, str)] if dataset else []
    said = (f"run {run_id!r} has no responses in the graph" if exists
            else f"no run {run_id!r} in the graph")
    if not runs:
        return f"{said}, and no answers run on {dataset} to replay: kstp evaluate answers --dataset {dataset} first"
    close = get_close_matches(run_id, runs, n=3, cutoff=0.0)
    return (f"{said}; the answers runs on {dataset}: {', '.join(close)}"
            + (f" and {len(runs) - len(close)} more (kstp runs list --evaluator answers)" if len(runs) > 3 else ""))


def replay_run(store: GraphStore, run_id: str, model: AssessmentModel, settings: Settings) -> dict:
    """Replay a stored model run adaptively: its recorded verdicts answer the questions the rule picks.

    Returns
    -------
    dict
        ``full`` (the run's accuracy, micro and macro PSR over all questions, its tokens),
        ``adaptive`` (the record's prediction, the questions asked and their tokens),
        ``errors`` (adaptive minus full, in points of accuracy and PSR), ``saved`` (shares of
        questions and tokens not spent) and ``inInterval`` (whether each full figure lies in
        the prediction's 95 % interval).

    Raises
    ------
    UnknownIdError
        When the run is not in the graph.
    KstpError
        When the run did not answer every question of the model (replay needs them all).
    """
    from kstp.evaluators.assess.record import describe

    responses = store.frame("run_responses", {"runId": run_id})
    if responses.empty:
        raise UnknownIdError(_no_responses(store, run_id, model.dataset))
    primary = responses[(responses["sampleIndex"] == 0) & responses["verdict"].notna()].set_index("questionId")
    missing = [q for q in model.items if q not in primary.index]
    if missing:
        raise KstpError(f"run {run_id} answered {len(model.items) - len(missing)} of the {len(model.items)} questions "
                        f"of {model.dataset} (not {missing[0]}, ...); replay needs a run over every question "
                        "(kstp evaluate answers without --limit)")
    oracle = primary.loc[model.items, "correct"].fillna(False).astype(bool).to_numpy()
    used = primary.loc[model.items, ["tokensIn", "tokensOut"]].fillna(0).sum(axis=1).to_numpy()
    procedure = model.procedure(settings)
    _run_to_end(procedure, oracle, settings.batch)
    record = describe(model, procedure, settings, DRAWS, runId=run_id)
    asked = [model.items.index(s["question"]) for s in record["path"]]
    micro, macro = pattern_psr(oracle[None, :], model.pairs) if len(model.pairs) else (np.array([np.nan]),) * 2
    full = {"accuracy": float(oracle.mean()), "psrMicro": _f(micro[0]), "psrMacro": _f(macro[0]),
            "tokens": int(used.sum())}
    prediction = record["prediction"]
    errors, inside = {}, {}
    for key in ("accuracy", "psrMicro", "psrMacro"):
        if full[key] is not None and prediction.get(key) is not None:
            errors[key] = 100 * (prediction[key] - full[key])
            low, high = prediction[f"{key}Interval"]
            inside[key] = bool(low is not None and low <= full[key] <= high)
    return {"runId": run_id, "dataset": model.dataset, "settings": settings.record(), "full": full,
            "adaptive": {**prediction, "asked": len(asked), "tokens": int(used[asked].sum())},
            "errorsInPoints": errors, "inInterval": inside,
            "saved": {"questions": 1 - len(asked) / len(model.items),
                      "tokens": 1 - used[asked].sum() / used.sum() if used.sum() else None},
            "state": record["state"], "stopped": record["stopped"]}


def _f(x) -> float | None:
    return None if x is None or x != x else float(x)


def study(model: AssessmentModel, learners: int, seed: int = 0, rules=RULES, thresholds=THRESHOLDS,
          budget: int | None = None, batch: int = 1) -> dict:
    """The simulation study on ``model``: learners drawn from it, assessed under each rule.

    On listed states the learners come from the prior (the fit's state probabilities)
    and every rule runs until all is asked: per rule and threshold the questions asked,
    the true state found, within one item, the mean distance and the accuracy error
    (:func:`~kstp.kst.assess_study.by_threshold`), the curve of recovery against questions
    asked, and asking every question (the last step) for comparison. On the surmise
    relation the learners come from the skills' prior
    (:func:`~kstp.kst.assess_large.draw_states`) and each rule asks ``budget`` questions
    (default 10 % of them).

    Returns
    -------
    dict
        ``thresholds`` (rows), ``curve`` (rows), or on the surmise relation ``rules`` (rows).
    """
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise KstpError(f"unknown questioning rule {unknown[0]!r}; use one of {', '.join(RULES)}")
    if model.states is not None:
        rows, curves = [], []
        for rule in rules:
            runs = simulate_listed(model.states, model.prior, model.beta, model.eta, rule, learners, seed)
            rows += by_threshold(runs, thresholds)
            curves += curve(runs)
        everything = [r for r in curves if r["asked"] == len(model.items)]
        return {"dataset": model.dataset, "method": "listed", "learners": learners, "seed": seed,
                "thresholds": rows, "curve": curves,
                "allQuestions": everything[0] if everything else None}
    truth = draw_states(model.space, learners, np.random.default_rng(seed), model.items)
    budget = budget or max(1, len(model.items) // 10)
    rows = [simulate_surmise(model.space, model.beta, model.eta, truth, rule, budget, seed + 1, batch).summary()
            for rule in rules]
    return {"dataset": model.dataset, "method": "surmise", "learners": learners, "seed": seed, "budget": budget,
            "rules": rows}
