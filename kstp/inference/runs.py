"""Run bookkeeping: one ``(:Run)`` per evaluation, resumable, with every completion kept.

A run is identified by its configuration (evaluator and version, model, backend with
its endpoint and model options, dataset, sampling, prompt template): re-running the
same command finds the run with the same configuration hash and resumes it. A
different configuration for the same evaluator, model and dataset is refused unless
the caller asks for a new run, so results from two configurations are never mixed by
accident. The servers asked are recorded but are not the identity: one server's run
and three servers' run of a model are one run, resumed across them (:data:`WHERE`). The questions asked (``--limit``)
are not part of that identity: they are how far the run has got. A larger
``--limit`` extends the run, a smaller one resumes it and reports those questions.

Completions are ``(:Response)`` nodes keyed by their cache key (model, model options,
prompt template, prompt hash, sampling, seed, sample index), linked
``(:Learner)-[:GAVE]->(:Response)-[:TO]->(:Question)`` and
``(:Response)-[:IN_RUN]->(:Run)``. Every evaluator that asks a model goes through
:func:`generate_and_store`, a pipeline rather than a loop over batches::

    requests -> a window of W in flight, refilled as each finishes (the backend's thread)
             -> each reply classified: the model's answer | the model's failure | a server failure
             -> answers and model failures stored in groups (GROUP replies or INTERVAL s), one writer
             -> stored replies graded in the grading process, within a time limit each

The window (how many requests are in flight, ``--concurrency``) and the store group
(how much a kill -9 may lose) are separate knobs. A server's failure is never the
model's answer: a request that failed in transport after the backend's retries, a
reply without choices or an error body, a generation the server aborted: nothing is
stored for it, the run is left incomplete and the next run asks it again. A request
the server rejects as wrong (:class:`~kstp.inference.backend.RejectedRequestError`)
stops the run with nothing stored for it. The model's own failures are final and
recorded with their reason: a reply with neither content nor reasoning is stored as
``empty: ...``, one cut at ``max_tokens`` before any content as ``truncated: ...``. Two
failures that are neither the server's nor the model's are stored and counted apart: a
reply the provider's content filter stopped (``filtered: ...``, final) and a question
whose prompt is longer than the server's window (``overflow: ...``; the next run asks it
again, one quick refusal, so that a server given a larger window answers it). Every
stored reply has its inline reasoning trace split off and its lone surrogates replaced
first (:func:`~kstp.inference.replies.tidy`). On
Ctrl-C, SIGTERM or a rejected request every completion that has arrived is stored and
graded before the error goes on. A stored reply without a grade (a run killed between
storing and grading) is graded by the next run before anything is asked.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import inspect
import json
import os
import socket
import subprocess
import time
from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from kstp._version import __version__
from kstp.errors import KstpError
from kstp.graph.store import GraphStore
from kstp.inference.backend import (
    DEFAULT_WINDOW,
    OVERFLOW,
    TRANSPORT_ERROR,
    Arrivals,
    Backend,
    Completion,
    Message,
    Request,
    Sampling,
    cache_key,
    endpoint_of,
    prompt_hash,
    truncation,
)
from kstp.inference.grader import GRADE_TIMEOUT_S, shared_grader
from kstp.inference.grading import Verdict
from kstp.inference.replies import TRACE_RULE, tidy
from kstp.settings import CAMPAIGN_CELL_ENV

__all__ = ["RunSpec", "ConfigChangedError", "model_learner_id", "open_run", "pending", "write_responses",
           "Generation", "Grading", "generate_and_store", "verdict_properties", "write_verdicts", "finish_run", "now",
           "few_ids", "git_hash", "EMPTY_REPLY", "TRUNCATED_EMPTY", "FILTERED", "ASKED_AGAIN",
           "GROUP", "INTERVAL", "progress_reporter", "run_truncation", "process_marks", "WHERE"]

#: Completions per store write, at most, while a run generates: with :data:`INTERVAL`, what a kill -9 may lose.
GROUP = 64
#: Seconds between two store writes, at most, while completions arrive.
INTERVAL = 2.0
#: ``error`` of a reply with neither content nor reasoning: stored, final, counted as failed.
EMPTY_REPLY = "empty: the reply has no content and no reasoning"
#: ``error`` of a reply cut at ``max_tokens`` before any content: stored, final, a truncation.
TRUNCATED_EMPTY = "truncated: max_tokens was reached before any content"
#: ``error`` of a reply the provider's content filter stopped (``finish_reason`` ``content_filter``; its content,
#: null or partial, is kept but never graded): stored, final, counted apart from the model's own failures.
FILTERED = "filtered: the provider's content filter stopped the reply (finish_reason content_filter)"


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


def git_hash() -> str | None:
    """The commit of kstp's git checkout (None outside one, or without git)."""
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
    sets it, is the run's coverage, not its identity. ``tag`` names a replicate
    (``--tag``, ``--repeat``): part of the identity and of every cache key where it is
    set, absent from both where it is not, so a run without a tag hashes as it always
    did. ``prompt_template`` is the template's text (``{"system": ..., "user": ...}``),
    recorded on the Run for its logs; its hash, ``prompt_template_hash``, is the identity.
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
    tag: str | None = None
    prompt_template: dict | None = field(default=None, compare=False)

    @classmethod
    def of(cls, backend: Backend, evaluator: str, version: str, dataset: str, sampling: Sampling,
           template_hash: str, options: dict | None = None, tag: str | None = None,
           prompt_template: dict | None = None) -> RunSpec:
        """The spec of ``backend``'s model: its name, endpoint and model options included."""
        return cls(evaluator, version, backend.model, backend.name, dataset, sampling, template_hash,
                   options or {}, endpoint_of(backend), tag, prompt_template)

    def config(self) -> dict:
        """The stored configuration: what :meth:`identity` hashes, and the questions asked.

        >>> spec = RunSpec("answers", "1.0", "m", "openai", "toy", Sampling(), "t")
        >>> "tag" in spec.config(), RunSpec(**{**vars(spec), "tag": "rep2"}).config()["tag"]
        (False, 'rep2')
        """
        config = {"evaluator": self.evaluator, "evaluatorVersion": self.evaluator_version, "model": self.model,
                  "backend": self.backend, "endpoint": self.endpoint, "dataset": self.dataset,
                  "sampling": self.sampling.as_dict(), "promptTemplateHash": self.prompt_template_hash,
                  "options": self.options}
        if self.tag is not None:  # an untagged run's configuration, and so its hash and id, as before tags
            config["tag"] = self.tag
        return config

    def identity(self) -> dict:
        """:meth:`config` without the questions asked (see :func:`_identity`)."""
        return _identity(self.config())

    def config_hash(self) -> str:
        """SHA-256 of :meth:`identity`; a spec in the shape recorded before issue 45 (``endpoint.baseUrl``) hashes
        as it did then."""
        identity = self.identity()
        if "baseUrl" in self.endpoint:
            identity["endpoint"] = {k: v for k, v in self.endpoint.items() if k != "baseUrls"}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    def run_id(self) -> str:
        return f"{self.evaluator}:{self.model}:{self.dataset}:{self.config_hash()[:12]}"


