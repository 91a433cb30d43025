"""Inference backends against a real local model (SmolLM2-135M via llama.cpp on 127.0.0.1)."""

from __future__ import annotations

import json
import re

import pytest

from kstp.errors import ConfigError
from kstp.inference.backend import Sampling, cache_key, generate, get_backend, prompt_hash, reproducibility
from kstp.inference.backends.local import LocalBackend, LocalServer
from kstp.inference.backends.openai_compat import OpenAIBackend

CHAT = [{"role": "user", "content": "What is 2 + 3? Put the answer in \\boxed{}."}]


@pytest.fixture(scope="module")
def server():
    with LocalServer("smollm2", threads=1, context=1024) as running:
        yield running


def test_sampling_validation_and_per_sample_seeds():
    with pytest.raises(ConfigError, match="invalid sampling"):
        Sampling(n=0)
    # each field at fault is named with its value, in one line (a --gen-kwargs typo reads as such)
    with pytest.raises(ConfigError) as info:
        Sampling(max_tokens="abc", context=float("nan"), top_p=1.5, temperature=True)
    assert str(info.value) == ("invalid sampling: max_tokens must be a whole number >= 1, not 'abc'; context must be "
                               "a whole number >= 2, not nan; temperature must be a number >= 0, not True; top_p must "
                               "be a number in (0, 1], not 1.5")
    for bad in ({"max_tokens": 2.5}, {"max_tokens": 1000.0}, {"context": 1}, {"temperature": float("inf")}):
        with pytest.raises(ConfigError, match=f"{next(iter(bad))} must be"):
            Sampling(**bad)
    import numpy as np

    assert Sampling(max_tokens=np.int64(8), context=np.int64(64)).max_tokens == 8  # numpy integers are whole numbers
    assert Sampling(n=3, seed=7).for_sample(2) == Sampling(n=1, seed=9)


def test_cache_keys_separate_samples_models_and_sampling():
    h = prompt_hash(CHAT)
    keys = {cache_key("m", h, Sampling(n=3), i) for i in range(3)}
    assert len(keys) == 3
    assert cache_key("m", h, Sampling(n=3), 0) == cache_key("m", h, Sampling(n=5), 0)  # n is not identity
    assert cache_key("m", h, Sampling(), 0) != cache_key("m2", h, Sampling(), 0)
    assert cache_key("m", h, Sampling(), 0) != cache_key("m", h, Sampling(temperature=0.7), 0)


def test_unknown_backend_suggests():
    with pytest.raises(ConfigError, match="Unknown backend 'vlm'. Did you mean: vllm"):
        get_backend("vlm", "x")


def test_same_seed_same_completion_other_sample_other_seed(server):
    backend = OpenAIBackend("smollm2", base_url=server.base_url, concurrency=1)
    sampling = Sampling(n=2, temperature=0.8, max_tokens=24, seed=11)
    first = backend.generate([CHAT], sampling)[0]
    assert [(c.sample_index, c.seed) for c in first] == [(0, 11), (1, 12)]
    assert all(c.error is None and c.text and c.tokens_in and c.tokens_out for c in first)
    again = backend.generate([CHAT], sampling, samples=[[1]])[0]
    assert [c.text for c in again] == [first[1].text]
    assert backend.generate([CHAT], sampling, samples=[[0]])[0][0].text == first[0].text


def test_json_schema_reaches_the_server(server):
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    backend = OpenAIBackend("smollm2", base_url=server.base_url, concurrency=1)
    [[completion]] = backend.generate([CHAT], Sampling(max_tokens=32, json_schema=schema))
    if completion.finish_reason == "stop":
        assert isinstance(json.loads(completion.text)["answer"], int)


def test_unreachable_server_is_a_recorded_transport_failure():
    backend = OpenAIBackend("smollm2", base_url="http://127.0.0.1:9/v1", retries=2, max_wait=0.1, timeout=5)
    [[completion]] = backend.generate([CHAT], Sampling(max_tokens=8))
    assert completion.text is None and completion.error.startswith("transport: APIConnectionError")


def test_local_backend_missing_model_file(tmp_path):
    with pytest.raises(ConfigError, match="GGUF model .*absent.gguf not found"):
        LocalServer(str(tmp_path / "absent.gguf"))


