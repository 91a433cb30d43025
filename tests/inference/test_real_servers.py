"""What deployed models and servers send, against a local server that answers exactly so (tests/endpoint.py),
on both engines (issue 41): reasoning traces in the content, OpenAI's reasoning models' parameter rules, a
prompt over the window, a lone surrogate, the completions shape, a content filter, an account without
quota, a trickling server, a broken gzip, a content that is a number, and stop strings as typed.

Each test asserts what is stored, what the summary says, and what a healthy re-run asks. The servers' words
are the real ones, from public bug reports: vLLM #20409 and #33418 (context length), llama.cpp's
``exceed_context_size_error``, openai-python's 400s for o1 (``max_completion_tokens``, temperature) and the
429 ``insufficient_quota``.
"""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import ConfigError
from kstp.evaluators import answers
from kstp.graph.factory import open_store
from kstp.inference.backend import RejectedRequestError, Sampling
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.runs import FILTERED
from tests.conftest import load_toy
from tests.endpoint import FakeEndpoint

THINK = "<think>\nMaybe it is \\boxed{7}? No, let me add again.\n</think>\n\nThe answer is 5."


def _backend(server: FakeEndpoint, model: str = "m", **options) -> OpenAIBackend:
    return OpenAIBackend(model, base_url=server.base_url, retries=2, max_wait=0.05, timeout=10, concurrency=1,
                         **options)


def _answers(store, server, sampling=None, **options):
    return answers.evaluate(store, _backend(server, **options), "toy", sampling or Sampling(max_tokens=8))


def _row(result, question: str = "toy:q2"):
    return result.responses.set_index("questionId").loc[question]


def _stored(store, result, question: str = "toy:q2"):
    """The Response node of a question's primary sample, every property as stored."""
    nodes = store.nodes("Response", [_row(result, question)["responseId"]])
    return nodes.iloc[0].to_dict()


