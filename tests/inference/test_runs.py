"""Run identity, retries and interruptions, against a real HTTP server on 127.0.0.1.

The server (tests/endpoint.py) is a few lines of the standard library that answer as an
OpenAI-compatible endpoint would, or fail as real ones do (429, 503, 408, 409, 425, a reset connection,
a reply that never comes); the code under test is the real client, runs and CLI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.evaluators import answers
from kstp.graph.ladybug import LadybugStore
from kstp.graph.structures import answerable_questions
from kstp.inference.backend import RejectedRequestError, Sampling, cache_key, endpoint_of, prompt_hash
from kstp.inference.backends.openai_compat import DOWN_AFTER, OpenAIBackend
from kstp.inference.runs import (
    EMPTY_REPLY,
    INTERVAL,
    ConfigChangedError,
    Generation,
    Grading,
    RunSpec,
    generate_and_store,
    open_run,
    write_responses,
)
from tests.conftest import load_toy
from tests.endpoint import FakeEndpoint
from tests.inference import graders

CHAT = [{"role": "user", "content": "2 + 3?"}]
ROOT = Path(__file__).resolve().parents[2]


def _backend(url: str, retries: int = 7, concurrency: int = 1) -> OpenAIBackend:
    return OpenAIBackend("m", base_url=url, retries=retries, max_wait=0.05, timeout=10, concurrency=concurrency)


@pytest.mark.parametrize("failure", [429, 503, 500, 408, 409, 425, "reset"])
def test_openai_backend_retries_transport_failures(failure):
    with FakeEndpoint([failure, failure]) as server:
        [[completion]] = _backend(server.base_url).generate([CHAT], Sampling(max_tokens=8))
    assert (completion.text, completion.error, server.requests) == ("\\boxed{5}", None, 3)


def test_openai_backend_persistent_failure_is_transport():
    with FakeEndpoint([503] * 3) as server:
        [[completion]] = _backend(server.base_url, retries=3).generate([CHAT], Sampling(max_tokens=8))
    assert completion.text is None and completion.error.startswith("transport: HTTP 503")


@pytest.mark.parametrize(("status", "fix"), [(400, "max_tokens must fit"), (401, "OPENAI_API_KEY"),
                                             (403, "may use this model"), (404, "--model"), (422, "--gen-kwargs")])
def test_openai_backend_client_error_is_rejected_at_once_with_what_arrived(status, fix):
    with FakeEndpoint(["ok", status]) as server:
        with pytest.raises(RejectedRequestError) as caught:
            _backend(server.base_url).generate([CHAT, CHAT, CHAT], Sampling(max_tokens=8))
        assert server.requests == 2  # not retried, and the third prompt is never asked
    assert f"rejected the request for model 'm' with HTTP {status}: 'status {status}'; " in str(caught.value)
    assert fix in str(caught.value) and "\n" not in str(caught.value)
    assert [[c.text for c in row] for row in caught.value.partial] == [["\\boxed{5}"], [], []]


def _spec(backend, questions="all", template="t1", **options) -> RunSpec:
    return RunSpec.of(backend, "answers", "1.0", "toy", Sampling(max_tokens=8), template,
                      {"questions": questions, **options})


def _reply(store, run_id: str) -> None:
    """Store one Response of the model in ``run_id``."""
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model", "localId": "m"}]))
    write_responses(store, run_id, "model:m", pd.DataFrame([{"id": f"reply in {run_id}", "text": "5"}]))


def _opened(store, spec) -> str:
    """Open the run of ``spec`` and store one Response in it (a run without any is no lock)."""
    run_id, _ = open_run(store, spec)
    _reply(store, run_id)
    return run_id


def test_run_identity_includes_model_args_and_template_not_the_server(store):
    here, there = _backend("http://127.0.0.1:8000/v1"), _backend("http://10.0.0.2:8000/v1")
    assert endpoint_of(here) == {"backend": "openai", "baseUrls": ["http://127.0.0.1:8000/v1"]}
    assert _spec(here).config_hash() == _spec(there).config_hash()  # the model's run, wherever it is served
    assert _spec(here).config_hash() != _spec(here, template="t2").config_hash()
    h, sampling = prompt_hash(CHAT), Sampling()
    base = cache_key("m", h, sampling, 0, endpoint_of(here), "t1")
    assert base == cache_key("m", h, sampling, 0, endpoint_of(there), "t1")
    assert base != cache_key("m", h, sampling, 0, endpoint_of(here), "t2")
    assert base != cache_key("m", h, sampling, 1, endpoint_of(here), "t1")
    assert base != cache_key("m", h, Sampling(seed=7), 0, endpoint_of(here), "t1")
    first = _opened(store, _spec(here))
    assert open_run(store, _spec(there)) == (first, True)


def test_open_run_a_larger_limit_extends_the_run_and_a_smaller_one_resumes_it(store):
    backend = _backend("http://127.0.0.1:8000/v1")
    first = _opened(store, _spec(backend, ["q1", "q2"]))
    assert open_run(store, _spec(backend, ["q1", "q2", "q3"])) == (first, True)
    assert open_run(store, _spec(backend, ["q1"])) == (first, True)  # --limit 5 after --limit 20
    [run] = store.run("run_by_id", {"runId": first})
    assert json.loads(run["config"])["options"]["questions"] == ["q1", "q2", "q3"]  # what the run has covered
    assert open_run(store, _spec(backend, "all")) == (first, True)
    assert open_run(store, _spec(backend, ["q2"])) == (first, True)
    [run] = store.run("run_by_id", {"runId": first})
    assert json.loads(run["config"])["options"]["questions"] == "all"
    with pytest.raises(ConfigChangedError, match="promptTemplateHash: 't1' -> 't2'"):
        open_run(store, _spec(backend, ["q1"], template="t2"))


def test_config_change_message_lists_a_few_ids_then_a_count(store):
    backend = _backend("http://127.0.0.1:8000/v1")
    _opened(store, _spec(backend, shots=[f"q{i}" for i in range(500)]))
    with pytest.raises(ConfigChangedError) as caught:
        open_run(store, _spec(backend, shots=[f"r{i}" for i in range(400)]))
    assert "options.shots: [q0, q1, q2 and 497 more] (500) -> [r0, r1, r2 and 397 more] (400)" in str(caught.value)
    assert len(str(caught.value)) < 300


def test_a_run_without_responses_does_not_lock_out_a_changed_configuration(store):
    backend = _backend("http://127.0.0.1:8000/v1")
    stopped, _ = open_run(store, _spec(backend, template="t1"))  # stopped before any reply
    fixed, resumed = open_run(store, _spec(backend, template="t2"))
    assert (fixed != stopped, resumed) == (True, False)
    _reply(store, fixed)
    with pytest.raises(ConfigChangedError, match="promptTemplateHash: 't2' -> 't3'"):
        open_run(store, _spec(backend, template="t3"))


def _generate(store, backend, questions, progress=None, grading=None, **options):
    """One generate_and_store of ``questions`` in a new run, graded by :func:`tests.inference.graders.same_text`."""
    spec = _spec(backend)
    run_id, _ = open_run(store, spec, new_run=True)
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model", "localId": "m"}]))
    prompts = {f"toy:{q}": [{"role": "user", "content": q}] for q in questions}
    # past q8, questions of their own, in the run's dataset: a run reads its replies to its dataset's questions
    store.write_nodes("Question", pd.DataFrame({"id": list(prompts), "dataset": "toy"}))
    grading = grading or Grading(graders.same_text, {p: ("\\boxed{5}",) for p in prompts})
    result = generate_and_store(store, backend, run_id, "model:m", prompts, Sampling(max_tokens=8), grading,
                                progress=progress, **options)
    return run_id, result, store.frame("run_responses", {"runId": run_id})


def test_transport_failures_are_not_stored_and_are_asked_again(toy):
    with FakeEndpoint([503] * 2) as server:  # the first question fails twice: its retries are spent
        backend = _backend(server.base_url, retries=2)
        run_id, result, stored = _generate(toy, backend, ["q1", "q2", "q3"])
        assert result == Generation(3, 2, 1, "transport: HTTP 503 status 503")
        assert result.status == "incomplete"
        assert len(stored) == 2 and stored["error"].isna().all() and (stored["verdict"] == "correct").all()
        run_id, result, stored = _generate(toy, backend, ["q1", "q2", "q3"])
    assert result == Generation(3, 1) and result.status == "finished"  # only the failed one is asked again
    assert len(stored) == 3


def test_a_server_that_looks_down_is_asked_no_further(toy):
    questions = [f"q{i}" for i in range(1, 41)]
    with FakeEndpoint([503] * 1000) as server:  # down: every request fails
        run_id, result, stored = _generate(toy, _backend(server.base_url, retries=2, concurrency=8), questions)
        # DOWN_AFTER requests in a row failed: no further one starts; those in flight then finish
        assert server.requests <= 2 * (8 + DOWN_AFTER)
    assert (result.requested, result.stored, result.pending) == (40, 0, 40)
    assert stored.empty


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
        process = _asking_all(graph, server)
        time.sleep(0.5)
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Interrupted: every completion that had arrived is stored; run the same command again to resume." in err
    run, stored = _stored(tmp_path)
    assert len(stored) == 2 and run["status"] == "interrupted"


@pytest.mark.usefixtures("sigint_to_python")
def test_ctrl_c_writes_the_log_of_what_is_stored(tmp_path):
    """Issue 43: Ctrl-C exited 130 with no log under --output-path; Inspect writes one. Two answers arrived."""
    from kstp.inference.runlog import read_run_log

    graph = _toy_graph(tmp_path)
    with FakeEndpoint(["ok", "ok", "stall", "stall", "stall", "stall", "stall", "stall"]) as server:
        process = _asking_all(graph, server, "--output-path", str(tmp_path / "out"), "--log-samples")
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "wrote the logs of what is stored to" in " ".join(err.split())
    [path] = (tmp_path / "out").glob("*.json")
    log = read_run_log(path)
    assert (log.summary["status"], log.summary["questions"], log.config["status"]) == ("interrupted", 2,
                                                                                       "interrupted")
    assert len(log.samples) == 2 and log.samples["extracted"].tolist() == ["5", "5"]


def _asking_all(graph: str, server: FakeEndpoint, *more: str) -> subprocess.Popen:
    """``kstp evaluate answers`` on the toy's 8 questions with all 8 in flight, once the server has them all."""
    process = _kstp(graph, "evaluate", "answers", "--dataset", "toy", "--model", "m", "--backend", "openai",
                    "--base-url", server.base_url, "--concurrency", "8", *more)
    deadline = time.monotonic() + 60
    while server.requests < 8 and time.monotonic() < deadline:
        time.sleep(0.1)
    return process


