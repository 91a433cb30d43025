"""``kstp validate``: check the graph's claims against learner data."""

from __future__ import annotations

import click

from kstp.cli.output import emit, get_store, json_option, message, print_table, status

__all__ = ["validate", "edge_table"]

#: The defaults of kstp.evaluators.counterexamples (TOLERANCE, ALPHA, MASTERY; named here so --help imports no
#: evaluator).
_TOLERANCE, _ALPHA, _MASTERY = 0.1, 0.05, 0.5


@click.group()
def validate() -> None:
    """Check the graph's claims (prerequisite edges) against learner data."""


@validate.command()
@click.option("--dataset", required=True, help="Dataset whose human learner logs are the evidence.")
@click.option("--level", type=click.Choice(["question", "concept", "both"]), default="both", show_default=True,
              help="Question-level edges (Eq. 1 or stored), concept-level edges, or both.")
@click.option("--tolerance", type=click.FloatRange(0, 1, max_open=True), default=_TOLERANCE,
              show_default=True, help="Counterexample rate an edge may have; flagged when the interval lies above.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=_ALPHA,
              show_default=True, help="Wilson interval at level 1 - alpha.")
@click.option("--mastery", type=click.FloatRange(0, 1, max_open=True), default=_MASTERY,
              show_default=True, help="Concept level: share of a concept's questions a learner must exceed.")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="Print the N worst edges (0: all).")
@click.option("--no-write", is_flag=True, help="Do not write the figures on the edges.")
@json_option
@click.pass_context
def prerequisites(ctx, dataset: str, level: str, tolerance: float, alpha: float, mastery: float, top: int,
                  no_write: bool, as_json: bool) -> None:
    """Count counterexamples to each prerequisite edge p -> q in the learner logs (q right, p wrong).

    Among the human learners who answered both ends, the share who answered q
    correctly but p wrongly, with a Wilson interval; an edge is contradicted when the
    whole interval lies above --tolerance. Concept edges are judged through the
    questions assessing each concept (mastered: share correct above --mastery). The
    figures are written on the PREREQUISITE_OF edges; the worst edges are printed.

    \b
    Examples:
      kstp validate prerequisites --dataset frcsub
      kstp validate prerequisites --dataset probability_pks --level question --tolerance 0.05 --top 0 --json
    """
    import pandas as pd

    from kstp.evaluators import counterexamples

    levels = counterexamples.LEVELS if level == "both" else (level,)
    store = get_store(ctx)
    with status(f"checking the prerequisite edges of {dataset}"):
        result = counterexamples.check_prerequisites(store, dataset, levels, tolerance, alpha, mastery,
                                                     write_back=not no_write)
    worst = result.edges if top == 0 else result.edges.head(top)
    if as_json:
        emit({"dataset": dataset, "tolerance": tolerance, "alpha": alpha, "mastery": mastery,
              "summary": result.summary(), "edges": worst})
        return
    if result.edges.empty:
        hint = {"question": "derive question prerequisites first (kstp derive question-prerequisites)",
                "concept": "no two concepts its questions assess have a prerequisite edge between them",
                "both": "derive question prerequisites first (kstp derive question-prerequisites), or ingest a "
                        "curriculum with prerequisite edges between the concepts its questions assess"}[level]
        message(f"{dataset}: no {'' if level == 'both' else level + ' '}prerequisite edge to check; {hint}")
        return
    for level, edges in worst.groupby("level", sort=False):
        shown, prefix = edge_table(edges)
        print_table(shown, f"Worst {level} prerequisite edges p -> q of {dataset}{prefix}: of the learners who "
                    "answered both, how many got q right and p wrong (counterexamples), their rate and its "
                    f"{1 - alpha:.0%} Wilson interval")
    print_table(pd.DataFrame(result.summary()), "Summary")
    if not no_write:
        message("wrote the figures on the PREREQUISITE_OF edges (attemptedBoth, counterexamples, "
                "counterexampleRate/Low/High, contradicted, checkedOn)")


def edge_table(edges):
    """The checked edges of one level as a table that fits 80 columns: ``p -> q`` in one column, ids without
    the namespace they all share, short headers; and the note naming that namespace (``''`` when none).

    >>> import pandas as pd
    >>> edges = pd.DataFrame({"fromId": ["d:Item01"], "toId": ["d:Item04"], "attemptedBoth": [12],
    ...                       "counterexamples": [3], "counterexampleRate": [0.25], "counterexampleLow": [0.09],
    ...                       "counterexampleHigh": [0.53], "contradicted": [False]})
    >>> table, note = edge_table(edges)
    >>> table.iloc[0, [0, 4]].tolist(), note
    (['Item01 -> Item04', '0.090-0.530'], " (ids without 'd:')")
    """
    import pandas as pd

    ids = pd.concat([edges["fromId"], edges["toId"]]).astype(str)
    spaces = set(ids.str.rpartition(":")[0])
    prefix = f"{spaces.pop()}:" if len(spaces) == 1 and "" not in spaces else ""
    local = (lambda i: str(i)[len(prefix):]) if prefix else str
    interval = [f"{low:.3f}-{high:.3f}" if pd.notna(low) else "" for low, high in
                zip(edges["counterexampleLow"], edges["counterexampleHigh"], strict=True)]
    table = pd.DataFrame({"edge p -> q": [f"{local(a)} -> {local(b)}" for a, b in
                                          zip(edges["fromId"], edges["toId"], strict=True)],
                          "both": edges["attemptedBoth"].to_numpy(), "counter": edges["counterexamples"].to_numpy(),
                          "rate": edges["counterexampleRate"].to_numpy(), "interval": interval,
                          "contradicted": edges["contradicted"].astype(bool).to_numpy()})
    return table, f" (ids without {prefix!r})" if prefix else ""
