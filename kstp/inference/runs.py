"""Run bookkeeping: one ``(:Run)`` per evaluation, resumable, with every completion kept.

A run is identified by its configuration (evaluator and version, model, backend with
its endpoint and model options, dataset, sampling, prompt template): re-running the
same command finds the run with the same configuration hash and resumes it. A
different configuration for the same evaluator, model and dataset is refused unless
the caller asks for a new run, so results from two configurations (or two servers
behind one model name) are never mixed by accident. The questions asked (``--limit``)
are not part of that identity: they are how far the run has got. A larger
``--limit`` extends the run, a smaller one resumes it and reports those questions.

Completions are ``(:Response)`` nodes keyed by their cache key (model, endpoint,
prompt template, prompt hash, sampling, seed, sample index), linked
``(:Learner)-[:GAVE]->(:Response)-[:TO]->(:Question)`` and
``(:Response)-[:IN_RUN]->(:Run)``. A request that failed in transport (no output
after the backend's retries) is not stored: it is not the model's answer; the run is
left incomplete and a resumed run asks for it again. A request the server rejects as
wrong (:class:`~kstp.inference.backend.RejectedRequestError`) stops the run with
nothing stored for it. Every other completion, failed or not, is final; a reply with
neither content nor reasoning is stored as the failure ``empty: ...``. Completions are
stored in small batches as they arrive, and on Ctrl-C, SIGTERM or a rejected request
every completion that has arrived is stored before the error goes on. Every evaluator
that asks a model goes through :func:`generate_and_store`.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
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
    RejectedRequestError,
    Sampling,
    cache_key,
    endpoint_of,
    prompt_hash,
)
from kstp.inference.grading import Verdict

__all__ = ["RunSpec", "ConfigChangedError", "model_learner_id", "open_run", "pending", "write_responses",
           "Generation", "generate_and_store", "write_verdicts", "finish_run", "now", "few_ids", "EMPTY_REPLY"]

#: Completions per store write while a run generates: a kill loses at most this many.
BATCH = 8
#: ``error`` of a reply with neither content nor reasoning: stored, final, counted as failed.
EMPTY_REPLY = "empty: the reply has no content and no reasoning"


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
    """Everything that makes two runs comparable; the hash of its :meth:`identity` identifies the run.

    ``options["questions"]`` (a list of question ids, or ``"all"``), where an evaluator
    sets it, is the run's coverage, not its identity.
    """

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

    def identity(self) -> dict:
        """:meth:`config` without the questions asked (see :func:`_identity`)."""
        return _identity(self.config())

    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()

    def run_id(self) -> str:
        return f"{self.evaluator}:{self.model}:{self.dataset}:{self.config_hash()[:12]}"


def _identity(config: dict) -> dict:
    """A stored or new configuration without ``options.questions``.

    >>> _identity({"model": "m", "options": {"questions": ["q1"], "k": 2}})
    {'model': 'm', 'options': {'k': 2}}
    """
    return {**config, "options": {k: v for k, v in config.get("options", {}).items() if k != "questions"}}


def _covered(old, new):
    """The questions of a run after it is asked ``new``: ``"all"`` or the old ids then the new ones.

    >>> _covered(["q1", "q2"], ["q1", "q3"]), _covered(["q1"], "all"), _covered("all", ["q1"])
    (['q1', 'q2', 'q3'], 'all', 'all')
    """
    if old == "all" or new == "all":
        return "all"
    return list(old) + [q for q in new if q not in set(old)]


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


def open_run(store: GraphStore, spec: RunSpec, new_run: bool = False) -> tuple[str, bool]:
    """The run to write into: ``(run id, resumed)``.

    Resumes the newest run whose configuration, questions aside, is the same; a run
    asked for questions it has not covered yet records them (its questions become
    the union, or ``"all"``). Otherwise creates a run, provided ``new_run`` is true or
    no run of this evaluator, model and dataset holds a Response (one stopped at its
    first request, say by a server that rejected it, has no results to keep apart: a
    fixed configuration needs no ``--new-run``).

    Raises
    ------
    ConfigChangedError
        When the configuration differs from the newest run that holds Responses and
        ``new_run`` is false; the message lists what changed.
    """
    runs = store.frame("runs_of", {"evaluator": spec.evaluator, "model": spec.model, "dataset": spec.dataset})
    config, identity = spec.config(), spec.identity()
    for run in runs.itertuples(index=False):  # newest first
        old = json.loads(run.config)
        if _identity(old) != identity:
            continue
        questions = _covered(old["options"].get("questions", "all"), config["options"].get("questions", "all"))
        if "questions" in config["options"]:
            old["options"]["questions"] = questions
        store.write_nodes("Run", pd.DataFrame([{"id": run.runId, "status": "running", "finishedAt": None,
                                                "configHash": spec.config_hash(),
                                                "config": json.dumps(old, sort_keys=True)}]))
        return run.runId, True
    kept = runs[runs["responses"] > 0]  # a run without any has no results to keep apart
    if len(kept) and not new_run:
        changes = _differences(_identity(json.loads(kept.iloc[0]["config"])), identity)
        raise ConfigChangedError(
            f"the configuration differs from run {kept.iloc[0]['runId']} ({'; '.join(changes)}); "
            "pass --new-run to start a new run with it")
    store.write_nodes("Run", pd.DataFrame([{
        "id": spec.run_id(), "evaluator": spec.evaluator, "evaluatorVersion": spec.evaluator_version,
        "model": spec.model, "backend": spec.backend, "dataset": spec.dataset,
        "sampling": json.dumps(spec.sampling.as_dict(), sort_keys=True),
        "promptTemplateHash": spec.prompt_template_hash, "configHash": spec.config_hash(),
        "config": json.dumps(config, sort_keys=True), "gitHash": _git_hash(), "kstpVersion": __version__,
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


@dataclass(frozen=True)
class Generation:
    """What :func:`generate_and_store` did.

    Attributes
    ----------
    requested : int
        Completions the run asks for in all (stored before or now, or pending).
    stored : int
        Completions stored now.
    pending : int
        Requests that failed in transport after the backend's retries, or were not
        asked because a whole batch had failed so (the server looks down); nothing is
        stored for them and the next run asks them.
    last_failure : str or None
        The error of the last transport failure (``"transport: HTTP 503 ..."``).
    """

    requested: int
    stored: int
    pending: int = 0
    last_failure: str | None = None

    @property
    def status(self) -> str:
        """The run's status after it: ``finished``, or ``incomplete`` while requests are pending."""
        return "incomplete" if self.pending else "finished"