def _stored(tmp_path) -> tuple[pd.Series, pd.DataFrame]:
    """The toy answers run in ``tmp_path/graph`` and its Responses."""
    store = LadybugStore(tmp_path / "graph")
    try:
        run = store.frame("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"}).iloc[0]
        return run, store.frame("run_responses", {"runId": run["runId"]})
    finally:
        store.close()


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


# ---- what the answers evaluation and its command make of failed requests -----------------
def _answers(store, server, new_run=False, **backend):
    return answers.evaluate(store, _backend(server.base_url, **backend), "toy", Sampling(max_tokens=8),
                            new_run=new_run)


@pytest.mark.parametrize("status", [401, 400])
def test_rejected_request_stores_nothing_and_the_fixed_command_asks_it(toy, status):
    with FakeEndpoint([status]) as server:
        with pytest.raises(RejectedRequestError, match=f"HTTP {status}: 'status {status}'"):
            _answers(toy, server)
        assert server.requests == 1  # the run stops at the first rejection
        [run] = toy.run("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
        assert run["status"] == "failed"
        assert toy.frame("run_responses", {"runId": run["runId"]}).empty
        assert "model:m" not in set(toy.frame("answers", {"dataset": "toy"})["learnerId"])  # no learner that got 0
        fixed = _answers(toy, server)  # the server takes the request now
    assert (fixed.run_id, fixed.resumed, fixed.generated, fixed.pending) == (run["runId"], True, 8, 0)
    assert fixed.summary()["accuracy"] == 0.125  # \boxed{5} is right for q2 only


def test_a_rejected_max_tokens_is_fixed_without_new_run(toy):
    with FakeEndpoint([400]) as server:  # "max_tokens is too large": no reply at all
        backend = _backend(server.base_url)
        with pytest.raises(RejectedRequestError, match="max_tokens must fit the model's context"):
            answers.evaluate(toy, backend, "toy", Sampling(max_tokens=100_000))
        fixed = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8))
    assert (fixed.resumed, fixed.generated, fixed.summary()["questions"]) == (False, 8, 8)


