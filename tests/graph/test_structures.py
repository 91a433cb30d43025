"""Hand-computed KST structures on the toy curriculum (see tests/conftest.py) and the
probability skill map."""

from __future__ import annotations

from itertools import combinations

import pytest

from kstp.errors import KstpError, NotAKnowledgeStateError, UnknownIdError
from kstp.graph import structures
from tests.conftest import q

# Counted by hand from the toy curriculum: strict needs a proper concept prerequisite.
STRICT = {("q1", "q2"), ("q1", "q3"), ("q1", "q4"), ("q1", "q5"), ("q1", "q6"), ("q2", "q5"), ("q2", "q6"),
          ("q3", "q5"), ("q3", "q6"), ("q4", "q5"), ("q4", "q6"), ("q5", "q6")}
# Reflexive adds pairs through a shared concept: q1 -> q7 (A), q2 -> q4 (B), q3 -> q4 (C).
REFLEXIVE = STRICT | {("q1", "q7"), ("q2", "q4"), ("q3", "q4")}


def pairs(frame):
    rows = frame[["fromId", "toId"]].itertuples(index=False)
    return {(a.removeprefix("toy:"), b.removeprefix("toy:")) for a, b in rows}


@pytest.mark.parametrize("rule, expected", [("strict", STRICT), ("reflexive", REFLEXIVE)])
def test_derive_question_prerequisites_hand_counted(toy, rule, expected):
    report = structures.derive_question_prerequisites(toy, "toy", rule)
    assert (report.edges, report.questions, report.questions_with_concepts) == (len(expected), 8, 7)
    assert report.mean_per_question == len(expected) / 8
    assert pairs(toy.frame("question_prerequisite_edges", {"dataset": "toy"})) == expected


def test_derive_rule_switch_replaces_edges_and_rerun_is_stable(toy):
    structures.derive_question_prerequisites(toy, "toy", "reflexive")
    structures.derive_question_prerequisites(toy, "toy", "strict")
    edges = toy.frame("question_prerequisite_edges", {"dataset": "toy"})
    assert pairs(edges) == STRICT and set(edges["rule"]) == {"strict"}
    structures.derive_question_prerequisites(toy, "toy", "strict")
    assert len(toy.frame("question_prerequisite_edges", {"dataset": "toy"})) == 12


def test_derive_without_a_rule_keeps_the_datasets_rule_and_a_switch_is_reported(toy):
    """Issue 33 §4: a re-derivation with no rule given replaced the demo's reflexive edges by strict ones."""
    first = structures.derive_question_prerequisites(toy, "toy")  # never derived: strict
    assert (first.rule, first.replaced_rule, first.edges) == ("strict", None, len(STRICT))
    switched = structures.derive_question_prerequisites(toy, "toy", "reflexive")
    assert (switched.rule, switched.replaced_rule, switched.replaced_edges) == ("reflexive", "strict", len(STRICT))
    kept = structures.derive_question_prerequisites(toy, "toy")
    assert (kept.rule, kept.replaced_rule, kept.replaced_edges) == ("reflexive", None, 0)
    edges = toy.frame("question_prerequisite_edges", {"dataset": "toy"})
    assert pairs(edges) == REFLEXIVE and set(edges["rule"]) == {"reflexive"}


def test_derive_unknown_dataset_and_rule(toy):
    with pytest.raises(UnknownIdError, match="unknown dataset 'nope'; datasets in the graph: toy"):
        structures.derive_question_prerequisites(toy, "nope")
    with pytest.raises(KstpError, match="unknown rule 'loose'"):
        structures.derive_question_prerequisites(toy, "toy", "loose")


def test_knowledge_states_counted_by_hand(toy):
    """States of the strict relation: {} plus {q1} with any subset of {q2, q3, q4} (8), plus
    q1..q5 and q1..q6: 11 states over q1..q6, times 4 for the free items q7, q8 = 44."""
    structures.derive_question_prerequisites(toy, "toy", "strict")
    items = q("q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8")
    states = [set(s) for n in range(9) for s in combinations(items, n)
              if not structures.check_state(toy, "toy", list(s))]
    assert len(states) == 44


