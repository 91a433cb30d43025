"""``kstp runs``: list, show, export, compare and delete the evaluation runs stored in the graph."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kstp.cli.output import emit, get_store, json_option, message, print_lines, print_table, table_width
from kstp.csvcells import write_csv

__all__ = ["runs"]

#: ``kstp runs export --format``: the samples file formats (kstp.inference.runlog.EXPORT_FORMATS; named here so
#: --help imports no pandas).
_EXPORT_FORMATS = ("csv", "parquet", "jsonl")


@click.group()
def runs() -> None:
    """List, show, export, compare and delete evaluation runs (model answers, RQEval, DAG-MATH, BLIM ...)."""


def _text(value) -> str:
    """A cell as the table shows it: blank where missing, a float to three places."""
    import pandas as pd

    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _fits(table, width: int) -> bool:
    """Whether ``table`` shows every cell whole, on one line, within ``width`` characters."""
    natural = [max([len(str(c)), *(len(_text(v)) for v in table[c])]) for c in table.columns]
    return sum(natural) + 3 * len(natural) + 1 <= width


def _print_runs(table) -> None:
    """The runs as a table where it fits; else one run per two lines, its id whole on the first."""
    if _fits(table, table_width()):
        print_table(table, "Runs")
        return
    print_lines(f"Runs ({len(table)}, newest first)")
    for row in table.to_dict("records"):
        done, planned, value = _text(row["done"]), _text(row["planned"]), _text(row["value"])
        samples = f"{done}/{planned} samples" if planned else f"{done} samples" if done else ""
        parts = [_text(row["status"]), samples, f"{row['figure']} {value}" if value else "",
                 _text(row["created"])[:16].replace("T", " "), _text(row["endpoint"])]
        click.echo(row["runId"])
        print_lines("    " + " · ".join(p for p in parts if p))


@runs.command("list")
@click.option("--evaluator", help="Only runs of this evaluator (answers, rqeval, dagmath, blim, ...).")
@click.option("--model", help="Only runs of this model.")
@click.option("--dataset", help="Only runs on this dataset.")
@json_option
@click.pass_context
def list_(ctx: click.Context, evaluator: str | None, model: str | None, dataset: str | None, as_json: bool) -> None:
    """List the runs, newest first, with samples done / planned and the headline figure.

    A table where it fits the terminal; otherwise each run on two lines, its id whole
    on the first (ids are what the other runs commands take).

    \b
    Examples:
      kstp runs list
      kstp runs list --evaluator answers --dataset frcsub --json
    """
    from kstp.graph.manage import list_runs

    table = list_runs(get_store(ctx), evaluator, model, dataset)
    if as_json:
        emit(table)
    elif table.empty:
        message("no runs in the graph" + (" match" if evaluator or model or dataset else ""))
    else:
        _print_runs(table)


def _flat(record: dict, prefix: str = "") -> dict:
    """Nested configuration as dotted keys (``sampling.temperature``), lists as JSON text.

    >>> _flat({"sampling": {"seed": 42}, "stop": ["a"]})
    {'sampling.seed': 42, 'stop': '["a"]'}
    """
    out = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = json.dumps(value) if isinstance(value, list) else value
    return out


def _show_log(path: Path, as_json: bool) -> None:
    """``runs show`` of a log file: its configuration and figures recomputed from its samples, no graph."""
    import pandas as pd

    from kstp.inference.runlog import read_run_log

    log = read_run_log(path)
    figures = log.statistics() if log.samples is not None else None
    if as_json:
        held = {k: v for k, v in log.summary.items() if k not in ("config", "environment", "session")}
        emit({"log": str(path), "config": log.config, "environment": log.summary.get("environment"),
              "session": log.summary.get("session"), "recomputed": figures, "figures": held})
        return
    config = _flat({**log.config, "environment": log.summary.get("environment") or {}})
    print_table(pd.DataFrame({"property": list(config), "value": [str(v) for v in config.values()]}),
                f"Run {log.summary['runId']} (from {path.name})")
    if figures is None:
        held = {k: v for k, v in _flat(log.summary).items() if not k.startswith(("config.", "environment.",
                                                                                  "session.")) and v is not None}
        print_table(pd.DataFrame({"figure": list(held), "value": pd.Series(list(held.values()), dtype=object)}),
                    "Figures as the log holds them")
        message(f"{path.name}: no samples beside it (--log-samples): the figures above are the log's, not recomputed")
        return
    shown = {k: v for k, v in figures.items() if k != "estimators"}
    print_table(pd.DataFrame({"figure": list(shown), "value": pd.Series(list(shown.values()), dtype=object)}),
                "Figures recomputed from the samples")


@runs.command()
@click.argument("run_id", metavar="ID")
@json_option
@click.pass_context
def show(ctx: click.Context, run_id: str, as_json: bool) -> None:
    """Print a run's configuration (model, endpoint, sampling, seed, prompt template, versions) and summary.

    ID is a run id, or a run's log (the <run>.json that --output-path wrote): then the
    graph is not opened, and the figures are recomputed from the samples beside it.

    \b
    Examples:
      kstp runs show 'answers:smollm2:frcsub:3f2a9c1d0b7e'
      kstp runs show out/answers_*_frcsub_*.json
    """
    if run_id.endswith(".json") and Path(run_id).is_file():
        _show_log(Path(run_id), as_json)
        return
    import pandas as pd

    from kstp.graph.manage import run_footprint
    from kstp.inference.runlog import run_header

    store = get_store(ctx)
    footprint = run_footprint(store, run_id)  # refuses an unknown id, naming close ones
    record = store.nodes("Run", [run_id]).iloc[0]
    run = {key: value for key, value in record.items() if not pd.isna(value)}
    for key in ("config", "sampling", "promptTemplate", "figures"):
        if key in run:
            run[key] = json.loads(run[key])
    header = run_header(store, run_id)
    result = {"run": run, "config": header, "holds": footprint.counts()}
    if as_json:
        emit(result)
        return
    figures = {k: v for k, v in run.items() if k not in (*header, "id", "config", "sampling", "promptTemplate",
                                                           "gitHash", "backend", "figures")}
    figures.update({k: v for k, v in _flat(run.get("figures") or {}).items()  # pass@k, maj@k, estimators ...
                    if v is not None and k not in figures})
    shown = {k: v for k, v in _flat(header).items() if v is not None and v != ""}  # --json keeps the blanks
    print_table(pd.DataFrame({"property": list(shown), "value": [str(v) for v in shown.values()]}), f"Run {run_id}")
    if figures:
        print_table(pd.DataFrame({"figure": list(figures), "value": pd.Series(list(figures.values()), dtype=object)}),
                    "Figures")
    print_table(pd.DataFrame({"part": list(result["holds"]), "count": list(result["holds"].values())}), "Holds")


@runs.command()
@click.argument("run_id", metavar="ID")
@click.option("--format", "fmt", type=click.Choice(_EXPORT_FORMATS), default="csv", show_default=True,
              help="The samples file's format (parquet keeps the dtypes; it needs --out).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for <run>.samples.<format> (without --out csv and jsonl go to stdout).")
@click.pass_context
def export(ctx: click.Context, run_id: str, fmt: str, out: Path | None) -> None:
    """Export a run's samples, one row each: question, gold, prompt, reply, extracted answer, verdict, tokens, latency.

    The columns and their pandas dtypes are kstp.inference.runlog.SAMPLE_DTYPES
    (README, Python API); kstp.inference.runlog.read_samples reads any of the three
    formats back with them.

    \b
    Examples:
      kstp runs export 'answers:smollm2:frcsub:3f2a9c1d0b7e' --format parquet --out exports/
      kstp runs export 'answers:smollm2:frcsub:3f2a9c1d0b7e' --format jsonl
    """
    from kstp.graph.manage import run_footprint
    from kstp.inference.runlog import export_samples, log_stem, run_samples

    if fmt == "parquet" and out is None:
        raise click.UsageError("parquet is binary: name a folder for it with --out")
    store = get_store(ctx)
    run_footprint(store, run_id)  # refuses an unknown id, naming close ones
    samples = run_samples(store, run_id)
    if out is None:
        if fmt == "csv":
            click.echo(write_csv(samples, index=False), nl=False)
        else:
            from kstp.inference.runlog import sample_records

            for record in sample_records(samples):
                click.echo(json.dumps(record, ensure_ascii=False))
        return
    path = export_samples(samples, out / f"{log_stem(run_id)}.samples.{fmt}", fmt)
    message(f"wrote {len(samples):,} samples to {path}")


@runs.command()
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@json_option
@click.pass_context
def diff(ctx: click.Context, first: str, second: str, as_json: bool) -> None:
    """Compare two runs on the questions both answered: flipped verdicts, accuracy and PSR, McNemar's test.

    Each question's primary sample (sample 0) is the run's verdict. McNemar's test
    asks whether the two accuracies differ on the paired questions: exact (binomial)
    below 25 discordant pairs, else chi-square with continuity correction
    (statsmodels). PSR is each run's over its own answers and the dataset's stored
    question prerequisites.

    \b
    Examples:
      kstp runs diff 'answers:smollm2:frcsub:3f2a9c1d0b7e' 'answers:smollm2:frcsub:9b8c7d6e5f4a'
      kstp runs diff 'answers:smollm2:frcsub:3f2a9c1d0b7e' 'answers:smollm2:frcsub:9b8c7d6e5f4a' --json
    """
    import pandas as pd

    from kstp.evaluators.rundiff import diff_runs

    result = diff_runs(get_store(ctx), first, second)
    if as_json:
        emit(result.summary())
        return
    print_table(result.runs, "Runs (accuracy over each run's questions; paired: over those both answered)")
    test = result.mcnemar
    print_table(pd.DataFrame([test]), "McNemar's test on the paired verdicts")
    if result.flipped.empty:
        message(f"no verdict flipped on the {test['paired']} paired questions")
    else:
        print_table(result.flipped.drop(columns=["first", "second"]),
                    f"Flipped ({len(result.flipped)} of {test['paired']}; fixed: wrong in A, right in B)")


@runs.command()
@click.argument("run_id", metavar="ID")
@click.option("--dry-run", is_flag=True, help="Print what would be deleted, and delete nothing.")
@json_option
@click.pass_context
def delete(ctx: click.Context, run_id: str, dry_run: bool, as_json: bool) -> None:
    """Delete a run: its Responses, CoT steps, ANSWERED edges, outcome properties, lone model learner.

    Responses that another run also holds stay, and so do human learners and questions.

    \b
    Examples:
      kstp runs delete 'answers:smollm2:frcsub:3f2a9c1d0b7e' --dry-run
      kstp runs delete 'answers:smollm2:frcsub:3f2a9c1d0b7e'
    """
    from kstp.cli.db import report_deletion
    from kstp.graph.manage import delete_run, run_footprint

    store = get_store(ctx)
    counts = (run_footprint(store, run_id) if dry_run else delete_run(store, run_id)).counts()
    report_deletion("run", run_id, counts, dry_run, as_json)
