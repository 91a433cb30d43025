"""What every command shares: the store in the context, ``--format``, tables, progress, messages.

Data goes to stdout, messages to stderr. Exit status: 0 ok; 1 bad input or data (a
:class:`KstpError` becomes a one-line ``Error: ...``); 2 usage (click); 130 interrupted
by Ctrl-C or SIGTERM, with a line saying what the command had kept (:func:`on_interrupt`).

Output: ``--format table`` (the default) prints tables that fit the terminal, numbers
whole; ``json`` and ``csv`` print the same result as data (:func:`emit`). Progress goes to
stderr: a spinner or bar on a terminal, otherwise a line per step and per few percent
with counts and elapsed seconds; ``kstp --quiet`` drops it, ``kstp --verbose`` keeps the
step lines on a terminal too.
"""

from __future__ import annotations

import csv
import errno
import functools
import io
import json
import logging
import math
import os
import signal
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from kstp.csvcells import neutralise
from kstp.errors import KstpError, UnknownIdError
from kstp.inference.backend import MAX_SEED
from kstp.settings import graph_target

if TYPE_CHECKING:
    import pandas as pd

    from kstp.graph.store import GraphStore

__all__ = ["KstpGroup", "format_option", "json_option", "graph_format_option", "output_format", "dumps", "to_csv",
           "emit", "print_table", "render_table", "table_width", "print_lines", "get_store", "message", "status",
           "progress_bar", "with_rate", "on_interrupt", "set_verbosity", "err_console", "refuse_together",
           "option_given", "out_option", "require_output_path", "SEED"]

# Ids are data: no emoji codes (':M:' in a run id) and no markup taken from them.
err_console = Console(stderr=True, emoji=False, markup=False)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM is handled as Ctrl-C: store what arrived, exit 130


class KstpGroup(click.Group):
    """A click group: :class:`KstpError` -> ``Error: ...``, exit 1; a file or folder that cannot be
    written or read (an ``OSError`` naming it: ``--out /proc/x``) the same; Ctrl-C or SIGTERM -> exit 130."""

    def invoke(self, ctx: click.Context) -> Any:
        main = threading.current_thread() is threading.main_thread()  # signals go to the main thread only
        previous = signal.signal(signal.SIGTERM, _terminate) if main else None
        try:
            return super().invoke(ctx)
        except KstpError as exc:
            click.echo(f"Error: {exc}{_graph_named(ctx, exc)}", err=True)
            ctx.exit(1)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):  # no room: not a defect either
                where = f"writing {exc.filename}" if exc.filename else "writing a file"
                click.echo(f"Error: {where}: {exc.strerror}; the file is incomplete, the graph is as it was after "
                           "its last write; free space and run the command again", err=True)
                ctx.exit(1)
            if exc.filename is None:  # not about a path the user gave: a defect, with its traceback
                raise
            click.echo(f"Error: {exc.filename}: {exc.strerror or exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo(f"Interrupted: {ctx.meta.get(_KEPT) or _kept_by_default(ctx)}", err=True)
            ctx.exit(130)
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)


def _graph_named(ctx: click.Context, exc: KstpError) -> str:
    """`` (graph: ladybug:/abs/path)`` after an error that found nothing, if the message lacks it."""
    obj = ctx.find_root().obj or {}
    if "store" not in obj or not (isinstance(exc, UnknownIdError) or "the graph" in str(exc)):
        return ""
    where = graph_target(obj.get("graph")).describe()
    return "" if where in str(exc) else f" (graph: {where})"


#: Commands that only read the graph: they open an embedded graph read-only, so they
#: work on a read-only disk and while another process writes (``kst space`` unless --store).
READ_ONLY = ("db stats", "db export", "query", "report nextstep", "report rqeval", "kst fringe", "kst check",
             "kst space", "kst analyse", "kst export", "runs list", "runs show", "runs export", "runs diff",
             "explore", "campaign status", "campaign report")
# not report dagmath: it writes its recomputed figures back

_KEPT = "kstp.kept"  # ctx.meta key: what an interruption keeps, as the running command last said


