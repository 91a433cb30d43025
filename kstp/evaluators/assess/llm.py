"""A model's adaptive assessment: only the chosen questions are asked, through the run engine.

The questions go to the model as the answers evaluator puts them (:mod:`kstp.evaluators.answers`:
the same prompt sets and templates, the same grading), ``batch`` at a time where the rule
allows it (:func:`kstp.kst.assess.choose`: past the rule's own choice, the questions that
add most to the batch's joint information), each batch through
:func:`~kstp.inference.runs.generate_and_store`, so a GPU server has them in flight
together and every completion is stored and graded as in any run. The run is a
``(:Run {evaluator: 'assess'})`` whose configuration names the structure, the rule and
its settings; its primary samples' verdicts are the answers.

A completion's cache key is the answers evaluator's (model, endpoint, prompt, sampling,
seed, sample index, template): a question the model was already asked under the same
configuration, by a full ``kstp evaluate answers`` run or an earlier assessment, is
linked, not asked again, and a re-run of the same command replays the stored answers
(the choices follow from them) and asks only what is new. A question the server did
not answer (a transport failure) stops the assessment there, its run ``incomplete``:
the next run asks it. The model's learner gets no ANSWERED edges from an assessment (its
few answers would stand for the model in PSR); its answers are the run's Responses.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from kstp.errors import KstpError
from kstp.evaluators import answers as answers_evaluator
from kstp.evaluators.assess.model import VERSION, AssessmentModel, Settings
from kstp.evaluators.assess.record import DRAWS, describe, save_run
from kstp.evaluators.prompting import PromptTemplate
from kstp.graph.store import GraphStore
from kstp.inference.backend import Backend, RejectedRequestError, Sampling
from kstp.inference.grading import GRADER_VERSION, option_count, option_texts
from kstp.inference.runs import Grading, RunSpec, generate_and_store, model_learner_id, open_run

__all__ = ["assess_model"]


def assess_model(store: GraphStore, backend: Backend, model: AssessmentModel, settings: Settings,
                 sampling: Sampling, prompt: str | PromptTemplate = answers_evaluator.DEFAULT_PROMPT,
                 new_run: bool = False, window: int | None = None,
                 progress: Callable[[dict], None] | None = None) -> dict:
    """Assess ``backend``'s model on ``model``'s questions, asking only those the rule picks.

    Parameters
    ----------
    sampling : Sampling
        Sample 0 of each question is the answer (more samples are stored, not used).
    prompt : str or PromptTemplate
        The answers evaluator's prompt set or template (part of the run's identity and of
        every cache key).
    new_run : bool
        Allow a configuration that differs from the latest assessment run of this model.
    window : int, optional
        Requests in flight (at most ``settings.batch`` are asked at once here).
    progress : callable, optional
        ``progress(step)`` after each batch: ``asked``, ``questions`` of the batch, ``correct``.

    Returns
    -------
    dict
        :func:`~kstp.evaluators.assess.record.describe`'s record with ``runId``, ``model``,
        ``status`` (``finished``, ``incomplete``: a question got no reply, ``interrupted``),
        ``askedNow`` (completions requested now), ``linked`` (answers found stored),
        ``tokens`` (prompt and completion tokens of the questions asked) and ``pending``.

    Raises
    ------
    KstpError
        When the structure is not a dataset's, or one of its questions has no text or gold
        answer (a model cannot be asked it).
    ConfigChangedError
        As :func:`~kstp.inference.runs.open_run`.
    RejectedRequestError
        When the server rejects a request (the run is ``failed``).
    """
    if model.dataset is None:
        raise KstpError("a model is assessed on a dataset's questions (--dataset), not on a structure file")
    missing = [q for q in model.items if q not in model.texts or q not in model.golds]
    if missing:
        raise KstpError(f"{len(missing)} question(s) of {model.dataset} have no text or gold answer, e.g. "
                        f"{missing[0]}; a model cannot be asked them (ingest items with text and answers)")
    template = answers_evaluator.template_of(prompt)
    spec = RunSpec.of(backend, "assess", VERSION, model.dataset, sampling, template.hash(),
                      {"adaptive": True, "assessment": model.identity, "settings": settings.record()},
                      prompt_template=template.record())
    run_id, resumed = open_run(store, spec, new_run)
    learner = model_learner_id(backend.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": backend.model}]))
    choices = {q: option_texts(t) or option_count(t) for q, t in model.texts.items()}
    grading = Grading(answers_evaluator.grade_reply, {q: (model.golds[q], choices[q]) for q in model.items},
                      version=GRADER_VERSION)
    index = {q: j for j, q in enumerate(model.items)}
    procedure = model.procedure(settings)
    answers: list[dict] = []
    status, asked_now, linked, pending, tokens = "interrupted", 0, 0, 0, 0
    try:
        while True:
            chosen = procedure.next(settings.batch)
            if not chosen:
                status = "finished"
                break
            ids = [model.items[q] for q in chosen]
            chats = {q: template.chat(model.texts[q]) for q in ids}
            generation = generate_and_store(store, backend, run_id, learner, chats, sampling, grading, window=window)
            asked_now += generation.stored
            rows = store.frame("run_responses", {"runId": run_id})
            rows = rows[rows["questionId"].isin(ids) & (rows["sampleIndex"] == 0) & rows["verdict"].notna()]
            rows = rows.set_index("questionId")
            got = [q for q in ids if q in rows.index]
            linked += len(got) - min(generation.stored, len(got))
            for q in got:
                row = rows.loc[q]
                correct = bool(row["correct"]) if pd.notna(row["correct"]) else False
                procedure.record(index[q], correct)
                used = sum(int(row[c]) for c in ("tokensIn", "tokensOut") if pd.notna(row[c]))
                tokens += used
                answers.append({"answer": row["extracted"] if pd.notna(row["extracted"]) else None,
                                "verdict": row["verdict"], "tokens": used})
            save_run(store, run_id, describe(model, procedure, settings, draws=0, answers=answers,
                                             learner=learner, runId=run_id), "running", learner=learner)
            if len(got) < len(ids):  # the server did not answer: stop here, the next run asks again
                pending, status = len(ids) - len(got), "incomplete"
                break
            if progress is not None:
                progress({"asked": len(procedure.path), "questions": ids,
                          "correct": [bool(rows.loc[q]["correct"]) for q in got]})
    except BaseException as exc:
        status = "failed" if isinstance(exc, RejectedRequestError) else status
        try:
            _save(store, run_id, describe(model, procedure, settings, draws=0, answers=answers, learner=learner,
                                          runId=run_id, model=backend.model), status, learner)
        except KstpError:
            pass  # the graph refused the record too: the first error is the one to tell
        raise
    record = describe(model, procedure, settings, draws=DRAWS if status == "finished" else 0, answers=answers,
                      learner=learner, runId=run_id, model=backend.model)
    _save(store, run_id, record, status, learner)
    return {**record, "status": status, "resumed": resumed, "askedNow": asked_now, "linked": linked,
            "tokens": tokens, "pending": pending}


def _save(store: GraphStore, run_id: str, record: dict, status: str, learner: str) -> None:
    save_run(store, run_id, record, status, learner=learner, requested=record["asked"],
             correct=sum(s["correct"] for s in record["path"]))
