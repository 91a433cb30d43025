"""An embedded graph whose writer died (or stalled) mid-checkpoint: recovered by the next store that may
write, waited for or explained in one line by a read-only one (issue 33, §1 and §2); one whose write-ahead
log was cut short: read up to its last whole transaction, and recovered so (issue 43 §1).

The writer is a child process that commits batches of Learner nodes and checkpoints after
each (the write-ahead log stays small: no automatic checkpoint comes between); the test
stops or kills it the moment the checkpoint's shadow file appears, which is where a crash
leaves "checkpoint recovery is pending" on disk.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import ConfigError
from kstp.graph import ladybug as engine
from kstp.graph.ladybug import LadybugStore

BATCH = 1_000  # below COPY_MIN_ROWS: CREATE, whose rows the write-ahead log holds until a checkpoint
ROOT = Path(__file__).resolve().parents[2]
WRITER = f"""
import sys
import pandas as pd
from kstp.graph.ladybug import LadybugStore
store = LadybugStore(sys.argv[1])
store.ensure_schema()
store._for_writing()
for batch in range(1000):
    ids = [f"l{{batch}}-{{i}}" for i in range({BATCH})]
    store.write_nodes("Learner", pd.DataFrame({{"id": ids, "kind": "human"}}))
    print(batch + 1, flush=True)  # committed: in the write-ahead log
    store._conn.execute("CHECKPOINT")
