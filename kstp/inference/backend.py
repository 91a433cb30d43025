"""One inference interface: a stream of requests in, completions out as each finishes.

A request (:class:`Request`) is one sample of one chat (a list of ``{"role", "content"}``
messages) with its own single-sample :class:`Sampling`. A backend's :meth:`Backend.stream`
keeps up to ``window`` requests in flight and refills the window as each finishes,
handing every completion to ``emit`` as it arrives: it never waits for the slowest of
a batch. :func:`generate` collects a stream into per-prompt lists for callers that want
them all at once. Sample ``i`` of a prompt is drawn with seed ``sampling.seed + i`` on
every backend, so each sample is reproducible on its own and a resumed run can ask for
exactly the samples it lacks. The cache key of a completion is everything that changes
its output: the model, the backend and its model options (:func:`endpoint_of`; not the
servers asked, ``baseUrls``: one server or three, the same key), the prompt template
version, the prompt, sampling, seed and sample index.

A server that rejects a request as wrong (HTTP 400, 401, 403, 404, 422: a bad key, a
model it does not serve, ``max_tokens`` beyond its context) makes ``stream`` raise
:class:`RejectedRequestError`: no retry fixes that request, and its reply is not the
model's answer. :func:`generate` interrupted (Ctrl-C, SIGTERM) raises
:class:`Interrupted` carrying the completions that had arrived, so the caller stores
them before it exits.

Backends are registered by name (:func:`get_backend`); their modules import their
heavy dependencies only when used.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import inspect
import json
import math
import numbers
import queue
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

from kstp.errors import ConfigError, KstpError

__all__ = ["Message", "Sampling", "Completion", "Request", "Backend", "Interrupted", "RejectedRequestError",
           "register_backend", "get_backend", "BUILTIN_BACKENDS", "backend_names", "endpoint_of", "prompt_hash",
           "cache_key", "TRANSPORT_ERROR", "OVERFLOW", "MAX_SEED", "DEFAULT_WINDOW", "Arrivals", "generate",
           "system_in_user", "Streaming", "MAX_TOKENS", "CONTEXT_WINDOWS", "truncation", "reply_budget",
           "reproducibility"]

Message = dict[str, str]

#: ``Completion.error`` prefix for a failure with no model output (connection reset,
#: timeout, HTTP 408/409/425/429/5xx after retries, a reply without choices, an aborted
#: generation): never stored as the model's answer; a resumed run asks for it again.
TRANSPORT_ERROR = "transport"
#: ``Completion.error`` prefix of a question whose prompt is longer than the model's or server's context
#: window ("overflow: the prompt is too long for the server's window (4,800 prompt tokens, window 4,096
#: tokens)"): the question's failure, not the run's; stored, final, counted apart.
OVERFLOW = "overflow"

#: Requests in flight for a backend that names no window of its own.
DEFAULT_WINDOW = 8
#: The largest seed a request may carry: llama.cpp reads 2**32 - 1 as "pick a random
#: seed", so a run recorded with it would not reproduce; vLLM and OpenAI-compatible
#: servers take any 32-bit seed.
MAX_SEED = 2**32 - 2


#: The generation budget of each evaluate command whose paper sets one above :class:`Sampling`'s base 1,024
#: (``--gen-kwargs max_tokens=N`` overrides). Paper 1 (Cui, Do, Sachan 2026, §4) runs its models in a *context
#: window* of 16,384 tokens without context and 32,768 with scaffolding: prompt and reply together, so these two
#: are :attr:`Sampling.context` (and ``max_tokens``). DAG-MATH's release sets no cap; its longest trajectory shown
#: (121 steps, paper 4, Appendix B) at the release prompt's ~520 characters a step is ~63,000 characters,
#: ~16,000-18,000 tokens, so its 32,768 is a reply cap (``max_tokens``) alone. Paper 2's 16,000 and paper 3's 256
#: are their evaluators' own presets.
MAX_TOKENS = {"answers": 16_384, "scaffolding": 32_768, "dagmath": 32_768}
#: The evaluate commands whose :data:`MAX_TOKENS` is a context window (prompt plus reply).
CONTEXT_WINDOWS = {"answers", "scaffolding"}


def truncation(finish_reasons: Iterable[str | None], max_tokens: int | None, context: int | None = None) -> dict:
    """How many stored replies were cut at their budget (``finish_reason == "length"``), and their share.

    Returns
    -------
    dict
        ``replies`` (stored replies), ``truncated`` (of them cut), ``share`` (truncated /
        replies, None without replies), ``maxTokens`` (the cap they were asked with) and,
        under a context window (:attr:`Sampling.context`), ``context``.

    >>> truncation(["stop", "length", None, "length"], 512)
    {'replies': 4, 'truncated': 2, 'share': 0.5, 'maxTokens': 512}
    >>> truncation(["length"], 16384, 16384)["context"]
    16384
    """
    reasons = list(finish_reasons)
    cut = sum(reason == "length" for reason in reasons)
    figures = {"replies": len(reasons), "truncated": cut, "share": cut / len(reasons) if reasons else None,
               "maxTokens": max_tokens}
    if context is not None:
        figures["context"] = context
    return figures


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during :func:`generate`; ``partial`` holds the completions that arrived.

    ``partial[k]`` lists prompt ``k``'s finished completions (possibly none).
    """

    def __init__(self, partial: list[list[Completion]]):
        super().__init__("interrupted")
        self.partial = partial


