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
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from kstp.platform.errors import KstpError, NotAKnowledgeStateError, UnknownIdError

__all__ = ["KnowledgeSpace", "TooManyStatesError"]

_NUMPY_FROM = 2048  # states from which enumeration switches to numpy masks
_SLICE = 8  # classes per lookup table when turning masks into item sets (2^8 entries each)


class TooManyStatesError(KstpError):
    """The space has more states than the caller allowed to enumerate; sample instead."""


@dataclass(frozen=True)
class KnowledgeSpace:
    """The quasi-ordinal knowledge space of ``items`` under ``prerequisites``.

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
    """

    items: tuple[str, ...]
    classes: tuple[tuple[str, ...], ...]  # equally informative items, in a topological order
    below: tuple[int, ...]  # per class, the bit mask of its direct and indirect prerequisite classes

    @classmethod
    def build(cls, items, prerequisites) -> KnowledgeSpace:
        items = tuple(dict.fromkeys(items))
        index = {item: i for i, item in enumerate(items)}
        edges = set()
        for p, q in prerequisites:
            for end in (p, q):
                if end not in index:
                    raise UnknownIdError(f"prerequisite pair ({p!r}, {q!r}) names {end!r}, which is not an item")
            if p != q:
                edges.add((index[p], index[q]))
        members, direct, order = _condense(items, edges)
        position = {c: k for k, c in enumerate(order)}
        below: list[int] = []
        for c in order:  # prerequisites come earlier in the order, so their masks are final
            mask = 0
            for d in direct[c]:
                mask |= below[position[d]] | 1 << position[d]
            below.append(mask)
        classes = tuple(tuple(sorted(items[i] for i in members[c])) for c in order)
        return cls(items, classes, tuple(below))

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
    def _masks(self, limit: int | None) -> np.ndarray | list[int]:
        n = len(self.classes)
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
                    "too many to list or count here; draw a sample instead (kstp kst space --sample N)")
            states = states + grown if isinstance(states, list) else np.concatenate([states, grown])
        return states

    def count(self, limit: int | None = 10**8) -> int:
        """Number of knowledge states (the empty set and Q included).

        Raises
        ------
        TooManyStatesError
            When the count passes ``limit`` (counting here enumerates).
        """
        return len(self._masks(limit))

    def states(self, limit: int | None = 10**7) -> list[frozenset[str]]:
        """Every knowledge state, smallest first (then by its mask over the class order).

        Counting is vectorised; listing builds one frozenset per state from lookup
        tables over 8-class slices of the masks, so it costs far more than counting
        (10^6 states: seconds to list, milliseconds to count).

        Raises
        ------
        TooManyStatesError
            When there are more than ``limit`` states.
        """
        masks = self._masks(limit)
        if isinstance(masks, np.ndarray):
            masks = masks[np.lexsort((masks, np.bitwise_count(masks)))]
        else:
            masks = sorted(masks, key=lambda m: (m.bit_count(), m))
        return self._item_sets(masks)

    def _item_sets(self, masks: np.ndarray | list[int]) -> list[frozenset[str]]:
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

    def is_state(self, state) -> bool:
        """Whether ``state`` is closed under prerequisites (unknown items raise)."""
        try:
            mask = self._mask(state)
        except NotAKnowledgeStateError:
            return False
        return all(mask & self.below[k] == self.below[k] for k in range(len(self.classes)) if mask >> k & 1)

    def _require(self, state) -> int:
        mask = self._mask(state)
        broken = {self.classes[k][0]: sorted(self._items(self.below[k] & ~mask))
                  for k in range(len(self.classes)) if mask >> k & 1 and mask & self.below[k] != self.below[k]}
        if broken:
            detail = "; ".join(f"{q} lacks {', '.join(p)}" for q, p in sorted(broken.items()))
            raise NotAKnowledgeStateError(f"not a knowledge state (not closed under prerequisites): {detail}", broken)
        return mask

    def outer_fringe(self, state) -> list[str]:
        """Items outside the state that can be learned next (their class's prerequisites are in it).

        Raises
        ------
        NotAKnowledgeStateError
            When ``state`` is not a state; the message names what breaks closure.
        """
        mask = self._require(state)
        return sorted(i for k, c in enumerate(self.classes)
                      if not mask >> k & 1 and mask & self.below[k] == self.below[k] for i in c)

    def inner_fringe(self, state) -> list[str]:
        """Items of the state that can be removed with their class, leaving a state.

        Raises
        ------
        NotAKnowledgeStateError
            When ``state`` is not a state.
        """
        mask = self._require(state)
        return sorted(i for k, c in enumerate(self.classes) if mask >> k & 1
                      and not any(mask >> j & 1 and self.below[j] >> k & 1 for j in range(len(self.classes)))
                      for i in c)

    def sample(self, n: int, seed: int, steps: int | None = None) -> list[frozenset[str]]:
        """``n`` states drawn approximately uniformly, reproducibly from ``seed``.

        Each draw runs a lazy Glauber chain on the states from the empty state: ``steps``
        times (default ``20 * classes * (1 + log2(classes))``) pick a class uniformly and
        toggle it when the result is still a state (add: all its prerequisites are in;
        remove: none of its dependants is in). The chain is symmetric and connects all
        states, so its stationary distribution is uniform over the space; a finite run
        is close to it, not exact.
        """
        rng = np.random.default_rng(seed)
        m = len(self.classes)
        if m == 0:
            return [frozenset()] * n
        above = [sum(1 << j for j in range(m) if self.below[j] >> k & 1) for k in range(m)]
        steps = int(20 * m * (1 + np.log2(m))) if steps is None else steps
        out = []
        for _ in range(n):
            mask = 0
            picks = rng.integers(0, m, size=steps)
            coins = rng.random(steps) < 0.5
            for k, coin in zip(picks.tolist(), coins.tolist(), strict=True):
                if coin:
                    continue  # lazy: stay put half the time (aperiodic)
                if mask >> k & 1:
                    if not mask & above[k]:
                        mask &= ~(1 << k)
                elif mask & self.below[k] == self.below[k]:
                    mask |= 1 << k
            out.append(self._items(mask))
        return out


