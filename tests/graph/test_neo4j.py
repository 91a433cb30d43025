"""The Neo4j store against the real Neo4j 5 server of the test run (tests/conftest.py).

The write tests take ``store`` and so run on both engines with the same expectations; the
Neo4j-only ones (schema DDL, reset, batching, credentials) test what only the Neo4j store
has; the parity test builds one small graph in each engine and compares the rows of every
registered query.
"""

from __future__ import annotations

import math
import socket
from unittest import mock

import neo4j
import numpy as np
import pandas as pd
import pytest

from kstp.errors import ConfigError, QueryError, UnknownIdError
from kstp.graph.factory import open_store
from kstp.graph.neo4j import Neo4jStore
from kstp.graph.queries import get_query
from kstp.graph.store import GraphStore, WriteReport
from kstp.settings import GraphTarget
from tests.conftest import connect_neo4j as connect


# ---- a tiny graph: 5 concepts (a diamond and a loner), 5 questions, 3 learners ----------
def _frame(columns: str, *rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=columns.split())


CONCEPT_PREREQUISITES = [("t:c1", "t:c2"), ("t:c2", "t:c3"), ("t:c1", "t:c4"), ("t:c4", "t:c3")]
QUESTION_PREREQUISITES = [("t:q1", "t:q2"), ("t:q2", "t:q3"), ("t:q1", "t:q4"), ("t:q4", "t:q3")]
ANSWERS = {"t:l1": {"t:q1": True, "t:q2": True, "t:q3": False, "t:q4": True, "t:q5": True},
           "t:l2": {"t:q1": False, "t:q2": True, "t:q3": True, "t:q4": False},
           "t:l3": {"t:q1": True, "t:q2": False, "t:q4": True, "t:q3": True}}


def build_tiny_graph(store: GraphStore) -> WriteReport:
    """Write the tiny graph through the store's bulk writes; what they reported, summed."""
    concepts = [f"t:c{i}" for i in range(1, 6)]
    questions = [f"t:q{i}" for i in range(1, 6)]
    report = WriteReport()
    report += store.write_nodes("Framework", _frame("id name source", ("t", "Tiny", "test")))
    report += store.write_nodes("Domain", _frame("id code name grade", ("t:D1", "D1", "Numbers", "3")))
    report += store.write_nodes("Cluster", _frame("id code name", ("t:K1", "K1", "Adding")))
    report += store.write_nodes("Concept", _frame(
        "id framework localId code description grade",
        *[(c, "t", c[2:], f"3.C.{i}", f"concept {i}", "3") for i, c in enumerate(concepts, 1)]))
    report += store.write_nodes("Dataset", _frame("id name source", ("ds", "Tiny set", "test")))
    report += store.write_nodes("Question", _frame(
        "id dataset localId text answer answerType position",
        *[(q, "ds", q[2:], f"question {i}?", str(i), "number", i) for i, q in enumerate(questions, 1)]))
    report += store.write_nodes("Learner", _frame(
        "id kind dataset localId", *[(learner, "human", "ds", learner[2:]) for learner in ANSWERS]))
    report += store.write_relationships("PART_OF", "Domain", "Framework", _frame("from_id to_id", ("t:D1", "t")))
    report += store.write_relationships("PART_OF", "Cluster", "Domain", _frame("from_id to_id", ("t:K1", "t:D1")))
    report += store.write_relationships("PART_OF", "Concept", "Cluster",
                                        _frame("from_id to_id", *[(c, "t:K1") for c in concepts[:4]]))
    report += store.write_relationships("PART_OF", "Concept", "Framework", _frame("from_id to_id", ("t:c5", "t")))
    report += store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", _frame(
        "from_id to_id source", *[(a, b, "test") for a, b in CONCEPT_PREREQUISITES]))
    report += store.write_relationships("RELATED_TO", "Concept", "Concept",
                                        _frame("from_id to_id source", ("t:c2", "t:c4", "test")))
    report += store.write_relationships("IN_DATASET", "Question", "Dataset",
                                        _frame("from_id to_id", *[(q, "ds") for q in questions]))
    report += store.write_relationships("ASSESSES", "Question", "Concept", _frame(
        "from_id to_id source verified", ("t:q1", "t:c1", "test", True), ("t:q2", "t:c2", "test", True),
        ("t:q3", "t:c3", "test", False), ("t:q4", "t:c4", "test", True), ("t:q4", "t:c1", "test", True)))
    report += store.write_relationships("PREREQUISITE_OF", "Question", "Question", _frame(
        "from_id to_id rule", *[(a, b, "eq1") for a, b in QUESTION_PREREQUISITES]))
    report += store.write_relationships("ANSWERED", "Learner", "Question", _frame(
        "from_id to_id correct runId timestamp position",
        *[(learner, q, correct, "run1", f"2026-01-0{i}T00:00:00", i)
          for learner, answers in ANSWERS.items() for i, (q, correct) in enumerate(answers.items(), 1)]))
    # DAG-MATH: one valid trajectory (1 -> 3, step 2 unused) and one invalid one in a run
    report += store.write_nodes("Run", _frame("id evaluator model dataset", ("t:run", "dagmath", "m", "ds")))
    report += store.write_nodes("Response", _frame("id sampleIndex correct cotValid cotError",
                                                   ("t:r1", 0, True, True, None), ("t:r2", 1, False, False, "cycle")))
    report += store.write_relationships("IN_RUN", "Response", "Run", _frame("from_id to_id", ("t:r1", "t:run"),
                                                                            ("t:r2", "t:run")))
    report += store.write_relationships("TO", "Response", "Question", _frame("from_id to_id", ("t:r1", "t:q1"),
                                                                             ("t:r2", "t:q1")))
    report += store.write_nodes("CotStep", _frame(
        "id stepId position node edge final", ("t:r1:1", 1, 0, "x = 1", "given", False),
        ("t:r1:2", 2, 1, "y = 2", "unused", False), ("t:r1:3", 3, 2, "\\boxed{1}", "from 1", True)))
    report += store.write_relationships("HAS_STEP", "Response", "CotStep", _frame(
        "from_id to_id", *[("t:r1", f"t:r1:{i}") for i in range(1, 4)]))
    report += store.write_relationships("SUPPORTS", "CotStep", "CotStep", _frame("from_id to_id", ("t:r1:1", "t:r1:3")))
    return report


