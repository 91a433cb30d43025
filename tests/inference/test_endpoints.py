"""Several servers of one model (issue 45): the window spread over them, a server killed mid-run, servers of
different models refused, one run whichever servers answer it. Real HTTP servers on 127.0.0.1
(tests/endpoint.py), the real client."""

from __future__ import annotations

import threading
import time

import pytest

from kstp.errors import ConfigError
from kstp.evaluators import answers
from kstp.inference.backend import Sampling, cache_key, endpoint_of, prompt_hash
from kstp.inference.backends.endpoints import EndpointPool, check_same_models
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.runs import RunSpec
from tests.endpoint import FakeEndpoint


def _chats(n: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"question {i}"}] for i in range(n)]


def _backend(urls, concurrency: int = 8, **options) -> OpenAIBackend:
    return OpenAIBackend("m", base_url=urls, concurrency=concurrency, retries=3, max_wait=0.05, timeout=10,
                         **options)


def test_spread_over_two_endpoints_the_slower_takes_fewer():
    with FakeEndpoint(delay_s=0.01) as fast, FakeEndpoint(delay_s=0.1) as slow:
        backend = _backend([fast.base_url, slow.base_url])
        replies = backend.generate(_chats(60), Sampling(max_tokens=8))
    assert all(r[0].text == "\\boxed{5}" for r in replies)
    assert fast.answered + slow.answered == 60 and fast.answered > 2 * slow.answered > 0
    figures = {f["baseUrl"]: f for f in backend.endpoint_figures}
    assert (figures[fast.base_url]["completions"], figures[slow.base_url]["completions"]) == \
        (fast.answered, slow.answered)
    assert figures[fast.base_url]["completionsPerS"] > figures[slow.base_url]["completionsPerS"]


def test_spread_over_three_equal_endpoints_each_takes_a_share():
    with FakeEndpoint(delay_s=0.02) as a, FakeEndpoint(delay_s=0.02) as b, FakeEndpoint(delay_s=0.02) as c:
        _backend([a.base_url, b.base_url, c.base_url], concurrency=9).generate(_chats(45), Sampling(max_tokens=8))
    assert sorted(s.answered for s in (a, b, c))[0] >= 8 and a.answered + b.answered + c.answered == 45


def test_an_endpoint_killed_mid_run_has_its_requests_asked_of_the_others_each_answered_once():
    servers = [FakeEndpoint(delay_s=0.05) for _ in range(3)]
    with servers[0], servers[1], servers[2]:
        victim = servers[1]

        def kill():
            while victim.requests < 5:
                time.sleep(0.005)
            victim.kill()

        killer = threading.Thread(target=kill)
        killer.start()
        backend = _backend([s.base_url for s in servers], concurrency=12)
        start = time.monotonic()
        replies = backend.generate(_chats(90), Sampling(max_tokens=8))
        took = time.monotonic() - start
        killer.join()
    assert [len(r) for r in replies] == [1] * 90 and all(r[0].text == "\\boxed{5}" for r in replies)
    assert sum(s.answered for s in servers) == 90  # counted at the servers: none answered twice
    assert victim.requests > victim.answered  # it held requests when it went away, asked again elsewhere
    figures = {f["baseUrl"]: f for f in backend.endpoint_figures}
    assert figures[victim.base_url]["failures"] >= 1 and figures[victim.base_url]["away"]
    assert took < 5  # never waited on the dead server's outage


def test_a_hung_endpoint_gets_no_more_requests_and_its_held_ones_are_asked_elsewhere():
    with FakeEndpoint(delay_s=0.005) as good, FakeEndpoint(["stall"] * 100) as hung:
        backend = OpenAIBackend("m", base_url=[good.base_url, hung.base_url], concurrency=8, retries=3,
                                max_wait=0.05, timeout=1.0)
        start = time.monotonic()
        replies = backend.generate(_chats(40), Sampling(max_tokens=8))
        took = time.monotonic() - start
    assert all(r[0].text == "\\boxed{5}" for r in replies) and good.answered == 40
    assert hung.requests <= 8 and took < 4  # held a few until its timeout, then none


def test_a_request_a_server_fails_otherwise_is_asked_once_of_another():
    with FakeEndpoint() as good, FakeEndpoint([500] * 200) as broken:
        backend = _backend([good.base_url, broken.base_url], concurrency=4)
        replies = backend.generate(_chats(20), Sampling(max_tokens=8))
    assert all(r[0].text == "\\boxed{5}" for r in replies) and good.answered == 20 and broken.answered == 0


