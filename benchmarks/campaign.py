"""Several servers of one model (issue 45): the run engine's window spread over three simulated servers, and one
of them killed mid-run; ratios measured in one run.

Three :mod:`benchmarks.simserver` processes (continuous batching, up to 256 sequences each, reply lengths
log-normal around 300 tokens), each on a port of its own and listing the same model on ``/v1/models``. Every
run is ``kstp evaluate answers``' own path (:func:`kstp.evaluators.answers.evaluate`: stream, store, grade,
write the verdicts) with :class:`~kstp.inference.backends.openai_compat.OpenAIBackend` given the servers as a
list, a window of 256 per server.

(a) Baseline: 512 questions on one server. (b) 1,536 questions over the three: the same work per server,
    so the ideal ratio is 1.0x; target at most 1.15x the baseline.
(c) 1,536 questions over the three with one server killed (SIGKILL) once a third of the questions are
    answered: its requests in flight are asked of the others. Checked: every question answered exactly
    once (1,536 stored replies, none pending, and the answers the client counted per server equal to what
    the servers that lived say they served), the time within 1.6x the baseline.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

from benchmarks.common import banner, fmt_s, print_table, workdir
from benchmarks.inference import _dataset, _SimServer

__all__ = ["main", "summary"]

#: Requests in flight per server: each simulated server decodes up to this many sequences at once.
PER_SERVER = 256


def _cpu(pid: int) -> float:
    """CPU seconds process ``pid`` has used (Linux; 0 elsewhere)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run(store, urls: list[str], model: str, limit: int, window: int, servers=()) -> dict:
    """One ``answers`` run over ``urls``: wall seconds, what it stored, each server's figures, and CPU seconds
    (kstp's process with its grader; the servers')."""
    from kstp.evaluators import answers
    from kstp.inference.backend import Sampling
    from kstp.inference.backends.openai_compat import OpenAIBackend
    from kstp.inference.grader import shared_grader

    backend = OpenAIBackend(model, base_url=urls if len(urls) > 1 else urls[0], concurrency=window)
    cpu = time.process_time() + shared_grader().cpu_seconds()
    served = sum(_cpu(s.process.pid) for s in servers)
    start = time.perf_counter()
    result = answers.evaluate(store, backend, "sim", Sampling(max_tokens=1024), limit=limit)
    wall = time.perf_counter() - start
    stored = result.responses
    return {"wall": wall, "generated": result.generated, "pending": result.pending,
            "questions": int(stored["questionId"].nunique()), "replies": len(stored),
            "accuracy": result.summary()["accuracy"], "endpoints": backend.endpoint_figures,
            "cpu": time.process_time() + shared_grader().cpu_seconds() - cpu,
            "serverCpu": sum(_cpu(s.process.pid) for s in servers) - served}


def _plain(urls: list[str], chats: list, window: int) -> float:
    """A plain asyncio client (the openai SDK, a semaphore per server, request i to server i mod 3, nothing
    stored): what this machine allows. Seconds."""
    import openai

    async def run() -> None:
        clients = [openai.AsyncOpenAI(base_url=u, api_key="EMPTY", max_retries=0, timeout=600) for u in urls]
        gates = [asyncio.Semaphore(window) for _ in urls]

        async def one(i: int, messages) -> None:
            async with gates[i % len(urls)]:
                reply = await clients[i % len(urls)].chat.completions.create(
                    model="sim", messages=messages, max_tokens=1024, temperature=0.6, top_p=0.95, seed=42)
                assert reply.choices[0].message.content

        await asyncio.gather(*(one(i, m) for i, m in enumerate(chats)))
        for client in clients:
            await client.close()

    start = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - start


