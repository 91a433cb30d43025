"""RQEval (paper 3) commands: ``kstp evaluate rqeval``, ``kstp report rqeval``, ``kstp rqeval validity``."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kstp.cli.models import backend_options, parse_sampling, progress_bar, report_failures, start_backend
from kstp.cli.output import SEED, emit, get_store, json_option, message, out_option, print_table, status
from kstp.csvcells import write_csv
from kstp.errors import DataNotFoundError, InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate_rqeval", "report_rqeval", "rqeval"]

#: The release's LS judge, from the user's Hugging Face cache (kstp.evaluators.rqeval.PAPER_NLI; named here so
#: --help imports no evaluator). ``llm``, the evaluated model as judge, is the named alternative.
DEFAULT_NLI = "cross-encoder:cross-encoder/nli-deberta-v3-small"
#: kstp.evaluators.rqeval.DIMENSIONS, PROMPTS, OVERALL and ROBUSTNESS (named here so --help imports no evaluator).
_DIMENSIONS = ("cq", "cs", "rs", "ls", "es", "ss")
_PROMPTS = ("neutral", "bare", "structured")
_OVERALL = ("pooled", "equal")
_ROBUSTNESS = ("paper", "present")


def _default_data() -> Path:
    return Path(os.environ.get("KSTP_DATA", "../shared/data")) / "rqeval"


def _scenarios(values: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Built-in scenario names and/or YAML/JSON files; none given: the seven built-in ones."""
    from kstp.evaluators import rqeval as rq

    chosen: dict[str, dict[str, float]] = {}
    for value in values:
        if value in rq.SCENARIOS:
            chosen[value] = rq.SCENARIOS[value]
        elif Path(value).is_file():
            chosen.update(rq.load_scenarios(value))
        else:
            raise click.BadParameter(f"{value!r} is neither a built-in scenario ({', '.join(rq.SCENARIOS)}) "
                                     "nor a weights file", param_hint="--scenario")
    return chosen or dict(rq.SCENARIOS)


def _ensure_dataset(store, name: str, data: Path) -> str:
    """The dataset id of ``name``, loading ``data/dataset_<name>.json`` (or the JSON file ``name``) if needed."""
    from kstp.loaders.rqeval import read_rqeval, write_rqeval
    path = Path(name) if name.endswith(".json") else data / f"dataset_{name}.json"
    dataset = path.stem.removeprefix("dataset_")
    if store.frame("rqeval_items", {"dataset": dataset}).empty:
        if not path.is_file():
            raise DataNotFoundError(f"dataset {dataset!r} is not in the graph and {path} does not exist; "
                                    "pass --data FOLDER with dataset_<name>.json files")
        write_rqeval(store, read_rqeval(path, dataset))
        message(f"loaded {dataset} from {path}")
    return dataset


def _validity(scores: pd.DataFrame) -> pd.DataFrame | None:
    """Table 9 (r, p, stars, category) over the (model, dataset) observations, when there are at least 4."""
    from kstp.evaluators import rqeval as rq

    return rq.discriminant_validity(scores) if len(scores[list(rq.DIMENSIONS)].dropna()) >= 4 else None


#: Table 9's symbols of its interpretations.
_SYMBOLS = {"structural": "△", "negligible": "✓", "weak": "∼", "moderate": "!"}


def _validity_figures(table: pd.DataFrame, out: Path) -> None:
    """Table 9 as CSV, Figure 4 (the r heatmap, each cell with its stars and Table 9's symbol)
    and Figure 5's layer blocks in ``out``."""
    import pandas as pd

    from kstp.evaluators import rqeval as rq
    from kstp.reports.plots import heatmap
    write_csv(table, out / "rqeval_validity.csv", index=False)
    write_csv(rq.layer_summary(table), out / "rqeval_layers.csv", index=False)
    # Outcome layer first, then the trace layer (Figure 5), so the blocks show in the heatmap.
    names = [d.upper() for d in (*rq.OUTCOME, *rq.TRACE)]
    r = pd.DataFrame(1.0, index=names, columns=names)
    labels = pd.DataFrame("1", index=names, columns=names)
    for row in table.itertuples():
        a, b = row.a.upper(), row.b.upper()
        r.loc[a, b] = r.loc[b, a] = row.r
        labels.loc[a, b] = labels.loc[b, a] = "–" if pd.isna(row.r) else \
            f"{row.r:.2f}{row.stars.replace('ns', '')}\n{_SYMBOLS.get(row.category, '')}"
    heatmap(r, out / "rqeval_validity.png", "Pearson r (* p<.05, ** p<.01, *** p<.001; △ structural, "
            "✓ negligible, ∼ weak, ! moderate or higher)",
            vmin=-1.0, vmax=1.0, cmap="RdBu_r", center=0.0, label="r", text=labels)