class RejectedRequestError(KstpError):
    """The server rejected a request that no retry can fix: the run is misconfigured.

    The message quotes the server and says what to change; ``partial[k]`` lists prompt
    ``k``'s completions that had arrived before (possibly none; :func:`generate` fills
    it, a stream has emitted them already), which are the model's.
    """

    def __init__(self, message: str, partial: list[list[Completion]] | None = None):
        super().__init__(message)
        self.partial = partial if partial is not None else []


@dataclass(frozen=True)
class Sampling:
    """How to sample.

    Attributes
    ----------
    n : int
        Samples per prompt (>= 1).
    temperature, top_p : float or None
        None: the provider's default (the field is not sent).
    max_tokens : int or None
        Upper bound on generated tokens per sample; 1,024 is the base for a caller that
        sets none. None (``--gen-kwargs max_tokens=none``): no cap is sent, so the
        server's own limit bounds the reply (a backend that tokenizes the prompt lets it
        fill the model's window).
    context : int or None
        A context window: prompt plus reply at most this many tokens, as paper 1 (§4) runs
        its models (a 16,384-token window without context, 32,768 with scaffolding; see
        :data:`MAX_TOKENS`). A backend that tokenizes the prompt caps the reply at
        ``min(max_tokens, context - prompt tokens)`` (:func:`reply_budget`); the openai
        backend sends no ``max_tokens``, so the server fills its own window (vLLM:
        ``--max-model-len``). None (the base): ``max_tokens`` alone, sent as it is.
    seed : int
        Seed of sample 0; sample i uses ``seed + i``; every sample's seed is at most
        :data:`MAX_SEED`.
    stop : tuple of str
    json_schema : dict or None
        A JSON schema the answer must follow (structured output where the backend has
        it; always re-checked by the caller).
    top_k, min_p, repetition_penalty : int, float, float or None
        Sample among the ``top_k`` likeliest tokens; drop tokens less likely than
        ``min_p`` times the likeliest; divide (multiply, if negative) the logits of the
        tokens already in the prompt or reply by ``repetition_penalty``, as transformers
        does. None (the base): not applied, and not sent (a server's own default may then
        apply: llama.cpp's top_k 40 and min_p 0.05). vLLM, llama.cpp and the hf backend take
        them; OpenAI's API refuses them.

    Raises
    ------
    ConfigError
        Naming each field at fault: n, max_tokens or context not a whole number (or n < 1,
        max_tokens < 1, context < 2), top_p outside (0, 1], a negative or non-finite
        temperature, or a seed whose samples pass :data:`MAX_SEED` (or below 0).
    """

    n: int = 1
    temperature: float | None = 0.6
    top_p: float | None = 0.95
    max_tokens: int | None = 1024
    seed: int = 42
    stop: tuple[str, ...] = ()
    json_schema: dict | None = None
    context: int | None = None
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None

    def __post_init__(self):
        problems = [f"{name} must be a whole number >= {low}, not {value!r}"
                    for name, low, value in (("n", 1, self.n), ("max_tokens", 1, self.max_tokens),
                                             ("context", 2, self.context))
                    if (value is not None or name == "n") and (
                        isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low)]
        if self.top_k is not None and (isinstance(self.top_k, bool) or not isinstance(self.top_k, numbers.Integral)
                                       or self.top_k < 1):
            problems.append(f"top_k must be a whole number >= 1, not {self.top_k!r}")
        for name, value, fits, rule in (("temperature", self.temperature, lambda v: v >= 0, ">= 0"),
                                        ("top_p", self.top_p, lambda v: 0 < v <= 1, "in (0, 1]"),
                                        ("min_p", self.min_p, lambda v: 0 <= v <= 1, "in [0, 1]"),
                                        ("repetition_penalty", self.repetition_penalty, lambda v: v > 0, "> 0")):
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                                      or not math.isfinite(value) or not fits(value)):
                problems.append(f"{name} must be a number {rule}, not {value!r}")
        if problems:
            raise ConfigError(f"invalid sampling: {'; '.join(problems)}")
        _check_seed(self.seed, self.n - 1)

    def for_sample(self, index: int) -> Sampling:
        """The single-sample sampling of sample ``index`` (n = 1, seed + index).

        Raises
        ------
        ConfigError
            When ``seed + index`` passes :data:`MAX_SEED`.
        """
        _check_seed(self.seed, index)
        return replace(self, n=1, seed=self.seed + index)

    def as_dict(self) -> dict:
        """Plain JSON-ready fields (``stop`` as a list; ``context``, ``top_k``, ``min_p`` and
        ``repetition_penalty`` only when set, so that the requests of runs made before they existed keep
        their :func:`cache_key`)."""
        fields = {**asdict(self), "stop": list(self.stop)}
        for name in OPTIONAL_FIELDS:
            if fields[name] is None:
                del fields[name]
        return fields

    def extras(self) -> dict:
        """``top_k``, ``min_p`` and ``repetition_penalty`` where set (what a server is sent besides the rest).

        >>> Sampling(top_k=50).extras(), Sampling().extras()
        ({'top_k': 50}, {})
        """
        return {name: getattr(self, name) for name in ("top_k", "min_p", "repetition_penalty")
                if getattr(self, name) is not None}


