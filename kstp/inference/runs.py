"""Run bookkeeping: one ``(:Run)`` per evaluation, resumable, with every completion kept.

A run is identified by its configuration (evaluator and version, model, backend with
its endpoint and model options, dataset, sampling, prompt template): re-running the
same command finds the run with the same configuration hash and resumes it. A
different configuration for the same evaluator, model and dataset is refused unless
the caller asks for a new run, so results from two configurations (or two servers
behind one model name) are never mixed by accident. A change that only adds work (a
larger ``--limit``: the old questions are a subset of the new) extends the run.

Completions are ``(:Response)`` nodes keyed by their cache key (model, endpoint,
prompt template, prompt hash, sampling, seed, sample index), linked
``(:Learner)-[:GAVE]->(:Response)-[:TO]->(:Question)`` and
``(:Response)-[:IN_RUN]->(:Run)``. A completion that failed in transport (no output)
is not stored: it is not the model's answer, and a resumed run asks for it again;
every other completion, failed or not, is final. Completions are stored in small
batches as they arrive, and on Ctrl-C or SIGTERM every completion that has arrived is
stored before the interruption goes on.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from kstp._version import __version__
from kstp.errors import KstpError
from kstp.graph.store import GraphStore
from kstp.inference.backend import (
    TRANSPORT_ERROR,
    Backend,
    Completion,
    Interrupted,
    Message,
    Sampling,
    cache_key,
    endpoint_of,
    prompt_hash,
)
from kstp.inference.grading import Verdict

__all__ = ["RunSpec", "ConfigChangedError", "model_learner_id", "open_run", "pending", "write_responses",
           "generate_and_store", "write_verdicts", "finish_run", "now", "few_ids"]

#: Completions per store write while a run generates: a kill loses at most this many.
BATCH = 8


def few_ids(ids, shown: int = 3) -> str:
    """At most ``shown`` ids, then how many more: ``'q1, q2, q3 and 5 more'``.

    >>> few_ids(["q1", "q2", "q3", "q4", "q5"])
    'q1, q2, q3 and 2 more'
    >>> few_ids(["q1"])
    'q1'
    """
    ids = [str(i) for i in ids]
    more = len(ids) - shown
    return ", ".join(ids[:shown]) + (f" and {more} more" if more > 0 else "")


class ConfigChangedError(KstpError):
    """The configuration differs from the existing run's and no new run was asked for."""


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _git_hash() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


@dataclass(frozen=True)
class RunSpec:
    """Everything that makes two runs comparable; its hash identifies the run."""

    evaluator: str
    evaluator_version: str
    model: str
    backend: str
    dataset: str
    sampling: Sampling
    prompt_template_hash: str
    options: dict = field(default_factory=dict)
    endpoint: dict = field(default_factory=dict)

    @classmethod
    def of(cls, backend: Backend, evaluator: str, version: str, dataset: str, sampling: Sampling,
           template_hash: str, options: dict | None = None) -> RunSpec:
        """The spec of ``backend``'s model: its name, endpoint and model options included."""
        return cls(evaluator, version, backend.model, backend.name, dataset, sampling, template_hash,
                   options or {}, endpoint_of(backend))

    def config(self) -> dict:
        return {"evaluator": self.evaluator, "evaluatorVersion": self.evaluator_version, "model": self.model,
                "backend": self.backend, "endpoint": self.endpoint, "dataset": self.dataset,
                "sampling": self.sampling.as_dict(), "promptTemplateHash": self.prompt_template_hash,
                "options": self.options}

    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()

    def run_id(self) -> str:
        return f"{self.evaluator}:{self.model}:{self.dataset}:{self.config_hash()[:12]}"


def _differences(old: dict, new: dict, prefix: str = "") -> list[str]:
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}: {_shown(a)} -> {_shown(b)}")
    return out


def _shown(value) -> str:
    """A value for a message: a long list as a few items and a count."""
    return f"[{few_ids(value)}] ({len(value)})" if isinstance(value, list) and len(value) > 3 else repr(value)


def _only_adds_work(old: dict, new: dict) -> bool:
    """Whether ``new`` differs from ``old`` only by asking more questions (a larger ``--limit``)."""
    old_questions, new_questions = old.get("options", {}).get("questions"), new.get("options", {}).get("questions")
    if not isinstance(old_questions, list) or old_questions == new_questions:
        return False
    same = {**old, "options": {**old["options"], "questions": None}} == \
        {**new, "options": {**new["options"], "questions": None}}
    return same and (new_questions == "all" or (isinstance(new_questions, list)
                                                 and set(old_questions) <= set(new_questions)))


