"""Nearest questions by embedding cosine (kstp.graph.vector_search): Neo4j's vector index and numpy, held equal.

Every ``store`` test runs on both engines against a reference written here (plain float64
cosine over the stored vectors, descending, ties by id), so the Neo4j vector-index lists
and the numpy lists are equal to it and to each other. The raw-index tests are Neo4j-only:
``db.index.vector.queryNodes`` exists only there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kstp.evaluators import scaffolding
from kstp.graph import vector_search
from kstp.graph.vector_search import ensure_vector_index, nearest_questions, top_k_cosine
from kstp.inference.embeddings import get_embedding_model
from kstp.loaders import items

# Hand-made 3-d vectors: d and e are equal (a tie, broken by id), x equals them too but is
# outside the pool (another dataset), z has another dimension.
HAND = {"a": [1.0, 0.0, 0.0], "b": [0.6, 0.8, 0.0], "c": [0.0, 1.0, 0.0], "d": [0.8, 0.6, 0.0],
        "e": [0.8, 0.6, 0.0], "x": [0.8, 0.6, 0.0], "z": [1.0, 0.0]}
POOL = ["a", "b", "c", "d", "e"]


def _reference(ids: list[str], vectors: np.ndarray, target: str, k: int) -> list[str]:
    """The k nearest of ``target`` among ``ids`` by float64 cosine, ties by id, itself left out."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    t = unit[ids.index(target)]
    scored = [(-float(unit[i] @ t), q) for i, q in enumerate(ids) if q != target]
    return [q for _, q in sorted(scored)[:k]]


def test_nearest_questions_hand_made_vectors(store):
    store.write_nodes("Question", pd.DataFrame({"id": list(HAND), "embedding": list(HAND.values()),
                                                "embeddingModel": "hand"}))
    vectors = np.array([HAND[q] for q in POOL])
    # cosines by hand: a.b 0.6, a.c 0, a.d = a.e 0.8; b.c 0.8, b.d = b.e 0.96; c.d = c.e 0.6
    assert nearest_questions(store, POOL, vectors, ["a", "b", "c"], 2) == {
        "a": ["d", "e"], "b": ["d", "e"], "c": ["b", "d"]}
    assert nearest_questions(store, POOL, vectors, ["b", "d"], 3) == {"b": ["d", "e", "c"], "d": ["e", "b", "a"]}
    assert nearest_questions(store, POOL, vectors, ["a"], 9) == {"a": ["d", "e", "b", "c"]}  # the pool less a
    assert nearest_questions(store, ["e", "a"], vectors[[4, 0]], ["a", "e"], 3) == {"a": ["e"], "e": ["a"]}


def test_nearest_questions_asks_again_when_the_pool_is_far(store, monkeypatch):
    """d, e and x lie nearer a than any pool question; with no overfetch, Neo4j's first searches
    (2, then 4 neighbours) find none of the pool, the last (all 7) finds b."""
    monkeypatch.setattr(vector_search, "OVERFETCH", 0)
    store.write_nodes("Question", pd.DataFrame({"id": list(HAND), "embedding": list(HAND.values()),
                                                "embeddingModel": "hand"}))
    vectors = np.array([HAND[q] for q in ("a", "b", "c")])
    assert nearest_questions(store, ["a", "b", "c"], vectors, ["a", "c"], 1) == {"a": ["b"], "c": ["b"]}


def test_vector_queries_all_run_in_nearest_questions(neo4j_store, monkeypatch):
    """Every query of cypher/vector/ runs in :func:`nearest_questions`, which the tests above
    hold to the float64 reference on both engines."""
    from kstp.graph.queries import registry

    ran: set[str] = set()
    frame = neo4j_store.frame
    monkeypatch.setattr(neo4j_store, "frame",
                        lambda name, params=None, **kw: ran.add(name) or frame(name, params, **kw))
    neo4j_store.write_nodes("Question", pd.DataFrame({"id": list(HAND), "embedding": list(HAND.values()),
                                                      "embeddingModel": "hand"}))
    vectors = np.array([HAND[q] for q in POOL])
    assert nearest_questions(neo4j_store, POOL, vectors, ["a"], 2) == {"a": ["d", "e"]}
    shipped = {name for name, query in registry().items() if query.area == "vector"}
    assert shipped and shipped <= ran, sorted(shipped - ran)


def test_ensure_vector_index_matches_the_dimension(neo4j_store):
    """Neo4j-only: the vector index replaces one of another dimension and is ONLINE; a second call keeps it."""
    neo4j_store.ensure_schema()
    assert ensure_vector_index(neo4j_store, 3) == "question_embedding_3"
    assert ensure_vector_index(neo4j_store, 3) == "question_embedding_3"
    shown = neo4j_store._execute(
        "SHOW VECTOR INDEXES YIELD name, state, labelsOrTypes, properties, options "
        "WHERE labelsOrTypes = ['Question'] AND properties = ['embedding'] "
        "RETURN name, state, options.indexConfig.`vector.dimensions` AS dimensions", {})
    assert shown.values.tolist() == [["question_embedding_3", "ONLINE", 3]]
    assert ensure_vector_index(neo4j_store, 1024) == "question_embedding_1024"
    neo4j_store._execute("DROP INDEX question_embedding_1024 IF EXISTS", {})
    neo4j_store.ensure_schema()  # the schema's 1024-d BGE-M3 index, as the other tests expect
    assert ensure_vector_index(neo4j_store, 1024) == "question_embedding"