#: Sampling fields left out of :meth:`Sampling.as_dict` (and so of every cache key) while unset.
OPTIONAL_FIELDS = ("context", "top_k", "min_p", "repetition_penalty")


def reply_budget(sampling: Sampling, prompt_tokens: int, model_len: int | None = None) -> int:
    """The most tokens a reply to a prompt of ``prompt_tokens`` tokens may have under ``sampling``.

    ``max_tokens``, and under a ``context`` window what the prompt leaves of it, or of the
    model's own window ``model_len`` where that is smaller (at least 1: a prompt that fills
    the window gets one token, cut at once with ``finish_reason`` length).

    >>> reply_budget(Sampling(max_tokens=16384, context=16384), 1200)
    15184
    >>> reply_budget(Sampling(max_tokens=512, context=16384), 1200), reply_budget(Sampling(max_tokens=512), 1200)
    (512, 512)
    >>> reply_budget(Sampling(max_tokens=100, context=100), 400)
    1
    >>> reply_budget(Sampling(max_tokens=16384, context=16384), 1200, model_len=8192)
    6992
    >>> reply_budget(Sampling(max_tokens=None), 1200, model_len=8192)
    6992

    Raises
    ------
    ConfigError
        Without ``max_tokens``, a ``context`` or the model's window: nothing bounds the reply.
    """
    windows = [w for w in (sampling.context, model_len) if w]
    if sampling.max_tokens is None and not windows:
        raise ConfigError("max_tokens=none needs a window to bound the reply: this model states none; give "
                          "--gen-kwargs max_tokens=N or context=N")
    if sampling.context is None and sampling.max_tokens is not None:
        return sampling.max_tokens
    window = min(windows)
    return max(1, min(sampling.max_tokens or window, window - prompt_tokens))


