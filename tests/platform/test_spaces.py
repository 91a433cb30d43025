"""Knowledge spaces: hand-counted structures, a brute-force reference, fringes, sampling."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import networkx as nx
import pytest
from scipy import stats

from kstp.platform.errors import NotAKnowledgeStateError, UnknownIdError
from kstp.platform.spaces import KnowledgeSpace, TooManyStatesError

CHAIN = (["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("c", "d")])
ANTICHAIN = (["a", "b", "c", "d"], [])
DIAMOND = (["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
# a and b are mutual prerequisites (equally informative); both come before c; d is free.
QUASI = (["a", "b", "c", "d"], [("a", "b"), ("b", "a"), ("b", "c")])


@pytest.mark.parametrize("structure, count", [(CHAIN, 5), (ANTICHAIN, 16), (DIAMOND, 6), (QUASI, 6)])
def test_state_counts_by_hand(structure, count):
    space = KnowledgeSpace.build(*structure)
    assert space.count() == count == len(space.states())


def test_quasi_order_states_and_classes():
    space = KnowledgeSpace.build(*QUASI)
    assert space.classes == (("a", "b"), ("c",), ("d",))
    assert [sorted(s) for s in space.states()] == [[], ["a", "b"], ["d"], ["a", "b", "c"], ["a", "b", "d"],
                                                   ["a", "b", "c", "d"]]
    with pytest.raises(NotAKnowledgeStateError, match="equally informative items must come together: a, b"):
        space.outer_fringe({"a"})


def test_fringes_by_hand():
    chain = KnowledgeSpace.build(*CHAIN)
    assert (chain.outer_fringe({"a", "b"}), chain.inner_fringe({"a", "b"})) == (["c"], ["b"])
    assert (chain.outer_fringe(set()), chain.inner_fringe(set())) == (["a"], [])
    assert (chain.outer_fringe({"a", "b", "c", "d"}), chain.inner_fringe({"a", "b", "c", "d"})) == ([], ["d"])
    quasi = KnowledgeSpace.build(*QUASI)
    assert (quasi.outer_fringe(set()), quasi.inner_fringe({"a", "b", "c"})) == (["a", "b", "d"], ["c"])
    antichain = KnowledgeSpace.build(*ANTICHAIN)
    assert antichain.inner_fringe({"a", "c"}) == ["a", "c"]


def test_non_state_and_unknown_item_are_refused():
    diamond = KnowledgeSpace.build(*DIAMOND)
    with pytest.raises(NotAKnowledgeStateError, match="d lacks b, c") as info:
        diamond.inner_fringe({"a", "d"})
    assert info.value.violations == {"d": ["b", "c"]}
    assert not diamond.is_state({"b"}) and diamond.is_state({"a", "c"})
    with pytest.raises(UnknownIdError, match="'z' not an item"):
        diamond.outer_fringe({"z"})
    with pytest.raises(UnknownIdError, match="names 'x', which is not an item"):
        KnowledgeSpace.build(["a"], [("a", "x")])


def brute_force(items, pairs):
    closure = nx.transitive_closure(nx.DiGraph(pairs)) if pairs else nx.DiGraph()
    return {frozenset(s) for n in range(len(items) + 1) for s in combinations(items, n)
            if all(p in s for q in s if q in closure for p in closure.predecessors(q))}


@pytest.mark.parametrize(("seed", "n", "p"), [*((s, 11, 0.08) for s in range(5)), (5, 14, 0.01), (6, 14, 0.02)])
def test_states_equal_brute_force_on_random_relations(seed, n, p):
    # 14 sparse items: past 2,048 states (numpy masks) and two 8-class slices of item sets
    rng = random.Random(seed)
    items = [f"i{k}" for k in range(n)]
    pairs = [(a, b) for a in items for b in items if a != b and rng.random() < p]  # cycles allowed
    space = KnowledgeSpace.build(items, pairs)
    assert set(space.states()) == brute_force(items, pairs)


def test_large_spaces_enumerate_or_refuse():
    antichain = KnowledgeSpace.build([f"i{k}" for k in range(20)], [])
    assert antichain.count() == 2**20
    with pytest.raises(TooManyStatesError, match="more than 1,000 states"):
        antichain.states(limit=1000)
    wide = KnowledgeSpace.build([f"i{k}" for k in range(70)], [(f"i{k}", f"i{k + 1}") for k in range(69)])
    assert wide.count() == 71  # more than 64 classes: the Python-integer path
    items = [f"i{k:02d}" for k in range(70)]
    assert wide.states()[:3] == [frozenset(), frozenset({"i0"}), frozenset({"i0", "i1"})]
    two_free = KnowledgeSpace.build(items, [(items[k], items[k + 1]) for k in range(67)])
    listed = two_free.states()
    assert len(listed) == 69 * 4 and set(listed) == {
        frozenset(items[:k]) | extra for k in range(69) for extra in
        (frozenset(), frozenset({"i68"}), frozenset({"i69"}), frozenset({"i68", "i69"}))}


def test_sample_is_reproducible_valid_and_near_uniform():
    diamond = KnowledgeSpace.build(*DIAMOND)
    draws = diamond.sample(3000, seed=5)
    assert draws[:50] == diamond.sample(50, seed=5)
    assert all(diamond.is_state(s) for s in draws)
    counts = Counter(draws)
    assert set(counts) == set(diamond.states())
    assert stats.chisquare(list(counts.values())).pvalue > 0.001