# ---- no server needed -----------------------------------------------------------------------
def test_uri_with_credentials_is_refused_without_echoing_them():
    with pytest.raises(ConfigError) as info:
        Neo4jStore("neo4j://neo4j:s3cret-pw@localhost:7687", "neo4j", "other-pw")
    assert "s3cret-pw" not in str(info.value)
    assert "neo4j://localhost:7687" in str(info.value)


def test_unreachable_server_is_a_config_error_without_the_password():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConfigError) as info:
        Neo4jStore(f"bolt://127.0.0.1:{port}", "neo4j", "s3cret-pw")
    assert "s3cret-pw" not in str(info.value)
    assert f"127.0.0.1:{port}" in str(info.value)


def test_statements_run_in_managed_transactions_with_metadata(monkeypatch):
    import neo4j

    from kstp._version import __version__

    driver = mock.MagicMock()

    def answer(query, params, **_):  # the columnar existence read finds nothing; the CREATE counts its rows
        if "rows" in params:
            return pd.DataFrame({"n": [len(params["rows"])]})
        return pd.DataFrame({"__rows": [0], "id": [[]], "code": [[]]})

    driver.execute_query.side_effect = answer
    monkeypatch.setattr(neo4j.GraphDatabase, "driver", mock.MagicMock(return_value=driver))
    store = Neo4jStore("neo4j://localhost:7687", "neo4j", "s3cret-pw", database="kstp")
    assert "s3cret-pw" not in repr(store)
    store.write_nodes("Concept", _frame("id code", ("t:c1", "A"), ("t:c2", "B")))
    (read, _), read_kwargs = driver.execute_query.call_args_list[0]
    assert read.metadata == {"app": f"kstp/{__version__}", "query": "existing Concept"}
    assert read_kwargs["routing_"] == neo4j.RoutingControl.READ  # a read: a cluster's secondaries may answer it
    (query, params), kwargs = driver.execute_query.call_args
    assert isinstance(query, neo4j.Query) and query.text.startswith("UNWIND $rows AS row CREATE (n:Concept)")
    assert query.metadata == {"app": f"kstp/{__version__}", "query": "write Concept"}
    assert params == {"rows": [{"id": "t:c1", "code": "A"}, {"id": "t:c2", "code": "B"}]}  # no empty property
    assert kwargs["database_"] == "kstp" and kwargs["routing_"] == neo4j.RoutingControl.WRITE
    result = mock.MagicMock()
    result.keys.return_value = ["id", "code"]
    result.__iter__.return_value = iter([neo4j.Record({"id": "t:c1", "code": None})])
    assert kwargs["result_transformer_"](result).to_dict("records") == [{"id": "t:c1", "code": None}]
    store.close()
    driver.close.assert_called_once()


