"""``kstp fit``: probabilistic knowledge structures (BLIM) and prerequisites learned from answers."""

from __future__ import annotations

from contextlib import contextmanager
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
    progress_bar,
    refuse_together,
    status,
    with_rate,
)
from kstp.csvcells import write_csv

__all__ = ["fit"]


def _rates(values: tuple[str, ...], dataset: str | None, option: str) -> dict[str, float]:
    """``ITEM=RATE`` pairs (``all=RATE`` for every item); a local id gets the dataset prefix (none without one)."""
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
        key = item if dataset is None or item == "all" or item.startswith(f"{dataset}:") else f"{dataset}:{item}"
        out[key] = number
    return out


#: The structures kstp builds (kstp.evaluators.blim.STRUCTURES; named here so --help imports no numerics).
_STRUCTURES = ("space", "delineated")


@contextmanager
def _fitting(name: str, bootstrap: int):
    """A spinner while a BLIM is fitted; with a bootstrap, a bar over its refits (a few seconds each) and their
    rate."""
    if bootstrap:
        with progress_bar(f"BLIM of {name}, parametric bootstrap") as update:
            yield with_rate(update, "refits")
    else:
        with status(f"fitting a BLIM to {name}"):
            yield None


def _em_options(command):
    """``--limit``, ``--max-iter`` and ``--tol``: the structure's size limit and the EM's stopping rule, as pks's
    ``blim`` and ``slm`` take them (fit blim and fit slm)."""
    for option in reversed([
        click.option("--limit", type=click.IntRange(min=1), default=20_000, show_default=True,
                     help="Refuse a structure with more states than this."),
        click.option("--max-iter", type=click.IntRange(min=1), default=10_000, show_default=True,
                     help="Stop the EM (ML, MDML) after this many iterations (pks's maxiter); a fit that stops here "
                          "is reported as not converged."),
        click.option("--tol", type=click.FloatRange(min=0, min_open=True), default=1e-7, show_default=True,
                     help="The EM has converged when no parameter moves more than this in one iteration (pks's "
                          "tol).")]):
        command = option(command)
    return command


def _structure(ctx, param, value: str) -> str | Path:
    """``--structure``: a structure kstp builds, or a file that must exist."""
    if value in _STRUCTURES:
        return value
    path = Path(value)
    if not path.is_file():
        raise click.BadParameter(f"{value!r} is neither space nor delineated, and file {value!r} does not exist",
                                 ctx, param)
    return path


@click.group()
def fit() -> None:
    """Fit probabilistic knowledge structures and learn prerequisites from learner data."""


@fit.command()
@click.option("--dataset", help="Dataset whose human learners' answers are fitted (or --responses).")
@click.option("--responses", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Fit the answers in this file instead, without a graph: a kstIO data file (.dat) or a 0/1 CSV "
                   "with item names (learner ids first, if any); needs --structure FILE.")
@click.option("--structure", "kind", default="space", show_default=True, callback=_structure,
              metavar="space|delineated|FILE",
              help="space: the knowledge space of the derived prerequisites; delineated: the structure the "
                   "Q-matrix delineates (conjunctive skill function); FILE: any structure, as a 0/1 state matrix "
                   "(CSV with item names) or a kstIO file (.kst, .spc, .bsr basis, .spr surmise relation); "
                   "unnamed columns are the dataset's questions in order.")
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
@_em_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Also write here the residual plot and the error-rate figure (PNG), the states with their "
                   "probabilities (blim_states_<name>.csv: a 0/1 column per item, then probability; R's read.csv "
                   "reads it) and each learner's state and next steps (blim_learners_<name>.csv).")
