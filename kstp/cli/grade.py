"""``kstp grade``: show how one answer is extracted and scored."""

from __future__ import annotations

import sys

import click

from kstp.cli.output import emit, json_option
from kstp.inference.grading import KINDS, PERCENT_POLICIES
from kstp.inference.grading import grade as grade_answer

__all__ = ["grade"]


@click.command()
@click.argument("text")
@click.option("--gold", required=True, help="The gold answer.")
@click.option("--type", "kind", type=click.Choice(KINDS), default="auto", show_default=True,
              help="Answer type; auto infers it from the gold answer.")
@click.option("--percent", type=click.Choice(PERCENT_POLICIES), default="either", show_default=True,
              help="How a percentage in TEXT is read: either 50%=0.5 or 50%=50, fraction, or as-written.")
@json_option
def grade(text: str, gold: str, kind: str, percent: str, as_json: bool) -> None:
    """Extract the final answer of TEXT (- reads stdin) and grade it against --gold.

    Prints the extracted answer, where it was found, the verdict and the reason
    ("no answer found" is not "wrong answer"). Exit status 0 whatever the verdict.

    \b
    Examples:
      kstp grade --gold 9500 'so the price is \\boxed{\\$9{,}500}'
      kstp grade --gold D --json 'That is drastic.'
    """
    if text == "-":
        text = sys.stdin.read()
    try:
        verdict = grade_answer(text, gold, kind, percent)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gold") from None
    if as_json:
        emit(verdict.as_dict())
    else:
        click.echo(f"extracted: {verdict.extracted if verdict.extracted is not None else '(none)'}"
                   f"{f' ({verdict.method})' if verdict.method else ''}")
        click.echo(f"type:      {verdict.kind}")
        click.echo(f"verdict:   {'correct' if verdict.correct else 'incorrect'} ({verdict.reason})")
