"""``kstp assess``: find a learner's or a model's knowledge state by asking a few well-chosen questions."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.models import backend_options, gen_kwargs_help, parse_sampling, prompt_option, start_backend
from kstp.cli.models import budget as token_budget
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
    status,
)

__all__ = ["assess"]

#: Questioning rules (kstp.kst.assess.RULES; named here so --help imports no numerics).
_RULES = ("half-split", "entropy", "variance", "random")
_STRUCTURES = ("fit", "surmise")
_MODES = ("learner", "model", "replay_learners", "replay_run", "simulate")
_FLAGS = {"learner": "--learner", "model": "--model", "replay_learners": "--replay-learners",
          "replay_run": "--replay-run", "simulate": "--simulate"}


def _structure(ctx, param, value: str) -> str | Path:
    if value in _STRUCTURES:
        return value
    path = Path(value)
    if not path.is_file():
        raise click.BadParameter(f"{value!r} is neither fit nor surmise, and file {value!r} does not exist", ctx, param)
    return path


def _rate(ctx, param, value: float | None) -> float | None:
    if value is not None and not 0 <= value < 1:
        raise click.BadParameter(f"{value} is not a rate in [0, 1)", ctx, param)
    return value


def _threshold(ctx, param, value: float) -> float:
    if not 0 < value <= 1:  # FloatRange lets nan through
        raise click.BadParameter(f"{value} is not a posterior probability in (0, 1]", ctx, param)
    return value


def _name(ctx, param, value: str | None) -> str | None:
    """A person's name: printable, not empty (with or without its dataset prefix)."""
    if value is None:
        return None
    name = value.strip()
    if not name or name.endswith(":"):
        raise click.BadParameter("give the person's name, e.g. ada", ctx, param)
    if not name.isprintable():
        raise click.BadParameter(f"{name!r} holds a control character (a newline, a tab, an escape)", ctx, param)
    return name


@click.command()
@click.option("--dataset", help="Dataset whose questions are asked (its BLIM fit or derived prerequisites).")
@click.option("--structure", default="fit", show_default=True, callback=_structure, metavar="fit|surmise|FILE",
              help="fit: the dataset's BLIM fit on the graph (kstp fit blim): its states, state probabilities and "
              "rates; surmise: the dataset's derived prerequisites as a surmise relation, for domains whose states "
              "cannot be listed (Gibbs sampling; thousands of questions); FILE: a structure file (kstIO or 0/1 CSV), "
              "its probability column as the prior if it has one.")
@click.option("--prior", type=click.Choice(["fit", "uniform"]), default="fit", show_default=True,
              help="The states' prior: the fitted (or the file's) probabilities, or all alike.")
@click.option("--careless", type=float, callback=_rate, help="Every question's careless-error rate (default: the "
              "fit's, else 0.1).")
@click.option("--guess", type=float, callback=_rate, help="Every question's guessing rate (default: the fit's, "
              "else 0.1).")
@click.option("--rule", type=click.Choice(_RULES), help="Questioning rule: half-split (the question closest to "
              "splitting the likelihood in half; the default on listed states), entropy (the most informative), "
              "variance (the least expected variance of the predicted accuracy; the default on the surmise "
              "relation), random (the baseline).")
@click.option("--threshold", type=click.FloatRange(0, 1, min_open=True), default=0.8, show_default=True,
              callback=_threshold, help="Stop once the most likely state's posterior passes this (on the surmise "
              "relation: once every question's mastery lies outside (1 - T, T)).")
@click.option("--budget", type=click.IntRange(min=1), help="Stop after this many questions (default: none on "
              "listed states; on the surmise relation 10 % of the questions).")
@click.option("--batch", type=click.IntRange(min=1), help="Questions asked at once (default 1; a model: 4, so a "
              "server has several in flight).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the random rule, of ties and of "
              "simulated learners.")
@click.option("--learner", callback=_name, help="Assess a person interactively: their name (stored as learner "
              "<dataset>:<name>; the same command again resumes their session).")
@click.option("--again", is_flag=True, help="With --learner: start a new assessment though one finished.")
@click.option("--model", help="Assess a model: only the chosen questions are asked, through the run engine.")
@backend_options
@click.option("--gen-kwargs", help=gen_kwargs_help(16384, context=16384) + " As evaluate answers.")
@click.option("--model-seed", type=SEED, default=42, show_default=True,
              help="Seed of the model's sampling (evaluate answers' --seed: the same seed finds its answers).")
