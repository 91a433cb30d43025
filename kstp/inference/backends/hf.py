"""A Hugging Face ``transformers`` model in-process (``--backend hf``), as lm-evaluation-harness's
``hf`` model and Inspect's ``hf/`` provider: batched ``generate`` on a GPU or the CPU.

:meth:`HFBackend.stream` sorts the run's requests by prompt length (longest first, so a
batch that does not fit shows at once), generates ``window`` of them at a time with left
padding through the model's chat template, and hands over each batch's completions as
the batch ends. ``--model-args`` go to ``AutoModelForCausalLM.from_pretrained``
(``device_map=auto``, ``dtype=bfloat16``, ``attn_implementation=sdpa``,
``trust_remote_code=true``, ...); without ``device_map`` the model goes to the first
GPU, else the CPU.

Sampling follows the rule of every backend: sample ``i`` is drawn with seed ``seed + i``,
whatever else shares its batch. ``generate``'s own sampler draws from one generator for
the whole batch, so a row's tokens would depend on its neighbours; kstp draws each row's
next token itself (:class:`SeededSampler`): the repetition penalty, temperature, top-k,
top-p and min-p on the row's logits (transformers' order), then the Gumbel-max trick with
noise from a counter-based hash of (seed, step, token), which is a draw from the same
categorical distribution and the same draw in any batch. Temperature 0 is greedy. Only
what the run's Sampling says is applied: not the model's ``generation_config``, whose
defaults transformers' ``generate`` (and so lm-eval's and Inspect's hf models) would add
(often ``top_k=50``); ``--gen-kwargs top_k=50`` samples as they do. Stop strings cut the
text where they first occur; a row that reaches its ``max_tokens`` is ``length``.
Structured output is not enforced on this backend (the caller re-checks every answer
against its schema). Needs ``torch`` and ``transformers`` (``pip install 'kstp[models]'``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence

from kstp.errors import ConfigError, import_extra
from kstp.inference.backend import Completion, Emit, Request, Streaming, register_backend, reply_budget, system_in_user

__all__ = ["HFBackend", "SeededSampler", "seeded_uniform", "chat_token_ids", "offline_tokenizer", "SAMPLER",
           "GPU_WINDOW", "CPU_WINDOW"]

#: Sequences generated together by default on a GPU and on the CPU.
GPU_WINDOW, CPU_WINDOW = 64, 8
#: The sampler's version, part of the run identity: another sampler draws other tokens.
SAMPLER = "gumbel-lowbias32-v1"

_MASK = 0xFFFFFFFF


def _mix(x):
    """Chris Wellons' ``lowbias32`` integer hash on int64 tensors holding 32-bit values."""
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & _MASK
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & _MASK
    return x ^ (x >> 16)


def seeded_uniform(seeds, step: int, vocab: int):
    """Uniform noise in (0, 1) for each row's ``vocab`` tokens at ``step``: a function of (seed, step, token) alone.

    Parameters
    ----------
    seeds : torch.Tensor
        Shape (rows,), int64, each in [0, 2**32).
    step : int
        The index of the token being drawn (0 for the first new token).
    vocab : int

    Returns
    -------
    torch.Tensor
        Shape (rows, vocab), float32, on the seeds' device; 24 random bits each.
    """
    import torch

    row = _mix((_mix(seeds & _MASK) + step * 0x9E3779B9) & _MASK)
    tokens = torch.arange(vocab, device=seeds.device, dtype=torch.int64)
    bits = _mix((row[:, None] + tokens[None, :] * 0x85EBCA77) & _MASK)
    return ((bits >> 8).to(torch.float32) + 0.5) / float(1 << 24)


