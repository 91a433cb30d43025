"""Standard errors, pass@k, majority vote and McNemar's test against values computed by hand or by the
libraries that define them (scipy, statsmodels), and sample_statistics on a small run written out."""

from __future__ import annotations

import math
from math import comb

import numpy as np
import pandas as pd
import pytest

from kstp.inference.statistics import (
    clustered_stderr,
    majority_vote,
    mcnemar,
    mean_stderr,
    pass_at_k,
    pass_at_k_table,
    sample_statistics,
)

#: Four questions, three samples each: c = 3, 1, 1, 2 correct; sample 0 right on q1 and q2.
RUN = pd.DataFrame({
    "questionId": [q for q in ("q1", "q2", "q3", "q4") for _ in range(3)],
    "sampleIndex": [0, 1, 2] * 4,
    "correct": [True, True, True, True, False, False, False, True, False, False, True, True],
    "extracted": ["3", "3", "3", "5", "7", "7", "9", "1", "8", "0", "2", "2"]})


@pytest.mark.parametrize(("n", "c", "k"), [(n, c, k) for n in (1, 3, 5, 10) for c in range(n + 1)
                                           for k in range(1, n + 1)])
def test_pass_at_k_is_chen_et_al_eq_1(n, c, k):
    """1 - C(n - c, k) / C(n, k), the definition (Chen et al. 2021, Eq. 1), by exact integer binomials."""
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-12)


def test_pass_at_k_refuses_k_beyond_the_samples():
    with pytest.raises(ValueError, match="n=3, c=1, k=4"):
        pass_at_k(3, 1, 4)


def test_pass_at_k_table_by_hand():
    """pass@1 = mean c/n = (1 + 1/3 + 1/3 + 2/3) / 4 = 7/12; pass@2: 1, 1 - 1/3, 1 - 1/3, 1 (two wrong of three
    leave C(1, 2) = 0 draws without a right one) = 5/6, its sd (ddof 1) sqrt(1/27), over 2; pass@3 = 1."""
    table = pass_at_k_table(RUN)
    assert table.index.tolist() == [1, 2, 3]
    assert table["passAtK"].tolist() == pytest.approx([7 / 12, 5 / 6, 1.0])
    assert table.loc[2, "stderr"] == pytest.approx(math.sqrt(1 / 27) / 2)
    assert table.loc[3, "stderr"] == 0.0


def test_mean_and_clustered_stderr_by_hand():
    assert mean_stderr([1, 1, 0, 0]) == pytest.approx(math.sqrt(1 / 3) / 2)  # s^2 = 1/3 (ddof 1), n = 4
    # per-question means 1, 1/3, 1/3, 2/3: deviations 5, -3, -3, 1 twelfths; s^2 = (44/144) / 3
    assert clustered_stderr(RUN["correct"].astype(float), RUN["questionId"]) == \
        pytest.approx(math.sqrt(44 / 144 / 3) / 2)
    # unequal clusters, CR1 by its formula: sqrt(G/(G-1) * sum_g (sum_i e_i)^2) / N
    y, g = np.array([1.0, 0, 1, 1, 0]), ["a", "a", "b", "c", "c"]
    e = y - y.mean()
    sums = [e[0] + e[1], e[2], e[3] + e[4]]
    assert clustered_stderr(y, g) == pytest.approx(math.sqrt(3 / 2 * sum(s * s for s in sums)) / 5)


def test_majority_vote_counts_correct_samples_as_one_answer_and_ties_go_first():
    votes = majority_vote(RUN)
    # q1 3,3,3; q2 5 (right), 7, 7; q3 9, 1 (right), 8: a three-way tie, the first (9) wins; q4 0, 2, 2 (right)
    assert votes.to_dict() == {"q1": True, "q2": False, "q3": False, "q4": True}
    spelled = pd.DataFrame({"questionId": "q", "sampleIndex": [0, 1, 2], "correct": [False, True, True],
                            "extracted": ["7", "1/2", "0.5"]})
    assert majority_vote(spelled).tolist() == [True]  # 1/2 and 0.5 both equal the gold: one answer, two votes
    silent = pd.DataFrame({"questionId": "q", "sampleIndex": [0, 1], "correct": [None, None],
                           "extracted": [None, " "]})
    assert majority_vote(silent).tolist() == [False]


def test_sample_statistics_of_a_small_run():
    figures = sample_statistics(RUN)
    assert figures["accuracy"] == 0.5 and figures["accuracyStderr"] == pytest.approx(math.sqrt(1 / 3) / 2)
    assert figures["meanSampleAccuracy"] == pytest.approx(7 / 12)
    assert figures["samplesPerQuestion"] == 3
    assert [figures[f"passAt{k}"] for k in (1, 2, 3)] == pytest.approx([7 / 12, 5 / 6, 1.0])
    assert figures["passAt1Stderr"] == pytest.approx(figures["meanSampleAccuracyStderr"])  # equal cluster sizes
    assert (figures["majorityAt3"], figures["majorityAt3Stderr"]) == (0.5, pytest.approx(math.sqrt(1 / 3) / 2))
    one = sample_statistics(RUN[RUN["sampleIndex"] == 0])
    assert "passAt1" not in one and one["meanSampleAccuracyStderr"] == pytest.approx(one["accuracyStderr"])


@pytest.mark.parametrize(("first", "second"), [
    ([1] * 6 + [0] * 4, [1] * 2 + [0] * 8),  # 4 discordant, all one way: exact
    ([1, 0, 1, 0, 1, 1, 0, 0], [1, 1, 0, 0, 1, 0, 0, 1]),  # 2 against 2
    ([1] * 30 + [0] * 10 + [1] * 5, [0] * 30 + [1] * 10 + [1] * 5),  # 40 discordant: chi-square
])
def test_mcnemar_against_statsmodels_and_scipy(first, second):
    """The counts are the 2x2 table statsmodels.stats.contingency_tables.mcnemar takes; the exact p-value is
    scipy.stats.binomtest's two-sided test of the smaller discordant count."""
    from scipy.stats import binomtest
    from statsmodels.stats.contingency_tables import mcnemar as reference

    a, b = np.array(first, bool), np.array(second, bool)
    got = mcnemar(a, b)
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    assert [[got["both"], got["onlyFirst"]], [got["onlySecond"], got["neither"]]] == table
    discordant = table[0][1] + table[1][0]
    expected = reference(table, exact=discordant < 25, correction=True)
    assert (got["statistic"], got["pValue"]) == (pytest.approx(expected.statistic), pytest.approx(expected.pvalue))
    if discordant < 25:
        assert got["method"] == "exact binomial"
        assert got["pValue"] == pytest.approx(binomtest(min(table[0][1], table[1][0]), discordant, 0.5).pvalue)
    else:  # (|b - c| - 1)^2 / (b + c) = (20 - 1)^2 / 40
        assert got["method"] == "chi-square, continuity corrected" and got["statistic"] == pytest.approx(361 / 40)
