"""``kstp derive``: materialise derived relations on the graph."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import (
    emit,
    get_store,
    graph_format_option,
    message,
    out_option,
    output_format,
    print_table,
    status,
)

__all__ = ["derive"]

#: Eq. 1's rules (kstp.graph.structures.RULES; named here so --help imports no numerics).
_RULES = ("strict", "reflexive")


@click.group()
def derive() -> None:
    """Materialise derived relations (question prerequisites)."""


@derive.command("question-prerequisites")
@click.option("--dataset", "datasets", multiple=True,
              help="Dataset to derive for (repeatable; default: every dataset in the graph).")
@click.option("--rule", type=click.Choice(_RULES), default=None,
              help="strict: a proper, transitive concept prerequisite; reflexive: the same concept counts too "
              "(for a skill map: concepts(q_i) within concepts(q_j)). Default: the rule each dataset was derived "
              "with, strict for one never derived (the paper calls Eq. 1 strict and conservative; on a skill map "
              "strict derives no pair: use reflexive there).")
@out_option("each dataset's prerequisite graph (its covering pairs, questions by level) as "
            "prerequisites_<dataset>.svg, .png and .dot; above 200 questions the figure counts them per level")
@graph_format_option
@click.pass_context
def question_prerequisites(ctx, datasets: tuple[str, ...], rule: str | None, out: Path | None,
                           as_json: bool) -> None:
    """Derive question prerequisites from concept prerequisites (paper 1, Eq. 1).

    q_i becomes a prerequisite of q_j when every concept of q_i is a prerequisite of
    some concept of q_j. Prints the edges per question (Eq. 1) beside the transitive
    prerequisite concepts per annotated question and per annotated concept (near paper 1
    Table 1's "16.4 prerequisites per question", not equal to it). Replaces the dataset's
    earlier derived edges (saying so when they were derived under the other rule);
    questions without concepts take no part.
    --out draws each dataset's prerequisite graph (equally informative questions as one
    node); --format dot prints it for Graphviz.

    \b
    Examples:
      kstp derive question-prerequisites --dataset xes3g5m
      kstp derive question-prerequisites --dataset frcsub --rule reflexive --json
      kstp derive question-prerequisites --dataset frcsub --rule reflexive --out figures/
      kstp derive question-prerequisites --dataset probability_pks --rule reflexive --format dot
    """
    import pandas as pd

    from kstp.graph.structures import derive_question_prerequisites

    store = get_store(ctx)
    datasets = datasets or tuple(r["datasetId"] for r in store.run("datasets"))
    reports = []
    for dataset in datasets:
        with status(f"deriving question prerequisites of {dataset}" + (f" ({rule})" if rule else "")):
            report = derive_question_prerequisites(store, dataset, rule)
        if report.replaced_rule:
            message(f"{dataset}: {report.replaced_edges:,} edges derived with the {report.replaced_rule} rule "
                    f"replaced by the {report.rule} rule's {report.edges:,}")
        reports.append({"dataset": dataset, "rule": report.rule, "questions": report.questions,
                        "questionsWithConcepts": report.questions_with_concepts, "edges": report.edges,
                        "meanPerQuestion": report.mean_per_question,
                        # Table 1's "prerequisites per question" reads as these concept counts (README, paper 1)
                        "prerequisiteConceptsPerQuestion": report.concepts_per_question,
                        "prerequisiteConceptsPerConcept": report.concepts_per_concept})
    if output_format() == "dot" or out is not None:
        from kstp.evaluators.structures import graph_files, prerequisite_graph
        from kstp.reports.diagrams import graph_dot

        for row in reports:
            nodes, edges = prerequisite_graph(store, dataset=row["dataset"])
            if output_format() == "dot":
                click.echo(graph_dot(nodes, edges, f"prerequisites_{row['dataset']}"), nl=False)
                continue
            paths, note = graph_files(nodes, edges, out, row["dataset"], f"{row['dataset']}: question prerequisites "
                                      f"(Eq. 1, {row['rule']}), {len(nodes)} nodes, {len(edges)} covering pairs")
            row["figures"] = [str(p) for p in paths]
            for line in ([f"note: {note}"] if note else []) + [f"wrote {p}" for p in paths]:
                message(line)
        if output_format() == "dot":
            return
    if as_json:
        emit(reports)
    else:
        print_table(pd.DataFrame(reports).drop(columns="figures", errors="ignore"), "Question prerequisites (Eq. 1)",
                    digits=2)
