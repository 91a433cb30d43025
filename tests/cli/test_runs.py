"""``kstp runs list | show | delete`` on both engines, over runs written as evaluators write them.

The graph: the hand-made curriculum of tests/conftest.py and four runs on dataset toy,
written through kstp.inference.runs (no model needed):

    A  answers, model m1, 2 samples: k1 (q1 #0, two CoT steps), k2 (q1 #1), k3 (q2 #0);
       ANSWERED m1 -> q1 (correct), m1 -> q2; 4 planned, 3 done, accuracy 0.5
    B  answers, model m1, another configuration: k3 (shared with A), k4 (q3 #0);
       ANSWERED m1 -> q3; accuracy 1.0
    C  answers, model m2: k5 (q4 #0); ANSWERED m2 -> q4
    F  blim on toy: careless 0.1 / guess 0.2 on q1 and q2, learner toy:L1 in state s;
       log-likelihood -12.5
"""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.graph.factory import open_store
from kstp.inference.backend import Sampling
from kstp.inference.runs import RunSpec, finish_run, open_run, write_responses
from tests.conftest import load_toy

BLIM = "blim:toy:space:ML:000000000000"


def _answered(store, learner, rows, run_id):
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        [{"from_id": learner, "to_id": q, "correct": ok, "runId": run_id} for q, ok in rows]))


def _run(store, model, template, responses, answered, **figures):
    spec = RunSpec("answers", "1.0", model, "openai", "toy", Sampling(n=2), template,
                   endpoint={"backend": "openai", "baseUrl": "http://127.0.0.1:8000/v1"})
    run_id, _ = open_run(store, spec, new_run=True)
    learner = f"model:{model}"
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": model}]))
    write_responses(store, run_id, learner, pd.DataFrame(responses, columns=["id", "question", "sampleIndex"]))
    _answered(store, learner, answered, run_id)
    finish_run(store, run_id, "finished", **figures)
    return run_id


