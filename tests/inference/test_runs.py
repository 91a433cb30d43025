"""Run identity, retries and interruptions, against a real HTTP server on 127.0.0.1.

The server is a few lines of the standard library that answer as an OpenAI-compatible
endpoint would, or fail as real ones do (429, 503, 408, 409, 425, a reset connection,
a reply that never comes); the code under test is the real client, runs and CLI.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

from kstp.graph.ladybug import LadybugStore
from kstp.inference.backend import Sampling, cache_key, endpoint_of, prompt_hash
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.runs import ConfigChangedError, RunSpec, generate_and_store, open_run
from tests.conftest import load_toy

CHAT = [{"role": "user", "content": "2 + 3?"}]
ROOT = Path(__file__).resolve().parents[2]


class FakeEndpoint:
    """An OpenAI-compatible chat endpoint that plays ``script`` (one action per request), then answers.

    Actions: an HTTP status (429, 503, ...), ``"reset"`` (close the connection with RST),
    ``"stall"`` (never answer). An answer is ``\\boxed{5}``.
    """

    def __init__(self, script=(), answer="\\boxed{5}"):
        self.script, self.answer, self.requests = list(script), answer, 0
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
                                                   "message": {"role": "assistant", "content": endpoint.answer}}],
                                      "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}) \
                    if action == "ok" else (action, {"error": {"message": f"status {action}"}})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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


def _backend(url: str, retries: int = 7, concurrency: int = 1) -> OpenAIBackend:
    return OpenAIBackend("m", base_url=url, retries=retries, max_wait=0.05, timeout=10, concurrency=concurrency)


@pytest.mark.parametrize("failure", [429, 503, 500, 408, 409, 425, "reset"])
def test_openai_backend_retries_transport_failures(failure):
    with FakeEndpoint([failure, failure]) as server:
        [[completion]] = _backend(server.base_url).generate([CHAT], Sampling(max_tokens=8))
    assert (completion.text, completion.error, server.requests) == ("\\boxed{5}", None, 3)


def test_openai_backend_persistent_failure_is_transport_and_a_bad_request_a_refusal():
    with FakeEndpoint([503] * 3) as server:
        [[completion]] = _backend(server.base_url, retries=3).generate([CHAT], Sampling(max_tokens=8))
    assert completion.text is None and completion.error.startswith("transport: HTTP 503")
    with FakeEndpoint([400]) as server:
        [[completion]] = _backend(server.base_url).generate([CHAT], Sampling(max_tokens=8))
    assert completion.error.startswith("refused: HTTP 400") and server.requests == 1


def _spec(backend, questions="all", template="t1") -> RunSpec:
    return RunSpec.of(backend, "answers", "1.0", "toy", Sampling(max_tokens=8), template, {"questions": questions})


def test_run_identity_includes_endpoint_model_args_and_template(store):
    here, there = _backend("http://127.0.0.1:8000/v1"), _backend("http://10.0.0.2:8000/v1")
    assert endpoint_of(here) == {"backend": "openai", "baseUrl": "http://127.0.0.1:8000/v1"}
    assert _spec(here).config_hash() != _spec(there).config_hash()
    assert _spec(here).config_hash() != _spec(here, template="t2").config_hash()
    h, sampling = prompt_hash(CHAT), Sampling()
    base = cache_key("m", h, sampling, 0, endpoint_of(here), "t1")
    assert base != cache_key("m", h, sampling, 0, endpoint_of(there), "t1")
    assert base != cache_key("m", h, sampling, 0, endpoint_of(here), "t2")
    assert base != cache_key("m", h, sampling, 1, endpoint_of(here), "t1")
    assert base != cache_key("m", h, Sampling(seed=7), 0, endpoint_of(here), "t1")
    open_run(store, _spec(here))
    with pytest.raises(ConfigChangedError, match=r"endpoint.baseUrl: 'http://127.0.0.1:8000/v1' -> "
                                                 r"'http://10.0.0.2:8000/v1'"):
        open_run(store, _spec(there))


def test_open_run_raising_the_limit_extends_the_run(store):
    backend = _backend("http://127.0.0.1:8000/v1")
    first, resumed = open_run(store, _spec(backend, ["q1", "q2"]))
    assert resumed is False
    assert open_run(store, _spec(backend, ["q1", "q2", "q3"])) == (first, True)
    assert open_run(store, _spec(backend, "all")) == (first, True)
    assert open_run(store, _spec(backend, "all")) == (first, True)  # the extended configuration resumes
    with pytest.raises(ConfigChangedError, match="questions"):
        open_run(store, _spec(backend, ["q1"]))  # fewer questions is another configuration


def test_config_change_message_lists_a_few_ids_then_a_count(store):
    backend = _backend("http://127.0.0.1:8000/v1")
    open_run(store, _spec(backend, [f"q{i}" for i in range(500)]))
    with pytest.raises(ConfigChangedError) as caught:
        open_run(store, _spec(backend, [f"r{i}" for i in range(400)]))
    assert "options.questions: [q0, q1, q2 and 497 more] (500) -> [r0, r1, r2 and 397 more] (400)" in str(caught.value)
    assert len(str(caught.value)) < 300


def _generate(store, backend, questions, progress=None):
    spec = _spec(backend)
    run_id, _ = open_run(store, spec, new_run=True)
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model", "localId": "m"}]))
    graded = []
    prompts = {f"toy:{q}": [{"role": "user", "content": q}] for q in questions}
    result = generate_and_store(store, backend, run_id, "model:m", prompts, Sampling(max_tokens=8),
                                lambda rows, completions: graded.extend(rows["id"]), progress=progress)
    return run_id, result, graded


def test_transport_failures_are_not_stored_and_are_asked_again(toy):
    with FakeEndpoint([503] * 2) as server:  # the first question fails twice: its retries are spent
        backend = _backend(server.base_url, retries=2)
        run_id, (requested, done), graded = _generate(toy, backend, ["q1", "q2", "q3"])
        assert (requested, done, len(graded)) == (3, 2, 2)
        stored = toy.frame("run_responses", {"runId": run_id})
        assert len(stored) == 2 and stored["error"].isna().all()
        run_id, (requested, done), graded = _generate(toy, backend, ["q1", "q2", "q3"])
    assert (requested, done) == (3, 1)  # only the failed one is asked again
    assert len(toy.frame("run_responses", {"runId": run_id})) == 3


@pytest.fixture
def sigint_to_python():
    """SIGINT raises KeyboardInterrupt here and in the children started meanwhile.

    In the whole suite (not in this module alone, nor in either half of the suite) both
    interrupt tests saw SIGINT go nowhere, as if something earlier in the session left it
    ignored or blocked; each kstp process starts with Python's own handler, so the tests
    restore that state for themselves.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    yield
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("sigint_to_python")
def test_interrupt_stores_every_completion_that_arrived(toy):
    with FakeEndpoint(["ok", "ok", "ok", "stall", "stall", "stall"]) as server:
        backend = _backend(server.base_url, concurrency=6)
        seen = []

        def progress(done, total):
            seen.append(done)
            if done == 3:
                threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()

        with pytest.raises(KeyboardInterrupt):
            _generate(toy, backend, ["q1", "q2", "q3", "q4", "q5", "q6"], progress)
    runs = toy.frame("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
    stored = toy.frame("run_responses", {"runId": runs.iloc[0]["runId"]})
    assert len(stored) == 3 and (stored["text"] == "\\boxed{5}").all()


def _toy_graph(tmp_path) -> str:
    graph = LadybugStore(tmp_path / "graph")
    graph.ensure_schema()
    load_toy(graph, tmp_path)
    graph.close()
    return f"ladybug:{tmp_path / 'graph'}"


def _kstp(graph: str, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "kstp.cli.main", "--graph", graph, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


@pytest.mark.usefixtures("sigint_to_python")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cli_evaluate_interrupted_stores_what_arrived_and_exits_130(tmp_path, sig):
    graph = _toy_graph(tmp_path)
    with FakeEndpoint(["ok", "ok", "stall", "stall", "stall", "stall", "stall", "stall"]) as server:
        process = _kstp(graph, "evaluate", "answers", "--dataset", "toy", "--model", "m", "--backend", "openai",
                        "--base-url", server.base_url, "--concurrency", "8")
        deadline = time.monotonic() + 60
        while server.requests < 8 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Interrupted: every completion that had arrived is stored; run the same command again to resume." in err
    store = LadybugStore(tmp_path / "graph")
    try:
        runs = store.frame("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
        stored = store.frame("run_responses", {"runId": runs.iloc[0]["runId"]})
    finally:
        store.close()
    assert len(stored) == 2 and runs.iloc[0]["status"] == "interrupted"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"llama_server" in cmd:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_killed_kstp_leaves_no_local_llama_server(tmp_path):
    graph = _toy_graph(tmp_path)
    process = _kstp(graph, "evaluate", "answers", "--dataset", "toy", "--model", "smollm2", "--backend", "local",
                    "--gen-kwargs", "max_tokens=512")
    deadline, servers = time.monotonic() + 120, []
    while not servers and time.monotonic() < deadline and process.poll() is None:
        servers = _children(process.pid)
        time.sleep(0.2)
    assert servers, "kstp evaluate never started its llama server"
    time.sleep(2)
    process.kill()  # SIGKILL: kstp runs no cleanup at all
    process.wait()
    deadline = time.monotonic() + 10
    while any(map(_alive, servers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_alive, servers))
