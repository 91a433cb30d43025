"""Two runs compared on the questions both asked: which verdicts flipped, accuracy and PSR of each, McNemar.

Assumes runs whose samples answer questions (``evaluate answers``, a scaffolding or
DAG-MATH run): each question's primary sample (sample 0) is the run's verdict on it,
a missing grade counts as incorrect, as in every kstp denominator. The pairs are the
questions both runs graded; McNemar's test (:func:`~kstp.inference.statistics.mcnemar`)
asks whether the two runs' accuracies differ on them. PSR is each run's own, over
every question it answered, against the stored question prerequisites of its
dataset (paper 1, Eq. 2-4, the release denominator; NaN where no answered question
has a prerequisite it also answered).

References
----------
McNemar 1947, Psychometrika 12, 153-157 (doi:10.1007/BF02295996). Cui, Do, Sachan
2026, Eq. 2-4 (arXiv 2609.05245).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from kstp.errors import InputError
from kstp.graph.store import GraphStore
from kstp.inference.runlog import run_samples
from kstp.inference.statistics import mcnemar, mean_stderr

__all__ = ["RunDiff", "primary_verdicts", "compare", "diff_runs"]


def primary_verdicts(samples: pd.DataFrame) -> pd.DataFrame:
    """The primary sample of each question: ``questionId, localId, gold, extracted, correct`` (bool).

    >>> samples = pd.DataFrame({"questionId": ["q1", "q1", "q2"], "sampleIndex": [0, 1, 0],
    ...                         "correct": [True, False, None], "extracted": ["5", "6", None]})
    >>> primary_verdicts(samples)["correct"].tolist()
    [True, False]
    """
    primary = samples[(samples["sampleIndex"] == 0) & samples["questionId"].notna()]
    out = pd.DataFrame({"questionId": primary["questionId"].astype(str).to_numpy(),
                        "correct": primary["correct"].astype(object).where(primary["correct"].notna(), False)
                        .astype(bool).to_numpy()})
    for column in ("localId", "gold", "extracted"):
        out[column] = primary[column].astype(object).where(primary[column].notna(), None).to_numpy() \
            if column in primary else None
    return out.drop_duplicates("questionId").sort_values("questionId", ignore_index=True)


def _psr(verdicts: pd.DataFrame, prerequisites: pd.DataFrame) -> tuple[float, float]:
    from kstp.evaluators import psr

    answers = pd.DataFrame({"learnerId": "run", "questionId": verdicts["questionId"],
                            "correct": verdicts["correct"]})
    if answers.empty or prerequisites.empty:
        return math.nan, math.nan
    table = psr.aggregate(answers, psr.score_pairs(answers, prerequisites[["fromId", "toId"]]))
    return float(table.loc["run", "psrMicro"]), float(table.loc["run", "psrMacro"])


@dataclass
class RunDiff:
    """What :func:`compare` finds.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per run: ``runId, questions`` (its own), ``accuracy, accuracyStderr``
        (over its own questions), ``pairedAccuracy`` (over the paired ones), ``psrMicro,
        psrMacro``.
    flipped : pandas.DataFrame
        The paired questions whose verdict differs: ``questionId, localId, gold,
        first, second`` (the verdicts), ``firstExtracted, secondExtracted, change``
        (``fixed``: wrong in the first run, right in the second; ``broken``: the reverse).
    mcnemar : dict
        :func:`~kstp.inference.statistics.mcnemar` of the paired verdicts, with ``paired``.
    """

    runs: pd.DataFrame
    flipped: pd.DataFrame
    mcnemar: dict

    def summary(self) -> dict:
        """``runs`` (records), ``mcnemar`` and ``flipped`` (records): what ``kstp runs diff --json`` prints."""
        return {"runs": self.runs, "mcnemar": self.mcnemar, "flipped": self.flipped}


def compare(first: pd.DataFrame, second: pd.DataFrame, prerequisites: pd.DataFrame | None = None,
            ids: tuple[str, str] = ("first", "second")) -> RunDiff:
    """Compare two runs' samples (:data:`~kstp.inference.runlog.SAMPLE_DTYPES` frames) on their shared questions.

    Parameters
    ----------
    first, second : pandas.DataFrame
        Samples with ``questionId, sampleIndex, correct`` (``localId``, ``gold``,
        ``extracted`` shown where present).
    prerequisites : pandas.DataFrame, optional
        ``fromId, toId``: the question prerequisites PSR counts (none: PSR is NaN).
    ids : tuple of str
        The runs' ids, for the ``runs`` table.

    Raises
    ------
    InputError
        When the runs have no question in common.

    Examples
    --------
    >>> a = pd.DataFrame({"questionId": ["q1", "q2", "q3"], "sampleIndex": 0, "correct": [True, True, False]})
    >>> b = pd.DataFrame({"questionId": ["q1", "q2", "q3"], "sampleIndex": 0, "correct": [True, False, True]})
    >>> diff = compare(a, b)
    >>> diff.flipped[["questionId", "change"]].values.tolist(), diff.mcnemar["pValue"]
    ([['q2', 'broken'], ['q3', 'fixed']], 1.0)
    """
    one, two = primary_verdicts(first), primary_verdicts(second)
    paired = one.merge(two, on="questionId", suffixes=("First", "Second"))
    if paired.empty:
        raise InputError(f"runs {ids[0]} and {ids[1]} have no question in common; compare runs on one dataset")
    prerequisites = prerequisites if prerequisites is not None else pd.DataFrame(columns=["fromId", "toId"])
    rows = []
    for run_id, verdicts, paired_column in ((ids[0], one, "correctFirst"), (ids[1], two, "correctSecond")):
        micro, macro = _psr(verdicts, prerequisites)
        rows.append({"runId": run_id, "questions": len(verdicts), "accuracy": float(verdicts["correct"].mean()),
                     "accuracyStderr": mean_stderr(verdicts["correct"].to_numpy(float)),
                     "pairedAccuracy": float(paired[paired_column].mean()), "psrMicro": micro, "psrMacro": macro})
    changed = paired[paired["correctFirst"] != paired["correctSecond"]]
    flipped = pd.DataFrame({"questionId": changed["questionId"],
                            "localId": changed["localIdFirst"].where(changed["localIdFirst"].notna(),
                                                                     changed["localIdSecond"]),
                            "gold": changed["goldFirst"].where(changed["goldFirst"].notna(), changed["goldSecond"]),
                            "first": changed["correctFirst"], "second": changed["correctSecond"],
                            "firstExtracted": changed["extractedFirst"],
                            "secondExtracted": changed["extractedSecond"],
                            "change": changed["correctSecond"].map({True: "fixed", False: "broken"})})
    test = {"paired": len(paired), **mcnemar(paired["correctFirst"], paired["correctSecond"])}
    return RunDiff(pd.DataFrame(rows), flipped.reset_index(drop=True), test)


def diff_runs(store: GraphStore, first: str, second: str) -> RunDiff:
    """:func:`compare` two runs of the graph; PSR against the question prerequisites of each run's dataset.

    Raises
    ------
    UnknownIdError
        When either run is not in the graph.
    InputError
        When the runs have no question in common.
    """
    from kstp.inference.runlog import run_header

    samples, prerequisites = [], []
    for run_id in (first, second):
        header = run_header(store, run_id)  # refuses an unknown run
        samples.append(run_samples(store, run_id))
        datasets = [d for d in (header.get("dataset") or "").split("+") if d]
        prerequisites += [store.frame("question_prerequisite_edges", {"dataset": d}) for d in datasets]
    edges = pd.concat(prerequisites, ignore_index=True).drop_duplicates(["fromId", "toId"]) if prerequisites \
        else None
    return compare(samples[0], samples[1], edges, (first, second))
