"""The explorer's learner page: a learner's answers on each dataset it answered, as ``kstp kst`` reads them.

A mixin of :class:`~kstp.explore.pages.Explorer` (which gives it ``store``, ``_kept``, ``_recent_page`` and the
dataset reads). Per dataset: the knowledge state (``kstp kst fringe``: the questions answered right) and its
fringes where it is a state, the prerequisites its correct answers lack (``kstp kst check``), accuracy and
PSR on the dataset (``Explorer.learner_psr``), BLIM's most likely state and next steps (``kstp kst next-steps``)
or, where the fit has no state for the learner, what it lacks and the nearest states, and the state drawn on
the prerequisite structure with the pairs it breaks (a prerequisite answered wrong, the question right) red.
Then the learner's adaptive assessments (``kstp assess``): each one's path, the posterior after each answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from kstp.errors import KstpError, UnknownIdError
from kstp.explore.compare import compare_path
from kstp.explore.drawings import DRAW_LIMIT, broken_pairs
from kstp.explore.drawings import class_dag as _class_dag
from kstp.explore.values import as_rows as _rows
from kstp.explore.values import plain as _plain

if TYPE_CHECKING:
    from kstp.graph.store import GraphStore

__all__ = ["LearnerPages", "NEXT_STEPS_LIMIT", "MISSING_SHOWN"]

#: Without a BLIM fit, next steps come from the knowledge space when it has at most this many states.
NEXT_STEPS_LIMIT = 20_000
#: Most of a learner's missing prerequisites listed (they are counted in full).
MISSING_SHOWN = 200


class LearnerPages:
    """The learner page of :class:`~kstp.explore.pages.Explorer`."""

    store: GraphStore  # given by Explorer, as are the dataset reads and what its pages keep:
    _kept: Callable[[tuple, Callable[[], Any]], Any]
    _recent_page: Callable[[tuple, Callable[[], Any]], Any]
    _lock: Any
    _ahead: dict[str, tuple]  # read_learners' rows of each learner, until its page takes them

    def learner(self, learner: str) -> dict:
        """A learner's answers per dataset: knowledge state, fringes, BLIM next steps, contradicted prerequisites
        (the last :data:`~kstp.explore.pages.RECENT_PAGES` learners' kept)."""
        return self._recent_page(("learner", learner), lambda: self._learner(learner))

    def read_learners(self, learners: list[str]) -> None:
        """Read what the pages of ``learners`` need from the graph in three reads, not three a learner.

        The export calls it for each batch of learner pages it is about to write (on Neo4j a read is a round
        trip of milliseconds: 18,066 learners at XES3G5M scale); each page then takes its rows from here once.
        A page not read ahead reads its own (the server's pages, one learner at a time).
        """
        nodes = self.store.nodes("Learner", learners)
        answers = self.store.frame("learners_answers", {"learnerIds": learners})
        assessments: dict[str, list[dict]] = {}
        for row in self.store.run("learners_assessments", {"learners": learners}):
            assessments.setdefault(row.pop("learner"), []).append(row)
        by_learner = {key: rows.drop(columns="learnerId").reset_index(drop=True)
                      for key, rows in answers.groupby("learnerId", sort=False)}
        empty = answers.drop(columns="learnerId").iloc[:0]
        with self._lock:
            self._ahead = {key: (nodes.iloc[[at]].reset_index(drop=True), by_learner.get(key, empty),
                                 assessments.get(key, [])) for at, key in enumerate(nodes["id"])}

    def _learner(self, learner: str) -> dict:
        found, answers, assessments = self._ahead.pop(learner, None) or (self.store.nodes("Learner", [learner]),
                                                                         None, None)
        if found.empty:
            raise UnknownIdError(f"unknown learner {learner!r}; learners are named <dataset>:<id>, e.g. "
                                 "frcsub:Subject001")
        if answers is None:
            answers = self.store.frame("learner_answers", {"learnerId": learner})
        record = _rows(found)[0]
        sections = [self._learner_in(learner, dataset, group, record.get("kind"))
                    for dataset, group in answers.groupby("datasetId", sort=True)]
        return {"learner": record, "datasets": sections, "assessments": self._assessments(learner, assessments)}

    def _assessments(self, learner: str, read: list[dict] | None = None) -> list[dict]:
        """The learner's adaptive assessments (``kstp assess``), newest first: each one's record (the
        path of questions asked with the posterior after each, the state, fringes and prediction); ``read``:
        its rows of ``learner_assessments`` where they were read ahead."""
        rows = []
        for row in self.store.run("learner_assessments", {"learner": learner}) if read is None else read:
            record = json.loads(row["assessment"]) if row.get("assessment") else {}
            rows.append({**{k: _plain(v) for k, v in row.items() if k != "assessment"}, "record": record})
        return rows

    def _learner_in(self, learner: str, dataset: str, answers: pd.DataFrame, kind: str | None) -> dict:
        # The state, what it lacks and its fringes from the learner's answers and the dataset's stored relation,
        # read once per dataset: the queries of kstp kst fringe/check (knowledge_state, state_violations,
        # inner_fringe, outer_fringe, each fringe checking the state again) were about ten a learner.
        right = answers["correct"].fillna(False).astype(bool)
        state = sorted(set(answers.loc[right, "questionId"]))  # the knowledge_state query's
        wrong = set(answers.loc[~right, "questionId"])
        relation = self._kept(("relation", dataset), lambda: _Relation(self.question_index(dataset)))
        missing = [{"questionId": q, "prerequisiteId": p, "answered": p in wrong}
                   for q, p in relation.violations(state)]
        violations = bool(missing)
        answered = sum(row["answered"] for row in missing)
        # answered wrongly first (the stronger evidence), each part in (question, prerequisite) order
        contradicted = sorted(missing, key=lambda row: not row["answered"])[:MISSING_SHOWN]
        section: dict[str, Any] = {"dataset": dataset, "answers": _rows(answers), "state": state,
                                   "isState": not violations, "contradicted": contradicted,
                                   "missing": len(missing), "missingAnswered": answered, "correct": int(right.sum())}
        if not violations:
            section["innerFringe"], section["outerFringe"] = relation.fringes(state)
        shown, source, _ = self.learner_psr(dataset)  # kstp evaluate psr's figures on this dataset
        if learner in shown.index:
            psr = shown.loc[learner, ["accuracy", "psrMicro", "psrMacro"]]
            section["psr"] = {k: _plain(v) for k, v in psr.items()}
            section["psrSource"] = source
        figures = self.learner_figures(dataset)
        section["models"] = [{"learnerId": m, "href": compare_path(learner, m)}  # the export's file names
                             for m in sorted(figures.loc[figures["kind"] == "model", "learnerId"]) if m != learner]
        size = self.space_size(dataset)
        fitted = self._kept(("fitted", dataset), lambda: self._fitted(dataset))
        if fitted or size.get("states", NEXT_STEPS_LIMIT + 1) <= NEXT_STEPS_LIMIT:
            from kstp.evaluators.blim import NextSteps

            try:  # the dataset's reads kept: a page per learner read its whole space and answers again
                steps = self._kept(("next steps", dataset), lambda: NextSteps(self.store, dataset, NEXT_STEPS_LIMIT))
                section["nextSteps"] = steps.of([learner])
            except KstpError as exc:
                section["nextStepsError"] = str(exc)
            else:
                if not section["nextSteps"]["fitted"]:
                    section["nearestWhy"] = self._unfitted_why(dataset, learner, len(answers), kind)
        else:
            section["nextStepsError"] = (f"no BLIM fit on {dataset} (kstp fit blim), and its knowledge space is too "
                                         "large to match the answers to its nearest states")
        breaks = broken_pairs(self.question_index(dataset)["pre"], set(state), wrong)
        section["broken"] = [list(pair) for pair in breaks]
        space = self.space(dataset)
        if space is not None and len(space.classes) <= DRAW_LIMIT:
            marks = {q: "correct" for q in state} | {q: "wrong" for q in wrong}
            for q in section.get("outerFringe", []):
                marks[q] = "outer"
            for q in section.get("innerFringe", []):
                marks[q] = "inner"
            section["drawing"] = _class_dag(space, self.question_index(dataset)["local"], marks,
                                            broken=dict.fromkeys(breaks, "prerequisite answered wrong, question right"))
        return section

    def _unfitted_why(self, dataset: str, learner: str, answered: int, kind: str | None) -> str:
        """Why a learner's next steps come from the nearest states rather than a BLIM fit: what is missing."""
        blim = self.blim(dataset)
        if blim is None:
            return f"No BLIM fit of {dataset} (kstp fit blim --dataset {dataset})"
        run, asked = blim["run"]["id"], len(self._questions(dataset))
        if kind != "human":
            why = f"it assesses the human learners who answered all {asked} questions, and {learner} is a {kind}"
        elif answered < asked:
            why = f"it assesses the learners who answered all {asked} questions, and {learner} answered {answered}"
        else:
            why = (f"{learner}'s answers were stored after it (kstp fit blim --dataset {dataset} again "
                   "assesses it)")
        return f"BLIM fit {run} of {dataset} has no state for {learner}: {why}"


class _Relation:
    """A dataset's stored prerequisite relation, as the learner page reads it for each learner's state."""

    def __init__(self, index: dict):
        self.pre: dict[str, set[str]] = index["pre"]  # each question's stored prerequisites
        self.needed_by: dict[str, set[str]] = {}
        for q, ps in self.pre.items():
            for p in ps:
                self.needed_by.setdefault(p, set()).add(q)
        self.questions = sorted(index["local"])

    def violations(self, state: list[str]) -> list[tuple[str, str]]:
        """The ``state_violations`` rows of ``state``: each (question in it, prerequisite not in it) pair, sorted."""
        held = set(state)
        return sorted((q, p) for q in state for p in self.pre.get(q, ()) if p not in held)

    def fringes(self, state: list[str]) -> tuple[list[str], list[str]]:
        """The ``inner_fringe`` and ``outer_fringe`` of a knowledge state (Doignon & Falmagne 1999, Def. 4.1.6):
        the questions of it no question of it needs, and those outside it whose prerequisites it holds."""
        held = set(state)
        inner = [q for q in state if not self.needed_by.get(q, set()) & held]
        outer = [q for q in self.questions if q not in held and self.pre.get(q, set()) <= held]
        return inner, outer
