"""``kstp fit``: probabilistic knowledge structures (BLIM) and prerequisites learned from answers."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import (
    SEED,
    emit,
    get_store,
    json_option,
    message,
    on_interrupt,
    option_given,
    print_table,
    refuse_together,
    status,
)

__all__ = ["fit"]


def _rates(values: tuple[str, ...], dataset: str, option: str) -> dict[str, float]:
    """``ITEM=RATE`` pairs (``all=RATE`` for every item); a local id gets the dataset prefix."""
    out = {}
    for value in values:
        item, sep, rate = value.partition("=")
        try:
            number = float(rate)
        except ValueError:
            number = -1.0
        if not sep or not 0 <= number < 1:
            raise click.BadParameter(f"{value!r}: give ITEM=RATE with 0 <= RATE < 1, e.g. Item01=0.05 or all=0",
                                     param_hint=option)
        key = item if item == "all" or item.startswith(f"{dataset}:") else f"{dataset}:{item}"
        out[key] = number
    return out


@click.group()
def fit() -> None:
    """Fit probabilistic knowledge structures and learn prerequisites from learner data."""


@fit.command()
@click.option("--dataset", required=True, help="Dataset whose human learners' answers are fitted.")
@click.option("--structure", "kind", type=click.Choice(["space", "delineated"]), default="space", show_default=True,
              help="The knowledge space of the derived prerequisites, or the structure delineated from the "
                   "Q-matrix (conjunctive skill function).")
@click.option("--method", type=click.Choice(["ML", "MD", "MDML"]), default="ML", show_default=True,
              help="Maximum likelihood (EM), minimum discrepancy, or MD-restricted ML (pks::blim).")
@click.option("--bootstrap", type=click.IntRange(min=0), default=0, show_default=True,
              help="Parametric-bootstrap samples for the p value of G2 (and bootstrap standard errors).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of --bootstrap.")
@click.option("--careless-equal", is_flag=True, help="Hold every item's careless-error rate equal.")
@click.option("--guess-equal", is_flag=True, help="Hold every item's lucky-guess rate equal.")
@click.option("--fix-careless", multiple=True, metavar="ITEM=RATE",
              help="Fix a careless-error rate (all=RATE: every item).")
@click.option("--fix-guess", multiple=True, metavar="ITEM=RATE",
              help="Fix a lucky-guess rate (all=RATE: every item).")
@click.option("--limit", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Refuse a structure with more states than this.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Also write the residual plot and the error-rate figure (PNG) here.")
@click.option("--no-write", is_flag=True, help="Fit and print; write nothing to the graph.")
@json_option
@click.pass_context
def blim(ctx, dataset: str, kind: str, method: str, bootstrap: int, seed: int, careless_equal: bool,
         guess_equal: bool, fix_careless: tuple[str, ...], fix_guess: tuple[str, ...], limit: int, out: Path | None,
         no_write: bool, as_json: bool) -> None:
    """Fit the basic local independence model (BLIM) to a dataset's learners.

    Each knowledge state gets a probability, each question a careless-error rate
    (beta) and a lucky-guess rate (eta), with standard errors; goodness of fit is G2
    against the saturated model with df, AIC, BIC and, with --bootstrap, a
    parametric-bootstrap p. Estimates equal R's pks::blim on the same structure,
    method and starting values. The fit goes onto the graph (careless/guess on each
    Question, probability on each KnowledgeState, the most likely state on each
    Learner, the figures on a Run); a refused fit writes nothing.

    \b
    Examples:
      kstp fit blim --dataset probability_pks --structure delineated
      kstp fit blim --dataset frcsub --method MDML --bootstrap 200 --json
      kstp fit blim --dataset frcsub --guess-equal --fix-careless Item01=0.05 --out results/
    """
    from kstp.evaluators import blim as evaluator

    store = get_store(ctx)
    with status(f"fitting a BLIM to {dataset}"):
        report = evaluator.fit_dataset(store, dataset, kind, method, bootstrap, seed, careless_equal, guess_equal,
                                       _rates(fix_careless, dataset, "--fix-careless"),
                                       _rates(fix_guess, dataset, "--fix-guess"), limit)
    if not no_write:
        evaluator.write_fit(store, report)
    figures = []
    if out is not None:
        from kstp.kst.blim_gof import residuals
        from kstp.reports import plots

        _, mu, res = residuals(report.fit)
        title = f"{dataset}: BLIM ({kind}, {method})"
        figures.append(str(plots.residual_plot(mu, res, out / f"blim_residuals_{dataset}.png", title)))
        names = [q.split(":", 1)[-1] for q in report.fit.items]
        figures.append(str(plots.error_rates(names, report.fit.beta, report.fit.eta,
                                             out / f"blim_rates_{dataset}.png", title, report.fit.beta_se,
                                             report.fit.eta_se)))
    summary = report.summary()
    if as_json:
        emit({**summary, "written": not no_write, "figures": figures, "items": report.items_table()})
        return
    print_table(report.items_table(), title=f"BLIM of {dataset}: {kind}, {method}, {summary['states']} states",
                digits=4)
    p = "" if summary["bootstrapP"] is None else f", bootstrap p = {summary['bootstrapP']:.3f} ({bootstrap} samples)"
    gof = f"G2 = {summary['G2']:.3f}" if summary["gofUndefined"] else \
        f"G2({summary['df']}) = {summary['G2']:.3f}, p = {summary['pValue']:.4g}"
    click.echo(f"{gof}{p}; AIC {summary['AIC']:.2f}, "
               f"BIC {summary['BIC']:.2f}; {summary['learners']} learners, {summary['patterns']} patterns, "
               f"{summary['iterations']} iterations; mean discrepancy {summary['discrepancy']:.3f}")
    if summary["gofUndefined"]:
        message(summary["gofUndefined"])
    if report.data.incomplete:
        message(f"{report.data.incomplete} learners left out: they did not answer every item")
    message("written to the graph as run " + report.run_id if not no_write else "nothing written (--no-write)")
    for figure in figures:
        message(f"wrote {figure}")


@fit.command()
@click.option("--dataset", required=True, help="Dataset whose human learners' answers are the evidence.")
@click.option("--rule", type=click.Choice(["iita", "ita"]), default="iita", show_default=True,
              help="Inductive item tree analysis (DAKS) or item tree analysis (pks::ita).")
@click.option("--variant", type=click.Choice(["1", "2", "3"]), default="1", show_default=True,
              help="IITA: 1 minimized corrected, 2 corrected, 3 original.")
@click.option("--threshold", type=click.IntRange(min=0), help="ITA: accept at most this many counterexamples "
              "(default: searched).")
@click.option("--search", type=click.Choice(["local", "global"]), default="local", show_default=True,
              help="ITA threshold search.")
@click.option("--limit", type=click.IntRange(min=1), default=200_000, show_default=True,
              help="ITA: refuse a relation whose knowledge space has more states (each is listed to weigh it).")
@click.option("--no-write", is_flag=True, help="Learn and print; write nothing to the graph.")
@json_option
@click.pass_context
def prerequisites(ctx, dataset: str, rule: str, variant: str, threshold: int | None, search: str, limit: int,
                  no_write: bool, as_json: bool) -> None:
    """Learn a prerequisite relation from the answers and compare it with the Eq. 1 edges.

    The learned pairs go onto the graph as LEARNED_PREREQUISITE_OF {rule} edges,
    beside (never mixed with) the PREREQUISITE_OF edges every KST query reads; the
    report lists where the two relations disagree.

    \b
    Examples:
      kstp fit prerequisites --dataset probability_pks
      kstp fit prerequisites --dataset probability_pks --rule ita --search global --json
      kstp fit prerequisites --dataset frcsub --rule ita --threshold 30
    """
    for name in ("threshold", "search", "limit") if rule == "iita" else ("variant",):
        if option_given(ctx, name):
            raise click.UsageError(f"--{name} goes with --rule {'ita' if rule == 'iita' else 'iita'}, not --rule "
                                   f"{rule}")
    refuse_together(ctx, "threshold", ("search",), "a given threshold is used as it is, not searched")
    from kstp.evaluators import blim as evaluator

    store = get_store(ctx)
    on_interrupt("nothing was written (--no-write)." if no_write else
                 "the learned pairs are written once the search has ended, so an interrupted search wrote none; "
                 "run the same command again (it also replaces what an interrupted write left).")
    with status(f"learning prerequisites of {dataset} ({rule})"):
        report = evaluator.learn_prerequisites(store, dataset, rule, int(variant), threshold, search,
                                               write=not no_write, limit=limit)
    learned_only = report.pairs[~report.pairs["inEq1"]]
    if as_json:
        emit({**report.summary(), "written": not no_write, "pairs": report.pairs,
              "eq1OnlyPairs": [{"fromId": a, "toId": b} for a, b in report.eq1_only]})
        return
    s = report.summary()
    click.echo(f"{s['learned']} learned pairs ({rule}), {s['eq1']} Eq. 1 pairs: {s['both']} in both, "
               f"{s['learnedOnly']} learned only, {s['eq1Only']} Eq. 1 only")
    if len(learned_only):
        print_table(learned_only[["fromId", "toId", "counterexamples"]], title="learned, not in Eq. 1")
    if report.eq1_only:
        click.echo("Eq. 1, not learned: " + ", ".join(f"{a} -> {b}" for a, b in report.eq1_only))