# ---- Neo4j only -----------------------------------------------------------------------------
def test_a_generated_password_that_starts_with_a_dash_is_set(neo4j_server, tmp_path, monkeypatch):
    """One install in 64 draws a password that starts with "-"; the admin tool once took it for an option,
    printed its help and set nothing (CI of stop 39: three tests of throw-away servers errored)."""
    from types import SimpleNamespace

    from tools import neo4j_server as server

    monkeypatch.setattr(server, "HOME", tmp_path)
    monkeypatch.setattr(server, "ENV_FILE", tmp_path / "neo4j.env")
    monkeypatch.setattr(server, "secrets", SimpleNamespace(token_urlsafe=lambda n: "-Xy_dash-first-0123456789abcdef"))
    server._write_conf()
    server._set_password()  # exits, naming the failure, when auth.ini is not written
    assert (tmp_path / "data" / "dbms" / "auth.ini").exists()
    assert server.read_env()["NEO4J_PASSWORD"] == "-Xy_dash-first-0123456789abcdef"


def test_ensure_schema_is_idempotent(neo4j_store):
    def constraints():
        return sorted(neo4j_store._execute("SHOW CONSTRAINTS YIELD name RETURN name", {}, "test")["name"])

    neo4j_store.ensure_schema()
    first = constraints()
    neo4j_store.ensure_schema()
    assert constraints() == first
    assert {"framework_id", "concept_id", "question_id", "learner_id", "dataset_id"} <= set(first)


def test_repr_and_errors_hold_no_password(neo4j_server, neo4j_store):
    password = neo4j_server.password
    assert password not in repr(neo4j_store)
    assert repr(neo4j_store) == f"Neo4jStore({neo4j_server.location!r})"
    with pytest.raises(ConfigError) as info:
        Neo4jStore(neo4j_server.location, neo4j_server.user, password + "-wrong")
    assert password not in str(info.value)


def test_reset_empties_the_graph_and_keeps_the_schema(neo4j_store):
    build_tiny_graph(neo4j_store)
    assert neo4j_store.run("node_counts")
    neo4j_store.reset()
    assert neo4j_store.run("node_counts") == []
    assert neo4j_store.run("relationship_counts") == []
    with pytest.raises(Exception, match="already exists"):  # the uniqueness constraints are still there
        neo4j_store._execute("CREATE (:Concept {id: 'x'}) CREATE (:Concept {id: 'x'})", {}, "test")


def test_writes_are_batched(neo4j_store, monkeypatch):
    import kstp.graph.neo4j as module

    monkeypatch.setattr(module, "BATCH_SIZE", 3)
    rows = _frame("id framework code", *[(f"t:c{i}", "t", f"C{i}") for i in range(10)])
    assert neo4j_store.write_nodes("Concept", rows) == WriteReport(created=10)
    assert neo4j_store.write_nodes("Concept", rows) == WriteReport(unchanged=10)
    assert len(neo4j_store.run("framework_concepts", {"framework": "t"})) == 10


@pytest.mark.parametrize("sessions", ["1", "3"])
def test_batches_read_ahead_come_in_order_and_whole(neo4j_store, monkeypatch, sessions):
    """Neo4j alone: ``frame_batches`` reads the next ranges on other sessions; the batches come as
    one session reads them, one learner each here, and the comparison read of a re-write finds
    every stored answer (FROM_BATCH 1: a batch per learner, read on the sessions at once)."""
    import kstp.graph.neo4j as module

    build_tiny_graph(neo4j_store)
    monkeypatch.setenv("KSTP_NEO4J_READERS", sessions)
    monkeypatch.setattr(module, "FROM_BATCH", 1)
    learners = sorted(ANSWERS)
    batches = list(neo4j_store.frame_batches("answer_keys_in_range", {"dataset": "ds"}, learners, 1))
    roster = neo4j_store.frame("dataset_learners", {"dataset": "ds"})
    learner_of = dict(zip(roster["learnerKey"], roster["learnerId"], strict=True))
    assert [sorted({learner_of[k] for k in b["learnerKey"]}) for b in batches] == [[x] for x in learners]
    assert [len(b) for b in batches] == [len(ANSWERS[x]) for x in learners]
    edges = _frame("from_id to_id correct", *[(x, q, ok) for x, answers in ANSWERS.items()
                                              for q, ok in answers.items()])
    assert neo4j_store.write_relationships("ANSWERED", "Learner", "Question", edges) == WriteReport(unchanged=13)


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_malformed_readers_setting_is_named(monkeypatch, value):
    from kstp.errors import ConfigError
    from kstp.graph.neo4j import readers

    monkeypatch.setenv("KSTP_NEO4J_READERS", value)
    with pytest.raises(ConfigError, match=f"KSTP_NEO4J_READERS must be a whole number from 1 .*got '{value}'"):
        readers()
    monkeypatch.setenv("KSTP_NEO4J_READERS", " 4 ")
    assert readers() == 4
    monkeypatch.delenv("KSTP_NEO4J_READERS")
    assert readers() == 2


