"""The run engine against a continuously batching server (issue 31), ratios measured in one run.

(a) The whole run loop, ``kstp evaluate answers``' own path (:func:`kstp.evaluators.answers.evaluate`: stream
    the requests, store the replies in groups, grade them in the grading process, write the verdicts and
    the ANSWERED edges), against a plain asyncio client (the openai SDK and a semaphore, nothing stored)
    with the same window on the same prompts, both against :mod:`benchmarks.simserver`: a simulated
    OpenAI-compatible server that decodes up to 256 sequences together, reply lengths log-normal around 300
    tokens. Printed: wall time, the ratio, the mean sequences running on the server over the client's wall
    time, and the run loop's CPU seconds per 1,000 completions (kstp's process and its grader). Targets:
    kstp within 1.1x of the plain client at a window of 256 on 512 questions; the default settings (no
    ``--concurrency``) keep at least 24 sequences running against a server on this machine.
(b) vLLM offline: the run's requests in one stream (``VLLMBackend.stream``) against one call per prompt,
    and the most requests the engine held at once. Needs vLLM and a converted model
    (``KSTP_BENCH_VLLM_MODEL``, e.g. after ``make test-vllm``: ``.kstp/models/smollm2-hf``); skipped with a
    note otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pandas as pd

from benchmarks.common import REPO, banner, fmt_ratio, fmt_s, print_table, workdir

__all__ = ["main", "summary"]

PROMPTS = [[{"role": "user", "content": f"What is {a} + {b}? Put the final answer in \\boxed{{}}."}]
           for a, b in zip(range(3, 19), range(11, 27), strict=True)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _SimServer:
    """:mod:`benchmarks.simserver` in a process of its own (its CPU is not the client's)."""

    def __init__(self, *options: str):
        self.port = _free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "benchmarks.simserver", str(self.port), *options],
                                        cwd=REPO)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.stats()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the simulated server did not start")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=5) as reply:
            return json.loads(reply.read())

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{self.port}/reset", method="POST"),
                               timeout=5).close()

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def _plain(base_url: str, chats: list, window: int, max_tokens: int) -> float:
    """A plain asyncio client: every chat once, ``window`` in flight, nothing kept. Seconds."""
    import openai

    async def run() -> None:
        gate = asyncio.Semaphore(window)
        async with openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, timeout=600) as client:
            async def one(messages):
                async with gate:
                    reply = await client.chat.completions.create(model="sim", messages=messages, max_tokens=max_tokens,
                                                                 temperature=0.6, top_p=0.95, seed=42)
                    assert reply.choices[0].message.content

            await asyncio.gather(*(one(m) for m in chats))

    start = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - start


def _dataset(store, n: int) -> None:
    """``n`` one-line questions with their gold answer in the text (the simulated server reads it)."""
    ids = [f"sim:q{i}" for i in range(n)]
    store.write_nodes("Dataset", pd.DataFrame([{"id": "sim"}]))
    store.write_nodes("Question", pd.DataFrame({
        "id": ids, "localId": [f"q{i}" for i in range(n)], "position": list(range(n)),
        "answer": [str(i % 97) for i in range(n)],
        "text": [f"Question {i}: what is the gold {i % 97}?" for i in range(n)]}))
    store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame({"from_id": ids, "to_id": "sim"}))


def _kstp(store, base_url: str, window: int | None, model: str) -> dict:
    """One ``answers`` run through the run engine; wall seconds, CPU seconds (kstp, grader), completions."""
    from kstp.evaluators import answers
    from kstp.inference.backend import Sampling
    from kstp.inference.backends.openai_compat import OpenAIBackend
    from kstp.inference.grader import shared_grader

    backend = OpenAIBackend(model, base_url=base_url, concurrency=window)
    grader_before, cpu_before = shared_grader().cpu_seconds(), time.process_time()
    start = time.perf_counter()
    result = answers.evaluate(store, backend, "sim", Sampling(max_tokens=1024))
    wall = time.perf_counter() - start
    summary = result.summary()
    return {"wall": wall, "cpu": time.process_time() - cpu_before,
            "grader": shared_grader().cpu_seconds() - grader_before, "completions": result.generated,
            "window": backend.window, "accuracy": summary["accuracy"], "pending": result.pending}


