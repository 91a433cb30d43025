"""Questions (items) with text, gold answer, type and the concepts they assess.

Inputs, each a function returning a validated :class:`ItemSet`:

- an items CSV plus a Q-matrix CSV (item x skill, 0/1) and optional skills CSV: the
  layouts of the ``probability_pks`` and ``frcsub`` data; the skills become Concepts of
  a framework named after the dataset (a skill map: no edges among them);
- the ``math2015`` folder layout (``q.txt``, ``qnames.txt``, ``problemdesc.txt``);
- a question -> concept-id JSON map (``xes_skills_nys.json``) against a framework
  already in the graph;
- generic JSONL, one ``{"id", "text", "answer", "type", "concepts": [...]}`` per line,
  with ``"options"`` for a multiple-choice item.

A multiple-choice item's options are lines of its text, ``A. ...`` under the problem
(:func:`option_lines`): the one place the answer evaluation, the grader's option count
and paper 1's Prompt 3 (which lays them out as ``(A) ... (B) ...``) find them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kstp.errors import InputError
from kstp.graph.store import GraphStore
from kstp.inference.grading.choices import option_count, split_options
from kstp.loaders.common import (
    LoadReport,
    check_namespace,
    json_lines,
    normalise_id,
    pick_column,
    read_csv,
    read_text,
    require_file,
    scoped,
    unknown_id,
)

__all__ = ["ItemSet", "read_items_csv", "read_math2015", "read_concept_map", "read_items_jsonl",
           "write_items", "framework_concepts", "option_lines", "mcq_text", "LETTERS"]

_ID_COLUMNS = ("item_id", "id", "question_id")
_TEXT_COLUMNS = ("text", "question", "expression", "problem")
_ANSWER_COLUMNS = ("answer", "correct_answer", "computed_answer", "correct_answer_note")
_TYPE_COLUMNS = ("type", "answer_type")
#: Option letters, in order (the grader reads up to J).
LETTERS = "ABCDEFGHIJ"


@dataclass
class ItemSet:
    """A validated item set: questions, their (question, concept) links, and any new skills."""

    dataset: str
    source: str
    questions: pd.DataFrame
    assesses: pd.DataFrame
    framework: pd.DataFrame | None = None
    concepts: pd.DataFrame | None = None
    notes: dict[str, int] = field(default_factory=dict)
    #: Whether the input states the items' concepts (a Q-matrix, a concept map, JSONL);
    #: then its links replace the stored ones, else stored links are left alone.
    defines_concepts: bool = True


def _questions(dataset: str, rows: list[dict]) -> pd.DataFrame:
    check_namespace(dataset, "dataset")
    frame = pd.DataFrame(rows, columns=["localId", "text", "answer", "answerType", "position"])
    frame["localId"] = frame["localId"].map(normalise_id)
    frame.insert(0, "id", [scoped(dataset, q) for q in frame["localId"]])
    frame.insert(1, "dataset", dataset)
    frame["position"] = frame["position"].astype("Int64")
    return frame


def _skill_map(dataset: str, skills: dict[str, str | None], source: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    framework = pd.DataFrame([{"id": dataset, "name": f"{dataset} skills", "source": source}])
    concepts = pd.DataFrame([{"id": scoped(dataset, s), "framework": dataset, "localId": s, "code": s,
                              "description": d} for s, d in skills.items()])
    return framework, concepts


def _binary(value: str, where: str) -> int:
    if value not in ("0", "1"):
        raise InputError(f"{where}: Q-matrix entries must be 0 or 1, found {value!r}")
    return int(value)


def read_items_csv(items_path: str | Path, dataset: str, qmatrix: str | Path | None = None,
                   skills: str | Path | None = None, id_column: str | None = None,
                   text_column: str | None = None, answer_column: str | None = None) -> ItemSet:
    """Read an items CSV with an optional Q-matrix and skills CSV.

    Parameters
    ----------
    items_path : path
        One row per item. The id, text and answer columns are taken from the options or
        found by name (id: item_id, id, question_id; text: text, question, expression,
        problem; answer: answer, correct_answer, computed_answer, correct_answer_note).
    qmatrix : path, optional
        First column the item id, one 0/1 column per skill.
    skills : path, optional
        Columns ``skill, description``; without it the Q-matrix header names the skills.

    Raises
    ------
    InputError
        On a missing column, an empty or repeated item id, a non-0/1 Q-matrix entry.
    UnknownIdError
        When the Q-matrix names an item not in the items file, or a skill not in the
        skills file (file and line).
    """
    items_path = Path(items_path)
    columns, rows = read_csv(items_path, short_rows="refuse")
    id_col = pick_column(items_path, columns, _ID_COLUMNS, id_column)
    text_col = pick_column(items_path, columns, _TEXT_COLUMNS, text_column, required=False)
    answer_col = pick_column(items_path, columns, _ANSWER_COLUMNS, answer_column, required=False)
    type_col = pick_column(items_path, columns, _TYPE_COLUMNS, required=False)
    seen: dict[str, int] = {}
    questions = []
    for position, row in enumerate(rows, 1):
        qid = row.values[id_col]
        if not qid:
            raise InputError(f"{items_path}:{row.line}: empty item id in column {id_col!r}")
        if qid in seen:
            raise InputError(f"{items_path}:{row.line}: item id {qid!r} repeats line {seen[qid]}")
        seen[qid] = row.line
        questions.append({"localId": qid, "text": row.values.get(text_col) or None,
                          "answer": row.values.get(answer_col) or None,
                          "answerType": row.values.get(type_col) or None, "position": position})
    out = ItemSet(dataset, items_path.name, _questions(dataset, questions),
                  pd.DataFrame(columns=["from_id", "to_id", "source"]), defines_concepts=qmatrix is not None)
    if qmatrix is None:
        return out
    qmatrix = Path(qmatrix)
    qcolumns, qrows = read_csv(qmatrix, short_rows="refuse")
    skill_names = qcolumns[1:]
    described: dict[str, str | None] = dict.fromkeys(skill_names)
    if skills is not None:
        skills = Path(skills)
        scolumns, srows = read_csv(skills)
        skill_col = pick_column(skills, scolumns, ("skill", "id", "skill_id"))
        desc_col = pick_column(skills, scolumns, ("description", "name"), required=False)
        described = {r.values[skill_col]: (r.values.get(desc_col) or None) for r in srows}
        for name in skill_names:
            if name not in described:
                raise unknown_id("skill", name, f"{qmatrix}:1", f"it is not in {skills.name}")
    links, covered = [], {}
    for row in qrows:
        qid = row.values[qcolumns[0]]
        if qid not in seen:
            raise unknown_id("item", qid, f"{qmatrix}:{row.line}", f"it is not in {items_path.name}")
        if qid in covered:
            raise InputError(f"{qmatrix}:{row.line}: item {qid!r} repeats line {covered[qid]}")
        covered[qid] = row.line
        for name in skill_names:
            if _binary(row.values[name], f"{qmatrix}:{row.line} column {name!r}"):
                links.append((scoped(dataset, qid), scoped(dataset, name)))
    out.framework, out.concepts = _skill_map(dataset, described, qmatrix.name)
    out.assesses = pd.DataFrame(links, columns=["from_id", "to_id"]).assign(source=qmatrix.name)
    out.notes = {"items without a Q-matrix row": len(seen) - len(covered)}
    return out


def _table(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in read_text(path).splitlines() if line.strip()]


def read_math2015(folder: str | Path, dataset: str) -> ItemSet:
    """Read one exam of the USTC ``math2015`` release (``Math1/`` or ``Math2/``).

    ``q.txt`` is the problem x skill 0/1 matrix (tab-separated, no header),
    ``qnames.txt`` names the skills, ``problemdesc.txt`` gives each problem's type
    (Obj/Sub) and full score. The items have no text.

    Raises
    ------
    InputError
        When the three files disagree in size or ``q.txt`` holds a non-0/1 entry.
    """
    folder = Path(folder)
    names = [r[1].strip().rstrip(",") for r in _table(folder / "qnames.txt")[1:]]
    desc = _table(folder / "problemdesc.txt")[1:]
    q = _table(folder / "q.txt")
    if len(q) != len(desc):
        raise InputError(f"{folder}/q.txt has {len(q)} rows but problemdesc.txt describes {len(desc)} problems")
    skill_ids = [f"s{i + 1:02d}" for i in range(len(names))]
    questions, links = [], []
    for number, (row, (no, kind, score)) in enumerate(zip(q, desc, strict=True), 1):
        if len(row) != len(names):
            raise InputError(f"{folder}/q.txt:{number}: {len(row)} entries but qnames.txt lists {len(names)} skills")
        questions.append({"localId": f"p{int(no):02d}", "text": None, "answer": None,
                          "answerType": f"{kind} (full score {score})", "position": number})
        links += [(scoped(dataset, f"p{int(no):02d}"), scoped(dataset, s))
                  for s, v in zip(skill_ids, row, strict=True) if _binary(v.strip(), f"{folder}/q.txt:{number}")]
    framework, concepts = _skill_map(dataset, dict(zip(skill_ids, names, strict=True)), "qnames.txt")
    return ItemSet(dataset, folder.name, _questions(dataset, questions),
                   pd.DataFrame(links, columns=["from_id", "to_id"]).assign(source="q.txt"), framework, concepts)


def framework_concepts(store: GraphStore, framework: str) -> set[str]:
    """Local ids of the concepts of ``framework`` already in the graph."""
    return set(store.frame("framework_concepts", {"framework": framework})["localId"])


def _check_concepts(concepts: list[str], known: set[str], framework: str, where: str) -> None:
    for concept in concepts:
        if concept not in known:
            raise unknown_id("concept", concept, where,
                             f"framework {framework!r} has no such concept (ingest the standards first)")


def read_concept_map(path: str | Path, dataset: str, framework: str, known: set[str]) -> ItemSet:
    """Read a question -> concept-id JSON map (the LLM-KST ``xes_skills_nys.json`` layout).

    Parameters
    ----------
    path : path
        ``{"<question id>": [<concept id>, ...], ...}``; an empty list is a question
        without concepts (it is kept and takes no part in prerequisites).
    known : set of str
        Local concept ids of ``framework`` (see :func:`framework_concepts`).

    Raises
    ------
    InputError
        When the file is not such an object.
    UnknownIdError
        When a concept id is not in ``framework``, naming the question key.
    """
    path = require_file(path)
    try:
        mapping = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(mapping, dict) or not all(isinstance(v, list) for v in mapping.values()):
        raise InputError(f"{path}: expected an object mapping question ids to lists of concept ids")
    questions, links = [], []
    for position, (qid, concepts) in enumerate(mapping.items(), 1):
        concepts = [str(c) for c in concepts]
        _check_concepts(concepts, known, framework, f"{path}: key {qid!r}")
        questions.append({"localId": qid, "text": None, "answer": None, "answerType": None, "position": position})
        links += [(scoped(dataset, qid), scoped(framework, c)) for c in dict.fromkeys(concepts)]
    assesses = pd.DataFrame(links, columns=["from_id", "to_id"]).assign(source=path.name)
    return ItemSet(dataset, path.name, _questions(dataset, questions), assesses,
                   notes={"questions without concepts": sum(1 for v in mapping.values() if not v)})


def option_lines(options) -> list[str]:
    """The options of a record as lines of a letter, a dot and the text, from a list or a mapping letter -> text.

    >>> option_lines(["4", "6"]), option_lines({"A": "yes", "B": "no"})
    (['A. 4', 'B. 6'], ['A. yes', 'B. no'])
    """
    if isinstance(options, dict):
        return [f"{k}. {v}" for k, v in options.items()]
    return [f"{LETTERS[i]}. {v}" for i, v in enumerate(options or [])]


def _mcq_text(item: dict, where: str) -> str:
    """A multiple-choice item's text: its problem, then its validated ``options``, one lettered line each.

    ``options`` is an object mapping the letters A, B, ... in order to one-line texts
    (the release's XES3G5M layout, ``{"A": "odd", "B": "even"}``); see :func:`mcq_text`.

    >>> _mcq_text({"text": "Which is prime?", "options": {"A": 4, "B": "7"}, "answer": "B"}, "f:1")
    'Which is prime?\\nA. 4\\nB. 7'
    """
    options = item["options"]
    if not isinstance(options, dict):
        raise InputError(f"{where}: \"options\" must be an object mapping the letters A, B, ... to option texts "
                         f"(e.g. {{\"A\": \"4\", \"B\": \"7\"}}), not {type(options).__name__} "
                         f"{json.dumps(options)[:60]}")
    return mcq_text(_item_text(item), options, item.get("answer"), where,
                    text_field=" or ".join(f'"{c}"' for c in _TEXT_COLUMNS))


def _item_text(item: dict):
    """A JSON-lines item's problem text: its first non-null field of ``_TEXT_COLUMNS`` (as for CSV)."""
    return next((item[c] for c in _TEXT_COLUMNS if item.get(c) is not None), None)


def mcq_text(text, options: dict, answer, where: str, field: str = "options", text_field: str = '"text"') -> str:
    """A multiple-choice question's stored text, validated: ``text``, then ``options``, one lettered line each.

    ``options`` maps the letters A, B, ... in order (two or more) to one-line texts; the
    problem must not list options itself (they would be read twice: a run of lettered lines
    from ``A.``, or ``(A) ... (B) ...``; a list ``I.``, ``II.`` is question text), and a gold ``answer``
    (None: no gold) must be one of the letters. Both question loaders (JSON lines items,
    and records with ``--options-field``) go through here; ``text_field`` names where the
    loader read ``text`` from, for the message when it is empty.

    Raises
    ------
    InputError
        Naming ``where`` (file:line) and ``field``, for each rule above.

    >>> mcq_text("2 + 2?", {"A": "3", "B": "4"}, "B", "f:1")
    '2 + 2?\\nA. 3\\nB. 4'
    """
    letters = list(options)
    if len(letters) < 2 or letters != list(LETTERS[:len(letters)]):
        raise InputError(f"{where}: \"{field}\" must name the letters A, B, ... in order, two or more (at most "
                         f"{LETTERS[-1]}), found {', '.join(map(str, letters)) or 'none'}")
    for letter, value in options.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float) or not str(value).strip() \
                or "\n" in str(value) or "\r" in str(value):
            raise InputError(f"{where}: option {letter} must be one line of text, not {json.dumps(value)[:60]}")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: a multiple-choice item needs its problem text, read from {text_field}")
    if option_count(text) is not None or split_options(text)[1]:
        raise InputError(f"{where}: the text already lists options (lines 'A. ...', 'B. ...' or '(A) ... (B) ...'); "
                         f"give them once, in \"{field}\"")
    if answer is not None and str(answer).strip() not in options:
        raise InputError(f"{where}: the answer of a multiple-choice item must be one of its letters "
                         f"{', '.join(letters)}, not {json.dumps(answer)[:60]}")
    return "\n".join([text.rstrip(), *option_lines({k: str(v).strip() for k, v in options.items()})])