def _figures(scores: pd.DataFrame, per_dataset: pd.DataFrame, ranked: pd.DataFrame, validity: pd.DataFrame | None,
             scenarios: dict, overall: str, out: Path) -> None:
    """The tables as CSV and the figures as PNG in ``out``."""
    from kstp.evaluators import rqeval as rq
    from kstp.reports.plots import grouped_bars, heatmap, radar
    out.mkdir(parents=True, exist_ok=True)
    write_csv(per_dataset, out / "rqeval_scores.csv", index=False)
    write_csv(ranked, out / "rqeval_rankings.csv", index=False)
    by_model = ranked.set_index("model")
    dims = by_model[list(rq.DIMENSIONS)].rename(columns=str.upper)
    radar(dims, out / "rqeval_radar.png", "RQEval dimensions per model")
    grouped_bars(dims, out / "rqeval_dimensions.png", f"Overall dimension scores per model ({overall})", "score")
    grouped_bars(by_model[list(scenarios)], out / "rqeval_scenarios.png", "Scenario scores per model", "Q_w")
    ranks = by_model[[f"rank {name}" for name in scenarios]].set_axis(list(scenarios), axis=1)
    heatmap(ranks, out / "rqeval_ranks.png", "Rank per deployment scenario (1 = best)", vmin=1.0,
            vmax=float(max(len(ranks), 2)), cmap="viridis_r", label="rank", text=ranks.astype(str))
    balanced = scores.assign(q=rq.scenario_scores(scores, {"balanced": rq.SCENARIOS["balanced"]})["balanced"])
    heatmap(balanced.pivot_table(index="model", columns="dataset", values="q"), out / "rqeval_datasets.png",
            "Balanced score Q_bal per model and dataset", vmin=0.0, vmax=1.0, label="Q_bal")
    if validity is not None:
        _validity_figures(validity, out)


#: The judges a run records (Run.nliBackend, Run.similarityModel), columns of the per-dataset table.
_JUDGES = ("nliBackend", "similarityModel")


def _run_judges(store, scores: pd.DataFrame) -> pd.DataFrame:
    """``scores`` with each run's recorded judges (:data:`_JUDGES`) from its Run node."""
    runs = store.nodes("Run", [r for r in scores["runId"] if isinstance(r, str)])
    return scores.merge(runs.rename(columns={"id": "runId"})[["runId", *_JUDGES]], on="runId", how="left")


def _tables(scores: pd.DataFrame, frames: dict, scenarios: dict, overall: str, robustness: str, out: Path | None,
            as_json: bool, extra: dict | None = None, said: tuple[str, str] | None = None) -> None:
    """Per-dataset table (Table 7 shape, with each run's judges in CSV and JSON), overall scores and
    scenario rankings (Table 8 shape), Table 9 and the figures; RS by the rule ``robustness``, named in
    every output; a note (stderr, JSON ``notes``) for each judge that is not the release's. ``said``:
    (SS model, the fallback line already printed), which stands for that model's note."""
    from kstp.evaluators import rqeval as rq
    per_dataset = scores.join(rq.scenario_scores(scores, scenarios))
    ranked = rq.rankings(rq.overall_scores(frames, overall, robustness), scenarios)
    validity = _validity(scores)
    notes = rq.notes(scores["nliBackend"], scores["similarityModel"])
    for note in notes:
        if said is None or not note.startswith(f"SS: BERTScore with {said[0]},"):
            message(f"Note: {note}")
    if said is not None:
        notes = [said[1] if note.startswith(f"SS: BERTScore with {said[0]},") else note for note in notes]
    if out is not None:
        _figures(scores, per_dataset, ranked, validity, scenarios, overall, out)
    if as_json:
        emit({"scores": per_dataset, "rankings": ranked, "overall": overall, "robustness": robustness,
              **({"validity": validity} if validity is not None else {}), "notes": notes, **(extra or {})})
        return
    message(f"judges: LS {', '.join(sorted(set(scores['nliBackend'].dropna())))}; "
            f"SS {', '.join(sorted(set(scores['similarityModel'].dropna())))}")
    print_table(per_dataset.drop(columns=list(_JUDGES)),
                f"RQEval per (model, dataset) (paper 3, Table 7 shape; RS: {_RS_RULE[robustness]})")
    print_table(ranked[["model", "items", *(c for name in scenarios for c in (name, f"rank {name}"))]],
                f"Scenario scores and ranks over {overall} items (paper 3, Table 8 shape)")
    if validity is not None:
        print_table(validity[["a", "b", "r", "stars", "category", "p", "partialR"]],
                    "Discriminant validity (paper 3, Table 9 shape)")
    if out is not None:
        message(f"wrote {out}/rqeval_*.csv and rqeval_*.png")


