"""The Neo4j 5 store, through the official ``neo4j`` driver.

Writes go in batches of ``UNWIND $rows AS row MERGE ...``; every transaction carries
``{"app": "kstp/<version>", "query": <name>}`` as metadata so it can be traced in
``SHOW TRANSACTIONS`` and the query log. Credentials are passed to the driver and never
printed, logged or kept in ``repr``.
"""

from __future__ import annotations

from importlib import resources

import neo4j
import pandas as pd

from kstp import __version__
from kstp.platform import schema
from kstp.platform.errors import UnknownIdError
from kstp.platform.store import GraphStore, records

__all__ = ["Neo4jStore", "BATCH_SIZE"]

#: Rows per UNWIND transaction: large enough to amortise round trips, small enough to
#: keep a transaction's memory modest on a default server.
BATCH_SIZE = 10_000


class Neo4jStore(GraphStore):
    """A Neo4j 5 database at ``uri`` (``neo4j://``, ``bolt://``, ``neo4j+s://``...)."""

    engine = "neo4j"

    def __init__(self, uri: str, user: str, password: str, database: str | None = None):
        self.uri = uri
        self._driver = neo4j.GraphDatabase.driver(uri, auth=(user, password))
        self._database = database

    def __repr__(self) -> str:
        return f"Neo4jStore({self.uri!r})"

    def ensure_schema(self) -> None:
        ddl = resources.files("kstp.cypher").joinpath("schema/neo4j.cypher").read_text()
        code = "\n".join(l for l in ddl.splitlines() if not l.lstrip().startswith("//"))
        for statement in filter(str.strip, code.split(";")):
            self._run(statement, {}, "schema")

    def close(self) -> None:
        self._driver.close()

    def _run(self, text: str, params: dict, name: str) -> pd.DataFrame:
        query = neo4j.Query(text, metadata={"app": f"kstp/{__version__}", "query": name})
        with self._driver.session(database=self._database) as session:
            result = session.run(query, params)
            keys = result.keys()
            rows = [record.values() for record in result]
        return pd.DataFrame(rows, columns=keys)

    def _execute(self, text: str, params: dict, name: str = "") -> pd.DataFrame:
        return self._run(text, params, name)

    def _execute_rows(self, text: str, rows: pd.DataFrame, name: str = "") -> int:
        done = 0
        for start in range(0, len(rows), BATCH_SIZE):
            chunk = records(rows.iloc[start:start + BATCH_SIZE])
            result = self._run(text, {"rows": chunk}, name)
            done += int(result["n"].sum()) if "n" in result else len(chunk)
        return done

    def _existing_nodes(self, label, ids, columns):
        schema.node_label(label)
        returns = "".join(f", n.{c} AS {c}" for c in columns)
        return self._run(f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n.id AS id{returns}",
                         {"ids": ids}, f"existing {label}")

    def _existing_rels(self, rel, from_label, to_label, from_ids, columns):
        schema.rel_type(rel, from_label, to_label)
        returns = "".join(f", r.{c} AS {c}" for c in columns)
        return self._run(
            f"MATCH (a:{from_label})-[r:{rel}]->(b:{to_label}) WHERE a.id IN $ids "
            f"RETURN a.id AS from_id, b.id AS to_id{returns}", {"ids": from_ids}, f"existing {rel}")

    def _write_nodes(self, label, rows):
        schema.node_label(label)
        self._execute_rows(f"UNWIND $rows AS row MERGE (n:{label} {{id: row.id}}) SET n += row "
                      "RETURN count(*) AS n", rows, f"write {label}")

    _create_nodes = _update_nodes = _write_nodes

    def _write_rels(self, rel, from_label, to_label, rows):
        schema.rel_type(rel, from_label, to_label)
        props = [c for c in rows.columns if c not in ("from_id", "to_id")]
        sets = "".join(f" SET r.{c} = row.{c}" for c in props)
        written = self._execute_rows(
            f"UNWIND $rows AS row MATCH (a:{from_label} {{id: row.from_id}}) "
            f"MATCH (b:{to_label} {{id: row.to_id}}) MERGE (a)-[r:{rel}]->(b){sets} "
            "RETURN count(*) AS n", rows, f"write {rel}")
        if written < len(rows):
            raise UnknownIdError(f"{rel}: {len(rows) - written} rows name an endpoint missing from the graph")

    _create_rels = _update_rels = _write_rels