@prompt_option
@click.option("--replay-learners", type=click.IntRange(min=0), metavar="N",
              help="Replay N recorded learners (0: all who answered every question) adaptively, each left out of "
              "the fit, against the state of their full answers.")
@click.option("--replay-run", metavar="RUN", help="Replay a stored model run over every question adaptively: the "
              "predicted accuracy and PSR against the run's own, and the questions and tokens saved.")
@click.option("--simulate", type=click.IntRange(min=1), metavar="N", help="Simulate N learners drawn from the model "
              "and assess them under every rule (or --rule's): questions asked against the true state found, per "
              "threshold.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="With --simulate: also write the curves (PNG) and the tables (CSV) to this folder.")
@json_option
@click.pass_context
def assess(ctx, dataset, structure, prior, careless, guess, rule, threshold, budget, batch, seed, learner, again,
           model, backend, base_url, model_args, concurrency, resume, gen_kwargs, model_seed, prompt,
           replay_learners, replay_run, simulate, out, as_json) -> None:
    """Find a learner's or a model's knowledge state by asking a few well-chosen questions.

    Each answer reweights the states of the structure under the BLIM (careless and
    guessing rates), the next question is the one the rule picks, and the assessment
    stops when one state's posterior passes --threshold, when no question is
    informative, or at --budget. It prints the most likely state with its posterior,
    its fringes (what was learnt last, what to learn next), the questions asked in order
    and the accuracy and PSR predicted over all questions with 95 % intervals, and
    stores it as a Run of evaluator assess. One mode: --learner (a person, typed answers
    graded by kstp's grader, resumable), --model (a model, through the run engine),
    --replay-learners, --replay-run or --simulate. A person's questions and prompts go
    to stderr, the result to stdout; answers may come from a file, one a line (empty:
    don't know); when they run out the session pauses, to be resumed.

    \b
    Examples:
      kstp fit blim --dataset probability_pks --structure delineated
      kstp assess --dataset probability_pks --learner ada
      kstp assess --dataset probability_pks --model smollm2 --backend local --gen-kwargs max_tokens=128
      kstp assess --dataset probability_pks --simulate 200 --out results/assess
      kstp assess --dataset probability_pks --replay-learners 50 --json
      kstp assess --dataset probability_pks --structure surmise --rule variance --budget 4 --simulate 20
    """
    modes = [m for m in _MODES if option_given(ctx, m)]
    if len(modes) != 1:
        raise click.UsageError("give one of " + ", ".join(_FLAGS.values()) + (
            f"; not {' and '.join(_FLAGS[m] for m in modes)} together" if modes else ""))
    mode = modes[0]
    if again and mode != "learner":
        raise click.UsageError("--again goes with --learner")
    if out and mode != "simulate":
        raise click.UsageError("--out goes with --simulate")
    if mode == "learner" and isinstance(structure, Path):
        raise click.UsageError("--learner goes with --structure fit or surmise: a structure file's questions are no "
                               "dataset's, so a person's answers could be neither graded, stored nor resumed")
    if careless is not None and guess is not None and careless + guess >= 1:
        raise click.BadParameter(f"--careless {careless} and --guess {guess} add up to 1 or more: a right answer "
                                 "would then tell against mastery", param_hint="--careless/--guess")
    from kstp.evaluators.assess import load_model
    from kstp.evaluators.assess.model import Settings

    store = get_store(ctx) if dataset is not None else None
    if store is None and isinstance(structure, str):
        raise click.UsageError("give --dataset, or --structure FILE")
    with status("reading the structure"):
        assessment = load_model(store, dataset, structure, prior, careless, guess)
    surmise = assessment.method == "surmise"
    rule_given = rule is not None
    rule = rule or ("variance" if surmise else "half-split")
    if surmise and budget is None:
        budget = max(1, len(assessment.items) // 10)
    settings = Settings(rule, threshold, budget, batch or (4 if mode == "model" else 1), seed)
    message(f"{assessment.source}; rule {rule}, threshold {threshold}" + (f", budget {budget}" if budget else ""))
    if mode == "learner":
        _person(store, assessment, learner, settings, again, as_json)
    elif mode == "model":
        if store is None:
            raise click.UsageError("--model needs --dataset: a model answers a dataset's questions")
        _model(ctx, store, assessment, settings, model, backend, base_url, model_args, concurrency, resume,
               gen_kwargs, model_seed, prompt, as_json)
    elif mode == "replay_learners":
        from kstp.evaluators.assess.replay import replay_learners as replay

        with progress_bar("replaying learners, each left out of the fit") as update:
            result = replay(store, assessment, settings, replay_learners or None, seed, progress=update)
        _print_replay(result, as_json)
    elif mode == "replay_run":
        from kstp.evaluators.assess.replay import replay_run as replay

        result = replay(store, replay_run, assessment, settings)
        _print_run_replay(result, as_json)
    else:
        _simulate(assessment, settings, simulate, out, as_json, (rule,) if rule_given else _RULES)


class _EndOfInput(Exception):
    """The answers ran out (end of input): the session pauses, to be resumed."""


def _ask(question) -> str:
    """Show a question and read the typed answer (empty: don't know), on stderr: stdout holds the result."""
    click.echo("", err=True)
    label = f"Question {question.number} ({question.id.split(':', 1)[-1]})"
    try:
        if question.text:
            click.echo(f"{label}: {question.text}", err=True)
            return click.prompt("Your answer (empty: I don't know)", default="", show_default=False, err=True)
        return click.prompt(f"{label}: do you master it? [y/n]", default="", show_default=False, err=True)
    except click.exceptions.Abort as exc:  # end of input (a file of answers ran out, Ctrl-D): pause, not fail
        if isinstance(exc.__context__, KeyboardInterrupt):  # click turns Ctrl-C into Abort too: an interruption
            raise KeyboardInterrupt from None
        raise _EndOfInput from None


def _person(store, assessment, name, settings, again, as_json) -> None:
    from kstp.evaluators.assess.session import assess_person

    on_interrupt("every answer given is stored; the same command resumes the session.")
    try:
        result = assess_person(store, assessment, name, settings, _ask, again)
    except _EndOfInput as exc:
        message("end of input: the session is paused with every answer given stored; the same command resumes it")
        if as_json and getattr(exc, "record", None) is not None:
            emit(exc.record)  # status interrupted, as the graph has it: the questions asked so far and the estimate
        return
    if result.get("resumed") and result["status"] == "finished" and result["resumed"] == result["asked"] \
            and not as_json:
        message(f"{result['learner']}'s assessment had finished; --again starts a new one")
    _print_result(result, as_json)


def _model(ctx, store, assessment, settings, model, backend, base_url, model_args, concurrency, resume, gen_kwargs,
           model_seed, prompt, as_json) -> None:
    from kstp.evaluators.assess.llm import assess_model

    sampling = parse_sampling(gen_kwargs, token_budget("answers"), n=1, seed=model_seed)
    engine = start_backend(backend, model, model_args, base_url, concurrency, model_seed, sampling=sampling)
    try:
        with progress_bar(f"assessing {model}") as update:
            def progress(step):
                update(step["asked"], settings.budget or len(assessment.items))

            result = assess_model(store, engine, assessment, settings, sampling, prompt, new_run=not resume,
                                  progress=progress)
    finally:
        engine.close()
    _print_result(result, as_json)
    if result["status"] == "incomplete":
        message(f"{result['pending']} question(s) got no reply from the server; the same command asks them again")
        ctx.exit(1)


def _short(ids) -> str:
    return ", ".join(q.split(":", 1)[-1] for q in ids) or "none"


def _interval(prediction: dict, key: str) -> str:
    low, high = prediction[f"{key}Interval"]
    return f"{prediction[key]:.3f} [{low:.3f}, {high:.3f}]" if low is not None else f"{prediction[key]:.3f}"


def _print_result(result: dict, as_json: bool) -> None:
    import pandas as pd

    if as_json:
        emit(result)
        return
    who = result.get("model") or result.get("learner") or "the learner"
    lines = [f"{who} on {result['dataset'] or 'the structure'}: {result['asked']} of {result['questions']} questions "
             f"asked ({result['status']}" + (f", stopped: {result['stopped']}" if result.get("stopped") else "") + ")",
             f"state ({len(result['state'])} questions): {_short(result['state'])}"]
    if result.get("statePosterior") is not None:
        lines.append(f"posterior of the state: {result['statePosterior']:.3f}")
    lines += [f"learnt last (inner fringe): {_short(result['innerFringe'])}",
              f"to learn next (outer fringe): {_short(result['outerFringe'])}"]
    prediction = result.get("prediction")
    if prediction:
        lines.append(f"predicted accuracy over all questions: {_interval(prediction, 'accuracy')}")
        if prediction.get("psrMicro") is not None:
            lines.append(f"predicted PSR micro {_interval(prediction, 'psrMicro')}, "
                         f"macro {_interval(prediction, 'psrMacro')}")
    if result.get("runId"):
        lines.append(f"run: {result['runId']}")
    for line in lines:
        click.echo(line)
    if result["path"]:
        columns = ["question", "answer", "correct", "posterior", "stateSize"]
        frame = pd.DataFrame(result["path"])
        frame["question"] = frame["question"].str.split(":", n=1).str[-1]
        print_table(frame[[c for c in columns if c in frame]], "Questions in order (posterior of the most likely "
                    "state after each)")


def _print_replay(result: dict, as_json: bool) -> None:
    import pandas as pd

    if as_json:
        emit(result)
        return
    summary = {k: v for k, v in result.items() if k not in ("rows", "settings")}
    print_table(pd.DataFrame([summary]), f"Recorded learners of {result['dataset']} replayed "
                f"({'each left out of the fit' if result['leaveOneOut'] else 'on the full fit'})")


def _print_run_replay(result: dict, as_json: bool) -> None:
    import pandas as pd

    if as_json:
        emit(result)
        return
    rows = []
    for key in ("accuracy", "psrMicro", "psrMacro"):
        if result["full"].get(key) is None:
            continue
        a = result["adaptive"]
        rows.append({"figure": key, "full run": result["full"][key], "adaptive": a.get(key),
                     "low": a.get(f"{key}Interval", [None, None])[0], "high": a.get(f"{key}Interval", [None, None])[1],
                     "in interval": result["inInterval"].get(key)})
    print_table(pd.DataFrame(rows), f"Run {result['runId']} replayed: {result['adaptive']['asked']} questions "
                f"asked, {100 * result['saved']['questions']:.0f} % saved"
                + (f", tokens {100 * result['saved']['tokens']:.0f} % saved" if result["saved"]["tokens"] else ""))


def _simulate(assessment, settings, learners: int, out: Path | None, as_json: bool, rules) -> None:
    import pandas as pd

    from kstp.evaluators.assess.replay import study

    with status(f"simulating {learners} learners under every rule"):
        result = study(assessment, learners, settings.seed, rules=rules, budget=settings.budget,
                       batch=settings.batch)
    if out is not None:
        from kstp.csvcells import write_csv
        from kstp.reports.plots import curves

        out.mkdir(parents=True, exist_ok=True)
        name = assessment.dataset or "structure"
        if result["method"] == "listed":
            write_csv(pd.DataFrame(result["thresholds"]), out / f"assess_thresholds_{name}.csv")
            frame = pd.DataFrame(result["curve"])
            write_csv(frame, out / f"assess_curve_{name}.csv")
            curves({rule: group for rule, group in frame.groupby("rule", sort=False)}, out / f"assess_{name}.png",
                   f"{name}: simulated learners ({learners})", "questions asked", "within one item of the true state",
                   x="asked", y="withinOne")
        else:
            write_csv(pd.DataFrame(result["rules"]), out / f"assess_rules_{name}.csv")
        message(f"wrote the tables{' and the figure' if result['method'] == 'listed' else ''} to {out}/")
    if as_json:
        emit(result)
    elif result["method"] == "listed":
        print_table(pd.DataFrame(result["thresholds"]), f"{learners} simulated learners per rule: stopping thresholds")
        every = result["allQuestions"]
        if every:
            click.echo(f"asking every question: true state {every['exact']:.3f}, within one item "
                       f"{every['withinOne']:.3f}, mean distance {every['distance']:.3f}")
    else:
        print_table(pd.DataFrame(result["rules"]), f"{learners} simulated learners, {result['budget']} questions "
                    "each")
