"""Knowledge overlap coefficient (KOC) between learners: models and human ability groups.

Two learners with knowledge states K1 and K2 (the questions each answered correctly)
overlap by ``KOC(K1, K2) = |K1 ∩ K2| / min(|K1|, |K2|)``: 1 when the smaller state lies
inside the larger. Even unrelated learners overlap by chance: if the weaker learner's
state were a random subset of the questions, the expected KOC would be the stronger
learner's accuracy p_max, so KOC_norm = (KOC - p_max) / (1 - p_max) is 0 at chance level,
1 for nested states and negative for less overlap than chance (paper 1, Eq. 6-7).

Every figure of a pair is computed on the questions **both** learners answered (the
shared set Q): both states are restricted to Q and ``p_max = max(|K1 ∩ Q|, |K2 ∩ Q|) / |Q|``.
Edge cases, each reported as a missing value (NaN, ``null`` in JSON) rather than a
number that would read as evidence:

- no shared question: every figure is undefined;
- an empty state on Q (``min(|K1|, |K2|) = 0``): KOC is 0/0, undefined;
- identical non-empty states: KOC = 1 and KOC_norm = 1 (unless p_max = 1);
- p_max = 1 (the stronger learner answered every shared question correctly): the weaker
  state is necessarily inside the stronger, KOC = 1 carries no information and KOC_norm
  is 0/0, undefined.

Human learners enter as **ability groups**: students ranked by accuracy over the
questions they answered, cut at rank shares (default 0-30 % low, 30-60 % medium,
60-90 % high, the top 10 % left out, as in the paper); a group's knowledge state holds
the questions whose mean accuracy within the group exceeds 0.5. Groups are stored as
``(:Learner {kind: "group", members, memberAccuracy})`` with one
``ANSWERED {correct, meanCorrect}`` edge per question a member answered, so they can be
queried and compared like any other learner. Higher KOC means more shared knowledge
structure; neither figure is better or worse in itself.

Which questions count (``questions``): ``"annotated"`` (default, paper 1 Appendix B)
leaves out the questions that assess no concept (no ``ASSESSES`` link) from the group
states, the shared sets and the diagonal; ``"all"`` keeps every question of the dataset
(what kstp did before). Learners are ranked into groups by their accuracy over every
question they attempted, whichever questions count, as the paper's groups and
``evaluate psr --groups`` (its default ``--accuracy answered``) rank them: one rule for
both. The release has no KOC code to compare with.

Matrix order (Figures 4 and 5 of the paper): the model block first (upper left), then
the human block (lower right), each from weaker to stronger.

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", §3.3.2 Eq. 6-7, §5.3, Figures 4-5 and Appendix B (arXiv 2609.05245).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kstp.errors import KstpError, UnknownIdError
from kstp.graph.store import GraphStore
from kstp.graph.structures import dataset_answers, dataset_questions

__all__ = ["VERSION", "HIGHER_IS_BETTER", "GROUP_CUTS", "GROUP_NAMES", "STATE_THRESHOLD", "QUESTION_SETS",
           "score_pair", "counted_questions", "learner_counts", "ability_groups", "group_states", "store_groups",
           "aggregate", "KocResult", "evaluate"]

VERSION = "1.1"
#: Overlap describes agreement between learners; more overlap is "more shared structure".
HIGHER_IS_BETTER = {"koc": True, "kocNorm": True}
#: Rank shares that bound the ability groups (paper 1, §5.3): [0, .3), [.3, .6), [.6, .9).
GROUP_CUTS = (0.0, 0.3, 0.6, 0.9)
GROUP_NAMES = ("low", "medium", "high")
#: A question is in a group's knowledge state when the group's mean accuracy on it exceeds this.
STATE_THRESHOLD = 0.5
#: Which questions count: those with a concept (paper 1, Appendix B; the default) or all.
QUESTION_SETS = ("annotated", "all")


def counted_questions(store: GraphStore, dataset: str, questions: str = "annotated") -> list[str]:
    """The question ids of ``dataset`` that KOC counts.

    Parameters
    ----------
    questions : {"annotated", "all"}
        ``annotated``: only questions with at least one ``ASSESSES`` concept (paper 1,
        Appendix B); ``all``: every question of the dataset.

    Returns
    -------
    list of str
        Sorted question ids.

    Raises
    ------
    UnknownIdError
        When the dataset is not in the graph.
    KstpError
        On an unknown ``questions`` value, or ``annotated`` when no question has a concept.
    """
    if questions not in QUESTION_SETS:
        raise KstpError(f"questions={questions!r} is not one of {', '.join(QUESTION_SETS)}")
    every = dataset_questions(store, dataset)["questionId"]
    if questions == "all":
        return sorted(every)
    annotated = sorted(set(store.frame("question_concepts", {"dataset": dataset})["questionId"]))
    if not annotated:
        raise KstpError(f"no question of dataset {dataset!r} assesses a concept, so Appendix B leaves none to "
                        "compare; annotate them (kstp annotate concepts) or count every question (--questions all)")
    return annotated


def learner_counts(store: GraphStore, dataset: str, question_ids: list[str]) -> pd.DataFrame:
    """Per learner of ``dataset``: questions answered and answered correctly among ``question_ids``.

    Returns
    -------
    pandas.DataFrame
        Indexed by learner id: ``answered``, ``correct`` (int) and ``accuracy`` in [0, 1]
        (NaN for a learner who answered none of them).
    """
    answers = dataset_answers(store, dataset).astype({"learnerId": object, "questionId": object})
    answers = answers[answers["questionId"].isin(set(question_ids))]
    counts = answers.assign(correct=answers["correct"].fillna(False).astype(bool)).groupby("learnerId")["correct"] \
        .agg(answered="size", correct="sum").astype(np.int64)
    counts["accuracy"] = counts["correct"] / counts["answered"]
    return counts


def score_pair(shared: int, size_a: int, size_b: int, overlap: int) -> tuple[float, float, float]:
    """KOC, KOC_norm and p_max of one pair of learners, from counts on their shared questions.

    Parameters
    ----------
    shared : int
        ``|Q|``, questions both learners answered, >= 0.
    size_a, size_b : int
        ``|K1 ∩ Q|`` and ``|K2 ∩ Q|``, each in [0, shared].
    overlap : int
        ``|K1 ∩ K2 ∩ Q|``, in [0, min(size_a, size_b)].

    Returns
    -------
    tuple of float
        ``(koc, koc_norm, p_max)``: KOC in [0, 1], KOC_norm in [-p_max / (1 - p_max), 1],
        p_max in [0, 1]; NaN where undefined (see the module notes).

    Examples
    --------
    Q = {a, b, c, d, e}, K1 = {a, b}, K2 = {a, c, d}: one shared item of the smaller
    state's two, against a chance level of 3/5.

    >>> koc, norm, p_max = score_pair(5, 2, 3, 1)
    >>> koc, round(norm, 6), p_max
    (0.5, -0.25, 0.6)
    >>> score_pair(5, 2, 3, 2)[:2]
    (1.0, 1.0)
    >>> score_pair(3, 3, 1, 1)  # p_max = 1: KOC_norm undefined
    (1.0, nan, 1.0)
    >>> score_pair(3, 0, 2, 0)  # an empty state: KOC undefined
    (nan, nan, 0.6666666666666666)

    References
    ----------
    Cui, Do, Sachan 2026, Eq. 6-7.
    """
    if shared == 0:
        return math.nan, math.nan, math.nan
    p_max = max(size_a, size_b) / shared
    smaller = min(size_a, size_b)
    koc = overlap / smaller if smaller else math.nan
    norm = (koc - p_max) / (1 - p_max) if p_max < 1 and smaller else math.nan
    return koc, norm, p_max


def ability_groups(accuracy: pd.Series, cuts: tuple[float, ...] = GROUP_CUTS,
                   names: tuple[str, ...] = GROUP_NAMES) -> pd.Series:
    """Assign learners to ability groups by their rank in accuracy.

    Learners are ranked from weakest to strongest by accuracy (ties by id, so the
    assignment is reproducible); the learner at rank position i of n (0-based) has rank
    share i / n and joins group k when ``cuts[k] <= i / n < cuts[k + 1]``. Learners
    outside ``[cuts[0], cuts[-1])`` (by default the top 10 %) join no group.

    Parameters
    ----------
    accuracy : pandas.Series
        Accuracy in [0, 1], indexed by learner id.
    cuts : tuple of float
        Increasing rank shares in [0, 1], one more than ``names``.
    names : tuple of str
        Group names, weakest first.

    Returns
    -------
    pandas.Series
        Group name per grouped learner, indexed by learner id, weakest first.

    Raises
    ------
    KstpError
        When the cuts are not increasing within [0, 1] or do not match the names.

    Examples
    --------
    >>> acc = pd.Series({"s1": 0.9, "s2": 0.1, "s3": 0.5, "s4": 0.5, "s5": 1.0})
    >>> ability_groups(acc, (0.0, 0.4, 0.8), ("low", "high")).to_dict()
    {'s2': 'low', 's3': 'low', 's4': 'high', 's1': 'high'}
    """
    increasing = all(a < b for a, b in zip(cuts, cuts[1:], strict=False))
    if len(cuts) != len(names) + 1 or not increasing or cuts[0] < 0 or cuts[-1] > 1:
        raise KstpError(f"ability-group cuts {list(cuts)} must increase within [0, 1] and number one more "
                        f"than the group names {list(names)}; e.g. cuts 0,0.3,0.6,0.9 for low,medium,high")
    order = accuracy.rename("accuracy").rename_axis("learnerId").reset_index() \
        .sort_values(["accuracy", "learnerId"], kind="stable")
    share = np.arange(len(order)) / max(len(order), 1)
    group = pd.cut(share, bins=list(cuts), right=False, labels=list(names))
    out = pd.Series(np.asarray(group, dtype=object), index=order["learnerId"].to_numpy(), name="group")
    return out[out.notna()]


def group_states(store: GraphStore, dataset: str, cuts: tuple[float, ...] = GROUP_CUTS,
                 names: tuple[str, ...] = GROUP_NAMES, threshold: float = STATE_THRESHOLD,
                 questions: str = "annotated") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The human ability groups of a dataset and their knowledge states (not yet stored).

    Human learners (``kind = "human"``) are grouped by :func:`ability_groups` on their
    accuracy over every question of the dataset they answered (the paper's ranking, and
    ``evaluate psr --groups``'); each group's answers are counted per question with
    ``group_answers`` over the counted questions (:func:`counted_questions`, ``questions``).

    Returns
    -------
    groups : pandas.DataFrame
        One row per group, weakest first: ``learnerId`` (``<dataset>:group:<name>``),
        ``group``, ``members``, ``memberAccuracy`` (mean accuracy of the members),
        ``rankFrom``, ``rankTo`` (its cut points), ``stateSize``.
    answers : pandas.DataFrame
        ``learnerId, questionId, attempts, correctCount, meanCorrect, correct``: per group
        and question, how many members answered, how many correctly, the share, and
        whether the question is in the group's state (``meanCorrect > threshold``).

    Raises
    ------
    UnknownIdError
        When the dataset is not in the graph.
    KstpError
        When the dataset has no human learners, or on bad cuts.
    """
    ids = counted_questions(store, dataset, questions)
    kinds = store.frame("dataset_learners", {"dataset": dataset}).set_index("learnerId")["kind"]
    # ranked on every attempted question, as the paper and evaluate psr --groups rank
    accuracy = learner_counts(store, dataset, counted_questions(store, dataset, "all"))["accuracy"]
    accuracy = accuracy[accuracy.index.isin(kinds.index[kinds == "human"])].astype(float)
    if accuracy.empty:
        raise KstpError(f"dataset {dataset!r} has no human learners to group; ingest responses first")
    membership = ability_groups(accuracy, cuts, names)
    groups, answers = [], []
    for k, name in enumerate(names):
        members = sorted(membership.index[membership == name])
        group_id = f"{dataset}:group:{name}"
        rows = store.frame("group_answers", {"dataset": dataset, "learnerIds": members, "questionIds": ids}) \
            if members else \
            pd.DataFrame(columns=["questionId", "attempts", "correct"])
        rows = rows.rename(columns={"correct": "correctCount"}).astype({"attempts": np.int64,
                                                                         "correctCount": np.int64})
        rows["meanCorrect"] = rows["correctCount"] / rows["attempts"]
        rows["correct"] = rows["meanCorrect"] > threshold
        answers.append(rows.assign(learnerId=group_id))
        groups.append({"learnerId": group_id, "group": name, "members": len(members),
                       "memberAccuracy": float(accuracy[members].mean()) if members else math.nan,
                       "rankFrom": cuts[k], "rankTo": cuts[k + 1], "stateSize": int(rows["correct"].sum())})
    columns = ["learnerId", "questionId", "attempts", "correctCount", "meanCorrect", "correct"]
    return pd.DataFrame(groups), pd.concat(answers, ignore_index=True)[columns]


