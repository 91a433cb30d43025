"""The embedded LadybugDB store (PyPI ``ladybug``), the default engine.

New rows go in through ``COPY FROM`` an Arrow table (new nodes of a small write, fewer
than ``COPY_MIN_ROWS``, through ``UNWIND $rows CREATE``: each ``COPY`` holds on to
memory of its own), changed rows through ``UNWIND $rows ... SET``. Measured at XES3G5M
scale (5.4 M answers), the whole write path is 12-17x faster per edge than batched
UNWIND/CREATE or MERGE (``make bench``).
Assumes a single writer process: Ladybug locks the graph file. A store opened
``read_only`` writes nothing (it works on a read-only disk and next to the writer). A
writable store of an existing graph also opens it read-only and reopens it for writing
at its first write: Ladybug checkpoints a writable database when it closes, rewriting
the file, so a command that ends up writing nothing (a re-ingest of the same file)
leaves the graph's bytes unchanged for file backups and the demo's fingerprint. A
second writer is told, at its first write, which process holds the lock and what to do. An engine error
in a query becomes a one-line :class:`~kstp.errors.QueryError` naming it.

A process killed during a checkpoint leaves shadow pages that only a read-write open
replays ("checkpoint recovery is pending"): a store that may write completes the
recovery when it opens (everything committed before the kill is kept); a read-only store
waits up to :data:`CHECKPOINT_WAIT_S` for a live writer's checkpoint to end, and otherwise
says in one line which process holds the graph or which command recovers it.

The writes of a :meth:`~kstp.graph.store.GraphStore.unit` are one transaction (``BEGIN
TRANSACTION`` at its first write, ``COMMIT`` at its end): an exception or a kill leaves
none of it, and a reader sees all of it or none (an ingest's learners with their answers).

A write-ahead log whose last record is incomplete (a process killed while appending it, a
file cut short) made the graph unopenable ("Checksum verification failed, the WAL file is
corrupted"). Now a store that may write keeps a copy of the damaged log beside the graph
and lets the engine replay the log up to its last whole transaction (dropping the rest), a
read-only store reads that prefix, and either says so in one line.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import ladybug
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kstp.errors import ConfigError, DataNotFoundError, QueryError, UnknownIdError
from kstp.graph import schema
from kstp.graph.store import GraphStore, records, stopped

__all__ = ["LadybugStore", "MAX_PATH_LENGTH", "CHECKPOINT_WAIT_S"]

#: Longest variable-length path Ladybug follows. Its default, 30, silently truncates
#: ``*1..`` closures on deeper prerequisite chains; acyclic graphs need at most n - 1.
MAX_PATH_LENGTH = 100_000
#: New nodes of a write go in through ``COPY`` from this many rows (a node group's size); fewer through CREATE.
COPY_MIN_ROWS = 2048
#: The comparison read of a write (:meth:`LadybugStore._existing_rels`): ids of the write whose places among
#: the stored ids, in order, lie at most RANGE_GAP apart form a run; a run of RANGE_MIN ids or more is read
#: by one id range, other ids by IN lists of IN_BATCH (an IN list costs the label's size times its length).
RANGE_GAP = 256
RANGE_MIN = 16
IN_BATCH = 256
#: The most memory the engine's buffer pool (its page cache and the memory of its queries) takes by default,
#: in bytes. Ladybug's own default, 80 % of the machine's memory, made every open of a graph cost 20-30 ms on a
#: 24 GB machine, and 1.5 ms more per GB of pool past 16 GB (100 ms for 64 GB), against 3-7 ms up to 8 GB
#: (measured with ladybug 0.22): each command opens the graph once or twice. ``$KSTP_LADYBUG_BUFFER_POOL``
#: (``4g``, ``1536m``) chooses another size.
BUFFER_POOL_MAX = 8 << 30
_SIZE = re.compile(r"(\d+)\s*([kmgt]?)i?b?", re.IGNORECASE)


def buffer_pool_size() -> int:
    """The buffer pool of every Ladybug database kstp opens, in bytes: ``$KSTP_LADYBUG_BUFFER_POOL`` where set,
    else 80 % of the machine's memory (Ladybug's default) up to :data:`BUFFER_POOL_MAX`.

    Raises
    ------
    ConfigError
        When ``$KSTP_LADYBUG_BUFFER_POOL`` is no size (a whole number with an optional k, m, g or t).
    """
    text = os.environ.get("KSTP_LADYBUG_BUFFER_POOL", "").strip()
    if text:
        found = _SIZE.fullmatch(text)
        if not found or not int(found.group(1)):
            raise ConfigError(f"KSTP_LADYBUG_BUFFER_POOL={text!r} is no size: give one such as 4g or 1536m")
        return int(found.group(1)) << 10 * " kmgt".index(found.group(2).lower() or " ")
    return min(int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 0.8), BUFFER_POOL_MAX)


def _database(path: Path, **options) -> ladybug.Database:
    return ladybug.Database(str(path), buffer_pool_size=buffer_pool_size(), **options)


#: Where the store says what it recovered (``kstp.graph``: the CLI shows these lines on stderr).
log = logging.getLogger(__name__)
#: Seconds a read-only open waits for another process's checkpoint to end.
CHECKPOINT_WAIT_S = 15.0
#: What a checkpoint leaves beside the graph file while it runs (all of them after a kill mid-checkpoint).
_SIDE_FILES = (".wal", ".shadow", ".wal.checkpoint", ".checkpoint.intent.lock", ".checkpoint.apply.lock")
#: States of a unit's transaction (:meth:`LadybugStore._for_writing`).
_PENDING, _OPEN, _FAILED = "pending", "open", "failed"
_ARROW = {"STRING": pa.string(), "DOUBLE": pa.float64(), "INT64": pa.int64(), "BOOLEAN": pa.bool_(),
          "STRING[]": pa.list_(pa.string()), "DOUBLE[]": pa.list_(pa.float64())}


def _arrow(rows: pd.DataFrame, properties) -> pa.Table:
    return pa.table({name: _column(rows[name], _ARROW[kind]) for name, kind in properties})


def _column(values: pd.Series, kind: pa.DataType) -> pa.Array:
    """One column as Arrow: missing values (None, NaN) become nulls; a categorical is decoded in Arrow."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return pa.Array.from_pandas(values).dictionary_decode().cast(kind)
    if pa.types.is_list(kind):
        return pa.array(values.astype(object).where(values.notna(), None).tolist(), kind)
    return pa.Array.from_pandas(values.astype(object) if values.dtype == object else values, type=kind)