def on_interrupt(text: str) -> None:
    """Say what a Ctrl-C (or SIGTERM) from now on leaves behind: ``Interrupted: <text>`` on stderr.

    A command calls it as it moves from step to step; the last call before the interruption
    is the line printed. Without one the group says what fits the command (see
    :class:`KstpGroup`).
    """
    click.get_current_context().meta[_KEPT] = text


def _kept_by_default(ctx: click.Context) -> str:
    """What an interrupted command that said nothing (:func:`on_interrupt`) kept: it depends on the graph."""
    if "store" not in (ctx.obj or {}):
        return "the graph was not opened, nothing was written; run the same command again."
    return "what the command had written is kept; run the same command again to finish it."


def _command(ctx: click.Context) -> str:
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(reversed(names))


def get_store(ctx: click.Context) -> GraphStore:
    """The graph of this invocation, opened once (``--graph`` or ``$KSTP_GRAPH``) and closed at exit.

    Read-only for the commands in :data:`READ_ONLY` and for any command given ``--no-write``.
    """
    from kstp.graph.factory import open_store

    root = ctx.find_root()
    root.ensure_object(dict)
    if "store" not in root.obj:
        command = _command(ctx)
        read_only = any(command == c or command.startswith(c + " ") for c in READ_ONLY) \
            and not ctx.params.get("store") or bool(ctx.params.get("no_write"))
        store = open_store(root.obj.get("graph"), read_only=read_only)
        if read_only:
            root.meta.setdefault(_KEPT, "nothing was written to the graph (the command only reads it).")
        root.obj["store"] = store
        root.call_on_close(store.close)
    return root.obj["store"]


#: ``--seed``: what every backend and numpy take (llama.cpp's and many servers' seeds are 32-bit
#: unsigned; a larger one reached the graph's INT64 column as an overflow traceback).
SEED = click.IntRange(0, MAX_SEED)  # llama.cpp reads 2**32 - 1 as "a random seed"


def option_given(ctx: click.Context, name: str) -> bool:
    """Whether parameter ``name`` was typed on the command line or set in the environment (not a default)."""
    return ctx.get_parameter_source(name) in (click.core.ParameterSource.COMMANDLINE,
                                              click.core.ParameterSource.ENVIRONMENT)


def _flag(ctx: click.Context, name: str) -> str:
    """The option the user gave for parameter ``name`` (of flags sharing it, the one whose value was taken)."""
    options = [p for p in ctx.command.params if p.name == name]
    chosen = next((p for p in options if getattr(p, "flag_value", None) == ctx.params[name]), options[0])
    return chosen.opts[-1]


def refuse_together(ctx: click.Context, name: str, others: tuple[str, ...], why: str) -> None:
    """Exit 2 (a usage error) when option ``name`` and one of ``others`` were both given.

    Names are the parameters' Python names; only values typed on the command line or
    set in the environment count, defaults never do.

    Raises
    ------
    click.UsageError
        ``--no-groups and --groups contradict each other: <why>``.
    """
    if not option_given(ctx, name):
        return
    for other in others:
        if option_given(ctx, other):
            raise click.UsageError(f"{_flag(ctx, name)} and {_flag(ctx, other)} contradict each other: {why}")


def out_option(what: str):
    """``--out DIR``: the folder for ``what``. The rule of every command that writes files
    (README, "Output files"): they are written only where ``--out`` names a folder; without
    it the command prints its result and writes no file (what it writes to the graph is
    the same either way). ``kstp demo``, whose job is to leave ``results/``, is the exception.
    """
    from pathlib import Path

    return click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                        help=f"Also write {what} to this folder (without --out no file is written).")


def require_output_path(log_samples: bool, output_path) -> None:
    """``--log-samples`` writes into ``--output-path``: alone it would log nowhere (a usage error, exit 2)."""
    if log_samples and output_path is None:
        raise click.UsageError("--log-samples goes with --output-path, the folder the samples are written to")


FORMATS = ("table", "json", "csv")
_FORMAT = "kstp.format"  # ctx.meta key: the --format of the running command


