"""``kstp evaluate koc``: knowledge overlap between models and human ability groups (paper 1, NB3)."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import (
    dumps,
    emit,
    get_store,
    json_option,
    message,
    out_option,
    print_table,
    refuse_together,
    status,
)
from kstp.csvcells import write_csv

__all__ = ["koc"]

#: Which questions KOC counts (kstp.evaluators.koc.QUESTION_SETS; named here so --help imports no evaluator).
_QUESTION_SETS = ("annotated", "all")


def _floats(text: str, option: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} must be comma-separated numbers, e.g. 0,0.3,0.6,0.9",
                                 param_hint=option) from None


def _short(learner_id: str, dataset: str) -> str:
    return learner_id.removeprefix(f"{dataset}:")


@click.command("koc")
@click.option("--dataset", required=True, help="Dataset whose questions the learners answered.")
@click.option("--learner", "learners", multiple=True,
              help="Learner id to compare (repeatable; default: every model that answered the dataset).")
@click.option("--cuts", default="0,0.3,0.6,0.9", show_default=True,
              help="Rank shares bounding the human ability groups, weakest first (one more than --groups).")
@click.option("--groups", "group_names", default="low,medium,high", show_default=True,
              help="Names of the ability groups, weakest first.")
@click.option("--threshold", type=click.FloatRange(0, 1, max_open=True), default=0.5, show_default=True,
              help="A question is in a group's state when the group's mean accuracy on it exceeds this.")
@click.option("--no-groups", is_flag=True, help="Compare only the --learner ids / models, without human groups.")
@click.option("--questions", type=click.Choice(_QUESTION_SETS), default="annotated", show_default=True,
              help="Questions counted: those with a concept (paper 1, Appendix B) or all of the dataset.")
@out_option("koc_<dataset>.csv/.json, koc_norm_<dataset>.csv and the two heatmap PNGs")
@json_option
@click.pass_context
def koc(ctx, dataset: str, learners: tuple[str, ...], cuts: str, group_names: str, threshold: float,
        no_groups: bool, questions: str, out: Path | None, as_json: bool) -> None:
    """Compute the knowledge overlap (KOC, KOC_norm) of every pair of learners (paper 1, Eq. 6-7).

    Groups the dataset's human learners by accuracy rank (stored as Learner nodes of
    kind group, with ANSWERED edges), then compares their knowledge states with the
    models' (or --learner ids) on the questions each pair shares. Questions without
    a concept are left out of every count unless --questions all (Appendix B). Writes
    both matrices as CSV and JSON and as heatmaps in the layout of paper 1, Figures 4
    and 5 (models upper left, humans lower right, each weaker to stronger). Undefined
    cells (an empty state, p_max = 1) are empty / null.

    \b
    Examples:
      kstp evaluate koc --dataset frcsub --out results/
      kstp evaluate koc --dataset xes3g5m --cuts 0,0.25,0.5,0.75 --groups q1,q2,q3 --json
      kstp evaluate koc --dataset frcsub --no-groups --learner frcsub:Subject001 --learner frcsub:Subject002
    """
    refuse_together(ctx, "no_groups", ("group_names", "cuts", "threshold"),
                    "the groups, their cuts and threshold describe the human groups that --no-groups leaves out")
    from kstp.evaluators import koc as koc_evaluator
    from kstp.reports.plots import heatmap
    cut_points = _floats(cuts, "--cuts")
    names = tuple(n.strip() for n in group_names.split(",") if n.strip())
    store = get_store(ctx)
    with status(f"knowledge overlap on {dataset}"):
        result = koc_evaluator.evaluate(store, dataset, list(learners) or None, groups=not no_groups,
                                        cuts=cut_points, names=names, threshold=threshold, questions=questions)
    labels = [_short(i, dataset) for i in result.learners.index]
    raw = result.koc.set_axis(labels, axis=0).set_axis(labels, axis=1)
    norm = result.koc_norm.set_axis(labels, axis=0).set_axis(labels, axis=1)
    learner_rows = result.learners.reset_index()[["learnerId", "kind", "block", "answered", "correct", "accuracy",
                                                  "rankBy"]]
    payload = {"dataset": dataset, "evaluator": "koc", "version": koc_evaluator.VERSION,
               "threshold": threshold, "cuts": list(cut_points), "questions": questions,
               "questionsCounted": result.counted, "learners": learner_rows,
               "groups": result.groups, "koc": result.koc.to_dict("index"), "kocNorm": result.koc_norm.to_dict("index"),
               "pairs": result.pairs}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_csv(raw, out / f"koc_{dataset}.csv")
        write_csv(norm, out / f"koc_norm_{dataset}.csv")
        (out / f"koc_{dataset}.json").write_text(dumps(payload) + "\n")
        heatmap(raw, out / f"koc_{dataset}.png", f"KOC on {dataset} (paper 1, Figure 4)", result.blocks, vmin=0.0,
                label="KOC")
        heatmap(norm, out / f"koc_norm_{dataset}.png", f"KOC_norm on {dataset} (paper 1, Figure 5)", result.blocks,
                vmin=None, cmap="RdBu_r", center=0.0, label="KOC_norm")
    if as_json:
        emit(payload)
        return
    if len(result.groups):
        print_table(result.groups.assign(learnerId=[_short(i, dataset) for i in result.groups["learnerId"]]),
                    f"Human ability groups of {dataset} (state: mean accuracy > {threshold})")
    print_table(raw.reset_index(names="KOC"), "KOC (paper 1, Eq. 6)")
    print_table(norm.reset_index(names="KOC_norm"), "KOC_norm (paper 1, Eq. 7)")
    if out is not None:
        message(f"wrote {out}/koc_{dataset}.csv, koc_norm_{dataset}.csv, koc_{dataset}.json and two heatmaps")
