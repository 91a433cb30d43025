"""CSV cells a spreadsheet shows as text: OWASP's rule against formula injection, on every CSV kstp writes.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is taken by
Excel, LibreOffice and Google Sheets for a formula, so a learner id ``@SUM(1+1)*cmd`` in
a downloaded table would run. Such a text cell is written with a leading apostrophe,
which the spreadsheets show as text (OWASP, "CSV Injection"). Only text is touched:
numbers stay numbers (``-0.56`` in a numeric column is written as it is).

The rule is made reversible so kstp reads its own CSV back unchanged (``runs export``,
``kst export``): a text whose apostrophes are followed by a trigger character also gets
one more apostrophe, and :func:`restore` takes exactly one off. The graph's own dump for
``neo4j-admin import`` (:mod:`kstp.graph.transfer`) is not a spreadsheet table and keeps
its cells as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["TRIGGERS", "neutralise", "restore", "neutral_frame", "write_csv"]

#: First characters that make a spreadsheet read a cell as a formula (OWASP).
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """``value`` as a spreadsheet shows it as text: a leading apostrophe before a formula's first character.

    >>> neutralise("@SUM(1+1)*cmd"), neutralise("-x"), neutralise("'=x"), neutralise("q1"), neutralise(-0.5)
    ("'@SUM(1+1)*cmd", "'-x", "''=x", 'q1', -0.5)
    """
    if isinstance(value, str) and value.lstrip("'").startswith(TRIGGERS):
        return "'" + value
    return value


def restore(value: Any) -> Any:
    """The text :func:`neutralise` was given (values it leaves alone come back as they are).

    >>> restore("'@SUM(1+1)*cmd"), restore("''=x"), restore("'quoted'"), restore("q1")
    ('@SUM(1+1)*cmd', "'=x", "'quoted'", 'q1')
    """
    if isinstance(value, str) and value.startswith("'") and value.lstrip("'").startswith(TRIGGERS):
        return value[1:]
    return value


def neutral_frame(frame, index: bool = True):
    """A copy of the pandas ``frame`` with its text cells, column names (and index, when ``index``) neutralised.

    >>> import pandas as pd
    >>> neutral_frame(pd.DataFrame({"id": ["=1+1", "a"], "x": [-1.5, 2.0]})).to_dict("list")
    {'id': ["'=1+1", 'a'], 'x': [-1.5, 2.0]}
    """
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
            out[column] = values.astype(object).map(neutralise)
    out.columns = [neutralise(c) for c in out.columns]
    if index and not pd.api.types.is_numeric_dtype(out.index):
        out.index = out.index.map(neutralise)
    return out


def write_csv(frame, path: str | Path | None = None, **options) -> str | None:
    """``frame.to_csv(path, **options)`` with :func:`neutral_frame`'s cells; the text when ``path`` is None."""
    return neutral_frame(frame, options.get("index", True)).to_csv(path, **options)
