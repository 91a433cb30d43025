"""``kstp db delete-dataset`` and ``kstp db export | import`` on both engines.

The graph (:func:`two_datasets`): the hand-made curriculum of tests/conftest.py with
dataset toy (strict Eq. 1: 12 edges) and the same items and answers again as dataset
toy2 (reflexive rule), a catalogue toy_cat built from two toy items, a stored
knowledge state of toy, and three model runs: m1 on toy and on toy2, m2 on toy alone.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.graph.factory import open_store
from kstp.graph.structures import derive_question_prerequisites
from kstp.inference.backend import Sampling
from kstp.inference.runs import RunSpec, open_run, write_responses
from kstp.loaders import items, responses
from tests.conftest import load_toy, write_toy_files


def kstp(location, *args):
    return CliRunner().invoke(cli, ["--graph", str(location), *map(str, args)])


def _model_run(store, model, dataset, question, key):
    run_id, _ = open_run(store, RunSpec("answers", "1.0", model, "local", dataset, Sampling(), "t" * 64))
    learner = f"model:{model}"
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": model}]))
    write_responses(store, run_id, learner, pd.DataFrame([{"id": key, "question": question, "sampleIndex": 0}]))
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        [{"from_id": learner, "to_id": question, "correct": True, "runId": run_id}]))


def build_two_datasets(store, folder):
    """The graph of the module docstring."""
    load_toy(store, folder)
    paths = write_toy_files(folder)
    items.write_items(store, items.read_items_jsonl(paths["items"], "toy2", "toy",
                                                    items.framework_concepts(store, "toy")))
    known = set(store.frame("dataset_questions", {"dataset": "toy2"})["localId"])
    responses.write_answers(store, "toy2", responses.read_long(paths["answers"], known), "toy_answers.csv")
    derive_question_prerequisites(store, "toy", "strict")
    derive_question_prerequisites(store, "toy2", "reflexive")
    store.write_nodes("Dataset", pd.DataFrame([{"id": "toy_cat", "name": "two toy tasks",
                                                "source": json.dumps({"dataset": "toy", "items": "q1, q2"})}]))
    store.write_nodes("Question", pd.DataFrame({"id": ["toy_cat:q1", "toy_cat:q2"], "dataset": "toy_cat"}))
    store.write_relationships("IN_DATASET", "Question", "Dataset",
                              pd.DataFrame({"from_id": ["toy_cat:q1", "toy_cat:q2"], "to_id": "toy_cat"}))
    store.write_relationships("PREREQUISITE_OF", "Question", "Question", pd.DataFrame(
        [{"from_id": "toy_cat:q1", "to_id": "toy_cat:q2", "rule": "catalogue"}]))
    store.write_nodes("KnowledgeState", pd.DataFrame([{"id": "toy:state", "dataset": "toy", "size": 1}]))
    store.write_relationships("CONTAINS", "KnowledgeState", "Question",
                              pd.DataFrame([{"from_id": "toy:state", "to_id": "toy:q1"}]))
    _model_run(store, "m1", "toy", "toy:q1", "k1")
    _model_run(store, "m1", "toy2", "toy2:q1", "k2")
    _model_run(store, "m2", "toy", "toy:q2", "k3")


@pytest.fixture
def two_datasets(graph_location, tmp_path):
    with open_store(graph_location) as store:
        build_two_datasets(store, tmp_path)
    return graph_location


def stats(location) -> dict:
    result = kstp(location, "db", "stats", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_delete_dataset_dry_run_counts_and_changes_nothing(two_datasets):
    before = stats(two_datasets)
    result = kstp(two_datasets, "db", "delete-dataset", "toy", "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    # toy and toy_cat; 8 + 2 questions; 11 toy answers + m1's and m2's; 12 Eq. 1 edges + the catalogue's one;
    # L1-L3 of toy and m2 (m1 answered toy2 too); the stored state; the runs of m1 and m2 on toy
    assert json.loads(result.stdout)["deleted"] == {"Dataset": 2, "questions": 10, "assesses": 9, "answers": 13,
                                                    "questionPrerequisites": 13, "Learner": 4,
                                                    "KnowledgeState": 1, "Run": 2}
    assert stats(two_datasets) == before


def test_delete_dataset_leaves_every_other_dataset_as_it_was(two_datasets):
    before = stats(two_datasets)
    result = kstp(two_datasets, "db", "delete-dataset", "toy")
    assert result.exit_code == 0, result.output
    assert "deleted dataset toy: 2 Dataset, 10 questions" in result.stderr
    after = stats(two_datasets)
    assert after["datasets"] == [d for d in before["datasets"] if d["datasetId"] == "toy2"]
    assert after["frameworks"] == before["frameworks"]
    assert after["nodes"] == {"Concept": 6, "Dataset": 1, "Framework": 1, "Learner": 4, "Question": 8,
                              "Response": 1, "Run": 1}  # toy2's L1-L3 and model:m1, with its toy2 run
    kept = before["relationships"]
    assert after["relationships"] == {
        "ANSWERED": 12, "ASSESSES": kept["ASSESSES"] - 9, "GAVE": 1, "IN_DATASET": 8, "IN_RUN": 1, "PART_OF": 6,
        "PREREQUISITE_OF": 5 + before["datasets"][1]["questionPrerequisites"], "TO": 1}
    missing = kstp(two_datasets, "db", "delete-dataset", "toy")
    assert missing.exit_code == 1 and "no dataset 'toy' in the graph; it has: toy2" in missing.stderr
