"""``kstp grade``: show how one answer is extracted and scored."""

from __future__ import annotations

import sys

import click

from kstp.cli.output import emit, json_option
from kstp.inference.grading import KINDS, PERCENT_POLICIES, read_gold
from kstp.inference.grading import grade as grade_answer
from kstp.inference.grading.traces import UNCLOSED

__all__ = ["grade"]

class _Options(click.ParamType):
    """--options: a count of 2-10, or the options' texts separated by ``;``."""

    name = "N|TEXTS"

    def convert(self, value, param, ctx):
        if isinstance(value, int | list):
            return value
        texts = [t.strip() for t in value.split(";")]
        if len(texts) == 1 and texts[0].isdigit():
            count = int(texts[0])
            if not 2 <= count <= 10:
                self.fail(f"{count} is not in the range 2<=x<=10", param, ctx)
            return count
        if not 2 <= len(texts) <= 10 or not all(texts):
            self.fail(f"{value!r} is neither a count of 2-10 nor 2-10 option texts separated by ;", param, ctx)
        return texts


_OPTIONS = _Options()
_TRACE_NOTE = {False: "a reasoning trace was split off; the answer is read after it",
               True: "the reasoning trace never closed: the reply reached no answer"}


class _ReplyCommand(click.Command):
    """A command whose one argument, a reply, may start with ``-`` without a ``--`` before it.

    Replies do: a negative number (``-3``), a markdown bullet (``- so 12``). Click reads
    such a token as an option and stops with "No such option"; here every token that is
    not one of the command's options (nor the value of one) is the reply, while a
    mistyped long option (``--jsn``) is still refused.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {name: not (param.is_flag or param.count)
                       for param in self.get_params(ctx) if isinstance(param, click.Option)
                       for name in (*param.opts, *param.secondary_opts)}
        options, reply, i = [], [], 0
        while i < len(args):
            arg, name = args[i], args[i].split("=", 1)[0]
            if arg == "--":
                reply += args[i + 1:]
                break
            if name in takes_value:
                step = 2 if takes_value[name] and "=" not in arg else 1
                options += args[i:i + step]
                i += step
                continue
            (options if arg.startswith("--") and arg[2:3].isalpha() else reply).append(arg)
            i += 1
        return super().parse_args(ctx, [*options, "--", *reply])


@click.command(cls=_ReplyCommand)
@click.argument("text")
@click.option("--gold", required=True, help="The gold answer (a negative one too: --gold -3).")
@click.option("--type", "kind", type=click.Choice(KINDS), default="auto", show_default=True,
              help="Answer type; auto infers it from the gold answer.")
@click.option("--percent", type=click.Choice(PERCENT_POLICIES), default="either", show_default=True,
              help="How a percentage in TEXT is read: either 50%=0.5 or 50%=50, fraction, or as-written.")
@click.option("--options", type=_OPTIONS, default=None,
              help="How many lettered options the question has, or their texts separated by ; ('100;150;200'): a "
                   "letter past them is no option (with fewer than 9, 'I' is never one), and with the texts a boxed "
                   "or stated option text is its letter. Default: A-J.")
@click.option("--opened-think", "opened", is_flag=True,
              help="The prompt opened the reasoning trace (a chat template ending in <think>, as DeepSeek-R1 "
                   "distills' and QwQ's do): a TEXT without </think> never closed it and states no answer.")
@json_option
def grade(text: str, gold: str, kind: str, percent: str, options: int | None, opened: bool, as_json: bool) -> None:
    """Extract the final answer of TEXT (- reads stdin) and grade it against --gold.

    Prints the extracted answer, where it was found, how the gold was read (a number with
    its unit set aside, a list, an expression compared whole through math-verify, ...), the
    verdict and the reason ("no answer found" is not "wrong answer"; "not gradable: too
    large" and "not supported" are neither). TEXT may start with "-" (a negative number, a
    markdown bullet); no "--" is needed. A reasoning trace written in TEXT (<think> ...
    </think>, and the other spellings the README lists) is split off: the answer is read
    after it; a trace that never closed, or a TEXT that visibly stops mid-thought (inside
    \\boxed{, on "Wait," or "="), states no answer. Exit status 0 whatever the verdict.

    \b
    Examples:
      kstp grade --gold 9500 'so the price is \\boxed{\\$9{,}500}'
      kstp grade --gold D --json 'That is drastic.'
      kstp grade --gold -3 '- so x = -3'
      kstp grade --gold D --options 4 'Answer: I think it is D.'
      kstp grade --gold C --options '100;150;200;250' 'so \\boxed{200}'
      kstp grade --gold '1331 and 1728' '\\boxed{1728, 1331}'
      kstp grade --gold '6\\sqrt{2}\\text{ inches}' '\\boxed{6}'
      kstp grade --gold 5 '<think>Is it \\boxed{7}? No.</think> The answer is 5.'
    """
    if text == "-":
        text = sys.stdin.read()
    try:
        verdict = grade_answer(text, gold, kind, percent, options, opened)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gold") from None
    reading = read_gold(gold, kind).reading
    if as_json:
        emit({**verdict.as_dict(), "reading": reading})
    else:
        click.echo(f"extracted: {verdict.extracted if verdict.extracted is not None else '(none)'}"
                   f"{f' ({verdict.method})' if verdict.method else ''}")
        click.echo(f"type:      {verdict.kind}")
        click.echo(f"gold:      {reading}")
        if verdict.trace:
            click.echo(f"trace:     {_TRACE_NOTE.get(verdict.trace.startswith(UNCLOSED))} ({verdict.trace})")
        click.echo(f"verdict:   {'correct' if verdict.correct else 'incorrect'} ({verdict.reason})")
