"""Analysis of any knowledge structure given by its states: properties, base, atoms, surmise
relation, fringes, covering relation, learning paths and gradations.

:mod:`kstp.kst.spaces` builds the quasi-ordinal space of a prerequisite relation; this
module takes a family of states as it comes (a 0/1 matrix: a pks ``K``, a kstIO file, a
fitted BLIM's structure), which need not be closed under union or intersection. Items
are the columns, states the rows; a state is held as a packed bit row, and every
analysis is a few vectorised operations over all states at once:

- *lookups* (is K Δ {q} a state?) turn each packed row into one sortable key (a 64-bit
  word up to 64 items, the row's bytes above) and search the sorted keys, so the fringe
  of every state costs ``items x states x log(states)``;
- *inclusions* between all pairs of states (atoms, the covering relation) are counted as
  one matrix product of the 0/1 rows, in blocks of rows, so memory follows the block.

Definitions (Doignon & Falmagne 1999, *Knowledge Spaces*; Falmagne & Doignon 2011,
*Learning Spaces*): a *knowledge structure* holds the empty set and the domain Q; a
*knowledge space* is closed under union, a *closure space* under intersection, a
*quasi-ordinal* space under both (it is then the family of down-sets of its surmise
relation, Birkhoff's theorem). The *atoms* at q are the minimal states holding q; the
*base* of a space is the set of its atoms, the least family whose unions give every
state. The *surmise relation* has p before q when every state holding q holds p. The
*inner fringe* of K is {q in K : K - {q} is a state}, the *outer fringe* {q not in K :
K + {q} is a state}. A structure is *well-graded* when any two states K, L are joined by
a tight path: as many steps of one item as K Δ L has items, through states. A *learning path* is a maximal
chain of states from the empty set to Q (each state covers the one before: no state
lies strictly between); in a well-graded structure every step adds one item, and the
learning paths are its *gradations*. A *gradation* from K to L (K a subset of L) is a
chain K = K0, ..., Kn = L of states, each one item larger than the one before.

Assumes a 0/1 matrix without repeated rows (:meth:`Structure.build` refuses one). The
covering relation, learning paths and gradations are in :mod:`kstp.kst.paths`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from kstp.errors import KstpError, NotAKnowledgeStateError, UnknownIdError

__all__ = ["Structure", "StructureError", "span", "PAIRWISE_LIMIT", "COVER_LIMIT"]

_BLOCK = 2048  # rows per block of a pairwise computation: (block x states) cells at a time
_SMALL = 48  # states up to which atoms and union closure loop over integer masks (faster than numpy there)
_DIRECT = 22  # items up to which lookups go through a table of all 2^items sets (at most 16 MB)
#: States from which the pairwise analyses (atoms and the base, union closure, well-gradedness
#: of a structure closed under neither union nor intersection) are refused: their cost grows
#: with the square of the states.
PAIRWISE_LIMIT = 50_000
#: States from which the covering relation of a structure that is not well-graded is refused:
#: it compares every state with every pair of its substates (the cube of the states).
COVER_LIMIT = 4_000


class StructureError(KstpError):
    """A family of states that is not what an analysis needs (not a structure, not a space, ...)."""


def _pack(states: np.ndarray) -> np.ndarray:
    """Packed rows (states, bytes) of a 0/1 matrix, item j in bit j % 8 of byte j // 8."""
    return np.packbits(states.astype(bool), axis=1, bitorder="little")


def _keys(packed: np.ndarray) -> np.ndarray:
    """One sortable key per packed row: uint64 up to 8 bytes, else the row's bytes (void)."""
    if packed.shape[1] <= 8:
        wide = np.zeros((len(packed), 8), np.uint8)
        wide[:, :packed.shape[1]] = packed
        return wide.view("<u8").ravel()
    return np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()


