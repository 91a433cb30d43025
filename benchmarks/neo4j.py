"""(d) Neo4j against LadybugDB on the same work: ingest, PSR from the graph, Eq. 1 in pure Cypher.

Every step runs on both engines in the same run and the ratio is Neo4j's seconds over
Ladybug's (above 1: Neo4j is slower). Neo4j is a throw-away local server started for the
run (``tools/neo4j_server.py --home`` in the temporary folder, heap ``KSTP_NEO4J_HEAP``,
default 1g), so the shared development server keeps its data and the server's peak RSS is
this run's alone (``VmHWM`` of the JVM). kstp's steps run in fresh interpreters
(:func:`~benchmarks.common.run_isolated`) for their own peak RSS.

Both engines hold the Coherence Map and the first ``scale`` x 4,118 questions of the real
annotation map (at least 400, so that a learner can answer 400 distinct ones); then, on each:

- Eq. 1 in pure Cypher: the registered ``question_prerequisites`` query (strict); pair
  sets checked equal across engines. Its cost grows with the questions squared.
- ingest: the synthetic XES3G5M log over those questions (``scale`` x 18,066 learners,
  200-400 answers each; 5.4 M answers at scale 1) as a pyKT CSV through ``read_pykt`` +
  ``write_answers`` (Ladybug: ``COPY FROM``; Neo4j: batched ``UNWIND $rows MERGE``); then a
  re-run, which must change nothing.
- PSR: strict Eq. 1 derived and written (``derive_question_prerequisites``), then
  ``evaluate_dataset`` (reads ``answers`` and ``question_prerequisite_edges`` from the graph,
  scores, writes PSR back on the Learners); per-learner PSR checked equal across engines.
- PSR curve: ``evaluate_dataset`` again at 1x, 2x and 4x the learners (more learners of the
  same generator, another seed, ingested between the points), reading in batches of the 1x
  number of learners, so 1, 2 and 4 batches: seconds per 1,000 learners should stay flat
  and the step's peak RSS bounded by the batch. Both engines must agree at every point.

``--scale`` below 1 is for small machines (the full scale takes long on 2 shared cores);
the figures are reported with the scale they were taken at.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import (
    DATASET,
    FULL,
    REPO,
    SEED,
    PeakRss,
    annotation_map,
    banner,
    build_item_graph,
    fmt_bytes,
    fmt_int,
    fmt_ratio,
    fmt_s,
    print_table,
    run_isolated,
    synthetic_log,
    workdir,
)

__all__ = ["main", "summary"]

#: The PSR curve's points, in multiples of the scale's learners.
CURVE = (1, 2, 4)

DEFAULT_SCALE = 0.02
QUICK_SCALE = 0.02


# ---- the throw-away server -----------------------------------------------------------------
def _server(home: Path, command: str) -> str:
    done = subprocess.run([sys.executable, str(REPO / "tools" / "neo4j_server.py"), "--home", str(home), command],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"neo4j_server.py {command} failed: {done.stdout}{done.stderr}")
    return done.stdout.strip()


def _server_peak_rss(home: Path) -> int | None:
    """VmHWM of the server's JVM (bytes), read while it runs."""
    pid = (home / "run" / "neo4j.pid").read_text().strip()
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _location(home: Path) -> str:
    """The server's URI; its credentials go into this process's environment for the children."""
    pairs = dict(line.split("=", 1) for line in (home / "neo4j.env").read_text().splitlines() if "=" in line)
    os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"] = pairs["NEO4J_USER"], pairs["NEO4J_PASSWORD"]
    return pairs["KSTP_GRAPH"]


# ---- isolated steps ------------------------------------------------------------------------
def child_ingest(graph: str, csv: str, annotation: str) -> dict:
    """Graph setup and Eq. 1 in Cypher (timed), then ``read_pykt``, ``write_answers`` and its no-op re-run."""
    from kstp.loaders.responses import read_pykt, write_answers

    store = build_item_graph(graph, Path(annotation))
    start = time.perf_counter()
    pairs = store.frame("question_prerequisites", {"dataset": DATASET, "reflexive": False})
    eq1_s = time.perf_counter() - start
    questions = set(store.frame("dataset_questions", {"dataset": DATASET})["localId"])
    start = time.perf_counter()
    answers = read_pykt(csv, questions)
    read_s = time.perf_counter() - start
    with PeakRss() as peak:
        start = time.perf_counter()
        report = write_answers(store, DATASET, answers, Path(csv).name)
        write_s = time.perf_counter() - start
    start = time.perf_counter()
    again = write_answers(store, DATASET, answers, Path(csv).name)
    rerun_s = time.perf_counter() - start
    counts = store.frame("relationship_counts")
    edges = int(counts.loc[counts["type"] == "ANSWERED", "count"].sum())
    store.close()
    return {"eq1_s": eq1_s, "eq1_pairs": sorted(map(list, zip(pairs["fromId"], pairs["toId"], strict=True))),
            "read_s": read_s, "write_s": write_s, "rerun_s": rerun_s, "answers": len(answers), "edges": edges,
            "created": report.written["ANSWERED"].created, "rerun_unchanged": again.written["ANSWERED"].unchanged,
            "write_peak": peak.peak}


