"""(d) Neo4j at XES3G5M scale against LadybugDB and the plain driver, in one run (issue 20).

A throw-away local server (``tools/neo4j_server.py --home`` in the temporary folder, on the
jars of ``make neo4j``, heap and page cache sized from the machine's memory unless
``KSTP_NEO4J_HEAP`` / ``KSTP_NEO4J_PAGECACHE`` say otherwise) keeps the development server's
data and makes the server's peak RSS this run's alone (``VmHWM`` of the JVM). kstp's steps
run in fresh interpreters (:func:`~benchmarks.common.run_isolated`) for their own peak RSS.
Inputs: the real Coherence Map and annotation map (4,118 questions) and the synthetic
XES3G5M log (``scale`` x 18,066 learners, 200-400 answers each: 5.4 M at scale 1) as a pyKT
CSV. Steps, in this order:

1. **demo**: ``kstp demo`` on a new embedded graph, and on the empty Neo4j database twice:
   first on the server as it started (its JIT cold), then again after emptying it (CLI
   processes, wall time); the PSR summaries must be equal. The database is emptied after.
2. **LadybugDB ingest** (the staging graph): the Coherence Map, the annotation map as
   dataset ``xes3g5m``, ``read_pykt`` + ``write_answers`` of the log, strict Eq. 1 derived.
3. **bulk import**: what ``kstp db load ladybug:STAGE`` does, in one process: the export
   (neo4j-admin's CSV) written while the server stops, ``neo4j-admin database import full``,
   start, schema, every count checked. The import step's relationships/s, and end to end
   from the input files (step 2 + the load: check, export while the server stops, import,
   start, schema).
4. **online ingest** into the database that now holds the curriculum and ``xes3g5m``: the
   annotation map again as dataset ``xes3g5m_b`` and the same log into it (``write_answers``
   by node key), then its re-run, which must commit no transaction (the bookmark of the last
   committed one unchanged). The same on LadybugDB (the staging graph). Every write and
   bulk-read statement runs under ``PROFILE`` once (``KSTP_NEO4J_PROFILE=1``); the plans are
   printed and any label scan, cartesian product or Eager is a ``PROBLEM``.
5. **plain-driver baseline** (writes): the driver alone, ``UNWIND $rows AS row MATCH (a:Learner
   {id: ...}) MATCH (b:Question {id: ...}) CREATE (a)-[:ANSWERED {...}]->(b)`` in 10 k batches
   (learners created first the same way), for the answers of the log's first learners up to
   :data:`DRIVER_ANSWERS` (its rate scales linearly; labelled so), into dataset ``xes3g5m_b``'s
   questions under other learner ids.
6. **PSR read**: every answer of ``xes3g5m`` through kstp's bulk path (packed
   ``answer_codes_in_range``) in the evaluator's learner batches;
   baseline: the driver reading the same rows record by record (:data:`DRIVER_ROWS` of them).
7. **evaluate psr**: ``kstp evaluate psr --dataset xes3g5m`` end to end (CLI process) on Neo4j
   and on the staging graph; per-learner micro and macro PSR equal within 1e-12.

For the online write, its re-run and the demo, the server's CPU seconds (the JVM's, from
``/proc``) and kstp's are printed against the step's wall time: where the server uses one core
for the whole step, the write rate is the server's.

``--scale`` below 1 is for quick runs; the figures are reported with the scale they were taken at.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import (
    DATASET,
    FRAMEWORK,
    FULL,
    REPO,
    THREADS,
    PeakRss,
    annotation_map,
    banner,
    build_item_graph,
    fmt_bytes,
    fmt_int,
    fmt_ratio,
    fmt_s,
    print_table,
    run_cli,
    run_isolated,
    synthetic_log,
    workdir,
)

__all__ = ["main", "summary"]

DEFAULT_SCALE = 1.0
QUICK_SCALE = 0.02
#: The second dataset of the online ingest, and the driver baseline's learner id prefix.
SECOND = "xes3g5m_b"
#: Answers the plain-driver write baseline writes (its seconds scale linearly with them), and rows it reads.
DRIVER_ANSWERS = 1_000_000
DRIVER_ROWS = 500_000
TOLERANCE = 1e-12
#: Targets of issue 20 on the 2-core machine.
TARGETS = {"import_rate": 300_000, "import_s": 20.0, "bulk_total_s": 90.0, "bulk_rss": 1.5 * 2**30,
           "online_rate": 50_000, "rerun_s": 15.0, "read_rate": 1_000_000, "psr_ratio": 3.0, "demo_ratio": 2.0}


# ---- the throw-away server -----------------------------------------------------------------
def _server(home: Path, command: str) -> str:
    done = subprocess.run([sys.executable, str(REPO / "tools" / "neo4j_server.py"), "--home", str(home), command],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"neo4j_server.py {command} failed: {done.stdout}{done.stderr}")
    return done.stdout.strip()


def _server_pid(home: str | Path) -> int | None:
    from kstp.graph.local_server import LocalServer

    return LocalServer.at(Path(home)).pid()


def _server_peak_rss(home: Path) -> int | None:
    """VmHWM of the server's JVM (bytes), read while it runs."""
    try:
        for line in Path(f"/proc/{_server_pid(home)}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _server_cpu(home: str | Path | None) -> float:
    """CPU seconds (user + system, all threads) the server's JVM has used so far; 0 without a server.

    Its growth over a step against the step's wall time says whether the server was the bound:
    about 1x the wall time is one core busy, about 2x both.
    """
    if home is None:
        return 0.0
    fields = Path(f"/proc/{_server_pid(home)}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (stat fields 14, 15)


@contextmanager
def _step(home: str | Path | None):
    """Measure the step in the ``with`` block: the dict it yields gets ``s`` (wall seconds), ``cpu``
    (this process's CPU seconds) and ``server_cpu`` (the server's, see :func:`_server_cpu`)."""
    out: dict[str, float] = {}
    start, cpu, server = time.perf_counter(), time.process_time(), _server_cpu(home)
    yield out
    out.update(s=time.perf_counter() - start, cpu=time.process_time() - cpu, server_cpu=_server_cpu(home) - server)


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's waited-for children so far."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _credentials(home: Path) -> dict[str, str]:
    """The server's URI and credentials; the credentials go into this process's environment for the children."""
    pairs = dict(line.split("=", 1) for line in (home / "neo4j.env").read_text().splitlines() if "=" in line)
    os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"] = pairs["NEO4J_USER"], pairs["NEO4J_PASSWORD"]
    return pairs


def _progress_every(rows: int) -> None:
    """Print the store's progress lines (rows written, rows/s) about every ``rows`` rows."""
    class Every(logging.Filter):
        last: dict[str, int] = {}

        def filter(self, record):
            name, done = record.args[0], int(str(record.args[1]).replace(",", ""))
            total = int(str(record.args[2]).replace(",", ""))
            if done == total or done - self.last.get(name, 0) >= rows:
                self.last[name] = done
                return True
            return False

    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("    %(message)s"))
    handler.addFilter(Every())
    store_log = logging.getLogger("kstp.graph.neo4j")
    store_log.addHandler(handler)
    store_log.setLevel(logging.INFO)


# ---- isolated steps ------------------------------------------------------------------------
def child_stage(graph: str, csv: str, annotation: str) -> dict:
    """The staging graph on LadybugDB: curriculum and items, ``read_pykt`` + ``write_answers``, strict Eq. 1."""
    from kstp.graph.structures import derive_question_prerequisites
    from kstp.loaders.responses import read_pykt, write_answers

    start = time.perf_counter()
    store = build_item_graph(graph, Path(annotation))
    items_s = time.perf_counter() - start
    questions = set(store.frame("dataset_questions", {"dataset": DATASET})["localId"])
    start = time.perf_counter()
    answers = read_pykt(csv, questions)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    report = write_answers(store, DATASET, answers, Path(csv).name)
    write_s = time.perf_counter() - start
    start = time.perf_counter()
    derived = derive_question_prerequisites(store, DATASET, "strict")
    derive_s = time.perf_counter() - start
    store.close()
    return {"items_s": items_s, "read_s": read_s, "write_s": write_s, "derive_s": derive_s,
            "answers": report.written["ANSWERED"].created, "pairs": derived.edges}


def child_bulk(stage: str, home: str, uri: str) -> dict:
    """``kstp db load ladybug:STAGE``: :func:`~kstp.graph.bulk.bulk_load`, the export written while the server stops."""
    import tempfile
    from functools import partial

    from kstp.graph.bulk import bulk_load
    from kstp.graph.factory import open_store
    from kstp.graph.local_server import LocalServer
    from kstp.graph.transfer import export_graph

    folder = Path(tempfile.mkdtemp(prefix="kstp-bench-export-", dir=home)) / "export"
    with open_store(stage, read_only=True) as store:
        report = bulk_load(LocalServer.at(home), uri, os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"], folder,
                           export=partial(export_graph, store))
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {"seconds": report.seconds, "nodes": report.nodes, "relationships": report.relationships,
            "import_peak": report.import_peak_rss, "files_bytes": size}


def child_online(graph: str, csv: str, annotation: str, dataset: str, home: str | None = None) -> dict:
    """Items of ``dataset`` (the annotation map again) and the log into it; the re-run; PROFILEs on Neo4j.

    With ``KSTP_NEO4J_PROFILE`` set, the first learner's answers are written and written again
    under a learner id of their own before the timed write, so each statement's profiled run
    (slower) is not timed, and the timed write still creates every learner (the path of a first
    ingest, without a diff read).

    With the server's ``home``, the server's CPU seconds during the write and the re-run too
    (``*_server_cpu``); this process's own are ``*_cpu``.
    """
    from kstp.graph.factory import open_store
    from kstp.loaders.items import framework_concepts, read_concept_map, write_items
    from kstp.loaders.responses import read_pykt, write_answers

    _progress_every(1_000_000)
    store = open_store(graph)
    start = time.perf_counter()
    write_items(store, read_concept_map(Path(annotation), dataset, FRAMEWORK, framework_concepts(store, FRAMEWORK)))
    items_s = time.perf_counter() - start
    questions = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
    answers = read_pykt(csv, questions)
    from kstp.graph import neo4j as module

    if module.PROFILE:  # each write statement's profiled run outside the timing: a learner of its own, written twice
        first = answers[answers["learner"] == answers["learner"].iloc[0]].assign(learner="profiled")
        write_answers(store, dataset, first, Path(csv).name)
        write_answers(store, dataset, first, Path(csv).name)
    with PeakRss() as peak, _step(home) as write:
        report = write_answers(store, dataset, answers, Path(csv).name)
    mark = getattr(store, "last_transaction", lambda: None)()
    with _step(home) as rerun:
        again = write_answers(store, dataset, answers, Path(csv).name)
    unmoved = mark == getattr(store, "last_transaction", lambda: None)()
    store.close()
    return {"items_s": items_s, "write_s": write["s"], "rerun_s": rerun["s"], "write_peak": peak.peak,
            "write_cpu": write["cpu"], "write_server_cpu": write["server_cpu"], "rerun_cpu": rerun["cpu"],
            "rerun_server_cpu": rerun["server_cpu"],
            "created": report.written["ANSWERED"].created, "unchanged": again.written["ANSWERED"].unchanged,
            "rerun_changed": again.written["ANSWERED"].created + again.written["ANSWERED"].updated,
            "unmoved": unmoved if mark is not None else None, "profiles": module.PROFILES}


def child_driver_write(uri: str, csv: str, dataset: str, limit: int) -> dict:
    """The plain-driver baseline: learners, then ``UNWIND ... MATCH ... MATCH ... CREATE`` of 10 k answers a batch."""
    import neo4j

    from kstp.loaders.responses import read_pykt

    answers = read_pykt(csv, set(annotation_map()))
    counts = answers.groupby("learner", sort=False, observed=True).size()
    keep = counts.index[np.cumsum(counts.to_numpy()) <= limit]
    answers = answers[answers["learner"].isin(set(keep))]
    position = answers.groupby("learner", sort=False, observed=True).cumcount() + 1
    learners = [{"id": f"driver:{u}", "kind": "human", "dataset": dataset, "localId": str(u)} for u in keep]
    rows = [{"from_id": f"driver:{u}", "to_id": f"{dataset}:{q}", "correct": bool(c), "position": int(p)}
            for u, q, c, p in zip(answers["learner"], answers["item"], answers["correct"], position, strict=True)]
    with neo4j.GraphDatabase.driver(uri, auth=(os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])) as driver:
        start = time.perf_counter()
        for at in range(0, len(learners), 10_000):
            driver.execute_query("UNWIND $rows AS row CREATE (l:Learner) SET l = row", rows=learners[at:at + 10_000])
        nodes_s = time.perf_counter() - start
        start = time.perf_counter()
        for at in range(0, len(rows), 10_000):
            driver.execute_query("UNWIND $rows AS row MATCH (a:Learner {id: row.from_id}) "
                                 "MATCH (b:Question {id: row.to_id}) "
                                 "CREATE (a)-[:ANSWERED {correct: row.correct, position: row.position}]->(b)",
                                 rows=rows[at:at + 10_000])
        write_s = time.perf_counter() - start
    return {"answers": len(rows), "learners": len(learners), "nodes_s": nodes_s, "write_s": write_s}


