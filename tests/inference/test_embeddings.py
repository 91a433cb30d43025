"""Embedding models (offline MiniLM) and cosine nearest neighbours by hand."""

from __future__ import annotations

import numpy as np
import pytest

from kstp.inference.embeddings import get_embedding_model, resolve_model, top_k_cosine
from kstp.errors import ConfigError


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


def test_minilm_offline_unit_vectors():
    model = get_embedding_model("minilm")
    vectors = model.encode(["What is 3 times 4?", "What is 3 times 4?", "Name a shape with three sides."])
    assert vectors.shape == (3, 384) and model.name == "minilm"
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0)
    assert float(vectors[0] @ vectors[2]) < 0.9
    assert model.encode([]).shape == (0, 384)


def test_resolve_and_missing_model(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTP_BGE_M3_PATH", str(tmp_path / "bge"))
    assert resolve_model("bge-m3") == str(tmp_path / "bge")
    monkeypatch.delenv("KSTP_BGE_M3_PATH")
    assert resolve_model("bge-m3") == "BAAI/bge-m3"
    with pytest.raises(ConfigError, match="embedding model 'bge-m3' is not available locally"):
        get_embedding_model("bge-m3")
    with pytest.raises(ConfigError, match="empty embedding model name"):
        get_embedding_model("")


def test_vectors_and_id_lists_are_stored_idempotently(store):
    """List properties (Question.embedding, Response.exemplars) diff like scalars on re-write."""
    import pandas as pd

    from kstp.graph.store import WriteReport

    rows = pd.DataFrame({"id": ["a", "b"], "embedding": [[0.5, 0.25], None], "embeddingModel": ["m", None]})
    assert store.write_nodes("Question", rows) == WriteReport(created=2)
    assert store.write_nodes("Question", rows) == WriteReport(unchanged=2)
    rows.at[1, "embedding"] = [1.0, 0.0]
    assert store.write_nodes("Question", rows) == WriteReport(updated=1, unchanged=1)
    exemplars = pd.DataFrame({"id": ["r"], "exemplars": [["a", "b"]]})
    assert store.write_nodes("Response", exemplars) == WriteReport(created=1)
    assert store.write_nodes("Response", exemplars) == WriteReport(unchanged=1)
    assert store.write_nodes("Response", exemplars.assign(exemplars=[["b", "a"]])) == WriteReport(updated=1)
