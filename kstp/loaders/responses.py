"""Learner logs -> ``(:Learner {kind: "human"})-[:ANSWERED {correct}]->(:Question)``.

Three layouts:

- **wide**: one row per person, first column the person id, then one 0/1 column per
  item. A blank cell or a short row is refused with its line, unless the caller says
  blanks mean "not attempted" (``missing="blank"``, ``--missing blank``); their count
  is then reported (``answers.attrs["notAttempted"]``);
- **long**: ``learner, item, correct[, timestamp]`` rows (column names found as for
  items: learner/learner_id/user_id/person_id, item/item_id/question_id; the time
  column as in :data:`TIME_COLUMNS`);
- **pykt**: the pyKT question-level sequence CSV that XES3G5M ships in (``uid,
  questions, responses[, timestamps], selectmasks``, comma-joined lists; a selectmask
  of -1 pads the end of a sequence). Rows of one uid are concatenated in file order.

A learner who answers one question more than once keeps one answer; such repeats are
counted in the report, whose note says which rule chose:

- a long log with a time column keeps the **latest attempt by time**, wherever its row
  is (the log is read in time order; equal times: the later row wins). Times are ISO
  8601 date-times (``2024-03-01``, ``2024-03-01 14:05:09``, ``2024-03-01T14:05:09Z``;
  one without a UTC offset is read as is, and a column uses one form: all with an
  offset or none) or epoch numbers (any unit, one per column). A blank time, or
  another form (``03/01/2024``, whose day and month order is ambiguous), is refused
  with its line;
- otherwise, and in pyKT sequences (already in time order), the **last row** of the
  file wins: the rule of the LLM-KST release.

Every item must already be a question of the dataset.

Memory: the long and pyKT readers stream the file in chunks of rows and keep the answers
as codes (a categorical learner and item column, one string per distinct id; timestamps
as Arrow strings), about 20 bytes per answer (8 more for a long log's parsed times); a
pyKT row's comma-joined lists are split and checked in Arrow and numpy, not per value in
Python. The whole file is checked before anything is written, so a bad line writes
nothing. :func:`write_answers` then de-duplicates over the whole log (the last answer in
the log's order wins whichever chunk it came from);
the answers of learners new to the graph go in one bulk load, and where learners are
already stored, in runs of whole learners, so the read of their stored answers follows
the run. The learners and their answers are one unit to every reader
(:meth:`~kstp.graph.store.GraphStore.unit`): they appear together at the end of the write,
and an exception or a kill leaves none of them in sight.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kstp.errors import InputError, UnknownIdError
from kstp.graph.store import GraphStore
from kstp.loaders.common import (
    LoadReport,
    Row,
    check_namespace,
    pick_column,
    read_csv,
    read_csv_chunks,
    scoped,
    unknown_id,
)

__all__ = ["read_wide", "read_long", "read_pykt", "write_answers", "FORMATS", "MISSING", "TIME_COLUMNS"]

FORMATS = ("wide", "long", "pykt")
#: How a blank cell of a wide matrix is read: refused, or "not attempted".
MISSING = ("refuse", "blank")
#: CSV rows parsed at a time: a pyKT row holds a few hundred answers, a long row one.
PYKT_CHUNK_ROWS = 4_000
LONG_CHUNK_ROWS = 200_000
#: Answers per run of whole learners when some learners are already in the graph: the
#: stored answers of a run are read to compare (a re-run, an update). Learners new to the
#: graph have no answers yet, so theirs go in one bulk load: each further load into a
#: non-empty ANSWERED table rewrites its question side (on Ladybug, three loads of 1.8 M
#: cost 1.7x the CPU of one load of 5.4 M).
WRITE_BATCH = 1_000_000
_HINT = "it is not a question of this dataset (ingest the items first)"
#: Column names read as an attempt's time in a long log, the first present wins; matched
#: ignoring case, spaces, ``_`` and ``-`` (``Timestamp``, ``Date Answered``, ``submitted-at``).
#: Durations (``elapsed_time``, ``ms_first_response``) are not times and are never read.
TIME_COLUMNS = ("timestamp", "time", "datetime", "date", "answered_at", "date_answered", "submitted_at",
                "created_at", "end_time", "start_time", "time_done")
#: The report's note on which rule chose among repeats (see the module notes).
_LAST_ROW = "the last row of the file"
_EPOCH = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_OFFSET = r"[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?\s*(Z|[+-][0-9]{2}(:?[0-9]{2})?)$"
_FORMS = ("an epoch number", "a date-time without a UTC offset", "a date-time with a UTC offset")


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
        raise unknown_id("item", item, where, _HINT)


def read_wide(path: str | Path, known_items: set[str], missing: str = "refuse", strict: bool = False) -> pd.DataFrame:
    """Read a person x item 0/1 matrix into answers ``(learner, item, correct, timestamp)``.

    Parameters
    ----------
    known_items : set of str
        The dataset's questions by local id, without the dataset prefix (``"q1"``, not
        ``"ds:q1"``): the ``localId`` column of the ``dataset_questions`` query.
    missing : {"refuse", "blank"}
        A blank cell (or the cells a short row lacks): refused, or read as not
        attempted and counted in ``answers.attrs["notAttempted"]``.
    strict : bool
        Refuse a matrix that has no column for some of ``known_items``; by default
        they are listed, sorted, in ``answers.attrs["itemsWithoutColumn"]``.

    Raises
    ------
    InputError
        On a repeated person id, a cell other than 0 or 1 (or blank, with
        ``missing="blank"``), by default a blank cell or a short row (with line and
        column), and with ``strict`` items of the dataset without a column (named).
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
    absent = sorted(known_items - set(items))
    if strict and absent:
        shown = ", ".join(absent[:10]) + (f" and {len(absent) - 10} more" if len(absent) > 10 else "")
        raise InputError(f"{path}:1: no column for {len(absent)} of the dataset's {len(known_items)} questions: "
                         f"{shown}; add their columns, or ingest without --strict")
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
    answers.attrs["itemsWithoutColumn"] = absent
    return answers


