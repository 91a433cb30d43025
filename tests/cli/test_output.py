"""Which graph a command opened, read-only opening, the write lock, exit codes, input refusals at the CLI."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.graph.ladybug import LadybugStore
from tests.conftest import load_toy

ROOT = Path(__file__).resolve().parents[2]


def _run(graph, *args):
    return CliRunner().invoke(cli, ["--graph", graph, *map(str, args)])


def _toy(tmp_path) -> Path:
    path = tmp_path / "graph"
    store = LadybugStore(path)
    store.ensure_schema()
    load_toy(store, tmp_path)
    store.close()
    return path


def test_db_stats_names_the_graph_and_a_missing_graph_is_named(tmp_path):
    path = _toy(tmp_path)
    result = _run(f"ladybug:{path}", "db", "stats", "--json")
    assert result.exit_code == 0 and json.loads(result.output)["graph"] == f"ladybug:{path.resolve()}"
    assert _run(f"ladybug:{path}", "db", "stats").output.splitlines()[0] == f"Graph: ladybug:{path.resolve()}"
    missing = _run(f"ladybug:{tmp_path / 'none'}", "db", "stats")
    assert missing.exit_code == 1
    assert f"no graph at {(tmp_path / 'none').resolve()}: nothing was ingested there yet" in missing.output
    assert not (tmp_path / "none").exists()  # a read-only command creates nothing


def test_a_command_that_finds_nothing_names_the_graph(tmp_path):
    path = _toy(tmp_path)
    empty = _run(f"ladybug:{path}", "query", "runs_of", "-p", "evaluator=x", "-p", "model=m", "-p", "dataset=toy")
    assert empty.exit_code == 0 and f"runs_of: no rows in the graph ladybug:{path.resolve()}" in empty.output
    result = _run(f"ladybug:{path}", "kst", "fringe", "--dataset", "frcsub", "--state", "q1")
    assert result.exit_code == 1
    assert result.output.strip().endswith(f"(graph: ladybug:{path.resolve()})")
    assert "unknown dataset 'frcsub'" in result.output


def test_read_only_commands_leave_the_graph_file_untouched(tmp_path):
    path = _toy(tmp_path)
    before, files = hashlib.sha256(path.read_bytes()).hexdigest(), sorted(p.name for p in tmp_path.iterdir())
    for args in (("db", "stats"), ("query", "datasets"), ("kst", "check", "--dataset", "toy", "--state", "q1")):
        assert _run(f"ladybug:{path}", *args).exit_code == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files


def test_a_writable_command_that_writes_nothing_leaves_the_graph_file_untouched(tmp_path):
    """Ladybug checkpoints a database opened for writing when it closes; a no-op command must not open it so."""
    path = _toy(tmp_path)
    ingest = ("ingest", "standards", tmp_path / "toy.csv", "--edges", tmp_path / "toy_edges.csv", "--framework", "toy")
    derive = ("derive", "question-prerequisites", "--dataset", "toy")
    assert _run(f"ladybug:{path}", *derive).exit_code == 0  # writes the derived edges
    before, files = hashlib.sha256(path.read_bytes()).hexdigest(), sorted(p.name for p in tmp_path.iterdir())
    for args in (("db", "init"), ingest, derive):  # each finds everything in place
        result = _run(f"ladybug:{path}", *args)
        assert result.exit_code == 0, result.output
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before, args
        assert sorted(p.name for p in tmp_path.iterdir()) == files
    assert _run(f"ladybug:{path}", *derive[:-1], "toy", "--rule", "reflexive").exit_code == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() != before  # a command that writes still writes


def test_a_second_writer_is_told_who_holds_the_lock_and_readers_go_on(tmp_path):
    path = _toy(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[2]); "
         "import pandas as pd; from kstp.graph.ladybug import LadybugStore; s = LadybugStore(sys.argv[1]); "
         "s.write_nodes('Framework', pd.DataFrame([{'id': 'held'}])); "
         "print('open', flush=True); time.sleep(60)", str(path), str(ROOT)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        time.sleep(0.5)
        writer = _run(f"ladybug:{path}", "db", "reset", "--yes")  # refused at its first write, before deleting
        assert writer.exit_code == 1
        assert f"the graph at {path.resolve()} is open for writing in process {holder.pid}; wait for it" in \
            writer.output and "Neo4j" in writer.output
        reader = _run(f"ladybug:{path}", "query", "datasets", "--format", "json")
        assert reader.exit_code == 0 and [d["datasetId"] for d in json.loads(reader.output)] == ["toy"]
    finally:
        holder.kill()
        holder.wait()


def test_exit_codes_usage_and_bad_input(tmp_path):
    path = _toy(tmp_path)
    assert _run(f"ladybug:{path}", "db", "stats", "--no-such-option").exit_code == 2
    (tmp_path / "r.csv").write_bytes("person,q1\np\xe9,1\n".encode("latin-1"))
    result = _run(f"ladybug:{path}", "ingest", "responses", tmp_path / "r.csv", "--dataset", "toy")
    assert result.exit_code == 1
    assert "r.csv:2: not UTF-8 text (byte 11); save the file as UTF-8" in result.output


def test_ingest_responses_missing_blank_counts_not_attempted(tmp_path):
    path = _toy(tmp_path)
    (tmp_path / "w.csv").write_text("person,q1,q2\nn1,1,\nn2,,0\n")
    refused = _run(f"ladybug:{path}", "ingest", "responses", tmp_path / "w.csv", "--dataset", "toy")
    assert refused.exit_code == 1 and "w.csv:2 column 'q2': blank cell" in refused.output
    result = _run(f"ladybug:{path}", "ingest", "responses", tmp_path / "w.csv", "--dataset", "toy",
                  "--missing", "blank", "--json")
    assert result.exit_code == 0
    assert json.loads(result.output)["notes"]["blank cells read as not attempted"] == 2
