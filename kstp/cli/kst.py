"""``kstp kst``: knowledge states and fringes of a dataset, with every set checked."""

from __future__ import annotations

from pathlib import Path

import click

from kstp.cli.output import (
    SEED,
    emit,
    get_store,
    graph_format_option,
    json_option,
    message,
    on_interrupt,
    out_option,
    output_format,
    print_table,
    progress_bar,
    refuse_together,
)

# spaces.FRINGES, written out: importing the spaces module here would slow every `kstp --help`
_FRINGES = ("standard", "notions")

__all__ = ["kst"]

#: States that counting may enumerate where the space cannot be counted without listing (8 bytes each).
COUNT_LIMIT = 10**7


def _fringe_option(command):
    return click.option("--fringe", type=click.Choice(_FRINGES), default="standard", show_default=True,
                        help="standard: the items q with K + {q} (outer) or K - {q} (inner) a state, as R's pks; an "
                        "item with an equally informative partner is in neither. notions: the fringes of the "
                        "classes of equally informative items (the discriminative reduction), each class listed "
                        "whole.")(command)


def _ids(dataset: str, text: str) -> list[str]:
    """Comma-separated question ids, local or full (:func:`~kstp.graph.structures.scoped_question_ids`)."""
    from kstp.graph.structures import scoped_question_ids

    return scoped_question_ids(dataset, [v for v in (x.strip() for x in text.split(",")) if v])


def _note_underived(store, dataset: str) -> None:
    """Say on stderr when no question of ``dataset`` has a prerequisite: every set is then a state.

    Usually Eq. 1 was never derived for it; a derivation that found no pair (questions
    without concepts, or on unrelated ones) reads the same, so this is a note, not a refusal.
    """
    bound = store.run("space_lower_bound", {"dataset": dataset})
    if bound and bound[0]["questions"] and bound[0]["withoutPrerequisites"] == bound[0]["questions"]:
        click.echo(f"note: no question of dataset {dataset} has a prerequisite, so every question is free and every "
                f"set is a knowledge state; derive them first: kstp derive question-prerequisites --dataset "
                f"{dataset} --rule strict|reflexive", err=True)


@click.group()
def kst() -> None:
    """Knowledge states and fringes of a dataset's derived prerequisite relation."""


@kst.command()
@click.option("--dataset", required=True, help="Dataset whose question prerequisites define the structure.")
@click.option("--state", "state_ids", default="", help="Comma-separated question ids (with or without the "
              "dataset prefix); empty for the empty state.")
@click.option("--learner", help="Use this learner's knowledge state (the questions it answered correctly).")
@_fringe_option
@json_option
@click.pass_context
def fringe(ctx, dataset: str, state_ids: str, learner: str | None, fringe: str, as_json: bool) -> None:
    """Print the inner and outer fringe of a knowledge state; refuse a set that is not one.

    The outer fringe holds what the learner is ready to learn next; the inner fringe
    what was learned last. A set that is not closed under the prerequisites is
    refused, naming each item and the prerequisites it lacks (exit 1).

    \b
    Examples:
      kstp kst fringe --dataset frcsub --state Item06,Item08
      kstp kst fringe --dataset frcsub --state Item09 --fringe notions
      kstp kst fringe --dataset probability_pks --learner probability_pks:l0001 --json
    """
    refuse_together(ctx, "learner", ("state_ids",), "--learner takes that learner's state, --state names one")
    from kstp.graph import structures
    store = get_store(ctx)
    ids = structures.knowledge_state(store, dataset, learner) if learner else _ids(dataset, state_ids)
    _note_underived(store, dataset)
    result = {"dataset": dataset, "state": sorted(ids), "fringe": fringe,
              "innerFringe": structures.inner_fringe(store, dataset, ids, fringe),
              "outerFringe": structures.outer_fringe(store, dataset, ids, fringe)}
    if as_json:
        emit(result)
    else:
        for key in ("state", "innerFringe", "outerFringe"):
            click.echo(f"{key}: {', '.join(result[key]) or '(empty)'}")


