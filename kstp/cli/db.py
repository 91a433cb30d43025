"""``kstp db``: create, inspect and empty the graph."""

from __future__ import annotations

import click

from kstp.cli.output import emit, get_store, json_option, message, print_table
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
@json_option
@click.pass_context
def export(ctx: click.Context, folder: str, dataset: str | None, as_json: bool) -> None:
    """Write the graph (or one dataset) to DIR as CSV files with a manifest of counts and SHA-256s.

    The files are neo4j-admin's import format: `kstp db import DIR` loads them on either
    engine, and the printed `neo4j-admin database import full` command into a new Neo4j database.

    \b
    Examples:
      kstp db export backup/
      kstp db export frcsub-only/ --dataset frcsub
      kstp --graph neo4j://localhost:7687 db import backup/
    """
    from kstp.graph.transfer import export_graph, neo4j_admin_command

    manifest = export_graph(get_store(ctx), folder, dataset)
    if as_json:
        emit(manifest)
        return
    nodes = sum(f["rows"] for f in manifest["files"] if "label" in f)
    rels = sum(f["rows"] for f in manifest["files"] if "type" in f)
    message(f"exported {nodes} nodes and {rels} relationships in {len(manifest['files'])} files to {folder}; "
            "kstp db import loads them on either engine, or this command into a new Neo4j database (server "
            "stopped; then kstp db init):")
    click.echo(neo4j_admin_command(folder), err=True)  # not wrapped, so it can be pasted


@db.command("import")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@json_option
@click.pass_context
def import_(ctx: click.Context, folder: str, as_json: bool) -> None:
    """Load an export folder into the graph (empty or not), after checking its manifest.

    Refuses, writing nothing, a manifest of another schema version or a file whose
    SHA-256 differs from the manifest's. Nodes already in the graph take the files' values.

    \b
    Example:
      kstp --graph ladybug:/data/copy db import backup/
    """
    from kstp.graph.store import WriteReport
    from kstp.graph.transfer import import_graph

    written = import_graph(get_store(ctx), folder)
    if as_json:
        emit({path: vars(report) for path, report in written.items()})
        return
    total = sum(written.values(), WriteReport())
    message(f"imported {folder}: {total.created} created, {total.updated} updated, {total.unchanged} unchanged")
