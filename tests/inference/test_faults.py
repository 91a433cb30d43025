"""A server's failure is never the model's answer: each fault against a local server that misbehaves in
exactly that way (tests/endpoint.py), on both engines.

Each test asserts what is stored, what the summary says, and that the next run against the same server,
healthy by then, completes the run asking only the questions that still needed asking.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.evaluators import answers
from kstp.graph.factory import open_store
from kstp.graph.manage import delete_run
from kstp.inference.backend import Sampling
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.runs import TRUNCATED_EMPTY
from tests.conftest import load_toy
from tests.endpoint import FakeEndpoint


def _backend(server: FakeEndpoint, **options) -> OpenAIBackend:
    return OpenAIBackend("m", base_url=server.base_url, retries=2, max_wait=0.05, timeout=10, concurrency=1,
                         **options)


def _answers(store, server, sampling=None, **options):
    return answers.evaluate(store, _backend(server, **options), "toy", sampling or Sampling(max_tokens=8))


def _status(store) -> str:
    [run] = store.run("runs_of", {"evaluator": "answers", "model": "m", "dataset": "toy"})
    return run["status"]


@pytest.mark.parametrize(("fault", "said"), [
    ("no-choices", "HTTP 200 with no choices in the reply"),
    ("null-choices", "HTTP 200 with no choices in the reply"),
    ("error-body", "HTTP 200 with no choices in the reply: 'model overloaded, try later'"),
    ("abort", "the server ended the generation (finish_reason 'abort') after 'So the answer is \\\\boxed{'"),
    ("error-finish", "the server ended the generation (finish_reason 'error') after 'Let me think: 2 + 3'"),
    ("cut-json", "HTTP 200 with a reply that is not a chat completion (application/json): "
                 "'{\"id\": \"c\", \"object\": \"chat.completion\", \"choices\": [{\"index\": 0, \"mess'"),
    ("html", "HTTP 200 with a reply that is not a chat completion (text/html): '<html><head><title>Sign in"),
])
def test_a_200_that_is_no_answer_stays_pending_and_costs_one_request(toy, fault, said):
    """q1 gets the fault on both its attempts; its seven neighbours are answered and kept."""
    with FakeEndpoint([fault, fault]) as server:
        first = _answers(toy, server)
        assert (first.pending, first.generated, _status(toy)) == (1, 7, "incomplete")
        assert first.last_failure.startswith(f"transport: {said}")
        assert "toy:q1" not in set(first.responses["questionId"])  # nothing of it is stored as the model's
        assert first.summary()["questions"] == 7 and first.summary()["failed"] == 0
        again = _answers(toy, server)  # the server answers now
        assert server.requests == 2 + 7 + 1  # only q1 is asked again
    assert (again.generated, again.pending, again.summary()["questions"], _status(toy)) == (1, 0, 8, "finished")
    assert again.summary()["accuracy"] == 0.125  # \boxed{5} is q2's answer alone


def test_content_null_cut_at_max_tokens_is_a_truncation(toy):
    with FakeEndpoint(["length-null"]) as server:
        first = _answers(toy, server)
        q1 = first.responses.set_index("questionId").loc["toy:q1"]
        assert (q1["text"], q1["error"], q1["verdict"], bool(q1["correct"])) == (None, TRUNCATED_EMPTY, "truncated",
                                                                                 False)
        summary = first.summary()
        assert (summary["truncated"], summary["failed"], summary["pending"], summary["questions"]) == (1, 1, 0, 8)
        again = _answers(toy, server)
        assert server.requests == 8  # a truncation is the model's answer: final, not asked again
    assert (again.generated, _status(toy)) == (0, "finished")


def test_cli_says_how_to_let_truncated_replies_finish(graph_location, tmp_path):
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint(["length-null"]) as server:
        result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy",
                                          "--model", "m", "--base-url", server.base_url, "--gen-kwargs",
                                          "max_tokens=8", "--json"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    # one of the toy's 8 questions cut before any content: 1 of 8 stored replies, 12.5%, at the cap asked
    assert (summary["truncated"], summary["truncation"]) == (1, {"replies": 8, "truncated": 1, "share": 0.125,
                                                                 "maxTokens": 8})
    assert "1 of 8 replies (12.5%) were cut at max_tokens (8 tokens; finish_reason length); a larger " \
           "--gen-kwargs max_tokens=N (and --new-run) lets them finish" in " ".join(result.stderr.split())


def test_content_as_a_list_of_parts_is_read(toy):
    """Mistral's reasoning models answer with thinking and text parts."""
    with FakeEndpoint(["parts"] * 8) as server:
        result = _answers(toy, server)
    q2 = result.responses.set_index("questionId").loc["toy:q2"]
    assert (q2["text"], q2["reasoning"], q2["verdict"]) == ("\\boxed{5}", "2 + 3 = 5", "correct")
    assert (result.summary()["accuracy"], result.summary()["failed"]) == (0.125, 0)


