"""KOC and KOC_norm by hand (edge cases included), ability groups by hand and against
pandas on the fraction-subtraction students."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kstp.errors import KstpError, UnknownIdError
from kstp.evaluators import koc

NAN = math.nan


@pytest.mark.parametrize(("counts", "expected"), [
    ((5, 2, 3, 1), (0.5, -0.25, 0.6)),           # K1 = {a, b}, K2 = {a, c, d} on 5 items
    ((5, 2, 3, 2), (1.0, 1.0, 0.6)),             # nested states
    ((4, 2, 2, 2), (1.0, 1.0, 0.5)),             # identical states
    ((4, 2, 2, 0), (0.0, -1.0, 0.5)),            # disjoint states: below chance
    ((3, 3, 1, 1), (1.0, NAN, 1.0)),             # p_max = 1: KOC_norm undefined
    ((3, 0, 2, 0), (NAN, NAN, 2 / 3)),           # one empty state: KOC undefined
    ((3, 0, 0, 0), (NAN, NAN, 0.0)),             # both empty
    ((0, 0, 0, 0), (NAN, NAN, NAN)),             # no shared question
])
def test_score_pair_by_hand(counts, expected):
    assert koc.score_pair(*counts) == pytest.approx(expected, nan_ok=True)


def test_ability_groups_rank_shares_and_ties():
    """Ranked weakest first (ties by id): shares 0, .2, .4, .6, .8; s5 (share .8) is cut off."""
    acc = pd.Series({"s1": 0.9, "s2": 0.1, "s3": 0.5, "s4": 0.5, "s5": 1.0})
    groups = koc.ability_groups(acc, (0.0, 0.4, 0.8), ("low", "high"))
    assert groups.to_dict() == {"s2": "low", "s3": "low", "s4": "high", "s1": "high"}
    default = koc.ability_groups(pd.Series({f"s{i:02d}": i / 10 for i in range(10)}))
    assert default.value_counts().to_dict() == {"low": 3, "medium": 3, "high": 3}
    assert "s09" not in default.index  # the top 10 % is excluded


@pytest.mark.parametrize("cuts, names", [((0.0, 0.5), ("a", "b")), ((0.0, 0.6, 0.3), ("a", "b")),
                                         ((-0.1, 0.5), ("a",)), ((0.0, 1.2), ("a",))])
def test_ability_groups_bad_cuts_are_refused(cuts, names):
    with pytest.raises(KstpError, match="cuts"):
        koc.ability_groups(pd.Series({"s": 0.5}), cuts, names)


def _add_models(store):
    """M1 right on q1-q4, M2 right on q2, q5, q6; both answer all eight toy questions."""
    right = {"M1": {"q1", "q2", "q3", "q4"}, "M2": {"q2", "q5", "q6"}}
    store.write_nodes("Learner", pd.DataFrame({"id": ["toy:M1", "toy:M2"], "kind": "model", "dataset": "toy"}))
    rows = [(f"toy:{m}", f"toy:q{i}", f"q{i}" in right[m]) for m in right for i in range(1, 9)]
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(rows, columns=["from_id", "to_id",
                                                                                             "correct"]))


@pytest.fixture
def with_models(toy):
    _add_models(toy)
    return toy


def test_koc_matrix_by_hand_on_toy_groups_and_models(with_models):
    """Every question counted (``questions="all"``, q8 included): three toy learners fall one per
    group: L3 (.5) low, L1 (.75) medium, L2 (.8) high.

    low = {q1} on {q1, q8}; medium = {q1, q2, q5} on {q1, q2, q3, q5};
    high = {q2, q4, q6, q7} on {q1, q2, q4, q6, q7}; M1 = {q1..q4}, M2 = {q2, q5, q6} on all 8.
    Figures 4-5 order: models upper left (M2 3/8 before M1 4/8), humans lower right.
    """
    result = koc.evaluate(with_models, "toy", questions="all")
    ids = ["toy:M2", "toy:M1", "toy:group:low", "toy:group:medium", "toy:group:high"]
    assert list(result.learners.index) == ids
    assert result.blocks == [2, 3] and result.counted == 8
    raw, norm = result.koc, result.koc_norm
    # M1-M2: 8 shared, |K| 4 and 3, overlap {q2}: 1/3; p_max 1/2 -> -1/3.
    assert (raw.loc["toy:M1", "toy:M2"], norm.loc["toy:M1", "toy:M2"]) == pytest.approx((1 / 3, -1 / 3))
    # medium-M1: shared {q1, q2, q3, q5}; 3 and 3; overlap {q1, q2}: 2/3; p_max 3/4 -> -1/3.
    assert (raw.loc["toy:group:medium", "toy:M1"], norm.loc["toy:group:medium", "toy:M1"]) == \
        pytest.approx((2 / 3, -1 / 3))
    # medium-M2: M2 on the shared set {q2, q5}, inside medium: 1; p_max 3/4 -> 1.
    assert (raw.loc["toy:group:medium", "toy:M2"], norm.loc["toy:group:medium", "toy:M2"]) == pytest.approx((1, 1))
    # high-M1: shared {q1, q2, q4, q6, q7}; 4 and 3; overlap {q2, q4}: 2/3; p_max 4/5 -> -2/3.
    assert (raw.loc["toy:group:high", "toy:M1"], norm.loc["toy:group:high", "toy:M1"]) == \
        pytest.approx((2 / 3, -2 / 3))
    # low-M1: shared {q1, q8}; {q1} and {q1}: 1; p_max 1/2 -> 1. low-M2: M2's state there is empty.
    assert (raw.loc["toy:group:low", "toy:M1"], norm.loc["toy:group:low", "toy:M1"]) == pytest.approx((1, 1))
    assert math.isnan(raw.loc["toy:group:low", "toy:M2"]) and math.isnan(norm.loc["toy:group:low", "toy:M2"])
    # medium-high share {q1, q2}: medium knows both (p_max = 1): KOC 1, KOC_norm undefined.
    assert raw.loc["toy:group:medium", "toy:group:high"] == 1.0
    assert math.isnan(norm.loc["toy:group:medium", "toy:group:high"])
    # Diagonal: 1 for a non-empty state; symmetric matrices.
    assert np.diag(raw.to_numpy()).tolist() == [1.0] * 5
    assert np.allclose(raw.to_numpy(), raw.to_numpy().T, equal_nan=True)
    assert np.allclose(norm.to_numpy(), norm.to_numpy().T, equal_nan=True)


def test_koc_leaves_out_questions_without_a_concept_by_default(with_models):
    """Appendix B: q8 (no concept) leaves the states and the overlaps. The groups rank on every attempted
    question, as the paper and evaluate psr --groups do (issue 47: one rule): L3 1/2 (q1 right, q8 wrong),
    L1 3/4, L2 4/5, so L3 is low, L1 medium, L2 high; M1 = {q1..q4} 4/7, M2 = {q2, q5, q6} 3/7 on q1-q7.

    M1-M2: 7 shared, |K| 4 and 3, overlap {q2}: KOC 1/3, p_max 4/7, KOC_norm (1/3 - 4/7) / (3/7) = -5/9
    (with q8 counted p_max was 1/2 and KOC_norm -1/3). medium(L1)-M2: shared {q1, q2, q3, q5}, medium
    {q1, q2, q5}, M2 {q2, q5} inside it: KOC 1, p_max 3/4, KOC_norm 1. low(L3)-M1: shared {q1} (q8 is not
    counted), both know it: KOC 1, p_max 1, KOC_norm undefined.
    """
    result = koc.evaluate(with_models, "toy")
    assert (result.questions, result.counted) == ("annotated", 7)
    assert list(result.learners.index) == ["toy:M2", "toy:M1", "toy:group:low", "toy:group:medium",
                                           "toy:group:high"]
    groups = result.groups.set_index("group")
    assert groups["memberAccuracy"].tolist() == pytest.approx([1 / 2, 3 / 4, 4 / 5])
    assert result.learners.loc["toy:M1", ["answered", "correct"]].tolist() == [7, 4]
    raw, norm = result.koc, result.koc_norm
    assert (raw.loc["toy:M1", "toy:M2"], norm.loc["toy:M1", "toy:M2"]) == pytest.approx((1 / 3, -5 / 9))
    assert (raw.loc["toy:group:medium", "toy:M2"], norm.loc["toy:group:medium", "toy:M2"]) == pytest.approx((1, 1))
    assert raw.loc["toy:group:low", "toy:M1"] == 1.0 and math.isnan(norm.loc["toy:group:low", "toy:M1"])
    pairs = result.pairs.set_index(["learnerA", "learnerB"])
    assert pairs.loc[("toy:M1", "toy:M2"), ["shared", "sizeA", "sizeB", "overlap"]].tolist() == [7, 4, 3, 1]
    edges = with_models._execute("MATCH (l:Learner)-[a:ANSWERED]->(q:Question) WHERE l.kind = 'group' "
                                 "RETURN q.id AS question ORDER BY question", {})
    assert "toy:q8" not in set(edges["question"])  # the group states hold no unannotated question


def test_koc_with_no_annotated_question_says_so(toy):
    toy._execute("MATCH (:Question)-[a:ASSESSES]->(:Concept) DELETE a", {})
    with pytest.raises(KstpError, match="--questions all"):
        koc.evaluate(toy, "toy")
    assert koc.evaluate(toy, "toy", questions="all").counted == 8
    with pytest.raises(KstpError, match="questions='some'"):
        koc.counted_questions(toy, "toy", "some")


def test_groups_are_stored_as_learners_with_answers(with_models):
    koc.evaluate(with_models, "toy", questions="all")
    learners = with_models._execute(
        "MATCH (l:Learner) WHERE l.kind = 'group' RETURN l.id AS id, l.members AS members, "
        "l.memberAccuracy AS acc ORDER BY id", {})
    assert learners["id"].tolist() == ["toy:group:high", "toy:group:low", "toy:group:medium"]
    assert learners["members"].tolist() == [1, 1, 1]
    assert learners["acc"].tolist() == pytest.approx([0.8, 0.5, 0.75])
    edges = with_models._execute(
        "MATCH (l:Learner)-[a:ANSWERED]->(q:Question) WHERE l.id = 'toy:group:medium' "
        "RETURN q.id AS question, a.correct AS correct, a.meanCorrect AS mean ORDER BY question", {})
    assert edges.values.tolist() == [["toy:q1", True, 1.0], ["toy:q2", True, 1.0], ["toy:q3", False, 0.0],
                                     ["toy:q5", True, 1.0]]
    again = koc.evaluate(with_models, "toy", questions="all")  # idempotent: same groups, same matrix
    assert again.koc.loc["toy:M1", "toy:M2"] == pytest.approx(1 / 3)
    count = "MATCH (l:Learner)-[a:ANSWERED]->(:Question) WHERE l.kind = 'group' RETURN count(a) AS n"
    assert with_models._execute(count, {})["n"].tolist() == [2 + 4 + 5]


def test_group_state_threshold_on_a_shared_question(toy):
    """Cuts that put L1 and L3 in one group: q1 is right for both (1.0), q3 wrong (0.0)."""
    groups, answers = koc.group_states(toy, "toy", (0.0, 2 / 3), ("weak",), questions="all")
    assert groups[["members", "stateSize"]].values.tolist() == [[2, 3]]
    assert groups["memberAccuracy"].iloc[0] == pytest.approx((0.75 + 0.5) / 2)
    shares = dict(zip(answers["questionId"], answers["meanCorrect"], strict=True))
    assert shares == {"toy:q1": 1.0, "toy:q2": 1.0, "toy:q3": 0.0, "toy:q5": 1.0, "toy:q8": 0.0}
    _, strict = koc.group_states(toy, "toy", (0.0, 2 / 3), ("weak",), threshold=0.99, questions="all")
    assert strict["correct"].sum() == 3


def test_koc_needs_two_learners_and_known_ids(toy):
    with pytest.raises(KstpError, match="only 0"):
        koc.evaluate(toy, "toy", groups=False)
    with pytest.raises(UnknownIdError, match="toy:nobody"):
        koc.evaluate(toy, "toy", ["toy:nobody"])
    with pytest.raises(UnknownIdError, match="unknown dataset"):
        koc.evaluate(toy, "nope")


def _load(store, data_root, dataset, responses_file):
    from kstp.loaders import items, responses

    folder = data_root / "responses" / dataset
    items.write_items(store, items.read_items_csv(folder / "items.csv", dataset, folder / "qmatrix.csv"))
    known = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
    responses.write_answers(store, dataset, responses.read_wide(folder / responses_file, known), responses_file)
    return pd.read_csv(folder / responses_file).set_index("person_id")


@pytest.mark.parametrize("dataset, responses_file, sizes", [
    ("frcsub", "responses.csv", (161, 161, 161)),                # 536 x .3 = 160.8: ranks 0-160, 161-321, 322-482
    ("probability_pks", "responses_full.csv", (152, 151, 151)),  # 504 x .3 = 151.2: ranks 0-151, 152-302, 303-453
])
def test_groups_on_real_students_match_pandas(store, data_root, dataset, responses_file, sizes):
    """On frcsub the low group's state is empty and the high group's holds all 20 items:
    the empty-state and p_max = 1 cases arise on real data."""
    wide = _load(store, data_root, dataset, responses_file)
    result = koc.evaluate(store, dataset)
    acc = wide.mean(axis=1).rename("acc").reset_index().sort_values(["acc", "person_id"], kind="stable")
    share = np.arange(len(acc)) / len(acc)
    states = {}
    for (name, lo, hi), size in zip([("low", 0.0, 0.3), ("medium", 0.3, 0.6), ("high", 0.6, 0.9)], sizes,
                                    strict=True):
        members = acc["person_id"][(share >= lo) & (share < hi)]
        row = result.groups.set_index("group").loc[name]
        assert row["members"] == len(members) == size
        assert row["memberAccuracy"] == pytest.approx(acc.set_index("person_id").loc[members, "acc"].mean())
        mean = wide.loc[members].mean()
        states[name] = {f"{dataset}:{item}" for item in mean.index[mean > 0.5]}
        assert row["stateSize"] == len(states[name])
    # KOC between the groups from the pandas states (every group answered every item).
    n = wide.shape[1]
    for a, b in [("low", "medium"), ("low", "high"), ("medium", "high")]:
        ka, kb = states[a], states[b]
        small, p_max = min(len(ka), len(kb)), max(len(ka), len(kb)) / n
        raw = len(ka & kb) / small if small else math.nan
        norm = (raw - p_max) / (1 - p_max) if small and p_max < 1 else math.nan
        got = (result.koc.loc[f"{dataset}:group:{a}", f"{dataset}:group:{b}"],
               result.koc_norm.loc[f"{dataset}:group:{a}", f"{dataset}:group:{b}"])
        assert got == pytest.approx((raw, norm), nan_ok=True)
    if dataset == "frcsub":
        assert [len(states[g]) for g in ("low", "medium", "high")] == [0, 10, 20]


def test_groups_are_not_counted_again_as_human_learners_in_psr(with_models):
    from kstp.evaluators import psr
    from kstp.graph.structures import derive_question_prerequisites

    koc.evaluate(with_models, "toy")
    derive_question_prerequisites(with_models, "toy", "strict")
    rows = psr.evaluate_dataset(with_models, "toy", min_prerequisites=3).summary()
    assert [(r["learner"], r["learners"]) for r in rows] == [("human learners", 3), ("toy:M1", 1), ("toy:M2", 1)]


def test_a_group_without_members_is_reported_not_compared(with_models):
    """Rank shares 0, 1/3, 2/3 (on q1-q7): [0, .1) holds L1, [.1, .2) nobody, [.2, 1) L2 and L3."""
    result = koc.evaluate(with_models, "toy", cuts=(0.0, 0.1, 0.2, 1.0), names=("a", "b", "c"))
    assert result.groups[["group", "members"]].values.tolist() == [["a", 1], ["b", 0], ["c", 2]]
    assert list(result.learners.index) == ["toy:M2", "toy:M1", "toy:group:a", "toy:group:c"]
    assert "toy:group:b" not in set(with_models.frame("dataset_learners", {"dataset": "toy"})["learnerId"])