def _status(store) -> str:
    [run] = store.run("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
    return run["status"]


# ---------------------------------------------------------------- reasoning traces in the content

@pytest.mark.parametrize(("content", "rule", "reasoning"), [
    (THINK, "</think>", "Maybe it is \\boxed{7}? No, let me add again."),
    # the template opened the tag in the prompt (DeepSeek-R1 distills, QwQ): only the close comes back
    ("Maybe it is \\boxed{7}? No, let me add again.\n</think>\n\nThe answer is 5.", "</think>",
     "Maybe it is \\boxed{7}? No, let me add again."),
    ("<thinking>Is it \\boxed{7}?</thinking>\nThe answer is 5.", "</thinking>", "Is it \\boxed{7}?"),
    ("<|begin_of_thought|>\nIs it 7?\n<|end_of_thought|>\n\n<|begin_of_solution|>\n\\boxed{5}\n"
     "<|end_of_solution|>", "<|end_of_thought|>", "Is it 7?"),
    ("<|channel|>analysis<|message|>Is it \\boxed{7}? No.<|end|><|start|>assistant<|channel|>final<|message|>"
     "The answer is 5.<|return|>", "harmony final channel", "Is it \\boxed{7}? No."),
    ("analysisIs it \\boxed{7}? No.assistantfinalThe answer is 5.", "harmony final channel", "Is it \\boxed{7}? No."),
])
def test_an_inline_trace_is_split_off_and_the_answer_after_it_graded(toy, content, rule, reasoning):
    with FakeEndpoint(message={"content": content}) as server:
        result = _answers(toy, server)
        assert server.requests == 8
        again = _answers(toy, server)
        assert server.requests == 8  # every reply is final: a healthy re-run asks nothing
    stored = _stored(toy, result)
    assert stored["verdict"] == "correct" and stored["correct"]  # gold 5: the answer after the trace
    assert (stored["reasoning"], stored["traceRule"]) == (reasoning, rule)
    assert "\\boxed{7}" not in stored["text"] and "5" in stored["text"]
    assert result.summary()["accuracy"] == 0.125 and again.summary()["accuracy"] == 0.125


@pytest.mark.parametrize(("finish", "verdict"), [("length", "truncated (in the reasoning)"),
                                                 ("stop", "no answer found")])
def test_a_trace_that_never_closes_answers_nothing(toy, finish, verdict):
    """A number inside unfinished thinking ("Maybe it is 5? Wait,") is no answer."""
    with FakeEndpoint(message={"content": "<think>\nMaybe it is 5? Wait,", "finish_reason": finish}) as server:
        result = _answers(toy, server)
    stored = _stored(toy, result)
    assert (stored["verdict"], bool(stored["correct"]), stored["text"], stored["traceRule"]) == (
        verdict, False, "", "unclosed <think>")
    assert stored["reasoning"] == "Maybe it is 5? Wait,"
    assert result.summary()["accuracy"] == 0.0


def test_a_reply_stored_before_traces_were_split_is_graded_after_its_trace(toy):
    """A run of an older kstp stored the raw content; grading it again reads the answer after the trace."""
    from kstp.inference.backend import Completion

    verdict = answers.score_item(Completion(0, 42, text=THINK, finish_reason="stop"), "5")
    assert (verdict.correct, verdict.extracted, verdict.trace) == (True, "5", "</think>")


def test_kstp_grade_reads_after_the_trace_as_the_run_does():
    runner = CliRunner()
    result = runner.invoke(cli, ["grade", "--gold", "5", "--json", THINK])
    assert result.exit_code == 0
    assert {k: json.loads(result.stdout)[k] for k in ("extracted", "correct", "trace")} == {
        "extracted": "5", "correct": True, "trace": "</think>"}
    unclosed = json.loads(runner.invoke(cli, ["grade", "--gold", "5", "--json", "<think>So 5? Hmm."]).stdout)
    assert (unclosed["correct"], unclosed["reason"], unclosed["trace"]) == (False, "no answer found",
                                                                            "unclosed <think>")
    shown = runner.invoke(cli, ["grade", "--gold", "5", THINK]).stdout
    assert "trace:     a reasoning trace was split off; the answer is read after it (</think>)" in shown
    # the prompt opened the trace (an R1 distill's template): a reply without </think> never closed it
    opened = json.loads(runner.invoke(cli, ["grade", "--gold", "5", "--opened-think", "--json",
                                            "2 + 3 = 5. So I think that's right."]).stdout)
    assert (opened["correct"], opened["trace"]) == (False, "unclosed <think> (opened by the prompt)")
    assert json.loads(runner.invoke(cli, ["grade", "--gold", "5", "--json",
                                          "2 + 3 = 5. So I think that's right."]).stdout)["correct"]


# ---------------------------------------------------------------- OpenAI's reasoning models

_O1_MAX_TOKENS = (400, {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                             "Use 'max_completion_tokens' instead.", "type": "invalid_request_error",
                                  "param": "max_tokens", "code": "unsupported_parameter"}})


def _o_series(body):
    """OpenAI's rules for o1, o3, o4-mini and gpt-5 (the words of its 400s)."""
    if "max_tokens" in body:
        return _O1_MAX_TOKENS
    if body.get("temperature", 1) != 1:
        return (400, {"error": {"message": f"Unsupported value: 'temperature' does not support {body['temperature']} "
                                           "with this model. Only the default (1) value is supported.",
                                "type": "invalid_request_error", "param": "temperature",
                                "code": "unsupported_value"}})
    if "top_p" in body:
        return (400, {"error": {"message": "Unsupported parameter: 'top_p' is not supported with this model.",
                                "type": "invalid_request_error", "param": "top_p", "code": "unsupported_parameter"}})
    return None


def _evaluate(graph_location, tmp_path, server, model, *options):
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    return CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy",
                                    "--model", model, "--base-url", server.base_url, "--concurrency", "1", "--json",
                                    *options])


def test_an_o_series_model_gets_what_it_accepts(graph_location, tmp_path):
    with FakeEndpoint(check=_o_series) as server:
        result = _evaluate(graph_location, tmp_path, server, "o3-mini", "--gen-kwargs", "max_tokens=64")
    assert result.exit_code == 0, result.stderr
    assert server.requests == 8  # not one refused
    assert all(b["max_completion_tokens"] == 64 and not {"max_tokens", "temperature", "top_p"} & set(b)
               for b in server.bodies)
    assert "o3-mini is an OpenAI reasoning model: temperature and top_p not sent" in " ".join(result.stderr.split())
    with open_store(graph_location) as store:
        [run] = store.run("runs_of", {"evaluator": "answers", "model": "o3-mini", "dataset": "toy"})
    sampling = json.loads(run["config"])["sampling"]
    assert (sampling["temperature"], sampling["top_p"], sampling["max_tokens"]) == (None, None, 64)  # as sent