#: Endpoint fields recorded with a run that are not its identity: where the model was served. One server's run
#: and three servers' run of a model are one run (issue 45); ``baseUrl`` is how runs before it recorded the server.
WHERE = ("baseUrl", "baseUrls")


def _identity(config: dict) -> dict:
    """A stored or new configuration without ``options.questions`` and the servers asked (:data:`WHERE`).

    >>> _identity({"model": "m", "options": {"questions": ["q1"], "k": 2}})
    {'model': 'm', 'options': {'k': 2}}
    >>> _identity({"model": "m", "endpoint": {"backend": "openai", "baseUrls": ["http://a/v1", "http://b/v1"]}})
    {'model': 'm', 'endpoint': {'backend': 'openai'}, 'options': {}}
    """
    identity = {**config, "options": {k: v for k, v in config.get("options", {}).items() if k != "questions"}}
    if isinstance(config.get("endpoint"), dict):
        identity["endpoint"] = {k: v for k, v in config["endpoint"].items() if k not in WHERE}
    return identity


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
    template = {"promptTemplate": json.dumps(spec.prompt_template, sort_keys=True)} if spec.prompt_template else {}
    for run in runs.itertuples(index=False):  # newest first
        old = json.loads(run.config)
        if _identity(old) != identity:
            continue
        questions = _covered(old["options"].get("questions", "all"), config["options"].get("questions", "all"))
        if "questions" in config["options"]:
            old["options"]["questions"] = questions
        store.write_nodes("Run", pd.DataFrame([{"id": run.runId, "status": "running", "finishedAt": None,
                                                "configHash": spec.config_hash(),
                                                "config": json.dumps(old, sort_keys=True), **template,
                                                **process_marks()}]))
        return run.runId, True
    # a run without Responses has no results to keep apart; a replicate of another tag is apart already
    same_tag = runs["config"].map(lambda c: json.loads(c or "{}").get("tag") == spec.tag).astype(bool)
    kept = runs[(runs["responses"] > 0) & same_tag]
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
        "config": json.dumps(config, sort_keys=True), "gitHash": git_hash(), "kstpVersion": __version__,
        "startedAt": now(), "status": "running", "tag": spec.tag, **template, **process_marks()}]))
    return spec.run_id(), False