@kst.command()
@click.option("--dataset", required=True, help="Dataset whose question prerequisites define the structure.")
@click.option("--state", "state_ids", required=True, help="Comma-separated question ids.")
@json_option
@click.pass_context
def check(ctx, dataset: str, state_ids: str, as_json: bool) -> None:
    """Say whether an item set is a knowledge state and, if not, what breaks closure.

    Exit status 0 for a knowledge state, 1 for a set that is not one (each item with
    the prerequisites it lacks, on stdout; ``--json`` keeps the verdict) or an unknown id.

    \b
    Example:
      kstp kst check --dataset frcsub --state Item04,Item10
    """
    from kstp.graph import structures
    store = get_store(ctx)
    violations = structures.check_state(store, dataset, _ids(dataset, state_ids))
    _note_underived(store, dataset)
    if as_json:
        emit({"isState": not violations, "missingPrerequisites": violations})
    elif not violations:
        click.echo("a knowledge state (closed under prerequisites)")
    else:
        click.echo("not a knowledge state:")
        for item, missing in sorted(violations.items()):
            click.echo(f"  {item} lacks {', '.join(missing)}")
    if violations:
        ctx.exit(1)


@kst.command()
@click.option("--dataset", required=True, help="Dataset whose question prerequisites define the space.")
@click.option("--count", "mode", flag_value="count", default=True, help="Count the states (default).")
@click.option("--enumerate", "mode", flag_value="enumerate", help="List every state with its fringes.")
@click.option("--sample", type=click.IntRange(min=1), help="Draw N states, approximately uniformly (Glauber chain).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of --sample.")
@click.option("--limit", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Refuse to enumerate more states than this.")
@_fringe_option
@click.option("--store", is_flag=True, help="Store the listed or sampled states as KnowledgeState nodes.")
@out_option("the Hasse diagram as hasse_<dataset>.svg, .png and .dot (up to 200 states drawn one by one, areas "
            "by the latest BLIM fit's state probabilities when it fitted this space; above, the states per size; "
            "with --sample, the sampled states per size)")
@graph_format_option
@click.pass_context
def space(ctx, dataset: str, mode: str, sample: int | None, seed: int, limit: int, fringe: str, store: bool,
          out: Path | None, as_json: bool) -> None:
    """Count, enumerate or sample the knowledge states of a dataset (its knowledge space).

    States are the question sets closed under the derived prerequisites; equally
    informative questions (mutual prerequisites) move together. A space too large to
    count (more than 10^7 states that cannot be counted without listing them) or to
    list (more than --limit) is refused at once, before it is built, with its count
    or a lower bound and a hint to sample; sampling holds only the drawn states. A
    printed state of more than 12 questions is shortened (--json and --format csv give
    it whole). --out draws the Hasse diagram (states by size, each edge labelled with the
    question it adds); --format dot prints it for Graphviz.

    \b
    Examples:
      kstp kst space --dataset probability_pks
      kstp kst space --dataset probability_pks --enumerate --json
      kstp kst space --dataset xes3g5m --sample 100 --seed 1 --store
      kstp kst space --dataset probability_pks --out figures/
      kstp kst space --dataset probability_pks --format dot
    """
    refuse_together(ctx, "sample", ("mode",), "--sample draws states, --count counts them, --enumerate lists them")
    if store and mode == "count" and sample is None:
        raise click.UsageError("--store goes with --enumerate or --sample: a count lists no state to store")
    from kstp.graph import structures
    graph = get_store(ctx)
    _note_underived(graph, dataset)
    if output_format() == "dot":
        if sample is not None:
            raise click.UsageError("--format dot draws every state: not with --sample")
        from kstp.evaluators.structures import space_dot

        click.echo(space_dot(graph, dataset, limit), nl=False)
        return
    if store:  # states are stored in one go, after they are all drawn or listed
        on_interrupt("no state was stored (states are stored once all are drawn or listed); "
                     "run the same command again.")
    if sample is not None:
        knowledge_space = structures.dataset_space(graph, dataset)
        with progress_bar(f"sampling {sample:,} states of {dataset}") as progress:
            states, source = knowledge_space.sample(sample, seed, progress=progress), f"sample:seed={seed}"
        rows = [{"state": sorted(s), "size": len(s), "innerFringe": knowledge_space.inner_fringe(s, fringe),
                 "outerFringe": knowledge_space.outer_fringe(s, fringe)} for s in states]
    elif mode == "enumerate":
        knowledge_space = structures.dataset_space(graph, dataset, limit)
        masks, inner, outer = knowledge_space.fringes(fringe, limit)
        states, source = knowledge_space.item_sets(masks), "enumeration"
        rows = [{"state": sorted(s), "size": len(s), "innerFringe": sorted(i), "outerFringe": sorted(o)}
                for s, i, o in zip(states, knowledge_space.item_sets(inner), knowledge_space.item_sets(outer),
                                   strict=True)]
    else:
        knowledge_space = structures.dataset_space(graph, dataset, COUNT_LIMIT)
        summary = _summary(dataset, knowledge_space)
        summary["states"] = knowledge_space.count(COUNT_LIMIT)
        if out is not None:
            summary["figures"] = _space_figures(graph, dataset, out, limit, None)
        if as_json:
            emit(summary)
        else:
            click.echo(f"{summary['states']:,} knowledge states over {summary['items']} questions "
                       f"({summary['classes']} classes of equally informative questions)")
        return
    summary = {**_summary(dataset, knowledge_space), "fringe": fringe}
    if out is not None:
        summary["figures"] = _space_figures(graph, dataset, out, limit, states if sample is not None else None)
    if store:
        # a state's id is its content: storing the same states again completes an interrupted write
        on_interrupt("the states written so far are kept; run the same command again to store the rest.")
        summary["stored"] = structures.store_states(graph, dataset, states, source)
    if as_json:
        emit({**summary, "states": rows})
        return
    from kstp.reports.diagrams import state_label

    shortened = False
    for row in rows:  # a state of thousands of questions would be a line of megabytes
        state = [q.removeprefix(f"{dataset}:") for q in row["state"]]
        ahead = [q.removeprefix(f"{dataset}:") for q in row["outerFringe"]]
        shortened |= len(state) > _SHOWN or len(ahead) > _SHOWN
        click.echo(f"{state_label(state, _SHOWN)}  outer fringe: "
                   f"{state_label(ahead, _SHOWN)[1:-1] if ahead else '-'}")
    click.echo(f"{len(rows):,} states listed ({source})", err=True)
    if shortened:
        message(f"note: states and fringes of more than {_SHOWN} questions are shortened (... (+k)); --json or "
                "--format csv lists them whole")


#: kstp.evaluators.structures.EXPORTS and kstp.loaders.kstio.FORMATS, written out (--help imports no numerics).
_EXPORTS = ("space", "base", "surmisefunction", "relation", "data", "fit")
_LAYOUTS = ("srbt", "kst", "matrix", "csv")


@kst.command()
@click.option("--dataset", required=True, help="Dataset whose structure, relation, answers or fit is written.")
@click.option("--what", type=click.Choice(_EXPORTS), required=True,
              help="space: the states of its knowledge space; base: the space's base; surmisefunction: each "
                   "question's clauses (kstIO's CSV of kstMatrix's kmsurmisefunction); relation: the surmise "
                   "relation; data: the human learners' complete response patterns; fit: the latest BLIM fit's "
                   "states (with their probabilities in a CSV).")
@click.option("--to", "path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The file to write (.kst/.spc, .bsr, .spr, .dat as kstIO names them; .csv for a CSV).")
@click.option("--layout", type=click.Choice(_LAYOUTS),
              help="srbt (kstIO's default, with an #SRBT line), kst (two count lines), matrix (rows only) or csv "
                   "(item names; learner ids or probabilities as columns) [default: csv for a .csv file, else srbt].")
@click.option("--limit", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Refuse a space with more states than this.")
@json_option
@click.pass_context
def export(ctx, dataset: str, what: str, path: Path, layout: str | None, limit: int, as_json: bool) -> None:
    """Write a dataset's space, base, surmise function or relation, answers or BLIM fit as a file R's kstIO reads.

    Columns are the dataset's questions in order (a CSV names them by local id), so
    that `kst import` and `fit blim --structure` read them back the same way. A fit
    goes out as its states with each state's probability (CSV): in R,
    K <- read.csv(FILE); P.K <- K$probability.

    \b
    Examples:
      kstp kst export --dataset probability_pks --what space --to probability.spc
      kstp kst export --dataset probability_pks --what relation --to probability.spr
      kstp kst export --dataset probability_pks --what surmisefunction --to probability_sf.csv
      kstp kst export --dataset probability_pks --what data --to probability.dat
    """
    from kstp.evaluators.structures import export_dataset

    result = export_dataset(get_store(ctx), dataset, what, path, layout, limit)
    if as_json:
        emit(result)
        return
    message(f"wrote {result['file']}: {result['rows']:,} rows x {result['items']} items ({what}, {result['layout']})")
    if result["note"]:
        message(f"note: {result['note']}")


@kst.command()
@click.option("--dataset", help="Draw from this dataset's latest BLIM fit (kstp fit blim).")
@click.option("--structure", "path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Draw from this structure file instead (kstIO file or 0/1 CSV; a CSV's probability column gives "
                   "the state probabilities, else all states are equally likely).")
@click.option("--learners", type=click.IntRange(1, 10_000_000),
              help="How many learners to draw, at most 10,000,000 [default: as many as the fit had; required with "
                   "--structure].")
@click.option("--careless", type=click.FloatRange(0, 1),
              help="Careless-error rate (beta) of every item [default: the fitted rates; 0.1 with --structure].")
@click.option("--guess", type=click.FloatRange(0, 1),
              help="Lucky-guess rate (eta) of every item [default: the fitted rates; 0.1 with --structure].")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the draw: the same seed, the same data.")
@click.option("--to", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the learners' response patterns here (.dat: kstIO's data file; .csv: with learner ids).")
@click.option("--layout", type=click.Choice(_LAYOUTS), help="Layout of --to [default: csv for a .csv file, else "
              "srbt].")
@json_option
@click.pass_context
def simulate(ctx, dataset: str | None, path: Path | None, learners: int | None, careless: float | None,
             guess: float | None, seed: int, out: Path | None, layout: str | None, as_json: bool) -> None:
    """Draw response patterns from a BLIM (pks's simulate): a dataset's fit or a structure file, seeded.

    Each learner gets a state by the state probabilities, then each answer
    independently: an item of the state is missed with the careless-error rate, an item
    outside it solved with the lucky-guess rate. Prints the distinct patterns with their
    counts (pks's N.R); --to writes one row per learner, which kstp fit blim --responses
    and R's kstIO read_kdata read.

    \b
    Examples:
      kstp kst simulate --structure probability.spc --learners 500 --seed 1 --to simulated.dat
      kstp kst simulate --structure probability.spc --learners 500 --careless 0.05 --guess 0.1 --json
    """
    refuse_together(ctx, "dataset", ("path",), "draw from a dataset's fit or from a file, not both")
    if dataset is None and path is None:
        raise click.UsageError("give --dataset (its BLIM fit) or --structure FILE")
    if layout is not None and out is None:
        raise click.UsageError("--layout goes with --to FILE")
    import pandas as pd

    from kstp.evaluators.structures import simulate_learners
    from kstp.kst.blim import response_patterns
    from kstp.loaders.kstio import write_kst_file

    store = get_store(ctx) if dataset is not None else None
    drawn = simulate_learners(store, dataset, path, learners, seed, careless, guess)
    local = [q.split(":", 1)[-1] for q in drawn["items"]]
    patterns, counts, _ = response_patterns(drawn["answers"])
    table = pd.DataFrame({"pattern": ["".join(map(str, row)) for row in patterns], "learners": counts})
    table = table.sort_values(["learners", "pattern"], ascending=[False, True], ignore_index=True)
    if out is not None:
        chosen = layout or ("csv" if out.suffix.lower() == ".csv" else "srbt")
        labels = [f"sim{i + 1:05d}" for i in range(drawn["learners"])] if chosen == "csv" else None
        write_kst_file(out, "data", drawn["answers"], local if chosen == "csv" else None, chosen, labels=labels)
    result = {"source": drawn["source"], "learners": drawn["learners"], "seed": seed, "items": local,
              "careless": drawn["careless"].tolist(), "guess": drawn["guess"].tolist(),
              "file": str(out) if out else None, "patterns": table}
    if as_json:
        emit(result)
        return
    click.echo(f"{drawn['learners']:,} learners drawn from {drawn['source']} (seed {seed}); pattern cells are the "
               f"items {' '.join(local)}")
    print_table(table)
    if out is not None:
        message(f"wrote {out}")


@kst.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset whose questions the file's columns are.")
@click.option("--as", "kind", type=click.Choice(("relation", "structure", "space", "basis", "data")),
              help="What the file holds [default: its #SRBT line, else its name: .spr relation, .kst structure, "
                   ".spc space, .bsr basis, .dat data].")
@json_option
@click.pass_context
def import_(ctx, path: Path, dataset: str, kind: str | None, as_json: bool) -> None:
    """Read a surmise relation or structure as a dataset's question prerequisites, or response patterns as answers.

    A relation (closed reflexively and transitively) or the surmise relation of a
    structure replaces the dataset's question prerequisites (rule "imported"): kst
    fringe, kst space, fit blim and evaluate psr then use it. Response patterns become
    learners' answers. Unnamed columns are the dataset's questions in order (as kst
    export writes them); a CSV header names them. Importing the same file again changes
    nothing.

    \b
    Examples:
      kstp kst import probability.spr --dataset probability_pks
      kstp kst import simulated.dat --dataset probability_pks --json
    """
    from kstp.evaluators.structures import import_file

    result = import_file(get_store(ctx), dataset, path, kind)
    if as_json:
        emit(result)
        return
    if result["as"] == "data":
        message(f"{result['learners']:,} learners' answers to {result['items']} questions read from {path.name} "
                f"({result['columns']})")
        if result["learnerIds"] != "from the file":  # made up from the file's name: another name, other learners
            message(f"the file names no learners: they are {result['learnerIds']}, new learners of {dataset} unless "
                    "this file was imported before under the same name")
    else:
        message(f"{result['pairs']:,} prerequisite pairs of dataset {dataset} from {path.name} ({result['columns']}); "
                f"{result['replaced']:,} earlier pairs removed")
    if result.get("note"):
        message(f"note: {result['note']}")


#: kstp.evaluators.structures.SHOW, written out (--help imports no numerics).
_SHOW = ("summary", "base", "atoms", "surmisefunction", "relation", "notions", "fringes", "paths")


def _local(value, dataset: str | None):
    """Question ids of ``dataset`` without their prefix, in a value (a list of lists, a list, an id) for a table."""
    if dataset is None:
        return value
    if isinstance(value, list):
        return [_local(v, dataset) for v in value]
    return value.removeprefix(f"{dataset}:") if isinstance(value, str) else value


def _joined(value, empty: str = "-"):
    """A cell of a printed table: a list of items as ``a, b`` (``empty`` when there is none), a list of steps
    as ``a; b, c``."""
    if isinstance(value, list):
        return "; ".join(_joined(v) for v in value) if value and isinstance(value[0], list) else ", ".join(
            map(str, value)) or empty
    return value


@kst.command()
@click.option("--dataset", help="Analyse the knowledge space of this dataset's derived prerequisites.")
@click.option("--structure", "path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Analyse this structure file instead: a kstIO file (.kst, .spc, .bsr basis, .spr relation, a "
                   "surmise function CSV) or a 0/1 CSV of states with item names.")
@click.option("--show", type=click.Choice(_SHOW), default="summary", show_default=True,
              help="summary: properties and counts; base, atoms, surmisefunction (each item's clauses, as "
                   "kstMatrix), relation (surmise pairs), notions (equally "
                   "informative items), fringes (every state's inner and outer fringe) or paths: one table.")
@click.option("--from", "start", metavar="STATE", help="--show paths: the gradations from this state "
              "(comma-separated items; empty: the empty set) ...")
@click.option("--to", "goal", metavar="STATE", help="... to this one (default: the learning paths from the empty "
              "set to all items).")
@click.option("--paths", type=click.IntRange(min=0), default=20, show_default=True,
              help="--show paths: how many to list (all are counted).")
@click.option("--limit", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Refuse a structure with more states than this.")
@out_option("the Hasse diagram as hasse_<name>.svg, .png and .dot (node areas: a CSV's probability column, e.g. a "
            "fit's states from kstp kst export --what fit)")
@graph_format_option
@click.pass_context
def analyse(ctx, dataset: str | None, path: Path | None, show: str, start: str | None, goal: str | None, paths: int,
            limit: int, out: Path | None, as_json: bool) -> None:
    """Analyse a knowledge structure: closure, gradedness, base, atoms, surmise relation, fringes, learning paths.

    The structure is a dataset's knowledge space (--dataset) or any family of states in
    a file (--structure; it need not be a space). The summary says whether it is closed
    under union (a knowledge space), under intersection, both (quasi-ordinal), whether it
    is well-graded, which items are forward or backward graded (pks), and counts its
    base, atoms, surmise pairs, notions and learning paths (maximal chains from the empty
    set to all items). --show prints one of them as a table; --show paths with --from
    and --to lists the gradations between two states (one item per step).

    \b
    Examples:
      kstp kst analyse --structure probability.spc
      kstp kst analyse --structure probability.spr --show base --json
      kstp kst analyse --structure DoignonFalmagne7.spc --show surmisefunction
      kstp kst analyse --dataset probability_pks --show fringes --format csv
      kstp kst analyse --dataset probability_pks --show paths --from b101 --to b101,b103,b104,b109
      kstp kst analyse --structure probability.spc --out figures/
      kstp kst analyse --structure probability.spc --format dot
    """
    refuse_together(ctx, "dataset", ("path",), "analyse a dataset's space or a file, not both")
    if dataset is None and path is None:
        raise click.UsageError("give --dataset (a dataset's knowledge space) or --structure FILE")
    if show != "paths" and (start is not None or goal is not None):
        raise click.UsageError("--from and --to go with --show paths")
    from kstp.evaluators import structures

    store = get_store(ctx) if dataset is not None else None
    if store is not None:
        _note_underived(store, dataset)
    structure, source = structures.load_structure(store, dataset, path, limit)
    probabilities = None
    if path is not None:
        from kstp.loaders.kstio import read_kst_file

        extra = read_kst_file(path).extra or {}
        if "probability" in extra and len(extra["probability"]) == len(structure):
            probabilities = extra["probability"]
    if output_format() == "dot":
        from kstp.kst.paths import covers
        from kstp.reports.diagrams import hasse_dot

        lower, upper = covers(structure)
        click.echo(hasse_dot(structure.states, structures._local_names(structure.items, dataset), lower, upper,
                             probabilities, f"hasse_{dataset or path.stem}"), nl=False)
        return
    figures = []
    if out is not None:
        name = dataset or path.stem
        written, note = structures.hasse_files(structure, out, name, f"{name}: {source}", probabilities, dataset)
        figures = [str(p) for p in written]
        if note:
            message(f"note: {note}")
        for figure in figures:
            message(f"wrote {figure}")
    ends = [structures.parse_state(structure, text, dataset) for text in (start, goal)]
    result = {"source": source, "show": show, **structures.analyse(structure, show, *ends, paths)}
    if out is not None:
        result["figures"] = figures
    if as_json:
        emit(result)
        return
    import pandas as pd

    if show == "summary":
        fields = {k: _joined(_local(v, dataset)) for k, v in result.items()
                  if k not in ("source", "show", "notes", "figures")}
        print_table(pd.DataFrame([fields]), f"{source}")
        for note in result["notes"]:
            message(f"note: {note}")
        return
    sets = ("state", "atom", "notion")  # an empty set reads {}, an empty fringe -
    rows = pd.DataFrame([{k: _joined(_local(v, dataset), "{}" if k in sets else "-") for k, v in r.items()}
                         for r in result["rows"]])
    if show == "paths":
        kind = "learning paths" if start is None and goal is None else "gradations"
        listed = "" if result["listed"] == result["count"] else f"; the first {result['listed']}:"
        ends = [f"{{{_joined(_local(result[end], dataset), '')}}}" for end in ("from", "to")]
        click.echo(f"{result['count']:,} {kind} from {ends[0]} to {ends[1]} in {source}{listed}")
    if len(rows):
        print_table(rows, None if show == "paths" else f"{show} of {source}")
    for note in result.get("notes", []):
        message(f"note: {note}")


#: Questions of a printed state or fringe before it is shortened.
_SHOWN = 12


def _space_figures(graph, dataset: str, out: Path, limit: int, sample) -> list[str]:
    """Draw the space's Hasse diagram (or, for a sample, its states per size) into ``out``; say what was drawn."""
    from kstp.evaluators.structures import space_files
    from kstp.kst.spaces import TooManyStatesError

    try:
        paths, note = space_files(graph, dataset, out, limit, sample)
    except TooManyStatesError as exc:
        message(f"no Hasse diagram: {exc}")
        return []
    if note:
        message(f"note: {note}")
    for path in paths:
        message(f"wrote {path}")
    return [str(p) for p in paths]


def _summary(dataset: str, knowledge_space) -> dict:
    return {"dataset": dataset, "items": len(knowledge_space.items), "classes": len(knowledge_space.classes)}


@kst.command("validate")
@click.option("--dataset", help="Validate against this dataset's human learners' answers (its knowledge space, "
              "unless --structure is given).")
@click.option("--responses", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Validate against the answers in this file instead, without a graph (needs --structure).")
@click.option("--structure", "path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The structure: any file fit blim --structure reads, its columns the answers' items.")
@click.option("--limit", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Refuse a structure with more states than this.")
@json_option
@click.pass_context
def validate_(ctx, dataset: str | None, responses: Path | None, path: Path | None, limit: int,
              as_json: bool) -> None:
    """Validate a knowledge structure against response patterns: gamma, VC, DI and DA.

    gamma (-1 to 1, higher is better) and the violational coefficient VC (lower is
    better) count answers that agree or disagree with the structure's surmise
    relation; the discrepancy index DI is the mean distance from a learner's pattern to
    the nearest state, and DA divides it by the same mean over all possible patterns
    (lower is better). Equal to R's kst::kvalidate and kstMatrix::kmvalidate; --json also
    gives how many learners lie at each distance.

    \b
    Examples:
      kstp kst validate --responses DoignonFalmagne7.dat --structure DoignonFalmagne7.spc
      kstp kst validate --dataset probability_pks --json
    """
    refuse_together(ctx, "dataset", ("responses",), "validate against a dataset's answers or a file's, not both")
    if dataset is None and responses is None:
        raise click.UsageError("give --dataset (answers on the graph) or --responses FILE with --structure FILE")
    from kstp.evaluators.validation import validate_structure

    store = get_store(ctx) if dataset is not None else None
    result = validate_structure(store, dataset, path, responses, limit)
    if as_json:
        emit(result)
        return
    import pandas as pd

    def shown(x):
        return "-" if x is None else x

    print_table(pd.DataFrame([{"gamma": shown(result["gamma"]), "VC": shown(result["VC"]), "DI": result["DI"],
                               "DA": shown(result["DA"]), "learners": result["learners"],
                               "states": result["states"]}]),
                f"{result['structureSource']} on {result['responses']}", digits=4)
    click.echo("distance to the nearest state: " + ", ".join(f"{d}: {c}" for d, c in enumerate(result["distances"])
                                                             if c))
    if result.get("daNote"):
        message(result["daNote"])
