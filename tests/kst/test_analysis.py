"""Structure analysis (kstp.kst.analysis) against brute force from the definitions and against R.

Brute force: every property, fringe, atom, base, covering pair, learning path and gradation
recomputed on frozensets straight from its definition (Doignon & Falmagne 1999; Falmagne &
Doignon 2011), on random families of up to six items. R: tests/data/kst/kst_reference.json,
written by tests/data/kst/kst_reference.R with pks 0.6-0 (``is.forward.graded``,
``is.backward.graded``, ``is.downgradable``, ``getKFringe``), kst 0.5-4 (``katoms``, ``kbase``,
``as.relation``, ``lpath``) and kstMatrix 2.3-4 (``kmsurmiserelation``, ``kmlearningpaths``,
``kmgradations``) on the structures pks ships (see tests/data/kst/PROVENANCE.md).
"""

from __future__ import annotations

import json
import random
from itertools import combinations, permutations
from pathlib import Path

import numpy as np
import pytest

from kstp.errors import NotAKnowledgeStateError, UnknownIdError
from kstp.kst import paths as kst_paths
from kstp.kst.analysis import Structure, StructureError, span
from kstp.kst.spaces import KnowledgeSpace

REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "data" / "kst" / "kst_reference.json").read_text())
PKS_STRUCTURES = [k for k, v in REFERENCE.items() if isinstance(v, dict) and "states" in v]


# ---- brute force, on frozensets ---------------------------------------------------------------------
def family(structure: Structure) -> list[frozenset[str]]:
    return [frozenset(s) for s in structure.sets(range(len(structure)))]


def closed(states, op) -> bool:
    present = set(states)
    return all(op(a, b) in present for a in states for b in states)


def brute_atoms(states, q):
    holding = [s for s in states if q in s]
    return {s for s in holding if not any(t < s for t in holding)}


def brute_well_graded(states, domain) -> bool:
    """Every pair joined by a path of |K Δ L| one-item steps through states (breadth-first distances)."""
    present = set(states)
    for k in states:
        distance, frontier = {k: 0}, [k]
        while frontier:
            nxt = []
            for s in frontier:
                for q in domain:
                    t = s ^ {q}
                    if t in present and t not in distance:
                        distance[t] = distance[s] + 1
                        nxt.append(t)
            frontier = nxt
        if any(distance.get(m, -1) != len(k ^ m) for m in states):
            return False
    return True


def brute_covers(states):
    return {(a, b) for a in states for b in states if a < b and not any(a < m < b for m in states)}


def brute_chains(states, start, goal, step):
    """Every chain start = K0, K1, ..., goal along pairs accepted by ``step``."""
    if start == goal:
        return [[start]]
    return [[start, *rest] for nxt in states if step(start, nxt) for rest in brute_chains(states, nxt, goal, step)]


def random_family(n: int, rng: random.Random, structure: bool = True) -> tuple[list[str], list[frozenset[str]]]:
    domain = [chr(ord("a") + i) for i in range(n)]
    power = [frozenset(c) for r in range(n + 1) for c in combinations(domain, r)]
    chosen = set(rng.sample(power, rng.randint(1, len(power))))
    if structure:
        chosen |= {frozenset(), frozenset(domain)}
    return domain, sorted(chosen, key=lambda s: (len(s), sorted(s)))


def union_closure(domain, generators):
    states = {frozenset()}
    for g in generators:
        states |= {s | g for s in states}
    return domain, sorted(states | {frozenset(domain)}, key=lambda s: (len(s), sorted(s)))


def build(domain, states) -> Structure:
    return Structure.build(domain, [[int(q in s) for q in domain] for s in states])


FAMILIES = [random_family(n, random.Random(seed)) for n in (3, 4, 5) for seed in range(12)]
SPACES = [union_closure(*random_family(n, random.Random(100 + seed), structure=False)) for n in (4, 5, 6)
          for seed in range(8)]


# ---- brute force ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("domain", "states"), FAMILIES + SPACES)
def test_properties_equal_brute_force(domain, states):
    k = build(domain, states)
    assert k.is_space() == closed(states, frozenset.union)
    assert k.is_closure_space() == closed(states, frozenset.intersection)
    assert k.is_quasi_ordinal() == (k.is_space() and k.is_closure_space())
    assert k.is_well_graded() == brute_well_graded(states, domain)
    present = set(states)
    assert k.forward_graded().tolist() == [all(s | {q} in present for s in states) for q in domain]
    assert k.backward_graded().tolist() == [all(s - {q} in present for s in states) for q in domain]


