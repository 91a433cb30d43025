"""``kstp kst``: knowledge states and fringes of a dataset, with every set checked."""

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
    print_table,
    progress_bar,
    refuse_together,
)

# spaces.FRINGES, written out: importing the spaces module here would slow every `kstp --help`
_FRINGES = ("standard", "notions")

__all__ = ["kst", "question_ids"]

#: States that counting may enumerate where the space cannot be counted without listing (8 bytes each).
COUNT_LIMIT = 10**7


def _fringe_option(command):
    return click.option("--fringe", type=click.Choice(_FRINGES), default="standard", show_default=True,
                        help="standard: the items q with K + {q} (outer) or K - {q} (inner) a state, as R's pks; an "
                        "item with an equally informative partner is in neither. notions: the fringes of the "
                        "classes of equally informative items (the discriminative reduction), each class listed "
                        "whole.")(command)


def question_ids(dataset: str, ids) -> list[str]:
    """Question ids of ``dataset``: a local id (``Item04``) gets its dataset prefix, a full one is kept.

    >>> question_ids("frcsub", ["Item04", "frcsub:Item06"])
    ['frcsub:Item04', 'frcsub:Item06']
    """
    return [v if v.startswith(f"{dataset}:") else f"{dataset}:{v}" for v in ids]


def _ids(dataset: str, text: str) -> list[str]:
    """Comma-separated question ids, local or full (:func:`question_ids`)."""
    return question_ids(dataset, [v for v in (x.strip() for x in text.split(",")) if v])


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
@json_option
@click.pass_context
def space(ctx, dataset: str, mode: str, sample: int | None, seed: int, limit: int, fringe: str, store: bool,
          as_json: bool) -> None:
    """Count, enumerate or sample the knowledge states of a dataset (its knowledge space).

    States are the question sets closed under the derived prerequisites; equally
    informative questions (mutual prerequisites) move together. A space too large to
    count (more than 10^7 states that cannot be counted without listing them) or to
    list (more than --limit) is refused at once, before it is built, with its count
    or a lower bound and a hint to sample; sampling holds only the drawn states.

    \b
    Examples:
      kstp kst space --dataset probability_pks
      kstp kst space --dataset probability_pks --enumerate --json
      kstp kst space --dataset xes3g5m --sample 100 --seed 1 --store
    """
    refuse_together(ctx, "sample", ("mode",), "--sample draws states, --count counts them, --enumerate lists them")
    if store and mode == "count" and sample is None:
        raise click.UsageError("--store goes with --enumerate or --sample: a count lists no state to store")
    from kstp.graph import structures
    graph = get_store(ctx)
    _note_underived(graph, dataset)
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
        if as_json:
            emit(summary)
        else:
            click.echo(f"{summary['states']:,} knowledge states over {summary['items']} questions "
                       f"({summary['classes']} classes of equally informative questions)")
        return
    summary = {**_summary(dataset, knowledge_space), "fringe": fringe}
    if store:
        # a state's id is its content: storing the same states again completes an interrupted write
        on_interrupt("the states written so far are kept; run the same command again to store the rest.")
        summary["stored"] = structures.store_states(graph, dataset, states, source)
    if as_json:
        emit({**summary, "states": rows})
        return
    for row in rows:
        click.echo(f"{{{', '.join(row['state'])}}}  outer fringe: {', '.join(row['outerFringe']) or '-'}")
    click.echo(f"{len(rows):,} states listed ({source})", err=True)


#: kstp.evaluators.structures.SHOW, written out (--help imports no numerics).
_SHOW = ("summary", "base", "atoms", "relation", "notions", "fringes", "paths")


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
              help="Analyse this structure file instead: a kstIO file (.kst, .spc, .bsr basis, .spr relation) or a "
                   "0/1 CSV of states with item names.")
@click.option("--show", type=click.Choice(_SHOW), default="summary", show_default=True,
              help="summary: properties and counts; base, atoms, relation (surmise pairs), notions (equally "
                   "informative items), fringes (every state's inner and outer fringe) or paths: one table.")
@click.option("--from", "start", metavar="STATE", help="--show paths: the gradations from this state "
              "(comma-separated items; empty: the empty set) ...")
@click.option("--to", "goal", metavar="STATE", help="... to this one (default: the learning paths from the empty "
              "set to all items).")
@click.option("--paths", type=click.IntRange(min=0), default=20, show_default=True,
              help="--show paths: how many to list (all are counted).")
@click.option("--limit", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Refuse a structure with more states than this.")
@json_option
@click.pass_context
def analyse(ctx, dataset: str | None, path: Path | None, show: str, start: str | None, goal: str | None, paths: int,
            limit: int, as_json: bool) -> None:
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
      kstp kst analyse --structure endm.kst
      kstp kst analyse --structure DoignonFalmagne7.spc --show base --json
      kstp kst analyse --dataset probability_pks --show fringes --format csv
      kstp kst analyse --dataset frcsub --show paths --from Item04 --to Item04,Item10 --paths 5
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
    ends = [structures.parse_state(structure, text, dataset) for text in (start, goal)]
    result = {"source": source, "show": show, **structures.analyse(structure, show, *ends, paths)}
    if as_json:
        emit(result)
        return
    import pandas as pd

    if show == "summary":
        fields = {k: _joined(v) for k, v in result.items() if k not in ("source", "show", "notes")}
        print_table(pd.DataFrame([fields]), f"{source}")
        for note in result["notes"]:
            message(f"note: {note}")
        return
    sets = ("state", "atom", "notion")  # an empty set reads {}, an empty fringe -
    rows = pd.DataFrame([{k: _joined(v, "{}" if k in sets else "-") for k, v in r.items()} for r in result["rows"]])
    if show == "paths":
        kind = "learning paths" if start is None and goal is None else "gradations"
        listed = "" if result["listed"] == result["count"] else f"; the first {result['listed']}:"
        ends = [f"{{{_joined(result[end], '')}}}" for end in ("from", "to")]
        click.echo(f"{result['count']:,} {kind} from {ends[0]} to {ends[1]} in {source}{listed}")
    if len(rows):
        print_table(rows, None if show == "paths" else f"{show} of {source}")


def _summary(dataset: str, knowledge_space) -> dict:
    return {"dataset": dataset, "items": len(knowledge_space.items), "classes": len(knowledge_space.classes)}