"""


def _writer_in_checkpoint(path: Path) -> tuple[subprocess.Popen, int]:
    """A writer caught (SIGSTOP) inside a checkpoint, and how many batches it had committed."""
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    shadow, deadline = path.with_name(path.name + ".shadow"), time.monotonic() + 120
    while not shadow.exists():
        assert child.poll() is None and time.monotonic() < deadline, "the writer never checkpointed"
        time.sleep(0.0005)
    os.kill(child.pid, signal.SIGSTOP)
    committed = 0
    os.set_blocking(child.stdout.fileno(), False)
    for line in child.stdout:
        committed = int(line)
    assert committed >= 1
    return child, committed


def _learners(path: Path, read_only: bool = True) -> int:
    store = LadybugStore(path, read_only=read_only)
    try:
        return len(store.nodes("Learner"))
    finally:
        store.close()


@pytest.fixture
def crashed(tmp_path) -> tuple[Path, int]:
    """A graph whose writer was killed mid-checkpoint, and its committed Learner count."""
    path = tmp_path / "graph"
    child, committed = _writer_in_checkpoint(path)
    child.kill()
    child.wait()
    assert path.with_name("graph.shadow").exists()
    return path, committed * BATCH


def test_a_read_only_open_of_a_crashed_graph_names_the_command_that_recovers_it(crashed):
    path, _ = crashed
    with pytest.raises(ConfigError, match=r"left mid-checkpoint by a process that stopped \(a crash, a kill or a "
                                          r"full disk\); nothing committed is lost: any command that writes "
                                          r"recovers it once its disk has room, e.g. kstp db init"):
        LadybugStore(path, read_only=True)
    result = CliRunner().invoke(cli, ["--graph", f"ladybug:{path}", "db", "stats"])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "left mid-checkpoint" in result.stderr


def test_the_next_store_that_may_write_recovers_every_committed_row(crashed):
    path, committed = crashed
    assert _learners(path, read_only=False) == committed  # every batch committed before the kill, no more
    assert not path.with_name("graph.shadow").exists()
    assert _learners(path) == committed  # and read-only opens work again


def test_kstp_db_init_recovers_a_crashed_graph(crashed):
    path, committed = crashed
    result = CliRunner().invoke(cli, ["--graph", f"ladybug:{path}", "db", "init"])
    assert result.exit_code == 0, result.output
    assert _learners(path) == committed


def test_a_reader_waits_for_a_live_writers_checkpoint_then_reads(tmp_path):
    path = tmp_path / "graph"
    child, committed = _writer_in_checkpoint(path)
    try:
        resume = threading.Timer(0.5, os.kill, (child.pid, signal.SIGCONT))
        resume.start()
        started = time.monotonic()
        store = LadybugStore(path, read_only=True)  # blocked by the checkpoint until the writer goes on
        waited = time.monotonic() - started
        try:
            assert len(store.nodes("Learner")) >= committed * BATCH
        finally:
            store.close()
        resume.join()
        assert waited >= 0.4
    finally:
        child.kill()
        child.wait()


HOLDER = """
import sys
from kstp.graph.ladybug import LadybugStore
store = LadybugStore(sys.argv[1])
store._for_writing()
print("holding", flush=True)
sys.stdin.read()
"""


def test_a_reader_waits_while_a_live_writer_writes_the_file_past_its_end_and_names_a_damaged_one(tmp_path):
    """A read-only open that finds pages the header names past the end of the file (Ladybug: "out of bounds
    for file with N pages", "outside the database file with N pages"; the state a live writer's checkpoint
    leaves while it writes, which made the test above fail once in a full suite run) waits while a process
    holds the graph for writing, and reads once the file is whole; with nobody writing it is one line at once.
    The file is cut short by hand here, the writer idle: the moment is made, not waited for."""
    path = tmp_path / "graph"
    with LadybugStore(path) as store:
        store.ensure_schema()
        store.write_nodes("Learner", pd.DataFrame({"id": [f"l{i}" for i in range(3000)], "kind": "human"}))
    whole = path.read_bytes()
    half = len(whole) // 2

    def mend():  # the rest appended in place: the file never reads as empty or as another inode
        with open(path, "r+b") as file:
            file.seek(half)
            file.write(whole[half:])

    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline() == "holding\n"
        os.truncate(path, half)
        mended = threading.Timer(0.5, mend)
        mended.start()
        started = time.monotonic()
        with LadybugStore(path, read_only=True) as store:
            waited = time.monotonic() - started
            assert len(store.nodes("Learner")) == 3000
        mended.join()
        assert waited >= 0.4
    finally:
        holder.kill()
        holder.wait()
    os.truncate(path, half)  # nobody writes it: damaged, said at once
    started = time.monotonic()
    with pytest.raises(ConfigError, match=r"^cannot open the Ladybug graph at .*outside the database file"):
        LadybugStore(path, read_only=True)
    assert time.monotonic() - started < 5


def test_a_stalled_writers_checkpoint_is_named_and_a_second_writer_told_who_holds_the_graph(tmp_path, monkeypatch):
    path = tmp_path / "graph"
    child, _ = _writer_in_checkpoint(path)
    monkeypatch.setattr(engine, "CHECKPOINT_WAIT_S", 0.3)
    try:
        with pytest.raises(ConfigError, match=rf"is being checkpointed by process {child.pid} \(over 0 s\); "
                                              r"try again when it finishes"):
            LadybugStore(path, read_only=True)
        with pytest.raises(ConfigError, match=rf"is open for writing in process {child.pid}; wait for it"):
            LadybugStore(path)
    finally:
        child.kill()
        child.wait()


# ---- a write-ahead log cut short (issue 43 §1) ------------------------------------------------
LOGGED = 3  # transactions the log holds when the writer is killed
LOG_WRITER = f"""
import os, signal, sys
import pandas as pd
from kstp.graph.ladybug import LadybugStore
store = LadybugStore(sys.argv[1])
store.ensure_schema()
for batch in range({LOGGED}):  # CREATE (below COPY_MIN_ROWS): each commit appends to the log, none checkpoints
    store.write_nodes("Learner", pd.DataFrame({{"id": [f"l{{batch}}-{{i}}" for i in range({BATCH})], "kind": "human"}}))
    print(os.path.getsize(sys.argv[1] + ".wal"), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no checkpoint at close: the log stays as written
"""


def _logged_graph(path: Path) -> list[int]:
    """A graph whose write-ahead log holds :data:`LOGGED` committed transactions; the log's size after each."""
    child = subprocess.run([sys.executable, "-c", LOG_WRITER, str(path)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    sizes = [int(line) for line in child.stdout.split()]
    assert len(sizes) == LOGGED and path.with_name("graph.wal").stat().st_size == sizes[-1]
    return sizes


def _kstp(path: Path, *args: str) -> subprocess.CompletedProcess:
    from tests.graph.servers import kstp

    return kstp("--graph", f"ladybug:{path}", *args)


@pytest.mark.parametrize("into", ["the last record by 1 byte", "the last record by 113 bytes",
                                  "the transaction before it"])
def test_a_wal_cut_short_is_read_to_its_last_whole_transaction_and_recovered_by_a_writer(tmp_path, into):
    """A real log (three committed transactions of 1,000 learners), cut short as a kill while appending
    leaves it: the engine refuses the graph ("Checksum verification failed, the WAL file is corrupted"); a
    read-only command reads it up to the last whole transaction and says so in one line; the next command
    that writes recovers it, keeps the damaged log beside the graph and says in one line what it kept and
    what it did not."""
    import ladybug

    path = tmp_path / "graph"
    sizes = _logged_graph(path)
    log = path.with_name("graph.wal")
    cut = {"the last record by 1 byte": 1, "the last record by 113 bytes": 113,
           "the transaction before it": sizes[-1] - sizes[-2] + 10}[into]
    whole = 2 if cut < sizes[-1] - sizes[-2] else 1  # transactions left whole
    with log.open("r+b") as handle:
        handle.truncate(sizes[-1] - cut)
    damaged = log.read_bytes()
    with pytest.raises(RuntimeError, match="WAL file is corrupted|Reading past the end of the file"):
        ladybug.Database(str(path), read_only=True)  # what every command met before

    read = _kstp(path, "db", "stats", "--json")
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["nodes"]["Learner"] == whole * BATCH
    [line] = read.stderr.strip().splitlines()
    assert "ends in an incomplete record" in line and "this read sees every transaction before it" in line
    assert "kstp db init" in line and log.read_bytes() == damaged  # a reader changes nothing

    init = _kstp(path, "db", "init")
    assert init.returncode == 0, init.stderr
    [line, ready] = init.stderr.strip().splitlines()
    kept = sizes[whole - 1]
    assert line == (f"recovered the graph at {path.resolve()}: its write-ahead log ended in an incomplete record "
                    "(a process stopped while writing it, or the file was cut); every transaction up to the last "
                    f"whole one is kept ({kept:,} bytes of the log), the {sizes[-1] - cut - kept:,} bytes after it "
                    "are not (the transaction whose record is incomplete); the damaged log is kept as "
                    f"{path.resolve()}.wal.damaged")
    assert ready.startswith("graph ready")
    assert path.with_name("graph.wal.damaged").read_bytes() == damaged
    again = _kstp(path, "db", "stats", "--json")
    assert again.returncode == 0 and again.stderr == ""
    assert json.loads(again.stdout)["nodes"]["Learner"] == whole * BATCH
    with LadybugStore(path) as store:  # and the graph takes writes again
        store.write_nodes("Learner", pd.DataFrame({"id": ["after"], "kind": "human"}))
    assert _learners(path) == whole * BATCH + 1
