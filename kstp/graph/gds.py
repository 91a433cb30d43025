"""Graph algorithms where each engine is natural: GDS on Neo4j, networkx or numpy on Ladybug.

- :func:`concept_depth`: the depth of every concept of a framework, the number of edges of
  the longest prerequisite chain that ends at it (0 for a concept without prerequisites),
  and so a topological order (by depth, then id). On Neo4j through GDS's
  ``gds.dag.topologicalSort`` with ``computeMaxDistanceFromSource``; elsewhere by networkx.
- :func:`koc_matrix`: the knowledge overlap coefficient of every pair of learners
  (paper 1, Eq. 6) through GDS node similarity with the overlap metric, over the bipartite
  graph of correct answers restricted to the questions *all* compared learners answered.

GDS runs as Cypher procedure calls on the store's driver. Every projection is dropped
after use, also on failure. A server without the GDS
plugin gets a :class:`~kstp.errors.ConfigError` naming the procedure and plugin.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import networkx as nx
import numpy as np
import pandas as pd

from kstp.errors import ConfigError, KstpError, procedure_error
from kstp.graph.store import GraphStore

__all__ = ["concept_depth", "write_concept_depth", "koc_matrix"]

_CONCEPT_EDGES = ("MATCH (c:Concept {framework: $framework}) "
                  "OPTIONAL MATCH (c)-[:PREREQUISITE_OF]->(d:Concept {framework: $framework}) ")


class _Gds:
    """GDS procedures through the store's own driver (managed transactions, kstp metadata).

    The ``graphdatascience`` client is not used: it insists on ``gds.debug.arrow``, which
    the packaged GDS plugin has but the Maven Central modules of ``neo4j/pom.xml`` lack.
    """

    def __init__(self, store: GraphStore):
        self.store = store

    def run_cypher(self, text: str, params: dict) -> pd.DataFrame:
        return self.store._execute(text, params, "gds")


def _client(store: GraphStore) -> _Gds:
    return _Gds(store)


@contextmanager
def _projection(gds, query: str, params: dict) -> Iterator[str]:
    """Project the graph of a ``gds.graph.project`` aggregation query; its name; dropped afterwards."""
    name = f"kstp-{uuid.uuid4().hex[:12]}"
    try:
        gds.run_cypher(query + "WITH gds.graph.project($graph, source, target) AS g RETURN g.graphName AS name",
                       {**params, "graph": name})
    except Exception as exc:  # noqa: BLE001
        raise procedure_error(exc, "gds.graph.project", _GDS_MISSING) from None
    try:
        yield name
    finally:
        gds.run_cypher("CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName", {"graph": name})


_GDS_MISSING = ("the Graph Data Science plugin is missing or not allowed "
                "(dbms.security.procedures.unrestricted=gds.*)")


def _cycle(framework: str, concept: str) -> KstpError:
    return KstpError(f"the prerequisites of framework {framework!r} have a cycle, so concepts have no depth; "
                     f"e.g. {concept!r} (see `kstp query concept_cycles -p framework={framework}`)")


def concept_depth(store: GraphStore, framework: str) -> pd.DataFrame:
    """Depth of every concept of ``framework`` along its prerequisite edges, in topological order.

    Returns
    -------
    pandas.DataFrame
        ``conceptId`` (str), ``depth`` (int >= 0: edges of the longest chain of
        prerequisites ending at the concept), sorted by depth then id; one row per concept.

    Raises
    ------
    KstpError
        When the prerequisite edges have a cycle (no order exists); the message names
        concepts on it.

    Examples
    --------
    A -> B -> D and A -> C -> D, D -> E: depths A 0, B 1, C 1, D 2, E 3 (see tests/graph/test_gds.py).
    """
    if store.engine == "neo4j":
        gds = _client(store)
        concepts = gds.run_cypher("MATCH (c:Concept {framework: $framework}) RETURN c.id AS conceptId",
                                  {"framework": framework})
        with _projection(gds, _CONCEPT_EDGES + "WITH c AS source, d AS target ", {"framework": framework}) as name:
            try:
                rows = gds.run_cypher(
                    "CALL gds.dag.topologicalSort.stream($graph, {computeMaxDistanceFromSource: true}) "
                    "YIELD nodeId, maxDistanceFromSource "
                    "RETURN gds.util.asNode(nodeId).id AS conceptId, toInteger(maxDistanceFromSource) AS depth",
                    {"graph": name})
            except Exception as exc:  # noqa: BLE001
                raise procedure_error(exc, "gds.dag.topologicalSort.stream", _GDS_MISSING) from None
        missing = sorted(set(concepts["conceptId"]) - set(rows["conceptId"]))
        if missing:  # topologicalSort leaves out the concepts on (or after) a cycle
            raise _cycle(framework, missing[0])
    else:
        graph = nx.DiGraph()
        graph.add_nodes_from(store.frame("framework_concepts", {"framework": framework})["conceptId"])
        edges = store.frame("concept_prerequisites", {"framework": framework})
        graph.add_edges_from(zip(edges["fromId"], edges["toId"], strict=True))
        try:
            order = list(nx.topological_sort(graph))
        except nx.NetworkXUnfeasible:
            raise _cycle(framework, nx.find_cycle(graph)[0][0]) from None
        depth: dict[str, int] = {}
        for node in order:
            depth[node] = max((depth[p] + 1 for p in graph.predecessors(node)), default=0)
        rows = pd.DataFrame({"conceptId": list(depth), "depth": list(depth.values())})
    rows["depth"] = rows["depth"].astype(np.int64)
    return rows.sort_values(["depth", "conceptId"], kind="stable").reset_index(drop=True)


def write_concept_depth(store: GraphStore, framework: str) -> pd.DataFrame:
    """:func:`concept_depth`, also written as ``Concept.depth``; the rows."""
    rows = concept_depth(store, framework)
    store.write_nodes("Concept", rows.rename(columns={"conceptId": "id"}))
    return rows


def koc_matrix(store: GraphStore, dataset: str, learner_ids: list[str],
               question_ids: list[str] | None = None) -> tuple[pd.DataFrame, int]:
    """KOC of every pair of ``learner_ids`` by GDS node similarity (overlap metric), on Neo4j.

    The states compared are the learners' correct answers restricted to the questions of
    ``dataset`` that *every* one of them answered (and, when ``question_ids`` is given, that
    are among them: the annotated questions of paper 1, Appendix B), so all pairs are scored
    on one question set. Where learners answered different questions the per-pair KOC of
    :mod:`kstp.evaluators.koc` (each pair on the questions it shares) differs from this
    one; that evaluator uses it only when every learner answered the same questions.

    Returns
    -------
    koc : pandas.DataFrame
        Square, indexed and labelled by ``learner_ids`` in order; 1 on the diagonal, NaN
        where either state is empty (KOC is undefined), 0 for disjoint states.
    common : int
        The number of questions every learner answered.

    Raises
    ------
    ConfigError
        On a Ladybug store, or when the server lacks GDS.
    """
    if store.engine != "neo4j":
        raise ConfigError("koc_matrix runs GDS node similarity and needs a Neo4j graph")
    gds = _client(store)
    params = {"dataset": dataset, "ids": list(learner_ids)}
    common = gds.run_cypher(
        "MATCH (l:Learner)-[:ANSWERED]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset}) WHERE l.id IN $ids "
        "WITH q, count(DISTINCT l) AS n WHERE n = size($ids) RETURN q.id AS questionId", params)["questionId"].tolist()
    if question_ids is not None:
        counted = set(question_ids)
        common = [q for q in common if q in counted]
    sizes = gds.run_cypher(
        "MATCH (l:Learner)-[r:ANSWERED]->(q:Question) WHERE l.id IN $ids AND q.id IN $questions AND r.correct "
        "RETURN l.id AS learnerId, count(q) AS size", {**params, "questions": common})
    size = sizes.set_index("learnerId")["size"].reindex(learner_ids).fillna(0)
    koc = pd.DataFrame(0.0, index=learner_ids, columns=learner_ids)
    with _projection(gds, "MATCH (source:Learner)-[r:ANSWERED]->(target:Question) WHERE source.id IN $ids "
                          "AND target.id IN $questions AND r.correct ", {**params, "questions": common}) as name:
        try:
            pairs = gds.run_cypher(
                "CALL gds.nodeSimilarity.stream($graph, {similarityMetric: 'OVERLAP', topK: $k}) "
                "YIELD node1, node2, similarity "
                "RETURN gds.util.asNode(node1).id AS a, gds.util.asNode(node2).id AS b, similarity",
                {"graph": name, "k": max(1, len(learner_ids))})
        except Exception as exc:  # noqa: BLE001
            raise procedure_error(exc, "gds.nodeSimilarity.stream", _GDS_MISSING) from None
    for a, b, value in pairs.itertuples(index=False):
        koc.loc[a, b] = value
    matrix = koc.to_numpy(copy=True)  # pandas' own array may be read-only (copy-on-write)
    np.fill_diagonal(matrix, 1.0)
    empty = size.to_numpy() == 0
    matrix[empty, :] = np.nan
    matrix[:, empty] = np.nan
    return pd.DataFrame(matrix, index=koc.index, columns=koc.columns), len(common)
