"""The explorer's comparison of two learners (a student and a model, two models): on each dataset both answered,
their knowledge states side by side on the prerequisite structure, where they differ, and the PSR of each.

A mixin of :class:`~kstp.explore.pages.Explorer` (which gives it ``store``, ``_kept``, ``space``,
``learner_figures`` and ``psr``). The knowledge state is ``kstp kst fringe``'s (the questions answered
right, :func:`~kstp.graph.structures.knowledge_state`); accuracy and PSR are ``kstp evaluate psr``'s on the
dataset, computed now where the dataset is small enough, else as it stored them (``Explorer.learner_psr``: a
model's on the run its answers came from, so another dataset's figures never show here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kstp.errors import UnknownIdError
from kstp.explore.charts import bars
from kstp.explore.drawings import DRAW_LIMIT, broken_pairs, class_dag
from kstp.explore.values import as_rows as _rows
from kstp.explore.values import plain as _plain
from kstp.explore.values import slug

if TYPE_CHECKING:
    from kstp.graph.store import GraphStore

__all__ = ["ComparePages", "COMPARE_MARKS", "compare_marks", "compare_path"]

#: What a question's mark on the comparison's structure says (the first learner is A, the second B).
COMPARE_MARKS = {"both": "right for both", "only-a": "right for A only", "only-b": "right for B only",
                 "neither": "answered by both, right for neither", "": "not answered by both"}


def compare_path(first: str, second: str) -> str:
    """The comparison page of two learners, relative to the site's root: the ids in Python's (code point) order,
    the one order the learner pages' links and the static export's files share.

    >>> compare_path("model:gpt-4o", "model:Qwen2.5")
    'compare/model~3AQwen2.5/model~3Agpt-4o.html'
    """
    a, b = sorted((first, second))
    return f"compare/{slug(a)}/{slug(b)}.html"


def compare_marks(right_a: set[str], right_b: set[str], answered_a: set[str], answered_b: set[str]) -> dict[str, str]:
    """A mark per question answered by A or B: ``both``, ``only-a``, ``only-b`` (right for one of them),
    ``neither`` (both answered, neither right) or ``""`` (one of them did not answer it, and the other not right).

    >>> compare_marks({"q1", "q2"}, {"q2", "q3"}, {"q1", "q2", "q4"}, {"q2", "q3", "q4", "q5"})
    {'q1': 'only-a', 'q2': 'both', 'q3': 'only-b', 'q4': 'neither', 'q5': ''}
    """
    out = {}
    for q in sorted(answered_a | answered_b):
        a, b = q in right_a, q in right_b
        out[q] = ("both" if a and b else "only-a" if a else "only-b" if b else
                  "neither" if q in answered_a and q in answered_b else "")
    return out


class ComparePages:
    """The comparison page of :class:`~kstp.explore.pages.Explorer`."""

    store: GraphStore  # given by Explorer, as are its space, learner_psr and what its pages keep:
    _kept: Callable[[tuple, Callable[[], Any]], Any]

    def compare(self, first: str, second: str) -> dict:
        """Learners ``first`` (A) and ``second`` (B) on every dataset both answered.

        Raises
        ------
        UnknownIdError
            When either learner is not in the graph.
        """
        learners = {}
        for ident in (first, second):
            found = self.store.nodes("Learner", [ident])
            if found.empty:
                raise UnknownIdError(f"unknown learner {ident!r}; learners are named <dataset>:<id>, e.g. "
                                     "frcsub:Subject001")
            learners[ident] = _rows(found)[0]
        answers = {ident: self.store.frame("learner_answers", {"learnerId": ident}) for ident in (first, second)}
        common = sorted(set(answers[first]["datasetId"]) & set(answers[second]["datasetId"]))
        return {"a": learners[first], "b": learners[second], "marks": COMPARE_MARKS,
                "datasets": [self._compared(dataset, first, second, learners, answers) for dataset in common]}

    def _compared(self, dataset: str, first: str, second: str, learners: dict, answers: dict) -> dict:
        answered, right = {}, {}
        for ident in (first, second):
            rows = answers[ident][answers[ident]["datasetId"] == dataset]
            answered[ident] = set(rows["questionId"])
            right[ident] = set(rows.loc[rows["correct"].fillna(False).astype(bool), "questionId"])
        marks = compare_marks(right[first], right[second], answered[first], answered[second])
        differ = [{"questionId": q, "mark": m} for q, m in marks.items() if m in ("only-a", "only-b")]
        figures, source, _ = self.learner_psr(dataset)
        rows = []
        for ident in (first, second):
            known = ident in figures.index
            rows.append({"learnerId": ident, "answered": len(answered[ident]), "right": len(right[ident]),
                         **{k: _plain(figures.loc[ident, k]) if known else None
                            for k in ("accuracy", "psrMicro", "psrMacro")}})
        chart = bars(f"Accuracy and PSR of A and B on {dataset}", ["accuracy", "PSR micro", "PSR macro"],
                     {f"{label}: {r['learnerId']}": [r["accuracy"], r["psrMicro"], r["psrMacro"]]
                      for label, r in zip("AB", rows, strict=True)}, f"figure ({source})", "value",
                     y_max=1.0, band=30)
        pre = self.question_index(dataset)["pre"]
        breaks = {who: broken_pairs(pre, right[ident], answered[ident] - right[ident])
                  for who, ident in zip("AB", (first, second), strict=True)}
        broken: dict[tuple[str, str], str] = {}
        for who, pairs in breaks.items():
            for pair in pairs:
                broken[pair] = (f"{broken[pair][:1]} and {who}" if pair in broken else who) + \
                    ": prerequisite answered wrong, question right"
        space = self.space(dataset)
        drawing = None
        if space is not None and len(space.classes) <= DRAW_LIMIT:
            questions = self.store.frame("dataset_questions", {"dataset": dataset})
            local = questions["localId"].fillna(questions["questionId"])
            names = dict(zip(questions["questionId"], local, strict=True))
            drawing = class_dag(space, names, marks, verdicts=COMPARE_MARKS, broken=broken)
            drawing["caption"] = (f"Where A and B are right on {dataset}'s prerequisite structure (prerequisites "
                                  "above, a box per class of equally informative questions)")
        return {"dataset": dataset, "figures": rows, "chart": chart, "source": source, "drawing": drawing,
                "differ": differ, "broken": {who: [list(p) for p in pairs] for who, pairs in breaks.items()},
                "both": sum(m == "both" for m in marks.values()),
                "neither": sum(m == "neither" for m in marks.values())}