def process_marks() -> dict:
    """The Run properties naming the process that runs it: a ``running`` run whose process is gone was killed
    (``kstp runs list`` says so, :func:`~kstp.graph.manage.list_runs`)."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def model_learner_id(model: str) -> str:
    """The Learner id of a model: ``model:<name>``."""
    return f"model:{model}"


#: ``error`` prefixes of stored rows that a run asks again: a server's failure (stored by kstp before it kept
#: them out of the graph) and a prompt over the server's window (one quick refusal each, so that a server
#: restarted with a larger window answers them).
ASKED_AGAIN = (TRANSPORT_ERROR, OVERFLOW)


def _final(stored: pd.DataFrame) -> pd.DataFrame:
    """The stored rows (of ``responses_by_id``) that are final: no run asks them again (:data:`ASKED_AGAIN`)."""
    return stored[~stored["error"].fillna("").str.startswith(ASKED_AGAIN)]


def pending(store: GraphStore, keys: list[str]) -> set[str]:
    """The cache keys among ``keys`` that still need a completion (absent, transport-failed or over the window)."""
    return set(keys) - set(_final(store.frame("responses_by_id", {"ids": keys}))["responseId"])


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


def _keyed_by(store: GraphStore, run_id: str) -> tuple[str | None, str | None, dict | None]:
    """The prompt template hash, the tag and the endpoint recorded on the run (part of every cache key of the
    run; the endpoint None where the run records none)."""
    run = store.frame("run_by_id", {"runId": run_id})
    config = json.loads(run.iloc[0]["config"]) if len(run) and run.iloc[0]["config"] else {}
    endpoint = config.get("endpoint")
    return config.get("promptTemplateHash"), config.get("tag"), endpoint if isinstance(endpoint, dict) else None


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
        Requests that got no answer (a server's failure after the backend's retries, or
        not asked because the server looked down); nothing is stored for them and the
        next run asks them.
    last_failure : str or None
        The last server failure (``"transport: HTTP 503 ..."``).
    seconds : float
        Wall time from the first request to the last store write.
    tokens_out : int
        Output tokens of the completions stored now (as the backend counted them).
    window : int or None
        Requests in flight (the window the run was asked with).
    regraded : int
        Replies stored by an earlier run without a grade, or graded by another version of
        the grading function (:attr:`Grading.version`), graded now.
    endpoints : tuple of dict
        With several servers (``--base-url`` given more than once), each one's figures
        (:meth:`~kstp.inference.backends.endpoints.Endpoint.figures`: ``baseUrl``,
        ``completions``, ``completionsPerS``, ``tokensPerS``, ``failures``, ``away``); empty otherwise.
    """

    requested: int
    stored: int
    pending: int = 0
    last_failure: str | None = None
    seconds: float = field(default=0.0, compare=False)
    tokens_out: int = field(default=0, compare=False)
    window: int | None = field(default=None, compare=False)
    regraded: int = field(default=0, compare=False)
    endpoints: tuple = field(default=(), compare=False)

    @property
    def status(self) -> str:
        """The run's status after it: ``finished``, or ``incomplete`` while requests are pending."""
        return "incomplete" if self.pending else "finished"

    def rates(self) -> dict:
        """The pace of the completions asked now, for a summary and the Run node.

        ``concurrency`` (the window), ``generationS`` (seconds), ``completionsPerS`` and
        ``tokensPerS`` (None where nothing was asked, or no token counts came back); with several
        servers, ``endpoints``: each one's figures (:attr:`endpoints`; a summary's, not stored on the Run).

        >>> Generation(10, 8, seconds=2.0, tokens_out=1200, window=64).rates()
        {'concurrency': 64, 'generationS': 2.0, 'completionsPerS': 4.0, 'tokensPerS': 600.0}
        """
        per = (lambda n: round(n / self.seconds, 3)) if self.seconds > 0 and self.stored else (lambda n: None)
        rates = {"concurrency": self.window, "generationS": round(self.seconds, 3),
                 "completionsPerS": per(self.stored), "tokensPerS": per(self.tokens_out) if self.tokens_out else None}
        if self.endpoints:
            rates["endpoints"] = [dict(e) for e in self.endpoints]
        return rates

    def __add__(self, other: Generation) -> Generation:
        """Two calls of one run as one (an evaluator that asks in stages or attempts)."""
        return Generation(self.requested + other.requested, self.stored + other.stored, self.pending + other.pending,
                          other.last_failure or self.last_failure, self.seconds + other.seconds,
                          self.tokens_out + other.tokens_out, other.window or self.window,
                          self.regraded + other.regraded, other.endpoints or self.endpoints)