def test_delete_nodes_removes_their_relationships_in_batches(neo4j_store, monkeypatch):
    """Neo4j alone: it deletes a node's relationships in bounded transactions before the node."""
    import kstp.graph.neo4j as module

    monkeypatch.setattr(module, "BATCH_SIZE", 3)
    neo4j_store.write_nodes("Concept", _frame("id framework", *[(f"t:c{i}", "t") for i in range(8)]))
    edges = _frame("from_id to_id", *[(f"t:c{i}", f"t:c{j}") for i in range(4) for j in range(4, 8)])
    neo4j_store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", edges)
    assert neo4j_store.delete_nodes("Concept", ["t:c0", "t:c1", "t:c1", "t:c4", "t:nowhere"]) == 5
    assert sorted(neo4j_store.nodes("Concept")["id"]) == ["t:c2", "t:c3", "t:c5", "t:c6", "t:c7"]
    assert neo4j_store.run("relationship_counts") == [{"type": "PREREQUISITE_OF", "count": 6}]  # c2, c3 -> c5..c7


# ---- both engines, same expectations --------------------------------------------------------
def test_write_nodes_counts(store):
    rows = _frame("id framework code", ("t:c1", "t", "A"), ("t:c2", "t", "B"), ("t:c3", "t", None))
    assert store.write_nodes("Concept", rows) == WriteReport(created=3)
    assert store.write_nodes("Concept", rows) == WriteReport(unchanged=3)
    changed = rows.copy()
    changed.loc[1, "code"] = "B2"
    assert store.write_nodes("Concept", changed) == WriteReport(updated=1, unchanged=2)
    more = pd.concat([changed, _frame("id framework code", ("t:c4", "t", "D"))], ignore_index=True)
    assert store.write_nodes("Concept", more) == WriteReport(created=1, unchanged=3)
    assert store.run("framework_concepts", {"framework": "t"}) == [
        {"conceptId": "t:c1", "localId": None, "code": "A"},
        {"conceptId": "t:c2", "localId": None, "code": "B2"},
        {"conceptId": "t:c3", "localId": None, "code": None},
        {"conceptId": "t:c4", "localId": None, "code": "D"},
    ]


def test_write_relationships_counts(store):
    store.write_nodes("Concept", _frame("id framework", *[(f"t:c{i}", "t") for i in range(1, 5)]))
    rows = _frame("from_id to_id source", ("t:c1", "t:c2", "a"), ("t:c2", "t:c3", "a"))
    assert store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", rows) == WriteReport(created=2)
    assert store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", rows) == WriteReport(unchanged=2)
    changed = _frame("from_id to_id source", ("t:c1", "t:c2", "a"), ("t:c2", "t:c3", "b"), ("t:c3", "t:c4", "a"))
    assert store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", changed) == WriteReport(1, 1, 1)
    assert store.run("concept_prerequisites", {"framework": "t"}) == [
        {"fromId": "t:c1", "toId": "t:c2", "source": "a"},
        {"fromId": "t:c2", "toId": "t:c3", "source": "b"},
        {"fromId": "t:c3", "toId": "t:c4", "source": "a"},
    ]


def test_write_relationships_refuses_a_missing_endpoint(store):
    store.write_nodes("Concept", _frame("id framework", ("t:c1", "t"), ("t:c2", "t")))
    rows = _frame("from_id to_id source", ("t:c1", "t:c2", "a"), ("t:c2", "t:nowhere", "a"))
    with pytest.raises(UnknownIdError):
        store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", rows)
    assert store.run("relationship_counts") == []  # refused whole: the good row is not written either


def test_tiny_graph_writes_are_idempotent(store):
    first = build_tiny_graph(store)
    assert first.updated == 0 and first.unchanged == 0 and first.created > 0
    assert build_tiny_graph(store) == WriteReport(unchanged=first.created)