class _Collected:
    """Answers gathered chunk by chunk as integer codes; one Python string per distinct id."""

    def __init__(self) -> None:
        self.learners: dict[str, int] = {}
        self.items: dict = {}
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, pa.Array]] = []

    @staticmethod
    def _codes(values: np.ndarray, table: dict) -> np.ndarray:
        codes, uniques = pd.factorize(values)
        lookup = np.array([table.setdefault(v, len(table)) for v in uniques.tolist()], dtype=np.int64)
        return lookup[codes] if len(codes) else np.zeros(0, np.int64)

    def add(self, learners: np.ndarray, items: np.ndarray, correct: np.ndarray, stamps: pa.Array,
            repeat: np.ndarray | None = None) -> None:
        """One chunk: ``learners`` per answer, or per row with ``repeat`` answers each."""
        learner = self._codes(learners, self.learners)
        self.parts.append((learner if repeat is None else np.repeat(learner, repeat),
                           self._codes(items, self.items), correct, stamps))

    def frame(self) -> pd.DataFrame:
        """``learner, item`` (categorical), ``correct`` (bool), ``timestamp`` (Arrow strings, null if none)."""
        learner, item, correct, stamps = zip(*self.parts, strict=True) if self.parts else ([], [], [], [])
        return pd.DataFrame({
            "learner": pd.Categorical.from_codes(np.concatenate([np.zeros(0, np.int64), *learner]),
                                                 list(self.learners)),
            "item": pd.Categorical.from_codes(np.concatenate([np.zeros(0, np.int64), *item]),
                                              [str(i) for i in self.items]),
            "correct": np.concatenate([np.zeros(0, bool), *correct]),
            "timestamp": pd.arrays.ArrowExtensionArray(pa.chunked_array(stamps, pa.string()))})


def _refuse_first(checks: list[tuple[np.ndarray, Callable[[int], Exception]]]) -> None:
    """Raise the error of the first row that fails a check; a row's checks run in list order.

    Each check is a per-row "fails" mask and the error for a row index. A mask may be
    False where an earlier check of the same row already fails.
    """
    failing = [(int(np.argmax(fails)), order) for order, (fails, _) in enumerate(checks) if fails.any()]
    if failing:
        row, order = min(failing)
        raise checks[order][1](row)


def _time_column(columns: list[str]) -> str | None:
    """The header's time column: the first of :data:`TIME_COLUMNS` present, compared loosely.

    >>> _time_column(["User", "Question", "Correct", "Date Answered"]), _time_column(["elapsed_time"])
    ('Date Answered', None)
    """
    def key(name: str) -> str:
        return re.sub(r"[\s_-]", "", name).lower()

    present = {}
    for column in columns:
        present.setdefault(key(column), column)
    return next((present[key(name)] for name in TIME_COLUMNS if key(name) in present), None)


