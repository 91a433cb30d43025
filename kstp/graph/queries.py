"""The query registry: every Cypher query is a file, loaded and checked by name.

A query lives in ``kstp/graph/cypher/<area>/<name>.cypher`` and opens with a header::

    // name: psr_by_learner
    // params: $dataset: string
    // returns: many {learnerId, psrMicro, psrMacro}
    // One or more lines saying what it computes and from which source.

A sibling ``<name>.ladybug.cypher`` or ``<name>.neo4j.cypher`` overrides the text for
one engine and must declare the same header. A query that only one engine can run (the
GDS procedures of ``gds/`` exist only on Neo4j) is a lone ``<name>.neo4j.cypher`` whose
header adds ``// engine: neo4j``; it is held equal to a Python reference on that engine,
and asking another engine for it names the engine it needs. A query with no portable form
(PSR's packed answers: integer node ids on Neo4j, node offsets on Ladybug) is one such
file per engine, with the same header. The registry is checked at load time:
the name matches the file stem, names are unique across areas, declared and used
``$params`` agree, and every error cites ``path:line``. A typo fails at start-up, not
mid-run. ``schema/`` holds DDL and is not part of the registry.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from kstp.errors import QueryError

__all__ = ["Query", "registry", "get_query", "load_registry", "ENGINES", "PARAM_TYPES"]

ENGINES = ("ladybug", "neo4j")
#: The integers both engines store (Neo4j's and Ladybug's INT64): a parameter past them is refused in one line.
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
PARAM_TYPES = {
    "string": (str,),
    "integer": (int,),
    "float": (float, int),
    "boolean": (bool,),
    "list<string>": (list, tuple),
    "list<map>": (list, tuple),
    "map": (dict,),
}
_HEADER_RE = re.compile(r"//\s*(name|params|returns|engine):\s*(.*)")
_PARAM_DECL_RE = re.compile(r"\$(\w+)\s*:\s*([\w<>]+)")
_RETURNS_RE = re.compile(r"(one|many)\s*\{([^}]*)\}")
_STRING_RE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_PARAM_USE_RE = re.compile(r"\$(\w+)")


@dataclass(frozen=True)
class Query:
    """One named query.

    Attributes
    ----------
    name, area : str
        File stem and folder under ``kstp/graph/cypher``.
    params : dict of str to str
        Declared parameter names and their types (keys of :data:`PARAM_TYPES`).
    returns : tuple of str
        Returned column names, in order.
    cardinality : str
        ``"one"`` or ``"many"`` rows.
    description : str
        The header's free text.
    texts : dict of str to str
        Query text per engine; ``"default"`` plus any engine override, or a single-engine
        query's one engine alone.
    path : pathlib.Path
        The default file (the engine's own file for a single-engine query).
    """

    name: str
    area: str
    params: dict[str, str]
    returns: tuple[str, ...]
    cardinality: str
    description: str
    texts: dict[str, str] = field(repr=False)
    path: Path = field(repr=False)

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that can run it: :data:`ENGINES`, or those whose own forms it has."""
        return ENGINES if "default" in self.texts else tuple(e for e in ENGINES if e in self.texts)

    def text(self, engine: str) -> str:
        """The query text to run on ``engine`` (its override if there is one).

        Raises
        ------
        QueryError
            When ``engine`` cannot run it (a single-engine query).
        """
        if engine in self.texts:
            return self.texts[engine]
        if "default" in self.texts:
            return self.texts["default"]
        raise QueryError(f"query {self.name!r} runs on {' and '.join(self.engines)} only "
                         f"(it calls procedures that {engine} lacks)")

    def parse_param(self, key: str, text: str, booleans: dict[str, bool] | None = None) -> object:
        """The value of parameter ``key`` read from ``text`` by its declared type.

        Lists of strings are comma-separated (items stripped, empty ones dropped) or a JSON
        array; maps and lists of maps are JSON (empty text: an empty one); booleans are
        spelled as ``booleans`` says (lower-cased text to value; ``true`` / ``false`` by
        default). One parser for ``kstp query -p`` and ``kstp explore``'s query form.

        Raises
        ------
        QueryError
            When ``key`` is not declared, or ``text`` does not read as its type.

        Examples
        --------
        >>> q = registry()["outer_fringe"]
        >>> q.parse_param("questionIds", "frcsub:Item01, frcsub:Item02")
        ['frcsub:Item01', 'frcsub:Item02']
        >>> q.parse_param("dataset", "frcsub")
        'frcsub'
        """
        kind = self.params.get(key)
        if kind is None:
            declared = ", ".join(f"${p}" for p in self.params) or "none"
            raise QueryError(f"{self.name}: unknown parameter ${key}; declared: {declared}")
        booleans = booleans or {"true": True, "false": False}
        try:
            if kind == "integer":
                return int(text)
            if kind == "float":
                return float(text)
            if kind == "boolean":
                return booleans[text.strip().lower()]
            if kind == "list<string>":
                items = json.loads(text) if text.lstrip().startswith("[") else text.split(",")
                return [str(v).strip() for v in items if str(v).strip()]
            if kind in ("list<map>", "map"):
                return json.loads(text) if text.strip() else [] if kind == "list<map>" else {}
        except (ValueError, KeyError, json.JSONDecodeError):
            raise QueryError(f"{self.name}: parameter ${key} must be {kind}, got {text!r}") from None
        return text

    def check_params(self, params: dict) -> None:
        """Raise :class:`QueryError` unless ``params`` match the declaration exactly.

        Examples
        --------
        >>> q = registry()["concept_ancestors"]
        >>> q.check_params({"conceptId": "ccss:142"})
        >>> q.check_params({})
        Traceback (most recent call last):
        ...
        kstp.errors.QueryError: concept_ancestors: missing parameter $conceptId (string)
        >>> registry()["psr_distribution"].check_params({"dataset": "d", "minPrerequisites": 2 ** 64})
        Traceback (most recent call last):
        ...
        kstp.errors.QueryError: psr_distribution: parameter $minPrerequisites = 18446744073709551616 is past ...
        """
        missing = [p for p in self.params if p not in params]
        if missing:
            need = ", ".join(f"${p} ({self.params[p]})" for p in missing)
            raise QueryError(f"{self.name}: missing parameter {need}")
        unknown = [p for p in params if p not in self.params]
        if unknown:
            declared = ", ".join(f"${p}" for p in self.params) or "none"
            raise QueryError(f"{self.name}: unknown parameter ${unknown[0]}; declared: {declared}")
        for key, kind in self.params.items():
            value = params[key]
            ok = isinstance(value, PARAM_TYPES[kind]) and not (
                kind in ("integer", "float") and isinstance(value, bool)
            ) and not (kind == "list<string>" and not all(isinstance(v, str) for v in value))
            if not ok:
                raise QueryError(
                    f"{self.name}: parameter ${key} must be {kind}, got {type(value).__name__} {value!r}"
                )
            if kind == "integer" and not INT64_MIN <= value <= INT64_MAX:  # the engines' driver would say less
                raise QueryError(f"{self.name}: parameter ${key} = {value} is past the 64-bit integers the graph "
                                 f"stores ({INT64_MIN} to {INT64_MAX})")


def _parse(path: Path, root: Path) -> tuple[dict, str]:
    text = path.read_text()
    header: dict[str, tuple[int, str]] = {}
    description = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("//"):
            break
        if m := _HEADER_RE.match(line):
            header[m.group(1)] = (number, m.group(2).strip())
        else:
            description.append(line[2:].strip())
    where = path.relative_to(root)
    for key in ("name", "params", "returns"):
        if key not in header:
            raise QueryError(f"{where}:1: header lacks '// {key}: ...'")
    stem = path.name.split(".")[0]
    line, name = header["name"]
    if name != stem:
        raise QueryError(f"{where}:{line}: declared name {name!r} differs from file name {stem!r}")
    line, decl = header["params"]
    params = dict(_PARAM_DECL_RE.findall(decl))
    if decl not in ("", "none") and not params:
        raise QueryError(f"{where}:{line}: cannot read params {decl!r}; write '$name: type, ...'")
    for key, kind in params.items():
        if kind not in PARAM_TYPES:
            raise QueryError(f"{where}:{line}: ${key} has unknown type {kind!r}; use one of {', '.join(PARAM_TYPES)}")
    body_lines = [(n, l) for n, l in enumerate(text.splitlines(), 1) if not l.lstrip().startswith("//")]
    used: dict[str, int] = {}
    for number, body_line in body_lines:
        for use in _PARAM_USE_RE.findall(_STRING_RE.sub("''", body_line)):
            used.setdefault(use, number)
    for key, number in used.items():
        if key not in params:
            raise QueryError(f"{where}:{number}: ${key} is used but not declared in the params header")
    for key in params:
        if key not in used:
            raise QueryError(f"{where}:{header['params'][0]}: ${key} is declared but never used")
    line, ret = header["returns"]
    m = _RETURNS_RE.fullmatch(ret)
    if not m:
        raise QueryError(f"{where}:{line}: returns must read 'one {{a, b}}' or 'many {{a, b}}'")
    columns = tuple(c.strip() for c in m.group(2).split(",") if c.strip())
    meta = {"name": name, "params": params, "returns": columns, "cardinality": m.group(1),
            "description": " ".join(description)}
    if "engine" in header:
        line, engine = header["engine"]
        if engine not in ENGINES:
            raise QueryError(f"{where}:{line}: unknown engine {engine!r}; use {' or '.join(ENGINES)}")
        if not path.name.endswith(f".{engine}.cypher"):
            raise QueryError(f"{where}:{line}: a query for {engine} alone is named {stem}.{engine}.cypher")
        meta["engine"] = engine
    body = "\n".join(l for _, l in body_lines).strip().rstrip(";")
    return meta, body


def load_registry(root: Path) -> dict[str, Query]:
    """Load and check every query under ``root`` (a ``cypher/`` folder).

    Raises
    ------
    QueryError
        On a malformed header, a params mismatch, a duplicate name, an engine
        override without its default file or with a different header, or an
        ``// engine:`` header on a file not named for that engine; the message cites
        ``path:line``.
    """
    queries: dict[str, Query] = {}
    overrides: list[tuple[Path, dict, str, str]] = []
    for path in sorted(root.rglob("*.cypher")):
        rel = path.relative_to(root)
        if rel.parts[0] == "schema":
            continue
        meta, body = _parse(path, root)
        engine = meta.pop("engine", None)  # a single-engine query's engine
        suffix = path.name.split(".")[1:-1]
        if suffix:
            if suffix[0] not in ENGINES or len(suffix) > 1:
                raise QueryError(f"{rel}:1: unknown engine suffix {'.'.join(suffix)!r}; use {' or '.join(ENGINES)}")
            if engine is None:
                overrides.append((path, meta, body, suffix[0]))
                continue
        if meta["name"] in queries:
            base = queries[meta["name"]]
            if engine and "default" not in base.texts and engine not in base.texts and \
                    base.path.parent == path.parent:  # a form of its own for each engine
                if (meta["params"], meta["returns"]) != (base.params, base.returns):
                    raise QueryError(f"{rel}:1: header differs from {base.path.relative_to(root)} "
                                     "(params/returns must match)")
                base.texts[engine] = body
                continue
            raise QueryError(f"{rel}:1: query name {meta['name']!r} is also used by {base.path.relative_to(root)}")
        texts = {engine or "default": body}
        queries[meta["name"]] = Query(area=rel.parts[0], texts=texts, path=path, **meta)
    for path, meta, body, engine in overrides:
        base = queries.get(meta["name"])
        rel = path.relative_to(root)
        if base is None or base.path.parent != path.parent or "default" not in base.texts:
            raise QueryError(f"{rel}:1: engine override without {meta['name']}.cypher beside it")
        if (meta["params"], meta["returns"]) != (base.params, base.returns):
            raise QueryError(f"{rel}:1: header differs from {base.path.relative_to(root)} (params/returns must match)")
        base.texts[engine] = body
    return queries


@cache
def registry() -> dict[str, Query]:
    """The registry of the queries shipped with kstp, loaded once."""
    return load_registry(Path(str(resources.files("kstp.graph.cypher"))))


def get_query(name: str) -> Query:
    """The query called ``name``.

    Raises
    ------
    QueryError
        When there is none; the message suggests close names and lists the rest.
    """
    queries = registry()
    if name in queries:
        return queries[name]
    close = difflib.get_close_matches(name, queries, n=3)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise QueryError(f"Unknown query {name!r}.{hint} Available: {', '.join(sorted(queries))}")

