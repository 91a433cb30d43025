"""``kstp campaign``: run, follow and report a plan of many models, datasets and evaluators (issue 45)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from kstp.cli.output import emit, get_store, json_option, message, on_interrupt, print_table, to_csv

__all__ = ["campaign"]

_FILE = click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))


@click.group()
def campaign() -> None:
    """Run many models on many datasets and evaluators from one file; follow it; report across models."""


def _untagged(table):
    """The table without its tag column where no cell has a tag (tags name answers replicates only)."""
    return table.drop(columns="tag") if table["tag"].isna().all() else table


def _graph(ctx: click.Context) -> str | None:
    return (ctx.find_root().obj or {}).get("graph")


@campaign.command("run")
@_FILE
@click.option("--dry-run", is_flag=True, help="Print each cell's kstp command and run nothing.")
@json_option
@click.pass_context
def run(ctx: click.Context, file: Path, dry_run: bool, as_json: bool) -> None:
    """Run every cell of a campaign file, each a normal run of its kstp command; run again to resume.

    A cell is one evaluator x model x dataset x seed (x tag): the command a user would
    type (--dry-run prints them), run in a process of its own, with the run identity, logs
    and resume of that command. A cell whose run finished with the same command is skipped
    (no process, no model load); any change to its command runs it. A cell that fails (a model that cannot be served) is
    reported and the others go on; exit 1 if any did not finish. Ctrl-C or SIGTERM lets the
    running cell store what arrived; the same command then asks only what is left.

    \b
    Examples:
      kstp campaign run examples/campaign.toml --dry-run
      kstp campaign run examples/campaign.toml
    """
    from kstp.evaluators.campaign import read_plan
    from kstp.evaluators.campaign.runner import finished_cells, run_cell

    plan = read_plan(file)
    graph = _graph(ctx)
    if dry_run:
        for cell in plan.cells:
            click.echo(shlex.join(["kstp", *(["--graph", graph] if graph else []), *cell.argv]))
        return
    outcomes = []
    on_interrupt("the running cell stored every completion that had arrived; run the same command again to go on.")
    finished, unread = finished_cells(file, graph)
    if unread:
        message(f"could not read which cells finished ({unread}): every cell runs")
    for number, cell in enumerate(plan.cells, 1):
        if number - 1 in finished:
            outcomes.append({"evaluator": cell.kind, "model": cell.model, "dataset": cell.dataset, "seed": cell.seed,
                             "tag": cell.tag, "status": "finished", "skipped": True, "runId": finished[number - 1],
                             "seconds": 0.0, "error": None})
            message(f"[{number}/{len(plan.cells)}] {cell.label}: skipped, finished with this command "
                    f"(run {finished[number - 1]})")
            continue
        message(f"[{number}/{len(plan.cells)}] {cell.label}")
        try:
            outcome = run_cell(cell, graph, echo=lambda line: message(f"    {line}"))
        except KeyboardInterrupt as exc:
            if getattr(exc, "outcome", None) is not None:
                message(f"[{number}/{len(plan.cells)}] {cell.label}: {exc.outcome.status}")
            raise
        outcomes.append({"evaluator": cell.kind, "model": cell.model, "dataset": cell.dataset, "seed": cell.seed,
                         "tag": cell.tag, "status": outcome.status, "skipped": False, "runId": outcome.run_id,
                         "seconds": outcome.seconds, "error": outcome.error})
        message(f"[{number}/{len(plan.cells)}] {cell.label}: {outcome.status}"
                + (f" ({outcome.error})" if outcome.error else ""))
    import pandas as pd  # after the cells: numpy's thread pool would make the cell's parent-death signal come twice

    table = pd.DataFrame(outcomes, columns=["evaluator", "model", "dataset", "seed", "tag", "status", "skipped",
                                            "runId", "seconds", "error"])
    if as_json:
        emit({"campaign": plan.name, "cells": table})
    else:
        print_table(_untagged(table.drop(columns="error")), f"Campaign {plan.name}: {len(plan.cells)} cells")
    unfinished = table[table["status"] != "finished"]
    if len(unfinished):
        message(f"{len(unfinished)} of {len(table)} cells did not finish: kstp campaign status {file} shows them; "
                "the same command runs what is left")
        ctx.exit(1)


@campaign.command()
@_FILE
@json_option
@click.pass_context
def status(ctx: click.Context, file: Path, as_json: bool) -> None:
    """Show each cell's progress from the runs in the graph: done/total, tokens, rate, time left.

    A cell's run is the newest of its evaluator, model and dataset whose configuration
    holds what the cell sets (backend, seed, tag, samples, gen-kwargs); the rate
    is its last session's; the time left is what remains at that rate; skip says the run finished
    with the cell's command as it is now, so kstp campaign run skips it. Reads the graph only,
    so it works while the campaign runs.

    \b
    Examples:
      kstp campaign status examples/campaign.toml
      kstp campaign status examples/campaign.toml --json
    """
    from kstp.evaluators.campaign import read_plan
    from kstp.evaluators.campaign.progress import campaign_status

    plan = read_plan(file)
    table = campaign_status(get_store(ctx), plan)
    if as_json:
        emit(table)
        return
    print_table(_untagged(table), f"Campaign {plan.name}: {int((table['status'] == 'finished').sum())} of "
                f"{len(table)} cells finished")


@campaign.command()
@_FILE
@click.option("--csv", "as_csv", is_flag=True, help="Print the table as CSV (same as --format csv).")
@json_option
@click.pass_context
def report(ctx: click.Context, file: Path, as_csv: bool, as_json: bool) -> None:
    """Print the table across models: accuracy, PSR micro/macro, scaffolding gain, other headline figures.

    Paper 1's Table 2 shape, one row per model, dataset and seed: accuracy with its
    standard error as the answers run stored it, PSR of the model's answers (release
    denominator), scaffolding gain per strategy in percentage points with its standard
    error, and DAG-MATH's perfect reasoning rate, RQEval's CQ and next-step exact-set
    accuracy. Nothing is asked or written.

    \b
    Examples:
      kstp campaign report examples/campaign.toml
      kstp campaign report examples/campaign.toml --csv
    """
    from kstp.evaluators.campaign import read_plan
    from kstp.evaluators.campaign.progress import campaign_report

    plan = read_plan(file)
    table = campaign_report(get_store(ctx), plan)
    if as_csv:
        if as_json:
            raise click.UsageError("--csv and --json contradict each other; give one")
        click.echo(to_csv(table), nl=False)
    elif as_json:
        emit(table)
    elif table.empty:
        message(f"no cell of {file} has a run yet: kstp campaign run {file}")
    else:
        print_table(table, f"Campaign {plan.name} (paper 1, Table 2 shape; SG in percentage points)")
