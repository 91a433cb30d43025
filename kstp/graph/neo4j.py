"""The Neo4j 5 store, through the official ``neo4j`` driver.

Every statement runs in a managed transaction (``Driver.execute_query`` or
``Session.execute_write``), so the driver retries it on transient errors, deadlocks and
leader changes, and successive calls are causally chained through the driver's bookmark
manager. Every transaction carries ``{"app": "kstp/<version>", "query": <name>}`` as
metadata so it can be traced in ``SHOW TRANSACTIONS`` and the query log. Credentials are
passed to the driver and never printed, logged or kept in ``repr``.

Reads. Registered queries run as read transactions (``RoutingControl.READ``), so on a
cluster (``neo4j://`` routing) they go to secondaries, each waiting for the bookmarks of
the writes before it; the GDS area runs on the writer, where its projections live. A store
opened ``read_only`` runs *every* statement in read transactions: the server refuses a
write there, and the store's own writes are refused before they reach it. Bulk reads
(:meth:`~kstp.graph.store.GraphStore.frame` with ``categorical=True``, the existence reads
of a write) come back as one record holding a list per column (``collect``; a second list
of booleans marks the nulls ``collect`` would drop), decoded by ``neo4j-rust-ext``: the
driver spends most of a large result on per-record messages otherwise (38 k against 1 M
rows/s measured on 300 k answers).

Writes. The diff of :class:`~kstp.graph.store.GraphStore` knows which rows are new. New
nodes are ``CREATE``\\ d (a batch that meets a node a concurrent writer created since falls
back to ``MERGE``); new relationships are written by node key: both endpoint sets are
looked up once (``id(n)``, one index seek per distinct id; a missing one refuses the whole
write before anything is written), then one row per from-node carries the lists of its
to-keys and property values, :data:`REL_BATCH` relationships per transaction in whole
from-nodes, ``CREATE``\\ d with two key seeks per relationship and no index lookup. The
same transaction first locks its from-nodes and checks that none of the pairs it creates
is stored (a concurrent writer's): those nodes' rows are ``MERGE``\\ d instead, so two
ingests at once neither lose nor double an edge. A write of several transactions logs one
progress line per transaction (rows written, rows/s).

Units. One transaction cannot hold a large ingest (about 700 bytes of the server's memory
per relationship: 1 M answers passed the local server's 1.4 GB transaction limit), so a
:meth:`~kstp.graph.store.GraphStore.unit` creates its nodes under a hidden label
(:data:`STAGED`: ``StagedLearner`` for ``Learner``), which no query of the graph model
matches, writes their relationships in the usual batches, and at its end one transaction
gives them their label: readers see the new learners with all their answers, or none of
them. A kill leaves them hidden (``kstp db stats`` lists them under ``StagedLearner``, its
counts of answers leave theirs out); the next unit writing the same ids takes them up,
completes them and shows them. Changes to learners already in sight are written as they
come, in the usual batches. Two units at once may share new ids: the first to end shows
them; the other looks nodes up hidden first (they move only from hidden to shown), and a
twin it staged after the first showed the id is merged into the shown node at its end.

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
import os
import socket
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import neo4j
import numpy as np
import pandas as pd
from neo4j.exceptions import AuthError, ConfigurationError, ConstraintError, ServiceUnavailable, SessionExpired

from kstp._version import __version__
from kstp.errors import ConfigError, GraphUnavailableError, QueryError, UnknownIdError
from kstp.graph import schema
from kstp.graph.queries import get_query
from kstp.graph.store import GraphStore, _codes, records, sorted_by_ids, stopped

__all__ = ["Neo4jStore", "node_statements", "relationship_statements", "operators", "PROFILE", "PROFILES",
           "BAD_OPERATORS", "STAGED", "BATCH_SIZE", "REL_BATCH", "KEY_BATCH",
           "CONNECT_TIMEOUT_S", "RETRY_TIME_S", "READERS", "readers"]

#: Rows per UNWIND transaction of node writes, updates and deletions: large enough to
#: amortise round trips, small enough to keep a transaction's memory modest.
BATCH_SIZE = 10_000

#: Relationships per write transaction, in whole from-nodes (a learner's answers are never
#: split; a node with more goes alone). 20-50 k amortise the commit; one transaction holds
#: them in the server's memory.
REL_BATCH = 30_000

#: The hidden label under which an open :meth:`~kstp.graph.store.GraphStore.unit` creates the nodes
#: of a label: no query of the graph model matches it, so they and the relationships written from
#: them stay out of sight until one transaction at the unit's end gives them their label (a kill
#: leaves them hidden; the next unit writing the same ids takes them up and shows them).
STAGED = {"Learner": "StagedLearner"}

#: Ids per key lookup, and from-nodes per read of their stored relationships.
KEY_BATCH = 50_000
FROM_BATCH = 2_000

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

#: Sessions that read batches at once (:meth:`Neo4jStore.frame_batches`, the comparison read of
#: a write) unless ``KSTP_NEO4J_READERS`` says otherwise: two, one per core of a small machine.
READERS = 2


def readers() -> int:
    """``KSTP_NEO4J_READERS`` (a whole number from 1), else :data:`READERS`.

    Raises
    ------
    ConfigError
        When the variable is set to anything else.
    """
    text = os.environ.get("KSTP_NEO4J_READERS", "").strip()
    if not text:
        return READERS
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"KSTP_NEO4J_READERS must be a whole number from 1 (sessions reading at once), got {text!r}")
    return int(text)

#: Marks the per-column null list of a columnar read (``collect`` drops nulls).
_NULLS = "__null"

#: Run each statement name's first execution under ``PROFILE`` and keep its plan in
#: :data:`PROFILES` (``KSTP_NEO4J_PROFILE=1``; the benchmark sets it). Off by default: a
#: profiled statement runs slower.
PROFILE = os.environ.get("KSTP_NEO4J_PROFILE") == "1"
#: Statement name -> its profiled operators (see :func:`operators`), filled while :data:`PROFILE` is on.
PROFILES: dict[str, list[dict]] = {}

#: Operators a write by node key or a bulk read must not plan: a scan of a label or of
#: every node, a cartesian product, or an Eager (which materialises every row first).
BAD_OPERATORS = ("NodeByLabelScan", "AllNodesScan", "CartesianProduct", "Eager")


def operators(plan: dict | None) -> list[dict]:
    """The operators of a (profiled) plan, depth first: ``operator``, ``rows`` and ``dbHits`` (profiles only).

    >>> operators({"operatorType": "ProduceResults@neo4j", "children": [
    ...     {"operatorType": "NodeByIdSeek@neo4j", "children": [], "rows": 3, "dbHits": 3}]})
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'operator': 'ProduceResults', 'rows': None, 'dbHits': None},
     {'operator': 'NodeByIdSeek', 'rows': 3, 'dbHits': 3}]
    """
    if not plan:
        return []
    out = [{"operator": plan["operatorType"].split("@")[0], "rows": plan.get("rows"), "dbHits": plan.get("dbHits")}]
    for child in plan.get("children", []):
        out += operators(child)
    return out


class _Conflict(QueryError):
    """A write met a uniqueness constraint (a node that a concurrent writer created)."""


def _single(tx: neo4j.ManagedTransaction, text: str, params: dict, name: str) -> neo4j.Record:
    """The one record of ``text`` run in ``tx`` (profiled the first time when :data:`PROFILE` is on)."""
    profile = PROFILE and name not in PROFILES
    result = tx.run(f"PROFILE {text}" if profile else text, params)
    record = result.single()
    if profile:
        PROFILES[name] = operators(result.consume().profile)
    return record


def _frame(result: neo4j.Result) -> pd.DataFrame:
    """Result transformer: every record as a DataFrame row, with the result's columns."""
    keys = result.keys()
    return pd.DataFrame([record.values() for record in result], columns=keys)