def test_a_reasoning_model_by_another_name_is_told_by_its_server(graph_location, tmp_path):
    """The server's 400 names max_completion_tokens: asked again so, and every later request; a temperature it
    refuses stops the run in one line that says how to unset it."""
    with FakeEndpoint(check=_o_series) as server:
        refused = _evaluate(graph_location, tmp_path, server, "my-reasoner", "--gen-kwargs", "max_tokens=64")
        assert refused.exit_code == 1
        assert server.bodies[1]["max_completion_tokens"] == 64 and "max_tokens" not in server.bodies[1]
        said = " ".join(refused.stderr.split())
        assert "does not support 0.6 with this model" in said
        assert "--gen-kwargs temperature=none leaves it unsent" in said
        ran = _evaluate(graph_location, tmp_path, server, "my-reasoner", "--gen-kwargs",
                        "max_tokens=64,temperature=none,top_p=none", "--new-run")
    assert ran.exit_code == 0, ran.stderr
    assert json.loads(ran.stdout)["accuracy"] == 0.125


def test_none_unsets_a_field_and_a_typed_value_is_sent(graph_location, tmp_path):
    with FakeEndpoint() as server:
        result = _evaluate(graph_location, tmp_path, server, "m", "--gen-kwargs", "top_p=none,temperature=0.3")
    assert result.exit_code == 0, result.stderr
    assert all("top_p" not in b and b["temperature"] == 0.3 for b in server.bodies)


# ---------------------------------------------------------------- a prompt over the server's window

def _window(words: int, body: dict | None = None):
    """A server whose window only q3's prompt ("subtract") passes, worded as ``body`` (vLLM's by default)."""
    def check(request):
        if not request["messages"][-1]["content"].endswith("\nsubtract"):
            return None
        return (400, body or {"object": "error", "message": "This model's maximum context length is 4096 tokens. "
                              "However, you requested 4864 tokens (4800 in the messages, 64 in the completion). "
                              "Please reduce the length of the messages or completion.", "type": "BadRequestError",
                              "param": None, "code": 400})
    return check


@pytest.mark.parametrize("body", [
    None,
    {"object": "error", "message": "The decoder prompt (length 4800) is longer than the maximum model length of 4096. "
     "Make sure that `max_model_len` is no smaller than the number of text tokens.", "type": "BadRequestError",
     "code": 400},
    {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
               "type": "exceed_context_size_error", "n_prompt_tokens": 4800, "n_ctx": 4096}},
])
def test_a_prompt_over_the_window_fails_its_question_not_the_run(toy, body):
    with FakeEndpoint(check=_window(4800, body)) as server:
        first = _answers(toy, server, Sampling(max_tokens=64))
        assert (first.generated, first.pending, _status(toy)) == (8, 0, "finished")
        stored = _stored(toy, first, "toy:q3")
        assert stored["error"] == ("overflow: the prompt is too long for the server's window (4,800 prompt tokens, "
                                   "window 4,096 tokens)")
        assert (stored["verdict"], bool(stored["correct"])) == (stored["error"], False)
        summary = first.summary()
        assert (summary["overflow"], summary["failed"], summary["questions"], summary["accuracy"]) == (1, 1, 8, 0.125)
        again = _answers(toy, server, Sampling(max_tokens=64))
        assert server.requests == 8 + 1  # only the overflow is asked again (a server with a larger window answers it)
    assert (again.generated, again.summary()["overflow"]) == (1, 1)


def test_an_overflow_answered_once_the_window_is_larger(toy):
    with FakeEndpoint(check=_window(4800)) as small:
        _answers(toy, small, Sampling(max_tokens=64))
    with FakeEndpoint() as larger:  # the server restarted with a larger --max-model-len (on another port: the run
        # is the model's, whichever server answers it)
        backend = OpenAIBackend("m", base_url=larger.base_url, retries=2, max_wait=0.05, timeout=10, concurrency=1)
        result = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=64))
        assert larger.requests == 1
    stored = _stored(toy, result, "toy:q3")
    assert pd.isna(stored["error"]) and (stored["verdict"], result.summary()["overflow"]) == ("wrong answer", 0)


