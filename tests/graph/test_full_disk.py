"""A write that finds no room on disk ends in one line, keeps nothing of itself, and leaves a graph kstp opens.

The file system's refusal is made real without filling a disk: the kstp process runs with a
file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored), so the engine's write fails with EFBIG the way a
full disk fails it with ENOSPC (the same branch; a 12 MB tmpfs gave the ENOSPC line by hand).
Embedded engine only: Neo4j's disk is its server's, whose refusal is already a one-line QueryError.
"""

from __future__ import annotations

import json
import random
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

KSTP = str(Path(sys.executable).parent / "kstp")


def _limited(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), no signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _kstp(*args, limit: int | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([KSTP, *map(str, args)], capture_output=True, text=True, timeout=600,
                          preexec_fn=_limited(limit) if limit else None)


@pytest.fixture
def wide(tmp_path, data_root):
    """The probability items in a fresh graph and 100,000 learners' answers to them (1.2 M answers)."""
    pks = data_root / "responses" / "probability_pks"
    graph = f"ladybug:{tmp_path / 'graph'}"
    assert _kstp("--graph", graph, "ingest", "items", pks / "items.csv", "--dataset", "pks").returncode == 0
    rng = random.Random(1)
    path = tmp_path / "wide.csv"
    items = [f"b1{i:02d}" for i in range(1, 13)]
    path.write_text("person_id," + ",".join(items) + "\n" + "".join(
        f"x{n:06d}," + ",".join(rng.choice("01") for _ in items) + "\n" for n in range(100_000)))
    return graph, path


def _answers(graph: str) -> tuple[int, int]:
    [row] = json.loads(_kstp("--graph", graph, "db", "stats", "--json").stdout)["datasets"]
    return row["learners"], row["answers"]


def test_an_ingest_that_finds_no_room_says_so_in_one_line_and_keeps_nothing(wide):
    graph, path = wide
    failed = _kstp("--graph", graph, "ingest", "responses", path, "--dataset", "pks", limit=4 * 2**20)
    errors = [line for line in failed.stderr.splitlines() if line.startswith("Error")]
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert len(errors) == 1 and " could not be written (" in errors[0], errors
    assert "this command's write did not finish" in errors[0]
    if _kstp("--graph", graph, "db", "stats").returncode != 0:  # cut mid-checkpoint: a write finishes it
        assert _kstp("--graph", graph, "db", "init").returncode == 0
    assert _answers(graph) in ((0, 0), (100_000, 1_200_000))  # the whole write or none of it
    again = _kstp("--graph", graph, "ingest", "responses", path, "--dataset", "pks", "--json")
    assert again.returncode == 0, again.stderr
    assert _answers(graph) == (100_000, 1_200_000)


def test_an_output_file_that_finds_no_room_is_one_line(wide, tmp_path):
    graph, path = wide
    assert _kstp("--graph", graph, "ingest", "responses", path, "--dataset", "pks").returncode == 0
    out = tmp_path / "answers.csv"
    failed = _kstp("--graph", graph, "kst", "export", "--dataset", "pks", "--what", "data", "--to", out,
                   limit=64 * 1024)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    [error] = [line for line in failed.stderr.splitlines() if line.startswith("Error")]
    assert error.startswith("Error: writing ") and "File too large; the file is incomplete" in error
