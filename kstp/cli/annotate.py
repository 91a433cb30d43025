"""``kstp annotate``: concept annotation of questions by an LLM (paper 1, §3.2, Appendix B)."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.models import model_options, parse_sampling, progress_bar, report_failures, run_truncation, start_backend
from kstp.cli.output import dumps, emit, get_store, json_option, message, print_table
from kstp.csvcells import write_csv

__all__ = ["annotate"]

#: The prompt sets and the default (kstp.evaluators.annotation.PROMPTS, DEFAULT_PROMPT; named here so --help
#: imports no evaluator).
_PROMPTS = ("kstp", "release", "paper")
_DEFAULT_PROMPT = "kstp"


@click.group()
def annotate() -> None:
    """Annotate questions with curriculum concepts by an LLM, and judge the annotator."""


def _run(ctx, dataset, framework, model, backend, base_url, model_args, gen_kwargs, seed, concurrency, resume,
         retries, limit, prompt):
    from kstp.evaluators import annotation as annotation_evaluator

    defaults = annotation_evaluator.SAMPLING
    sampling = parse_sampling(gen_kwargs, {"temperature": defaults.temperature, "top_p": defaults.top_p,
                                           "max_tokens": defaults.max_tokens},
                              json_schema=defaults.json_schema, seed=seed)
    store = get_store(ctx)
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed, sampling=sampling)
    try:
        with progress_bar(f"{model} annotating {dataset}") as progress:
            result = annotation_evaluator.annotate(
                store, engine, dataset, framework, sampling, retries, limit, new_run=not resume,
                progress=lambda done: progress(done, None), prompt=prompt)
    finally:
        engine.close()
    return result, run_truncation(store, result.run_id, sampling.max_tokens)


def _annotation_options(func):
    func = click.option("--prompt", type=click.Choice(_PROMPTS), default=_DEFAULT_PROMPT, show_default=True,
                        help="Prompt set: kstp's, what the authors' release shows (the problem with its "
                             "solution, id: name menus), or paper 1's Prompt 2 as written (release menus).")(func)
    func = click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")(func)
    func = click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
                        help="Further attempts after a reply that is not a JSON array.")(func)
    # annotation.SAMPLING's defaults (named here so --help imports no evaluator; a test holds them equal)
    return model_options(func, max_tokens=256, temperature=0.2, top_p=None)


@annotate.command()
@click.option("--items", "dataset", required=True, help="Dataset whose questions are annotated.")
@click.option("--framework", required=True, help="Framework whose clusters and concepts are offered, e.g. ccss.")
@_annotation_options
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write one row per question (clusters, concepts, status) as CSV.")
@json_option
@click.pass_context
def concepts(ctx, dataset, framework, model, backend, base_url, model_args, gen_kwargs, seed, concurrency, resume,
             retries, limit, prompt, out, as_json) -> None:
    """Annotate a dataset's questions with concepts in two stages (clusters, then concepts).

    Writes ASSESSES {source: "llm:<model>", runId} for every concept chosen;
    ids not offered are dropped and counted, replies that are not a JSON array are
    retried and then recorded as failed. Re-running resumes; requests that got no
    reply leave their questions pending (exit 1) for the next run.

    \b
    Examples:
      kstp annotate concepts --items frcsub --framework ccss --model smollm2 --backend local --limit 1 --retries 0
      kstp annotate concepts --items xes3g5m --framework ccss --model Qwen/Qwen2.5-7B-Instruct \\
          --base-url http://127.0.0.1:8000/v1 --out annotations.csv
    """
    import pandas as pd

    result, truncation = _run(ctx, dataset, framework, model, backend, base_url, model_args, gen_kwargs, seed,
                              concurrency, resume, retries, limit, prompt)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_csv(result.items.assign(clusters=result.items["clusters"].map(" ".join),
                                      concepts=result.items["concepts"].map(" ".join)), out, index=False)
    summary = {**result.summary(), "truncation": truncation}
    if as_json:
        emit(summary)
    else:
        print_table(pd.DataFrame([result.summary()]), f"{model}: concept annotation of {dataset}")
        if summary["failed"]:
            message(f"{summary['failed']} questions failed (no valid JSON array after {retries + 1} attempts)")
    report_failures(ctx, result.pending, result.last_failure, truncation=truncation)


@annotate.command()
@click.option("--framework", default="ccss", show_default=True, help="Framework whose example problems are gold.")
@_annotation_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for annotation_eval_<framework>.json and the per-problem CSV.")
@json_option
@click.pass_context
def evaluate(ctx, framework, model, backend, base_url, model_args, gen_kwargs, seed, concurrency, resume, retries,
             limit, prompt, out, as_json) -> None:
    """Judge an LLM annotator on the framework's own example problems (paper 1, Appendix B).

    Each concept with an example problem gives a gold (problem, concept) pair; the
    problems are annotated as the dataset <framework>-examples. Prints correct,
    incorrect and unannotated pairs and the accuracy without the unannotated.

    \b
    Examples:
      kstp annotate evaluate --framework ccss --model smollm2 --backend local --limit 1 --retries 0 \\
          --model-args context=8192
      kstp annotate evaluate --model gpt-4.1-mini --base-url https://api.openai.com/v1 --json
    """
    import pandas as pd

    from kstp.evaluators import annotation as annotation_evaluator

    store = get_store(ctx)
    gold = annotation_evaluator.load_examples(store, framework)
    result, truncation = _run(ctx, annotation_evaluator.examples_dataset(framework), framework, model, backend,
                              base_url, model_args, gen_kwargs, seed, concurrency, resume, retries, limit, prompt)
    score = {"model": model, "framework": framework, **annotation_evaluator.score_annotations(gold, result.items),
             "droppedIds": int(result.items["dropped"].sum()), "runId": result.run_id, "truncation": truncation}
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"annotation_eval_{framework}.json").write_text(dumps(score) + "\n")
        write_csv(result.items.merge(gold, on="questionId").assign(
            clusters=lambda f: f["clusters"].map(" ".join), concepts=lambda f: f["concepts"].map(" ".join)
        ), out / f"annotation_eval_{framework}.csv", index=False)
    if as_json:
        emit(score)
    else:
        columns = ["model", "pairs", "correct", "incorrect", "unannotated", "accuracy", "failed", "droppedIds"]
        print_table(pd.DataFrame([score])[columns], f"Annotation of {framework} example problems (Appendix B shape)")
    report_failures(ctx, result.pending, result.last_failure, truncation=truncation)
