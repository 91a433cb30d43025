"""Inference backends against a real local model (SmolLM2-135M via llama.cpp on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest

from kstp.errors import ConfigError
from kstp.inference.backend import Sampling, cache_key, get_backend, prompt_hash
from kstp.inference.backends.local import LocalServer
from kstp.inference.backends.openai_compat import OpenAIBackend

CHAT = [{"role": "user", "content": "What is 2 + 3? Put the answer in \\boxed{}."}]


@pytest.fixture(scope="module")
def server():
    with LocalServer("smollm2", threads=1, context=1024) as running:
        yield running


def test_sampling_validation_and_per_sample_seeds():
    with pytest.raises(ConfigError, match="invalid sampling"):
        Sampling(n=0)
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