@pytest.mark.parametrize(("domain", "states"), FAMILIES + SPACES)
def test_fringes_atoms_base_relation_equal_brute_force(domain, states):
    k = build(domain, states)
    present = set(states)
    inner, outer = k.fringes()
    assert [frozenset(np.asarray(domain)[row > 0]) for row in inner] == [
        frozenset(q for q in s if s - {q} in present) for s in states]
    assert [frozenset(np.asarray(domain)[row > 0]) for row in outer] == [
        frozenset(q for q in domain if q not in s and s | {q} in present) for s in states]
    assert {q: {states[r] for r in rows} for q, rows in k.atoms().items()} == {q: brute_atoms(states, q)
                                                                             for q in domain}
    assert k.surmise_relation().tolist() == [[all(p in s for s in states if q in s) for q in domain] for p in domain]
    generators = {s for s in states if s and frozenset().union(*(t for t in states if t < s)) != s}
    assert {states[r] for r in k.base(check=False)} == generators  # kstMatrix's kmbasis, kstpy's basis
    if closed(states, frozenset.union):
        assert {states[r] for r in k.base()} == generators
    else:
        with pytest.raises(StructureError, match="not closed under union"):
            k.base()


@pytest.mark.parametrize(("domain", "states"), FAMILIES + SPACES)
def test_covers_and_learning_paths_equal_brute_force(domain, states):
    k = build(domain, states)
    lower, upper = kst_paths.covers(k)
    covers = brute_covers(states)
    assert {(states[a], states[b]) for a, b in zip(lower, upper, strict=True)} == covers
    chains = brute_chains(states, frozenset(), frozenset(domain), lambda a, b: (a, b) in covers)
    paths = kst_paths.learning_paths(k)
    assert paths.count == len(chains)
    assert sorted(tuple(states[r] for r in p) for p in paths) == sorted(map(tuple, chains))


@pytest.mark.parametrize(("domain", "states"), FAMILIES + SPACES)
def test_gradations_equal_brute_force(domain, states):
    k = build(domain, states)
    one_step = lambda a, b: a < b and len(b - a) == 1  # noqa: E731
    rng = random.Random(len(states))
    pairs = [(a, b) for a in states for b in states if a <= b]
    for a, b in rng.sample(pairs, min(6, len(pairs))):
        expected = brute_chains([s for s in states if a <= s <= b], a, b, one_step)
        got = kst_paths.gradations(k, states.index(a), states.index(b))
        assert got.count == len(expected)
        assert sorted(tuple(states[r] for r in p) for p in got) == sorted(map(tuple, expected))


def test_learning_paths_of_an_antichain_are_the_permutations():
    domain = list("abcde")
    states = [frozenset(c) for r in range(6) for c in combinations(domain, r)]
    paths = kst_paths.learning_paths(build(domain, states))
    assert paths.count == 120
    assert sorted(tuple(build(domain, states).steps(p)[i][0] for i in range(5)) for p in paths) == sorted(
        permutations(domain))
    assert len(paths.first(7)) == 7


def test_more_than_64_items_use_byte_keys():
    # A chain of 70 items: states are its 71 prefixes; one learning path; every fringe one item.
    domain = [f"q{i:02d}" for i in range(70)]
    states = np.tril(np.ones((71, 70), np.uint8), -1)
    k = Structure.build(domain, states)
    inner, outer = k.fringes()
    assert inner.sum(axis=1).tolist() == [0] + [1] * 70 and outer.sum(axis=1).tolist() == [1] * 70 + [0]
    assert k.is_quasi_ordinal() and k.is_well_graded() and kst_paths.learning_paths(k).count == 1
    relation = k.surmise_relation()
    assert relation.tolist() == np.triu(np.ones((70, 70), bool)).tolist()  # earlier items before later ones
    assert k.row(domain[:3]) == 3


def test_build_refuses_bad_input():
    with pytest.raises(StructureError, match="states 1 and 3 are the same set"):
        Structure.build("ab", [[0, 1], [1, 1], [0, 1]])
    with pytest.raises(StructureError, match="state 2 holds 2 for item 'b'"):
        Structure.build("ab", [[0, 0], [1, 2]])
    with pytest.raises(StructureError, match="3 item columns for 2 items"):
        Structure.build("ab", [[0, 0, 0]])
    k = Structure.build("ab", [[0, 0], [1, 0], [1, 1]])
    with pytest.raises(NotAKnowledgeStateError, match=r"\{b\} is not a state"):
        k.row(["b"])
    with pytest.raises(UnknownIdError, match="'z' not an item"):
        k.row(["z"])
    with pytest.raises(StructureError, match=r"\{a, b\} is not a subset of \{a\}"):
        kst_paths.gradations(k, 2, 1)
    with pytest.raises(StructureError, match="the empty set is not a state"):
        kst_paths.learning_paths(Structure.build("ab", [[1, 0], [1, 1]]))


# ---- held equal to R's pks, kst and kstMatrix --------------------------------------------------------
def _r_structure(name) -> Structure:
    ref = REFERENCE[name]
    return Structure.build(ref["items"], [[int(c) for c in p] for p in ref["states"]])


def _patterns(k: Structure, rows) -> list[str]:
    return sorted("".join(map(str, k.states[r])) for r in rows)