@dataclass(frozen=True)
class Grading:
    """How a run grades its replies: in the grading process (:mod:`kstp.inference.grader`), after storing.

    Attributes
    ----------
    function : callable
        A module-level function ``function(completion, *args[prompt id]) -> dict`` of
        Response properties, ``verdict`` among them (a reply whose ``verdict`` is null
        has not been graded). Keys that start with ``_`` are not stored; ``written``
        gets them.
    args : mapping of a prompt id to tuple
        The picklable arguments of each prompt's replies (the gold answer, ...).
    written : callable, optional
        ``written(graded)`` in the run's process after the properties are stored:
        ``graded`` has ``id`` and every key of the results (to write what is not a
        Response property, such as CoT steps).
    version : str, optional
        The grading function's version, written on each Response it grades
        (``graderVersion``): a stored reply graded by another version (or before versions
        were recorded) is graded again by the next run, before anything is asked.
    """

    function: Callable[..., dict]
    args: Mapping[Hashable, tuple]
    written: Callable[[pd.DataFrame], None] | None = None
    version: str | None = None


def verdict_properties(verdict: Verdict) -> dict:
    """The Response properties of a :class:`~kstp.inference.grading.Verdict` (what :func:`write_verdicts` writes):
    ``traceRule`` too where the grader split a reasoning trace off the text (a reply stored before kstp split
    traces when storing)."""
    properties = {"extracted": verdict.extracted, "extractionMethod": verdict.method, "correct": verdict.correct,
                  "verdict": verdict.reason}
    if verdict.trace is not None:
        properties[TRACE_RULE] = verdict.trace
    return properties


def _classify(completion: Completion) -> tuple[Completion | None, str | None]:
    """``(completion to store, None)``, or ``(None, why)`` for a server's failure: no answer of the model.

    >>> _classify(Completion(0, 42, text="partial", finish_reason="abort"))[1]
    "transport: the backend ended the generation (finish_reason 'abort')"
    >>> _classify(Completion(0, 42, text=None, finish_reason="length"))[0].error
    'truncated: max_tokens was reached before any content'
    >>> _classify(Completion(0, 42, text="<think>7?</think>5", finish_reason="stop"))[0].text
    '5'
    """
    if completion.text is None and (completion.error or "").startswith(TRANSPORT_ERROR):
        return None, completion.error
    completion = tidy(completion)  # an inline reasoning trace apart from the answer; no lone surrogate stored
    if completion.finish_reason == "content_filter" and completion.error is None:
        return replace(completion, error=FILTERED), None
    if completion.finish_reason in ("abort", "error"):
        return None, f"{TRANSPORT_ERROR}: the backend ended the generation (finish_reason {completion.finish_reason!r})"
    if completion.error is None and not (completion.text or "").strip() and not (completion.reasoning or "").strip():
        completion = replace(completion, error=TRUNCATED_EMPTY if completion.finish_reason == "length"
                             else EMPTY_REPLY)
    return completion, None


def progress_reporter(progress: Callable | None) -> Callable[[int, int, str], None]:
    """``progress`` called as ``(done, total, note=note)`` where it takes a ``note``, else as ``(done, total)``."""
    if progress is None:
        return lambda done, total, note: None
    try:
        parameters = inspect.signature(progress).parameters.values()
    except ValueError:  # no signature to read: the two-argument form every caller has
        parameters = ()
    if any(p.name == "note" or p.kind is p.VAR_KEYWORD for p in parameters):
        return lambda done, total, note: progress(done, total, note=note)
    return lambda done, total, note: progress(done, total)


