"""The Neo4j 5 store, through the official ``neo4j`` driver.

Every statement runs in a managed transaction (``Driver.execute_query``), so the driver
retries it on transient errors and leader changes, and successive calls are causally
chained through the driver's bookmark manager. Every transaction carries
``{"app": "kstp/<version>", "query": <name>}`` as metadata so it can be traced in
``SHOW TRANSACTIONS`` and the query log. Writes go in batches of
``UNWIND $rows AS row MERGE ...``: MERGE keeps a retried batch idempotent. Credentials
are passed to the driver and never printed, logged or kept in ``repr``.

Failures are one line each: a server that is down, a wrong port, a TLS URI
(``neo4j+s://``, ``bolt+s://``) to a server without TLS and refused credentials are
told apart when the store opens, within :data:`CONNECT_TIMEOUT_S`; a server lost during
a command (after the driver's retries, :data:`RETRY_TIME_S`) is a
:class:`~kstp.errors.GraphUnavailableError` that says to re-run. The driver's
own log records (routing warnings) go nowhere unless the application configures the
``neo4j`` logger.
"""

from __future__ import annotations

import logging
import socket
import time
from urllib.parse import urlsplit

import neo4j
import pandas as pd
from neo4j.exceptions import AuthError, ConfigurationError, ServiceUnavailable, SessionExpired

from kstp._version import __version__
from kstp.errors import ConfigError, GraphUnavailableError, QueryError, UnknownIdError
from kstp.graph import schema
from kstp.graph.queries import get_query
from kstp.graph.store import GraphStore, records

__all__ = ["Neo4jStore", "BATCH_SIZE", "CONNECT_TIMEOUT_S", "RETRY_TIME_S"]

#: Rows per UNWIND transaction: large enough to amortise round trips, small enough to
#: keep a transaction's memory modest on a default server.
BATCH_SIZE = 10_000

#: Seconds to open a connection (TCP, TLS and Bolt handshake), or to get one from the
#: driver's pool, before giving up.
CONNECT_TIMEOUT_S = 10.0

#: Seconds a managed transaction is retried on transient errors and lost connections.
RETRY_TIME_S = 30.0

# A library leaves its logger's records to the application; without a handler Python
# would print the driver's routing warnings on stderr beside kstp's one-line error.
logging.getLogger("neo4j").addHandler(logging.NullHandler())

_READ, _WRITE = neo4j.RoutingControl.READ, neo4j.RoutingControl.WRITE

#: Progress of writes that take several transactions, at INFO: the CLI shows these lines
#: where it shows progress (``kstp.cli.output``); a library user attaches a handler.
log = logging.getLogger(__name__)


def _frame(result: neo4j.Result) -> pd.DataFrame:
    """Result transformer: every record as a DataFrame row, with the result's columns."""
    keys = result.keys()
    return pd.DataFrame([record.values() for record in result], columns=keys)


def _unreachable(uri: str, exc: ServiceUnavailable) -> str:
    """Why no Neo4j answers at ``uri``: nothing listening, or a TLS URI to a server without TLS."""
    parts = urlsplit(uri)
    host, port = parts.hostname or "localhost", parts.port or 7687
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        return (f"no Neo4j server answers at {uri}: nothing accepts connections at {host}:{port} "
                f"({error.strerror or error}); is the server running (make neo4j, or docker compose up -d neo4j) "
                "and is the port right?")
    if parts.scheme.endswith(("+s", "+ssc")):
        plain = parts.scheme.split("+", 1)[0]
        return (f"the server at {uri} did not complete a TLS handshake; if it runs without TLS "
                f"use {plain}://{parts.netloc}")
    return f"the server at {uri} does not answer as Neo4j ({' '.join(str(exc).split())[:200]})"


def _checked_uri(uri: str) -> str:
    """``uri`` itself, refused when it carries ``user:password@`` (it would end up in messages)."""
    parts = urlsplit(uri)
    if "@" in parts.netloc:
        bare = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
        raise ConfigError(f"the Neo4j URI must not carry credentials; use {bare} with NEO4J_USER and NEO4J_PASSWORD")
    return uri


