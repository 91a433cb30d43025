"""Knowledge spaces: hand-counted structures, a brute-force reference, fringes, sampling."""

from __future__ import annotations

import random
import tracemalloc
from collections import Counter
from itertools import combinations
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
from scipy import stats

from kstp.errors import KstpError, NotAKnowledgeStateError, UnknownIdError
from kstp.kst.spaces import KnowledgeSpace, TooManyStatesError

CHAIN = (["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("c", "d")])
ANTICHAIN = (["a", "b", "c", "d"], [])
DIAMOND = (["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
# a and b are mutual prerequisites (equally informative); both come before c; d is free.
PKS = Path(__file__).resolve().parents[1] / "fixtures" / "pks_fringes"
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
    antichain = KnowledgeSpace.build(*ANTICHAIN)
    assert antichain.inner_fringe({"a", "c"}) == ["a", "c"]


# QUASI's states with (inner, outer) fringes, worked out from the definitions by hand.
# standard: q is in the outer fringe of K iff K + {q} is a state: a or b alone never is.
QUASI_STANDARD = {(): ([], ["d"]), ("a", "b"): ([], ["c", "d"]), ("d",): (["d"], []),
                  ("a", "b", "c"): (["c"], ["d"]), ("a", "b", "d"): (["d"], ["c"]),
                  ("a", "b", "c", "d"): (["c", "d"], [])}
# notions: the class {a, b} is added or removed as a whole.
QUASI_NOTIONS = {(): ([], ["a", "b", "d"]), ("a", "b"): (["a", "b"], ["c", "d"]), ("d",): (["d"], ["a", "b"]),
                 ("a", "b", "c"): (["c"], ["d"]), ("a", "b", "d"): (["a", "b", "d"], ["c"]),
                 ("a", "b", "c", "d"): (["c", "d"], [])}


@pytest.mark.parametrize("fringe, expected", [("standard", QUASI_STANDARD), ("notions", QUASI_NOTIONS)])
def test_fringes_with_equally_informative_items_by_hand(fringe, expected):
    space = KnowledgeSpace.build(*QUASI)
    got = {tuple(sorted(s)): (space.inner_fringe(s, fringe), space.outer_fringe(s, fringe)) for s in space.states()}
    assert got == expected
    states, inner, outer = (space.item_sets(m) for m in space.fringes(fringe))
    assert {tuple(sorted(s)): (sorted(i), sorted(o)) for s, i, o in zip(states, inner, outer, strict=True)} == expected
    assert KnowledgeSpace.build(*QUASI).outer_fringe(set()) == ["d"]  # standard is the default


def test_fringe_reading_unknown_is_refused():
    with pytest.raises(KstpError, match="unknown fringe reading 'classes'; use one of standard, notions"):
        KnowledgeSpace.build(*QUASI).outer_fringe(set(), "classes")


def definition_fringes(family, domain):
    """{state: (inner, outer)} straight from Def. 4.1.6 on a family of frozensets."""
    return {s: ({q for q in s if s - {q} in family}, {q for q in domain - s if s | {q} in family}) for s in family}


@pytest.mark.parametrize(("seed", "n", "p"), [(0, 9, 0.1), (1, 11, 0.08), (2, 13, 0.05), (3, 14, 0.02)])
def test_fringes_equal_the_definition_on_random_relations(seed, n, p):
    rng = random.Random(seed)
    items = [f"i{k}" for k in range(n)]
    pairs = [(a, b) for a in items for b in items if a != b and rng.random() < p]  # cycles allowed
    space = KnowledgeSpace.build(items, pairs)
    family = set(space.states())
    want = definition_fringes(family, set(items))
    states, inner, outer = (space.item_sets(m) for m in space.fringes())
    assert {s: (set(i), set(o)) for s, i, o in zip(states, inner, outer, strict=True)} == want
    for s in sorted(family, key=sorted)[:: max(1, len(family) // 20)]:
        assert (set(space.inner_fringe(s)), set(space.outer_fringe(s))) == want[s]
    # notions: the same definition on the discriminative reduction (one point per class)
    reduced = {frozenset(c[0] for c in space.classes if c[0] in s) for s in family}
    by_notion = definition_fringes(reduced, {c[0] for c in space.classes})
    members = {c[0]: set(c) for c in space.classes}
    states, inner, outer = (space.item_sets(m) for m in space.fringes("notions"))
    for s, i, o in zip(states, inner, outer, strict=True):
        low_in, low_out = by_notion[frozenset(c[0] for c in space.classes if c[0] in s)]
        assert (set(i), set(o)) == ({x for c in low_in for x in members[c]}, {x for c in low_out for x in members[c]})


def pks_fringes(dataset):
    """pks 0.6-0's getKFringe on every state (tests/fixtures/pks_fringes/README.md)."""
    rows = pd.read_csv(PKS / f"{dataset}.csv", dtype=str, keep_default_na=False)
    return {frozenset(r.state.split()): (set(r.inner.split()), set(r.outer.split())) for r in rows.itertuples()}


def skill_map_space(data_root, dataset):
    """The items under skills(i) ⊆ skills(j), read from the Q-matrix here (not by kstp's Eq. 1)."""
    qm = pd.read_csv(data_root / "responses" / dataset / "qmatrix.csv", dtype=str).set_index("item_id")
    skills = {item: {s for s in qm.columns if row[s] == "1"} for item, row in qm.iterrows()}
    return KnowledgeSpace.build(list(qm.index), [(a, b) for a in skills for b in skills if a != b
                                                 and skills[a] <= skills[b]])


@pytest.mark.parametrize("dataset, states", [("probability_pks", 58), ("frcsub", 372)])
def test_fringes_equal_pks_on_every_state(data_root, dataset, states):
    space = skill_map_space(data_root, dataset)
    want = pks_fringes(dataset)
    family, inner, outer = (space.item_sets(m) for m in space.fringes())
    got = {s: (set(i), set(o)) for s, i, o in zip(family, inner, outer, strict=True)}
    assert len(got) == len(want) == states and got == want
    assert all((set(space.inner_fringe(s)), set(space.outer_fringe(s))) == want[s] for s in family)
    # the reading of the notions lists whole classes: on the probability space it differs from
    # pks on 42 of the 58 states (issue 13), wherever b105/b106 or b107/b108 is in a fringe
    differ = [s for s in family
              if (set(space.inner_fringe(s, "notions")), set(space.outer_fringe(s, "notions"))) != want[s]]
    pairs = [set(c) for c in space.classes if len(c) > 1]
    assert differ == [s for s in family if any(c <= set(space.inner_fringe(s, "notions"))
                                               | set(space.outer_fringe(s, "notions")) for c in pairs)]
    if dataset == "probability_pks":
        assert len(differ) == 42


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
    expected = brute_force(items, pairs)
    assert set(space.states()) == expected and space.count() == len(expected)


def test_large_spaces_enumerate_or_refuse():
    antichain = KnowledgeSpace.build([f"i{k}" for k in range(20)], [])
    assert antichain.count() == 2**20
    with pytest.raises(TooManyStatesError, match=r"at least 2\^20 = 1,048,576 states .*more than the limit of 1,000"):
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


def test_count_does_not_enumerate_and_huge_spaces_are_refused_before_enumerating():
    # 2^300 states: any enumeration would never end, so passing shows count and refusal do not enumerate
    huge = KnowledgeSpace.build([f"i{k:03d}" for k in range(300)], [])
    assert huge.count() == 2**300 and huge.lower_bound() == (2**300, 300)
    with pytest.raises(TooManyStatesError, match=r"at least 2\^300 = 2.04e\+90 states \(300 item classes none"):
        huge.states(limit=10**6)
    assert huge.count(limit=10**6) == 2**300  # counted exactly: the limit bounds enumeration only
    # a chain of 5 below an antichain of 40: 5 + 2^40 states (hand count), lower bound 2^40
    items = [f"c{k}" for k in range(5)] + [f"f{k:02d}" for k in range(40)]
    tower = KnowledgeSpace.build(items, [(f"c{k}", f"c{k + 1}") for k in range(4)] + [("c4", f"f{k:02d}")
                                                                                   for k in range(40)])
    assert tower.count() == 5 + 2**40 and tower.lower_bound() == (2**40, 40)
    with pytest.raises(TooManyStatesError, match=r"has 1,099,511,627,781 states, more than the limit of "
                                                  r"1,099,511,627,776"):
        tower.states(limit=2**40)  # the lower bound passes, the exact count refuses


def test_count_refuses_a_tangled_large_space_at_once_with_its_lower_bound():
    # every one of 100 items a.. is a prerequisite of every one of 100 items b..: the frontier holds
    # all a's (2^100 patterns); the largest level has 100 items, so at least 2^100 states
    items = [f"a{k:02d}" for k in range(100)] + [f"b{k:02d}" for k in range(100)]
    space = KnowledgeSpace.build(items, [(a, b) for a in items[:100] for b in items[100:]])
    with pytest.raises(TooManyStatesError, match=r"at least 2\^100 = 1.27e\+30 states \(100 item classes"):
        space.count()
    with pytest.raises(TooManyStatesError, match=r"at least 2\^100"):
        space.states(limit=10**7)


def test_sample_of_a_large_space_is_bounded_in_memory():
    # 300 items in 150 two-item chains (3^150 states): sampling never enumerates, and a chain of
    # 300,000 steps draws its random numbers in chunks (all at once: about 6.5 MB of Python objects)
    items = [f"i{k:03d}" for k in range(300)]
    space = KnowledgeSpace.build(items, [(items[k], items[k + 1]) for k in range(0, 300, 2)])
    tracemalloc.start()
    draws = space.sample(1, seed=1, steps=300_000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3 * 2**20 and space.is_state(draws[0]) and len(draws[0]) > 50
    assert draws == space.sample(1, seed=1, steps=300_000)