def _check_seed(seed: int, index: int) -> None:
    """Refuse a seed whose sample ``index`` would be unreproducible (see :data:`MAX_SEED`).

    >>> _check_seed(4294967294, 0)
    >>> _check_seed(4294967294, 1)
    Traceback (most recent call last):
    ...
    kstp.errors.ConfigError: seed 4294967294 + sample 1 = 4294967295 passes 4294967294, the largest seed that \
reproduces on every backend (llama.cpp reads 4294967295 as "a random seed"); choose a seed of at most 4294967293
    """
    if seed < 0:
        raise ConfigError(f"seed {seed} is negative; choose a seed from 0 to {MAX_SEED}")
    if seed + index > MAX_SEED:
        raise ConfigError(f"seed {seed} + sample {index} = {seed + index} passes {MAX_SEED}, the largest seed that "
                          f"reproduces on every backend (llama.cpp reads {MAX_SEED + 1} as \"a random seed\"); "
                          f"choose a seed of at most {MAX_SEED - index}")


@dataclass
class Completion:
    """One sample's outcome.

    ``text`` is ``None`` when no output came back; ``error`` then says why
    (``"transport: ..."`` for connection failures, which a rerun retries).
    ``finish_reason`` is the backend's (``stop``, ``length``...). ``reasoning`` is a
    reasoning model's thinking where the server returns it apart from the content
    (``reasoning_content`` or ``reasoning``); a reply can hold only that. ``extra``
    holds Response properties a backend adds (``systemInUser`` where the instruction
    went into the user turn).
    """

    sample_index: int
    seed: int
    text: str | None = None
    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    error: str | None = None
    reasoning: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    """One completion to ask for: sample ``sample_index`` of ``messages``.

    ``key`` is the caller's and comes back with the completion; ``sampling`` is the
    request's own (``n`` = 1, the sample's seed: :meth:`Sampling.for_sample`).
    """

    key: Hashable
    messages: list[Message]
    sampling: Sampling
    sample_index: int


#: ``emit(key, completion)``: how a backend hands over each completion as it finishes.
Emit = Callable[[Hashable, Completion], None]


class Backend(Protocol):
    """What every inference backend provides.

    ``endpoint`` holds what besides the model name decides the output: the base URL,
    the model options (``--model-args``); never a port chosen at random or a secret.
    ``window`` is how many requests the backend keeps in flight unless told otherwise
    (``--concurrency``); it is not part of the identity. A backend written before
    streaming, with ``generate`` alone, still works: it is asked ``window`` requests a
    call (:data:`DEFAULT_WINDOW` without a ``window``), each call stored when it returns.
    """

    name: str
    model: str
    endpoint: dict
    window: int

    def stream(self, requests: Iterable[Request], window: int, emit: Emit, stop: threading.Event) -> None:
        """Ask every request, at most ``window`` in flight, and ``emit`` each completion as it finishes.

        Returns when every request is answered, or soon after ``stop`` is set (what is in
        flight then is dropped: not emitted). A backend may stop early on its own (a
        server that looks down); the requests it did not emit are the caller's to count.

        Raises
        ------
        RejectedRequestError
            When the server rejects a request as wrong; the rest is not asked.
        """
        ...

    def generate(self, prompts: Sequence[list[Message]], sampling: Sampling,
                 samples: Sequence[Sequence[int]] | None = None,
                 progress: Callable[[int], None] | None = None) -> list[list[Completion]]:
        """Completions per prompt (:func:`generate`)."""
        ...

    def close(self) -> None:
        ...


