"""``kstp evaluate reasoning``: LLM-as-judge reasoning scores beside PSR (paper 1, Appendix C, Figure 6)."""

from __future__ import annotations

import click

from kstp.cli.models import model_options, parse_sampling, progress_bar, report_failures, run_truncation, start_backend
from kstp.cli.output import dumps, emit, get_store, json_option, message, out_option, print_table

__all__ = ["reasoning"]


@click.command()
@click.option("--dataset", required=True, help="Dataset whose answers runs are judged.")
@click.option("--judged", "judged", multiple=True, required=True,
              help="Model whose latest answers run is judged (repeatable); Figure 6 shows them in this order.")
@model_options(max_tokens=64, temperature=0.0, top_p=1.0)  # reasoning.SAMPLING's (a test holds them equal)
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
              help="Further attempts after a reply that is not a valid score object.")
@out_option("reasoning_<dataset>.json and reasoning_psr_<dataset>.png (Figure 6; earlier versions wrote them to "
            "results/ unasked, which --out results/ still does)")
@json_option
@click.pass_context
def reasoning(ctx, dataset, judged, model, backend, base_url, model_args, gen_kwargs, seed, concurrency, resume,
              retries, out, as_json) -> None:
    """Score the reasoning of models' answers with a judge model, beside their PSR (paper 1, Appendix C).

    --model is the judge (the paper's: gpt-4.1-mini). Each primary answer of the
    judged model's latest `evaluate answers` run gets relevance, coherence and
    accuracy on 1-5, written onto its Response; re-running resumes. Figure 6 puts
    the mean scores beside micro PSR and the PSR = 1 share (`evaluate psr`'s figures,
    recomputed here without writing them back).

    \b
    Examples:
      kstp evaluate reasoning --dataset probability_pks --judged smollm2 --model smollm2 --backend local \\
          --out results/
      kstp evaluate reasoning --dataset xes3g5m --judged Qwen/Qwen2.5-7B-Instruct --judged Qwen/Qwen2.5-32B-Instruct \\
          --model gpt-4.1-mini --base-url https://api.openai.com/v1
    """
    import pandas as pd

    from kstp.evaluators import psr as psr_evaluator
    from kstp.evaluators import reasoning as reasoning_evaluator
    from kstp.inference.runs import model_learner_id
    from kstp.reports.plots import bar_panels

    defaults = reasoning_evaluator.SAMPLING
    sampling = parse_sampling(gen_kwargs, {"temperature": defaults.temperature, "top_p": defaults.top_p,
                                           "max_tokens": defaults.max_tokens},
                              json_schema=defaults.json_schema, seed=seed)
    store = get_store(ctx)
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed, sampling=sampling)
    results = {}
    try:
        for name in dict.fromkeys(judged):
            with progress_bar(f"{model} judging {name} on {dataset}") as progress:
                results[name] = reasoning_evaluator.evaluate(store, engine, dataset, name, sampling, retries,
                                                             new_run=not resume, progress=progress)
    finally:
        engine.close()
    figures = {name: result.summary() for name, result in results.items()}
    rows = {r["learner"]: r for r in psr_evaluator.evaluate_dataset(store, dataset, write_back=False).summary()}
    psr_rows = {name: rows.get(model_learner_id(name), {}) for name in results}
    scores, psr_figures = reasoning_evaluator.figure6(figures, psr_rows)
    # the judge's replies cut at max_tokens (64: a score object) are invalid scores, retried then left out
    truncation = {name: run_truncation(store, result.run_id, sampling.max_tokens) for name, result in results.items()}
    summary = [{**figures[name], "psrMicro": psr_figures.at[name, "psrMicro"],
                "psr 1.0": psr_figures.at[name, "psr = 1.0 rate"], "truncation": truncation[name]} for name in results]
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"reasoning_{dataset}.json").write_text(dumps(summary) + "\n")
        bar_panels([(scores, "(a) Reasoning scores", "score (1-5)", reasoning_evaluator.SCALE),
                    (psr_figures, "(b) Prerequisite satisfaction", "share", (0, 1))],
                   out / f"reasoning_psr_{dataset}.png", f"Reasoning scores and PSR on {dataset} (paper 1, Figure 6)")
    if as_json:
        emit(summary)
    else:
        print_table(pd.DataFrame(summary)[["model", "traces", "scored", *reasoning_evaluator.DIMENSIONS, "psrMicro",
                                           "psr 1.0"]], f"Reasoning scores (judge {model}) and PSR on {dataset}")
    if out is not None:
        message(f"wrote {out}/reasoning_{dataset}.json and reasoning_psr_{dataset}.png (Figure 6)")
    report_failures(ctx, sum(r.pending for r in results.values()),
                    next((r.last_failure for r in results.values() if r.last_failure), None),
                    truncation=run_truncation(store, [r.run_id for r in results.values()], sampling.max_tokens))