def read_items_jsonl(path: str | Path, dataset: str, framework: str | None, known: set[str]) -> ItemSet:
    """Read items as JSON lines: ``{"id", "text", "answer", "type", "solution", "concepts": [...], "verified"}``.

    The text may be under ``question``, ``expression`` or ``problem`` instead (the names
    CSV items take; the first non-null of text, question, expression, problem is read).

    ``options`` (optional) makes an item multiple choice: an object mapping the letters
    A, B, ... in order to one-line option texts (the release's XES3G5M layout); they
    are written under the problem as ``A. ...`` lines (see the module notes), its
    ``type`` is ``choice`` unless given, and a gold answer must be one of the letters.

    ``concepts`` (optional) are local ids of ``framework``, which must be in the graph.
    ``verified`` (optional, true/false) says a person checked the item's concepts; where
    any item has it, every concept link carries it as ``ASSESSES.verified`` (absent:
    false), the subset ``kstp evaluate psr --subset verified`` reads (paper 1, Table 3).

    An item without an ``id`` is numbered by its place, from 1 (as records are).

    Raises
    ------
    InputError
        On invalid JSON, an empty or repeated id, invalid ``options`` (not such an
        object, a text that lists options itself, an answer that is not a letter), each
        with the line.
    UnknownIdError
        On a concept id not in ``framework`` (with the line).
    """
    path = require_file(path)
    seen: dict[str, int] = {}
    questions, links, solutions, verified, says_verified = [], [], [], [], False
    for number, item in json_lines(path):
        if not isinstance(item, dict):
            raise InputError(f"{path}:{number}: each line needs an object (an item)")
        # without an "id", items are numbered from 1 by their place, as records are (--id-field's help)
        qid = str(item["id"]) if item.get("id") is not None else "" if "id" in item else str(len(questions) + 1)
        if not qid:
            raise InputError(f"{path}:{number}: an item's \"id\" is empty; give one, or leave the field out to number "
                             "the items from 1")
        if qid in seen:
            raise InputError(f"{path}:{number}: item id {qid!r} repeats line {seen[qid]}")
        seen[qid] = number
        concepts = [str(c) for c in item.get("concepts") or []]
        if concepts and framework is None:
            raise InputError(f"{path}:{number}: items name concepts; say which framework with --framework")
        _check_concepts(concepts, known, framework or "", f"{path}:{number}")
        answer, text, kind = item.get("answer"), _item_text(item), item.get("type")
        if item.get("options") is not None:
            text, kind = _mcq_text(item, f"{path}:{number}"), kind or "choice"
            answer = str(answer).strip() if answer is not None else None
        questions.append({"localId": qid, "text": text, "answer": None if answer is None else str(answer),
                          "answerType": kind, "position": len(questions) + 1})
        solutions.append(item.get("solution"))
        if item.get("verified", False) not in (True, False):
            raise InputError(f"{path}:{number}: \"verified\" must be true or false, not {item['verified']!r}")
        links += [(scoped(dataset, qid), scoped(framework, c)) for c in dict.fromkeys(concepts)]
        verified += [item.get("verified", False)] * len(dict.fromkeys(concepts))
        says_verified = says_verified or "verified" in item
    if not questions:
        raise InputError(f"{path}: no items: nothing to ingest")
    assesses = pd.DataFrame(links, columns=["from_id", "to_id"]).assign(source=path.name)
    if says_verified:  # only then: a file that never says leaves stored verified flags as they are
        assesses["verified"] = verified
    frame = _questions(dataset, questions)
    if any(solutions):  # worked solutions, shown with in-context exemplars (paper 1 NB2)
        frame["solution"] = solutions
    return ItemSet(dataset, path.name, frame, assesses)