def test_a_prompt_that_fits_but_not_with_max_tokens_stops_the_run_naming_the_cap(toy):
    said = ("This model's maximum context length is 4096 tokens. However, you requested 6000 tokens "
            "(3000 in the messages, 3000 in the completion).")
    with FakeEndpoint(check=_window(0, {"object": "error", "message": said, "code": 400})) as server, \
            pytest.raises(RejectedRequestError, match="a smaller --gen-kwargs max_tokens=N"):
        _answers(toy, server, Sampling(max_tokens=3000))


def test_the_cli_counts_overflows_apart(graph_location, tmp_path):
    with FakeEndpoint(check=_window(4800)) as server:
        result = _evaluate(graph_location, tmp_path, server, "m", "--gen-kwargs", "max_tokens=64")
    assert result.exit_code == 0, result.stderr
    assert (json.loads(result.stdout)["overflow"], json.loads(result.stdout)["pending"]) == (1, 0)
    assert "1 questions have a prompt longer than the server's context window" in " ".join(result.stderr.split())


# ---------------------------------------------------------------- odd replies

def test_a_lone_surrogate_is_replaced_and_its_group_kept(toy):
    """A split emoji ("\\ud83d", valid JSON) cannot be stored as UTF-8: U+FFFD, said on the row; the group's
    other replies are stored with it."""
    with FakeEndpoint(["ok", "surrogate"]) as server:
        result = _answers(toy, server)
        _answers(toy, server)
        assert server.requests == 8
    stored = _stored(toy, result)
    assert (stored["text"], stored["textRepair"], stored["verdict"]) == (
        "\\boxed{5} \ufffd", "1 lone UTF-16 surrogate replaced with U+FFFD", "correct")
    assert (result.generated, result.pending) == (8, 0)


def test_a_chat_endpoint_answering_in_the_completions_shape_is_read(toy):
    with FakeEndpoint(["completion-text"] * 8) as server:
        result = _answers(toy, server)
    assert (_stored(toy, result)["text"], result.summary()["accuracy"], result.summary()["failed"]) == (
        "So \\boxed{5}", 0.125, 0)


@pytest.mark.parametrize("fault", ["content-filter", "content-filter-partial"])
def test_a_content_filter_is_its_own_failure(toy, fault):
    with FakeEndpoint([fault] * 8) as server:
        result = _answers(toy, server)
        _answers(toy, server)
        assert server.requests == 8  # the provider's verdict is final: not asked again
    stored = _stored(toy, result)
    assert (stored["error"], stored["verdict"], bool(stored["correct"])) == (FILTERED, FILTERED, False)
    summary = result.summary()
    assert (summary["filtered"], summary["failed"], summary["noAnswer"], summary["accuracy"]) == (8, 8, 0, 0.0)


def test_a_content_that_is_a_number_is_a_server_failure(toy):
    with FakeEndpoint(["number-content", "number-content"]) as server:
        first = _answers(toy, server)
        assert first.pending == 1 and "a message content of type int" in first.last_failure
        again = _answers(toy, server)
        assert server.requests == 2 + 7 + 1
    assert again.summary()["accuracy"] == 0.125