def _columnar_text(text: str, columns: list[str], masks: tuple[str, ...] = ()) -> str:
    """``text`` wrapped to return one record: its row count, per column the list of its values
    (``collect`` drops nulls) and, for the ``masks`` columns, the list of their nulls."""
    lists = ", ".join(["count(*) AS `__rows`", *(f"collect(`{c}`) AS `{c}`" for c in columns),
                       *(f"collect(`{c}` IS NULL) AS `{c}{_NULLS}`" for c in masks)])
    return f"CALL () {{\n{text}\n}}\nRETURN {lists}"


def _values(values: list) -> np.ndarray | pd.Series:
    """A decoded list as a column: numbers and booleans as numpy arrays, anything else as objects."""
    if values and type(values[0]) in (int, float, bool):
        array = np.asarray(values)
        if array.dtype.kind in "ifb":
            return array
    return pd.Series(values, dtype=object)


def _from_columnar(record: pd.Series, columns: list[str]) -> pd.DataFrame | list[str]:
    """The rows of one :func:`_columnar_text` record, or the columns that need their null lists.

    A column with a value in every row, or in none (all null: NaN), needs no null list; one
    with some nulls does (``collect`` left no trace of where they were), and is named so the
    read is run again with its mask.
    """
    rows, out, partial = int(record["__rows"]), {}, []
    for column in columns:
        values = record[column]
        nulls = record.get(column + _NULLS)
        if nulls is not None:
            nulls = np.asarray(nulls, bool)
            present = iter(values)  # values may be lists (array properties): placed one by one
            out[column] = pd.Series([None if null else next(present) for null in nulls.tolist()], dtype=object)
        elif len(values) == rows:
            out[column] = _values(values)
        elif not values:
            out[column] = np.full(rows, np.nan)
        else:
            partial.append(column)
    return partial or pd.DataFrame(out, columns=columns)


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


def _plain_list(column: pd.Series) -> list:
    """A column as a list of plain Python values, a missing one (None, NaN) as ``None``."""
    if column.dtype != object and not isinstance(column.dtype, pd.CategoricalDtype) and not column.isna().any():
        return column.to_numpy().tolist()
    return column.astype(object).where(column.notna(), None).tolist()