def _plain(table: pa.Table) -> pa.Table:
    """``table`` with its DECIMAL columns as int64 (scale 0) or float64.

    Ladybug sums INT64 to INT128 and reads it as ``decimal128(38, 0)``, which pandas holds
    as ``decimal.Decimal``: JSON cannot encode it, and Neo4j returns the same sum as an
    integer. A count of rows fits int64; other decimals become floats, as Neo4j's.
    """
    columns = [column.cast(pa.int64() if column.type.scale == 0 else pa.float64())
               if pa.types.is_decimal(column.type) else column for column in table.columns]
    return pa.table(columns, names=table.column_names)


def _sets(var: str, columns: list[str], properties) -> str:
    """``SET`` items for ``columns``; typed ones cast, because Ladybug types a parameter
    column that holds only nulls as STRING and then refuses it for a DOUBLE property."""
    kinds = dict(properties)
    return ", ".join(f"{var}.{c} = row.{c}" if kinds[c] == "STRING" else f"{var}.{c} = CAST(row.{c} AS {kinds[c]})"
                     for c in columns)


def _locked(path: Path, exc: RuntimeError) -> ConfigError | None:
    """The message for a graph whose write lock another process holds (``None``: another error)."""
    if "lock" not in str(exc).lower():
        return None
    pid = re.search(r"held by PID (\d+)", str(exc))
    holder = f"process {pid.group(1)}" if pid else "another process"
    return ConfigError(f"the graph at {path.resolve()} is open for writing in {holder}; wait for it to finish "
                       "(read-only commands such as kstp db stats, query, report and kst work meanwhile), or use "
                       "Neo4j for concurrent writers (KSTP_GRAPH=neo4j://...)")


