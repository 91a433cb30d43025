"""(i) ``kstp explore`` at XES3G5M scale: every page kind's server time and time to a drawn page in Chromium.

Input: the embedded graph of the real Coherence Map and annotation map (4,118 questions, the
1,234,207 strict Eq. 1 pairs), the synthetic log of 18,066 learners and about 5.4 M answers
(``benchmarks.common.synthetic_log``) with PSR written back, and a model run of one sample
per question (4,118 Responses, ANSWERED edges) written through kstp's run bookkeeping.

kstp: the explorer served in this process (uvicorn in a thread, the graph read-only), after
its warm-up (what ``kstp explore`` computes before it serves; timed apart). Per page kind,
the server time of the first request (cold: what a page keeps per entity is computed then)
and the median of five more (``Server-Timing``), and the time to a drawn
page in headless Chromium (Navigation Timing: from the request to the end of the load
event, the SVG drawn by then; median of three). Targets (issue 21): <= 300 ms server time
and <= 1 s to a drawn page, every page.

Baseline, in the same run: the command a user would run for the same figures without the
explorer (``kstp db stats``, ``kst fringe``, ``runs show``, ...), as a process, wall time;
the ratio is the command's time over the page's warm server time. The figures are checked
equal (a ``PROBLEM:`` line otherwise).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pandas as pd

from benchmarks.common import (
    DATASET,
    REPO,
    banner,
    build_item_graph,
    fmt_int,
    fmt_ratio,
    fmt_s,
    print_table,
    sizes,
    synthetic_log,
    workdir,
)

TARGET_SERVER_S, TARGET_BROWSER_S = 0.300, 1.0
MODEL = "bench-model"
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def _build(path: Path, quick: bool) -> dict:
    """The graph: maps, synthetic answers, Eq. 1, PSR written back, a model run; returns the ids the pages use."""
    from kstp.evaluators.psr import evaluate_dataset
    from kstp.graph.structures import derive_question_prerequisites
    from kstp.inference.runs import write_responses
    from kstp.loaders.responses import write_answers

    size = sizes(quick)
    log = synthetic_log(size.learners, size.min_answers, size.max_answers)
    store = build_item_graph(path)
    write_answers(store, DATASET, pd.DataFrame({"learner": log.learner.astype(str), "item": log.question.astype(str),
                                                "correct": log.correct, "timestamp": None}), "synthetic")
    derive_question_prerequisites(store, DATASET, "strict")
    evaluate_dataset(store, DATASET)
    questions = store.frame("dataset_questions", {"dataset": DATASET})["questionId"].tolist()
    run_id, learner = f"answers:{MODEL}:{DATASET}:bench", f"model:{MODEL}"
    store.write_nodes("Run", pd.DataFrame([{"id": run_id, "evaluator": "answers", "model": MODEL, "dataset": DATASET,
                                            "status": "finished", "requested": len(questions),
                                            "completed": len(questions), "failed": 0, "accuracy": 0.5}]))
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": MODEL}]))
    correct = [i % 2 == 0 for i in range(len(questions))]
    write_responses(store, run_id, learner, pd.DataFrame({
        "id": [f"bench:{q}" for q in questions], "question": questions, "sampleIndex": 0, "seed": 42,
        "text": [f"Step 1 ... so \\boxed{{{i}}}" for i in range(len(questions))],
        "extracted": [str(i) for i in range(len(questions))], "correct": correct,
        "verdict": ["correct" if c else "wrong answer" for c in correct]}))
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        {"from_id": learner, "to_id": questions, "correct": correct, "runId": run_id}))
    store.close()
    return {"run": run_id, "sample": f"bench:{questions[0]}", "learner": f"{DATASET}:{int(log.learner[0])}",
            "learners": log.n_learners, "answers": len(log)}


def _serve(graph: str):
    import uvicorn

    from kstp.explore.app import create_app
    from kstp.explore.pages import Explorer
    from kstp.explore.server import bind
    from kstp.graph.factory import open_store

    store = open_store(graph, read_only=True)
    sock = bind("127.0.0.1", 0)
    explorer = Explorer(store, graph)
    began = time.perf_counter()
    explorer.warm()  # what kstp explore does before it serves
    print(f"warm-up before serving (figures, sizes, depths, drawings kept for the process): "
          f"{fmt_s(time.perf_counter() - began)} s", flush=True)
    server = uvicorn.Server(uvicorn.Config(create_app(explorer), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return server, thread, store, f"http://127.0.0.1:{sock.getsockname()[1]}/"


def _server_seconds(url: str) -> tuple[float, str]:
    with urllib.request.urlopen(url, timeout=600) as response:
        body = response.read().decode()
        timing = response.headers.get("Server-Timing", "")
    return float(re.search(r"dur=([0-9.]+)", timing).group(1)) / 1000, body


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000", f"--user-data-dir={os.environ.get('TMPDIR', '/tmp')}/kstp-bench-chromium"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def _drawn_seconds(driver, url: str) -> float:
    driver.get(url)
    entry = driver.execute_script("const e = performance.getEntriesByType('navigation')[0];"
                                  "return [e.startTime, e.loadEventEnd, document.querySelectorAll('svg').length]")
    return (entry[1] - entry[0]) / 1000


def _command(graph: str, *args: str) -> tuple[float, object]:
    began = time.perf_counter()
    done = subprocess.run([str(Path(sys.executable).parent / "kstp"), "--graph", graph, *args, "--json"], cwd=REPO,
                          capture_output=True, text=True)
    wall = time.perf_counter() - began
    return wall, json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else done.stderr.strip()


def main(quick: bool = False) -> dict:
    banner(f"(i) kstp explore at XES3G5M scale{' [quick]' if quick else ''}")
    from kstp.explore.pages import slug

    with workdir("explore") as tmp:
        began = time.perf_counter()
        ids = _build(tmp / "graph", quick)
        graph = f"ladybug:{tmp / 'graph'}"
        print(f"inputs: {fmt_int(ids['learners'])} learners, {fmt_int(ids['answers'])} answers, a model run of "
              f"4,118 samples; graph built in {fmt_s(time.perf_counter() - began)} s", flush=True)
        learner, run = ids["learner"], ids["run"]
        pages = [
            ("overview", "index.html", ("db", "stats")),
            ("framework", "framework/ccss.html", ("kst", "depth", "--framework", "ccss")),
            ("concept", f"concept/{slug('ccss:142')}.html", ("query", "concept_ancestors", "-p", "conceptId=ccss:142")),
            ("dataset", f"dataset/{DATASET}.html", ("kst", "space", "--dataset", DATASET)),
            ("dataset, page 200 by PSR", f"dataset/{DATASET}.html?sort=psrMicro&desc=1&page=200",
             ("query", "dataset_learner_figures", "-p", f"dataset={DATASET}")),
            ("learner", f"learner/{slug(learner)}.html", ("kst", "check", "--dataset", DATASET, "--state",
                                                          "placeholder")),
            ("run", f"run/{slug(run)}.html", ("runs", "show", run)),
            ("run, wrong samples, page 20", f"run/{slug(run)}.html?show=wrong&page=20", ("runs", "show", run)),
            ("compare a learner and the model", f"compare/{slug(learner)}/{slug('model:' + MODEL)}.html",
             ("query", "learner_answers", "-p", f"learnerId={learner}")),
            ("sample", f"sample/{slug(ids['sample'])}.html", ("query", "run_samples", "-p", f"runId={run}")),
            ("query list", "query.html", ("query", "--list")),
            ("registered query", "query/concept_ancestors.html?run=1&conceptId=ccss%3A142",
             ("query", "concept_ancestors", "-p", "conceptId=ccss:142")),
            ("ad-hoc Cypher", "query.html?cypher=MATCH%20(l%3ALearner)%20RETURN%20l.kind%20AS%20kind%2C%20count(*)"
             "%20AS%20n", ("query", "learner_kinds")),
            ("PSR distribution (reads every answer)", f"psr/{DATASET}.html", ("evaluate", "psr", "--dataset",
                                                                              DATASET)),
            ("PSR per-learner CSV (the scatter's points)", f"psr/{DATASET}.csv", ("evaluate", "psr", "--dataset",
                                                                                  DATASET, "--no-write")),
        ]
        server, thread, store, url = _serve(graph)
        state = ",".join(store.frame("knowledge_state", {"dataset": DATASET, "learnerId": learner})["questionId"])
        pages = [(n, p, tuple(state if a == "placeholder" else a for a in c)) for n, p, c in pages]
        driver = _browser()
        rows, results, problems, bodies = [], {}, [], {}
        try:
            for name, path, _ in pages:
                cold, body = _server_seconds(url + path)
                bodies[name] = body
                warm = statistics.median(_server_seconds(url + path)[0] for _ in range(5))
                drawn = 0.0 if path.endswith(".csv") else statistics.median(  # a CSV is downloaded, not drawn
                    _drawn_seconds(driver, url + path) for _ in range(3))
                if "<h1>Not found" in body or "<h1>Refused" in body:
                    problems.append(f"{name}: the page is an error page")
                results[name] = {"cold": cold, "warm": warm, "drawn": drawn}
                rows.append([name, fmt_s(cold), fmt_s(warm), fmt_s(drawn)])
                print(f"  {name}: server {fmt_s(cold)} s cold, {fmt_s(warm)} s warm; drawn {fmt_s(drawn)} s",
                      flush=True)
        finally:
            driver.quit()
            server.should_exit = True
            thread.join(30)
            store.close()
        outputs = {}
        for (name, _, command), row in zip(pages, rows, strict=True):
            wall, outputs[name] = _command(graph, *command)
            results[name]["command"] = wall
            row += [" ".join(("kstp", *command))[:60], fmt_s(wall), fmt_ratio(wall / results[name]["warm"])]
            if isinstance(outputs[name], str) and name not in ("learner", "dataset"):  # both refuse on this graph
                problems.append(f"{name}: the baseline command failed: {outputs[name][:200]}")
        problems += _compare(bodies, outputs)
    print_table(["page", "server cold", "server warm", "drawn (Chromium)", "same figures by command", "command s",
                 "command/page"], rows)
    slowest = max(r["warm"] for n, r in results.items() if not n.startswith("PSR distribution"))
    drawn = max(r["drawn"] for n, r in results.items() if not n.startswith("PSR"))
    print(f"targets: every page <= {TARGET_SERVER_S * 1000:.0f} ms server time (warm; the PSR distribution page "
          f"apart): slowest {slowest * 1000:.0f} ms, {'met' if slowest <= TARGET_SERVER_S else 'MISSED'}; "
          f"<= {TARGET_BROWSER_S:.0f} s to a drawn page: slowest {drawn:.2f} s, "
          f"{'met' if drawn <= TARGET_BROWSER_S else 'MISSED'}")
    for problem in problems:
        print("PROBLEM:", problem)
    return {"pages": results, "problems": problems, "slowest": slowest, "drawn": drawn}


def _figure(html: str, pattern: str) -> str | None:
    found = re.search(pattern, html, re.S)
    return found.group(1) if found else None


def _compare(bodies: dict[str, str], outputs: dict[str, object]) -> list[str]:
    """The pages' figures against the commands' JSON (or their one-line refusal)."""
    problems = []
    stats = outputs["overview"]
    want = next(d for d in stats["datasets"] if d["datasetId"] == DATASET)
    got = _figure(bodies["overview"], rf'data-key="{DATASET}">.*?data-value="\d+".*?data-value="\d+".*?'
                  r'data-value="(\d+)"')
    if got != str(want["learners"]):
        problems.append(f"overview learners {got} vs db stats {want['learners']}")
    bound = _figure(bodies["dataset"], r'id="space-states">([^<]*)<')
    if not bound or "at least 2^" not in bound or bound.split("at least ")[1][:12] not in str(outputs["dataset"]):
        problems.append(f"dataset space {bound!r} vs kst space {str(outputs['dataset'])[:120]!r}")
    shown = outputs["run"]["run"]
    if _figure(bodies["run"], r'id="run-id">([^<]*)<') != shown["id"] or \
            f'data-value="{shown["completed"]}"' not in bodies["run"]:
        problems.append("run page identity differs from kstp runs show")
    psr = next(r for r in outputs["PSR distribution (reads every answer)"] if r["learner"] == "human learners")
    micro = _figure(bodies["PSR distribution (reads every answer)"], r'class="psrMicro"><span class="fig" '
                    r'data-value="([^"]+)"')
    if micro is None or abs(float(micro) - psr["psrMicro"]) > 1e-12:
        problems.append(f"PSR page micro {micro} vs evaluate psr {psr['psrMicro']}")
    problems += _compare_pictures(bodies, outputs)
    return problems


def _compare_pictures(bodies: dict[str, str], outputs: dict[str, object]) -> list[str]:
    """The PSR page's pictures against its CSV and ``evaluate psr``: the scatter holds every learner with a PSR
    (humans counted in cells at full scale, drawn as points under 3,000 with ``--quick``; models as points); the
    CSV has a row per learner."""
    import io

    problems = []
    csv = pd.read_csv(io.StringIO(bodies["PSR per-learner CSV (the scatter's points)"]))
    humans = sum(r["learners"] for r in outputs["PSR per-learner CSV (the scatter's points)"]
                 if r["learner"] == "human learners")
    if len(csv[csv["kind"] == "human"]) != humans:
        problems.append(f"PSR CSV has {len(csv[csv['kind'] == 'human'])} human rows, evaluate psr {humans}")
    page = bodies["PSR distribution (reads every answer)"]
    scatter = page.split('id="psr-scatter"', 1)[-1].split("</svg>", 1)[0]
    # past 3,000 points the humans are counted in cells (data-count), below it each is a circle (--quick)
    counted = (sum(int(c) for c in re.findall(r'data-count="(\d+)"', scatter))
               + len(re.findall(r'<circle class="point human"', scatter)))
    placed = csv[csv["accuracy"].notna() & csv["psrMicro"].notna()]
    if counted != int((placed["kind"] == "human").sum()):
        problems.append(f"PSR scatter counts {counted} humans, the CSV {int((placed['kind'] == 'human').sum())}")
    for name in ("psr-questions", "psr-distribution"):
        if f'id="{name}"' not in page:
            problems.append(f"PSR page lacks its {name} chart")
    return problems


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    ratios = [p["command"] / p["warm"] for p in r["pages"].values() if p.get("command") and p["warm"]]
    return (f"explore: slowest page {r['slowest'] * 1000:.0f} ms server (warm), {r['drawn']:.2f} s drawn; "
            f"command/page median {fmt_ratio(statistics.median(ratios)) if ratios else '-'}; "
            f"problems: {len(r['problems'])}")


if __name__ == "__main__":
    main()
