"""Every registered query prints through ``kstp query`` as JSON and as CSV, with the same
values in both formats and on both engines (issue 24, §6: LadybugDB returned sums as
``Decimal``, which JSON cannot encode).

The graph is the tiny graph of ``tests/graph/test_neo4j.py`` and the parameters its
parity cases, plus the run and BLIM queries on the DAG-MATH run that graph holds.
Node keys (``learnerKey``, ...) are the engine's own, so those columns are compared
within an engine only, and of ``answer_codes_in_range``'s packed answers only the correct
flag across engines. The Neo4j-only GDS and vector-index queries run on Neo4j alone,
against hand-computed values.
"""

from __future__ import annotations

import csv
import io
import json
import os

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.graph.factory import open_store
from kstp.graph.queries import ENGINES, get_query, registry
from kstp.settings import GraphTarget
from tests.conftest import connect_neo4j
from tests.graph.test_neo4j import PARITY_CASES, RUN_QUERIES, build_tiny_graph

RUN = "t:run"
RUN_CASES = [
    ("runs_of", {"evaluator": "dagmath", "model": "m", "dataset": "ds"}), ("run_by_id", {"runId": RUN}),
    ("run_responses", {"runId": RUN}), ("evaluator_runs", {"evaluator": "dagmath", "dataset": "ds"}),
    ("responses_by_id", {"ids": ["t:r1", "t:r2"]}), ("nextstep_responses", {"runId": RUN}),
    ("scaffolding_responses", {"runId": RUN}), ("blim_states", {"runId": RUN}),
    ("blim_learners", {"dataset": "ds"}), ("blim_item_parameters", {"dataset": "ds"}),
    ("learned_prerequisites", {"dataset": "ds", "rule": "iita"}),
    ("run_list", {"evaluator": "", "model": "", "dataset": ""}), ("run_members", {"runId": RUN}),
    ("run_links", {"runId": RUN}), ("run_outcomes", {"runId": RUN}),
    ("verified_question_concepts", {"dataset": "ds"}), ("reasoning_scores", {"runId": RUN}),
    ("primary_answers", {"learners": ["t:l1"], "evaluator": "answers"}), ("run_export", {"runId": RUN}),
    ("run_finish_reasons", {"runId": RUN}), ("assessment_run", {"runId": RUN}),
    ("learner_assessments", {"learner": "t:l1"}), ("learners_assessments", {"learners": ["t:l1", "t:l2"]}),
]
CASES = PARITY_CASES + RUN_CASES


@pytest.fixture(scope="module")
def graphs(neo4j_server, tmp_path_factory):
    """``--graph`` values of the tiny graph on each engine, with the Neo4j credentials set."""
    path = tmp_path_factory.mktemp("formats") / "graph"
    with open_store(GraphTarget("ladybug", str(path))) as ladybug:
        build_tiny_graph(ladybug)
    with connect_neo4j(neo4j_server) as neo4j:
        neo4j.reset()
        build_tiny_graph(neo4j)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NEO4J_USER", neo4j_server.user)
        env.setenv("NEO4J_PASSWORD", neo4j_server.password)
        yield {"ladybug": f"ladybug:{path}", "neo4j": neo4j_server.location}