def _unopened(path: Path, exc: RuntimeError) -> ConfigError:
    """The engine's reason for not opening the graph, on one line."""
    return ConfigError(f"cannot open the Ladybug graph at {path}: {' '.join(str(exc).split())}")


#: The engine's words for a write the file system refused for want of room (ENOSPC, EFBIG, EDQUOT).
_NO_ROOM = ("No space left on device", "File too large", "Disk quota exceeded")


class _Guarded:
    """A Ladybug connection whose writes that the file system refuses end in one line (:class:`ConfigError`).

    A write with no room on disk (or a checkpoint after a commit, which the engine reports as
    committed but which a full disk can lose) leaves the transaction whole or absent, never in
    part; a checkpoint cut short is finished by the next command that writes, and running the
    command again completes it (writes skip what is there).
    """

    def __init__(self, conn: ladybug.Connection, path: Path, failed: Callable[[], None] = lambda: None):
        self._conn, self._path, self._failed = conn, path, failed

    def execute(self, *args, **kwargs):
        try:
            return self._conn.execute(*args, **kwargs)
        except RuntimeError as exc:
            self._failed()  # the engine has ended an open transaction: a failed statement rolls it back
            text = " ".join(str(exc).split())
            reason = next((r for r in _NO_ROOM if r in text), None)
            if reason is None and "post-commit checkpoint failed" in text:
                reason = "the checkpoint after its commit failed: " + text.rpartition("restart: ")[2][:120]
            if reason is None:
                raise
            raise ConfigError(f"the graph {self._path.resolve()} could not be written ({reason}): this command's "
                              "write did not finish, what earlier commands wrote stays; free space on its disk if "
                              "it is full, then run the command again (it skips what is already written)") from None

    def __getattr__(self, name: str):
        return getattr(self._conn, name)


def _torn_log(exc: RuntimeError) -> bool:
    """Whether Ladybug refused to open a graph because its write-ahead log ends in an incomplete record."""
    text = " ".join(str(exc).split())
    return ("the WAL file is corrupted" in text or "corrupted WAL tail" in text
            or bool(re.search(r"Reading past the end of the file \S+\.wal ", text)))


def _set_aside(log_file: Path) -> Path:
    """Copy a damaged write-ahead log beside the graph, under a name not taken yet; the copy's path."""
    target, number = log_file.with_name(log_file.name + ".damaged"), 1
    while target.exists():
        number += 1
        target = log_file.with_name(f"{log_file.name}.damaged-{number}")
    shutil.copy2(log_file, target)
    return target


def _recovery_pending(exc: RuntimeError) -> bool:
    """Whether Ladybug refused a read-only open because a checkpoint's shadow pages wait to be replayed."""
    text = str(exc)
    return "recovery is pending" in text or "replay shadow pages" in text


def _past_the_end(exc: RuntimeError) -> bool:
    """Whether Ladybug refused a read-only open because pages the graph's header names lie past the end of its
    file ("Cannot read PIP page 538 from disk: out of bounds for file with 531 pages", "Cannot read checkpoint:
    metadata page range starts at 534 and spans 9 pages, outside the database file with 542 pages"): what a
    reader sees while a live writer's checkpoint writes the file, or a damaged file where nobody writes."""
    return bool(re.search(r"(out of bounds for file|outside the database file) with \d+ pages", str(exc)))


