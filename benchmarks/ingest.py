"""(a) Bulk ingest of a synthetic XES3G5M-scale learner log into LadybugDB.

kstp path: ``read_pykt`` (the CSV streamed in chunks of rows) + ``write_answers`` (new
edges go in by ``COPY FROM`` Arrow), then the same ``write_answers`` again (a no-op), on a
graph that already holds the Coherence Map and the real annotation map (4,118 questions),
in a fresh interpreter so its peak RSS is its own. Floor: Ladybug's own ``COPY ANSWERED
FROM`` an Arrow table of the same edges with string keys (built before the clock starts),
into a graph prepared the same way with the Learner nodes in. Baseline: the same kind of
edges written with ``UNWIND $rows ... MATCH ... CREATE`` (and ``MERGE``) Cypher in batches,
on a random subsample, into a graph prepared the same way. The ratio is per-edge throughput.

Then, on the ingested graph, the rest of the pipeline as a user runs it:
``derive_question_prerequisites`` (strict) and ``evaluate_dataset`` (with write-back).

Last, the re-run beside the first run (issue 43: a re-run over stored learners took 8-12x
the first): ``kstp ingest responses`` as a user runs it (a fresh interpreter each time,
wall time), first on a graph holding the items, then again on the same file, for two
shapes of log: the XES3G5M-scale pyKT log above (few learners, hundreds of answers each)
and a wide 0/1 matrix of many learners with few answers each (250,000 x 20, the issue's).
The ratio re-run / first run must be at most 1.0.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks.common import (
    DATASET,
    THREADS,
    PeakRss,
    banner,
    build_item_graph,
    fmt_bytes,
    fmt_int,
    fmt_ratio,
    fmt_s,
    print_table,
    rss_now,
    run_cli,
    run_isolated,
    sizes,
    synthetic_log,
    workdir,
)

__all__ = ["main", "summary"]

BATCH = 1_000
RATE_TARGET = 1_000_000  # ANSWERED edges per second through read_pykt + write_answers
RSS_TARGET = 1.5 * 2**30
RERUN_TARGET = 1.0  # a re-run's wall time over the first run's, as a user runs kstp ingest responses
#: The wide log of the re-run step: learners x items (the issue's 250,000 x 20), and its quick size.
WIDE, WIDE_QUICK, WIDE_ITEMS = 250_000, 20_000, 20
# Two MATCH clauses, not one comma-separated pattern: on Ladybug 0.22 the comma form
# "MATCH (a {id: row.from_id}), (b {id: row.to_id})" plans a cross product and runs about
# 25x slower at this scale, which would flatter kstp's ratio.
_CREATE = ("UNWIND $rows AS row MATCH (a:Learner {id: row.from_id}) MATCH (b:Question {id: row.to_id}) "
           "CREATE (a)-[:ANSWERED {correct: row.correct, position: row.position}]->(b)")
_MERGE = ("UNWIND $rows AS row MATCH (a:Learner {id: row.from_id}) MATCH (b:Question {id: row.to_id}) "
          "MERGE (a)-[r:ANSWERED]->(b) SET r.correct = row.correct, r.position = row.position")


def _ids(local: np.ndarray) -> pa.Array:
    """``<dataset>:<local id>`` graph ids for integer local ids, built in Arrow (no Python string per edge)."""
    return pc.binary_join_element_wise(f"{DATASET}:", pc.cast(pa.array(local), pa.string()), "")


def _answered_count(store) -> int:
    counts = store.frame("relationship_counts")
    return int(counts.loc[counts["type"] == "ANSWERED", "count"].sum())


# ---- isolated steps (run in a fresh interpreter) -----------------------------------------------
def child_ingest(graph: str, csv: str) -> dict:
    """kstp's path: graph setup (untimed), then read_pykt and write_answers, timed apart."""
    from kstp.loaders.responses import read_pykt, write_answers

    start = time.perf_counter()
    store = build_item_graph(Path(graph))
    setup = time.perf_counter() - start
    questions = set(store.frame("dataset_questions", {"dataset": DATASET})["localId"])
    rss_before = rss_now()
    with PeakRss() as read_peak:
        start = time.perf_counter()
        answers = read_pykt(csv, questions)
        read_s = time.perf_counter() - start
    with PeakRss() as write_peak:
        start = time.perf_counter()
        report = write_answers(store, DATASET, answers, Path(csv).name)
        write_s = time.perf_counter() - start
    edges = _answered_count(store)
    with PeakRss() as rerun_peak:
        start = time.perf_counter()
        again = write_answers(store, DATASET, answers, Path(csv).name)
        rerun_s = time.perf_counter() - start
    store.close()
    rerun_writes = sum(again.written[k].created + again.written[k].updated for k in again.written)
    return {"setup_s": setup, "read_s": read_s, "write_s": write_s, "answers": len(answers), "edges": edges,
            "created": report.written["ANSWERED"].created, "rerun_s": rerun_s, "rerun_writes": rerun_writes,
            "rss_before": rss_before, "read_peak": read_peak.peak, "write_peak": write_peak.peak,
            "rerun_peak": rerun_peak.peak}


