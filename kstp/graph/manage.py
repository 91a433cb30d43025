"""Managing what is in the graph: list, inspect and delete runs, delete a dataset.

Assumes the graph model of :mod:`kstp.graph.schema` and the bookkeeping of
:mod:`kstp.inference.runs` (a run's completions are Responses linked ``IN_RUN`` to its
Run; the edges and properties a run writes carry its id). What is read to decide a
deletion comes from registered queries (``cypher/runs/run_*``, ``graph/dataset_*``),
so a dry run counts exactly what a deletion removes; the deletions themselves are
store methods, because ``kstp query`` must only read.
"""

from __future__ import annotations

import difflib
import json
import os
import socket
from dataclasses import dataclass

import pandas as pd

from kstp.errors import UnknownIdError
from kstp.graph.store import GraphStore

__all__ = ["graph_stats", "HEADLINE", "OUTCOME_PROPERTIES", "list_runs", "RunFootprint", "run_footprint", "delete_run",
           "DatasetFootprint", "dataset_footprint", "delete_dataset"]

#: The figure that sums up a run of each evaluator in ``kstp runs list``; scaffolding and
#: annotation runs carry counts only (their figures are per strategy or per question).
HEADLINE = {"answers": "accuracy", "rqeval": "cq", "dagmath": "perfectReasoningRate",
            "cot": "perfectReasoningRate", "nextstep": "exactSetAccuracy", "blim": "logLikelihood"}

#: The properties a BLIM fit writes onto the nodes it was fitted to, cleared when its run is deleted.
OUTCOME_PROPERTIES = {"Question": ("careless", "guess", "carelessSe", "guessSe", "blimRunId"),
                      "Learner": ("blimStateId", "blimPosterior", "blimRunId"),
                      "KnowledgeState": ("probability", "blimRunId")}


def graph_stats(store: GraphStore) -> dict:
    """Counts per label and relationship type, and per framework and dataset figures (``kstp db stats``).

    Returns
    -------
    dict
        ``nodes`` (label -> count), ``relationships`` (type -> count), ``frameworks`` (one
        record per framework: the ``curriculum_figures`` counts and prerequisites per concept)
        and ``datasets`` (the ``datasets`` query's records with concepts and question
        prerequisites per question).
    """
    frameworks = []
    for fw in store.run("frameworks"):
        figures = store.run("curriculum_figures", {"framework": fw["frameworkId"]})[0]
        concepts = figures["concepts"]
        frameworks.append({"framework": fw["frameworkId"], **figures,
                           "prerequisitesPerConcept": figures["prerequisiteEdges"] / concepts if concepts else 0.0})
    datasets = []
    for ds in store.run("datasets"):  # every figure a count() in the engine, no edge crosses the wire
        questions = ds["questions"]
        datasets.append({**ds, "conceptsPerQuestion": ds["assesses"] / questions if questions else 0.0,
                         "questionPrerequisitesPerQuestion":
                             ds["questionPrerequisites"] / questions if questions else 0.0})
    return {"nodes": {r["label"]: r["count"] for r in store.run("node_counts")},
            "relationships": {r["type"]: r["count"] for r in store.run("relationship_counts")},
            "frameworks": frameworks, "datasets": datasets}


def list_runs(store: GraphStore, evaluator: str | None = None, model: str | None = None,
              dataset: str | None = None) -> pd.DataFrame:
    """The runs in the graph, newest first, narrowed to an evaluator, model and dataset where given.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``runId, evaluator, model, endpoint`` (the server's base URL,
        else the backend name), ``dataset, tag`` (a replicate's name, ``--tag``/``--repeat``),
        ``created`` (start time, else finish time),
        ``status, done, planned`` (completions stored and asked for), ``figure`` and
        ``value`` (the evaluator's headline, :data:`HEADLINE`; empty where it has none).
        A ``running`` run whose process on this machine is gone (a ``kill -9``, a crash)
        is ``interrupted (process N is gone)``, its ``done`` the completions it stored.
    """
    runs = store.frame("run_list", {"evaluator": evaluator or "", "model": model or "", "dataset": dataset or ""})
    runs = _killed(store, runs)
    figure = runs["evaluator"].map(HEADLINE)
    value = [runs.at[i, name] if isinstance(name, str) else None for i, name in figure.items()]
    return pd.DataFrame({
        "runId": runs["runId"], "evaluator": runs["evaluator"], "model": runs["model"],
        "endpoint": [_endpoint(config, backend) for config, backend in zip(runs["config"], runs["backend"],
                                                                           strict=True)],
        "dataset": runs["dataset"], "tag": [(json.loads(c) if c else {}).get("tag") for c in runs["config"]],
        "created": runs["startedAt"].fillna(runs["finishedAt"]),
        "status": runs["status"], "done": runs["completed"].astype("Int64"),
        "planned": runs["requested"].astype("Int64"), "figure": figure,
        "value": pd.Series(value, index=runs.index, dtype=float)})


