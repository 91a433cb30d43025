"""``kstp db delete-dataset`` and ``kstp db export | import`` on both engines.

The graph (:func:`two_datasets`): the hand-made curriculum of tests/conftest.py with
dataset toy (strict Eq. 1: 12 edges) and the same items and answers again as dataset
toy2 (reflexive rule), a catalogue toy_cat built from two toy items, a stored
knowledge state of toy, and three model runs: m1 on toy and on toy2, m2 on toy alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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


def assert_nothing_created(location: str) -> None:
    """No embedded graph file was created at ``location``; a Neo4j database holds no node."""
    if location.startswith("ladybug:"):
        path = Path(location.split(":", 1)[1])
        left = sorted(p.name for p in path.parent.iterdir() if p.name.split(".")[0] == path.name)
        assert not left, left
    else:
        assert stats(location)["nodes"] == {}


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


def add_awkward_values(store):
    """Values a CSV round trip can break: quotes, commas, newlines, Unicode, a 200 KB cell,
    an empty string beside missing values, arrays, booleans, integers and doubles."""
    store.write_nodes("Question", pd.DataFrame([{
        "id": "toy:q1", "text": 'He said "a, b"\nthen;left — é 😀', "solution": "", "difficulty": 0.1 + 0.2,
        "embedding": [0.1, -2.5e-300, 1 / 3], "position": 7}, {"id": "toy:q2", "text": "x" * 200_000}]))
    store.write_nodes("Response", pd.DataFrame([{"id": "k1", "exemplars": ["toy:q3", "toy:q4"], "closed": False,
                                                "tokensOut": 2**40, "latencyS": 1e-9}]))
    store.write_nodes("CotStep", pd.DataFrame({"id": ["k1#1", "k1#2"], "stepId": [1, 2], "final": [False, True]}))
    store.write_relationships("HAS_STEP", "Response", "CotStep", pd.DataFrame({"from_id": "k1",
                                                                               "to_id": ["k1#1", "k1#2"]}))
    store.write_relationships("SUPPORTS", "CotStep", "CotStep", pd.DataFrame([{"from_id": "k1#1", "to_id": "k1#2"}]))


def files_of(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_round_trip_ladybug_neo4j_ladybug_gives_the_same_graph(neo4j_server, tmp_path, monkeypatch):
    from kstp.graph import schema
    from tests.conftest import connect_neo4j

    first = tmp_path / "first"
    with open_store(f"ladybug:{first}") as store:
        build_two_datasets(store, tmp_path)
        add_awkward_values(store)
        original = {label: store.nodes(label) for label in schema.node_labels()}
    with connect_neo4j(neo4j_server) as neo4j:
        neo4j.reset()
    monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
    steps = [(f"ladybug:{first}", "export", tmp_path / "a"), (neo4j_server.location, "import", tmp_path / "a"),
             (neo4j_server.location, "export", tmp_path / "b"), (f"ladybug:{tmp_path / 'second'}", "import",
                                                                tmp_path / "b"),
             (f"ladybug:{tmp_path / 'second'}", "export", tmp_path / "c")]
    for location, command, folder in steps:
        result = kstp(location, "db", command, folder)
        assert result.exit_code == 0, result.output
    # The command of the last export: the question texts hold line breaks, so its file is named multi-line.
    assert (f"neo4j-admin database import full neo4j --overwrite-destination=true --multiline-fields-format=v2 "
            f"--multiline-fields={tmp_path}/c/nodes/Question.csv \\\n--nodes=Framework={tmp_path}/c/nodes/"
            f"Framework.csv \\\n") in result.stderr
    assert "neo4j-admin database upload neo4j --from-path=dumps/" in result.stderr  # and the step to Aura
    exported = files_of(tmp_path / "a")
    assert len(exported) == 1 + 9 + 12  # the manifest, 9 labels (not Domain, Cluster), 12 (type, from, to) in use
    assert files_of(tmp_path / "b") == exported == files_of(tmp_path / "c")
    with connect_neo4j(neo4j_server) as neo4j:  # the server holds the declared types, not text
        types = neo4j._execute("MATCH (q:Question {id: 'toy:q1'}) RETURN valueType(q.position) AS position, "
                               "valueType(q.embedding) AS embedding, valueType(q.solution) AS solution", {}, "test")
    assert types.values.tolist() == [["INTEGER NOT NULL", "LIST<FLOAT NOT NULL> NOT NULL", "STRING NOT NULL"]]
    with open_store(f"ladybug:{tmp_path / 'second'}", read_only=True) as store:
        for label, rows in original.items():
            again = store.nodes(label)
            assert _cells(again) == _cells(rows), label
        q1 = store.nodes("Question", ["toy:q1"]).iloc[0]
    assert (q1["text"], q1["solution"], q1["answer"]) == ('He said "a, b"\nthen;left — é 😀', "", "3")


def _cells(frame: pd.DataFrame) -> list[list]:
    return [[_plain(v) for v in row] for row in frame.itertuples(index=False)]


def _plain(value):
    """A cell as a comparable value: arrays as tuples, every missing value as None."""
    if isinstance(value, np.ndarray | list):
        return tuple(np.asarray(value).tolist())
    return None if pd.isna(value) else value


def test_import_refuses_another_schema_version_or_a_changed_file(graph_location, tmp_path):
    source = f"ladybug:{tmp_path / 'source'}"
    with open_store(source) as store:
        load_toy(store, tmp_path)
    assert kstp(source, "db", "export", tmp_path / "out").exit_code == 0
    manifest_path = tmp_path / "out" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "schemaVersion": 99}))
    result = kstp(graph_location, "db", "import", tmp_path / "out")
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "has schema version 99; this kstp reads version 1" in result.stderr
    manifest_path.write_text(json.dumps(manifest))
    answers = tmp_path / "out" / "relationships" / "ANSWERED-Learner-Question.csv"
    answers.write_text(answers.read_text().replace('"true"', '"false"', 1))
    result = kstp(graph_location, "db", "import", tmp_path / "out")
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "ANSWERED-Learner-Question.csv does not match its SHA-256 in the manifest" in result.stderr
    assert_nothing_created(graph_location)  # either time: no empty graph file left behind (issue 43)
    again = kstp(source, "db", "export", tmp_path / "out")
    assert again.exit_code == 1 and "is not an empty folder; export into a new one" in again.stderr


def test_import_of_a_relationship_to_an_unknown_node_writes_nothing(graph_location, tmp_path):
    """A consistent manifest whose answers name a learner neither in the files nor in the graph: refused with
    the file, line and id before the first write (the nodes had been written, then the answers failed)."""
    import hashlib

    source = f"ladybug:{tmp_path / 'source'}"
    with open_store(source) as store:
        load_toy(store, tmp_path)
    assert kstp(source, "db", "export", tmp_path / "out").exit_code == 0
    answers = tmp_path / "out" / "relationships" / "ANSWERED-Learner-Question.csv"
    header, first, *rest = answers.read_text().splitlines(keepends=True)
    learner = first.split(",")[0]
    answers.write_text(header + first.replace(learner, '"ghost:learner"', 1) + "".join(rest))
    manifest_path = tmp_path / "out" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for entry in manifest["files"]:
        if entry["path"].endswith("ANSWERED-Learner-Question.csv"):
            entry["sha256"] = hashlib.sha256(answers.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest))
    result = kstp(graph_location, "db", "import", tmp_path / "out")
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1, result.output
    assert "ANSWERED-Learner-Question.csv:2: Learner 'ghost:learner' is neither in the export nor in the graph" \
        in result.stderr
    assert_nothing_created(graph_location)


def test_export_of_one_dataset_brings_its_framework_and_nothing_else(two_datasets, tmp_path):
    before = stats(two_datasets)
    result = kstp(two_datasets, "db", "export", tmp_path / "toy2", "--dataset", "toy2", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dataset"] == "toy2"
    copy = f"ladybug:{tmp_path / 'copy'}"
    result = kstp(copy, "db", "import", tmp_path / "toy2")
    assert result.exit_code == 0, result.output
    after = stats(copy)
    assert after["datasets"] == [d for d in before["datasets"] if d["datasetId"] == "toy2"]
    assert after["frameworks"] == before["frameworks"]
    # toy2's L1-L3 and model:m1 with its toy2 run and response; the toy framework's 6 concepts
    assert after["nodes"] == {"Concept": 6, "Dataset": 1, "Framework": 1, "Learner": 4, "Question": 8,
                              "Response": 1, "Run": 1}
    assert after["relationships"]["ANSWERED"] == 12  # 11 of toy2's learners and m1's toy2 answer, not its toy one
    assert kstp(two_datasets, "db", "export", tmp_path / "none", "--dataset", "nope").exit_code == 1
