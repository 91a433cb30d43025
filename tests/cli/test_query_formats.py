"""Every registered query prints through ``kstp query`` as JSON and as CSV, with the same
values in both formats and on both engines (issue 24, §6: LadybugDB returned sums as
``Decimal``, which JSON cannot encode).

The graph is the tiny graph of ``tests/graph/test_neo4j.py`` and the parameters its
parity cases, plus the run and BLIM queries on the DAG-MATH run that graph holds.
Node keys (``learnerKey``, ...) are the engine's own, so those columns are compared
within an engine only.
"""

from __future__ import annotations

import csv
import io
import json

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
