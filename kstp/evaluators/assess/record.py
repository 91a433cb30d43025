"""An assessment as a record: what ``kstp assess`` prints and what ``Run.assessment`` stores (JSON).

Also the Run bookkeeping every kind of assessment shares: its id, the stored record
(read back to resume), and the write after each answer.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from kstp._version import __version__
from kstp.evaluators.assess.model import VERSION, AssessmentModel, Settings
from kstp.graph.store import GraphStore
from kstp.inference.runs import git_hash, now

__all__ = ["describe", "stored_run", "save_run", "DRAWS"]

#: States drawn from the posterior for the predicted accuracy's and PSR's intervals.
DRAWS = 2000


def _clean(value):
    if isinstance(value, float) and value != value:
        return None
    return value


def describe(assessment: AssessmentModel, procedure, settings: Settings, draws: int = DRAWS,
             answers: list | None = None, **extra) -> dict:
    """The assessment's record: the state with its posterior and fringes, the path, the prediction.

    Parameters
    ----------
    assessment : AssessmentModel
    procedure : Procedure or SurmiseProcedure
    settings : Settings
    draws : int
        States drawn for the intervals (0: no prediction).
    answers : list of dict, optional
        Per step, what was typed or replied and how it was graded (``answer``, ``verdict``),
        merged into the path.
    extra
        Further keys (the learner, the run id, ...).

    Returns
    -------
    dict
        JSON-ready: ``stopped`` (one of :data:`kstp.kst.assess.STOPS`, or None while it
        could go on), ``asked``, ``questions``, ``state`` (question ids), ``statePosterior``
        (None on the surmise relation), ``innerFringe`` and ``outerFringe`` (what was
        learnt last, what to learn next), ``prediction`` (accuracy and PSR over all
        questions with 95 % intervals), ``path`` (per question: ``question``, ``correct``,
        ``posterior`` of the most likely state after it, its ``stateSize``, ``entropy``).
    """
    outcome = procedure.outcome(pairs=assessment.pairs if len(assessment.pairs) else None, draws=draws)
    path = []
    for k, step in enumerate(outcome.path):
        row = {"question": assessment.items[step.item], "correct": step.correct, "posterior": step.posterior,
               "stateSize": None if step.state is None else int(np.asarray(assessment.states)[step.state].sum()),
               "entropy": step.entropy}
        if step.uncertain is not None:
            row["uncertain"] = step.uncertain
        if answers is not None and k < len(answers):
            row |= {key: value for key, value in answers[k].items() if key not in row}
        path.append(row)
    prediction = outcome.prediction.as_dict() if outcome.prediction is not None else None
    if prediction:
        prediction = {k: ([_clean(x) for x in v] if isinstance(v, list) else _clean(v)) for k, v in prediction.items()}
    return {**extra, "dataset": assessment.dataset, "method": assessment.method, "source": assessment.source,
            "settings": settings.record(), "stopped": outcome.stopped, "asked": len(outcome.path),
            "questions": len(assessment.items), "state": assessment.names(outcome.items_in_state),
            "statePosterior": outcome.posterior, "innerFringe": assessment.names(outcome.inner_fringe),
            "outerFringe": assessment.names(outcome.outer_fringe), "entropy": outcome.entropy,
            "prediction": prediction, "path": path}


def stored_run(store: GraphStore, run_id: str) -> dict | None:
    """The stored assessment run ``run_id`` (the ``assessment_run`` query's row, its record parsed), or None."""
    rows = store.run("assessment_run", {"runId": run_id})
    if not rows:
        return None
    row = dict(rows[0])
    row["assessment"] = json.loads(row["assessment"]) if row.get("assessment") else None
    return row


def save_run(store: GraphStore, run_id: str, record: dict, status: str, config: dict | None = None,
             **properties) -> None:
    """Write the assessment's Run: its record (``Run.assessment``), status, ``asked``, ``predictedAccuracy`` and
    ``properties``; with ``config`` (a new run) its configuration, versions and start time too."""
    prediction = record.get("prediction") or {}
    row = {"id": run_id, "evaluator": "assess", "status": status, "asked": record["asked"],
           "predictedAccuracy": prediction.get("accuracy"), "assessment": json.dumps(record, sort_keys=True),
           "finishedAt": now() if status != "running" else None, **properties}
    if config is not None:
        digest = config.pop("_hash")
        row |= {"evaluatorVersion": VERSION, "dataset": record.get("dataset"), "configHash": digest,
                "config": json.dumps(config, sort_keys=True, default=str), "kstpVersion": __version__,
                "gitHash": git_hash(), "startedAt": now()}
    store.write_nodes("Run", pd.DataFrame([row]).astype(object))
