"""``kstp derive``: materialise derived relations on the graph."""

from __future__ import annotations

import click

from kstp.cli.output import emit, get_store, json_option, print_table, status

__all__ = ["derive"]

#: Eq. 1's rules (kstp.graph.structures.RULES; named here so --help imports no numerics).
_RULES = ("strict", "reflexive")


@click.group()
def derive() -> None:
    """Materialise derived relations (question prerequisites)."""


@derive.command("question-prerequisites")
@click.option("--dataset", "datasets", multiple=True,
              help="Dataset to derive for (repeatable; default: every dataset in the graph).")
@click.option("--rule", type=click.Choice(_RULES), default="strict", show_default=True,
              help="strict: a proper, transitive concept prerequisite; reflexive: the same concept counts too "
              "(for a skill map: concepts(q_i) within concepts(q_j)).")
@json_option
@click.pass_context
def question_prerequisites(ctx, datasets: tuple[str, ...], rule: str, as_json: bool) -> None:
    """Derive question prerequisites from concept prerequisites (paper 1, Eq. 1).

    q_i becomes a prerequisite of q_j when every concept of q_i is a prerequisite of
    some concept of q_j. Replaces the dataset's earlier derived edges; questions
    without concepts take no part.

    \b
    Examples:
      kstp derive question-prerequisites --dataset xes3g5m
      kstp derive question-prerequisites --dataset frcsub --rule reflexive --json
    """
    import pandas as pd

    from kstp.graph.structures import derive_question_prerequisites

    store = get_store(ctx)
    datasets = datasets or tuple(r["datasetId"] for r in store.run("datasets"))
    reports = []
    for dataset in datasets:
        with status(f"deriving question prerequisites of {dataset} ({rule})"):
            report = derive_question_prerequisites(store, dataset, rule)
        reports.append({"dataset": dataset, "rule": rule, "questions": report.questions,
                        "questionsWithConcepts": report.questions_with_concepts, "edges": report.edges,
                        "meanPerQuestion": report.mean_per_question})
    if as_json:
        emit(reports)
    else:
        print_table(pd.DataFrame(reports), "Question prerequisites (Eq. 1)", digits=2)