def child_copy(graph: str, edges: str) -> dict:
    """Floor: Learner nodes by kstp (untimed), then one ``COPY ANSWERED FROM`` an Arrow table with string keys."""
    from kstp.graph import schema

    store = build_item_graph(Path(graph))
    table = pq.read_table(edges)
    learners = pc.unique(table["from_id"]).to_pandas()
    store.write_nodes("Learner", pd.DataFrame({"id": learners, "kind": "human", "dataset": DATASET,
                                               "localId": learners.str.split(":", n=1).str[1]}))
    kinds = {"STRING": pa.string(), "DOUBLE": pa.float64(), "INT64": pa.int64(), "BOOLEAN": pa.bool_()}
    arrow_rows = pa.table({c: table[c] if c in table.column_names else pa.nulls(len(table), kinds[kind])  # noqa: F841
                           for c, kind in [("from_id", "STRING"), ("to_id", "STRING"),
                                           *schema.rel_type("ANSWERED", "Learner", "Question").properties]})
    del table
    with PeakRss() as peak:
        start = time.perf_counter()
        store._conn.execute("COPY ANSWERED FROM arrow_rows (from='Learner', to='Question')")
        seconds = time.perf_counter() - start
    edges_in_graph = _answered_count(store)
    store.close()
    return {"seconds": seconds, "edges_in_graph": edges_in_graph, "copy_peak": peak.peak}


def child_unwind(graph: str, edges: str, mode: str) -> dict:
    """Baseline: Learner nodes by kstp (untimed), then ANSWERED edges by UNWIND Cypher in batches."""
    import ladybug

    rows = pd.read_parquet(edges)
    store = build_item_graph(Path(graph))
    learners = rows["from_id"].unique()
    store.write_nodes("Learner", pd.DataFrame({"id": learners, "kind": "human", "dataset": DATASET,
                                               "localId": [i.split(":", 1)[1] for i in learners]}))
    store.close()
    db = ladybug.Database(graph)
    conn = ladybug.Connection(db)
    text = {"create": _CREATE, "merge": _MERGE}[mode]
    records = rows.astype(object).to_dict("records")
    start = time.perf_counter()
    for i in range(0, len(records), BATCH):
        conn.execute(text, {"rows": records[i:i + BATCH]})
    seconds = time.perf_counter() - start
    result = conn.execute("MATCH ()-[r:ANSWERED]->() RETURN count(*)")
    edges_in_graph = int(result.get_next()[0])
    conn.close()
    db.close()
    return {"seconds": seconds, "edges": len(rows), "edges_in_graph": edges_in_graph}


def child_setup(graph: str) -> dict:
    """The graph a re-run step starts from: the Coherence Map and the annotation map (untimed)."""
    build_item_graph(Path(graph)).close()
    return {}


def _wide_log(folder: Path, learners: int) -> tuple[Path, Path]:
    """Items ``w01..w20`` and a wide 0/1 matrix of ``learners`` rows over them (seeded)."""
    items = folder / "wide_items.csv"
    names = [f"w{j:02d}" for j in range(1, WIDE_ITEMS + 1)]
    items.write_text("item_id,text,answer\n" + "".join(f"{n},question {n},1\n" for n in names))
    cells = np.random.default_rng(43).integers(0, 2, size=(learners, WIDE_ITEMS)).astype(np.int8)
    wide = folder / "wide.csv"
    with open(wide, "w") as out:
        out.write("learner," + ",".join(names) + "\n")
        for start in range(0, learners, 50_000):
            block = cells[start:start + 50_000]
            out.writelines(f"p{start + i:07d}," + ",".join(map(str, row)) + "\n"
                           for i, row in enumerate(block.tolist()))
    return items, wide