class SeededSampler:
    """A ``transformers`` logits processor that picks each row's next token with the row's own seed.

    It returns logits that are ``-inf`` but for the chosen token, so ``generate`` with
    ``do_sample=False`` keeps that token. Temperature 0 leaves the logits as they are
    (greedy).

    Parameters
    ----------
    seeds : sequence of int
        One per row.
    temperature, top_p : float
    prompt_length : int
        Columns of the padded prompt (the first new token is step 0).
    top_k, min_p, repetition_penalty : int, float, float or None
        Applied where given (:class:`~kstp.inference.backend.Sampling`), as transformers'
        processors do: the penalty on the raw logits of every token in the row so far
        (greedy too), top-k after the temperature, min-p last.

    Examples
    --------
    The penalty divides a positive logit and multiplies a negative one; top-k 1 is the
    likeliest token whatever the noise:

    >>> import torch
    >>> scores, ids = torch.tensor([[2.0, -1.0, 1.0]]), torch.tensor([[0, 1]])
    >>> SeededSampler([42], 0, 1.0, 2, "cpu", repetition_penalty=2.0)(ids, scores).tolist()
    [[1.0, -2.0, 1.0]]
    >>> SeededSampler([42], 1.0, 1.0, 2, "cpu", top_k=1)(ids, scores).argmax(-1).tolist()
    [0]
    """

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float, prompt_length: int, device,
                 top_k: int | None = None, min_p: float | None = None, repetition_penalty: float | None = None):
        import torch

        self.seeds = torch.tensor(list(seeds), dtype=torch.int64, device=device)
        self.temperature, self.top_p, self.prompt_length = temperature, top_p, prompt_length
        self.top_k, self.min_p, self.repetition_penalty = top_k, min_p, repetition_penalty

    def __call__(self, input_ids, scores):
        import torch

        if self.repetition_penalty is not None:  # as transformers' RepetitionPenaltyLogitsProcessor, greedy too
            seen = torch.gather(scores, 1, input_ids)
            seen = torch.where(seen < 0, seen * self.repetition_penalty, seen / self.repetition_penalty)
            scores = scores.scatter(1, input_ids, seen)
        if self.temperature == 0:
            return scores
        logits = scores.float() / self.temperature
        if self.top_k is not None and self.top_k < logits.shape[-1]:
            kth = torch.topk(logits, self.top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if self.top_p < 1.0:
            ordered, order = torch.sort(logits, descending=True)
            mass = torch.softmax(ordered, dim=-1)
            before = mass.cumsum(dim=-1) - mass  # the mass of the likelier tokens
            cut = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, order, before >= self.top_p)
            logits = logits.masked_fill(cut, float("-inf"))  # the most likely token always stays
        if self.min_p is not None:
            probability = torch.softmax(logits, dim=-1)
            floor = self.min_p * probability.max(dim=-1, keepdim=True).values
            logits = logits.masked_fill(probability < floor, float("-inf"))
        noise = seeded_uniform(self.seeds, input_ids.shape[1] - self.prompt_length, logits.shape[-1])
        choice = torch.argmax(logits - torch.log(-torch.log(noise)), dim=-1)
        picked = torch.full_like(scores, float("-inf"))
        return picked.scatter(-1, choice[:, None], 0.0)


