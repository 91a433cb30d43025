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
the work is at most (number of classes) x (number of states) word operations,
vectorised with numpy over 64-bit masks (up to 64 classes; above that, Python
integers). Assumes nothing about the relation beyond its items: cycles are the
equivalence classes, not an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from kstp.platform.errors import KstpError, NotAKnowledgeStateError, UnknownIdError

__all__ = ["KnowledgeSpace", "TooManyStatesError"]


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
        known = set(items)
        graph = nx.DiGraph()
        graph.add_nodes_from(items)
        for p, q in prerequisites:
            for end in (p, q):
                if end not in known:
                    raise UnknownIdError(f"prerequisite pair ({p!r}, {q!r}) names {end!r}, which is not an item")
            graph.add_edge(p, q)
        condensed = nx.condensation(graph)
        order = list(nx.lexicographical_topological_sort(
            condensed, key=lambda c: min(condensed.nodes[c]["members"])))
        position = {c: k for k, c in enumerate(order)}
        classes = tuple(tuple(sorted(condensed.nodes[c]["members"])) for c in order)
        below = []
        for c in order:
            mask = 0
            for a in nx.ancestors(condensed, c):
                mask |= 1 << position[a]
            below.append(mask)
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
        wide = n > 64
        states: np.ndarray | list[int] = [0] if wide else np.zeros(1, dtype=np.uint64)
        for k in range(n):
            need = self.below[k]
            if wide:
                grown = [s | 1 << k for s in states if s & need == need]
            else:
                need64 = np.uint64(need)
                grown = states[(states & need64) == need64] | np.uint64(1 << k)
            # Checked before the two parts are joined, so a refused space never doubles in memory.
            if limit is not None and len(states) + len(grown) > limit:
                raise TooManyStatesError(
                    f"the space has more than {limit:,} states (already after {k + 1} of {n} item classes), "
                    "too many to list or count here; draw a sample instead (kstp kst space --sample N)")
            states = states + grown if wide else np.concatenate([states, grown])
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

        Counting is vectorised; listing builds one frozenset per state (about 10 µs
        each), so 10^6 states take seconds to list but milliseconds to count.

        Raises
        ------
        TooManyStatesError
            When there are more than ``limit`` states.
        """
        masks = self._masks(limit)
        ordered = sorted((int(m) for m in masks), key=lambda m: (m.bit_count(), m))
        return [self._items(m) for m in ordered]

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

