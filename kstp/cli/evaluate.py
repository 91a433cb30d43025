"""``kstp evaluate``: compute a method's metrics and write them back onto the graph."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import (
    SEED,
    dumps,
    emit,
    get_store,
    json_option,
    message,
    out_option,
    print_table,
    progress_bar,
    status,
    with_rate,
)
from kstp.csvcells import write_csv
from kstp.errors import InputError

__all__ = ["evaluate", "psr_summaries", "print_psr"]

#: The PSR denominators and question subsets (kstp.evaluators.psr.DENOMINATORS, SUBSETS; named here so --help
#: imports no evaluator).
_DENOMINATORS = ("release", "paper")
_SUBSETS = ("full", "verified")
_ACCURACY = ("answered", "annotated")  # kstp.evaluators.psr.ACCURACY


def _resamples(ctx, param, value: int) -> int:
    """--bootstrap: none (0) or at least two resamples (one has no spread to read an interval from)."""
    if value == 1:
        raise click.BadParameter("give 0 (no intervals) or at least 2 resamples, not 1")
    return value


@click.group()
def evaluate() -> None:
    """Compute metrics over the graph and write them back."""


@evaluate.command()
@click.option("--dataset", "datasets", multiple=True,
              help="Dataset to evaluate (repeatable; default: every dataset with answers).")
@out_option("psr_summary.csv/.json (rows of datasets not evaluated now are kept), psr_learners_<dataset>.csv "
            "and psr_distribution.png")
@click.option("--denominator", type=click.Choice(_DENOMINATORS), default="release", show_default=True,
              help="release: only attempted prerequisites count (the authors' code, Table 2); "
              "paper: all of Pre(q), as Eq. 2 is printed.")
@click.option("--min-prerequisites", type=click.IntRange(min=1), default=5, show_default=True,
              help="Denominator a (learner, question) pair needs to enter the distribution (5: the release's "
              "filter; the paper's text has none: 1).")
@click.option("--unannotated", type=click.Choice(("exclude", "include")), default="exclude", show_default=True,
              help="Questions without a concept: left out of PSR (Appendix B), or counted (Eq. 1 gives them no "
              "prerequisites either way); accuracy is --accuracy's.")
@click.option("--accuracy", type=click.Choice(_ACCURACY), default="answered", show_default=True,
              help="answered: accuracy over every question a learner answered (the release's eval_acc); "
              "annotated: over the questions with a concept only (Appendix B). Recorded as accuracyQuestions; "
              "the --groups ability groups rank by it.")
@click.option("--subset", type=click.Choice(_SUBSETS), default="full", show_default=True,
              help="full: every annotated question (Table 2); verified: PSR over the prerequisites that only the "
              "concept links a person checked (ASSESSES.verified) give, accuracy over the full set (Table 3).")
@click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True, callback=_resamples,
              help="Resamples of the learners for 95% confidence intervals of accuracy, micro and macro PSR "
              "(accuracyLow/High, psrMicroLow/High, psrMacroLow/High); 0: none, else at least 2.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of --bootstrap.")
@click.option("--groups", is_flag=True, help="Also a row per human ability group: learners ranked by accuracy, cut "
              "at 0/30/60/90 % into low, medium and high (the top tenth in none), as the knowledge-overlap groups "
              "of paper 1, §5.3.")
@click.option("--per-question", is_flag=True, help="Print PSR per target question instead (over the human learners "
              "who answered it correctly; the questions whose prerequisites break most first); with --out also "
              "psr_questions_<dataset>.csv.")
@click.option("--no-write", is_flag=True, help="Compute and print; write nothing to the graph (which is opened "
              "read-only, so this works on a read-only disk or beside another process).")
@json_option
@click.pass_context
def psr(ctx, datasets: tuple[str, ...], out: Path | None, denominator: str, min_prerequisites: int, unannotated: str,
        accuracy: str, subset: str, bootstrap: int, seed: int, groups: bool, per_question: bool, no_write: bool,
        as_json: bool) -> None:
    """Compute accuracy and PSR (micro, macro, distribution) of every learner (paper 1, Eq. 2-4).

    Needs the dataset's question prerequisites (kstp derive question-prerequisites).
    Writes accuracy, psrMicro and psrMacro on each Learner node (not with --no-write) and prints, per
    dataset, one row for the human learners and one per model, in the shape of paper
    1 Table 2, with bootstrap confidence intervals over the learners (a model, one
    learner, has none); --groups adds the human ability groups, --per-question prints
    PSR per target question.

    \b
    Examples:
      kstp evaluate psr --dataset frcsub --out results/
      kstp evaluate psr --denominator paper --min-prerequisites 1 --json
      kstp evaluate psr --dataset xes3g5m --subset verified
      kstp evaluate psr --dataset frcsub --groups --bootstrap 2000 --seed 7 --format csv
      kstp evaluate psr --dataset frcsub --per-question --out results/
      kstp evaluate psr --dataset frcsub --no-write --json
      kstp evaluate psr --dataset frcsub --accuracy annotated
    """
    questions: list = []
    summaries = psr_summaries(ctx, datasets, out, denominator, min_prerequisites, unannotated, subset,
                              bootstrap=bootstrap, seed=seed, groups=groups,
                              questions=questions if per_question else None, write_back=not no_write,
                              accuracy=accuracy)
    if per_question:
        import pandas as pd

        table = pd.concat(questions, ignore_index=True) if questions else pd.DataFrame()
        if as_json:
            emit(table)
        else:
            print_table(_question_rows(table), "PSR per target question over the human learners who answered it "
                                               "correctly (lowest macro PSR first)")
        return
    if as_json:
        emit(summaries)
    else:
        print_psr(summaries, denominator, min_prerequisites, subset, out)


def _question_rows(table):
    """The per-question table as printed: without the dataset column where each question id names its
    dataset (``frcsub:q3``), and the last header shorter, in words that wrap, so that seven columns of numbers fit 80
    characters in one table (JSON and CSV keep every column under its own name)."""
    if not table.empty and all(str(q).startswith(f"{d}:") for d, q in zip(table["dataset"], table["questionId"],
                                                                          strict=True)):
        table = table.drop(columns="dataset")
    return table.rename(columns={"prerequisitesPerLearner": "prereqs per learner"})


def psr_summaries(ctx: click.Context, datasets: tuple[str, ...], out: Path | None, denominator: str,
                  min_prerequisites: int, unannotated: str, subset: str, bootstrap: int = 0, seed: int = 0,
                  groups: bool = False, questions: list | None = None, write_back: bool = True,
                  accuracy: str = "answered") -> list[dict]:
    """What ``kstp evaluate psr`` computes, writes back (unless not ``write_back``) and (with ``out``) writes to
    files: its summary rows.

    ``bootstrap``, ``seed`` and ``groups`` go to :func:`kstp.evaluators.psr.summarize`;
    a ``questions`` list receives each dataset's per-question table
    (:func:`kstp.evaluators.psr.question_table`, with a ``dataset`` column), written to
    ``psr_questions_<dataset>.csv`` too with ``out``. ``accuracy`` is
    :func:`kstp.evaluators.psr.evaluate_dataset`'s (every answered question by default). The chart is drawn by a
    :class:`~kstp.reports.worker.FigureWorker`, which imports matplotlib on the other
    core while the graph is read and scored.
    """
    from kstp.reports.worker import FigureWorker

    worker = FigureWorker() if out is not None else None
    try:
        return _psr_summaries(ctx, datasets, out, denominator, min_prerequisites, unannotated, subset, worker,
                              bootstrap, seed, groups, questions, write_back, accuracy)
    finally:
        if worker is not None:
            worker.close()


def _psr_summaries(ctx: click.Context, datasets: tuple[str, ...], out: Path | None, denominator: str,
                   min_prerequisites: int, unannotated: str, subset: str, worker, bootstrap: int = 0, seed: int = 0,
                   groups: bool = False, questions: list | None = None, write_back: bool = True,
                   accuracy: str = "answered") -> list[dict]:
    import pandas as pd

    from kstp.evaluators import psr as psr_evaluator

    store = get_store(ctx)
    datasets = datasets or tuple(r["datasetId"] for r in store.run("datasets") if r["answers"])
    if not datasets:
        message("no dataset with learner answers in the graph; ingest responses first")
        ctx.exit(1)
    summaries, skipped = [], []
    for dataset in datasets:
        with status(f"PSR of {dataset}"):
            result = psr_evaluator.evaluate_dataset(store, dataset, min_prerequisites, write_back=write_back,
                                                    denominator=denominator,
                                                    exclude_unannotated=unannotated == "exclude", subset=subset,
                                                    accuracy=accuracy)
        if result.learners.empty:
            skipped.append(f"{dataset}: no learner answered " + ("an annotated question (one with a concept: "
                           "--accuracy annotated counts only those; --accuracy answered counts every answered one)"
                           if accuracy == "annotated" else "its questions"))
            message(f"{skipped[-1]}; skipped")
            continue
        if result.learners["psrMicro"].notna().sum() == 0:
            message(f"{dataset}: no learner has a scored question; derive question prerequisites first "
                    f"(kstp derive question-prerequisites --dataset {dataset} --rule strict|reflexive: reflexive "
                    "where questions share their concepts, as in a skill map)")
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            write_csv(result.learners.sort_index(), out / f"psr_learners_{dataset}.csv")  # one order on every engine
        if questions is not None:
            table = psr_evaluator.question_table(result)
            table.insert(0, "dataset", dataset)
            questions.append(table)
            if out is not None:
                write_csv(table, out / f"psr_questions_{dataset}.csv", index=False)
        if bootstrap:
            with progress_bar(f"bootstrap of {dataset}") as update:
                summaries.extend(result.summary(groups, bootstrap, seed, progress=with_rate(update, "resamples")))
        else:
            summaries.extend(result.summary(groups))
    if not summaries:
        if accuracy == "annotated" and skipped:
            raise InputError("; ".join(skipped))
        raise InputError(f"no learner answers in {', '.join(datasets)}; ingest responses first (kstp ingest responses)")
    if out is not None:
        buckets = [f"psr {b}" for b in psr_evaluator.BUCKETS]
        table = _merged_summary(out / "psr_summary.json", summaries)
        write_csv(table, out / "psr_summary.csv", index=False)
        (out / "psr_summary.json").write_text(dumps(table) + "\n")
        if "group" in table:  # the chart keeps paper 1's rows: all human learners, each model
            table = table[table["group"].isna()]
        labels = (table["dataset"]
                  + pd.Series(" (verified)", index=table.index).where(table["subset"] == "verified", "")
                  + (" / " + table["learner"]).where(table["learner"] != "human learners", ""))
        shares = table.set_index(labels)[buckets]
        shares.columns = list(psr_evaluator.BUCKETS)
        worker.draw("grouped_bars", shares, out / "psr_distribution.png", "Question-level PSR distribution",
                    "share of (learner, question) pairs")
    return summaries


def print_psr(summaries: list[dict], denominator: str, min_prerequisites: int, subset: str,
              out: Path | None) -> None:
    """The table of :func:`psr_summaries`' rows (paper 1, Table 2 or 3 shape), and where files went."""
    import pandas as pd

    from kstp.evaluators.psr import BUCKETS
    buckets = [f"psr {b}" for b in BUCKETS]
    now = pd.DataFrame(summaries)
    filtered = "attempted prerequisites" if denominator == "release" else "prerequisites"
    intervals = []
    for figure in ("psrMicro", "psrMacro"):  # "0.702-0.741": the 95% interval as one cell
        if f"{figure}Low" in now:
            now[f"{figure} CI"] = [f"{lo:.3f}-{hi:.3f}" if lo is not None and hi is not None and lo == lo else ""
                                   for lo, hi in zip(now[f"{figure}Low"], now[f"{figure}High"], strict=True)]
            intervals.append(f"{figure} CI")
    print_table(now[["dataset", "learner", "learners", "accuracy", "psrMicro", "psrMacro", *intervals, *buckets]],
                f"Accuracy and PSR (paper 1, {'Table 3' if subset == 'verified' else 'Table 2'} shape; "
                f"{subset} subset); denominator: {denominator}; distribution over "
                f"pairs with >= {min_prerequisites} {filtered}"
                f"{' (the release filter)' if min_prerequisites == 5 else ''}")
    message(f"accuracy: over {_accuracy_words(now)}")
    if intervals:
        level = now["ciLevel"].dropna().iloc[0] if "ciLevel" in now and now["ciLevel"].notna().any() else 0.95
        message(f"CI: {level:.0%} percentile intervals over {int(now['bootstrapSamples'].max())} resamples of the "
                "learners (none for a single learner)")
    if out is not None:
        message(f"wrote {out}/psr_summary.csv, psr_summary.json, psr_distribution.png and per-learner CSVs")