def rerun_step(tmp: Path, pykt_csv: Path, quick: bool) -> list[dict]:
    """``kstp ingest responses`` twice on the same file, as a user runs it, for the two log shapes."""
    shapes = []
    graph = f"ladybug:{tmp / 'rerun_pykt'}"
    run_isolated("benchmarks.ingest:child_setup", graph=str(tmp / "rerun_pykt"))
    args = ("--graph", graph, "ingest", "responses", str(pykt_csv), "--dataset", DATASET, "--format", "pykt",
            "--json")
    shapes.append({"shape": "pyKT log (XES3G5M scale)", "first": run_cli(*args), "again": run_cli(*args)})
    learners = WIDE_QUICK if quick else WIDE
    items, wide = _wide_log(tmp, learners)
    graph = f"ladybug:{tmp / 'rerun_wide'}"
    run_cli("--graph", graph, "ingest", "items", str(items), "--dataset", "wide")
    args = ("--graph", graph, "ingest", "responses", str(wide), "--dataset", "wide", "--json")
    shapes.append({"shape": f"wide matrix ({learners:,} x {WIDE_ITEMS})", "first": run_cli(*args),
                   "again": run_cli(*args)})
    for shape in shapes:
        first, again = (json.loads(shape[k].pop("stdout"))["written"] for k in ("first", "again"))
        shape["answers"] = first["ANSWERED"]["created"]
        shape["rerun_writes"] = sum(again[k]["created"] + again[k]["updated"] for k in again)
        shape["rerun_unchanged"] = again["ANSWERED"]["unchanged"]
    return shapes


def child_pipeline(graph: str) -> dict:
    """The steps after ingest on the full graph: Eq. 1 (strict) and PSR with write-back."""
    from kstp.evaluators.psr import evaluate_dataset
    from kstp.graph.factory import open_store
    from kstp.graph.structures import derive_question_prerequisites

    store = open_store(f"ladybug:{graph}")
    with PeakRss() as derive_peak:
        start = time.perf_counter()
        derivation = derive_question_prerequisites(store, DATASET, "strict")
        derive_s = time.perf_counter() - start
    with PeakRss() as peak:
        start = time.perf_counter()
        result = evaluate_dataset(store, DATASET)
        psr_s = time.perf_counter() - start
    learners = result.learners  # aggregate()'s per-learner table
    store.close()
    return {"derive_s": derive_s, "derive_peak": derive_peak.peak, "pairs": derivation.edges, "psr_s": psr_s,
            "psr_peak": peak.peak, "learners": len(learners), "psrMicro": float(learners["psrMicro"].mean()),
            "psrMacro": float(learners["psrMacro"].mean())}


