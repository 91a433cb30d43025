"""Learner logs -> ``(:Learner {kind: "human"})-[:ANSWERED {correct}]->(:Question)``.

Three layouts:

- **wide**: one row per person, first column the person id, then one 0/1 column per
  item. A blank cell or a short row is refused with its line, unless the caller says
  blanks mean "not attempted" (``missing="blank"``, ``--missing blank``); their count
  is then reported (``answers.attrs["notAttempted"]``);
- **long**: ``learner, item, correct[, timestamp]`` rows (column names found as for
  items: learner/learner_id/user_id/person_id, item/item_id/question_id);
- **pykt**: the pyKT question-level sequence CSV that XES3G5M ships in (``uid,
  questions, responses[, timestamps], selectmasks``, comma-joined lists; a selectmask
  of -1 pads the end of a sequence). Rows of one uid are concatenated in file order.

A learner who answers one question more than once keeps the last answer (the rule of
the LLM-KST release); such repeats are counted in the report. Every item must already
be a question of the dataset.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kstp.loaders.common import LoadReport, check_namespace, pick_column, read_csv, scoped, unknown_id
from kstp.platform.errors import InputError
from kstp.platform.store import GraphStore

__all__ = ["read_wide", "read_long", "read_pykt", "write_answers", "FORMATS", "MISSING"]

FORMATS = ("wide", "long", "pykt")
#: How a blank cell of a wide matrix is read: refused, or "not attempted".
MISSING = ("refuse", "blank")


def _correct(value: str, where: str) -> bool:
    if value not in ("0", "1"):
        raise InputError(f"{where}: a response must be 0 or 1, found {value!r}")
    return value == "1"


def _answers(learners: list[str], items: list[str], correct: list[bool],
             timestamps: list[str | None] | None = None) -> pd.DataFrame:
    return pd.DataFrame({"learner": learners, "item": items, "correct": correct,
                         "timestamp": timestamps if timestamps is not None else None})


def _require_item(item: str, known: set[str], where: str) -> None:
    if item not in known:
        raise unknown_id("item", item, where, "it is not a question of this dataset (ingest the items first)")


def read_wide(path: str | Path, known_items: set[str], missing: str = "refuse") -> pd.DataFrame:
    """Read a person x item 0/1 matrix into answers ``(learner, item, correct, timestamp)``.

    Parameters
    ----------
    missing : {"refuse", "blank"}
        A blank cell (or the cells a short row lacks): refused, or read as not
        attempted and counted in ``answers.attrs["notAttempted"]``.

    Raises
    ------
    InputError
        On a repeated person id, a cell other than 0 or 1 (or blank, with
        ``missing="blank"``), or, by default, a blank cell or a short row (with line
        and column).
    UnknownIdError
        When a column names an item that is not a question of the dataset.
    """
    path = Path(path)
    if missing not in MISSING:
        raise InputError(f"missing={missing!r}: use one of {', '.join(MISSING)}")
    columns, rows = read_csv(path, short_rows="refuse" if missing == "refuse" else "pad")
    if len(columns) == 1 and any(sep in columns[0] for sep in ";\t|"):
        raise InputError(f"{path}:1: the header has one column {columns[0]!r}; kstp reads comma-separated files")
    items = columns[1:]
    for number, item in enumerate(items, 2):
        _require_item(item, known_items, f"{path}:1 (column {number})")
    learners, answered, correct = [], [], []
    seen: dict[str, int] = {}
    blank = 0
    for row in rows:
        person = row.values[columns[0]]
        if not person:
            raise InputError(f"{path}:{row.line}: empty learner id")
        if person in seen:
            raise InputError(f"{path}:{row.line}: learner {person!r} repeats line {seen[person]}")
        seen[person] = row.line
        for item in items:
            value = row.values[item]
            if value == "":
                if missing == "refuse":
                    raise InputError(f"{path}:{row.line} column {item!r}: blank cell (learner {person!r}); write 0 "
                                     "or 1, or pass --missing blank to read blanks as not attempted")
                blank += 1
                continue
            learners.append(person)
            answered.append(item)
            correct.append(_correct(value, f"{path}:{row.line} column {item!r}"))
    answers = _answers(learners, answered, correct)
    answers.attrs["notAttempted"] = blank
    return answers


def read_long(path: str | Path, known_items: set[str]) -> pd.DataFrame:
    """Read ``learner, item, correct[, timestamp]`` rows into answers.

    Raises
    ------
    InputError
        On a missing column, an empty id, or a ``correct`` other than 0/1 (with line).
    UnknownIdError
        On an item that is not a question of the dataset (with line).
    """
    path = Path(path)
    columns, rows = read_csv(path)
    learner_col = pick_column(path, columns, ("learner", "learner_id", "user_id", "person_id", "uid"))
    item_col = pick_column(path, columns, ("item", "item_id", "question_id", "question"))
    correct_col = pick_column(path, columns, ("correct", "response", "score"))
    time_col = pick_column(path, columns, ("timestamp", "time"), required=False)
    learners, items, correct, times = [], [], [], []
    for row in rows:
        learner, item = row.values[learner_col], row.values[item_col]
        if not learner or not item:
            raise InputError(f"{path}:{row.line}: empty {learner_col if not learner else item_col}")
        _require_item(item, known_items, f"{path}:{row.line}")
        learners.append(learner)
        items.append(item)
        correct.append(_correct(row.values[correct_col], f"{path}:{row.line}"))
        times.append(row.values.get(time_col) or None)
    return _answers(learners, items, correct, times)


def _ints(text: str, where: str) -> np.ndarray:
    try:
        return np.array([int(v) for v in text.split(",")], dtype=np.int64) if text else np.zeros(0, np.int64)
    except ValueError:
        raise InputError(f"{where}: expected comma-joined integers, found {text[:40]!r}") from None


def read_pykt(path: str | Path, known_items: set[str]) -> pd.DataFrame:
    """Read a pyKT question-level sequence CSV into answers, in sequence order.

    Each row's lists are cut at the first selectmask of -1 (padding). Responses must
    be 0/1 there.

    Raises
    ------
    InputError
        On lists of different lengths, non-integers, or a response other than 0/1.
    UnknownIdError
        On a question id that is not a question of the dataset (with line).
    """
    path = Path(path)
    columns, rows = read_csv(path)
    for needed in ("uid", "questions", "responses"):
        pick_column(path, columns, (needed,))
    learners, items, correct, times = [], [], [], []
    for row in rows:
        where = f"{path}:{row.line}"
        questions = _ints(row.values["questions"], where + " questions")
        responses = _ints(row.values["responses"], where + " responses")
        masks = _ints(row.values.get("selectmasks", ""), where + " selectmasks")
        stamps = row.values.get("timestamps", "")
        stamps = stamps.split(",") if stamps else [None] * len(questions)
        lengths = {len(questions), len(responses), len(stamps)} | ({len(masks)} if len(masks) else set())
        if len(lengths) > 1:
            raise InputError(f"{where}: questions, responses, timestamps and selectmasks differ in length")
        end = int(np.argmax(masks == -1)) if len(masks) and (masks == -1).any() else len(questions)
        questions, responses = questions[:end], responses[:end]
        if ((responses != 0) & (responses != 1)).any():
            raise InputError(f"{where}: responses before the padding must be 0 or 1")
        names = questions.astype(str)
        for name in set(names.tolist()) - known_items:
            _require_item(name, known_items, where)
        learners += [row.values["uid"]] * end
        items += names.tolist()
        correct += (responses == 1).tolist()
        times += stamps[:end]
    return _answers(learners, items, correct, times)


def write_answers(store: GraphStore, dataset: str, answers: pd.DataFrame, source: str) -> LoadReport:
    """Write learners and their answers (the last answer per learner and item wins); idempotent.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``learner, item, correct, timestamp`` with local ids, in answer order.

    Notes
    -----
    The edges reach the store with categorical id columns (one string per learner and
    per item), so the store's de-duplication and bulk load never touch 5 M Python
    strings; Ladybug loads them with ``COPY FROM`` an Arrow table.
    """
    check_namespace(dataset, "dataset")
    if answers.empty:
        raise InputError(f"{source}: no answers found (an empty file, or only a header?)")
    report = LoadReport(dataset)
    # Integer codes for learners and items: de-duplication and positions on 5 M answers
    # hash ints, not strings, and the scoped ids are built once per distinct value.
    learner, learners = pd.factorize(answers["learner"])
    item, items = pd.factorize(answers["item"])
    key = pd.Series(learner.astype(np.int64) * max(len(items), 1) + item)
    last = ~key.duplicated(keep="last").to_numpy()
    position = pd.Series(learner).groupby(learner).cumcount().to_numpy() + 1
    report.notes = {"answers read": len(answers),
                    "repeated answers superseded by a later one": int(len(answers) - last.sum())}
    prefix = scoped(dataset, "")
    learner_ids = prefix + pd.Index(learners, dtype=object)
    report.add("Learner", store.write_nodes("Learner", pd.DataFrame(
        {"id": learner_ids, "kind": "human", "dataset": dataset, "localId": learners})))
    edges = pd.DataFrame({
        "from_id": pd.Categorical.from_codes(learner[last], learner_ids),
        "to_id": pd.Categorical.from_codes(item[last], prefix + pd.Index(items, dtype=object)),
        "correct": answers["correct"].to_numpy(bool)[last],
        "timestamp": answers["timestamp"].to_numpy(object)[last],
        "position": position[last].astype(np.int64)})
    report.add("ANSWERED", store.write_relationships("ANSWERED", "Learner", "Question", edges))
    return report
