"""Graph algorithms by engine (kstp.graph.gds): GDS on Neo4j, networkx on Ladybug, held equal.

Concept depth runs on both engines against hand-counted depths and an independent
recursive reference; KOC by GDS node similarity is Neo4j-only (GDS is a Neo4j plugin) and
is compared with the Python KOC of kstp.evaluators.koc on hand-made and real data.
"""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import ConfigError, KstpError
from kstp.evaluators import koc
from kstp.graph import gds
from kstp.loaders.standards import load_standards
from tests.conftest import write_toy_files


def _reference_depth(edges: list[tuple[str, str]], concepts: list[str]) -> dict[str, int]:
    """Longest chain of prerequisites ending at each concept, by plain recursion."""
    parents: dict[str, list[str]] = {c: [] for c in concepts}
    for a, b in edges:
        parents[b].append(a)

    @cache
    def depth(c: str) -> int:
        return max((depth(p) + 1 for p in parents[c]), default=0)

    return {c: depth(c) for c in concepts}


def test_concept_depth_of_the_toy_curriculum(toy):
    """A -> B, A -> C, B -> D, C -> D, D -> E and F alone: A 0, F 0, B 1, C 1, D 2, E 3."""
    rows = gds.write_concept_depth(toy, "toy")
    assert rows.to_dict("records") == [
        {"conceptId": "toy:A", "depth": 0}, {"conceptId": "toy:F", "depth": 0},
        {"conceptId": "toy:B", "depth": 1}, {"conceptId": "toy:C", "depth": 1},
        {"conceptId": "toy:D", "depth": 2}, {"conceptId": "toy:E", "depth": 3}]
    stored = toy._execute("MATCH (c:Concept {framework: 'toy'}) RETURN c.id AS id, c.depth AS depth", {}, "test")
    assert dict(zip(stored["id"], stored["depth"].astype(int), strict=True)) == {
        "toy:A": 0, "toy:B": 1, "toy:C": 1, "toy:D": 2, "toy:E": 3, "toy:F": 0}


def test_concept_depth_of_the_coherence_map_equals_the_reference(store, data_root):
    load_standards(store, data_root / "standards/nys_concepts.json")
    edges = store.frame("concept_prerequisites", {"framework": "ccss"})
    concepts = store.frame("framework_concepts", {"framework": "ccss"})["conceptId"].tolist()
    want = _reference_depth(list(zip(edges["fromId"], edges["toId"], strict=True)), concepts)
    rows = gds.concept_depth(store, "ccss")
    assert dict(zip(rows["conceptId"], rows["depth"], strict=True)) == want
    assert rows["conceptId"].tolist() == sorted(want, key=lambda c: (want[c], c))
    assert max(want.values()) > 5  # a real chain, not a flat list


def test_concept_depth_refuses_a_cycle(store):
    store.write_nodes("Concept", pd.DataFrame({"id": ["a", "b", "c"], "framework": "f"}))
    store.write_relationships("PREREQUISITE_OF", "Concept", "Concept",
                              pd.DataFrame({"from_id": ["a", "b", "c"], "to_id": ["b", "c", "b"]}))
    with pytest.raises(KstpError, match="framework 'f' have a cycle.*concept_cycles"):
        gds.concept_depth(store, "f")


def test_kst_depth_command(graph_location, tmp_path):
    files = write_toy_files(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["--graph", graph_location, "ingest", "standards", str(files["concepts"]), "--edges",
                               str(files["edges"]), "--framework", "toy"]).exit_code == 0
    result = runner.invoke(cli, ["--graph", graph_location, "kst", "depth", "--framework", "toy", "--json"])
    assert result.exit_code == 0, result.output
    assert [(r["conceptId"], r["depth"]) for r in json.loads(result.stdout)] == [
        ("toy:A", 0), ("toy:F", 0), ("toy:B", 1), ("toy:C", 1), ("toy:D", 2), ("toy:E", 3)]


# ---- KOC by GDS node similarity (Neo4j only: GDS is a Neo4j plugin) -----------------------------
def _answers(store, dataset: str, answers: dict[str, dict[str, bool]]) -> None:
    questions = sorted({q for a in answers.values() for q in a})
    store.write_nodes("Dataset", pd.DataFrame([{"id": dataset, "name": dataset}]))
    store.write_nodes("Question", pd.DataFrame({"id": questions, "dataset": dataset}))
    store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame({"from_id": questions,
                                                                                 "to_id": dataset}))
    store.write_nodes("Learner", pd.DataFrame({"id": sorted(answers), "kind": "human", "dataset": dataset}))
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        [(learner, q, ok) for learner, a in answers.items() for q, ok in a.items()],
        columns=["from_id", "to_id", "correct"]))


def _python_koc(store, dataset: str, ids: list[str], questions: list[str] | None = None) -> pd.DataFrame:
    """The per-pair Python KOC of the evaluator, counting only ``questions`` (default: all)."""
    if questions is None:
        questions = store.frame("dataset_questions", {"dataset": dataset})["questionId"].tolist()
    answers = store.frame("answers", {"dataset": dataset})
    answers = answers[answers["questionId"].isin(questions) & answers["learnerId"].isin(ids)]
    counts = answers.groupby("learnerId")["correct"].agg(["size", "sum"]).reindex(ids, fill_value=0)
    learners = pd.DataFrame({"answered": counts["size"].astype(int), "correct": counts["sum"].astype(int)},
                            index=ids)
    return koc.aggregate(learners, store.frame("knowledge_overlap", {"dataset": dataset, "learnerIds": ids,
                                                                     "questionIds": questions}))[1]


