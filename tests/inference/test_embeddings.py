"""Embedding models (offline MiniLM)."""

from __future__ import annotations

import numpy as np
import pytest

from kstp.errors import ConfigError
from kstp.inference.embeddings import get_embedding_model, resolve_model


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
