"""The knowledge-space field's file formats: kstIO's (R) and pks-style 0/1 matrices, read and written.

R's kstIO (Hockemeyer; the KST Tools and SRBT Tools formats) stores five kinds of
family or relation, each as a matrix of 0/1 characters, one row per line, no separator:

- ``structure`` (``.kst``, ``.struct``), ``space`` (``.spc``, ``.space``): one row per state;
- ``basis`` (``.bsr``, ``.bas``): one row per base element, ``1`` where the element is
  minimal for that item (an atom), ``2`` where it holds the item but is not;
- ``relation`` (``.spr``, ``.rel``): the surmise relation, row p, column q is ``1`` when p
  is a prerequisite of q (reflexive);
- ``data`` (``.dat``, ``.data``): one response pattern per row (per learner, repeated).

and four layouts of that matrix (:data:`FORMATS`): ``srbt``, the matrix after the lines
``#SRBT v2.0 <kind> ASCII`` (``basis``, ``relation``: without ``ASCII``), the number of
items, the number of rows (not for a relation) and optional ``#`` comment lines; ``kst``,
the two count lines without the SRBT line (KST Tools; not for relations); ``matrix``,
the rows alone; ``csv``, a header of item names and comma-separated cells (R's
``write.csv(x, row.names = FALSE)``, what kstIO writes with ``format = "CSV"``). A CSV
whose first header cell is empty, or whose first column holds ids (text, or distinct
whole numbers not all 0/1), has row names first (R's ``write.csv`` with row names, pks's
matrices, kstp's wide responses): they are kept as row labels. A CSV whose first line is
a row of 0/1 cells has no header: its columns are unnamed, as in the other layouts, and an
item column with an empty header cell is refused. Every other column is an item and holds
0/1, except a structure's ``probability`` column (:data:`EXTRA_COLUMNS`): a ``2`` or
``0.5`` in an item column is refused with its line and column, never the column dropped
(issue 48), and so is a file separated by semicolons or tabs. Files
without a header have no item names: kstIO names them ``a``, ``b``, ... (:func:`letters`),
and kstp maps them onto a dataset's questions in order.

Readers check every line and name the file and line of the first bad one; writers
write what kstIO writes, byte for byte (held by tests against files kstIO wrote).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kstp.csvcells import neutralise, restore
from kstp.errors import InputError
from kstp.loaders.common import read_text

__all__ = ["KINDS", "FORMATS", "EXTENSIONS", "KstFile", "read_kst_file", "write_kst_file", "letters",
           "kind_of_path", "basis_codes", "align_columns", "EXTRA_COLUMNS", "write_surmise_function",
           "SURMISE_FUNCTION_HEADER", "kstio_order"]

#: What a file holds.
KINDS = ("structure", "space", "basis", "relation", "data")
#: How its matrix is laid out.
FORMATS = ("srbt", "kst", "matrix", "csv")
#: File-name endings and the kind each names (kstIO's and KST Tools' conventions).
EXTENSIONS = {".kst": "structure", ".struct": "structure", ".structure": "structure", ".spc": "space",
              ".space": "space", ".bsr": "basis", ".bas": "basis", ".basis": "basis", ".spr": "relation",
              ".rel": "relation", ".dat": "data", ".data": "data"}
_SRBT_NAMES = {"structure": "structure", "space": "space", "basis": "basis", "relation": "relation", "data": "data"}
_SRBT = re.compile(r"#SRBT v2\.0 (\w+)")


def letters(n: int) -> list[str]:
    """kstIO's item names for a file without any: ``a`` ... ``z``, then ``a.1`` ... (R's ``make.unique``).

    >>> letters(3), letters(28)[-3:]
    (['a', 'b', 'c'], ['z', 'a.1', 'b.1'])
    """
    names, seen = [], {}
    for k in range(n):
        base = chr(ord("a") + k % 26)
        count = seen.get(base, 0)
        names.append(base if count == 0 else f"{base}.{count}")
        seen[base] = count + 1
    return names


def kind_of_path(path: str | Path) -> str | None:
    """The kind a file name announces by its ending (:data:`EXTENSIONS`), None for another ending.

    >>> kind_of_path("chess.kst"), kind_of_path("rel.SPR"), kind_of_path("K.csv")
    ('structure', 'relation', None)
    """
    return EXTENSIONS.get(Path(path).suffix.lower())


@dataclass
class KstFile:
    """A matrix read from (or to be written to) one of the field's files.

    Attributes
    ----------
    kind : str or None
        One of :data:`KINDS`: from the SRBT line, else the file's ending, else the
        caller's ``kind``; None when nothing says.
    format : str
        One of :data:`FORMATS`: how the file was laid out.
    matrix : ndarray of shape (rows, items), uint8
        0/1 cells (a basis file's ``2`` read as 1; its codes are in ``codes``).
    items : list of str
        Item names: the CSV header's, else kstIO's letters (:func:`letters`).
    named : bool
        Whether the file named its items (a CSV header) or they are letters.
    labels : list of str or None
        Row names of a CSV that has them.
    codes : ndarray or None
        A basis file's cells as written (0, 1, 2).
    extra : dict of str to ndarray
        Numeric CSV columns after the items that are not 0/1 (e.g. ``probability``).
    """

    kind: str | None
    format: str
    matrix: np.ndarray
    items: list[str]
    named: bool
    labels: list[str] | None = None
    codes: np.ndarray | None = None
    extra: dict | None = None


def _bad(path: Path, line: int, text: str) -> InputError:
    return InputError(f"{path}:{line}: {text}")


def _count(path: Path, line: int, text: str, what: str) -> int:
    value = text.strip()
    if not value.isdigit() or int(value) <= 0:
        raise _bad(path, line, f"expected the number of {what} (a positive whole number), found {value!r}")
    return int(value)


def read_kst_file(path: str | Path, kind: str | None = None, format: str = "auto") -> KstFile:
    """Read a kstIO file (SRBT, KST, matrix or CSV layout) or a pks-style 0/1 CSV matrix.

    Parameters
    ----------
    path : path
        The file (UTF-8 text).
    kind : str, optional
        What it holds (:data:`KINDS`) when neither an SRBT line nor the file's ending says.
    format : {"auto", "srbt", "kst", "matrix", "csv"}
        The layout; ``auto`` detects it as kstIO does (an ``#SRBT`` first line; a CSV
        when the first line holds a comma, or is a one-column header in a ``.csv`` file;
        a matrix when the first and last rows are as
        long; else the KST layout).

    Returns
    -------
    KstFile

    Raises
    ------
    InputError
        On a row or CSV item cell that is not 0/1 (0/1/2 in a basis; the message names
        the line and, in a CSV, the column), a row of the wrong length, a file
        separated by semicolons or tabs, a count
        line that disagrees with the rows, an SRBT line naming another kind than
        ``kind``, or an empty file; the message names the file and the line.
    DataNotFoundError
        When the file does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "endm.kst"
    >>> _ = path.write_text("#SRBT v2.0 structure ASCII\\n2\\n3\\n00\\n10\\n11\\n")
    >>> f = read_kst_file(path)
    >>> f.kind, f.format, f.items, f.matrix.tolist()
    ('structure', 'srbt', ['a', 'b'], [[0, 0], [1, 0], [1, 1]])
    """
    path = Path(path)
    if format not in ("auto", *FORMATS):
        raise InputError(f"unknown file layout {format!r}; use one of auto, {', '.join(FORMATS)}")
    if kind is not None and kind not in (*KINDS, "surmisefunction"):
        raise InputError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)} or surmisefunction")
    text = read_text(path)
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise _bad(path, 1, "empty file")
    first = lines[0].strip()
    for separator, said in ((";", "';'"), ("\t", "tabs")):
        if separator in first and "," not in first and format in ("auto", "csv"):
            raise _bad(path, 1, f"cells separated by {said}: kstp reads comma-separated CSV (R's write.csv, not "
                       "write.csv2) or kstIO's layouts; save the file with commas")
    if format == "auto":
        # a .csv file of one column has no comma: a first line that is not a row of codes is its header
        format = ("srbt" if first.startswith("#SRBT")
                  else "csv" if "," in first or path.suffix.lower() == ".csv" and not set(first) <= set("012")
                  else "matrix" if len(first) == len(lines[-1].strip()) and len(lines) > 1 or len(lines) == 1
                  else "kst")
    declared = kind or kind_of_path(path)
    if format == "csv":
        return _read_csv(path, lines, declared)
    start, n_items, n_rows = 0, None, None
    if format == "srbt":
        match = _SRBT.match(first)
        if not match or match.group(1) not in _SRBT_NAMES:
            raise _bad(path, 1, f"not an SRBT v2.0 header: {first[:60]!r}; expected '#SRBT v2.0 <kind> ASCII' with "
                       f"kind one of {', '.join(KINDS)}")
        said = match.group(1)
        if kind is not None and said != kind and {said, kind} != {"structure", "space"}:
            held = {"data": "response data"}
            raise _bad(path, 1, f"the file holds {held.get(said, 'a ' + said)}, not {held.get(kind, 'a ' + kind)}")
        declared = said
        n_items = _count(path, 2, lines[1] if len(lines) > 1 else "", "items")
        start = 2
        if said != "relation":
            n_rows = _count(path, 3, lines[2] if len(lines) > 2 else "", "rows")
            start = 3
        while start < len(lines) and lines[start].lstrip().startswith("#"):
            start += 1
    elif format == "kst":
        if declared == "relation":
            raise _bad(path, 1, "a relation file has no KST Tools layout (kstIO: SRBT, matrix or CSV)")
        n_items = _count(path, 1, lines[0], "items")
        n_rows = _count(path, 2, lines[1] if len(lines) > 1 else "", "rows")
        start = 2
    rows = [line.strip() for line in lines[start:]]
    if n_items is None:
        n_items = len(rows[0]) if rows else 0
    if declared == "relation" and n_rows is None:
        n_rows = n_items
    allowed = set("012") if declared == "basis" else set("01")
    for offset, row in enumerate(rows):
        line = start + offset + 1
        if len(row) != n_items or not set(row) <= allowed:
            cells = "0, 1 or 2" if declared == "basis" else "0 or 1"
            raise _bad(path, line, f"expected {n_items} cells of {cells} with no separator, found {row[:40]!r}")
    if n_rows is not None and len(rows) != n_rows:
        where = len(lines) if len(rows) < n_rows else start + n_rows + 1
        raise _bad(path, where, f"the file announces {n_rows} rows and has {len(rows)}")
    codes = np.array([[int(c) for c in row] for row in rows], dtype=np.uint8).reshape(len(rows), n_items)
    return KstFile(declared, format, (codes > 0).astype(np.uint8), letters(n_items), False,
                   codes=codes if declared == "basis" else None)


#: The first header cell of a surmise-function CSV (kstMatrix's ``kmsurmisefunction``, kstIO's files).
SURMISE_FUNCTION_HEADER = "Item"

#: Columns of a structure CSV that are not items: the probability of each state (kstp's fits, pks's P.K).
EXTRA_COLUMNS = ("probability",)


def _read_csv(path: Path, lines: list[str], kind: str | None) -> KstFile:
    import csv

    table = list(csv.reader(lines))
    header = [restore(c.strip()) for c in table[0]]
    digits = set("012") if kind == "basis" else set("01")
    named = not all(c in digits for c in header)  # a first line of 0/1 cells is a row: no header, kstIO's letters
    if not named:
        header = letters(len(header))
    numbered = [(number, [restore(c.strip()) for c in row]) for number, row in enumerate(table[1 - (not named):],
                                                                                       2 - (not named))]
    for number, row in numbered:
        if len(row) != len(header) and any(row):
            raise _bad(path, number, f"{len(row)} cells for the {len(header)} columns of the header")
    numbered = [(number, row) for number, row in numbered if any(row)]
    body = [row for _, row in numbered]
    if not body:
        raise _bad(path, 1, "only a header: no rows")
    cells = "0, 1 or 2" if kind == "basis" else "0 or 1"
    labelled = named and len(header) > 1 and _has_labels(header[0], [row[0] for row in body], digits)
    items, extra = [], {}
    for j in range(1 if labelled else 0, len(header)):
        values = [row[j] for row in body]
        if header[j] in EXTRA_COLUMNS and kind not in ("data", "basis", "relation"):
            bad = next((i for i, v in enumerate(values) if not _is_number(v)), None)
            if bad is not None:
                raise _bad(path, numbered[bad][0], f"column {j + 1} ({header[j]!r}) holds {values[bad]!r}: "
                           "a probability column holds numbers")
            extra[header[j]] = np.array([float(v) for v in values])
            continue
        # every other column is an item: a cell that is not 0/1 is refused, never the column dropped
        bad = next((i for i, v in enumerate(values) if v not in digits), None)
        if bad is not None:
            hint = "" if kind in ("data", "basis", "relation") or not _is_number(values[bad]) else \
                f" (a column of state probabilities is named {EXTRA_COLUMNS[0]})"
            raise _bad(path, numbered[bad][0], f"column {j + 1} ({header[j]!r}) holds {values[bad]!r}: an item "
                       f"column holds {cells}{hint}")
        if not header[j]:
            raise _bad(path, 1, f"column {j + 1} has no name in the header; name every item column, or leave the "
                       "header out (the columns are then a, b, c, ... as kstIO names them)")
        if extra:
            raise _bad(path, 1, f"item column {header[j]!r} comes after the {next(iter(extra))!r} column; put "
                       "item columns first")
        items.append(j)
    if not items:
        raise _bad(path, 1, f"no item column (a column of {cells} cells)")
    names = [header[j] for j in items]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise _bad(path, 1, f"item {repeated[0]!r} names two columns")
    codes = np.array([[int(row[j]) for j in items] for row in body], dtype=np.uint8)
    if labelled and header[0] == SURMISE_FUNCTION_HEADER and kind in (None, "surmisefunction"):
        known = [row[0] in names for row in body]
        if all(known):  # kstIO's surmise function: each row a clause of the item its first column names
            _check_clauses(path, [number for number, _ in numbered], body, names, codes)
            return KstFile("surmisefunction", "csv", codes, names, True, labels=[row[0] for row in body])
        if any(known):  # rows naming items, and one naming none: a surmise function with a stray name
            i = known.index(False)
            raise _bad(path, numbered[i][0], f"a clause of {body[i][0]!r}, which is not an item of the header "
                       f"({_listed(names)}); each row of a surmise function names the item it is a clause of")
    if labelled and header[0] == SURMISE_FUNCTION_HEADER and kind == "data" and all(row[0] in names for row in body):
        raise _bad(path, 1, f"the file holds a surmise function (its first column, {SURMISE_FUNCTION_HEADER!r}, names "
                   "an item on every row: kstIO's write_surmisefunction), not response data; give it as the structure")
    if kind == "surmisefunction":
        raise _bad(path, 1, f"not a surmise function: its first column is headed {SURMISE_FUNCTION_HEADER!r} "
                   "and names an item of the header on every row (kstIO's write_surmisefunction)")
    return KstFile(kind, "csv", (codes > 0).astype(np.uint8), names, named,
                   labels=[row[0] for row in body] if labelled else None,
                   codes=codes if kind == "basis" else None, extra=extra or None)


def _check_clauses(path: Path, lines: list[int], body: list[list[str]], names: list[str], codes: np.ndarray) -> None:
    """Refuse a surmise function with a clause that does not hold its item, or an item with no clause.

    A clause of q is a minimal state holding q, and every item has one (Doignon &
    Falmagne 1999, Def. 5.1.1); without that its basis would not span a space on the
    header's items.
    """
    for line, row, clause in zip(lines, body, codes, strict=True):
        if not clause[names.index(row[0])]:
            raise _bad(path, line, f"the clause of {row[0]!r} does not hold {row[0]!r} (its {row[0]!r} cell is 0); "
                       "a clause of an item is a state that holds it")
    missing = [q for q in names if q not in {row[0] for row in body}]
    if missing:
        raise _bad(path, 1, f"item {missing[0]!r} has no clause (no row names it); a surmise function gives every "
                   "item of the header at least one")


def _listed(names: list[str], shown: int = 6) -> str:
    """``a, b, c`` or ``a, b, c, d, e, f, ...``: names for a message."""
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")


def _has_labels(name: str, first: list[str], digits: set[str]) -> bool:
    """Whether a CSV's first column holds row names (learner ids, R's row names), not an item.

    It does when its header cell is empty (R's ``write.csv`` with row names), when a
    cell is not a number (``l0001``), or when its cells are distinct whole numbers that
    are not all 0/1 (numeric learner ids). A column of 0/1 with a stray ``2`` or ``0.5``
    repeats its values or holds a fraction: it stays an item and the stray cell is refused.
    """
    if name == "" or any(not _is_number(v) for v in first):
        return True
    return any(v not in digits for v in first) and all(v.isdigit() for v in first) and len(set(first)) == len(first)


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def align_columns(read: KstFile, items: list[str], path: str | Path) -> tuple[np.ndarray, str]:
    """The file's matrix with one column per item of ``items``, in that order, and how it was matched.

    A CSV header names the items, by id or by local id (``b101`` for
    ``probability_pks:b101``), in any order; a file without names has one column per
    item of ``items``, in that order. A relation's rows are reordered too.

    Raises
    ------
    UnknownIdError
        When a column names no item of ``items``.
    InputError
        When an item has no column, or (without names) the number of columns differs.

    Examples
    --------
    >>> f = KstFile("structure", "csv", np.array([[0, 1], [1, 1]], np.uint8), ["b", "a"], True)
    >>> matrix, how = align_columns(f, ["ds:a", "ds:b"], "k.csv")
    >>> matrix.tolist(), how
    ([[1, 0], [1, 1]], 'columns matched by name')
    """
    from kstp.errors import UnknownIdError

    names: dict[str, int] = {}
    for j, q in enumerate(items):
        names[q] = j
        names.setdefault(q.split(":", 1)[-1], j)
    if not read.named:
        if read.matrix.shape[1] != len(items):
            shown = ", ".join(q.split(":", 1)[-1] for q in items[:6]) + (", ..." if len(items) > 6 else "")
            raise InputError(f"{path} has {read.matrix.shape[1]} item columns and names none; the data have "
                             f"{len(items)} items ({shown}), which unnamed columns follow in that order")
        if len(items) == 1:
            return read.matrix, f"the unnamed column taken as {items[0]}"
        return read.matrix, f"unnamed columns taken as {items[0]} ... {items[-1]} in order"
    unknown = [q for q in read.items if q not in names]
    if unknown:
        raise UnknownIdError(f"{path}: column {unknown[0]!r} is not an item ({', '.join(items[:5])}"
                             f"{', ...' if len(items) > 5 else ''})")
    order = np.full(len(items), -1)
    for j, q in enumerate(read.items):
        order[names[q]] = j
    missing = [items[i] for i in np.flatnonzero(order < 0)]
    if missing:
        raise InputError(f"{path} has no column for {', '.join(missing)}; it must cover every item")
    matrix = read.matrix[:, order]
    if read.kind == "relation":
        matrix = matrix[order, :]
    return matrix, "columns matched by name"


def basis_codes(basis: np.ndarray) -> np.ndarray:
    """kstIO's cells of a base: 1 where the element is an atom for the item (minimal among the base
    elements holding it), 2 where it holds the item and is not, 0 elsewhere.

    >>> basis_codes(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1]])).tolist()
    [[1, 0, 0], [0, 1, 0], [2, 2, 1]]
    """
    b = np.asarray(basis, dtype=np.int64)
    sizes = b.sum(axis=1)
    inside = ((b @ b.T) == sizes[None, :]) & (sizes[None, :] < sizes[:, None])  # [K, L]: L strictly inside K
    covered = (inside.astype(np.int64) @ b) > 0  # items of a smaller base element inside K
    return np.where(b > 0, np.where(covered, 2, 1), 0).astype(np.uint8)


def write_kst_file(path: str | Path, kind: str, matrix, items=None, format: str = "srbt",
                   extra: dict | None = None, labels=None, label_name: str = "learnerId") -> Path:
    """Write a structure, space, basis, relation or data matrix as kstIO writes it.

    Parameters
    ----------
    path : path
        The file; its folder is created.
    kind : {"structure", "space", "basis", "relation", "data"}
    matrix : array-like of shape (rows, items), 0/1
        For a basis its elements (their 1/2 cells are computed, :func:`basis_codes`);
        for a relation the (items, items) incidence, row p column q when p is a
        prerequisite of q.
    items : sequence of str, optional
        Column names of a CSV (default :func:`letters`); other layouts have none.
    format : {"srbt", "kst", "matrix", "csv"}
    extra : dict of str to array-like, optional
        CSV only: numeric columns after the items (a fit's ``probability`` per state).
    labels : sequence of str, optional
        CSV only: a first column of row names (learner ids), headed ``label_name``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        On an unknown kind or layout, a layout kstIO does not write for the kind (a
        relation in the KST layout, a basis as a bare matrix), or extra columns outside
        a CSV.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = write_kst_file(pathlib.Path(tempfile.mkdtemp()) / "b.bsr", "basis", [[1, 0], [1, 1]])
    >>> print(path.read_text(), end="")
    #SRBT v2.0 basis
    2
    2
    10
    21
    """
    if kind not in KINDS:
        raise InputError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    if format not in FORMATS:
        raise InputError(f"unknown file layout {format!r}; use one of {', '.join(FORMATS)}")
    if kind == "relation" and format == "kst":
        raise InputError("a relation has no KST Tools layout; write it as srbt, matrix or csv")
    if kind == "basis" and format == "matrix":
        raise InputError("a basis is written as srbt, kst or csv (kstIO), not as a bare matrix")
    if (extra or labels is not None) and format != "csv":
        raise InputError("extra columns (state probabilities, learner ids) go into a CSV file: write a .csv")
    cells = np.asarray(matrix, dtype=np.uint8)
    if cells.ndim != 2:
        raise InputError(f"expected a matrix, got an array of {cells.ndim} dimensions")
    if kind == "basis":
        cells = basis_codes(cells)
    n_rows, n_items = cells.shape
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if format == "csv":
        names = list(items) if items is not None else letters(n_items)
        columns = [*([label_name] if labels is not None else []), *names, *(extra or {})]
        quoted = lambda text: '"{}"'.format(str(neutralise(text)).replace('"', '""'))  # noqa: E731
        lines = [",".join(quoted(c) for c in columns)]
        values = [np.asarray(v, dtype=np.float64) for v in (extra or {}).values()]
        for r in range(n_rows):
            lines.append(",".join([*([quoted(labels[r])] if labels is not None else []), *map(str, cells[r].tolist()),
                                   *(_r_number(v[r]) for v in values)]))
        path.write_text("\n".join(lines) + "\n")
        return path
    head = []
    if format == "srbt":
        head.append(f"#SRBT v2.0 {kind}" + ("" if kind in ("basis", "relation") else " ASCII"))
    if format in ("srbt", "kst"):
        head.append(str(n_items))
        if kind != "relation":
            head.append(str(n_rows))
    rows = ["".join(map(str, row)) for row in cells.tolist()]
    path.write_text("\n".join(head + rows) + "\n")
    return path


def _r_number(value: float) -> str:
    """A number as R's ``write.csv`` prints a double: up to 15 significant digits, ``NA`` for NaN."""
    if np.isnan(value):
        return "NA"
    return f"{value:.15g}"


def write_surmise_function(path: str | Path, clause_items, clauses, items) -> Path:
    """Write a surmise function as kstIO's ``write_surmisefunction`` writes kstMatrix's.

    R's ``write.csv`` of the character matrix ``as.matrix(kmsurmisefunction(K))``: a header
    ``"Item"`` and the item names, then one row per clause, its item and its 0/1 cells,
    every cell quoted. :func:`read_kst_file` reads it back (kind ``surmisefunction``: the
    clauses as ``matrix``, their items as ``labels``).

    Parameters
    ----------
    path : path
    clause_items : sequence of str
        The item of each clause.
    clauses : array-like of shape (clauses, items), 0/1
    items : sequence of str
        The column names.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InputError
        When ``clause_items`` and ``clauses`` differ in length, or a clause item is not in
        ``items``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "sf.csv"
    >>> print(write_surmise_function(path, ["a", "b"], [[1, 0], [1, 1]], ["a", "b"]).read_text(), end="")
    "Item","a","b"
    "a","1","0"
    "b","1","1"

    References
    ----------
    kstIO 0.4-2 ``write_surmisefunction``, ``read_surmisefunction`` (Hockemeyer).
    """
    cells = np.asarray(clauses, dtype=np.uint8).reshape(len(clause_items), len(items))
    unknown = next((q for q in clause_items if q not in items), None)
    if unknown is not None:
        raise InputError(f"clause item {unknown!r} is not among the items {', '.join(map(str, items))}")
    quoted = lambda text: '"{}"'.format(str(neutralise(text)).replace('"', '""'))  # noqa: E731
    lines = [",".join(quoted(c) for c in [SURMISE_FUNCTION_HEADER, *items])]
    lines += [",".join([quoted(q), *(quoted(c) for c in row.tolist())]) for q, row in zip(clause_items, cells,
                                                                                          strict=True)]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def kstio_order(matrix) -> np.ndarray:
    """Row order in which kstIO writes a family of sets (a ``kspace``'s states, a ``kbase``'s elements).

    kstIO writes ``as.binmat`` of a set of sets, whose order the sets package gives
    (``.list_order``): by size, then by the members in order; with items named in
    column order, a set holding an earlier column comes first. ``matrix[kstio_order(matrix)]``
    is then what ``write_kspace`` and ``write_kbase`` write, row for row.

    Parameters
    ----------
    matrix : array-like of shape (rows, items), 0/1

    Returns
    -------
    ndarray of shape (rows,), int

    Examples
    --------
    >>> kstio_order([[1, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [0, 0, 1]]).tolist()
    [2, 4, 0, 3, 1]

    References
    ----------
    kstIO 0.4-2 ``write_kbase``, ``write_kspace``; sets 1.0-25 ``.list_order`` (Meyer, Hornik).
    """
    cells = np.asarray(matrix, dtype=np.int64)
    if not cells.size:
        return np.arange(len(cells))
    return np.lexsort((*(-cells[:, j] for j in range(cells.shape[1] - 1, -1, -1)), cells.sum(axis=1)))
