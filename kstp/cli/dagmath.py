"""DAG-MATH commands (paper 4): ``kstp ingest cot``, ``kstp evaluate dagmath``, ``kstp report dagmath``."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from kstp.cli.models import (
    backend_options,
    gen_kwargs_help,
    parse_sampling,
    progress_bar,
    report_failures,
    run_truncation,
    start_backend,
)
from kstp.cli.output import SEED, dumps, emit, get_store, json_option, message, out_option, print_table, status
from kstp.csvcells import write_csv
from kstp.errors import ConfigError, UnknownIdError
from kstp.inference.backend import MAX_TOKENS

__all__ = ["ingest_cot", "evaluate_dagmath", "report_dagmath"]

#: Who wrote the gold trajectories (kstp.loaders.cot.GOLD; named here so --help imports no loader).
_GOLD = "gold"

_TABLE2 = ["runId", "problems", "trajectories", "invalidFormat", "passAt1", "perfectReasoningRate", "reasoningGap",
           "closenessAuc"]


def _print_summary(summary: dict, title: str) -> None:
    """The run's row of Table 2 (its Std row spans models: kstp report dagmath with several runs)."""
    import pandas as pd

    print_table(pd.DataFrame([{k: summary[k] for k in _TABLE2}], columns=_TABLE2, dtype=object), title)
    if summary["failures"]:
        message("format failures (stored with their reason, counted as failures): "
                + ", ".join(f"{k} {v}" for k, v in summary["failures"].items()))
    _print_dropped(summary)


def _print_dropped(summary: dict) -> None:
    """Under the release's policy (retry:N), how many sample slots stayed malformed and were dropped."""
    if summary.get("malformed", "fail") != "fail":
        message(f"malformed replies: {summary['malformed']}, {summary['droppedMalformed']} sample slots still "
                "malformed after the retries were dropped (left out of every figure, as the authors' release); "
                "replies cut at max_tokens are kept as failures")


def _write_report(store, run_id: str, out: Path | None) -> dict:
    """Recompute a run's metrics (written back), and with ``out`` write tables and figures there."""
    import pandas as pd

    from kstp.evaluators import dagmath as dagmath_evaluator
    from kstp.reports.plots import box_groups, curves
    metrics = dagmath_evaluator.score_run(store, run_id)
    summary = {"runId": run_id, **dagmath_evaluator.aggregate(metrics), **dagmath_evaluator.malformed_figures(metrics)}
    table1 = dagmath_evaluator.statistics_by_class(metrics)
    difficulty = dagmath_evaluator.statistics_by_difficulty(metrics)
    curve = dagmath_evaluator.auc_curve(metrics)
    report = {"summary": summary, "table1": table1.reset_index(), "byDifficulty": difficulty}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        from kstp.inference.runlog import log_stem

        stem = log_stem(run_id)
        (out / f"{stem}.json").write_text(dumps(report) + "\n")
        write_csv(table1, out / f"{stem}_table1.csv")
        write_csv(difficulty, out / f"{stem}_difficulty.csv", index=False)
        write_csv(curve, out / f"{stem}_auc.csv", index=False)
        write_csv(metrics, out / f"{stem}_trajectories.csv", index=False)
        curves({run_id: curve}, out / f"{stem}_auc.png", f"Closeness curve, AUC {summary['closenessAuc']:.3f}",
               "required share of closed steps", "correct with that closeness")
        classes = dagmath_evaluator.class_members(metrics)
        stacked = pd.concat([metrics[m].assign(cls=name) for name, m in classes.items()], ignore_index=True)
        if len(stacked):
            box_groups(stacked, list(dagmath_evaluator.STATISTICS), "cls", out / f"{stem}_statistics.png",
                       "Graph statistics by class")
        graded = metrics[metrics["cotValid"] & metrics["difficulty"].notna()]
        if len(graded):
            binned = dagmath_evaluator.difficulty_bin(graded["difficulty"])
            graded = graded.assign(bin=[f"({k - 1}, {k}]" for k in binned], order=binned).sort_values("order")
            box_groups(graded, list(dagmath_evaluator.STATISTICS), "bin", out / f"{stem}_difficulty.png",
                       "Graph statistics by difficulty bin (k-1, k]")
        message(f"wrote {out}/{stem}.json, _table1.csv, _difficulty.csv, _auc.csv, _trajectories.csv and PNGs")
    return report


@click.command("cot")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset id; problem ids become DATASET:problem_id.")
@click.option("--source", default=_GOLD, show_default=True,
              help="Who wrote the trajectories: run cot:SOURCE:DATASET, learner cot:SOURCE.")
