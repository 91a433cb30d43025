"""Counterexamples to prerequisite edges: by hand on the toy learners, against pandas on
the real skill-map data, and the verdict against statsmodels' Wilson interval."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from kstp.errors import KstpError
from kstp.evaluators import counterexamples
from kstp.graph.structures import derive_question_prerequisites


def test_score_edges_wilson_and_verdict():
    counts = pd.DataFrame({"fromId": ["a", "b", "c", "d"], "toId": ["x"] * 4,
                           "attemptedBoth": [100, 10, 40, 0], "counterexamples": [30, 0, 8, 0]})
    out = counterexamples.score_edges(counts, tolerance=0.1, alpha=0.05)
    assert out["counterexampleRate"].tolist()[:3] == [0.3, 0.0, 0.2]
    # Wilson 95 % by hand for 30/100: (0.3 + z²/200 ∓ z·sqrt(0.21/100 + z²/40000)) / (1 + z²/100).
    z = 1.959963984540054
    centre, half = 0.3 + z * z / 200, z * math.sqrt(0.3 * 0.7 / 100 + z * z / 40000)
    assert out.loc[0, ["counterexampleLow", "counterexampleHigh"]].tolist() == pytest.approx(
        [(centre - half) / (1 + z * z / 100), (centre + half) / (1 + z * z / 100)])
    assert out.loc[0, "counterexampleLow"] == pytest.approx(0.2189, abs=1e-4)
    # 8/40 = 0.2, but its interval [0.105, 0.348] only just clears 0.1; with 0.11 it does not.
    assert out["contradicted"].tolist() == [True, False, True, False]
    assert counterexamples.score_edges(counts, tolerance=0.11)["contradicted"].tolist() == [True, False, False,
                                                                                             False]
    assert math.isnan(out.loc[3, "counterexampleRate"]) and math.isnan(out.loc[3, "counterexampleLow"])


@pytest.mark.parametrize("tolerance, alpha", [(1.0, 0.05), (-0.1, 0.05), (0.1, 0.0), (0.1, 1.0)])
def test_score_edges_refuses_out_of_range_parameters(tolerance, alpha):
    counts = pd.DataFrame({"fromId": ["a"], "toId": ["b"], "attemptedBoth": [1], "counterexamples": [0]})
    with pytest.raises(KstpError, match="tolerance"):
        counterexamples.score_edges(counts, tolerance, alpha)


@pytest.fixture
def checked(toy):
    derive_question_prerequisites(toy, "toy", "strict")
    return toy, counterexamples.check_prerequisites(toy, "toy", tolerance=0.1)


def test_question_edges_by_hand_on_toy(checked):
    """L1: q1 1, q2 1, q3 0, q5 1; L2: q1 0, q2 1, q4 1, q6 1, q7 1; L3: q1 1, q8 0."""
    _, result = checked
    edges = result.edges[result.edges["level"] == "question"].set_index(["fromId", "toId"])
    figures = edges[["attemptedBoth", "counterexamples"]]
    assert figures.loc[("toy:q1", "toy:q2")].tolist() == [2, 1]  # L1 agrees, L2 solved q2 without q1
    assert figures.loc[("toy:q3", "toy:q5")].tolist() == [1, 1]  # L1 solved q5, not q3
    assert figures.loc[("toy:q2", "toy:q5")].tolist() == [1, 0]
    assert figures.loc[("toy:q5", "toy:q6")].tolist() == [0, 0]  # nobody answered both
    assert math.isnan(edges.loc[("toy:q5", "toy:q6"), "counterexampleRate"])


def test_concept_edges_by_hand_on_toy(checked):
    """A is judged on q1 and q7, B on q2 and q4, C on q3 and q4, D on q5, E on q6.

    A -> B: L1 masters both; L2 has 1/2 on A (not above .5) and 2/2 on B: a counterexample.
    A -> C: L1 0/1 on C; L2 1/1 on C without A. B -> D: only L1 (both mastered).
    C -> D: L1 0/1 on C, 1/1 on D. D -> E: nobody answered q5 and q6.
    """
    _, result = checked
    edges = result.edges[result.edges["level"] == "concept"].set_index(["fromId", "toId"])
    got = {pair: tuple(row) for pair, row in edges[["attemptedBoth", "counterexamples"]].iterrows()}
    assert got == {("toy:A", "toy:B"): (2, 1), ("toy:A", "toy:C"): (2, 1), ("toy:B", "toy:D"): (1, 0),
                   ("toy:C", "toy:D"): (1, 1), ("toy:D", "toy:E"): (0, 0)}
    # Wilson for 1 of 1: lower bound 1 / (1 + z²) = 0.207 > 0.1, flagged; 1 of 2: 0.0945, not.
    z2 = 1.959963984540054 ** 2
    assert edges.loc[("toy:C", "toy:D"), "counterexampleLow"] == pytest.approx(1 / (1 + z2))
    assert edges.loc[("toy:A", "toy:B"), "counterexampleLow"] == pytest.approx(0.0945, abs=1e-4)
    assert edges.index[edges["contradicted"]].tolist() == [("toy:C", "toy:D")]


def test_figures_written_on_the_edges(checked):
    store, _ = checked
    got = store._execute(
        "MATCH (a:Concept)-[r:PREREQUISITE_OF]->(b:Concept) WHERE a.id = 'toy:C' "
        "RETURN b.id AS b, r.attemptedBoth AS n, r.counterexamples AS k, r.counterexampleRate AS rate, "
        "r.contradicted AS flag, r.checkedOn AS dataset, r.source AS source", {})
    assert got[["b", "n", "k", "rate", "flag", "dataset"]].values.tolist() == [["toy:D", 1, 1, 1.0, True, "toy"]]
    assert got["source"].notna().all()  # the edge keeps what it had
    rerun = counterexamples.check_prerequisites(store, "toy")
    assert len(rerun.edges) == len(checked[1].edges)


def test_worst_edges_come_first(checked):
    _, result = checked
    lows = result.edges["counterexampleLow"].dropna().tolist()
    assert lows == sorted(lows, reverse=True)
    assert result.edges["counterexampleLow"].isna().tolist()[-2:] == [True, True]


def test_unknown_level_and_mastery_are_refused(toy):
    with pytest.raises(KstpError, match="level"):
        counterexamples.check_prerequisites(toy, "toy", ("skill",))
    with pytest.raises(KstpError, match="mastery"):
        counterexamples.check_prerequisites(toy, "toy", mastery=1.0)


@pytest.mark.parametrize("dataset, responses_file", [("frcsub", "responses.csv"),
                                                     ("probability_pks", "responses_full.csv")])
def test_counterexamples_on_real_data_match_pandas(store, data_root, dataset, responses_file):
    from kstp.loaders import items, responses

    folder = data_root / "responses" / dataset
    items.write_items(store, items.read_items_csv(folder / "items.csv", dataset, folder / "qmatrix.csv"))
    known = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
    responses.write_answers(store, dataset, responses.read_wide(folder / responses_file, known), responses_file)
    derive_question_prerequisites(store, dataset, "reflexive")
    result = counterexamples.check_prerequisites(store, dataset, ("question",))
    wide = pd.read_csv(folder / responses_file).set_index("person_id")
    edges = result.edges.set_index(["fromId", "toId"])
    assert len(edges) == len(store.frame("question_prerequisite_edges", {"dataset": dataset})) > 0
    for (p, q), row in edges.iterrows():
        a, b = wide[p.split(":")[1]], wide[q.split(":")[1]]
        k = int(((b == 1) & (a == 0)).sum())
        assert (row["attemptedBoth"], row["counterexamples"]) == (len(wide), k)
        low, high = proportion_confint(k, len(wide), alpha=0.05, method="wilson")
        assert (row["counterexampleLow"], row["counterexampleHigh"]) == pytest.approx((low, high))
        assert row["contradicted"] == (low > 0.1)
