"""How the explorer's values travel: ids as URL path segments and file names, cells as plain values, rows in pages.

An id becomes one :func:`slug` (the same text is a page's address on the server and its file
name in the static export); a DataFrame's cells become JSON-ready Python values
(:func:`plain`, :func:`as_rows`); a long table is shown a page at a time (:func:`paged`); a
dataset's questions by local id (:func:`local_names`), a question's human share right (:func:`human_share`) and a
page's node, from a kept index or the graph (:func:`node_record`).
Depends on nothing of the explorer, so pages, drawings and the app all read from here.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from kstp.errors import UnknownIdError
from kstp.graph.store import GraphStore, records

__all__ = ["slug", "unslug", "plain", "as_rows", "paged", "local_names", "human_share", "node_record", "PAGE_SIZE",
           "SLUG_BYTES"]

#: Rows per page of a table.
PAGE_SIZE = 50
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
#: Each byte (as a latin-1 character) outside ``_SAFE`` and its ``~XX``.
_ESCAPES = {b: f"~{b:02X}" for b in range(256) if chr(b) not in _SAFE}


#: Longest slug, in bytes: a file name of ``SLUG_BYTES`` plus ``.html`` fits a file system's 255.
SLUG_BYTES = 200
#: The ids of the shortened slugs made in this process (a shortened slug cannot be read back).
_SHORTENED: dict[str, str] = {}


def slug(identifier: str) -> str:
    """An id as one URL path segment and file name: bytes outside ``[A-Za-z0-9._-]`` as ``~XX``.

    Browsers and servers leave ``~`` as it is, so the same text is the page's address on
    the server and its file name in the export. A slug past :data:`SLUG_BYTES` (a learner
    id of 29 CJK characters is 261 bytes of slug) is cut and ends in ``~~`` and 16 hex
    digits of the id's SHA-256; :func:`unslug` reads it back in the process that made it
    (the pages that link to it).

    >>> slug("frcsub:Item04"), slug("a'b\\"c")
    ('frcsub~3AItem04', 'a~27b~22c')
    >>> unslug(slug("é/x y"))
    'é/x y'
    >>> long = "toy:" + "学" * 29
    >>> len(slug(long)), unslug(slug(long)) == long
    (198, True)
    """
    text = identifier.encode().decode("latin-1").translate(_ESCAPES)  # one C pass: pages slug thousands of ids
    if len(text) <= SLUG_BYTES:
        return text
    digest = hashlib.sha256(identifier.encode()).hexdigest()[:16]
    cut = text[:SLUG_BYTES - 18]
    cut = cut[:cut.rfind("~")] if "~" in cut[-2:] else cut  # never half of a ~XX
    short = f"{cut}~~{digest}"
    _SHORTENED[short] = identifier
    return short


def unslug(text: str) -> str:
    """The id of a :func:`slug`.

    Raises
    ------
    UnknownIdError
        When ``text`` is no slug (a stray ``~``), or a shortened slug this process did not make.
    """
    if "~~" in text:
        if text not in _SHORTENED:
            raise UnknownIdError(f"no page at {text!r} (a shortened address: open it from a page that links to it)")
        return _SHORTENED[text]
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "~":
            try:
                out.append(int(text[i + 1:i + 3], 16))
            except ValueError:
                raise UnknownIdError(f"no page at {text!r}") from None
            i += 3
        else:
            out += text[i].encode()
            i += 1
    return out.decode(errors="replace")


def plain(value: Any) -> Any:
    """A cell as a JSON-ready value: NaN and NA as None, numpy scalars as Python."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    return value.item() if hasattr(value, "item") else value


def as_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as dicts of :func:`plain` values."""
    return [{k: plain(v) for k, v in row.items()} for row in records(frame)]


def paged(rows: list | pd.DataFrame, page: int, size: int = PAGE_SIZE) -> dict:
    """Page ``page`` (from 1, clamped to those there are) of ``rows``, ``size`` a page, with the page count.

    >>> paged(list("abcde"), 3, 2)
    {'rows': ['e'], 'page': 3, 'pages': 3, 'total': 5}
    """
    size = max(size, 1)
    pages = max(1, math.ceil(len(rows) / size))
    page = min(max(page, 1), pages)
    part = rows.iloc[(page - 1) * size:page * size] if isinstance(rows, pd.DataFrame) else \
        rows[(page - 1) * size:page * size]
    return {"rows": part, "page": page, "pages": pages, "total": len(rows)}


def local_names(questions: pd.DataFrame) -> dict[str, str]:
    """Each question's local id (its id where it has none), from ``dataset_questions``' rows.

    >>> local_names(pd.DataFrame({"questionId": ["d:a", "d:b"], "localId": ["a", None]}))
    {'d:a': 'a', 'd:b': 'd:b'}
    """
    return dict(zip(questions["questionId"], questions["localId"].fillna(questions["questionId"]), strict=True))


def human_share(counts: dict[str, tuple[int, int]]) -> tuple[int, int, float | None]:
    """Humans who answered, who answered right and the share right (None: nobody answered) from a question's
    ``{kind: (answered, correct)}``.

    >>> human_share({"human": (4, 3), "model": (2, 2)}), human_share({"model": (1, 0)})
    ((4, 3, 0.75), (0, 0, None))
    """
    answered, right = counts.get("human", (0, 0))
    return answered, right, right / answered if answered else None


def node_record(store: GraphStore, label: str, ident: str, owners: set[str], kept: Callable[[str], dict],
                named: str) -> dict[str, Any]:
    """The properties of the ``label`` node ``ident`` (an ``embedding`` left out): from ``kept(owner)`` (a kept
    index's records, by id) where the id's prefix names one of ``owners`` (its dataset or framework), else read.

    Raises
    ------
    UnknownIdError
        When no ``label`` node has the id; the message says how ids are ``named`` (``<dataset>:<id>, e.g. ...``).
    """
    owner = ident.split(":", 1)[0]  # an id starts with its owner's
    record = kept(owner).get(ident) if owner in owners else None
    if record is None:
        found = store.nodes(label, [ident])
        if found.empty:
            noun = label.lower()
            raise UnknownIdError(f"unknown {noun} {ident!r}; {noun}s are named {named}")
        record = as_rows(found)[0]
    return {k: v for k, v in record.items() if k != "embedding"}