@json_option
@click.pass_context
def ingest_cot(ctx, files: tuple[Path, ...], dataset: str, source: str, as_json: bool) -> None:
    """Load DAG-MATH chain-of-thought trajectories (JSON) and score them (paper 4).

    Each file holds problem objects in the gold benchmark's layout (problem_id,
    problem_text, final_answer, difficulty, domain, sample_id, steps). Invalid
    trajectories are stored with their reason and counted; valid ones become
    CotStep nodes with SUPPORTS edges, and closeness, perfect reasoning and graph
    statistics are computed and written back. Each trajectory is scored as
    'kstp evaluate dagmath' scores a reply: PASS@1 is answer accuracy, so an invalid
    one whose last step boxes the right answer counts as correct.

    \b
    Examples:
      kstp ingest cot gold/*.json --dataset omni
      kstp ingest cot samples.json --dataset aime25 --source qwen3-8b --json
    """
    import pandas as pd

    from kstp.evaluators import dagmath as dagmath_evaluator
    from kstp.loaders import cot as cot_loader
    store = get_store(ctx)
    with status(f"ingesting {len(files)} file(s)"):
        cot = cot_loader.read_cot_files(list(files), dataset, source)
        report = cot_loader.write_cot_set(store, cot)
        run_id = cot_loader.ingest_run_id(source, dataset)
        summary = {"runId": run_id, **dagmath_evaluator.aggregate(dagmath_evaluator.score_run(store, run_id))}
    if as_json:
        emit({"ingest": report.as_dict(), "summary": summary})
        return
    rows = [{"kind": k, **vars(v)} for k, v in report.written.items()]
    print_table(pd.DataFrame(rows, columns=["kind", "created", "updated", "unchanged"]), f"Ingested {dataset}")
    _print_summary(summary, f"Trajectories of {source} on {dataset}")


@click.command("dagmath")
@click.option("--dataset", required=True, help="Dataset whose problems the model solves (text and gold answer).")
@click.option("--model", required=True, help="Model name (as the server knows it), a vLLM model path, or, for "
              "--backend local, smollm2 or a GGUF path.")
@backend_options
@click.option("--gen-kwargs", help=gen_kwargs_help(MAX_TOKENS["dagmath"]) + " max_tokens: a whole trajectory (the "
              "release sets no cap; the paper's longest shown, 121 steps, is ~16,000-18,000 tokens).")
@click.option("--samples", type=click.IntRange(min=1), default=32, show_default=True,
              help="Trajectories per problem.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of sample 0; sample i uses seed + i.")
# dagmath.SHOTS, written out: importing the evaluator here would slow every `kstp --help`
@click.option("--shots", type=click.IntRange(min=0), default=4, show_default=True,
              help="Few-shot gold trajectories per prompt (the paper: 4).")
@click.option("--shots-from", help="Run holding the gold trajectories (default: cot:gold:DATASET).")
@click.option("--prompt-file", type=click.Path(dir_okay=False, path_type=Path),
              help="The authors' few-shot prompt file (their release's openai_api/fewshot_instructions.txt, your "
              "copy, read as it is): sent whole as the system message, with 'Problem: ...' 'Solution:' as the user "
              "message, instead of kstp's instructions and graph shots (so no --shots), and, as the release, no "
              "temperature or top-p unless --gen-kwargs names them. Its name and SHA-256 are recorded on the run.")
@click.option("--malformed", default="fail", show_default=True, metavar="fail|retry:N|release:N",
              help="A reply that is no JSON of the schema (invalid JSON, an empty reply, a missing field): fail "
              "keeps it and counts it as a failure (kstp); retry:N (N from 1 to 10) asks it again with a new seed "
              "up to N times, then drops that sample; release:N then drops the problem's every sample (the "
              "authors' release: release:1). Both report how many samples were dropped. Under each, a reply cut "
              "at max_tokens stays, a failure in the figures and the truncation line.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N problems.")
