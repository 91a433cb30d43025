"""``kstp db``: create, inspect and empty the graph."""

from __future__ import annotations

import time
from pathlib import Path

import click

from kstp.cli.output import emit, format_option, get_store, json_option, message, print_table, status
from kstp.settings import graph_target

__all__ = ["db", "report_deletion"]


@click.group()
def db() -> None:
    """Create, inspect and empty the graph."""


@db.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the graph and its schema (safe to repeat).

    \b
    Example:
      KSTP_GRAPH=ladybug:/data/kstp kstp db init
    """
    get_store(ctx)
    message(f"graph ready: {graph_target(ctx.find_root().obj.get('graph')).describe()}")


@db.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Print counts per label and relationship type, and curriculum and dataset figures.

    \b
    Example:
      kstp db stats --json
    """
    import pandas as pd

    from kstp.graph.manage import graph_stats

    result = {"graph": graph_target(ctx.find_root().obj.get("graph")).describe(), **graph_stats(get_store(ctx))}
    if as_json:
        emit(result)
        return
    click.echo(f"Graph: {result['graph']}")
    print_table(pd.DataFrame(list(result["nodes"].items()), columns=["label", "nodes"]), "Nodes")
    print_table(pd.DataFrame(list(result["relationships"].items()), columns=["type", "relationships"]),
                "Relationships")
    if result["frameworks"]:
        print_table(pd.DataFrame(result["frameworks"]), "Curricula", digits=2)
    if result["datasets"]:
        print_table(pd.DataFrame(result["datasets"]).drop(columns=["name"]), "Datasets", digits=2)


@db.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def reset(ctx: click.Context, yes: bool) -> None:
    """Delete everything in the graph (asks first).

    \b
    Example:
      kstp db reset --yes
    """
    if not yes:
        click.confirm("Delete every node and relationship in the graph?", abort=True, err=True)
    get_store(ctx).reset()
    message("graph emptied")


@db.command("delete-dataset")
@click.argument("dataset")
@click.option("--dry-run", is_flag=True, help="Print what would be deleted, and delete nothing.")
@json_option
@click.pass_context
def delete_dataset(ctx: click.Context, dataset: str, dry_run: bool, as_json: bool) -> None:
    """Delete one dataset: its questions, answers, derived prerequisites, catalogues, runs and own learners.

    Frameworks, concepts and every other dataset stay as they are; a learner (a model)
    that also answered another dataset stays too.

    \b
    Examples:
      kstp db delete-dataset probability_pks --dry-run
      kstp db delete-dataset probability_pks
    """
    from kstp.graph.manage import dataset_footprint
    from kstp.graph.manage import delete_dataset as delete

    store = get_store(ctx)
    counts = (dataset_footprint(store, dataset) if dry_run else delete(store, dataset)).counts()
    report_deletion("dataset", dataset, counts, dry_run, as_json)


def report_deletion(kind: str, name: str, counts: dict[str, int], dry_run: bool, as_json: bool) -> None:
    """What a delete removed (or with ``--dry-run`` would remove): JSON, or one line of counts per kind."""
    if as_json:
        emit({kind if kind != "run" else "runId": name, "dryRun": dry_run, "deleted": counts})
        return
    verb = "would delete" if dry_run else "deleted"
    parts = {part: n for part, n in counts.items() if not (kind == "run" and part == "Run")}  # the run is named
    message(f"{verb} {kind} {name}: " + ", ".join(f"{n} {part}" for part, n in parts.items()))


@db.command("export")
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--dataset", help="Export only this dataset, with its frameworks' concepts and edges.")
@click.option("--format", "format_", type=click.Choice(["neo4j-import"]), default="neo4j-import", show_default=True,
              help="The file format: neo4j-admin's import CSV, the one format of kstp db import, kstp db load and "
                   "neo4j-admin database import full.")
@format_option("--output-format")  # --format is the files' format here
@click.pass_context
def export(ctx: click.Context, folder: str, dataset: str | None, format_: str, as_json: bool) -> None:
    """Write the graph (or one dataset) to DIR as CSV files with a manifest of counts and SHA-256s.

    The files are neo4j-admin's import format: `kstp db import DIR` loads them on either
    engine, `kstp db load DIR` bulk-loads them into the empty database of the local Neo4j
    server (make neo4j), and the printed `neo4j-admin database import full` command into
    any other Neo4j database (then the printed dump and upload steps move it to Aura).

    \b
    Examples:
      kstp db export backup/
      kstp db export frcsub-only/ --dataset frcsub
      kstp db export xes-import/ --format neo4j-import
      kstp --graph neo4j://localhost:7687 db import backup/
    """
    from kstp.graph.transfer import aura_upload_command, export_graph, neo4j_admin_command

    manifest = export_graph(get_store(ctx), folder, dataset)
    if as_json:
        emit({**manifest, "neo4jAdmin": neo4j_admin_command(folder), "auraUpload": aura_upload_command()})
        return
    nodes = sum(f["rows"] for f in manifest["files"] if "label" in f)
    rels = sum(f["rows"] for f in manifest["files"] if "type" in f)
    message(f"exported {nodes} nodes and {rels} relationships in {len(manifest['files'])} files to {folder}; "
            "kstp db import loads them on either engine, kstp db load into the empty database of the Neo4j server "
            "kstp manages, and this command into a new database of any other Neo4j server (run it where the "
            "server's files are, the server stopped; then kstp db init):")
    click.echo(neo4j_admin_command(folder), err=True)  # not wrapped, so it can be pasted
    message("To move that database to Aura afterwards (the server stopped), dump it and upload the dump:")
    click.echo(aura_upload_command(), err=True)


