"""The question page's split of prerequisites and dependants (:class:`kstp.explore.questions.Neighbours`), held to
its definition written out pair by pair: a strict neighbour is direct when no other strict neighbour lies strictly
between it and the question."""

from __future__ import annotations

import random

import pytest

from kstp.explore.questions import Neighbours


def _by_definition(pre: dict[str, set[str]], question: str, below: bool) -> tuple[list, list, list]:
    def before(a: str, b: str) -> bool:  # a is a prerequisite of b
        return a in pre.get(b, set())

    def strictly(a: str, b: str) -> bool:
        return a != b and before(a, b) and not before(b, a)

    everyone = set(pre).union(*pre.values())
    near = {q for q in everyone if (before(q, question) if below else before(question, q))}
    same = sorted(q for q in near if q != question and before(q, question) and before(question, q))
    strict = {q for q in near if (strictly(q, question) if below else strictly(question, q))}
    indirect = {q for q in strict
                if any((strictly(q, r) if below else strictly(r, q)) for r in strict if r != q)}
    return sorted(strict - indirect), sorted(indirect), same


@pytest.mark.parametrize("seed", range(6))
def test_neighbours_equal_the_pairwise_definition(seed):
    """Random relations of 40 questions (transitive or not, with pairs both ways and a few self-pairs)."""
    rng = random.Random(seed)
    names = [f"q{i:02d}" for i in range(40)]
    pre = {b: {a for a in names if rng.random() < 0.15} for b in names if rng.random() < 0.9}
    neighbours = Neighbours(pre)
    for question in names + ["absent"]:
        for below in (True, False):
            assert neighbours.split(question, below) == _by_definition(pre, question, below), (seed, question)


def test_neighbours_by_hand():
    """a before b before c, a before c; c and d prerequisites of each other; e alone with itself."""
    neighbours = Neighbours({"b": {"a"}, "c": {"a", "b", "d"}, "d": {"c"}, "e": {"e"}})
    assert neighbours.split("c") == (["b"], ["a"], ["d"])
    assert neighbours.split("a", below=False) == (["b"], ["c"], [])
    assert neighbours.split("b", below=False) == (["c"], [], [])
    assert neighbours.split("e") == neighbours.split("e", below=False) == ([], [], [])