def _note(window: int, arrived: int, tokens: int, seconds: float) -> str:
    """The progress note: window, completions per second and tokens per second.

    >>> _note(64, 120, 36000, 10.0)
    'window 64, 12.0 completions/s, 3,600 tokens/s'
    """
    rates = f", {arrived / seconds:.1f} completions/s" if seconds > 0 else ""
    if seconds > 0 and tokens:
        rates += f", {tokens / seconds:,.0f} tokens/s"
    return f"window {window}{rates}"


def _completion_of(row: dict) -> Completion:
    """A stored Response (a row of ``responses_by_id``) as the completion it was."""
    row = {k: None if pd.isna(v) else v for k, v in row.items()}
    whole = {k: None if row[k] is None else int(row[k]) for k in ("sampleIndex", "seed", "tokensIn", "tokensOut")}
    return Completion(whole["sampleIndex"] or 0, whole["seed"], text=row["text"], finish_reason=row["finishReason"],
                      tokens_in=whole["tokensIn"], tokens_out=whole["tokensOut"], latency_s=row["latencyS"],
                      error=row["error"], reasoning=row["reasoning"],
                      extra={TRACE_RULE: row[TRACE_RULE]} if row.get(TRACE_RULE) else {})


class _GradingStage:
    """Stored replies graded in the grading process (:meth:`Grader.submit`), the grades written by the caller.

    Storing never waits for grading: the run's one writer hands each stored group over
    (:meth:`submit`) and writes what came back (:meth:`write`) between two groups.
    """

    def __init__(self, store: GraphStore, grading: Grading, timeout: float):
        self.store, self.grading = store, grading
        self.grader = shared_grader(timeout)
        self._pending: deque[tuple[list[str], concurrent.futures.Future]] = deque()

    @property
    def outstanding(self) -> int:
        return len(self._pending)

    def submit(self, ids: Sequence[str], prompt_ids: Sequence[Hashable], completions: Sequence[Completion]) -> None:
        """Grade these stored replies (``ids``: their Response ids)."""
        items = [(c, *self.grading.args[p]) for p, c in zip(prompt_ids, completions, strict=True)]
        self._pending.append((list(ids), self.grader.submit(self.grading.function, items)))

    def write(self, wait: float | None = 0.0) -> int:
        """Write the grades that came back, in order (waiting up to ``wait`` s for the next; None: for all).

        Returns how many replies got their grade.
        """
        written = 0
        while self._pending:
            ids, future = self._pending[0]
            try:
                results = future.result(timeout=wait)
            except TimeoutError:
                break
            self._pending.popleft()
            graded = pd.DataFrame(results)
            graded = graded.astype(object).where(graded.notna(), None)
            graded.insert(0, "id", ids)
            if self.grading.version is not None:
                graded["graderVersion"] = self.grading.version
            self.store.write_nodes("Response", graded[[c for c in graded.columns if not c.startswith("_")]])
            if self.grading.written:
                self.grading.written(graded)
            written += len(ids)
            if wait is not None:
                wait = 0.0  # one waited for; the rest only if already there
        return written