# ---- parity: every registered query, the same rows on both engines --------------------------
K = ["t:q1", "t:q2"]
PARITY_CASES = [
    ("frameworks", {}), ("datasets", {}), ("dataset_members", {"dataset": "ds"}),
    ("node_counts", {}), ("relationship_counts", {}), ("question_count", {}),
    ("concept_ancestors", {"conceptId": "t:c3"}), ("concept_descendants", {"conceptId": "t:c1"}),
    ("concept_closure", {"framework": "t"}), ("concept_prerequisites", {"framework": "t"}),
    ("concept_cycles", {"framework": "t"}), ("curriculum_figures", {"framework": "t"}),
    ("framework_concepts", {"framework": "t"}), ("question_concepts", {"dataset": "ds"}),
    ("dataset_questions", {"dataset": "ds"}), ("dataset_concept_closure", {"dataset": "ds"}),
    ("dataset_concept_ancestors", {"dataset": "ds"}),
    ("question_prerequisites", {"dataset": "ds", "reflexive": False}),
    ("question_prerequisites", {"dataset": "ds", "reflexive": True}),
    ("question_prerequisite_edges", {"dataset": "ds"}), ("answers", {"dataset": "ds"}),
    ("answer_keys_in_range", {"dataset": "ds", "lo": "t:l1", "hi": "t:l2"}), ("question_keys", {"dataset": "ds"}),
    ("answer_codes_in_range", {"dataset": "ds", "lo": "t:l1", "hi": "t:l2"}),
    ("question_prerequisite_keys", {"dataset": "ds"}),
    ("knowledge_state", {"dataset": "ds", "learnerId": "t:l1"}),
    ("outer_fringe", {"dataset": "ds", "questionIds": ["t:q1"]}),
    ("outer_fringe", {"dataset": "ds", "questionIds": []}),
    ("inner_fringe", {"dataset": "ds", "questionIds": K}),
    ("outer_fringe_notions", {"dataset": "ds", "questionIds": ["t:q1"]}),
    ("inner_fringe_notions", {"dataset": "ds", "questionIds": K}),
    ("space_lower_bound", {"dataset": "ds"}),
    ("state_violations", {"dataset": "ds", "questionIds": ["t:q2", "t:q3"]}),
    ("learner_accuracy", {"dataset": "ds"}), ("psr_by_learner", {"dataset": "ds"}),
    ("question_answer_counts", {"dataset": "ds"}),
    ("psr_distribution", {"dataset": "ds", "minPrerequisites": 1}), ("dataset_learners", {"dataset": "ds"}),
    ("stored_states", {"dataset": "ds"}),
    ("knowledge_overlap", {"dataset": "ds", "learnerIds": ["t:l1", "t:l2", "t:l3"], "questionIds": K}),
    ("group_answers", {"dataset": "ds", "learnerIds": ["t:l1", "t:l3"], "questionIds": K}),
    ("question_prerequisite_counterexamples", {"dataset": "ds"}),
    ("concept_prerequisite_counterexamples", {"dataset": "ds", "mastery": 0.5}),
    ("cot_step_closeness", {"runId": "t:run"}), ("cot_closeness", {"runId": "t:run"}),
    ("cot_statistics", {"runId": "t:run"}), ("cot_responses", {"runId": "t:run"}),
    ("cot_trajectories", {"runId": "t:run"}),
    ("rqeval_items", {"dataset": "ds"}), ("rqeval_responses", {"runId": "run1"}),
    ("rqeval_scores", {"evaluator": "rqeval"}),
    ("concept_descriptions", {"framework": "t"}),
    ("exemplar_pool", {"dataset": "ds"}), ("framework_outline", {"framework": "t"}),
    ("concept_examples", {"framework": "t"}), ("concept_links", {"dataset": "ds"}),
    ("questions_answered_by_all", {"dataset": "ds", "learnerIds": ["t:l1", "t:l2"]}),
    ("correct_counts", {"learnerIds": ["t:l1", "t:l2", "t:l3"], "questionIds": K}),
    # kstp explore's
    ("learner_kinds", {}), ("concept_questions", {"conceptId": "t:c1"}),
    ("concepts_questions", {"conceptIds": ["t:c4", "t:c1", "t:none"]}),
    ("dataset_learner_figures", {"dataset": "ds"}), ("learner_answers", {"learnerId": "t:l1"}),
    ("learners_answers", {"learnerIds": ["t:l2", "t:l1", "t:none"]}),
    ("contradicted_prerequisites", {"dataset": "ds"}), ("run_samples", {"runId": "t:run"}),
    ("response_detail", {"responseId": "t:r1"}), ("response_steps", {"responseId": "t:r1"}),
]
#: Need a run in the graph; their Ladybug parity is in tests/parity/test_parity.py.
RUN_QUERIES = {"runs_of", "responses_by_id", "run_responses", "run_finish_reasons", "run_by_id", "nextstep_responses",
               "primary_answers",
               "run_export",
               "scaffolding_responses", "evaluator_runs", "run_list", "run_members", "run_links", "run_outcomes",
               # need a BLIM fit; test_parity_blim_queries runs them on both engines
               "blim_states", "blim_learners", "blim_item_parameters", "learned_prerequisites",
               # need verified links and judge scores; test_parity_verified_links_and_reasoning_scores
               "verified_question_concepts", "reasoning_scores",
               # need assessment runs; test_parity_assessment_queries runs them on both engines
               "assessment_run", "learner_assessments", "learners_assessments"}


def test_parity_cases_cover_every_registered_query():
    from kstp.graph.queries import ENGINES, registry

    portable = {name for name, query in registry().items() if query.engines == ENGINES}
    assert {name for name, _ in PARITY_CASES} | RUN_QUERIES == portable