@out_option("the report's tables (JSON, CSV) and figures (PNG)")
@json_option
@click.pass_context
def evaluate_dagmath(ctx, dataset, model, backend, base_url, model_args, gen_kwargs, samples, seed, shots,
                     shots_from, prompt_file, malformed, limit, concurrency, out, resume, as_json) -> None:
    """Let a model solve problems in the DAG-MATH format; store, check and score every trajectory (paper 4).

    Each completion is stored before it is checked; a format failure is stored
    with its reason and counts as a failure (--malformed retry:N: asked again, then
    dropped; release:N drops its problem whole, as the authors' release). Re-running the same command resumes;
    requests that get no reply after the retries leave the run incomplete (exit 1)
    and are asked by the next run.
    Prints PASS@1 (answer accuracy, whatever the DAG's form), the perfect
    reasoning rate R-hat, their gap and the closeness AUC: the model's row of
    paper 4, Table 2 (its Std row, over models: kstp report dagmath with one run per model).

    \b
    Examples:
      kstp evaluate dagmath --dataset omni --model smollm2 --backend local --samples 2 --limit 2 \\
          --gen-kwargs max_tokens=256
      kstp evaluate dagmath --dataset aime25 --shots-from cot:gold:omni --model Qwen/Qwen3-8B \\
          --backend openai --base-url http://127.0.0.1:8000/v1 --samples 32 --out results/
      kstp evaluate dagmath --dataset aime25 --prompt-file fewshot_instructions.txt --malformed release:1 \\
          --model gpt-4.1 --backend openai --samples 32
    """
    from kstp.evaluators import dagmath as dagmath_evaluator
    from kstp.evaluators import dagmath_release
    from kstp.loaders import cot as cot_loader
    try:
        policy = dagmath_release.parse_malformed(malformed)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--malformed") from None
    prompt = dagmath_release.read_prompt_file(prompt_file) if prompt_file else None
    if prompt is not None:
        if ctx.get_parameter_source("shots") is not ParameterSource.DEFAULT or shots_from:
            raise click.UsageError("--prompt-file holds its own demonstrations: leave out --shots and --shots-from")
        shots = 0
    # under the authors' prompt file, what their release sends: no temperature or top-p (the provider's default)
    release = {"temperature": None, "top_p": None} if prompt is not None else {}
    sampling = parse_sampling(gen_kwargs, {"max_tokens": MAX_TOKENS["dagmath"], **release}, n=samples, seed=seed)
    store = get_store(ctx)
    shots_run = shots_from or cot_loader.ingest_run_id(cot_loader.GOLD, dataset)
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed, sampling=sampling)
    try:
        with progress_bar(f"{model} on {dataset}") as progress:
            result = dagmath_evaluator.evaluate(store, engine, dataset, sampling, shots_run if shots else None, shots,
                                                limit, new_run=not resume, progress=progress, prompt_file=prompt,
                                                malformed=policy)
    finally:
        engine.close()
    truncation = run_truncation(store, result.run_id, sampling.max_tokens)
    summary = {**result.summary(), "truncation": truncation,
               **({"promptFile": prompt.name, "promptFileSha256": prompt.sha256} if prompt else {})}
    if out:
        _write_report(store, result.run_id, out)
    if as_json:
        emit(summary)
    else:
        _print_summary(summary, f"{model} on {dataset} (paper 4, Table 2 shape)")
    report_failures(ctx, result.pending, result.last_failure, truncation=truncation)


@click.command("dagmath")
@click.option("--run", "run_ids", required=True, multiple=True,
              help="Run id (kstp evaluate dagmath prints it; ingests: cot:gold:D); repeat it, one run per model "
              "and dataset, for Table 2 with its Std row over the models.")
@out_option("the tables (JSON, CSV) and figures (PNG)")
@json_option
@click.pass_context
def report_dagmath(ctx, run_ids: tuple[str, ...], out: Path | None, as_json: bool) -> None:
    """Recompute DAG-MATH runs' tables and figures from the graph (paper 4, Tables 1-4, Figures 3-4).

    Closeness and graph statistics are recomputed in Cypher and written back on
    the CotSteps, Responses and the Run; nothing is generated. Table 2 has a row
    per run's model and, per dataset, the Std row: the sample standard deviation
    over the models (ddof = 1, as the paper's Std cells). Tables 1, 3 and 4 are
    each run's graph statistics per class (All, Incorrect, Correct, Perfect).

    \b
    Examples:
      kstp report dagmath --run cot:gold:omni --out results/
      kstp report dagmath --run dagmath:gpt-4.1:aime25:0123456789ab --run dagmath:qwen3:aime25:ba9876543210 --json
    """
    import pandas as pd

    from kstp.evaluators import dagmath as dagmath_evaluator
    store = get_store(ctx)
    reports, rows = [], []
    for run_id in dict.fromkeys(run_ids):
        run = store.frame("run_by_id", {"runId": run_id})
        if run.empty or store.frame("cot_responses", {"runId": run_id}).empty:
            raise UnknownIdError(f"run {run_id!r} has no trajectories in the graph; see the run ids that "
                                 "kstp evaluate dagmath prints, or cot:gold:DATASET after kstp ingest cot")
        report = _write_report(store, run_id, out)
        reports.append(report)
        rows.append({"model": run["model"].iloc[0], "dataset": run["dataset"].iloc[0], **report["summary"]})
    table2 = dagmath_evaluator.table2(pd.DataFrame(rows))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_csv(table2, out / "table2.csv", index=False)
    if as_json:
        emit({"table2": table2, "runs": reports})
        return
    print_table(table2, "PASS@1, R-hat, gap and AUC per model, Std over models (paper 4, Table 2 shape)")
    for report in reports:
        summary = report["summary"]
        if summary["failures"]:
            message(f"{summary['runId']}: format failures (stored with their reason, counted as failures): "
                    + ", ".join(f"{k} {v}" for k, v in summary["failures"].items()))
        _print_dropped(summary)
        print_table(report["table1"], f"{summary['runId']}: graph statistics by class (paper 4, Tables 1, 3, 4)")
        if len(report["byDifficulty"]):
            print_table(report["byDifficulty"], f"{summary['runId']}: graph statistics by difficulty bin (k-1, k] "
                        "(paper 4, Figure 3)")