def _killed(store: GraphStore, runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with each ``running`` run whose process on this host is gone marked interrupted, with its stored
    count (a run killed with SIGKILL never wrote its end)."""
    host = socket.gethostname()
    runs = runs.copy()
    for i in runs.index[runs["status"].eq("running")]:
        pid = runs.at[i, "pid"]
        if pd.isna(pid) or runs.at[i, "host"] != host or _alive(int(pid)):
            continue
        runs.at[i, "status"] = f"interrupted (process {int(pid)} is gone)"
        runs.at[i, "completed"] = len(store.frame("run_finish_reasons", {"runId": runs.at[i, "runId"]}))
    return runs


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _endpoint(config: str | None, backend: str | None) -> str | None:
    endpoint = json.loads(config).get("endpoint", {}) if config else {}
    return endpoint.get("baseUrl") or ", ".join(endpoint.get("baseUrls") or ()) or backend


@dataclass
class RunFootprint:
    """What belongs to one run: what ``kstp runs delete`` removes.

    Attributes
    ----------
    responses : list of str
        Response ids that this run alone holds (deleted); ``shared`` those also linked
        into another run (kept, only their link to this run goes).
    cot_steps : list of str
        CotStep ids of the deleted Responses.
    learners : list of str
        Non-human Learners that gave Responses of this run and of no other (deleted).
    links : pandas.DataFrame
        ``type, fromLabel, toLabel, fromId, toId``: relationships carrying the run id
        (ANSWERED, SCORED_ON, ASSESSES, LEARNED_PREREQUISITE_OF; deleted).
    outcomes : pandas.DataFrame
        ``label, id``: nodes whose BLIM outcome properties name the run (cleared,
        :data:`OUTCOME_PROPERTIES`).
    restored : int
        After a deletion: ANSWERED edges pointed at another run of the same evaluator
        that holds a graded primary sample of the same question (runs share Responses),
        so deleting a run never takes another run's answers away.
    """

    run_id: str
    responses: list[str]
    shared: list[str]
    cot_steps: list[str]
    learners: list[str]
    links: pd.DataFrame
    outcomes: pd.DataFrame
    restored: int = 0

    def counts(self) -> dict[str, int]:
        """Counts per kind, the run itself included: what a dry run prints."""
        return {"Run": 1, "Response": len(self.responses), "sharedResponses": len(self.shared),
                "CotStep": len(self.cot_steps), "Learner": len(self.learners),
                **{kind: int((self.links["type"] == kind).sum())
                   for kind in ("ANSWERED", "SCORED_ON", "ASSESSES", "LEARNED_PREREQUISITE_OF")},
                "outcomeProperties": len(self.outcomes)}


def run_footprint(store: GraphStore, run_id: str) -> RunFootprint:
    """What belongs to the run ``run_id`` (see :class:`RunFootprint`).

    Raises
    ------
    UnknownIdError
        When the graph has no such run; the message suggests close run ids.
    """
    if store.nodes("Run", [run_id]).empty:
        known = store.frame("run_list", {"evaluator": "", "model": "", "dataset": ""})["runId"].tolist()
        close = difflib.get_close_matches(run_id, known, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownIdError(f"no run {run_id!r} in the graph{hint} (kstp runs list shows them)")
    members = store.frame("run_members", {"runId": run_id})
    owned = members[~members["shared"].astype(bool)]
    return RunFootprint(run_id, owned.loc[owned["label"] == "Response", "id"].tolist(),
                        members.loc[(members["label"] == "Response") & members["shared"].astype(bool), "id"].tolist(),
                        owned.loc[owned["label"] == "CotStep", "id"].tolist(),
                        owned.loc[owned["label"] == "Learner", "id"].tolist(),
                        store.frame("run_links", {"runId": run_id}), store.frame("run_outcomes", {"runId": run_id}))


def delete_run(store: GraphStore, run_id: str) -> RunFootprint:
    """Delete the run ``run_id`` and what belongs to it alone; return what was deleted.

    Its Responses (those another run also holds stay), their CoT steps, the
    relationships that carry its id, its model Learners that have no other run, the
    BLIM outcome properties it wrote, and the Run node. Human learners, questions and
    every other run are untouched: a model's answer to a question that another run of
    the same evaluator also holds (a shared Response) is written again from the newest
    such run. A learner that stays keeps its accuracy and PSR properties until
    ``kstp evaluate psr`` writes them again.

    Raises
    ------
    UnknownIdError
        When the graph has no such run.
    """
    footprint = run_footprint(store, run_id)
    evaluator = store.nodes("Run", [run_id]).iloc[0].get("evaluator")
    for (rel, from_label, to_label), rows in footprint.links.groupby(["type", "fromLabel", "toLabel"]):
        store.delete_relationships(rel, from_label, to_label, rows.rename(columns={"fromId": "from_id",
                                                                                  "toId": "to_id"}))
    store.delete_nodes("CotStep", footprint.cot_steps)
    store.delete_nodes("Response", footprint.responses)
    store.delete_nodes("Learner", footprint.learners)
    for label, rows in footprint.outcomes.groupby("label"):
        cleared = {name: None for name in OUTCOME_PROPERTIES[label]}
        store.write_nodes(label, pd.DataFrame({"id": rows["id"].tolist(), **cleared}))
    store.delete_nodes("Run", [run_id])  # its IN_RUN links, those of shared Responses too
    footprint.restored = _restore_answers(store, footprint.links, evaluator)
    return footprint


def _restore_answers(store: GraphStore, links: pd.DataFrame, evaluator: str | None) -> int:
    """Point the deleted run's ANSWERED edges at the newest other run of its evaluator that answered the same
    question (runs share Responses: sample 0 of ``--samples 1`` and of ``--samples 2``); how many."""
    gone = links[links["type"] == "ANSWERED"]
    if gone.empty or not evaluator:
        return 0
    held = store.frame("primary_answers", {"learners": sorted(set(gone["fromId"])), "evaluator": evaluator})
    held = held.drop_duplicates(["learnerId", "questionId"])  # newest run first
    wanted = pd.MultiIndex.from_frame(gone[["fromId", "toId"]])
    held = held[pd.MultiIndex.from_frame(held[["learnerId", "questionId"]]).isin(wanted)]
    if len(held):
        store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame({
            "from_id": held["learnerId"], "to_id": held["questionId"], "correct": held["correct"].astype(bool),
            "runId": held["runId"]}))
    return len(held)


@dataclass
class DatasetFootprint:
    """What belongs to one dataset alone: what ``kstp db delete-dataset`` removes.

    Attributes
    ----------
    datasets : list of str
        The dataset and the next-step catalogues built from its items (a catalogue's
        provenance names its ``dataset``).
    figures : dict of str to int
        Summed over ``datasets``, from the ``datasets`` query: ``questions``,
        ``assesses``, ``answers`` and ``questionPrerequisites`` (derived Eq. 1 edges).
    members : pandas.DataFrame
        ``label, id``: their Questions, KnowledgeStates and the Learners of no other dataset.
    runs : list of str
        The runs on them (a next-step run on several catalogues when all are among them).
    """

    dataset: str
    datasets: list[str]
    figures: dict[str, int]
    members: pd.DataFrame
    runs: list[str]

    def counts(self) -> dict[str, int]:
        """Counts per kind: what a dry run prints."""
        return {"Dataset": len(self.datasets), **self.figures,
                **{label: int((self.members["label"] == label).sum())
                   for label in ("Learner", "KnowledgeState")}, "Run": len(self.runs)}


def _catalogues_of(store: GraphStore, dataset: str) -> list[str]:
    """Datasets whose source is a catalogue provenance (JSON) naming ``dataset``."""
    out = []
    for dataset_id, source in store.nodes("Dataset")[["id", "source"]].itertuples(index=False):
        try:
            provenance = json.loads(source) if isinstance(source, str) else None
        except json.JSONDecodeError:  # a plain source line (a file name, a citation)
            continue
        if isinstance(provenance, dict) and provenance.get("dataset") == dataset and dataset_id != dataset:
            out.append(dataset_id)
    return out


def dataset_footprint(store: GraphStore, dataset: str) -> DatasetFootprint:
    """What belongs to ``dataset`` alone (see :class:`DatasetFootprint`).

    Raises
    ------
    UnknownIdError
        When the graph has no such dataset; the message lists the datasets it has.
    """
    stats = {row["datasetId"]: row for row in store.run("datasets")}
    if dataset not in stats:
        raise UnknownIdError(f"no dataset {dataset!r} in the graph; it has: {', '.join(stats) or 'none'}")
    datasets = [dataset, *_catalogues_of(store, dataset)]
    figures = {key: int(sum(stats[d][key] for d in datasets))
               for key in ("questions", "assesses", "answers", "questionPrerequisites")}
    members = pd.concat([store.frame("dataset_members", {"dataset": d}) for d in datasets], ignore_index=True)
    runs = store.frame("run_list", {"evaluator": "", "model": "", "dataset": ""})
    owned = [run for run, on in zip(runs["runId"], runs["dataset"], strict=True)
             if isinstance(on, str) and set(on.split("+")) <= set(datasets)]
    return DatasetFootprint(dataset, datasets, figures, members.drop_duplicates(ignore_index=True), owned)


def delete_dataset(store: GraphStore, dataset: str) -> DatasetFootprint:
    """Delete ``dataset`` and what belongs to it alone; return what was deleted.

    Its runs first (:func:`delete_run`: Responses, CoT steps, lone model learners), then
    its Questions with every edge they have (answers, Q-matrix links, derived and
    learned prerequisites, state memberships), its KnowledgeStates, its Learners of no
    other dataset, its catalogues the same way, and the Dataset nodes. Frameworks,
    concepts and every other dataset are untouched.

    Raises
    ------
    UnknownIdError
        When the graph has no such dataset.
    """
    footprint = dataset_footprint(store, dataset)
    for run_id in footprint.runs:
        delete_run(store, run_id)
    for label in ("Question", "KnowledgeState", "Learner"):
        store.delete_nodes(label, footprint.members.loc[footprint.members["label"] == label, "id"].tolist())
    store.delete_nodes("Dataset", footprint.datasets)
    return footprint
