"""``kstp kst depth``: concept depth and topological order of a framework's prerequisites."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import emit, get_store, graph_format_option, message, out_option, output_format, print_table

__all__ = ["depth"]


@click.command()
@click.option("--framework", required=True, help="Framework whose concept prerequisites are ordered.")
@click.option("--write", is_flag=True, help="Also store each concept's depth as Concept.depth.")
@out_option("the framework's prerequisite graph (its covering pairs, concepts by depth) as "
            "prerequisites_<framework>.svg, .png and .dot; above 200 concepts the figure counts them per depth")
@graph_format_option
@click.pass_context
def depth(ctx: click.Context, framework: str, write: bool, out: Path | None, as_json: bool) -> None:
    """Depth of every concept: edges of the longest prerequisite chain ending at it.

    Rows come in a topological order (by depth, then id). On Neo4j GDS computes it
    (gds.dag.topologicalSort); on LadybugDB networkx does, with the same result. A
    cycle among the prerequisites is an error (exit 1). --out draws the framework's
    prerequisite graph by depth; --format dot prints it for Graphviz.

    \b
    Examples:
      kstp kst depth --framework ccss --write
      kstp kst depth --framework ccss --out figures/
    """
    from kstp.graph import gds

    store = get_store(ctx)
    if output_format() == "dot" or out is not None:
        from kstp.evaluators.structures import graph_files, prerequisite_graph
        from kstp.reports.diagrams import graph_dot

        nodes, edges = prerequisite_graph(store, framework=framework)
        if output_format() == "dot":
            click.echo(graph_dot(nodes, edges, f"prerequisites_{framework}"), nl=False)
            return
        paths, note = graph_files(nodes, edges, out, framework, f"{framework}: concept prerequisites, "
                                  f"{len(nodes)} concepts, {len(edges)} covering pairs")
        for line in ([f"note: {note}"] if note else []) + [f"wrote {p}" for p in paths]:
            message(line)
    rows = (gds.write_concept_depth if write else gds.concept_depth)(store, framework)
    if as_json:
        emit(rows.to_dict("records"))
    else:
        print_table(rows, f"Concept depth in {framework} (longest prerequisite chain)")
