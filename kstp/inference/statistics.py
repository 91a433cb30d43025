"""Statistics of graded model samples: standard errors, pass@k, majority vote, McNemar.

Assumes one row per graded sample with the question it answers (``questionId``), its
sample index (``sampleIndex``; 0 is the primary sample), whether it is correct
(``correct``; a missing grade counts as incorrect, as in every kstp denominator) and
the answer read from it (``extracted``, for the majority vote). Every function is
pure: numpy and pandas in, numbers out; a run's figures are recomputed from its log
files with :func:`sample_statistics` alone (:mod:`kstp.inference.runlog`).

The estimators, named in every summary (:data:`ESTIMATORS`):

- accuracy of the primary samples, and its standard error ``s / sqrt(n)`` with ``s``
  the sample standard deviation (``ddof=1``) over the ``n`` questions: lm-eval's
  ``acc_stderr`` (``mean_stderr``) and Inspect's ``stderr()``;
- the mean accuracy over all samples, with a cluster-robust (CR1) standard error,
  samples clustered by question (Miller 2024, Eq. 4 with the small-sample factor
  ``G / (G - 1)``): with one sample per question it is ``s / sqrt(n)`` again, with K
  samples of every question the standard deviation of the per-question means over
  ``sqrt(n)``;
- pass@k for every k up to the samples of the question that has fewest, the unbiased
  estimator of Chen et al. 2021 (Eq. 1) per question, averaged over questions, with
  ``s / sqrt(n)`` of the per-question estimates;
- majority vote over every sample of a question (``maj@K``): the answer given most
  often, every correct sample counting as one answer (they all equal the gold); ties go
  to the answer given first; a question none of whose samples gave an answer is wrong.

References
----------
Chen et al. 2021, "Evaluating Large Language Models Trained on Code", §2.1, Eq. 1
(arXiv 2107.03374). Miller 2024, "Adding Error Bars to Evals: A Statistical Approach
to Language Model Evaluations", §2.2, Eq. 4 (arXiv 2411.00640). McNemar 1947, "Note on
the sampling error of the difference between correlated proportions or percentages",
Psychometrika 12, 153-157 (doi:10.1007/BF02295996).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["ESTIMATORS", "mean_stderr", "clustered_stderr", "pass_at_k", "pass_at_k_table", "majority_vote",
           "sample_statistics", "replicate_statistics", "mcnemar", "STATISTIC_KEYS"]

#: What each standard error and figure of :func:`sample_statistics` is, as a summary names it.
ESTIMATORS = {
    "accuracyStderr": "sample sd (ddof=1) / sqrt(questions) of the primary samples' 0/1 scores "
                      "(lm-eval's acc_stderr, Inspect's stderr)",
    "meanSampleAccuracyStderr": "cluster-robust (CR1) over questions, samples of a question one cluster "
                                "(Miller 2024, arXiv 2411.00640, Eq. 4)",
    "passAtK": "unbiased 1 - C(n-c, k) / C(n, k) per question, mean over questions (Chen et al. 2021, "
               "arXiv 2107.03374, Eq. 1); stderr: sd (ddof=1) / sqrt(questions)",
    "majorityAtK": "most frequent answer of the question's samples, correct samples one answer, ties to the "
                   "first given; stderr: sd (ddof=1) / sqrt(questions)",
    "replicates": "accuracy: mean of the replicates' primary samples, stderr cluster-robust (CR1) over questions; "
                  "accuracyReplicateSd: sd (ddof=1) of the replicates' accuracies; pass@k and maj@K over every "
                  "sample of every replicate, each replicate's samples numbered after the one before",
}


def mean_stderr(values: Sequence[float] | np.ndarray) -> float:
    """Standard error of a mean: the sample standard deviation (``ddof=1``) over ``sqrt(n)``.

    Parameters
    ----------
    values : sequence of float, shape (n,)
        One score per unit (a 0/1 verdict per question, a per-question pass@k).

    Returns
    -------
    float
        NaN for fewer than two values (no spread can be estimated).

    Examples
    --------
    >>> round(mean_stderr([1, 0, 1, 1]), 6)  # s = 0.5, n = 4
    0.25
    >>> mean_stderr([1])
    nan

    Notes
    -----
    lm-eval's ``mean_stderr`` and Inspect's ``stderr()``; for 0/1 scores this is
    ``sqrt(p (1 - p) / (n - 1))``, not the ``/ n`` of the normal approximation.
    """
    array = np.asarray(values, dtype=float)
    if len(array) < 2:
        return math.nan
    return float(array.std(ddof=1) / math.sqrt(len(array)))


def clustered_stderr(values: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray) -> float:
    """Cluster-robust (CR1) standard error of the mean of ``values``, clustered by ``clusters``.

    ``sqrt(G / (G - 1) * sum_g (sum_{i in g} (y_i - mean))**2) / N`` over ``G`` clusters
    and ``N`` values: samples of one question are correlated, so they are one cluster.

    Parameters
    ----------
    values : sequence of float, shape (N,)
    clusters : sequence, shape (N,)
        The cluster of each value (its question id).

    Returns
    -------
    float
        NaN for fewer than two clusters.

    Raises
    ------
    ValueError
        When ``values`` and ``clusters`` differ in length.

    Examples
    --------
    Two questions, two samples each: the per-question means are 1 and 0.5, so the
    standard error is their sd (0.3536) over sqrt(2):

    >>> round(clustered_stderr([1, 1, 1, 0], ["a", "a", "b", "b"]), 6)
    0.25
    >>> round(clustered_stderr([1, 0, 1, 1], ["a", "b", "c", "d"]), 6) == round(mean_stderr([1, 0, 1, 1]), 6)
    True

    References
    ----------
    Miller 2024, arXiv 2411.00640, §2.2, Eq. 4; Cameron, Miller 2015, "A Practitioner's
    Guide to Cluster-Robust Inference", J. Human Resources 50(2), §II.C (CR1).
    """
    y = np.asarray(values, dtype=float)
    if len(y) != len(clusters):
        raise ValueError(f"{len(y)} values but {len(clusters)} cluster labels")
    groups = pd.Series(y - y.mean()).groupby(np.asarray(clusters), sort=False).sum().to_numpy()
    g = len(groups)
    if g < 2:
        return math.nan
    return float(math.sqrt(g / (g - 1) * float((groups ** 2).sum())) / len(y))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one question: ``1 - C(n - c, k) / C(n, k)``.

    Parameters
    ----------
    n : int
        Samples drawn (``n >= k``).
    c : int
        Correct samples among them (``0 <= c <= n``).
    k : int
        Samples allowed (``k >= 1``).

    Raises
    ------
    ValueError
        When ``k`` is outside ``1..n`` or ``c`` outside ``0..n``.

    Examples
    --------
    >>> pass_at_k(4, 1, 1), pass_at_k(4, 1, 2), pass_at_k(4, 1, 4)  # 1/4, 1 - C(3,2)/C(4,2) = 1 - 3/6
    (0.25, 0.5, 1.0)
    >>> pass_at_k(4, 0, 3)
    0.0

    References
    ----------
    Chen et al. 2021, arXiv 2107.03374, §2.1, Eq. 1 and its numerically stable product form
    ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)``.
    """
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def _graded(samples: pd.DataFrame) -> pd.DataFrame:
    frame = samples[["questionId", "sampleIndex", *[c for c in ("correct", "extracted") if c in samples]]].copy()
    if "correct" in frame:  # a missing grade is incorrect
        frame["correct"] = frame["correct"].astype(object).where(frame["correct"].notna(), False).astype(bool)
    else:
        frame["correct"] = False
    return frame


