"""RQEval's judges (paper 3, §3.2): the NLI classifier behind LS and the BERTScore model
behind SS, as the authors' release sets them, and what a score from another judge says.

The paper names an NLI classifier's top label and BERTScore F1; the release
(github.com/senolali/RQEval, ``config/config.yaml``: ``nli_model``, ``bertscore_model``)
fixes them as ``cross-encoder/nli-deberta-v3-small`` and ``distilbert-base-uncased``
(bert-score's default layer for it, 5, with no idf and no rescaling). Both load from the
user's local Hugging Face cache only. :func:`similarity_scorer` falls back to the
bundled all-MiniLM-L6-v2 where the release's SS model is not cached; :func:`notes`
says, for recorded judge names, which dimensions are then not comparable with Tables
6-7.

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §3.2 (LS, SS) (arXiv 2605.24661); the release's
``metrics/logical_consistency.py`` and ``metrics/explainability.py``.
"""

from __future__ import annotations

from collections.abc import Iterable

from kstp.inference.similarity import BertScore, cached_model, download_hint, hub_cache

__all__ = ["NLI_MODEL", "SIMILARITY_MODEL", "SIMILARITY_LAYER", "PAPER_NLI", "PAPER_SIMILARITY", "similarity_scorer",
           "is_release_judge", "notes"]

#: The release's LS judge and SS model (``config/config.yaml``), and the layer bert-score uses for the latter.
NLI_MODEL = "cross-encoder/nli-deberta-v3-small"
SIMILARITY_MODEL = "distilbert-base-uncased"
SIMILARITY_LAYER = 5
#: The judge names (``nliBackend``, ``similarityModel``) that runs with the release's judges record.
PAPER_NLI = f"cross-encoder:{NLI_MODEL}"
PAPER_SIMILARITY = f"bert-score:{SIMILARITY_MODEL}@{SIMILARITY_LAYER}"
_TABLES = "not comparable with paper 3's Tables 6-7"
#: The hub's ids of the release's SS model (its old id and the new one under the distilbert organisation).
_SIMILARITY_IDS = (SIMILARITY_MODEL, f"distilbert/{SIMILARITY_MODEL}")


def _is_release_model(label: str, ids: tuple[str, ...]) -> bool:
    """Whether a recorded model label (:func:`~kstp.inference.similarity.model_label`) is one of
    ``ids``: the id itself, or a folder (a name without ``/``) named as the id's last part.

    >>> [_is_release_model(x, (NLI_MODEL,)) for x in (NLI_MODEL, "nli-deberta-v3-small", "org/nli-deberta-v3-small")]
    [True, True, False]
    """
    return label in ids or ("/" not in label and label in {i.rpartition("/")[2] for i in ids})


def is_release_judge(name: str) -> bool:
    """Whether a recorded judge name (``nliBackend`` or ``similarityModel``) is the release's
    judge, its model given as a cached id or as a local folder: the NLI cross-encoder
    ``nli-deberta-v3-small``, or BERTScore with ``distilbert-base-uncased`` at layer 5.

    >>> [is_release_judge(n) for n in (PAPER_NLI, "cross-encoder:nli-deberta-v3-small", "llm:openai/m",
    ...                                "bert-score:distilbert/distilbert-base-uncased@5",
    ...                                "bert-score:distilbert-base-uncased@6")]
    [True, True, False, True, False]
    """
    kind, _, label = name.partition(":")
    if kind == "cross-encoder":
        return _is_release_model(label, (NLI_MODEL,))
    label, _, layer = label.rpartition("@")
    return kind == "bert-score" and layer == str(SIMILARITY_LAYER) and _is_release_model(label, _SIMILARITY_IDS)


def similarity_scorer(model: str | None = None, num_layers: int | None = None) -> tuple[BertScore, str | None]:
    """The BERTScore model for SS and, where it falls back, the line that says so.

    Parameters
    ----------
    model : str, optional
        A local folder or cached model id (``--similarity-model``); default: the
        release's ``distilbert-base-uncased`` where the local Hugging Face cache holds it,
        else the bundled all-MiniLM-L6-v2 at layer 6.
    num_layers : int, optional
        The layer; default bert-score's for an id (5 for distilbert-base-uncased), 6 for
        the bundled model.

    Returns
    -------
    (BertScore, str or None)
        The scorer, and the fallback line (None unless the default fell back).

    Raises
    ------
    ConfigError
        When a given model cannot be loaded (:class:`~kstp.inference.similarity.BertScore`).
    """
    if model is not None:
        return BertScore(model, num_layers), None
    for name in _SIMILARITY_IDS:
        if cached_model(name) is not None:
            return BertScore(name, num_layers or SIMILARITY_LAYER, label=SIMILARITY_MODEL), None
    from kstp.inference.embeddings import resolve_model

    scorer = BertScore(resolve_model("minilm"), num_layers or 6, label="all-MiniLM-L6-v2")
    return scorer, (f"SS: {SIMILARITY_MODEL}, the release's BERTScore model, is not in the local Hugging Face cache "
                    f"{hub_cache()} ({download_hint(SIMILARITY_MODEL).removesuffix('; ')}), so SS uses the bundled "
                    f"{scorer.name} and is {_TABLES}")


def notes(nli_backends: Iterable[str], similarity_models: Iterable[str]) -> list[str]:
    """One line per judge, among the recorded names, that is not the release's
    (:func:`is_release_judge`): why its LS or SS is not comparable with Tables 6-7 (empty
    when every run used the release's).

    >>> notes([PAPER_NLI], [PAPER_SIMILARITY])
    []
    >>> notes(["llm:local/smollm2"], [PAPER_SIMILARITY])[0][:58]
    'LS: judged by the evaluated model (llm:local/smollm2), so '
    """
    out = []
    for name in sorted({n for n in nli_backends if isinstance(n, str) and not is_release_judge(n)}):
        if name.startswith("llm:"):
            out.append(f"LS: judged by the evaluated model ({name}), so it depends on the model under test and is "
                       f"{_TABLES} (the release's judge: {NLI_MODEL}; --nli {PAPER_NLI})")
        else:
            out.append(f"LS: judged by {name}, not the release's {NLI_MODEL}: {_TABLES}")
    for name in sorted({n for n in similarity_models if isinstance(n, str) and not is_release_judge(n)}):
        out.append(f"SS: BERTScore with {name}, not the release's {SIMILARITY_MODEL} (layer {SIMILARITY_LAYER}): "
                   f"{_TABLES}")
    return out