def generate_and_store(store: GraphStore, backend: Backend, run_id: str, learner_id: str,
                       prompts: Mapping[Hashable, list[Message]], sampling: Sampling, grading: Grading | None = None,
                       samples: Mapping[Hashable, Sequence[int]] | None = None,
                       progress: Callable[..., None] | None = None,
                       keys: Mapping[tuple[Hashable, int], str] | None = None,
                       columns: Mapping[Hashable, dict] | None = None, window: int | None = None,
                       group: int = GROUP, interval: float = INTERVAL,
                       grade_timeout: float = GRADE_TIMEOUT_S) -> Generation:
    """Complete every (prompt, sample) not stored yet: stream the requests, store the replies, grade them.

    Parameters
    ----------
    prompts : mapping of a prompt id to messages
        Prompt id (a question id unless ``columns`` says otherwise) -> its chat.
    grading : Grading, optional
        How to grade a reply (in the grading process, after it is stored, within
        ``grade_timeout`` seconds each: a reply it cannot finish is recorded as not
        gradable, with the reason). Stored replies of these keys that have no grade
        yet (an earlier run stopped between storing and grading), or graded by another
        version of it (:attr:`Grading.version`), are graded first.
    samples : mapping of a prompt id to sequence of int, optional
        Sample indices per prompt (default: ``range(sampling.n)`` for each).
    progress : callable, optional
        ``progress(done, total, note=...)`` as replies arrive (``note``: the window
        and the rates; a callable without a ``note`` parameter is called without it).
    keys : mapping of (prompt id, sample index) to str, optional
        The Response id of each completion (default: its :func:`cache_key`).
    columns : mapping of a prompt id to dict, optional
        Response properties of the prompt's completions (default: ``{"question": id}``;
        a ``question`` gets a ``TO`` edge).
    window : int, optional
        Requests in flight (default: the backend's ``window``).
    group, interval : int, float
        Store the replies every ``group`` replies or ``interval`` seconds, whichever
        comes first: what a kill -9 may lose.
    grade_timeout : float
        Seconds one reply may take to grade.

    Returns
    -------
    Generation
        Completions already stored under the same key (by this or another run) are
        linked into this run, not asked again. Server failures are not stored and are
        :attr:`Generation.pending`.

    Raises
    ------
    ConfigError
        When a sample's seed passes :data:`~kstp.inference.backend.MAX_SEED` (before anything is asked).
    RejectedRequestError
        When the server rejects a request as wrong (bad key, unknown model, ...), after
        the completions that had arrived are stored and graded.
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, after the completions that had arrived are stored and graded.
    """
    hashes = {p: prompt_hash(m) for p, m in prompts.items()}
    columns = columns if columns is not None else {p: {"question": p} for p in prompts}
    if keys is None:
        # the run's own endpoint: a run recorded with one server's baseUrl (before issue 45) keeps its keys
        template, tag, recorded = _keyed_by(store, run_id)
        endpoint = recorded if recorded is not None else endpoint_of(backend)
        keys = {(p, i): cache_key(backend.model, hashes[p], sampling, i, endpoint, template, tag)
                for p in prompts for i in (samples[p] if samples is not None else range(sampling.n))}
    if keys:
        sampling.for_sample(max(i for _, i in keys))  # a seed past MAX_SEED is refused before anything is asked
    stored = store.frame("responses_by_id", {"ids": list(keys.values())})
    stored = _final(stored)
    final = set(stored["responseId"])
    asked = {p: json.dumps(m, ensure_ascii=False) for p, m in prompts.items()}  # Response.prompt: the chat, JSON
    linked = [{"id": key, **columns[p], "prompt": asked[p]} for (p, _), key in keys.items() if key in final]
    if linked:
        write_responses(store, run_id, learner_id, pd.DataFrame(linked))
    stage = _GradingStage(store, grading, grade_timeout) if grading is not None else None
    return _pipeline(store, backend, run_id, learner_id, prompts, sampling, keys, columns, stored, final, hashes,
                     stage, progress, window, group, interval, asked)