def generate_and_store(store: GraphStore, backend: Backend, run_id: str, learner_id: str,
                       prompts: Mapping[Hashable, list[Message]], sampling: Sampling,
                       score: Callable[[pd.DataFrame, list[Completion]], None] | None = None,
                       samples: Mapping[Hashable, Sequence[int]] | None = None, chunk: int = BATCH,
                       progress: Callable[[int, int], None] | None = None,
                       keys: Mapping[tuple[Hashable, int], str] | None = None,
                       columns: Mapping[Hashable, dict] | None = None) -> Generation:
    """Complete every (prompt, sample) not stored yet, storing each batch before it is scored.

    Parameters
    ----------
    prompts : mapping of a prompt id to messages
        Prompt id (a question id unless ``columns`` says otherwise) -> its chat.
    score : callable, optional
        ``score(rows, completions)`` per batch, after the batch is stored: ``rows`` are
        the Response rows written (``id``, ``sampleIndex``, ``text`` ... and the
        ``columns``), ``completions`` the matching :class:`Completion` objects, in the
        same order.
    samples : mapping of a prompt id to sequence of int, optional
        Sample indices per prompt (default: ``range(sampling.n)`` for each).
    chunk : int
        Prompts per ``generate`` call (at most :data:`BATCH` are asked at once, so a
        killed run loses at most that many completions).
    progress : callable, optional
        ``progress(done, total)`` as completions arrive.
    keys : mapping of (prompt id, sample index) to str, optional
        The Response id of each completion (default: its :func:`cache_key`).
    columns : mapping of a prompt id to dict, optional
        Response properties of the prompt's completions (default: ``{"question": id}``;
        a ``question`` gets a ``TO`` edge).

    Returns
    -------
    Generation
        Completions already stored under the same key (by this or another run) are
        linked into this run, not asked again. Transport failures are not stored and
        are :attr:`Generation.pending`; after a batch in which every request failed so,
        the rest is not asked either.

    Raises
    ------
    RejectedRequestError
        When the server rejects a request as wrong (bad key, unknown model, ...), after
        the completions that had arrived are stored and scored.
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, after the completions that had arrived are stored and scored.
    """
    hashes = {p: prompt_hash(m) for p, m in prompts.items()}
    columns = columns if columns is not None else {p: {"question": p} for p in prompts}
    if keys is None:
        endpoint, template = endpoint_of(backend), _template_of(store, run_id)
        keys = {(p, i): cache_key(backend.model, hashes[p], sampling, i, endpoint, template)
                for p in prompts for i in (samples[p] if samples is not None else range(sampling.n))}
    todo = pending(store, list(keys.values()))
    stored = [{"id": key, **columns[p]} for (p, _), key in keys.items() if key not in todo]
    if stored:
        write_responses(store, run_id, learner_id, pd.DataFrame(stored))
    wanted: dict[Hashable, list[int]] = {}
    for (p, i), key in keys.items():
        if key in todo:
            wanted.setdefault(p, []).append(i)
    total, done, asked, last_failure = sum(map(len, wanted.values())), 0, 0, None
    items = list(wanted.items())

    def keep(part, results) -> int:
        nonlocal last_failure
        rows, completions = [], []
        for (p, _), answered in zip(part, results, strict=True):
            for c in answered:
                if c.text is None and (c.error or "").startswith(TRANSPORT_ERROR):
                    last_failure = c.error
                    continue  # not the model's answer: asked again by the next run
                if c.error is None and not (c.text or "").strip() and not (c.reasoning or "").strip():
                    c = replace(c, error=EMPTY_REPLY)
                rows.append({"id": keys[(p, c.sample_index)], **columns[p], "model": backend.model,
                             "promptHash": hashes[p], "sampleIndex": c.sample_index, "seed": c.seed,
                             "text": c.text, "reasoning": c.reasoning, "finishReason": c.finish_reason,
                             "error": c.error, "tokensIn": c.tokens_in, "tokensOut": c.tokens_out,
                             "latencyS": c.latency_s, "createdAt": now()})
                completions.append(c)
        if rows:
            frame = pd.DataFrame(rows)
            write_responses(store, run_id, learner_id, frame)  # stored before it is scored
            if score:
                score(frame, completions)
        return len(rows)

    step = max(1, min(chunk, BATCH))
    for start in range(0, len(items), step):
        part = items[start:start + step]
        try:
            results = backend.generate([prompts[p] for p, _ in part], sampling, [s for _, s in part],
                                       progress=(lambda d, base=asked: progress(base + d, total)) if progress
                                       else None)
        except (Interrupted, RejectedRequestError) as stop:
            keep(part, stop.partial)
            raise
        asked += sum(len(s) for _, s in part)
        kept = keep(part, results)
        done += kept
        if not kept:
            break  # a whole batch failed in transport: the server is down, the next run asks the rest
    return Generation(len(keys), done, total - done, last_failure)


def write_verdicts(store: GraphStore, ids: Sequence[str], verdicts: Sequence[Verdict], **extra) -> None:
    """Write each Response's grade: extracted answer, extraction method, correct, verdict (and ``extra`` columns)."""
    store.write_nodes("Response", pd.DataFrame({
        "id": list(ids), **extra, "extracted": [v.extracted for v in verdicts],
        "extractionMethod": [v.method for v in verdicts], "correct": [v.correct for v in verdicts],
        "verdict": [v.reason for v in verdicts]}))


def finish_run(store: GraphStore, run_id: str, status: str, **figures) -> None:
    """Record the run's end: status (``finished``, ``interrupted``, ``failed``), time and figures."""
    store.write_nodes("Run", pd.DataFrame([{"id": run_id, "status": status, "finishedAt": now(), **figures}]))
