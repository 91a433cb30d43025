"""Knowledge spaces of a prerequisite relation: count, enumerate, sample, fringes.

Given items and direct prerequisite pairs (p, q) — p is a prerequisite of q — the
surmise relation is their reflexive-transitive closure, a quasi-order. Its knowledge
space (a quasi-ordinal space, closed under union and intersection) is the family of
item sets closed under prerequisites: the order ideals (down-sets) of the quasi-order
(Doignon & Falmagne 1999, Th. 3.8, Birkhoff's theorem). Mutual prerequisites are
equally informative items; they form one class and enter or leave a state together.

Enumeration is output-sensitive: classes are taken in a topological order, and each
class is added to every state built so far that holds all its prerequisites. Every
state is produced exactly once (the last class decides membership of that class), so
the work is at most (number of classes) x (number of states) word operations, on
Python integers while the family is small and vectorised with numpy over 64-bit
masks once it grows (up to 64 classes; above that, Python integers). Assumes
nothing about the relation beyond its items: cycles are the equivalence classes,
not an error.

Fringes come in two readings (:data:`FRINGES`). ``standard`` (the default) is the
field's definition on the items (Doignon & Falmagne 1999, Def. 4.1.6; Steiner &
Hochweber 2026, Eq. 2): the outer fringe of K is {q not in K : K ∪ {q} is a state},
the inner fringe {q in K : K \\ {q} is a state}. An item with an equally informative
partner can never be added or removed alone, so it is in no fringe; this is what R's
``pks::getKFringe`` returns. ``notions`` is the same definition applied to the notions
(the classes of equally informative items; Doignon & Falmagne 1999, on notions and
the discriminative reduction), that is, the fringes of the state in the discriminative
reduction of the space, each notion listed with all its items. Both agree where every class is one item.

Counting need not enumerate: :meth:`KnowledgeSpace.count` first runs a dynamic
programme over the classes in topological order that keeps, for each pattern of the
"frontier" (classes already decided that a later class still needs directly), how
many partial states show it; an antichain of n items is counted in n steps. Where the
frontier grows past a small work budget it enumerates instead, and a space whose
cheap lower bound passes the caller's limit is refused before anything is built: 2 to
the size of the largest level (classes of equal longest-path depth are pairwise
incomparable, and every subset of an antichain generates its own state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kstp.errors import KstpError, NotAKnowledgeStateError, UnknownIdError
from kstp.kst.relations import closure, pair_indices, reflect, topological_order, unique_sorted

__all__ = ["KnowledgeSpace", "TooManyStatesError", "FRINGES", "check_fringe"]

#: Readings of the inner and outer fringe: ``standard`` (on the items, the default) and
#: ``notions`` (on the classes of equally informative items: the discriminative reduction).
FRINGES = ("standard", "notions")

_NUMPY_FROM = 2048  # states from which enumeration switches to numpy masks
_SLICE = 8  # classes per lookup table when turning masks into item sets (2^8 entries each)
_COUNT_WORK = 300_000  # frontier patterns the exact count may visit in all (~0.2 s) before it enumerates
_FRINGE_CHUNK = 1 << 16  # states per block when computing all fringes (cache-sized)
_SAMPLE_CHUNK = 1 << 16  # random draws generated at a time by the sampler (bounded memory)


class TooManyStatesError(KstpError):
    """The space has more states than the caller allowed to enumerate; sample instead."""

    @classmethod
    def at_least(cls, width: int, antichain: str, limit: int) -> TooManyStatesError:
        """The error for a space with at least 2^width states (from an antichain of ``width`` items)."""
        return cls(f"the space has at least 2^{width} = {_big(2**width)} states ({width} {antichain}), more than "
                   f"the limit of {limit:,}; draw a sample instead (kstp kst space --sample N)")


def check_fringe(fringe: str) -> str:
    """``fringe`` if it is one of :data:`FRINGES`.

    Raises
    ------
    KstpError
        On any other value.

    >>> check_fringe("notions")
    'notions'
    """
    if fringe not in FRINGES:
        raise KstpError(f"unknown fringe reading {fringe!r}; use one of {', '.join(FRINGES)}")
    return fringe


@dataclass(frozen=True)
class KnowledgeSpace:
    """The quasi-ordinal knowledge space of ``items`` under ``prerequisites``.

    Made by :meth:`build` (the fields are its precomputed order, not for callers to fill).

    Parameters
    ----------
    items : sequence of str
        The domain Q; every item of ``prerequisites`` must be in it.
    prerequisites : iterable of (str, str)
        Direct pairs (p, q): p is a prerequisite of q.

    Raises
    ------
    UnknownIdError
        When a pair names an item outside ``items``.

    Examples
    --------
    A diamond: a before b and c, both before d.

    >>> space = KnowledgeSpace.build(["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    >>> space.count()
    6
    >>> [sorted(s) for s in space.states()]
    [[], ['a'], ['a', 'b'], ['a', 'c'], ['a', 'b', 'c'], ['a', 'b', 'c', 'd']]
    >>> space.outer_fringe({"a", "b"}), space.inner_fringe({"a", "b"})
    (['c'], ['b'])

    With b and c equally informative (mutual prerequisites), neither can be added alone:

    >>> quasi = KnowledgeSpace.build(["a", "b", "c"], [("a", "b"), ("b", "c"), ("c", "b")])
    >>> quasi.outer_fringe({"a"}), quasi.outer_fringe({"a"}, fringe="notions")
    ([], ['b', 'c'])
    """

    items: tuple[str, ...]
    classes: tuple[tuple[str, ...], ...]  # equally informative items, in a topological order
    below: tuple[int, ...]  # per class, the bit mask of its direct and indirect prerequisite classes
    above: tuple[int, ...]  # per class, the bit mask of the classes it is a direct or indirect prerequisite of
    cover: tuple[int, ...]  # per class, the classes directly below it (its prerequisites not below another)
    level: tuple[int, ...]  # per class, the length of the longest chain of classes below it

    @classmethod
    def build(cls, items, prerequisites) -> KnowledgeSpace:
        """The knowledge space of ``items`` (sequence of str, the domain Q) under the direct
        prerequisite pairs ``prerequisites`` (iterable of (p, q): p is a prerequisite of q).

        Nothing is enumerated here: the classes of mutual prerequisites, a topological order
        and the closure as bit masks. Raises :class:`~kstp.errors.UnknownIdError` when a
        pair names an item outside ``items``; see the class for examples.
        """
        items = tuple(dict.fromkeys(items))
        src, dst = pair_indices(items, prerequisites)
        n = len(items)
        label = np.arange(n)  # each item its own class, unless a cycle says otherwise
        while True:
            members: list[list[int]] = [[] for _ in range(int(label.max()) + 1 if n else 0)]
            for i, c in enumerate(label.tolist()):
                members[c].append(i)
            m = len(members)
            links = unique_sorted(label[src] * m + label[dst])
            before, after = links // max(m, 1), links % max(m, 1)
            keep = before != after
            before, after = before[keep], after[keep]
            order = topological_order([min(items[i] for i in group) for group in members], before, after)
            if len(order) == m:
                break
            # A cycle stopped the order: the strongly connected items are the classes of mutual prerequisites.
            from scipy import sparse  # here only: scipy costs 0.3 s of import, every caller would pay it
            from scipy.sparse import csgraph

            graph = sparse.csr_matrix((np.ones(len(src), np.int32), (src, dst)), shape=(n, n))
            label = np.asarray(csgraph.connected_components(graph, directed=True, connection="strong")[1], np.int64)
        position = np.empty(len(order), np.int64)
        position[order] = np.arange(len(order))
        below, cover, level = closure(m, position[before], position[after])
        above, _, _ = closure(m, m - 1 - position[after], m - 1 - position[before])
        above_masks = [0] * m
        for k, mask in enumerate(above):  # reversed positions: reflect the bits back
            above_masks[m - 1 - k] = reflect(mask, m)
        classes = tuple(tuple(sorted(items[i] for i in members[c])) for c in order)
        return cls(items, classes, tuple(below), tuple(above_masks), tuple(cover), tuple(level))

    # ---- sets <-> masks ------------------------------------------------------------------
    def _class_of(self) -> dict[str, int]:
        return {item: k for k, members in enumerate(self.classes) for item in members}

    def _mask(self, state) -> int:
        index = self._class_of()
        unknown = [i for i in state if i not in index]
        if unknown:
            raise UnknownIdError(f"{', '.join(map(repr, sorted(unknown)))} not an item of this space")
        mask = 0
        for item in state:
            mask |= 1 << index[item]
        partial = [self.classes[k] for k in range(len(self.classes))
                   if mask >> k & 1 and not set(self.classes[k]) <= set(state)]
        if partial:
            raise NotAKnowledgeStateError(
                "not a knowledge state: equally informative items must come together: "
                + "; ".join(", ".join(c) for c in partial), {c[0]: list(c[1:]) for c in partial})
        return mask

    def _items(self, mask: int) -> frozenset[str]:
        return frozenset(i for k, members in enumerate(self.classes) if mask >> k & 1 for i in members)

    # ---- the space -------------------------------------------------------------------------
    def _masks(self, limit: int | None, checked: bool = False) -> np.ndarray | list[int]:
        n = len(self.classes)
        if limit is not None and not checked:
            self._refuse_above(limit, self._count_frontier())
        # Python integers while the family is small (numpy's per-call cost dominates
        # there) or wider than 64 classes; numpy 64-bit masks once it grows.
        states: np.ndarray | list[int] = [0]
        for k in range(n):
            need = self.below[k]
            if isinstance(states, list) and n <= 64 and len(states) >= _NUMPY_FROM:
                states = np.array(states, dtype=np.uint64)
            if isinstance(states, list):
                grown = [s | 1 << k for s in states if s & need == need]
            else:
                need64 = np.uint64(need)
                grown = states[(states & need64) == need64] | np.uint64(1 << k)
            # Checked before the two parts are joined, so a refused space never doubles in memory.
            if limit is not None and len(states) + len(grown) > limit:
                raise TooManyStatesError(
                    f"the space has more than {limit:,} states (already after {k + 1} of {n} item classes), "
                    "too many to list here; draw a sample instead (kstp kst space --sample N)")
            states = states + grown if isinstance(states, list) else np.concatenate([states, grown])
        return states

    def _refuse_above(self, limit: int, count: int | None) -> None:
        """Refuse at once, before enumerating, a space known (by its lower bound or its exact
        ``count``, None where not counted) to have more than ``limit`` states."""
        low, width = self.lower_bound()
        if low > limit:
            raise TooManyStatesError.at_least(width, "item classes none of which needs another", limit)
        if count is not None and count > limit:  # not counted: the enumeration itself stops at the limit
            raise TooManyStatesError(f"the space has {_big(count)} states, more than the limit of {limit:,}; "
                                     "draw a sample instead (kstp kst space --sample N) or raise the limit")

    def relation(self) -> np.ndarray:
        """The surmise relation: (items, items) bool, reflexive, [p, q] when p is a prerequisite of q.

        The reflexive-transitive closure of the prerequisite pairs, equally informative
        items related both ways; read off the class masks, nothing enumerated.

        >>> space = KnowledgeSpace.build(["a", "b", "c"], [("a", "b"), ("b", "c")])
        >>> space.relation().astype(int).tolist()
        [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
        """
        index = {q: j for j, q in enumerate(self.items)}
        klass = np.empty(len(self.items), np.int64)
        for k, members in enumerate(self.classes):
            klass[[index[q] for q in members]] = k
        below = np.zeros((len(self.classes), len(self.classes)), bool)  # [k, c]: class c below (or is) class k
        for k, mask in enumerate(self.below):
            below[k, list(_bits(mask | 1 << k))] = True
        return below[klass][:, klass].T

    def lower_bound(self) -> tuple[int, int]:
        """A cheap lower bound on the number of states: ``(2**width, width)``.

        ``width`` is the size of the largest level (classes of equal longest-path depth
        from the classes without prerequisites); a level is an antichain, and each of its
        subsets generates a different state.

        >>> KnowledgeSpace.build(["a", "b", "c"], [("a", "c")]).lower_bound()
        (4, 2)
        """
        width = int(np.bincount(self.level).max()) if self.level else 0
        return 2**width, width

    def count(self, limit: int | None = 10**8) -> int:
        """Number of knowledge states (the empty set and Q included).

        Counted without listing where possible: a dynamic programme over the classes in
        topological order whose work is the number of distinct patterns of the frontier
        (classes decided that a later class still needs directly), not the number of
        states, so an antichain of 300 items is counted at once. Past a work budget (a
        tangled relation) it falls back to enumerating the states as bit masks.

        Parameters
        ----------
        limit : int or None
            The most states the fallback enumeration may hold (8 bytes each); an exact
            count by the programme is never refused.

        Raises
        ------
        TooManyStatesError
            When the fallback is needed and the space has more than ``limit`` states;
            a space whose :meth:`lower_bound` passes ``limit`` is refused at once.

        >>> KnowledgeSpace.build([f"i{k}" for k in range(100)], []).count() == 2**100
        True
        """
        exact = self._count_frontier()
        if exact is not None:
            return exact
        if limit is not None:
            self._refuse_above(limit, None)
        return len(self._masks(limit, checked=True))

    def _count_frontier(self) -> int | None:
        """The exact count by the frontier programme, or None past :data:`_COUNT_WORK`."""
        m = len(self.classes)
        covers = self.cover
        last_use = [-1] * m
        for k, cover in enumerate(covers):
            for j in _bits(cover):
                last_use[j] = k  # classes in order: the last user seen is the latest
        retire = [0] * m  # per step k, the frontier classes no later class needs
        for j, k in enumerate(last_use):
            if k >= 0:
                retire[k] |= 1 << j
        patterns, work = {0: 1}, 0
        for k in range(m):
            bit, need, keep = 1 << k, covers[k], ~retire[k]
            kept_bit = bit if last_use[k] > k else 0
            grown: dict[int, int] = {}
            for pattern, ways in patterns.items():
                out = pattern & keep
                grown[out] = grown.get(out, 0) + ways
                if pattern & need == need:
                    out = (pattern | kept_bit) & keep
                    grown[out] = grown.get(out, 0) + ways
            patterns = grown
            work += len(patterns)
            if work > _COUNT_WORK:
                return None
        return sum(patterns.values())

    def _sorted_masks(self, limit: int | None) -> np.ndarray | list[int]:
        masks = self._masks(limit)
        if isinstance(masks, np.ndarray) and len(self.classes) <= 58:  # one sort of (size << 58 | mask)
            keys = np.bitwise_count(masks).astype(np.uint64) << np.uint64(58) | masks
            keys.sort()
            return keys & np.uint64((1 << 58) - 1)
        if isinstance(masks, np.ndarray):
            return masks[np.lexsort((masks, np.bitwise_count(masks)))]
        return sorted(masks, key=lambda m: (m.bit_count(), m))

    def states(self, limit: int | None = 10**7) -> list[frozenset[str]]:
        """Every knowledge state, smallest first (then by its mask over the class order).

        Counting first (:meth:`count`), listing then builds one frozenset per state from
        lookup tables over 8-class slices of the masks, so it costs far more than
        counting (10^6 states: seconds to list, milliseconds to count).

        Raises
        ------
        TooManyStatesError
            When there are more than ``limit`` states; a space known to be larger (by its
            count or :meth:`lower_bound`) is refused before anything is enumerated.
        """
        return self.item_sets(self._sorted_masks(limit))

    def item_sets(self, masks: np.ndarray | list[int]) -> list[frozenset[str]]:
        """The item sets of masks over :attr:`classes` (bit k: every item of class k).

        >>> [sorted(s) for s in KnowledgeSpace.build(["a", "b"], [("a", "b")]).item_sets([0, 1, 3])]
        [[], ['a'], ['a', 'b']]
        """
        # Item sets of every value of each 8-class slice (one union each), then one
        # union per state over its slices: far fewer Python steps than one per class bit.
        parts = []
        for start in range(0, len(self.classes), _SLICE):
            width = min(_SLICE, len(self.classes) - start)
            if isinstance(masks, np.ndarray):
                values = ((masks >> np.uint64(start)) & np.uint64((1 << width) - 1)).tolist()
            else:
                values = [m >> start & (1 << width) - 1 for m in masks]
            if len(values) < 1 << width:  # a small family: only the values that occur
                table = {v: self._items(v << start) for v in set(values)}
            else:
                table = [frozenset()] * (1 << width)
                for v in range(1, 1 << width):
                    low = v & -v
                    table[v] = table[v ^ low] | frozenset(self.classes[start + low.bit_length() - 1])
            parts.append([table[v] for v in values])
        if len(parts) < 2:
            return parts[0] if parts else [frozenset()] * len(masks)
        if len(parts) == 2:
            return [a | b for a, b in zip(*parts, strict=True)]
        return [frozenset.union(*sets) for sets in zip(*parts, strict=True)]

    def fringes(self, fringe: str = "standard", limit: int | None = 10**7):
        """Every state with its inner and outer fringe, as masks over :attr:`classes`.

        Parameters
        ----------
        fringe : {"standard", "notions"}
            The reading (see the module docstring); under ``standard`` a class of
            several equally informative items is in no fringe.
        limit : int or None
            As in :meth:`states`.

        Returns
        -------
        states, inner, outer : numpy.ndarray of uint64, or lists of int (few states, or above 64 classes)
            Aligned, in the order of :meth:`states`; turn any of them into item sets with
            :meth:`item_sets`. For a quasi-ordinal space, class k is in the outer fringe
            of K iff k is not in K and every class below k is, and in the inner fringe
            iff k is in K and no class above k is: a few word operations per class over
            all states at once.

        Raises
        ------
        TooManyStatesError
            As :meth:`states`.
        KstpError
            On an unknown reading.

        Examples
        --------
        >>> space = KnowledgeSpace.build(["a", "b", "c"], [("a", "b"), ("b", "a")])
        >>> states, inner, outer = space.fringes()
        >>> [(sorted(s), sorted(i), sorted(o)) for s, i, o in zip(*map(space.item_sets, (states, inner, outer)))]
        [([], [], ['c']), (['a', 'b'], [], ['c']), (['c'], ['c'], []), (['a', 'b', 'c'], ['c'], [])]
        >>> [sorted(o) for o in space.item_sets(space.fringes("notions")[2])]
        [['a', 'b', 'c'], ['c'], ['a', 'b'], []]
        """
        eligible = self._eligible(fringe)
        states = self._sorted_masks(limit)
        if isinstance(states, list) and len(self.classes) <= 64 and len(states) * len(eligible) >= _NUMPY_FROM:
            states = np.array(states, dtype=np.uint64)  # vectorised once the work outgrows numpy's call cost
        if isinstance(states, np.ndarray):
            return (states, *self._fringe_masks(states, eligible))
        return states, [self._inner(s, eligible) for s in states], [self._outer(s, eligible) for s in states]

    def _fringe_masks(self, states: np.ndarray, eligible: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Inner and outer fringe masks of numpy states (at most 64 classes), in cache-sized chunks
        of states: per class one AND and one comparison give its bit in every state of the chunk."""
        inner, outer = np.zeros_like(states), np.zeros_like(states)
        # outer: k out and all below in; inner: k in and none above in
        tests = [(outer, np.uint64(self.below[k] | 1 << k), np.uint64(self.below[k]), np.uint64(k)) for k in eligible]
        tests += [(inner, np.uint64(self.above[k] | 1 << k), np.uint64(1 << k), np.uint64(k)) for k in eligible]
        for start in range(0, len(states), _FRINGE_CHUNK):
            chunk, end = states[start:start + _FRINGE_CHUNK], start + _FRINGE_CHUNK
            for target, look, want, k in tests:
                target[start:end] |= np.equal(chunk & look, want).astype(np.uint64) << k
        return inner, outer

    def _outer(self, mask: int, eligible) -> int:
        return sum(1 << k for k in eligible if not mask >> k & 1 and mask & self.below[k] == self.below[k])

    def _inner(self, mask: int, eligible) -> int:
        return sum(1 << k for k in eligible if mask >> k & 1 and not mask & self.above[k])

    def is_state(self, state) -> bool:
        """Whether ``state`` is closed under prerequisites (unknown items raise)."""
        try:
            mask = self._mask(state)
        except NotAKnowledgeStateError:
            return False
        return all(mask & self.below[k] == self.below[k] for k in _bits(mask))

    def _require(self, state) -> int:
        mask = self._mask(state)
        broken = {self.classes[k][0]: sorted(self._items(self.below[k] & ~mask))
                  for k in _bits(mask) if mask & self.below[k] != self.below[k]}
        if broken:
            detail = "; ".join(f"{q} lacks {', '.join(p)}" for q, p in sorted(broken.items()))
            raise NotAKnowledgeStateError(f"not a knowledge state (not closed under prerequisites): {detail}", broken)
        return mask

    def _eligible(self, fringe: str) -> list[int]:
        notions = check_fringe(fringe) == "notions"
        return [k for k in range(len(self.classes)) if notions or len(self.classes[k]) == 1]

    def outer_fringe(self, state, fringe: str = "standard") -> list[str]:
        """The items q outside the state K such that K ∪ {q} is a state, sorted.

        These are what a learner in K is ready to learn next. With ``fringe="notions"``:
        the items of the notions (classes of equally informative items) that can be added
        as a whole, the outer fringe of K in the discriminative reduction.

        Raises
        ------
        NotAKnowledgeStateError
            When ``state`` is not a state; the message names what breaks closure.
        UnknownIdError
            When an item is not in the space.
        KstpError
            On an unknown reading.

        References
        ----------
        Doignon & Falmagne 1999, *Knowledge Spaces*, Def. 4.1.6; Steiner & Hochweber 2026, Eq. 2.
        """
        eligible = self._eligible(fringe)
        return sorted(self._items(self._outer(self._require(state), eligible)))

    def inner_fringe(self, state, fringe: str = "standard") -> list[str]:
        """The items q of the state K such that K \\ {q} is a state, sorted.

        These are what was learned last. With ``fringe="notions"``: the items of the
        notions that can be removed as a whole (the inner fringe in the discriminative
        reduction). Raises as :meth:`outer_fringe`.
        """
        eligible = self._eligible(fringe)
        return sorted(self._items(self._inner(self._require(state), eligible)))

    def sample(self, n: int, seed: int, steps: int | None = None,
               progress: Callable[[int, int], None] | None = None) -> list[frozenset[str]]:
        """``n`` states drawn approximately uniformly, reproducibly from ``seed``.

        Each draw runs a lazy Glauber chain on the states from the empty state: ``steps``
        times (default ``20 * classes * (1 + log2(classes))``) pick a class uniformly and
        toggle it when the result is still a state (add: all its prerequisites are in;
        remove: none of its dependants is in). The chain is symmetric and connects all
        states, so its stationary distribution is uniform over the space; a finite run
        is close to it, not exact. Memory: the ``n`` states and the random numbers of
        one chunk of steps, whatever the size of the space. ``progress(done, n)`` is
        called after each draw.
        """
        rng = np.random.default_rng(seed)
        m = len(self.classes)
        if m == 0:
            return [frozenset()] * n
        steps = int(20 * m * (1 + np.log2(m))) if steps is None else steps
        out = []
        above, below, bits = self.above, self.below, [1 << k for k in range(m)]
        for _ in range(n):
            mask, inside = 0, [False] * m  # inside[k]: bit k of mask, read without shifting an m-bit int
            for start in range(0, steps, _SAMPLE_CHUNK):
                size = min(_SAMPLE_CHUNK, steps - start)
                picks = rng.integers(0, m, size=size)
                coins = rng.random(size) < 0.5  # lazy: stay put half the time (aperiodic)
                for k in picks[~coins].tolist():
                    if inside[k]:
                        if not mask & above[k]:
                            mask ^= bits[k]
                            inside[k] = False
                    elif mask & below[k] == below[k]:
                        mask |= bits[k]
                        inside[k] = True
            out.append(self._items(mask))
            if progress is not None:
                progress(len(out), n)
        return out


def _bits(mask: int):
    """Positions of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _big(number: int) -> str:
    """A count for a message: with thousands separators, or in scientific form past 10^15."""
    return f"{number:,}" if number < 10**15 else f"{float(number):.3g}" if number < 10**300 else \
        f"about 10^{len(str(number)) - 1}"
