"""``kstp evaluate nextstep``, ``kstp report nextstep`` and ``kstp catalogue``: paper 2's benchmark."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.models import (
    backend_options_with,
    parse_sampling,
    progress_bar,
    report_failures,
    run_truncation,
    start_backend,
    write_run_files,
)
from kstp.cli.output import (
    SEED,
    dumps,
    emit,
    get_store,
    json_option,
    message,
    out_option,
    print_table,
    require_output_path,
    status,
)
from kstp.csvcells import write_csv

__all__ = ["nextstep_evaluate", "nextstep_report", "catalogue"]

#: Paper 2's prompt conditions (kstp.evaluators.nextstep.CONDITIONS; named here so --help imports no evaluator).
_CONDITIONS = ("P0", "P1", "P2", "P3")
_SAMPLINGS = ("paper", "deterministic")


def _conditions(ctx, param, value: str) -> list[str]:
    chosen = [c.strip().upper() for c in value.split(",") if c.strip()]
    bad = [c for c in chosen if c not in _CONDITIONS]
    if bad or not chosen:
        raise click.BadParameter(f"{', '.join(bad) or 'nothing'}: use a comma-separated subset of "
                                 f"{','.join(_CONDITIONS)}")
    return list(dict.fromkeys(chosen))


@click.command("nextstep")
@click.option("--catalogue", "names", multiple=True, required=True,
              help="A catalogue file (YAML/JSON) or a shipped catalogue id (kstp catalogue list); repeatable.")
@click.option("--conditions", default=",".join(_CONDITIONS), show_default=True, callback=_conditions,
              help="Prompt conditions: P0 descriptions only, P1 infer pairs first, P2 pairs given, P3 states given.")
@click.option("--orders", type=click.IntRange(min=1), default=2, show_default=True,
              help="Permuted presentations per catalogue (SHA-256 seeded, shared by every model).")
@click.option("--model", help="Model name (as the server knows it), a vLLM path, smollm2 or a GGUF for --backend "
              "local; optional for --backend fringe-oracle.")
@backend_options_with("fringe-oracle")
@click.option("--sampling", "preset", type=click.Choice(_SAMPLINGS), default="paper", show_default=True,
              help="paper: the provider's default temperature and top-p, max_tokens 16000 (§4.3); deterministic: "
                   "temperature 0, top_p 0.95, max_tokens 1024. --gen-kwargs overrides single values.")
@click.option("--gen-kwargs", help="Sampling k=v,... over the --sampling preset: temperature, top_p, max_tokens, stop.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Sampling seed.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
              help="Extra rounds for cells whose request got no reply (technically missing).")
@click.option("--output-path", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the run summary (JSON) and, with --log-samples, every scored cell as JSONL.")
@click.option("--log-samples", is_flag=True, help="Also write each cell's validity, prediction and scores.")
@json_option
@click.pass_context
def nextstep_evaluate(ctx, names, conditions, orders, model, backend, base_url, model_args, preset, gen_kwargs, seed,
                      concurrency, retries, output_path, log_samples, resume, as_json) -> None:
    """Ask a model for the next steps of every state of each catalogue; store and score each answer (paper 2).

    For every knowledge state, condition and presentation the model gets a prompt with
    the tasks under permuted positions and must return, as schema-checked JSON, all and
    only the tasks of the state's outer fringe. Every attempt is stored as a Response
    before it is scored; re-running the same command resumes. `kstp report nextstep`
    computes the tables and statistics.

    \b
    Examples:
      kstp evaluate nextstep --catalogue cm_8f --backend fringe-oracle
      kstp evaluate nextstep --catalogue cm_8f --conditions P0 --orders 1 --model smollm2 \\
          --backend local --sampling deterministic --gen-kwargs max_tokens=128
      kstp evaluate nextstep --catalogue my_domain.yaml --catalogue pks_cip --conditions P0,P2 \\
          --model Qwen/Qwen2.5-7B-Instruct --backend openai --base-url http://127.0.0.1:8000/v1 \\
          --output-path out/ --log-samples
    """
    import pandas as pd

    from kstp.evaluators import nextstep as benchmark
    from kstp.inference.runlog import run_log
    from kstp.inference.runs import now
    from kstp.loaders import catalogues as catalogue_files

    require_output_path(log_samples, output_path)
    started = now()
    catalogues = [catalogue_files.resolve_catalogue(n) for n in names]
    sampling = parse_sampling(gen_kwargs, benchmark.SAMPLING[preset], seed=seed)
    extra = {}
    if backend == "fringe-oracle":
        extra["catalogues"] = catalogues
        model = model or "fringe-oracle"
    elif not model:
        raise click.BadParameter("name the model", param_hint="--model")
    store = get_store(ctx)
    engine = start_backend(backend, model, model_args, base_url, concurrency, seed, sampling=sampling, **extra)
    try:
        with progress_bar(f"{model}: next steps") as progress:
            result = benchmark.evaluate(store, engine, catalogues, conditions, orders, sampling, new_run=not resume,
                                        retries=retries, progress=progress)
    finally:
        engine.close()
    summary = {**result.summary(), "truncation": run_truncation(store, result.run_id, sampling.max_tokens)}
    if output_path:
        cells = result.scored.assign(predicted=result.scored["predicted"].map(
            lambda p: None if p is None else sorted(p)))
        write_run_files(output_path, result.run_id, run_log(store, result.run_id, summary, started),
                        cells.to_dict("records") if log_samples else None)
    if as_json:
        emit(summary)
    else:
        print_table(pd.DataFrame([{k: v for k, v in summary.items() if k != "truncation"}]),
                    f"{model}: next-step recommendations")
        message(f"kstp report nextstep --run {result.run_id}  computes the tables and statistics")
    report_failures(ctx, result.missing, result.last_failure, truncation=summary["truncation"])


@click.command("nextstep")
@click.option("--run", "runs", multiple=True, required=True, help="A nextstep run id (repeatable: one per model).")
@out_option("the CSV tables, nextstep_report.json and the PNG figures")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the bootstrap and sign-flip draws.")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Bootstrap resamples of states.")
@click.option("--flips", type=click.IntRange(min=100), default=100_000, show_default=True,
              help="Random sign flips per contrast (all 2^n when fewer).")
@click.option("--focus", metavar="CATALOGUE:CONDITION",
              help="Draw nextstep_focus.png, the models compared on one catalogue and condition (paper 2, "
                   "Figure 3: Graph to Equation under P1).")
@json_option
@click.pass_context
def nextstep_report(ctx, runs, out: Path | None, seed, resamples, flips, focus, as_json) -> None:
    """Recompute the next-step tables, statistics and charts from stored answers (no inference).

    Re-parses and re-scores every stored answer against fringes recomputed from the
    catalogues in the graph, then prints the condition table with its overall row
    (paper 2, Table 3 shape) and bootstrap intervals, the adjacent contrasts of
    exact-set accuracy, recall and F1 with sign-flip p values and Holm adjustment,
    the model x condition table with ranks (Table 4 shape), per-domain figures and
    agreement between presentations (pooled too); writes every table as CSV,
    nextstep_conditions.png (Figure 1: exact-set accuracy and macro F1 per
    condition), nextstep_domains.png (Figure 2: catalogue x condition), with --focus
    nextstep_focus.png (Figure 3: the models on one catalogue and condition, right
    answers of all) and nextstep_fringe.png (kstp's: exact-set accuracy by fringe size).

    \b
    Examples:
      kstp report nextstep --run nextstep:fringe-oracle:cm_8f:0123456789ab
      kstp report nextstep --run RUN_A --run RUN_B --out results/nextstep --json
      kstp report nextstep --run RUN_A --run RUN_B --focus cm_8f:P0 --out results/nextstep
    """
    import pandas as pd

    from kstp.errors import ConfigError
    from kstp.evaluators import nextstep as benchmark
    from kstp.reports.plots import curves, heatmap, interval_bars, labelled_hbars
    if focus and out is None:
        raise click.UsageError("--focus draws nextstep_focus.png: give --out DIR for it")
    store = get_store(ctx)
    with status("re-scoring stored answers"):
        scored = pd.concat([benchmark.rescore(store, run) for run in runs], ignore_index=True)
    with status("bootstrap and sign-flip tests"):
        report = benchmark.aggregate(scored, seed, resamples, flips)
    tables = report.tables()
    figures = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            write_csv(table, out / f"nextstep_{name}.csv", index=False)
        predicted = scored["predicted"].map(lambda p: None if p is None else " ".join(sorted(p)))
        write_csv(scored.assign(predicted=predicted), out / "nextstep_cells.csv", index=False)
        heatmap(report.domains.set_index("catalogue"), out / "nextstep_domains.png",
                "Exact-set accuracy by domain and condition", vmin=0.0, vmax=1.0, label="exact-set accuracy")
        interval_bars(report.conditions.set_index("condition"),
                      {"exact-set accuracy": ("exact", "exact low", "exact high"),
                       "macro F1": ("f1", "f1 low", "f1 high")},
                      out / "nextstep_conditions.png", "By condition (95% bootstrap interval over states)")
        by_fringe = {c: g.rename(columns={"fringeSize": "threshold", "exact": "rate"})
                     for c, g in report.by_fringe.groupby("condition")}
        curves(by_fringe, out / "nextstep_fringe.png", "Exact-set accuracy by the size of the outer fringe",
               "outer-fringe size |T|", "exact-set accuracy")
        figures = ["nextstep_conditions.png", "nextstep_domains.png", "nextstep_fringe.png"]
    if focus:
        catalogue_id, _, condition = focus.rpartition(":")
        cell = report.model_domains[(report.model_domains["catalogue"] == catalogue_id)
                                    & (report.model_domains["condition"] == condition.upper())]
        if cell.empty:
            raise ConfigError(f"--focus {focus}: no answers for catalogue {catalogue_id!r} under condition "
                              f"{condition!r}; give CATALOGUE:CONDITION of a scored cell")
        cell = cell.sort_values(["exact", "model"], ascending=[False, True]).set_index("model")
        labelled_hbars(100 * cell["exact"], cell.apply(lambda r: f"{100 * r['exact']:.1f}% "
                                                                 f"({r['correct']}/{r['responses']})", axis=1),
                       out / "nextstep_focus.png", f"{catalogue_id} | {condition.upper()}", "Exact-set accuracy (%)")
        figures.append("nextstep_focus.png")
    if out is not None:
        (out / "nextstep_report.json").write_text(dumps(tables) + "\n")
    if as_json:
        emit(tables)
        return
    print_table(report.conditions, "By condition and overall (paper 2, Table 3 shape); states weigh equally")
    print_table(report.contrasts, "Adjacent contrasts: paired over states, sign-flip p, Holm-adjusted per measure")
    print_table(report.models, "Exact-set accuracy, model x condition, with ranks (Table 4 shape)")
    print_table(report.domain_summary, "Per domain, pooled over conditions and models")
    print_table(report.agreement, "Agreement between presentations (both answers valid; 'all' pools)")
    if out is not None:
        message(f"wrote {out}/nextstep_*.csv, {', '.join(figures)}")


@click.group()
def catalogue() -> None:
    """Task catalogues of the next-step benchmark: list, check and build them."""


@catalogue.command("list")
@json_option
def list_catalogues(as_json: bool) -> None:
    """List the shipped catalogues with their tasks, pairs, states and terminal states (paper 2, Table 1 shape).

    \b
    Example:
      kstp catalogue list
    """
    import pandas as pd

    from kstp.loaders import catalogues as catalogue_files
    rows = []
    for name, path in catalogue_files.shipped_catalogues().items():
        c = catalogue_files.read_catalogue(path)
        states, space = c.states(), c.space()
        rows.append({"id": name, "name": c.name, "tasks": len(c.tasks), "pairs": len(c.prerequisites),
                     "states": len(states), "terminal": sum(not space.outer_fringe(state) for state, _ in states),
                     "coverage": str(c.coverage.as_spec())})
    if as_json:
        emit(rows)
    else:
        print_table(pd.DataFrame(rows), "Shipped catalogues")


@catalogue.command()
@click.argument("name")
@json_option
def check(name: str, as_json: bool) -> None:
    """Validate a catalogue file (or shipped id) and list its states with their outer fringes.

    \b
    Examples:
      kstp catalogue check kstp/catalogues/cm_8f.yaml
      kstp catalogue check pks_cip --json
    """
    from kstp.loaders import catalogues as catalogue_files
    c = catalogue_files.resolve_catalogue(name)
    space = c.space()
    states = [{"state": sorted(s), "weight": w, "outerFringe": space.outer_fringe(s)} for s, w in c.states()]
    if as_json:
        emit({"id": c.id, "digest": c.digest(), "tasks": len(c.tasks), "states": states})
        return
    for row in states:
        click.echo(f"{{{', '.join(row['state'])}}}  weight {row['weight']}  outer fringe: "
                   f"{', '.join(row['outerFringe']) or '-'}")
    message(f"{c.id}: valid; {len(c.tasks)} tasks, {len(c.prerequisites)} direct pairs, {len(states)} states")


@catalogue.group()
def build() -> None:
    """Build a catalogue file from the graph."""


@build.command()
@click.option("--framework", required=True, help="Framework in the graph (e.g. ccss).")
@click.option("--code-prefix", help="Choose the concepts whose code starts with this (e.g. 8.F).")
@click.option("--cluster", help="Or choose the concepts of this cluster id (e.g. ccss:57).")
@click.option("--id", "catalogue_id", required=True, help="Catalogue id (no ':').")
@click.option("--name", required=True, help="Human-readable name.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="YAML file to write.")
@click.pass_context
def concepts(ctx, framework, code_prefix, cluster, catalogue_id, name, out) -> None:
    """Build a catalogue from a sub-curriculum: concepts by code prefix or cluster, direct prerequisites.

    \b
    Example:
      kstp catalogue build concepts --framework ccss --code-prefix 8.F --id cm_8f \\
          --name "Grade 8 Functions" --out cm_8f.yaml
    """
    from kstp.loaders import catalogues as catalogue_files
    c = catalogue_files.concepts_catalogue(get_store(ctx), framework, catalogue_id, name, code_prefix, cluster)
    catalogue_files.write_catalogue_file(c, out)
    message(f"wrote {out}: {len(c.tasks)} tasks, {len(c.prerequisites)} direct pairs, {len(c.states())} states")


@build.command()
@click.option("--dataset", required=True, help="Dataset in the graph with derived question prerequisites.")
@click.option("--items", help="Comma-separated local item ids (default: all).")
@click.option("--describe", default="{text}", show_default=True,
              help="Task description from the item's {text} and {id}.")
@click.option("--id", "catalogue_id", required=True, help="Catalogue id (no ':').")
@click.option("--name", required=True, help="Human-readable name.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="YAML file to write.")
@click.pass_context
def items(ctx, dataset, items, describe, catalogue_id, name, out) -> None:
    """Build a catalogue from items of a dataset with their derived question prerequisites.

    \b
    Example:
      kstp catalogue build items --dataset probability_pks --items b101,b102,b104,b105 \\
          --id pks_small --name "Probability" --out pks_small.yaml
    """
    from kstp.loaders import catalogues as catalogue_files
    chosen = [i.strip() for i in items.split(",") if i.strip()] if items else None
    c = catalogue_files.items_catalogue(get_store(ctx), dataset, catalogue_id, name, chosen, describe)
    catalogue_files.write_catalogue_file(c, out)
    message(f"wrote {out}: {len(c.tasks)} tasks, {len(c.prerequisites)} direct pairs, {len(c.states())} states")