def test_a_template_without_a_system_role_is_asked_again_with_the_instruction_in_the_user_turn(toy):
    with FakeEndpoint(no_system_role=True) as server:
        result = _answers(toy, server)
        assert server.requests == 9  # the first refused, then each question once, merged
        assert all([m["role"] for m in seen] == ["user"] for seen in server.seen[1:])
        assert server.seen[1][0]["content"].startswith(answers.SYSTEM_PROMPT + "\n\nProblem:\n")
    assert (result.generated, result.pending, result.summary()["accuracy"]) == (8, 0, 0.125)
    assert toy.nodes("Response", result.responses["responseId"].tolist())["systemInUser"].tolist() == [True] * 8


def test_system_in_user_from_the_start_is_a_run_of_its_own(toy):
    with FakeEndpoint(no_system_role=True) as server:
        asked = _backend(server, system_role="user")
        result = answers.evaluate(toy, asked, "toy", Sampling(max_tokens=8))
        assert server.requests == 8  # never refused
    assert asked.endpoint == {"baseUrls": [server.base_url], "systemRole": "user"}
    assert (result.generated, result.summary()["accuracy"]) == (8, 0.125)


def test_cli_system_in_user(graph_location, tmp_path):
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint(no_system_role=True) as server:
        result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy",
                                          "--model", "m", "--base-url", server.base_url, "--system-in-user",
                                          "--concurrency", "3", "--json"])
        assert server.requests == 8 and all(len(messages) == 1 for messages in server.seen)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["questions"], summary["concurrency"], summary["accuracy"]) == (8, 3, 0.125)


def test_deleting_a_newer_run_leaves_the_older_runs_answers(toy):
    """Runs of one model and dataset share Responses (sample 0 of --samples 1 and of --samples 2); the
    ANSWERED edges carried the newer run's id, so deleting it took the older run's answers out of PSR."""
    with FakeEndpoint() as server:
        older = _answers(toy, server)
        newer = answers.evaluate(toy, _backend(server), "toy", Sampling(n=2, max_tokens=8), new_run=True)
    assert server.requests == 8 + 8  # the newer run asked sample 1 alone
    answered = _model_answers(toy)
    assert set(answered["runId"]) == {newer.run_id}
    delete_run(toy, newer.run_id)
    after = _model_answers(toy)
    assert set(after["runId"]) == {older.run_id} and len(after) == 8
    assert after.set_index("questionId")["correct"].to_dict() == \
        older.responses.set_index("questionId")["correct"].astype(bool).to_dict()
    assert len(toy.frame("run_responses", {"runId": older.run_id})) == 8  # its Responses all kept


def _model_answers(store) -> pd.DataFrame:
    answered = store.frame("learner_answers", {"learnerId": "model:m"})
    return answered.sort_values("questionId").reset_index(drop=True)