def _writer_pid(path: Path) -> int | None:
    """The process holding ``path``'s write lock (Ladybug's POSIX record lock), from ``/proc/locks``.

    Read from the kernel's table rather than probed with ``fcntl``: closing any descriptor
    of the file would drop a lock this very process holds. None when no process holds it
    (or off Linux).
    """
    try:
        stat = path.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    for line in table.splitlines():
        fields = line.split()  # 1: POSIX ADVISORY WRITE 31749 fe:00:7208996 0 EOF
        if len(fields) >= 6 and fields[1] == "POSIX" and fields[3] == "WRITE" and fields[5] == device:
            return int(fields[4])
    return None


class LadybugStore(GraphStore):
    """A LadybugDB graph in the file ``path`` (created when missing, unless ``read_only``).

    Raises
    ------
    ConfigError
        When ``path`` is a folder, cannot be created, or another process writes the graph.
    DataNotFoundError
        When ``read_only`` and there is no graph at ``path``.
    """

    engine = "ladybug"

    def __init__(self, path: str | Path, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        self._ad_hoc: set[ladybug.Connection] = set()  # read_statement's connections, for interrupt()
        self._open()

    @property
    def writing(self) -> bool:
        """Whether the graph is open for writing (the file's lock held); false until the first write."""
        return self._writing

    def _open(self) -> None:
        if self.path.is_dir():
            raise ConfigError(f"ladybug:{self.path} is a folder; a Ladybug graph is a file path, "
                              f"e.g. ladybug:{self.path / 'graph'}")
        if self.read_only and not self.path.exists():
            raise DataNotFoundError(f"no graph at {self.path.resolve()}: nothing was ingested there yet; ingest "
                                    "into it first, or point KSTP_GRAPH (or --graph) at the graph you mean")
        try:
            if not self.read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the folder of the Ladybug graph {self.path}: {exc.strerror}") from None
        self._connect(writing=not self.read_only and not self.path.exists())

    def _connect(self, writing: bool) -> None:
        try:
            self._db = _database(self.path, read_only=not writing)
        except RuntimeError as exc:
            if _torn_log(exc):
                self._db, writing = self._past_torn_log()
            elif writing or not (_recovery_pending(exc) or (_past_the_end(exc) and _writer_pid(self.path))):
                raise _locked(self.path, exc) or _unopened(self.path, exc) from None
            elif not self.read_only:  # a kill mid-checkpoint: opening for writing replays it
                self._connect(writing=True)
                return
            else:
                self._db = self._after_checkpoint()
        self._writing = writing
        self._conn = _Guarded(ladybug.Connection(self._db), self.path, self._statement_failed)
        self._conn.execute(f"CALL var_length_extend_max_depth={MAX_PATH_LENGTH}")

    def _past_torn_log(self) -> tuple[ladybug.Database, bool]:
        """The graph opened past an incomplete last record of its write-ahead log, and whether for writing.

        A reader, or any store while another process holds the graph (its writer may be
        appending that record right now), opens it read-only with the engine replaying the
        log up to its last whole transaction; a store that may write, with nobody else
        writing, recovers the graph: the damaged log is copied beside it (``<graph>.wal.damaged``)
        and the engine replays it up to the last whole transaction and drops the rest. Either
        way a kill while the log was written, or a log cut short, no longer makes the graph
        unopenable; what was and was not recovered is said in one line (logged as a warning,
        and kept in :attr:`recovered`).

        Raises
        ------
        ConfigError
            When the engine cannot open the graph even so, or another process takes the lock.
        """
        log_file = self.path.with_name(self.path.name + ".wal")
        holder = _writer_pid(self.path)
        try:
            if self.read_only or holder is not None:
                db = _database(self.path, read_only=True, throw_on_wal_replay_failure=False)
                if holder is None:
                    self.recovered = (f"the write-ahead log of the graph at {self.path.resolve()} ends in an "
                                      "incomplete record (a process stopped while writing it, or the file was cut): "
                                      "this read sees every transaction before it; a command that writes (e.g. kstp "
                                      "db init) recovers the graph and keeps the damaged log beside it")
                    log.warning(self.recovered)
                return db, False
            size = log_file.stat().st_size
            kept = _set_aside(log_file)
            db = _database(self.path, read_only=False, throw_on_wal_replay_failure=False)
        except RuntimeError as exc:
            raise _locked(self.path, exc) or _unopened(self.path, exc) from None
        replayed = log_file.stat().st_size if log_file.exists() else 0  # the engine cut the log after the last commit
        self.recovered = (f"recovered the graph at {self.path.resolve()}: its write-ahead log ended in an incomplete "
                          "record (a process stopped while writing it, or the file was cut); every transaction up to "
                          f"the last whole one is kept ({replayed:,} bytes of the log), the {size - replayed:,} bytes "
                          "after it are not (the transaction whose record is incomplete); the damaged log is kept as "
                          f"{kept.resolve()}")
        log.warning(self.recovered)
        return db, True

    #: What the store said when it opened past a damaged write-ahead log (None: the log was whole).
    recovered: str | None = None

    def _after_checkpoint(self) -> ladybug.Database:
        """The graph opened read-only once the checkpoint that blocks it ends (a checkpoint waiting to be
        replayed, or the file being written by it).

        Raises
        ------
        ConfigError
            When no process holds the graph (one was killed mid-checkpoint: a command that
            writes recovers it) or its writer's checkpoint lasts past :data:`CHECKPOINT_WAIT_S`.
        """
        deadline = time.monotonic() + CHECKPOINT_WAIT_S
        while True:
            pid = _writer_pid(self.path)
            if pid is None:
                raise ConfigError(f"the graph at {self.path.resolve()} was left mid-checkpoint by a process that "
                                  "stopped (a crash, a kill or a full disk); nothing committed is lost: any command "
                                  "that writes recovers it once its disk has room, e.g. kstp db init")
            if time.monotonic() > deadline:
                raise ConfigError(f"the graph at {self.path.resolve()} is being checkpointed by process {pid} "
                                  f"(over {CHECKPOINT_WAIT_S:.0f} s); try again when it finishes")
            time.sleep(0.05)
            try:
                try:
                    return _database(self.path, read_only=True)
                except RuntimeError as exc:
                    if not _torn_log(exc):
                        raise
                    # The writer went on and is appending its next transaction: read up to the last whole one.
                    return _database(self.path, read_only=True, throw_on_wal_replay_failure=False)
            except RuntimeError as exc:
                if not (_recovery_pending(exc) or _past_the_end(exc)):  # the latter: the writer is writing it now
                    raise _unopened(self.path, exc) from None

    def _for_writing(self) -> None:
        """Reopen the graph for writing before the first write of a writable store; begin an open
        :meth:`unit`'s transaction before its first write.

        Raises
        ------
        QueryError
            When the store was opened ``read_only``, or a statement of the open unit failed
            (the engine then ended the unit's transaction: nothing more may be written in it).
        ConfigError
            When another process holds the write lock.
        """
        if not self._writing:
            if self.read_only:
                raise QueryError(f"the Ladybug graph at {self.path} was opened read-only; this command cannot write")
            self.close()
            self._connect(writing=True)
        if self._transaction == _FAILED:
            raise QueryError(f"a statement failed inside a unit of writes to {self.path}; the engine rolled the "
                             "unit back, so nothing more is written in it")
        if self._transaction == _PENDING:
            self._conn.execute("BEGIN TRANSACTION")
            self._transaction = _OPEN

    #: Where the open unit's transaction stands: None (no unit), pending (no write yet: reads
    #: run as they come, and a unit that writes nothing leaves the graph's bytes alone), open, failed.
    _transaction: str | None = None

    def _statement_failed(self) -> None:
        if self._transaction == _OPEN:
            self._transaction = _FAILED

    def _begin_unit(self, label: str) -> None:
        self._transaction = _PENDING

    def _end_unit(self, commit: bool) -> None:
        state, self._transaction = self._transaction, None
        if state == _OPEN and commit:
            try:
                self._conn.execute("COMMIT")
            except RuntimeError as exc:
                raise QueryError(f"the commit of a unit of writes to {self.path} failed on Ladybug, nothing of it "
                                 f"was written: {' '.join(str(exc).split())[:300]}") from None
        elif state == _OPEN:
            try:
                self._conn.execute("ROLLBACK")
            except RuntimeError:
                pass  # the engine ended the transaction already
        elif state == _FAILED and commit:
            raise QueryError(f"a statement failed inside a unit of writes to {self.path}; the engine rolled the "
                             "unit back, so none of it was written")

    def reset(self) -> None:
        # Dropping the folder is instant; DETACH DELETE of millions of edges is not.
        self._for_writing()  # take the lock first: never delete a graph another process writes
        self.close()
        for part in (self.path, *(self.path.with_name(self.path.name + side) for side in _SIDE_FILES)):
            if part.is_dir():
                shutil.rmtree(part)
            else:
                part.unlink(missing_ok=True)
        self._open()
        self.ensure_schema()

    def ensure_schema(self) -> None:
        if self.read_only:
            return  # a read-only graph is read as it is
        tables = {row[0] for row in self._conn.execute("CALL show_tables() RETURN name").get_all()}
        model = {table.name for table in (*schema.node_labels().values(), *schema.rel_types().values())}
        if model <= tables and not self._alterations():
            return  # the graph has the whole model: nothing to write
        self._for_writing()
        for statement in self._ddl_statements():
            self._conn.execute(statement)
        for statement in self._alterations():
            self._conn.execute(statement)

    def _alterations(self) -> list[str]:
        """The ALTER statements that bring the existing tables up to the model (none: it is current).

        A graph written by an older kstp keeps its tables (CREATE ... IF NOT EXISTS adds
        nothing to them), so properties and endpoint pairs added to the model since are
        added here; new properties sit at the end of the DDL line, as COPY expects.
        """
        tables = {row[0] for row in self._conn.execute("CALL show_tables() RETURN name").get_all()}
        out = []
        for table in (*schema.node_labels().values(), *schema.rel_types().values()):
            if table.name not in tables:
                continue  # created whole by the DDL
            have = {row[0] for row in self._conn.execute(f"CALL table_info('{table.name}') RETURN name").get_all()}
            out += [f"ALTER TABLE {table.name} ADD {prop} {kind}"
                    for prop, kind in table.properties if prop not in have]
        for rel in schema.rel_types().values():
            if rel.name not in tables:
                continue
            joined = self._conn.execute(f"CALL show_connection('{rel.name}') RETURN *").get_all()
            have = {(row[0], row[1]) for row in joined}
            out += [f"ALTER TABLE {rel.name} ADD FROM {a} TO {b}" for a, b in rel.endpoints if (a, b) not in have]
        return out

    def close(self) -> None:
        self.interrupt()
        self._conn.close()
        self._db.close()

    def stamp(self) -> object:
        # The file and its write-ahead log: a commit changes one of them.
        stamp = []
        for part in (self.path, self.path.with_name(self.path.name + ".wal")):
            try:
                status = part.stat()
            except FileNotFoundError:  # no log: everything is checkpointed into the file
                continue
            stamp.append((part.name, status.st_mtime_ns, status.st_size))
        return tuple(stamp)

    def reopen(self) -> None:
        self.close()
        self._open()

    def _read_statement(self, text, params, timeout_s):
        # A connection of its own: a long statement holds neither the store's connection nor its
        # callers' lock, and interrupt() reaches it from another thread.
        conn = ladybug.Connection(self._db)
        conn.set_max_threads_for_exec(1)  # the engine's other worker threads stay free for the pages' reads
        self._ad_hoc.add(conn)
        try:
            conn.execute(f"CALL var_length_extend_max_depth={MAX_PATH_LENGTH}")
            if timeout_s:
                conn.set_query_timeout(max(1, round(timeout_s * 1000)))
            return self._execute_on(conn, text, params, "ad hoc")
        except QueryError as exc:
            if str(exc).endswith(": Interrupted."):  # the engine's word for its time limit and for interrupt()
                raise stopped(timeout_s) from None
            raise
        finally:
            self._ad_hoc.discard(conn)
            conn.close()

    def interrupt(self) -> None:
        for conn in list(self._ad_hoc):
            conn.interrupt()

    def _execute(self, text: str, params: dict, name: str = "") -> pd.DataFrame:
        return self._execute_on(self._conn, text, params, name)

    def _execute_on(self, conn, text: str, params: dict, name: str) -> pd.DataFrame:
        try:
            result = conn.execute(text, params)
        except RuntimeError as exc:
            first = " ".join(str(exc).split())[:300]
            raise QueryError(f"query {name or 'statement'} failed on Ladybug ({self.path}): {first}") from None
        if not result.get_column_names():  # a pure write returns no columns
            return pd.DataFrame()
        return _plain(result.get_as_arrow()).to_pandas()

    def _execute_categorical(self, text, params, name=""):
        result = self._conn.execute(text, params)
        if not result.get_column_names():
            return pd.DataFrame()
        table = _plain(result.get_as_arrow())
        return pa.table({name: pc.dictionary_encode(column) if pa.types.is_string(column.type) else column
                         for name, column in zip(table.column_names, table.columns, strict=True)}).to_pandas()

    def _read_strings_categorical(self, text, name, params=None):
        return self._execute_categorical(text, params or {}, name)

    def _existing_rels(self, rel, from_label, to_label, from_ids, columns):
        """The stored ``rel`` relationships from ``from_ids``, read by ranges of ids.

        ``WHERE a.id IN $ids`` compares every node with every id (Ladybug 0.22: 52 s for the
        answers of 50 k learners among 250 k, a re-run growing with the square of its size),
        and an id lookup followed by the expansion scans the relationships (1 s for 10 ids).
        A range ``a.id >= $lo AND a.id <= $hi`` reads 1 M answers in 0.3 s: the ids of the
        write are ordered among the stored ones, runs of them read by range (the few other
        nodes inside a run are read too, then dropped), and ids standing alone by ``IN``
        lists of :data:`IN_BATCH`. Ids not stored have no relationship and are not read.
        """
        schema.rel_type(rel, from_label, to_label)
        names = ["from_id", "to_id", *columns]
        read = (f"MATCH (a:{from_label})-[r:{rel}]->(b:{to_label}) WHERE {{}} RETURN a.id AS from_id, b.id AS to_id"
                + "".join(f", r.{c} AS {c}" for c in columns))
        stored = self._table(f"MATCH (a:{from_label}) RETURN a.id AS id", {}, f"ids {from_label}")["id"]
        stored = stored.take(pc.sort_indices(stored)).to_numpy(zero_copy_only=False)
        ours = np.unique(np.asarray(list(from_ids), dtype=object))
        at = np.searchsorted(stored, ours) if len(stored) else np.zeros(len(ours), np.int64)
        found = at < len(stored)
        found[found] = stored[at[found]] == ours[found]
        ours, at = ours[found], at[found]
        runs = np.split(np.arange(len(ours)), np.flatnonzero(np.diff(at) > RANGE_GAP) + 1) if len(ours) else []
        parts, alone = [], []
        for run in runs:
            if len(run) >= RANGE_MIN:
                parts.append(self._table(read.format("a.id >= $lo AND a.id <= $hi"),
                                         {"lo": ours[run[0]], "hi": ours[run[-1]]}, f"existing {rel}"))
            else:
                alone += ours[run].tolist()
        for start in range(0, len(alone), IN_BATCH):
            parts.append(self._table(read.format("a.id IN $ids"), {"ids": alone[start:start + IN_BATCH]},
                                     f"existing {rel}"))
        if not parts:
            return pd.DataFrame(columns=names)
        table = pa.concat_tables(parts, promote_options="permissive")
        table = table.filter(pc.is_in(table["from_id"], value_set=pa.array(ours.tolist(), pa.string())))
        return pa.table({name: pc.dictionary_encode(column) if pa.types.is_string(column.type) else column
                         for name, column in zip(table.column_names, table.columns, strict=True)}).to_pandas()

    def _table(self, text: str, params: dict, name: str) -> pa.Table:
        """The rows of a read as an Arrow table; an engine error as a one-line :class:`QueryError`."""
        try:
            return _plain(self._conn.execute(text, params).get_as_arrow())
        except RuntimeError as exc:
            first = " ".join(str(exc).split())[:300]
            raise QueryError(f"query {name} failed on Ladybug ({self.path}): {first}") from None

    def _execute_rows(self, text, rows, name=""):
        self._for_writing()  # every caller writes (UNWIND ... SET / DELETE)
        result = self._execute(text, {"rows": records(rows)}, name)
        return int(result["n"].sum()) if "n" in result else len(rows)

    def _read_by_ids(self, text, ids, columns, name=""):
        return self._execute(text, {"ids": ids}, name)

    def _create_nodes(self, label, rows):
        self._for_writing()
        properties = schema.node_label(label).properties
        if len(rows) < COPY_MIN_ROWS:
            # Every COPY into a node table takes memory that the process keeps (16-24 MB a
            # call, whatever its size; a capped buffer pool fills up with it): a model run
            # writing each chunk of replies grew to gigabytes. CREATE adds to the last node group.
            others = [c for c in rows.columns if c != "id"]
            sets = f" SET {_sets('n', others, properties)}" if others else ""
            self._execute(f"UNWIND $rows AS row CREATE (n:{label} {{id: row.id}}){sets}", {"rows": records(rows)},
                          f"create {label}")
            return
        arrow_rows = _arrow(rows, properties)  # noqa: F841 (read by COPY)
        self._conn.execute(f"COPY {label} FROM arrow_rows")

    def _update_nodes(self, label, rows):
        # LOAD FROM scans the Arrow table in place: 3.6x faster than UNWIND over 18 k rows, whose
        # parameter conversion runs in Python. Columns renamed c0, c1, ... so none meets a keyword.
        self._for_writing()
        kinds = dict(schema.node_label(label).properties)
        arrow_rows = pa.table({f"c{i}": _column(rows[c], _ARROW[kinds[c]])  # noqa: F841 (read by LOAD FROM)
                               for i, c in enumerate(rows.columns)})
        key = list(rows.columns).index("id")
        sets = ", ".join(f"n.{c} = c{i}" for i, c in enumerate(rows.columns) if c != "id")
        self._execute(f"LOAD FROM arrow_rows MATCH (n:{label} {{id: c{key}}}) SET {sets}", {}, f"update {label}")

    def _create_rels(self, rel, from_label, to_label, rows, degrees=None):
        self._for_writing()  # the single writer: no concurrent one to check ``degrees`` against
        spec = schema.rel_type(rel, from_label, to_label)
        arrow_rows = _arrow(rows, [("from_id", "STRING"), ("to_id", "STRING"), *spec.properties])  # noqa: F841
        try:
            self._conn.execute(f"COPY {rel} FROM arrow_rows (from='{from_label}', to='{to_label}')")
        except RuntimeError as exc:
            if "Unable to find primary key" in str(exc):
                raise UnknownIdError(f"{rel}: endpoint missing from the graph ({exc})") from None
            raise

    def _update_rels(self, rel, from_label, to_label, rows):
        sets = _sets("r", [c for c in rows.columns if c not in ("from_id", "to_id")],
                     schema.rel_type(rel, from_label, to_label).properties)
        self._execute_rows(
            f"UNWIND $rows AS row MATCH (a:{from_label} {{id: row.from_id}})-[r:{rel}]->"
            f"(b:{to_label} {{id: row.to_id}}) SET {sets}", rows)
