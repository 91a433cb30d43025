"""``kstp query``: run a registered Cypher query by name."""

from __future__ import annotations

import click

from kstp.cli.output import emit, get_store, json_option, print_table
from kstp.errors import QueryError
from kstp.graph.queries import Query, get_query, registry
from kstp.settings import graph_target

__all__ = ["query", "parse_param"]


def parse_param(text: str, spec: Query) -> tuple[str, object]:
    """Turn ``key=value`` into a typed parameter of query ``spec`` (:meth:`Query.parse_param`).

    >>> parse_param("questionIds=a,b", get_query("outer_fringe"))
    ('questionIds', ['a', 'b'])
    >>> parse_param("minPrerequisites=5", get_query("psr_distribution"))
    ('minPrerequisites', 5)
    """
    if "=" not in text:
        raise QueryError(f"parameter {text!r} must read key=value")
    key, value = text.split("=", 1)
    return key, spec.parse_param(key, value)


@click.command()
@click.argument("name", required=False)
@click.option("-p", "--param", "params", multiple=True, metavar="KEY=VALUE",
              help="A query parameter (repeatable); lists as a,b,c or a JSON array.")
@click.option("--list", "list_queries", is_flag=True, help="List the registered queries with their parameters.")
@json_option
@click.pass_context
def query(ctx, name: str | None, params: tuple[str, ...], list_queries: bool, as_json: bool) -> None:
    """Run a registered Cypher query by name and print its rows.

    Queries are read-only and take their parameters as given: a fringe query does not
    check that the set is a knowledge state (`kstp kst fringe` does). Question ids in
    $questionIds may be local (Item06) where the query takes a $dataset: they get its
    prefix, as in `kstp kst`, and ids the dataset does not hold are refused. A parameter
    given twice is refused (a list goes in one -p).

    \b
    Examples:
      kstp query --list
      kstp query concept_ancestors -p conceptId=ccss:142
      kstp query outer_fringe -p dataset=frcsub -p questionIds=frcsub:Item04 --format json
    """
    if list_queries or not name:
        import pandas as pd

        rows = [{"name": q.name, "area": q.area, "params": ", ".join(f"${k}: {v}" for k, v in q.params.items()),
                 "returns": ", ".join(q.returns), "description": q.description}
                for q in sorted(registry().values(), key=lambda q: (q.area, q.name))]
        if as_json:
            emit(rows)
        else:
            print_table(pd.DataFrame(rows).drop(columns=["description"]), "Registered queries")
        return
    try:
        spec = get_query(name)
        pairs = [parse_param(p, spec) for p in params]
        repeated = next((key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i])), None)
        if repeated is not None:
            raise QueryError(f"parameter {repeated!r} is given twice; a list goes in one -p as "
                             f"{repeated}=a,b or a JSON array")
        values = dict(pairs)
        spec.check_params(values)
    except QueryError as exc:
        raise click.UsageError(str(exc)) from None
    store = get_store(ctx)
    if "dataset" in values and "questionIds" in values:  # local ids get the prefix; unknown ones are refused
        from kstp.graph.structures import scoped_question_ids

        known = set(store.frame("dataset_questions", {"dataset": values["dataset"]})["questionId"])
        try:
            values["questionIds"] = scoped_question_ids(values["dataset"], values["questionIds"], known, name)
        except QueryError as exc:
            raise click.UsageError(str(exc)) from None
    frame = store.frame(name, values)
    if frame.empty:
        where = graph_target(ctx.find_root().obj.get("graph")).describe()
        click.echo(f"{name}: no rows in the graph {where}", err=True)
    if as_json:
        emit(frame)
    else:
        print_table(frame, name)
