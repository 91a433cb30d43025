"""Faults, load and security against real Neo4j servers (issue 11 §5); no mocks.

Connection faults, the server kill and the two concurrent ingests run ``kstp`` in a
subprocess, as a user would, and read its exit status, stdout and stderr. Tests that
kill a server or fail logins use a throw-away server of their own (``own_server``:
``tools/neo4j_server.py --home``, in a tmp folder, on the project's jars), so the shared
test server and its users are not disturbed (three failed logins lock a user for a few
seconds). Ids that look like Cypher run on both engines through the ``store`` fixture.
"""

from __future__ import annotations

import csv
import json
import logging
import socket
import time
from pathlib import Path

import neo4j
import pytest

from kstp.errors import ConfigError
from kstp.graph.neo4j import CONNECT_TIMEOUT_S, RETRY_TIME_S, Neo4jStore
from kstp.loaders import items, responses
from kstp.settings import GraphTarget
from tests.conftest import connect_neo4j as connect
from tests.graph.servers import credentials, kstp, one_error_line, start_kstp


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- connection faults ---------------------------------------------------------------------
WRONG_PASSWORD = "Wr0ng-pa55word-for-the-test"


def _fault(kind: str, target: GraphTarget) -> tuple[str, str, str]:
    """(URI, password, a phrase the error must hold) for a kind of connection fault."""
    hostport = target.location.split("://", 1)[1]
    return {
        "wrong password": (target.location, WRONG_PASSWORD, "refused NEO4J_USER/NEO4J_PASSWORD"),
        "wrong port": (f"neo4j://127.0.0.1:{free_port()}", target.password, "nothing accepts connections"),
        "bolt+s to a plain server": (f"bolt+s://{hostport}", target.password, f"use bolt://{hostport}"),
        "neo4j+s to a plain server": (f"neo4j+s://{hostport}", target.password, f"use neo4j://{hostport}"),
    }[kind]


FAULTS = ["wrong password", "wrong port", "bolt+s to a plain server", "neo4j+s to a plain server"]


@pytest.mark.parametrize("kind", FAULTS)
def test_cli_connection_fault_one_line_exit_1(own_server, kind):
    """``kstp db stats`` on a bad connection: exit 1, one ``Error:`` line naming the cause, nothing
    on stdout, neither the right nor the tried password anywhere, nor in the server's logs."""
    uri, password, phrase = _fault(kind, own_server.target)
    done = kstp("--graph", uri, "db", "stats", env=credentials(own_server.target, password))
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert phrase in one_error_line(done.stderr)
    for secret in (own_server.target.password, WRONG_PASSWORD):
        assert secret not in done.stderr
        assert secret not in own_server.logs()


@pytest.mark.parametrize("kind", FAULTS)
def test_neo4j_store_connection_fault_fast_and_unlogged(own_server, kind, caplog):
    """Opening the store on a bad connection fails within the connect timeout, and the driver's
    debug log (every record, at DEBUG) holds neither password."""
    uri, password, phrase = _fault(kind, own_server.target)
    caplog.set_level(logging.DEBUG, logger="neo4j")
    began = time.monotonic()
    with pytest.raises(ConfigError) as error:
        Neo4jStore(uri, own_server.target.user, password)
    assert time.monotonic() - began < CONNECT_TIMEOUT_S
    assert phrase in str(error.value)
    assert caplog.records, "the driver logged nothing at DEBUG; the log check would be empty"
    for secret in (own_server.target.password, WRONG_PASSWORD):
        assert secret not in caplog.text
        assert secret not in str(error.value)


def test_neo4j_store_silent_port_times_out(monkeypatch):
    """A port that accepts TCP but never speaks Bolt (a hung server): a ConfigError within
    about twice the connect timeout (the driver's attempt, then the diagnosis), not a hang. The timeout is
    made 2 s here: the store reads it when it connects, and the test need not wait 10 s for each attempt."""
    import kstp.graph.neo4j

    timeout = 2.0
    monkeypatch.setattr(kstp.graph.neo4j, "CONNECT_TIMEOUT_S", timeout)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        port = sock.getsockname()[1]
        began = time.monotonic()
        with pytest.raises(ConfigError, match=f"127.0.0.1:{port} does not answer as Neo4j"):
            Neo4jStore(f"bolt://127.0.0.1:{port}", "neo4j", "irrelevant-password")
        assert time.monotonic() - began < 2 * timeout + 5


# ---- ids that look like Cypher ---------------------------------------------------------------
NASTY = ["x'}) DETACH DELETE n //", "`) MATCH (m) DETACH DELETE m //`", "$rows", "q\"} RETURN 1 //",
         "Größe ∑ 数学 🙂", "a\\nb", "{id: 1}"]