@pytest.fixture
def runs_graph(graph_location, tmp_path):
    """The graph of the module docstring; returns (location, {name: run id})."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
        a = _run(store, "m1", "a" * 64, [("k1", "toy:q1", 0), ("k2", "toy:q1", 1), ("k3", "toy:q2", 0)],
                 [("toy:q1", True), ("toy:q2", False)], requested=4, completed=3, accuracy=0.5)
        store.write_nodes("CotStep", pd.DataFrame({"id": ["k1#1", "k1#2"], "stepId": [1, 2]}))
        store.write_relationships("HAS_STEP", "Response", "CotStep",
                                  pd.DataFrame({"from_id": "k1", "to_id": ["k1#1", "k1#2"]}))
        store.write_relationships("SUPPORTS", "CotStep", "CotStep", pd.DataFrame([{"from_id": "k1#1",
                                                                                  "to_id": "k1#2"}]))
        b = _run(store, "m1", "b" * 64, [("k3", "toy:q2", 0), ("k4", "toy:q3", 0)], [("toy:q3", True)],
                 requested=2, completed=2, accuracy=1.0)
        c = _run(store, "m2", "c" * 64, [("k5", "toy:q4", 0)], [("toy:q4", True)], requested=2, completed=1)
        store.write_nodes("Run", pd.DataFrame([{"id": BLIM, "evaluator": "blim", "dataset": "toy",
                                                "finishedAt": "2026-01-01T00:00:00+00:00", "status": "finished",
                                                "logLikelihood": -12.5}]))
        store.write_nodes("Question", pd.DataFrame({"id": ["toy:q1", "toy:q2"], "careless": 0.1, "guess": 0.2,
                                                    "blimRunId": BLIM}))
        store.write_nodes("Learner", pd.DataFrame([{"id": "toy:L1", "blimStateId": "s", "blimPosterior": 0.9,
                                                    "blimRunId": BLIM}]))
    return graph_location, {"A": a, "B": b, "C": c, "F": BLIM}


def kstp(location, *args):
    return CliRunner().invoke(cli, ["--graph", location, *args])


def counts(location) -> dict:
    stats = json.loads(kstp(location, "db", "stats", "--json").stdout)
    return {**stats["nodes"], **stats["relationships"]}


def test_runs_list_filters_and_headline(runs_graph):
    location, ids = runs_graph
    result = kstp(location, "runs", "list", "--json")
    assert result.exit_code == 0, result.output
    rows = {r["runId"]: r for r in json.loads(result.stdout)}
    assert set(rows) == set(ids.values())
    assert {k: rows[ids["A"]][k] for k in ("evaluator", "model", "endpoint", "dataset", "status", "done",
                                           "planned", "figure", "value")} == {
        "evaluator": "answers", "model": "m1", "endpoint": "http://127.0.0.1:8000/v1", "dataset": "toy",
        "status": "finished", "done": 3, "planned": 4, "figure": "accuracy", "value": 0.5}
    assert (rows[BLIM]["figure"], rows[BLIM]["value"], rows[BLIM]["created"]) == \
        ("logLikelihood", -12.5, "2026-01-01T00:00:00+00:00")
    assert rows[ids["C"]]["value"] is None  # no accuracy written on C
    listed = json.loads(kstp(location, "runs", "list", "--model", "m1", "--json").stdout)
    assert {r["runId"] for r in listed} == {ids["A"], ids["B"]}
    assert [r["runId"] for r in json.loads(kstp(location, "runs", "list", "--evaluator", "blim", "--json").stdout)] \
        == [BLIM]
    assert json.loads(kstp(location, "runs", "list", "--dataset", "frcsub", "--json").stdout) == []
    table = kstp(location, "runs", "list").stdout
    assert ids["A"] in table and "<NA>" not in table  # the BLIM run plans no samples: blank cells


def test_a_run_whose_process_is_gone_lists_as_interrupted_with_its_stored_count(runs_graph):
    """Issue 43: a run killed with kill -9 never writes its end and stayed 'running' with blank counts. Its
    process is named on the Run; gone, the run lists as interrupted with the completions it stored (C: 1)."""
    import subprocess
    import sys

    location, ids = runs_graph
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with open_store(location) as store:
        store.write_nodes("Run", pd.DataFrame([{"id": ids["C"], "status": "running", "completed": None,
                                                "pid": int(gone.stdout), "finishedAt": None}]))
        store.write_nodes("Run", pd.DataFrame([{"id": ids["B"], "status": "running", "pid": os.getpid()}]))
    rows = {r["runId"]: r for r in json.loads(kstp(location, "runs", "list", "--json").stdout)}
    assert (rows[ids["C"]]["status"], rows[ids["C"]]["done"]) == (f"interrupted (process {gone.stdout.strip()} "
                                                                  "is gone)", 1)
    assert rows[ids["B"]]["status"] == "running"  # this process: alive


def test_runs_show_gives_identity_and_holdings(runs_graph):
    location, ids = runs_graph
    result = kstp(location, "runs", "show", ids["A"], "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["run"]["config"]["endpoint"] == {"backend": "openai", "baseUrl": "http://127.0.0.1:8000/v1"}
    assert shown["run"]["config"]["promptTemplateHash"] == "a" * 64
    assert (shown["run"]["accuracy"], shown["run"]["status"]) == (0.5, "finished")
    assert shown["holds"] == {"Run": 1, "Response": 2, "sharedResponses": 1, "CotStep": 2, "Learner": 0,
                              "ANSWERED": 2, "SCORED_ON": 0, "ASSESSES": 0, "LEARNED_PREREQUISITE_OF": 0,
                              "outcomeProperties": 0}
    missing = kstp(location, "runs", "show", ids["A"][:-1])
    assert missing.exit_code == 1
    assert f"no run {ids['A'][:-1]!r} in the graph; did you mean {ids['A']}" in missing.stderr


def test_runs_delete_dry_run_changes_nothing_then_delete_removes_only_the_run(runs_graph):
    location, ids = runs_graph
    before = counts(location)
    dry = kstp(location, "runs", "delete", ids["A"], "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["deleted"]["Response"] == 2
    assert counts(location) == before
    assert kstp(location, "runs", "delete", ids["A"]).exit_code == 0
    after = counts(location)
    # k1, k2 and the two steps of k1 go; k3 stays with run B; model:m1 stays (it gave B's answers)
    gone = {"CotStep", "HAS_STEP", "SUPPORTS"}  # db stats lists only what the graph holds
    assert after == {**{k: v for k, v in before.items() if k not in gone}, "Run": 3, "Response": 3,
                     "ANSWERED": before["ANSWERED"] - 2, "GAVE": 3, "TO": 3, "IN_RUN": 3}
    b = json.loads(kstp(location, "runs", "show", ids["B"], "--json").stdout)["holds"]
    assert (b["Response"], b["sharedResponses"], b["ANSWERED"], b["Learner"]) == (2, 0, 1, 1)
    assert kstp(location, "runs", "delete", ids["C"]).exit_code == 0
    assert counts(location)["Learner"] == before["Learner"] - 1  # model:m2 had no other run


def test_runs_delete_blim_clears_its_outcome_properties(runs_graph):
    location, _ = runs_graph
    assert json.loads(kstp(location, "runs", "delete", BLIM, "--json").stdout)["deleted"]["outcomeProperties"] == 3
    with open_store(location) as store:
        questions = store.nodes("Question", ["toy:q1", "toy:q2", "toy:q3"])
        learner = store.nodes("Learner", ["toy:L1"]).iloc[0]
    assert questions[["careless", "guess", "blimRunId"]].isna().all().all()
    assert pd.isna(learner["blimStateId"]) and pd.isna(learner["blimRunId"]) and learner["kind"] == "human"