def store_groups(store: GraphStore, dataset: str, groups: pd.DataFrame, answers: pd.DataFrame) -> None:
    """Write groups as ``(:Learner {kind: "group"})-[:ANSWERED {correct, meanCorrect}]->(:Question)``.

    Idempotent: re-running with the same data changes nothing; a group's edges to
    questions it no longer answers are deleted. A group without members is not written.
    """
    groups = groups[groups["members"] > 0]
    store.write_nodes("Learner", pd.DataFrame({
        "id": groups["learnerId"], "kind": "group", "dataset": dataset, "localId": groups["group"],
        "members": groups["members"].astype(np.int64), "memberAccuracy": groups["memberAccuracy"]}))
    edges = pd.DataFrame({"from_id": answers["learnerId"], "to_id": answers["questionId"],
                          "correct": answers["correct"].astype(bool), "meanCorrect": answers["meanCorrect"]})
    stored = dataset_answers(store, dataset).astype({"learnerId": object, "questionId": object})
    stored = stored[stored["learnerId"].isin(groups["learnerId"])].rename(
        columns={"learnerId": "from_id", "questionId": "to_id"})
    store.delete_stale("ANSWERED", "Learner", "Question", stored, edges)
    store.write_relationships("ANSWERED", "Learner", "Question", edges)