def _query(graph: str, name: str, params: dict, fmt: str) -> str:
    args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in params.items()]
    result = CliRunner().invoke(cli, ["--graph", graph, "query", name, *[a for p in args for a in ("-p", p)],
                                      "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.stdout


def _as_csv_cell(value) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def test_cases_cover_every_portable_query():
    portable = {name for name, query in registry().items() if query.engines == ENGINES}
    assert {name for name, _ in CASES} == portable
    assert RUN_QUERIES == {name for name, _ in RUN_CASES}


@pytest.mark.parametrize(("name", "params"), CASES, ids=[f"{name}-{i}" for i, (name, _) in enumerate(CASES)])
def test_query_prints_the_same_values_as_json_and_csv_on_both_engines(graphs, name, params):
    printed = {}
    ordered = "ORDER BY" in get_query(name).text("neo4j")
    for engine, graph in graphs.items():
        rows = json.loads(_query(graph, name, params, "json"))
        table = list(csv.reader(io.StringIO(_query(graph, name, params, "csv"))))
        assert table[0] == list(get_query(name).returns)
        cells = [[_as_csv_cell(v) for v in row.values()] for row in rows]
        assert table[1:] == cells if ordered else sorted(table[1:]) == sorted(cells)  # two runs, any order
        if name == "answer_codes_in_range":  # node keys packed with the correct flag: keep the flag
            rows = [{"correct": row["answer"] & 1} for row in rows]
        printed[engine] = [{k: round(v, 9) if isinstance(v, float) else v for k, v in row.items()
                            if not k.endswith("Key")} for row in rows]
    if not ordered:
        printed = {engine: sorted(rows, key=repr) for engine, rows in printed.items()}
    assert printed["ladybug"] == printed["neo4j"]


def test_learner_accuracy_prints_its_counts_as_integers(graphs):
    """Counted by hand from the tiny graph's answers; ``correct`` is a sum (a Decimal on Ladybug before)."""
    rows = json.loads(_query(graphs["ladybug"], "learner_accuracy", {"dataset": "ds"}, "json"))
    assert rows == [{"learnerId": "t:l1", "answered": 5, "correct": 4, "accuracy": 0.8},
                    {"learnerId": "t:l2", "answered": 4, "correct": 2, "accuracy": 0.5},
                    {"learnerId": "t:l3", "answered": 4, "correct": 3, "accuracy": 0.75}]
    assert _query(graphs["ladybug"], "learner_accuracy", {"dataset": "ds"}, "csv").splitlines()[1] == "t:l1,5,4,0.8"


def _printed(graph: str, name: str, params: dict) -> list[dict]:
    """``kstp query`` as JSON, checked equal to its CSV (same columns, same cells, any order)."""
    rows = json.loads(_query(graph, name, params, "json"))
    table = list(csv.reader(io.StringIO(_query(graph, name, params, "csv"))))
    columns = list(get_query(name).returns)
    assert table[:1] == ([columns] if columns else [])  # a query that returns no column prints nothing
    assert sorted(table[1:]) == sorted([_as_csv_cell(v) for v in row.values()] for row in rows)
    return rows


def test_neo4j_only_queries_print_as_json_and_csv(graphs):
    """The GDS and vector-index queries through ``kstp query``, in the order a user calls them
    (project, compute, drop), against hand-computed values on the tiny graph: concept depths
    along c1 -> c2 -> c3, c1 -> c4 -> c3 (c5 alone); the overlap coefficient of the learners'
    correct answers (l1 {q1 q2 q4 q5}, l2 {q2 q3}, l3 {q1 q3 q4}); the nearest questions by the
    cosine index, whose score is (1 + cos) / 2."""
    import numpy as np

    from kstp.graph.vector_search import ensure_vector_index

    neo4j = graphs["neo4j"]
    def once(name, params):  # projections and drops change the catalogue: one call, as JSON
        return json.loads(_query(neo4j, name, params, "json"))

    for leftover in ("depth", "koc"):  # of a run stopped before its drops: the catalogue outlives it
        once("gds_drop_projection", {"graph": leftover})
    assert once("gds_project_concept_prerequisites", {"framework": "t", "graph": "depth"}) == [{"name": "depth"}]
    depths = {r["conceptId"]: r["depth"] for r in _printed(neo4j, "gds_concept_depth", {"graph": "depth"})}
    assert depths == {"t:c1": 0, "t:c2": 1, "t:c4": 1, "t:c3": 2, "t:c5": 0}
    assert once("gds_drop_projection", {"graph": "depth"}) == [{"name": "depth"}]
    assert _printed(neo4j, "gds_drop_projection", {"graph": "depth"}) == []  # gone: nothing to drop

    once("gds_project_correct_answers", {"learnerIds": ["t:l1", "t:l2", "t:l3"],
                                                    "questionIds": [f"t:q{i}" for i in range(1, 6)], "graph": "koc"})
    overlap = {(r["a"], r["b"]): r["similarity"]
               for r in _printed(neo4j, "gds_overlap_similarity", {"graph": "koc", "topK": 10})}
    expected = {("t:l1", "t:l2"): 1 / 2, ("t:l1", "t:l3"): 2 / 3, ("t:l2", "t:l3"): 1 / 2}
    assert overlap == pytest.approx({**expected, **{(b, a): v for (a, b), v in expected.items()}})
    assert once("gds_drop_projection", {"graph": "koc"}) == [{"name": "koc"}]

    vectors = {"t:q1": [1.0, 0.0], "t:q2": [0.8, 0.6], "t:q3": [0.0, 1.0], "t:q4": [-1.0, 0.0], "t:q5": [0.6, -0.8]}
    target = GraphTarget("neo4j", neo4j, os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])
    with open_store(target) as store:
        store.write_nodes("Question", pd.DataFrame({"id": list(vectors), "embedding": list(vectors.values())}))
        index = ensure_vector_index(store, 2)
    assert {"name": index, "dimensions": 2, "similarity": "COSINE"} in _printed(neo4j, "vector_indexes", {})
    assert _printed(neo4j, "vector_await_index", {"name": index, "seconds": 30}) == []
    found = _printed(neo4j, "vector_nearest_questions",
                     {"targets": ["t:q1"], "index": index, "n": 3, "pool": list(vectors)})
    cosine = {q: float(np.dot(vectors["t:q1"], v)) for q, v in vectors.items() if q != "t:q1"}
    nearest = sorted(cosine, key=cosine.get, reverse=True)[:2]  # n = 3 neighbours less the target itself
    assert [(r["questionId"], r["candidateId"]) for r in found] == [("t:q1", q) for q in nearest]
    assert [r["score"] for r in found] == pytest.approx([(1 + cosine[q]) / 2 for q in nearest], abs=1e-6)


def test_query_refuses_an_unknown_question_and_a_repeated_parameter(graphs):
    """Issue 43: an unknown id was dropped silently (the fringe of the empty state) and a repeated scalar -p
    kept its last value silently."""
    runner = CliRunner()
    unknown = runner.invoke(cli, ["--graph", graphs["ladybug"], "query", "outer_fringe", "-p", "dataset=ds",
                                  "-p", "questionIds=t:q1,q99"])
    assert unknown.exit_code == 2 and "outer_fringe: dataset ds has no question q99" in unknown.stderr
    twice = runner.invoke(cli, ["--graph", graphs["ladybug"], "query", "outer_fringe", "-p", "dataset=ds",
                                "-p", "dataset=other", "-p", "questionIds=t:q1"])
    assert twice.exit_code == 2 and "parameter 'dataset' is given twice" in twice.stderr