def pass_at_k_table(samples: pd.DataFrame) -> pd.DataFrame:
    """pass@k and its standard error for every k from 1 to the fewest samples any question has.

    Parameters
    ----------
    samples : pandas.DataFrame
        ``questionId, correct`` (one row per sample; a missing grade is incorrect).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``k``: ``passAtK`` (mean over questions) and ``stderr``
        (:func:`mean_stderr` of the per-question estimates); empty without samples.

    Examples
    --------
    Question a: 1 of 4 correct, b: 3 of 4. pass@3 of a is 1 - C(3,3)/C(4,3) = 0.75, of b 1:

    >>> s = pd.DataFrame({"questionId": list("aaaabbbb"), "correct": [1, 0, 0, 0, 1, 1, 0, 1]})
    >>> pass_at_k_table(s)["passAtK"].round(4).tolist()
    [0.5, 0.75, 0.875, 1.0]
    """
    graded = _graded(samples.assign(sampleIndex=0)) if "sampleIndex" not in samples else _graded(samples)
    counts = graded.groupby("questionId", sort=True)["correct"].agg(["size", "sum"])
    if counts.empty:
        return pd.DataFrame({"passAtK": [], "stderr": []}, index=pd.Index([], name="k"))
    rows = []
    for k in range(1, int(counts["size"].min()) + 1):
        per_question = [pass_at_k(int(n), int(c), k) for n, c in zip(counts["size"], counts["sum"], strict=True)]
        rows.append({"k": k, "passAtK": float(np.mean(per_question)), "stderr": mean_stderr(per_question)})
    return pd.DataFrame(rows).set_index("k")