def open_run(store: GraphStore, spec: RunSpec, new_run: bool = False) -> tuple[str, bool]:
    """The run to write into: ``(run id, resumed)``.

    Resumes the run with the same configuration if there is one; extends the latest
    run when the new configuration only adds questions to it (its configuration
    becomes the new one); otherwise creates one, provided the latest run of this
    evaluator, model and dataset has the same configuration or ``new_run`` is true.

    Raises
    ------
    ConfigChangedError
        When the configuration changed since the latest run and ``new_run`` is false;
        the message lists what changed.
    """
    runs = store.frame("runs_of", {"evaluator": spec.evaluator, "model": spec.model, "dataset": spec.dataset})
    digest = spec.config_hash()
    same = runs[runs["configHash"] == digest]
    if len(same):
        run_id = same.iloc[0]["runId"]
        store.write_nodes("Run", pd.DataFrame([{"id": run_id, "status": "running", "finishedAt": None}]))
        return run_id, True
    if len(runs) and _only_adds_work(json.loads(runs.iloc[0]["config"]), spec.config()):
        run_id = runs.iloc[0]["runId"]
        store.write_nodes("Run", pd.DataFrame([{"id": run_id, "status": "running", "finishedAt": None,
                                                "configHash": digest,
                                                "config": json.dumps(spec.config(), sort_keys=True)}]))
        return run_id, True
    if len(runs) and not new_run:
        changes = _differences(json.loads(runs.iloc[0]["config"]), spec.config())
        raise ConfigChangedError(
            f"the configuration differs from run {runs.iloc[0]['runId']} ({'; '.join(changes)}); "
            "pass --new-run to start a new run with it")
    store.write_nodes("Run", pd.DataFrame([{
        "id": spec.run_id(), "evaluator": spec.evaluator, "evaluatorVersion": spec.evaluator_version,
        "model": spec.model, "backend": spec.backend, "dataset": spec.dataset,
        "sampling": json.dumps(spec.sampling.as_dict(), sort_keys=True),
        "promptTemplateHash": spec.prompt_template_hash, "configHash": digest,
        "config": json.dumps(spec.config(), sort_keys=True), "gitHash": _git_hash(), "kstpVersion": __version__,
        "startedAt": now(), "status": "running"}]))
    return spec.run_id(), False


def model_learner_id(model: str) -> str:
    """The Learner id of a model: ``model:<name>``."""
    return f"model:{model}"


def pending(store: GraphStore, keys: list[str]) -> set[str]:
    """The cache keys among ``keys`` that still need a completion (absent or transport-failed)."""
    stored = store.frame("responses_by_id", {"ids": keys})
    final = stored[~stored["error"].fillna("").str.startswith(TRANSPORT_ERROR)]
    return set(keys) - set(final["responseId"])


def write_responses(store: GraphStore, run_id: str, learner_id: str, rows: pd.DataFrame) -> None:
    """Write completions as Responses of ``learner_id`` in ``run_id`` (idempotent).

    ``rows`` has ``id`` (the cache key), any Response properties and, where a
    response answers one question, ``question`` (its id; it gets a ``TO`` edge).
    """
    store.write_nodes("Response", rows)
    ids = rows["id"]
    store.write_relationships("GAVE", "Learner", "Response", pd.DataFrame({"from_id": learner_id, "to_id": ids}))
    if "question" in rows:
        store.write_relationships("TO", "Response", "Question",
                                  pd.DataFrame({"from_id": ids, "to_id": rows["question"]}))
    store.write_relationships("IN_RUN", "Response", "Run", pd.DataFrame({"from_id": ids, "to_id": run_id}))


def _template_of(store: GraphStore, run_id: str) -> str | None:
    """The prompt template hash recorded on the run (part of every cache key of the run)."""
    run = store.frame("run_by_id", {"runId": run_id})
    return json.loads(run.iloc[0]["config"]).get("promptTemplateHash") if len(run) and run.iloc[0]["config"] else None