def test_a_refusal_the_model_writes_is_a_counted_answer(toy):
    with FakeEndpoint(answer="I'm sorry, but I can't help with that.") as server:
        summary = _answers(toy, server).summary()
    assert (summary["questions"], summary["accuracy"], summary["failed"], summary["noAnswer"]) == (8, 0.0, 0, 8)


def test_exhausted_retries_leave_the_answers_run_incomplete(toy):
    with FakeEndpoint([503, 503]) as server:  # q1's two attempts
        result = _answers(toy, server, retries=2)
        [run] = toy.run("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
        assert (result.pending, result.generated, run["status"]) == (1, 7, "incomplete")
        assert result.summary()["questions"] == 7 and result.last_failure == "transport: HTTP 503 status 503"
        again = _answers(toy, server, retries=2)
    assert (again.pending, again.generated, again.summary()["questions"]) == (0, 1, 8)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_model_with_empty_content_is_graded_on_its_reasoning(toy, field):
    thinking = "2 + 3 = 5, so the answer is \\boxed{5}."
    with FakeEndpoint(message={"content": None, field: thinking}) as server:
        result = _answers(toy, server)
    q2 = result.responses.set_index("questionId").loc["toy:q2"]
    assert (q2["text"], q2["reasoning"], bool(q2["correct"])) == (None, thinking, True)
    assert q2["verdict"] == "correct (graded on the reasoning: the content was empty)"
    assert (result.summary()["accuracy"], result.summary()["failed"]) == (0.125, 0)


def test_an_empty_reply_is_a_failure_the_summary_counts(toy):
    with FakeEndpoint(message={"content": ""}) as server:
        summary = _answers(toy, server).summary()
    assert (summary["accuracy"], summary["failed"], summary["pending"]) == (0.0, 8, 0)
    with FakeEndpoint(message={"content": None}) as server:  # another port: another endpoint
        result = _answers(toy, server, new_run=True)
    assert set(result.responses["verdict"]) == {EMPTY_REPLY}


def test_a_smaller_limit_resumes_and_reports_its_questions(toy):
    with FakeEndpoint() as server:
        backend = _backend(server.base_url)
        first = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8), limit=3)
        wider = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8), limit=6)
        again = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8), limit=3)
        assert server.requests == 6
    assert (wider.run_id, wider.generated, wider.summary()["questions"]) == (first.run_id, 3, 6)
    assert (again.run_id, again.resumed, again.generated) == (first.run_id, True, 0)
    assert again.responses["questionId"].tolist() == ["toy:q1", "toy:q2", "toy:q3"]
    assert again.summary()["accuracy"] == pytest.approx(1 / 3)


