"""``kstp kst next-steps``: what each learner is ready to learn next, from the fitted BLIM."""

from __future__ import annotations

import click

from kstp.cli.output import emit, get_store, json_option, message, print_lines

__all__ = ["next_steps"]


@click.command("next-steps")
@click.option("--dataset", required=True, help="Dataset whose learners are assessed.")
@click.option("--learner", help="One learner (<dataset>:<id> or the local id); default: every human learner.")
@click.option("--limit", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Without a fit: refuse a knowledge space with more states than this.")
@json_option
@click.pass_context
def next_steps(ctx, dataset: str, learner: str | None, limit: int, as_json: bool) -> None:
    """Print each learner's knowledge state and its outer fringe: the questions to learn next.

    With a BLIM fitted on the graph (kstp fit blim) the state is the learner's most
    likely state, with its posterior probability, and the next steps its outer fringe
    in the fitted structure. Without one, the learner's correct answers are matched to
    the nearest states of the knowledge space (least symmetric difference), and the
    output says so.

    \b
    Examples:
      kstp kst next-steps --dataset frcsub --learner Subject001
      kstp kst next-steps --dataset probability_pks --json
    """
    from kstp.evaluators.blim import next_steps as assess

    if learner and not learner.startswith(f"{dataset}:"):
        learner = f"{dataset}:{learner}"
    result = assess(get_store(ctx), dataset, learner, limit)
    if as_json:
        emit(result)
        return
    if not result["fitted"]:
        message("no BLIM fit on the graph (kstp fit blim): nearest states by symmetric difference")
    for row in result["learners"]:
        if "nearest" in row:
            for near in row["nearest"]:
                print_lines(f"{row['learnerId']}  nearest state (distance {row['distance']}): "
                           f"{{{', '.join(near['state'])}}}  next: {', '.join(near['nextSteps']) or '-'}  "
                           f"next states add: {_ahead(near['nextStates'])}")
        elif "state" in row:
            ahead = _ahead(row["nextStates"])
            print_lines(f"{row['learnerId']}  state {{{', '.join(row['state'])}}} (posterior {row['posterior']:.3f})  "
                       f"next: {', '.join(row['nextSteps']) or '-'}  next states add: {ahead}")
        else:
            click.echo(f"{row['learnerId']}  {row['source']}")


def _ahead(additions: list[list[str]]) -> str:
    """What each covering state adds, ``{a, b}; {c}``, or ``-`` at the top of the structure."""
    return "; ".join("{" + ", ".join(s) + "}" for s in additions) or "-"