_RS_RULE = {"paper": "the paper's fixed P slots, an empty one a failure",
            "present": "over the perturbations present, items without one dropped"}
_robustness_option = click.option(
    "--robustness", type=click.Choice(_ROBUSTNESS), default="paper", show_default=True,
    help="RS's denominator: paper divides by the fixed P slots and counts an empty one as a failure (paper "
         "§3.2, the release); present divides by the perturbations an item has and drops items without one.")
_grading_option = click.option(
    "--grading", type=click.Choice(("release", "kstp")), default="release", show_default=True,
    help="How replies are graded: release, as the authors' metrics/answer_extraction.py does (the gold's kind decides; "
         "the last number of a reply, a cut reply's early 'Yes.' counts); kstp, kstp's own grader (the stated final "
         "answer; a reply cut at max_tokens is wrong). Switching grades the stored replies again, asking nothing.")
_overall_option = click.option(
    "--overall", type=click.Choice(_OVERALL), default="pooled", show_default=True,
    help="A model's overall scores: over its pooled items (paper §4, the release) or the equal mean of datasets.")


@click.command("rqeval")
@click.option("--dataset", "datasets", required=True,
              help="Comma-separated RQEval datasets (gsm8k,mmlu,strategyqa,synthetic) or JSON files of that shape.")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder with dataset_<name>.json, loaded when a dataset is not in the graph "
                   "(default: $KSTP_DATA/rqeval).")
@click.option("--model", required=True, help="Model name, vLLM path, or for --backend local smollm2 or a GGUF path.")
@backend_options
@click.option("--gen-kwargs", help="Sampling k=v,...: temperature (0.7), top_p (not sent: the provider's default), "
                                   "max_tokens (256), stop (paper §3.4).")
@click.option("--k", "k", type=click.IntRange(min=2), default=3, show_default=True,
              help="Generations per item (sample 0 is the primary answer).")
@click.option("--p", "p", type=click.IntRange(min=0), default=3, show_default=True,
              help="Perturbations asked per item (at most those stored).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N items of each dataset.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of sample 0; sample i uses seed + i.")
@click.option("--nli", default=DEFAULT_NLI, show_default=True,
              help="NLI judge for LS: cross-encoder:MODEL, MODEL a local folder or a model id in the local Hugging "
                   "Face cache (a bare folder or id is refused; default: the release's, get it once with "
                   "`hf download cross-encoder/nli-deberta-v3-small`; "
                   "checked before any request), or llm: the evaluated model judges its own steps, so LS depends on "
                   "the model under test and is not comparable with the paper's Tables 6-7.")
@click.option("--similarity-model",
              help="BERTScore model for SS, a local folder or a cached model id (default: the release's "
                   "distilbert-base-uncased, layer 5, where the local Hugging Face cache holds it, else the bundled "
                   "all-MiniLM-L6-v2, layer 6, with a note that SS is then not comparable with Tables 6-7).")
@click.option("--num-layers", type=click.IntRange(min=1),
              help="BERTScore layer (default: bert-score's for a model id, 5 for distilbert-base-uncased; 6 for the "
                   "bundled model; required for a folder).")
@click.option("--scenario", "scenarios", multiple=True,
              help="Built-in scenario name or a YAML/JSON weights file (repeatable; default: all seven).")
@click.option("--prompt", type=click.Choice(_PROMPTS), default="neutral", show_default=True,
              help="neutral: system prompt 'You are a helpful assistant.' and the question (paper §3.4); bare: "
                   "the question alone (§3.4's DeepSeek-V3 setting); structured: one sentence per step and a "
                   "'Final Answer:' line.")