class _Times:
    """A long log's attempt times, checked chunk by chunk, as one sortable float per answer.

    Epoch numbers are kept as they are (their unit only has to be one per column);
    date-times become microseconds since 1970 (exact in a float). The form of the first
    time fixes the file's: epoch, without a UTC offset, or with one.
    """

    def __init__(self, path: Path, column: str) -> None:
        self.path, self.column = path, column
        self.form: int | None = None
        self.form_line = 0
        self.blank_line: int | None = None
        self.keys: list[np.ndarray] = []

    def check(self, values: list[str], lines: list[int]) -> list[tuple[np.ndarray, Callable[[int], Exception]]]:
        """Parse one chunk's times; return its per-row checks for :func:`_refuse_first`."""
        text = pc.utf8_trim_whitespace(pa.array(values, pa.string()))
        blank = pc.equal(text, "").to_numpy(zero_copy_only=False)
        form = np.where(pc.match_substring_regex(text, _EPOCH).to_numpy(zero_copy_only=False), 0,
                        np.where(pc.match_substring_regex(text, _OFFSET).to_numpy(zero_copy_only=False), 2, 1))
        timed = np.flatnonzero(~blank)
        if self.blank_line is None and blank.any():
            self.blank_line = lines[int(np.argmax(blank))]
        if self.form is None and timed.size:
            self.form, self.form_line = int(form[timed[0]]), lines[timed[0]]
        keys = np.full(len(values), np.nan)
        other = ~blank & (form != self.form)
        unreadable = np.zeros(len(values), bool)
        mine = np.flatnonzero(~blank & ~other)
        if mine.size:
            chosen = text.take(pa.array(mine))
            try:
                keys[mine] = self._numbers(chosen)
            except pa.ArrowInvalid:  # name the first value that fails, one at a time
                unreadable[mine] = [not self._readable(v) for v in chosen.to_pylist()]
        self.keys.append(keys)

        def where(r: int) -> str:
            return f"{self.path}:{lines[r]}: {self.column} {values[r]!r}"

        return [
            (other, lambda r: InputError(f"{where(r)} is {_FORMS[form[r]]} where line {self.form_line} has "
                                         f"{_FORMS[self.form]}; write every time of the column in one form")),
            (unreadable, lambda r: InputError(f"{where(r)} is not a time: write ISO 8601 date-times "
                                              "(2024-03-01 14:05:09, 2024-03-01T14:05:09Z) or epoch numbers")),
        ]

    def keep(self, rows: np.ndarray) -> None:
        """Keep only ``rows`` (a mask) of the last chunk's times: the others' answers were left out."""
        self.keys[-1] = self.keys[-1][rows]

    def _numbers(self, text: pa.Array) -> np.ndarray:
        if self.form == 0:
            return pc.cast(text, pa.float64()).to_numpy()
        # Arrow, not pandas.to_datetime: pandas 2.3 (format="ISO8601") reads a time without an
        # offset that follows one with an offset in that offset
        stamps = pc.cast(text, pa.timestamp("ns", "UTC" if self.form == 2 else None))
        return (pc.cast(stamps, pa.int64()).to_numpy() // 1000).astype(np.float64)

    def _readable(self, value: str) -> bool:
        try:
            self._numbers(pa.array([value], pa.string()))
        except pa.ArrowInvalid:
            return False
        return True

    def order(self) -> np.ndarray | None:
        """The answers' time order (stable: equal times keep file order); ``None`` for a log without times.

        Raises
        ------
        InputError
            When some rows have a time and another row's is blank.
        """
        if self.form is None:
            return None
        if self.blank_line is not None:
            raise InputError(f"{self.path}:{self.blank_line}: blank {self.column} where other rows have a time; "
                             "a repeated answer is chosen by time, so give every row one (or drop the column: "
                             "then the last row wins)")
        return np.argsort(np.concatenate(self.keys), kind="stable")


def read_long(path: str | Path, known_items: set[str], chunk: int = LONG_CHUNK_ROWS,
              unknown: str = "refuse") -> pd.DataFrame:
    """Read ``learner, item, correct[, timestamp]`` rows into answers.

    With a time column (:data:`TIME_COLUMNS`) the answers come in time order (equal
    times in file order), so :func:`write_answers` keeps each learner's latest attempt
    at a question; without one, in file order, so the last row wins. The rule is in
    ``answers.attrs["repeats"]``. The file is read ``chunk`` rows at a time (see the
    module notes on memory).

    Parameters
    ----------
    path : path
    known_items : set of str
        The dataset's questions by local id, without the dataset prefix (``"q1"``, not
        ``"ds:q1"``): the ``localId`` column of the ``dataset_questions`` query.
    unknown : {"refuse", "skip"}
        A row of an item that is not a question of the dataset: refuse the file (with its
        line), or leave the row out, counted (as :func:`read_pykt`).

    Raises
    ------
    InputError
        On a missing column, an empty id, or a ``correct`` other than 0/1; with a time
        column, on a time that is not ISO 8601 nor an epoch number, one in another form
        than the column's first, or a blank one (each with its line).
    UnknownIdError
        On an item that is not a question of the dataset (with line), under ``refuse``.
    """
    path = Path(path)
    columns, chunks = read_csv_chunks(path, chunk)
    learner_col = pick_column(path, columns, ("learner", "learner_id", "user_id", "person_id", "uid"))
    item_col = pick_column(path, columns, ("item", "item_id", "question_id", "question"))
    correct_col = pick_column(path, columns, ("correct", "response", "score"))
    time_col = _time_column(columns)
    times = _Times(path, time_col) if time_col else None
    known = pd.Index(list(known_items), dtype=object)
    collected = _Collected()
    skipped = _skipping(unknown)
    for rows in chunks:
        _long_chunk(path, rows, (learner_col, item_col, correct_col, time_col), known, collected, times, skipped)
    answers = _with_skipped(collected.frame(), skipped)
    order = times.order() if times else None
    if order is not None:
        answers = answers.iloc[order].reset_index(drop=True)
    answers.attrs["repeats"] = (_LAST_ROW if order is None else
                                f"the latest {time_col!r} (equal times: the later row)")
    return answers


def _long_chunk(path: Path, rows: list[Row], columns: tuple, known: pd.Index, collected: _Collected,
                times: _Times | None, skipped: dict | None = None) -> None:
    """Check one chunk of long rows (vectorised) and add its answers (and their times to ``times``); with
    ``skipped``, rows of unknown questions are left out and counted there."""
    learner_col, item_col, correct_col, time_col = columns
    learners, items, correct = (np.array([row.values[c] for row in rows], dtype=object)
                                for c in (learner_col, item_col, correct_col))
    empty = (learners == "") | (items == "")

    def where(r: int) -> str:
        return f"{path}:{rows[r].line}"

    outside = ~empty & ~pd.Index(items).isin(known)
    _refuse_first([
        (empty, lambda r: InputError(f"{where(r)}: empty {learner_col if not learners[r] else item_col}")),
        (outside if skipped is None else np.zeros(len(rows), bool),
         lambda r: unknown_id("item", items[r], where(r), _HINT)),
        ((correct != "0") & (correct != "1"),
         lambda r: InputError(f"{where(r)}: a response must be 0 or 1, found {correct[r]!r}")),
        *(times.check([row.values[time_col] for row in rows], [row.line for row in rows]) if times else []),
    ])
    stamps = (pa.array([row.values[time_col] or None for row in rows], pa.string()) if time_col
              else pa.nulls(len(rows), pa.string()))
    if skipped is not None and outside.any():
        skipped["answers"] += int(outside.sum())
        skipped["items"].update(items[outside].tolist())
        inside = ~outside
        learners, items, correct, stamps = learners[inside], items[inside], correct[inside], stamps.filter(inside)
        if times is not None:
            times.keep(inside)
    collected.add(learners, items, correct == "1", stamps)


def _int_lists(cells: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Comma-joined integer cells -> (flat values, length per cell, per-cell "not all integers").

    An empty cell is an empty list; values may have space around them, as ``int`` allows.
    """
    text = pa.array(cells, pa.string())
    lists = pc.split_pattern(pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text), ",")
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy().astype(np.int64)
    flat = pc.utf8_trim_whitespace(lists.flatten())
    try:
        return pc.cast(flat, pa.int64()).to_numpy(), lengths, np.zeros(len(cells), bool)
    except pa.ArrowInvalid:
        good = pc.match_substring_regex(flat, r"^-?[0-9]{1,18}$").to_numpy(zero_copy_only=False)
        cell = np.repeat(np.arange(len(cells)), lengths)
        bad = np.bincount(cell[~good], minlength=len(cells)) > 0
        return pc.cast(pc.if_else(good, flat, "0"), pa.int64()).to_numpy(), lengths, bad


def _known_ints(known_items: set[str]) -> np.ndarray:
    """The known items written as plain integers (``"7"``, not ``"07"``), as a sorted array."""
    return np.array(sorted(int(i) for i in known_items if i.lstrip("-").isdigit() and str(int(i)) == i),
                    dtype=np.int64)


def _pykt_chunk(path: Path, rows: list[Row], known: np.ndarray, collected: _Collected,
                skipped: dict | None = None) -> None:
    """Check one chunk of pyKT rows (vectorised) and add its answers before the padding; with ``skipped`` (a
    dict of ``answers`` and ``items``) answers to unknown questions are left out and counted there, not refused."""
    n = len(rows)

    def where(r: int) -> str:
        return f"{path}:{rows[r].line}"

    cells = {c: [row.values.get(c, "") for row in rows] for c in ("questions", "responses", "selectmasks",
                                                                   "timestamps")}
    (q, lq, bad_q), (r, lr, bad_r), (m, lm, bad_m) = (_int_lists(cells[c]) for c in
                                                      ("questions", "responses", "selectmasks"))
    stamp_text = pa.array(cells["timestamps"], pa.string())
    has_stamps = pc.not_equal(stamp_text, "").to_numpy(zero_copy_only=False)
    stamp_lists = pc.split_pattern(pc.if_else(has_stamps, stamp_text, pa.scalar(None, pa.string())), ",")
    ls = np.where(has_stamps, pc.list_value_length(stamp_lists).fill_null(0).to_numpy(), lq)
    bad_length = (lq != lr) | (ls != lq) | ((lm != 0) & (lm != lq))
    ok = ~(bad_q | bad_r | bad_m | bad_length)
    # the rows that passed: their lists line up answer by answer
    rows_ok = np.flatnonzero(ok)
    length = lq[rows_ok]
    row_of = np.repeat(np.arange(len(rows_ok)), length)
    at = np.arange(len(row_of)) - np.repeat(np.cumsum(length) - length, length)
    questions, responses = q[np.repeat(ok, lq)], r[np.repeat(ok, lr)]
    end = length.copy()
    masked = lm[rows_ok] > 0
    pad = np.flatnonzero(np.repeat(masked, length))[m[np.repeat(ok, lm)] == -1]
    first, index = np.unique(row_of[pad], return_index=True)
    end[first] = at[pad][index]
    keep = at < end[row_of]
    bad_01 = np.zeros(n, bool)
    bad_01[rows_ok] = np.bincount(row_of[keep & (responses != 0) & (responses != 1)], minlength=len(rows_ok)) > 0
    unknown = keep & ~np.isin(questions, known)
    bad_id = np.zeros(n, bool)
    if skipped is not None:  # XES3G5M's logs mention questions outside the released dataset: the release skips them
        skipped["answers"] += int(unknown.sum())
        skipped["items"].update(np.unique(questions[unknown]).tolist())
        keep = keep & ~unknown
    else:
        bad_id[rows_ok] = np.bincount(row_of[unknown], minlength=len(rows_ok)) > 0

    def first_unknown(row: int) -> Exception:
        value = questions[unknown & (row_of == np.searchsorted(rows_ok, row))][0]
        return unknown_id("item", str(value), where(row), _HINT)

    def not_integers(column: str) -> Callable[[int], Exception]:
        return lambda row: InputError(f"{where(row)} {column}: expected comma-joined integers, "
                                      f"found {cells[column][row][:40]!r}")

    _refuse_first([
        (bad_q, not_integers("questions")), (bad_r, not_integers("responses")), (bad_m, not_integers("selectmasks")),
        (bad_length, lambda row: InputError(f"{where(row)}: questions, responses, timestamps and selectmasks "
                                            "differ in length")),
        (bad_01, lambda row: InputError(f"{where(row)}: responses before the padding must be 0 or 1")),
        (bad_id, first_unknown),
    ])
    # every row passed: the stamps of a row without them are nulls
    stamp_start = np.cumsum(ls * has_stamps) - ls * has_stamps
    take = np.repeat(stamp_start, lq) + at
    stamps = pc.take(stamp_lists.flatten(), pa.array(take, mask=~np.repeat(has_stamps, lq)))
    uids = np.array([row.values["uid"] for row in rows], dtype=object)
    collected.add(uids, questions[keep], responses[keep] == 1, stamps.filter(pa.array(keep)),
                  repeat=np.bincount(row_of[keep], minlength=n))


def read_pykt(path: str | Path, known_items: set[str], chunk: int = PYKT_CHUNK_ROWS,
              unknown: str = "refuse") -> pd.DataFrame:
    """Read a pyKT question-level sequence CSV into answers, in sequence order.

    Each row's lists are cut at the first selectmask of -1 (padding). Responses must
    be 0/1 there. The file is read ``chunk`` rows at a time (see the module notes on
    memory).

    Parameters
    ----------
    path : path
    known_items : set of str
        The dataset's questions by local id, without the dataset prefix (the question ids
        as the file has them): the ``localId`` column of the ``dataset_questions`` query.
    unknown : {"refuse", "skip"}
        An answer to a question that is not in the dataset: refuse the file (with its
        line), or leave the answer out, counted in ``attrs["skippedAnswers"]`` and
        ``attrs["skippedItems"]`` (XES3G5M's logs name questions the released dataset
        lacks, and paper 1's release skips those records).

    Raises
    ------
    InputError
        On lists of different lengths, non-integers, or a response other than 0/1.
    UnknownIdError
        On a question id that is not a question of the dataset (with line), under ``refuse``.
    """
    path = Path(path)
    columns, chunks = read_csv_chunks(path, chunk)
    for needed in ("uid", "questions", "responses"):
        pick_column(path, columns, (needed,))
    known = _known_ints(known_items)
    collected = _Collected()
    skipped = _skipping(unknown)
    for rows in chunks:
        _pykt_chunk(path, rows, known, collected, skipped)
    answers = collected.frame()
    answers.attrs["repeats"] = _LAST_ROW  # a sequence is in time order already
    return _with_skipped(answers, skipped)


#: What an answer to a question outside the dataset does: ``refuse`` the file, or ``skip`` the answer (counted).
UNKNOWN_ITEMS = ("refuse", "skip")


def _skipping(unknown: str) -> dict | None:
    """The counter of skipped answers under ``skip`` (None under ``refuse``)."""
    if unknown not in UNKNOWN_ITEMS:
        raise InputError(f"unknown-item rule {unknown!r}: use {' or '.join(UNKNOWN_ITEMS)}")
    return {"answers": 0, "items": set()} if unknown == "skip" else None


def _with_skipped(answers: pd.DataFrame, skipped: dict | None) -> pd.DataFrame:
    answers.attrs["skippedAnswers"] = skipped["answers"] if skipped else 0
    answers.attrs["skippedItems"] = len(skipped["items"]) if skipped else 0
    return answers


def _learner_runs(counts: np.ndarray, batch: int) -> list[tuple[int, int]]:
    """Consecutive learners ``[a, b)`` whose answers add up to about ``batch``; a learner is never split.

    >>> _learner_runs(np.array([3, 3, 3, 5, 1]), 6)
    [(0, 2), (2, 4), (4, 5)]
    """
    start = np.cumsum(counts) - counts
    cuts = np.flatnonzero(np.diff(start // max(batch, 1))) + 1
    bounds = [0, *cuts.tolist(), len(counts)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _require_questions(store: GraphStore, dataset: str, items: pd.Index, source: str) -> None:
    """Refuse, before anything is written, answers to items that are not questions of ``dataset``
    in the graph (the readers check their ``known_items``; a caller may pass any set)."""
    stored = store.frame("dataset_questions", {"dataset": dataset})["localId"]
    if stored.empty:
        raise InputError(f"{source}: dataset {dataset!r} has no questions in the graph; ingest its items first")
    missing = pd.Index(items).difference(pd.Index(stored.astype(str)))
    if len(missing):
        raise UnknownIdError(f"{source}: {len(missing)} item(s) are not questions of dataset {dataset!r}, e.g. "
                             f"{', '.join(map(repr, missing[:3]))} (local ids, without the dataset prefix)")


def write_answers(store: GraphStore, dataset: str, answers: pd.DataFrame, source: str,
                  batch: int = WRITE_BATCH) -> LoadReport:
    """Write learners and their answers (the last answer per learner and item wins); idempotent.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``learner, item, correct, timestamp`` with local ids, in answer order
        (:func:`read_long` puts a log with times in time order; the ``timestamp`` values
        themselves are stored, not compared). ``answers.attrs["repeats"]``, which the
        readers set, says in the report's note which rule that order stands for.
    batch : int
        About this many answers go to the store at a time, in runs of whole learners,
        when some of the learners are already in the graph; otherwise all at once.

    Raises
    ------
    InputError
        When there are no answers, or the dataset has no questions in the graph.
    UnknownIdError
        When an item is not a question of the dataset; nothing is written then.

    Notes
    -----
    The learners and their answers appear to readers together, at the end, or not at
    all (:meth:`~kstp.graph.store.GraphStore.unit`); a run after a kill writes what
    the killed one did not.
    De-duplication and each answer's ``position`` (1-based within its learner) are
    computed once over the whole log, so every kept answer falls in exactly one run:
    the report's counts are those of one write, and a re-run finds every answer
    unchanged. The edges reach the store with categorical id columns (one
    string per learner and per item); Ladybug loads them with ``COPY FROM`` an Arrow
    table.
    """
    check_namespace(dataset, "dataset")
    if answers.empty and answers.attrs.get("skippedAnswers"):
        raise InputError(f"{source}: all {answers.attrs['skippedAnswers']} answers are to questions that are not in "
                         f"dataset {dataset!r} ({answers.attrs['skippedItems']} distinct), skipped: nothing to "
                         "ingest; is it the dataset these answers belong to?")
    if answers.empty:
        raise InputError(f"{source}: no answers found (an empty file, or only a header?)")
    report = LoadReport(dataset)
    # Integer codes for learners and items: de-duplication and positions on 5 M answers
    # hash ints, not strings, and the scoped ids are built once per distinct value.
    learner, learners = pd.factorize(answers["learner"])
    item, items = pd.factorize(answers["item"])
    _require_questions(store, dataset, items, source)
    last = ~pd.Series(learner.astype(np.int64) * max(len(items), 1) + item).duplicated(keep="last").to_numpy()
    # answers grouped by learner, in answer order within each (a no-op on a grouped log)
    order = (np.arange(len(learner)) if (np.diff(learner) >= 0).all()
             else np.argsort(learner, kind="stable"))
    counts = np.bincount(learner, minlength=len(learners))
    position = np.empty(len(learner), np.int64)
    position[order] = np.arange(len(learner)) - np.repeat(np.cumsum(counts) - counts, counts) + 1
    order = order[last[order]]
    report.notes = {"answers read": len(answers),
                    "repeated answers superseded by a later one": int(len(answers) - last.sum()),
                    "a repeated answer keeps": answers.attrs.get("repeats", _LAST_ROW)}
    prefix = scoped(dataset, "")
    local = pd.Index(learners, dtype=object)
    learner_ids = prefix + local
    item_ids = prefix + pd.Index(items, dtype=object)
    kept = np.bincount(learner[order], minlength=len(learners))
    ends = np.cumsum(kept)
    timestamps = answers["timestamp"]
    no_stamps = bool(timestamps.isna().all())
    with store.unit("Learner"):  # learners and their answers appear together, or not at all
        nodes = store.write_nodes("Learner", pd.DataFrame(
            {"id": learner_ids, "kind": "human", "dataset": dataset, "localId": local}))
        report.add("Learner", nodes)
        fresh = nodes.created == len(learners)  # no answer of theirs can be stored yet
        for a, b in _learner_runs(kept, len(order) if fresh else batch):
            rows = order[ends[a] - kept[a]:ends[b - 1]]
            stamps = (pd.Series(None, index=rows, dtype=object) if no_stamps
                      else timestamps.iloc[rows].astype(object))
            edges = pd.DataFrame({
                "from_id": pd.Categorical.from_codes(learner[rows], learner_ids),
                "to_id": pd.Categorical.from_codes(item[rows], item_ids),
                "correct": answers["correct"].to_numpy(bool)[rows],
                "timestamp": stamps.where(stamps.notna(), None).to_numpy(object),
                "position": position[rows]})
            report.add("ANSWERED", store.write_relationships("ANSWERED", "Learner", "Question", edges, new=fresh))
    return report
