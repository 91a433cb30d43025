"""Any OpenAI-compatible chat endpoint (vLLM's server, llama.cpp, hosted APIs).

:meth:`OpenAIBackend.stream` keeps a window of requests in flight and starts the next
as each finishes (a continuously batching server such as vLLM's is only fast with
hundreds of sequences at once). The window defaults to 64 for a server on this
machine and 32 for a remote one (:func:`default_window`); HTTP 429 halves it, at most
once a second, and each answered request widens it by one again, back to its size.

Transport failures (HTTP 408, 409, 425, 429 and 5xx, timeouts, connection errors and
resets) are retried with exponential backoff (kstp's own loop: the wait, the window and
the reply's reading all depend on what the server said), honouring the server's ``Retry-After``
(and ``retry-after-ms``), and, if they persist, returned as ``transport:`` failures
that a resumed run asks again. A 200 that is no answer is a server failure of the same
kind, never the model's answer: a body that is not JSON (a proxy's login page, cut
JSON), no choices (``[]``, ``null``, an ``{"error": ...}`` body; the server's words are
kept) or a generation the server ended (``finish_reason`` ``abort`` or ``error``). When
:data:`DOWN_AFTER` requests in a row fail so, the server looks down: no further request
is started (those in flight finish), and the rest stay for the next run. Any other 4xx reply (400, 401,
403, 404, 422...) says the request itself is wrong: :meth:`~OpenAIBackend.stream`
raises :class:`~kstp.inference.backend.RejectedRequestError` at once, quoting the
server. One exception: a chat template without a system role (Gemma's "System role not
supported") is asked again with the instruction at the start of the user turn, and so
is every later request (``system_role="user"`` does that from the start).

``message.content`` is read as a string or as a list of parts (Mistral's reasoning
models: ``text`` parts are the content, ``thinking`` parts the reasoning); a reasoning
model's thinking returned apart (``reasoning_content``, ``reasoning``) is kept as
:attr:`Completion.reasoning`. ``n`` is emulated: one request per sample with seed
``seed + i`` (several servers refuse or ignore ``n`` > 1, and per-sample seeds keep each
sample reproducible on its own). The API key comes from ``OPENAI_API_KEY`` (or
``api_key``) and is never logged.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import socket
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from kstp.errors import ConfigError
from kstp.inference.backend import (
    TRANSPORT_ERROR,
    Completion,
    Emit,
    RejectedRequestError,
    Request,
    Sampling,
    Streaming,
    register_backend,
    system_in_user,
)

if TYPE_CHECKING:
    import httpx
    import openai

__all__ = ["OpenAIBackend", "RETRYABLE_STATUS", "default_window", "LOCAL_WINDOW", "REMOTE_WINDOW"]

#: HTTP statuses that say "try again" rather than "this request is wrong": request
#: timeout, conflict, too early, rate limit (and every 5xx).
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
#: Requests in flight against a server on this machine (or one kstp starts) and a remote one.
LOCAL_WINDOW, REMOTE_WINDOW = 64, 32
#: Requests in a row that failed after their retries, after which no further request is started.
DOWN_AFTER = 8
#: The longest ``Retry-After`` honoured, in seconds.
RETRY_AFTER_CAP = 600.0
#: The server's words for a chat template without a system role (vLLM serving Gemma).
_NO_SYSTEM_ROLE = "system role not supported"


def default_window(base_url: str | None) -> int:
    """Requests in flight for ``base_url``: :data:`LOCAL_WINDOW` on this machine, else :data:`REMOTE_WINDOW`.

    >>> default_window("http://127.0.0.1:8000/v1"), default_window("https://api.openai.com/v1")
    (64, 32)
    """
    host = (urlsplit(base_url).hostname or "") if base_url else "api.openai.com"
    local = host in ("localhost", "::1", "0.0.0.0", socket.gethostname()) or host.startswith("127.")
    return LOCAL_WINDOW if local else REMOTE_WINDOW


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
    """A request the server rejected (not retryable); becomes :class:`RejectedRequestError` in ``stream``."""


class _Stopped(Exception):
    """The caller asked the stream to stop."""


def _said(body) -> str | None:
    """The server's own words in a body: ``error.message``, ``message`` or ``detail``."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        said = (inner.get("message") or inner.get("detail")) if isinstance(inner, dict) else inner
        return str(said) if said else None
    return str(body) if body else None


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's words in an HTTP error, else the SDK's text."""
    return _said(exc.body) or exc.message


def _retry_after(response: httpx.Response | None) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, ``Retry-After`` as seconds or an HTTP date)."""
    if response is None:
        return None
    headers = response.headers
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _text_of(parts) -> str | None:
    """Text of a content given as a string or a list of parts (strings or ``{"type": "text", "text": ...}``)."""
    if parts is None or isinstance(parts, str):
        return parts
    if isinstance(parts, list):
        texts = [p if isinstance(p, str) else p.get("text") for p in parts
                 if isinstance(p, str) or (isinstance(p, dict) and p.get("type") == "text")]
        return "".join(t for t in texts if isinstance(t, str))
    return None