@dataclass(frozen=True, eq=False)
class Structure:
    """A family of item sets (states) on a domain, with its analyses.

    Made by :meth:`build`; the order of the states is the order given.

    Parameters
    ----------
    items : sequence of str
        The domain Q, one name per column.
    states : array-like of shape (states, items), 0/1
        One row per state.

    Raises
    ------
    StructureError
        When a value is not 0 or 1, the widths differ, or a state is listed twice.

    Examples
    --------
    pks's ``endm$K`` (Heller & Wickelmaier 2013): seven states on a-d, not closed under
    union ({b, c} + {b, d} = {b, c, d} is no state).

    >>> K = Structure.build("abcd", [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0], [1, 1, 0, 1],
    ...                              [1, 0, 1, 1], [1, 1, 1, 1]])
    >>> K.is_structure(), K.is_space(), K.is_closure_space()
    (True, False, False)
    >>> K.sets(K.atoms()["a"])
    [['a', 'b', 'c'], ['a', 'b', 'd'], ['a', 'c', 'd']]
    >>> K.surmise_relation().astype(int).tolist()  # row p, column q: p is a prerequisite of q
    [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    """

    items: tuple[str, ...]
    states: np.ndarray  # (states, items) uint8
    _packed: np.ndarray = field(repr=False)
    _order: np.ndarray = field(repr=False)  # argsort of the keys
    _sorted: np.ndarray = field(repr=False)  # the keys, sorted

    @classmethod
    def build(cls, items, states) -> Structure:
        """The structure of ``states`` (0/1 rows) on ``items``; see the class for what is refused."""
        items = tuple(items)
        matrix = np.asarray(states)
        if matrix.ndim != 2 or matrix.shape[1] != len(items):
            raise StructureError(f"the states have {matrix.shape[-1] if matrix.ndim else 0} item columns "
                                 f"for {len(items)} items")
        if len(set(items)) != len(items):
            seen = [q for q in items if items.count(q) > 1]
            raise StructureError(f"item {seen[0]!r} is named twice")
        bad = (matrix != 0) & (matrix != 1)  # two comparisons: np.isin costs more than the rest of build
        if bad.any():
            row, column = np.argwhere(bad)[0]
            raise StructureError(f"state {row + 1} holds {matrix[row, column].item()!r} for item {items[column]!r}; "
                                 "a state matrix holds 0 or 1")
        matrix = matrix.astype(np.uint8)
        packed = _pack(matrix)
        keys = _keys(packed)
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        repeated = np.flatnonzero(ordered[1:] == ordered[:-1])
        if len(repeated):
            first, second = sorted(order[repeated[0]:repeated[0] + 2])
            raise StructureError(f"states {first + 1} and {second + 1} are the same set "
                                 f"{{{', '.join(np.asarray(items)[matrix[first] > 0])}}}; list each state once")
        return cls(items, matrix, packed, order, ordered)

    @classmethod
    def from_space(cls, space, limit: int | None = 10**6) -> Structure:
        """The states of a quasi-ordinal space (:class:`kstp.kst.spaces.KnowledgeSpace`) as a structure.

        What its construction guarantees is not checked again: it is closed under union
        and intersection, and its atoms are the down-sets of single items (q with all its
        prerequisites), so no analysis here compares pairs of states.

        Raises
        ------
        TooManyStatesError
            When the space has more than ``limit`` states.
        """
        masks = space._sorted_masks(limit)
        column = {q: j for j, q in enumerate(space.items)}
        matrix = np.zeros((len(masks), len(space.items)), np.uint8)
        for k, members in enumerate(space.classes):  # class k of the masks: its items' columns
            bit = (np.asarray(masks, dtype=object if len(space.classes) > 64 else np.uint64) >> k) & 1
            matrix[:, [column[q] for q in members]] = np.asarray(bit, dtype=np.uint8)[:, None]
        built = cls.build(space.items, matrix)
        below = built.surmise_relation()  # [p, q]: p in every state holding q
        atoms = np.zeros(matrix.shape, bool)
        rows = built.find(_pack(below.T.astype(np.uint8)))  # the down-set of each item is a state
        atoms[rows, np.arange(len(space.items))] = True
        classes = [[column[q] for q in members] for members in space.classes]
        built.__dict__.update(_union_closed=True, _intersection_closed=True, _atom_matrix=atoms, _classes=classes)
        return built

    # ---- lookups -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.states)

    def find(self, packed: np.ndarray) -> np.ndarray:
        """Row of each packed set in :attr:`states`, -1 where it is no state.

        Up to :data:`_DIRECT` items, when a search holds at least a quarter as many sets as
        there are possible ones, a set's code indexes a table of every possible set (built
        once): one gather instead of a binary search.
        """
        keys = _keys(packed)
        if len(self.items) <= _DIRECT and (1 << len(self.items)) <= 4 * len(keys):  # the table costs less
            return self._direct[keys.astype(np.int64)]
        at = np.searchsorted(self._sorted, keys)
        at = np.minimum(at, len(self._sorted) - 1) if len(self._sorted) else at
        hit = (self._sorted[at] == keys) if len(self._sorted) else np.zeros(len(keys), bool)
        return np.where(hit, self._order[at] if len(self._order) else -1, -1)

    @cached_property
    def _direct(self) -> np.ndarray:
        """Row of every set over at most :data:`_DIRECT` items by its code, -1 for a non-state."""
        table = np.full(1 << len(self.items), -1, np.int32)
        table[self._sorted.astype(np.int64)] = self._order
        return table

    def rows_of(self, matrix) -> np.ndarray:
        """Row of each 0/1 row of ``matrix`` (sets on the same items) in :attr:`states`, -1 where it is no state.

        >>> Structure.build("ab", [[0, 0], [1, 1]]).rows_of([[1, 1], [1, 0]]).tolist()
        [1, -1]
        """
        return self.find(_pack(np.asarray(matrix, dtype=np.uint8)))

    def row(self, members) -> int:
        """The row of the state holding exactly ``members`` (item names).

        Raises
        ------
        UnknownIdError
            When a name is not an item.
        NotAKnowledgeStateError
            When the set is not a state.
        """
        index = {q: j for j, q in enumerate(self.items)}
        unknown = sorted(set(members) - set(index))
        if unknown:
            raise UnknownIdError(f"{', '.join(map(repr, unknown))} not an item of this structure")
        vector = np.zeros((1, len(self.items)), np.uint8)
        vector[0, [index[q] for q in members]] = 1
        found = int(self.find(_pack(vector))[0])
        if found < 0:
            raise NotAKnowledgeStateError(f"{{{', '.join(sorted(members))}}} is not a state of this structure", {})
        return found

    def sets(self, rows) -> list[list[str]]:
        """The item names of the states at ``rows`` (in item order)."""
        names = np.asarray(self.items, dtype=object)
        return [names[self.states[r] > 0].tolist() for r in np.asarray(rows, dtype=np.int64).ravel()]

    def _flipped(self, q: int) -> np.ndarray:
        """The rows of K Δ {q} for every state K (-1 where that set is no state)."""
        return self._neighbours[:, q]

    @cached_property
    def _neighbours(self) -> np.ndarray:
        """(states, items): the row of K Δ {q}, -1 where it is no state; one search for all items at once
        (in blocks of states, about 2^22 sets at a time)."""
        n, width = len(self.items), self._packed.shape[1]
        out = np.empty((len(self), n), np.int64)
        q = np.arange(n)
        step = max(1, (1 << 22) // max(n, 1))
        for start in range(0, len(self), step):
            block = np.repeat(self._packed[start:start + step, None, :], n, axis=1)  # (block, items, bytes)
            block[:, q, q >> 3] ^= (1 << (q & 7)).astype(np.uint8)
            out[start:start + step] = self.find(block.reshape(-1, width)).reshape(-1, n)
        return out

    # ---- properties ------------------------------------------------------------------------------
    def is_structure(self) -> bool:
        """Whether the empty set and the whole domain are states."""
        sizes = self.states.sum(axis=1)
        return bool((sizes == 0).any() and (sizes == len(self.items)).any())

    def require_structure(self) -> None:
        """Raise :class:`StructureError` unless the family is a knowledge structure, naming what lacks."""
        sizes = self.states.sum(axis=1)
        missing = [what for what, ok in (("the empty set", (sizes == 0).any()),
                                         ("the whole domain", (sizes == len(self.items)).any())) if not ok]
        if missing:
            raise StructureError(f"not a knowledge structure: {' and '.join(missing)} "
                                 f"{'is' if len(missing) == 1 else 'are'} not a state")

    def is_space(self) -> bool:
        """Whether the family is closed under union (a knowledge space, given the empty set).

        Raises
        ------
        StructureError
            Above :data:`PAIRWISE_LIMIT` states.

        Checked without listing pairs of states: the generators (states that are not
        the union of the generators strictly inside them, found level by level from the
        smallest; every state is then a union of generators) are computed first, and the
        family is closed under union iff K + G is a state for every state K and generator
        G (K + L, L a union of generators, is then reached one generator at a time). Its
        cost follows states x generators; for a space the generators are its base.
        """
        return self._union_closed

    @cached_property
    def _union_closed(self) -> bool:
        if len(self) <= _SMALL:
            masks = self._int_masks
            atoms = [m for m, own in zip(masks, self._own_ints, strict=True) if own]
            present = set(masks)
            for k in masks:
                union = 0
                for a in atoms:
                    if k | a not in present:
                        return False
                    if a & k == a:
                        union |= a
                if union != k:
                    return False
            return True
        generators = self._generators
        step = max(1, _BLOCK * 64 // max(len(self), 1))  # generators per block: memory of about 2^17 sets
        for start in range(0, len(generators), step):
            joined = self._packed[None, :, :] | self._packed[generators[start:start + step]][:, None, :]
            if (self.find(joined.reshape(-1, self._packed.shape[1])) < 0).any():
                return False
        return True

    @cached_property
    def _generators(self) -> np.ndarray:
        """Rows of the states that are not the union of the generators strictly inside them, by size levels.

        Every state is a union of generators (those inside it), so the union of all states
        strictly inside K is the union of the generators strictly inside K; for a space
        the generators are its base (Doignon & Falmagne 1999, §1.4 on bases).
        """
        sizes = self.states.sum(axis=1)
        order = np.argsort(sizes, kind="stable")
        bounds = np.searchsorted(sizes[order], np.arange(len(self.items) + 2))
        found: list[np.ndarray] = []
        matrix = np.zeros((0, len(self.items)), np.float32)
        for level in range(1, len(self.items) + 1):
            rows = order[bounds[level]:bounds[level + 1]]
            if not len(rows):
                continue
            if len(matrix) * len(self) > PAIRWISE_LIMIT ** 2:
                self._refuse_pairwise("the generators (base, atoms, union closure)")
            union = np.zeros((len(rows), len(self.items)), bool)
            for start in range(0, len(rows), _BLOCK):
                block = self.states[rows[start:start + _BLOCK]].astype(np.float32)
                inside = (block @ matrix.T) == matrix.sum(axis=1)[None, :]  # generator within the state
                union[start:start + _BLOCK] = (inside.astype(np.float32) @ matrix) > 0
            new = rows[(union != (self.states[rows] > 0)).any(axis=1)]
            if len(new):
                found.append(new)
                matrix = np.vstack([matrix, self.states[new].astype(np.float32)])
        return np.sort(np.concatenate(found)) if found else np.zeros(0, np.int64)

    def complement(self) -> Structure:
        """The family of complements Q - K (same items, same row order)."""
        return Structure.build(self.items, 1 - self.states)

    def is_closure_space(self) -> bool:
        """Whether the family is closed under intersection (its complements under union)."""
        return self._intersection_closed

    @cached_property
    def _intersection_closed(self) -> bool:
        return self.complement().is_space()

    def is_quasi_ordinal(self) -> bool:
        """Whether the family is closed under union and intersection: the down-sets of its surmise relation."""
        return self.is_space() and self.is_closure_space()

    def forward_graded(self) -> np.ndarray:
        """Per item q, whether K + {q} is a state for every state K (pks ``is.forward.graded``)."""
        return np.array([bool((self._flipped(q)[self.states[:, q] == 0] >= 0).all()) for q in range(len(self.items))])

    def backward_graded(self) -> np.ndarray:
        """Per item q, whether K - {q} is a state for every state K (pks ``is.backward.graded``)."""
        return np.array([bool((self._flipped(q)[self.states[:, q] == 1] >= 0).all()) for q in range(len(self.items))])

    def fringes(self) -> tuple[np.ndarray, np.ndarray]:
        """The inner and outer fringe of every state, as 0/1 matrices (states, items) aligned with :attr:`states`.

        Examples
        --------
        >>> K = Structure.build("ab", [[0, 0], [1, 0], [1, 1]])
        >>> inner, outer = K.fringes()
        >>> inner.tolist(), outer.tolist()
        ([[0, 0], [1, 0], [0, 1]], [[1, 0], [0, 1], [0, 0]])
        """
        inner, outer = self._fringe_matrices
        return inner.copy(), outer.copy()

    @cached_property
    def _fringe_matrices(self) -> tuple[np.ndarray, np.ndarray]:
        neighbour = (self._neighbours >= 0).astype(np.uint8)
        return neighbour & self.states, neighbour & (1 - self.states)

    def is_well_graded(self) -> bool:
        """Whether every two states are joined by a tight path (one item per step, one step per item of K Δ L).

        For a union-closed family (and, by complements, an intersection-closed one) this is
        downgradability: every non-empty state has an item in its inner fringe (every state
        but Q one in its outer fringe); Falmagne & Doignon 2011, ch. 2 (a knowledge space is
        well-graded iff it is accessible, an antimatroid). Otherwise each pair is checked:
        K and L are joined iff every K != L has a neighbour state K Δ {q} with q in K Δ L
        (by induction on the size of K Δ L), a few word operations per pair.

        Raises
        ------
        StructureError
            A family closed under neither union nor intersection with more than
            :data:`PAIRWISE_LIMIT` states.
        """
        return self._well_graded

    @cached_property
    def _well_graded(self) -> bool:
        inner, outer = self._fringe_matrices
        sizes = self.states.sum(axis=1)
        if self.is_space():
            return bool(inner[sizes > 0].any(axis=1).all())
        if self.is_closure_space():
            return bool(outer[sizes < len(self.items)].any(axis=1).all())
        self._refuse_pairwise("well-gradedness")
        neighbour = _pack(inner | outer)
        for start in range(0, len(self), _BLOCK):
            k = self._packed[start:start + _BLOCK]
            apart = k[:, None, :] ^ self._packed[None, :, :]  # (block, states, bytes)
            reach = (apart & neighbour[start:start + _BLOCK][:, None, :]).any(axis=2)
            if (apart.any(axis=2) & ~reach).any():
                return False
        return True

    def _refuse_pairwise(self, what: str) -> None:
        if len(self) > PAIRWISE_LIMIT:
            raise StructureError(f"{what} of a structure with {len(self):,} states compares every pair of states; "
                                 f"refused above {PAIRWISE_LIMIT:,} states")

    # ---- atoms, base, surmise relation -------------------------------------------------------------
    def _substates(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), states) bool: state L is a proper subset of state K (K at ``rows``)."""
        k = self.states[rows].astype(np.float32)
        sizes = self.states.sum(axis=1)
        shared = k @ self.states.T.astype(np.float32)  # |K & L|, exact in float32 up to 2^24 items
        return (shared == sizes[None, :]) & (sizes[None, :] < sizes[rows][:, None])

    @cached_property
    def _atom_matrix(self) -> np.ndarray:
        """(states, items) bool: K is an atom at q (q in K, and no state strictly inside K holds q)."""
        if len(self) <= _SMALL:  # a few states: integer masks beat the matrix products' overhead
            return self._unmask(self._own_ints)
        generators = self.states[self._generators].astype(np.float32)
        sizes = generators.sum(axis=1)
        out = np.zeros(self.states.shape, bool)
        for start in range(0, len(self), _BLOCK):
            block = self.states[start:start + _BLOCK].astype(np.float32)
            inside = ((block @ generators.T) == sizes[None, :]) & (sizes[None, :] < block.sum(axis=1)[:, None])
            below = (inside.astype(np.float32) @ generators) > 0  # the items of the states strictly inside K
            out[start:start + _BLOCK] = (block > 0) & ~below
        return out

    @cached_property
    def _int_masks(self) -> list[int]:
        """Each state as a Python integer, item j in bit j."""
        return [int.from_bytes(row.tobytes(), "little") for row in self._packed]

    @cached_property
    def _own_ints(self) -> list[int]:
        """Per state (few states), the items no state strictly inside it holds: those it is an atom for."""
        masks, own = self._int_masks, []
        for k in masks:
            below = 0
            for m in masks:
                if m != k and m & k == m:
                    below |= m
            own.append(k & ~below)
        return own

    def _unmask(self, masks: list[int]) -> np.ndarray:
        """(len(masks), items) bool of integer masks (item j in bit j)."""
        width = self._packed.shape[1]
        packed = np.frombuffer(b"".join(m.to_bytes(width, "little") for m in masks), np.uint8).reshape(-1, width)
        return np.unpackbits(packed, axis=1, count=len(self.items), bitorder="little").astype(bool)

    def atoms(self) -> dict[str, np.ndarray]:
        """Per item q, the rows of the atoms at q: the minimal states holding q (kst ``katoms``).

        Raises
        ------
        StructureError
            Above :data:`PAIRWISE_LIMIT` states.

        Examples
        --------
        >>> K = Structure.build("abc", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1]])
        >>> {q: K.sets(rows) for q, rows in K.atoms().items()}
        {'a': [['a']], 'b': [['b']], 'c': [['a', 'b', 'c']]}
        """
        atom = self._atom_matrix
        return {q: np.flatnonzero(atom[:, j]) for j, q in enumerate(self.items)}

    def base(self, check: bool = True) -> np.ndarray:
        """Rows of the base of a knowledge space: its atoms, the least family spanning it by unions.

        Parameters
        ----------
        check : bool
            Refuse a family that is not a knowledge space (the default, as kst's ``kbase``).
            ``False`` trusts the caller (a family kstp built, a file that says it holds a
            space) and skips the union-closure check, as kstMatrix's ``kmbasis`` and kstpy's
            ``basis`` do; on a family that is not a space it returns its generators (the
            states that are not a union of smaller states).

        Raises
        ------
        StructureError
            With ``check``, when the family is not closed under union (a base spans a space),
            or above :data:`PAIRWISE_LIMIT` states.

        Examples
        --------
        >>> K = Structure.build("abc", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1]])
        >>> K.sets(K.base())
        [['a'], ['b'], ['a', 'b', 'c']]
        """
        if check:
            self.require_structure()
            if not self.is_space():
                raise StructureError("not a knowledge space (not closed under union): a base spans a space by "
                                     "unions; analyse the atoms instead")
        if len(self) <= _SMALL:
            return np.array([r for r, own in enumerate(self._own_ints) if own], dtype=np.int64)
        return self._generators  # in a space, exactly the states that are an atom for some item

    def notions(self) -> list[list[str]]:
        """The classes of equally informative items (in exactly the same states), in item order.

        >>> Structure.build("abc", [[0, 0, 0], [1, 1, 0], [1, 1, 1]]).notions()
        [['a', 'b'], ['c']]
        """
        columns = np.ascontiguousarray(_pack(self.states.T))
        _, first, label = np.unique(_keys(columns), return_index=True, return_inverse=True)
        classes: dict[int, list[str]] = {}
        for j, c in enumerate(label.ravel().tolist()):
            classes.setdefault(c, []).append(self.items[j])
        return sorted(classes.values(), key=lambda members: self.items.index(members[0]))

    def surmise_relation(self) -> np.ndarray:
        """(items, items) bool, reflexive: [p, q] when every state holding q holds p (p is a prerequisite of q).

        For a quasi-ordinal space, the relation whose down-sets are the states (kst
        ``as.relation``, kstMatrix ``kmsurmiserelation``, with rows as prerequisites).
        """
        s = self.states.astype(np.float32)
        counter = (1 - s).T @ s  # [p, q]: states holding q but not p
        return counter == 0

    # ---- covering relation and paths ----------------------------------------------------------------
    def steps(self, path: list[int]) -> list[list[str]]:
        """The items each step of a path (rows of states) adds."""
        names = np.asarray(self.items, dtype=object)
        return [names[(self.states[b] > 0) & (self.states[a] == 0)].tolist() for a, b in zip(path, path[1:],
                                                                                              strict=False)]


def span(base, limit: int | None = 10**6) -> np.ndarray:
    """The knowledge space a base spans: every union of its elements, and the empty set.

    Parameters
    ----------
    base : array-like of shape (elements, items), 0/1
    limit : int or None
        Refuse a space with more states than this.

    Returns
    -------
    ndarray of shape (states, items), uint8
        Smallest first, then by the items as a binary number, first item highest.

    Raises
    ------
    StructureError
        When the space has more than ``limit`` states.

    Examples
    --------
    kstIO's base of pks's DoignonFalmagne7 spans its nine states:

    >>> B = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 0, 1, 0], [1, 1, 1, 0, 1]]
    >>> len(span(B)), span(B)[-1].tolist()
    (9, [1, 1, 1, 1, 1])
    """
    base = np.asarray(base, dtype=np.uint8)
    n = base.shape[1]
    packed = _pack(base)
    states = np.zeros((1, packed.shape[1]), np.uint8)
    for element in packed:
        grown = np.vstack([states, states | element])
        keys = _keys(grown)
        _, first = np.unique(keys, return_index=True)
        states = grown[np.sort(first)]
        if limit is not None and len(states) > limit:
            raise StructureError(f"the base spans more than {limit:,} states; raise the limit or give the states")
    matrix = np.unpackbits(states, axis=1, count=n, bitorder="little")
    weights = matrix.astype(np.float64) @ (2.0 ** -np.arange(1, n + 1))
    return matrix[np.lexsort((-weights, matrix.sum(axis=1)))]