def _comparable(rows: list[dict], ordered: bool) -> list[tuple]:
    def value(v):
        return round(v, 9) if isinstance(v, float) and not math.isnan(v) else v

    out = [tuple((k, value(v)) for k, v in sorted(row.items())) for row in rows]
    return out if ordered else sorted(out, key=repr)


@pytest.fixture(scope="module")
def parity_graphs(neo4j_server, tmp_path_factory):
    """The tiny graph in Ladybug and in Neo4j, built once for all parity cases."""
    ladybug = open_store(GraphTarget("ladybug", str(tmp_path_factory.mktemp("parity") / "graph")))
    neo4j = connect(neo4j_server)
    neo4j.reset()
    build_tiny_graph(ladybug)
    build_tiny_graph(neo4j)
    yield ladybug, neo4j
    ladybug.close()
    neo4j.close()


@pytest.mark.parametrize(("name", "params"), PARITY_CASES,
                         ids=[f"{name}-{i}" for i, (name, _) in enumerate(PARITY_CASES)])
def test_registered_queries_match_ladybug(parity_graphs, name, params):
    ladybug, neo4j = parity_graphs
    ordered = "ORDER BY" in get_query(name).text("neo4j")
    expected = _keys_as_ids(ladybug, ladybug.run(name, params))
    assert _comparable(_keys_as_ids(neo4j, neo4j.run(name, params)), ordered) == _comparable(expected, ordered)


def _keys_as_ids(store, rows: list[dict]) -> list[dict]:
    """Node keys are the engine's own (Ladybug offsets, Neo4j ids): compare the ids they stand for.
    A packed answer (``answer_codes_in_range``) is unpacked into its keys first."""
    if rows and set(rows[0]) == {"answer"}:
        rows = [{"learnerKey": r["answer"] >> 33, "questionKey": (r["answer"] >> 1) & 0xFFFFFFFF,
                 "correct": bool(r["answer"] & 1)} for r in rows]
    if not rows or not {"learnerKey", "questionKey", "fromKey"} & set(rows[0]):
        return rows
    learners, questions = (store.run(query, {"dataset": "ds"}) for query in ("dataset_learners", "question_keys"))
    ids = {**{("learnerKey", r["learnerKey"]): r["learnerId"] for r in learners},
           **{(column, r["questionKey"]): r["questionId"] for r in questions
              for column in ("questionKey", "fromKey", "toKey")}}
    return [{k: ids.get((k, v), v) if k.endswith("Key") else v for k, v in row.items()} for row in rows]



def test_batched_writes_print_progress_lines_outside_a_terminal(neo4j_server, neo4j_store, data_root, monkeypatch):
    """Neo4j alone (LadybugDB writes a frame in one COPY): a write of several transactions prints
    ``<query>: done/total rows written, R rows/s, S s`` after each one where progress shows as lines
    (stderr not a terminal); ``--quiet`` drops them."""
    import re

    from click.testing import CliRunner

    import kstp.graph.neo4j as module
    from kstp.cli.main import cli

    monkeypatch.setattr(module, "BATCH_SIZE", 200)
    monkeypatch.setattr(module, "REL_BATCH", 200)
    monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
    ingest = ["--graph", neo4j_server.location, "ingest", "standards", str(data_root / "standards/nys_concepts.json")]
    result = CliRunner().invoke(cli, ingest)
    assert result.exit_code == 0, result.output
    lines = re.findall(r"^(.+?): ([\d,]+)/([\d,]+) rows written, \d+ rows/s, \d+\.\d s$", result.stderr, re.M)
    by_write: dict[tuple[str, int], list[int]] = {}
    for name, done, total in lines:
        by_write.setdefault((name, int(total.replace(",", ""))), []).append(int(done.replace(",", "")))
    assert by_write[("write Concept", 480)] == [200, 400, 480]  # the Coherence Map's 480 concepts
    # Relationships go in whole from-nodes (a concept's prerequisite edges in one transaction): at
    # most 200 a transaction here, the last line at the total.
    sent = by_write[("write PREREQUISITE_OF", 757)]  # the Coherence Map's 757 edges
    steps = np.diff([0, *sent])
    assert sent[-1] == 757 and len(sent) >= 4 and (steps > 0).all() and (steps <= 200).all()
    neo4j_store.reset()
    quiet = CliRunner().invoke(cli, ["--quiet", *ingest])
    assert quiet.exit_code == 0 and "rows written" not in quiet.stderr


# ---- query plans: writes by node key and bulk reads stay seeks ------------------------------
_PLAN_PARAMS = {"rows": [{"a": 1, "d": 0, "b": [1, 2], "correct": [True, False], "position": [1, 2],
                          "timestamp": [None, None], "id": "t:l1", "kind": "human"}],
                "keys": [1], "ids": ["t:l1"], "dataset": "ds", "lo": "t:l1", "hi": "t:l3"}


