"""Learner log ingest: wide, long and pyKT layouts; repeats, padding and refusals."""

from __future__ import annotations

import pytest

from kstp.loaders import responses
from kstp.platform.errors import InputError, UnknownIdError
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
    assert report.written["ANSWERED"].updated == 1
    rows = store.frame("answers", {"dataset": "toy"})
    assert rows[(rows.learnerId == "toy:L1") & (rows.questionId == "toy:q3")]["correct"].tolist() == [True]


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
