"""Where the graph and the data live, read from the environment.

``KSTP_GRAPH`` (or ``--graph``) selects the graph store: ``ladybug:PATH`` (the default,
``ladybug:.kstp/graph``, relative to the current folder, so each project folder has its
own graph) or a Neo4j URI (``neo4j://``, ``neo4j+s://``, ``bolt://``,
``bolt+s://``...) with credentials in ``NEO4J_USER`` / ``NEO4J_PASSWORD``.
``KSTP_DATA`` points at the shared data folder (default ``../shared/data``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kstp.errors import ConfigError, DataNotFoundError

__all__ = ["GraphTarget", "graph_target", "data_dir", "DEFAULT_GRAPH", "CAMPAIGN_CELL_ENV"]

DEFAULT_GRAPH = "ladybug:.kstp/graph"
#: Set by ``kstp campaign run`` for a cell's command: the hash of the cell's command, which the run records as
#: ``Run.campaignCell`` when it finishes (so the campaign run again skips the cell while its command is unchanged).
CAMPAIGN_CELL_ENV = "KSTP_CAMPAIGN_CELL"
_NEO4J_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")


@dataclass(frozen=True)
class GraphTarget:
    """A parsed ``KSTP_GRAPH`` value.

    ``engine`` is ``"ladybug"`` or ``"neo4j"``; ``location`` is a folder path for
    Ladybug and the URI for Neo4j. The password never appears in ``repr``.
    """

    engine: str
    location: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    def describe(self) -> str:
        """A printable description without credentials; a Ladybug path made absolute.

        >>> GraphTarget("ladybug", "/data/g").describe()
        'ladybug:/data/g'
        """
        if self.engine == "ladybug":
            return f"ladybug:{Path(self.location).resolve()}"
        return self.location


def graph_target(value: str | os.PathLike | None = None) -> GraphTarget:
    """Parse a graph location (default: ``$KSTP_GRAPH``, else :data:`DEFAULT_GRAPH`).

    A path object (:class:`pathlib.Path`) is the folder of an embedded graph, as
    ``ladybug:PATH`` is.

    Raises
    ------
    ConfigError
        When the value is neither ``ladybug:PATH`` nor a Neo4j URI, or a Neo4j URI
        comes without ``NEO4J_USER``/``NEO4J_PASSWORD``.

    Examples
    --------
    >>> graph_target("ladybug:/tmp/g").location
    '/tmp/g'
    >>> from pathlib import Path
    >>> graph_target(Path("/tmp/g")).engine
    'ladybug'
    """
    if isinstance(value, os.PathLike):
        value = f"ladybug:{os.fspath(value)}"
    value = value or os.environ.get("KSTP_GRAPH") or DEFAULT_GRAPH
    if value.startswith("ladybug:"):
        path = value[len("ladybug:"):]
        if not path:
            raise ConfigError("KSTP_GRAPH=ladybug: needs a folder, e.g. ladybug:.kstp/graph")
        return GraphTarget("ladybug", path)
    scheme = value.split("://", 1)[0] if "://" in value else ""
    if scheme in _NEO4J_SCHEMES:
        user, password = os.environ.get("NEO4J_USER"), os.environ.get("NEO4J_PASSWORD")
        if not user or password is None:
            raise ConfigError(
                f"KSTP_GRAPH={value} needs NEO4J_USER and NEO4J_PASSWORD in the environment"
            )
        return GraphTarget("neo4j", value, user, password)
    shown = value.split("://", 1)[0] + "://***@" + value.rsplit("@", 1)[1] if "@" in value else value
    raise ConfigError(
        f"graph location {shown!r} (KSTP_GRAPH or --graph) is not understood; use ladybug:PATH or a Neo4j URI "
        f"({', '.join(s + '://' for s in _NEO4J_SCHEMES)})"
    )


def data_dir(value: str | os.PathLike | None = None) -> Path:
    """The shared data folder (``$KSTP_DATA``, default ``../shared/data``).

    Raises
    ------
    DataNotFoundError
        When the folder does not exist; the message says which variable to set.
    """
    path = Path(value or os.environ.get("KSTP_DATA") or "../shared/data")
    if not path.is_dir():
        raise DataNotFoundError(
            f"data folder {path} not found; set KSTP_DATA to the folder that holds "
            "standards/, responses/ and llm_kst/ (e.g. KSTP_DATA=../shared/data)"
        )
    return path
