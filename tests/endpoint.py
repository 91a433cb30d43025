"""A real OpenAI-compatible HTTP endpoint on 127.0.0.1 for tests: a few lines of the standard
library that answer as a server would, or fail as real ones do (429, 503, 401, a reset
connection, a reply that never comes); the code under test is the real client."""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FakeEndpoint"]


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that stops its run at a 401 drops the requests it still had in flight, as it
        # would with a real server; only other errors are the fake's own and worth printing.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeEndpoint:
    """An OpenAI-compatible chat endpoint that plays ``script`` (one action per request), then answers.

    Actions: an HTTP status (429, 503, 401, ...; the body's message is ``status <code>``),
    ``"reset"`` (close the connection with RST), ``"stall"`` (never answer). An answer
    is ``\\boxed{5}``, or the assistant ``message`` given (``{"content": None,
    "reasoning_content": ...}`` as vLLM's reasoning parsers return).
    """

    def __init__(self, script=(), answer="\\boxed{5}", message: dict | None = None):
        self.script, self.requests = list(script), 0
        self.message = {"role": "assistant", **(message if message is not None else {"content": answer})}
        self.lock, self.stop = threading.Lock(), threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with endpoint.lock:
                    endpoint.requests += 1
                    action = endpoint.script.pop(0) if endpoint.script else "ok"
                if action == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                if action == "stall":
                    endpoint.stop.wait(60)
                    return
                status, body = (200, {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": endpoint.message}],
                                      "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}) \
                    if action == "ok" else (action, {"error": {"message": f"status {action}"}})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
