"""Knowledge structures of a dataset or a file, analysed as pks, kst, kstMatrix and kstpy users expect.

A structure comes from the graph (the knowledge space of a dataset's derived question
prerequisites, :func:`kstp.graph.structures.dataset_space`) or from a file in one of the
field's formats (:mod:`kstp.loaders.kstio`); :func:`load_structure` gives either as a
:class:`kstp.kst.analysis.Structure`. :func:`analyse` computes what ``kstp kst analyse``
prints: a summary (closure properties, well-gradedness, pks's forward and backward
gradedness, the sizes of the base, the atoms and the surmise relation, the number of
learning paths) or one table (the base, the atoms, the surmise relation, the notions, the
fringe of every state, the learning paths or the gradations between two states). Nothing
is written.

:func:`export_dataset` writes a dataset's space, base, surmise relation, response patterns
or latest BLIM fit (states with their probabilities) in the field's formats;
:func:`import_file` reads a relation or a structure as the dataset's question
prerequisites (``PREREQUISITE_OF {rule: "imported"}``, replacing the derived ones), or
response patterns as its learners' answers.

References
----------
Doignon & Falmagne 1999, *Knowledge Spaces*, ch. 1-4; Falmagne & Doignon 2011, *Learning
Spaces*, ch. 2 (well-graded spaces, learning paths).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kstp.errors import KstpError
from kstp.graph.store import GraphStore
from kstp.graph.structures import dataset_space
from kstp.kst import paths as kst_paths
from kstp.kst.analysis import Structure, StructureError
from kstp.kst.surmise import surmise_function
from kstp.loaders.kstio import read_kst_file

__all__ = ["SHOW", "EXPORTS", "load_structure", "analyse", "parse_state", "export_dataset", "import_file",
           "stored_fit", "simulate_learners", "hasse_files", "prerequisite_graph", "graph_files", "space_files",
           "space_dot"]

#: What ``kstp kst analyse --show`` prints.
SHOW = ("summary", "base", "atoms", "surmisefunction", "relation", "notions", "fringes", "paths")
#: What ``kstp kst export`` writes, and the file kind of each.
EXPORTS = {"space": "space", "base": "basis", "surmisefunction": "surmisefunction", "relation": "relation",
           "data": "data", "fit": "structure"}


def load_structure(store: GraphStore | None, dataset: str | None, path: str | Path | None,
                   limit: int = 100_000) -> tuple[Structure, str]:
    """The structure to analyse and where it came from: a dataset's knowledge space, or a file.

    A file's structure or space rows are its states; a basis gives the space it spans, a
    relation its quasi-ordinal space; a data file (response patterns) is refused, as
    kstIO's ``read_kstructure`` refuses it. Item names are the file's (a CSV header),
    else kstIO's letters ``a``, ``b``, ...

    Raises
    ------
    TooManyStatesError
        When the dataset's space has more than ``limit`` states.
    KstpError
        When a file holds response patterns or more than ``limit`` states, or neither or
        both of ``dataset`` and ``path`` are given; as :func:`kstp.loaders.kstio.read_kst_file`.
    """
    if (dataset is None) == (path is None):
        raise KstpError("analyse a dataset's knowledge space or a structure file: give one of the two")
    if dataset is not None:
        space = dataset_space(store, dataset, limit)
        return Structure.from_space(space, limit), f"the knowledge space of dataset {dataset}"
    from kstp.kst.analysis import span
    from kstp.kst.spaces import KnowledgeSpace

    path = Path(path)
    read = read_kst_file(path)
    if read.kind == "data":  # response patterns repeat and need not hold {} or Q: kstIO refuses them as a structure
        said = "its #SRBT line" if read.format == "srbt" else f"its name ({path.suffix})"
        raise KstpError(f"{path} holds response patterns ({said} says data), not states; give a structure, space, "
                        "basis or relation file, or fit the patterns: kstp fit blim --responses FILE")
    matrix, what = read.matrix, read.kind or "structure"
    if read.kind in ("basis", "surmisefunction"):
        matrix, what = span(matrix, limit), f"the space its {read.kind.replace('surmisef', 'surmise f')} spans"
    elif read.kind == "relation":
        pairs = [(read.items[p], read.items[q]) for p, q in zip(*np.nonzero(matrix), strict=True) if p != q]
        return Structure.from_space(KnowledgeSpace.build(read.items, pairs), limit), \
            f"{path.name}: the quasi-ordinal space of its surmise relation"
    if len(matrix) > limit:
        raise KstpError(f"{path} has {len(matrix):,} states, more than --limit {limit:,}")
    try:
        return Structure.build(read.items, matrix), f"{path.name}: {what} ({read.format})"
    except StructureError as exc:
        raise StructureError(f"{path}: {exc}") from None


def parse_state(structure: Structure, text: str | None, prefix: str | None = None) -> int | None:
    """The row of the state named by comma-separated items (``""``: the empty set; None: not given).

    A local id gets ``prefix:`` when the structure's items carry it (a dataset's questions).

    Raises
    ------
    UnknownIdError, NotAKnowledgeStateError
        As :meth:`kstp.kst.analysis.Structure.row`.
    """
    if text is None:
        return None
    names = [v.strip() for v in text.split(",") if v.strip()]
    if prefix:
        names = [v if v.startswith(f"{prefix}:") else f"{prefix}:{v}" for v in names]
    return structure.row(names)


def _try(compute, notes: list[str], what: str):
    """``compute()``, or None with a note when the structure is too large for it or lacks what it needs."""
    try:
        return compute()
    except StructureError as exc:
        notes.append(f"{what}: {exc}")
        return None


def analyse(structure: Structure, show: str = "summary", start: int | None = None, goal: int | None = None,
            paths: int = 20) -> dict:
    """What ``kstp kst analyse`` prints: a summary, or one table of the structure.

    Parameters
    ----------
    structure : Structure
    show : {"summary", "base", "atoms", "surmisefunction", "relation", "notions", "fringes", "paths"}
    start, goal : int, optional
        ``paths``: rows of the states between which to list the gradations (each step
        adds one item); default the learning paths from the empty set to Q.
    paths : int
        ``paths``: how many to list (all are counted).

    Returns
    -------
    dict
        ``summary``: the figures (``None`` where an analysis does not apply, with the
        reason under ``notes``); otherwise ``rows``, a list of records, and for ``paths``
        their ``count``.

    Raises
    ------
    StructureError
        When a table needs what the structure is not (a base of a family not closed
        under union), or it is too large for a pairwise analysis.
    KstpError
        On an unknown ``show``.

    Examples
    --------
    >>> K = Structure.build("abc", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1]])
    >>> s = analyse(K)
    >>> s["isSpace"], s["isWellGraded"], s["base"], s["learningPaths"]
    (True, True, 3, 2)
    >>> analyse(K, "relation")["rows"]
    [{'prerequisite': 'a', 'item': 'c'}, {'prerequisite': 'b', 'item': 'c'}]
    """
    if show not in SHOW:
        raise KstpError(f"unknown table {show!r}; use one of {', '.join(SHOW)}")
    k = structure
    if show == "summary":
        notes: list[str] = []
        relation = k.surmise_relation()
        space = _try(k.is_space, notes, "union closure")
        closure = _try(k.is_closure_space, notes, "intersection closure")
        atoms = _try(k.atoms, notes, "atoms")
        learning = _try(lambda: kst_paths.learning_paths(k).count, notes, "learning paths") \
            if k.is_structure() else None
        if not k.is_structure():  # a space is a structure (with the empty set and Q) closed under union
            space = False if space is not None else None
            notes.append("not a knowledge structure (the empty set or Q is missing): no base, no learning paths")
        elif space is False:
            notes.append("not closed under union: no base")
        return {"items": len(k.items), "states": len(k), "notions": len(k.notions()),
                "isStructure": k.is_structure(), "isSpace": space, "isClosureSpace": closure,
                "isQuasiOrdinal": None if space is None or closure is None else space and closure,
                "isWellGraded": _try(k.is_well_graded, notes, "well-gradedness"),
                "forwardGraded": [q for q, ok in zip(k.items, k.forward_graded(), strict=True) if ok],
                "backwardGraded": [q for q, ok in zip(k.items, k.backward_graded(), strict=True) if ok],
                "base": len(k.base()) if space and k.is_structure() else None,
                "atoms": None if atoms is None else int(sum(len(r) for r in atoms.values())),
                "surmisePairs": int(relation.sum() - len(k.items)), "learningPaths": learning, "notes": notes}
    if show == "base":
        return {"rows": [{"state": s, "size": len(s)} for s in k.sets(k.base())]}
    if show in ("atoms", "surmisefunction"):  # an item no state holds has neither: say so, not leave it out
        held = [q for q, n in zip(k.items, k.states.sum(axis=0), strict=True) if not n]
        notes = [f"no state holds {', '.join(held)}: {'it has' if len(held) == 1 else 'they have'} no "
                 f"{'atom' if show == 'atoms' else 'clause'} (not a knowledge structure: Q is missing)"] if held else []
    if show == "atoms":
        return {"rows": [{"item": q, "atom": s, "size": len(s)} for q, rows in k.atoms().items() for s in k.sets(rows)],
                "notes": notes}
    if show == "surmisefunction":  # kstMatrix's kmsurmisefunction: each item's clauses, in its order
        clause_items, clauses = surmise_function(k)
        names = np.asarray(k.items, dtype=object)
        return {"rows": [{"item": q, "clause": names[c > 0].tolist(), "size": int(c.sum())}
                         for q, c in zip(clause_items, clauses, strict=True)], "notes": notes}
    if show == "relation":
        relation = k.surmise_relation()
        return {"rows": [{"prerequisite": k.items[p], "item": k.items[q]}
                         for p, q in zip(*np.nonzero(relation), strict=True) if p != q]}
    if show == "notions":
        return {"rows": [{"notion": c, "size": len(c)} for c in k.notions()]}
    if show == "fringes":
        inner, outer = k.fringes()
        order = np.lexsort((np.arange(len(k)), k.states.sum(axis=1)))
        names = np.asarray(k.items, dtype=object)
        return {"rows": [{"state": names[k.states[r] > 0].tolist(), "size": int(k.states[r].sum()),
                          "innerFringe": names[inner[r] > 0].tolist(), "outerFringe": names[outer[r] > 0].tolist()}
                         for r in order.tolist()]}
    if start is None and goal is None:
        chains = kst_paths.learning_paths(k)
    else:
        sizes = k.states.sum(axis=1)
        ends = [np.flatnonzero(sizes == size) for size in (0, len(k.items))]
        if start is None and not len(ends[0]) or goal is None and not len(ends[1]):
            raise StructureError("give both --from and --to: the structure lacks the "
                                 + ("empty set" if start is None else "whole domain"))
        chains = kst_paths.gradations(k, int(ends[0][0]) if start is None else start,
                                      int(ends[1][0]) if goal is None else goal)
    listed = chains.first(paths)
    return {"from": k.sets([chains.start])[0], "to": k.sets([chains.goal])[0], "count": chains.count,
            "listed": len(listed), "rows": [{"path": n, "steps": k.steps(p)} for n, p in enumerate(listed, 1)]}


def _layout(path: Path, layout: str | None) -> str:
    return layout or ("csv" if path.suffix.lower() == ".csv" else "srbt")


def export_dataset(store: GraphStore, dataset: str, what: str, path: str | Path, layout: str | None = None,
                   limit: int = 100_000) -> dict:
    """Write a dataset's structure, relation, answers or fit to ``path`` in one of the field's formats.

    Parameters
    ----------
    what : {"space", "base", "surmisefunction", "relation", "data", "fit"}
        The knowledge space of the derived prerequisites (its states), its base, its
        surmise function (each question's clauses, a CSV as kstIO's
        ``write_surmisefunction`` writes kstMatrix's ``kmsurmisefunction``), its surmise
        relation, the human learners' complete response patterns (learners who
        skipped an item are left out, as the BLIM does), or the latest BLIM fit's states
        (a CSV adds each state's probability).
    layout : {"srbt", "kst", "matrix", "csv"}, optional
        Default: ``csv`` for a ``.csv`` file, else ``srbt``. Columns are the dataset's
        questions in order; a CSV names them by local id (learner ids first for data).

    Returns
    -------
    dict
        What was written: ``file``, ``layout``, ``rows``, ``items``, and a ``note``.

    Raises
    ------
    KstpError
        On an unknown ``what``, no BLIM fit on the graph for ``fit``, and as
        :func:`kstp.loaders.kstio.write_kst_file`; TooManyStatesError past ``limit``.
    """
    from kstp.evaluators.blim import response_data
    from kstp.graph.structures import dataset_questions
    from kstp.loaders.kstio import kstio_order, write_kst_file, write_surmise_function

    if what not in EXPORTS:
        raise KstpError(f"unknown export {what!r}; use one of {', '.join(EXPORTS)}")
    path, layout = Path(path), _layout(Path(path), layout)
    questions = dataset_questions(store, dataset)
    items, local = questions["questionId"].tolist(), questions["localId"].tolist()
    note, extra, labels = "", None, None
    if what == "surmisefunction":
        if layout != "csv":
            raise KstpError("a surmise function has only kstIO's CSV layout: write it to a .csv file")
        clause_items, matrix = surmise_function(Structure.from_space(dataset_space(store, dataset, limit), limit))
        write_surmise_function(path, [local[items.index(q)] for q in clause_items], matrix, local)
        return {"dataset": dataset, "what": what, "file": str(path), "layout": layout, "rows": int(len(matrix)),
                "items": len(items), "note": None}
    if what in ("space", "base"):
        structure = Structure.from_space(dataset_space(store, dataset, limit), limit)
        matrix = structure.states if what == "space" else structure.states[structure.base()]
        matrix = matrix[kstio_order(matrix)]  # kstIO's write_kspace/write_kbase order: by size, then members
    elif what == "relation":
        matrix = dataset_space(store, dataset).relation().astype(np.uint8)
    elif what == "data":
        data = response_data(store, dataset)
        matrix, labels = data.matrix, ([q.split(":", 1)[-1] for q in data.learners] if layout == "csv" else None)
        note = f"{data.incomplete} learners left out: they did not answer every item" if data.incomplete else ""
    else:
        fit = stored_fit(store, dataset)
        matrix = fit["states"]
        if layout == "csv":
            extra = {"probability": fit["probability"]}
        else:
            note = "the states alone: their probabilities go into a CSV file (a .csv name or --layout csv)"
        note = f"run {fit['runId']}" + (f"; {note}" if note else "")
    write_kst_file(path, EXPORTS[what], matrix, local if layout == "csv" else None, layout, extra, labels)
    return {"dataset": dataset, "what": what, "file": str(path), "layout": layout, "rows": int(len(matrix)),
            "items": len(items), "note": note or None}


def _closure(relation: np.ndarray) -> np.ndarray:
    """The reflexive-transitive closure of a boolean relation (squaring until it stops growing)."""
    closed = relation.astype(bool) | np.eye(len(relation), dtype=bool)
    while True:
        grown = (closed.astype(np.float32) @ closed.astype(np.float32)) > 0
        if (grown == closed).all():
            return closed
        closed = grown


def import_file(store: GraphStore, dataset: str, path: str | Path, kind: str | None = None) -> dict:
    """Read a file into a dataset: a relation or structure as its question prerequisites, or its learners' answers.

    A relation file's reflexive-transitive closure, or a structure's (space's, basis's)
    surmise relation, replaces the dataset's ``PREREQUISITE_OF`` question edges (rule
    ``imported``, source the file's name; the derived edges they replace are deleted, so
    every KST query and PSR read the imported relation). A structure that is not
    quasi-ordinal is more than its surmise relation says: the note gives the size of the
    space the relation keeps. A data file's rows become learners' answers (ids from a
    CSV's first column, else ``<file stem>-<row>``). Columns are matched to the dataset's
    questions as :func:`kstp.loaders.kstio.align_columns` does. Importing the same file
    again changes nothing.

    Raises
    ------
    KstpError
        When the file's kind is unknown (name it with ``kind``), and as
        :func:`kstp.loaders.kstio.read_kst_file` and ``align_columns``; nothing is
        written then.
    """
    from kstp.graph.structures import dataset_questions
    from kstp.kst.analysis import span
    from kstp.kst.spaces import KnowledgeSpace
    from kstp.loaders.kstio import align_columns
    from kstp.loaders.responses import write_answers

    path = Path(path)
    read = read_kst_file(path, kind=kind)
    kind = kind or read.kind
    if kind is None:
        raise KstpError(f"{path}: say what it holds (--as relation, structure or data); its name does not")
    questions = dataset_questions(store, dataset)
    items = questions["questionId"].tolist()
    matrix, how = align_columns(read, items, path)
    if kind == "data":
        local = questions["localId"].tolist()
        learners = read.labels or [f"{path.stem}-{r + 1:05d}" for r in range(len(matrix))]
        rows, cols = np.nonzero(np.ones(matrix.shape, bool))
        answers = pd.DataFrame({"learner": np.asarray(learners, dtype=object)[rows],
                                "item": np.asarray(local, dtype=object)[cols], "correct": matrix[rows, cols] > 0,
                                "timestamp": None})
        report = write_answers(store, dataset, answers, str(path))
        return {"dataset": dataset, "file": str(path), "as": "data", "learners": len(matrix), "items": len(items),
                "columns": how, "learnerIds": "from the file" if read.labels else f"{learners[0]} to {learners[-1]}",
                "written": report.as_dict()}
    note = None
    if kind == "relation":
        relation = _closure(matrix)
    else:
        states = span(matrix) if kind in ("basis", "surmisefunction") else matrix
        structure = Structure.build(items, states)
        relation = structure.surmise_relation()
        pairs = [(items[p], items[q]) for p, q in zip(*np.nonzero(relation), strict=True) if p != q]
        kept = KnowledgeSpace.build(items, pairs).count()
        if kept != len(structure):
            note = (f"the file's {len(structure)} states are not closed under union and intersection; its surmise "
                    f"relation is imported, whose knowledge space has {kept} states")
    p, q = np.nonzero(relation & ~np.eye(len(items), dtype=bool))
    edges = pd.DataFrame({"from_id": np.asarray(items, dtype=object)[p], "to_id": np.asarray(items, dtype=object)[q],
                          "rule": "imported", "source": f"file:{path.name}"})
    stored = store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True).rename(
        columns={"fromId": "from_id", "toId": "to_id"})
    removed = store.delete_stale("PREREQUISITE_OF", "Question", "Question", stored, edges)
    store.write_relationships("PREREQUISITE_OF", "Question", "Question", edges)
    return {"dataset": dataset, "file": str(path), "as": "relation", "pairs": len(edges), "replaced": removed,
            "columns": how, "note": note}


def stored_fit(store: GraphStore, dataset: str) -> dict:
    """The dataset's latest BLIM fit on the graph: items, states, their probabilities, beta, eta, run id, learners.

    Raises
    ------
    KstpError
        When the dataset has no fit on the graph.
    """
    from kstp.graph.structures import dataset_questions

    rates = store.frame("blim_item_parameters", {"dataset": dataset})
    if rates.empty:
        raise KstpError(f"dataset {dataset!r} has no BLIM fit on the graph; fit one first (kstp fit blim)")
    run_id = rates["runId"].iloc[0]
    items = dataset_questions(store, dataset)["questionId"].tolist()
    rates = rates.set_index("questionId").reindex(items)
    rows = store.frame("blim_states", {"runId": run_id})
    ids = sorted(set(rows["stateId"]))
    position, column = {sid: i for i, sid in enumerate(ids)}, {q: j for j, q in enumerate(items)}
    states, probability = np.zeros((len(ids), len(items)), np.uint8), np.zeros(len(ids))
    for sid, p, q in zip(rows["stateId"], rows["probability"], rows["questionId"], strict=True):
        probability[position[sid]] = p
        if isinstance(q, str):
            states[position[sid], column[q]] = 1
    order = np.lexsort((-states.astype(np.float64) @ (2.0 ** -np.arange(1, len(items) + 1)), states.sum(axis=1)))
    assessed = store.frame("blim_learners", {"dataset": dataset})
    return {"runId": run_id, "items": items, "states": states[order], "probability": probability[order],
            "beta": rates["careless"].to_numpy(np.float64), "eta": rates["guess"].to_numpy(np.float64),
            "learners": int((assessed["runId"] == run_id).sum()) or None}


def simulate_learners(store: GraphStore | None, dataset: str | None, path: str | Path | None, learners: int | None,
                      seed: int, careless: float | None = None, guess: float | None = None,
                      limit: int = 100_000) -> dict:
    """Draw response patterns from a BLIM (pks's ``simulate``): a dataset's fit, or a structure file.

    From a dataset: its latest BLIM fit (:func:`stored_fit`), as many learners as it fitted
    unless ``learners`` says; ``careless`` and ``guess`` replace every item's fitted rate.
    From a file: its states (:func:`load_structure`), each with the probability of its
    ``probability`` column (a CSV kstp wrote with a fit) or all equally likely, and the
    rates ``careless`` and ``guess`` (0.1 each by default) for every item.

    Returns
    -------
    dict
        ``items`` (names), ``answers`` (learners, items) uint8, ``states`` (each learner's
        drawn state, a row of the structure), ``source`` and the parameters used.

    Raises
    ------
    KstpError
        Neither or both of ``dataset`` and ``path``; no fit for the dataset; a file
        without ``learners``; a rate outside [0, 1] (as :func:`kstp.kst.blim_gof.simulate`).
    """
    from kstp.kst.blim_gof import simulate

    if (dataset is None) == (path is None):
        raise KstpError("simulate from a dataset's BLIM fit or from a structure file: give one of the two")
    if dataset is not None:
        fit = stored_fit(store, dataset)
        items, states, p_k = fit["items"], fit["states"], fit["probability"]
        beta = np.full(len(items), careless) if careless is not None else fit["beta"]
        eta = np.full(len(items), guess) if guess is not None else fit["eta"]
        learners = learners or fit["learners"]
        source = f"the BLIM fit {fit['runId']}"
        if learners is None:
            raise KstpError("the fit does not say how many learners it had; give --learners")
    else:
        if learners is None:
            raise KstpError("say how many learners to draw from a structure file (--learners N)")
        path = Path(path)
        structure, source = load_structure(None, None, path, limit)
        items, states = list(structure.items), structure.states
        read = read_kst_file(path)
        if read.extra and "probability" in read.extra and read.kind not in ("basis", "relation"):
            p_k, how = read.extra["probability"], "its probability column"
        else:
            p_k, how = np.full(len(states), 1 / len(states)), "all states equally likely"
        source = f"{source}; {how}"
        beta = np.full(len(items), 0.1 if careless is None else careless)
        eta = np.full(len(items), 0.1 if guess is None else guess)
    answers, drawn = simulate(states, p_k, beta, eta, learners, np.random.default_rng(seed))
    return {"source": source, "items": items, "answers": answers, "states": states, "drawn": drawn,
            "learners": learners, "seed": seed, "careless": beta, "guess": eta, "probability": np.asarray(p_k)}


# ---- figures: Hasse diagrams and prerequisite graphs (SVG, PNG, DOT) ---------------------------------------
def _local_names(items, dataset: str | None) -> list[str]:
    return [q.removeprefix(f"{dataset}:") if dataset else q for q in items]


def hasse_files(structure: Structure, out: str | Path, name: str, title: str, probabilities=None,
                dataset: str | None = None, limit: int = 200) -> tuple[list[Path], str]:
    """Write the Hasse diagram of ``structure`` to ``out/hasse_<name>.svg``, ``.png`` and ``.dot``.

    States are nodes on rows by size, each edge labelled with the items it adds (the
    lower state's outer-fringe items), node areas by ``probabilities`` when given (a
    BLIM fit's). Above ``limit`` states the figure shows how many states each size has,
    with a note; the DOT file holds every state (Graphviz lays out any size). Question
    ids lose their ``<dataset>:`` prefix.

    Returns
    -------
    (paths, note)
        The files written, and why a figure summarises instead of drawing ('' if it draws).

    Raises
    ------
    StructureError
        As :meth:`kstp.kst.analysis.Structure.covers` (a large structure that is not well-graded).
    """
    from kstp.reports.diagrams import hasse_dot, hasse_figure

    out = Path(out)
    items = _local_names(structure.items, dataset)
    lower, upper = kst_paths.covers(structure)
    paths = hasse_figure(structure.states, items, lower, upper, out / f"hasse_{name}", title, probabilities, limit)
    dot = out / f"hasse_{name}.dot"
    dot.write_text(hasse_dot(structure.states, items, lower, upper, probabilities, f"hasse_{name}"))
    note = "" if len(structure) <= limit else (f"{len(structure):,} states, more than {limit:,} to draw: the figure "
                                               f"shows how many states each size has; {dot.name} holds them all")
    return [*paths, dot], note


def prerequisite_graph(store: GraphStore, dataset: str | None = None,
                       framework: str | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The covering pairs (transitive reduction) of a dataset's question prerequisites or a framework's concepts.

    A dataset's equally informative questions (mutual prerequisites) are one node named
    ``a = b``; question and concept ids lose their ``<dataset>:`` / ``<framework>:`` prefix.

    Returns
    -------
    (nodes, edges)
        Node names, and (prerequisite, item) pairs with nothing between them.

    Raises
    ------
    UnknownIdError
        When the dataset is not in the graph.
    KstpError
        When a framework's prerequisites have a cycle.
    """
    import networkx as nx

    if dataset is not None:
        space = dataset_space(store, dataset)
        nodes = [" = ".join(q.removeprefix(f"{dataset}:") for q in c) for c in space.classes]
        edges = [(nodes[j], nodes[k]) for k, cover in enumerate(space.cover) for j in range(len(nodes))
                 if cover >> j & 1]
        return nodes, edges
    concepts = store.frame("framework_concepts", {"framework": framework})["conceptId"].tolist()
    pairs = store.frame("concept_prerequisites", {"framework": framework})
    graph = nx.DiGraph()
    graph.add_nodes_from(concepts)
    graph.add_edges_from(zip(pairs["fromId"], pairs["toId"], strict=True))
    if not nx.is_directed_acyclic_graph(graph):
        raise KstpError(f"the prerequisites of framework {framework!r} have a cycle; no drawing by levels exists")
    reduced = nx.transitive_reduction(graph)
    local = {c: c.removeprefix(f"{framework}:") for c in concepts}
    return [local[c] for c in concepts], sorted((local[a], local[b]) for a, b in reduced.edges)


def graph_files(nodes: list[str], edges: list[tuple[str, str]], out: str | Path, name: str, title: str,
                limit: int = 200) -> tuple[list[Path], str]:
    """Write a prerequisite graph to ``out/prerequisites_<name>.svg``, ``.png`` and ``.dot`` (rows by level).

    Above ``limit`` nodes the figure shows how many nodes each level has, with a note;
    the DOT file holds them all.
    """
    from kstp.reports.diagrams import graph_dot, graph_figure

    out = Path(out)
    paths = graph_figure(nodes, edges, out / f"prerequisites_{name}", title, limit)
    dot = out / f"prerequisites_{name}.dot"
    dot.write_text(graph_dot(nodes, edges, f"prerequisites_{name}"))
    note = "" if len(nodes) <= limit else (f"{len(nodes):,} nodes, more than {limit:,} to draw: the figure shows "
                                           f"how many nodes each level has; {dot.name} holds them all")
    return [*paths, dot], note


def _fitted_probabilities(store: GraphStore, dataset: str, structure: Structure) -> np.ndarray | None:
    """The latest BLIM fit's state probabilities in ``structure``'s row order, when it fitted these very states."""
    try:
        fit = stored_fit(store, dataset)
    except KstpError:
        return None
    if len(fit["states"]) != len(structure) or list(fit["items"]) != list(structure.items):
        return None
    rows = structure.rows_of(fit["states"])
    if (rows < 0).any():
        return None
    probability = np.zeros(len(structure))
    probability[rows] = fit["probability"]
    return probability


def space_files(store: GraphStore, dataset: str, out: str | Path, limit: int = 100_000,
                sample: list | None = None, draw_limit: int = 200) -> tuple[list[Path], str]:
    """Write the Hasse diagram of a dataset's knowledge space (``hasse_<dataset>.svg``, ``.png``, ``.dot``).

    Node areas follow the state probabilities of the dataset's latest BLIM fit when it
    fitted this space. With ``sample`` (states drawn by ``kst space --sample``, a space
    too large to list) the figure shows how many sampled states each size has, with a
    note, and no DOT file is written.

    Raises
    ------
    TooManyStatesError
        Without ``sample``, when the space has more than ``limit`` states.
    """
    from kstp.reports.diagrams import draw_layers

    if sample is not None:
        stem = Path(out) / f"hasse_{dataset}_sample"
        sizes = [len(s) for s in sample]
        paths = draw_layers([""] * len(sizes), sizes, [], stem, f"{dataset}: a sample of {len(sizes):,} states",
                            limit=0, row_name="state size")
        return paths, (f"a sample of {len(sizes):,} states of a space too large to list: the figure shows how many "
                       "sampled states each size has")
    structure = Structure.from_space(dataset_space(store, dataset, limit), limit)
    probabilities = _fitted_probabilities(store, dataset, structure)
    title = f"{dataset}: knowledge space, {len(structure):,} states" + (
        " (areas: BLIM state probabilities)" if probabilities is not None else "")
    return hasse_files(structure, out, dataset, title, probabilities, dataset, draw_limit)


def space_dot(store: GraphStore, dataset: str, limit: int = 100_000) -> str:
    """The Hasse diagram of a dataset's knowledge space in Graphviz's DOT language (every state)."""
    from kstp.reports.diagrams import hasse_dot

    structure = Structure.from_space(dataset_space(store, dataset, limit), limit)
    lower, upper = kst_paths.covers(structure)
    return hasse_dot(structure.states, _local_names(structure.items, dataset), lower, upper,
                     _fitted_probabilities(store, dataset, structure), f"hasse_{dataset}")
