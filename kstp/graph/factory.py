"""Open a graph store by its location: the one module that knows both engines.

It sits above :mod:`kstp.graph.ladybug` and :mod:`kstp.graph.neo4j`, which both build on
:mod:`kstp.graph.store`; each engine's driver is imported only when a graph of that engine
is opened.
"""

from __future__ import annotations

import os
from pathlib import Path

from kstp.graph.store import GraphStore
from kstp.settings import GraphTarget, graph_target

__all__ = ["open_store", "graph_exists"]


def open_store(target: GraphTarget | str | os.PathLike | None = None, read_only: bool = False) -> GraphStore:
    """Open the graph named by ``target`` (default ``$KSTP_GRAPH``) and ensure its schema.

    ``target`` is ``ladybug:PATH``, a path object (an embedded graph's folder), a Neo4j URI
    (credentials from ``NEO4J_USER``/``NEO4J_PASSWORD``) or a :class:`~kstp.settings.GraphTarget`.
    The store closes with ``close()`` or at the end of a ``with`` block.

    ``read_only`` opens the graph without writing anything (its schema is taken as it is):
    an embedded graph read-only, a Neo4j graph with every statement in a read transaction
    (on a cluster, routed to the secondaries).

    Raises
    ------
    ConfigError
        When the location cannot be parsed or the Neo4j credentials are missing, or
        another process writes the embedded graph.
    DataNotFoundError
        When ``read_only`` and there is no embedded graph at the location.
    """
    if not isinstance(target, GraphTarget):
        target = graph_target(target)
    if target.engine == "ladybug":
        from kstp.graph.ladybug import LadybugStore

        store: GraphStore = LadybugStore(target.location, read_only=read_only)
    else:
        from kstp.graph.neo4j import Neo4jStore

        store = Neo4jStore(target.location, target.user, target.password, read_only=read_only)
    try:
        store.ensure_schema()
    except BaseException:
        store.close()
        raise
    return store


def graph_exists(target: GraphTarget | str | os.PathLike | None = None) -> bool:
    """Whether there is a graph at ``target`` already (default ``$KSTP_GRAPH``), without opening it.

    An embedded graph exists once its file does (:func:`open_store` creates it); a Neo4j
    database is the server's, and always exists.

    Raises
    ------
    ConfigError
        When the location cannot be parsed.
    """
    if not isinstance(target, GraphTarget):
        target = graph_target(target)
    return target.engine != "ladybug" or Path(target.location).exists()
