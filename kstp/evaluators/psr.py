"""Prerequisite satisfaction rate (PSR) of learners, from their answers and the
question prerequisite relation.

PSR asks whether success on a question rests on its prerequisites: for a learner l and
a question q that l answered correctly, PSR(q, K_l) is the share of q's prerequisites
that l also answered correctly. Per learner, **micro** PSR pools all (q, p) pairs,
**macro** PSR averages the per-question ratio; a learner with no scored question has
no PSR. Headline figures are unweighted means over learners. Higher is better for
every metric here.

Two denominators, named after their source (:data:`DENOMINATORS`):

- ``"release"`` (the default): only the prerequisites the learner attempted count, and
  a question none of whose prerequisites was attempted takes no part. This is what the
  authors' released evaluation computes (equal to their ``eval_psr.py`` on frcsub). Their
  released result files do not reproduce the printed Table 2: within 0.01 for 3 of 8
  models, up to .053 off for the others (Qwen2.5-32B macro PSR), and the Table 3 files up
  to .074 (README, paper 1 table); in
  sparse logs (an XES3G5M learner sees about 7 % of the questions) it measures
  coherence on the evidence there is, where the paper's denominator would mostly
  count prerequisites the learner was never shown.
- ``"paper"``: Eq. 2 as printed, ``|Pre(q) ∩ K| / |Pre(q)|``: every prerequisite counts,
  attempted or not; a question with no prerequisite takes no part.

The six-bucket question-level distribution counts the (learner, question) pairs whose
denominator is at least ``min_prerequisites`` (5 by default: the release's filter; the
paper's text has none, which is ``min_prerequisites=1``).

Questions without a concept (no ASSESSES edge) are left out of PSR, as Appendix B does
(``exclude_unannotated``); Eq. 1 gives them no prerequisites anyway. Accuracy counts
them by default (:data:`ACCURACY`, ``accuracy="answered"``): the release's ``eval_acc``
divides the questions a learner answered correctly by all it answered, annotated or
not; ``accuracy="annotated"`` counts the annotated questions only (Appendix B's reading,
kstp's before). The human ability groups rank learners by this accuracy.

Two subsets of questions (:data:`SUBSETS`, ``subset``): ``full``, every annotated
question with the stored prerequisite relation (Table 2, XES-full); ``verified``, only
the concept links a person checked (``ASSESSES.verified = true``): the questions that
have one, with the prerequisite pairs Eq. 1 gives on those links alone, under the rule
the stored relation was derived with (Table 3, XES-verified). Accuracy stays that of the
full set: Table 3's Acc column repeats Table 2's (human learners 0.796 in both), since
the subset changes which prerequisite pairs are scored, not which answers count.

How it is computed: per learner, packed bitsets of the attempted and the solved
questions over the questions that are somebody's prerequisite; per question, its
prerequisite bitset, stored as its non-zero 64-bit words only (prerequisite questions
are numbered by how many questions they are prerequisite of, so each question's set
falls into few words). Every scored (learner, question) pair is then a few ANDs and
popcounts (``np.bitwise_count``). :func:`evaluate_dataset` reads the graph in batches
of learners, so memory stays bounded by the batch, the prerequisite bitsets and one
row per learner. At XES3G5M scale (18,066 learners, 5.4 M answers, 1.2 M
prerequisite pairs) the scoring takes well under a second on one core; ``make
bench`` measures it against the authors' dictionary loop and a dense numpy
formulation, and checks the results equal. ``kst/psr_by_learner.cypher`` is the
release definition as one Cypher aggregation; the parity tests hold them equal.

Uncertainty (issue 34): :func:`bootstrap` gives percentile confidence intervals of the
mean accuracy, micro and macro PSR over learners resampled with replacement (the
learners are the sampled units; their questions are kept together), :func:`summarize`
adds them to each row and, with ``groups``, a row per human ability group (ranked by
accuracy as the knowledge-overlap groups of paper 1, §5.3, :func:`kstp.evaluators.koc.
ability_groups`); :attr:`PsrResult.questions` holds PSR per target question over the
human learners who answered it correctly, the questions whose prerequisites break most
first (:func:`question_table`).

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", §3.3.1, Eq. 2-4, §5.3, Appendix B (arXiv 2609.05245). Efron & Tibshirani
1993, *An Introduction to the Bootstrap*, ch. 13 (percentile intervals).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kstp.errors import UnknownIdError
from kstp.evaluators.psr_intervals import bootstrap
from kstp.graph.store import GraphStore
from kstp.graph.structures import RULES, dataset_questions, question_prerequisite_pairs

__all__ = ["VERSION", "HIGHER_IS_BETTER", "BUCKETS", "DENOMINATORS", "SUBSETS", "ACCURACY", "PrerequisiteBitsets",
           "PsrResult", "last_answers", "score_pairs", "aggregate", "distribution", "summarize", "evaluate_dataset",
           "bootstrap", "question_table", "write_back_figures", "OWN_KINDS"]

VERSION = "2.0"
HIGHER_IS_BETTER = {"accuracy": True, "psrMicro": True, "psrMacro": True}
#: The six buckets of the question-level distribution, as labels.
BUCKETS = ("[0,.2)", "[.2,.4)", "[.4,.6)", "[.6,.8)", "[.8,1)", "1.0")
#: PSR denominators: attempted prerequisites (the authors' release) or all of Pre(q) (Eq. 2).
DENOMINATORS = ("release", "paper")
#: Question subsets: every annotated question (Table 2), or the verified annotations (Table 3).
SUBSETS = ("full", "verified")
#: Which answers accuracy counts: every answered question (the release's eval_acc) or the annotated ones.
ACCURACY = ("answered", "annotated")
#: Learners per graph read in :func:`evaluate_dataset`.
BATCH = 4096
#: Learner kinds that belong to one dataset (the loaders name them inside it: a person of a response file, an
#: ability group), whose figures are kept on their Learner node; any other learner (a model) may answer several
#: datasets, and its figures are kept on the run its answers came from (:func:`write_back_figures`).
OWN_KINDS = ("human", "group")
_COUNTS = [f"pairs {b}" for b in BUCKETS]  # per-learner bucket counts


def _checked_denominator(denominator: str) -> str:
    if denominator not in DENOMINATORS:
        raise ValueError(f"unknown PSR denominator {denominator!r}; choose from {', '.join(DENOMINATORS)}")
    return denominator


def last_answers(answers: pd.DataFrame) -> pd.DataFrame:
    """One answer per (learner, question): the last row wins, as in the authors' release.

    >>> rows = pd.DataFrame({"learnerId": "l", "questionId": ["a", "a"], "correct": [True, False]})
    >>> last_answers(rows)["correct"].tolist()
    [False]
    """
    return answers.drop_duplicates(subset=["learnerId", "questionId"], keep="last")


class PrerequisiteBitsets:
    """The question prerequisite relation of a dataset as packed bitsets, ready to score learners.

    Parameters
    ----------
    questions : sequence of str
        The question ids that answers may name (positions 0..n-1).
    prerequisites : pandas.DataFrame
        Columns ``fromId, toId``: from is a prerequisite of to; both in ``questions``.
        A repeated pair counts once.

    Examples
    --------
    >>> pre = PrerequisiteBitsets(["a", "b", "c"], pd.DataFrame({"fromId": ["a", "b"], "toId": ["c", "c"]}))
    >>> pre.required.tolist()
    [0, 0, 2]
    """

    def __init__(self, questions, prerequisites: pd.DataFrame):
        self.questions = pd.Index(questions)
        n = len(self.questions)
        source = _positions(self.questions, prerequisites["fromId"])
        target = _positions(self.questions, prerequisites["toId"])
        if (source < 0).any() or (target < 0).any():
            bad = prerequisites.iloc[int(np.flatnonzero((source < 0) | (target < 0))[0])]
            raise ValueError(f"prerequisite pair {bad['fromId']!r} -> {bad['toId']!r} names a question "
                             "outside the dataset")
        pair = np.sort(target.astype(np.int64) * n + source)
        pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else pair  # a repeated pair counts once
        target, source = pair // n, pair % n
        # Bit positions: prerequisite questions only, the most widely required first.
        dependants = np.bincount(source, minlength=n)
        order = np.argsort(-dependants, kind="stable")[: int((dependants > 0).sum())]
        self.bit = np.full(n, -1, np.int64)
        self.bit[order] = np.arange(len(order))
        self.words = max(1, -(-len(order) // 64))
        self.required = np.bincount(target, minlength=n).astype(np.int64)  # |Pre(q)|
        # Non-zero words of each question's prerequisite set (CSR over questions): the
        # pairs sorted by (target, word); distinct bits of one word sum to their OR.
        key = target * self.words + self.bit[source] // 64
        order = np.argsort(key, kind="stable")
        key = key[order]
        value = np.left_shift(np.uint64(1), (self.bit[source[order]] % 64).astype(np.uint64))
        firsts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        start = np.searchsorted(key[firsts] // self.words, np.arange(n + 1))
        #: Per question: its number of non-zero words, their indices and values (padded
        #: with word 0 and value 0 up to the longest).
        self.word_count = np.diff(start)
        width = max(1, int(self.word_count.max())) if n else 1
        slot = np.arange(len(firsts)) - np.repeat(start[:-1], self.word_count)
        row = np.repeat(np.arange(n), self.word_count)
        self.word_index = np.zeros((n, width), np.int64)
        self.word_value = np.zeros((n, width), np.uint64)
        self.word_index[row, slot] = key[firsts] % self.words
        self.word_value[row, slot] = np.add.reduceat(value, firsts) if len(key) else np.zeros(0, np.uint64)

    def learner_bits(self, learner: np.ndarray, question: np.ndarray, n_learners: int) -> np.ndarray:
        """Packed bitsets, shape (n_learners, words) uint64, of the prerequisite questions answered."""
        bit = self.bit[question]
        keep = bit >= 0
        dense = np.zeros((n_learners, self.words * 64), bool)
        dense[learner[keep], bit[keep]] = True
        return np.packbits(dense, axis=1, bitorder="little").view(np.uint64)

    def score(self, learner: np.ndarray, question: np.ndarray, correct: np.ndarray, n_learners: int) -> dict:
        """Score every (learner, correctly answered question with a prerequisite).

        Parameters
        ----------
        learner, question : numpy.ndarray of int
            Learner codes in 0..n_learners-1 and question positions, one per answer;
            at most one answer per (learner, question).
        correct : numpy.ndarray of bool

        Returns
        -------
        dict of numpy.ndarray
            ``learner``, ``question`` (codes), ``required`` (``|Pre(q)|``), ``observed``
            (attempted prerequisites) and ``satisfied`` (correctly answered ones), one
            entry per pair, in answer order.
        """
        solved = correct & (self.required[question] > 0)
        pl, pq = learner[solved], question[solved]
        attempted = self.learner_bits(learner, question, n_learners).ravel()  # learner * words + word
        right = self.learner_bits(learner[correct], question[correct], n_learners).ravel()
        observed, satisfied = np.zeros(len(pl), np.int64), np.zeros(len(pl), np.int64)
        count = self.word_count[pq]
        # Pairs grouped by how many words their question's prerequisite set spans: each
        # group is one rectangular gather, AND, popcount and row sum.
        for k in np.unique(count):
            chosen = np.flatnonzero(count == k)
            q = pq[chosen]
            rows = (pl[chosen] * self.words)[:, None] + self.word_index[q, :k]
            mask = self.word_value[q, :k]
            observed[chosen] = np.bitwise_count(attempted[rows] & mask).sum(axis=1, dtype=np.int64)
            satisfied[chosen] = np.bitwise_count(right[rows] & mask).sum(axis=1, dtype=np.int64)
        return {"learner": pl, "question": pq, "required": self.required[pq],
                "observed": observed, "satisfied": satisfied}


def _denominator(pairs, denominator: str) -> np.ndarray:
    return np.asarray(pairs["observed" if _checked_denominator(denominator) == "release" else "required"])


def _buckets(satisfied: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    # Integer comparison, 5 * s < k * d, avoids floating-point bucket edges.
    return np.where(satisfied == denominator, 5, np.minimum((5 * satisfied) // np.maximum(denominator, 1), 4))


def _learner_table(n: int, learner: np.ndarray, correct: np.ndarray, pairs, denominator: str,
                   min_prerequisites: int) -> dict[str, np.ndarray]:
    """Per learner code 0..n-1: answered, correct, accuracy, micro, macro, scored, pairs, bucket counts."""
    answered = np.bincount(learner, minlength=n)
    right = np.bincount(learner, weights=correct, minlength=n).astype(np.int64)
    den = _denominator(pairs, denominator)
    scored = den > 0
    pl, sat, den = np.asarray(pairs["learner"])[scored], np.asarray(pairs["satisfied"])[scored], den[scored]
    n_scored = np.bincount(pl, minlength=n)
    den_sum = np.bincount(pl, weights=den, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        table = {"answered": answered, "correct": right, "accuracy": right / answered,
                 "psrMicro": np.bincount(pl, weights=sat, minlength=n) / den_sum,
                 "psrMacro": np.bincount(pl, weights=sat / den, minlength=n) / n_scored,
                 "questionsScored": n_scored, "pairs": den_sum.astype(np.int64)}
    chosen = den >= min_prerequisites
    counts = np.bincount(pl[chosen] * len(BUCKETS) + _buckets(sat[chosen], den[chosen]),
                         minlength=n * len(BUCKETS)).reshape(n, len(BUCKETS))
    table.update({column: counts[:, k] for k, column in enumerate(_COUNTS)})
    return table


def _positions(index: pd.Index, ids: pd.Series) -> np.ndarray:
    """Positions of ``ids`` in ``index`` (-1 where absent); a categorical is looked up once per category."""
    if isinstance(ids.dtype, pd.CategoricalDtype):
        codes = ids.cat.codes.to_numpy()
        return np.where(codes >= 0, index.get_indexer(ids.cat.categories)[codes], -1)
    return index.get_indexer(ids) if len(ids) else np.zeros(0, np.int64)


def _codes(learner_keys: pd.Series, question: np.ndarray, correct: np.ndarray
           ) -> tuple[np.ndarray, pd.Index, np.ndarray, np.ndarray]:
    """Learner codes and their keys, question positions and correctness of the answers to known
    questions (``question >= 0``), the last answer per (learner, question) kept."""
    learner, keys = pd.factorize(learner_keys)
    keys = pd.Index(np.asarray(keys, dtype=object if keys.dtype.kind in "OU" else keys.dtype))
    known = question >= 0  # an answer to a question outside the dataset is not its data
    learner, question, correct = learner[known], question[known], correct[known]
    n_questions = int(question.max()) + 1 if len(question) else 0
    seen = np.zeros((len(keys), n_questions), bool)
    seen[learner, question] = True
    if seen.sum() != len(learner):  # a repeated answer: the last one wins
        keep = ~pd.Series(learner.astype(np.int64) * n_questions + question).duplicated(keep="last").to_numpy()
        learner, question, correct = learner[keep], question[keep], correct[keep]
    return learner, keys, question, correct


def score_pairs(answers: pd.DataFrame, prerequisites: pd.DataFrame) -> pd.DataFrame:
    """Score every (learner, correctly answered question) that has a prerequisite.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``learnerId, questionId, correct`` (bool); a repeated (learner,
        question) keeps its last row (:func:`last_answers`).
    prerequisites : pandas.DataFrame
        Columns ``fromId, toId``: from is a prerequisite of to.

    Returns
    -------
    pandas.DataFrame
        Columns ``learnerId, questionId, required, observed, satisfied`` (ints):
        ``|Pre(q)|``, the prerequisites the learner attempted, and how many of them were
        answered correctly. A pair with ``observed == 0`` is scored only by the
        paper's denominator.

    Examples
    --------
    a -> c and b -> c; the learner got a and c right and b wrong.

    >>> ans = pd.DataFrame({"learnerId": "l", "questionId": ["a", "b", "c"], "correct": [True, False, True]})
    >>> pre = pd.DataFrame({"fromId": ["a", "b"], "toId": ["c", "c"]})
    >>> score_pairs(ans, pre).values.tolist()
    [['l', 'c', 2, 2, 1]]
    """
    questions = pd.Index(pd.unique(pd.concat([answers["questionId"], prerequisites["fromId"],
                                              prerequisites["toId"]])))
    learner, learners, question, correct = _codes(answers["learnerId"], _positions(questions, answers["questionId"]),
                                                  answers["correct"].to_numpy(bool))
    pairs = PrerequisiteBitsets(questions, prerequisites).score(learner, question, correct, len(learners))
    return pd.DataFrame({"learnerId": learners[pairs["learner"]], "questionId": questions[pairs["question"]],
                         "required": pairs["required"], "observed": pairs["observed"],
                         "satisfied": pairs["satisfied"]})


def aggregate(answers: pd.DataFrame, pairs: pd.DataFrame, denominator: str = "release",
              min_prerequisites: int = 5) -> pd.DataFrame:
    """Per-learner accuracy, micro and macro PSR (Eq. 3-4) and bucket counts.

    Parameters
    ----------
    answers : pandas.DataFrame
        As for :func:`score_pairs`.
    pairs : pandas.DataFrame
        The output of :func:`score_pairs`.
    denominator : {"release", "paper"}
        Attempted prerequisites only, or all of Pre(q) (Eq. 2); see the module notes.
    min_prerequisites : int
        Denominator a pair needs to be counted in the ``pairs [..)`` bucket columns.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``learnerId``: ``answered``, ``correct``, ``accuracy`` in [0, 1],
        ``psrMicro`` and ``psrMacro`` in [0, 1] (NaN for a learner with no scored
        question), ``questionsScored``, ``pairs`` (the summed denominators), and the
        six ``pairs [..)`` counts of the distribution.

    Raises
    ------
    ValueError
        On an unknown denominator.

    Examples
    --------
    >>> ans = pd.DataFrame({"learnerId": "l", "questionId": ["a", "b", "c"], "correct": [True, False, True]})
    >>> pairs = pd.DataFrame({"learnerId": ["l"], "questionId": ["c"], "required": [3], "observed": [2],
    ...                       "satisfied": [1]})
    >>> aggregate(ans, pairs).loc["l", ["accuracy", "psrMicro", "psrMacro"]].round(3).tolist()
    [0.667, 0.5, 0.5]
    >>> aggregate(ans, pairs, "paper").loc["l", ["psrMicro", "pairs"]].round(3).tolist()
    [0.333, 3.0]
    """
    answers = last_answers(answers)
    learner, learners = pd.factorize(answers["learnerId"])
    coded = {"learner": pd.Index(learners).get_indexer(pairs["learnerId"]),
             **{c: pairs[c].to_numpy(np.int64) for c in ("required", "observed", "satisfied")}}
    table = _learner_table(len(learners), learner, answers["correct"].to_numpy(bool), coded, denominator,
                           min_prerequisites)
    return pd.DataFrame(table, index=pd.Index(learners, name="learnerId"))


def distribution(pairs: pd.DataFrame, min_prerequisites: int = 5, denominator: str = "release") -> pd.Series:
    """Question-level PSR distribution over the six buckets, as fractions.

    Counts the scored (learner, question) pairs whose denominator is at least
    ``min_prerequisites``; bucket k holds psr in [k/5, (k+1)/5) for k < 5, and exactly
    1.0 is its own bucket. All NaN when no pair qualifies (the shares are undefined).
    ``pairs`` needs ``satisfied`` and the denominator's column (``observed`` or
    ``required``).

    Examples
    --------
    >>> pairs = pd.DataFrame({"observed": [5, 5, 6, 2], "satisfied": [5, 4, 0, 0]})
    >>> distribution(pairs).tolist()
    [0.3333333333333333, 0.0, 0.0, 0.0, 0.3333333333333333, 0.3333333333333333]
    """
    den = _denominator(pairs, denominator) if len(pairs) else np.zeros(0, np.int64)
    chosen = den >= max(min_prerequisites, 1)
    return _shares(np.bincount(_buckets(np.asarray(pairs["satisfied"])[chosen], den[chosen]) if chosen.any()
                               else np.zeros(0, np.int64), minlength=len(BUCKETS)))


def _shares(counts: np.ndarray) -> pd.Series:
    total = counts.sum()
    return pd.Series(counts / total if total else np.full(len(BUCKETS), np.nan), index=list(BUCKETS))


@dataclass
class PsrResult:
    """Everything PSR computes for one dataset.

    ``learners`` is :func:`aggregate`'s table plus a ``kind`` column (human, model,
    group); its ``pairs [..)`` columns hold each learner's distribution counts.
    """

    dataset: str
    learners: pd.DataFrame
    min_prerequisites: int
    denominator: str = "release"
    subset: str = "full"
    #: Per target question, over the human learners who answered it correctly: ``learners`` scored,
    #: ``satisfied`` and ``denominator`` sums, ``ratioSum`` and ``broken`` (scored with PSR < 1); see
    #: :func:`question_table`.
    questions: pd.DataFrame | None = None
    #: Which answers the accuracy counts (:data:`ACCURACY`).
    accuracy: str = "answered"

    def summary(self, groups: bool = False, bootstrap: int = 0, seed: int = 0, level: float = 0.95,
                progress: Callable[[int, int], None] | None = None) -> list[dict]:
        """Rows in the shape of paper 1 Table 2: all human learners as one row, each model as its own;
        see :func:`summarize` for ``groups`` (ability-group rows), ``bootstrap`` (confidence intervals) and
        ``progress``."""
        return summarize(self, groups, bootstrap, seed, level, progress)


def _row(result: PsrResult, label: str, learners: pd.DataFrame) -> dict:
    counts = learners[_COUNTS].to_numpy(np.int64).sum(axis=0)
    row = {"dataset": result.dataset, "learner": label, "learners": len(learners),
           "learnersWithPsr": int(learners["psrMicro"].notna().sum()),
           "accuracy": float(learners["accuracy"].mean()) if len(learners) else float("nan"),
           "psrMicro": float(learners["psrMicro"].mean()), "psrMacro": float(learners["psrMacro"].mean()),
           "pairsInDistribution": int(counts.sum()), "minPrerequisites": result.min_prerequisites,
           # the mean denominator of a scored (learner, question): §5.1's "prerequisites per target question"
           "prerequisitesPerTarget": float(learners["pairs"].sum() / learners["questionsScored"].sum())
           if learners["questionsScored"].sum() else float("nan"),
           "denominator": result.denominator, "subset": result.subset, "accuracyQuestions": result.accuracy}
    row.update({f"psr {b}": float(v) for b, v in _shares(counts).items()})
    return row


def summarize(result: PsrResult, groups: bool = False, bootstrap_samples: int = 0, seed: int = 0,
              level: float = 0.95, progress: Callable[[int, int], None] | None = None) -> list[dict]:
    """Mean accuracy, micro and macro PSR over learners, and the six-bucket distribution.

    One row for all human learners (label ``human learners``), then one row per model
    learner (label: its id). Learners without a PSR (no scored question) count in
    accuracy only; the number with a PSR is reported beside it.

    Parameters
    ----------
    groups : bool
        Also one row per human ability group (label ``human learners: <group>``, with
        ``group``): learners ranked by accuracy and cut at rank shares 0, .3, .6, .9 into
        low, medium and high, the top tenth in none (paper 1, §5.3;
        :func:`kstp.evaluators.koc.ability_groups`).
    bootstrap_samples : int
        With 2 or more, every row gets percentile confidence intervals over its learners
        (:func:`bootstrap`; a model's row, one learner, has none).
    seed, level : int, float
        The bootstrap's seed and confidence level.
    progress : callable, optional
        ``progress(done, total)``: resamples drawn over every row's bootstrap, called about once a
        second while a long bootstrap runs (:func:`bootstrap`'s ``progress``).
    """
    learners = result.learners
    rows = []
    humans = learners[~learners["kind"].isin(["model", "group"])]  # ability groups summarise humans: not again
    parts = [("human learners", None, humans)] if len(humans) else []
    parts += [(model, None, learners.loc[[model]]) for model in learners.index[learners["kind"] == "model"]]
    if groups and len(humans):
        from kstp.evaluators.koc import GROUP_CUTS, GROUP_NAMES, ability_groups

        membership = ability_groups(humans["accuracy"], GROUP_CUTS, GROUP_NAMES)
        parts += [(f"human learners: {name}", name, humans.loc[membership.index[membership == name]])
                  for name in GROUP_NAMES]
    resampled = [members for _, _, members in parts if len(members) >= 2]  # one learner: nothing to resample
    total, before = bootstrap_samples * len(resampled), 0
    for label, group, members in parts:
        row = _row(result, label, members)
        if groups:
            row["group"] = group
        if bootstrap_samples:
            tell = None if progress is None else (lambda done, at=before: progress(at + done, total))
            row.update(bootstrap(members, bootstrap_samples, seed, level, tell))
            before += bootstrap_samples if len(members) >= 2 else 0
        rows.append(row)
    return rows


def question_table(result: PsrResult) -> pd.DataFrame:
    """PSR per target question over the human learners who answered it correctly, most broken first.

    Columns: ``questionId``; ``learners``, how many answered it correctly with at least one
    prerequisite counted (under the result's denominator); ``psrMicro``, their satisfied
    over counted prerequisites, pooled; ``psrMacro``, the mean of their ratios; ``broken``,
    the share of them missing at least one prerequisite; ``prerequisitesPerLearner``, the
    mean denominator. Sorted by ``psrMacro``, then ``learners`` (more first), then id.

    Examples
    --------
    >>> questions = pd.DataFrame({"learners": [2, 0], "satisfied": [3, 0], "denominator": [4, 0],
    ...                           "ratioSum": [1.5, 0.0], "broken": [1, 0]}, index=pd.Index(["q5", "q2"]))
    >>> question_table(PsrResult("d", pd.DataFrame(), 5, questions=questions)).values.tolist()
    [['q5', 2, 0.75, 0.75, 0.5, 2.0]]
    """
    q = result.questions
    if q is None or q.empty:
        return pd.DataFrame(columns=["questionId", "learners", "psrMicro", "psrMacro", "broken",
                                     "prerequisitesPerLearner"])
    q = q[q["learners"] > 0]
    table = pd.DataFrame({"questionId": q.index.to_numpy(), "learners": q["learners"].to_numpy(np.int64),
                          "psrMicro": (q["satisfied"] / q["denominator"]).to_numpy(),
                          "psrMacro": (q["ratioSum"] / q["learners"]).to_numpy(),
                          "broken": (q["broken"] / q["learners"]).to_numpy(),
                          "prerequisitesPerLearner": (q["denominator"] / q["learners"]).to_numpy()})
    return table.sort_values(["psrMacro", "learners", "questionId"], ascending=[True, False, True],
                             ignore_index=True)


def _question_sums(n_questions: int, scored: dict, denominator: str, human: np.ndarray) -> np.ndarray:
    """(questions, 5) sums over the scored pairs of human learners: learners, satisfied, denominator,
    ratio, broken."""
    den = _denominator(scored, denominator)
    keep = (den > 0) & human[np.asarray(scored["learner"])]
    q, sat, den = np.asarray(scored["question"])[keep], np.asarray(scored["satisfied"])[keep], den[keep]
    return np.stack([np.bincount(q, weights=w, minlength=n_questions)
                     for w in (np.ones(len(q)), sat, den, sat / np.maximum(den, 1), (sat < den).astype(float))],
                    axis=1)


def evaluate_dataset(store: GraphStore, dataset: str, min_prerequisites: int = 5, write_back: bool = True,
                     denominator: str = "release", exclude_unannotated: bool = True,
                     batch: int = BATCH, subset: str = "full", accuracy: str = "answered") -> PsrResult:
    """Compute PSR and accuracy for every learner of ``dataset``; write them on the Learners.

    Reads the question prerequisites once (``question_prerequisite_keys``), then the
    answers in batches of ``batch`` learners (``answer_codes_in_range``, packed, or
    ``answer_keys_in_range`` where the node keys do not fit the packing, over the id ranges of
    ``dataset_learners``, :meth:`GraphStore.frame_batches`), scores each
    batch with :class:`PrerequisiteBitsets` and keeps one row per learner. Writes the
    figures back with :func:`write_back_figures` (not with ``write_back=False``): on the
    Learner node of a learner of the dataset, on the Run of a model.

    Parameters
    ----------
    denominator : {"release", "paper"}
        See the module notes; ``release`` by default.
    exclude_unannotated : bool
        Leave questions without a concept out of PSR (Appendix B).
    batch : int
        Learners per graph read; bounds memory to about batch x questions / 4 bytes.
    subset : {"full", "verified"}
        ``verified``: PSR over the prerequisite pairs the verified concept links give,
        accuracy over the full set (see the module notes; Table 3).
    accuracy : {"answered", "annotated"}
        ``answered`` (default, the release's ``eval_acc``): accuracy over every question
        the learner answered; ``annotated``: over those with a concept only. A learner
        counts when its accuracy has a question.

    Raises
    ------
    UnknownIdError
        When the dataset is not in the graph; for ``verified``, when it has no verified
        concept link or no derived question prerequisites.
    ValueError
        On an unknown denominator, subset or accuracy.
    """
    _checked_denominator(denominator)
    if subset not in SUBSETS:
        raise ValueError(f"unknown question subset {subset!r}; choose from {', '.join(SUBSETS)}")
    if accuracy not in ACCURACY:
        raise ValueError(f"unknown accuracy {accuracy!r}; choose from {', '.join(ACCURACY)}")
    questions = pd.Index(dataset_questions(store, dataset)["questionId"])  # raises on an unknown dataset
    # The bulk reads name questions and learners by the engine's node keys (offsets on
    # Ladybug, cheaper to read than ids): position i of ``keys`` is the key of questions[i].
    keyed = store.frame("question_keys", {"dataset": dataset})
    keys = pd.Index(keyed.set_index("questionId")["questionKey"].reindex(questions).to_numpy())
    counted = np.ones(len(questions), bool)  # the questions PSR scores
    annotated = store.frame("question_concepts", {"dataset": dataset})["questionId"]
    in_accuracy = np.ones(len(questions), bool)
    if accuracy == "annotated":
        in_accuracy[:] = False
        in_accuracy[questions.get_indexer(annotated)] = True
    if subset == "verified":  # only the pairs change: a question off the verified links has no prerequisite
        pairs = _verified(store, dataset, pd.Series(keys, index=questions))
    else:
        pairs = store.frame("question_prerequisite_keys", {"dataset": dataset}, categorical=True)  # 1.2 M at XES
    bits = PrerequisiteBitsets(keys, pairs.rename(columns={"fromKey": "fromId", "toKey": "toId"}))
    if exclude_unannotated:
        counted[:] = False
        counted[questions.get_indexer(annotated)] = True
    # As one record of lists on Neo4j (0.2 s for 18,066 learners, 1 s as records); ids back to plain strings.
    roster = store.frame("dataset_learners", {"dataset": dataset}, categorical=True).astype(
        {"learnerId": object, "kind": object})
    learner_of_key = pd.Series(roster["learnerId"].to_numpy(), index=roster["learnerKey"])
    parts = []
    sums = np.zeros((len(questions), 5))
    human_key = pd.Series((roster["kind"] == "human").to_numpy(), index=roster["learnerKey"])
    packable = _packable(roster["learnerKey"], keys)
    for answers in _answer_batches(store, dataset, roster["learnerId"].tolist(), batch, packable):
        learner, learners, question, correct = _codes(answers["learnerKey"], _positions(keys, answers["questionKey"]),
                                                      answers["correct"].to_numpy(bool))
        keep, counts = counted[question], in_accuracy[question]
        scored = bits.score(learner[keep], question[keep], correct[keep], len(learners))
        sums += _question_sums(len(questions), scored, denominator,
                               human_key.reindex(learners).fillna(False).to_numpy(bool))
        table = pd.DataFrame(_learner_table(len(learners), learner[counts], correct[counts], scored, denominator,
                                            min_prerequisites),
                             index=pd.Index(learner_of_key.loc[learners].to_numpy(), name="learnerId"))
        parts.append(table[table["answered"] > 0])
    columns = ["answered", "correct", "accuracy", "psrMicro", "psrMacro", "questionsScored", "pairs", *_COUNTS]
    learners = pd.concat(parts) if parts else pd.DataFrame(columns=columns, index=pd.Index([], name="learnerId"))
    learners["kind"] = roster.set_index("learnerId")["kind"].reindex(learners.index).fillna("human").to_numpy()
    if write_back and len(learners):
        write_back_figures(store, dataset, learners)
    per_question = pd.DataFrame(sums, index=pd.Index(questions, name="questionId"),
                                columns=["learners", "satisfied", "denominator", "ratioSum", "broken"])
    per_question[["learners", "broken"]] = per_question[["learners", "broken"]].astype(np.int64)
    return PsrResult(dataset, learners, min_prerequisites, denominator, subset, per_question, accuracy)


def write_back_figures(store: GraphStore, dataset: str, learners: pd.DataFrame) -> dict[str, int]:
    """Keep each learner's accuracy and PSR on ``dataset`` where they stay ``dataset``'s.

    A learner of :data:`OWN_KINDS` belongs to the dataset: ``accuracy``, ``psrMicro``, ``psrMacro``
    and ``nAnswered`` go on its Learner node. A model answers several datasets, so figures on
    its node would be those of the dataset evaluated last (issue 42): they go on the Run whose
    answers they score, as ``psrMicro``, ``psrMacro`` and ``psrAnswers`` (how many of the
    model's answers on the dataset were scored, all from that run), and the model's node keeps
    none. Where the model's answers on the dataset come from several runs (a later run
    answered some questions again) or from none, no run gets them: they are no one run's.

    Parameters
    ----------
    store : GraphStore
    dataset : str
    learners : pandas.DataFrame
        :attr:`PsrResult.learners` (indexed by ``learnerId``; ``kind``, ``accuracy``,
        ``psrMicro``, ``psrMacro``, ``answered``).

    Returns
    -------
    dict
        ``learners`` (Learner nodes given figures), ``runs`` (runs given a model's figures)
        and ``unplaced`` (models whose figures no single run holds).
    """
    own = learners[learners["kind"].isin(OWN_KINDS)]
    others = learners[~learners["kind"].isin(OWN_KINDS)]
    if len(own):
        store.write_nodes("Learner", pd.DataFrame({
            "id": own.index, "accuracy": own["accuracy"].to_numpy(float),
            "psrMicro": own["psrMicro"].to_numpy(float), "psrMacro": own["psrMacro"].to_numpy(float),
            "nAnswered": own["answered"].to_numpy(np.int64)}))
    rows = []
    for model in others.index:
        answers = store.frame("learner_answers", {"learnerId": model})
        runs = answers.loc[answers["datasetId"] == dataset, "runId"]
        if len(runs) and runs.notna().all() and runs.nunique() == 1:
            rows.append({"id": str(runs.iloc[0]), "psrMicro": float(others.at[model, "psrMicro"]),
                         "psrMacro": float(others.at[model, "psrMacro"]), "psrAnswers": len(runs)})
    found = store.nodes("Run", [r["id"] for r in rows]) if rows else pd.DataFrame()
    known = set(found["id"]) if len(found) else set()
    rows = [r for r in rows if r["id"] in known]  # a run deleted since its answers were written holds nothing
    if len(others):  # figures an older kstp left on a model's node are another dataset's as often as this one's
        store.write_nodes("Learner", pd.DataFrame({"id": others.index, "accuracy": None, "psrMicro": None,
                                                   "psrMacro": None, "nAnswered": None}))
    if rows:
        store.write_nodes("Run", pd.DataFrame(rows))
    return {"learners": len(own), "runs": len(rows), "unplaced": len(others) - len(rows)}


def _packable(learner_keys: pd.Series, question_keys: pd.Index) -> bool:
    """Whether the node keys fit ``answer_codes_in_range``'s packing: integers, learners below
    2^30 and questions below 2^32 (a Neo4j node id or a Ladybug offset; always so at XES3G5M scale)."""
    fits = [(pd.api.types.is_integer_dtype(k.dtype) and (len(k) == 0 or (k.min() >= 0 and k.max() < 2**bits)))
            for k, bits in ((learner_keys, 30), (question_keys, 32))]
    return all(fits)


def _answer_batches(store: GraphStore, dataset: str, learner_ids: list[str], batch: int,
                    packed: bool) -> Iterator[pd.DataFrame]:
    """The answers of ``dataset`` as ``learnerKey, questionKey, correct``, ``batch`` learners at a time.

    Where the keys fit (``packed``, :func:`_packable`), ``answer_codes_in_range`` sends each
    answer packed into one integer, decoded here: at 5.4 M answers 0.8 s instead of 1.3 s on
    LadybugDB, about 5 s instead of 6-8 s on Neo4j.
    """
    if not packed:
        yield from store.frame_batches("answer_keys_in_range", {"dataset": dataset}, learner_ids, batch)
        return
    for codes in store.frame_batches("answer_codes_in_range", {"dataset": dataset}, learner_ids, batch):
        code = codes["answer"].to_numpy(np.int64)
        yield pd.DataFrame({"learnerKey": code >> 33, "questionKey": (code >> 1) & 0xFFFFFFFF,
                            "correct": (code & 1).astype(bool)})


def _verified(store: GraphStore, dataset: str, key_of: pd.Series) -> pd.DataFrame:
    """Eq. 1's pairs on the verified concept links alone, as node keys."""
    links = store.frame("verified_question_concepts", {"dataset": dataset})
    if links.empty:
        raise UnknownIdError(f"dataset {dataset!r} has no verified concept link (ASSESSES.verified); ingest items "
                             "with \"verified\": true, or use --subset full")
    rules = store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True)["rule"].dropna().unique()
    if len(rules) == 0:
        raise UnknownIdError(f"dataset {dataset!r} has no derived question prerequisites; derive them first "
                             "(kstp derive question-prerequisites)")
    if rules[0] not in RULES:
        raise UnknownIdError(f"dataset {dataset!r}'s question prerequisites are {rules[0]} (kstp kst import), not "
                             "derived by Eq. 1; the verified subset derives them again from the verified concept "
                             "links: derive them (kstp derive question-prerequisites) or use --subset full")
    closure = store.frame("dataset_concept_closure", {"dataset": dataset})
    pairs = question_prerequisite_pairs(links, closure, rules[0])
    return pd.DataFrame({"fromKey": key_of.loc[pairs["fromId"]].to_numpy(),
                         "toKey": key_of.loc[pairs["toId"]].to_numpy()})
