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

References
----------
Doignon & Falmagne 1999, *Knowledge Spaces*, ch. 1-4; Falmagne & Doignon 2011, *Learning
Spaces*, ch. 2 (well-graded spaces, learning paths).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kstp.errors import KstpError
from kstp.graph.store import GraphStore
from kstp.graph.structures import dataset_space
from kstp.kst.analysis import Structure, StructureError
from kstp.loaders.kstio import read_kst_file

__all__ = ["SHOW", "load_structure", "analyse", "parse_state"]

#: What ``kstp kst analyse --show`` prints.
SHOW = ("summary", "base", "atoms", "relation", "notions", "fringes", "paths")


def load_structure(store: GraphStore | None, dataset: str | None, path: str | Path | None,
                   limit: int = 100_000) -> tuple[Structure, str]:
    """The structure to analyse and where it came from: a dataset's knowledge space, or a file.

    A file's structure, space or data rows are its states; a basis gives the space it
    spans, a relation its quasi-ordinal space. Item names are the file's (a CSV header),
    else kstIO's letters ``a``, ``b``, ...

    Raises
    ------
    TooManyStatesError
        When the dataset's space has more than ``limit`` states.
    KstpError
        When a file holds more than ``limit`` states, or neither or both of ``dataset``
        and ``path`` are given; as :func:`kstp.loaders.kstio.read_kst_file`.
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
    matrix, what = read.matrix, read.kind or "structure"
    if read.kind == "basis":
        matrix, what = span(matrix, limit), "the space its basis spans"
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
    show : {"summary", "base", "atoms", "relation", "notions", "fringes", "paths"}
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
        learning = _try(lambda: k.learning_paths().count, notes, "learning paths") if k.is_structure() else None
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
    if show == "atoms":
        return {"rows": [{"item": q, "atom": s, "size": len(s)} for q, rows in k.atoms().items() for s in k.sets(rows)]}
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
        chains = k.learning_paths()
    else:
        sizes = k.states.sum(axis=1)
        ends = [np.flatnonzero(sizes == size) for size in (0, len(k.items))]
        if start is None and not len(ends[0]) or goal is None and not len(ends[1]):
            raise StructureError("give both --from and --to: the structure lacks the "
                                 + ("empty set" if start is None else "whole domain"))
        chains = k.gradations(int(ends[0][0]) if start is None else start, int(ends[1][0]) if goal is None else goal)
    listed = chains.first(paths)
    return {"from": k.sets([chains.start])[0], "to": k.sets([chains.goal])[0], "count": chains.count,
            "listed": len(listed), "rows": [{"path": n, "steps": k.steps(p)} for n, p in enumerate(listed, 1)]}
