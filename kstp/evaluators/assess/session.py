"""A person's adaptive assessment: a question's text, the answer typed and graded, stored at once, resumable.

Each answer is graded by kstp's grader against the question's gold answer
(:func:`kstp.inference.grading.grade`: fractions, expressions, options, ...) and written
at once as the learner's ``ANSWERED {correct, runId}`` edge and into the Run's record,
so an interrupted session loses nothing: the same command again replays the stored
answers and goes on from the next question. A question without a gold answer (a
structure file's items) is answered yes or no: "do you master it?". An empty answer
counts as wrong, as "I don't know".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from kstp.errors import KstpError
from kstp.evaluators.assess.model import AssessmentModel, Settings
from kstp.evaluators.assess.record import DRAWS, describe, save_run, stored_run
from kstp.graph.store import GraphStore
from kstp.inference.grading import grade, option_count, option_texts
from kstp.inference.replies import repair_text
from kstp.inference.runs import process_marks

__all__ = ["Question", "learner_id_of", "assess_person", "grade_typed", "plain_text"]

_YES = {"y", "yes", "1", "true", "right", "known", "ja", "oui"}
_NO = {"n", "no", "0", "false", "wrong", "unknown", "nein", "non", ""}


@dataclass(frozen=True)
class Question:
    """What the person is shown: the question's id, its text (None: only its name) and its number in the session."""

    id: str
    text: str | None
    number: int
    graded: bool  # whether the typed answer is graded against a gold answer (else: yes or no)


def learner_id_of(dataset: str | None, name: str) -> str:
    """A person's Learner id: ``<dataset>:<name>`` (kstp's naming of human learners), ``name`` if it has the prefix.

    >>> learner_id_of("frcsub", "ada"), learner_id_of("frcsub", "frcsub:ada"), learner_id_of(None, "ada")
    ('frcsub:ada', 'frcsub:ada', 'ada')
    """
    if dataset is None or name.startswith(f"{dataset}:"):
        return name
    return f"{dataset}:{name}"


def plain_text(typed: str) -> str:
    r"""A typed answer as plain text: bytes that were not UTF-8 (read as lone surrogates) become U+FFFD, a tab a
    space, other control characters (a terminal's escapes, a carriage return) are dropped, the ends stripped.

    >>> plain_text("0,5\udce9\r") == "0,5\ufffd", plain_text("\x1b[31m0.48\x07"), plain_text("a\tb")
    (True, '[31m0.48', 'a b')
    """
    typed, _ = repair_text(typed)
    return "".join(c if c.isprintable() else " " if c == "\t" else "" for c in typed).strip()


def grade_typed(typed: str, gold: str | None, text: str | None = None) -> tuple[bool, str]:
    """Whether a typed answer is right, and why: graded against ``gold`` by kstp's grader, else read as yes or no.

    Raises
    ------
    KstpError
        Without a gold answer, when the answer is neither yes nor no.

    Examples
    --------
    >>> grade_typed("11/12", "11/12"), grade_typed("0.9166", "11/12")[0], grade_typed("", "3")
    ((True, 'correct'), False, (False, 'no answer (empty)'))
    >>> grade_typed("y", None)
    (True, 'yes')
    """
    typed = typed.strip()
    if gold is None:
        word = typed.lower()
        if word in _YES:
            return True, "yes"
        if word in _NO:
            return False, "no"
        raise KstpError(f"answer y or n, not {typed!r}")
    if not typed:
        return False, "no answer (empty)"
    options = (option_texts(text) or option_count(text)) if text else None
    verdict = grade(typed, gold, options=options)
    return bool(verdict.correct), verdict.reason


def _run_id(model: AssessmentModel, learner: str, settings: Settings, number: int) -> tuple[str, str]:
    digest = model.config_hash(settings, learner=learner)
    base = f"assess:{learner}:{digest[:12]}"
    return (base if number == 1 else f"{base}:{number}"), digest


