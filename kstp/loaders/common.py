"""What every loader shares: CSV rows with line numbers, id namespaces, reports, cycles.

Ids are namespaced so that datasets and frameworks cannot collide: a concept is
``<framework>:<local id>``, a question ``<dataset>:<local id>``, a human learner
``<dataset>:<local id>``. Every id read from a file is Unicode-normalised (NFC) and
stripped, so ``é`` typed as one code point and as ``e`` + combining accent is one id.
"""

from __future__ import annotations

import csv
import ctypes
import json
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kstp.errors import CycleError, DataNotFoundError, InputError, UnknownIdError
from kstp.graph.store import WriteReport

# A cell of any size is read (a question's text can pass the csv module's 128 KB default):
# the limit is a C long, whose largest value differs by platform (sys.maxsize overflows it
# on Windows).
csv.field_size_limit(ctypes.c_ulong(-1).value // 2)

__all__ = ["Row", "read_text", "json_lines", "read_header", "read_csv", "read_csv_chunks", "normalise_id",
           "require_columns", "pick_column", "scoped", "LoadReport", "check_acyclic", "collapse_edges",
           "require_file", "unknown_id", "check_namespace", "yaml_error"]


@dataclass(frozen=True)
class Row:
    """One CSV record: its 1-based starting line, its values by column, and how many cells it had."""

    line: int
    values: dict[str, str]
    cells: int = -1


def normalise_id(value: str) -> str:
    """An id as it becomes a key: NFC-normalised, surrounding space stripped.

    >>> normalise_id("caf" + "e\u0301 ") == "caf\u00e9"
    True
    """
    return unicodedata.normalize("NFC", value).strip()


def require_file(path: str | Path) -> Path:
    """``path`` as a Path; raises :class:`DataNotFoundError` when it does not exist."""
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError(f"{path} not found")
    return path


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped).

    Raises
    ------
    DataNotFoundError
        When the file does not exist.
    InputError
        When it is not UTF-8 text, or holds a NUL byte (a binary file); the message
        names the file and the line (and the byte).
    """
    path = require_file(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None
    except IsADirectoryError:
        raise InputError(f"{path} is a folder; expected a file") from None
    if "\x00" in text:
        raise _binary(path, text[:text.index("\x00")].count("\n") + 1)
    return text


def json_lines(path: str | Path) -> Iterator[tuple[int, object]]:
    """(line number, value) of each non-blank line of a JSON lines file, numbered from 1.

    Raises
    ------
    DataNotFoundError, InputError
        As :func:`read_text`; InputError also on a line that is not JSON (with its number).
    """
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: invalid JSON ({exc.msg})") from None


def _binary(path: Path, line: int) -> InputError:
    return InputError(f"{path}:{line}: a NUL byte: a binary file, not text; give a UTF-8 text file")


def _text_lines(path: Path, handle) -> Iterator[str]:
    """The lines of ``handle``, refusing a NUL byte (the csv module reads it into a cell since Python 3.11)."""
    for number, line in enumerate(handle, 1):
        if "\x00" in line:
            raise _binary(path, number)
        yield line


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> InputError:
    line = exc.object[:exc.start].count(b"\n") + 1
    return InputError(f"{path}:{line}: not UTF-8 text (byte {exc.start}); save the file as UTF-8")


def yaml_error(path: str | Path, exc: Exception) -> InputError:
    """A PyYAML error as one line, ``path:line: not valid YAML/JSON at column C (problem)``.

    PyYAML's own message spans several lines (a source excerpt with a caret); the
    location is kept, the excerpt dropped.

    >>> import yaml
    >>> try:
    ...     yaml.safe_load("a: b: c")
    ... except yaml.YAMLError as exc:
    ...     print(yaml_error("w.yaml", exc))
    w.yaml:1: not valid YAML/JSON at column 5 (mapping values are not allowed here)
    """
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    line, column = (mark.line + 1, f" at column {mark.column + 1}") if mark else (1, "")
    return InputError(f"{path}:{line}: not valid YAML/JSON{column} ({problem})")


def read_header(path: str | Path) -> list[str]:
    """The header cells of a CSV file (the first record only; for choosing a reader).

    Raises
    ------
    DataNotFoundError
        When the file does not exist.
    InputError
        When its first line is not UTF-8 text or holds a NUL byte.
    """
    path = require_file(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            return [c.strip() for c in next(csv.reader(_text_lines(path, handle)), [])]
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None


def read_csv(path: str | Path, delimiter: str = ",", short_rows: str = "pad") -> tuple[list[str], list[Row]]:
    """Read a CSV file with a header into ``(columns, rows)``, cells stripped and NFC-normalised.

    Parameters
    ----------
    short_rows : {"pad", "refuse"}
        A row with fewer cells than the header: padded with empty cells (``Row.cells``
        says how many it had), or refused with its line.

    Raises
    ------
    InputError
        When the file is empty or only a header (every loader refuses a file with
        nothing to ingest), holds a NUL byte (a binary file), a row has more cells than
        the header (or fewer, with ``short_rows="refuse"``), or a column name repeats;
        the message names the file and the line. A cell may be of any size.
    """
    columns, chunks = read_csv_chunks(path, 1 << 16, delimiter, short_rows)
    return columns, [row for chunk in chunks for row in chunk]


def read_csv_chunks(path: str | Path, size: int, delimiter: str = ",",
                    short_rows: str = "pad") -> tuple[list[str], Iterator[list[Row]]]:
    """:func:`read_csv` in runs of at most ``size`` rows: the header now, the rows as they are read.

    The file is read as a stream, so memory follows ``size``, not the file. The header
    is checked on the call; a row's error is raised when its chunk is reached (a file
    that is not UTF-8 names the line of the first bad byte, as :func:`read_text` does).

    Raises
    ------
    DataNotFoundError, InputError
        As :func:`read_csv`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("a,b\\n1,2\\n\\n3,4\\n5,6\\n")
    >>> columns, chunks = read_csv_chunks(path, 2)
    >>> columns, [[(row.line, row.values["a"]) for row in chunk] for chunk in chunks]
    (['a', 'b'], [[(2, '1'), (4, '3')], [(5, '5')]])
    """
    path = require_file(path)
    if path.is_dir():
        raise InputError(f"{path} is a folder; expected a file")
    handle = open(path, newline="", encoding="utf-8-sig")
    try:
        reader = csv.reader(_text_lines(path, handle), delimiter=delimiter)
        header = next(reader, None)
        if not header:
            raise InputError(f"{path}:1: empty file, expected a header row")
    except UnicodeDecodeError:
        handle.close()
        read_text(path)  # raises with the line of the bad byte
        raise
    except BaseException:
        handle.close()
        raise
    columns = [normalise_id(c) for c in header]
    if len(set(columns)) != len(columns):
        handle.close()
        dup = next(c for c in columns if columns.count(c) > 1)
        raise InputError(f"{path}:1: column {dup!r} appears twice in the header")
    return columns, _row_chunks(path, handle, reader, columns, size, short_rows)


def _row_chunks(path: Path, handle, reader, columns: list[str], size: int, short_rows: str) -> Iterator[list[Row]]:
    with handle:
        rows: list[Row] = []
        any_rows = False
        start = reader.line_num + 1
        try:
            for cells in reader:
                if any(c.strip() for c in cells):
                    if len(cells) > len(columns) or (len(cells) < len(columns) and short_rows == "refuse"):
                        raise InputError(f"{path}:{start}: {len(cells)} cells but the header has {len(columns)}; "
                                         "give every row one cell per column")
                    width = len(cells)
                    cells = [normalise_id(c) for c in cells] + [""] * (len(columns) - len(cells))
                    rows.append(Row(start, dict(zip(columns, cells, strict=True)), width))
                    any_rows = True
                    if len(rows) == size:
                        yield rows
                        rows = []
                start = reader.line_num + 1
        except UnicodeDecodeError:
            read_text(path)  # raises with the line of the bad byte
            raise
        if not any_rows:
            raise InputError(f"{path}: a header and no rows: nothing to ingest")
        if rows:
            yield rows


def require_columns(path: str | Path, columns: list[str], needed: Iterable[str]) -> None:
    """Raise :class:`InputError` naming the first of ``needed`` missing from ``columns``."""
    for name in needed:
        if name not in columns:
            raise InputError(f"{path}:1: missing column {name!r}; the header has {', '.join(columns)}")


def pick_column(path: str | Path, columns: list[str], candidates: tuple[str, ...],
                chosen: str | None = None, required: bool = True) -> str | None:
    """The column to use: ``chosen`` if given (and present), else the first candidate present.

    Raises
    ------
    InputError
        When ``chosen`` is absent, or nothing fits and ``required`` is true.
    """
    if chosen:
        require_columns(path, columns, [chosen])
        return chosen
    for name in candidates:
        if name in columns:
            return name
    if required:
        raise InputError(f"{path}:1: none of the columns {', '.join(candidates)} found; "
                         f"the header has {', '.join(columns)}")
    return None


def scoped(namespace: str, local_id: str) -> str:
    """The graph id of ``local_id`` inside ``namespace`` (the local id NFC-normalised).

    >>> scoped("frcsub", "Item01")
    'frcsub:Item01'
    >>> scoped("fr", "e\u0301t\u00e9") == scoped("fr", "\u00e9t\u00e9")
    True
    """
    return f"{namespace}:{normalise_id(local_id)}"


def check_namespace(value: str, what: str) -> str:
    """A dataset or framework id: non-empty, without ':' (it separates the namespace) or a path character.

    The id names output files (``psr_learners_<dataset>.csv``, ``koc_<dataset>.json``),
    so ``/`` and ``\\`` (and the names ``.`` and ``..``) are refused here, at ingest,
    rather than mapped: a file name then is the id as it is, on every system.

    Raises
    ------
    InputError
        Otherwise; ``a:b`` as a dataset would let dataset ``a`` overwrite its questions,
        ``math/grade1`` would make its output files fail or land in a sub-folder.

    >>> check_namespace("frcsub", "dataset")
    'frcsub'
    """
    if (not value or value != value.strip() or value in (".", "..")
            or any(c in value for c in ":/\\\x00")):
        raise InputError(f"{what} id {value!r} must be non-empty, without ':', '/', '\\' or surrounding spaces "
                         "(ids name output files); e.g. math_grade1")
    return value


@dataclass
class LoadReport:
    """What an ingest wrote and what it noticed, per kind of record (a note is a count or the ids it names)."""

    source: str
    written: dict[str, WriteReport] = field(default_factory=dict)
    notes: dict[str, int | list[str]] = field(default_factory=dict)

    def add(self, what: str, report: WriteReport) -> None:
        self.written[what] = self.written.get(what, WriteReport()) + report

    def as_dict(self) -> dict:
        return {"source": self.source, "written": {k: asdict(v) for k, v in self.written.items()},
                "notes": self.notes}


def collapse_edges(edges: list[tuple[str, str, str]]) -> tuple[list[tuple[str, str, str]], int]:
    """Drop repeated ``(from, to)`` edges, keeping the first; return them and the count dropped.

    Each edge is ``(from, to, where)``, ``where`` a location for error messages.

    >>> collapse_edges([("a", "b", "l2"), ("a", "b", "l3"), ("b", "c", "l4")])
    ([('a', 'b', 'l2'), ('b', 'c', 'l4')], 1)
    """
    seen: set[tuple[str, str]] = set()
    kept = []
    for edge in edges:
        if edge[:2] not in seen:
            seen.add(edge[:2])
            kept.append(edge)
    return kept, len(edges) - len(kept)


def check_acyclic(edges: list[tuple[str, str, str]], source: str) -> None:
    """Refuse self-loops and cycles among ``(from, to, where)`` prerequisite edges.

    Raises
    ------
    CycleError
        Naming the cycle (``A -> B -> C -> A``) and where each of its edges was read.

    Examples
    --------
    >>> check_acyclic([("a", "b", "line 2"), ("b", "a", "line 3")], "edges.csv")
    Traceback (most recent call last):
    ...
    kstp.errors.CycleError: prerequisite cycle a -> b -> a in edges.csv (line 2, line 3); remove one edge
    """
    import networkx as nx
    where = {(a, b): w for a, b, w in edges}
    for a, b, w in edges:
        if a == b:
            raise CycleError(f"prerequisite self-loop {a} -> {a} in {source} ({w}); remove it", [a, a])
    graph = nx.DiGraph(list(where))
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return
    ids = [u for u, _ in cycle] + [cycle[0][0]]
    places = ", ".join(where[(u, v)] for u, v in cycle)
    raise CycleError(f"prerequisite cycle {' -> '.join(ids)} in {source} ({places}); remove one edge", ids)


def unknown_id(kind: str, value: str, where: str, hint: str = "") -> UnknownIdError:
    """An :class:`UnknownIdError` worded the same way by every loader."""
    return UnknownIdError(f"unknown {kind} {value!r} at {where}{'; ' + hint if hint else ''}")