def node_statements(label: str, props: list[str] = ()) -> dict[str, str]:
    """The statements that write ``label`` nodes and look them up, by use.

    ``create`` takes rows of property maps; ``merge`` and ``update`` set ``props`` (each
    named, so the planner sees that ``id`` is not written and plans no Eager); ``keys``
    finds node keys of ids, ``ids`` ids of node keys; for a label of :data:`STAGED`,
    ``stage`` merges rows into its hidden nodes, save ids in sight by now. ``label`` must
    come from :mod:`kstp.graph.schema` (or be a label expression of its labels).
    """
    named = [c for c in props if c != "id"]
    sets = " SET " + ", ".join(f"n.{c} = row.{c}" for c in named) if named else ""
    return {
        "create": f"UNWIND $rows AS row CREATE (n:{label}) SET n = row RETURN count(*) AS n",
        "merge": f"UNWIND $rows AS row MERGE (n:{label} {{id: row.id}}){sets} RETURN count(*) AS n",
        "update": f"UNWIND $rows AS row MATCH (n:{label} {{id: row.id}}){sets} RETURN count(*) AS n",
        "keys": f"UNWIND range(0, size($ids) - 1) AS i MATCH (n:{label} {{id: $ids[i]}}) RETURN i, id(n) AS key",
        "ids": f"UNWIND $keys AS k MATCH (n:{label}) WHERE id(n) = k RETURN k, n.id AS id",
        **({"stage": f"UNWIND $rows AS row WITH row WHERE NOT EXISTS {{ MATCH (:{label} {{id: row.id}}) }} "
                     f"MERGE (n:{STAGED[label]} {{id: row.id}}){sets} RETURN count(*) AS n"}
           if label in STAGED else {}),
    }


def relationship_statements(rel: str, from_label: str, to_label: str, props: list[str],
                            constants: tuple[str, ...] = (), staged: tuple[str, ...] = ()) -> dict[str, str]:
    """The statements that write and diff ``(from)-[rel]->(to)`` relationships with ``props``, by use.

    ``guard`` locks a batch's from-nodes (a write to each) and names those whose
    relationships of the type are no longer the ones the diff read (a concurrent writer's);
    ``create`` and ``merge`` take one row per from-node with lists (``b``: the to-keys, one
    list per property, save the ``constants``, one value for every row in ``$const``);
    ``update`` one row per relationship; ``existing`` reads what from-nodes hold. Labels and
    types must come from :mod:`kstp.graph.schema`. An end whose label is in ``staged`` (an
    open :meth:`~kstp.graph.store.GraphStore.unit`'s) also matches the label's hidden nodes
    (:data:`STAGED`); its nodes are found by key, so the label expression is only a check.
    """
    def item(c: str) -> str:
        return f"$const.{c}" if c in constants else f"row.{c}[i]"

    setters = ", ".join(f"{c}: {item(c)}" for c in props)
    sets = " SET " + ", ".join(f"r.{c} = row.{c}" for c in props) if props else ""
    item_sets = " SET " + ", ".join(f"r.{c} = {item(c)}" for c in props) if props else ""
    returns = "".join(f", r.{c} AS {c}" for c in props)
    # Where the model lets the type join from_label to to_label alone (ANSWERED), reads leave
    # the end's label unchecked: a count is then the node's degree, and the diff read of
    # 5.4 M answers skips a label check for each.
    sole = [t for f, t in schema.rel_types()[rel].endpoints if f == from_label] == [to_label]
    from_label, to_label = (f"{label}|{STAGED[label]}" if label in staged else label
                            for label in (from_label, to_label))
    end = "" if sole else f":{to_label}"
    return {
        "guard": (f"UNWIND $rows AS row MATCH (a:{from_label}) WHERE id(a) = row.a SET a.id = a.id "
                  f"WITH a, row WHERE COUNT {{ MATCH (a)-[:{rel}]->({end}) }} <> row.d "
                  "RETURN collect(row.a) AS clash"),
        "create": (f"UNWIND $rows AS row MATCH (a:{from_label}) WHERE id(a) = row.a "
                   f"UNWIND range(0, size(row.b) - 1) AS i MATCH (b:{to_label}) WHERE id(b) = row.b[i] "
                   f"CREATE (a)-[r:{rel}{' {' + setters + '}' if props else ''}]->(b) RETURN count(r) AS n"),
        "merge": (f"UNWIND $rows AS row MATCH (a:{from_label}) WHERE id(a) = row.a "
                  f"UNWIND range(0, size(row.b) - 1) AS i MATCH (b:{to_label}) WHERE id(b) = row.b[i] "
                  f"MERGE (a)-[r:{rel}]->(b){item_sets} RETURN count(*) AS n"),
        "update": (f"UNWIND $rows AS row MATCH (a:{from_label}) WHERE id(a) = row.a "
                   f"MATCH (b:{to_label}) WHERE id(b) = row.b MATCH (a)-[r:{rel}]->(b){sets} RETURN count(*) AS n"),
        "existing": (f"UNWIND range(0, size($keys) - 1) AS i MATCH (a:{from_label}) WHERE id(a) = $keys[i] "
                     f"MATCH (a)-[r:{rel}]->(b{end}) RETURN i, id(b) AS b{returns}"),
    }


