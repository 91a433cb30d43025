"""Judgements on pairs of texts: NLI labels (pluggable backends) and BERTScore F1.

An NLI backend labels ``(premise, hypothesis)`` pairs ``entailment``, ``neutral`` or
``contradiction`` (``invalid`` where a generative judge gave no usable label; callers
count those, never drop them). Two backends share the interface:

- :class:`CrossEncoderNli`: a sequence-pair classifier (e.g.
  ``cross-encoder/nli-deberta-v3-small``) loaded with sentence-transformers from a local
  path or the local Hugging Face cache only (:func:`cached_model`; no download at run
  time); its labels come from the model's own ``id2label``.
- :class:`LlmNli`: any kstp inference backend asked for the label (greedy, a few
  tokens); the first label word of its reply is the label.

Each backend has a ``name`` that results record, so a score says which judge made it.
:class:`BertScore` wraps the ``bert-score`` package with a configurable model (a local
path needs ``num_layers``; a cached id defaults to bert-score's layer for it).

Assumes short texts (reasoning steps, traces of a few hundred tokens): pairs longer
than the model's window are truncated by the model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from kstp.errors import ConfigError, import_extra
from kstp.inference.backend import Backend, Sampling

__all__ = ["NLI_LABELS", "NliBackend", "CrossEncoderNli", "LlmNli", "nli_backend", "BertScore", "parse_nli_label",
           "hub_cache", "cached_model", "download_hint", "model_label"]

NLI_LABELS = ("entailment", "neutral", "contradiction")
_LABEL_RE = re.compile(r"\b(entail\w*|neutral|contradict\w*)", re.IGNORECASE)


_REPO_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")


def hub_cache() -> Path:
    """The local Hugging Face hub cache, read from the environment now (as huggingface_hub
    reads it at import): ``$HF_HUB_CACHE``, else ``$HUGGINGFACE_HUB_CACHE``, else
    ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub`` (``~/.cache``)."""
    folder = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if not folder:
        home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
        folder = os.path.join(home, "hub")
    return Path(os.path.expandvars(folder)).expanduser()


def cached_model(repo_id: str) -> Path | None:
    """The snapshot folder of model ``repo_id`` in the local hub cache (:func:`hub_cache`,
    ``models--ORG--NAME/snapshots/REV`` named by ``refs/main``), or None when it is not
    there or ``repo_id`` is not a model id. Never touches the network.

    Raises
    ------
    MissingExtraError
        When ``huggingface_hub`` (extra ``models``) is not installed.
    """
    if not _REPO_ID.fullmatch(repo_id):
        return None
    hub = import_extra("huggingface_hub", "models", "a model from the local Hugging Face cache")
    errors = import_extra("huggingface_hub.errors", "models", "a model from the local Hugging Face cache")
    try:
        return Path(hub.snapshot_download(repo_id, cache_dir=hub_cache(), local_files_only=True))
    except (errors.LocalEntryNotFoundError, ValueError):  # ValueError: HFValidationError of an odd id
        return None


def model_label(model: str) -> str:
    """The name a judge records for ``model``: an id as given; a local folder by its name,
    except a hub-cache snapshot (``.../models--ORG--NAME/snapshots/REV``), named ``ORG/NAME``.

    Both judges (:class:`CrossEncoderNli`, :class:`BertScore`) name their model here, so a
    caller can tell one model given as an id or as a folder the same way. The folder's
    ``config.json`` (``_name_or_path``) is not read: a model fine-tuned from another and
    saved records that other one there.

    >>> model_label("cross-encoder/nli-deberta-v3-small")
    'cross-encoder/nli-deberta-v3-small'
    """
    path = Path(model)
    if not path.exists():
        return model
    path = path.resolve() if path.name in ("", ".", "..") else path
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("models--"):
        return path.parent.parent.name.removeprefix("models--").replace("--", "/")
    return path.name


def download_hint(repo_id: str) -> str:
    """How to put ``repo_id`` into the local cache, for error messages (empty for a path)."""
    if not _REPO_ID.fullmatch(repo_id):
        return ""
    return f"get it once with `hf download {repo_id}` (older clients: `huggingface-cli download {repo_id}`); "


class NliBackend(Protocol):
    """What every NLI backend provides."""

    name: str

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        """One label per ``(premise, hypothesis)`` pair: an :data:`NLI_LABELS` entry or ``invalid``."""
        ...


class CrossEncoderNli:
    """NLI by a cross-encoder classifier, offline.

    Parameters
    ----------
    model : str
        A local folder, or a Hugging Face model id already in the local cache
        (:func:`cached_model`); ``name`` records ``cross-encoder:`` and :func:`model_label`.
    batch_size : int
        Pairs per forward pass.

    Raises
    ------
    ConfigError
        When the model is not available locally, or its labels are not the three NLI
        labels (a :class:`~kstp.errors.MissingExtraError` when sentence-transformers,
        extra ``models``, is not installed).
    """

    def __init__(self, model: str, batch_size: int = 32):
        CrossEncoder = import_extra("sentence_transformers", "models", "a cross-encoder NLI judge").CrossEncoder
        folder = Path(model) if Path(model).exists() else cached_model(model)
        if folder is None:
            hint = download_hint(model)
            raise ConfigError(f"NLI model {model!r} is not available locally (no such folder, and not in the Hugging "
                              f"Face cache {hub_cache()}); {hint + 'or ' if hint else ''}pass --nli "
                              "cross-encoder:PATH (a local folder), or --nli llm (the evaluated model judges its own "
                              "steps, so LS then depends on the model under test)")
        try:
            self._model = CrossEncoder(str(folder), device="cpu", local_files_only=True)
        except (OSError, ValueError, ImportError) as exc:  # ImportError: a tokenizer that needs sentencepiece
            reason = (str(exc).strip().splitlines() or [""])[0][:200]
            raise ConfigError(f"NLI model {model!r} cannot be loaded from {folder} ({type(exc).__name__}: {reason}); "
                              "pass another folder (--nli cross-encoder:PATH) or use --nli llm") from None
        labels = {int(i): str(name).lower() for i, name in self._model.config.id2label.items()}
        if sorted(labels.values()) != sorted(NLI_LABELS):
            raise ConfigError(f"model {model!r} has labels {sorted(labels.values())}, not {list(NLI_LABELS)}; "
                              "use an NLI cross-encoder")
        self._labels = [labels[i] for i in range(len(labels))]
        self._batch_size = batch_size
        self.name = f"cross-encoder:{model_label(model)}"

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        if not pairs:
            return []
        logits = self._model.predict([list(p) for p in pairs], batch_size=self._batch_size,
                                     show_progress_bar=False, convert_to_numpy=True)
        return [self._labels[int(i)] for i in logits.argmax(axis=1)]


def parse_nli_label(reply: str | None) -> str:
    """The NLI label of a generative judge's reply: its first label word, else ``invalid``.

    >>> [parse_nli_label(r) for r in ("Contradiction.", "entails", "I think neutral", "unsure", None)]
    ['contradiction', 'entailment', 'neutral', 'invalid', 'invalid']
    """
    m = _LABEL_RE.search(reply or "")
    if not m:
        return "invalid"
    word = m.group(1).lower()
    return "entailment" if word.startswith("entail") else "contradiction" if word.startswith("contradict") else word


NLI_PROMPT = ("Premise: {premise}\nHypothesis: {hypothesis}\n"
              "Does the premise entail the hypothesis, contradict it, or neither? "
              "Answer with one word: entailment, contradiction or neutral.")


class LlmNli:
    """NLI by a generative model of any kstp inference backend (LLM-as-NLI).

    Each pair is one greedy request (temperature 0, ``max_tokens`` tokens, seed 0); the
    reply is read by :func:`parse_nli_label`. A failed request or a reply without a
    label word is ``invalid``.

    Parameters
    ----------
    backend : Backend
        An open inference backend (closed by its owner, not here).
    max_tokens : int
        Tokens the judge may write.
    """

    def __init__(self, backend: Backend, max_tokens: int = 8):
        self._backend = backend
        self._sampling = Sampling(n=1, temperature=0.0, top_p=1.0, max_tokens=max_tokens, seed=0)
        self.name = f"llm:{backend.name}/{backend.model}"

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        if not pairs:
            return []
        prompts = [[{"role": "user", "content": NLI_PROMPT.format(premise=a, hypothesis=b)}] for a, b in pairs]
        results = self._backend.generate(prompts, self._sampling)
        return [parse_nli_label(completions[0].text) for completions in results]


def nli_backend(spec: str, inference: Backend | None = None) -> NliBackend:
    """The NLI backend named by ``spec``: ``cross-encoder:MODEL`` (a local folder or a cached model id) or ``llm``.

    ``llm`` judges with ``inference`` (the evaluated model's backend).

    Raises
    ------
    ConfigError
        On another spec (a bare folder or model id included), ``cross-encoder:`` with no model, or
        ``llm`` without an inference backend.
    """
    if spec.startswith("cross-encoder:"):
        if not spec.removeprefix("cross-encoder:").strip():  # else the empty path '' "cannot be loaded from ."
            raise ConfigError("--nli cross-encoder: needs a model id or folder (cross-encoder:MODEL)")
        return CrossEncoderNli(spec.removeprefix("cross-encoder:"))
    if spec == "llm":
        if inference is None:
            raise ConfigError("--nli llm needs an inference backend to judge with")
        return LlmNli(inference)
    # a bare folder or model id is not read as one (an llm:... judge name holds '/' too): say how to name it
    hint = f" (for that model: --nli cross-encoder:{spec})" if "/" in spec or Path(spec).exists() else ""
    raise ConfigError(f"unknown NLI backend {spec!r}; use cross-encoder:MODEL (a local folder or cached id) or "
                      f"llm{hint}")


class BertScore:
    """BERTScore F1 between texts (``bert-score`` package), offline.

    Parameters
    ----------
    model : str
        A local model folder, or a model id in the local Hugging Face cache
        (:func:`cached_model`).
    num_layers : int, optional
        Which hidden layer's embeddings to use; required for a local folder, for an id
        bert-score's default (``bert_score.utils.model2layers``: 5 for
        ``distilbert-base-uncased``).
    batch_size : int
    label : str, optional
        What ``name`` calls the model (default: :func:`model_label`).

    Raises
    ------
    ConfigError
        When the model is not available locally or cannot be loaded, or comes without a
        layer (a local folder, or an id bert-score has no default for).
    MissingExtraError
        When ``bert-score`` (extra ``models``) is not installed.

    Notes
    -----
    Without idf weighting F1 is symmetric in its two texts. A pair with an empty text
    scores 0 (nothing is matched).
    """

    def __init__(self, model: str, num_layers: int | None = None, batch_size: int = 32, label: str | None = None):
        bert_score = import_extra("bert_score", "models", "BERTScore")
        if Path(model).exists():
            if num_layers is None:
                raise ConfigError(f"similarity model {model!r} is a local folder: say which layer with --num-layers")
            folder, label = Path(model), label or model_label(model)
        else:
            num_layers = num_layers or bert_score.utils.model2layers.get(model)
            if num_layers is None:
                raise ConfigError(f"bert-score has no default layer for similarity model {model!r}: say which "
                                  "with --num-layers")
            folder, label = cached_model(model), label or model
            if folder is None:
                raise ConfigError(f"similarity model {model!r} is not available locally (no such folder, and not in "
                                  f"the Hugging Face cache {hub_cache()}); {download_hint(model)}or pass a local "
                                  "folder with --similarity-model and --num-layers")
        try:  # a folder, so bert-score's from_pretrained never reaches for the network
            self._scorer = bert_score.BERTScorer(model_type=str(folder), num_layers=num_layers,
                                                 batch_size=batch_size, device="cpu")
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"similarity model {model!r} cannot be loaded from {folder} ({type(exc).__name__}); "
                              "pass a local folder with --similarity-model and --num-layers") from None
        self.name = f"bert-score:{label}@{num_layers}"

    def f1(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """F1 per pair, in [0, 1] for real texts (not rescaled)."""
        keep = [i for i, (a, b) in enumerate(pairs) if a.strip() and b.strip()]
        out = [0.0] * len(pairs)
        if keep:
            _, _, f1 = self._scorer.score([pairs[i][0] for i in keep], [pairs[i][1] for i in keep])
            for i, value in zip(keep, f1.tolist(), strict=True):
                out[i] = float(value)
        return out
