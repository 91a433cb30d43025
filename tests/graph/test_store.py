"""The Ladybug store: idempotent bulk writes, updates, deletes, reset, bad writes."""

from __future__ import annotations

import pandas as pd
import pytest

from kstp.errors import InputError, UnknownIdError
from kstp.graph.factory import open_store
from kstp.graph.store import WriteReport


def concepts(store):
    return store._execute("MATCH (c:Concept) RETURN c.id AS id, c.code AS code ORDER BY id", {}).values.tolist()


def test_write_nodes_creates_updates_and_skips_unchanged(store):
    frame = pd.DataFrame({"id": ["a", "b", "c"], "code": ["A", "B", "C"]})
    assert store.write_nodes("Concept", frame) == WriteReport(created=3)
    assert store.write_nodes("Concept", frame) == WriteReport(unchanged=3)
    changed = pd.DataFrame({"id": ["a", "b", "d"], "code": ["A", "B2", "D"]})
    assert store.write_nodes("Concept", changed) == WriteReport(created=1, updated=1, unchanged=1)
    assert concepts(store) == [["a", "A"], ["b", "B2"], ["c", "C"], ["d", "D"]]


def test_write_nodes_later_duplicate_row_wins(store):
    store.write_nodes("Concept", pd.DataFrame({"id": ["a", "a"], "code": ["first", "second"]}))
    assert concepts(store) == [["a", "second"]]


def test_write_relationships_idempotent_and_updates_properties(store):
    store.write_nodes("Concept", pd.DataFrame({"id": ["a", "b", "c"]}))
    edges = pd.DataFrame({"from_id": ["a", "b"], "to_id": ["b", "c"], "source": ["x", "x"]})
    assert store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", edges) == WriteReport(created=2)
    assert store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", edges) == WriteReport(unchanged=2)
    edges.loc[1, "source"] = "y"
    assert store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", edges) == WriteReport(updated=1,
                                                                                                    unchanged=1)
    rows = store.frame("concept_prerequisites", {"framework": "none"})
    assert rows.empty  # framework property unset: the query scopes by framework
    got = store._execute("MATCH (a)-[r:PREREQUISITE_OF]->(b) RETURN a.id, b.id, r.source ORDER BY a.id", {})
    assert got.values.tolist() == [["a", "b", "x"], ["b", "c", "y"]]


def test_delete_relationships_removes_only_named_pairs(store):
    store.write_nodes("Concept", pd.DataFrame({"id": ["a", "b", "c"]}))
    store.write_relationships("PREREQUISITE_OF", "Concept", "Concept",
                              pd.DataFrame({"from_id": ["a", "b"], "to_id": ["b", "c"]}))
    pair = pd.DataFrame({"from_id": ["a"], "to_id": ["b"]})
    store.delete_relationships("PREREQUISITE_OF", "Concept", "Concept", pair)
    got = store._execute("MATCH (a)-[r:PREREQUISITE_OF]->(b) RETURN a.id, b.id", {})
    assert got.values.tolist() == [["b", "c"]]


def test_missing_endpoint_is_an_unknown_id(store):
    store.write_nodes("Concept", pd.DataFrame({"id": ["a"]}))
    with pytest.raises(UnknownIdError, match="endpoint missing"):
        pair = pd.DataFrame({"from_id": ["a"], "to_id": ["zz"]})
        store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", pair)


def test_unknown_property_label_and_pair_are_refused(store):
    with pytest.raises(InputError, match="Concept has no property 'colour'"):
        store.write_nodes("Concept", pd.DataFrame({"id": ["a"], "colour": ["red"]}))
    with pytest.raises(KeyError, match="unknown node label 'Concpt'"):
        store.write_nodes("Concpt", pd.DataFrame({"id": ["a"]}))
    with pytest.raises(KeyError, match="ASSESSES does not join Concept to Question"):
        store.write_relationships("ASSESSES", "Concept", "Question", pd.DataFrame({"from_id": ["a"], "to_id": ["b"]}))
    with pytest.raises(InputError, match="non-empty 'id'"):
        store.write_nodes("Concept", pd.DataFrame({"id": [None]}))


def test_reset_empties_the_graph(store, tmp_path):
    store.write_nodes("Concept", pd.DataFrame({"id": ["a", "b"]}))
    store.reset()
    assert store.run("node_counts") == []
    assert store.write_nodes("Concept", pd.DataFrame({"id": ["a"]})) == WriteReport(created=1)


def test_open_store_from_location_string(tmp_path):
    """Ladybug only: a ladybug:PATH string; Neo4j URIs are opened by every Neo4j test."""
    with open_store(f"ladybug:{tmp_path / 'g'}") as graph:
        assert graph.engine == "ladybug"
        assert graph.run("node_counts") == []


