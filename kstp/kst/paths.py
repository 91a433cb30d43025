"""Chains of states: the covering relation, learning paths and gradations of a knowledge structure.

A state covers another when it contains it and no state lies strictly between; the
covering pairs are the Hasse diagram's edges. A learning path is a maximal chain from the
empty set to Q (each state covers the one before); a gradation from K to L is a chain
adding one item per step. In a well-graded structure every covering pair is a one-item
step (a longer one would have a tight path, hence states, inside it), so covers are found
by lookups; otherwise every state is compared with every pair of its substates. Counting
runs a dynamic programme over the states by size (each state's count is the sum of its
predecessors'), exactly, in Python integers; listing is lazy.

References
----------
Doignon & Falmagne 1999, *Knowledge Spaces*, §2.2 (well-graded families); Falmagne &
Doignon 2011, *Learning Spaces*, ch. 2 (learning paths, gradations).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

import numpy as np

# A companion of kstp.kst.analysis: it reads a Structure's packed rows and cached lookups.
from kstp.kst.analysis import _BLOCK, COVER_LIMIT, Structure, StructureError

__all__ = ["covers", "learning_paths", "gradations", "LearningPaths"]


def covers(structure: Structure) -> tuple[np.ndarray, np.ndarray]:
    """The covering pairs (lower, upper) of the inclusion order: upper contains lower, no state between.

    The edges of the Hasse diagram, as rows into ``structure.states``. In a well-graded
    structure they are the one-item steps (found by lookups); otherwise every pair is
    compared with every pair of its substates (refused above :data:`COVER_LIMIT` states).

    Raises
    ------
    StructureError
        Not well-graded, above :data:`COVER_LIMIT` states.
    """
    lower, upper = [], []
    classes = structure.__dict__.get("_classes")
    if classes is not None:  # a quasi-ordinal space: a state covers another when it adds one class
        for members in classes:
            grown_packed = structure._packed.copy()
            for q in members:
                grown_packed[:, q >> 3] |= np.uint8(1 << (q & 7))
            grown = structure.find(grown_packed)
            keep = (structure.states[:, members[0]] == 0) & (grown >= 0)
            lower.append(np.flatnonzero(keep))
            upper.append(grown[keep])
    elif _one_item_covers(structure):
        for q in range(len(structure.items)):
            grown = structure._flipped(q)
            keep = (structure.states[:, q] == 0) & (grown >= 0)
            lower.append(np.flatnonzero(keep))
            upper.append(grown[keep])
    else:
        if len(structure) > COVER_LIMIT:
            raise StructureError(f"the covering relation of a structure that is not well-graded compares each "
                                 f"state with every pair of its substates; refused above {COVER_LIMIT:,} "
                                 f"states (this one has {len(structure):,})")
        within = structure._substates(np.arange(len(structure))).astype(np.float32)  # [M, L]: L strictly inside M
        for start in range(0, len(structure), _BLOCK):
            rows = np.arange(start, min(start + _BLOCK, len(structure)))
            inside = within[rows] > 0  # (block, states): L strictly inside K
            # L is covered by K iff no M strictly inside K holds L strictly
            between = (within[rows] @ within) > 0
            pairs = np.argwhere(inside & ~between)
            lower.append(pairs[:, 1])
            upper.append(rows[pairs[:, 0]])
    lo, up = np.concatenate(lower or [np.zeros(0, np.int64)]), np.concatenate(upper or [np.zeros(0, np.int64)])
    order = np.lexsort((lo, up))
    return lo[order].astype(np.int64), up[order].astype(np.int64)


def _one_item_covers(structure: Structure) -> bool:
    """Whether every covering pair is a one-item step: so in a well-graded family (a longer step
    would have a tight path, hence states, inside it)."""
    return len(structure) <= 1 or structure.is_well_graded()


def learning_paths(structure: Structure) -> LearningPaths:
    """The learning paths: maximal chains of states from the empty set to Q, counted and listed lazily.

    Raises
    ------
    StructureError
        When the family is not a knowledge structure, or (not well-graded) above
        :data:`~kstp.kst.analysis.COVER_LIMIT` states.

    Examples
    --------
    >>> K = Structure.build("abc", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1]])
    >>> paths = learning_paths(K)
    >>> paths.count, [K.steps(p) for p in paths]
    (2, [[['a'], ['b'], ['c']], [['b'], ['a'], ['c']]])
    """
    structure.require_structure()
    sizes = structure.states.sum(axis=1)
    start, goal = int(np.flatnonzero(sizes == 0)[0]), int(np.flatnonzero(sizes == len(structure.items))[0])
    lower, upper = covers(structure)
    return LearningPaths(structure, start, goal, lower, upper)


def gradations(structure: Structure, start: int, goal: int) -> LearningPaths:
    """The gradations from state ``start`` to state ``goal`` (rows): chains adding one item per step.

    Raises
    ------
    StructureError
        When ``start`` is not a subset of ``goal``.

    Examples
    --------
    >>> K = Structure.build("abc", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1]])
    >>> steps = gradations(K, K.row(["a"]), K.row(["a", "b", "c"]))
    >>> steps.count, [K.steps(p) for p in steps]
    (1, [[['b'], ['c']]])
    """
    if (structure.states[start] > structure.states[goal]).any():
        extra = structure.sets([start])[0]
        raise StructureError(f"a gradation adds items: {{{', '.join(extra)}}} is not a subset of "
                             f"{{{', '.join(structure.sets([goal])[0])}}}; give the smaller state first")
    lower, upper = [], []
    inside = ((structure.states >= structure.states[start]) & (structure.states <= structure.states[goal])).all(axis=1)
    for q in np.flatnonzero(structure.states[goal] > structure.states[start]):
        grown = structure._flipped(int(q))
        keep = inside & (structure.states[:, q] == 0) & (grown >= 0)
        lower.append(np.flatnonzero(keep))
        upper.append(grown[keep])
    lo = np.concatenate(lower or [np.zeros(0, np.int64)]).astype(np.int64)
    up = np.concatenate(upper or [np.zeros(0, np.int64)]).astype(np.int64)
    order = np.lexsort((lo, up))
    return LearningPaths(structure, start, goal, lo[order], up[order])


@dataclass(frozen=True, eq=False)
class LearningPaths:
    """The chains from one state to another along given steps (pairs of rows): counted exactly, listed lazily.

    ``count`` is a Python integer (an antichain of n items has n! learning paths);
    iterating yields each path as a list of rows, smallest first, in a fixed order.
    """

    structure: Structure
    start: int
    goal: int
    lower: np.ndarray
    upper: np.ndarray

    @property
    def count(self) -> int:
        """Number of chains from ``start`` to ``goal``: each state's count is the sum of its predecessors'."""
        order = np.argsort(self.structure.states.sum(axis=1), kind="stable")
        ways = np.zeros(len(self.structure), dtype=object)
        ways[self.start] = 1
        into = np.argsort(self.upper, kind="stable")
        lower, upper = self.lower[into], self.upper[into]
        bounds = np.searchsorted(upper, np.arange(len(self.structure) + 1))
        for row in order.tolist():
            if row != self.start and bounds[row] < bounds[row + 1]:
                ways[row] = sum(ways[lower[bounds[row]:bounds[row + 1]]].tolist())
        return int(ways[self.goal])

    def __iter__(self) -> Iterator[list[int]]:
        above: dict[int, list[int]] = {}
        for lo, up in zip(self.lower.tolist(), self.upper.tolist(), strict=True):
            above.setdefault(lo, []).append(up)
        reaches = self._reaching()
        path = [self.start]
        stack = [iter(above.get(self.start, []))]
        if self.start == self.goal:
            yield [self.start]
            return
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                path.pop()
                continue
            if not reaches[nxt]:
                continue
            path.append(nxt)
            if nxt == self.goal:
                yield list(path)
                path.pop()
                continue
            stack.append(iter(above.get(nxt, [])))

    def _reaching(self) -> np.ndarray:
        """Per state, whether the goal can be reached from it along the steps."""
        reach = np.zeros(len(self.structure), bool)
        reach[self.goal] = True
        order = np.argsort(-self.structure.states.sum(axis=1), kind="stable")
        below: dict[int, list[int]] = {}
        for lo, up in zip(self.lower.tolist(), self.upper.tolist(), strict=True):
            below.setdefault(up, []).append(lo)
        for row in order.tolist():
            if reach[row]:
                for lo in below.get(row, []):
                    reach[lo] = True
        return reach

    def first(self, n: int) -> list[list[int]]:
        """The first ``n`` paths."""
        return list(islice(iter(self), n))