def _content(message: dict) -> tuple[str | None, str | None]:
    """``(content, reasoning)`` of a chat message.

    >>> _content({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "2+2 is 4"}]},
    ...                       {"type": "text", "text": "\\\\boxed{4}"}]})
    ('\\\\boxed{4}', '2+2 is 4')
    >>> _content({"content": None, "reasoning_content": "so 4"})
    (None, 'so 4')
    """
    content = message.get("content")
    thinking = None
    if isinstance(content, list):
        thoughts = [_text_of(p.get("thinking")) for p in content if isinstance(p, dict) and p.get("type") == "thinking"]
        thinking = "\n".join(t for t in thoughts if t) or None
        content = _text_of([p for p in content if not (isinstance(p, dict) and p.get("type") == "thinking")])
    elif not isinstance(content, str | None):
        content = None
    return content, message.get("reasoning_content") or message.get("reasoning") or thinking


def _snippet(text: str, size: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text[:size] + ("..." if len(text) > size else ""))


def _read_reply(response: httpx.Response, request: Request, start: float) -> tuple[Completion | None, str | None]:
    """The completion in a 200 reply, or ``(None, why it is a server failure)``."""
    try:
        body = json.loads(response.text)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        kind = response.headers.get("content-type", "no content type")
        return None, f"HTTP {response.status_code} with a reply that is not a chat completion ({kind}): " \
                     f"{_snippet(response.text)}"
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        said = _said(body.get("error")) if "error" in body else None
        return None, f"HTTP {response.status_code} with no choices in the reply" + (f": {said!r}" if said else "")
    finish = choice.get("finish_reason")
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    text, reasoning = _content(message)
    if finish in ("abort", "error"):  # vLLM's engine abort, a gateway's upstream failure: no finished answer
        return None, f"the server ended the generation (finish_reason {finish!r})" + (
            f" after {_snippet(text, 60)}" if text else "")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return Completion(request.sample_index, request.sampling.seed, text=text, reasoning=reasoning or None,
                      finish_reason=finish, tokens_in=usage.get("prompt_tokens"),
                      tokens_out=usage.get("completion_tokens"), latency_s=time.perf_counter() - start), None