@click.option("--no-write", is_flag=True, help="Fit and print; write nothing to the graph.")
@json_option
@click.pass_context
def blim(ctx, dataset: str | None, responses: Path | None, kind: str | Path, method: str, bootstrap: int, seed: int,
         careless_equal: bool, guess_equal: bool, fix_careless: tuple[str, ...], fix_guess: tuple[str, ...],
         limit: int, max_iter: int, tol: float, out: Path | None, no_write: bool, as_json: bool) -> None:
    """Fit the basic local independence model (BLIM) to a dataset's learners, or to a response file.

    Each knowledge state gets a probability, each question a careless-error rate
    (beta) and a lucky-guess rate (eta), with standard errors; goodness of fit is G2
    against the saturated model with df, AIC, BIC and, with --bootstrap, a
    parametric-bootstrap p. Estimates equal R's pks::blim on the same structure,
    method and starting values, for any structure: one kstp builds, or a file
    (--structure FILE; it need not be closed under union). The fit goes onto the graph
    (careless/guess on each Question, probability on each KnowledgeState, the most
    likely state on each Learner, the figures on a Run; kstp kst next-steps reads it);
    a refused fit writes nothing. --json also lists every state with its probability
    (stateProbabilities: pks's P.K). With --responses FILE no graph is opened: pks's
    blim(K, N.R) on two files.

    \b
    Examples:
      kstp fit blim --dataset probability_pks --structure delineated
      kstp fit blim --dataset frcsub --method MDML --bootstrap 200 --json
      kstp fit blim --dataset frcsub --guess-equal --fix-careless Item01=0.05 --out results/
      kstp fit blim --dataset probability_pks --structure probability.spc --out results/
      kstp fit blim --responses probability.dat --structure probability.spc --method MD --out results/
      kstp kst export --dataset probability_pks --what fit --to probability_fit.csv
      kstp kst simulate --dataset probability_pks --seed 1 --to from_fit.dat
    """
    from kstp.evaluators import blim as evaluator

    if (dataset is None) == (responses is None):
        raise click.UsageError("give --dataset (answers on the graph) or --responses FILE (answers in a file)")
    if responses is not None and not isinstance(kind, Path):
        raise click.UsageError(f"--structure {kind} is built from a dataset on the graph; with --responses give "
                               "--structure FILE")
    prefix = None if responses is not None else dataset
    rates = (_rates(fix_careless, prefix, "--fix-careless"), _rates(fix_guess, prefix, "--fix-guess"))
    if responses is not None:
        with _fitting(responses.name, bootstrap) as update:
            report = evaluator.fit_files(kind, responses, method, bootstrap, seed, careless_equal, guess_equal,
                                         *rates, limit, progress=update, max_iter=max_iter, tol=tol)
        no_write, name = True, responses.stem
    else:
        store = get_store(ctx)
        with _fitting(dataset, bootstrap) as update:
            report = evaluator.fit_dataset(store, dataset, kind, method, bootstrap, seed, careless_equal,
                                           guess_equal, *rates, limit, progress=update, max_iter=max_iter,
                                           tol=tol)
        if not no_write:
            evaluator.write_fit(store, report)
        name = dataset
    label = kind if isinstance(kind, str) else kind.name
    figures, tables = _fit_files(report, out, name, f"{name}: BLIM ({label}, {method})") if out else ([], [])
    summary = report.summary()
    if as_json:
        states = [{"state": [q for q, x in zip(report.fit.items, row, strict=True) if x], "size": int(row.sum()),
                   "probability": float(p)} for row, p in zip(report.fit.states, report.fit.p_k, strict=True)]
        emit({**summary, "written": not no_write, "figures": figures, "files": tables, "items": report.items_table(),
              "stateProbabilities": states})
        return
    print_table(report.items_table(), title=f"BLIM of {name}: {label}, {method}, {summary['states']} states",
                digits=4)
    p = "" if summary["bootstrapP"] is None else f", bootstrap p = {summary['bootstrapP']:.3f} ({bootstrap} samples)"
    gof = f"G2 = {summary['G2']:.3f}" if summary["gofUndefined"] else \
        f"G2({summary['df']}) = {summary['G2']:.3f}, p = {summary['pValue']:.4g}"
    click.echo(f"{gof}{p}; AIC {summary['AIC']:.2f}, "
               f"BIC {summary['BIC']:.2f}; {summary['learners']} learners, {summary['patterns']} patterns, "
               f"{summary['iterations']} iterations{'' if summary['converged'] else ' (not converged)'}; mean "
               f"discrepancy {summary['discrepancy']:.3f}")
    if summary["convergenceNote"]:
        message(f"warning: {summary['convergenceNote']}")
    if summary["gofUndefined"]:
        message(summary["gofUndefined"])
    for note in (summary["identifiability"] or {}).get("note"), summary["boundaryNote"]:
        if note:
            message(note)
    if summary["residualsNote"] and out is not None:
        message(summary["residualsNote"])
    if summary["structureSource"]:
        message(f"structure: {summary['structureSource']}")
    if report.data.incomplete:
        message(f"{report.data.incomplete} learners left out: they did not answer every item")
    message("no graph (--responses): nothing written" if responses is not None else
            "written to the graph as run " + report.run_id if not no_write else "nothing written (--no-write)")
    for path in figures + tables:
        message(f"wrote {path}")


