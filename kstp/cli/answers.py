"""``kstp evaluate answers``: a model answers a dataset's questions (paper 1, NB1), as an LLM evaluation."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.models import (
    backend_options,
    budget,
    check_base_url,
    gen_kwargs_help,
    parse_sampling,
    progress_bar,
    prompt_option,
    report_failures,
    results_rows,
    run_truncation,
    start_backend,
    write_run_files,
)
from kstp.cli.output import (
    SEED,
    emit,
    get_store,
    json_option,
    message,
    print_table,
    refuse_together,
    require_output_path,
)
from kstp.inference.backend import MAX_TOKENS

__all__ = ["answers", "RUN_COLUMNS"]

#: The columns of the table under the results: what each run did besides its figures (its id is printed whole
#: below the table).
RUN_COLUMNS = ("questions", "samples", "failed", "noAnswer", "truncated", "filtered", "overflow", "pending",
               "generatedNow", "completionsPerS")


@click.command()
@click.option("--dataset", "datasets", required=True, multiple=True,
              help="Dataset whose questions the model answers (text and gold answer); several as a,b,c or the "
              "option repeated: a run each, one table (as lm-eval's --tasks).")
@click.option("--model", required=True, help="Model name (as the server knows it), a vLLM or transformers model "
              "path, or, for --backend local, smollm2 or a GGUF path.")
@backend_options
@click.option("--gen-kwargs", help=gen_kwargs_help(MAX_TOKENS["answers"], context=MAX_TOKENS["answers"]) +
              " context: paper 1's 16,384-token window without context (§4); a max_tokens alone replaces it.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Samples per question; sample 0 is the primary answer. With 2 or more the summary has pass@k "
              "for every k up to N and the majority vote maj@N.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of sample 0; sample i uses seed + i.")
@click.option("--tag", help="Name this run a replicate of its configuration: part of the run's identity and of "
              "every completion's cache key, so the same command with another tag asks every request again "
              "(with the same seeds) into a run of its own. Without it the run is the untagged one.")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Replicates of the run: replicate 1 is the run without --repeat; replicate r is tagged rep<r> "
              "(<tag>-rep<r> with --tag) and draws its samples from seed + (r - 1) * samples, so every replicate "
              "is a fresh draw. The summary adds the figures over all replicates.")
@click.option("--output-path", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the run's log: <run>.json, the summary with the run's whole configuration "
              "(model, backend, endpoint, sampling, seed, prompt template and its hash, kstp version and git "
              "commit, package versions, start and end times).")
@click.option("--log-samples", is_flag=True, help="Also write <run>.samples.jsonl: each sample's question, gold "
              "answer, prompt, reply, extracted answer, verdict, tokens and latency.")
@prompt_option
@click.option("--prompt-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A prompt of your own instead of --prompt's sets: YAML with 'system' and 'user' ({question}: the "
              "question, {options}: its option lines, {text}: both) and optionally 'shot_answer' ({solution}, "
              "{answer}: an exemplar's reply); kstp/evaluators/example_prompt_file.yaml is one to copy. A "
              "placeholder nothing fills, or a control character (YAML's \"\\b\" is a backspace), is refused. Its "
              "hash is part of the run's identity.")
@click.option("--few-shot", type=click.Path(exists=True, path_type=Path),
              help="Exemplars put before each question as user and assistant turns: JSON lines (or Parquet, ...) "
              "with question, answer and optionally options, solution. Part of the run's identity.")
@click.option("--num-fewshot", type=click.IntRange(min=0), help="Only the first N exemplars of --few-shot.")
@json_option
@click.pass_context
def answers(ctx, datasets, model, backend, base_url, model_args, gen_kwargs, limit, samples, seed, tag, repeat,
            concurrency, output_path, log_samples, prompt, prompt_file, few_shot, num_fewshot, resume,
            as_json) -> None:
    """Let a model answer a dataset's questions; store, grade and record every completion (paper 1, NB1).

    Every completion becomes a Response in the graph before it is graded; the
    primary sample of each question becomes the model's ANSWERED edge, so
    `kstp evaluate psr` compares it with the human learners. Re-running the same
    command resumes: finished completions are not requested again, and a smaller
    --limit reports those questions of the run. --concurrency requests are in flight,
    the next started as each finishes; replies are stored every 64 or 2 s and graded in
    a process of their own (10 s a reply at most); the progress line shows the window,
    completions/s and tokens/s. Requests that got no reply after the retries, or a reply
    that is the server's failure (no choices, an aborted generation), leave the run
    incomplete (exit 1; the next run asks them); a request the server rejects (a bad key,
    an unknown model) stops the run at once (exit 1). The table is lm-eval's: each
    figure with its standard error (the summary's "estimators" name them). Several
    datasets or --repeat print one table of every run, and with --output-path also
    write results_<time>.json of them all.

    \b
    Examples:
      kstp evaluate answers --dataset probability_pks --model smollm2 --backend local --limit 5 \\
          --gen-kwargs max_tokens=256
      kstp evaluate answers --dataset frcsub --model Qwen/Qwen2.5-7B-Instruct \\
          --backend openai --base-url http://127.0.0.1:8000/v1 --samples 4 --log-samples --output-path out/
      kstp evaluate answers --dataset frcsub --model Qwen/Qwen2.5-7B-Instruct --base-url http://127.0.0.1:8000/v1 \\
          --prompt-file my_prompt.yaml --few-shot shots.jsonl --num-fewshot 2 --limit 8 --new-run
      kstp evaluate answers --dataset frcsub,probability_pks --model Qwen/Qwen2.5-7B-Instruct \\
          --base-url http://127.0.0.1:8000/v1 --limit 8 --repeat 3 --new-run
    """
    import pandas as pd

    from kstp.evaluators import answers as answers_evaluator
    from kstp.inference.backend import reproducibility
    from kstp.inference.runs import now

    require_output_path(log_samples, output_path)
    check_base_url(backend, base_url)
    template = _template(ctx, prompt, prompt_file, few_shot, num_fewshot)
    started = now()
    sampling = parse_sampling(gen_kwargs, budget("answers"), n=samples, seed=seed)
    store = get_store(ctx)
    names = dataset_names(store, datasets)
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed, sampling=sampling)
    results = []
    try:
        for dataset in names:
            for replicate in range(1, repeat + 1):
                drawn = replicate_sampling(sampling, replicate)
                label = dataset if repeat == 1 else f"{dataset}, replicate {replicate} of {repeat}"
                with progress_bar(f"{model} on {label}") as progress:
                    results.append(answers_evaluator.evaluate(
                        store, engine, dataset, drawn, limit, new_run=not resume, progress=progress, prompt=template,
                        tag=replicate_tag(tag, replicate)))
    except KeyboardInterrupt as exc:  # the log of what is stored, as Inspect writes one for a cancelled eval
        if output_path and getattr(exc, "result", None) is not None:
            done = [*results, exc.result]
            _write_logs(store, output_path, done, [{**r.summary(), "status": "interrupted"} for r in done], started,
                        log_samples)
            message(f"wrote the logs of what is stored to {output_path}/")
        raise
    finally:
        engine.close()
    promise = reproducibility(engine)
    summaries = [{**result.summary(), "truncation": run_truncation(store, result.run_id, sampling.max_tokens,
                                                                       sampling.context), "reproducible": promise}
                 for result in results]
    if not promise["sameText"]:
        message(f"not promised: the same seeds giving the same texts at another window ({promise['note']})")
    if not resume and any(r.resumed for r in results):
        message("--new-run with an unchanged configuration resumes its run (it allows a changed one); a fresh run "
                "of the same configuration is a replicate: --tag NAME or --repeat N")
    if output_path:
        _write_logs(store, output_path, results, summaries, started, log_samples)
    replicates = _replicates(results, names, repeat)
    together = {"runs": summaries, **({"replicates": replicates} if replicates else {})}
    if len(results) > 1 and output_path:
        from kstp.cli.output import dumps

        stamp = started.replace(":", "-").removesuffix("+00-00")
        (output_path / f"results_{stamp}.json").write_text(dumps(together) + "\n")
    if as_json:
        emit(summaries[0] if len(results) == 1 else together)
    else:
        version, better = answers_evaluator.VERSION, answers_evaluator.HIGHER_IS_BETTER
        shown = [{**s, "dataset": s["dataset"] + (f" ({s['tag']})" if s.get("tag") else "")} for s in summaries]
        print_table(pd.DataFrame(results_rows(shown, version, better)),
                    f"{model} on {', '.join(names)}" + (f", {repeat} replicates" if repeat > 1 else ""))
        if replicates:
            print_table(pd.DataFrame(results_rows([{**r, "dataset": f"{r['dataset']} (all {repeat})"}
                                                   for r in replicates], version, better)),
                        "Over the replicates (accuracy: mean, stderr clustered by question)")
        print_table(pd.DataFrame([{"dataset": label, **{c: s.get(c) for c in RUN_COLUMNS}}
                                  for label, s in zip((r["dataset"] for r in shown), summaries, strict=True)]),
                    "Runs")
        servers = [{"dataset": label, **e} for label, s in zip((r["dataset"] for r in shown), summaries, strict=True)
                   for e in s.get("endpoints") or ()]
        if servers:  # --base-url given several times: what each server did
            print_table(pd.DataFrame(servers), "Servers")
        for label, summary in zip((r["dataset"] for r in shown), summaries, strict=True):
            click.echo(f"{label}: {summary['runId']}")  # whole, to copy into kstp runs show | export | diff
    if output_path:
        message(f"wrote the runs' logs to {output_path}/")
    failed = sum(s["failed"] for s in summaries)
    report_failures(ctx, sum(r.pending for r in results),
                    next((r.last_failure for r in results if r.last_failure), None), failed,
                    run_truncation(store, [r.run_id for r in results], sampling.max_tokens, sampling.context),
                    filtered=sum(s["filtered"] for s in summaries), overflow=sum(s["overflow"] for s in summaries))


def _template(ctx: click.Context, prompt: str, prompt_file: Path | None, few_shot: Path | None,
              num_fewshot: int | None):
    """The prompt template of --prompt, or --prompt-file, with --few-shot's exemplars."""
    from dataclasses import replace

    from kstp.evaluators.answers import template_of
    from kstp.evaluators.prompting import load_prompt_file, load_shots

    refuse_together(ctx, "prompt_file", ("prompt",), "a prompt file replaces the prompt set")
    if num_fewshot is not None and few_shot is None:
        raise click.UsageError("--num-fewshot goes with --few-shot, the file of exemplars")
    template = load_prompt_file(prompt_file) if prompt_file else template_of(prompt)
    return replace(template, shots=load_shots(few_shot, num_fewshot)) if few_shot else template


def dataset_names(store, given: tuple[str, ...]) -> list[str]:
    """The datasets of ``--dataset``: each value split at commas, unless the graph has a dataset named by it whole.

    Raises
    ------
    click.BadParameter
        When no dataset is named (``--dataset ,``).
    UnknownIdError
        When a dataset is not in the graph: said before any model is started.
    """
    from kstp.graph.structures import dataset_questions

    known = {row["datasetId"] for row in store.run("datasets")}
    names = []
    for value in given:
        names += [value] if value in known else [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise click.BadParameter("name a dataset", param_hint="--dataset")
    for name in dict.fromkeys(names):
        dataset_questions(store, name)  # an unknown dataset is said before the model server starts
    return list(dict.fromkeys(names))


def replicate_tag(tag: str | None, replicate: int) -> str | None:
    """The tag of replicate ``replicate`` (1-based): the run's own ``tag`` for the first, ``rep<r>`` after.

    >>> replicate_tag(None, 1), replicate_tag(None, 2), replicate_tag("v2", 3)
    (None, 'rep2', 'v2-rep3')
    """
    if replicate == 1:
        return tag
    return f"{tag}-rep{replicate}" if tag else f"rep{replicate}"


def replicate_sampling(sampling, replicate: int):
    """Replicate ``replicate``'s sampling: its samples' seeds follow the replicate before's.

    Raises
    ------
    ConfigError
        When a seed would pass the largest one every backend reproduces.

    >>> from kstp.inference.backend import Sampling
    >>> replicate_sampling(Sampling(n=4, seed=42), 3).seed
    50
    """
    from dataclasses import replace

    return replace(sampling, seed=sampling.seed + (replicate - 1) * sampling.n)


def _write_logs(store, folder: Path, results, summaries, started: str, log_samples: bool) -> None:
    """Each run's <run>.json (and with ``log_samples`` its <run>.samples.jsonl)."""
    from kstp.inference.runlog import run_log, run_samples, sample_records

    for result, summary in zip(results, summaries, strict=True):
        logged = None
        if log_samples:
            rows = run_samples(store, result.run_id)
            logged = sample_records(rows[rows["questionId"].isin(set(result.responses["questionId"]))])
        write_run_files(folder, result.run_id, run_log(store, result.run_id, summary, started), logged)


def _replicates(results, names: list[str], repeat: int) -> list[dict]:
    """Per dataset, the figures over its replicates (:func:`~kstp.inference.statistics.replicate_statistics`)."""
    if repeat == 1:
        return []
    from kstp.inference.statistics import replicate_statistics

    out = []
    for dataset in names:
        runs = [r for r in results if r.dataset == dataset]
        out.append({"model": runs[0].model, "dataset": dataset, "shots": runs[0].shots,
                    "questions": int(runs[0].responses["questionId"].nunique()),
                    **replicate_statistics([r.responses for r in runs]), "runIds": [r.run_id for r in runs]})
    return out