def _cli(graph: str, *args, quiet: bool = False):
    return CliRunner().invoke(cli, [*(["--quiet"] if quiet else []), "--graph", graph, "evaluate", "answers",
                                    "--dataset", "toy", "--model", "m", "--model-args", "retries=2,max_wait=0.05",
                                    *args])


def test_cli_unreachable_server_exits_1_and_says_the_run_is_incomplete(tmp_path):
    result = _cli(_toy_graph(tmp_path), "--base-url", "http://127.0.0.1:9/v1", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["pending"] == 8
    # the SDK's bare "Connection error." and what it was underneath
    assert "8 requests got no reply after the retries (transport: APIConnectionError: Connection error. " \
           "(ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 9))); the run is incomplete" \
           in " ".join(result.stderr.split())  # a console message wraps


def test_cli_rejected_request_is_one_line_and_exit_1(tmp_path):
    graph = _toy_graph(tmp_path)
    with FakeEndpoint([401]) as server:
        result = _cli(graph, "--base-url", server.base_url, "--json", quiet=True)  # no progress lines
        assert (result.exit_code, result.stdout) == (1, "")
        assert result.stderr.strip().startswith(f"Error: {server.base_url} rejected the request for model 'm' with "
                                        "HTTP 401: 'status 401'; check the API key (OPENAI_API_KEY).")
        assert "\n" not in result.stderr.strip()  # one line
        fixed = _cli(graph, "--base-url", server.base_url, "--json")
    assert fixed.exit_code == 0 and json.loads(fixed.stdout)["questions"] == 8


def test_cli_limit_down_after_up_resumes(tmp_path):
    graph = _toy_graph(tmp_path)
    with FakeEndpoint() as server:
        runs = [_cli(graph, "--base-url", server.base_url, "--limit", str(n), "--json") for n in (5, 8, 5)]
    assert [r.exit_code for r in runs] == [0, 0, 0], runs[-1].stderr
    assert [(s["questions"], s["generatedNow"], s["resumed"]) for s in (json.loads(r.stdout) for r in runs)] == \
        [(5, 5, False), (8, 3, True), (5, 0, True)]


# ---- the run engine: a streaming window, stores in groups, grading in its own stage -------
def test_the_window_is_refilled_as_each_request_finishes(toy):
    """A slow reply holds one place of the window, not the batch it came with."""
    seen = []
    with FakeEndpoint(["slow"], slow_s=3.0, delay_s=0.3) as server:  # q1 takes 3 s, the others 0.3 s
        start = time.monotonic()
        _, result, stored = _generate(toy, _backend(server.base_url, concurrency=4), [f"q{i}" for i in range(1, 13)],
                                      progress=lambda done, total, note: seen.append((time.monotonic() - start, done)))
        assert server.most_at_once == 4  # the window, never more
    assert (result.stored, len(stored)) == (12, 12)
    # the other eleven arrived while q1 was still on its way: no batch waited for it
    assert any(done == 11 and at < 2.5 for at, done in seen), seen


def test_the_progress_note_says_the_window_and_the_rates(toy):
    notes = []
    with FakeEndpoint() as server:
        _, result, _ = _generate(toy, _backend(server.base_url, concurrency=3), ["q1", "q2", "q3", "q4"],
                                 progress=lambda done, total, note: notes.append(note))
    assert notes and all(n.startswith("window 3, ") and "completions/s" in n and "tokens/s" in n for n in notes)
    rates = result.rates()
    assert (rates["concurrency"], result.tokens_out) == (3, 8)  # the fake counts 2 tokens a reply
    assert rates["completionsPerS"] > 0 and rates["tokensPerS"] == pytest.approx(2 * rates["completionsPerS"], 1e-3)


@pytest.mark.parametrize("bad", ["sleep", "tower"])
def test_a_reply_the_grader_cannot_finish_is_recorded_and_the_run_goes_on(toy, bad):
    """A grade stuck in Python (a sleep) or in C (a 10**(10**12) power) is stopped after the limit."""
    with FakeEndpoint([{"content": "\\boxed{5}"}, {"content": bad}, {"content": "\\boxed{7}"}]) as server:
        grading = Grading(graders.stall_on, {f"toy:q{i}": ("\\boxed{5}", bad) for i in (1, 2, 3)})
        start = time.monotonic()
        _, result, stored = _generate(toy, _backend(server.base_url), ["q1", "q2", "q3"], grading=grading,
                                      grade_timeout=1.0)
    assert time.monotonic() - start < 15
    verdicts = dict(zip(stored["questionId"], stored["verdict"], strict=True))
    assert verdicts == {"toy:q1": "correct", "toy:q2": "not gradable: the grader did not finish within 1 s",
                        "toy:q3": "wrong answer"}
    assert result.status == "finished" and stored["correct"].tolist() == [True, False, False]


def test_a_grading_function_that_raises_is_recorded_with_its_error(toy):
    with FakeEndpoint([{"content": "\\boxed{5}"}, {"content": "five"}]) as server:
        grading = Grading(graders.fails_on, {f"toy:q{i}": ("\\boxed{5}",) for i in (1, 2)})
        _, _, stored = _generate(toy, _backend(server.base_url), ["q1", "q2"], grading=grading)
    assert stored["verdict"].tolist() == ["correct",
                                          "not gradable: the grader failed (ValueError: cannot read 'five')"]


def test_stored_replies_without_a_grade_are_graded_before_anything_is_asked(toy):
    """A run killed between storing and grading left replies without a verdict: the next run grades them
    (they counted as wrong answers and the run as finished before), then asks only what is missing."""
    with FakeEndpoint() as server:
        backend = _backend(server.base_url)
        spec = RunSpec.of(backend, answers.NAME, answers.VERSION, "toy", Sampling(max_tokens=8),
                          answers.template_hash(), {"questions": "all"})
        run_id, _ = open_run(toy, spec)
        toy.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model", "localId": "m"}]))
        questions = answerable_questions(toy, "toy", None)
        texts = dict(zip(questions["questionId"], questions["text"], strict=True))
        keys = {q: cache_key("m", prompt_hash(answers.build_prompt(texts[q])), Sampling(max_tokens=8), 0,
                             endpoint_of(backend), answers.template_hash()) for q in ("toy:q2", "toy:q3")}
        write_responses(toy, run_id, "model:m", pd.DataFrame([
            {"id": keys["toy:q2"], "question": "toy:q2", "sampleIndex": 0, "seed": 42, "text": "So \\boxed{5}.",
             "finishReason": "stop"},
            {"id": keys["toy:q3"], "question": "toy:q3", "sampleIndex": 0, "seed": 42, "text": "\\boxed{1}",
             "finishReason": "stop"}]))
        result = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8))
        assert server.requests == 6  # the two stored replies are not asked again
    graded = result.responses.set_index("questionId")
    assert graded.loc[["toy:q2", "toy:q3"], "verdict"].tolist() == ["correct", "correct"]
    assert result.summary()["accuracy"] == 0.25  # q2 and q3 right (the stored replies), the six asked wrong
    run = toy.nodes("Run", [result.run_id]).iloc[0]
    assert (run["status"], run["accuracy"], run["concurrency"]) == ("finished", 0.25, 1)