def _pipeline(store, backend, run_id, learner_id, prompts, sampling, keys, columns, stored, final, hashes, stage,
              progress, window, group, interval, asked) -> Generation:
    """:func:`generate_and_store` once the stored replies are linked: grade the ungraded, then ask the rest."""
    regraded = 0
    if stage is not None:
        version = stage.grading.version
        ungraded = stored[stored["verdict"].isna() | (
            (stored["graderVersion"].fillna("") != version) if version is not None else False)]
        if len(ungraded):  # a run stopped between storing and grading, or graded by another grader: those first
            prompt_of = {key: p for (p, _), key in keys.items()}
            stage.submit(ungraded["responseId"].tolist(), [prompt_of[k] for k in ungraded["responseId"]],
                         [_completion_of(row) for row in ungraded.to_dict("records")])
            regraded = stage.write(wait=None)
    requests = [Request((p, i), prompts[p], sampling.for_sample(i), i)
                for (p, i), key in keys.items() if key not in final]
    window = window or getattr(backend, "window", DEFAULT_WINDOW)
    if not requests:
        return Generation(len(keys), 0, window=window, regraded=regraded)

    report = progress_reporter(progress)
    rows: list[dict] = []
    held: list[tuple[Hashable, Completion]] = []
    done, arrived, tokens, last_failure, said = 0, 0, 0, None, None
    start = flushed = time.monotonic()

    def receive(got) -> None:
        nonlocal arrived, tokens, last_failure
        for (p, i), completion in got:
            arrived += 1
            kept, failure = _classify(completion)
            if kept is None:
                last_failure = failure
                continue
            tokens += kept.tokens_out or 0
            rows.append({"id": keys[(p, i)], **columns[p], "model": backend.model, "promptHash": hashes[p],
                         "prompt": asked[p], "sampleIndex": i, "seed": kept.seed, "text": kept.text,
                         "reasoning": kept.reasoning, "finishReason": kept.finish_reason, "error": kept.error,
                         "tokensIn": kept.tokens_in,
                         "tokensOut": kept.tokens_out, "latencyS": kept.latency_s, "createdAt": now(),
                         **kept.extra})
            held.append((p, kept))

    def flush() -> None:
        nonlocal done, flushed
        if rows:
            frame = pd.DataFrame(rows)
            frame = frame.astype(object).where(frame.notna(), None)
            write_responses(store, run_id, learner_id, frame)  # stored before it is graded
            if stage is not None:
                stage.submit(frame["id"].tolist(), [p for p, _ in held], [c for _, c in held])
            done += len(rows)
            rows.clear()
            held.clear()
        flushed = time.monotonic()

    def settle() -> None:
        """Store what arrived, then write every grade still to come."""
        flush()
        if stage is not None:
            stage.write(wait=None)

    arrivals = Arrivals(backend, requests, window)
    try:
        while True:
            got = arrivals.take(max(0.0, interval - (time.monotonic() - flushed)))
            receive(got)
            ended = arrivals.finished and not got
            if ended or len(rows) >= group or time.monotonic() - flushed >= interval:
                flush()
            if stage is not None:
                stage.write()
            away = getattr(backend, "note", None)  # a server away mid-run: said even while nothing arrives
            if got or away != said:
                note = _note(getattr(backend, "current_window", window), arrived, tokens, time.monotonic() - start)
                report(arrived, len(requests), f"{note}; {away}" if away else note)
                said = away
            if ended:
                break
    except KeyboardInterrupt:
        receive(arrivals.stop())
        settle()
        raise
    except Exception:  # a rejected request, a backend's defect: what arrived before it is kept
        settle()
        raise
    else:
        settle()
    finally:
        if not arrivals.finished:
            arrivals.stop()
    figures = getattr(backend, "endpoint_figures", None) or []
    return Generation(len(keys), done, len(requests) - done, last_failure, time.monotonic() - start, tokens, window,
                      regraded, tuple(figures) if len(figures) > 1 else ())


def run_truncation(store: GraphStore, run_ids, max_tokens: int | None, context: int | None = None) -> dict:
    """:func:`~kstp.inference.backend.truncation` of the stored replies of ``run_ids`` (one run id or several),
    counted per question a reply answers (two questions of the same text share one reply, and both count):
    ``{"replies", "truncated", "share", "maxTokens"}`` (and ``context`` under a context window), what every
    evaluate command's summary holds as ``truncation``."""
    ids = [run_ids] if isinstance(run_ids, str) else list(dict.fromkeys(run_ids))
    reasons = [reason for run_id in ids
               for reason, questions in store.frame("run_finish_reasons", {"runId": run_id})[["finishReason",
                                                                                            "questions"]].values
               for _ in range(max(1, int(questions)))]
    return truncation(reasons, max_tokens, context)


def write_verdicts(store: GraphStore, ids: Sequence[str], verdicts: Sequence[Verdict], **extra) -> None:
    """Write each Response's grade: extracted answer, extraction method, correct, verdict (and ``extra`` columns)."""
    store.write_nodes("Response", pd.DataFrame({
        "id": list(ids), **extra, "extracted": [v.extracted for v in verdicts],
        "extractionMethod": [v.method for v in verdicts], "correct": [v.correct for v in verdicts],
        "verdict": [v.reason for v in verdicts]}))


def finish_run(store: GraphStore, run_id: str, status: str, **figures) -> None:
    """Record the run's end: status (``finished``, ``interrupted``, ``failed``), time and figures (each
    server's figures, ``endpoints``, are the summary's: not stored).

    A run that finishes as a campaign's cell (:data:`~kstp.settings.CAMPAIGN_CELL_ENV` set) records the cell's
    command hash as ``campaignCell``, which a campaign run again skips the cell on; any other end clears it."""
    figures.pop("endpoints", None)
    cell = (os.environ.get(CAMPAIGN_CELL_ENV) or None) if status == "finished" else None
    store.write_nodes("Run", pd.DataFrame([{"id": run_id, "status": status, "finishedAt": now(),
                                            "campaignCell": cell, **figures}]))