def write_items(store: GraphStore, items: ItemSet) -> LoadReport:
    """Write a validated item set (Dataset, Questions, skills, IN_DATASET, ASSESSES); idempotent."""
    report = LoadReport(items.dataset, notes=dict(items.notes))
    report.add("Dataset", store.write_nodes("Dataset", pd.DataFrame(
        [{"id": items.dataset, "name": items.dataset, "source": items.source}])))
    if items.framework is not None:
        report.add("Framework", store.write_nodes("Framework", items.framework))
        report.add("Concept", store.write_nodes("Concept", items.concepts))
        report.add("PART_OF", store.write_relationships("PART_OF", "Concept", "Framework", pd.DataFrame(
            {"from_id": items.concepts["id"], "to_id": items.framework["id"].iloc[0]})))
    report.add("Question", store.write_nodes("Question", items.questions))
    report.add("IN_DATASET", store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame(
        {"from_id": items.questions["id"], "to_id": items.dataset})))
    if items.defines_concepts:
        stored = store.frame("question_concepts", {"dataset": items.dataset}).rename(
            columns={"questionId": "from_id", "conceptId": "to_id"})
        removed = store.delete_stale("ASSESSES", "Question", "Concept",
                                     stored[stored["from_id"].isin(items.questions["id"])], items.assesses)
        if removed:
            report.notes["concept links removed (re-derive question prerequisites)"] = removed
    report.add("ASSESSES", store.write_relationships("ASSESSES", "Question", "Concept", items.assesses))
    return report
