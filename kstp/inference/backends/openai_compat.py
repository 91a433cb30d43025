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
a server that has answered in this run becomes unreachable or unavailable (refused or
reset connections, timeouts, HTTP 502, 503, 504: a server restarted mid-run), kstp rides
the outage out for up to ``outage`` seconds (:data:`OUTAGE_S` unless ``--model-args
outage=N``), asking the failed requests again with backoff and saying so on the progress
line (:attr:`OpenAIBackend.note`): nothing is lost if it comes back. When
:data:`DOWN_AFTER` requests in a row fail otherwise, or the outage lasts longer, the
server looks down: no further request is started (those in flight finish), and the rest
stay for the next run. Any other 4xx reply (400, 401,
403, 404, 422...) says the request itself is wrong: :meth:`~OpenAIBackend.stream`
raises :class:`~kstp.inference.backend.RejectedRequestError` at once, quoting the
server. One exception: a chat template without a system role (Gemma's "System role not
supported") is asked again with the instruction at the start of the user turn, and so
is every later request (``system_role="user"`` does that from the start).

``message.content`` is read as a string or as a list of parts (Mistral's reasoning
models: ``text`` parts are the content, ``thinking`` parts the reasoning), and a choice
in the completions shape (``choices[0].text``, no ``message``) as its text; a content of
any other type (a number) is a server failure. A reasoning model's thinking returned
apart (``reasoning_content``, ``reasoning``) is kept as :attr:`Completion.reasoning`.

What deployed servers and APIs do, and what kstp does with it:

- a prompt longer than the server's window (vLLM's 400 "maximum context length is 4096
  tokens ... 4800 in the messages", "The decoder prompt (length 4800) is longer than the
  maximum model length", llama.cpp's "exceeds the available context size", OpenAI's
  ``context_length_exceeded``) is that question's failure, not the run's: a completion
  with the error ``overflow: ...`` and the numbers, stored and counted apart; a prompt
  that fits but leaves no room for the ``max_tokens`` sent stops the run (the cap is the
  user's to change);
- OpenAI's reasoning models (:func:`reasoning_model`: o1, o3, o4-mini, gpt-5) take the
  reply cap as ``max_completion_tokens``; so does any model whose server says so in its
  400, after which every request sends it; a temperature or top-p they refuse stops the
  run with the ``--gen-kwargs`` that unsets them;
- a 429 that says the account has no quota or credits (``insufficient_quota``) is no rate
  limit: it stops the run at once, quoting the provider;
- ``timeout`` bounds the whole request, not each read: a server trickling bytes is a
  timeout, retried as one;
- a body the client cannot decode (a proxy's broken ``Content-Encoding: gzip``) is named
  so, not "Connection error.".

Several servers of one model (``base_url`` a list, ``--base-url`` repeated): the window is
spread over them and a server that goes away has its requests asked of the others
(:mod:`~kstp.inference.backends.endpoints`); servers whose ``/v1/models`` differ are refused at
start. Each one's figures are :attr:`OpenAIBackend.endpoint_figures` and the progress note.

``n`` is emulated: one request per sample with seed ``seed + i`` (several servers refuse
or ignore ``n`` > 1, and per-sample seeds keep each sample reproducible on its own). The
API key comes from ``OPENAI_API_KEY`` (or ``api_key``) and is never logged.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Sequence
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
from kstp.inference.backends.context_window import overflow as _overflow
from kstp.inference.backends.context_window import window_numbers as _window_numbers
from kstp.inference.backends.endpoints import EndpointPool, Window, check_same_models

if TYPE_CHECKING:
    import httpx
    import openai

__all__ = ["OpenAIBackend", "RETRYABLE_STATUS", "default_window", "reasoning_model", "LOCAL_WINDOW", "REMOTE_WINDOW"]

#: HTTP statuses that say "try again" rather than "this request is wrong": request
#: timeout, conflict, too early, rate limit (and every 5xx).
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
#: Requests in flight against a server on this machine (or one kstp starts) and a remote one.
LOCAL_WINDOW, REMOTE_WINDOW = 64, 32
#: Requests in a row that failed after their retries, after which the server looks down.
DOWN_AFTER = 8
#: Seconds a server that looks down is waited for (its requests asked again), before no further request starts.
OUTAGE_S = 180.0
#: The longest pause between two attempts while a server is down, in seconds.
OUTAGE_PROBE_S = 10.0
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


# OpenAI's reasoning models by name (a provider prefix such as "openai/" allowed): o1, o3-mini, o4-mini, gpt-5,
# gpt-5-mini; gpt-5-chat is a chat model and takes a temperature
_REASONING_MODEL_RE = re.compile(r"(?:^|/)(?:o[1-9](?:-[\w.-]+)?|gpt-5(?!-chat)(?:[\w.-]+)?)$", re.IGNORECASE)


def reasoning_model(name: str) -> bool:
    """Whether ``name`` is one of OpenAI's reasoning models, which take no temperature or top-p but the
    default (1) and want the reply cap as ``max_completion_tokens`` (as lm-eval and Inspect tell them).

    >>> [reasoning_model(m) for m in ("o1", "o3-mini", "openai/o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-chat-latest")]
    [True, True, True, True, True, False]
    >>> reasoning_model("gpt-4o"), reasoning_model("Qwen/QwQ-32B"), reasoning_model("olmo-2")
    (False, False, False)
    """
    return bool(_REASONING_MODEL_RE.search(name.strip()))


def _quota(exc) -> bool:
    """Whether a 429 says the account has no quota or credits left (no wait fixes that)."""
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body)
    inner = inner if isinstance(inner, dict) else {}
    said = f"{inner.get('code', '')} {inner.get('type', '')} {_server_message(exc)}".lower()
    return any(word in said for word in ("insufficient_quota", "exceeded your current quota", "no credits",
                                         "credit balance", "billing"))


def _cause(exc: BaseException) -> str:
    """What a transport error was underneath (the SDK says only "Connection error."): its innermost cause."""
    root, seen = exc, set()
    while (root.__cause__ or root.__context__) is not None and id(root) not in seen:
        seen.add(id(root))
        root = root.__cause__ or root.__context__
    words = f"{type(exc).__name__}: {exc}"
    if root is exc:
        return words
    if "decod" in type(root).__name__.lower() or "decompress" in str(root).lower():
        return f"{words} the reply's body could not be decoded ({type(root).__name__}: {root}); a proxy's broken " \
               "Content-Encoding?"
    return f"{words} ({type(root).__name__}: {root})"


def _failed(completion: Completion) -> bool:
    """Whether a completion is a server's failure (no reply after the retries)."""
    return completion.text is None and (completion.error or "").startswith(TRANSPORT_ERROR)


#: The failures that say the server is away (not that this request is bad): a refused, reset or timed-out
#: connection, and a gateway's 502, 503, 504.
_AWAY = ("APIConnectionError", "APITimeoutError", "no whole reply", "HTTP 502", "HTTP 503", "HTTP 504")


def _unavailable(error: str | None) -> bool:
    """Whether a transport failure says the server is away.

    >>> _unavailable("transport: HTTP 503 status 503"), _unavailable("transport: HTTP 200 with no choices")
    (True, False)
    """
    return bool(error) and error.removeprefix(f"{TRANSPORT_ERROR}: ").startswith(_AWAY)


def _retryable(exc: BaseException) -> bool:
    import openai  # here, not at the top: `kstp --help` must not pay for it

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | openai.APITimeoutError)


