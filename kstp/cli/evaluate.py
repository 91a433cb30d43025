"""``kstp evaluate``: compute a method's metrics and write them back onto the graph."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kstp.cli.output import dumps, emit, err_console, get_store, json_option, message, print_table, status
from kstp.evaluators import answers as answers_evaluator
from kstp.evaluators import psr as psr_evaluator
from kstp.platform.inference import Sampling, backend_names, get_backend
from kstp.platform.plots import grouped_bars

__all__ = ["evaluate", "parse_kwargs"]

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
        if result.learners["psrMicro"].notna().sum() == 0:
            message(f"{dataset}: no learner has a scored question; "
                    "derive question prerequisites first (kstp derive question-prerequisites)")
        result.learners.to_csv(out / f"psr_learners_{dataset}.csv")
        summaries.extend(result.summary())
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


def parse_kwargs(text: str | None, option: str) -> dict:
    """``k=v,k2=v2`` into a dict; values become int, float, bool or str.

    >>> parse_kwargs("temperature=0.2,max_tokens=512,stop=###", "--gen-kwargs")
    {'temperature': 0.2, 'max_tokens': 512, 'stop': '###'}
    """
    out: dict = {}
    for part in filter(None, (text or "").split(",")):
        if "=" not in part:
            raise click.BadParameter(f"{part!r} must read key=value", param_hint=option)
        key, value = (x.strip() for x in part.split("=", 1))
        for cast in (int, float):
            try:
                out[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            out[key] = {"true": True, "false": False}.get(value.lower(), value)
    return out


_GEN_KEYS = {"temperature", "top_p", "max_tokens", "stop"}


@evaluate.command()
@click.option("--dataset", required=True, help="Dataset whose questions the model answers (text and gold answer).")
@click.option("--model", required=True, help="Model name (as the server knows it), a vLLM model path, or, for "
              "--backend local, smollm2 or a GGUF path.")
@click.option("--backend", type=click.Choice(backend_names()), default="openai", show_default=True,
              help="openai: any OpenAI-compatible endpoint; vllm: offline vLLM; local: a GGUF on this CPU.")
@click.option("--base-url", help="Endpoint of the openai backend, e.g. http://127.0.0.1:8000/v1 (key: OPENAI_API_KEY).")
@click.option("--model-args", help="Backend options k=v,... (vllm: anything vllm.LLM takes; local: threads, context).")
@click.option("--gen-kwargs", help="Sampling k=v,...: temperature (0.6), top_p (0.95), max_tokens (1024), stop.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Samples per question; sample 0 is the primary answer.")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of sample 0; sample i uses seed + i.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
              help="Requests in flight (openai backend).")
@click.option("--output-path", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the run summary (JSON) and, with --log-samples, every sample as JSONL.")
@click.option("--log-samples", is_flag=True, help="Also write each sample's prompt hash, text, answer and grade.")
@click.option("--resume/--new-run", default=True, show_default=True,
              help="Resume the run with this configuration; --new-run allows a changed configuration.")
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
    generation = parse_kwargs(gen_kwargs, "--gen-kwargs")
    unknown = set(generation) - _GEN_KEYS
    if unknown:
        raise click.BadParameter(f"unknown key {sorted(unknown)[0]!r}; use {', '.join(sorted(_GEN_KEYS))}",
                                 param_hint="--gen-kwargs")
    if "stop" in generation:
        generation["stop"] = tuple(str(generation["stop"]).split("|"))
    sampling = Sampling(n=samples, seed=seed, **generation)
    options = parse_kwargs(model_args, "--model-args")
    if backend == "openai":
        options.update(base_url=base_url, concurrency=concurrency)
    elif base_url:
        raise click.BadParameter("--base-url goes with --backend openai", param_hint="--base-url")
    if backend == "vllm":
        options.setdefault("seed", seed)
    store = get_store(ctx)
    with status(f"starting the {backend} backend for {model}"):
        engine = get_backend(backend, model, **options)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console, transient=True) as bar:
            task = bar.add_task(f"{model} on {dataset}", total=None)
            result = answers_evaluator.evaluate(
                store, engine, dataset, sampling, limit, new_run=not resume,
                progress=lambda done, total: bar.update(task, completed=done, total=total))
    finally:
        engine.close()
    summary = result.summary()
    if output_path:
        output_path.mkdir(parents=True, exist_ok=True)
        stem = result.run_id.replace(":", "_").replace("/", "_")
        (output_path / f"{stem}.json").write_text(dumps(summary) + "\n")
        if log_samples:
            with open(output_path / f"{stem}.samples.jsonl", "w") as handle:
                for row in result.responses.to_dict("records"):
                    handle.write(dumps(row).replace("\n", " ") + "\n")
    if as_json:
        emit(summary)
    else:
        print_table(pd.DataFrame([summary]), f"{model} on {dataset}")
        if summary["failed"]:
            message(f"{summary['failed']} samples failed (recorded with their reason, counted as incorrect); "
                    "re-run the same command to retry transport failures")

