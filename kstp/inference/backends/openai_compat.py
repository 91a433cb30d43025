"""Any OpenAI-compatible chat endpoint (vLLM's server, llama.cpp, hosted APIs).

Requests run concurrently under a bounded semaphore; transport failures (HTTP 408, 409,
425, 429 and 5xx, timeouts, connection errors and resets) are retried with exponential
backoff (tenacity) and, if they persist, returned as ``transport:`` failures that a
resumed run asks again. Any other 4xx reply (400, 401, 403, 404, 422...) says the
request itself is wrong: it raises
:class:`~kstp.inference.backend.RejectedRequestError` at once, quoting the server, with
the completions that had arrived. A reasoning model's thinking, returned apart from the
content (``reasoning_content``, vLLM's reasoning parsers; ``reasoning``, several hosted
APIs), is kept as :attr:`Completion.reasoning`. Ctrl-C or SIGTERM raises
:class:`~kstp.inference.backend.Interrupted` with the
completions that had arrived. ``n`` is emulated: one request
per sample with seed ``seed + i`` (several servers refuse or ignore ``n`` > 1, and
per-sample seeds keep each sample reproducible on its own). The API key comes from
``OPENAI_API_KEY`` (or ``api_key``) and is never logged.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kstp.inference.backend import (
    TRANSPORT_ERROR,
    Completion,
    Interrupted,
    Message,
    RejectedRequestError,
    Sampling,
    register_backend,
)

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIBackend", "RETRYABLE_STATUS"]

#: HTTP statuses that say "try again" rather than "this request is wrong": request
#: timeout, conflict, too early, rate limit (and every 5xx).
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def _retryable(exc: BaseException) -> bool:
    import openai  # here, not at the top: `kstp --help` must not pay for it

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | openai.APITimeoutError)


#: What to change when the server rejects a request with this status.
_FIXES = {400: "check --model, --model-args and --gen-kwargs (max_tokens must fit the model's context)",
          401: "check the API key (OPENAI_API_KEY)",
          403: "check that the API key (OPENAI_API_KEY) may use this model",
          404: "check --model (a model this server serves) and --base-url (usually ending in /v1)",
          422: "check --gen-kwargs and --model-args against what this server accepts"}


class _Rejected(Exception):
    """A request the server rejected (not retryable); becomes :class:`RejectedRequestError` in ``generate``."""


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: ``error.message``, ``message`` or ``detail`` of the body, else the SDK's text."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        said = inner.get("message") or inner.get("detail") if isinstance(inner, dict) else inner
        if said:
            return str(said)
    return exc.message


def _reasoning(message) -> str | None:
    """The thinking a server returns beside the content (fields the SDK does not declare)."""
    extra = message.model_extra or {}
    return extra.get("reasoning_content") or extra.get("reasoning") or None


def _by_prompt(arrived: list[tuple[int, Completion]], prompts: int) -> list[list[Completion]]:
    results: list[list[Completion]] = [[] for _ in range(prompts)]
    for k, completion in arrived:
        results[k].append(completion)
    for row in results:
        row.sort(key=lambda c: c.sample_index)
    return results


@register_backend("openai")
class OpenAIBackend:
    """Chat completions from ``base_url`` (default: ``$OPENAI_BASE_URL``, else the OpenAI API).

    Parameters
    ----------
    model : str
        Model name the server expects.
    base_url : str, optional
        e.g. ``http://127.0.0.1:8000/v1`` for a vLLM server.
    concurrency : int
        Requests in flight at once.
    retries : int
        Attempts per request before it is recorded as a transport failure.
    timeout : float
        Seconds per request.
    """

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, concurrency: int = 8,
                 retries: int = 5, timeout: float = 600.0, max_wait: float = 30.0):
        self.model = model
        # The openai client reads OPENAI_BASE_URL itself; read here, the run identity names the server asked.
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.concurrency = concurrency
        self.retries = retries
        self.max_wait = max_wait
        self.timeout = timeout
        self.endpoint = {"baseUrl": (self.base_url or "https://api.openai.com/v1").rstrip("/")}
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"  # local servers accept any key

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    def _request(self, messages: list[Message], sampling: Sampling) -> dict:
        request = {"model": self.model, "messages": messages, "temperature": sampling.temperature,
                   "top_p": sampling.top_p, "max_tokens": sampling.max_tokens, "seed": sampling.seed, "n": 1}
        request = {k: v for k, v in request.items() if v is not None}  # None: the provider's default
        if sampling.stop:
            request["stop"] = list(sampling.stop)
        if sampling.json_schema is not None:
            request["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "answer", "schema": sampling.json_schema}}
        return request

    async def _one(self, client: openai.AsyncOpenAI, gate: asyncio.Semaphore, messages: list[Message],
                   sampling: Sampling, index: int) -> Completion:
        import openai
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

        one = sampling.for_sample(index)
        start = time.perf_counter()
        try:
            async with gate:
                async for attempt in AsyncRetrying(
                        stop=stop_after_attempt(self.retries), reraise=True, retry=retry_if_exception(_retryable),
                        wait=wait_exponential(multiplier=0.5, max=self.max_wait)):
                    with attempt:
                        reply = await client.chat.completions.create(**self._request(messages, one))
        except openai.APIStatusError as exc:
            if not _retryable(exc):
                fix = _FIXES.get(exc.status_code, "check the command's options")
                raise _Rejected(f"{self.endpoint['baseUrl']} rejected the request for model {self.model!r} with "
                                f"HTTP {exc.status_code}: {_server_message(exc)!r}; {fix}. Nothing was recorded "
                                "for it: the same command asks it again") from None
            return Completion(index, one.seed, latency_s=time.perf_counter() - start,
                              error=f"{TRANSPORT_ERROR}: HTTP {exc.status_code} {_server_message(exc)}")
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            return Completion(index, one.seed, error=f"{TRANSPORT_ERROR}: {type(exc).__name__}: {exc}",
                              latency_s=time.perf_counter() - start)
        choice = reply.choices[0] if reply.choices else None
        usage = reply.usage
        return Completion(index, one.seed, text=choice.message.content if choice else None,
                          reasoning=_reasoning(choice.message) if choice else None,
                          finish_reason=choice.finish_reason if choice else None,
                          tokens_in=usage.prompt_tokens if usage else None,
                          tokens_out=usage.completion_tokens if usage else None,
                          latency_s=time.perf_counter() - start,
                          error=None if choice else "empty: no choices in the reply")

    async def _all(self, prompts, sampling, samples, progress, arrived: list) -> None:
        import openai

        gate = asyncio.Semaphore(self.concurrency)
        jobs = [(k, i) for k in range(len(prompts)) for i in samples[k]]
        done = 0

        async with openai.AsyncOpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout,
                                      max_retries=0) as client:

            async def run(k: int, i: int) -> tuple[int, Completion]:
                nonlocal done
                completion = await self._one(client, gate, prompts[k], sampling, i)
                arrived.append((k, completion))
                done += 1
                if progress:
                    progress(done)

            await asyncio.gather(*(run(k, i) for k, i in jobs))

    def generate(self, prompts: Sequence[list[Message]], sampling: Sampling,
                 samples: Sequence[Sequence[int]] | None = None,
                 progress: Callable[[int], None] | None = None) -> list[list[Completion]]:
        samples = samples if samples is not None else [range(sampling.n)] * len(prompts)
        arrived: list[tuple[int, Completion]] = []
        try:
            asyncio.run(self._all(list(prompts), sampling, samples, progress, arrived))
        except KeyboardInterrupt:
            raise Interrupted(_by_prompt(arrived, len(prompts))) from None
        except _Rejected as exc:  # the requests still in flight are cancelled by asyncio.run
            raise RejectedRequestError(str(exc), _by_prompt(arrived, len(prompts))) from None
        return _by_prompt(arrived, len(prompts))

    def close(self) -> None:
        """Nothing to release: each generate call opens and closes its own client."""
