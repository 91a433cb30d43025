"""The read-only check of ad-hoc Cypher in ``kstp explore``: a statement that could write is refused.

The explorer only reads. Its graph is opened read-only (a Ladybug file opened read-only,
Neo4j statements in read transactions), so the engine refuses a write anyway; this check
refuses it first, with one line that names the clause, on both engines alike, and also
refuses what an engine would allow in a read (reading or writing files with ``LOAD CSV``,
Ladybug's ``LOAD FROM`` and ``COPY``, procedures that write or leave the graph). A
statement is read as tokens with its string literals, comments and back-quoted names
blanked out, so a clause word inside a string (``WHERE c.code = 'SET'``) is no clause.
Allowed: one statement of ``MATCH``, ``OPTIONAL MATCH``, ``WITH``, ``UNWIND``, ``WHERE``,
``RETURN``, ``ORDER BY``, ``SKIP``, ``LIMIT``, ``UNION`` and expressions, and ``CALL`` of the
catalogue procedures in :data:`READ_PROCEDURES`; it starts with one of :data:`FIRST_WORDS`.
"""

from __future__ import annotations

import re

from kstp.errors import ReadOnlyError

__all__ = ["check_read_only", "limited", "WRITE_CLAUSES", "FIRST_WORDS", "READ_PROCEDURES", "AD_HOC_TIMEOUT_S"]

#: Words that start a clause that writes the graph, reads or writes files, or leaves the
#: database (one-line refusal names the first one found).
WRITE_CLAUSES = ("CREATE", "MERGE", "DELETE", "DETACH", "SET", "REMOVE", "DROP", "LOAD", "COPY", "EXPORT",
                 "IMPORT", "ATTACH", "INSTALL", "FOREACH", "ALTER", "GRANT", "REVOKE", "DENY", "TERMINATE")
#: Words a statement may start with (``SHOW``, ``USE``, ``BEGIN``, ``CHECKPOINT`` ... may not).
FIRST_WORDS = ("MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL")
#: Procedures an ad-hoc statement may CALL: the graph's catalogue, read only (Neo4j's and Ladybug's).
READ_PROCEDURES = ("db.labels", "db.relationshiptypes", "db.propertykeys", "db.schema.visualization",
                   "db.schema.nodetypeproperties", "db.schema.reltypeproperties", "show_tables", "table_info",
                   "show_connection")

#: Seconds an ad-hoc statement may run before the engine stops it (``kstp explore --query-timeout``).
AD_HOC_TIMEOUT_S = 30.0

_MASKED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.S)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def check_read_only(text: str) -> str:
    """``text`` stripped, if it is one statement that only reads the graph.

    Parameters
    ----------
    text : str
        A Cypher statement typed by a user.

    Returns
    -------
    str
        The statement without surrounding blanks and a final ``;``.

    Raises
    ------
    ReadOnlyError
        For an empty text, several statements, a clause of :data:`WRITE_CLAUSES` or a
        ``CALL`` of anything outside :data:`READ_PROCEDURES`; the one-line message names it.

    Examples
    --------
    >>> check_read_only("MATCH (c:Concept) WHERE c.code = 'SET' RETURN c.id LIMIT 3;")
    "MATCH (c:Concept) WHERE c.code = 'SET' RETURN c.id LIMIT 3"
    >>> check_read_only("MATCH (c:Concept {id: 'x'}) SET c.code = 'y'")
    Traceback (most recent call last):
    ...
    kstp.errors.ReadOnlyError: refused: SET writes to the graph, and kstp explore only reads it (use MATCH ... RETURN)
    """
    statement = text.strip().rstrip(";").strip()
    if not statement:
        raise ReadOnlyError("refused: the statement is empty; write a MATCH ... RETURN")
    masked = _MASKED.sub(" ", statement)
    if ";" in masked:
        raise ReadOnlyError("refused: one statement at a time (found a ';' between statements)")
    words = _WORD.findall(masked)
    if not words or words[0].upper() not in FIRST_WORDS:
        raise ReadOnlyError(f"refused: a statement here starts with {', '.join(FIRST_WORDS)} (kstp explore only "
                            f"reads the graph), not {(words or ['?'])[0]}")
    for i, word in enumerate(words):
        upper = word.upper()
        if upper in WRITE_CLAUSES:
            kind = "writes to the graph" if upper not in ("LOAD", "COPY", "EXPORT", "IMPORT", "ATTACH", "INSTALL") \
                else "reaches outside the graph"
            raise ReadOnlyError(f"refused: {upper} {kind}, and kstp explore only reads it (use MATCH ... RETURN)")
        if upper == "CALL":
            name = words[i + 1] if i + 1 < len(words) else ""
            if name.lower() not in READ_PROCEDURES:
                raise ReadOnlyError(f"refused: CALL {name or '{...}'} may write, and kstp explore only reads the graph "
                                    f"(procedures allowed: {', '.join(READ_PROCEDURES)})")
    return statement


def limited(statement: str, rows: int) -> str:
    """``statement`` with ``LIMIT rows`` appended where it has no LIMIT of its own (a cross product typed by
    mistake would otherwise be read whole).

    >>> limited("MATCH (c:Concept) RETURN c.id", 1001)
    'MATCH (c:Concept) RETURN c.id LIMIT 1001'
    >>> limited("MATCH (c:Concept) RETURN c.id LIMIT 5", 1001)
    'MATCH (c:Concept) RETURN c.id LIMIT 5'
    """
    words = {w.upper() for w in _WORD.findall(_MASKED.sub(" ", statement))}
    return statement if "LIMIT" in words else f"{statement} LIMIT {rows}"
