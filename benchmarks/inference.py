"""Inference and run bookkeeping (issue 3), ratios measured in one run.

(a) The OpenAI-compatible path with 8 requests in flight against one at a time, on the
    local SmolLM2-135M llama.cpp server with 8 decoding slots (same prompts, seeds and
    lengths; the texts are checked equal, since each sample has its own seed).
(b) vLLM: all prompts in one batched ``generate`` against one call per prompt. Needs
    vLLM and a converted model (``KSTP_BENCH_VLLM_MODEL``, e.g. after ``make test-vllm``:
    ``.kstp/models/smollm2-hf``); skipped with a note otherwise.
(c) Storing and grading 1,000 completions (Response nodes with their GAVE, TO, IN_RUN
    edges, the grade and its write-back) on LadybugDB, per completion, against the
    local model's generation time per completion from (a).
"""

from __future__ import annotations

import os
import time

import pandas as pd

from benchmarks.common import banner, fmt_ratio, fmt_s, print_table, workdir

__all__ = ["main", "summary"]

PROMPTS = [[{"role": "user", "content": f"What is {a} + {b}? Put the final answer in \\boxed{{}}."}]
           for a, b in zip(range(3, 19), range(11, 27), strict=True)]


def _generation(quick: bool) -> dict:
    from kstp.inference.backend import Sampling
    from kstp.inference.backends.local import LocalServer
    from kstp.inference.backends.openai_compat import OpenAIBackend

    prompts = PROMPTS[:4] if quick else PROMPTS
    sampling = Sampling(max_tokens=16 if quick else 48, seed=7)
    with LocalServer("smollm2", threads=1, context=512, parallel=8) as server:
        times, texts = {}, {}
        for concurrency in (1, 8):
            backend = OpenAIBackend("smollm2", base_url=server.base_url, concurrency=concurrency)
            start = time.perf_counter()
            rows = backend.generate(prompts, sampling)
            times[concurrency] = time.perf_counter() - start
            texts[concurrency] = [row[0].text for row in rows]
    print_table(["OpenAI path, local server (8 slots)", "prompts", "seconds", "ratio"],
                [["one request at a time", str(len(prompts)), fmt_s(times[1]), "baseline"],
                 ["8 in flight", str(len(prompts)), fmt_s(times[8]), fmt_ratio(times[1] / times[8])]])
    same = texts[1] == texts[8]
    if not same:
        print("note: texts differ between the two runs (llama.cpp batches slots together, which can change "
              "floating-point sums)")
    return {"ratio": times[1] / times[8], "per_completion_s": times[8] / len(prompts), "same_texts": same}


def _vllm(quick: bool) -> dict | None:
    model = os.environ.get("KSTP_BENCH_VLLM_MODEL")
    try:
        import vllm  # noqa: F401
    except ImportError:
        print("vLLM is not installed in this environment: skipped (run with .venv-vllm/bin/python -m benchmarks "
              "inference and KSTP_BENCH_VLLM_MODEL=.kstp/models/smollm2-hf)")
        return None
    if not model:
        print("KSTP_BENCH_VLLM_MODEL is not set: skipped")
        return None
    from kstp.inference.backend import Sampling
    from kstp.inference.backends.vllm_offline import VLLMBackend

    prompts = PROMPTS[:4] if quick else PROMPTS
    sampling = Sampling(max_tokens=16 if quick else 48, seed=7)
    backend = VLLMBackend(model, seed=7, max_model_len=1024, dtype="float32")
    start = time.perf_counter()
    batched = backend.generate(prompts, sampling)
    one_batch = time.perf_counter() - start
    start = time.perf_counter()
    single = [backend.generate([p], sampling)[0] for p in prompts]
    one_by_one = time.perf_counter() - start
    backend.close()
    print_table(["vLLM offline", "prompts", "seconds", "ratio"],
                [["one call per prompt", str(len(prompts)), fmt_s(one_by_one), "baseline"],
                 ["one batched call", str(len(prompts)), fmt_s(one_batch), fmt_ratio(one_by_one / one_batch)]])
    same = [r[0].text for r in batched] == [r[0].text for r in single]
    print(f"same texts either way: {'yes' if same else 'no'}")
    return {"ratio": one_by_one / one_batch}