class Arrivals:
    """A backend's :meth:`~Backend.stream` run in a thread of its own; the caller takes what arrived.

    The requests go out and come back in that thread, so whatever the caller does
    between two :meth:`take` calls (storing, grading) never holds a request up.
    ``with Arrivals(backend, requests, window) as arrivals: ...``; leaving the block
    stops the stream and waits for its thread.
    """

    _END = object()

    def __init__(self, backend: Backend, requests: Iterable[Request], window: int):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self.finished = False
        self._thread = threading.Thread(target=self._produce, args=(backend, requests, window), daemon=True,
                                        name="kstp-requests")
        self._thread.start()

    def _produce(self, backend: Backend, requests: Iterable[Request], window: int) -> None:
        stream = backend.stream if hasattr(backend, "stream") else functools.partial(_batched, backend)
        try:
            stream(requests, window, lambda key, completion: self._queue.put((key, completion)), self._stop)
        except BaseException as exc:  # re-raised in the caller's thread by take()
            self.error = exc
        finally:
            self._queue.put(self._END)

    def take(self, timeout: float | None) -> list[tuple[Hashable, Completion]]:
        """What has arrived: waits up to ``timeout`` seconds for the first, then takes all that is there.

        After the stream's end has been taken, :attr:`finished` is true; the stream's
        error (:class:`RejectedRequestError`, a defect) is raised then, once everything
        that arrived before it was taken.
        """
        got: list = []
        try:
            while not self.finished:
                item = self._queue.get(timeout=timeout) if not got and (timeout is None or timeout > 0) \
                    else self._queue.get_nowait()
                if item is self._END:
                    self.finished = True
                else:
                    got.append(item)
        except queue.Empty:
            pass
        if self.finished and self.error is not None and not got:
            error, self.error = self.error, None
            raise error
        return got

    def stop(self, wait: float = 30.0) -> list[tuple[Hashable, Completion]]:
        """Stop asking, wait up to ``wait`` seconds for the stream's thread, and return what arrived meanwhile."""
        self._stop.set()
        self._thread.join(wait)
        got = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not self._END:
                got.append(item)
        self.finished = True
        return got

    def __enter__(self) -> Arrivals:
        return self

    def __exit__(self, *exc) -> None:
        if not self.finished:
            self.stop()


def _batched(backend, requests: Iterable[Request], window: int, emit: Emit, stop: threading.Event) -> None:
    """The stream of a backend that has only ``generate(prompts, sampling, samples)`` (a backend written
    before streaming): ``window`` requests a call, each call's completions handed over when it returns."""
    requests = list(requests)
    for start in range(0, len(requests), window):
        groups: dict[str, list[Request]] = {}
        for request in requests[start:start + window]:  # one call per sampling, less the sample's seed
            base = replace(request.sampling, seed=request.sampling.seed - request.sample_index)
            groups.setdefault(json.dumps(base.as_dict(), sort_keys=True), []).append(request)
        for group in groups.values():
            if stop.is_set():
                return
            first = group[0]
            base = replace(first.sampling, seed=first.sampling.seed - first.sample_index)
            try:
                results = backend.generate([r.messages for r in group], base, [[r.sample_index] for r in group])
            except RejectedRequestError as exc:
                for request, row in zip(group, exc.partial, strict=False):
                    for completion in row:
                        emit(request.key, completion)
                raise RejectedRequestError(str(exc)) from None
            for request, row in zip(group, results, strict=True):
                for completion in row:
                    emit(request.key, completion)