def test_store_cypher_like_ids_stored_verbatim(store, tmp_path):
    """Question and learner ids made of Cypher, quotes, backticks, ``$`` and unicode go in as
    parameters: an ingest stores them verbatim, queries by them find them, nothing is deleted."""
    items_csv, answers_csv = tmp_path / "items.csv", tmp_path / "answers.csv"
    with open(items_csv, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["item_id", "text", "answer"])
        writer.writerows([nasty, f"text of {nasty}", nasty] for nasty in NASTY)
    with open(answers_csv, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["learner", "item", "correct"])
        writer.writerows([learner, item, int(i == j)]
                         for i, learner in enumerate(NASTY) for j, item in enumerate(NASTY))
    items.write_items(store, items.read_items_csv(items_csv, "inj"))
    known = set(store.frame("dataset_questions", {"dataset": "inj"})["localId"])
    assert known == set(NASTY)
    responses.write_answers(store, "inj", responses.read_long(answers_csv, known), "answers.csv")

    questions = store.frame("dataset_questions", {"dataset": "inj"})
    assert sorted(questions["questionId"]) == sorted(f"inj:{n}" for n in NASTY)
    assert dict(zip(questions["localId"], questions["answer"], strict=True)) == {n: n for n in NASTY}
    assert sorted(store.frame("dataset_learners", {"dataset": "inj"})["learnerId"]) == sorted(
        f"inj:{n}" for n in NASTY)
    for i, learner in enumerate(NASTY):  # learner i answered only item i correctly
        state = store.frame("knowledge_state", {"dataset": "inj", "learnerId": f"inj:{learner}"})
        assert state["questionId"].tolist() == [f"inj:{NASTY[i]}"]
    assert len(store.frame("answers", {"dataset": "inj"})) == len(NASTY) ** 2
    counts = {r["label"]: r["count"] for r in store.run("node_counts")}
    assert (counts["Question"], counts["Learner"], counts["Dataset"]) == (len(NASTY), len(NASTY), 1)


# ---- load: two ingests at once, a server killed mid-ingest --------------------------------
def write_log(folder: Path, learners: range, questions: int, per_learner: int, name: str) -> Path:
    """A long-format answers CSV: learner ``L<i>`` answers questions ``i .. i+per_learner`` (mod
    ``questions``), correct when ``(i * 7 + j) % 3`` is not 0; deterministic, no repeats."""
    path = folder / name
    with open(path, "w", newline="") as out:
        out.write("learner,item,correct\n")
        for i in learners:
            out.writelines(f"L{i},Q{(i + k) % questions},{int((i * 7 + k) % 3 != 0)}\n" for k in range(per_learner))
    return path


def write_items(folder: Path, questions: int) -> Path:
    path = folder / "items.csv"
    path.write_text("item_id,text,answer\n" + "".join(f"Q{j},question {j},{j}\n" for j in range(questions)))
    return path


def expected_counts(learners: range, questions: int, per_learner: int) -> tuple[int, int, int]:
    """(learners, ANSWERED edges, correct ones) of :func:`write_log`'s answers, counted here."""
    correct = sum((i * 7 + k) % 3 != 0 for i in learners for k in range(per_learner))
    return len(learners), len(learners) * per_learner, correct


def graph_counts(target: GraphTarget) -> tuple[int, int, int, int, int]:
    """(learners, ANSWERED, correct ANSWERED, duplicate learner ids, duplicate ANSWERED pairs)."""
    with neo4j.GraphDatabase.driver(target.location, auth=(target.user, target.password)) as driver:
        def one(text: str) -> int:
            return driver.execute_query(text, result_transformer_=neo4j.Result.single)[0]
        return (one("MATCH (l:Learner) RETURN count(l)"),
                one("MATCH (:Learner)-[r:ANSWERED]->(:Question) RETURN count(r)"),
                one("MATCH (:Learner)-[r:ANSWERED {correct: true}]->(:Question) RETURN count(r)"),
                one("MATCH (l:Learner) WITH l.id AS id, count(*) AS c WHERE c > 1 RETURN count(*)"),
                one("MATCH (l:Learner)-[r:ANSWERED]->(q:Question) WITH l, q, count(r) AS c WHERE c > 1 "
                    "RETURN count(*)"))