def test_dataset_space_matches_the_hand_count(toy):
    structures.derive_question_prerequisites(toy, "toy", "strict")
    space = structures.dataset_space(toy, "toy")
    assert space.count() == 44
    assert space.outer_fringe(set(q("q1", "q2"))) == q("q3", "q4", "q7", "q8")
    assert structures.store_states(toy, "toy", space.states()[:3], "test") == 3
    assert structures.store_states(toy, "toy", space.states()[:3], "test") == 3
    assert {"label": "KnowledgeState", "count": 3} in toy.run("node_counts")


def test_fringes_by_hand(toy):
    structures.derive_question_prerequisites(toy, "toy", "strict")
    assert structures.outer_fringe(toy, "toy", q("q1", "q2")) == q("q3", "q4", "q7", "q8")
    assert structures.inner_fringe(toy, "toy", q("q1", "q2")) == q("q2")
    assert structures.outer_fringe(toy, "toy", []) == q("q1", "q7", "q8")
    assert structures.inner_fringe(toy, "toy", []) == []
    everything = q("q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8")
    assert structures.outer_fringe(toy, "toy", everything) == []
    assert structures.inner_fringe(toy, "toy", everything) == q("q6", "q7", "q8")
    assert structures.outer_fringe(toy, "toy", q("q1", "q2", "q3", "q4")) == q("q5", "q7", "q8")


def test_fringe_of_a_non_state_names_the_breaking_items(toy):
    structures.derive_question_prerequisites(toy, "toy", "strict")
    with pytest.raises(NotAKnowledgeStateError, match=r"toy:q5 lacks toy:q3, toy:q4") as info:
        structures.outer_fringe(toy, "toy", q("q1", "q2", "q5"))
    assert info.value.violations == {"toy:q5": q("q3", "q4")}
    with pytest.raises(NotAKnowledgeStateError, match="toy:q2 lacks toy:q1"):
        structures.inner_fringe(toy, "toy", q("q2"))


def test_state_with_unknown_id_is_refused(toy):
    with pytest.raises(UnknownIdError, match="'toy:q9' not a question of dataset 'toy'"):
        structures.check_state(toy, "toy", q("q1", "q9"))


def test_knowledge_state_of_learners(toy):
    assert structures.knowledge_state(toy, "toy", "toy:L1") == q("q1", "q2", "q5")
    assert structures.knowledge_state(toy, "toy", "toy:L3") == q("q1")
    with pytest.raises(UnknownIdError, match="'toy:nobody' answered no question"):
        structures.knowledge_state(toy, "toy", "toy:nobody")


def test_probability_skill_map_is_the_subset_relation(store, data_root):
    """Reflexive Eq. 1 on a skill map is skills(q_i) ⊆ skills(q_j): 29 pairs counted from
    the Q-matrix by hand, with b105/b106 and b107/b108 equally informative."""
    from kstp.loaders import items

    folder = data_root / "responses" / "probability_pks"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "probability_pks", folder / "qmatrix.csv"))
    report = structures.derive_question_prerequisites(store, "probability_pks", "reflexive")
    assert report.edges == 29
    got = {(a[-4:], b[-4:]) for a, b in
           store.frame("question_prerequisite_edges", {"dataset": "probability_pks"})[["fromId", "toId"]].values}
    assert {("b101", x) for x in ("b105", "b106", "b107", "b108", "b109", "b111", "b112")} <= got
    assert {("b105", "b106"), ("b106", "b105"), ("b107", "b108"), ("b108", "b107")} <= got
    assert not any(a == "b111" or a == "b112" for a, _ in got)
    assert sum(1 for a, _ in got if a == "b110") == 1


