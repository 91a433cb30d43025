"""Graph algorithms where each engine is natural: GDS on Neo4j, networkx or numpy on Ladybug.

- :func:`concept_depth`: the depth of every concept of a framework, the number of edges of
  the longest prerequisite chain that ends at it (0 for a concept without prerequisites),
  and so a topological order (by depth, then id). On Neo4j through GDS's
  ``gds.dag.topologicalSort`` with ``computeMaxDistanceFromSource``; elsewhere by networkx.
- :func:`koc_matrix`: the knowledge overlap coefficient of every pair of learners
  (paper 1, Eq. 6) through GDS node similarity with the overlap metric, over the bipartite
  graph of correct answers restricted to the questions *all* compared learners answered.

GDS runs as the registered Neo4j-only queries of ``cypher/gds/`` on the store's own driver
(managed transactions, kstp's metadata). Every projection is dropped after use, also on
failure. A server without the GDS plugin gets a :class:`~kstp.errors.ConfigError` naming the
procedure and plugin. The ``graphdatascience`` client is not used: it insists on
``gds.debug.arrow``, which the packaged GDS plugin has but the Maven Central modules of
``neo4j/pom.xml`` lack.
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

_GDS_MISSING = ("the Graph Data Science plugin is missing or not allowed "
                "(dbms.security.procedures.unrestricted=gds.*)")


def _gds(store: GraphStore, query: str, procedure: str, params: dict) -> pd.DataFrame:
    """Run the registered GDS query ``query``; a failure names ``procedure`` and the plugin."""
    try:
        return store.frame(query, params)
    except Exception as exc:  # noqa: BLE001
        raise procedure_error(exc, procedure, _GDS_MISSING) from None


@contextmanager
def _projection(store: GraphStore, query: str, params: dict) -> Iterator[str]:
    """Project a graph by the registered ``gds.graph.project`` query ``query``; its name; dropped afterwards."""
    name = f"kstp-{uuid.uuid4().hex[:12]}"
    _gds(store, query, "gds.graph.project", {**params, "graph": name})
    try:
        yield name
    finally:
        store.frame("gds_drop_projection", {"graph": name})


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
        concepts = store.frame("framework_concepts", {"framework": framework})
        with _projection(store, "gds_project_concept_prerequisites", {"framework": framework}) as name:
            rows = _gds(store, "gds_concept_depth", "gds.dag.topologicalSort.stream", {"graph": name})
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
    common = store.frame("questions_answered_by_all",
                         {"dataset": dataset, "learnerIds": list(learner_ids)})["questionId"].tolist()
    if question_ids is not None:
        counted = set(question_ids)
        common = [q for q in common if q in counted]
    params = {"learnerIds": list(learner_ids), "questionIds": common}
    sizes = store.frame("correct_counts", params)
    size = sizes.set_index("learnerId")["correct"].reindex(learner_ids).fillna(0)
    koc = pd.DataFrame(0.0, index=learner_ids, columns=learner_ids)
    with _projection(store, "gds_project_correct_answers", params) as name:
        pairs = _gds(store, "gds_overlap_similarity", "gds.nodeSimilarity.stream",
                     {"graph": name, "topK": max(1, len(learner_ids))})
    for a, b, value in pairs.itertuples(index=False):
        koc.loc[a, b] = value
    matrix = koc.to_numpy(copy=True)  # pandas' own array may be read-only (copy-on-write)
    np.fill_diagonal(matrix, 1.0)
    empty = size.to_numpy() == 0
    matrix[empty, :] = np.nan
    matrix[:, empty] = np.nan
    return pd.DataFrame(matrix, index=koc.index, columns=koc.columns), len(common)