def format_option(flag: str = "--format", extra: tuple[str, ...] = ()) -> Callable:
    """A decorator adding ``--format table|json|csv`` (named ``flag``) and ``--json``, its alias for json.

    The command receives ``as_json``: False for a table, True for json and csv, which it
    prints with :func:`emit` (so the two always hold the same values); :func:`output_format`
    tells the format itself. ``flag`` names the option where ``--format`` already means
    something else (``ingest items --format jsonl`` is the input's format). ``extra``
    adds formats the command prints itself (``dot``: a Graphviz graph); ``as_json`` is
    True for them too, so the command checks :func:`output_format` first.

    Raises
    ------
    click.UsageError
        ``--json`` together with another ``--format`` (exit 2).
    """

    def decorate(func: Callable) -> Callable:
        @click.option(flag, "output_format", type=click.Choice(FORMATS + tuple(extra)), default="table",
                      show_default=True, help="Print the result as a table, JSON or CSV on stdout"
                      + (f" ({', '.join(extra)}: {_EXTRA_HELP.get(extra[0], extra[0])})" if extra else "") + ".")
        @click.option("--json", "as_json", is_flag=True, help=f"Print the result as JSON (same as {flag} json).")
        @functools.wraps(func)
        def wrapper(*args, output_format: str = "table", as_json: bool = False, **kwargs):
            if as_json and output_format not in ("table", "json"):
                raise click.UsageError(f"--json and {flag} {output_format} contradict each other; give one")
            chosen = "json" if as_json else output_format
            click.get_current_context().meta[_FORMAT] = chosen
            return func(*args, as_json=chosen != "table", **kwargs)

        return wrapper

    return decorate


_EXTRA_HELP = {"dot": "the graph in Graphviz's DOT language"}


#: ``--format table|json|csv`` and ``--json`` (see :func:`format_option`).
json_option = format_option()
#: ``--format table|json|csv|dot`` and ``--json``: for commands that print a graph.
graph_format_option = format_option(extra=("dot",))


def output_format() -> str:
    """The ``--format`` of the running command: ``table``, ``json`` or ``csv``."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_FORMAT, "table") if ctx is not None else "table"


def _clean(data: Any) -> Any:
    """JSON-ready copy: DataFrames as records, numpy scalars as Python, NaN as None."""
    pd = sys.modules.get("pandas")  # not loaded: ``data`` holds no DataFrame (and --help stays quick)
    if pd is not None and isinstance(data, pd.DataFrame):
        return _clean(data.to_dict("records"))
    if isinstance(data, dict):
        return {str(k): _clean(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_clean(v) for v in data]
    if hasattr(data, "item"):
        data = data.item()
    if isinstance(data, float) and math.isnan(data):
        return None
    return data


def dumps(data: Any) -> str:
    """``data`` (dicts, lists, DataFrames) as indented JSON, NaN as null."""
    return json.dumps(_clean(data), indent=2, allow_nan=False)


def _flat(record: dict, prefix: str = "") -> dict:
    """One CSV row: nested dicts as dotted columns; a string as it is, a missing value empty, any other
    value (numbers, booleans, lists) as its JSON text, so a cell reads as the JSON output's value."""
    row = {}
    for key, value in record.items():
        if isinstance(value, dict):
            row.update(_flat(value, f"{prefix}{key}."))
        else:
            row[prefix + key] = _csv_cell(value)
    return row


