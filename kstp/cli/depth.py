"""``kstp kst depth``: concept depth and topological order of a framework's prerequisites."""

from __future__ import annotations

import click

from kstp.cli.output import emit, get_store, json_option, print_table

__all__ = ["depth"]


@click.command()
@click.option("--framework", required=True, help="Framework whose concept prerequisites are ordered.")
@click.option("--write", is_flag=True, help="Also store each concept's depth as Concept.depth.")
@json_option
@click.pass_context
def depth(ctx: click.Context, framework: str, write: bool, as_json: bool) -> None:
    """Depth of every concept: edges of the longest prerequisite chain ending at it.

    Rows come in a topological order (by depth, then id). On Neo4j GDS computes it
    (gds.dag.topologicalSort); on LadybugDB networkx does, with the same result. A
    cycle among the prerequisites is an error (exit 1).

    \b
    Example:
      kstp kst depth --framework ccss --write
    """
    from kstp.graph import gds

    store = get_store(ctx)
    rows = (gds.write_concept_depth if write else gds.concept_depth)(store, framework)
    if as_json:
        emit(rows.to_dict("records"))
    else:
        print_table(rows, f"Concept depth in {framework} (longest prerequisite chain)")
