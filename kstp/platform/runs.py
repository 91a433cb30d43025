"""Run bookkeeping: one ``(:Run)`` per evaluation, resumable, with every completion kept.

A run is identified by its configuration (evaluator and version, model, backend,
dataset, sampling, prompt template): re-running the same command finds the run with
the same configuration hash and resumes it. A different configuration for the same
evaluator, model and dataset is refused unless the caller asks for a new run, so
results from two configurations are never mixed by accident.

Completions are ``(:Response)`` nodes keyed by their cache key (model, prompt hash,
sampling, seed, sample index), linked ``(:Learner)-[:GAVE]->(:Response)-[:TO]->
(:Question)`` and ``(:Response)-[:IN_RUN]->(:Run)``. A completion that failed in
transport (no output) is retried by a resumed run; every other completion, failed
or not, is final.
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

from kstp import __version__
from kstp.platform.answers import Verdict
from kstp.platform.errors import KstpError
from kstp.platform.inference import TRANSPORT_ERROR, Backend, Completion, Message, Sampling, cache_key, prompt_hash
from kstp.platform.store import GraphStore

__all__ = ["RunSpec", "ConfigChangedError", "model_learner_id", "open_run", "pending", "write_responses",
           "generate_and_store", "write_verdicts", "finish_run", "now"]


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

    def config(self) -> dict:
        return {"evaluator": self.evaluator, "evaluatorVersion": self.evaluator_version, "model": self.model,
                "backend": self.backend, "dataset": self.dataset, "sampling": self.sampling.as_dict(),
                "promptTemplateHash": self.prompt_template_hash, "options": self.options}

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
            out.append(f"{prefix}{key}: {a!r} -> {b!r}")
    return out


def open_run(store: GraphStore, spec: RunSpec, new_run: bool = False) -> tuple[str, bool]:
    """The run to write into: ``(run id, resumed)``.

    Resumes the run with the same configuration if there is one; otherwise creates
    one, provided the latest run of this evaluator, model and dataset has the same
    configuration or ``new_run`` is true.

    Raises
    ------
    ConfigChangedError
        When the configuration changed since the latest run and ``new_run`` is false;
        the message lists what changed.
    """
    runs = store.frame("runs_of", {"evaluator": spec.evaluator, "model": spec.model, "dataset": spec.dataset})
    digest = spec.config_hash()
    if (runs["configHash"] == digest).any():
        store.write_nodes("Run", pd.DataFrame([{"id": spec.run_id(), "status": "running", "finishedAt": None}]))
        return spec.run_id(), True
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


def generate_and_store(store: GraphStore, backend: Backend, run_id: str, learner_id: str,
                       prompts: Mapping[str, list[Message]], sampling: Sampling,
                       score: Callable[[pd.DataFrame, list[Completion]], None],
                       samples: Mapping[str, Sequence[int]] | None = None, chunk: int = 64,
                       progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
    """Complete every (question, sample) not stored yet, storing each chunk before it is scored.

    Parameters
    ----------
    prompts : mapping of str to messages
        Question id -> its prompt.
    score : callable
        ``score(rows, completions)`` per chunk, after the chunk is stored: ``rows`` are
        the Response rows written (``id``, ``question``, ``sampleIndex``, ``text`` ...),
        ``completions`` the matching :class:`Completion` objects, in the same order.
    samples : mapping of str to sequence of int, optional
        Sample indices per question (default: ``range(sampling.n)`` for each).
    chunk : int
        Questions per ``generate`` call.
    progress : callable, optional
        ``progress(done, total)`` as completions arrive.

    Returns
    -------
    (int, int)
        Completions this run asks for in all, and those generated now. Completions
        already stored under the same cache key (by this or another run) are linked
        into this run, not asked again.
    """
    hashes = {q: prompt_hash(p) for q, p in prompts.items()}
    keys = {(q, i): cache_key(backend.model, hashes[q], sampling, i)
            for q in prompts for i in (samples[q] if samples is not None else range(sampling.n))}
    todo = pending(store, list(keys.values()))
    stored = [(key, q) for (q, _), key in keys.items() if key not in todo]
    if stored:
        write_responses(store, run_id, learner_id, pd.DataFrame(stored, columns=["id", "question"]))
    wanted: dict[str, list[int]] = {}
    for (q, i), key in keys.items():
        if key in todo:
            wanted.setdefault(q, []).append(i)
    total, done = sum(map(len, wanted.values())), 0
    items = list(wanted.items())
    for start in range(0, len(items), chunk):
        part = items[start:start + chunk]
        results = backend.generate([prompts[q] for q, _ in part], sampling, [s for _, s in part],
                                   progress=(lambda d, base=done: progress(base + d, total)) if progress else None)
        rows, completions = [], []
        for (q, _), answered in zip(part, results, strict=True):
            for c in answered:
                rows.append({"id": keys[(q, c.sample_index)], "question": q, "model": backend.model,
                             "promptHash": hashes[q], "sampleIndex": c.sample_index, "seed": c.seed,
                             "text": c.text, "finishReason": c.finish_reason, "error": c.error,
                             "tokensIn": c.tokens_in, "tokensOut": c.tokens_out, "latencyS": c.latency_s,
                             "createdAt": now()})
                completions.append(c)
        frame = pd.DataFrame(rows)
        write_responses(store, run_id, learner_id, frame)  # stored before it is scored
        score(frame, completions)
        done += len(frame)
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