class Neo4jStore(GraphStore):
    """A Neo4j 5 database at ``uri`` (``neo4j://``, ``bolt://``, ``neo4j+s://``...).

    ``database`` names the database; ``None`` uses the user's home database. ``read_only``
    runs every statement in a read transaction (the server refuses a write there) and
    neither creates the schema nor writes anything.

    Raises
    ------
    ConfigError
        When the URI is malformed or carries credentials, no server answers at it, or
        the server refuses the credentials.
    GraphUnavailableError
        From any query or write, when the server is lost and the driver's retries give up.
    """

    engine = "neo4j"

    def __init__(self, uri: str, user: str, password: str, database: str | None = None, read_only: bool = False):
        self.uri = _checked_uri(uri)
        self._database = database
        self.read_only = read_only
        try:
            self._driver = neo4j.GraphDatabase.driver(uri, auth=(user, password), user_agent=f"kstp/{__version__}",
                                                      connection_timeout=CONNECT_TIMEOUT_S,
                                                      connection_acquisition_timeout=CONNECT_TIMEOUT_S,
                                                      max_transaction_retry_time=RETRY_TIME_S,
                                                      notifications_min_severity="OFF")
        except (ConfigurationError, ValueError) as exc:
            raise ConfigError(f"cannot use Neo4j URI {uri!r}: {exc}") from None
        try:
            self._driver.verify_connectivity()
        except AuthError as exc:
            self._driver.close()
            raise ConfigError(f"Neo4j at {uri} refused NEO4J_USER/NEO4J_PASSWORD ({exc.message or exc})") from None
        except ServiceUnavailable as exc:
            self._driver.close()
            raise ConfigError(_unreachable(uri, exc)) from None

    def __repr__(self) -> str:
        return f"Neo4jStore({self.uri!r})"

    def ensure_schema(self) -> None:
        if self.read_only:
            return  # a read-only graph is read as it is
        for statement in self._ddl_statements():
            self._run(statement, {}, "schema")

    def reset(self) -> None:
        # One DETACH DELETE of the whole graph holds every deleted entity in a single
        # transaction's memory; delete in bounded batches instead (constraints stay).
        for what, text in (("relationships", "MATCH ()-[r]->() WITH r LIMIT $batch DELETE r RETURN count(*) AS n"),
                           ("nodes", "MATCH (n) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n")):
            while self._run(text, {"batch": BATCH_SIZE}, f"reset {what}")["n"].iloc[0]:
                pass

    def close(self) -> None:
        self._driver.close()

    def delete_nodes(self, label: str, ids: list[str]) -> int:
        # DETACH DELETE would hold every relationship of a batch in one transaction (a dataset's
        # questions carry 1.2 M derived edges): delete those first in bounded batches, as reset does.
        schema.node_label(label)
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), BATCH_SIZE):
            chunk = unique[start:start + BATCH_SIZE]
            while self._run(f"UNWIND $ids AS key MATCH (:{label} {{id: key}})-[r]-() WITH DISTINCT r LIMIT $batch "
                            "DELETE r RETURN count(*) AS n", {"ids": chunk, "batch": BATCH_SIZE},
                            f"delete {label} relationships")["n"].iloc[0]:
                pass
            self._run(f"UNWIND $ids AS key MATCH (n:{label} {{id: key}}) DELETE n", {"ids": chunk}, f"delete {label}")
        return len(ids)

    def _run(self, text: str, params: dict, name: str, routing: neo4j.RoutingControl = _WRITE) -> pd.DataFrame:
        """Run ``text`` in one managed transaction, tagged with ``name``; its rows as a DataFrame.

        A read-only store runs every statement in a read transaction, whatever ``routing`` asks.
        """
        if self.read_only:
            routing = _READ
        query = neo4j.Query(text, metadata={"app": f"kstp/{__version__}", "query": name})
        try:
            return self._driver.execute_query(query, params, routing_=routing, database_=self._database,
                                              result_transformer_=_frame)
        except (ServiceUnavailable, SessionExpired) as exc:
            raise GraphUnavailableError(
                f"lost the Neo4j server at {self.uri} during {name or 'a query'!r} and could not reconnect within "
                f"{RETRY_TIME_S:.0f} s ({' '.join(str(exc).split())[:160]}); what was committed stays; re-run "
                "the command when the server is back (it skips what is already written)") from None
        except neo4j.exceptions.Neo4jError as exc:  # the server refused the query: one line, naming it
            first = " ".join(f"{exc.code}: {exc.message}".split())[:300]
            raise QueryError(f"query {name or 'statement'} failed on Neo4j ({self.uri}): {first}") from None

    def _execute(self, text: str, params: dict, name: str = "") -> pd.DataFrame:
        return self._run(text, params, name)

    def _execute_categorical(self, text: str, params: dict, name: str = "") -> pd.DataFrame:
        # The bulk reads (batches the caller bounds) come back as one record holding a list per
        # row: the driver spends most of a large result on per-record messages, and 53 k
        # answers arrive 15x faster so (with neo4j-rust-ext decoding the lists).
        columns = list(get_query(name).returns)
        wrapped = f"CALL () {{\n{text}\n}}\nRETURN collect([{', '.join(columns)}]) AS rows"
        rows = pd.DataFrame(self._run(wrapped, params, name, _READ)["rows"].iloc[0], columns=columns)
        return rows.astype({c: "category" for c in rows.columns if rows[c].dtype == object})

    def _execute_rows(self, text: str, rows: pd.DataFrame, name: str = "") -> int:
        done, began = 0, time.monotonic()
        for start in range(0, len(rows), BATCH_SIZE):
            chunk = records(rows.iloc[start:start + BATCH_SIZE])
            result = self._run(text, {"rows": chunk}, name)
            done += int(result["n"].sum()) if "n" in result else len(chunk)
            if len(rows) > BATCH_SIZE:
                sent, elapsed = start + len(chunk), time.monotonic() - began
                log.info("%s: %s/%s rows written, %.0f rows/s, %.1f s", name or "write", f"{sent:,}",
                         f"{len(rows):,}", sent / elapsed if elapsed else 0.0, elapsed)
        return done

    def _read_by_ids(self, text: str, ids: list, columns: list[str], name: str) -> pd.DataFrame:
        """Run a read over ``$ids`` in batches of :data:`BATCH_SIZE`; the rows together."""
        parts = [self._run(text, {"ids": ids[start:start + BATCH_SIZE]}, name, _READ)
                 for start in range(0, len(ids), BATCH_SIZE)]
        parts = [part for part in parts if len(part)]
        if not parts:
            return pd.DataFrame(columns=columns)
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]

    def _write_nodes(self, label, rows):
        schema.node_label(label)
        self._execute_rows(f"UNWIND $rows AS row MERGE (n:{label} {{id: row.id}}) SET n += row "
                           "RETURN count(*) AS n", rows, f"write {label}")

    _create_nodes = _update_nodes = _write_nodes

    def _create_rels(self, rel, from_label, to_label, rows):
        # Refuse the whole write before any batch commits, as Ladybug's COPY does.
        for label, column in ((from_label, "from_id"), (to_label, "to_id")):
            ids = rows[column].unique().tolist()
            found = set(self._existing_nodes(label, ids, [])["id"])
            missing = [i for i in ids if i not in found]
            if missing:
                raise UnknownIdError(f"{rel}: endpoint missing from the graph: {len(missing)} {label} ids in {column}, "
                                     f"e.g. {missing[0]!r}")
        self._write_rels(rel, from_label, to_label, rows)

    def _update_rels(self, rel, from_label, to_label, rows):
        self._write_rels(rel, from_label, to_label, rows)

    def _write_rels(self, rel, from_label, to_label, rows):
        schema.rel_type(rel, from_label, to_label)
        props = [c for c in rows.columns if c not in ("from_id", "to_id")]
        sets = " SET " + ", ".join(f"r.{c} = row.{c}" for c in props) if props else ""
        written = self._execute_rows(
            f"UNWIND $rows AS row MATCH (a:{from_label} {{id: row.from_id}}) "
            f"MATCH (b:{to_label} {{id: row.to_id}}) MERGE (a)-[r:{rel}]->(b){sets} "
            "RETURN count(*) AS n", rows, f"write {rel}")
        if written < len(rows):  # an endpoint deleted since the check above
            raise UnknownIdError(f"{rel}: {len(rows) - written} rows name an endpoint missing from the graph")