def test_koc_matrix_by_gds_on_hand_made_states(neo4j_store):
    """All answer q1-q4. L1 {q1, q2}, L2 {q1, q2, q3}, L3 {q4}, L4 {}: KOC(L1, L2) = 2/2,
    KOC(L1, L3) = KOC(L2, L3) = 0, anything with L4 undefined (NaN)."""
    states = {"L1": {"q1", "q2"}, "L2": {"q1", "q2", "q3"}, "L3": {"q4"}, "L4": set()}
    _answers(neo4j_store, "d", {learner: {q: q in s for q in ("q1", "q2", "q3", "q4")}
                                for learner, s in states.items()})
    ids = ["L1", "L2", "L3", "L4"]
    matrix, common = gds.koc_matrix(neo4j_store, "d", ids)
    assert common == 4
    want = np.array([[1, 1, 0, math.nan], [1, 1, 0, math.nan], [0, 0, 1, math.nan], [math.nan] * 4])
    np.testing.assert_array_equal(matrix.to_numpy(), want)
    np.testing.assert_array_equal(_python_koc(neo4j_store, "d", ids).to_numpy(), want)
    # restricted to q1-q3 (as to the annotated questions of paper 1, Appendix B): L3's state is empty
    matrix, common = gds.koc_matrix(neo4j_store, "d", ids, ["q1", "q2", "q3"])
    assert common == 3
    want[2, :2] = want[:2, 2] = want[2, 2] = math.nan
    np.testing.assert_array_equal(matrix.to_numpy(), want)
    np.testing.assert_array_equal(_python_koc(neo4j_store, "d", ids, ["q1", "q2", "q3"]).to_numpy(), want)
    assert neo4j_store._execute("CALL gds.graph.list() YIELD graphName RETURN graphName", {}, "test").empty


def test_koc_matrix_by_gds_equals_python_koc_on_real_data(neo4j_store, data_root):
    """frcsub: every learner answered all 20 items, so each pair's shared questions are the
    questions all of them answered, and the per-pair Python KOC must equal GDS's."""
    from kstp.loaders import items, responses

    folder = data_root / "responses/frcsub"
    items.write_items(neo4j_store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv",
                                                        folder / "skills.csv"))
    known = set(neo4j_store.frame("dataset_questions", {"dataset": "frcsub"})["localId"])
    responses.write_answers(neo4j_store, "frcsub", responses.read_wide(folder / "responses.csv", known),
                            "responses.csv")
    ids = neo4j_store.frame("dataset_learners", {"dataset": "frcsub"})["learnerId"].tolist()[:40]
    matrix, common = gds.koc_matrix(neo4j_store, "frcsub", ids)
    assert common == 20
    np.testing.assert_allclose(matrix.to_numpy(), _python_koc(neo4j_store, "frcsub", ids).to_numpy(), rtol=0,
                               atol=1e-12)


def test_koc_matrix_needs_neo4j(toy):
    """On Neo4j it scores the toy learners on the questions both answered; Ladybug has no GDS."""
    if toy.engine == "neo4j":
        assert gds.koc_matrix(toy, "toy", ["toy:L1", "toy:L2"])[1] == 2  # q1 and q2 answered by both
    else:
        with pytest.raises(ConfigError, match="needs a Neo4j graph"):
            gds.koc_matrix(toy, "toy", ["toy:L1", "toy:L2"])



def test_gds_queries_all_run_in_depth_and_koc(neo4j_store, tmp_path, monkeypatch):
    """Every query of cypher/gds/ runs in concept depth or GDS KOC, so the reference checks
    above (hand counts, networkx, the Python KOC) cover each."""
    from kstp.graph.queries import registry
    from tests.conftest import load_toy

    ran: set[str] = set()
    frame = neo4j_store.frame
    monkeypatch.setattr(neo4j_store, "frame",
                        lambda name, params=None, **kw: ran.add(name) or frame(name, params, **kw))
    load_toy(neo4j_store, tmp_path)
    assert gds.concept_depth(neo4j_store, "toy")["depth"].tolist() == [0, 0, 1, 1, 2, 3]
    _answers(neo4j_store, "d", {"L1": {"q1": True, "q2": False}, "L2": {"q1": True, "q2": True}})
    matrix, common = gds.koc_matrix(neo4j_store, "d", ["L1", "L2"])
    assert (common, matrix.loc["L1", "L2"]) == (2, 1.0)
    shipped = {name for name, query in registry().items() if query.area == "gds"}
    assert shipped and shipped <= ran, sorted(shipped - ran)


def test_gds_query_on_ladybug_names_the_engine(tmp_path):
    from kstp.errors import QueryError
    from kstp.graph.factory import open_store

    with open_store(f"ladybug:{tmp_path / 'graph'}") as store, \
            pytest.raises(QueryError, match="'gds_concept_depth' runs on neo4j only"):
        store.frame("gds_concept_depth", {"graph": "g"})