def _show_statements(label: str) -> dict[str, Any]:
    """The statements of the transaction that ends a unit of ``label``: they show its hidden nodes.

    ``twins`` names the ids of ``$ids`` that are hidden and shown at once: another unit showed
    the id after this one's diff read it as new, and this one then staged a node of its own.
    ``merge`` (a list) gives each twin's relationships of every type the model joins to
    ``label`` (merged, this unit's values last: a later write's win) and properties to
    the shown node, then deletes the twin; ``show`` relabels the rest.
    """
    hidden = STAGED[label]
    merge = []
    for rel, spec in schema.rel_types().items():
        for from_label, to_label in spec.endpoints:
            for end, other, arrow in ((from_label, to_label, "-[r:{0}]->"), (to_label, from_label, "<-[r:{0}]-")):
                if end == label:
                    pattern = arrow.format(rel)
                    merge.append(f"UNWIND $ids AS key MATCH (n:{hidden} {{id: key}}){pattern}(b:{other}) "
                                 f"MATCH (s:{label} {{id: key}}) MERGE (s){pattern.replace('[r:', '[m:')}(b) "
                                 "SET m = properties(r) RETURN count(*) AS n")
    merge.append(f"UNWIND $ids AS key MATCH (n:{hidden} {{id: key}}) MATCH (s:{label} {{id: key}}) "
                 "SET s += properties(n) DETACH DELETE n RETURN count(*) AS n")
    return {"twins": f"UNWIND $ids AS key MATCH (n:{hidden} {{id: key}}) "
                     f"WHERE EXISTS {{ MATCH (:{label} {{id: key}}) }} RETURN collect(key) AS twins",
            "merge": merge,
            "show": f"UNWIND $ids AS key MATCH (n:{hidden} {{id: key}}) SET n:{label} REMOVE n:{hidden} "
                    "RETURN count(*) AS n"}