def majority_vote(samples: pd.DataFrame) -> pd.Series:
    """Whether the answer given most often among each question's samples is correct.

    Every correct sample counts as one answer (each equals the gold, however it is
    written: ``1/2`` and ``0.5``); a wrong one counts as its extracted answer, stripped.
    A sample with no answer (``extracted`` missing and not correct) has no vote. Ties go
    to the answer whose first sample (by ``sampleIndex``) came first.

    Parameters
    ----------
    samples : pandas.DataFrame
        ``questionId, sampleIndex, correct, extracted``.

    Returns
    -------
    pandas.Series of bool
        Indexed by question id, sorted.

    Examples
    --------
    >>> s = pd.DataFrame({"questionId": ["a"] * 3 + ["b"] * 3, "sampleIndex": [0, 1, 2] * 2,
    ...                   "correct": [False, True, True, False, False, True],
    ...                   "extracted": ["7", "5", "5.0", "7", "7", "5"]})
    >>> majority_vote(s).to_dict()
    {'a': True, 'b': False}
    """
    graded = _graded(samples).sort_values(["questionId", "sampleIndex"], kind="stable")
    extracted = graded["extracted"] if "extracted" in graded else pd.Series(None, index=graded.index)
    answers = extracted.astype(object).where(extracted.notna(), None).map(
        lambda a: None if a is None or not str(a).strip() else str(a).strip())
    votes = answers.where(~graded["correct"], "\x00correct")  # every correct sample: one answer
    out = {}
    for question, group in votes.groupby(graded["questionId"], sort=True):
        given = group.dropna()
        if given.empty:
            out[question] = False
            continue
        counts = given.value_counts(sort=False)  # in order of first appearance
        out[question] = counts.idxmax() == "\x00correct"
    return pd.Series(out, dtype=bool, name="majority")


#: The keys :func:`sample_statistics` may return, in order (``K``: the samples per question).
STATISTIC_KEYS = ("accuracy", "accuracyStderr", "meanSampleAccuracy", "meanSampleAccuracyStderr",
                  "samplesPerQuestion", "passAt<k>", "passAt<k>Stderr", "majorityAt<K>", "majorityAt<K>Stderr")


def sample_statistics(samples: pd.DataFrame) -> dict:
    """Accuracy with its standard error, mean sample accuracy (clustered SE), pass@k and majority vote.

    Parameters
    ----------
    samples : pandas.DataFrame
        ``questionId, sampleIndex, correct`` and, for the majority vote, ``extracted``;
        one row per stored sample (failures included: they are incorrect).

    Returns
    -------
    dict
        ``accuracy`` (of sample 0) and ``accuracyStderr``; ``meanSampleAccuracy`` and
        ``meanSampleAccuracyStderr`` (clustered by question); ``samplesPerQuestion`` (the
        fewest any question has, K); where K >= 2, ``passAt<k>`` and ``passAt<k>Stderr``
        for k = 1..K, ``majorityAt<K>`` and ``majorityAt<K>Stderr``. NaN where there is
        nothing to average (no sample, fewer than two questions for a standard error).

    Examples
    --------
    Two questions, two samples each (a: right then wrong; b: wrong twice):

    >>> s = pd.DataFrame({"questionId": list("aabb"), "sampleIndex": [0, 1, 0, 1],
    ...                   "correct": [True, False, False, False], "extracted": ["5", "6", "7", "7"]})
    >>> figures = sample_statistics(s)
    >>> figures["accuracy"], round(figures["accuracyStderr"], 4), figures["passAt2"], figures["majorityAt2"]
    (0.5, 0.5, 0.5, 0.5)
    """
    graded = _graded(samples)
    primary = graded[graded["sampleIndex"] == 0]
    correct = graded["correct"].to_numpy(float)
    per_question = graded.groupby("questionId").size()
    k_max = int(per_question.min()) if len(per_question) else 0
    out = {"accuracy": float(primary["correct"].mean()) if len(primary) else math.nan,
           "accuracyStderr": mean_stderr(primary["correct"].to_numpy(float)),
           "meanSampleAccuracy": float(correct.mean()) if len(correct) else math.nan,
           "meanSampleAccuracyStderr": clustered_stderr(correct, graded["questionId"].to_numpy())
           if len(correct) else math.nan,
           "samplesPerQuestion": k_max}
    if k_max >= 2:
        for k, row in pass_at_k_table(graded).iterrows():
            out[f"passAt{k}"], out[f"passAt{k}Stderr"] = float(row["passAtK"]), float(row["stderr"])
        votes = majority_vote(graded).to_numpy(float)
        out[f"majorityAt{k_max}"], out[f"majorityAt{k_max}Stderr"] = float(votes.mean()), mean_stderr(votes)
    return out


def _starts(replicates: Sequence[pd.DataFrame]) -> list[int]:
    """The pooled index of each replicate's sample 0 (replicate r's samples follow replicate r - 1's)."""
    starts, offset = [], 0
    for samples in replicates:
        starts.append(offset)
        offset += int(samples["sampleIndex"].max()) + 1 if len(samples) else 0
    return starts