def test_no_quota_stops_at_once_quoting_the_provider(toy):
    quota = (429, {"error": {"message": "You have no credits remaining. Please add credits to continue.",
                             "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}})
    with FakeEndpoint([quota]) as server, pytest.raises(RejectedRequestError) as refused:
        _answers(toy, server)
    assert server.requests == 1  # not retried as a rate limit
    assert "the account has no quota left (HTTP 429: 'You have no credits remaining." in str(refused.value)


def test_the_timeout_bounds_the_whole_request(toy):
    """Each byte comes quickly, the whole reply in about 3 s: with a 1 s timeout it is a timeout, retried,
    then pending."""
    with FakeEndpoint(["trickle"] * 2, slow_s=3.0) as server:
        start = time.monotonic()
        result = answers.evaluate(toy, OpenAIBackend("m", base_url=server.base_url, retries=2, max_wait=0.05,
                                                     timeout=1, concurrency=1), "toy", Sampling(max_tokens=8))
        took = time.monotonic() - start
    assert result.pending == 1 and result.last_failure == "transport: no whole reply within the timeout (1 s)"
    assert took < 2 * 1 + 3  # two attempts of 1 s each, and the seven others at once


def test_a_broken_gzip_is_named(toy):
    with FakeEndpoint(["bad-gzip"] * 2) as server:
        result = _answers(toy, server)
    assert result.pending == 1
    assert "the reply's body could not be decoded" in result.last_failure


# ---------------------------------------------------------------- stop strings as typed

@pytest.mark.parametrize(("typed", "sent"), [
    ("stop=\n\n", ["\n\n"]),
    ("stop=1e3", ["1e3"]),
    ("stop= Q:|\nA:", [" Q:", "\nA:"]),
    ('{"stop": ["\\n\\n", "Question:"], "max_tokens": 8}', ["\n\n", "Question:"]),
])
def test_stop_strings_are_sent_and_recorded_as_typed(graph_location, tmp_path, typed, sent):
    with FakeEndpoint() as server:
        result = _evaluate(graph_location, tmp_path, server, "m", "--gen-kwargs", typed)
    assert result.exit_code == 0, result.stderr
    assert all(b["stop"] == sent for b in server.bodies)
    with open_store(graph_location) as store:
        [run] = store.run("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
    assert json.loads(run["config"])["sampling"]["stop"] == sent


@pytest.mark.parametrize("typed", ["stop=", "stop=a|", '{"stop": [""]}', '{"stop": 7}'])
def test_an_empty_or_odd_stop_is_refused_in_one_line(typed):
    result = CliRunner().invoke(cli, ["evaluate", "answers", "--dataset", "toy", "--model", "m", "--gen-kwargs",
                                      typed])
    assert result.exit_code == 2
    assert "--gen-kwargs" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- a grade stored by an older grader

def test_a_grade_stored_by_another_grader_is_graded_again_by_the_next_run(toy):
    """Before kstp split traces, the box inside the trace was stored as q2's answer and kept: the next run,
    healthy and with the fixed grader, grades the stored replies again and asks nothing."""
    with FakeEndpoint(message={"content": THINK}) as server:
        first = _answers(toy, server)
        ids = first.responses["responseId"].tolist()
        toy.write_nodes("Response", pd.DataFrame({"id": ids, "text": THINK, "reasoning": None, "extracted": "7",
                                                  "correct": False, "verdict": "wrong answer",
                                                  "graderVersion": None}))  # as an older kstp left them
        again = _answers(toy, server)
        assert server.requests == 8  # nothing asked again
    stored = _stored(toy, again)
    assert (stored["verdict"], stored["extracted"], stored["traceRule"]) == ("correct", "5", "</think>")
    assert again.summary()["accuracy"] == 0.125
    from kstp.inference.grading import GRADER_VERSION
    assert set(toy.nodes("Response", ids)["graderVersion"]) == {GRADER_VERSION}


# ---------------------------------------------------------------- a server restarted mid-run

def test_a_server_away_mid_run_is_waited_for_and_nothing_is_lost(toy):
    """Issue 43: a server restarted mid-run (here away for 3 s after two answers) made kstp give up after 8
    failures in a row with the rest pending. It now rides the outage out, saying so on the progress line,
    and every question is answered in the same run."""
    notes = []
    with FakeEndpoint(away_after=2, away_s=3.0) as server:
        backend = OpenAIBackend("m", base_url=server.base_url, retries=2, max_wait=0.05, timeout=10, concurrency=1,
                                outage=30)
        result = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8),
                                  progress=lambda done, total, note: notes.append(note))
    assert (result.generated, result.pending, _status(toy)) == (8, 0, "finished")
    assert any("server away for" in note and "waiting up to 30 s" in note for note in notes)
    assert backend.note is None  # back: the line says nothing more


def test_an_outage_longer_than_the_limit_stops_as_before(toy):
    with FakeEndpoint(away_after=2, away_s=60.0) as server:
        backend = OpenAIBackend("m", base_url=server.base_url, retries=2, max_wait=0.05, timeout=10, concurrency=1,
                                outage=1)
        start = time.monotonic()
        result = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8))
        took = time.monotonic() - start
    assert (result.generated, result.pending, _status(toy)) == (2, 6, "incomplete")
    assert result.last_failure.startswith("transport: HTTP 503") and took < 10


def test_a_server_never_reached_is_not_waited_for(toy):
    """A wrong port from the start is a mistake to report, not an outage to sit out."""
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", retries=1, max_wait=0.05, concurrency=1)
    start = time.monotonic()
    result = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8))
    assert result.pending == 8 and time.monotonic() - start < 10


def test_outage_is_checked():
    with pytest.raises(ConfigError, match="outage must be a number of seconds >= 0"):
        OpenAIBackend("m", outage=-1)


