"""Paper 2's run: the crossed design asked of one model, stored and scored, and re-scored.

:func:`design` lays out every (catalogue, state, condition, presentation) cell;
:func:`evaluate` asks the backend's model for each through
:func:`~kstp.inference.runs.generate_and_store`, as every evaluation does (each reply
stored as a Response before it is parsed and scored; a request that got no reply is
not stored and its cell is technically missing, asked again and by a rerun; a
request the server rejects stops the run), and resumes a rerun of the same
configuration; :func:`rescore` recomputes every cell from the stored text, without
inference.

- **Sampling** (:data:`SAMPLING`): ``paper`` (default) leaves temperature and top-p
  at the provider's defaults and allows 16,000 output tokens (§4.3); ``deterministic``
  is kstp's earlier setting (temperature 0, top-p 0.95, 1,024 tokens).

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2-§5.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kstp.errors import ConfigError, KstpError, UnknownIdError
from kstp.evaluators.nextstep.parsing import Answer, parse_answer
from kstp.evaluators.nextstep.prompts import CONDITIONS, TEMPLATE_HASH, answer_schema, build_prompt, presentation
from kstp.evaluators.nextstep.scoring import METRICS, score_item
from kstp.graph.store import GraphStore
from kstp.graph.structures import state_id_of, store_states
from kstp.inference.backend import (
    Backend,
    Completion,
    RejectedRequestError,
    Sampling,
    cache_key,
    endpoint_of,
    prompt_hash,
)
from kstp.inference.runs import (
    Grading,
    RunSpec,
    finish_run,
    generate_and_store,
    model_learner_id,
    open_run,
    progress_reporter,
)
from kstp.loaders.catalogues import Catalogue, Coverage, stored_catalogue, write_catalogue

__all__ = ["NAME", "VERSION", "SAMPLING", "design", "evaluate", "grade_cell", "NextstepResult", "rescore"]

NAME = "nextstep"
VERSION = "1.1"
#: Sampling presets (``--sampling``): ``paper`` (§3: the provider's default temperature and top-p, at most
#: 16,000 output tokens; None is not sent) and ``deterministic`` (kstp's earlier default).
SAMPLING = {"paper": {"temperature": None, "top_p": None, "max_tokens": 16_000},
            "deterministic": {"temperature": 0.0, "top_p": 0.95, "max_tokens": 1024}}


# ---- the crossed design and the run ----------------------------------------------------
def design(catalogues: Sequence[Catalogue], conditions: Sequence[str], orders: int, model: str) -> pd.DataFrame:
    """Every (catalogue, state, condition, presentation) cell, shuffled for ``model``.

    The order is by ``SHA-256(model, cell)``: deterministic per model, different
    across models, and conditions interleave over collection time.

    Returns
    -------
    pandas.DataFrame
        Columns ``catalogue, stateId, state (frozenset), weight, condition, presentation``.
    """
    rows = []
    for catalogue in catalogues:
        for state, weight in catalogue.states():
            sid = state_id_of(catalogue.id, [f"{catalogue.id}:{t}" for t in state])
            for condition in conditions:
                for order in range(orders):
                    rows.append({"catalogue": catalogue.id, "stateId": sid, "state": state, "weight": weight,
                                 "condition": condition, "presentation": order})
    frame = pd.DataFrame(rows, columns=["catalogue", "stateId", "state", "weight", "condition", "presentation"])
    shuffle = [hashlib.sha256(f"{model}|{r.stateId}|{r.condition}|{r.presentation}".encode()).hexdigest()
               for r in frame.itertuples()]
    return frame.assign(_k=shuffle).sort_values("_k").drop(columns="_k").reset_index(drop=True)


@dataclass
class NextstepResult:
    """Outcome of one evaluation run: the run, what was asked now, every scored cell.

    ``scored`` holds the cells with a stored reply; ``summary()["missing"]`` counts
    the cells without an answer (no reply yet: the next run asks them).
    ``last_failure`` is the error of the last request that got no reply.
    """

    run_id: str
    resumed: bool
    requested: int
    generated: int
    scored: pd.DataFrame
    last_failure: str | None = None

    @property
    def missing(self) -> int:
        """Cells of the design without an answer: no stored reply, or only a technically missing one."""
        return self.requested - int((self.scored["validity"] != "missing").sum())

    def summary(self) -> dict:
        valid = self.scored["validity"]
        by_condition = self.scored[valid != "missing"].groupby("condition")["exact"].mean().to_dict()
        return {"runId": self.run_id, "resumed": self.resumed, "cells": self.requested,
                "generatedNow": self.generated, "valid": int((valid == "valid").sum()),
                "invalid": int((valid == "invalid").sum()), "missing": self.missing,
                "exactSetAccuracy": float(self.scored.loc[valid != "missing", "exact"].mean())
                if (valid != "missing").any() else float("nan"),
                **{f"exact {c}": v for c, v in sorted(by_condition.items())}}


def _score_cell(catalogue: Catalogue, state, condition: str, order: tuple[str, ...],
                completion: Completion) -> tuple[Answer, frozenset | None, list[str], dict]:
    """Parse and score one completion: the answer, its tasks, the reference fringe, the measures."""
    answer = parse_answer(completion, len(order), condition)
    reference = catalogue.space().outer_fringe(state)
    predicted = frozenset(order[k - 1] for k in answer.positions) if answer.validity == "valid" else None
    scores = (score_item(predicted, reference, len(order)) if answer.validity != "missing"
              else dict.fromkeys(METRICS, float("nan")))
    return answer, predicted, reference, scores


def _graph_row(catalogue: Catalogue, state, condition: str, order: tuple[str, ...], completion: Completion) -> dict:
    """The outcome properties of one Response."""
    answer, predicted, reference, scores = _score_cell(catalogue, state, condition, order, completion)
    pairs = [[order[a - 1], order[b - 1]] for a, b in answer.pairs] if answer.pairs else None
    return {"verdict": answer.validity, "invalidKind": answer.kind if answer.validity == "invalid" else None,
            "predicted": json.dumps(sorted(predicted)) if predicted is not None else None,
            "predictedPairs": json.dumps(pairs) if pairs is not None else None, "reference": json.dumps(reference),
            "correct": None if answer.validity == "missing" else scores["exact"] == 1.0,
            **{k: None if np.isnan(scores[k]) else scores[k] for k in ("precision", "recall", "f1", "jaccard")},
            "symDiff": None if np.isnan(scores["symDiff"]) else int(scores["symDiff"])}


def grade_cell(completion: Completion, catalogue: Catalogue, state, condition: str, order: tuple[str, ...]) -> dict:
    """The outcome properties of one cell's reply (the grading function of a run)."""
    return _graph_row(catalogue, state, condition, order, completion)