def generate(backend: Backend, prompts: Sequence[list[Message]], sampling: Sampling,
             samples: Sequence[Sequence[int]] | None = None, progress: Callable[[int], None] | None = None,
             window: int | None = None) -> list[list[Completion]]:
    """Every completion of ``prompts`` at once: ``result[k]`` lists prompt ``k``'s, by sample index.

    ``samples[k]`` lists the sample indices wanted for prompt ``k`` (default:
    ``range(sampling.n)``); ``progress(done)`` is called as completions arrive;
    ``window`` defaults to the backend's.

    Raises
    ------
    Interrupted
        On Ctrl-C or SIGTERM, with the completions that had arrived.
    RejectedRequestError
        When the server rejects a request as wrong, with the completions that had arrived.
    """
    samples = samples if samples is not None else [range(sampling.n)] * len(prompts)
    requests = [Request((k, i), prompts[k], sampling.for_sample(i), i) for k in range(len(prompts))
                for i in samples[k]]
    results: list[list[Completion]] = [[] for _ in prompts]

    def keep(arrived) -> None:
        for (k, _), completion in arrived:
            results[k].append(completion)
        if progress and arrived:
            progress(sum(map(len, results)))

    arrivals = Arrivals(backend, requests, window or getattr(backend, "window", DEFAULT_WINDOW))
    try:
        while True:
            got = arrivals.take(0.1)  # raises the stream's error once all that came before it is taken
            keep(got)
            if arrivals.finished and not got:
                break
    except KeyboardInterrupt:
        keep(arrivals.stop())
        raise Interrupted(_by_sample(results)) from None
    except RejectedRequestError as exc:
        raise RejectedRequestError(str(exc), _by_sample(results)) from None
    finally:
        if not arrivals.finished:
            arrivals.stop()
    return _by_sample(results)


def _by_sample(results: list[list[Completion]]) -> list[list[Completion]]:
    return [sorted(row, key=lambda c: c.sample_index) for row in results]


class Streaming:
    """Mixin: :meth:`generate` of a backend that has :meth:`~Backend.stream` (see :func:`generate`)."""

    def generate(self, prompts: Sequence[list[Message]], sampling: Sampling,
                 samples: Sequence[Sequence[int]] | None = None,
                 progress: Callable[[int], None] | None = None) -> list[list[Completion]]:
        return generate(self, prompts, sampling, samples, progress)  # type: ignore[arg-type]


def system_in_user(messages: list[Message]) -> list[Message]:
    """The chat with its system instruction moved to the start of the first user turn.

    For chat templates without a system role (Gemma's answers "System role not
    supported"); a chat without a system message is returned as it is.

    >>> system_in_user([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}])
    [{'role': 'user', 'content': 'Be brief.\\n\\n2+2?'}]
    """
    system = [m["content"] for m in messages if m["role"] == "system"]
    if not system:
        return messages
    rest = [dict(m) for m in messages if m["role"] != "system"]
    instruction = "\n\n".join(system)
    for message in rest:
        if message["role"] == "user":
            message["content"] = f"{instruction}\n\n{message['content']}"
            return rest
    return [{"role": "user", "content": instruction}, *rest]


_BACKENDS: dict[str, Callable[..., Backend]] = {}

#: The built-in backends by name and the module that registers each. Only the module of a
#: backend asked for is imported, so this interface imports no backend and the backends,
#: which build on it, close no import circle.
BUILTIN_BACKENDS = {
    "openai": "kstp.inference.backends.openai_compat",
    "vllm": "kstp.inference.backends.vllm_offline",
    "local": "kstp.inference.backends.local",
    "hf": "kstp.inference.backends.hf",
}


def register_backend(name: str):
    """Class decorator: make a backend constructible by :func:`get_backend`."""

    def wrap(cls):
        _BACKENDS[name] = cls
        return cls

    return wrap


def backend_names() -> list[str]:
    """Backend names: the built-in ones and any other registered with :func:`register_backend`."""
    return sorted(set(_BACKENDS) | set(BUILTIN_BACKENDS))


