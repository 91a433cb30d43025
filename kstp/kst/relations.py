"""A prerequisite relation as bit masks: the ground work of :mod:`kstp.kst.spaces`.

Items are indices; a prerequisite pair (p, q) says p is a prerequisite of q. The functions
here turn pairs into index arrays, order the classes of mutual prerequisites
topologically (ties by name, so the order does not depend on input order), and compute
per class the mask of every class below it (the transitive closure), of those directly
below it (the covering relation, the Hasse diagram's edges) and its level (the longest
chain below it). Masks are Python integers: bit k is class k of the order.

References
----------
Doignon & Falmagne 1999, *Knowledge Spaces*, ch. 3 (surmise relations, quasi-orders).
"""

from __future__ import annotations

import heapq
from itertools import chain

import numpy as np

from kstp.errors import UnknownIdError

__all__ = ["pair_indices", "unique_sorted", "topological_order", "closure", "reflect", "NUMPY_PAIRS"]

#: Prerequisite pairs from which the closure runs on packed numpy rows rather than integers.
NUMPY_PAIRS = 20_000


def pair_indices(items: tuple[str, ...], prerequisites) -> tuple[np.ndarray, np.ndarray]:
    """Item indices of the prerequisite pairs (p, q), self pairs dropped; unknown items raise."""
    pairs = prerequisites if isinstance(prerequisites, list) else list(prerequisites)
    index = {item: i for i, item in enumerate(items)}
    try:
        ends = np.fromiter(map(index.__getitem__, chain.from_iterable(pairs)), np.int64, 2 * len(pairs))
    except (KeyError, ValueError):  # an unknown item, or a pair that is not two items: find the first
        for pair in pairs:
            p, q = pair
            for end in (p, q):
                if end not in index:
                    raise UnknownIdError(f"prerequisite pair ({p!r}, {q!r}) names {end!r}, which is not an item") \
                        from None
        raise
    ends = ends.reshape(-1, 2)
    ends = ends[ends[:, 0] != ends[:, 1]]
    return ends[:, 0].astype(np.int64), ends[:, 1].astype(np.int64)


def unique_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a sort and a comparison: faster than np.unique's hash here)."""
    values = np.sort(values)
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if len(values) else values


def topological_order(names: list[str], before: np.ndarray, after: np.ndarray) -> list[int]:
    """Classes in a topological order of the pairs (before[i] -> after[i]), the smallest name
    first among those ready, so the order does not depend on input order."""
    waiting = np.bincount(after, minlength=len(names)).tolist()
    dependants: list[list[int]] = [[] for _ in names]
    for b, a in zip(before.tolist(), after.tolist(), strict=True):
        dependants[b].append(a)
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


def closure(m: int, before: np.ndarray, after: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """For classes 0..m-1 in a topological order of the pairs (before < after): per class the
    mask of all classes below it, of those directly below it, and its level. Python integers
    while the relation is small; packed 64-bit numpy rows, one vectorised step per class, once
    it is large (Eq. 1 on a real map: a million pairs)."""
    sort = np.argsort(after, kind="stable")
    prerequisites, start = before[sort], np.searchsorted(after[sort], np.arange(m + 1))
    if len(before) <= NUMPY_PAIRS:
        return _closure_small(m, prerequisites.tolist(), start.tolist())
    rows = np.zeros((m, (m + 63) // 64), np.uint64)
    level = np.zeros(m, np.int64)
    one = np.uint64(1)
    below, cover = [], []
    for k in range(m):
        direct = prerequisites[start[k]:start[k + 1]]
        if len(direct):
            implied = np.bitwise_or.reduce(rows[direct], axis=0)
            own = np.zeros_like(implied)
            np.bitwise_or.at(own, direct >> 6, one << (direct & 63).astype(np.uint64))
            rows[k] = implied | own
            cover.append(_as_int(own & ~implied))
            level[k] = level[direct].max() + 1
        else:
            cover.append(0)
        below.append(_as_int(rows[k]))
    return below, cover, level.tolist()


def _closure_small(m: int, prerequisites: list[int], start: list[int]) -> tuple[list[int], list[int], list[int]]:
    below, cover, level = [], [], []
    for k in range(m):
        implied = own = depth = 0
        for d in prerequisites[start[k]:start[k + 1]]:
            implied |= below[d]
            own |= 1 << d
            depth = max(depth, level[d] + 1)
        below.append(implied | own)
        cover.append(own & ~implied)
        level.append(depth)
    return below, cover, level


def _as_int(row: np.ndarray) -> int:
    return int.from_bytes(row.astype("<u8").tobytes(), "little")


def reflect(mask: int, m: int) -> int:
    """The mask with bit k moved to bit m - 1 - k."""
    return int(format(mask, f"0{m}b")[::-1], 2) if m else 0
