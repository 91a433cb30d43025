"""While one kstp ingests 1.8 M answers into the embedded graph, 100 reads all succeed and a second writer is
told in one line which process holds the graph.

The README promises that read-only commands work while another kstp writes; before, 6 of 13
``kstp db stats`` during a 1.94 M-answer ingest failed with the engine's raw recovery message
(a read that met the writer's checkpoint). A read now sees the last committed state, or waits
for the checkpoint (at most 15 s) and then reads. Each read opens the graph afresh, read-only,
as a command does: ``kstp db stats`` in a process of its own now and then, the store in this
process in between (a process start costs a second here). Embedded engine only: Neo4j's
server serves readers beside a writer by itself.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

from kstp.errors import KstpError
from kstp.graph.ladybug import LadybugStore

KSTP = str(Path(sys.executable).parent / "kstp")


def test_100_reads_and_a_second_writer_during_a_large_ingest(tmp_path, data_root):
    pks = data_root / "responses" / "probability_pks"
    graph = f"ladybug:{tmp_path / 'graph'}"
    run = lambda *args: subprocess.run([KSTP, "--graph", graph, *map(str, args)],  # noqa: E731
                                       capture_output=True, text=True, timeout=600)
    assert run("ingest", "items", pks / "items.csv", "--dataset", "pks").returncode == 0
    rng = random.Random(7)
    items = [f"b1{i:02d}" for i in range(1, 13)]
    wide = tmp_path / "wide.csv"
    wide.write_text("person_id," + ",".join(items) + "\n" + "".join(
        f"x{n:06d}," + ",".join(rng.choice("01") for _ in items) + "\n" for n in range(150_000)))
    small = tmp_path / "small.csv"
    small.write_text("learner,item,correct\nsomeone,b101,1\n")

    writer = subprocess.Popen([KSTP, "--graph", graph, "ingest", "responses", wide, "--dataset", "pks"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reads, refusals, learners_seen = [], [], set()
    while writer.poll() is None or len(reads) < 100:
        if writer.poll() is None and len(reads) % 25 == 10:  # a second writer now and then
            second = run("ingest", "responses", small, "--dataset", "pks")
            if second.returncode != 0:
                refusals.append(second.stderr.strip())
        running = writer.poll() is None
        if len(reads) % 10 == 0:
            result = run("db", "stats", "--json")
            reads.append((result.returncode, result.stderr.strip()[-300:], running))
            if result.returncode == 0:
                [row] = json.loads(result.stdout)["datasets"]
                learners_seen.add(row["learners"])
        else:
            try:
                with LadybugStore(tmp_path / "graph", read_only=True) as store:
                    learners_seen.add(int(store.read_statement("MATCH (l:Learner) RETURN count(l) AS n")["n"][0]))
                reads.append((0, "", running))
            except KstpError as exc:
                reads.append((1, str(exc), running))
        if len(reads) >= 100 and writer.poll() is not None:
            break
        time.sleep(0.01)
    assert writer.wait(600) == 0, writer.stderr.read()
    during = [r for r in reads if r[2]]
    assert len(reads) >= 100 and len(during) >= 10, (len(reads), len(during))  # most while the ingest ran
    assert all(code == 0 for code, _, _ in reads), [r for r in reads if r[0] != 0][:3]
    # the last committed state: none of the large ingest or all of it (with or without the second writer's one)
    assert learners_seen <= {0, 1, 150_000, 150_001}
    errors = [[line for line in r.splitlines() if line.startswith("Error")] for r in refusals]
    assert all(len(e) == 1 and "is open for writing in process" in e[0] for e in errors), refusals
