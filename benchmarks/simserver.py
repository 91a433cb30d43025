"""A simulated OpenAI-compatible server that batches continuously, as vLLM does: the baseline host of
``python -m benchmarks inference``.

    python -m benchmarks.simserver PORT [--cap 256] [--step-ms 10] [--slope-us 30] [--model NAME]

Each request waits until one of ``cap`` sequence slots is free, then decodes one token per
engine step together with every other running sequence; a step takes ``step-ms`` plus
``slope-us`` per running sequence (a GPU's step grows slowly with the batch). A reply's
length is drawn per prompt from a log-normal around 300 tokens (the same prompt, the same
length, whoever asks) and capped at ``max_tokens``; its text is that many words and a
boxed answer, right for about half of the questions (the gold is in the question). ``GET
/stats`` returns the time-weighted mean of the sequences running while any request was
in the engine, and the requests served; ``POST /reset`` starts the figures again. With ``--model``
``GET /v1/models`` lists that model (as vLLM's server does); without it, it answers 404.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import math
import random
import re
import time
from collections import deque

#: Median reply length in tokens and the log-normal's sigma.
MEDIAN_TOKENS, SIGMA = 300, 0.5


def reply_tokens(prompt: str, max_tokens: int) -> int:
    """The reply length of ``prompt``: log-normal around :data:`MEDIAN_TOKENS`, the same for every client."""
    rng = random.Random(hashlib.sha256(prompt.encode()).digest())
    return max(8, min(max_tokens, int(rng.lognormvariate(math.log(MEDIAN_TOKENS), SIGMA))))


class Engine:
    """Continuous batching: ``cap`` slots, one token per step for every running sequence."""

    def __init__(self, cap: int, step_s: float, slope_s: float):
        self.cap, self.step_s, self.slope_s = cap, step_s, slope_s
        self.waiting: deque = deque()
        self.running: list = []
        self.wake = asyncio.Event()
        self.reset()

    def reset(self) -> None:
        self.area = self.busy = 0.0
        self.served = 0

    async def generate(self, tokens: int) -> None:
        done = asyncio.get_running_loop().create_future()
        self.waiting.append([tokens, done])
        self.wake.set()
        await done

    async def run(self) -> None:
        while True:
            while self.waiting and len(self.running) < self.cap:
                self.running.append(self.waiting.popleft())
            if not self.running:
                self.wake.clear()
                await self.wake.wait()
                continue
            start = time.perf_counter()
            await asyncio.sleep(self.step_s + self.slope_s * len(self.running))
            took = time.perf_counter() - start
            self.area += len(self.running) * took
            self.busy += took
            for sequence in self.running:
                sequence[0] -= 1
            for sequence in [s for s in self.running if s[0] <= 0]:
                self.running.remove(sequence)
                sequence[1].set_result(None)
                self.served += 1


def app(engine: Engine, model: str | None = None):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        prompt = "\n".join(str(m.get("content")) for m in body.get("messages", []))
        tokens = reply_tokens(prompt, int(body.get("max_tokens") or 1024))
        await engine.generate(tokens)
        gold = re.findall(r"gold (\d+)", prompt)
        answer = gold[-1] if gold and int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 2 else "-1"
        text = " ".join(["step"] * (tokens - 6)) + f" so the answer is \\boxed{{{answer}}}."
        return JSONResponse({"id": "sim", "object": "chat.completion", "created": 0, "model": body.get("model"),
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
                             "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": tokens,
                                       "total_tokens": len(prompt.split()) + tokens}})

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse({"meanRunning": engine.area / engine.busy if engine.busy else 0.0,
                             "busyS": engine.busy, "served": engine.served})

    async def reset(request: Request) -> JSONResponse:
        engine.reset()
        return JSONResponse({})

    async def models(request: Request) -> JSONResponse:
        if model is None:
            return JSONResponse({"error": {"message": "not found"}}, status_code=404)
        return JSONResponse({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "sim"}]})

    @contextlib.asynccontextmanager
    async def lifespan(app):
        task = asyncio.get_running_loop().create_task(engine.run())
        yield
        task.cancel()

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/stats", stats),
                             Route("/v1/models", models), Route("/reset", reset, methods=["POST"])],
                     lifespan=lifespan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--cap", type=int, default=256)
    parser.add_argument("--step-ms", type=float, default=10.0)
    parser.add_argument("--slope-us", type=float, default=30.0)
    parser.add_argument("--model", help="the model GET /v1/models lists (default: none, 404)")
    args = parser.parse_args()
    import uvicorn

    engine = Engine(args.cap, args.step_ms / 1000, args.slope_us / 1e6)
    uvicorn.run(app(engine, args.model), host="127.0.0.1", port=args.port, log_level="warning", backlog=2048)


if __name__ == "__main__":
    main()