def child_psr(graph: str) -> dict:
    """Strict Eq. 1 derived and written, then PSR from the graph with write-back, timed apart."""
    from kstp.evaluators.psr import evaluate_dataset
    from kstp.graph.factory import open_store
    from kstp.graph.structures import derive_question_prerequisites

    store = open_store(graph)
    start = time.perf_counter()
    derived = derive_question_prerequisites(store, DATASET, "strict")
    derive_s = time.perf_counter() - start
    start = time.perf_counter()
    answers = store.frame("answers", {"dataset": DATASET})
    prerequisites = store.frame("question_prerequisite_edges", {"dataset": DATASET})
    read_s = time.perf_counter() - start
    with PeakRss() as peak:
        start = time.perf_counter()
        result = evaluate_dataset(store, DATASET)
        psr_s = time.perf_counter() - start
    store.close()
    learners = result.learners.sort_index()
    return {"derive_s": derive_s, "pairs": derived.edges, "read_s": read_s, "answers": len(answers),
            "prerequisites": len(prerequisites), "psr_s": psr_s, "psr_peak": peak.peak,
            "learners": learners.index.tolist(), "micro": learners["psrMicro"].fillna(-1.0).tolist()}


def child_add_learners(graph: str, answers: str) -> dict:
    """More learners' answers (a parquet of ``learner, item, correct``) through ``write_answers``."""
    import pandas as pd

    from kstp.graph.factory import open_store
    from kstp.loaders.responses import write_answers

    store = open_store(graph)
    frame = pd.read_parquet(answers).assign(timestamp=None)
    report = write_answers(store, DATASET, frame, Path(answers).name)
    store.close()
    return {"created": report.written["ANSWERED"].created}


def child_psr_batched(graph: str, batch: int) -> dict:
    """``evaluate_dataset`` with write-back, reading ``batch`` learners at a time; seconds, peak RSS."""
    from kstp.evaluators.psr import evaluate_dataset
    from kstp.graph.factory import open_store

    store = open_store(graph)
    with PeakRss() as peak:
        start = time.perf_counter()
        result = evaluate_dataset(store, DATASET, batch=batch)
        seconds = time.perf_counter() - start
    store.close()
    learners = result.learners.sort_index()
    return {"psr_s": seconds, "psr_peak": peak.peak, "learners": len(learners),
            "micro": learners["psrMicro"].fillna(-1.0).tolist()}


def _curve_stages(tmp: Path, learners: int, questions: list[str]) -> list[Path]:
    """Parquet files of the learners each later curve point adds, ids after the first ``learners``."""
    import pandas as pd

    extra = synthetic_log((CURVE[-1] - 1) * learners, FULL.min_answers, FULL.max_answers, seed=SEED + 1,
                          questions=questions)
    stages = []
    for before, after in zip(CURVE, CURVE[1:], strict=False):
        keep = (extra.learner >= (before - 1) * learners) & (extra.learner < (after - 1) * learners)
        path = tmp / f"curve_{after}x.parquet"
        pd.DataFrame({"learner": (extra.learner[keep] + learners).astype(str),
                      "item": extra.question[keep].astype(str), "correct": extra.correct[keep]}).to_parquet(path)
        stages.append(path)
    return stages


def _curve(graph: str, learners: int, stages: list[Path]) -> list[dict]:
    points = [run_isolated("benchmarks.neo4j:child_psr_batched", graph=graph, batch=learners)]
    for stage in stages:
        run_isolated("benchmarks.neo4j:child_add_learners", graph=graph, answers=str(stage))
        points.append(run_isolated("benchmarks.neo4j:child_psr_batched", graph=graph, batch=learners))
    return points