def test_all_null_typed_update_is_accepted(store):
    """Ladybug types an all-null parameter column as STRING; updates cast it."""
    store.write_nodes("Learner", pd.DataFrame({"id": ["a"], "psrMicro": [0.5]}))
    report = store.write_nodes("Learner", pd.DataFrame({"id": ["a"], "psrMicro": [None], "nAnswered": [None]}))
    assert report.updated == 1
    assert store._execute("MATCH (l:Learner) RETURN l.psrMicro AS x", {})["x"].isna().all()


def test_folder_as_graph_path_is_explained(tmp_path):
    """Ladybug only: a graph there is a file path; Neo4j has no path."""
    from kstp.errors import ConfigError
    from kstp.graph.ladybug import LadybugStore

    with pytest.raises(ConfigError, match="is a folder; a Ladybug graph is a file path"):
        LadybugStore(tmp_path)


def test_graph_from_older_model_gains_new_properties_and_pairs(tmp_path):
    """Ladybug only: its tables are typed, so a newer model must alter them; Neo4j is schemaless."""
    import ladybug

    from kstp.graph.ladybug import LadybugStore

    path = tmp_path / "old"
    db = ladybug.Database(str(path))
    conn = ladybug.Connection(db)
    conn.execute("CREATE NODE TABLE Concept(id STRING, framework STRING, PRIMARY KEY(id))")
    conn.execute("CREATE REL TABLE PREREQUISITE_OF(FROM Concept TO Concept, source STRING)")
    conn.execute("CREATE (:Concept {id: 'a', framework: 'f'})")
    conn.close()
    db.close()
    graph = LadybugStore(path)
    graph.ensure_schema()
    graph.write_nodes("Concept", pd.DataFrame([{"id": "a", "code": "A.1"}, {"id": "b", "code": "B.1"}]))
    graph.write_nodes("Question", pd.DataFrame([{"id": "q1"}, {"id": "q2"}]))
    graph.write_relationships("PREREQUISITE_OF", "Question", "Question",
                              pd.DataFrame([{"from_id": "q1", "to_id": "q2", "rule": "strict"}]))
    rows = graph._execute("MATCH (c:Concept) RETURN c.id AS id, c.framework AS f, c.code AS code ORDER BY id", {})
    rows = rows.astype(object).where(rows.notna(), None)
    assert rows.to_dict("records") == [{"id": "a", "f": "f", "code": "A.1"}, {"id": "b", "f": None, "code": "B.1"}]
    rules = graph._execute("MATCH (:Question)-[r:PREREQUISITE_OF]->(:Question) RETURN r.rule AS rule", {})
    assert rules["rule"].tolist() == ["strict"]
    graph.close()


def test_engine_error_is_one_line_naming_the_query(store):
    from kstp.errors import QueryError

    engine = {"ladybug": "Ladybug", "neo4j": "Neo4j"}[store.engine]
    with pytest.raises(QueryError, match=rf"(?i)^query probe failed on {engine} \(.+\): .*nope_function") as caught:
        store._execute("RETURN nope_function(1) AS x", {}, "probe")  # the runner every named query goes through
    assert "\n" not in str(caught.value)


def test_bulk_read_equals_the_plain_read_with_nulls_and_order(store):
    """``frame(categorical=True)`` (one record of row lists on Neo4j) gives the plain read's rows, in order."""
    store.write_nodes("Dataset", pd.DataFrame([{"id": "d", "name": "d"}]))
    store.write_nodes("Question", pd.DataFrame({"id": ["q3", "q1", "q2"], "dataset": "d", "localId": ["3", "1", "2"],
                                                "text": ["third", None, "second"], "position": [3, 1, 2]}))
    store.write_relationships("IN_DATASET", "Question", "Dataset",
                              pd.DataFrame({"from_id": ["q1", "q2", "q3"], "to_id": "d"}))
    plain = store.frame("dataset_questions", {"dataset": "d"})
    bulk = store.frame("dataset_questions", {"dataset": "d"}, categorical=True)
    assert isinstance(bulk["questionId"].dtype, pd.CategoricalDtype)
    assert bulk["questionId"].tolist() == plain["questionId"].tolist() == ["q1", "q2", "q3"]
    assert bulk["text"].astype(object).where(bulk["text"].notna(), None).tolist() == [None, "second", "third"]
    assert list(bulk.columns) == list(plain.columns)
    empty = store.frame("dataset_questions", {"dataset": "none"}, categorical=True)
    assert empty.empty and list(empty.columns) == list(plain.columns)


#: 150 small writes into a fresh embedded graph, as a model run writes each chunk of replies; prints peak RSS in MB.
SMALL_WRITES = """
import sys
import pandas as pd
from kstp.graph.ladybug import LadybugStore
store = LadybugStore(sys.argv[1])
store.ensure_schema()
for i in range(150):
    store.write_nodes("Question", pd.DataFrame([{"id": f"q{i}", "text": "x" * 4000}]))
store.close()
# VmHWM is this process's own peak; ru_maxrss would count the forking pytest process's too
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")) // 1024)
"""


