"""``kstp explore``: a local web explorer of the graph, or its pages as a static site."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import emit, get_store, json_option, message, on_interrupt
from kstp.explore.readonly import AD_HOC_TIMEOUT_S
from kstp.settings import graph_target

__all__ = ["explore"]


@click.command()
@click.option("--graph", "graph", metavar="LOCATION",
              help="ladybug:PATH or a Neo4j URI (default: kstp's --graph, $KSTP_GRAPH, else ladybug:.kstp/graph).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but a loopback address lets others read the graph.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: a free one).")
@click.option("--open", "open_browser", is_flag=True, help="Open the overview in the default browser.")
@click.option("--export", "export", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write every page to DIR as a static site (relative links, opens from disk) instead of serving.")
@click.option("--query-timeout", type=click.FloatRange(0.1, 86400), default=AD_HOC_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="Seconds an ad-hoc Cypher statement may run before the engine stops it.")
@json_option  # --format json|csv: the summary of --export (serving prints no result)
@click.pass_context
def explore(ctx: click.Context, graph: str | None, host: str, port: int, open_browser: bool, export: Path | None,
            query_timeout: float, as_json: bool) -> None:
    """Explore the graph in a web browser: curricula, datasets, learners, runs and samples, queries.

    Serves read-only pages on 127.0.0.1 (the embedded graph opened read-only, Neo4j in read
    transactions) until Ctrl-C. An ad-hoc statement runs beside the pages, never holding
    them up, and is stopped after --query-timeout seconds. With --export DIR it writes the same pages as files instead,
    and --format/--json print what it wrote.

    \b
    Examples:
      kstp explore --open
      kstp explore --port 9000
      kstp --graph neo4j://localhost:7687 explore
      kstp explore --export site/
    """
    from kstp.explore.pages import Explorer

    root = ctx.find_root()
    root.ensure_object(dict)
    if graph is not None:
        graph_target(graph)  # refuse a malformed location before anything opens
        root.obj["graph"] = graph
    where = graph_target(root.obj.get("graph")).describe()
    if as_json and export is None:
        message("--format and --json shape the summary of --export; serving the pages prints none")
    if export is not None:
        from kstp.cli.output import progress_bar
        from kstp.explore.export import export_site

        explorer = Explorer(get_store(ctx), where)
        with progress_bar("exporting pages") as update:
            result = export_site(explorer, export, lambda done, name: update(done, 0))
        if as_json:
            emit(result)
        else:
            message(f"wrote {result['pages']:,} pages to {result['folder']}; open {result['index']} in a browser")
        for name, why in result["skipped"]:
            message(f"skipped {name}: {why}")
        return
    from kstp.explore.server import bind, is_loopback, serve

    sock = bind(host, port)  # before the graph opens: a port in use costs nothing
    if not is_loopback(host):
        message(f"warning: listening on {host}: anyone who can reach port {sock.getsockname()[1]} can read the "
                "whole graph (it is read-only, but not private); use --host 127.0.0.1 to keep it to this machine")
    on_interrupt("kstp explore stopped; it wrote nothing (it only reads the graph).")
    explorer = Explorer(get_store(ctx), where, query_timeout)
    serve(explorer, sock, open_browser, lambda line: click.echo(line, err=True))
    message("kstp explore stopped")