def _print_selection_set(candidates, summary: dict, dataset: str | None) -> None:
    """IITA's selection set as DAKS's summary gives it: every candidate's diff and error rate, the pairs each adds."""
    def local(item: str) -> str:
        return item.removeprefix(f"{dataset}:") if dataset else item

    table = candidates.assign(
        selected=["*" if s else "" for s in candidates["selected"]],
        added=[", ".join(f"{local(a)} < {local(b)}" for a, b in pairs) or "-" for pairs in candidates["added"]])
    print_table(table[["index", "size", "diff", "errorRate", "selected", "added"]],
                title=f"IITA ({summary['variant']}): the selection set, {len(table)} candidate quasi-orders; "
                      f"the least diff wins (index {summary['selectionSetIndex']}); p < q: p is a prerequisite of q",
                digits=4)


@fit.command()
@click.option("--responses", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="The answers: a kstIO data file (.dat) or a 0/1 CSV with item names (learner ids first, if any).")
@click.option("--structure", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="A learning space (closed under union and well-graded) in any format fit blim reads: a 0/1 CSV "
                   "or a kstIO file (.kst, .spc, .bsr basis, .spr surmise relation).")
@click.option("--method", type=click.Choice(["ML", "MD", "MDML"]), default="ML", show_default=True,
              help="Maximum likelihood (EM), minimum discrepancy, or MD-restricted ML (pks::slm).")
@_em_options
@json_option
def slm(responses: Path, structure: Path, method: str, limit: int, max_iter: int, tol: float,
        as_json: bool) -> None:
    """Fit the simple learning model (one learning rate per item) of a learning space to a response file.

    Each item gets a learning rate g (the chance to learn it once it is in the outer
    fringe), which gives every state its probability, and the BLIM's careless-error
    (beta) and lucky-guess (eta) rates: n + 2n parameters where the BLIM has states - 1 +
    2n. Estimates equal R's pks::slm(K, N.R, method) on the same space and starting
    values; goodness of fit is G2 against the saturated model. --json also lists every
    state with its probability (pks's P.K). No graph is opened.

    \b
    Examples:
      kstp fit slm --responses DoignonFalmagne7.dat --structure DoignonFalmagne7.spc
      kstp fit slm --responses DoignonFalmagne7.dat --structure DoignonFalmagne7.spc --method MDML --json
    """
    from kstp.evaluators.slm import fit_slm_files

    with status(f"fitting a simple learning model to {responses.name}"):
        report = fit_slm_files(structure, responses, method, limit, max_iter, tol)
    summary = report.summary()
    if as_json:
        emit({**summary, "items": report.items_table(), "stateProbabilities": report.states_table()})
        return
    print_table(report.items_table(), title=f"SLM of {report.name}: {report.structure}, {method}, "
                f"{summary['states']} states", digits=4)
    gof = f"G2({summary['df']}) = {summary['G2']:.3f}, p = {summary['pValue']:.4g}" if summary["df"] > 0 else \
        f"G2 = {summary['G2']:.3f} (df = {summary['df']}: no chi-square reference)"
    click.echo(f"{gof}; AIC {summary['AIC']:.2f}, BIC {summary['BIC']:.2f}; {summary['learners']} learners, "
               f"{summary['patterns']} patterns, {summary['iterations']} iterations"
               f"{'' if summary['converged'] else ' (not converged)'}; mean discrepancy "
               f"{summary['discrepancy']:.3f}")
    if summary["convergenceNote"]:
        message(f"warning: {summary['convergenceNote']}")
    message(f"structure: {summary['structureSource']}")