def test_write_and_bulk_read_plans_have_no_scan_cartesian_product_or_eager(neo4j_store):
    """Neo4j alone: the answer writes (by node key, one row per learner), the node writes and the
    bulk reads of PSR plan seeks and expansions, never a label scan, a cartesian product or an
    Eager (a regression of the planner or of a statement fails here; ``answer_keys_in_range``
    once planned a cartesian product of questions and learners). The benchmark PROFILEs the same
    statements on the XES-scale graph."""
    from kstp.graph.neo4j import BAD_OPERATORS, _columnar_text, node_statements, relationship_statements

    build_tiny_graph(neo4j_store)
    plans = {f"{rel} {use}": text for rel, ends, props in (
        ("ANSWERED", ("Learner", "Question"), ["correct", "position", "timestamp"]),
        ("PREREQUISITE_OF", ("Question", "Question"), ["rule", "source"]))
        for use, text in relationship_statements(rel, *ends, props).items()}
    plans.update({f"Learner {use}": text for use, text in node_statements("Learner", ["id", "kind"]).items()})
    for name in ("answer_codes_in_range", "answer_keys_in_range", "question_prerequisite_keys", "answers",
                 "question_prerequisite_edges", "dataset_learners", "question_keys"):
        query = get_query(name)
        plans[name] = _columnar_text(query.text("neo4j"), list(query.returns))
    # One pass over the learners (or questions) of the graph is these two reads' plan: no index names them.
    scans = {"dataset_learners", "question_keys"}
    for name, text in plans.items():
        found = {step["operator"] for step in neo4j_store.explain(text, _PLAN_PARAMS)}
        bad = found & set(BAD_OPERATORS) - ({"NodeByLabelScan"} if name in scans else set())
        assert not bad, f"{name} plans {sorted(bad)}: {sorted(found)}"
    assert "NodeByIdSeek" in {s["operator"] for s in neo4j_store.explain(plans["ANSWERED create"], _PLAN_PARAMS)}
    for name in ("answer_codes_in_range", "answer_keys_in_range"):
        assert "NodeUniqueIndexSeekByRange" in {s["operator"] for s in neo4j_store.explain(plans[name], _PLAN_PARAMS)}


# ---- a re-run writes nothing; read-only commands read; concurrent writers double nothing -----
def test_rerun_of_the_same_ingest_commits_no_transaction(neo4j_store, data_root):
    """Neo4j alone: re-running the ingest of real answers and the derivation of their question
    prerequisites finds everything in place and commits no transaction (the bookmark of the last
    committed one is unchanged), where one written node moves it on."""
    from kstp.graph.structures import derive_question_prerequisites
    from kstp.loaders import items, responses

    folder = data_root / "responses" / "frcsub"

    def ingest():
        items.write_items(neo4j_store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv",
                                                            folder / "skills.csv"))
        known = set(neo4j_store.frame("dataset_questions", {"dataset": "frcsub"})["localId"])
        report = responses.write_answers(neo4j_store, "frcsub", responses.read_wide(folder / "responses.csv", known),
                                         "responses.csv")
        derive_question_prerequisites(neo4j_store, "frcsub", "reflexive")
        return report.written["ANSWERED"]

    first = ingest()
    assert first.created == 536 * 20
    before = neo4j_store.last_transaction()
    assert ingest() == WriteReport(unchanged=536 * 20)
    assert neo4j_store.last_transaction() == before
    neo4j_store.write_nodes("Dataset", _frame("id name", ("moved", "on")))
    assert neo4j_store.last_transaction() != before


def test_read_only_commands_open_read_transactions(neo4j_server, neo4j_store, tmp_path, monkeypatch):
    """Every read-only command opens the Neo4j graph read-only, and such a store's statements run
    as read transactions (on a cluster, routed to the secondaries): the server itself refuses a
    write in one; a writing command opens it writable."""
    from click.testing import CliRunner

    import kstp.graph.factory as factory
    from kstp.cli.main import cli
    from kstp.cli.output import READ_ONLY
    from tests.conftest import load_toy

    load_toy(neo4j_store, tmp_path)
    opened = []
    real = factory.open_store
    monkeypatch.setattr(factory, "open_store",
                        lambda *a, **k: opened.append(k.get("read_only", False)) or real(*a, **k))
    monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
    commands = {"db stats": [], "db export": [str(tmp_path / "export")], "query": ["datasets"], "runs list": [],
                "kst fringe": ["--dataset", "toy", "--state", "q1"], "kst check": ["--dataset", "toy", "--state", "q1"],
                "kst space": ["--dataset", "toy"]}
    assert set(commands) <= set(READ_ONLY)
    for command, args in commands.items():
        result = CliRunner().invoke(cli, ["--graph", neo4j_server.location, *command.split(), *args])
        assert result.exit_code == 0, (command, result.output)
        assert opened.pop() is True, command
    assert CliRunner().invoke(cli, ["--graph", neo4j_server.location, "db", "init"]).exit_code == 0
    assert opened.pop() is False
    with Neo4jStore(neo4j_server.location, neo4j_server.user, neo4j_server.password, read_only=True) as reader:
        assert reader.run("datasets")[0]["datasetId"] == "toy"
        with pytest.raises(QueryError, match="read"):  # the server's refusal: a read transaction
            reader._run("CREATE (:Dataset {id: 'written'})", {}, "test", neo4j.RoutingControl.WRITE)
        with pytest.raises(QueryError, match="opened read-only"):
            reader.write_nodes("Dataset", _frame("id", ("written",)))
    assert "written" not in set(neo4j_store.nodes("Dataset")["id"])


