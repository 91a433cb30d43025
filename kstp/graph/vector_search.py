"""Nearest questions by the cosine of their sentence embeddings: Neo4j's vector index on Neo4j, numpy elsewhere.

:func:`nearest_questions` gives each target question the ``k`` questions of an allowed pool
whose ``Question.embedding`` is most cosine-similar to its own: most similar first, ties
by question id, never the target itself. Both engines give the same lists.

- On Neo4j the candidates come from ``db.index.vector.queryNodes`` over a cosine vector
  index on ``Question.embedding`` of the vectors' dimension (:func:`ensure_vector_index`).
  Neo4j keeps one vector index per label and property, so an index of another dimension
  (the schema's 1024-d ``question_embedding`` of BGE-M3 when the 384-d MiniLM is in use)
  is dropped and ``question_embedding_<d>`` built in its place, unquantised, and awaited
  ONLINE; alternating models of two dimensions rebuilds it each time. The index holds
  every Question of that dimension, so each target asks for :data:`OVERFETCH` more than
  ``k + 1`` neighbours and drops itself and all nodes outside the pool (other datasets,
  other models, questions without a concept), asking again for twice as many while fewer
  than ``k`` remain. The index scores in float32, as (1 + cos) / 2; its candidates are
  ordered by the float64 cosine of their stored vectors, so that near-ties below float32
  precision fall as on the numpy path.
- Elsewhere (LadybugDB) :func:`top_k_cosine` over the pool in id order.

The index's reads and the vector query are the registered Neo4j-only queries of
``cypher/vector/`` (LadybugDB has no ``db.index.vector`` procedures); only the DDL that
names an index, which Cypher cannot take as a parameter, is written here.

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", §3.3.1 (similarity exemplars), arXiv 2609.05245. Neo4j 5 Cypher Manual,
"Vector indexes".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kstp.errors import procedure_error
from kstp.graph.store import GraphStore

__all__ = ["nearest_questions", "top_k_cosine", "ensure_vector_index", "OVERFETCH", "INDEX_WAIT_S"]

#: Neighbours asked of the index beyond ``k + 1`` (the target itself), for the nodes outside the pool.
OVERFETCH = 10
#: Seconds to wait for a new vector index to come ONLINE.
INDEX_WAIT_S = 300

_MISSING = "vector indexes need Neo4j 5.13 or later"


def ensure_vector_index(store: GraphStore, dimensions: int) -> str:
    """The name of an ONLINE cosine vector index on ``Question.embedding`` for vectors of ``dimensions``.

    An existing index of that dimension (or of none, which serves every dimension) is
    kept; one of another dimension or similarity is dropped and ``question_embedding_<d>``
    created (``vector.quantization.enabled: false``, so its scores are those of the
    stored vectors). Neo4j only.

    Raises
    ------
    KstpError
        When the index cannot be created or does not come ONLINE within :data:`INDEX_WAIT_S`.
    """
    dimensions = int(dimensions)
    existing = store.frame("vector_indexes")
    usable = [name for name, dims, similarity in existing.itertuples(index=False)
              if str(similarity).upper() == "COSINE" and (dims is None or pd.isna(dims) or int(dims) == dimensions)]
    if usable:
        name = usable[0]
    else:
        for old in existing["name"]:
            store._execute(f"DROP INDEX `{old.replace('`', '``')}` IF EXISTS", {}, "vector index")
        name = f"question_embedding_{dimensions}"
        store._execute(f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (q:Question) ON q.embedding "
                       f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dimensions}, "
                       "`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}",
                       {}, "vector index")
    try:
        store.frame("vector_await_index", {"name": name, "seconds": INDEX_WAIT_S})
    except Exception as exc:  # noqa: BLE001
        raise procedure_error(exc, "db.awaitIndex", _MISSING) from None
    return name


def nearest_questions(store: GraphStore, pool_ids: Sequence[str], vectors: np.ndarray, targets: Sequence[str],
                      k: int) -> dict[str, list[str]]:
    """The ``k`` pool questions nearest to each target by cosine of their embeddings.

    Parameters
    ----------
    pool_ids : sequence of str
        The questions that may be returned (targets among them), unique.
    vectors : ndarray, shape (len(pool_ids), d)
        Their embeddings, as stored on the Question nodes (``Question.embedding``).
    targets : sequence of str
        Questions of the pool to find neighbours for.
    k : int
        Neighbours per target (fewer when the pool has fewer than ``k + 1`` questions).

    Returns
    -------
    dict of str to list of str
        Target -> ``min(k, len(pool_ids) - 1)`` ids, cosine descending, ties by id.

    Raises
    ------
    ConfigError
        On a Neo4j server without ``db.index.vector.queryNodes``.

    Examples
    --------
    On LadybugDB the store is only asked its engine:

    >>> from types import SimpleNamespace
    >>> vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [0.8, 0.6]])
    >>> nearest_questions(SimpleNamespace(engine="ladybug"), ["a", "b", "c", "d"], vectors, ["a", "c"], 2)
    {'a': ['d', 'b'], 'c': ['b', 'd']}
    """
    order = sorted(range(len(pool_ids)), key=list(pool_ids).__getitem__)
    ids = [pool_ids[i] for i in order]
    matrix = np.asarray(vectors, float)[order]
    position = {q: i for i, q in enumerate(ids)}
    if store.engine != "neo4j":
        rows = np.array([position[t] for t in targets], dtype=int)
        nearest = top_k_cosine(matrix[rows], matrix, k, exclude=rows)
        return {t: [ids[j] for j in nearest[i]] for i, t in enumerate(targets)}
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    want = max(0, min(k, len(ids) - 1))
    index = ensure_vector_index(store, matrix.shape[1])
    total = int(store.frame("question_count")["questions"].iloc[0])
    out: dict[str, list[str]] = {}
    pending, n = list(targets), min(k + 1 + OVERFETCH, total)
    while pending:
        try:
            rows = store.frame("vector_nearest_questions", {"index": index, "n": n, "targets": pending, "pool": ids})
        except Exception as exc:  # noqa: BLE001
            raise procedure_error(exc, "db.index.vector.queryNodes", _MISSING) from None
        found = rows.groupby("questionId")["candidateId"].agg(list).to_dict() if len(rows) else {}
        for t in pending:
            candidates = found.get(t, [])
            if len(candidates) >= want or n >= total:
                cosine = unit[[position[c] for c in candidates]] @ unit[position[t]]
                ranked = sorted(zip(candidates, cosine, strict=True), key=lambda pair: (-pair[1], pair[0]))
                out[t] = [c for c, _ in ranked[:want]]
        pending, n = [t for t in pending if t not in out], min(2 * n, total)
    return {t: out[t] for t in targets}


def top_k_cosine(queries: np.ndarray, pool: np.ndarray, k: int, exclude: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` rows of ``pool`` most cosine-similar to each row of ``queries``.

    Parameters
    ----------
    queries : ndarray, shape (m, d)
    pool : ndarray, shape (n, d)
        Rows need not be normalised; a zero row has similarity 0 to everything.
    k : int
        Neighbours per query (at most ``n``, fewer if ``exclude`` leaves fewer).
    exclude : ndarray of int, shape (m,), optional
        For query ``i``, the pool row ``exclude[i]`` is never returned (the target itself);
        -1 excludes nothing.

    Returns
    -------
    ndarray of int, shape (m, min(k, available))
        Most similar first; ties broken by the lower pool index.

    Examples
    --------
    >>> pool = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [0.8, 0.6]])
    >>> top_k_cosine(pool[:1], pool, 2, exclude=np.array([0])).tolist()
    [[3, 1]]
    """
    def unit(x):
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return np.divide(x, norms, out=np.zeros_like(x, dtype=float), where=norms > 0)

    similarity = unit(np.asarray(queries, float)) @ unit(np.asarray(pool, float)).T
    if exclude is not None:
        rows = np.flatnonzero(exclude >= 0)
        similarity[rows, exclude[rows]] = -np.inf
    available = pool.shape[0] - (1 if exclude is not None and len(exclude) and (exclude >= 0).all() else 0)
    k = max(0, min(k, available))
    order = np.lexsort((np.broadcast_to(np.arange(pool.shape[0]), similarity.shape), -similarity), axis=1)
    return order[:, :k]