def _sampling_for(sampling: Sampling, schema: dict | None) -> Sampling:
    """One sample of ``sampling`` under ``schema`` (None: the configuration the user chose)."""
    return dataclasses.replace(sampling, n=1, json_schema=schema)


def evaluate(store: GraphStore, backend: Backend, catalogues: Sequence[Catalogue], conditions: Sequence[str],
             orders: int, sampling: Sampling, new_run: bool = False, retries: int = 2,
             progress: Callable[..., None] | None = None, window: int | None = None) -> NextstepResult:
    """Run (or resume) the crossed design for ``backend``'s model; store and score every attempt.

    Each catalogue is written to the graph (:func:`write_catalogue`) with its states
    (``KnowledgeState`` with ``weight``). A cell's prompt is built, asked with the
    answer schema as structured output, stored as a Response (with ``attempt``)
    before it is parsed and scored. Cells whose request got no reply (nothing is
    stored for them) are asked again up to ``retries`` more times; a rerun of the same
    configuration asks only for cells without a final answer.

    Parameters
    ----------
    conditions : sequence of {"P0", "P1", "P2", "P3"}
    orders : int
        Presentations per catalogue (>= 1; the paper uses 2).
    sampling : Sampling
        Temperature, top-p, max tokens and seed; ``n`` is 1, the schema is set per cell.

    Raises
    ------
    ConfigError
        On an unknown condition, ``orders`` < 1 or two catalogues with one id.
    ConfigChangedError
        When the configuration changed and ``new_run`` is false.
    RejectedRequestError
        When the server rejects a request as wrong (the run's status is ``failed``).
    """
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown or not conditions or orders < 1:
        raise ConfigError(f"conditions must be among {', '.join(CONDITIONS)} and orders >= 1; "
                          f"got {list(conditions)} and {orders}")
    ids = [c.id for c in catalogues]
    if len(set(ids)) != len(ids) or not ids:
        raise ConfigError(f"give one or more catalogues, each once; got {ids}")
    by_id = {c.id: c for c in catalogues}
    spec = RunSpec.of(backend, NAME, VERSION, "+".join(sorted(ids)), _sampling_for(sampling, None),
                   TEMPLATE_HASH, {"conditions": list(conditions), "orders": orders,
                                   "answerSchema": hashlib.sha256(json.dumps(answer_schema(2, "P1"), sort_keys=True)
                                                                  .encode()).hexdigest()[:16],
                                   "catalogues": {c.id: {"digest": c.digest(), "coverage": c.coverage.as_spec()}
                                                  for c in catalogues}})
    run_id, resumed = open_run(store, spec, new_run)  # refuses a changed configuration before any write
    for catalogue in catalogues:
        write_catalogue(store, catalogue)
        states = catalogue.states()
        members = [frozenset(f"{catalogue.id}:{t}" for t in s) for s, _ in states]
        coverage = catalogue.coverage
        store_states(store, catalogue.id, members, "nextstep:exhaustive" if coverage.kind == "exhaustive"
                     else f"nextstep:sample={coverage.size}:seed={coverage.seed}")
        store.write_nodes("KnowledgeState", pd.DataFrame({"id": [state_id_of(catalogue.id, m) for m in members],
                                                          "weight": [w for _, w in states]}))
    learner = model_learner_id(backend.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": backend.model}]))
    cells = design(catalogues, conditions, orders, backend.model)
    views = {(c.id, k): presentation(c, k) for c in catalogues for k in range(orders)}
    prompts, keys, samplings = [], [], []
    for cell in cells.itertuples():
        catalogue = by_id[cell.catalogue]
        messages = build_prompt(catalogue, cell.state, cell.condition, views[(cell.catalogue, cell.presentation)])
        cell_sampling = _sampling_for(sampling, answer_schema(len(catalogue.tasks), cell.condition))
        prompts.append(messages)
        samplings.append(cell_sampling)
        keys.append(cache_key(backend.model, prompt_hash(messages), cell_sampling, 0, endpoint_of(backend),
                              TEMPLATE_HASH))
    cells = cells.assign(cellKey=keys)
    # One request per schema (conditions and catalogue sizes differ): the cells of each go together.
    groups: dict[str, list[int]] = {}
    for k, cell_sampling in enumerate(samplings):
        groups.setdefault(json.dumps(cell_sampling.json_schema, sort_keys=True), []).append(k)

    def cell_args(k: int) -> tuple:
        cell = cells.iloc[k]
        return by_id[cell.catalogue], cell.state, cell.condition, views[(cell.catalogue, cell.presentation)]

    report = progress_reporter(progress)
    asked, total, last_failure, status = 0, len(cells), None, "interrupted"
    try:
        for _ in range(retries + 1):
            stored = store.frame("nextstep_responses", {"runId": run_id})
            attempts = stored.groupby("cellKey")["attempt"].max().to_dict() if len(stored) else {}
            final = set(stored.loc[stored["verdict"] != "missing", "cellKey"]) if len(stored) else set()
            waiting = 0
            for members in groups.values():
                todo = [k for k in members if keys[k] not in final]
                if not todo:
                    continue
                # A cell that an earlier kstp stored as technically missing keeps those attempts for audit.
                attempt = {k: attempts.get(keys[k], -1) + 1 for k in todo}
                done = generate_and_store(
                    store, backend, run_id, learner, {k: prompts[k] for k in todo}, samplings[todo[0]],
                    Grading(grade_cell, {k: cell_args(k) for k in todo}),
                    samples={k: [0] for k in todo}, window=window,
                    keys={(k, 0): f"{keys[k]}:{attempt[k]}" for k in todo},
                    columns={k: {"catalogue": cells.at[k, "catalogue"], "stateId": cells.at[k, "stateId"],
                                 "condition": cells.at[k, "condition"],
                                 "presentation": int(cells.at[k, "presentation"]), "attempt": attempt[k],
                                 "cellKey": keys[k]} for k in todo},
                    progress=lambda d, _, note, base=asked: report(base + d, total, note))
                asked, waiting = asked + done.stored, waiting + done.pending
                last_failure = done.last_failure or last_failure
            if not waiting:
                break
        status = "incomplete" if waiting else "finished"
    except RejectedRequestError:
        status = "failed"
        raise
    finally:
        result = rescore(store, run_id, catalogues)
        valid = result["validity"]
        answered = result[valid != "missing"]
        finish_run(store, run_id, status, requested=total, completed=len(answered),
                   failed=total - len(answered), pending=total - len(answered),
                   invalid=int((valid == "invalid").sum()), correct=int(answered["exact"].sum()),
                   exactSetAccuracy=float(answered["exact"].mean()) if len(answered) else None)
    return NextstepResult(run_id, resumed, total, asked, result, last_failure)


# ---- recomputation from the graph --------------------------------------------------------
def rescore(store: GraphStore, run_id: str, catalogues: Sequence[Catalogue] | None = None) -> pd.DataFrame:
    """Every cell of a run, re-parsed and re-scored from the stored text (no inference).

    Catalogues are read back from the graph (or taken from ``catalogues``) and
    checked against the digests in the run's configuration; states and fringes are
    recomputed. A cell's final attempt is its last one that is not technically
    missing (else its last attempt).

    Returns
    -------
    pandas.DataFrame
        One row per cell: ``model, catalogue, stateId, weight, size`` (``|K|``),
        ``fringeSize`` (``|T|``), ``condition, presentation, attempts, validity,
        invalidKind, predicted`` (frozenset or None) and the :data:`METRICS` (NaN
        when missing).

    Raises
    ------
    UnknownIdError
        When the run is not in the graph.
    KstpError
        When a stored catalogue differs from the one the run used.
    """
    runs = store.frame("run_by_id", {"runId": run_id})
    if runs.empty:
        raise UnknownIdError(f"no run {run_id!r} in the graph; see kstp query runs_of")
    run = runs.iloc[0]
    if run["evaluator"] != NAME:
        raise KstpError(f"run {run_id!r} is a {run['evaluator']} run, not a {NAME} run")
    config = json.loads(run["config"])["options"]
    given = {c.id: c for c in catalogues or ()}
    used = {}
    for cid, meta in config["catalogues"].items():
        spec = meta["coverage"]
        coverage = Coverage() if spec == "exhaustive" else Coverage("sample", spec["sample"], spec["seed"])
        catalogue = given.get(cid) or stored_catalogue(store, cid, coverage)
        if catalogue.digest() != meta["digest"]:
            raise KstpError(f"catalogue {cid!r} in the graph differs from the one run {run_id} used; "
                            "re-run kstp evaluate nextstep with that catalogue file to restore it")
        used[cid] = catalogue
    states = {}
    for cid, catalogue in used.items():
        for state, weight in catalogue.states():
            states[state_id_of(cid, [f"{cid}:{t}" for t in state])] = (state, weight)
    responses = store.frame("nextstep_responses", {"runId": run_id})
    responses = responses.astype(object).where(responses.notna(), None)
    rows = []
    for _, attempts in responses.groupby("cellKey", sort=False):
        answered = attempts[attempts["verdict"] != "missing"]
        last = (answered if len(answered) else attempts).sort_values("attempt").iloc[-1]
        catalogue = used[last["catalogue"]]
        state, weight = states[last["stateId"]]
        order = presentation(catalogue, int(last["presentation"]))
        completion = Completion(0, 0, text=last["text"], finish_reason=last["finishReason"], error=last["error"])
        answer, predicted, reference, scores = _score_cell(catalogue, state, last["condition"], order, completion)
        rows.append({"model": run["model"], "catalogue": last["catalogue"], "stateId": last["stateId"],
                     "weight": weight, "size": len(state), "fringeSize": len(reference), "condition": last["condition"],
                     "presentation": int(last["presentation"]), "attempts": len(attempts),
                     "validity": answer.validity, "invalidKind": answer.kind if answer.validity == "invalid" else None,
                     "predicted": predicted, **scores})
    columns = ["model", "catalogue", "stateId", "weight", "size", "fringeSize", "condition", "presentation", "attempts",
               "validity", "invalidKind", "predicted", *METRICS]
    return pd.DataFrame(rows, columns=columns).sort_values(
        ["catalogue", "stateId", "condition", "presentation"], ignore_index=True)
