"""One inference interface: ``generate(prompts, sampling) -> completions``.

A prompt is a chat (a list of ``{"role", "content"}`` messages). A backend returns, for
every prompt, ``sampling.n`` :class:`Completion` objects, one per sample index. Sample
``i`` of a prompt is drawn with seed ``sampling.seed + i`` on every backend, so each
sample is reproducible on its own and a resumed run can ask for exactly the samples it
lacks. The cache key of a completion is everything that changes its output: the model,
the backend and its endpoint (base URL) and model options (:func:`endpoint_of`), the
prompt template version, the prompt, sampling, seed and sample index.

A backend interrupted (Ctrl-C, SIGTERM) raises :class:`Interrupted` carrying the
completions that had arrived, so the caller stores them before it exits. A server that
rejects a request as wrong (HTTP 400, 401, 403, 404, 422: a bad key, a model it does
not serve, ``max_tokens`` beyond its context) raises :class:`RejectedRequestError`, also
carrying what had arrived: no retry fixes that request, and its reply is not the model's
answer.

Backends are registered by name (:func:`get_backend`); their modules import their
heavy dependencies only when used.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

from kstp.errors import ConfigError, KstpError

__all__ = ["Message", "Sampling", "Completion", "Backend", "Interrupted", "RejectedRequestError", "register_backend",
           "get_backend", "BUILTIN_BACKENDS", "backend_names", "endpoint_of", "prompt_hash", "cache_key",
           "TRANSPORT_ERROR"]

Message = dict[str, str]

#: ``Completion.error`` prefix for a failure with no model output (connection reset,
#: timeout, HTTP 408/409/425/429/5xx after retries): never stored as the model's answer;
#: a resumed run asks for it again.
TRANSPORT_ERROR = "transport"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during ``generate``; ``partial`` holds the completions that arrived.

    ``partial[k]`` lists prompt ``k``'s finished completions (possibly none).
    """

    def __init__(self, partial: list[list[Completion]]):
        super().__init__("interrupted")
        self.partial = partial


class RejectedRequestError(KstpError):
    """The server rejected a request that no retry can fix: the run is misconfigured.

    The message quotes the server and says what to change; ``partial[k]`` lists prompt
    ``k``'s completions that had arrived before (possibly none), which are the model's.
    """

    def __init__(self, message: str, partial: list[list[Completion]]):
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class Sampling:
    """How to sample.

    Attributes
    ----------
    n : int
        Samples per prompt (>= 1).
    temperature, top_p : float or None
        None: the provider's default (the field is not sent).
    max_tokens : int
        Upper bound on generated tokens per sample.
    seed : int
        Seed of sample 0; sample i uses ``seed + i``.
    stop : tuple of str
    json_schema : dict or None
        A JSON schema the answer must follow (structured output where the backend has
        it; always re-checked by the caller).
    """

    n: int = 1
    temperature: float | None = 0.6
    top_p: float | None = 0.95
    max_tokens: int = 1024
    seed: int = 42
    stop: tuple[str, ...] = ()
    json_schema: dict | None = None

    def __post_init__(self):
        if self.n < 1 or self.max_tokens < 1 or (self.top_p is not None and not 0 < self.top_p <= 1) or (
                self.temperature is not None and self.temperature < 0):
            raise ConfigError(f"invalid sampling {self}: need n >= 1, max_tokens >= 1, 0 < top_p <= 1, "
                              "temperature >= 0")

    def for_sample(self, index: int) -> Sampling:
        """The single-sample sampling of sample ``index`` (n = 1, seed + index)."""
        return replace(self, n=1, seed=self.seed + index)

    def as_dict(self) -> dict:
        """Plain JSON-ready fields (``stop`` as a list)."""
        return {**asdict(self), "stop": list(self.stop)}


@dataclass
class Completion:
    """One sample's outcome.

    ``text`` is ``None`` when no output came back; ``error`` then says why
    (``"transport: ..."`` for connection failures, which a rerun retries).
    ``finish_reason`` is the backend's (``stop``, ``length``...). ``reasoning`` is a
    reasoning model's thinking where the server returns it apart from the content
    (``reasoning_content`` or ``reasoning``); a reply can hold only that.
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


class Backend(Protocol):
    """What every inference backend provides.

    ``endpoint`` holds what besides the model name decides the output: the base URL,
    the model options (``--model-args``); never a port chosen at random or a secret.
    """

    name: str
    model: str
    endpoint: dict

    def generate(self, prompts: Sequence[list[Message]], sampling: Sampling,
                 samples: Sequence[Sequence[int]] | None = None,
                 progress: Callable[[int], None] | None = None) -> list[list[Completion]]:
        """Completions per prompt.

        ``samples[k]`` lists the sample indices wanted for prompt ``k`` (default:
        ``range(sampling.n)``); ``progress(done)`` is called as completions arrive.
        """
        ...

    def close(self) -> None:
        ...


_BACKENDS: dict[str, Callable[..., Backend]] = {}

#: The built-in backends by name and the module that registers each. Only the module of a
#: backend asked for is imported, so this interface imports no backend and the backends,
#: which build on it, close no import circle.
BUILTIN_BACKENDS = {
    "openai": "kstp.inference.backends.openai_compat",
    "vllm": "kstp.inference.backends.vllm_offline",
    "local": "kstp.inference.backends.local",
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
              endpoint: dict | None = None, template: str | None = None) -> str:
    """The identity of one completion: model, endpoint, template, prompt, sampling (seed included), sample index.

    K samples of one prompt are K keys; the same request in another run is the same key;
    the same model name on another server (``endpoint``, see :func:`endpoint_of`) or
    under another prompt template version (``template``) is another key.
    """
    spec = {"model": model, "prompt": messages_hash, "sampling": {**sampling.as_dict(), "n": None},
            "sample": sample_index, "endpoint": endpoint or {}, "template": template}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
