"""PSR by hand on the toy learners, and against the authors' loop and Cypher on real data."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from kstp.evaluators import psr
from kstp.platform.kst import derive_question_prerequisites
from tests import reference as ref


@pytest.fixture
def scored(toy):
    derive_question_prerequisites(toy, "toy", "strict")
    return toy, psr.evaluate_dataset(toy, "toy", min_prerequisites=3)


def test_psr_hand_computed_per_learner(scored):
    """L1: q2 1/1, q5 2/3 (q4 unattempted) -> micro 3/4, macro 5/6.
    L2: q2 0/1, q4 0/1, q6 2/3 (q1 wrong, q3/q5 unattempted) -> micro 2/5, macro 2/9.
    L3: q1 has no prerequisite -> no PSR."""
    _, result = scored
    rows = result.learners
    assert rows.loc["toy:L1", ["psrMicro", "psrMacro", "accuracy"]].tolist() == pytest.approx([3 / 4, 5 / 6, 3 / 4])
    assert rows.loc["toy:L2", ["psrMicro", "psrMacro", "accuracy"]].tolist() == pytest.approx([2 / 5, 2 / 9, 4 / 5])
    assert rows.loc["toy:L1", "questionsScored"] == 2 and rows.loc["toy:L2", "pairs"] == 5
    assert math.isnan(rows.loc["toy:L3", "psrMicro"]) and rows.loc["toy:L3", "accuracy"] == 0.5


def test_psr_summary_means_over_learners(scored):
    _, result = scored
    [summary] = result.summary()
    assert summary["psrMicro"] == pytest.approx((3 / 4 + 2 / 5) / 2)
    assert summary["psrMacro"] == pytest.approx((5 / 6 + 2 / 9) / 2)
    assert summary["accuracy"] == pytest.approx((3 / 4 + 4 / 5 + 1 / 2) / 3)
    assert (summary["learner"], summary["learners"], summary["learnersWithPsr"]) == ("human learners", 3, 2)
    # Threshold 3: L1/q5 and L2/q6, both 2/3 -> bucket [.6,.8).
    assert summary["psr [.6,.8)"] == 1.0 and summary["pairsInDistribution"] == 2


def test_psr_written_back_on_learners(scored):
    store, _ = scored
    got = store._execute("MATCH (l:Learner) RETURN l.id AS id, l.psrMicro AS micro, l.nAnswered AS n ORDER BY id", {})
    assert got["n"].tolist() == [4, 5, 2]
    assert got["micro"].iloc[:2].tolist() == pytest.approx([0.75, 0.4])
    assert math.isnan(got["micro"].iloc[2])


def test_distribution_threshold_one_by_hand():
    pairs = pd.DataFrame({"observed": [1, 3, 1, 1, 3], "satisfied": [1, 2, 0, 0, 2]})
    assert psr.distribution(pairs, 1).tolist() == [0.4, 0.0, 0.0, 0.4, 0.0, 0.2]


def test_distribution_bucket_edges_are_exact():
    """3/5 = 0.6 belongs to [.6,.8): float division would put 0.6 - epsilon below it."""
    pairs = pd.DataFrame({"observed": [5, 5, 10, 5], "satisfied": [3, 1, 2, 4]})
    assert psr.distribution(pairs, 5).tolist() == [0.0, 0.5, 0.0, 0.25, 0.25, 0.0]


def test_no_prerequisites_gives_no_psr():
    answers = pd.DataFrame({"learnerId": ["l"], "questionId": ["a"], "correct": [True]})
    pairs = psr.score_pairs(answers, pd.DataFrame(columns=["fromId", "toId"]))
    learners = psr.aggregate(answers, pairs)
    assert learners.loc["l", "accuracy"] == 1.0 and math.isnan(learners.loc["l", "psrMicro"])
    assert psr.distribution(pairs).isna().all()


@pytest.mark.parametrize("dataset, responses_file", [("probability_pks", "responses_full.csv"),
                                                     ("frcsub", "responses.csv")])
def test_psr_real_learners_equal_authors_loop_and_cypher(store, data_root, dataset, responses_file):
    from kstp.loaders import items, responses

    folder = data_root / "responses" / dataset
    items.write_items(store, items.read_items_csv(folder / "items.csv", dataset, folder / "qmatrix.csv"))
    known = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
    responses.write_answers(store, dataset, responses.read_wide(folder / responses_file, known), responses_file)
    derive_question_prerequisites(store, dataset, "reflexive")
    result = psr.evaluate_dataset(store, dataset)
    answers = store.frame("answers", {"dataset": dataset})
    by_learner: dict[str, dict[str, bool]] = {}
    for learner, question, correct in answers.itertuples(index=False):
        by_learner.setdefault(learner, {})[question] = bool(correct)
    edges = set(map(tuple, store.frame("question_prerequisite_edges", {"dataset": dataset})[["fromId", "toId"]].values))
    want = ref.psr(by_learner, edges)
    got = result.learners.dropna(subset=["psrMicro"])
    assert set(got.index) == set(want)
    for learner, (micro, macro, scored, pairs) in want.items():
        assert got.loc[learner, "psrMicro"] == pytest.approx(micro, abs=1e-12)
        assert got.loc[learner, "psrMacro"] == pytest.approx(macro, abs=1e-12)
        assert (got.loc[learner, "questionsScored"], got.loc[learner, "pairs"]) == (scored, pairs)
    cypher = store.frame("psr_by_learner", {"dataset": dataset}).set_index("learnerId")
    assert (cypher["psrMicro"] - got["psrMicro"]).abs().max() < 1e-12
    # The mean correct rates the data's provenance gives: .745 and .534.
    assert round(result.summary()[0]["accuracy"], 3) == {"probability_pks": 0.745, "frcsub": 0.534}[dataset]


def test_repeated_answer_last_one_wins_in_direct_use():
    answers = pd.DataFrame({"learnerId": "l", "questionId": ["a", "c", "a"], "correct": [True, True, False]})
    pre = pd.DataFrame({"fromId": ["a"], "toId": ["c"]})
    pairs = psr.score_pairs(answers, pre)
    assert pairs[["observed", "satisfied"]].values.tolist() == [[1, 0]]
    assert psr.aggregate(answers, pairs).loc["l", ["answered", "correct"]].tolist() == [2, 1]
