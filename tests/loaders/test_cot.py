"""DAG-MATH trajectories: both spellings, every validation failure with its reason, the
import into the graph (steps, SUPPORTS edges, invalid ones kept), idempotence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kstp.errors import InputError
from kstp.loaders import cot

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dagmath" / "log_count.json"


def step(i, deps, node="a conclusion", edge="because"):
    return {"step_id": i, "edge": edge, "direct_dependent_steps": deps, "node": node}


def test_fixture_trajectories_parse_with_their_hand_counted_edges():
    records = json.loads(FIXTURE.read_text())
    perfect, imperfect, wrong = (cot.parse_trajectory(r["steps"]) for r in records)
    assert [len(t.steps) for t in (perfect, imperfect, wrong)] == [11, 11, 11]
    assert (len(perfect.edges()), len(imperfect.edges()), len(wrong.edges())) == (16, 15, 16)
    assert perfect.final.step_id == 11 and perfect.steps[0].parents == ()
    assert (9, 10) in perfect.edges() and (9, 10) not in imperfect.edges()


def test_generation_spelling_is_read_like_the_gold_one():
    gold = cot.parse_trajectory([step(1, None, "x = 2", "given"), step(2, [1], "\\boxed{4}", "square")])
    generated = cot.parse_text(json.dumps({"steps": [
        {"step_id": 1, "thinking": "given", "direct_dependent_steps": [], "text": "x = 2"},
        {"step_id": 2, "thinking": "square", "direct_dependent_steps": [1], "text": "\\boxed{4}"}]}))
    assert gold == generated
    assert cot.parse_text(cot.trajectory_json(gold)) == gold  # what a few-shot example shows round-trips


@pytest.mark.parametrize("steps, reason", [
    ([step(1, None), step(1, [1], "\\boxed{1}")], r"^duplicate step id 1 \(steps 1 and 2\)$"),
    ([step(1, None), step(2, [7], "\\boxed{1}")], r"^step 2 depends on step 7, which does not exist$"),
    ([step(1, [2]), step(2, [1]), step(3, [2], "\\boxed{1}")], r"^cycle 1 -> 2 -> 1$"),
    ([step(1, None), step(2, [2], "\\boxed{1}")], r"^cycle 2 -> 2$"),
    ([step(1, [2]), step(2, None), step(3, [1], "\\boxed{1}")],
     r"^step 1 depends on step 2, which comes later \(forward reference\)$"),
    ([step(1, None), step(2, [1], "so it is 1")], r"^no final boxed answer: the last step \(2\) has no \\boxed\{\}$"),
    ([], r"^no steps"),
    ([step("1", None)], r"^step 1: 'step_id' must be an integer, found '1'$"),
    ([step(1, "2")], r"^step 1: 'direct_dependent_steps' must be null or a list of step ids"),
    ([{"step_id": 1, "edge": "e", "direct_dependent_steps": None}], r"^step 1: missing 'node' or 'text'$"),
])
def test_each_validation_failure_names_its_reason(steps, reason):
    with pytest.raises(cot.InvalidTrajectoryError, match=reason):
        cot.parse_trajectory(steps)


@pytest.mark.parametrize("text, reason", [
    (None, "empty output"), ("   ", "empty output"), ('{"steps": [{"step_id": 1,', "invalid JSON"),
    ('Here you go: {"steps": [{"step_id": 1, "thinking": "t", "direct_dependent_steps": null, '
     '"text": "\\\\boxed{2}"}]} done', None),
])
def test_model_text_is_decoded_or_refused(text, reason):
    if reason is None:
        assert cot.parse_text(text).final.node == "\\boxed{2}"
    else:
        with pytest.raises(cot.InvalidTrajectoryError, match=reason):
            cot.parse_text(text)


@pytest.mark.parametrize("steps, correct, verdict", [
    ([step(1, [2]), step(2, [1], "so \\boxed{6}")], True, "correct (invalid format: cycle 1 -> 2 -> 1)"),
    ([step(1, None), step(2, [9], "\\boxed{6}")], True,
     "correct (invalid format: step 2 depends on step 9, which does not exist)"),
    ([step(1, [1]), step(2, [1], "\\boxed{7}")], False, "wrong answer (invalid format: cycle 1 -> 1)"),
    ([step(1, None, "\\boxed{6}"), step(2, [1], "it is 6")], False,  # the final step boxes nothing
     "invalid format: no final boxed answer: the last step (2) has no \\boxed{}"),
    ([step(1, None), step(2, [1], "\\boxed{6}")], True, "correct"),
])
def test_score_trajectory_grades_the_final_box_whatever_the_dag(steps, correct, verdict):
    from_file = cot.score_trajectory(steps, "6")
    from_model = cot.score_trajectory("Here: " + json.dumps({"steps": steps}), "6")
    assert (from_file.verdict.correct, from_file.verdict.reason) == (correct, verdict)
    assert from_model == from_file  # a file's steps and a model's reply holding them score alike


@pytest.mark.parametrize("parents, error", [(None, None), ([2], "cycle 2 -> 2")])
def test_latex_written_with_one_backslash_in_json_keeps_its_commands(parents, error):
    """JSON reads the \\b of \\boxed and the \\f of \\frac as a backspace and a form feed."""
    reply = ('{"steps": [{"step_id": 1, "thinking": "given", "direct_dependent_steps": null, '
             '"text": "x = \\frac{1}{2}"}, {"step_id": 2, "thinking": "\\beta", "direct_dependent_steps": '
             + json.dumps(parents or [1]) + ', "text": "\\boxed{1}"}]}')
    score = cot.score_trajectory(reply, "1")
    assert (score.error, score.verdict.correct) == (error, True)
    assert cot.score_trajectory(json.loads(reply)["steps"], "1") == score  # the same steps in a file
    if error is None:
        assert [(s.edge, s.node) for s in score.trajectory.steps] == [("given", "x = \\frac{1}{2}"),
                                                                      ("\\beta", "\\boxed{1}")]


def test_score_trajectory_without_gold_only_validates():
    score = cot.score_trajectory([step(1, [1], "\\boxed{6}")], None)
    assert (score.trajectory, score.error, score.verdict) == (None, "cycle 1 -> 1", None)


def test_ingest_writes_steps_edges_and_keeps_invalid_trajectories(store, tmp_path):
    records = json.loads(FIXTURE.read_text())
    broken = dict(records[0], sample_id=3, steps=[step(1, None), step(2, [5], "\\boxed{300}")])
    path = tmp_path / "more.json"
    path.write_text(json.dumps([broken]))
    data = cot.read_cot_files([FIXTURE, path], "logs")
    assert [r.error for r in data.records] == [None, None, None, "step 2 depends on step 5, which does not exist"]
    report = cot.write_cot_set(store, data)
    assert report.notes == {"trajectories": 4, "invalid trajectories": 1}
    assert (report.written["CotStep"].created, report.written["SUPPORTS"].created,
            report.written["HAS_STEP"].created, report.written["Response"].created) == (33, 47, 33, 4)
    rels = {r["type"]: r["count"] for r in store.run("relationship_counts")}
    assert (rels["HAS_STEP"], rels["SUPPORTS"], rels["IN_RUN"]) == (33, 47, 4)
    rows = store.frame("cot_responses", {"runId": "cot:gold:logs"})
    assert rows["sampleIndex"].tolist() == [0, 1, 2, 3]
    assert rows["cotValid"].tolist() == [True, True, True, False]
    # PASS@1 is answer accuracy: the broken DAG still boxes the gold 300
    assert rows["correct"].tolist() == [True, True, False, True]
    assert rows["verdict"].tolist() == ["correct", "correct", "wrong answer",
                                        "correct (invalid format: step 2 depends on step 5, which does not exist)"]
    assert rows["difficulty"].tolist() == [2.5] * 4
    question = store.frame("dataset_questions", {"dataset": "logs"})
    assert question[["questionId", "answer"]].values.tolist() == [["logs:log_count", "300"]]
    again = cot.write_cot_set(store, cot.read_cot_files([FIXTURE, path], "logs"))
    assert all(w.created == 0 and w.updated == 0 for w in again.written.values())
    assert "stale step links removed" not in again.notes


def test_a_changed_trajectory_loses_its_old_steps(store, tmp_path):
    records = json.loads(FIXTURE.read_text())
    cot.write_cot_set(store, cot.read_cot_files([FIXTURE], "logs"))
    records[0]["steps"] = records[0]["steps"][:9] + [step(12, [8], "\\boxed{300}")]  # v10, v11 -> v12; v9 unused
    records[1]["steps"][0]["direct_dependent_steps"] = [3]  # a forward reference: now invalid
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(records))
    report = cot.write_cot_set(store, cot.read_cot_files([path], "logs"))
    # sample 0: HAS_STEP v10, v11 and SUPPORTS 1->10, 8->10, 9->10, 10->11 go; sample 1: 11 + 15 links go
    assert report.notes["stale step links removed"] == 2 + 4 + 11 + 15
    closeness = store.frame("cot_closeness", {"runId": "cot:gold:logs"})
    assert [(r, int(n), int(c), bool(ok)) for r, n, c, ok in closeness[
        ["responseId", "steps", "closedSteps", "closed"]].values.tolist()] == [
        ("cot:gold:logs:log_count:0", 10, 8, False), ("cot:gold:logs:log_count:2", 11, 10, True)]


def test_a_second_file_leaves_the_first_files_trajectories_alone(store, tmp_path):
    records = json.loads(FIXTURE.read_text())
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(records[:1]))
    second.write_text(json.dumps([{**records[0], "problem_id": "other"}]))
    cot.write_cot_set(store, cot.read_cot_files([first], "logs"))
    report = cot.write_cot_set(store, cot.read_cot_files([second], "logs"))
    assert "stale step links removed" not in report.notes
    closeness = store.frame("cot_closeness", {"runId": "cot:gold:logs"})
    assert [(r, int(n), bool(ok)) for r, n, ok in closeness[["responseId", "steps", "closed"]].values.tolist()] == [
        ("cot:gold:logs:log_count:0", 11, True), ("cot:gold:logs:other:0", 11, True)]


def test_file_errors_are_refused_with_their_location(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"problem_id": 1,')
    with pytest.raises(InputError, match=r"bad.json:1: invalid JSON"):
        cot.read_cot_files([bad], "d")
    twice = tmp_path / "twice.json"
    record = {"problem_id": 1, "problem_text": "p", "final_answer": "1", "sample_id": 0, "steps": []}
    twice.write_text(json.dumps([record, record]))
    with pytest.raises(InputError, match=r"problem 2: problem '1' sample 0 repeats .*problem 1"):
        cot.read_cot_files([twice], "d")
    nameless = tmp_path / "nameless.json"
    nameless.write_text(json.dumps([{"steps": []}]))
    with pytest.raises(InputError, match="missing 'problem_id'"):
        cot.read_cot_files([nameless], "d")


@pytest.mark.parametrize("content, message", [
    ("[]", "an empty list; expected problem objects"),
    ('[{"problem_id": 1, "problem_text": "p"}, {"problem_id": 2, "steps": []}]',
     r"problem 1 \(1 of 2\) without 'steps'"),
    ('"hello"', "expected a problem object or a list of them.*; found str"),
    ("[1, 2]", "found a list holding int"),
])
def test_ingest_cot_refuses_files_without_problems(store, tmp_path, content, message):
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        cot.write_cot_set(store, cot.read_cot_files([path], "d"))
    assert store.frame("node_counts", {})["count"].sum() == 0
