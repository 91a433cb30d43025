"""``kstp evaluate``: compute a method's metrics and write them back onto the graph."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import dumps, emit, get_store, json_option, message, out_option, print_table, status
from kstp.errors import InputError

__all__ = ["evaluate", "psr_summaries", "print_psr"]

#: The PSR denominators and question subsets (kstp.evaluators.psr.DENOMINATORS, SUBSETS; named here so --help
#: imports no evaluator).
_DENOMINATORS = ("release", "paper")
_SUBSETS = ("full", "verified")


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
              help="Questions without a concept: left out of accuracy and PSR (Appendix B), or counted.")
@click.option("--subset", type=click.Choice(_SUBSETS), default="full", show_default=True,
              help="full: every annotated question (Table 2); verified: PSR over the prerequisites that only the "
              "concept links a person checked (ASSESSES.verified) give, accuracy over the full set (Table 3).")
@json_option
@click.pass_context
def psr(ctx, datasets: tuple[str, ...], out: Path | None, denominator: str, min_prerequisites: int, unannotated: str,
        subset: str, as_json: bool) -> None:
    """Compute accuracy and PSR (micro, macro, distribution) of every learner (paper 1, Eq. 2-4).

    Needs the dataset's question prerequisites (kstp derive question-prerequisites).
    Writes accuracy, psrMicro and psrMacro on each Learner node and prints, per
    dataset, one row for the human learners and one per model, in the shape of paper
    1 Table 2.

    \b
    Examples:
      kstp evaluate psr --dataset frcsub --out results/
      kstp evaluate psr --denominator paper --min-prerequisites 1 --json
      kstp evaluate psr --dataset xes3g5m --subset verified
    """
    summaries = psr_summaries(ctx, datasets, out, denominator, min_prerequisites, unannotated, subset)
    if as_json:
        emit(summaries)
    else:
        print_psr(summaries, denominator, min_prerequisites, subset, out)


def psr_summaries(ctx: click.Context, datasets: tuple[str, ...], out: Path | None, denominator: str,
                  min_prerequisites: int, unannotated: str, subset: str) -> list[dict]:
    """What ``kstp evaluate psr`` computes, writes back and (with ``out``) writes to files: its summary rows.

    The chart is drawn by a :class:`~kstp.reports.worker.FigureWorker`, which imports
    matplotlib on the other core while the graph is read and scored.
    """
    from kstp.reports.worker import FigureWorker

    worker = FigureWorker() if out is not None else None
    try:
        return _psr_summaries(ctx, datasets, out, denominator, min_prerequisites, unannotated, subset, worker)
    finally:
        if worker is not None:
            worker.close()


def _psr_summaries(ctx: click.Context, datasets: tuple[str, ...], out: Path | None, denominator: str,
                   min_prerequisites: int, unannotated: str, subset: str, worker) -> list[dict]:
    import pandas as pd

    from kstp.evaluators import psr as psr_evaluator

    store = get_store(ctx)
    datasets = datasets or tuple(r["datasetId"] for r in store.run("datasets") if r["answers"])
    if not datasets:
        message("no dataset with learner answers in the graph; ingest responses first")
        ctx.exit(1)
    summaries = []
    for dataset in datasets:
        with status(f"PSR of {dataset}"):
            result = psr_evaluator.evaluate_dataset(store, dataset, min_prerequisites, denominator=denominator,
                                                    exclude_unannotated=unannotated == "exclude", subset=subset)
        if result.learners.empty:
            message(f"{dataset}: no learner answered its questions; skipped")
            continue
        if result.learners["psrMicro"].notna().sum() == 0:
            message(f"{dataset}: no learner has a scored question; "
                    "derive question prerequisites first (kstp derive question-prerequisites)")
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            result.learners.sort_index().to_csv(out / f"psr_learners_{dataset}.csv")  # one order on every engine
        summaries.extend(result.summary())
    if not summaries:
        raise InputError(f"no learner answers in {', '.join(datasets)}; ingest responses first (kstp ingest responses)")
    if out is not None:
        buckets = [f"psr {b}" for b in psr_evaluator.BUCKETS]
        table = _merged_summary(out / "psr_summary.json", summaries)
        table.to_csv(out / "psr_summary.csv", index=False)
        (out / "psr_summary.json").write_text(dumps(table) + "\n")
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
    print_table(now[["dataset", "learner", "learners", "accuracy", "psrMicro", "psrMacro", *buckets]],
                f"Accuracy and PSR (paper 1, {'Table 3' if subset == 'verified' else 'Table 2'} shape; "
                f"{subset} subset); denominator: {denominator}; distribution over "
                f"pairs with >= {min_prerequisites} {filtered}"
                f"{' (the release filter)' if min_prerequisites == 5 else ''}")
    if out is not None:
        message(f"wrote {out}/psr_summary.csv, psr_summary.json, psr_distribution.png and per-learner CSVs")


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
