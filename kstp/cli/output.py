"""What every command shares: the store in the context, ``--json``, tables, messages.

Data goes to stdout, messages to stderr. Exit status: 0 ok; 1 bad input or data (a
:class:`KstpError` becomes a one-line ``Error: ...``); 2 usage (click); 130 interrupted
by Ctrl-C or SIGTERM, after what had arrived is stored.
"""

from __future__ import annotations

import functools
import json
import math
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from kstp.errors import KstpError, UnknownIdError
from kstp.settings import graph_target

if TYPE_CHECKING:
    import pandas as pd

    from kstp.graph.store import GraphStore

__all__ = ["KstpGroup", "json_option", "dumps", "emit", "csv_text", "print_table", "get_store", "message", "status",
           "err_console", "refuse_together", "option_given",
           "out_option", "require_output_path"]

# Ids are data: no emoji codes (':M:' in a run id) and no markup taken from them.
err_console = Console(stderr=True, emoji=False, markup=False)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM is handled as Ctrl-C: store what arrived, exit 130


class KstpGroup(click.Group):
    """A click group: :class:`KstpError` -> ``Error: ...``, exit 1; Ctrl-C or SIGTERM -> exit 130."""

    def invoke(self, ctx: click.Context) -> Any:
        main = threading.current_thread() is threading.main_thread()  # signals go to the main thread only
        previous = signal.signal(signal.SIGTERM, _terminate) if main else None
        try:
            return super().invoke(ctx)
        except KstpError as exc:
            click.echo(f"Error: {exc}{_graph_named(ctx, exc)}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted: every completion that had arrived is stored; run the same command again "
                       "to resume.", err=True)
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
READ_ONLY = ("db stats", "query", "report", "kst fringe", "kst check", "kst space")


def _command(ctx: click.Context) -> str:
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(reversed(names))


def get_store(ctx: click.Context) -> GraphStore:
    """The graph of this invocation, opened once (``--graph`` or ``$KSTP_GRAPH``) and closed at exit.

    Read-only for the commands in :data:`READ_ONLY`.
    """
    from kstp.graph.factory import open_store

    root = ctx.find_root()
    root.ensure_object(dict)
    if "store" not in root.obj:
        command = _command(ctx)
        read_only = any(command == c or command.startswith(c + " ") for c in READ_ONLY) \
            and not ctx.params.get("store")
        store = open_store(root.obj.get("graph"), read_only=read_only)
        root.obj["store"] = store
        root.call_on_close(store.close)
    return root.obj["store"]


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


def json_option(func):
    """Add ``--json``: the command's result is printed as JSON instead of a table."""

    @click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


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


def emit(data: Any) -> None:
    """Print ``data`` as JSON on stdout (see :func:`dumps`)."""
    click.echo(dumps(data))


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text holding the values :func:`dumps` prints for it.

    A string cell is written as it is, a missing one (None, NaN) empty, every other
    value (numbers, booleans, lists, maps) as its JSON text, so ``--format csv`` and
    ``--format json`` carry the same values on every engine.
    """
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(frame.columns)
    for record in _clean(frame):
        writer.writerow(["" if v is None else v if isinstance(v, str) else json.dumps(v, allow_nan=False)
                         for v in record.values()])
    return out.getvalue()


def print_table(frame: pd.DataFrame, title: str | None = None, digits: int = 3) -> None:
    """Print a DataFrame as a table on stdout; floats rounded to ``digits``."""
    import pandas as pd
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title) if title else None, show_lines=False)
    for column in frame.columns:
        table.add_column(Text(str(column)),
                         justify="right" if pd.api.types.is_numeric_dtype(frame[column]) else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*(Text("" if v is None or (isinstance(v, float) and math.isnan(v))
                             else f"{v:.{digits}f}" if isinstance(v, float) else str(v)) for v in row))
    console = Console(emoji=False)
    if not console.is_terminal:  # piped or captured: do not squeeze to 80 columns
        console = Console(width=240, emoji=False)
    console.print(table)


def status(text: str):
    """A spinner on stderr while a step runs (a context manager)."""
    return err_console.status(text)


def message(text: str) -> None:
    """A progress or status line on stderr."""
    err_console.print(text, highlight=False)