@_robustness_option
@_grading_option
@_overall_option
@out_option("the tables (CSV) and figures (PNG)")
@json_option
@click.pass_context
def evaluate_rqeval(ctx, datasets, data, model, backend, base_url, model_args, gen_kwargs, k, p, limit, seed,
                    concurrency, nli, similarity_model, num_layers, scenarios, prompt, robustness, grading, overall,
                    out, resume, as_json) -> None:
    """Score a model's reasoning on six dimensions (CQ, CS, RS, LS, ES, SS) and deployment scenarios (paper 3).

    Each item is answered K times and each of up to P perturbations once; every
    completion is stored and graded before scoring. LS and SS use the release's judges
    from the local Hugging Face cache (cross-encoder/nli-deberta-v3-small, whose absence
    stops the command before any request; distilbert-base-uncased, else the bundled
    MiniLM); a line says which scores another judge makes incomparable with the paper. Scores go onto the Responses, the
    Run and a (model)-[:SCORED_ON]->(dataset) edge. Re-running resumes. Requests that
    get no reply after the retries leave the run incomplete: no tables, exit 1, and the
    same command asks them again.

    \b
    Examples:
      kstp evaluate rqeval --dataset gsm8k,mmlu,strategyqa,synthetic --model smollm2 --backend local \\
          --limit 3 --k 2 --p 1 --nli llm --gen-kwargs max_tokens=48
      kstp evaluate rqeval --dataset gsm8k --model Qwen/Qwen2.5-1.5B-Instruct --backend openai \\
          --base-url http://127.0.0.1:8000/v1 --nli cross-encoder:/models/nli-deberta-v3-small \\
          --similarity-model /models/distilbert-base-uncased --num-layers 5
    """
    import pandas as pd

    from kstp.cli.models import run_truncation, truncation_line
    from kstp.evaluators import rqeval as rq
    from kstp.inference.similarity import nli_backend

    sampling = parse_sampling(gen_kwargs, rq.SAMPLING, n=k, seed=seed)
    chosen = _scenarios(scenarios)
    if (warning := rq.temperature_warning(sampling)) is not None:
        message(f"Warning: {warning}")
    # Both judges load (or fail, one line) before the graph, the datasets and the model server are touched.
    with status("loading the NLI and similarity models"):
        judge = None if nli == "llm" else nli_backend(nli)
        similarity, fallback = rq.similarity_scorer(similarity_model, num_layers)
    if fallback is not None:
        message(f"Note: {fallback}")
    store = get_store(ctx)
    names = [d.strip() for d in datasets.split(",") if d.strip()]
    ids = [_ensure_dataset(store, name, data or _default_data()) for name in names]
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed, sampling=sampling)
    summaries, frames, pending, last_failure = [], {}, 0, None
    try:
        judge = judge or nli_backend(nli, engine)
        for dataset in ids:
            with progress_bar(f"{model} on {dataset}") as progress:
                result = rq.evaluate(store, engine, dataset, sampling, p, judge, similarity, limit,
                                     new_run=not resume, progress=progress, prompt=prompt,
                                     robustness=robustness, grading=grading)
            summaries.append({**result.summary(),
                              "truncation": run_truncation(store, result.run_id, sampling.max_tokens)})
            frames[(result.model, dataset)] = result.items
            pending, last_failure = pending + result.pending, result.last_failure or last_failure
            if result.nli_invalid:
                message(f"{dataset}: {result.nli_invalid} step pairs got no NLI label (counted as not contradicting)")
    finally:
        engine.close()
    message(truncation_line(run_truncation(store, [s["runId"] for s in summaries], sampling.max_tokens)))
    table = pd.DataFrame(summaries)
    if pending:  # an incomplete run has no tables yet: its scores would rank the requests that failed
        if as_json:
            emit({"runs": summaries})
        else:
            print_table(table[["model", "dataset", "runId", "requested", "generatedNow", "pending"]],
                        "RQEval runs (incomplete: the tables wait for every reply)")
        report_failures(ctx, pending, last_failure)
    _tables(table[["model", "dataset", "runId", "items", *rq.DIMENSIONS, *_JUDGES]], frames, chosen, overall,
            robustness, out, as_json, {"runs": summaries}, fallback and (similarity.name, fallback))


