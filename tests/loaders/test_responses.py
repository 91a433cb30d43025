"""Learner log ingest: wide, long and pyKT layouts; repeats, padding and refusals."""

from __future__ import annotations

import json

import pytest

from kstp.errors import InputError, UnknownIdError
from kstp.loaders import responses
from tests.conftest import load_toy

KNOWN = {"q1", "q2", "q3"}


def test_wide_matrix_blank_cell_is_not_attempted_when_asked(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("person,q1,q2,q3\np1,1,0,\np2,,1,1\np3,1\n")
    answers = responses.read_wide(path, KNOWN, missing="blank")
    assert answers[["learner", "item", "correct"]].values.tolist() == [
        ["p1", "q1", True], ["p1", "q2", False], ["p2", "q2", True], ["p2", "q3", True], ["p3", "q1", True]]
    assert answers.attrs["notAttempted"] == 4  # p1 q3, p2 q1, p3 q2 and q3


@pytest.mark.parametrize("text, message", [
    ("person,q1,q2\np1,1,0\np2,,1\n", r"w.csv:3 column 'q1': blank cell \(learner 'p2'\); write 0 or 1, "
                                      "or pass --missing blank"),
    ("person,q1,q2\np1,1,0\np2,1\n", "w.csv:3: 2 cells but the header has 3"),
])
def test_wide_matrix_blank_cell_or_short_row_is_refused_by_default(tmp_path, text, message):
    (tmp_path / "w.csv").write_text(text)
    with pytest.raises(InputError, match=message):
        responses.read_wide(tmp_path / "w.csv", KNOWN)


def test_wide_matrix_ids_are_nfc_normalised(tmp_path):
    decomposed, composed = "caf" + "e\u0301", "caf\u00e9"
    (tmp_path / "w.csv").write_text(f"person,{decomposed}\n{decomposed}1,1\n", encoding="utf-8")
    answers = responses.read_wide(tmp_path / "w.csv", {composed})
    assert answers[["learner", "item"]].values.tolist() == [[composed + "1", composed]]


@pytest.mark.parametrize("text, error, message", [
    ("person,q1,q9\np1,1,0\n", UnknownIdError, r"unknown item 'q9' at .*w.csv:1 \(column 3\)"),
    ("person,q1\np1,2\n", InputError, "w.csv:2 column 'q1': a response must be 0 or 1, found '2'"),
    ("person,q1\np1,1\np1,0\n", InputError, "w.csv:3: learner 'p1' repeats line 2"),
])
def test_wide_matrix_refusals(tmp_path, text, error, message):
    (tmp_path / "w.csv").write_text(text)
    with pytest.raises(error, match=message):
        responses.read_wide(tmp_path / "w.csv", KNOWN)


def test_long_csv_and_refusals(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("user_id,question_id,correct,timestamp\nu,q1,1,10\nu,q2,0,11\n")
    answers = responses.read_long(path, KNOWN)
    assert answers.values.tolist() == [["u", "q1", True, "10"], ["u", "q2", False, "11"]]
    path.write_text("learner,item,correct\nu,q7,1\n")
    with pytest.raises(UnknownIdError, match="unknown item 'q7' at .*l.csv:2"):
        responses.read_long(path, KNOWN)
    path.write_text("learner,item,correct\nu,q1,yes\n")
    with pytest.raises(InputError, match="l.csv:2: a response must be 0 or 1, found 'yes'"):
        responses.read_long(path, KNOWN)


def test_pykt_sequences_cut_at_padding_and_concatenate(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text('fold,uid,questions,responses,timestamps,selectmasks\n'
                    '0,u1,"1,2,-1","1,0,-1","5,6,-1","1,1,-1"\n'
                    '0,u1,"3,1","1,1","7,8","1,1"\n')
    answers = responses.read_pykt(path, {"1", "2", "3"})
    assert answers[["learner", "item", "correct", "timestamp"]].values.tolist() == [
        ["u1", "1", True, "5"], ["u1", "2", False, "6"], ["u1", "3", True, "7"], ["u1", "1", True, "8"]]
    path.write_text('uid,questions,responses,selectmasks\nu1,"1,2","1","1,1"\n')
    with pytest.raises(InputError, match="s.csv:2: questions, responses, timestamps and selectmasks differ"):
        responses.read_pykt(path, {"1", "2"})
    path.write_text('uid,questions,responses,selectmasks\nu1,"1,9","1,1","1,1"\n')
    with pytest.raises(UnknownIdError, match="unknown item '9' at .*s.csv:2"):
        responses.read_pykt(path, {"1", "2"})


def test_repeated_answer_keeps_the_last_and_is_counted(store, tmp_path):
    load_toy(store, tmp_path)
    path = tmp_path / "again.csv"
    path.write_text("learner,item,correct\nL1,q3,0\nL1,q3,1\n")
    report = responses.write_answers(store, "toy", responses.read_long(path, {"q3"}), "again.csv")
    assert report.notes["repeated answers superseded by a later one"] == 1
    assert report.notes["a repeated answer keeps"] == "the last row of the file"  # no time column
    assert report.written["ANSWERED"].updated == 1
    rows = store.frame("answers", {"dataset": "toy"})
    assert rows[(rows.learnerId == "toy:L1") & (rows.questionId == "toy:q3")]["correct"].tolist() == [True]


@pytest.mark.parametrize("header, early, late", [
    ("timestamp", "1709287200", "1709290800"),  # epoch seconds
    ("Time", "1709287200000", "1709290800000.5"),  # epoch milliseconds, a fraction
    ("Date Answered", "2024-03-01", "2024-03-02"),
    ("submitted_at", "2024-03-01 09:00:00", "2024-03-01T09:00:00.000001"),
    ("created_at", "2024-03-01T10:00:00+02:00", "2024-03-01T09:30:00Z"),  # 08:00 UTC, then 09:30 UTC
])
def test_long_log_with_times_keeps_the_latest_attempt_not_the_last_row(store, tmp_path, header, early, late):
    """L1 answers q3 right (late) on line 2 and wrong (early) on line 4: the later time wins."""
    load_toy(store, tmp_path)
    path = tmp_path / "timed.csv"
    path.write_text(f"learner,item,correct,{header}\nL1,q3,1,{late}\nL1,q1,0,{early}\nL1,q3,0,{early}\n")
    answers = responses.read_long(path, {"q1", "q3"})
    assert answers[["item", "correct"]].values.tolist() == [["q1", False], ["q3", False], ["q3", True]]
    report = responses.write_answers(store, "toy", answers, "timed.csv")
    assert report.notes["repeated answers superseded by a later one"] == 1
    assert report.notes["a repeated answer keeps"] == f"the latest {header!r} (equal times: the later row)"
    rows = store._execute("MATCH (:Learner {id: 'toy:L1'})-[a:ANSWERED]->(q:Question) WHERE q.id IN $ids "
                          "RETURN q.id AS question, a.correct AS correct, a.position AS position, "
                          "a.timestamp AS t ORDER BY question", {"ids": ["toy:q1", "toy:q3"]})
    # positions count the attempts in time order: q1 (early) 1, q3 early 2 (superseded), q3 late 3
    assert rows.values.tolist() == [["toy:q1", False, 1, early], ["toy:q3", True, 3, late]]


def test_long_log_equal_times_keep_the_later_row(tmp_path):
    path = tmp_path / "tie.csv"
    path.write_text("learner,item,correct,time\nu,q1,1,2024-03-01 09:00\nu,q1,0,2024-03-01 09:00\n"
                    "u,q2,1,2024-03-01 08:00\n")
    answers = responses.read_long(path, KNOWN)
    assert answers[["item", "correct"]].values.tolist() == [["q2", True], ["q1", True], ["q1", False]]


@pytest.mark.parametrize("rows, message", [
    ("u,q1,1,03/01/2024\n", r"t.csv:3: timestamp '03/01/2024' is not a time: write ISO 8601 date-times"),
    ("u,q1,1,2024-02-30 10:00\n", "t.csv:3: timestamp '2024-02-30 10:00' is not a time"),
    ("u,q1,1,yesterday\n", "t.csv:3: timestamp 'yesterday' is not a time"),
    ("u,q1,1,1709287200\n", "t.csv:3: timestamp '1709287200' is an epoch number where line 2 has a date-time "
                            "without a UTC offset; write every time of the column in one form"),
    ("u,q1,1,2024-03-01T10:00:00+02:00\n", "t.csv:3: .* is a date-time with a UTC offset where line 2 has a "
                                           "date-time without"),
    ("u,q1,1,\n", "t.csv:3: blank timestamp where other rows have a time; .*drop the column: then the last row"),
])
@pytest.mark.parametrize("chunk", [1, 1000])  # the bad time in a later chunk, or in the first
def test_long_log_bad_times_are_refused_with_their_line(tmp_path, rows, message, chunk):
    path = tmp_path / "t.csv"
    path.write_text("learner,item,correct,timestamp\nu,q2,1,2024-03-01 09:00:00\n" + rows + "u,q3,0,2024-03-02\n")
    with pytest.raises(InputError, match=message):
        responses.read_long(path, KNOWN, chunk=chunk)


def test_long_log_with_an_empty_time_column_keeps_the_last_row(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("learner,item,correct,elapsed_time,timestamp\nu,q1,1,5,\nu,q1,0,3,\n")
    answers = responses.read_long(path, KNOWN)  # elapsed_time is a duration, never read as the time
    assert answers["correct"].tolist() == [True, False]
    assert answers.attrs["repeats"] == "the last row of the file"


def test_ingesting_real_logs_twice_changes_nothing(store, data_root):
    from kstp.loaders import items

    folder = data_root / "responses/frcsub"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv"))
    known = set(store.frame("dataset_questions", {"dataset": "frcsub"})["localId"])
    answers = responses.read_wide(folder / "responses.csv", known)
    first = responses.write_answers(store, "frcsub", answers, "responses.csv")
    assert (first.written["Learner"].created, first.written["ANSWERED"].created) == (536, 10720)
    second = responses.write_answers(store, "frcsub", answers, "responses.csv")
    assert (second.written["Learner"].unchanged, second.written["ANSWERED"].unchanged) == (536, 10720)
    assert second.written["ANSWERED"].created == 0


# ---- chunk boundaries: the file is read a few rows at a time and written in runs of learners ----
PYKT_SPLIT = ('uid,questions,responses,timestamps,selectmasks\n'
              'u1,"1,2","1,0","5,6","1,1"\n'
              'u2,"1,-1","0,-1","7,-1","1,-1"\n'
              '\n'
              'u1,"2,3,-1","1,1,-1","8,9,-1","1,1,-1"\n')


@pytest.mark.parametrize("chunk", [1, 2, 1000])
def test_pykt_chunks_keep_rows_of_a_learner_apart_in_the_file(tmp_path, chunk):
    path = tmp_path / "s.csv"
    path.write_text(PYKT_SPLIT)
    answers = responses.read_pykt(path, {"1", "2", "3"}, chunk=chunk)
    assert answers[["learner", "item", "correct", "timestamp"]].values.tolist() == [
        ["u1", "1", True, "5"], ["u1", "2", False, "6"], ["u2", "1", False, "7"],
        ["u1", "2", True, "8"], ["u1", "3", True, "9"]]


@pytest.mark.parametrize("text, error, message", [
    # line 5, after a blank line, in the third chunk of one row
    (PYKT_SPLIT.replace('"2,3,-1"', '"2,4,-1"'), UnknownIdError, r"unknown item '4' at .*s.csv:5;"),
    (PYKT_SPLIT.replace('"1,1,-1","8', '"1,2,-1","8'), InputError,
     "s.csv:5: responses before the padding must be 0 or 1"),
    (PYKT_SPLIT.replace('"8,9,-1"', '"8,9"'), InputError, "s.csv:5: questions, responses, timestamps and "),
    (PYKT_SPLIT.replace('"0,-1","7', '"0,x","7'), InputError,
     r"s.csv:3 responses: expected comma-joined integers, found '0,x'"),
    # an unknown item after the padding is not read; the first bad row is named, not a later one
    (PYKT_SPLIT.replace('"1,-1","0,-1"', '"1,9","0,-1"').replace('"2,3,-1"', '"2,4,-1"'), UnknownIdError,
     r"unknown item '4' at .*s.csv:5;"),
    (PYKT_SPLIT.replace('"1,2","1,0"', '"1,8","1,0"').replace('"2,3,-1"', '"2,4,-1"'), UnknownIdError,
     r"unknown item '8' at .*s.csv:2;"),
])
@pytest.mark.parametrize("chunk", [1, 1000])
def test_pykt_refusal_in_a_later_chunk_names_its_line(tmp_path, text, error, message, chunk):
    (tmp_path / "s.csv").write_text(text)
    with pytest.raises(error, match=message):
        responses.read_pykt(tmp_path / "s.csv", {"1", "2", "3"}, chunk=chunk)


def test_long_refusal_in_a_later_chunk_names_its_line(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("learner,item,correct\nu,q1,1\n\nu,q2,0\nv,q1,1\nv,q9,1\n")
    with pytest.raises(UnknownIdError, match="unknown item 'q9' at .*l.csv:6"):
        responses.read_long(path, KNOWN, chunk=2)
    path.write_text("learner,item,correct\nu,q1,1\nu,q2,0\nv,,1\nv,q9,x\n")
    with pytest.raises(InputError, match="l.csv:4: empty item"):
        responses.read_long(path, KNOWN, chunk=2)


def _stored_answers(store) -> list[list]:
    rows = store._execute("MATCH (l:Learner)-[a:ANSWERED]->(q:Question) RETURN l.id AS learner, q.id AS item, "
                          "a.correct AS correct, a.position AS position, a.timestamp AS timestamp "
                          "ORDER BY learner, position", {})
    return rows.values.tolist()


@pytest.mark.parametrize("chunk, batch", [(1, 1), (2, 3), (1000, 1000)])
def test_pykt_ingest_across_chunks_and_runs_keeps_the_last_answer(store, tmp_path, chunk, batch):
    from kstp.loaders import items

    (tmp_path / "items.csv").write_text("item_id\n1\n2\n3\n")
    items.write_items(store, items.read_items_csv(tmp_path / "items.csv", "seq"))
    path = tmp_path / "s.csv"
    path.write_text(PYKT_SPLIT)
    answers = responses.read_pykt(path, {"1", "2", "3"}, chunk=chunk)
    first = responses.write_answers(store, "seq", answers, "s.csv", batch=batch)
    # u1 answers q2 twice, in two chunks: the later answer (correct, position 3) wins
    assert _stored_answers(store) == [
        ["seq:u1", "seq:1", True, 1, "5"], ["seq:u1", "seq:2", True, 3, "8"], ["seq:u1", "seq:3", True, 4, "9"],
        ["seq:u2", "seq:1", False, 1, "7"]]
    assert first.notes == {"answers read": 5, "repeated answers superseded by a later one": 1,
                           "a repeated answer keeps": "the last row of the file"}
    assert (first.written["Learner"].created, first.written["ANSWERED"].created) == (2, 4)
    again = responses.write_answers(store, "seq", answers, "s.csv", batch=batch)
    assert (again.written["Learner"].created, again.written["Learner"].updated) == (0, 0)
    assert (again.written["ANSWERED"].created, again.written["ANSWERED"].updated,
            again.written["ANSWERED"].unchanged) == (0, 0, 4)
    # a changed answer in the last chunk updates that edge only
    path.write_text(PYKT_SPLIT.replace('"1,1,-1","8', '"0,1,-1","8'))
    changed = responses.write_answers(store, "seq", responses.read_pykt(path, {"1", "2", "3"}, chunk=chunk),
                                      "s.csv", batch=batch)
    assert (changed.written["ANSWERED"].created, changed.written["ANSWERED"].updated) == (0, 1)
    assert _stored_answers(store)[1] == ["seq:u1", "seq:2", False, 3, "8"]


@pytest.mark.parametrize("rows_before", [1, 5_000])  # the bad byte in the first read, or far into the stream
def test_long_not_utf8_names_the_line_of_the_bad_byte(tmp_path, rows_before):
    path = tmp_path / "l.csv"
    path.write_bytes(b"learner,item,correct\n" + b"u,q1,1\n" * rows_before + b"u,q2,\xff\n")
    with pytest.raises(InputError, match=rf"l.csv:{rows_before + 2}: not UTF-8 text"):
        responses.read_long(path, KNOWN, chunk=2)


def test_answers_to_unknown_questions_are_refused_before_any_write(store, tmp_path):
    """The readers check items against what the caller says is known; write_answers checks the
    graph itself, so answers of a dataset without those questions write no Learner either."""
    load_toy(store, tmp_path)
    path = tmp_path / "log.csv"
    path.write_text("learner,item,correct\nNEW1,q3,1\nNEW2,q9,0\n")
    before = store.frame("node_counts").set_index("label")["count"].to_dict()
    with pytest.raises(UnknownIdError, match=r"log.csv: 1 item\(s\) are not questions of dataset 'toy', e.g. 'q9'"):
        responses.write_answers(store, "toy", responses.read_long(path, {"q3", "q9"}), "log.csv")
    with pytest.raises(InputError, match="dataset 'nope' has no questions in the graph; ingest its items first"):
        responses.write_answers(store, "nope", responses.read_long(path, {"q3", "q9"}), "log.csv")
    assert store.frame("node_counts").set_index("label")["count"].to_dict() == before


def test_answers_to_questions_outside_the_dataset_are_skipped_and_counted_when_asked(tmp_path):
    """Issue 47: XES3G5M's logs name questions the released dataset lacks and paper 1's release skips those
    records; skip leaves exactly those answers out and counts them (2 answers, 2 distinct questions here),
    a learner left with none is no learner, and the other answers keep their order and times."""
    pykt = tmp_path / "s.csv"
    pykt.write_text('uid,questions,responses,timestamps,selectmasks\n'
                    'u1,"1,9,2,-1","1,1,0,-1","5,6,7,-1","1,1,1,-1"\n'
                    'u2,"8","1","9","1"\n')
    answers = responses.read_pykt(pykt, {"1", "2"}, unknown="skip")
    assert answers[["learner", "item", "correct", "timestamp"]].values.tolist() == [
        ["u1", "1", True, "5"], ["u1", "2", False, "7"]]
    assert (answers.attrs["skippedAnswers"], answers.attrs["skippedItems"]) == (2, 2)
    assert responses.read_pykt(pykt, {"1", "2", "8", "9"}).attrs["skippedAnswers"] == 0
    long = tmp_path / "l.csv"
    long.write_text("learner,item,correct,timestamp\nu,q2,1,30\nu,q7,1,20\nu,q1,0,10\nv,q7,0,5\n")
    answers = responses.read_long(long, KNOWN, unknown="skip")
    assert answers[["learner", "item", "timestamp"]].values.tolist() == [["u", "q1", "10"], ["u", "q2", "30"]]
    assert (answers.attrs["skippedAnswers"], answers.attrs["skippedItems"]) == (2, 1)
    with pytest.raises(InputError, match="unknown-item rule 'drop': use refuse or skip"):
        responses.read_long(long, KNOWN, unknown="drop")


def test_the_cli_skips_a_pykt_logs_unknown_questions_by_default_and_says_so(graph_location, tmp_path):
    from click.testing import CliRunner

    from kstp.cli.main import cli
    from kstp.graph.factory import open_store

    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    items = tmp_path / "n.csv"
    items.write_text("id,text,answer\n1,one,1\n2,two,2\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["--graph", graph_location, "ingest", "items", str(items), "--dataset", "num"]) \
        .exit_code == 0
    pykt = tmp_path / "s.csv"
    pykt.write_text('uid,questions,responses,selectmasks\nNEW,"1,7,2","1,1,0","1,1,1"\nOLD,"8","1","1"\n')
    result = runner.invoke(cli, ["--graph", graph_location, "ingest", "responses", str(pykt), "--dataset", "num",
                                 "--json"])
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert (notes["answers to questions outside the dataset, skipped"],
            notes["distinct questions outside the dataset"]) == (2, 2)
    with open_store(graph_location) as store:
        learners = store.frame("dataset_learners", {"dataset": "num"})
    assert sorted(learners["learnerId"]) == ["num:NEW"]  # OLD answered nothing of the dataset
    refused = runner.invoke(cli, ["--graph", graph_location, "ingest", "responses", str(pykt), "--dataset", "num",
                                  "--unknown-items", "refuse"])
    assert refused.exit_code == 1 and "unknown item '7'" in refused.stderr
    outside = runner.invoke(cli, ["--graph", graph_location, "ingest", "responses", str(pykt), "--dataset", "toy"])
    assert outside.exit_code == 1
    assert "all 4 answers are to questions that are not in dataset 'toy' (4 distinct), skipped" in \
        " ".join(outside.stderr.split())