def replicate_statistics(replicates: Sequence[pd.DataFrame]) -> dict:
    """Figures over replicates of one configuration (``--repeat``): each replicate a run of the same questions.

    Parameters
    ----------
    replicates : sequence of pandas.DataFrame
        Each replicate's samples, as :func:`sample_statistics` takes them.

    Returns
    -------
    dict
        ``replicates`` (R); ``accuracy``, the mean of every replicate's primary samples,
        with ``accuracyStderr`` clustered by question (the replicates' verdicts on one
        question are correlated) and ``accuracyReplicateSd``, the spread of the
        replicates' accuracies (sd, ``ddof=1``); where the pooled samples number two or
        more per question, ``passAt<k>``, ``passAt<k>Stderr``, ``majorityAt<K>`` and its
        stderr over all of them (:func:`sample_statistics` of the pooled samples, replicate
        r's sample i numbered ``r * K + i``).

    Examples
    --------
    Three replicates of two questions, one sample each: q1 right twice, q2 once.

    >>> runs = [pd.DataFrame({"questionId": ["q1", "q2"], "sampleIndex": 0, "correct": c, "extracted": "x"})
    ...         for c in ([True, False], [True, True], [False, False])]
    >>> figures = replicate_statistics(runs)
    >>> figures["replicates"], figures["accuracy"], figures["accuracyReplicateSd"], round(figures["passAt3"], 4)
    (3, 0.5, 0.5, 1.0)
    """
    pooled, accuracies, offset = [], [], 0
    for samples in replicates:
        graded = _graded(samples)
        accuracies.append(float(graded.loc[graded["sampleIndex"] == 0, "correct"].mean()))
        pooled.append(graded.assign(sampleIndex=graded["sampleIndex"] + offset))
        offset += int(graded["sampleIndex"].max()) + 1 if len(graded) else 0
    empty = _graded(pd.DataFrame({"questionId": [], "sampleIndex": [], "correct": []}))
    frame = pd.concat(pooled, ignore_index=True) if pooled else empty
    primaries = pd.concat([p[p["sampleIndex"] == r0] for p, r0 in zip(pooled, _starts(replicates), strict=True)],
                          ignore_index=True) if pooled else empty
    out = {"replicates": len(replicates),
           "accuracy": float(primaries["correct"].mean()) if len(primaries) else math.nan,
           "accuracyStderr": clustered_stderr(primaries["correct"].to_numpy(float), primaries["questionId"].to_numpy())
           if len(primaries) else math.nan,
           "accuracyReplicateSd": float(np.std(accuracies, ddof=1)) if len(accuracies) > 1 else math.nan}
    out.update({k: v for k, v in sample_statistics(frame).items() if k.startswith(("passAt", "majorityAt"))})
    return out


def mcnemar(first: Sequence[bool], second: Sequence[bool]) -> dict:
    """McNemar's test of two paired sets of verdicts (the same questions, two runs).

    Exact (the binomial test of the discordant pairs, two-sided) when they number
    fewer than 25, otherwise the chi-square statistic with continuity correction, as
    ``statsmodels.stats.contingency_tables.mcnemar`` computes them.

    Parameters
    ----------
    first, second : sequence of bool, shape (n,)
        Verdicts of the same n questions, in the same order.

    Returns
    -------
    dict
        ``both`` (right in both), ``onlyFirst``, ``onlySecond``, ``neither``,
        ``statistic`` (the smaller discordant count for the exact test, else chi-square),
        ``pValue`` and ``method`` (``exact binomial`` or ``chi-square, continuity corrected``).

    Raises
    ------
    ValueError
        When the two sequences differ in length.

    Examples
    --------
    >>> result = mcnemar([True] * 6 + [False] * 4, [True] * 2 + [False] * 8)
    >>> result["onlyFirst"], result["onlySecond"], round(result["pValue"], 4)  # 2 * P(X <= 0), X ~ B(4, 1/2)
    (4, 0, 0.125)
    """
    from statsmodels.stats.contingency_tables import mcnemar as statsmodels_mcnemar

    a, b = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
    if len(a) != len(b):
        raise ValueError(f"{len(a)} verdicts against {len(b)}: McNemar's test needs pairs")
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    discordant = table[0][1] + table[1][0]
    exact = discordant < 25
    if discordant == 0:
        statistic, p_value = 0.0, 1.0
    else:
        result = statsmodels_mcnemar(table, exact=exact, correction=True)
        statistic, p_value = float(result.statistic), float(result.pvalue)
    return {"both": table[0][0], "onlyFirst": table[0][1], "onlySecond": table[1][0], "neither": table[1][1],
            "statistic": statistic, "pValue": p_value,
            "method": "exact binomial" if exact else "chi-square, continuity corrected"}
