"""(f) Neo4j against LadybugDB: ingest, PSR read, Eq. 1 in Cypher, peak RSS of server and client.

Both engines get the same work in the same run, Ladybug the baseline: the Coherence Map
and the real 4,118-question annotation map, then a synthetic XES3G5M-shaped log (scaled
down: ``KSTP_BENCH_ENGINE_LEARNERS``, default 1,000 learners, about 300 answers each)
ingested by ``write_answers``; Eq. 1 (strict) derived and written; PSR read back and scored
by ``evaluate_dataset`` (no write-back); and the pure-Cypher ``question_prerequisites``
query. Each engine runs in a fresh interpreter for its own peak RSS; the Neo4j server's
peak RSS (VmHWM of its JVM) is read from /proc. Neo4j is the local server of
``tools/neo4j_server.py`` (started if needed); its database is emptied first.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from benchmarks.common import (
    DATASET,
    FRAMEWORK,
    annotation_path,
    banner,
    fmt_bytes,
    fmt_int,
    fmt_ratio,
    fmt_s,
    print_table,
    run_isolated,
    standards_path,
    synthetic_log,
    workdir,
)

__all__ = ["main", "summary"]


def child_engine(graph: str, csv: str) -> dict:
    """One engine: setup, ingest, Eq. 1, PSR read + score, Eq. 1 in Cypher; seconds of each."""
    from kstp.evaluators.psr import evaluate_dataset
    from kstp.loaders.items import framework_concepts, read_concept_map, write_items
    from kstp.loaders.responses import read_pykt, write_answers
    from kstp.loaders.standards import load_standards
    from kstp.platform.kst import derive_question_prerequisites
    from kstp.platform.store import open_store

    out = {}
    store = open_store(graph)
    if store.engine == "neo4j":
        store.reset()
    start = time.perf_counter()
    load_standards(store, standards_path())
    write_items(store, read_concept_map(annotation_path(), DATASET, FRAMEWORK, framework_concepts(store, FRAMEWORK)))
    out["setup_s"] = time.perf_counter() - start
    answers = read_pykt(csv, set(store.frame("dataset_questions", {"dataset": DATASET})["localId"]))
    start = time.perf_counter()
    write_answers(store, DATASET, answers, Path(csv).name)
    out["ingest_s"], out["answers"] = time.perf_counter() - start, len(answers)
    start = time.perf_counter()
    out["pairs"] = derive_question_prerequisites(store, DATASET, "strict").edges
    out["derive_s"] = time.perf_counter() - start
    start = time.perf_counter()
    result = evaluate_dataset(store, DATASET, write_back=False)
    out["psr_s"] = time.perf_counter() - start
    out["psrMicro"] = float(result.learners["psrMicro"].mean())
    start = time.perf_counter()
    try:
        out["cypher_pairs"] = len(store.frame("question_prerequisites", {"dataset": DATASET, "reflexive": False}))
        out["eq1_cypher_s"] = time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - e.g. Neo4j's transaction memory limit; reported, not fatal
        out["cypher_pairs"], out["eq1_cypher_s"], out["eq1_cypher_error"] = None, None, " ".join(str(exc).split())[:200]
    store.close()
    print(f"{store.engine}: {out}", flush=True)  # the figures, also when the parent fails later
    return out


def _server_peak() -> int | None:
    from tools import neo4j_server

    pid = (neo4j_server.HOME / "run" / "neo4j.pid").read_text().strip()
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


def main(quick: bool = False) -> dict:
    from tools import neo4j_server

    learners = 100 if quick else int(os.environ.get("KSTP_BENCH_ENGINE_LEARNERS", "1000"))
    banner(f"(f) engines: Neo4j vs LadybugDB, {learners:,} synthetic learners{' [quick]' if quick else ''}")
    neo4j_server.start()
    env = neo4j_server.read_env()
    os.environ.update({"NEO4J_USER": env["NEO4J_USER"], "NEO4J_PASSWORD": env["NEO4J_PASSWORD"]})
    with workdir("engines") as tmp:
        log = synthetic_log(learners, 200, 400)
        csv = tmp / "synthetic_pykt.csv"
        log.to_pykt_csv(csv)
        runs = {"ladybug": run_isolated("benchmarks.engines:child_engine", graph=f"ladybug:{tmp / 'graph'}",
                                        csv=str(csv)),
                "neo4j": run_isolated("benchmarks.engines:child_engine", graph=env["KSTP_GRAPH"], csv=str(csv))}
    server_peak = _server_peak()
    lb, nj = runs["ladybug"], runs["neo4j"]
    for key in ("answers", "pairs", "cypher_pairs"):
        if lb[key] != nj[key] and None not in (lb[key], nj[key]):
            print(f"PROBLEM: {key} differ: Ladybug {lb[key]:,}, Neo4j {nj[key]:,}")
    if abs(lb["psrMicro"] - nj["psrMicro"]) > 1e-12:
        print(f"PROBLEM: mean micro PSR differs: {lb['psrMicro']!r} vs {nj['psrMicro']!r}")
    rows = []
    for step, key in (("setup (Coherence Map + annotation map)", "setup_s"),
                      (f"ingest {lb['answers']:,} answers (write_answers)", "ingest_s"),
                      (f"Eq. 1 strict, derive + write {lb['pairs']:,} pairs", "derive_s"),
                      ("PSR: read answers + pairs, score (evaluate_dataset)", "psr_s"),
                      ("Eq. 1 in pure Cypher (question_prerequisites)", "eq1_cypher_s")):
        ratio = fmt_ratio(lb[key] / nj[key]) if lb[key] and nj[key] else "-"
        rows.append([step, fmt_s(lb[key]), fmt_s(nj[key]), ratio])
    rows.append(["peak RSS, kstp process", fmt_bytes(lb["peak_rss"]), fmt_bytes(nj["peak_rss"]), "-"])
    rows.append(["peak RSS, Neo4j server (JVM VmHWM)", "-", fmt_bytes(server_peak), "-"])
    print_table(["step", "Ladybug s", "Neo4j s", "ratio (Ladybug / Neo4j)"], rows)
    for engine, run in runs.items():
        if run.get("eq1_cypher_error"):
            print(f"{engine}: Eq. 1 in pure Cypher failed: {run['eq1_cypher_error']}")
    print(f"ingest rate: Ladybug {fmt_int(lb['answers'] / lb['ingest_s'])}/s, "
          f"Neo4j {fmt_int(nj['answers'] / nj['ingest_s'])}/s")
    return {"ladybug": lb, "neo4j": nj, "server_peak": server_peak}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    lb, nj = r["ladybug"], r["neo4j"]
    return (f"(f) engines: ingest Neo4j {fmt_s(nj['ingest_s'])} s vs Ladybug {fmt_s(lb['ingest_s'])} s "
            f"({fmt_ratio(lb['ingest_s'] / nj['ingest_s'])}); PSR read {fmt_s(nj['psr_s'])} vs "
            f"{fmt_s(lb['psr_s'])} s; Eq. 1 Cypher {fmt_s(nj['eq1_cypher_s'])} vs {fmt_s(lb['eq1_cypher_s'])} s; "
            f"server peak RSS {fmt_bytes(r['server_peak'])}")