#: kstp.evaluators.slm.MODELS, written out (--help imports no numerics).
_MODELS = ("slm", "blim-equal", "blim-careless-equal", "blim-guess-equal", "blim")


@fit.command()
@click.option("--responses", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="The answers: a kstIO data file (.dat) or a 0/1 CSV with item names.")
@click.option("--structure", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="The structure every model is fitted on (any file fit blim --structure reads).")
@click.option("--model", "models", type=click.Choice(_MODELS), multiple=True, required=True,
              help="A model, most restricted first, given two or more times: slm (a learning space's simple "
                   "learning model), blim-equal (every careless and every guess rate equal), blim-careless-equal, "
                   "blim-guess-equal, blim (every rate free). Each must be nested in the next: slm in blim; "
                   "blim-equal in blim-careless-equal or blim-guess-equal, each in blim.")
@click.option("--method", type=click.Choice(["ML", "MD", "MDML"]), default="ML", show_default=True,
              help="How every model is fitted (pks's method).")
@json_option
def compare(responses: Path, structure: Path, models: tuple[str, ...], method: str, as_json: bool) -> None:
    """Test nested models of a structure against each other by their likelihood ratio (pks's anova).

    Each model is fitted to the answers; each row from the second on tests it against
    the row before: the drop in deviance (G2) against the chi-square with the drop in
    residual df. A small p: the less restricted model fits better than chance alone
    would make it. Equal to R's anova(m1, m2, ...) on pks's blim and slm fits.

    \b
    Examples:
      kstp fit compare --responses DoignonFalmagne7.dat --structure DoignonFalmagne7.spc --model slm --model blim
      kstp fit compare --responses DoignonFalmagne7.dat --structure DoignonFalmagne7.spc --model blim-equal \\
        --model blim --method MD --json
    """
    from kstp.evaluators.slm import compare_files

    with status(f"fitting {len(models)} models to {responses.name}"):
        rows = compare_files(structure, responses, list(models), method)
    if as_json:
        emit({"responses": responses.name, "structure": structure.name, "method": method, "models": rows})
        return
    import pandas as pd

    columns = ["model", "parameters", "residDf", "residDeviance", "df", "deviance", "p"]
    def shown(column, value):  # a small p keeps its size (3.5e-08), not 0.0000
        if value is None:
            return "-"
        return f"{value:.4f}" if column == "p" and value >= 1e-4 else f"{value:.3g}" if column == "p" else value

    table = pd.DataFrame([{c: shown(c, row[c]) for c in columns} for row in rows], dtype=object)
    print_table(table,
                title=f"Analysis of deviance: {structure.name} on {responses.name}, {method}", digits=4)


def _fit_files(report, out: Path, name: str, title: str) -> tuple[list[str], list[str]]:
    """The residual plot and the error rates (PNG), the states with their probabilities and the learners' states
    (CSV), in ``out``; their paths.

    With no degrees of freedom pks defines every deviance residual as 0; the plot then
    shows the Pearson residuals and says why on it.
    """
    from kstp.kst.blim_gof import residuals
    from kstp.loaders.kstio import write_kst_file
    from kstp.reports import plots

    kind = "pearson" if report.fit.df <= 0 else "deviance"
    _, mu, res = residuals(report.fit, kind)
    paths = [plots.residual_plot(mu, res, out / f"blim_residuals_{name}.png", title, note=report.residuals_note())]
    names = [q.split(":", 1)[-1] for q in report.fit.items]
    paths.append(plots.error_rates(names, report.fit.beta, report.fit.eta, out / f"blim_rates_{name}.png", title,
                                   report.fit.beta_se, report.fit.eta_se))
    tables = [write_kst_file(out / f"blim_states_{name}.csv", "structure", report.fit.states, names, "csv",
                             extra={"probability": report.fit.p_k}), out / f"blim_learners_{name}.csv"]
    write_csv(report.learners_table(), tables[-1], index=False)
    return [str(p) for p in paths], [str(p) for p in tables]


