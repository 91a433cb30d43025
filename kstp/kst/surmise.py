"""Surmise functions: each item's clauses, the minimal states that hold it, and back to a basis.

A surmise function sigma maps each item q to its clauses, the minimal states holding q
(the atoms at q); a knowledge space and its surmise function determine each other, and
the clauses of all items together are the space's basis (Doignon & Falmagne 1999, §5.1).
Assumes a knowledge structure without repeated states (:class:`kstp.kst.analysis.Structure`);
on a family that is not a space the clauses are still its atoms.
"""

from __future__ import annotations

import numpy as np

from kstp.kst.analysis import Structure

__all__ = ["surmise_function", "surmise_function_basis"]


def surmise_function(structure: Structure) -> tuple[list[str], np.ndarray]:
    """The clauses of every item, in kstMatrix's order: ``(clause items, clauses)``.

    Parameters
    ----------
    structure : Structure

    Returns
    -------
    clause_items : list of str
        The item of each clause; items in the structure's order.
    clauses : ndarray of shape (clauses, items), uint8
        Each clause (a state) as a 0/1 row. Within an item, clauses come as
        kstMatrix's ``kmsurmisefunction`` lists them: by the number of items the state is
        an atom for, then in the structure's order of states.

    Raises
    ------
    StructureError
        As :meth:`kstp.kst.analysis.Structure.atoms` (too many states).

    Examples
    --------
    >>> K = Structure.build("abc", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1]])
    >>> items, clauses = surmise_function(K)
    >>> items, clauses.tolist()
    (['a', 'b', 'c'], [[1, 0, 0], [0, 1, 0], [1, 1, 1]])

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, Def. 5.1.1; kstMatrix 2.3-4
    ``kmsurmisefunction`` (Hockemeyer).
    """
    atoms = structure.atoms()
    atom_of = np.zeros(len(structure), np.int64)
    for rows in atoms.values():
        atom_of[rows] += 1
    rank = np.argsort(atom_of, kind="stable")  # kstMatrix: by |items it is an atom for|, then its input order
    position = np.empty(len(rank), np.int64)
    position[rank] = np.arange(len(rank))
    clause_items, rows = [], []
    for q in structure.items:
        for row in sorted(atoms[q].tolist(), key=lambda r: position[r]):
            clause_items.append(q)
            rows.append(row)
    clauses = structure.states[rows].astype(np.uint8) if rows else np.zeros((0, len(structure.items)), np.uint8)
    return clause_items, clauses


def surmise_function_basis(clauses) -> np.ndarray:
    """The basis a surmise function's clauses give: each distinct clause once, first seen first.

    kstMatrix's ``kmSF2basis`` (``unique`` rows). Its span (:func:`kstp.kst.analysis.span`)
    is the space.

    Parameters
    ----------
    clauses : ndarray of shape (clauses, items), 0/1

    Returns
    -------
    ndarray of shape (basis, items), uint8

    Examples
    --------
    >>> surmise_function_basis([[1, 0, 0], [1, 0, 0], [1, 1, 1]]).tolist()
    [[1, 0, 0], [1, 1, 1]]

    References
    ----------
    kstMatrix 2.3-4 ``kmSF2basis`` (Hockemeyer).
    """
    clauses = np.asarray(clauses, dtype=np.uint8)
    _, first = np.unique(clauses, axis=0, return_index=True)
    return clauses[np.sort(first)]