@register_backend("hf")
class HFBackend(Streaming):
    """A ``transformers`` causal LM; ``model_args`` go to ``AutoModelForCausalLM.from_pretrained``.

    Parameters
    ----------
    model : str
        A model folder or a name in the local Hugging Face cache.
    seed : int
        Unused by the sampler (each request carries its seed); kept for the CLI's uniformity.
    concurrency : int, optional
        Sequences per batch (default :data:`GPU_WINDOW` on a GPU, :data:`CPU_WINDOW` on the CPU).
    system_role : {"system", "user"}
        ``user``: the system instruction goes into the first user turn.
    threads : int, optional
        CPU threads torch uses (``--model-args threads=1``: on a loaded 2-core machine the
        default ran 8.6x slower than one thread); recorded in the run's log (``torch.threads``).
    **model_args
        ``from_pretrained`` arguments; ``dtype`` as a name (``bfloat16``).

    Raises
    ------
    ConfigError
        When the model cannot be loaded (the message names it) or has no chat template.
    """

    name = "hf"

    def __init__(self, model: str, seed: int = 42, concurrency: int | None = None, system_role: str = "system",
                 threads: int | None = None, **model_args):
        transformers = import_extra("transformers", "models", "the hf backend")
        if threads is not None:
            if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
                raise ConfigError(f"--model-args threads={threads!r}: the hf backend needs a whole number >= 1")
            import torch

            torch.set_num_threads(threads)
        self.endpoint = {"modelArgs": dict(sorted(model_args.items())), "sampler": SAMPLER,
                         **({"systemRole": "user"} if system_role == "user" else {})}
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(model)
            loaded = transformers.AutoModelForCausalLM.from_pretrained(model, **model_args)
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f"the hf backend could not load model {model!r}: {first}") from None
        if "device_map" not in model_args:
            import torch

            loaded = loaded.to("cuda" if torch.cuda.is_available() else "cpu")
        self._setup(model, loaded, tokenizer, concurrency, system_role)

    @classmethod
    def of(cls, name: str, model, tokenizer, concurrency: int | None = None, system_role: str = "system",
           **identity) -> HFBackend:
        """A backend over a model and tokenizer already in memory (built from a config, say).

        ``identity`` stands in for the model arguments in :attr:`endpoint`.
        """
        backend = cls.__new__(cls)
        backend.endpoint = {"modelArgs": dict(sorted(identity.items())), "sampler": SAMPLER,
                            **({"systemRole": "user"} if system_role == "user" else {})}
        backend._setup(name, model, tokenizer, concurrency, system_role)
        return backend

    def _setup(self, name: str, model, tokenizer, concurrency: int | None, system_role: str) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigError(f"model {name!r} has no chat template: the hf backend asks in chat form")
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.model, self._model, self._tokenizer = name, model.eval(), tokenizer
        ends = getattr(getattr(model, "generation_config", None), "eos_token_id", None)  # Llama 3: two of them
        ends = ends if isinstance(ends, list) else [ends] if ends is not None else []
        self._eos = set(ends) | {tokenizer.eos_token_id}
        self._system_in_user = system_role == "user"
        self.device = next(model.parameters()).device
        self.window = concurrency or (GPU_WINDOW if self.device.type == "cuda" else CPU_WINDOW)
        #: What sample i's text is promised (:func:`~kstp.inference.backend.reproducibility`).
        self.reproducible = (True, "one prompt at a time (--concurrency 1): sample i's text depends on its prompt "
                                   "and seed alone") if self.window == 1 else (
            False, "each sample's draw is its own (seed + i, the same noise in any batch), but a padded batch's "
                   "logits are not promised to equal one prompt's to the last bit: where two tokens are nearly "
                   "tied (bf16 on a GPU), a sample's text may change with what shares its batch; --concurrency 1 "
                   "promises it")

    def _ids(self, request: Request) -> list[int]:
        messages = system_in_user(request.messages) if self._system_in_user else request.messages
        return chat_token_ids(self._tokenizer, messages)

    def stream(self, requests: Iterable[Request], window: int, emit: Emit, stop: threading.Event) -> None:
        """See :meth:`kstp.inference.backend.Backend.stream`; a batch cut by a stop is dropped."""
        groups: dict[tuple, list[tuple[Request, list[int]]]] = {}
        for request in requests:  # one sampling configuration a batch
            s = request.sampling
            groups.setdefault((s.max_tokens, s.context, s.temperature, s.top_p, s.stop, s.top_k, s.min_p,
                               s.repetition_penalty), []).append(
                (request, self._ids(request)))
        for same in groups.values():
            same.sort(key=lambda pair: -len(pair[1]))  # longest first: a batch that does not fit shows at once
            for start in range(0, len(same), window):
                if stop.is_set():
                    return
                batch = same[start:start + window]
                completions = self._generate(batch, stop)
                if completions is None:
                    return
                for (request, _), completion in zip(batch, completions, strict=True):
                    emit(request.key, completion)

    def _generate(self, batch: list[tuple[Request, list[int]]], stop: threading.Event) -> list[Completion] | None:
        """One batch through ``generate``; None when ``stop`` cut it."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

        steps: list[float] = []  # when each decoding step ended: a row's latency is its last token's

        class _Stop(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):
                steps.append(time.perf_counter())
                return torch.full((input_ids.shape[0],), stop.is_set(), dtype=torch.bool, device=input_ids.device)

        sampling = batch[0][0].sampling
        width = max(len(ids) for _, ids in batch)
        pad = self._tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for _, ids in batch], device=self.device)
        attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for _, ids in batch], device=self.device)
        temperature = 1.0 if sampling.temperature is None else sampling.temperature
        sampler = SeededSampler([r.sampling.seed for r, _ in batch], temperature,
                                1.0 if sampling.top_p is None else sampling.top_p, width, self.device,
                                sampling.top_k, sampling.min_p, sampling.repetition_penalty)
        # each row's own budget (a context window leaves a short prompt more): the batch runs to the largest
        model_len = getattr(self._model.config, "max_position_embeddings", None)
        budgets = [reply_budget(sampling, len(ids), model_len) for _, ids in batch]
        config = GenerationConfig(max_new_tokens=max(budgets), do_sample=False, pad_token_id=pad,
                                  eos_token_id=sorted(self._eos), num_beams=1)
        start = time.perf_counter()
        with torch.inference_mode():
            output = self._model.generate(input_ids=input_ids, attention_mask=attention, generation_config=config,
                                          logits_processor=LogitsProcessorList([sampler]),
                                          stopping_criteria=StoppingCriteriaList([_Stop()]))
        if stop.is_set():
            return None
        completions = []
        for (request, ids), row, budget in zip(batch, output[:, width:].tolist(), budgets, strict=True):
            row = row[:budget]
            end = next((k for k, token in enumerate(row) if token in self._eos), None)
            ended = end is not None
            tokens = row[:end] if ended else row
            text = self._tokenizer.decode(tokens, skip_special_tokens=True)
            finish = "stop" if ended else "length"
            cuts = [text.index(s) for s in request.sampling.stop if s in text]
            if cuts:
                text, finish = text[:min(cuts)], "stop"
            # the row's own time: from the batch's start to the step of its last token (its EOS where it ended)
            last = min(len(tokens) + ended, len(steps)) - 1
            completions.append(Completion(request.sample_index, request.sampling.seed, text=text,
                                          finish_reason=finish, tokens_in=len(ids), tokens_out=len(tokens),
                                          latency_s=(steps[last] if last >= 0 else time.perf_counter()) - start))
        return completions

    def close(self) -> None:
        self._model = None


def chat_token_ids(tokenizer, messages: list[dict]) -> list[int]:
    """The token ids of a chat through the tokenizer's chat template, ready for the assistant's turn.

    ``apply_chat_template`` returns a list in some transformers versions and a mapping with
    ``input_ids`` in others; the ids carry the template's own BOS, so nothing adds a second.
    """
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def offline_tokenizer(vocab_size: int = 1024):
    """A word-level tokenizer with a chat template, built without any download.

    Its vocabulary is the special tokens, the roles and the words ``w0``, ``w1``, ...
    (other words read as ``[UNK]``): for tests and speed benchmarks of the backend on
    models built from a config with random weights, not for real models.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        ``vocab_size`` tokens; ``[PAD]`` 0, ``[UNK]`` 1, ``<s>`` 2, ``</s>`` 3.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    special = ["[PAD]", "[UNK]", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]
    words = special + [f"w{i}" for i in range(vocab_size - len(special))]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]",
                                        bos_token="<s>", eos_token="</s>",
                                        additional_special_tokens=special[4:])
    tokenizer.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
                               "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    return tokenizer