def generate_and_store(store: GraphStore, backend: Backend, run_id: str, learner_id: str,
                       prompts: Mapping[str, list[Message]], sampling: Sampling,
                       score: Callable[[pd.DataFrame, list[Completion]], None],
                       samples: Mapping[str, Sequence[int]] | None = None, chunk: int = BATCH,
                       progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
    """Complete every (question, sample) not stored yet, storing each batch before it is scored.

    Parameters
    ----------
    prompts : mapping of str to messages
        Question id -> its prompt.
    score : callable
        ``score(rows, completions)`` per batch, after the batch is stored: ``rows`` are
        the Response rows written (``id``, ``question``, ``sampleIndex``, ``text`` ...),
        ``completions`` the matching :class:`Completion` objects, in the same order.
    samples : mapping of str to sequence of int, optional
        Sample indices per question (default: ``range(sampling.n)`` for each).
    chunk : int
        Questions per ``generate`` call (at most :data:`BATCH` are asked at once, so a
        killed run loses at most that many completions).
    progress : callable, optional
        ``progress(done, total)`` as completions arrive.

    Returns
    -------
    (int, int)
        Completions this run asks for in all, and those stored now. Completions
        already stored under the same cache key (by this or another run) are linked
        into this run, not asked again. Transport failures are not stored (a rerun
        asks them again).

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, after the completions that had arrived are stored and scored.
    """
    hashes = {q: prompt_hash(p) for q, p in prompts.items()}
    endpoint, template = endpoint_of(backend), _template_of(store, run_id)
    keys = {(q, i): cache_key(backend.model, hashes[q], sampling, i, endpoint, template)
            for q in prompts for i in (samples[q] if samples is not None else range(sampling.n))}
    todo = pending(store, list(keys.values()))
    stored = [(key, q) for (q, _), key in keys.items() if key not in todo]
    if stored:
        write_responses(store, run_id, learner_id, pd.DataFrame(stored, columns=["id", "question"]))
    wanted: dict[str, list[int]] = {}
    for (q, i), key in keys.items():
        if key in todo:
            wanted.setdefault(q, []).append(i)
    total, done, asked = sum(map(len, wanted.values())), 0, 0
    items = list(wanted.items())

    def keep(part, results) -> int:
        rows, completions = [], []
        for (q, _), answered in zip(part, results, strict=True):
            for c in answered:
                if c.text is None and (c.error or "").startswith(TRANSPORT_ERROR):
                    continue  # not the model's answer: asked again by the next run
                rows.append({"id": keys[(q, c.sample_index)], "question": q, "model": backend.model,
                             "promptHash": hashes[q], "sampleIndex": c.sample_index, "seed": c.seed,
                             "text": c.text, "finishReason": c.finish_reason, "error": c.error,
                             "tokensIn": c.tokens_in, "tokensOut": c.tokens_out, "latencyS": c.latency_s,
                             "createdAt": now()})
                completions.append(c)
        if rows:
            frame = pd.DataFrame(rows)
            write_responses(store, run_id, learner_id, frame)  # stored before it is scored
            score(frame, completions)
        return len(rows)

    step = max(1, min(chunk, BATCH))
    for start in range(0, len(items), step):
        part = items[start:start + step]
        try:
            results = backend.generate([prompts[q] for q, _ in part], sampling, [s for _, s in part],
                                       progress=(lambda d, base=asked: progress(base + d, total)) if progress
                                       else None)
        except Interrupted as stop:
            keep(part, stop.partial)
            raise
        asked += sum(len(s) for _, s in part)
        done += keep(part, results)
    return len(keys), done


def write_verdicts(store: GraphStore, ids: Sequence[str], verdicts: Sequence[Verdict], **extra) -> None:
    """Write each Response's grade: extracted answer, extraction method, correct, verdict (and ``extra`` columns)."""
    store.write_nodes("Response", pd.DataFrame({
        "id": list(ids), **extra, "extracted": [v.extracted for v in verdicts],
        "extractionMethod": [v.method for v in verdicts], "correct": [v.correct for v in verdicts],
        "verdict": [v.reason for v in verdicts]}))


def finish_run(store: GraphStore, run_id: str, status: str, **figures) -> None:
    """Record the run's end: status (``finished``, ``interrupted``, ``failed``), time and figures."""
    store.write_nodes("Run", pd.DataFrame([{"id": run_id, "status": status, "finishedAt": now(), **figures}]))