def _accuracy_words(rows) -> str:
    """How the rows' accuracy counts, in words (rows from before the option: annotated questions)."""
    kind = rows["accuracyQuestions"].dropna().iloc[0] if "accuracyQuestions" in rows and \
        rows["accuracyQuestions"].notna().any() else "annotated"
    return {"answered": "every answered question (the release's eval_acc; --accuracy annotated: Appendix B)",
            "annotated": "the annotated questions (Appendix B)"}.get(kind, kind)


def _merged_summary(path: Path, rows: list[dict]):
    """The summary rows of this run, after the earlier rows at ``path`` of datasets not evaluated now."""
    import json

    import pandas as pd

    now = pd.DataFrame(rows)
    try:
        earlier = pd.DataFrame(json.loads(path.read_text())) if path.exists() else pd.DataFrame()
    except (ValueError, OSError) as exc:
        raise InputError(f"{path}: not a kstp PSR summary ({exc}); move it away or choose another --out") from None
    if earlier.empty or "dataset" not in earlier:
        return now
    # A row is replaced by one of the same dataset and subset (files from before subsets were all "full")
    subset = earlier["subset"].fillna("full") if "subset" in earlier else pd.Series("full", index=earlier.index)
    kept = earlier[~pd.MultiIndex.from_arrays([earlier["dataset"], subset]).isin(
        pd.MultiIndex.from_frame(now[["dataset", "subset"]]))]
    return pd.concat([kept, now], ignore_index=True) if len(kept) else now
