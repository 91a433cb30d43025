"""Bulk import into an empty Neo4j database with ``neo4j-admin database import full``.

The input is an export folder of :mod:`kstp.graph.transfer` (``kstp db export``): one
CSV file per label and per relationship type and pair, in neo4j-admin's import format,
with a manifest of counts and SHA-256s. The same bytes feed either path:

- a server kstp manages (``make neo4j``; :class:`~kstp.graph.local_server.LocalServer`):
  :func:`bulk_load` checks the manifest and that the database is empty, stops the server
  (writing the export meanwhile, when given one to write), runs the import with the
  server's own jars, starts it again, creates the schema and checks every count against
  the manifest (``kstp db load``);
- any other server (Docker, a cluster, Aura): :func:`~kstp.graph.transfer.neo4j_admin_command`
  prints the ``neo4j-admin database import full`` command to run where the server's files
  are, and :func:`~kstp.graph.transfer.aura_upload_command` the dump and
  ``neo4j-admin database upload`` that move the result to Aura.

Assumes the export holds the whole graph to load: the import replaces the database.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kstp.errors import ConfigError, GraphUnavailableError, InputError
from kstp.graph.local_server import LocalServer
from kstp.graph.neo4j import Neo4jStore
from kstp.graph.transfer import neo4j_admin_args, read_manifest

__all__ = ["BulkReport", "bulk_load", "IMPORT_MEMORY"]

#: Off-heap memory the import may take (neo4j-admin's default is 90 % of free memory, too
#: much on a shared machine; 5.4 M relationships need well under this).
IMPORT_MEMORY = "2G"


@dataclass
class BulkReport:
    """What :func:`bulk_load` did: counts, the seconds of each step and the import's own figures."""

    nodes: int = 0
    relationships: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    import_peak_rss: int | None = None  # bytes, the neo4j-admin process
    import_output: str = ""

    @property
    def relationships_per_s(self) -> float:
        """Relationships imported per second of the import step alone."""
        return self.relationships / self.seconds["import"] if self.seconds.get("import") else 0.0


def bulk_load(server: LocalServer, uri: str, user: str, password: str, folder: str | Path,
              database: str = "neo4j", export: Callable[[Path], object] | None = None) -> BulkReport:
    """Replace the empty ``database`` of the local ``server`` with an export folder, by neo4j-admin.

    Parameters
    ----------
    server : LocalServer
        The server kstp manages; ``uri`` must reach it.
    folder : str or Path
        An export folder (``kstp db export``), checked whole (:func:`read_manifest`) before
        the server stops; with ``export``, the folder it writes, checked once written.
    export : callable, optional
        ``export(folder)`` writes the export folder while the server stops (the two take
        about as long and overlap on two cores; ``kstp db load ladybug:PATH`` passes the
        embedded graph's export). It runs after the database was found empty.

    Returns
    -------
    BulkReport
        Nodes and relationships loaded, seconds per step (``check``, ``export`` with
        ``export``, ``stop``, ``import``, ``start``, ``schema``; ``export`` and ``stop`` at
        once), the import's peak RSS.

    Raises
    ------
    ConfigError
        When ``uri`` is not the local server's, the database holds anything, or the
        import fails (the server is started again first; the output's tail is in the message).
    DataNotFoundError, InputError
        From :func:`read_manifest`; nothing is stopped then, or, for what ``export``
        wrote, the server is started again first.
    Exception
        Whatever ``export`` raises, after the server is started again.
    """
    report = BulkReport()
    began = time.monotonic()
    if not server.serves(uri):
        raise ConfigError(f"{uri} is not the Neo4j server kstp manages in {server.home} (Bolt on "
                          f"{':'.join(map(str, server.bolt))}); for another server run the command that "
                          "kstp db export prints where its files are")
    manifest = read_manifest(folder) if export is None else None
    with Neo4jStore(uri, user, password, database) as store:
        held = int(store._run("MATCH (n) RETURN count(n) AS n", {}, "count nodes")["n"].iloc[0])
    if held:
        raise ConfigError(f"the Neo4j database at {uri} holds {held:,} nodes; kstp db load replaces a database "
                          "whole, so it fills only an empty one: empty it first (kstp db reset --yes), or add to it "
                          "online (kstp db import DIR)")
    report.seconds["check"] = time.monotonic() - began

    def ready() -> bool:
        return _answers(uri, user, password, database)

    def stop() -> float:
        step = time.monotonic()
        server.stop()
        return time.monotonic() - step

    with ThreadPoolExecutor(1, thread_name_prefix="kstp-stop") as pool:
        stopping = pool.submit(stop)  # the server checkpoints and exits on its own; kstp only waits
        if manifest is None:
            step = time.monotonic()
            try:
                export(Path(folder))
                manifest = read_manifest(folder)
            except BaseException:
                stopping.result()
                server.start(ready)
                raise
            report.seconds["export"] = time.monotonic() - step
        report.seconds["stop"] = stopping.result()
    step = time.monotonic()
    done = server.admin([*neo4j_admin_args(folder, database), f"--max-off-heap-memory={IMPORT_MEMORY}",
                         f"--report-file={server.home / 'logs' / 'import.report'}"])
    report.seconds["import"] = time.monotonic() - step
    report.import_peak_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    report.import_output = done.stdout + done.stderr
    step = time.monotonic()
    server.start(ready)
    report.seconds["start"] = time.monotonic() - step
    if done.returncode:
        raise ConfigError(f"neo4j-admin database import failed (exit {done.returncode}); the server is running "
                          f"again with an empty database. Its output ends with:\n{report.import_output[-2000:]}")
    step = time.monotonic()
    with Neo4jStore(uri, user, password, database) as store:
        store.ensure_schema()
        nodes = {r["label"]: r["count"] for r in store.run("node_counts")}
        rels = {r["type"]: r["count"] for r in store.run("relationship_counts")}
    report.seconds["schema"] = time.monotonic() - step
    want_nodes, want_rels = {}, {}
    for entry in manifest["files"]:
        if "label" in entry:
            want_nodes[entry["label"]] = want_nodes.get(entry["label"], 0) + entry["rows"]
        else:
            want_rels[entry["type"]] = want_rels.get(entry["type"], 0) + entry["rows"]
    if (nodes, rels) != (want_nodes, want_rels):
        raise InputError(f"the imported database holds {nodes} nodes and {rels} relationships where the manifest "
                         f"lists {want_nodes} and {want_rels}; see {server.home / 'logs' / 'import.report'}")
    report.nodes, report.relationships = sum(nodes.values()), sum(rels.values())
    report.seconds["total"] = time.monotonic() - began
    return report


def _answers(uri: str, user: str, password: str, database: str) -> bool:
    try:
        Neo4jStore(uri, user, password, database).close()
    except (ConfigError, GraphUnavailableError):
        return False
    return True
