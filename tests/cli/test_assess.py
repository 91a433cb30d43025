"""`kstp assess` through click's runner on real data (probability_pks, its delineated structure's BLIM fit, equal
to pks's): a person's session from typed answers, a model through an endpoint, the study, the replays, refusals."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.cli.test_cli import kstp  # noqa: F401 (fixture)
from tests.endpoint import FakeEndpoint


@pytest.fixture
def fitted(kstp, data_root):  # noqa: F811
    folder = data_root / "responses" / "probability_pks"
    assert kstp("ingest", "items", folder / "items.csv", "--dataset", "probability_pks", "--qmatrix",
                folder / "qmatrix.csv").exit_code == 0
    assert kstp("ingest", "responses", folder / "responses_full.csv", "--dataset", "probability_pks").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "probability_pks", "--rule",
                "reflexive").exit_code == 0
    assert kstp("fit", "blim", "--dataset", "probability_pks", "--structure", "delineated").exit_code == 0
    return kstp


def _golds(data_root) -> dict[str, str]:
    items = pd.read_csv(data_root / "responses" / "probability_pks" / "items.csv", dtype=str)
    return dict(zip(items["item_id"], items["correct_answer_note"], strict=True))


def _shown(result) -> list[str]:
    """The local ids of the questions a session showed (on stderr)."""
    return [line.split("(")[1].split(")")[0] for line in result.stderr.splitlines() if line.startswith("Question")]


def test_a_person_answers_line_by_line_and_resumes(fitted, data_root):
    golds = _golds(data_root)
    # an empty line (don't know) to the first question, then the input ends at the second: the session pauses
    first = fitted("assess", "--dataset", "probability_pks", "--learner", "ada", "--json", input="\n")
    assert first.exit_code == 0, first.output
    assert "end of input: the session is paused" in first.stderr
    shown = _shown(first)
    assert len(shown) == 2
    run = next(r for r in json.loads(fitted("runs", "list", "--json").stdout) if r["evaluator"] == "assess")
    assert run["status"] == "interrupted"
    # issue 43: with --json a paused session printed nothing; it prints the session as stored
    paused = json.loads(first.stdout)
    assert (paused["status"], paused["learner"], paused["runId"], paused["resumed"]) == (
        "interrupted", "probability_pks:ada", run["runId"], 0)
    assert [(s["question"], s["answer"], s["correct"]) for s in paused["path"]] == [
        (f"probability_pks:{shown[0]}", "", False)]
    # each run answers the question it shows rightly (its gold answer as typed), resumes and pauses again
    answered = [shown[1]]
    for _ in range(12):
        result = fitted("assess", "--dataset", "probability_pks", "--learner", "ada", "--json",
                        input=golds[answered[-1]] + "\n")
        assert result.exit_code == 0, result.output
        if json.loads(result.stdout)["status"] == "finished":
            break
        answered.append(_shown(result)[-1])
    done = json.loads(result.stdout)
    assert done["status"] == "finished" and done["learner"] == "probability_pks:ada"
    assert [(s["question"].split(":")[1], s["answer"], s["correct"]) for s in done["path"]] == \
        [(shown[0], "", False)] + [(q, golds[q], True) for q in answered]
    again = fitted("assess", "--dataset", "probability_pks", "--learner", "ada")
    assert again.exit_code == 0 and "had finished; --again starts a new one" in again.stderr
    assert "to learn next (outer fringe)" in again.stdout and "Questions in order" in again.stdout


def test_the_latest_assessment_is_shown_and_typed_answers_are_kept_as_plain_text(fitted):
    args = ("assess", "--dataset", "probability_pks", "--learner", "ada", "--budget", "1", "--json")
    first = json.loads(fitted(*args, input="\n").stdout)
    again = json.loads(fitted(*args, "--again", input="\x1b[31m0.4\x07\r\n").stdout)
    assert again["runId"] == first["runId"] + ":2" and again["status"] == "finished"
    assert again["path"][0]["answer"] == "[31m0.4"  # a terminal's escape, a bell and a carriage return dropped
    shown = json.loads(fitted(*args).stdout)  # without --again: the latest finished assessment, not the first
    assert shown["runId"] == again["runId"] and shown["path"] == again["path"]


def test_a_model_is_assessed_through_an_endpoint(fitted):
    with FakeEndpoint(answer="\\boxed{0.40}") as fake:  # right on b101 only
        result = fitted("assess", "--dataset", "probability_pks", "--model", "fake", "--backend", "openai",
                        "--base-url", fake.base_url, "--gen-kwargs", "max_tokens=16", "--batch", "2", "--json")
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert fake.requests == out["asked"] == out["askedNow"] < 12 and out["status"] == "finished"
        assert out["model"] == "fake" and out["runId"].startswith("assess:fake:probability_pks:")
        correct = {s["question"]: s["correct"] for s in out["path"]}
        assert all(c == (q == "probability_pks:b101") for q, c in correct.items())


def test_the_study_writes_its_tables_and_curves(fitted, tmp_path):
    result = fitted("assess", "--dataset", "probability_pks", "--simulate", "30", "--json", "--out", tmp_path / "a")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    rules = {r["rule"] for r in out["thresholds"]}
    assert rules == {"half-split", "entropy", "variance", "random"} and out["learners"] == 30
    assert {p.name for p in (tmp_path / "a").iterdir()} == {"assess_thresholds_probability_pks.csv",
                                                     "assess_curve_probability_pks.csv", "assess_probability_pks.png"}
    # the last step of every curve is asking all 12 questions: the same for every rule
    last = [r for r in out["curve"] if r["asked"] == 12]
    assert len(last) == 4 and len({r["exact"] for r in last}) == 1
    one = fitted("assess", "--dataset", "probability_pks", "--structure", "surmise", "--rule", "variance",
                 "--budget", "4", "--simulate", "5", "--json")
    assert one.exit_code == 0, one.output
    rows = json.loads(one.stdout)["rules"]
    assert [r["rule"] for r in rows] == ["variance"] and rows[0]["asked"] == 4.0


def test_recorded_learners_are_replayed(fitted):
    result = fitted("assess", "--dataset", "probability_pks", "--replay-learners", "8", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["learners"] == 8 and out["leaveOneOut"] and 0 <= out["exact"] <= out["withinOne"] <= 1
    assert len(out["rows"]) == 8 and all(1 <= r["asked"] <= 12 for r in out["rows"])


def test_refusals(kstp, fitted, tmp_path):  # noqa: F811
    none = kstp("assess", "--dataset", "probability_pks")
    assert none.exit_code == 2 and "give one of --learner, --model" in none.output
    two = kstp("assess", "--dataset", "probability_pks", "--learner", "a", "--simulate", "3")
    assert two.exit_code == 2 and "not --learner and --simulate together" in two.output
    assert kstp("assess", "--dataset", "probability_pks", "--simulate", "3", "--again").exit_code == 2
    bad = kstp("assess", "--dataset", "probability_pks", "--simulate", "3", "--careless", "1.5")
    assert bad.exit_code == 2 and "1.5 is not a rate in [0, 1)" in bad.output
    unknown = kstp("assess", "--dataset", "nope", "--simulate", "3")
    assert unknown.exit_code == 1 and "unknown dataset 'nope'" in unknown.stderr
    for name, why in (("", "give the person's name"), ("probability_pks:", "give the person's name"),
                      ("a\nb", "holds a control character")):
        refused = kstp("assess", "--dataset", "probability_pks", "--learner", name)
        assert refused.exit_code == 2 and why in refused.output
    rates = kstp("assess", "--dataset", "probability_pks", "--simulate", "3", "--careless", "0.6", "--guess", "0.6")
    assert rates.exit_code == 2 and "add up to 1 or more" in rates.output
    nan = kstp("assess", "--dataset", "probability_pks", "--simulate", "3", "--threshold", "nan")
    assert nan.exit_code == 2 and "nan is not a posterior probability" in nan.output
    chain = tmp_path / "chain.csv"
    chain.write_text("b101,b102\n0,0\n1,0\n1,1\n")
    person = kstp("assess", "--dataset", "probability_pks", "--structure", chain, "--learner", "fay")
    assert person.exit_code == 2 and "--learner goes with --structure fit or surmise" in person.output
    run = kstp("assess", "--dataset", "probability_pks", "--replay-run", "answers:none")
    assert run.exit_code == 1
    assert ("Error: no run 'answers:none' in the graph, and no answers run on probability_pks to replay: kstp "
            "evaluate answers --dataset probability_pks first") in " ".join(run.stderr.split())


def test_ctrl_c_in_a_session_exits_130_and_keeps_it_to_resume(fitted, monkeypatch):
    """Issue 43: click turns Ctrl-C at a prompt into the same Abort as the end of input, so an interrupted
    session said "paused" and exited 0. It is an interruption: exit 130, the session stored to resume."""
    import click

    def interrupted(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise click.exceptions.Abort() from None  # as click.prompt does

    monkeypatch.setattr("kstp.cli.assess.click.prompt", interrupted)
    result = fitted("assess", "--dataset", "probability_pks", "--learner", "bo", "--json")
    assert result.exit_code == 130 and result.stdout == ""
    assert "Interrupted: every answer given is stored; the same command resumes the session." in result.stderr
    assert "end of input" not in result.stderr
    run = next(r for r in json.loads(fitted("runs", "list", "--json").stdout) if r["evaluator"] == "assess")
    assert run["status"] == "interrupted"


def test_a_run_to_replay_that_is_not_there_names_those_that_are(fitted):
    with FakeEndpoint(answer="\\boxed{0.40}") as fake:
        made = fitted("evaluate", "answers", "--dataset", "probability_pks", "--model", "fake", "--base-url",
                      fake.base_url, "--gen-kwargs", "max_tokens=16", "--json")
    assert made.exit_code == 0, made.output
    run_id = json.loads(made.stdout)["runId"]
    missing = fitted("assess", "--dataset", "probability_pks", "--replay-run", run_id[:-1] + "x")
    assert missing.exit_code == 1
    assert f"Error: no run {run_id[:-1] + 'x'!r} in the graph; the answers runs on probability_pks: {run_id}" in \
        " ".join(missing.stderr.split())
    replayed = fitted("assess", "--dataset", "probability_pks", "--replay-run", run_id, "--json")
    assert replayed.exit_code == 0, replayed.output
