"""``kstp runs``: list, show and delete the evaluation runs stored in the graph."""

from __future__ import annotations

import json

import click

from kstp.cli.output import emit, get_store, json_option, message, print_table

__all__ = ["runs"]


@click.group()
def runs() -> None:
    """List, show and delete evaluation runs (model answers, RQEval, DAG-MATH, BLIM ...)."""


@runs.command("list")
@click.option("--evaluator", help="Only runs of this evaluator (answers, rqeval, dagmath, blim, ...).")
@click.option("--model", help="Only runs of this model.")
@click.option("--dataset", help="Only runs on this dataset.")
@json_option
@click.pass_context
def list_(ctx: click.Context, evaluator: str | None, model: str | None, dataset: str | None, as_json: bool) -> None:
    """List the runs, newest first, with samples done / planned and the headline figure.

    \b
    Examples:
      kstp runs list
      kstp runs list --evaluator answers --dataset frcsub --json
    """
    from kstp.graph.manage import list_runs

    table = list_runs(get_store(ctx), evaluator, model, dataset)
    if as_json:
        emit(table)
    elif table.empty:
        message("no runs in the graph" + (" match" if evaluator or model or dataset else ""))
    else:
        print_table(table, "Runs")


@runs.command()
@click.argument("run_id", metavar="ID")
@json_option
@click.pass_context
def show(ctx: click.Context, run_id: str, as_json: bool) -> None:
    """Print a run's whole identity (configuration, versions, git hash) and its summary.

    \b
    Example:
      kstp runs show 'answers:smollm2:frcsub:3f2a9c1d0b7e'
    """
    import pandas as pd

    from kstp.graph.manage import run_footprint

    store = get_store(ctx)
    footprint = run_footprint(store, run_id)  # refuses an unknown id, naming close ones
    record = store.nodes("Run", [run_id]).iloc[0]
    run = {key: value for key, value in record.items() if not pd.isna(value)}
    for key in ("config", "sampling"):
        if key in run:
            run[key] = json.loads(run[key])
    result = {"run": run, "holds": footprint.counts()}
    if as_json:
        emit(result)
        return
    shown = {k: json.dumps(v, sort_keys=True) if isinstance(v, dict) else v for k, v in run.items()}
    print_table(pd.DataFrame({"property": list(shown), "value": [str(v) for v in shown.values()]}), f"Run {run_id}")
    print_table(pd.DataFrame({"part": list(result["holds"]), "count": list(result["holds"].values())}), "Holds")


@runs.command()
@click.argument("run_id", metavar="ID")
@click.option("--dry-run", is_flag=True, help="Print what would be deleted, and delete nothing.")
@json_option
@click.pass_context
def delete(ctx: click.Context, run_id: str, dry_run: bool, as_json: bool) -> None:
    """Delete a run: its Responses, CoT steps, ANSWERED edges, outcome properties, lone model learner.

    Responses that another run also holds stay, and so do human learners and questions.

    \b
    Examples:
      kstp runs delete 'answers:smollm2:frcsub:3f2a9c1d0b7e' --dry-run
      kstp runs delete 'answers:smollm2:frcsub:3f2a9c1d0b7e'
    """
    from kstp.cli.db import report_deletion
    from kstp.graph.manage import delete_run, run_footprint

    store = get_store(ctx)
    counts = (run_footprint(store, run_id) if dry_run else delete_run(store, run_id)).counts()
    report_deletion("run", run_id, counts, dry_run, as_json)
