"""``kstp evaluate``: compute a method's metrics and write them back onto the graph."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from kstp.cli.output import dumps, emit, get_store, json_option, message, print_table, status
from kstp.evaluators import psr as psr_evaluator
from kstp.platform.plots import grouped_bars

__all__ = ["evaluate"]

_TABLE_COLUMNS = ["dataset", "learners", "accuracy", "psrMicro", "psrMacro",
                  *(f"psr {b}" for b in psr_evaluator.BUCKETS)]


@click.group()
def evaluate() -> None:
    """Compute metrics over the graph and write them back."""


@evaluate.command()
@click.option("--dataset", "datasets", multiple=True,
              help="Dataset to evaluate (repeatable; default: every dataset with answers).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("results"), show_default=True,
              help="Folder for psr_summary.csv/.json, psr_learners_<dataset>.csv and psr_distribution.png.")
@click.option("--min-prerequisites", type=click.IntRange(min=1), default=5, show_default=True,
              help="Attempted prerequisites a (learner, question) pair needs to enter the distribution.")
@json_option
@click.pass_context
def psr(ctx, datasets: tuple[str, ...], out: Path, min_prerequisites: int, as_json: bool) -> None:
    """Compute accuracy and PSR (micro, macro, distribution) of every learner (paper 1, Eq. 2-4).

    Needs the dataset's question prerequisites (kstp derive question-prerequisites).
    Writes accuracy, psrMicro and psrMacro on each Learner node and prints one row
    per dataset in the shape of paper 1 Table 2.

    \b
    Examples:
      kstp evaluate psr --dataset frcsub --out results/
      kstp evaluate psr --json
    """
    store = get_store(ctx)
    datasets = datasets or tuple(r["datasetId"] for r in store.run("datasets") if r["answers"])
    if not datasets:
        message("no dataset with learner answers in the graph; ingest responses first")
        ctx.exit(1)
    out.mkdir(parents=True, exist_ok=True)
    summaries = []
    for dataset in datasets:
        with status(f"PSR of {dataset}"):
            result = psr_evaluator.evaluate_dataset(store, dataset, min_prerequisites)
        if result.learners["psrMicro"].notna().sum() == 0:
            message(f"{dataset}: no learner has a scored question; "
                    "derive question prerequisites first (kstp derive question-prerequisites)")
        result.learners.to_csv(out / f"psr_learners_{dataset}.csv")
        summaries.append(result.summary())
    table = pd.DataFrame(summaries)
    table.to_csv(out / "psr_summary.csv", index=False)
    (out / "psr_summary.json").write_text(dumps(summaries) + "\n")
    buckets = table.set_index("dataset")[[f"psr {b}" for b in psr_evaluator.BUCKETS]]
    buckets.columns = list(psr_evaluator.BUCKETS)
    grouped_bars(buckets, out / "psr_distribution.png", "Question-level PSR distribution",
                 "share of (learner, question) pairs")
    if as_json:
        emit(summaries)
    else:
        print_table(table[_TABLE_COLUMNS], "Human learners: accuracy and PSR (paper 1, Table 2 shape)")
        message(f"wrote {out}/psr_summary.csv, psr_summary.json, psr_distribution.png and per-learner CSVs")