@pytest.mark.parametrize("name", PKS_STRUCTURES)
def test_structure_analysis_equals_r(name):
    ref, k = REFERENCE[name], _r_structure(name)
    assert k.forward_graded().tolist() == ref["forward_graded"]  # pks
    assert k.backward_graded().tolist() == ref["backward_graded"]  # pks
    inner, outer = k.fringes()
    assert ["".join(map(str, r)) for r in inner] == ref["inner_fringe"]  # pks getKFringe
    assert ["".join(map(str, r)) for r in outer] == ref["outer_fringe"]
    assert k.is_space() == ref["is_space"]  # kst
    atoms = {q: _patterns(k, rows) for q, rows in k.atoms().items()}
    assert atoms == {q: sorted(v if isinstance(v, list) else [v]) for q, v in ref["atoms"].items()}  # kst katoms
    if ref["is_space"]:
        assert _patterns(k, k.base()) == sorted(ref["base"])  # kst kbase
    relation = k.surmise_relation().astype(int).tolist()
    assert relation == ref["relation"] == ref["relation_kstMatrix"]  # kst as.relation, kstMatrix
    # pks's is.downgradable: sizes 0..n all occur and only the empty state has an empty inner fringe
    sizes = k.states.sum(axis=1)
    downgradable = set(sizes.tolist()) == set(range(len(k.items) + 1)) and int((inner.sum(axis=1) == 0).sum()) == 1
    assert downgradable == ref["downgradable"]
    if "learning_paths_kstMatrix" in ref:
        assert kst_paths.learning_paths(k).count == ref["learning_paths_kstMatrix"] == ref["learning_paths_kst"]


def test_gradations_equal_kstmatrix():
    k = _r_structure("DoignonFalmagne7")
    got = kst_paths.gradations(k, k.row(["a"]), k.row(list("abcde")))
    expected = REFERENCE["DoignonFalmagne7_gradations_a_to_Q"]
    assert sorted(["".join(map(str, k.states[r])) for r in p] for p in got) == sorted(expected)


@pytest.mark.parametrize("seed", range(6))
def test_span_of_a_base_is_every_union_of_its_elements(seed):
    domain, generators = random_family(5, random.Random(200 + seed), structure=False)
    generators = generators[:8]
    unions = {frozenset().union(*chosen) for r in range(len(generators) + 1) for chosen in combinations(generators, r)}
    got = span([[int(q in g) for q in domain] for g in generators], limit=None)
    assert [frozenset(np.asarray(domain)[row > 0]) for row in got] == sorted(
        unions, key=lambda s: (len(s), [q not in s for q in domain]))
    with pytest.raises(StructureError, match="more than 2 states"):
        span(np.eye(3), limit=2)


@pytest.mark.parametrize("seed", range(5))
def test_from_space_equals_the_same_states_analysed_from_scratch(seed):
    rng = random.Random(300 + seed)
    items = [f"q{i}" for i in range(7)]
    pairs = [(a, b) for a in items for b in items if a != b and rng.random() < 0.15]  # cycles allowed
    space = KnowledgeSpace.build(items, pairs)
    fast = Structure.from_space(space)
    slow = Structure.build(items, fast.states)
    assert fast.is_space() and fast.is_closure_space() and slow.is_quasi_ordinal()
    assert {q: fast.sets(r) for q, r in fast.atoms().items()} == {q: slow.sets(r) for q, r in slow.atoms().items()}
    assert fast.is_well_graded() == slow.is_well_graded() == all(len(c) == 1 for c in space.classes)
    assert kst_paths.learning_paths(fast).count == kst_paths.learning_paths(slow).count
    assert fast.notions() == sorted(map(list, space.classes), key=lambda c: items.index(c[0]))


@pytest.mark.parametrize("seed", range(4))
def test_covers_of_a_space_with_equally_informative_items_equal_brute_force(seed):
    rng = random.Random(400 + seed)
    items = [f"q{i}" for i in range(6)]
    pairs = [(a, b) for a in items for b in items if a != b and rng.random() < 0.2]
    fast = Structure.from_space(KnowledgeSpace.build(items, pairs))
    states = family(fast)
    lower, upper = kst_paths.covers(fast)
    assert {(states[a], states[b]) for a, b in zip(lower, upper, strict=True)} == brute_covers(states)


@pytest.mark.parametrize(("domain", "states"), FAMILIES[::3] + SPACES[::3])
def test_matrix_products_equal_brute_force_too(domain, states, monkeypatch):
    """The families above are small enough for the integer-mask path; the matrix-product path (used from
    analysis._SMALL states on) is held to the same brute force here."""
    from kstp.kst import analysis

    monkeypatch.setattr(analysis, "_SMALL", 0)
    k = build(domain, states)
    assert k.is_space() == closed(states, frozenset.union)
    assert k.is_closure_space() == closed(states, frozenset.intersection)
    assert {q: {states[r] for r in rows} for q, rows in k.atoms().items()} == {q: brute_atoms(states, q)
                                                                             for q in domain}
    expected = {s for s in states if s and frozenset().union(*(t for t in states if t < s)) != s}
    assert {states[r] for r in k.base(check=False)} == expected
