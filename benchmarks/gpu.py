"""The ``hf`` backend through kstp's run engine on one CUDA GPU (issue 31): output tokens/s at 8, 64 and 256
sequences, against plain ``transformers`` ``generate`` on the same batches in the same run.

Needs only torch and transformers as a GPU machine has them: no vLLM and no weights to download. The model
is Llama-3-8B-shaped (32 layers, hidden 4,096, 32 heads with 8 key-value heads, MLP 14,336, vocabulary
128,256) with random bf16 weights, the tokenizer kstp's own offline word-level one
(:func:`kstp.inference.backends.hf.offline_tokenizer`); prompts of 320 tokens, 256 new tokens each (random
weights almost never draw the end token, so every sequence runs to its limit). kstp's figure is the whole
run loop: :func:`kstp.evaluators.answers.evaluate` on an embedded graph (stream the requests to the backend,
store the completions, grade them in the grading process, write the verdicts). The baseline is one
``model.generate`` call per batch with transformers' own sampler, nothing stored. One command, under five
minutes on an H200: ``python -m benchmarks gpu``; skipped with a note where no CUDA GPU is found.
"""

from __future__ import annotations

import time

import pandas as pd

from benchmarks.common import banner, fmt_s, print_table, workdir

__all__ = ["main", "summary"]

#: Sequences in flight: the windows measured.
WINDOWS = (8, 64, 256)
PROMPT_TOKENS, NEW_TOKENS = 320, 256
VOCAB = 128_256


def _model(device: str, quick: bool):
    """The 8B-shaped model with random bf16 weights, built on ``device``; ``quick``: a small one."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    size = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2} if quick else \
        {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32}
    config = LlamaConfig(vocab_size=VOCAB, num_attention_heads=32 if not quick else 4, num_key_value_heads=8
                         if not quick else 2, max_position_embeddings=8192, rope_theta=500_000.0, bos_token_id=2,
                         eos_token_id=3, pad_token_id=0, **size)
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16 if device == "cuda" else torch.float32)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    return model.eval()


def _questions(store, n: int) -> None:
    """``n`` questions whose chat is about :data:`PROMPT_TOKENS` tokens of the offline tokenizer's words."""
    import random

    rng = random.Random(0)
    ids = [f"gpu:q{i}" for i in range(n)]
    words = PROMPT_TOKENS - 40  # the system line and the template are the rest
    store.write_nodes("Dataset", pd.DataFrame([{"id": "gpu"}]))
    store.write_nodes("Question", pd.DataFrame({
        "id": ids, "position": list(range(n)), "answer": "7",
        "text": [" ".join(f"w{rng.randrange(VOCAB - 10)}" for _ in range(words)) for _ in range(n)]}))
    store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame({"from_id": ids, "to_id": "gpu"}))


def _plain(model, tokenizer, chats, window: int, new_tokens: int) -> tuple[float, int]:
    """transformers' own ``generate`` on batches of ``window``: seconds and new tokens."""
    import torch

    tokens, start = 0, time.perf_counter()
    for first in range(0, len(chats), window):
        batch = tokenizer.apply_chat_template(chats[first:first + window], add_generation_prompt=True,
                                              padding=True, return_tensors="pt", return_dict=True).to(model.device)
        with torch.inference_mode():
            out = model.generate(**batch, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=True,
                                 temperature=0.6, top_p=0.95, pad_token_id=0)
        tokens += out[:, batch["input_ids"].shape[1]:].numel()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start, tokens


def main(quick: bool = False) -> dict:
    banner("the hf backend through the run engine, one GPU")
    try:
        import torch
    except ImportError:
        print("torch is not installed: skipped")
        return {}
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not quick:
        print("no CUDA GPU here: skipped (python -m benchmarks gpu on a machine with one; --quick runs a tiny "
              "model on the CPU, a smoke run)")
        return {}
    from kstp.evaluators import answers
    from kstp.graph.ladybug import LadybugStore
    from kstp.inference.backend import Sampling
    from kstp.inference.backends.hf import HFBackend, offline_tokenizer

    windows, new_tokens = ((2, 4), 8) if quick else (WINDOWS, NEW_TOKENS)
    started = time.perf_counter()
    tokenizer = offline_tokenizer(VOCAB)
    tokenizer.padding_side = "left"
    model = _model(device, quick)
    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
    print(f"{name}; torch {torch.__version__}; model and tokenizer built in {fmt_s(time.perf_counter() - started)} "
          f"s ({sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters, {model.dtype})")
    rows, figures = [], {}
    with workdir("gpu") as tmp:
        store = LadybugStore(tmp / "graph")
        store.ensure_schema()
        _questions(store, max(windows))
        texts = store.frame("dataset_questions", {"dataset": "gpu"})["text"].tolist()
        backend = HFBackend.of("random-8b", model, tokenizer, shape="llama-3-8b-random-bf16")
        _plain(model, tokenizer, [answers.build_prompt(t) for t in texts[:8]], 8, 8)  # CUDA's first-call costs
        for window in windows:
            chats = [answers.build_prompt(t) for t in texts[:window]]
            plain_s, plain_tokens = _plain(model, tokenizer, chats, window, new_tokens)
            backend.window = window
            sampling = Sampling(max_tokens=new_tokens, temperature=0.6, top_p=0.95, seed=window)  # a run each
            start = time.perf_counter()
            result = answers.evaluate(store, backend, "gpu", sampling, limit=window, new_run=True)
            kstp_s = time.perf_counter() - start
            tokens = int(result.responses["tokensOut"].sum())
            # random weights draw the end token now and then (about 1 in 128,256): a few sequences end early
            if result.generated != window or (tokens < 0.98 * window * new_tokens and not quick):
                print(f"PROBLEM: window {window}: {result.generated} completions, {tokens} tokens")
            figures[window] = {"kstp": tokens / kstp_s, "plain": plain_tokens / plain_s, "seconds": kstp_s}
            rows.append([str(window), f"{tokens:,}", fmt_s(kstp_s), f"{tokens / kstp_s:,.0f}",
                         f"{plain_tokens / plain_s:,.0f}", f"{(tokens / kstp_s) / (plain_tokens / plain_s):.2f}x",
                         f"{(tokens / kstp_s) / figures[windows[0]]['kstp']:.1f}x"])
        store.close()
    print_table(["sequences", "new tokens", "kstp s", "kstp tokens/s", "generate tokens/s", "kstp / generate",
                 f"over {windows[0]} sequences"], rows)
    return {"figures": figures, "device": name}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    if not r:
        return "gpu: skipped (no CUDA GPU)"
    parts = [f"{w}: {f['kstp']:,.0f} tokens/s ({f['kstp'] / f['plain']:.2f}x generate)"
             for w, f in r["figures"].items()]
    return f"gpu ({r['device']}): the hf backend through the run engine, " + "; ".join(parts)
