"""The graph model as data: node labels, relationship types and their properties.

The single source is the LadybugDB DDL shipped in ``kstp/graph/cypher/schema/ladybug.cypher``
(it has to spell out every property and type anyway); this module parses it once.
Labels and relationship types that reach query text are only ever taken from here, so
no user value can become a label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["SCHEMA_VERSION", "NodeLabel", "RelType", "node_labels", "rel_types", "node_label", "rel_type"]

#: The graph model's version, written into every export manifest (``kstp db export``). Bump
#: it when a property or relationship changes meaning or goes away; properties added at the
#: end of a DDL line keep old exports importable and need no bump.
SCHEMA_VERSION = 1

_NODE_RE = re.compile(r"CREATE NODE TABLE IF NOT EXISTS (\w+)\((.*)\);")
_REL_RE = re.compile(r"CREATE REL TABLE IF NOT EXISTS (\w+)\((.*)\);")
_PAIR_RE = re.compile(r"FROM (\w+) TO (\w+)")


@dataclass(frozen=True)
class NodeLabel:
    """A node label: its name and ``(property, ladybug type)`` pairs, ``id`` first."""

    name: str
    properties: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RelType:
    """A relationship type: the ``(from label, to label)`` pairs it joins and its properties."""

    name: str
    endpoints: tuple[tuple[str, str], ...]
    properties: tuple[tuple[str, str], ...]


def _ddl_lines() -> list[str]:
    text = resources.files("kstp.graph.cypher").joinpath("schema/ladybug.cypher").read_text()
    return [line.strip() for line in text.splitlines() if line.startswith("CREATE")]


def _properties(parts: list[str]) -> tuple[tuple[str, str], ...]:
    return tuple(tuple(p.split()) for p in parts)  # type: ignore[misc]


@cache
def node_labels() -> dict[str, NodeLabel]:
    """All node labels by name, in DDL order."""
    out = {}
    for line in _ddl_lines():
        if m := _NODE_RE.fullmatch(line):
            parts = [p.strip() for p in m.group(2).split(",") if not p.strip().startswith("PRIMARY")]
            out[m.group(1)] = NodeLabel(m.group(1), _properties(parts))
    return out


@cache
def rel_types() -> dict[str, RelType]:
    """All relationship types by name, in DDL order."""
    out = {}
    for line in _ddl_lines():
        if m := _REL_RE.fullmatch(line):
            parts = [p.strip() for p in m.group(2).split(",")]
            pairs = tuple(_PAIR_RE.fullmatch(p).groups() for p in parts if p.startswith("FROM "))
            props = _properties([p for p in parts if not p.startswith("FROM ")])
            out[m.group(1)] = RelType(m.group(1), pairs, props)
    return out


def node_label(name: str) -> NodeLabel:
    """The node label called ``name``.

    Raises
    ------
    KeyError
        When the label is not part of the graph model.

    Examples
    --------
    >>> node_label("Concept").properties[0]
    ('id', 'STRING')
    """
    try:
        return node_labels()[name]
    except KeyError:
        raise KeyError(f"unknown node label {name!r}; known: {', '.join(node_labels())}") from None


def rel_type(name: str, from_label: str, to_label: str) -> RelType:
    """The relationship type ``name``, checked to join ``from_label`` to ``to_label``.

    Raises
    ------
    KeyError
        When the type is unknown or does not join these labels.

    Examples
    --------
    >>> rel_type("PREREQUISITE_OF", "Question", "Question").properties[:2]
    (('source', 'STRING'), ('rule', 'STRING'))
    """
    rel = rel_types().get(name)
    if rel is None:
        raise KeyError(f"unknown relationship type {name!r}; known: {', '.join(rel_types())}")
    if (from_label, to_label) not in rel.endpoints:
        raise KeyError(f"{name} does not join {from_label} to {to_label}")
    return rel