def _csv_cell(value: Any) -> str | None:
    """A value as its CSV cell: text neutralised against spreadsheet formulas, anything else as JSON."""
    return value if value is None else neutralise(value) if isinstance(value, str) else json.dumps(value)


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def to_csv(data: Any) -> str:
    """``data`` as CSV: the values :func:`dumps` prints, full precision, in rows.

    A list of records is one row per record; a record alone is one row. A record holding
    lists of records (``db stats``: frameworks, datasets; ``validate prerequisites``:
    summary, edges) is still one table, which ``pandas.read_csv`` reads: a first column
    ``table`` names the part each row belongs to (``summary`` for the record's other
    fields, else the list's name), and the columns are those of every part, a part's
    row empty in the others'. Nested records become dotted columns (``nodes.Question``),
    lists of values their JSON text (``["q1", "q2"]``), None (and NaN) an empty cell.

    Examples
    --------
    >>> print(to_csv({"dataset": "toy", "state": ["q1", "q2"], "size": {"items": 2}}), end="")
    dataset,state,size.items
    toy,"[""q1"", ""q2""]",2
    >>> print(to_csv({"graph": "g", "datasets": [{"id": "a", "questions": 3}]}), end="")
    table,graph,id,questions
    summary,g,,
    datasets,,a,3
    """
    pd = sys.modules.get("pandas")
    header = [str(c) for c in data.columns] if pd is not None and isinstance(data, pd.DataFrame) else None
    data = _clean(data)
    named = False
    if header is not None:  # a frame keeps its header when it has no rows
        records = data
    elif isinstance(data, dict) and any(_is_records(v) for v in data.values()):
        rest = {k: v for k, v in data.items() if not _is_records(v)}
        parts = ([("summary", [rest])] if rest else []) + [(k, v) for k, v in data.items() if _is_records(v)]
        records = [{"table": name, **_flat(r)} for name, rows in parts for r in rows]
        named = True
    elif isinstance(data, dict):
        records = [data]
    elif isinstance(data, list):
        records = data if all(isinstance(r, dict) for r in data) else [{"value": v} for v in data]
    else:
        records = [{"value": data}]
    out = io.StringIO()
    # a frame's columns are its header: a map in a cell is its JSON text, not more columns
    rows = [r if named else {k: _csv_cell(v) for k, v in r.items()} if header else _flat(r) for r in records]
    columns = header or list(dict.fromkeys(k for row in rows for k in row))
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    if columns:
        csv.writer(out, lineterminator="\n").writerow([neutralise(c) for c in columns])
    writer.writerows(rows)
    return out.getvalue()


def emit(data: Any) -> None:
    """Print ``data`` on stdout as JSON (see :func:`dumps`), or as CSV under ``--format csv`` (:func:`to_csv`)."""
    if output_format() == "csv":
        click.echo(to_csv(data), nl=False)
    else:
        click.echo(dumps(data))


#: A text cell may fold down to this many characters; a number never folds.
_TEXT_MIN = 10
_BORDERS = 3  # per column of a boxed table: one padding space each side and a rule