# ---- driver --------------------------------------------------------------------------------
def main(quick: bool = False, scale: float | None = None) -> dict:
    # Full XES scale is about an hour of Neo4j writes on a 2-core machine: 2 % unless asked.
    scale = scale if scale is not None else QUICK_SCALE if quick else DEFAULT_SCALE
    learners = max(1, round(FULL.learners * scale))
    mapping = annotation_map()
    questions = list(mapping)[:max(FULL.max_answers, round(len(mapping) * scale))]
    banner(f"(d) Neo4j vs LadybugDB, scale {scale:g}: {learners:,} learners, {len(questions):,} questions")
    with workdir("neo4j") as tmp:
        home = tmp / "neo4j-home"
        start = time.perf_counter()
        _server(home, "start")
        server_start_s = time.perf_counter() - start
        neo = _location(home)
        log = synthetic_log(learners, FULL.min_answers, FULL.max_answers, questions=questions)
        csv = tmp / "synthetic_pykt.csv"
        log.to_pykt_csv(csv)
        print(f"log: {fmt_int(log.n_learners)} learners, {fmt_int(len(log))} answers; throw-away Neo4j server "
              f"started in {fmt_s(server_start_s)} s", flush=True)
        del log
        subset = tmp / "annotation_subset.json"
        subset.write_text(json.dumps({q: [int(c) for c in mapping[q]] for q in questions}))
        result: dict[str, dict] = {"ladybug": {}, "neo4j": {}}
        try:
            for engine, graph in (("ladybug", f"ladybug:{tmp / 'graph'}"), ("neo4j", neo)):
                result[engine]["ingest"] = run_isolated("benchmarks.neo4j:child_ingest", graph=graph, csv=str(csv),
                                                        annotation=str(subset))
                print(f"{engine}: Eq. 1 Cypher {fmt_s(result[engine]['ingest']['eq1_s'])} s, ingest "
                      f"{fmt_s(result[engine]['ingest']['write_s'])} s", flush=True)
                result[engine]["psr"] = run_isolated("benchmarks.neo4j:child_psr", graph=graph)
                print(f"{engine}: derive {fmt_s(result[engine]['psr']['derive_s'])} s, PSR "
                      f"{fmt_s(result[engine]['psr']['psr_s'])} s", flush=True)
            stages = _curve_stages(tmp, learners, questions)
            for engine, graph in (("ladybug", f"ladybug:{tmp / 'graph'}"), ("neo4j", neo)):
                result[engine]["curve"] = _curve(graph, learners, stages)
                print(f"{engine}: PSR curve " + ", ".join(
                    f"{p['learners']:,} learners {fmt_s(p['psr_s'])} s" for p in result[engine]["curve"]), flush=True)
            server_peak = _server_peak_rss(home)
        finally:
            _server(home, "stop")
    return _report(result, scale, learners, len(questions), server_peak)