@fit.command()
@click.option("--dataset", help="Dataset whose human learners' answers are the evidence (or --responses).")
@click.option("--responses", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Learn from the answers in this file instead, without a graph (a kstIO data file or a 0/1 CSV "
                   "with item names); nothing is compared or written.")
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
@click.option("--z-test", is_flag=True, help="IITA 1 or 2: also test the selected relation's diff by its asymptotic "
              "Z (DAKS's z_test; the delta method's variance, not DAKS's, see the README).")
@click.option("--no-write", is_flag=True, help="Learn and print; write nothing to the graph.")
@json_option
@click.pass_context
def prerequisites(ctx, dataset: str | None, responses: Path | None, rule: str, variant: str, threshold: int | None,
                  search: str, limit: int, z_test: bool, no_write: bool, as_json: bool) -> None:
    """Learn a prerequisite relation from the answers and compare it with the Eq. 1 edges.

    The learned pairs go onto the graph as LEARNED_PREREQUISITE_OF {rule} edges,
    beside (never mixed with) the PREREQUISITE_OF edges every KST query reads; the
    report lists where the two relations disagree. IITA also prints its selection
    set, every candidate quasi-order with its diff and error rate, as DAKS's
    summary(iita(...)) does (the pairs of each in --json).

    \b
    Examples:
      kstp fit prerequisites --dataset probability_pks
      kstp fit prerequisites --dataset probability_pks --rule ita --search global --json
      kstp fit prerequisites --dataset frcsub --rule ita --threshold 30
      kstp fit prerequisites --responses probability.dat --variant 2 --json
      kstp fit prerequisites --responses DoignonFalmagne7.dat --z-test
    """
    if (dataset is None) == (responses is None):
        raise click.UsageError("give --dataset (answers on the graph) or --responses FILE (answers in a file)")
    for name in ("threshold", "search", "limit") if rule == "iita" else ("variant", "z_test"):
        if option_given(ctx, name):
            raise click.UsageError(f"--{name.replace('_', '-')} goes with --rule "
                                   f"{'ita' if rule == 'iita' else 'iita'}, not --rule {rule}")
    refuse_together(ctx, "threshold", ("search",), "a given threshold is used as it is, not searched")
    from kstp.evaluators import prerequisites as evaluator

    store = get_store(ctx) if responses is None else None
    no_write = no_write or responses is not None
    on_interrupt("nothing was written (--no-write)." if no_write else
                 "the learned pairs are written once the search has ended, so an interrupted search wrote none; "
                 "run the same command again (it also replaces what an interrupted write left).")
    with status(f"learning prerequisites of {dataset or responses.name} ({rule})"):
        report = evaluator.learn_prerequisites(store, dataset, rule, int(variant), threshold, search,
                                               write=not no_write, limit=limit, responses=responses, z_test=z_test)
    learned_only = report.pairs[~report.pairs["inEq1"]]
    if as_json:
        extra = {} if report.candidates is None else {"candidates": report.candidates}
        emit({**report.summary(), "written": not no_write, "pairs": report.pairs,
              "eq1OnlyPairs": [{"fromId": a, "toId": b} for a, b in report.eq1_only], **extra})
        return
    s = report.summary()
    if report.candidates is not None:
        _print_selection_set(report.candidates, s, dataset)
    if "zTest" in s:
        t = s["zTest"]
        click.echo(f"Z test of the selected relation's diff / N^2 = {t['diff']:.4g} against 0: Z = {t['z']:.3f}, "
                   f"p = {t['p']:.4g}, 95 % interval [{t['conf'][0]:.4g}, {t['conf'][1]:.4g}]")
    if responses is not None:
        print_table(report.pairs[["fromId", "toId", "counterexamples"]], title="learned prerequisite pairs")
        return
    click.echo(f"{s['learned']} learned pairs ({rule}), {s['eq1']} Eq. 1 pairs: {s['both']} in both, "
               f"{s['learnedOnly']} learned only, {s['eq1Only']} Eq. 1 only")
    if len(learned_only):
        print_table(learned_only[["fromId", "toId", "counterexamples"]], title="learned, not in Eq. 1")
    if report.eq1_only:
        click.echo("Eq. 1, not learned: " + ", ".join(f"{a} -> {b}" for a, b in report.eq1_only))