def test_every_endpoint_away_at_once_is_ridden_out_and_nothing_is_lost():
    with FakeEndpoint(away_after=3, away_s=1.0) as a, FakeEndpoint(away_after=3, away_s=1.0) as b:
        backend = _backend([a.base_url, b.base_url], concurrency=4)
        replies = backend.generate(_chats(20), Sampling(max_tokens=8))
    assert all(r[0].text == "\\boxed{5}" for r in replies) and a.answered + b.answered == 20
    assert all(f["failures"] > 0 for f in backend.endpoint_figures)  # both were away at once, and waited for


def test_endpoints_serving_different_models_are_refused_in_one_line():
    with FakeEndpoint(models=["qwen-7b"]) as a, FakeEndpoint(models=["llama-8b"]) as b:
        with pytest.raises(ConfigError) as refused:
            _backend([a.base_url, b.base_url])
    said = str(refused.value)
    assert "\n" not in said and a.base_url in said and b.base_url in said
    assert "qwen-7b" in said and "llama-8b" in said


def test_an_endpoint_without_models_list_is_used_as_one_endpoint_would_be():
    with FakeEndpoint(models=["m"]) as a, FakeEndpoint() as b:  # b answers /v1/models with 404
        assert check_same_models([a.base_url, b.base_url]) == {a.base_url: ["m"], b.base_url: None}
        replies = _backend([a.base_url, b.base_url]).generate(_chats(6), Sampling(max_tokens=8))
    assert len(replies) == 6 and a.answered + b.answered == 6


def test_an_endpoint_given_twice_is_refused():
    with pytest.raises(ConfigError, match="given twice"):
        EndpointPool(["http://a/v1", "http://a/v1"])


def test_run_identity_is_the_models_with_one_or_three_endpoints():
    one = OpenAIBackend("m", base_url="http://127.0.0.1:8001/v1")
    spec = lambda b: RunSpec.of(b, "answers", "1.0", "toy", Sampling(), "t")  # noqa: E731
    with FakeEndpoint() as a, FakeEndpoint() as b, FakeEndpoint() as c:
        three = OpenAIBackend("m", base_url=[a.base_url, b.base_url, c.base_url])
    assert (spec(one).config_hash(), spec(one).run_id()) == (spec(three).config_hash(), spec(three).run_id())
    h = prompt_hash([{"role": "user", "content": "2 + 3?"}])
    assert cache_key("m", h, Sampling(), 0, endpoint_of(one)) == cache_key("m", h, Sampling(), 0, endpoint_of(three))
    assert spec(three).config()["endpoint"]["baseUrls"] == [a.base_url, b.base_url, c.base_url]  # recorded


def test_a_run_resumes_across_one_and_three_endpoints(toy):
    sampling = Sampling(max_tokens=8)
    with FakeEndpoint() as a, FakeEndpoint() as b, FakeEndpoint() as c:
        first = answers.evaluate(toy, _backend(a.base_url), "toy", sampling, limit=3)
        wider = answers.evaluate(toy, _backend([a.base_url, b.base_url, c.base_url]), "toy", sampling, limit=6)
        asked = a.requests + b.requests + c.requests
    assert (wider.run_id, wider.resumed, wider.generated, asked) == (first.run_id, True, 3, 6)
    assert [e["baseUrl"] for e in wider.summary()["endpoints"]] == [a.base_url, b.base_url, c.base_url]
    [run] = toy.run("run_by_id", {"runId": first.run_id})
    assert "endpoints" not in run  # each server's figures are the summary's


def test_a_run_recorded_with_one_servers_base_url_keeps_its_keys(toy):
    """A run stored before issue 45 recorded ``endpoint.baseUrl`` (and keyed its completions with it): resumed
    with other servers it is the same run and its completions are found, nothing asked again."""
    sampling = Sampling(max_tokens=8)
    with FakeEndpoint() as a, FakeEndpoint() as b:
        old = _backend(a.base_url)
        old.endpoint = {"baseUrl": a.base_url}  # what the backend recorded before
        first = answers.evaluate(toy, old, "toy", sampling, limit=3)
        again = answers.evaluate(toy, _backend([a.base_url, b.base_url]), "toy", sampling, limit=3)
        asked = a.requests + b.requests
    assert (again.run_id, again.resumed, again.generated, asked) == (first.run_id, True, 0, 3)