def _report(result: dict, scale: float, learners: int, n_questions: int, server_peak: int | None) -> dict:
    lb, nj = result["ladybug"], result["neo4j"]
    problems = []
    for engine, r in result.items():
        if not (r["ingest"]["edges"] == r["ingest"]["answers"] == r["ingest"]["created"]
                == r["ingest"]["rerun_unchanged"]):
            problems.append(f"{engine}: {r['ingest']['answers']:,} answers, {r['ingest']['edges']:,} edges, "
                            f"{r['ingest']['created']:,} created, re-run {r['ingest']['rerun_unchanged']:,} unchanged")
    if lb["ingest"]["edges"] != nj["ingest"]["edges"]:
        problems.append("the engines hold different numbers of ANSWERED edges")
    if lb["ingest"]["eq1_pairs"] != nj["ingest"]["eq1_pairs"]:
        problems.append(f"Eq. 1 Cypher: {len(lb['ingest']['eq1_pairs']):,} pairs on Ladybug, "
                        f"{len(nj['ingest']['eq1_pairs']):,} on Neo4j, not the same")
    if len(nj["ingest"]["eq1_pairs"]) != nj["psr"]["pairs"]:
        problems.append(f"Eq. 1: {len(nj['ingest']['eq1_pairs']):,} pairs in Cypher, {nj['psr']['pairs']:,} derived")
    if lb["psr"]["learners"] != nj["psr"]["learners"] or lb["psr"]["pairs"] != nj["psr"]["pairs"]:
        problems.append("PSR: the engines score different learners or prerequisite pairs")
    else:
        worst = float(np.max(np.abs(np.subtract(lb["psr"]["micro"], nj["psr"]["micro"])), initial=0.0))
        if worst > 1e-12:
            problems.append(f"PSR micro differs between engines by up to {worst:.3g}")

    for k, (a, b) in enumerate(zip(lb["curve"], nj["curve"], strict=True)):
        if a["learners"] != b["learners"] or a["learners"] != CURVE[k] * learners:
            problems.append(f"PSR curve {CURVE[k]}x: {a['learners']:,} learners on Ladybug, {b['learners']:,} on Neo4j")
        elif float(np.max(np.abs(np.subtract(a["micro"], b["micro"])), initial=0.0)) > 1e-12:
            problems.append(f"PSR curve {CURVE[k]}x: per-learner micro PSR differs between the engines")

    def row(name: str, step: str, key: str, peak: str | None = None) -> list[str]:
        a, b = lb[step][key], nj[step][key]
        return [name, fmt_s(a), fmt_s(b), fmt_ratio(b / a), fmt_bytes(lb[step][peak]) if peak else "-",
                fmt_bytes(nj[step][peak]) if peak else "-"]

    edges = nj["ingest"]["edges"]
    print(f"scale {scale:g}: {learners:,} learners, {n_questions:,} questions, {edges:,} answers, "
          f"{nj['psr']['pairs']:,} strict Eq. 1 pairs; engines agree: {'yes' if not problems else 'NO'}")
    print_table(["step", "ladybug s", "neo4j s", "neo4j/ladybug", "ladybug peak RSS", "neo4j peak RSS"], [
        row("read_pykt (parse CSV, same on both)", "ingest", "read_s"),
        row(f"write_answers, {edges:,} ANSWERED", "ingest", "write_s", "write_peak"),
        row("write_answers re-run (no-op)", "ingest", "rerun_s"),
        ["kstp ingest process, whole", "-", "-", "-", fmt_bytes(lb["ingest"]["peak_rss"]),
         fmt_bytes(nj["ingest"]["peak_rss"])],
        row(f"derive_question_prerequisites strict ({nj['psr']['pairs']:,} edges)", "psr", "derive_s"),
        row("read answers + prerequisite edges", "psr", "read_s"),
        row("evaluate_dataset (read, score, write back)", "psr", "psr_s", "psr_peak"),
        ["kstp PSR process, whole", "-", "-", "-", fmt_bytes(lb["psr"]["peak_rss"]),
         fmt_bytes(nj["psr"]["peak_rss"])],
        row(f"Eq. 1 pure Cypher ({n_questions:,} questions)", "ingest", "eq1_s"),
    ])
    print(f"write_answers: {fmt_int(edges / lb['ingest']['write_s'])} edges/s on Ladybug, "
          f"{fmt_int(edges / nj['ingest']['write_s'])} on Neo4j; Neo4j server peak RSS (JVM VmHWM, heap "
          f"{os.environ.get('KSTP_NEO4J_HEAP', '1g')}) {fmt_bytes(server_peak)}")
    print(f"PSR curve, reading {learners:,} learners per batch (seconds per 1,000 learners should stay flat, "
          "peak RSS bounded):")
    print_table(["learners", "batches", "ladybug s", "neo4j s", "neo4j/ladybug", "ladybug s/1k", "neo4j s/1k",
                 "ladybug peak RSS", "neo4j peak RSS"], [
        [fmt_int(a["learners"]), str(k), fmt_s(a["psr_s"]), fmt_s(b["psr_s"]), fmt_ratio(b["psr_s"] / a["psr_s"]),
         fmt_s(1000 * a["psr_s"] / a["learners"]), fmt_s(1000 * b["psr_s"] / b["learners"]),
         fmt_bytes(a["psr_peak"]), fmt_bytes(b["psr_peak"])]
        for k, a, b in zip(CURVE, lb["curve"], nj["curve"], strict=True)])
    for problem in problems:
        print("PROBLEM:", problem)
    return {"scale": scale, "edges": edges, "agree": not problems, "server_peak": server_peak,
            "ingest_ratio": nj["ingest"]["write_s"] / lb["ingest"]["write_s"],
            "psr_ratio": nj["psr"]["psr_s"] / lb["psr"]["psr_s"],
            "eq1_ratio": nj["ingest"]["eq1_s"] / lb["ingest"]["eq1_s"],
            "curve_ratios": [b["psr_s"] / a["psr_s"] for a, b in zip(lb["curve"], nj["curve"], strict=True)]}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    return (f"neo4j (scale {r['scale']:g}, {r['edges']:,} answers, agree: {'yes' if r['agree'] else 'NO'}): "
            f"Neo4j/Ladybug seconds: ingest {fmt_ratio(r['ingest_ratio'])}, PSR {fmt_ratio(r['psr_ratio'])}, "
            f"Eq. 1 Cypher {fmt_ratio(r['eq1_ratio'])}; PSR at {'/'.join(f'{k}x' for k in CURVE)} the learners "
            f"{', '.join(fmt_ratio(x) for x in r['curve_ratios'])}; server peak RSS {fmt_bytes(r['server_peak'])}")
