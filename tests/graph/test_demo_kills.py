"""``kill -9`` of a running ``kstp demo`` at many moments, on each engine: the next demo recovers the graph and
ends with the figures of a demo never interrupted.

The kills form one chain per engine (issue 44: the same moments in fewer demos): the demo after each kill
recovers the graph it left and is itself killed at the next moment; the one after the last kill runs to its
end. A demo that cannot recover fails before its moment and fails the test.

The moments are read from the demo's own progress lines (``[k/9] ...: done``), so each kill lands
in a known stage: right after a stage ends (the next one is writing), inside the 1.2 M-edge Eq. 1
derivation on xes3g5m (its write and the checkpoint after it), and during PSR's write-back. The
embedded engine is killed at 10 moments; Neo4j, whose server keeps each transaction whole, at 2
(inside the large derivation, and PSR's write-back): each of its demos takes about a minute.
Expected values: one uninterrupted embedded demo's result files (byte for byte on the embedded engine; to
1e-12 on Neo4j, whose row order varies, as tests/cli/test_cli.py holds the two engines' demos) and ``db stats``
counts, which the engines share: the Neo4j chain needs no uninterrupted demo of its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

KSTP = str(Path(sys.executable).parent / "kstp")
RESULTS = ("psr_summary.json", "psr_summary.csv", "psr_learners_frcsub.csv", "psr_learners_probability_pks.csv")
#: (after this progress line appears, wait this many seconds, then kill -9).
LADYBUG_MOMENTS = [("[1/9]", 0.0), ("[2/9]", 0.0), ("[2/9]", 1.0), ("[2/9]", 2.5), ("[3/9]", 0.0), ("[5/9]", 0.0),
                   ("[6/9]", 0.0), ("[7/9]", 0.0), ("[8/9]", 0.0), ("PSR of probability_pks", 0.0)]
NEO4J_MOMENTS = [("[2/9]", 1.0), ("PSR of probability_pks", 0.0)]


def _demo(graph: str, out: Path, env: dict, moment: tuple[str, float] | None = None) -> subprocess.CompletedProcess:
    """``kstp demo``; killed with SIGKILL at ``moment`` when given (returns what it printed until then)."""
    command = [KSTP, "--graph", graph, "demo", "--out", str(out)]
    if moment is None:
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    marker, delay = moment
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    lines = []
    for line in process.stderr:  # the demo's progress, line by line
        lines.append(line)
        if line.startswith(marker):
            time.sleep(delay)
            process.send_signal(signal.SIGKILL)
            break
    process.stderr.close()
    process.wait(900)
    return subprocess.CompletedProcess(command, process.returncode, "", "".join(lines))


def _counts(graph: str, env: dict) -> dict:
    stats = json.loads(subprocess.run([KSTP, "--graph", graph, "db", "stats", "--json"], capture_output=True,
                                      text=True, env=env, check=True).stdout)
    return {"nodes": stats["nodes"], "relationships": stats["relationships"],
            "datasets": sorted(stats["datasets"], key=lambda d: d["datasetId"])}


def _same_results(out: Path, reference: Path, exact: bool) -> None:
    """The result files equal, byte for byte when ``exact``; else to 1e-12 (Neo4j returns rows in no fixed
    order, so PSR's sums may differ in the last bits from one demo to the next, as between engines)."""
    for name in RESULTS:
        if exact:
            assert (out / name).read_bytes() == (reference / name).read_bytes(), name
        elif name.endswith(".csv"):
            pd.testing.assert_frame_equal(pd.read_csv(out / name), pd.read_csv(reference / name), rtol=1e-12)
        else:
            pd.testing.assert_frame_equal(pd.read_json(out / name), pd.read_json(reference / name), rtol=1e-12)


def _check(graph: str, out: Path, env: dict, moments: list, reference: Path, expected: dict, exact: bool) -> None:
    """One chain of demos from an empty graph: each is killed at the next of ``moments`` (in the demo's order), so
    each kill but the first lands in a demo recovering the graph the kill before left, which must get as far as
    the next moment; the last demo runs to its end and must leave the uninterrupted demo's files and counts.
    A demo that fails to recover exits on its own before its moment (not by SIGKILL) and fails the test there."""
    for moment in moments:
        killed = _demo(graph, out, env, moment)
        assert killed.returncode == -signal.SIGKILL, (moment, killed.stderr[-2000:])
    resumed = _demo(graph, out, env)
    assert resumed.returncode == 0, (moments[-1], resumed.stderr[-3000:])
    _same_results(out, reference, exact)
    assert _counts(graph, env) == expected


@pytest.fixture(scope="module")
def demo_env(data_root):
    return {**os.environ, "KSTP_DATA": str(data_root)}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, demo_env) -> tuple[Path, dict]:
    """The result folder and ``db stats`` counts of a demo run to its end on an empty embedded graph."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    assert _demo(f"ladybug:{folder / 'graph'}", folder / "results", demo_env).returncode == 0
    return folder / "results", _counts(f"ladybug:{folder / 'graph'}", demo_env)


def test_kill_9_at_10_moments_of_the_embedded_demo_recovers_every_time(tmp_path, demo_env, uninterrupted):
    _check(f"ladybug:{tmp_path / 'killed'}", tmp_path / "out", demo_env, LADYBUG_MOMENTS, *uninterrupted, exact=True)


def test_kill_9_at_2_moments_of_the_demo_on_neo4j_recovers_every_time(tmp_path, demo_env, uninterrupted,
                                                                        neo4j_server):
    from tests.conftest import connect_neo4j

    env = {**demo_env, "NEO4J_USER": neo4j_server.user, "NEO4J_PASSWORD": neo4j_server.password}
    with connect_neo4j(neo4j_server) as store:
        store.reset()  # the chain starts from an empty graph, as the demo's first run
    _check(neo4j_server.location, tmp_path / "out", env, NEO4J_MOMENTS, *uninterrupted, exact=False)
