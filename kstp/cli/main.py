"""``kstp``: Knowledge Space Theory on a property graph.

The graph is LadybugDB in ``.kstp/graph`` unless ``--graph`` or ``KSTP_GRAPH`` says
otherwise (``ladybug:PATH`` or a Neo4j URI with ``NEO4J_USER``/``NEO4J_PASSWORD``).
"""

from __future__ import annotations

import click

from kstp._version import __version__
from kstp.cli.annotate import annotate
from kstp.cli.answers import answers
from kstp.cli.assess import assess
from kstp.cli.campaign import campaign
from kstp.cli.dagmath import evaluate_dagmath, ingest_cot, report_dagmath
from kstp.cli.db import db
from kstp.cli.demo import demo
from kstp.cli.depth import depth
from kstp.cli.derive import derive
from kstp.cli.evaluate import evaluate
from kstp.cli.explore import explore
from kstp.cli.fit import fit
from kstp.cli.grade import grade
from kstp.cli.ingest import ingest
from kstp.cli.koc import koc
from kstp.cli.kst import kst
from kstp.cli.next_steps import next_steps
from kstp.cli.nextstep import catalogue, nextstep_evaluate, nextstep_report
from kstp.cli.output import KstpGroup, set_verbosity
from kstp.cli.query import query
from kstp.cli.reasoning import reasoning
from kstp.cli.report import report
from kstp.cli.rqeval import evaluate_rqeval, report_rqeval, rqeval
from kstp.cli.runs import runs
from kstp.cli.scaffolding import scaffolding, scaffolding_report
from kstp.cli.validate import validate
from kstp.errors import KstpError
from kstp.settings import graph_target

__all__ = ["cli"]


def _graph_location(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        graph_target(value)
    except KstpError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@click.group(cls=KstpGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--graph", metavar="LOCATION", envvar="KSTP_GRAPH", callback=_graph_location,
              help="ladybug:PATH or a Neo4j URI (default: $KSTP_GRAPH, else ladybug:.kstp/graph).")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr (results, warnings and errors still print).")
@click.option("-v", "--verbose", is_flag=True,
              help="Progress as lines with timings on a terminal too (the default there: spinners and bars).")
@click.version_option(__version__, prog_name="kstp")
@click.pass_context
def cli(ctx: click.Context, graph: str | None, quiet: bool, verbose: bool) -> None:
    """Knowledge Space Theory on a property graph: ingest curricula, questions and
    learner answers, derive question prerequisites, and measure whether learners'
    knowledge is structured (PSR).

    \b
    Example, from nothing to PSR of real students:
      kstp ingest standards ../shared/data/standards/nys_concepts.json
      kstp ingest items ../shared/data/responses/frcsub/items.csv --dataset frcsub \\
          --qmatrix ../shared/data/responses/frcsub/qmatrix.csv
      kstp ingest responses ../shared/data/responses/frcsub/responses.csv --dataset frcsub
      kstp derive question-prerequisites --dataset frcsub --rule reflexive
      kstp evaluate psr --dataset frcsub
    """
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose contradict each other; give one")
    set_verbosity(0 if quiet else 2 if verbose else 1)
    ctx.ensure_object(dict)
    ctx.obj["graph"] = graph


for command in (db, ingest, derive, kst, query, evaluate, report, grade, demo, runs, explore):
    cli.add_command(command)
cli.add_command(validate)
evaluate.add_command(answers, "answers")
evaluate.add_command(koc, "koc")
evaluate.add_command(reasoning, "reasoning")
ingest.add_command(ingest_cot, "cot")
evaluate.add_command(evaluate_dagmath, "dagmath")
report.add_command(report_dagmath, "dagmath")
cli.add_command(rqeval)
evaluate.add_command(evaluate_rqeval, "rqeval")
report.add_command(report_rqeval, "rqeval")
evaluate.add_command(nextstep_evaluate, "nextstep")
report.add_command(nextstep_report, "nextstep")
cli.add_command(catalogue)
cli.add_command(annotate)
evaluate.add_command(scaffolding, "scaffolding")
report.add_command(scaffolding_report, "scaffolding")
kst.add_command(depth)
cli.add_command(fit)
kst.add_command(next_steps, "next-steps")
cli.add_command(assess)
cli.add_command(campaign)


if __name__ == "__main__":
    cli()