@pytest.fixture(scope="module")
def minilm():
    return get_embedding_model("minilm")


def test_nearest_questions_real_frcsub_equal_reference(store, data_root, minilm):
    folder = data_root / "responses/frcsub"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv"))
    pool = scaffolding.embed_questions(store, "frcsub", minilm)
    ids = pool["questionId"].tolist()
    vectors = np.vstack(pool["embedding"].map(np.asarray).tolist())
    assert len(ids) == 20 and vectors.shape == (20, 384)
    for k in (1, 3, 5):
        nearest = nearest_questions(store, ids, vectors, ids, k)
        assert nearest == {q: _reference(ids, vectors, q, k) for q in ids}


def test_vector_index_raw_top_k_is_exact_on_frcsub_and_300_vectors(neo4j_store, data_root, minilm):
    """Neo4j-only: ``db.index.vector.queryNodes`` itself (HNSW, approximate in general) returns the exact top-k.

    On frcsub's 20 MiniLM vectors and 300 seeded 384-d vectors around 30 centres (one
    index, so each search also meets the other group, filtered out by model), the index's
    40 nearest of every question, by score then id and less itself, begin with its exact
    5 nearest, and its scores are (1 + cos) / 2 of the float64 cosine to 1e-6.
    """
    folder = data_root / "responses/frcsub"
    items.write_items(neo4j_store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv"))
    pool = scaffolding.embed_questions(neo4j_store, "frcsub", minilm)
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(30, 384))
    synthetic = centres[np.arange(300) % 30] + 0.5 * rng.normal(size=(300, 384))
    synthetic /= np.linalg.norm(synthetic, axis=1, keepdims=True)
    neo4j_store.write_nodes("Question", pd.DataFrame({"id": [f"syn:{i:03d}" for i in range(300)],
                                                      "embedding": list(map(list, synthetic)),
                                                      "embeddingModel": "synthetic"}))
    index = ensure_vector_index(neo4j_store, 384)
    groups = {"frcsub": (pool["questionId"].tolist(), np.vstack(pool["embedding"].map(np.asarray).tolist())),
              "synthetic": ([f"syn:{i:03d}" for i in range(300)], synthetic)}
    k = 5
    for name, (ids, vectors) in groups.items():
        rows = neo4j_store._execute(
            "UNWIND $ids AS target MATCH (q:Question {id: target}) "
            "CALL db.index.vector.queryNodes($index, $n, q.embedding) YIELD node, score "
            "WHERE node.embeddingModel = q.embeddingModel "
            "RETURN target, node.id AS id, score ORDER BY target, score DESC, id",
            {"ids": ids, "index": index, "n": 40})
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        for target, found in rows.groupby("target", sort=False):
            top = [q for q in found["id"] if q != target][:k]
            assert top == _reference(ids, vectors, target, k), (name, target)
            cosine = unit[[ids.index(q) for q in found["id"]]] @ unit[ids.index(target)]
            assert found["score"].to_numpy() == pytest.approx((1 + cosine) / 2, abs=1e-6)
        assert rows["target"].nunique() == len(ids)


def test_top_k_cosine_by_hand():
    # angles 0, 30, 60, 90 degrees on the unit circle; row 4 is the zero vector
    pool = np.array([[1.0, 0.0], [np.cos(np.pi / 6), 0.5], [0.5, np.cos(np.pi / 6)], [0.0, 1.0], [0.0, 0.0]])
    assert top_k_cosine(pool[[0]], pool, 3, exclude=np.array([0])).tolist() == [[1, 2, 3]]
    assert top_k_cosine(pool[[3]] * 5, pool, 2).tolist() == [[3, 2]]  # length does not matter
    assert top_k_cosine(pool[[0, 3]], pool, 9, exclude=np.array([0, 3])).tolist() == [[1, 2, 3, 4], [2, 1, 0, 4]]
    assert top_k_cosine(pool[[1]], pool, 2, exclude=np.array([-1])).tolist() == [[1, 0]]


def test_top_k_cosine_ties_take_the_lower_index():
    pool = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0], [1.0, 0.0]])
    assert top_k_cosine(np.array([[0.0, 1.0]]), pool, 2).tolist() == [[1, 2]]
    assert top_k_cosine(np.array([[1.0, 0.0]]), pool, 2, exclude=np.array([0])).tolist() == [[3, 1]]