def get_backend(name: str, model: str, **options) -> Backend:
    """Construct the backend ``name`` for ``model``; a built-in one is imported on first use.

    Raises
    ------
    ConfigError
        On an unknown name ("Unknown backend 'vlm'. Did you mean: vllm? Available: ..."),
        or an option the backend does not take (naming the ones it does).
    """
    if name not in _BACKENDS and name in BUILTIN_BACKENDS:
        importlib.import_module(BUILTIN_BACKENDS[name])  # the module registers itself
    if name not in _BACKENDS:
        names = backend_names()
        close = difflib.get_close_matches(name, names, n=2)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ConfigError(f"Unknown backend {name!r}.{hint} Available: {', '.join(names)}")
    factory = _BACKENDS[name]
    accepted = inspect.signature(factory).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            takes = ", ".join(p for p in accepted if p != "model")
            raise ConfigError(f"the {name} backend takes no option {unknown[0]!r} (--model-args); it takes: {takes}")
    return factory(model=model, **options)


def reproducibility(backend) -> dict:
    """What ``backend`` promises of sample i's text: ``{"sameText": bool, "note": str}``.

    ``sameText``: the same prompt and seed give the same text whatever the window, the batch the request
    lands in or the order of arrival. Each backend says it in its ``reproducible`` attribute, a pair
    ``(promised, why)``; a backend that says nothing promises nothing. It goes into a run's summary and log
    (``reproducible``), never into its identity.

    >>> class Server:
    ...     reproducible = (False, "the server decides")
    >>> reproducibility(Server()), reproducibility(object())["sameText"]
    ({'sameText': False, 'note': 'the server decides'}, False)
    """
    promised, note = getattr(backend, "reproducible", (False, "the backend does not say what it promises"))
    return {"sameText": bool(promised), "note": note}


def endpoint_of(backend: Backend) -> dict:
    """The backend's name and its :attr:`Backend.endpoint`, as they enter run and cache identity.

    >>> class Server:
    ...     name, model, endpoint = "openai", "m", {"baseUrl": "http://a:8000/v1"}
    >>> endpoint_of(Server())
    {'backend': 'openai', 'baseUrl': 'http://a:8000/v1'}
    """
    return {"backend": backend.name, **getattr(backend, "endpoint", {})}


def prompt_hash(messages: list[Message]) -> str:
    """SHA-256 of a chat, stable across runs (canonical JSON).

    >>> prompt_hash([{"role": "user", "content": "2+2?"}])[:12]
    '7c9833ca6a9e'
    """
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def cache_key(model: str, messages_hash: str, sampling: Sampling, sample_index: int,
              endpoint: dict | None = None, template: str | None = None, tag: str | None = None) -> str:
    """The identity of one completion: model, endpoint, template, prompt, sampling (seed included), sample index.

    K samples of one prompt are K keys; the same request in another run is the same key;
    the same model under other model options (``endpoint``, see :func:`endpoint_of`) or
    under another prompt template version (``template``) is another key. The servers
    asked (``endpoint["baseUrls"]``) are not part of it: one server or three, the same
    key (a run recorded before with one server's ``baseUrl`` keeps it in its keys). A replicate's
    ``tag`` (``--repeat``, ``--tag``) makes its requests new draws; without a tag the key
    is what it always was, so existing runs keep their completions.

    >>> key = cache_key("m", "h", Sampling(), 0)
    >>> key == cache_key("m", "h", Sampling(), 0, tag=None) != cache_key("m", "h", Sampling(), 0, tag="r2")
    True
    """
    endpoint = {k: v for k, v in (endpoint or {}).items() if k != "baseUrls"}  # where it was asked: no identity
    spec = {"model": model, "prompt": messages_hash, "sampling": {**sampling.as_dict(), "n": None},
            "sample": sample_index, "endpoint": endpoint, "template": template}
    if tag is not None:
        spec["tag"] = tag
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
