"""A real OpenAI-compatible HTTP endpoint on 127.0.0.1 for tests: a few lines of the standard
library that answer as a server would, or fail as real ones do (429, 503, 401, a reset
connection, a reply that never comes, a 200 that is no answer); the code under test is the
real client."""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FakeEndpoint", "FAULTS"]

#: 200 replies that are no answer of the model, or odd shapes of one: action -> (status, content type, body).
FAULTS = {
    "no-choices": {"id": "c", "object": "chat.completion", "choices": []},
    "null-choices": {"id": "c", "object": "chat.completion", "choices": None},
    "error-body": {"error": {"message": "model overloaded, try later", "type": "server_error"}},
    "abort": {"choices": [{"index": 0, "finish_reason": "abort",
                           "message": {"role": "assistant", "content": "So the answer is \\boxed{"}}]},
    "error-finish": {"choices": [{"index": 0, "finish_reason": "error",
                                  "message": {"role": "assistant", "content": "Let me think: 2 + 3"}}]},
    "length-null": {"choices": [{"index": 0, "finish_reason": "length",
                                 "message": {"role": "assistant", "content": None}}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 8}},
    "parts": {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": [
        {"type": "thinking", "thinking": [{"type": "text", "text": "2 + 3 = 5"}]},
        {"type": "text", "text": "\\boxed{5}"}]}}], "usage": {"prompt_tokens": 3, "completion_tokens": 9}},
    # what deployed servers and gateways send (issue 41)
    "content-filter": {"choices": [{"index": 0, "finish_reason": "content_filter",
                                    "message": {"role": "assistant", "content": None}}]},
    "content-filter-partial": {"choices": [{"index": 0, "finish_reason": "content_filter",
                                            "message": {"role": "assistant", "content": "The answer is \\boxed{5"}}]},
    "completion-text": {"id": "c", "object": "text_completion",
                        "choices": [{"index": 0, "finish_reason": "stop", "text": "So \\boxed{5}", "logprobs": None}]},
    "surrogate": {"choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "\\boxed{5} \ud83d"}}]},
    "number-content": {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                                   "content": 42}}]},
}
#: 200 replies that are not JSON at all.
RAW = {"cut-json": ("application/json", b'{"id": "c", "object": "chat.completion", "choices": [{"index": 0, "mess'),
       "html": ("text/html", b"<html><head><title>Sign in</title></head><body>Proxy login</body></html>")}


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # a window of hundreds connects at once

    def handle_error(self, request, client_address):
        # A client that stops its run at a 401 drops the requests it still had in flight, as it
        # would with a real server; only other errors are the fake's own and worth printing.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _forwarded(base_url: str, body: dict) -> tuple[int, bytes]:
    """The status and body a real server answers ``body`` with."""
    request = urllib.request.Request(f"{base_url}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=600) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class FakeEndpoint:
    """An OpenAI-compatible chat endpoint that plays ``script`` (one action per request), then answers.

    Actions: an HTTP status (429, 503, 401, ...; the body's message is ``status <code>``),
    a pair ``(status, body)`` (that error reply, as a real server words it), ``"reset"``
    (close the connection with RST), ``"stall"`` (never answer), ``"slow"`` (answer after
    ``slow_s`` seconds), ``"trickle"`` (the answer one byte every ``slow_s`` / 20 seconds:
    each read is quick, the whole is not), ``"bad-gzip"`` (an answer said to be gzip that
    is not), a key of :data:`FAULTS` or :data:`RAW` (a 200 that is no answer, or an odd
    one), a dict (this request's assistant message; a ``finish_reason`` key in it is the
    choice's). ``check``: a function of the request's body that returns None or a
    ``(status, body)`` error reply, applied to every request (a server's own rules: a
    context window, a reasoning model's parameters). ``away_after`` / ``away_s``: after that
    many requests the server is away for ``away_s`` seconds (HTTP 503 to every request, as a
    gateway answers while the server behind it restarts), then answers again. An answer is
    ``\\boxed{5}``, or the assistant ``message`` given (``{"content": None,
    "reasoning_content": ...}`` as vLLM's reasoning parsers return; a ``finish_reason`` key
    in it is the choice's).

    ``rate_limit_s``: after a 429 it answers 429 (``Retry-After`` in whole seconds) to every
    request that comes within that many seconds, as a rate limiter does. ``no_system_role``:
    a request with a system message gets Gemma's 400 "System role not supported".
    ``delay_s``: every answer waits that long. ``reply``: a function of the request's body
    (its ``messages``, ``seed``, ...) that returns the answer's content, for answers that
    differ by question and sample. ``forward``: the base URL of a real OpenAI-compatible
    server (a :class:`~kstp.inference.backends.local.LocalServer`'s) to which each answered
    request is sent as it came, its reply returned as is: a counting proxy in front of a
    real model. It records ``requests``, the messages of each
    (``seen``), each request's whole body (``bodies``) and the most requests it held at
    once (``most_at_once``), and the 200 replies it sent whole (``answered``). ``models``: the
    ids its ``GET /v1/models`` lists (None: it answers that with 404).
    """

    def __init__(self, script=(), answer="\\boxed{5}", message: dict | None = None, rate_limit_s: float = 0.0,
                 no_system_role: bool = False, delay_s: float = 0.0, slow_s: float = 1.0, reply=None, check=None,
                 away_after: int | None = None, away_s: float = 0.0, forward: str | None = None,
                 models: list[str] | None = None):
        self.answered, self.dead = 0, False
        self.script, self.requests, self.seen, self.reply, self.bodies = list(script), 0, [], reply, []
        self.message = {"role": "assistant", **(message if message is not None else {"content": answer})}
        self.finish = self.message.pop("finish_reason", "stop")
        self.lock, self.stop = threading.Lock(), threading.Event()
        self.at_once = self.most_at_once = 0
        self.limited_until = 0.0
        self.away_since: float | None = None
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if models is None or not self.path.rstrip("/").endswith("/models"):
                    self.send_error(404)
                    return
                data = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in models]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with endpoint.lock:
                    endpoint.requests += 1
                    endpoint.seen.append(body.get("messages"))
                    endpoint.bodies.append(body)
                    endpoint.at_once += 1
                    endpoint.most_at_once = max(endpoint.most_at_once, endpoint.at_once)
                    action = endpoint.script.pop(0) if endpoint.script else "ok"
                    if rate_limit_s and time.monotonic() < endpoint.limited_until:
                        action = 429
                    if action == 429 and rate_limit_s:
                        endpoint.limited_until = time.monotonic() + rate_limit_s
                    if check is not None and (refused := check(body)) is not None:
                        action = refused
                    if away_after is not None and endpoint.requests > away_after:
                        endpoint.away_since = endpoint.away_since or time.monotonic()
                        if time.monotonic() - endpoint.away_since < away_s:
                            action = 503
                try:
                    self._answer(action, body)
                finally:
                    with endpoint.lock:
                        endpoint.at_once -= 1

            def _answer(self, action, body):
                if action == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                if action == "stall":
                    endpoint.stop.wait(60)
                    return
                if action == "slow":
                    endpoint.stop.wait(slow_s)
                    action = "ok"
                trickle, gzip = action == "trickle", action == "bad-gzip"
                if trickle or gzip:
                    action = "ok"
                if no_system_role and any(m.get("role") == "system" for m in body.get("messages") or []):
                    action = "no-system-role"
                if delay_s:
                    endpoint.stop.wait(delay_s)
                if endpoint.dead:  # killed while this request was in it: the connection drops, no answer
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                message = endpoint.message
                if endpoint.reply is not None:
                    message = {"role": "assistant", "content": endpoint.reply(body)}
                finish = endpoint.finish
                if isinstance(action, dict):  # this request's own answer
                    action, message = "ok", {"role": "assistant", **action}
                    finish = message.pop("finish_reason", "stop")
                headers, kind = {}, "application/json"
                if action == "ok" and forward is not None:
                    status, data = _forwarded(forward, body)
                elif isinstance(action, tuple):
                    status, reply = action
                    data = json.dumps(reply).encode()
                elif action in RAW:
                    status, (kind, data) = 200, RAW[action]
                else:
                    if action == "ok":
                        status, reply = 200, {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                                              "choices": [{"index": 0, "finish_reason": finish,
                                                           "message": message}],
                                              "usage": {"prompt_tokens": 3, "completion_tokens": 2,
                                                        "total_tokens": 5}}
                    elif action in FAULTS:
                        status, reply = 200, FAULTS[action]
                    elif action == "no-system-role":
                        status, reply = 400, {"object": "error", "message": "System role not supported",
                                              "type": "BadRequestError", "code": 400}
                    else:
                        status, reply = action, {"error": {"message": f"status {action}"}}
                        if action == 429 and rate_limit_s:
                            headers["Retry-After"] = str(max(1, round(rate_limit_s)))
                    data = json.dumps(reply).encode()
                if gzip:
                    headers["Content-Encoding"] = "gzip"  # a proxy's broken compression: the body is plain JSON
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if trickle:
                    for i in range(len(data)):
                        if endpoint.stop.wait(slow_s / 20):
                            return
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                    return
                self.wfile.write(data)
                if status == 200:
                    with endpoint.lock:
                        endpoint.answered += 1

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.dead:
            return
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()

    def kill(self) -> None:
        """Go away as a killed server does: stop listening (new connections are refused) and drop the requests
        it holds without an answer."""
        self.dead = True
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