def test_an_unknown_dataset_is_said_before_any_model_starts(graph_location, tmp_path):
    """Issue 43: the backend started (a local server: seconds) before the configuration was checked. The
    dataset's error comes first: the local backend's own refusal of threads=0 is never reached."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy,nope",
                                      "--model", "smollm2", "--backend", "local", "--model-args", "threads=0"])
    assert result.exit_code == 1
    assert "unknown dataset 'nope'; datasets in the graph: toy" in result.stderr and "threads" not in result.stderr


def test_the_local_model_run_records_the_window_it_applied(graph_location, tmp_path):
    """Issue 43: the local backend recorded --gen-kwargs context=10 (max_tokens 10) while its server's own
    window bounded a 111-token reply. Now the run's window is applied to each request and recorded as given;
    the server's window (llama.cpp's, rounded up to 256) is the endpoint's; a --model-args context smaller
    than the run's window is refused before any server starts."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    base = ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy", "--model", "smollm2", "--backend",
            "local", "--limit", "2"]
    refused = CliRunner().invoke(cli, [*base, "--model-args", "context=2048"])
    assert refused.exit_code == 2
    assert ("--model-args: context=2048 is smaller than the run's context window of 16,384 tokens (--gen-kwargs "
            "context, or the command's default)") in " ".join(refused.stderr.split())
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, [*base, "--gen-kwargs", "context=120,temperature=0", "--output-path", out,
                                      "--log-samples", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    stem = summary["runId"].replace(":", "_")
    config = json.loads((out / f"{stem}.json").read_text())["config"]
    assert (config["sampling"]["context"], config["sampling"]["max_tokens"], config["endpoint"]["context"]) == (
        120, 120, 256)
    rows = [json.loads(line) for line in (out / f"{stem}.samples.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["tokensIn"] + r["tokensOut"] <= 120 for r in rows)
    assert all(r["tokensIn"] + r["tokensOut"] == 120 for r in rows if r["finishReason"] == "length")
    # one slot, no prompt cache: the run and its log say sample i's text is promised at any window
    assert summary["reproducible"]["sameText"] is True and "not promised" not in result.stderr
    assert json.loads((out / f"{stem}.json").read_text())["reproducible"] == summary["reproducible"]


def test_a_run_on_a_server_says_the_same_text_is_not_promised(graph_location, tmp_path):
    """Issue 43: where a backend cannot promise sample i's text at another window, the run says so: in its
    summary and log (``reproducible``) and in a line."""
    with FakeEndpoint() as server:
        result = _evaluate(graph_location, tmp_path, server, "m", "--gen-kwargs", "max_tokens=8", "--output-path",
                           tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["reproducible"]["sameText"] is False
    assert summary["reproducible"]["note"].startswith("the server decides: each request carries its seed")
    said = " ".join(result.stderr.split())
    assert "not promised: the same seeds giving the same texts at another window (the server decides" in said
    log = json.loads((tmp_path / "out" / (summary["runId"].replace(":", "_") + ".json")).read_text())
    assert log["reproducible"] == summary["reproducible"]


def test_top_k_min_p_and_repetition_penalty_are_sent_and_recorded_only_when_given(graph_location, tmp_path):
    """Issue 43: offered through --gen-kwargs on every backend that has them (vLLM's and llama.cpp's servers
    take them in the body), recorded as sent; unset, nothing is sent and the cache keys are as before."""
    with FakeEndpoint() as server:
        given = _evaluate(graph_location, tmp_path, server, "m", "--gen-kwargs",
                          "top_k=20,min_p=0.05,repetition_penalty=1.1,max_tokens=8")
        assert given.exit_code == 0, given.stderr
        assert all((b["top_k"], b["min_p"], b["repetition_penalty"]) == (20, 0.05, 1.1) for b in server.bodies)
        server.bodies.clear()
        plain = _evaluate(graph_location, tmp_path, server, "m", "--gen-kwargs", "max_tokens=8", "--new-run")
        assert plain.exit_code == 0, plain.stderr
        assert not any({"top_k", "min_p", "repetition_penalty"} & set(b) for b in server.bodies)
    with open_store(graph_location) as store:
        runs = store.run("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
    sampled = [json.loads(r["config"])["sampling"] for r in runs]
    assert sorted(s.get("top_k") is not None for s in sampled) == [False, True]