def test_a_concurrent_writers_relationships_are_merged_not_doubled(neo4j_store):
    """Neo4j alone: rows written as new (``new=True``) that another writer has written since the
    writer looked are caught by the degree check that rides on the write and MERGEd: every pair
    once, with the later values."""
    neo4j_store.write_nodes("Concept", _frame("id framework", *[(f"t:c{i}", "t") for i in range(6)]))
    rows = _frame("from_id to_id source", *[(f"t:c{i}", f"t:c{j}", "a") for i in range(3) for j in range(3, 6)])
    assert neo4j_store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", rows, new=True).created == 9
    later = rows.assign(source="b")
    neo4j_store.write_relationships("PREREQUISITE_OF", "Concept", "Concept", later, new=True)  # vouched, wrongly
    stored = neo4j_store.relationships("PREREQUISITE_OF", "Concept", "Concept")
    assert stored[["from_id", "to_id", "source"]].values.tolist() == later.values.tolist()


@pytest.mark.parametrize("moment", ["existing Learner", "keys"])
def test_a_learner_another_unit_shows_meanwhile_keeps_both_units_answers(neo4j_server, neo4j_store, moment):
    """Neo4j alone: two ingests at once share a new learner. The first stages it, and its unit
    ends (showing the learner) while the second is writing: after the second's diff read found
    the id new (it then stages a twin, which its end merges into the shown node), or between its
    two key reads of the answers' endpoints (hidden, then shown: nodes move only that way, so
    the learner is found). The race of test_neo4j_faults' two concurrent ingests (which once
    failed with "endpoint missing from the graph"), made deterministic: one shown learner with
    both answers, nothing left hidden."""
    neo4j_store.write_nodes("Dataset", _frame("id name source", ("ds", "Tiny set", "test")))
    neo4j_store.write_nodes("Question", _frame("id dataset localId text answer answerType position",
                                               ("t:q1", "ds", "q1", "one?", "1", "number", 1),
                                               ("t:q2", "ds", "q2", "two?", "2", "number", 2)))
    first, second = connect(neo4j_server), connect(neo4j_server)
    try:
        first_unit = first.unit("Learner")
        first_unit.__enter__()
        first.write_nodes("Learner", _frame("id kind dataset localId", ("t:l1", "human", "ds", "l1")))
        first.write_relationships("ANSWERED", "Learner", "Question",
                                  _frame("from_id to_id correct runId", ("t:l1", "t:q1", True, "a")), new=True)
        ended = []
        real = second._run_columnar

        def run_columnar(text, params, columns, name, *args, **kwargs):
            rows = real(text, params, columns, name, *args, **kwargs)
            if name.startswith(moment) and "t:l1" in params.get("ids", ()) and not ended:
                ended.append(name)
                first_unit.__exit__(None, None, None)  # the first unit ends: t:l1 is shown
            return rows

        with mock.patch.object(second, "_run_columnar", run_columnar), second.unit("Learner"):
            second.write_nodes("Learner", _frame("id kind dataset localId", ("t:l1", "model", "ds", "l1")))
            second.write_relationships("ANSWERED", "Learner", "Question",
                                       _frame("from_id to_id correct runId", ("t:l1", "t:q2", False, "b")), new=True)
        assert ended  # the first unit ended at the moment named
    finally:
        first.close(), second.close()
    answers = neo4j_store.relationships("ANSWERED", "Learner", "Question")
    assert answers[["from_id", "to_id", "correct", "runId"]].sort_values("to_id").values.tolist() == [
        ["t:l1", "t:q1", True, "a"], ["t:l1", "t:q2", False, "b"]]
    assert neo4j_store.nodes("Learner")[["id", "kind"]].values.tolist() == [["t:l1", "model"]]  # the later write's
    assert neo4j_store._execute("MATCH (n:StagedLearner) RETURN count(n) AS n", {})["n"].tolist() == [0]
