"""``kstp db load``: neo4j-admin's bulk import into the empty database of a server kstp manages.

Against a throw-away server of the test's own (``own_server``: the load stops and starts
it), on real data: the Coherence Map and two learner datasets with their derived question
prerequisites, ingested by the loaders once online into the shared test server and once into
an embedded graph that ``kstp db load`` exports and imports. No mocks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from kstp.graph import schema
from kstp.graph.ladybug import LadybugStore
from kstp.graph.structures import derive_question_prerequisites
from kstp.loaders import items, responses
from kstp.loaders.standards import load_standards
from tests.conftest import connect_neo4j as connect
from tests.graph.servers import child_env, credentials, kstp, one_error_line

DATASETS = {"frcsub": ("items.csv", "qmatrix.csv", "skills.csv", "responses.csv"),
            "probability_pks": ("items.csv", "qmatrix.csv", "skills.csv", "responses_full.csv")}


def ingest_real_data(store, root) -> None:
    """The demo's small part through the loaders: the Coherence Map, two datasets, Eq. 1 on each."""
    load_standards(store, root / "standards/nys_concepts.json")
    for dataset, (item_file, qmatrix, skills, answers) in DATASETS.items():
        folder = root / "responses" / dataset
        items.write_items(store, items.read_items_csv(folder / item_file, dataset, folder / qmatrix, folder / skills))
        known = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
        responses.write_answers(store, dataset, responses.read_wide(folder / answers, known), answers)
        derive_question_prerequisites(store, dataset, "reflexive")


def cells(frame: pd.DataFrame) -> list[tuple]:
    """Rows as comparable tuples: arrays as tuples, every missing value as None."""
    def plain(value):
        if isinstance(value, np.ndarray | list):
            return tuple(np.asarray(value).tolist())
        return None if pd.isna(value) else value
    return [tuple(plain(v) for v in row) for row in frame.itertuples(index=False)]


def test_db_load_equals_the_online_ingest_property_by_property(own_server, neo4j_server, data_root, tmp_path):
    """The bulk load of an embedded graph gives the Neo4j graph that the online ingest of the same
    files gives: every label's nodes and every relationship type's edges, each with every
    property, equal; the report counts them and the server answers again afterwards."""
    with connect(neo4j_server) as online:
        online.reset()
        ingest_real_data(online, data_root)
    stage = tmp_path / "stage"
    with LadybugStore(stage) as embedded:
        embedded.ensure_schema()
        ingest_real_data(embedded, data_root)
    target = own_server.target
    done = kstp("--graph", target.location, "db", "load", f"ladybug:{stage}", "--home", str(own_server.home),
                "--json", env=credentials(target), timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["seconds"]) >= {"export", "stop", "import", "start", "schema"}
    with connect(target) as bulk, connect(neo4j_server) as online:
        for label in schema.node_labels():
            assert cells(bulk.nodes(label)) == cells(online.nodes(label)), label
        total = 0
        for rel in schema.rel_types().values():
            for a, b in rel.endpoints:
                loaded = bulk.relationships(rel.name, a, b)
                assert cells(loaded) == cells(online.relationships(rel.name, a, b)), (rel.name, a, b)
                total += len(loaded)
        assert total == report["relationships"] > 0
        assert sum(r["count"] for r in bulk.run("node_counts")) == report["nodes"]
        assert bulk.run("relationship_counts") == online.run("relationship_counts")
        constraints = bulk._run("SHOW CONSTRAINTS YIELD name RETURN name", {}, "test")["name"]
        assert {"learner_id", "question_id", "concept_id"} <= set(constraints)  # the schema after the import
    # the server the load started again runs with kstp's JVM options: the throughput collector, not G1
    pid = (own_server.home / "run" / "neo4j.pid").read_text().strip()
    command = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    assert "-XX:+UseParallelGC" in command and "-XX:+UseG1GC" not in command, command


def test_db_load_refuses_a_server_it_does_not_manage_or_a_database_that_holds_data(own_server, neo4j_server,
                                                                                   tmp_path):
    """Exit 1 with one line and the fix, the server left running: a URI that is not the managed
    server's, and a database that holds a node (the load replaces a database whole)."""
    target = own_server.target
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"format": "kstp-graph-export", "schemaVersion":
                                                      schema.SCHEMA_VERSION, "files": []}))
    other = kstp("--graph", neo4j_server.location, "db", "load", str(folder), "--home", str(own_server.home),
                 env=credentials(neo4j_server))
    assert other.returncode == 1
    assert "is not the Neo4j server kstp manages" in one_error_line(other.stderr)
    pid = (own_server.home / "run" / "neo4j.pid").read_text()
    with connect(target) as graph:
        graph.reset()
        graph.write_nodes("Dataset", pd.DataFrame({"id": ["kept"]}))
    full = kstp("--graph", target.location, "db", "load", str(folder), "--home", str(own_server.home),
                env=credentials(target))
    assert full.returncode == 1
    assert "holds 1 nodes; kstp db load replaces a database whole" in one_error_line(full.stderr)
    assert (own_server.home / "run" / "neo4j.pid").read_text() == pid  # never stopped
    with connect(target) as graph:
        assert graph.nodes("Dataset")["id"].tolist() == ["kept"]
        graph.reset()


FAILING_EXPORT = """
import sys
from pathlib import Path
from kstp.graph.bulk import bulk_load
from kstp.graph.local_server import LocalServer

def export(folder):
    folder.mkdir(parents=True)
    (folder / "Learner.csv").write_text("id:ID(Learner)\\n")
    raise OSError(28, "No space left on device")

home, uri, user, password, folder = sys.argv[1:]
try:
    bulk_load(LocalServer.at(Path(home)), uri, user, password, folder, export=export)
except OSError as exc:
    print("raised", exc.errno)
"""


def test_an_export_that_fails_while_the_server_stops_leaves_it_running_and_empty(own_server, tmp_path):
    """``bulk_load`` writes the export while the server stops; when the export fails half-way
    (a file written, then an error), the error reaches the caller, nothing is imported, and the
    server answers again, started anew, with the database as it was: empty. (In a fresh
    interpreter, so the restarted server is not this process's child when the fixture stops it.)"""
    target = own_server.target
    with connect(target) as graph:
        graph.reset()
    pid = (own_server.home / "run" / "neo4j.pid").read_text()
    done = subprocess.run([sys.executable, "-c", FAILING_EXPORT, str(own_server.home), target.location, target.user,
                           target.password, str(tmp_path / "export")], capture_output=True, text=True, timeout=300,
                          env=child_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["raised", "28"]
    assert (own_server.home / "run" / "neo4j.pid").read_text() != pid  # stopped, then started again
    with connect(target) as graph:
        assert graph._run("MATCH (n) RETURN count(n) AS n", {}, "test")["n"].iloc[0] == 0