def child_read(graph: str) -> dict:
    """Every answer of ``xes3g5m`` through kstp's bulk read, in the PSR evaluator's learner batches."""
    from kstp.evaluators.psr import BATCH, _answer_batches, _packable
    from kstp.graph import neo4j as module
    from kstp.graph.factory import open_store

    store = open_store(graph, read_only=True)
    if module.PROFILE:  # each statement's profiled first run (slower) outside the timed reads
        roster = store.frame("dataset_learners", {"dataset": DATASET}, categorical=True)
        for name in ("question_keys", "question_prerequisite_keys"):
            store.frame(name, {"dataset": DATASET}, categorical=True)
        first = roster["learnerId"].iloc[0]  # in id order
        store.frame("answer_codes_in_range", {"dataset": DATASET, "lo": first, "hi": first}, categorical=True)
    start = time.perf_counter()
    roster = store.frame("dataset_learners", {"dataset": DATASET}, categorical=True)
    keys = store.frame("question_keys", {"dataset": DATASET}, categorical=True)
    pairs = store.frame("question_prerequisite_keys", {"dataset": DATASET}, categorical=True)
    meta_s = time.perf_counter() - start
    start = time.perf_counter()
    packed = _packable(roster["learnerKey"], pd.Index(keys["questionKey"]))
    rows = sum(len(batch) for batch in _answer_batches(store, DATASET, roster["learnerId"].tolist(), BATCH, packed))
    read_s = time.perf_counter() - start
    store.close()
    return {"rows": rows, "read_s": read_s, "meta_s": meta_s, "learners": len(roster), "questions": len(keys),
            "pairs": len(pairs), "profiles": module.PROFILES}


