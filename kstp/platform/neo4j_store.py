"""The Neo4j 5 store, through the official ``neo4j`` driver.

Every statement runs in a managed transaction (``Driver.execute_query``), so the driver
retries it on transient errors and leader changes, and successive calls are causally
chained through the driver's bookmark manager. Every transaction carries
``{"app": "kstp/<version>", "query": <name>}`` as metadata so it can be traced in
``SHOW TRANSACTIONS`` and the query log. Writes go in batches of
``UNWIND $rows AS row MERGE ...``: MERGE keeps a retried batch idempotent. Credentials
are passed to the driver and never printed, logged or kept in ``repr``.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import neo4j
import pandas as pd
from neo4j.exceptions import AuthError, ConfigurationError, ServiceUnavailable

from kstp import __version__
from kstp.platform import schema
from kstp.platform.errors import ConfigError, UnknownIdError
from kstp.platform.store import GraphStore, records

__all__ = ["Neo4jStore", "BATCH_SIZE"]

#: Rows per UNWIND transaction: large enough to amortise round trips, small enough to
#: keep a transaction's memory modest on a default server.
BATCH_SIZE = 10_000

_READ, _WRITE = neo4j.RoutingControl.READ, neo4j.RoutingControl.WRITE

# The driver logs its connection failures as warnings; kstp reports them once, as a
# ConfigError, so they must not also reach stderr through logging's last-resort handler.
logging.getLogger("neo4j").addHandler(logging.NullHandler())


def _frame(result: neo4j.Result) -> pd.DataFrame:
    """Result transformer: every record as a DataFrame row, with the result's columns."""
    keys = result.keys()
    return pd.DataFrame([record.values() for record in result], columns=keys)


def _checked_uri(uri: str) -> str:
    """``uri`` itself, refused when it carries ``user:password@`` (it would end up in messages)."""
    parts = urlsplit(uri)
    if "@" in parts.netloc:
        bare = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
        raise ConfigError(f"the Neo4j URI must not carry credentials; use {bare} with NEO4J_USER and NEO4J_PASSWORD")
    return uri


class Neo4jStore(GraphStore):
    """A Neo4j 5 database at ``uri`` (``neo4j://``, ``bolt://``, ``neo4j+s://``...).

    ``database`` names the database; ``None`` uses the user's home database.

    Raises
    ------
    ConfigError
        When the URI is malformed or carries credentials, no server answers at it, or
        the server refuses the credentials.
    """

    engine = "neo4j"

    def __init__(self, uri: str, user: str, password: str, database: str | None = None):
        self.uri = _checked_uri(uri)
        self._database = database
        try:
            self._driver = neo4j.GraphDatabase.driver(uri, auth=(user, password), user_agent=f"kstp/{__version__}",
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
            tls = "+s" in urlsplit(uri).scheme
            hint = ("; the URI asks for TLS (+s/+ssc): a server without TLS needs neo4j:// or bolt://" if tls
                    else "; is it running? (make neo4j, or docker compose up -d neo4j)")
            raise ConfigError(f"no Neo4j server answers at {uri} ({' '.join(str(exc).split())[:200]}){hint}") from None

    def __repr__(self) -> str:
        return f"Neo4jStore({self.uri!r})"

    def ensure_schema(self) -> None:
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

    def _run(self, text: str, params: dict, name: str, routing: neo4j.RoutingControl = _WRITE) -> pd.DataFrame:
        """Run ``text`` in one managed transaction, tagged with ``name``; its rows as a DataFrame."""
        query = neo4j.Query(text, metadata={"app": f"kstp/{__version__}", "query": name})
        return self._driver.execute_query(query, params, routing_=routing, database_=self._database,
                                          result_transformer_=_frame)

    def _execute(self, text: str, params: dict, name: str = "") -> pd.DataFrame:
        return self._run(text, params, name)

    def _execute_rows(self, text: str, rows: pd.DataFrame, name: str = "") -> int:
        done = 0
        for start in range(0, len(rows), BATCH_SIZE):
            chunk = records(rows.iloc[start:start + BATCH_SIZE])
            result = self._run(text, {"rows": chunk}, name)
            done += int(result["n"].sum()) if "n" in result else len(chunk)
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
