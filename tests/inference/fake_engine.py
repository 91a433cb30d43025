"""A stand-in for one vLLM engine in :mod:`kstp.inference.backends.vllm_parallel`'s child processes: each reply
names the process and GPUs that made it (no vLLM, no GPU)."""

from __future__ import annotations

import os

from kstp.inference.backend import Completion


class Echo:
    """``Echo(model, fail=...)``: ``fail="start"`` refuses to start; ``fail="mid"`` ends its process after two
    replies."""

    def __init__(self, model: str, seed: int = 42, system_role: str = "system", fail: str | None = None, **_):
        if fail == "start":
            raise ValueError("CUDA out of memory\nwhile loading the weights")
        self.fail = fail

    def stream(self, requests, window, emit, stop):
        for n, request in enumerate(requests):
            if stop.is_set():
                return
            if self.fail == "mid" and n == 2 and os.environ.get("CUDA_VISIBLE_DEVICES") == "1":
                os._exit(3)
            text = f"{os.getpid()} {os.environ.get('CUDA_VISIBLE_DEVICES')} {request.messages[0]['content']}"
            emit(request.key, Completion(request.sample_index, request.sampling.seed, text=text))