def child_driver_read(uri: str, limit: int) -> dict:
    """The plain-driver baseline read: the same answers as records, one message each."""
    import neo4j

    with neo4j.GraphDatabase.driver(uri, auth=(os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])) as driver:
        start = time.perf_counter()
        records = driver.execute_query(
            "MATCH (l:Learner)-[a:ANSWERED]->(q) WHERE q.dataset = $dataset "
            "RETURN l.id AS learnerId, q.id AS questionId, a.correct AS correct LIMIT $limit",
            dataset=DATASET, limit=limit, routing_=neo4j.RoutingControl.READ).records
        rows = pd.DataFrame([r.values() for r in records], columns=["learnerId", "questionId", "correct"])
        read_s = time.perf_counter() - start
    return {"rows": len(rows), "read_s": read_s}


def _same(a, b) -> bool:
    """Whether two JSON values are equal, numbers within :data:`TOLERANCE`."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= TOLERANCE
    return a == b


def _psr_learners(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / f"psr_learners_{DATASET}.csv", index_col="learnerId")[["psrMicro", "psrMacro"]]


# ---- driver --------------------------------------------------------------------------------
def main(quick: bool = False, scale: float | None = None) -> dict:
    os.environ.update(THREADS)
    scale = scale if scale is not None else QUICK_SCALE if quick else DEFAULT_SCALE
    learners = max(1, round(FULL.learners * scale))
    mapping = annotation_map()
    questions = list(mapping)[:max(FULL.max_answers, round(len(mapping) * scale))]
    load = os.getloadavg()
    banner(f"(d) Neo4j at scale {scale:g} of XES3G5M: {learners:,} learners, {len(questions):,} questions; load "
           f"average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    r: dict = {"scale": scale, "load": load}
    with workdir("neo4j") as tmp:
        home = tmp / "neo4j-home"
        start = time.perf_counter()
        print(_server(home, "start"), flush=True)
        r["server_start_s"] = time.perf_counter() - start
        env = _credentials(home)
        uri = env["KSTP_GRAPH"]
        log = synthetic_log(learners, FULL.min_answers, FULL.max_answers, questions=questions)
        csv = tmp / "synthetic_pykt.csv"
        log.to_pykt_csv(csv)
        r["answers"] = len(log)
        del log
        subset = tmp / "annotation_subset.json"
        subset.write_text(json.dumps({q: [int(c) for c in mapping[q]] for q in questions}))
        stage = f"ladybug:{tmp / 'stage'}"
        try:
            print("1. demo", flush=True)
            r["demo_ladybug"] = run_cli("--quiet", "--graph", f"ladybug:{tmp / 'demo'}", "demo", "--out",
                                     str(tmp / "demo-lb"), "--json")
            from kstp.graph.factory import open_store

            # First on the server as it started (its JIT cold, every statement planned anew), then again.
            for key in ("demo_neo4j_cold", "demo_neo4j"):
                cpu, own = _server_cpu(home), _children_cpu()
                r[key] = run_cli("--quiet", "--graph", uri, "demo", "--out", str(tmp / key), "--json")
                r[key].update(server_cpu=_server_cpu(home) - cpu, cpu=_children_cpu() - own)
                start = time.perf_counter()
                with open_store(uri) as store:
                    store.reset()
                r["reset_s"] = time.perf_counter() - start
            print(f"   embedded {fmt_s(r['demo_ladybug']['wall'])} s, Neo4j {fmt_s(r['demo_neo4j_cold']['wall'])} s "
                  f"on the new server, {fmt_s(r['demo_neo4j']['wall'])} s again; emptied in {fmt_s(r['reset_s'])} s",
                  flush=True)
            print("2. LadybugDB ingest (the staging graph)", flush=True)
            r["stage"] = run_isolated("benchmarks.neo4j:child_stage", graph=stage, csv=str(csv),
                                      annotation=str(subset))
            print(f"   write_answers {fmt_s(r['stage']['write_s'])} s, derive {fmt_s(r['stage']['derive_s'])} s",
                  flush=True)
            print("3. bulk import (kstp db load)", flush=True)
            r["bulk"] = run_isolated("benchmarks.neo4j:child_bulk", stage=stage, home=str(home), uri=uri)
            print("   " + ", ".join(f"{k} {fmt_s(v)} s" for k, v in r["bulk"]["seconds"].items())
                  + " (export and stop at once)", flush=True)
            print("4. online ingest of a second dataset into the loaded database", flush=True)
            os.environ["KSTP_NEO4J_PROFILE"] = "1"
            r["online_neo4j"] = run_isolated("benchmarks.neo4j:child_online", graph=uri, csv=str(csv),
                                             annotation=str(subset), dataset=SECOND, home=str(home))
            r["online_ladybug"] = run_isolated("benchmarks.neo4j:child_online", graph=stage, csv=str(csv),
                                               annotation=str(subset), dataset=SECOND)
            print(f"   Neo4j {fmt_s(r['online_neo4j']['write_s'])} s (re-run {fmt_s(r['online_neo4j']['rerun_s'])} "
                  f"s), LadybugDB {fmt_s(r['online_ladybug']['write_s'])} s", flush=True)
            print("5. plain-driver write baseline", flush=True)
            os.environ.pop("KSTP_NEO4J_PROFILE")
            r["driver_write"] = run_isolated("benchmarks.neo4j:child_driver_write", uri=uri, csv=str(csv),
                                             dataset=SECOND, limit=min(DRIVER_ANSWERS, r["answers"]))
            print("6. PSR read", flush=True)
            os.environ["KSTP_NEO4J_PROFILE"] = "1"
            r["read_neo4j"] = run_isolated("benchmarks.neo4j:child_read", graph=uri)
            os.environ.pop("KSTP_NEO4J_PROFILE")
            r["read_ladybug"] = run_isolated("benchmarks.neo4j:child_read", graph=stage)
            r["driver_read"] = run_isolated("benchmarks.neo4j:child_driver_read", uri=uri,
                                            limit=min(DRIVER_ROWS, r["answers"]))
            print("7. kstp evaluate psr", flush=True)
            r["psr_ladybug"] = run_cli("--quiet", "--graph", stage, "evaluate", "psr", "--dataset", DATASET, "--out",
                                    str(tmp / "psr-lb"), "--json")
            r["psr_neo4j"] = run_cli("--quiet", "--graph", uri, "evaluate", "psr", "--dataset", DATASET, "--out",
                                  str(tmp / "psr-nj"), "--json")
            r["psr_diff"] = float(np.nanmax(np.abs(_psr_learners(tmp / "psr-lb").sort_index().to_numpy()
                                                   - _psr_learners(tmp / "psr-nj").sort_index().to_numpy())))
            r["psr_same_learners"] = _psr_learners(tmp / "psr-lb").index.sort_values().equals(
                _psr_learners(tmp / "psr-nj").index.sort_values())
            embedded = json.loads(r["demo_ladybug"]["stdout"])["psr"]
            r["demo_same"] = all(_same(embedded, json.loads(r[key]["stdout"])["psr"])
                                 for key in ("demo_neo4j", "demo_neo4j_cold"))
            r["server_peak"] = _server_peak_rss(home)
        finally:
            _server(home, "stop")
    return _report(r)


def _report(r: dict) -> dict:
    answers, bulk, stage = r["answers"], r["bulk"], r["stage"]
    on, ol, dw = r["online_neo4j"], r["online_ladybug"], r["driver_write"]
    rn, rl, dr = r["read_neo4j"], r["read_ladybug"], r["driver_read"]
    seconds = bulk["seconds"]
    rels = bulk["relationships"]
    bulk_total = stage["items_s"] + stage["read_s"] + stage["write_s"] + stage["derive_s"] + seconds["total"]
    bulk_rss = max(stage["peak_rss"], bulk["peak_rss"])
    driver_rate = dw["answers"] / dw["write_s"]
    f = {"import_rate": rels / seconds["import"], "import_s": seconds["import"], "bulk_total_s": bulk_total,
         "bulk_rss": bulk_rss, "online_rate": on["created"] / on["write_s"], "rerun_s": on["rerun_s"],
         "read_rate": rn["rows"] / rn["read_s"], "psr_ratio": r["psr_neo4j"]["wall"] / r["psr_ladybug"]["wall"],
         "demo_ratio": r["demo_neo4j"]["wall"] / r["demo_ladybug"]["wall"]}
    problems = []
    if not (on["created"] == ol["created"] == answers and on["unchanged"] == ol["unchanged"] == answers):
        problems.append(f"online ingest: Neo4j created {on['created']:,}, LadybugDB {ol['created']:,} of {answers:,}; "
                        f"re-run unchanged {on['unchanged']:,} / {ol['unchanged']:,}")
    if on["rerun_changed"] or on["unmoved"] is False:
        problems.append("the no-op re-run wrote to Neo4j")
    if rn["rows"] != rl["rows"] or rn["rows"] != answers:
        problems.append(f"PSR read: {rn['rows']:,} rows from Neo4j, {rl['rows']:,} from LadybugDB, {answers:,} answers")
    if not r["psr_same_learners"] or not r["psr_diff"] <= TOLERANCE:
        problems.append(f"evaluate psr: per-learner PSR differs between the engines (up to {r['psr_diff']:.3g})")
    if not r["demo_same"]:
        problems.append("demo: the PSR summaries differ between the engines")
    from kstp.graph.neo4j import BAD_OPERATORS

    plans = {**on["profiles"], **rn["profiles"]}
    for name, ops in plans.items():  # the writes by node key and the bulk reads must seek; the small reads may scan
        checked = name.startswith(("write ", "merge ", "keys ", "ids ", "existing ")) or name in (
            "answer_codes_in_range", "question_prerequisite_keys")
        bad = sorted({o["operator"] for o in ops} & set(BAD_OPERATORS)) if checked else []
        if bad:
            problems.append(f"PROFILE {name}: {', '.join(bad)}")

    def met(key: str, higher: bool) -> str:
        value, target = f[key], TARGETS[key]
        return "met" if (value >= target if higher else value <= target) else "MISSED"

    print(f"\nscale {r['scale']:g}: {answers:,} answers, {stage['pairs']:,} strict Eq. 1 pairs; load average at start "
          f"{r['load'][0]:.2f}; server heap/page cache from tools/neo4j_server.py; engines agree: "
          f"{'yes' if not problems else 'NO'}")
    print_table(["step", "Neo4j (kstp)", "LadybugDB", "plain driver", "Neo4j/Ladybug", "kstp/driver", "target"], [
        ["bulk import: neo4j-admin step", f"{fmt_s(seconds['import'])} s, {fmt_int(f['import_rate'])} rel/s", "-",
         "-", "-", "-", f">= 300,000 rel/s, <= 20 s: {met('import_rate', True)}, {met('import_s', False)}"],
        ["bulk import end to end (files in -> server up)", f"{fmt_s(bulk_total)} s", "-", "-", "-", "-",
         f"<= 90 s: {met('bulk_total_s', False)}"],
        ["  ingest into staging + derive | export while stop | start | schema",
         f"{fmt_s(stage['items_s'] + stage['read_s'] + stage['write_s'] + stage['derive_s'])} | "
         f"{fmt_s(seconds['export'])} while {fmt_s(seconds['stop'])} | {fmt_s(seconds['start'])} | "
         f"{fmt_s(seconds['schema'])} s", "-", "-", "-", "-", ""],
        ["  peak RSS: kstp (staging, export+load) | neo4j-admin",
         f"{fmt_bytes(stage['peak_rss'])}, {fmt_bytes(bulk['peak_rss'])} | {fmt_bytes(bulk['import_peak'])}",
         "-", "-", "-", "-", f"kstp <= 1.5 GiB: {met('bulk_rss', False)}"],
        ["online ingest, 2nd dataset (write_answers)",
         f"{fmt_s(on['write_s'])} s, {fmt_int(f['online_rate'])} edges/s",
         f"{fmt_s(ol['write_s'])} s, {fmt_int(answers / ol['write_s'])}/s",
         f"{fmt_int(driver_rate)} edges/s ({fmt_int(dw['answers'])} rows)", fmt_ratio(on["write_s"] / ol["write_s"]),
         fmt_ratio(f["online_rate"] / driver_rate), f">= 50,000 edges/s: {met('online_rate', True)}"],
        ["  peak RSS of the write (kstp process)", fmt_bytes(on["write_peak"]), fmt_bytes(ol["write_peak"]), "-",
         "-", "-", ""],
        ["no-op re-run (writes nothing)", f"{fmt_s(on['rerun_s'])} s, tx unchanged: {on['unmoved']}",
         f"{fmt_s(ol['rerun_s'])} s", "-", fmt_ratio(on["rerun_s"] / ol["rerun_s"]), "-",
         f"<= 15 s: {met('rerun_s', False)}"],
        ["PSR read, every answer (bulk path)", f"{fmt_s(rn['read_s'])} s, {fmt_int(f['read_rate'])} rows/s",
         f"{fmt_s(rl['read_s'])} s, {fmt_int(rl['rows'] / rl['read_s'])}/s",
         f"{fmt_int(dr['rows'] / dr['read_s'])} rows/s ({fmt_int(dr['rows'])} rows)",
         fmt_ratio(rn["read_s"] / rl["read_s"]), fmt_ratio(f["read_rate"] / (dr["rows"] / dr["read_s"])),
         f">= 1 M rows/s: {met('read_rate', True)}"],
        ["kstp evaluate psr --dataset xes3g5m (CLI)",
         f"{fmt_s(r['psr_neo4j']['wall'])} s, {fmt_bytes(r['psr_neo4j']['peak_rss'])}",
         f"{fmt_s(r['psr_ladybug']['wall'])} s, {fmt_bytes(r['psr_ladybug']['peak_rss'])}", "-",
         fmt_ratio(f["psr_ratio"]), "-", f"<= 3x: {met('psr_ratio', False)}"],
        ["kstp demo (CLI, empty graph, server warm)", f"{fmt_s(r['demo_neo4j']['wall'])} s, "
         f"{fmt_bytes(r['demo_neo4j']['peak_rss'])}", f"{fmt_s(r['demo_ladybug']['wall'])} s, "
         f"{fmt_bytes(r['demo_ladybug']['peak_rss'])}", "-", fmt_ratio(f["demo_ratio"]), "-",
         f"<= 2x: {met('demo_ratio', False)}"],
        ["  the same, first on the server as started", f"{fmt_s(r['demo_neo4j_cold']['wall'])} s", "-", "-",
         fmt_ratio(r["demo_neo4j_cold"]["wall"] / r["demo_ladybug"]["wall"]), "-", ""],
    ])
    print(f"Neo4j server peak RSS (JVM VmHWM) {fmt_bytes(r['server_peak'])}; started in {fmt_s(r['server_start_s'])} "
          f"s; export files {fmt_bytes(bulk['files_bytes'])}; driver baseline learners {fmt_int(dw['learners'])} in "
          f"{fmt_s(dw['nodes_s'])} s; PSR read also fetched {fmt_int(rn['learners'])} learners, "
          f"{fmt_int(rn['pairs'])} prerequisite pairs in {fmt_s(rn['meta_s'])} s (LadybugDB "
          f"{fmt_s(rl['meta_s'])} s)")
    print("CPU seconds during a step, server (JVM) | kstp, against its wall time (1x: one core busy): " + "; ".join(
        f"{what} {fmt_s(server)} | {fmt_s(own)} s of {fmt_s(wall)} s ({fmt_ratio(server / wall)} | "
        f"{fmt_ratio(own / wall)})" for what, server, own, wall in [
            ("online write", on["write_server_cpu"], on["write_cpu"], on["write_s"]),
            ("no-op re-run", on["rerun_server_cpu"], on["rerun_cpu"], on["rerun_s"]),
            ("demo", r["demo_neo4j"]["server_cpu"], r["demo_neo4j"]["cpu"], r["demo_neo4j"]["wall"])]))
    print("PROFILE, once per statement (operators; db hits):")
    for name, ops in plans.items():
        hits = sum(o["dbHits"] or 0 for o in ops)
        chain = " < ".join(o["operator"] for o in ops)
        print(f"  {name}: {chain}; {fmt_int(hits)} db hits")
    for problem in problems:
        print("PROBLEM:", problem)
    return {**f, "scale": r["scale"], "answers": answers, "agree": not problems, "server_peak": r["server_peak"],
            "load": r["load"][0]}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    return (f"neo4j (scale {r['scale']:g}, {r['answers']:,} answers, load {r['load']:.2f}, agree: "
            f"{'yes' if r['agree'] else 'NO'}): import {fmt_int(r['import_rate'])} rel/s, bulk end to end "
            f"{fmt_s(r['bulk_total_s'])} s, online {fmt_int(r['online_rate'])} edges/s, no-op re-run "
            f"{fmt_s(r['rerun_s'])} s, read {fmt_int(r['read_rate'])} rows/s, evaluate psr Neo4j/Ladybug "
            f"{fmt_ratio(r['psr_ratio'])}, demo {fmt_ratio(r['demo_ratio'])}; server peak RSS "
            f"{fmt_bytes(r['server_peak'])}")