def _widths(headers: list[str], columns: list[list[tuple[str, bool]]], width: int) -> list[int] | None:
    """Column widths within ``width`` characters that keep every number whole, or None if none do.

    Each column gets its natural width (widest cell or header) when all fit; otherwise
    its minimum (widest number, or up to :data:`_TEXT_MIN` of text, which folds), raised
    to its longest word (a header, an id) where that still fits, cheapest first, plus a
    share of what is left in proportion to what it lacks.
    """
    natural = [max([len(h), *(len(c) for c, _ in col)]) for h, col in zip(headers, columns, strict=True)]
    minimum = [max([min(_TEXT_MIN, n), *(len(c) for c, number in col if number)])
               for n, col in zip(natural, columns, strict=True)]
    spare = width - 1 - _BORDERS * len(headers) - sum(minimum)
    if spare < 0:
        return None
    # Words whole where they fit (a header, an id, a name without spaces): a column widened to a word's length
    # keeps whole every cell whose longest word is no longer; the widening that keeps most cells whole per
    # character goes first, so ids are folded mid-word only where the width runs out
    longest = [Counter(max([0, *(len(w) for w in text.split())]) for text in (h, *(c for c, _ in col)))
               for h, col in zip(headers, columns, strict=True)]
    while True:
        best = None  # (gain, cost, column, width)
        for i, lengths in enumerate(longest):
            for target in lengths:
                cost = target - minimum[i]
                if 0 < cost <= spare:
                    gain = sum(k for n, k in lengths.items() if minimum[i] < n <= target)
                    if best is None or gain * best[1] > best[0] * cost:
                        best = (gain, cost, i, target)
        if best is None:
            break
        _, cost, i, target = best
        spare -= cost
        minimum[i] = target
    lacking = [n - m for n, m in zip(natural, minimum, strict=True)]
    if sum(lacking) <= spare:
        return natural
    return [m + lack * spare // sum(lacking) for m, lack in zip(minimum, lacking, strict=True)]


def _cell(value: Any, digits: int) -> tuple[str, bool]:
    """The text of a cell and whether it is a number (which must never be cut)."""
    pd = sys.modules.get("pandas")  # pandas.NA: a missing nullable integer is a blank cell too
    if value is None or (pd is not None and value is pd.NA) or (isinstance(value, float) and math.isnan(value)):
        return "", False
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()  # numpy scalar
    if isinstance(value, bool):
        return str(value), False
    if isinstance(value, float):
        return f"{value:.{digits}f}", True
    return str(value), isinstance(value, int)


def render_table(frame: pd.DataFrame, title: str | None = None, digits: int = 3, width: int = 80):
    """A rich renderable of ``frame`` at most ``width`` characters wide, every number whole.

    Tried in turn: the table as it is (text cells fold, headers wrap); transposed, one
    column per row of ``frame`` (a few wide rows, such as a one-row summary); one small
    two-column table per row. Floats are rounded to ``digits``; nothing is cut with ``…``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows to show; the column names are the headers.
    title : str, optional
        Printed above the table (over each part in the one-table-per-row layout).
    digits : int
        Decimals of float cells.
    width : int
        Characters available (a terminal's columns).

    Returns
    -------
    rich.console.RenderableType
        A :class:`rich.table.Table`, or a :class:`rich.console.Group` of them.
    """
    from rich.console import Group

    headers = [str(c) for c in frame.columns]
    rows = [[_cell(v, digits) for v in row] for row in frame.itertuples(index=False)]
    columns = [list(col) for col in zip(*rows, strict=True)] if rows else [[] for _ in headers]
    if (widths := _widths(headers, columns, width)) is not None:
        return _table(title, headers, columns, widths)
    fields = [(h, False) for h in headers]
    # a column of field names, then one column per row of frame, headed by its first cell when that is text
    keyed = len(rows) > 1 and len(headers) > 1 and not any(number for _, number in columns[0])
    labels = [headers[0], *(r[0][0] for r in rows)] if keyed else ["", *(f"row {i + 1}" for i in range(len(rows)))]
    transposed = [fields[1:], *(r[1:] for r in rows)] if keyed else [fields, *rows]
    if (widths := _widths(labels, transposed, width)) is not None:
        return _table(title, labels, transposed, widths, header=len(rows) > 1)
    parts = []
    for number, row in enumerate(rows, 1):
        # narrower than a field name and a number side by side: let the numbers decide (overflowing)
        widths = _widths(["", ""], [fields, row], width) or [_TEXT_MIN, max(len(c) for c, _ in row)]
        parts.append(_table(f"{title or ''} ({number}/{len(rows)})".strip(), ["", ""], [fields, row], widths,
                            header=False))
    return Group(*parts)


def _table(title, headers, columns, widths, header: bool = True):
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title) if title else None, show_header=header)
    for name, col, w in zip(headers, columns, widths, strict=True):
        numeric = bool(col) and all(number or not text for text, number in col)
        table.add_column(Text(name), width=w, overflow="fold", justify="right" if numeric else "left")
    for row in zip(*columns, strict=True):
        table.add_row(*(Text(text, overflow="fold", justify="right" if number else "left") for text, number in row))
    return table


def table_width() -> int:
    """The width tables are laid out for: the terminal's, else ``$COLUMNS``, else 240 (no squeeze in a file)."""
    return _columns()


def _columns() -> int:
    """:func:`table_width`."""
    console = Console(emoji=False)
    if console.is_terminal:
        return console.width
    return int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else 240


def print_lines(text: str) -> None:
    """Print a line of prose on stdout wrapped to the table width, continuations indented."""
    click.echo(textwrap.fill(text, width=_columns(), subsequent_indent="    ", break_long_words=False,
                             break_on_hyphens=False))


def print_table(frame: pd.DataFrame, title: str | None = None, digits: int = 3) -> None:
    """Print a DataFrame on stdout as a table that fits the terminal (:func:`render_table`)."""
    width = _columns()
    Console(width=width, emoji=False).print(render_table(frame, title, digits, width))