def test_a_429_with_retry_after_is_waited_out(toy):
    """The server refuses every request for a second after a 429 and says so (Retry-After: 1); a client that
    retried after 0.05 s would spend its attempts inside that second and leave the request pending."""
    with FakeEndpoint([429], rate_limit_s=1.0) as server:
        _, result, stored = _generate(toy, _backend(server.base_url, retries=3), ["q1", "q2"])
        assert server.requests == 3  # q1 refused once, then q1 and q2 after the second
    assert (result.stored, result.pending, len(stored)) == (2, 0, 2)


def test_the_window_halves_on_429_at_most_once_a_second_and_grows_back():
    import asyncio

    from kstp.inference.backends.endpoints import Window as _Window

    async def play() -> list[int]:
        window, limits = _Window(16), []
        window.refused()
        window.refused()  # the same second: one cut
        limits.append(window.limit)
        window._last_cut -= 1.0
        window.refused()
        limits.append(window.limit)
        for _ in range(3):
            await window.served()
        limits.append(window.limit)
        for _ in range(20):
            await window.served()
        limits.append(window.limit)
        return limits

    assert asyncio.run(play()) == [8, 4, 7, 16]


def test_default_windows_fit_the_endpoint():
    from kstp.inference.backends.openai_compat import LOCAL_WINDOW, REMOTE_WINDOW

    assert (LOCAL_WINDOW, REMOTE_WINDOW) == (64, 32)
    assert OpenAIBackend("m", base_url="http://127.0.0.1:8000/v1").window == 64
    assert OpenAIBackend("m", base_url="http://localhost:8000/v1").window == 64
    assert OpenAIBackend("m", base_url="https://api.example.com/v1").window == 32
    assert OpenAIBackend("m", base_url="https://api.example.com/v1", concurrency=5).window == 5