class Neo4jStore(GraphStore):
    """A Neo4j 5 database at ``uri`` (``neo4j://``, ``bolt://``, ``neo4j+s://``...).

    ``database`` names the database; ``None`` uses the user's home database.
    ``read_only`` runs every statement in read transactions (routed to a cluster's
    secondaries) and refuses the store's writes.

    Raises
    ------
    ConfigError
        When the URI is malformed or carries credentials, no server answers at it, or
        the server refuses the credentials.
    GraphUnavailableError
        From any query or write, when the server is lost and the driver's retries give up.
    QueryError
        From a write through a store opened ``read_only``.
    """

    engine = "neo4j"

    def __init__(self, uri: str, user: str, password: str, database: str | None = None, read_only: bool = False):
        self.uri = _checked_uri(uri)
        self._database = database
        self._staged_ids: list[str] = []  # the ids an open unit created out of sight
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
        # transaction's memory; delete in bounded batches of REL_BATCH instead (constraints stay).
        self._writable()
        for what, text in (("relationships", "MATCH ()-[r]->() WITH r LIMIT $batch DELETE r RETURN count(*) AS n"),
                           ("nodes", "MATCH (n) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n")):
            while self._run(text, {"batch": REL_BATCH}, f"reset {what}")["n"].iloc[0]:
                pass

    def close(self) -> None:
        self._driver.close()

    def last_transaction(self) -> str:
        """The bookmark of the last transaction committed on the database: unchanged while nothing is written.

        A read transaction's bookmark names the last transaction the server had committed
        (Neo4j Community has no ``lastCommittedTxn`` column in ``SHOW DATABASES``).
        """
        with self._driver.session(database=self._database, default_access_mode=neo4j.READ_ACCESS) as session:
            session.run("RETURN 1").consume()
            return ",".join(sorted(session.last_bookmarks().raw_values))

    def explain(self, text: str, params: dict) -> list[dict]:
        """The operators Neo4j plans for ``text`` (``EXPLAIN``: nothing runs), as :func:`operators` lists them."""
        with self._errors("explain"):
            summary = self._driver.execute_query(f"EXPLAIN {text}", params, database_=self._database,
                                                 result_transformer_=neo4j.Result.consume)
        return operators(summary.plan)

    def delete_nodes(self, label: str, ids: list[str]) -> int:
        # DETACH DELETE would hold every relationship of a batch in one transaction (a dataset's
        # questions carry 1.2 M derived edges): delete those first in bounded batches, as reset does.
        schema.node_label(label)
        self._writable()
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), BATCH_SIZE):
            chunk = unique[start:start + BATCH_SIZE]
            while self._run(f"UNWIND $ids AS key MATCH (:{label} {{id: key}})-[r]-() WITH DISTINCT r LIMIT $batch "
                            "DELETE r RETURN count(*) AS n", {"ids": chunk, "batch": BATCH_SIZE},
                            f"delete {label} relationships")["n"].iloc[0]:
                pass
            self._run(f"UNWIND $ids AS key MATCH (n:{label} {{id: key}}) DELETE n", {"ids": chunk}, f"delete {label}")
        return len(ids)

    def nodes(self, label: str, ids: list[str] | None = None) -> pd.DataFrame:
        if ids is not None:
            return super().nodes(label, ids)
        spec = schema.node_label(label)  # every node of the label as one record of column lists
        columns = [name for name, _ in spec.properties]
        rows = self._run_columnar(f"MATCH (n:{label}) RETURN " + ", ".join(f"n.{c} AS {c}" for c in columns), {},
                                  columns, f"nodes {label}")
        return rows.sort_values("id", ignore_index=True)

    def relationships(self, rel: str, from_label: str, to_label: str) -> pd.DataFrame:
        # Read by from-node key, FROM_BATCH nodes a transaction (5.4 M answers do not fit one record).
        parts = list(self.relationship_batches(rel, from_label, to_label))
        if not parts:
            columns = ["from_id", "to_id", *(name for name, _ in schema.rel_type(rel, from_label, to_label).properties)]
            return pd.DataFrame(columns=columns)
        return pd.concat([part.astype({"from_id": object, "to_id": object}) for part in parts], ignore_index=True)

    def relationship_batches(self, rel: str, from_label: str, to_label: str, size: int = 4096):
        columns = [name for name, _ in schema.rel_type(rel, from_label, to_label).properties]
        text = f"MATCH (a:{from_label}) WHERE EXISTS {{ MATCH (a)-[:{rel}]->(:{to_label}) }} RETURN a.id AS id"
        starts = sorted(self._run_columnar(text, {}, ["id"], f"relationships {rel}")["id"])
        for at in range(0, len(starts), size):
            rows = self._existing_rels(rel, from_label, to_label, starts[at:at + size], columns)
            if len(rows):
                yield sorted_by_ids(rows, ["from_id", "to_id"])

    # ---- running statements --------------------------------------------------------------
    def _writable(self) -> None:
        if self.read_only:
            raise QueryError(f"the Neo4j graph at {self.uri} was opened read-only (read transactions); this command "
                             "cannot write")

    @contextmanager
    def _errors(self, name: str):
        """Driver errors as kstp's one-line errors naming the statement ``name``."""
        try:
            yield
        except (ServiceUnavailable, SessionExpired) as exc:
            raise GraphUnavailableError(
                f"lost the Neo4j server at {self.uri} during {name or 'a query'!r} and could not reconnect within "
                f"{RETRY_TIME_S:.0f} s ({' '.join(str(exc).split())[:160]}); what was committed stays; re-run "
                "the command when the server is back (it skips what is already written)") from None
        except ConstraintError as exc:  # a node a concurrent writer created: the node writes retry with MERGE
            first = " ".join(f"{exc.code}: {exc.message}".split())[:300]
            raise _Conflict(f"query {name or 'statement'} failed on Neo4j ({self.uri}): {first}") from None
        except neo4j.exceptions.Neo4jError as exc:  # the server refused the query: one line, naming it
            first = " ".join(f"{exc.code}: {exc.message}".split())[:300]
            raise QueryError(f"query {name or 'statement'} failed on Neo4j ({self.uri}): {first}") from None

    def _metadata(self, name: str) -> dict:
        return {"app": f"kstp/{__version__}", "query": name}

    def _run(self, text: str, params: dict, name: str, routing: neo4j.RoutingControl = _WRITE,
             timeout_s: float | None = None) -> pd.DataFrame:
        """Run ``text`` in one managed transaction, tagged with ``name``; its rows as a DataFrame.

        A read-only store runs it as a read transaction whatever ``routing`` says; ``timeout_s``
        is the transaction's timeout (None: the server's).
        """
        profile = PROFILE and name not in PROFILES
        query = neo4j.Query(f"PROFILE {text}" if profile else text, metadata=self._metadata(name), timeout=timeout_s)
        with self._errors(name):
            rows = self._driver.execute_query(
                query, params, routing_=_READ if self.read_only else routing, database_=self._database,
                result_transformer_=(lambda result: (_frame(result), result.consume().profile)) if profile else _frame)
        if profile:
            rows, PROFILES[name] = rows[0], operators(rows[1])
        return rows

    def _run_columnar(self, text: str, params: dict, columns: list[str], name: str,
                      routing: neo4j.RoutingControl = _READ) -> pd.DataFrame:
        """Run the read ``text`` (returning ``columns``) as one record of lists; its rows as a DataFrame.

        Where some values of a column are null, the read runs again with that column's null list.
        """
        rows = _from_columnar(self._run(_columnar_text(text, columns), params, name, routing).iloc[0], columns)
        if isinstance(rows, list):
            masked = _columnar_text(text, columns, tuple(rows))
            rows = _from_columnar(self._run(masked, params, name, routing).iloc[0], columns)
        return rows

    def _write(self, name: str, work):
        """Run ``work(tx)`` in one managed write transaction (retried whole on transient errors)."""
        self._writable()
        unit = neo4j.unit_of_work(metadata=self._metadata(name))(work)
        with self._errors(name), self._driver.session(
                database=self._database, bookmark_manager=self._driver.execute_query_bookmark_manager) as session:
            return session.execute_write(unit)

    def _routing(self, name: str) -> neo4j.RoutingControl:
        # GDS projections live on the member that made them: that area runs on the writer.
        return _WRITE if get_query(name).area == "gds" else _READ

    def _execute(self, text: str, params: dict, name: str = "") -> pd.DataFrame:
        return self._run(text, params, name)

    def stamp(self) -> object:
        # Community Neo4j gives no last transaction id (SHOW DATABASES' lastCommittedTxn is null): the node
        # and relationship counts, which the count store answers at once, change with every ingest and run.
        row = self._run("MATCH (n) WITH count(n) AS nodes MATCH ()-[r]->() RETURN nodes, count(r) AS rels", {},
                        "stamp", _READ).iloc[0]
        return int(row["nodes"]), int(row["rels"])

    def _read_statement(self, text, params, timeout_s):
        try:
            return self._run(text, params, "ad hoc", _READ, timeout_s)
        except QueryError as exc:
            if "TransactionTimedOut" in str(exc):  # the server's own limit, from the transaction's timeout
                raise stopped(timeout_s) from None
            raise

    def _execute_read(self, text: str, params: dict, name: str = "", registered: bool = False) -> pd.DataFrame:
        return self._run(text, params, name, self._routing(name) if registered else _READ)

    def frame_batches(self, name: str, params: dict[str, Any], keys: list[str], size: int) -> Iterator[pd.DataFrame]:
        """As :meth:`GraphStore.frame_batches`, with the next ranges read while the caller works on this one.

        :func:`readers` sessions read ranges in order, so at most that many batches are held
        besides the caller's: the server runs reads while Python scores the batch before them.

        Raises
        ------
        ConfigError
            On a malformed ``KSTP_NEO4J_READERS``.
        """
        sessions = readers()
        with ThreadPoolExecutor(sessions, thread_name_prefix="kstp-read") as pool:
            ahead: deque = deque()
            for lo, hi in self._ranges(keys, size):
                ahead.append(pool.submit(self.frame, name, {**params, "lo": lo, "hi": hi}, True))
                if len(ahead) > sessions:
                    yield ahead.popleft().result()
            while ahead:
                yield ahead.popleft().result()

    def _execute_categorical(self, text: str, params: dict, name: str = "") -> pd.DataFrame:
        # Bulk reads (batches the caller bounds) come back as one record holding a list per column.
        rows = self._run_columnar(text, params, list(get_query(name).returns), name, self._routing(name))
        return rows.astype({c: "category" for c in rows.columns if rows[c].dtype == object
                            and pd.api.types.infer_dtype(rows[c], skipna=True) == "string"})

    def _execute_rows(self, text: str, rows: pd.DataFrame, name: str = "") -> int:
        self._writable()
        done, began = 0, time.monotonic()
        for start in range(0, len(rows), BATCH_SIZE):
            chunk = records(rows.iloc[start:start + BATCH_SIZE])
            result = self._run(text, {"rows": chunk}, name)
            done += int(result["n"].sum()) if "n" in result else len(chunk)
            self._progress(name, start + len(chunk), len(rows), began, len(rows) > BATCH_SIZE)
        return done

    @staticmethod
    def _progress(name: str, sent: int, total: int, began: float, show: bool) -> None:
        if show:
            elapsed = time.monotonic() - began
            log.info("%s: %s/%s rows written, %.0f rows/s, %.1f s", name or "write", f"{sent:,}", f"{total:,}",
                     sent / elapsed if elapsed else 0.0, elapsed)

    def _read_by_ids(self, text: str, ids: list, columns: list[str], name: str) -> pd.DataFrame:
        """Run a read over ``$ids`` in batches of :data:`KEY_BATCH`, each one record of lists; the rows together."""
        parts = [self._run_columnar(text, {"ids": ids[start:start + KEY_BATCH]}, columns, name)
                 for start in range(0, len(ids), KEY_BATCH)]
        parts = [part for part in parts if len(part)]
        if not parts:
            return pd.DataFrame(columns=columns)
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]

    # ---- units -----------------------------------------------------------------------------
    def _begin_unit(self, label: str) -> None:
        if label not in STAGED:
            raise QueryError(f"Neo4j keeps new {label} nodes out of sight only for {', '.join(STAGED)}; "
                             f"a unit of {label} writes cannot be one")
        self._writable()
        self._staged_ids = []

    def _end_unit(self, commit: bool) -> None:
        ids, self._staged_ids = self._staged_ids, []
        if not commit or not ids:
            return  # left hidden: a later unit writing the same ids takes them up
        label, name = self._unit_label, f"show {self._unit_label}"
        statements = _show_statements(label)

        def show(tx: neo4j.ManagedTransaction) -> None:
            twins = _single(tx, statements["twins"], {"ids": ids}, name)["twins"]
            if twins:  # shown by a concurrent unit after this one read them as new and staged its own
                for text in statements["merge"]:
                    _single(tx, text, {"ids": twins}, name)
            _single(tx, statements["show"], {"ids": ids}, name)

        self._write(name, show)

    def _staged(self) -> tuple[str, ...]:
        """The labels whose hidden nodes the statements of this moment also match (an open unit's)."""
        return (self._unit_label,) if self._unit_label else ()

    def _match(self, label: str) -> str:
        """``label`` as a statement matches it: with its hidden nodes in an open unit of the label."""
        return f"{label}|{STAGED[label]}" if label == self._unit_label else label

    # ---- node keys -----------------------------------------------------------------------
    def _node_keys(self, label: str, ids: pd.Series) -> np.ndarray:
        """The node key (``id(n)``) of each of ``ids`` among the ``label`` nodes; -1 where there is none.

        One index seek per distinct id, :data:`KEY_BATCH` ids per read transaction.
        """
        codes, distinct = _codes(ids)
        found = np.full(len(distinct), -1, np.int64)
        # In an open unit of the label its hidden nodes are looked up too, and first: another
        # unit's end moves nodes from hidden to shown, never back, so a node that moves between
        # the two reads is found by the second, where shown-then-hidden would miss it.
        for where in [*([STAGED[label]] if label == self._unit_label else []), label]:
            missing = np.flatnonzero(found < 0)
            values = distinct[missing].tolist()
            for start in range(0, len(values), KEY_BATCH):
                chunk = values[start:start + KEY_BATCH]
                rows = self._run_columnar(node_statements(where)["keys"], {"ids": chunk}, ["i", "key"],
                                          f"keys {where}")
                found[missing[start + np.asarray(rows["i"], np.int64)]] = np.asarray(rows["key"], np.int64)
        return np.where(codes >= 0, found[np.maximum(codes, 0)], -1)

    def _ids_of(self, label: str, keys: np.ndarray) -> pd.Categorical:
        """The ids of the ``label`` nodes with ``keys`` (distinct keys looked up once)."""
        distinct, codes = np.unique(keys, return_inverse=True)
        ids = []
        for start in range(0, len(distinct), KEY_BATCH):
            chunk = distinct[start:start + KEY_BATCH].tolist()
            rows = self._run_columnar(node_statements(self._match(label))["ids"], {"keys": chunk}, ["k", "id"],
                                      f"ids {label}")
            ids.append(pd.Series(rows["id"].to_numpy(object), index=np.asarray(rows["k"], np.int64)))
        found = pd.concat(ids) if ids else pd.Series([], dtype=object)
        return pd.Categorical.from_codes(codes, found.reindex(distinct).to_numpy(object))

    # ---- writes --------------------------------------------------------------------------
    def _create_nodes(self, label, rows):
        schema.node_label(label)
        self._writable()
        props = [c for c in rows.columns if rows[c].notna().any()]
        hidden = label == self._unit_label  # an open unit creates them out of sight (STAGED)
        statements = node_statements(label, props)
        create, merge = (node_statements(STAGED[label], props)["create"], statements["stage"]) if hidden else \
            (statements["create"], statements["merge"])
        began = time.monotonic()
        for start in range(0, len(rows), BATCH_SIZE):
            chunk = records(rows[props].iloc[start:start + BATCH_SIZE])
            try:
                self._run(create, {"rows": chunk}, f"write {label}")
            except _Conflict:  # a concurrent writer (or a killed unit, hidden) created some of them since the diff
                self._run(merge, {"rows": chunk}, f"write {label}")
            if hidden:
                self._staged_ids += [row["id"] for row in chunk]
            self._progress(f"write {label}", start + len(chunk), len(rows), began, len(rows) > BATCH_SIZE)

    def _update_nodes(self, label, rows):
        schema.node_label(label)
        self._execute_rows(node_statements(label, list(rows.columns))["update"], rows, f"write {label}")

    def _endpoint_keys(self, rel: str, from_label: str, to_label: str, rows: pd.DataFrame
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Node keys of both ends of every row; :class:`UnknownIdError` (nothing written) for a missing one."""
        keys = []
        for label, column in ((from_label, "from_id"), (to_label, "to_id")):
            found = self._node_keys(label, rows[column])
            if (found < 0).any():
                missing = pd.unique(rows[column].to_numpy(object)[found < 0])
                raise UnknownIdError(f"{rel}: endpoint missing from the graph: {len(missing)} {label} ids in "
                                     f"{column}, e.g. {missing[0]!r}")
            keys.append(found)
        return keys[0], keys[1]

    def _create_rels(self, rel, from_label, to_label, rows, degrees=None):
        # Refuse the whole write before any batch commits, as Ladybug's COPY does.
        schema.rel_type(rel, from_label, to_label)
        self._writable()
        a, b = self._endpoint_keys(rel, from_label, to_label, rows)
        degree = np.zeros(len(rows), np.int64) if degrees is None or degrees.empty else \
            degrees.reindex(rows["from_id"].astype(object)).fillna(0).to_numpy(np.int64)
        props = [c for c in rows.columns if c not in ("from_id", "to_id") and rows[c].notna().any()]
        order = np.argsort(a, kind="stable")
        a, b, degree = a[order], b[order], degree[order]
        starts = np.flatnonzero(np.r_[True, a[1:] != a[:-1]]) if len(a) else np.zeros(0, np.int64)
        ends = np.r_[starts[1:], len(a)]
        # A property with one value in every row (Eq. 1's rule and source) goes once, as a parameter.
        constants = {c: _plain_list(rows[c].iloc[:1])[0] for c in props
                     if rows[c].notna().all() and rows[c].nunique() == 1 and not isinstance(rows[c].iloc[0], list)}
        lists = {"b": b.tolist(), **{c: _plain_list(rows[c].iloc[order]) for c in props if c not in constants}}
        groups = [{"a": int(a[s]), "d": int(degree[s]), **{k: v[s:e] for k, v in lists.items()}}
                  for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        statements = relationship_statements(rel, from_label, to_label, props, tuple(constants), self._staged())
        create, guard = statements["create"], statements["guard"]  # a concurrent writer's rows are MERGEd
        name, total, sent, began, clashed = f"write {rel}", len(a), 0, time.monotonic(), []

        def work(tx, batch):
            clash = set(_single(tx, guard, {"rows": [{"a": g["a"], "d": g["d"]} for g in batch]},
                                f"{name} (guard)")["clash"])
            fresh = [g for g in batch if g["a"] not in clash]
            written = _single(tx, create, {"rows": fresh, "const": constants}, name)["n"] if fresh else 0
            return written, [g for g in batch if g["a"] in clash]

        for batch in self._rel_batches(groups):
            expected = sum(len(g["b"]) for g in batch)
            written, clashes = self._write(name, lambda tx, batch=batch: work(tx, batch))
            clashed += clashes
            if written < expected - sum(len(g["b"]) for g in clashes):  # an endpoint deleted since the lookup
                raise UnknownIdError(f"{rel}: rows name an endpoint deleted from the graph during the write")
            sent += expected
            self._progress(name, sent, total, began, total > REL_BATCH)
        if clashed:
            self._merge_rels(rel, from_label, to_label, clashed, props, constants)

    @staticmethod
    def _rel_batches(groups: list[dict]):
        """Runs of whole from-node rows of about :data:`REL_BATCH` relationships."""
        batch, size = [], 0
        for group in groups:
            if batch and size + len(group["b"]) > REL_BATCH:
                yield batch
                batch, size = [], 0
            batch.append(group)
            size += len(group["b"])
        if batch:
            yield batch

    def _merge_rels(self, rel, from_label, to_label, groups: list[dict], props: list[str], constants: dict) -> None:
        """``MERGE`` the rows of ``groups`` (from-nodes whose relationships a concurrent writer changed)."""
        text = relationship_statements(rel, from_label, to_label, props, tuple(constants), self._staged())["merge"]
        for batch in self._rel_batches(groups):
            self._write(f"merge {rel}", lambda tx, batch=batch: _single(tx, text, {"rows": batch, "const": constants},
                                                                        f"merge {rel}"))

    def _update_rels(self, rel, from_label, to_label, rows):
        schema.rel_type(rel, from_label, to_label)
        self._writable()
        a, b = self._endpoint_keys(rel, from_label, to_label, rows)
        props = [c for c in rows.columns if c not in ("from_id", "to_id")]
        keyed = pd.concat([pd.DataFrame({"a": a, "b": b}), rows[props].reset_index(drop=True)], axis=1)
        text = relationship_statements(rel, from_label, to_label, props, (), self._staged())["update"]
        self._execute_rows(text, keyed, f"write {rel}")

    def _existing_rels(self, rel, from_label, to_label, from_ids, columns):
        """The stored ``rel`` relationships from ``from_ids``, ids as categoricals (read by node key,
        :func:`readers` batches of :data:`FROM_BATCH` from-nodes at once)."""
        schema.rel_type(rel, from_label, to_label)
        from_index = pd.Index(from_ids)
        keys = self._node_keys(from_label, pd.Series(from_index))
        known = keys >= 0
        stored = keys[known]
        text = relationship_statements(rel, from_label, to_label, columns, (), self._staged())["existing"]
        starts = range(0, len(stored), FROM_BATCH)

        def read(start: int) -> pd.DataFrame:
            chunk = stored[start:start + FROM_BATCH]
            return self._run_columnar(text, {"keys": chunk.tolist()}, ["i", "b", *columns], f"existing {rel}")

        with ThreadPoolExecutor(readers(), thread_name_prefix="kstp-read") as pool:  # the server reads on both cores
            parts = [(np.asarray(part["i"], np.int64) + start, part)
                     for start, part in zip(starts, pool.map(read, starts), strict=True) if len(part)]
        if not parts:
            return pd.DataFrame(columns=["from_id", "to_id", *columns])
        position = np.flatnonzero(known)[np.concatenate([i for i, _ in parts])]  # into from_index
        out = pd.DataFrame({"from_id": pd.Categorical.from_codes(position, from_index.astype(object)),
                            "to_id": self._ids_of(to_label, np.concatenate([np.asarray(p["b"], np.int64)
                                                                             for _, p in parts]))})
        for column in columns:  # numpy concatenation: pandas' would test every None of an object column
            out[column] = np.concatenate([p[column].to_numpy() for _, p in parts])
        return out