_VERBOSITY = "kstp.verbosity"  # ctx.meta key, set by the group's --quiet / --verbose


class _GraphProgress(logging.Handler):
    """The graph layer's progress records (``kstp.graph`` at INFO: Neo4j's batched writes), as lines
    where lines of progress are shown (:func:`progress_bar`'s rule); its warnings (a graph recovered
    as it opened) always, save under ``--quiet``."""

    def emit(self, record: logging.LogRecord) -> None:
        if _verbosity() and (_lines() or record.levelno >= logging.WARNING):
            message(record.getMessage())


_GRAPH_LOG = logging.getLogger("kstp.graph")


def set_verbosity(level: int) -> None:
    """Set how much progress the running command writes to stderr.

    0 none (``--quiet``); 1, the default, spinners and bars on a terminal and lines
    elsewhere; 2 lines on a terminal too (``--verbose``). The graph layer's progress
    (``kstp.graph`` log records at INFO) follows the same rule.
    """
    click.get_current_context().meta[_VERBOSITY] = level
    if not any(isinstance(h, _GraphProgress) for h in _GRAPH_LOG.handlers):
        _GRAPH_LOG.addHandler(_GraphProgress())
        _GRAPH_LOG.setLevel(logging.INFO)


def _verbosity() -> int:
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_VERBOSITY, 1) if ctx is not None else 1


def _lines() -> bool:
    """Whether progress is written as lines (stderr is not a terminal, or --verbose), not drawn."""
    return _verbosity() >= 2 or not err_console.is_terminal


@contextmanager
def status(text: str, keep: bool = False) -> Iterator[None]:
    """Show that a step runs: a spinner on a terminal; elsewhere ``<text>: done in S s`` once it ends.

    ``keep``: print the done line on a terminal too (the demo's numbered steps). Nothing
    under ``--quiet``; no done line when the step raises.
    """
    start = time.monotonic()
    if _verbosity() == 0:
        yield
        return
    if _lines():
        yield
    else:
        with err_console.status(text):
            yield
    if keep or _lines():
        message(f"{text}: done in {time.monotonic() - start:.1f} s")


def with_rate(update: Callable[..., None], unit: str) -> Callable[[int, int], None]:
    """``progress(done, total)`` that calls a :func:`progress_bar`'s ``update`` with the rate since it was made
    as the note: "12,345 resamples/s" (a long bootstrap says how fast it goes, so how long it has left)."""
    start = time.monotonic()

    def progress(done: int, total: int) -> None:
        elapsed = time.monotonic() - start
        rate = done / elapsed if elapsed > 0 else 0.0
        update(done, total, f"{rate:,.0f} {unit}/s" if rate >= 10 else f"{rate:.2g} {unit}/s" if rate else "")

    return progress


#: A line every this many percent of a bar outside a terminal.
PROGRESS_STEP = 5


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[..., None]]:
    """Progress of a counted task; yields ``update(done, total, note="")``.

    On a terminal a transient bar; elsewhere a line ``<description>: done/total (P%),
    S s; note`` each :data:`PROGRESS_STEP` percent and at the end; nothing under
    ``--quiet``. ``note`` is what the task says of its pace (a model run: its window,
    completions and tokens per second).
    """
    if _verbosity() == 0:
        yield lambda done, total, note="": None
        return
    if _lines():
        start, shown = time.monotonic(), [0]

        def update(done: int, total: int, note: str = "") -> None:
            percent = 100 * done // total if total else 0
            if total and (percent >= shown[0] + PROGRESS_STEP or done == total > 0) and percent != shown[0]:
                shown[0] = percent
                message(f"{description}: {done:,}/{total:,} ({percent}%), {time.monotonic() - start:.1f} s"
                        + (f"; {note}" if note else ""))

        yield update
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[note]}"), console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=None, note="")
        yield lambda done, total, note="": bar.update(task, completed=done, total=total, note=note)


def message(text: str) -> None:
    """A progress or status line on stderr, never wrapped (a log keeps one line per message)."""
    err_console.print(text, highlight=False, soft_wrap=True)