def test_registry_imports_only_the_backend_asked_for():
    """The interface names the built-in backends without importing them; asking for one imports
    its module, which registers itself, and no other backend's."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys\nfrom kstp.inference.backend import backend_names, get_backend\n"
             "names = backend_names()\nbefore = sorted(m for m in sys.modules if 'backends.' in m)\n"
             "backend = get_backend('openai', 'm', base_url='http://127.0.0.1:9/v1')\n"
             "after = sorted(m for m in sys.modules if 'backends.' in m)\n"
             "print(json.dumps([names, before, after, backend.name]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    names, before, after, name = json.loads(done.stdout)
    assert names == ["hf", "local", "openai", "vllm"] and before == [] and name == "openai"
    assert after == ["kstp.inference.backends.context_window", "kstp.inference.backends.endpoints",
                     "kstp.inference.backends.openai_compat"]  # its own helpers


def test_registry_takes_a_backend_registered_from_outside():
    from kstp.inference.backend import _BACKENDS, backend_names, register_backend

    @register_backend("echo-test")
    class Echo:
        name = "echo-test"

        def __init__(self, model, **options):
            self.model, self.options = model, options

    try:
        assert "echo-test" in backend_names()
        made = get_backend("echo-test", "m", k=1)
        assert (type(made), made.model, made.options) == (Echo, "m", {"k": 1})
    finally:
        del _BACKENDS["echo-test"]


def test_openai_base_url_from_the_environment_is_the_one_the_run_records(monkeypatch):
    """The openai client sends to $OPENAI_BASE_URL when no base URL is given; the run records it (it named
    api.openai.com while the requests went elsewhere)."""
    from tests.endpoint import FakeEndpoint

    with FakeEndpoint(answer="\\boxed{7}") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        backend = OpenAIBackend("m", concurrency=1)
        [[completion]] = backend.generate([[{"role": "user", "content": "3 + 4?"}]], Sampling())
    assert (completion.text, server.requests) == ("\\boxed{7}", 1)
    assert backend.endpoint == {"baseUrls": [server.base_url]}
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert OpenAIBackend("m").endpoint == {"baseUrls": ["https://api.openai.com/v1"]}


@pytest.mark.parametrize(("options", "said"), [({"threads": 0}, "threads=0"), ({"context": 5}, "context=5"),
                                               ({"parallel": "2"}, "parallel='2'")])
def test_the_local_backend_refuses_a_setting_it_cannot_apply_in_one_line(options, said):
    """Issue 43: threads=0 surfaced as a fragment of a gdb backtrace from llama.cpp."""
    with pytest.raises(ConfigError, match=f"--model-args {re.escape(said)}: the local backend needs a whole number"):
        LocalServer(**options)


def test_the_local_model_applies_the_context_window_and_records_the_servers():
    """Issue 43: --gen-kwargs context=10 was recorded while the server's own window bounded the reply (111
    tokens under max_tokens 10). The backend holds each request to the run's window (prompt plus reply, the
    prompt counted by the server), and its endpoint records the window the server holds: llama.cpp rounds
    ``context`` up to a multiple of 256."""
    story = [{"role": "user", "content": "Write a long story about a dragon and a knight."}]
    backend = LocalBackend("smollm2", threads=1, context=300, concurrency=2)
    try:
        assert backend.endpoint["context"] == 512
        prompt = backend._server.prompt_tokens(story)
        window = prompt + 12
        sampling = Sampling(n=2, temperature=0.6, max_tokens=window, context=window, seed=3)
        replies = backend.generate([story], sampling)[0]
        assert [(c.tokens_in, c.tokens_out, c.finish_reason) for c in replies] == [(prompt, 12, "length")] * 2
        # a cap below what the window leaves is the cap; a window the prompt fills leaves one token (as hf)
        [[capped]] = backend.generate([story], Sampling(max_tokens=5, context=window, seed=3))
        [[full]] = backend.generate([story], Sampling(max_tokens=10, context=10, seed=3))
        assert (capped.tokens_out, full.tokens_in, full.tokens_out, full.finish_reason) == (5, prompt, 1, "length")
    finally:
        backend.close()


PROBLEMS = ["A box holds 8 red, 10 blue and 12 green marbles. One is drawn at random. What is the probability "
            "that it is blue?", "A purse holds three 5-cent coins and two 20-cent coins. Two are drawn without "
            "replacement. What is the probability that both are 20-cent coins?",
            "A fair die is rolled twice. What is the probability that the sum is 7?"]


def test_the_local_model_gives_sample_i_the_same_text_at_any_window_and_order():
    """Issue 43: 1 of 6 texts the same at the default window. The cause: llama.cpp's prompt cache, which
    computes a prompt that shares a prefix with the slot's previous one in other batch shapes, so a reply
    depended on what the server read before it (measured: 3 texts for one request after 4 others). Without
    the cache, sample i is the same text at window 1 in order and at window 8 in reverse order."""
    chats = [[{"role": "system", "content": "Solve the problem step by step; put the answer in \\boxed{}."},
              {"role": "user", "content": problem}] for problem in PROBLEMS]
    sampling = Sampling(n=2, temperature=0.6, top_p=0.95, max_tokens=96, seed=42)
    backend = LocalBackend("smollm2", threads=1, context=1024)
    try:
        in_order = generate(backend, chats, sampling, window=1)
        reversed_ = generate(backend, chats[::-1], sampling, window=8)[::-1]
    finally:
        backend.close()
    texts = [[c.text for c in row] for row in in_order]
    assert texts == [[c.text for c in row] for row in reversed_]
    assert len({t for row in texts for t in row}) == 6 and all(len(t) > 100 for row in texts for t in row)
    assert reproducibility(backend) == {"sameText": True, "note": backend.reproducible[1]}
    assert "one llama.cpp slot and no prompt cache" in backend.reproducible[1]


def test_the_local_model_with_several_slots_says_it_promises_no_same_text():
    backend = LocalBackend("smollm2", threads=1, context=256, parallel=2)
    try:
        promise = reproducibility(backend)
    finally:
        backend.close()
    assert promise["sameText"] is False and "parallel=2 decodes 2 requests in one batch" in promise["note"]
    assert reproducibility(OpenAIBackend("m", base_url="http://127.0.0.1:9/v1"))["sameText"] is False