def _run_loop(quick: bool) -> dict:
    from kstp.evaluators import answers
    from kstp.graph.ladybug import LadybugStore

    n, window = (64, 32) if quick else (512, 256)
    server = _SimServer()
    try:
        with workdir("inference") as tmp:
            store = LadybugStore(tmp / "graph")
            store.ensure_schema()
            _dataset(store, n)
            questions = store.frame("dataset_questions", {"dataset": "sim"})
            chats = [answers.build_prompt(t) for t in questions["text"]]
            figures = {}
            for name, run in (("plain", lambda: _plain(server.base_url, chats, window, 1024)),
                              ("kstp", lambda: _kstp(store, server.base_url, window, "sim-a")),
                              ("default", lambda: _kstp(store, server.base_url, None, "sim-b"))):
                server.reset()
                started = time.perf_counter()
                got = run()
                wall = time.perf_counter() - started
                stats = server.stats()
                figures[name] = {**(got if isinstance(got, dict) else {}), "wall": wall,
                                 "running": stats["meanRunning"] * stats["busyS"] / wall, "served": stats["served"]}
            store.close()
    finally:
        server.close()
    plain, kstp, default = figures["plain"], figures["kstp"], figures["default"]
    per_k = {k: 1000 * (f["cpu"] + f["grader"]) / max(1, f["completions"]) for k, f in (("kstp", kstp),
                                                                                      ("default", default))}
    print_table(["client", "questions", "window", "seconds", "ratio", "running (mean)", "CPU s / 1,000"],
                [["plain asyncio client", str(n), str(window), fmt_s(plain["wall"]), "baseline",
                  f"{plain['running']:.1f}", "-"],
                 ["kstp evaluate answers", str(n), str(kstp["window"]), fmt_s(kstp["wall"]),
                  f"{kstp['wall'] / plain['wall']:.2f}x the plain", f"{kstp['running']:.1f}",
                  f"{per_k['kstp']:.2f} ({1000 * kstp['grader'] / max(1, kstp['completions']):.2f} grading)"],
                 ["kstp, default settings", str(n), str(default["window"]), fmt_s(default["wall"]),
                  f"{default['wall'] / plain['wall']:.2f}x the plain", f"{default['running']:.1f}",
                  f"{per_k['default']:.2f}"]])
    for name, f in (("kstp", kstp), ("default", default)):
        if f["completions"] != n or f["pending"]:
            print(f"PROBLEM: {name} stored {f['completions']} of {n} completions ({f['pending']} pending)")
        if not 0.3 < f["accuracy"] < 0.7:
            print(f"PROBLEM: {name}'s accuracy {f['accuracy']:.3f}; the server answers about half right")
    return {"ratio": kstp["wall"] / plain["wall"], "running": kstp["running"], "plain_running": plain["running"],
            "default_running": default["running"], "cpu_per_1000": per_k["kstp"], "questions": n, "window": window,
            "default_window": default["window"]}


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
    streamed = backend.generate(prompts, sampling)
    one_stream = time.perf_counter() - start
    held = backend.held_most
    start = time.perf_counter()
    single = [backend.generate([p], sampling)[0] for p in prompts]
    one_by_one = time.perf_counter() - start
    backend.close()
    print_table(["vLLM offline", "prompts", "seconds", "ratio"],
                [["one call per prompt", str(len(prompts)), fmt_s(one_by_one), "baseline"],
                 ["one stream", str(len(prompts)), fmt_s(one_stream), fmt_ratio(one_by_one / one_stream)]])
    same = [r[0].text for r in streamed] == [r[0].text for r in single]
    print(f"the engine held {held} of {len(prompts)} requests at once; same texts either way: "
          f"{'yes' if same else 'no'}")
    return {"ratio": one_by_one / one_stream, "held": held}


def main(quick: bool = False) -> dict:
    banner("(a) the run engine against a continuously batching server")
    loop = _run_loop(quick)
    banner("(b) vLLM offline: one stream against one call per prompt")
    vllm_result = _vllm(quick)
    return {**loop, "vllm_ratio": vllm_result and vllm_result["ratio"]}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    vllm_ratio = fmt_ratio(r["vllm_ratio"]) if r["vllm_ratio"] else "skipped"
    met = "met" if r["ratio"] <= 1.1 else "NOT met"
    return (f"inference: kstp / plain client {r['ratio']:.2f}x at window {r['window']} on {r['questions']} questions "
            f"(target <= 1.1x: {met}); sequences running {r['running']:.1f} (plain {r['plain_running']:.1f}), "
            f"default window {r['default_window']}: {r['default_running']:.1f} (target >= 24); run loop "
            f"{r['cpu_per_1000']:.2f} CPU s per 1,000 completions; vLLM one stream / per prompt {vllm_ratio}")