# ---- driver ------------------------------------------------------------------------------------
def main(quick: bool = False) -> dict:
    size = sizes(quick)
    banner(f"(a) ingest: synthetic XES3G5M-scale log -> LadybugDB{' [quick]' if quick else ''}")
    with workdir("ingest") as tmp:
        start = time.perf_counter()
        log = synthetic_log(size.learners, size.min_answers, size.max_answers)
        csv = tmp / "synthetic_pykt.csv"
        csv_rows = log.to_pykt_csv(csv)
        gen_s = time.perf_counter() - start
        print(f"log: {fmt_int(log.n_learners)} learners, {fmt_int(len(log))} answers over the annotation map, "
              f"pyKT CSV {csv_rows:,} rows / {fmt_bytes(csv.stat().st_size)} (generated in {fmt_s(gen_s)} s)",
              flush=True)

        rng = np.random.default_rng(1)
        pick = np.sort(rng.choice(len(log), size=min(size.unwind_edges, len(log)), replace=False))
        sample = pd.DataFrame({"from_id": f"{DATASET}:" + pd.Series(log.learner[pick]).astype(str),
                               "to_id": f"{DATASET}:" + pd.Series(log.question[pick]).astype(str),
                               "correct": log.correct[pick], "position": log.position[pick]})
        sample.to_parquet(tmp / "sample.parquet")
        pq.write_table(pa.table({"from_id": _ids(log.learner), "to_id": _ids(log.question),
                                 "correct": log.correct, "position": log.position}), tmp / "edges.parquet")
        del log

        kstp = run_isolated("benchmarks.ingest:child_ingest", graph=str(tmp / "graph"), csv=str(csv))
        floor = run_isolated("benchmarks.ingest:child_copy", graph=str(tmp / "copy"), edges=str(tmp / "edges.parquet"))
        base = {mode: run_isolated("benchmarks.ingest:child_unwind", graph=str(tmp / f"unwind_{mode}"),
                                   edges=str(tmp / "sample.parquet"), mode=mode)
                for mode in ("create", "merge")}
        pipe = run_isolated("benchmarks.ingest:child_pipeline", graph=str(tmp / "graph"))
        reruns = rerun_step(tmp, csv, quick)

    edges = kstp["edges"]
    if edges != kstp["answers"]:
        print(f"PROBLEM: {kstp['answers']:,} answers read but {edges:,} ANSWERED edges in the graph")
    if kstp["rerun_writes"]:
        print(f"PROBLEM: the re-run of write_answers wrote {kstp['rerun_writes']:,} rows; it should write none")
    if floor["edges_in_graph"] != edges:
        print(f"PROBLEM: the COPY floor wrote {floor['edges_in_graph']:,} of {edges:,} edges")
    for mode, b in base.items():
        if b["edges_in_graph"] != b["edges"]:
            print(f"PROBLEM: UNWIND/{mode} wrote {b['edges_in_graph']:,} of {b['edges']:,} edges")
    write_rate = edges / kstp["write_s"]
    ingest_s = kstp["read_s"] + kstp["write_s"]
    total_rate = edges / ingest_s
    ingest_peak = max(kstp["read_peak"] or 0, kstp["write_peak"] or 0) or None
    floor_rate = edges / floor["seconds"]
    rows = [
        ["kstp read_pykt (CSV streamed in chunks)", fmt_s(kstp["read_s"]), fmt_int(edges / kstp["read_s"]),
         fmt_bytes(kstp["read_peak"]), "-"],
        ["kstp write_answers (COPY path)", fmt_s(kstp["write_s"]), fmt_int(write_rate),
         fmt_bytes(kstp["write_peak"]), "-"],
        ["kstp ingest = read_pykt + write_answers", fmt_s(ingest_s), fmt_int(total_rate), fmt_bytes(ingest_peak), "-"],
        ["kstp write_answers re-run (no-op)", fmt_s(kstp["rerun_s"]), fmt_int(edges / kstp["rerun_s"]),
         fmt_bytes(kstp["rerun_peak"]), "-"],
        ["floor: one Ladybug COPY FROM Arrow, string keys", fmt_s(floor["seconds"]), fmt_int(floor_rate),
         fmt_bytes(floor["copy_peak"]), "floor"],
    ]
    ratios = {}
    for mode, b in base.items():
        rate = b["edges"] / b["seconds"]
        ratios[mode] = write_rate / rate
        rows.append([f"baseline UNWIND/{mode.upper()} ({b['edges']:,} edges, batches of {BATCH:,})",
                     fmt_s(b["seconds"]), fmt_int(rate), fmt_bytes(b["peak_rss"]), "baseline"])
    rows[1][4] = (" / ".join(f"{fmt_ratio(ratios[m])} vs {m.upper()}" for m in base)
                  + f"; {fmt_ratio(write_rate / floor_rate)} of the floor")
    rows[2][4] = (" / ".join(f"{fmt_ratio(total_rate / (base[m]['edges'] / base[m]['seconds']))} vs {m.upper()}"
                             for m in base) + f"; {fmt_ratio(total_rate / floor_rate)} of the floor")
    print(f"kstp wrote {edges:,} ANSWERED edges (graph setup: Coherence Map + annotation map, "
          f"{fmt_s(kstp['setup_s'])} s, RSS {fmt_bytes(kstp['rss_before'])} before the timed steps); "
          f"whole ingest process peak {fmt_bytes(kstp['peak_rss'])}")
    print_table(["step", "seconds", "edges/s", "peak RSS", "throughput ratio"], rows)
    print("peak RSS: per step, the high-water mark reset at the step's start (it includes what the process already "
          "held: the graph setup, and after the write Ladybug's buffer pool); the ingest row is the higher of its "
          "two steps. Baseline rows: whole isolated process.")
    print("note: the UNWIND baseline writes into a nearly empty ANSWERED table, which favours the baseline.")
    print(f"targets (issue 14; before: 0.5 M edges/s, 2.3 GB): ingest (read + write) >= {RATE_TARGET:,} edges/s: "
          f"{fmt_int(total_rate)}, {'met' if total_rate >= RATE_TARGET else 'MISSED'} (the COPY floor alone: "
          f"{fmt_int(floor_rate)}); ingest peak <= 1.5 GiB: {fmt_bytes(ingest_peak)}, "
          f"{'met' if ingest_peak and ingest_peak <= RSS_TARGET else 'MISSED'}")
    print(f"then on the ingested graph: derive_question_prerequisites (strict) {fmt_s(pipe['derive_s'])} s, "
          f"{pipe['pairs']:,} pairs written, peak RSS {fmt_bytes(pipe['derive_peak'])}; evaluate_dataset with "
          f"write-back {fmt_s(pipe['psr_s'])} s, peak RSS {fmt_bytes(pipe['psr_peak'])}; {pipe['learners']:,} "
          f"learners, mean micro PSR {pipe['psrMicro']:.4f}, macro {pipe['psrMacro']:.4f}")
    banner("(a) ingest: the re-run beside the first run, kstp ingest responses as a user runs it")
    rows, ratios_rerun = [], []
    for shape in reruns:
        ratio = shape["again"]["wall"] / shape["first"]["wall"]
        ratios_rerun.append(ratio)
        rows.append([shape["shape"], fmt_int(shape["answers"]), fmt_s(shape["first"]["wall"]),
                     fmt_s(shape["again"]["wall"]), f"{ratio:.2f}", fmt_bytes(shape["first"]["peak_rss"]),
                     fmt_bytes(shape["again"]["peak_rss"])])
        if shape["rerun_writes"] or shape["rerun_unchanged"] != shape["answers"]:
            print(f"PROBLEM: the re-run of the {shape['shape']} wrote {shape['rerun_writes']:,} rows and found "
                  f"{shape['rerun_unchanged']:,} of {shape['answers']:,} answers unchanged; it should write none")
    print_table(["kstp ingest responses", "answers", "first run s", "re-run s", "re-run / first", "first peak RSS",
                 "re-run peak RSS"], rows)
    worst = max(ratios_rerun)
    threads = ", ".join(f"{k}={v}" for k, v in THREADS.items())
    print(f"wall time of the whole command (interpreter start included), {threads}; "
          f"target (issue 43): a re-run costs at most the first run, re-run / first <= {RERUN_TARGET}: "
          f"{worst:.2f} at worst, {'met' if worst <= RERUN_TARGET else 'MISSED'}")
    return {"edges": edges, "write_s": kstp["write_s"], "read_s": kstp["read_s"], "edges_per_s": write_rate,
            "reruns": [{"shape": s["shape"], "answers": s["answers"], "first_s": s["first"]["wall"],
                        "rerun_s": s["again"]["wall"]} for s in reruns], "rerun_ratio": worst,
            "ingest_edges_per_s": total_rate, "ingest_peak": ingest_peak, "floor_edges_per_s": floor_rate,
            "rerun_s": kstp["rerun_s"], "peak_rss": kstp["peak_rss"],
            "ratio_vs_create": ratios["create"], "ratio_vs_merge": ratios["merge"],
            "pipeline": pipe}


if __name__ == "__main__":
    main()


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    return (f"ingest: {r['edges']:,} edges, read + write {r['ingest_edges_per_s']:,.0f} edges/s "
            f"(COPY floor {r['floor_edges_per_s']:,.0f}), write_answers {r['edges_per_s']:,.0f} edges/s; "
            "per-edge throughput "
            f"{fmt_ratio(r['ratio_vs_create'])} UNWIND/CREATE, {fmt_ratio(r['ratio_vs_merge'])} UNWIND/MERGE; "
            "kstp ingest responses re-run / first run "
            + ", ".join(f"{s['rerun_s'] / s['first_s']:.2f} ({s['shape']})" for s in r["reruns"]))