def _store_and_grade(n: int) -> dict:
    from kstp.evaluators.answers import score_item
    from kstp.graph.ladybug import LadybugStore
    from kstp.inference.backend import Completion, Sampling
    from kstp.inference.runs import RunSpec, open_run, write_responses

    questions = [f"b:q{i}" for i in range(n // 4)]
    with workdir("runs") as tmp:
        store = LadybugStore(tmp / "graph")
        store.ensure_schema()
        store.write_nodes("Dataset", pd.DataFrame([{"id": "b"}]))
        store.write_nodes("Question", pd.DataFrame({"id": questions, "dataset": "b", "answer": "12"}))
        store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame({"from_id": questions,
                                                                                     "to_id": "b"}))
        store.write_nodes("Learner", pd.DataFrame([{"id": "model:bench", "kind": "model"}]))
        run_id, _ = open_run(store, RunSpec("answers", "1.0", "bench", "local", "b", Sampling(n=4), "t"))
        texts = ["First 5 + 6 = 11, then add 1, so \\boxed{12}.", "The answer is 13.", "I am not sure.",
                 "We get $12.00$ in total."]
        completions = [(q, Completion(i, 42 + i, text=texts[i], finish_reason="stop")) for q in questions
                       for i in range(4)]
        start = time.perf_counter()
        rows = pd.DataFrame({"id": [f"k{j}" for j in range(len(completions))],
                             "question": [q for q, _ in completions],
                             "sampleIndex": [c.sample_index for _, c in completions],
                             "text": [c.text for _, c in completions]})
        write_responses(store, run_id, "model:bench", rows)
        stored = time.perf_counter() - start
        verdicts = [score_item(c, "12") for _, c in completions]
        graded = time.perf_counter() - start - stored
        store.write_nodes("Response", pd.DataFrame({"id": rows["id"], "correct": [v.correct for v in verdicts],
                                                    "verdict": [v.reason for v in verdicts]}))
        total = time.perf_counter() - start
        store.close()
    correct = sum(v.correct for v in verdicts)
    print_table(["store and grade", "completions", "seconds", "ms each"],
                [["write Responses + GAVE/TO/IN_RUN", str(len(completions)), fmt_s(stored),
                  f"{1000 * stored / len(completions):.2f}"],
                 ["grade (extract + compare)", str(len(completions)), fmt_s(graded),
                  f"{1000 * graded / len(completions):.2f}"],
                 ["all, with the grades written back", str(len(completions)), fmt_s(total),
                  f"{1000 * total / len(completions):.2f}"]])
    print(f"graded correct: {correct} of {len(completions)} (expected {len(completions) // 2})")
    return {"per_completion_s": total / len(completions), "correct_ok": correct == len(completions) // 2}


def main(quick: bool = False) -> dict:
    banner("(a) OpenAI-compatible path: concurrency 8 against sequential")
    generation = _generation(quick)
    banner("(b) vLLM offline: batched against one call per prompt")
    vllm_result = _vllm(quick)
    banner("(c) storing and grading completions")
    storing = _store_and_grade(200 if quick else 1000)
    share = storing["per_completion_s"] / generation["per_completion_s"]
    print(f"bookkeeping per completion is {share:.1%} of the local model's generation time per completion")
    return {"concurrency_ratio": generation["ratio"], "vllm_ratio": vllm_result and vllm_result["ratio"],
            "store_grade_ms": 1000 * storing["per_completion_s"], "share_of_generation": share,
            "correct_ok": storing["correct_ok"]}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    vllm_ratio = fmt_ratio(r["vllm_ratio"]) if r["vllm_ratio"] else "skipped"
    return (f"inference: concurrency 8 / sequential {fmt_ratio(r['concurrency_ratio'])}; vLLM batched / per "
            f"prompt {vllm_ratio}; store + grade {r['store_grade_ms']:.2f} ms per completion "
            f"({r['share_of_generation']:.1%} of generation){'' if r['correct_ok'] else '; PROBLEM: grades'}")