def test_question_prerequisite_pairs_strict_excludes_shared_concept():
    import pandas as pd

    qc = pd.DataFrame({"questionId": ["a", "b"], "conceptId": ["x", "x"]})
    none = pd.DataFrame(columns=["fromId", "toId"])
    assert structures.question_prerequisite_pairs(qc, none, "strict").empty
    assert structures.question_prerequisite_pairs(qc, none, "reflexive").values.tolist() == [["a", "b"], ["b", "a"]]


@pytest.mark.parametrize("dataset", ["probability_pks", "frcsub"])
def test_graph_fringes_equal_pks_on_every_state_of_real_data_with_equivalent_items(store, data_root, dataset):
    # Under the reflexive rule both skill maps have equally informative items (b105/b106,
    # Item06/Item08, ...): the standard Cypher fringes equal pks's getKFringe on every state
    # (tests/fixtures/pks_fringes), and the fringes of the notions equal the space's.
    from kstp.loaders.items import read_items_csv, write_items
    from tests.kst.test_spaces import pks_fringes

    folder = data_root / "responses" / dataset
    write_items(store, read_items_csv(folder / "items.csv", dataset, folder / "qmatrix.csv", folder / "skills.csv"))
    structures.derive_question_prerequisites(store, dataset, "reflexive")
    space = structures.dataset_space(store, dataset)
    assert any(len(c) > 1 for c in space.classes)
    def ids_of(local):
        return {f"{dataset}:{i}" for i in local}

    want = {frozenset(ids_of(s)): (ids_of(inner), ids_of(outer)) for s, (inner, outer) in pks_fringes(dataset).items()}
    assert set(space.states()) == set(want)
    for state, (inner, outer) in want.items():
        ids = sorted(state)
        assert set(structures.inner_fringe(store, dataset, ids)) == inner
        assert set(structures.outer_fringe(store, dataset, ids)) == outer
        assert structures.outer_fringe(store, dataset, ids, "notions") == space.outer_fringe(state, "notions")
        assert structures.inner_fringe(store, dataset, ids, "notions") == space.inner_fringe(state, "notions")


def test_fringes_of_equally_informative_questions_by_hand(store, data_root):
    """Probability under the reflexive rule: b101 (pb) is below b105 and b106 (cp, pb), which are
    equally informative; b102 (cp) too. From K = {b101, b102}, adding b105 alone leaves b106 out,
    so neither is in the standard outer fringe; the notions reading offers the pair."""
    from kstp.loaders import items

    folder = data_root / "responses" / "probability_pks"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "probability_pks", folder / "qmatrix.csv"))
    structures.derive_question_prerequisites(store, "probability_pks", "reflexive")
    p = [f"probability_pks:{i}" for i in ("b101", "b102")]
    with_pair = p + ["probability_pks:b105", "probability_pks:b106"]
    assert "probability_pks:b105" not in structures.outer_fringe(store, "probability_pks", p)
    assert {"probability_pks:b105", "probability_pks:b106"} <= set(structures.outer_fringe(store, "probability_pks", p,
                                                                                    "notions"))
    assert structures.inner_fringe(store, "probability_pks", with_pair) == []
    assert structures.inner_fringe(store, "probability_pks", with_pair, "notions") == with_pair[2:]
    with pytest.raises(KstpError, match="unknown fringe reading 'class'"):
        structures.outer_fringe(store, "probability_pks", p, "class")


def test_dataset_answers_on_the_bulk_path_equal_the_answers_query(toy):
    """The batched read by node key (BLIM and KOC read it) gives exactly the ``answers`` query's rows,
    on both engines, with batches smaller than the roster."""
    from kstp.graph.structures import dataset_answers

    def rows(frame):
        return sorted(zip(frame["learnerId"].astype(str), frame["questionId"].astype(str),
                          frame["correct"].astype(bool), strict=True))

    want = rows(toy.frame("answers", {"dataset": "toy"}))
    assert len(want) == 11
    assert rows(dataset_answers(toy, "toy", batch=2)) == rows(dataset_answers(toy, "toy")) == want
    assert dataset_answers(toy, "nowhere").empty