def _condense(items: tuple[str, ...], edges: set[tuple[int, int]]):
    """Classes of mutual prerequisites (lists of item indices), each class's direct
    prerequisite classes, and a topological order of the classes."""
    members = [[i] for i in range(len(items))]
    while True:
        class_of = {i: c for c, group in enumerate(members) for i in group}
        direct: list[set[int]] = [set() for _ in members]
        for p, q in edges:
            if class_of[p] != class_of[q]:
                direct[class_of[q]].add(class_of[p])
        order = _topological_order([min(items[i] for i in group) for group in members], direct)
        if len(order) == len(members):
            return members, direct, order
        # A cycle stopped the order: merge the strongly connected items and order again.
        import networkx as nx  # here: rare, and `kstp --help` must not pay for it

        graph = nx.DiGraph(list(edges))
        graph.add_nodes_from(range(len(items)))
        members = [sorted(group) for group in nx.strongly_connected_components(graph)]


def _topological_order(names: list[str], direct: list[set[int]]) -> list[int]:
    """Classes in a topological order of ``direct`` (class -> its prerequisite classes),
    the smallest name first among those ready, so the order does not depend on input order."""
    waiting = [len(d) for d in direct]
    dependants: list[list[int]] = [[] for _ in direct]
    for c, prerequisites in enumerate(direct):
        for d in prerequisites:
            dependants[d].append(c)
    ready = [(names[c], c) for c, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, c = heapq.heappop(ready)
        order.append(c)
        for e in dependants[c]:
            waiting[e] -= 1
            if not waiting[e]:
                heapq.heappush(ready, (names[e], e))
    return order