def test_two_concurrent_ingests_lose_and_double_nothing(neo4j_server, tmp_path):
    """Two ``kstp ingest responses`` processes at once into the same Neo4j, on logs that share
    half their learners: both exit 0, every learner and answer is there once (the uniqueness
    constraint on Learner.id holds; MERGE under the driver's retried transactions)."""
    with connect(neo4j_server) as graph:
        graph.reset()
        graph.ensure_schema()
        constraints = graph._run("SHOW CONSTRAINTS YIELD labelsOrTypes, properties, type "
                                 "WHERE type = 'UNIQUENESS' RETURN labelsOrTypes, properties", {}, "constraints")
        assert (["Learner"], ["id"]) in [(r.labelsOrTypes, r.properties) for r in constraints.itertuples()]
        assert (["Question"], ["id"]) in [(r.labelsOrTypes, r.properties) for r in constraints.itertuples()]
    env = credentials(neo4j_server)
    done = kstp("--graph", neo4j_server.location, "ingest", "items", str(write_items(tmp_path, 200)),
                "--dataset", "load", env=env)
    assert done.returncode == 0, done.stderr
    first, second = range(0, 1200), range(600, 1800)
    logs = [write_log(tmp_path, first, 200, 20, "a.csv"), write_log(tmp_path, second, 200, 20, "b.csv")]
    runs = [start_kstp("--graph", neo4j_server.location, "ingest", "responses", str(log), "--dataset", "load",
                       "--json", env=env) for log in logs]
    outputs = [run.communicate(timeout=400) for run in runs]
    for run, (_, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    # Each run read its whole file (its report's "created" may count a shared learner that the
    # other run wrote in the meantime: both looked before either wrote; MERGE made it one node).
    assert [json.loads(out)["notes"]["answers read"] for out, _ in outputs] == [24_000, 24_000]
    learners, answered, correct = expected_counts(range(0, 1800), 200, 20)
    assert graph_counts(neo4j_server) == (learners, answered, correct, 0, 0)


def test_ingest_rerun_after_server_kill_gives_uninterrupted_counts(own_server, tmp_path):
    """SIGKILL the Neo4j JVM while ``kstp ingest responses`` writes 300,000 answers (ten transactions of
    whole learners at the store's 30 k relationships a transaction, so the kill falls between two): the ingest
    exits 1 with one line saying to re-run; with the server down ``kstp db stats`` does too; after
    a restart no learner of the ingest is in sight (they wait, hidden, with the answers written so
    far), the re-run exits 0 and the graph holds exactly the counts of an uninterrupted
    ingest (LadybugDB, same files, and counted from the log here), nothing doubled."""
    target = own_server.target
    env = credentials(target)
    items_csv = write_items(tmp_path, 300)
    log = write_log(tmp_path, range(15_000), 300, 20, "answers.csv")
    assert kstp("--graph", target.location, "ingest", "items", str(items_csv), "--dataset", "kill",
                env=env).returncode == 0
    ingest = start_kstp("--graph", target.location, "ingest", "responses", str(log), "--dataset", "kill", env=env)
    with neo4j.GraphDatabase.driver(target.location, auth=(target.user, target.password)) as driver:
        deadline = time.monotonic() + 240
        while driver.execute_query("MATCH (:StagedLearner)-[r:ANSWERED]->() RETURN count(r)",
                                   result_transformer_=neo4j.Result.single)[0] == 0:
            assert ingest.poll() is None, "the ingest ended before any answer was seen; nothing to interrupt"
            assert time.monotonic() < deadline, "no answer written within 240 s"
            time.sleep(0.2)
    assert ingest.poll() is None, "the ingest finished before the kill"
    own_server.kill()
    _, err = ingest.communicate(timeout=RETRY_TIME_S + 120)
    assert ingest.returncode == 1, err
    assert "re-run the command" in one_error_line(err)

    down = kstp("--graph", target.location, "db", "stats", env=env)
    assert down.returncode == 1 and down.stdout == ""
    assert "nothing accepts connections" in one_error_line(down.stderr)
    assert target.password not in down.stderr + err

    own_server.start()
    partial = graph_counts(target)
    expected = expected_counts(range(15_000), 300, 20)
    assert partial[:2] == (0, 0), "the learners of an unfinished ingest are in sight"
    rerun = kstp("--graph", target.location, "ingest", "responses", str(log), "--dataset", "kill", "--json", env=env)
    assert rerun.returncode == 0, rerun.stderr

    reference = tmp_path / "ladybug"
    for args in (("ingest", "items", str(items_csv)), ("ingest", "responses", str(log))):
        assert kstp("--graph", f"ladybug:{reference}", *args, "--dataset", "kill").returncode == 0
    stats = json.loads(kstp("--graph", f"ladybug:{reference}", "db", "stats", "--json").stdout)
    assert graph_counts(target) == (*expected, 0, 0)
    assert (stats["nodes"]["Learner"], stats["relationships"]["ANSWERED"]) == expected[:2]
    neo = json.loads(kstp("--graph", target.location, "db", "stats", "--json", env=env).stdout)
    assert (neo["nodes"], neo["relationships"]) == (stats["nodes"], stats["relationships"])
