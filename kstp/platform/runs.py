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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from kstp import __version__
from kstp.platform.errors import KstpError
from kstp.platform.inference import TRANSPORT_ERROR, Sampling
from kstp.platform.store import GraphStore

__all__ = ["RunSpec", "ConfigChangedError", "open_run", "pending", "write_responses", "finish_run", "now"]


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


def finish_run(store: GraphStore, run_id: str, status: str, **figures) -> None:
    """Record the run's end: status (``finished``, ``interrupted``, ``failed``), time and figures."""
    store.write_nodes("Run", pd.DataFrame([{"id": run_id, "status": status, "finishedAt": now(), **figures}]))