def _kill_after(servers: list[_SimServer], victim: _SimServer, answered: int, killed: dict) -> threading.Thread:
    """A thread that kills ``victim`` (SIGKILL) once the servers have served ``answered`` requests in all."""
    def watch() -> None:
        while True:
            served = {s.port: s.stats()["served"] for s in servers}
            if sum(served.values()) >= answered:
                killed["served"] = served[victim.port]  # what it had answered just before
                killed["at"] = time.perf_counter()
                victim.process.kill()
                victim.process.wait(10)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def main(quick: bool = False) -> dict:
    from kstp.graph.ladybug import LadybugStore

    per = 64 if quick else 512
    window = 32 if quick else PER_SERVER
    servers = [_SimServer("--cap", str(PER_SERVER), "--model", "sim") for _ in range(3)]
    urls = [s.base_url for s in servers]
    figures, problems = {}, []
    try:
        with workdir("campaign") as tmp:
            store = LadybugStore(tmp / "graph")
            store.ensure_schema()
            _dataset(store, 3 * per)
            banner("several servers of one model: 1 server x 1/3 of the questions, 3 servers x all")
            _run(store, urls, "sim-warm", 8, 8)  # the grading process started and everything imported: not timed
            from kstp.evaluators import answers

            questions = store.frame("dataset_questions", {"dataset": "sim"})
            chats = [answers.build_prompt(t) for t in questions["text"]]
            plain_one = _plain(urls[:1], chats[:per], window)
            plain_three = _plain(urls, chats[:3 * per], window)
            for server in servers:
                server.reset()
            figures["one"] = _run(store, urls[:1], "sim-one", per, window, servers)
            for server in servers:
                server.reset()
            figures["three"] = _run(store, urls, "sim-three", 3 * per, 3 * window, servers)
            served = [s.stats()["served"] for s in servers]
            counted = [e["completions"] for e in figures["three"]["endpoints"]]
            if served != counted:
                problems.append(f"the servers served {served}, the client counted {counted}")
            for server in servers:
                server.reset()
            killed: dict = {}
            watcher = _kill_after(servers, servers[1], per, killed)
            started = time.perf_counter()
            figures["killed"] = _run(store, urls, "sim-killed", 3 * per, 3 * window, servers)
            watcher.join(5)
            figures["killed"]["killedAtS"] = killed.get("at", started) - started
            lived = [s.stats()["served"] for i, s in enumerate(servers) if i != 1]
            counted = [e["completions"] for e in figures["killed"]["endpoints"]]
            if lived != [counted[0], counted[2]]:
                problems.append(f"the servers that lived served {lived}, the client counted {counted[0]}, "
                                f"{counted[2]}")
            if sum(counted) != 3 * per:
                problems.append(f"the client counted {sum(counted)} answers for {3 * per} questions")
            figures["killed"]["counted"], figures["killed"]["victimServed"] = counted, killed.get("served")
            store.close()
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.close()
    one, three, down = figures["one"], figures["three"], figures["killed"]
    for name, f, n in (("1 server", one, per), ("3 servers", three, 3 * per), ("3 servers, 1 killed", down, 3 * per)):
        if (f["questions"], f["replies"], f["pending"]) != (n, n, 0):
            problems.append(f"{name}: {f['replies']} replies to {f['questions']} of {n} questions, "
                            f"{f['pending']} pending")
        if not 0.3 < f["accuracy"] < 0.7:
            problems.append(f"{name}: accuracy {f['accuracy']:.3f}; the server answers about half right")
    rate = lambda f: " / ".join(f"{e['completionsPerS'] or 0:.0f}" for e in f["endpoints"]) or "-"  # noqa: E731
    cpu = lambda f: f"{f['cpu']:.1f} / {f['serverCpu']:.1f}"  # noqa: E731
    print_table(["run", "questions", "window", "seconds", "ratio", "completions/s per server", "failures",
                 "CPU s (kstp / servers)"],
                [["plain client, 1 server", str(per), str(window), fmt_s(plain_one), "-", "-", "-", "-"],
                 ["plain client, 3 servers", str(3 * per), str(3 * window), fmt_s(plain_three),
                  f"{plain_three / plain_one:.2f}x the plain 1", "-", "-", "-"],
                 ["kstp, 1 server", str(per), str(window), fmt_s(one["wall"]), "baseline",
                  f"{one['generated'] / one['wall']:.0f}", "-", cpu(one)],
                 ["kstp, 3 servers", str(3 * per), str(3 * window), fmt_s(three["wall"]),
                  f"{three['wall'] / one['wall']:.2f}x the baseline", rate(three),
                  " / ".join(str(e["failures"]) for e in three["endpoints"]), cpu(three)],
                 [f"kstp, 3 servers, #2 killed at {down['killedAtS']:.1f} s", str(3 * per), str(3 * window),
                  fmt_s(down["wall"]), f"{down['wall'] / one['wall']:.2f}x the baseline", rate(down),
                  " / ".join(str(e["failures"]) for e in down["endpoints"]), cpu(down)]])
    print(f"killed run: answers per server {down['counted']} = {sum(down['counted'])} for {3 * per} questions "
          f"(server 2 had finished {down['victimServed']} when it was killed); {down['replies']} stored, "
          f"{down['pending']} pending")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return {"ratio": three["wall"] / one["wall"], "killed_ratio": down["wall"] / one["wall"],
            "plain_ratio": plain_three / plain_one,
            "questions": 3 * per, "once": not problems, "baseline_s": one["wall"]}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    met = "met" if r["ratio"] <= 1.15 else "NOT met"
    killed = "met" if r["killed_ratio"] <= 1.6 and r["once"] else "NOT met"
    return (f"campaign: {r['questions']:,} questions over 3 servers / 1/3 of them on one {r['ratio']:.2f}x (target "
            f"<= 1.15x: {met}); one server killed a third of the way {r['killed_ratio']:.2f}x, every question "
            f"answered once: {'yes' if r['once'] else 'NO'} (target <= 1.6x: {killed}); a plain client 3 servers / 1 "
            f"{r['plain_ratio']:.2f}x")