@db.command("load")
@click.argument("source", metavar="SOURCE")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The folder of the Neo4j server kstp manages (default .kstp/neo4j, where make neo4j puts it).")
@json_option
@click.pass_context
def load(ctx: click.Context, source: str, home: Path | None, as_json: bool) -> None:
    """Bulk-load SOURCE into the empty database of the local Neo4j server, with neo4j-admin.

    SOURCE is an export folder (kstp db export) or an embedded graph (ladybug:PATH, which
    the ingest commands build: it is exported to a folder beside the server while the server
    stops). The Neo4j graph (--graph) must be the server kstp manages (make neo4j) and hold
    nothing: kstp stops it, runs neo4j-admin database import full on its jars, starts it
    again, creates the schema and checks every count against the export's manifest. Into a
    graph that holds data, or another server, use kstp db import (online) or the command kstp
    db export prints.

    \b
    Examples:
      kstp --graph ladybug:stage ingest responses xes3g5m.csv --dataset xes3g5m
      kstp --graph "$KSTP_GRAPH" db load ladybug:stage
      kstp --graph "$KSTP_GRAPH" db load xes-import/
    """
    import shutil
    import tempfile
    from contextlib import ExitStack
    from functools import partial

    from kstp.errors import ConfigError
    from kstp.graph.bulk import bulk_load
    from kstp.graph.factory import open_store
    from kstp.graph.local_server import DEFAULT_HOME, LocalServer
    from kstp.graph.transfer import export_graph

    target = graph_target(ctx.find_root().obj.get("graph"))
    if target.engine != "neo4j":
        raise ConfigError(f"kstp db load fills a Neo4j database; the graph is {target.describe()} (use --graph "
                          "neo4j://... for the server kstp manages, or kstp db import DIR for an embedded graph)")
    server = LocalServer.at(home or DEFAULT_HOME)
    folder = Path(source)
    began = time.monotonic()
    with ExitStack() as stack:
        what, export = f"loading {folder} into {target.location} (server stopped and started again)", None
        if not (folder / "manifest.json").is_file() and source.startswith("ladybug:"):
            # Opened before the server stops, so a graph that cannot be read stops nothing.
            export = partial(export_graph, stack.enter_context(open_store(source, read_only=True)))
            staged = Path(tempfile.mkdtemp(prefix="kstp-load-", dir=server.home))
            stack.callback(shutil.rmtree, staged, ignore_errors=True)
            folder = staged / "export"
            what = f"exporting {source} while the server stops, then loading it into {target.location}"
        with status(what):
            report = bulk_load(server, target.location, target.user, target.password, folder, export=export)
    if as_json:
        emit({"nodes": report.nodes, "relationships": report.relationships, "seconds": report.seconds,
              "relationshipsPerSecond": report.relationships_per_s, "importPeakRss": report.import_peak_rss})
        return
    message(f"loaded {report.nodes:,} nodes and {report.relationships:,} relationships into {target.location}: "
            f"import {report.seconds['import']:.1f} s ({report.relationships_per_s:,.0f} relationships/s), "
            + ", ".join(f"{step} {s:.1f} s" for step, s in report.seconds.items() if step not in ("import", "total"))
            + f"{' (export and stop at once)' if export else ''}; {time.monotonic() - began:.1f} s in all")


@db.command("import")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@json_option
@click.pass_context
def import_(ctx: click.Context, folder: str, as_json: bool) -> None:
    """Load an export folder into the graph, online, on any engine (empty or not); db load is the bulk path.

    After checking the folder's manifest. kstp db load fills the empty database of the
    local Neo4j server with neo4j-admin instead: faster, but it stops the server.

    Refuses, writing nothing (and creating no graph), a manifest of another schema version,
    a file whose SHA-256 differs from the manifest's, or a relationship to a node neither
    in the files nor in the graph. Nodes already in the graph take the files' values.

    \b
    Example:
      kstp --graph ladybug:/data/copy db import backup/
    """
    from kstp.graph.factory import graph_exists
    from kstp.graph.store import WriteReport
    from kstp.graph.transfer import import_graph, read_export

    export = read_export(folder)  # checked whole before the graph is opened: opening creates an embedded one
    if not graph_exists(ctx.find_root().obj.get("graph")):
        export.check_ends(None)  # a graph not there yet holds no node the files could point at
    written = import_graph(get_store(ctx), export)
    if as_json:
        emit({path: vars(report) for path, report in written.items()})
        return
    total = sum(written.values(), WriteReport())
    message(f"imported {folder}: {total.created} created, {total.updated} updated, {total.unchanged} unchanged")