def aggregate(learners: pd.DataFrame, pairs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """KOC of every ordered pair and the two square matrices, learners in the given order.

    Parameters
    ----------
    learners : pandas.DataFrame
        Indexed by learner id, in matrix order, with ``answered`` and ``correct`` (their
        counts over the dataset: the diagonal's shared questions and state size).
    pairs : pandas.DataFrame
        ``learnerA, learnerB, shared, sizeA, sizeB, overlap`` for unordered pairs (the
        ``knowledge_overlap`` query's rows); a pair without a row shares no question.

    Returns
    -------
    long : pandas.DataFrame
        Every ordered pair (diagonal included) with the counts, ``koc``, ``kocNorm``, ``pMax``.
    koc, koc_norm : pandas.DataFrame
        Symmetric matrices indexed and labelled by learner id; NaN where undefined.
    """
    ids = list(learners.index)
    rows = []
    seen = {(r.learnerA, r.learnerB): r for r in pairs.itertuples(index=False)}
    for a in ids:
        for b in ids:
            if a == b:
                shared, size_a, size_b, overlap = (int(learners.loc[a, "answered"]),) + (
                    int(learners.loc[a, "correct"]),) * 3
            else:
                r = seen.get((a, b)) or seen.get((b, a))
                if r is None:
                    shared = size_a = size_b = overlap = 0
                else:
                    swap = r.learnerA != a
                    shared, overlap = int(r.shared), int(r.overlap)
                    size_a, size_b = (int(r.sizeB), int(r.sizeA)) if swap else (int(r.sizeA), int(r.sizeB))
            koc, norm, p_max = score_pair(shared, size_a, size_b, overlap)
            rows.append({"learnerA": a, "learnerB": b, "shared": shared, "sizeA": size_a, "sizeB": size_b,
                         "overlap": overlap, "koc": koc, "kocNorm": norm, "pMax": p_max})
    long = pd.DataFrame(rows, columns=["learnerA", "learnerB", "shared", "sizeA", "sizeB", "overlap", "koc",
                                       "kocNorm", "pMax"])

    def square(column: str) -> pd.DataFrame:
        return long.pivot(index="learnerA", columns="learnerB", values=column).loc[ids, ids] \
            .rename_axis(index=None, columns=None)

    return long, square("koc"), square("kocNorm")


@dataclass
class KocResult:
    """Everything ``evaluate`` computes for one dataset.

    ``learners``: the matrix order (weaker to stronger within each block, models first)
    with ``kind``, ``block``, ``accuracy``, ``answered``, ``correct`` (on the counted
    questions) and ``rankBy`` (the accuracy that orders it: a group's member accuracy,
    else ``accuracy``); ``groups``: see :func:`group_states` (empty without groups);
    ``pairs``, ``koc``, ``koc_norm``: see :func:`aggregate`; ``questions``: which
    questions counted (:data:`QUESTION_SETS`) and ``counted`` how many.
    """

    dataset: str
    learners: pd.DataFrame
    groups: pd.DataFrame
    pairs: pd.DataFrame
    koc: pd.DataFrame
    koc_norm: pd.DataFrame
    threshold: float
    questions: str = "annotated"
    counted: int = 0

    @property
    def blocks(self) -> list[int]:
        """Sizes of the model and human blocks, in matrix order (empty blocks left out)."""
        return [int(n) for n in self.learners["block"].value_counts(sort=False).reindex(["model", "human"])
                .dropna()]


def evaluate(store: GraphStore, dataset: str, learner_ids: list[str] | None = None, groups: bool = True,
             cuts: tuple[float, ...] = GROUP_CUTS, names: tuple[str, ...] = GROUP_NAMES,
             threshold: float = STATE_THRESHOLD, questions: str = "annotated") -> KocResult:
    """KOC and KOC_norm between every pair of chosen learners of ``dataset``.

    Builds and stores the human ability groups (:func:`group_states`,
    :func:`store_groups`) unless ``groups`` is false, then compares them with
    ``learner_ids`` (default: every model that answered a question of the dataset)
    using the ``knowledge_overlap`` query (a group without members is reported in
    ``groups`` but not compared). Only the counted questions enter any figure
    (``questions``, :func:`counted_questions`: by default those with a concept, paper 1
    Appendix B). Learners are ordered as in Figures 4 and 5 of paper 1: a model block
    (upper left) before a human block (groups and individual humans, lower right), each
    from weaker to stronger (a group by the mean accuracy of its members, anyone else
    by accuracy over the counted questions it answered).

    Raises
    ------
    UnknownIdError
        When the dataset, or a learner id, has no answers in the dataset.
    KstpError
        When fewer than two learners are to be compared, on bad cuts, or when no
        question is counted.
    """
    ids = counted_questions(store, dataset, questions)
    kinds = store.frame("dataset_learners", {"dataset": dataset}).set_index("learnerId")["kind"]
    if learner_ids:
        unknown = [learner for learner in learner_ids if learner not in kinds.index]
        if unknown:
            raise UnknownIdError(f"learner {unknown[0]!r} answered no question of dataset {dataset!r}; "
                                 "see `kstp query dataset_learners -p dataset=...`")
        chosen = list(dict.fromkeys(learner_ids))
    else:
        chosen = sorted(kinds.index[kinds == "model"])
    group_table = pd.DataFrame(columns=["learnerId", "group", "members", "memberAccuracy", "rankFrom", "rankTo",
                                        "stateSize"])
    if groups:
        group_table, group_answers = group_states(store, dataset, cuts, names, threshold, questions)
        store_groups(store, dataset, group_table, group_answers)
        populated = group_table.loc[group_table["members"] > 0, "learnerId"]
        chosen = [g for g in populated if g not in chosen] + chosen
    if len(chosen) < 2:
        raise KstpError(f"KOC compares learners, but only {len(chosen)} of dataset {dataset!r} were chosen; "
                        "run a model on it (kstp evaluate answers) or name learners with --learner")
    counts = learner_counts(store, dataset, ids).reindex(chosen)
    learners = pd.DataFrame({"kind": [("group" if g in set(group_table["learnerId"]) else kinds.get(g, "human"))
                                      for g in chosen],
                             "answered": counts["answered"].fillna(0).astype(np.int64).to_numpy(),
                             "correct": counts["correct"].fillna(0).astype(np.int64).to_numpy(),
                             "accuracy": counts["accuracy"].astype(float).to_numpy()}, index=chosen)
    member_accuracy = group_table.set_index("learnerId")["memberAccuracy"].astype(float)
    learners["rankBy"] = member_accuracy.reindex(learners.index).fillna(learners["accuracy"])
    learners["block"] = np.where(learners["kind"] == "model", "model", "human")
    learners["order"] = (learners["block"] == "human").astype(int)  # models upper left, humans lower right
    learners = learners.rename_axis("learnerId").reset_index() \
        .sort_values(["order", "rankBy", "learnerId"], kind="stable").set_index("learnerId") \
        .drop(columns="order")
    pairs = store.frame("knowledge_overlap", {"dataset": dataset, "learnerIds": list(learners.index),
                                              "questionIds": ids})
    long, koc, koc_norm = aggregate(learners, pairs)
    if store.engine == "neo4j" and long["shared"].nunique() == 1:
        # Everyone answered the same questions: GDS node similarity (overlap) gives KOC itself.
        from kstp.graph.gds import koc_matrix

        koc = koc_matrix(store, dataset, list(learners.index), ids)[0]
    return KocResult(dataset, learners, group_table, long, koc, koc_norm, threshold, questions, len(ids))