def test_a_kill_loses_at_most_the_last_group(tmp_path):
    """kill -9 after the store interval: every reply that had arrived is stored; the next run grades those whose
    grades the kill caught unwritten (grading runs behind storing) and asks only the rest."""
    graph = _toy_graph(tmp_path)
    with FakeEndpoint(["ok", "ok", "ok", "stall", "stall", "stall", "stall", "stall"]) as server:
        process = _asking_all(graph, server)
        time.sleep(INTERVAL + 1.5)  # the three answers are stored within INTERVAL s of their arrival
        process.kill()
        process.wait()
        _, stored = _stored(tmp_path)
        assert len(stored) == 3 and stored["text"].notna().all()
        again = _cli(graph, "--base-url", server.base_url, "--json")  # the server answers from now on
        assert server.requests == 8 + 5
    assert again.exit_code == 0 and json.loads(again.stdout)["questions"] == 8
    _, stored = _stored(tmp_path)
    assert len(stored) == 8 and stored["verdict"].notna().all()


def test_a_seed_that_would_not_reproduce_is_refused(tmp_path):
    from kstp.errors import ConfigError

    with pytest.raises(ConfigError, match="llama.cpp reads 4294967295 as \"a random seed\""):
        Sampling(seed=4294967295)
    with pytest.raises(ConfigError, match="seed 4294967294 \\+ sample 1 = 4294967295"):
        Sampling(n=2, seed=4294967294)
    assert Sampling(n=2, seed=4294967293).for_sample(1).seed == 4294967294
    result = _cli(_toy_graph(tmp_path), "--base-url", "http://127.0.0.1:9/v1", "--seed", "4294967295")
    assert result.exit_code == 2 and "4294967295 is not in the range 0<=x<=4294967294" in result.stderr


def test_a_reply_shared_by_two_questions_counts_for_both_in_the_truncation(store, tmp_path):
    """Issue 43: two questions with the same text share one stored reply (one cache key), so a 40-sample run
    said "9 of 39 replies" were cut; the figures count per question: here k1 (cut) answers q1 and q2."""
    from kstp.inference.runs import run_truncation

    load_toy(store, tmp_path)
    run_id, _ = open_run(store, RunSpec("answers", "1.0", "m", "openai", "toy", Sampling(n=1), "t" * 64))
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model"}]))
    write_responses(store, run_id, "model:m", pd.DataFrame({"id": ["k1", "k1", "k2"],
                                                            "question": ["toy:q1", "toy:q2", "toy:q3"],
                                                            "finishReason": ["length", "length", "stop"]}))
    assert run_truncation(store, run_id, 64) == {"replies": 3, "truncated": 2, "share": 2 / 3, "maxTokens": 64}