def _fix(status: int, said: str) -> str:
    """What to change when the server rejects a request with ``status``, saying ``said``."""
    lowered = said.lower()
    refused = [name for name in ("temperature", "top_p") if name in lowered]
    if refused and ("unsupported" in lowered or "not support" in lowered or "only the default" in lowered):
        unset = ",".join(f"{name}=none" for name in refused)
        return f"this model takes no {' or '.join(refused)} but its default: --gen-kwargs {unset} leaves it unsent"
    if _window_numbers(said, {})[0]:
        return ("the prompt fits the server's window but not with the max_tokens sent: a smaller --gen-kwargs "
                "max_tokens=N, or context=N (the server's window) to let each reply fill what its prompt leaves")
    return _FIXES.get(status, "check the command's options")


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


class _Malformed(ValueError):
    """A reply's message of a shape no chat server sends (a content that is a number): a server failure."""


def _content(message: dict) -> tuple[str | None, str | None]:
    """``(content, reasoning)`` of a chat message.

    Raises
    ------
    _Malformed
        When the content is neither a string, a list of parts nor null (``"content": 42``).

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
        raise _Malformed(f"a message content of type {type(content).__name__} ({_snippet(repr(content), 40)})")
    reasoning = message.get("reasoning_content") or message.get("reasoning") or thinking
    return content, reasoning if isinstance(reasoning, str) else None


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
    if not message and isinstance(choice.get("text"), str):  # a chat endpoint answering in the completions shape
        message = {"content": choice["text"]}
    try:
        text, reasoning = _content(message)
    except _Malformed as exc:
        return None, f"HTTP {response.status_code} with {exc}, not a chat completion"
    if finish in ("abort", "error"):  # vLLM's engine abort, a gateway's upstream failure: no finished answer
        return None, f"the server ended the generation (finish_reason {finish!r})" + (
            f" after {_snippet(text, 60)}" if text else "")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return Completion(request.sample_index, request.sampling.seed, text=text, reasoning=reasoning or None,
                      finish_reason=finish, tokens_in=usage.get("prompt_tokens"),
                      tokens_out=usage.get("completion_tokens"), latency_s=time.perf_counter() - start), None


@register_backend("openai")
class OpenAIBackend(Streaming):
    """Chat completions from ``base_url`` (default: ``$OPENAI_BASE_URL``, else the OpenAI API).

    Parameters
    ----------
    model : str
        Model name the server expects.
    base_url : str or list of str, optional
        e.g. ``http://127.0.0.1:8000/v1`` for a vLLM server; a list: servers of the same model,
        asked as one (recorded with the run, not its identity).
    concurrency : int, optional
        The window: requests in flight at once, over all servers (default: the sum of each
        one's :func:`default_window`).
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
    outage : float
        Seconds a server that looks down (:data:`DOWN_AFTER` failures in a row) is
        waited for, its failed requests asked again, before the run stops starting new
        ones (:data:`OUTAGE_S`; 0 stops at once); with several servers, once every one is away.

    Raises
    ------
    ConfigError
        A bad ``system_role`` or ``outage``, a server given twice, or servers whose
        ``/v1/models`` list different models (one line naming both).
    """

    name = "openai"
    #: What sample i's text is promised (:func:`~kstp.inference.backend.reproducibility`): each request carries
    #: its seed, the rest is the server's.
    reproducible = (False, "the server decides: each request carries its seed, but a server's batches and prompt "
                           "cache may change a sample's text (vLLM promises it with VLLM_BATCH_INVARIANT=1, a "
                           "llama.cpp server with --parallel 1 --no-cache-prompt; OpenAI's API: best effort)")

    def __init__(self, model: str, base_url: str | Sequence[str] | None = None, api_key: str | None = None,
                 concurrency: int | None = None, retries: int = 5, timeout: float = 600.0, max_wait: float = 30.0,
                 system_role: str = "system", outage: float = OUTAGE_S):
        if system_role not in ("system", "user"):
            raise ConfigError(f"system_role must be system or user, not {system_role!r}")
        if isinstance(outage, bool) or not isinstance(outage, int | float) or not outage >= 0:
            raise ConfigError(f"outage must be a number of seconds >= 0, not {outage!r}")
        self.outage = float(outage)
        #: What the progress line adds while the server looks down ("server down for 12 s, ..."); None otherwise.
        self.note: str | None = None
        self.model = model
        # The openai client reads OPENAI_BASE_URL itself; read here, the run records the servers asked.
        given = [base_url] if isinstance(base_url, str) or base_url is None else list(base_url)
        given = [url for url in given if url] or [os.environ.get("OPENAI_BASE_URL") or None]
        self.base_url = given[0]
        #: Every endpoint asked (``base_url`` given as a list): the window is spread over them (:mod:`.endpoints`).
        self.base_urls = [(url or "https://api.openai.com/v1").rstrip("/") for url in given]
        EndpointPool(self.base_urls)  # refuses an endpoint given twice
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"  # local servers accept any key
        if len(self.base_urls) > 1:  # one endpoint is never asked: its requests say whether it serves the model
            check_same_models(self.base_urls, self._api_key)
        self.window = concurrency or sum(default_window(url) for url in given)
        self.current_window = self.window
        self.retries = retries
        self.max_wait = max_wait
        self.timeout = timeout
        # where the model is served is recorded, not the run's identity (kstp.inference.runs: _WHERE)
        self.endpoint = {"baseUrls": list(self.base_urls)}
        #: Each endpoint's figures of the last stream (:meth:`EndpointPool.figures`); empty before one.
        self.endpoint_figures: list[dict] = []
        if system_role == "user":  # only when asked: the runs of every other configuration keep their keys
            self.endpoint["systemRole"] = "user"
        self._system_in_user = system_role == "user"
        # the reply cap's name: OpenAI's reasoning models want max_completion_tokens (and so does a server that says so)
        self._cap = "max_completion_tokens" if reasoning_model(model) else "max_tokens"

    def __repr__(self) -> str:
        shown = self.base_url if len(self.base_urls) == 1 else self.base_urls
        return f"OpenAIBackend(model={self.model!r}, base_url={shown!r})"

    def _request(self, messages: list[dict], sampling: Sampling) -> dict:
        # Under a context window the server's own window bounds the reply (vLLM fills to --max-model-len):
        # max_tokens equal to the window would ask for more than any prompt leaves, and be refused.
        cap = sampling.max_tokens if sampling.context is None or (
            sampling.max_tokens is not None and sampling.max_tokens < sampling.context) else None
        request = {"model": self.model, "messages": messages, "temperature": sampling.temperature,
                   "top_p": sampling.top_p, self._cap: cap, "seed": sampling.seed, "n": 1}
        request = {k: v for k, v in request.items() if v is not None}  # None: the provider's default
        if sampling.stop:
            request["stop"] = list(sampling.stop)
        if sampling.json_schema is not None:
            request["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "answer", "schema": sampling.json_schema}}
        if extras := self._extras(sampling):
            request["extra_body"] = extras  # fields the OpenAI schema lacks, which vLLM and llama.cpp take
        return request

    async def _body(self, messages: list[dict], sampling: Sampling) -> dict:
        """The request's body (:meth:`_request`); a backend that must ask its server first overrides this."""
        return self._request(messages, sampling)

    def _extras(self, sampling: Sampling) -> dict:
        """The sampling fields sent in the body beside OpenAI's (:meth:`Sampling.extras`: vLLM's names)."""
        return sampling.extras()

    def _backoff(self, attempt: int, asked: float | None) -> float:
        """Seconds before attempt ``attempt`` (1, 2, ...): exponential from 0.5 s, or what the server asked."""
        wait = min(self.max_wait, 0.5 * 2 ** (attempt - 1))
        return min(max(wait, asked), RETRY_AFTER_CAP) if asked is not None else wait

    async def _one(self, client: openai.AsyncOpenAI, request: Request, window: Window, url: str | None = None,
                   elsewhere: bool = False) -> Completion:
        """One request to ``client`` (at ``url``), retried; ``elsewhere``: another endpoint is up, so a failure that
        says the server is away (:func:`_unavailable`) comes back at once, to be asked there."""
        import openai

        url = url or self.base_urls[0]
        start = time.perf_counter()
        failure, asked, attempt = None, None, 0
        has_system = any(m.get("role") == "system" for m in request.messages)
        while attempt < self.retries:
            if elsewhere and failure is not None and _unavailable(f"{TRANSPORT_ERROR}: {failure}"):
                break
            if attempt:
                await asyncio.sleep(self._backoff(attempt, asked))
            attempt += 1
            merged = self._system_in_user and has_system
            messages = system_in_user(request.messages) if merged else request.messages
            try:
                body = await self._body(messages, request.sampling)
                # the whole request within the timeout: the client's own bounds each read, so a server trickling
                # bytes would hold a slot for ever
                raw = await asyncio.wait_for(client.chat.completions.with_raw_response.create(**body), self.timeout)
                completion, failure = _read_reply(raw.http_response, request, start)
            except openai.APIStatusError as exc:
                said = _server_message(exc)
                if exc.status_code == 429 and _quota(exc):  # no wait brings credits back
                    raise _Rejected(f"{url} refused the request for model {self.model!r}: the "
                                    f"account has no quota left (HTTP 429: {said!r}); add credits or use another key "
                                    "(OPENAI_API_KEY). Nothing was recorded for it: the same command asks it "
                                    "again") from None
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
                if exc.status_code == 400 and "max_tokens" in body and "max_completion_tokens" in said:
                    self._cap = "max_completion_tokens"  # a reasoning model by another name: every later request too
                    attempt -= 1
                    continue
                if exc.status_code in (400, 413, 422) and (overflow := _overflow(said, exc.body, body.get(self._cap))):
                    return Completion(request.sample_index, request.sampling.seed, error=overflow,
                                      latency_s=time.perf_counter() - start)
                raise _Rejected(f"{url} rejected the request for model {self.model!r} with "
                                f"HTTP {exc.status_code}: {said!r}; {_fix(exc.status_code, said)}. Nothing was "
                                "recorded for it: the same command asks it again") from None
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                failure, asked = _cause(exc), None
                continue
            except TimeoutError:
                failure, asked = f"no whole reply within the timeout ({self.timeout:g} s)", None
                continue
            except OSError as exc:  # a request the backend makes to build the body (the local one counts tokens)
                failure, asked = str(exc), None
                continue
            await window.served()
            self.current_window = window.limit
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
        window, in_a_row = Window(size), [0]
        outage = {"answered": False, "since": None}  # a server answered in this run; since when all are away
        self.current_window, self.note = size, None
        clients = [openai.AsyncOpenAI(base_url=url, api_key=self._api_key, timeout=self.timeout, max_retries=0)
                   for url in self.base_urls]
        pool = EndpointPool(self.base_urls, clients)
        several = len(self.base_urls) > 1

        def riding_out(completion: Completion) -> bool:
            """Whether a request that failed because every server is away waits for one (the outage within
            ``outage`` seconds) instead of failing; keeps :attr:`note` for the progress line."""
            if not (outage["answered"] and _unavailable(completion.error)):
                return False
            outage["since"] = outage["since"] or time.monotonic()
            lasted = time.monotonic() - outage["since"]
            away = "every server" if several else "server"
            self.note = (f"{away} away for {lasted:.0f} s, waiting up to {self.outage:.0f} s"
                         if lasted < self.outage else f"{away} away for {lasted:.0f} s: no new requests")
            return lasted < self.outage

        async def ask(request: Request) -> Completion:
            """``request`` answered by one endpoint: one that is away has it asked of another (never twice
            answered: each try but the last came back without an answer)."""
            pause, elsewhere_once, failed_at = 0.5, several, None
            while True:
                endpoint = pool.pick(avoid=failed_at)
                try:
                    completion = await self._one(endpoint.client, request, window, endpoint.url,
                                                 elsewhere=pool.others_up(endpoint))
                except BaseException:
                    pool.done(endpoint, None, ok=False)
                    raise
                failed, away = _failed(completion), _unavailable(completion.error)
                pool.done(endpoint, completion.latency_s, ok=not failed, away=failed and away,
                          tokens_out=completion.tokens_out or 0)
                if several:
                    self.note = pool.note() if pool.up() else self.note
                if not failed or stop.is_set():
                    return completion
                if away and pool.up():  # another server is up: ask it now
                    continue
                if elsewhere_once and pool.others_up(endpoint):  # a server failing otherwise (500s): one more
                    elsewhere_once, failed_at = False, endpoint  # try on another before the request is pending
                    continue
                if not riding_out(completion):
                    return completion
                await asyncio.sleep(pause)  # every server away (restarting?): ask again, lose nothing
                pause = min(OUTAGE_PROBE_S, pause * 2)

        async def work() -> None:
            while in_a_row[0] < DOWN_AFTER and not stop.is_set():
                request = next(pending, None)
                if request is None:
                    return
                async with window:
                    completion = await ask(request)
                if _failed(completion):
                    past = outage["since"] is not None and time.monotonic() - outage["since"] >= self.outage
                    in_a_row[0] += DOWN_AFTER if past else 1  # an outage past its limit: no new requests
                else:
                    in_a_row[0], outage["answered"], outage["since"] = 0, True, None
                    self.note = pool.note() if several else None
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
        finally:
            self.endpoint_figures = pool.figures()
            for client in clients:
                await client.close()

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