class _Window:
    """Requests allowed in flight: ``size``, halved by a 429 (at most once a second), widened by one per answer."""

    def __init__(self, size: int):
        self.size = self.limit = size
        self.active = 0
        self._changed = asyncio.Condition()
        self._last_cut = 0.0

    async def __aenter__(self) -> _Window:
        async with self._changed:
            await self._changed.wait_for(lambda: self.active < self.limit)
            self.active += 1
        return self

    async def __aexit__(self, *exc) -> None:
        async with self._changed:
            self.active -= 1
            self._changed.notify_all()

    def refused(self) -> None:
        if time.monotonic() - self._last_cut >= 1.0:
            self.limit, self._last_cut = max(1, self.limit // 2), time.monotonic()

    async def served(self) -> None:
        if self.limit < self.size:
            async with self._changed:
                self.limit += 1
                self._changed.notify_all()


@register_backend("openai")
class OpenAIBackend(Streaming):
    """Chat completions from ``base_url`` (default: ``$OPENAI_BASE_URL``, else the OpenAI API).

    Parameters
    ----------
    model : str
        Model name the server expects.
    base_url : str, optional
        e.g. ``http://127.0.0.1:8000/v1`` for a vLLM server.
    concurrency : int, optional
        The window: requests in flight at once (default :func:`default_window`).
    retries : int
        Attempts per request before it is recorded as a transport failure.
    timeout : float
        Seconds per request.
    max_wait : float
        Longest backoff between two attempts, in seconds, unless the server asks for
        longer (``Retry-After``, up to :data:`RETRY_AFTER_CAP`).
    system_role : {"system", "user"}
        ``user``: send the system instruction at the start of the first user turn
        (for chat templates without a system role); part of the endpoint, so of the
        run's identity.
    """

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 concurrency: int | None = None, retries: int = 5, timeout: float = 600.0, max_wait: float = 30.0,
                 system_role: str = "system"):
        if system_role not in ("system", "user"):
            raise ConfigError(f"system_role must be system or user, not {system_role!r}")
        self.model = model
        # The openai client reads OPENAI_BASE_URL itself; read here, the run identity names the server asked.
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.window = concurrency or default_window(self.base_url)
        self.current_window = self.window
        self.retries = retries
        self.max_wait = max_wait
        self.timeout = timeout
        self.endpoint = {"baseUrl": (self.base_url or "https://api.openai.com/v1").rstrip("/")}
        if system_role == "user":  # only when asked: the runs of every other configuration keep their keys
            self.endpoint["systemRole"] = "user"
        self._system_in_user = system_role == "user"
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"  # local servers accept any key

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    def _request(self, messages: list[dict], sampling: Sampling) -> dict:
        # Under a context window the server's own window bounds the reply (vLLM fills to --max-model-len):
        # max_tokens equal to the window would ask for more than any prompt leaves, and be refused.
        cap = sampling.max_tokens if sampling.context is None or sampling.max_tokens < sampling.context else None
        request = {"model": self.model, "messages": messages, "temperature": sampling.temperature,
                   "top_p": sampling.top_p, "max_tokens": cap, "seed": sampling.seed, "n": 1}
        request = {k: v for k, v in request.items() if v is not None}  # None: the provider's default
        if sampling.stop:
            request["stop"] = list(sampling.stop)
        if sampling.json_schema is not None:
            request["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "answer", "schema": sampling.json_schema}}
        return request

    def _backoff(self, attempt: int, asked: float | None) -> float:
        """Seconds before attempt ``attempt`` (1, 2, ...): exponential from 0.5 s, or what the server asked."""
        wait = min(self.max_wait, 0.5 * 2 ** (attempt - 1))
        return min(max(wait, asked), RETRY_AFTER_CAP) if asked is not None else wait

    async def _one(self, client: openai.AsyncOpenAI, request: Request, window: _Window) -> Completion:
        import openai

        start = time.perf_counter()
        failure, asked, attempt = None, None, 0
        has_system = any(m.get("role") == "system" for m in request.messages)
        while attempt < self.retries:
            if attempt:
                await asyncio.sleep(self._backoff(attempt, asked))
            attempt += 1
            merged = self._system_in_user and has_system
            messages = system_in_user(request.messages) if merged else request.messages
            try:
                raw = await client.chat.completions.with_raw_response.create(**self._request(messages,
                                                                                              request.sampling))
            except openai.APIStatusError as exc:
                said = _server_message(exc)
                if exc.status_code == 429:
                    window.refused()
                    self.current_window = window.limit
                if _retryable(exc):
                    failure, asked = f"HTTP {exc.status_code} {said}", _retry_after(exc.response)
                    continue
                if exc.status_code == 400 and has_system and not merged and _NO_SYSTEM_ROLE in said.lower():
                    self._system_in_user = True  # this server's template has no system role: every later request too
                    attempt -= 1  # the same request in the form the server takes is no retry
                    continue
                fix = _FIXES.get(exc.status_code, "check the command's options")
                raise _Rejected(f"{self.endpoint['baseUrl']} rejected the request for model {self.model!r} with "
                                f"HTTP {exc.status_code}: {said!r}; {fix}. Nothing was recorded for it: the same "
                                "command asks it again") from None
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                failure, asked = f"{type(exc).__name__}: {exc}", None
                continue
            await window.served()
            self.current_window = window.limit
            completion, failure = _read_reply(raw.http_response, request, start)
            asked = None
            if completion is not None:
                if merged:
                    completion.extra["systemInUser"] = True
                return completion
        return Completion(request.sample_index, request.sampling.seed, latency_s=time.perf_counter() - start,
                          error=f"{TRANSPORT_ERROR}: {failure}")

    async def _stream(self, requests: Iterable[Request], size: int, emit: Emit, stop: threading.Event) -> None:
        import openai

        pending = iter(requests)
        window, in_a_row = _Window(size), [0]
        self.current_window = size

        async with openai.AsyncOpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout,
                                      max_retries=0) as client:

            async def work() -> None:
                while in_a_row[0] < DOWN_AFTER and not stop.is_set():
                    request = next(pending, None)
                    if request is None:
                        return
                    async with window:
                        completion = await self._one(client, request, window)
                    failed = completion.text is None and (completion.error or "").startswith(TRANSPORT_ERROR)
                    in_a_row[0] = in_a_row[0] + 1 if failed else 0
                    emit(request.key, completion)

            async def watch() -> None:
                while not stop.is_set():
                    await asyncio.sleep(0.05)
                raise _Stopped

            try:
                async with asyncio.TaskGroup() as group:
                    watcher = group.create_task(watch())
                    workers = [group.create_task(work()) for _ in range(size)]
                    await asyncio.wait(workers)
                    watcher.cancel()
            except* _Stopped:
                pass

    def stream(self, requests: Iterable[Request], window: int, emit: Emit, stop: threading.Event) -> None:
        """See :meth:`kstp.inference.backend.Backend.stream`."""
        try:
            asyncio.run(self._stream(requests, window, emit, stop))
        except ExceptionGroup as group:  # the requests still in flight were cancelled with the task group
            rejected = group.subgroup(_Rejected)
            if rejected is None:
                raise
            while isinstance(rejected, ExceptionGroup):
                rejected = rejected.exceptions[0]
            raise RejectedRequestError(str(rejected)) from None

    def close(self) -> None:
        """Nothing to release: each stream opens and closes its own client."""