def assess_person(store: GraphStore | None, model: AssessmentModel, name: str, settings: Settings,
                  ask: Callable[[Question], str], again: bool = False,
                  progress: Callable[[dict], None] | None = None) -> dict:
    """Assess one person: ask until the procedure stops, grading and storing each answer as it comes.

    Parameters
    ----------
    store : GraphStore or None
        Where answers go (None: a structure file's assessment, stored nowhere).
    model : AssessmentModel
    name : str
        The person (a Learner ``<dataset>:<name>``; created as a human learner).
    settings : Settings
    ask : callable
        ``ask(question) -> typed answer``; raising KeyboardInterrupt (Ctrl-C) leaves the
        session to be resumed.
    again : bool
        Start a new assessment even though one with this configuration finished.
    progress : callable, optional
        ``progress(step)`` after each answer (the path's row of the answer).

    Returns
    -------
    dict
        :func:`~kstp.evaluators.assess.record.describe`'s record with ``learner``, ``runId``,
        ``resumed`` (answers replayed from the graph) and ``status``.

    Raises
    ------
    KstpError
        When a stored session holds a question the model does not know (the structure
        changed since: ``again`` starts anew).

    Notes
    -----
    Whatever ends the session early (``ask`` raising: Ctrl-C, the end of input) leaves the
    session ``interrupted`` in the graph and carries the record so far, as this function
    would return it, as the exception's ``record``.
    """
    learner = learner_id_of(model.dataset, name)
    index = {q: j for j, q in enumerate(model.items)}
    run_id, digest, stored, number = None, None, None, 1
    if store is not None and model.dataset is not None:
        finished = None  # the latest finished assessment of this configuration
        while True:  # the first one not finished is resumed; after the finished ones, a new one with --again
            run_id, digest = _run_id(model, learner, settings, number)
            stored = stored_run(store, run_id)
            if stored is None or stored["status"] != "finished":
                break
            finished = stored
            number += 1
        if stored is None and finished is not None and not again:
            return {**finished["assessment"], "status": "finished", "resumed": finished["asked"]}
        store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "human", "dataset": model.dataset,
                                                    "localId": learner.split(":", 1)[-1]}]))
    procedure = model.procedure(settings)
    answers: list[dict] = []
    resumed = 0
    if stored is not None and stored.get("assessment"):
        for step in stored["assessment"]["path"]:
            if step["question"] not in index:
                raise KstpError(f"the stored session {run_id} asked {step['question']!r}, which the model no longer "
                                "has; start anew with --again")
            procedure.record(index[step["question"]], step["correct"])
            answers.append({"answer": step.get("answer"), "verdict": step.get("verdict")})
            resumed += 1
    if store is not None and run_id is not None:  # written before the first question: a second session of
        # this learner (another process holding an embedded graph) is refused here, before anyone types
        config = None if stored is not None else {"evaluator": "assess", "learner": learner, "model": model.identity,
                                                  "settings": settings.record(), "_hash": digest}
        save_run(store, run_id, describe(model, procedure, settings, draws=0, answers=answers, learner=learner,
                                         runId=run_id), "running", config, learner=learner, **process_marks())
    status = "interrupted"
    try:
        while True:
            chosen = procedure.next()
            if not chosen:
                status = "finished"
                break
            q = chosen[0]
            qid = model.items[q]
            gold = model.golds.get(qid)
            question = Question(qid, model.texts.get(qid), len(procedure.path) + 1, gold is not None)
            while True:
                typed = plain_text(ask(question))
                try:
                    correct, verdict = grade_typed(typed, gold, question.text)
                    break
                except KstpError:
                    if question.graded:
                        raise
                    continue  # neither yes nor no: ask again
            procedure.record(q, correct)
            answers.append({"answer": typed, "verdict": verdict})
            if store is not None and run_id is not None:
                store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
                    [{"from_id": learner, "to_id": qid, "correct": correct, "runId": run_id}]))
                save_run(store, run_id, describe(model, procedure, settings, draws=0, answers=answers,
                                                 learner=learner, runId=run_id), "running")
            if progress is not None:
                progress({"question": qid, "correct": correct, "verdict": verdict, "asked": len(procedure.path)})
    except BaseException as exc:
        so_far = describe(model, procedure, settings, draws=0, answers=answers, learner=learner, runId=run_id)
        if store is not None and run_id is not None:
            try:
                save_run(store, run_id, so_far, status)
            except KstpError:
                pass  # the graph refused the record too: the first error is the one to tell
        try:  # what a paused session shows (the CLI's --json): the record as stored
            exc.record = {**so_far, "status": status, "resumed": resumed}
        except AttributeError:
            pass
        raise
    record = describe(model, procedure, settings, draws=DRAWS, answers=answers, learner=learner, runId=run_id)
    if store is not None and run_id is not None:
        save_run(store, run_id, record, status)
    return {**record, "status": status, "resumed": resumed}
