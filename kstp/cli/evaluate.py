"""``kstp evaluate``: compute a method's metrics and write them back onto the graph."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from kstp.cli.models import backend_options, parse_sampling, progress_bar, start_backend, write_run_files
from kstp.cli.output import dumps, emit, get_store, json_option, message, print_table, status
from kstp.evaluators import answers as answers_evaluator
from kstp.evaluators import psr as psr_evaluator
from kstp.platform.errors import InputError
from kstp.platform.plots import grouped_bars

__all__ = ["evaluate"]

_TABLE_COLUMNS = ["dataset", "learner", "learners", "accuracy", "psrMicro", "psrMacro",
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
    Writes accuracy, psrMicro and psrMacro on each Learner node and prints, per
    dataset, one row for the human learners and one per model, in the shape of paper
    1 Table 2.

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
        if result.learners.empty:
            message(f"{dataset}: no learner answered its questions; skipped")
            continue
        if result.learners["psrMicro"].notna().sum() == 0:
            message(f"{dataset}: no learner has a scored question; "
                    "derive question prerequisites first (kstp derive question-prerequisites)")
        result.learners.to_csv(out / f"psr_learners_{dataset}.csv")
        summaries.extend(result.summary())
    if not summaries:
        raise InputError(f"no learner answers in {', '.join(datasets)}; ingest responses first (kstp ingest responses)")
    table = pd.DataFrame(summaries)
    table.to_csv(out / "psr_summary.csv", index=False)
    (out / "psr_summary.json").write_text(dumps(summaries) + "\n")
    labels = table["dataset"] + (" / " + table["learner"]).where(table["learner"] != "human learners", "")
    buckets = table.set_index(labels)[[f"psr {b}" for b in psr_evaluator.BUCKETS]]
    buckets.columns = list(psr_evaluator.BUCKETS)
    grouped_bars(buckets, out / "psr_distribution.png", "Question-level PSR distribution",
                 "share of (learner, question) pairs")
    if as_json:
        emit(summaries)
    else:
        print_table(table[_TABLE_COLUMNS], "Accuracy and PSR (paper 1, Table 2 shape)")
        message(f"wrote {out}/psr_summary.csv, psr_summary.json, psr_distribution.png and per-learner CSVs")


@evaluate.command()
@click.option("--dataset", required=True, help="Dataset whose questions the model answers (text and gold answer).")
@click.option("--model", required=True, help="Model name (as the server knows it), a vLLM model path, or, for "
              "--backend local, smollm2 or a GGUF path.")
@backend_options
@click.option("--gen-kwargs", help="Sampling k=v,...: temperature (0.6), top_p (0.95), max_tokens (1024), stop.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Samples per question; sample 0 is the primary answer.")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of sample 0; sample i uses seed + i.")
@click.option("--output-path", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the run summary (JSON) and, with --log-samples, every sample as JSONL.")
@click.option("--log-samples", is_flag=True, help="Also write each sample's prompt hash, text, answer and grade.")
@json_option
@click.pass_context
def answers(ctx, dataset, model, backend, base_url, model_args, gen_kwargs, limit, samples, seed, concurrency,
            output_path, log_samples, resume, as_json) -> None:
    """Let a model answer a dataset's questions; store, grade and record every completion (paper 1, NB1).

    Every completion becomes a Response in the graph before it is graded; the
    primary sample of each question becomes the model's ANSWERED edge, so
    `kstp evaluate psr` compares it with the human learners. Re-running the same
    command resumes: finished completions are not requested again.

    \b
    Examples:
      kstp evaluate answers --dataset probability_pks --model smollm2 --backend local --limit 5
      kstp evaluate answers --dataset frcsub --model Qwen/Qwen2.5-7B-Instruct \\
          --backend openai --base-url http://127.0.0.1:8000/v1 --samples 4 --log-samples --output-path out/
    """
    sampling = parse_sampling(gen_kwargs, n=samples, seed=seed)
    store = get_store(ctx)
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed)
    try:
        with progress_bar(f"{model} on {dataset}") as progress:
            result = answers_evaluator.evaluate(store, engine, dataset, sampling, limit, new_run=not resume,
                                                progress=progress)
    finally:
        engine.close()
    summary = result.summary()
    if output_path:
        write_run_files(output_path, result.run_id, summary,
                        result.responses.to_dict("records") if log_samples else None)
    if as_json:
        emit(summary)
    else:
        print_table(pd.DataFrame([summary]), f"{model} on {dataset}")
        if summary["failed"]:
            message(f"{summary['failed']} samples failed (recorded with their reason, counted as incorrect); "
                    "re-run the same command to retry transport failures")