@click.command("rqeval")
@click.option("--run", "runs", multiple=True,
              help="RQEval run id (repeatable; default: every scored model and dataset).")
@click.option("--scenario", "scenarios", multiple=True,
              help="Built-in scenario name or a YAML/JSON weights file (repeatable; default: all seven).")
@_robustness_option
@_overall_option
@out_option("the tables (CSV) and figures (PNG)")
@json_option
@click.pass_context
def report_rqeval(ctx, runs, scenarios, robustness, overall, out, as_json) -> None:
    """Recompute the RQEval tables, rankings and plots from stored responses (no inference).

    Writes the per-dataset scores (Table 7 shape), the overall scores with scenario
    ranks (Table 8 shape; pooled over a model's items by default), with at least four
    (model, dataset) observations Table 9 (r, stars, category) and its heatmap, and
    the radar, per-dimension, scenario and rank figures.

    \b
    Examples:
      kstp report rqeval --out results/
      kstp report rqeval --run 'rqeval:smollm2:gsm8k:0123456789ab' --scenario weights.yaml --json
    """
    from kstp.evaluators import rqeval as rq

    chosen = _scenarios(scenarios)
    store = get_store(ctx)
    frames = rq.stored_runs(store, list(runs) or None)
    if not frames:
        raise InputError("no scored rqeval run in the graph; run kstp evaluate rqeval first")
    _tables(_run_judges(store, rq.dataset_scores(frames, robustness)), frames, chosen, overall, robustness, out,
            as_json)


@click.group()
def rqeval() -> None:
    """RQEval analyses that need no graph (paper 3)."""


def _read_scores(path: Path) -> pd.DataFrame:
    import pandas as pd

    from kstp.evaluators import rqeval as rq
    from kstp.loaders.common import read_text

    try:
        frame = pd.read_csv(io.StringIO(read_text(path)))
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"{path}: cannot read a CSV ({exc})") from None
    names = [c.strip().lower().replace(" ", "_") for c in frame.columns]
    frame.columns = [rq.LONG_NAMES.get(c, c) for c in names]
    repeated = sorted({c for c in frame.columns if list(frame.columns).count(c) > 1})
    if repeated:
        raise InputError(f"{path}:1: column {repeated[0]!r} appears more than once (names are read case-blind)")
    for dim in (d for d in rq.DIMENSIONS if d in frame.columns):
        values = pd.to_numeric(frame[dim], errors="coerce")
        bad = frame[dim].notna() & (values.isna() | ~values.between(0, 1))
        if bad.any():
            row = int(bad.idxmax())
            raise InputError(f"{path}:{row + 2}: {dim.upper()} = {frame.at[row, dim]!r}; scores are numbers in [0, 1]")
        frame[dim] = values
    incomplete = int(frame[[d for d in rq.DIMENSIONS if d in frame.columns]].isna().any(axis=1).sum())
    if incomplete:
        message(f"{path}: {incomplete} row(s) with an empty score left out")
    return frame


@rqeval.command()
@click.option("--scores", "path", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="CSV, one row per (model, dataset), columns CQ, CS, RS, LS, ES, SS "
                   "(any case; or correctness, consistency, robustness, logical coherence, efficiency, "
                   "stability).")
@click.option("--control", type=click.Choice(_DIMENSIONS), default="cq", show_default=True,
              help="Dimension the partial correlations control for.")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Bootstrap resamples for the 95% intervals.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of the bootstrap.")
@json_option
def validity(path, control, resamples, seed, as_json) -> None:
    """Discriminant validity of the six dimensions: r, p, bootstrap CI and partial r for all 15 pairs.

    \b
    Examples:
      kstp rqeval validity --scores results/rqeval_scores.csv
      kstp rqeval validity --scores table7.csv --control cq --json
    """
    from kstp.evaluators import rqeval as rq

    result = rq.discriminant_validity(_read_scores(path), control=control, resamples=resamples, seed=seed)
    if as_json:
        emit(result)
        return
    print_table(result, f"Discriminant validity over {int(result['n'].iloc[0])} observations "
                        f"(partial r controls for {control.upper()})")
    defined = result["independent"].dropna()
    message(f"{int(defined.astype(bool).sum())}/{len(defined)} pairs independent (|r| < 0.50)"
            + (f"; {15 - len(defined)} pairs undefined (a constant dimension)" if len(defined) < 15 else ""))
