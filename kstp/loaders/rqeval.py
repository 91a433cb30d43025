"""RQEval benchmark items (paper 3): questions with their answer type, perturbations as variants.

Reads a JSON list of items, the layout of RQEval's ``outputs/dataset_*.json``::

    [{"id": "gsm8k_0000", "question": "...", "answer": "52",
      "perturbations": ["...", "", "..."], ...}, ...]

Each item becomes a ``(:Question)`` of the dataset with its gold answer and answer type
(``number``, ``choice``, ``yesno``, or ``text`` / ``expression`` for worded golds; see
:mod:`kstp.inference.grading`). Each non-empty perturbation becomes a Question
``<dataset>:<item id>~p<slot>`` (slot 1-based, its place in the list, so ids stay
stable when a slot is empty) with the original's gold answer and type, linked
``(:Question)-[:VARIANT_OF {kind: "perturbation"}]->(:Question)``. Variants are not
``IN_DATASET``: they are probes of an item, not items of the knowledge domain, so KST
methods over the dataset never see them.

Assumes the answer type of a known RQEval dataset (gsm8k: number, mmlu: choice,
strategyqa: yesno); any other dataset of this shape (the synthetic one included) takes
each item's type from its gold answer (:func:`kstp.inference.grading.infer_kind`).

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §3.1 and §4.1 (arXiv 2605.24661).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kstp.errors import InputError
from kstp.graph.store import GraphStore
from kstp.inference.grading import infer_kind
from kstp.loaders.common import LoadReport, check_namespace, read_text, require_file, scoped
from kstp.loaders.items import ItemSet, write_items

__all__ = ["DATASETS", "ANSWER_TYPES", "RqevalSet", "read_rqeval", "write_rqeval", "variant_id"]

#: The four RQEval benchmarks, by the file stem ``dataset_<name>.json``.
DATASETS = ("gsm8k", "mmlu", "strategyqa", "synthetic")
#: Answer type per benchmark; a dataset not listed takes each item's type from its gold.
ANSWER_TYPES = {"gsm8k": "number", "mmlu": "choice", "strategyqa": "yesno"}
VARIANT_KIND = "perturbation"


def variant_id(question_id: str, slot: int) -> str:
    """The Question id of perturbation ``slot`` (1-based) of ``question_id``.

    >>> variant_id("gsm8k:gsm8k_0000", 3)
    'gsm8k:gsm8k_0000~p3'
    """
    return f"{question_id}~p{slot}"


@dataclass
class RqevalSet:
    """A validated RQEval dataset: the items (an :class:`ItemSet`) and their variants.

    Attributes
    ----------
    items : ItemSet
        The original questions (no concepts).
    variants : pandas.DataFrame
        Question rows of the perturbations (``id, dataset, localId, text, answer,
        answerType, position``).
    links : pandas.DataFrame
        ``from_id`` (variant), ``to_id`` (original), ``kind``.
    """

    items: ItemSet
    variants: pd.DataFrame
    links: pd.DataFrame


def read_rqeval(path: str | Path, dataset: str | None = None, answer_type: str | None = None) -> RqevalSet:
    """Read one RQEval JSON dataset.

    Parameters
    ----------
    path : path
        A JSON list of objects with ``id``, ``question``, ``answer`` and optionally
        ``perturbations`` (list of str; empty strings are skipped slots).
    dataset : str, optional
        Dataset id; default: the file stem without ``dataset_`` (``dataset_gsm8k.json``
        -> ``gsm8k``).
    answer_type : str, optional
        Answer type of every item; default: :data:`ANSWER_TYPES` of the dataset, else
        inferred per item from its gold answer.

    Returns
    -------
    RqevalSet

    Raises
    ------
    InputError
        On invalid JSON, a file that is not a list of objects, an item without id,
        question or answer, a repeated id, or perturbations that are not a list of
        strings (each message names the item's position and id).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "dataset_toy.json"
    >>> _ = f.write_text(json.dumps([{"id": "a", "question": "2+2?", "answer": "4",
    ...                               "perturbations": ["Two plus two?", ""]}]))
    >>> rq = read_rqeval(f)
    >>> rq.items.questions[["id", "answerType"]].values.tolist(), rq.links.values.tolist()
    ([['toy:a', 'number']], [['toy:a~p1', 'toy:a', 'perturbation']])
    """
    path = require_file(path)
    dataset = check_namespace(dataset or path.stem.removeprefix("dataset_"), "dataset")
    try:
        rows = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError(f"{path}: expected a JSON list of item objects")
    fixed = answer_type or ANSWER_TYPES.get(dataset)
    seen: dict[str, int] = {}
    questions, variants, links = [], [], []
    for position, item in enumerate(rows, 1):
        where = f"{path}: item {position}"
        missing = [k for k in ("id", "question", "answer") if item.get(k) in (None, "")]
        if missing:
            raise InputError(f"{where} has no {missing[0]!r}; every item needs id, question and answer")
        local = str(item["id"])
        if local in seen:
            raise InputError(f"{where}: id {local!r} repeats item {seen[local]}")
        seen[local] = position
        answer = str(item["answer"]).strip()
        kind = fixed or infer_kind(answer)
        perturbations = item.get("perturbations") or []
        if not isinstance(perturbations, list) or not all(isinstance(p, str) for p in perturbations):
            raise InputError(f"{where} ({local!r}): perturbations must be a list of strings")
        questions.append({"localId": local, "text": item["question"], "answer": answer, "answerType": kind,
                          "position": position})
        for slot, text in enumerate(perturbations, 1):
            if text.strip():
                vid = variant_id(scoped(dataset, local), slot)
                variants.append({"id": vid, "dataset": dataset, "localId": f"{local}~p{slot}", "text": text,
                                 "answer": answer, "answerType": kind, "position": position})
                links.append({"from_id": vid, "to_id": scoped(dataset, local), "kind": VARIANT_KIND})
    frame = pd.DataFrame(questions, columns=["localId", "text", "answer", "answerType", "position"])
    frame.insert(0, "id", [scoped(dataset, q) for q in frame["localId"]])
    frame.insert(1, "dataset", dataset)
    frame["position"] = frame["position"].astype("Int64")
    items = ItemSet(dataset, path.name, frame, pd.DataFrame(columns=["from_id", "to_id", "source"]),
                    notes={"perturbations": len(variants),
                           "items without perturbations": len(frame) - len({link["to_id"] for link in links})},
                    defines_concepts=False)
    variant_frame = pd.DataFrame(variants, columns=["id", "dataset", "localId", "text", "answer", "answerType",
                                                    "position"])
    variant_frame["position"] = variant_frame["position"].astype("Int64")
    return RqevalSet(items, variant_frame, pd.DataFrame(links, columns=["from_id", "to_id", "kind"]))


def write_rqeval(store: GraphStore, data: RqevalSet) -> LoadReport:
    """Write the items (Dataset, Questions, IN_DATASET), the variants and VARIANT_OF; idempotent."""
    report = write_items(store, data.items)
    report.add("Question", store.write_nodes("Question", data.variants))
    report.add("VARIANT_OF", store.write_relationships("VARIANT_OF", "Question", "Question", data.links))
    return report