def test_many_small_writes_keep_the_embedded_graph_small_in_memory(tmp_path):
    """Each ``COPY`` into a node table kept about 24 MB that no later write reused: these 150
    one-row writes, as a model run writes each chunk of replies, peaked at 3.8 GB (and failed with
    'the buffer pool is full' under a capped pool). Small writes now CREATE their nodes."""
    import subprocess
    import sys

    peak_mb = int(subprocess.run([sys.executable, "-c", SMALL_WRITES, str(tmp_path / "graph")], check=True,
                                 capture_output=True, text=True).stdout)
    assert peak_mb < 1000


@pytest.mark.parametrize("layout", ["one run", "runs and lone ids", "lone ids only"])
def test_write_relationships_compares_with_exactly_the_stored_rows_of_its_from_nodes(store, layout, monkeypatch):
    """The comparison read of a write takes the stored relationships of the written from-nodes and no
    others, whether they stand in runs among the stored ids (Ladybug reads a run by one id range, the other
    nodes inside it dropped), alone (IN lists) or are not stored at all: the counts are exact."""
    from kstp.graph import ladybug

    monkeypatch.setattr(ladybug, "IN_BATCH", 3)  # several IN lists for the lone ids
    monkeypatch.setattr(ladybug, "RANGE_GAP", 8)  # ids 50 apart stand alone; 2 apart (one other between) run
    # ids past ASCII too: the ranges follow the engine's order of strings, which must be Python's
    learners = [f"d:{first}{i:03d}" for first in ("L", "l", "Ä", "é", "😀", "ｚ") for i in range(100)]
    store.write_nodes("Question", pd.DataFrame({"id": ["d:q1", "d:q2"]}))
    store.write_nodes("Learner", pd.DataFrame({"id": learners, "kind": "human"}))
    stored = pd.DataFrame({"from_id": [a for a in learners for _ in (1, 2)], "to_id": ["d:q1", "d:q2"] * 600,
                           "correct": [True, False] * 600})
    assert store.write_relationships("ANSWERED", "Learner", "Question", stored) == WriteReport(created=1200)
    picked = {"one run": learners[100:400],
              "runs and lone ids": learners[10:40] + learners[::50] + learners[200:260:2] + learners[520:530:2],
              "lone ids only": learners[::300] + learners[7::97]}[layout]
    rows = stored[stored["from_id"].isin(picked)].reset_index(drop=True)
    rows.loc[rows["to_id"] == "d:q1", "correct"] = rows["from_id"].str.endswith("0")  # some change, some not
    new = pd.DataFrame({"id": ["d:new"], "kind": "human"})
    store.write_nodes("Learner", new)
    rows = pd.concat([rows, pd.DataFrame({"from_id": ["d:new"], "to_id": ["d:q1"], "correct": [True]})])
    changed = int((~rows["from_id"].str.endswith("0") & (rows["to_id"] == "d:q1")).sum()) - 1  # d:new is created
    assert store.write_relationships("ANSWERED", "Learner", "Question", rows) == \
        WriteReport(created=1, updated=changed, unchanged=len(rows) - 1 - changed)
    assert len(store.relationships("ANSWERED", "Learner", "Question")) == 1201


def test_ladybug_buffer_pool_is_capped_and_chosen_by_the_environment(tmp_path, monkeypatch):
    """Every database the embedded store opens gets :func:`buffer_pool_size`: 80 % of the machine's memory (the
    engine's own default) up to 8 GiB, or ``$KSTP_LADYBUG_BUFFER_POOL``; a value that is no size is one line."""
    import os

    import ladybug
    from click.testing import CliRunner

    from kstp.cli.main import cli
    from kstp.graph.ladybug import LadybugStore

    sizes, real = [], ladybug.Database
    monkeypatch.setattr(ladybug, "Database", lambda *args, **options: sizes.append(options["buffer_pool_size"])
                        or real(*args, **options))  # the engine's own constructor, its argument recorded
    monkeypatch.delenv("KSTP_LADYBUG_BUFFER_POOL", raising=False)
    with LadybugStore(tmp_path / "graph") as graph:
        graph.ensure_schema()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert sizes == [min(int(memory * 0.8), 8 << 30)]
    for text, size in (("1536m", 1536 << 20), ("2g", 2 << 30), ("3GiB", 3 << 30)):
        monkeypatch.setenv("KSTP_LADYBUG_BUFFER_POOL", text)
        with LadybugStore(tmp_path / "graph", read_only=True):
            assert sizes[-1] == size
    monkeypatch.setenv("KSTP_LADYBUG_BUFFER_POOL", "lots")
    result = CliRunner().invoke(cli, ["--graph", f"ladybug:{tmp_path / 'graph'}", "db", "stats"])
    assert (result.exit_code, result.stderr) == (1, "Error: KSTP_LADYBUG_BUFFER_POOL='lots' is no size: give one "
                                                    "such as 4g or 1536m\n")
