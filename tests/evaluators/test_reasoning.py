"""Paper 1 Appendix C: LLM-as-judge reasoning scores, with scripted answering and judge models:
retries, unscored traces, scores written onto the judged Responses, resume, Figure 6's data."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from click.testing import CliRunner

from kstp.errors import UnknownIdError
from kstp.evaluators import answers, reasoning
from kstp.inference.backend import Completion, Sampling
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.loaders import items
from tests.endpoint import FakeEndpoint

ITEMS = ['{"id": "a", "text": "What is 17 + 25?", "answer": "42"}',
         '{"id": "b", "text": "What is 3 * 4?", "answer": "12"}',
         '{"id": "c", "text": "What is 9 - 5?", "answer": "4"}']


class Scripted:
    """A stand-in model: the reply to a chat is ``reply(user text, sample index)``; it keeps what it was asked."""

    def __init__(self, name, reply):
        self.name, self.model, self.reply, self.asked = "scripted", name, reply, []

    def generate(self, prompts, sampling: Sampling, samples: Sequence[Sequence[int]] | None = None, progress=None):
        out = []
        for chat, wanted in zip(prompts, samples, strict=True):
            self.asked += [(chat[-1]["content"], i) for i in wanted]
            out.append([Completion(i, sampling.seed + i, text=self.reply(chat[-1]["content"], i),
                                   finish_reason="stop") for i in wanted])
        return out

    def close(self):
        pass


def student(text, i):
    return {"Problem:\nWhat is 17 + 25?": "17 + 25 = 42, so \\boxed{42}",
            "Problem:\nWhat is 3 * 4?": "3 * 4 = 7, so \\boxed{7}",
            "Problem:\nWhat is 9 - 5?": "\\boxed{4}"}[text]


def judge_reply(text, i):
    if "17 + 25" in text:
        return '{"relevance": 5, "coherence": 4, "accuracy": 5}'
    if "3 * 4" in text:  # the first reply is no score object: asked again with the next seed
        return "It is fine." if i == 0 else '```json\n{"relevance": 3, "coherence": 3, "accuracy": 1}\n```'
    return '{"relevance": 9, "coherence": 4, "accuracy": 5}'  # out of the 1-5 scale, every time


@pytest.fixture
def answered(store, tmp_path):
    (tmp_path / "t.jsonl").write_text("\n".join(ITEMS) + "\n")
    items.write_items(store, items.read_items_jsonl(tmp_path / "t.jsonl", "t", None, set()))
    run = answers.evaluate(store, Scripted("pupil", student), "t", Sampling(seed=42))
    return store, run.run_id


def test_reasoning_scores_retried_written_and_resumed(answered):
    """a: 5/4/5; b: 3/3/1 on the second attempt; c: never valid (retries 1 -> 2 attempts), unscored.
    Means over the 2 scored traces: relevance 4, coherence 3.5, accuracy 3; standard errors sd / sqrt(2):
    |5 - 3| / 2 = 1, |4 - 3| / 2 = 0.5, |5 - 1| / 2 = 2 (the sd of two values is their distance over sqrt 2)."""
    store, answers_run = answered
    judge = Scripted("judge", judge_reply)
    result = reasoning.evaluate(store, judge, "t", "pupil", retries=1)
    assert result.summary() | {"runId": None} == {"runId": None, "resumed": False, "model": "pupil",
                                                  "answersRun": answers_run, "generatedNow": 5, "pending": 0,
                                                  "traces": 3, "scored": 2, "relevance": 4.0, "coherence": 3.5,
                                                  "accuracy": 3.0, "relevanceStderr": pytest.approx(1.0),
                                                  "coherenceStderr": pytest.approx(0.5),
                                                  "accuracyStderr": pytest.approx(2.0)}
    assert sorted((t.split("\n")[1], i) for t, i in judge.asked) == [
        ("What is 17 + 25?", 0), ("What is 3 * 4?", 0), ("What is 3 * 4?", 1), ("What is 9 - 5?", 0),
        ("What is 9 - 5?", 1)]
    assert judge.asked[0][0] == "Problem:\nWhat is 17 + 25?\n\nSolution:\n17 + 25 = 42, so \\boxed{42}"
    stored = store.frame("reasoning_scores", {"runId": answers_run})
    assert stored[["questionId", "relevance", "coherence", "accuracy"]].astype(object).where(
        stored[["questionId", "relevance", "coherence", "accuracy"]].notna(), None).values.tolist() == [
        ["t:a", 5, 4, 5], ["t:b", 3, 3, 1], ["t:c", None, None, None]]
    assert set(stored["judgeRunId"].dropna()) == {result.run_id}
    again = reasoning.evaluate(store, Scripted("judge", judge_reply), "t", "pupil", retries=1)
    assert (again.run_id, again.resumed, again.generated) == (result.run_id, True, 0)
    assert again.summary()["relevance"] == 4.0


def test_reasoning_needs_an_answers_run(store):
    with pytest.raises(UnknownIdError, match="model 'pupil' has no answers run on dataset 't'"):
        reasoning.evaluate(store, Scripted("judge", judge_reply), "t", "pupil")


def test_figure6_data_and_chart(tmp_path):
    """Figure 6's two panels from the three models' figures of Appendix C's text (Relevance 4.76,
    4.86, 4.93; PSR = 1 rates 20.81 %, 27.32 %, 25.44 %)."""
    from kstp.reports.plots import bar_panels

    scores, psr_figures = reasoning.figure6(
        {m: {"relevance": r, "coherence": 4.0, "accuracy": 4.0}
         for m, r in (("Llama 70B", 4.76), ("Qwen2.5 7B", 4.86), ("Qwen2.5 32B", 4.93))},
        {"Llama 70B": {"psrMicro": 0.790, "psr 1.0": 0.2081}, "Qwen2.5 7B": {"psrMicro": 0.828, "psr 1.0": 0.2732},
         "Qwen2.5 32B": {"psrMicro": 0.862, "psr 1.0": 0.2544}})
    assert scores["relevance"].tolist() == [4.76, 4.86, 4.93]
    assert psr_figures["psr = 1.0 rate"].tolist() == [0.2081, 0.2732, 0.2544]
    path = bar_panels([(scores, "(a) Reasoning scores", "score (1-5)", (1, 5)),
                       (psr_figures, "(b) PSR", "share", (0, 1))], tmp_path / "f6.png", "Figure 6")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_score_item_by_hand():
    assert reasoning.score_item('{"relevance": 1, "coherence": 5, "accuracy": 3}') == {
        "relevance": 1, "coherence": 5, "accuracy": 3}
    assert reasoning.score_item('{"relevance": 1, "coherence": 5}') is None  # a dimension missing
    assert reasoning.score_item('{"relevance": true, "coherence": 5, "accuracy": 3}') is None
    assert reasoning.score_item('{"relevance": 4.5, "coherence": 5, "accuracy": 3}') is None
    assert reasoning.score_item("[5, 5, 5]") is None and reasoning.score_item(None) is None
    assert json.loads(json.dumps(reasoning.SCORE_SCHEMA))["required"] == ["relevance", "coherence", "accuracy"]



def test_cli_evaluate_reasoning_with_the_local_model(graph_location, data_root, tmp_path):
    """The tiny local model answers two frcsub items and judges its own answers: every trace is
    scored or counted unscored, the JSON summary and Figure 6's PNG are written; a re-run resumes."""
    from kstp.cli.main import cli

    def kstp(*args):
        return CliRunner().invoke(cli, ["--graph", graph_location, *map(str, args)])

    folder = data_root / "responses/frcsub"
    assert kstp("ingest", "items", folder / "items.csv", "--dataset", "frcsub", "--qmatrix",
                folder / "qmatrix.csv").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "frcsub", "--rule", "reflexive").exit_code == 0
    assert kstp("evaluate", "answers", "--dataset", "frcsub", "--model", "smollm2", "--backend", "local",
                "--limit", "2", "--gen-kwargs", "max_tokens=16").exit_code == 0
    args = ["evaluate", "reasoning", "--dataset", "frcsub", "--judged", "smollm2", "--model", "smollm2",
            "--backend", "local", "--retries", "0", "--out", tmp_path / "out", "--json"]
    result = kstp(*args)
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert (row["model"], row["traces"], row["generatedNow"]) == ("smollm2", 2, 2)
    assert 0 <= row["scored"] <= 2
    # the judge's two replies at reasoning.SAMPLING's 64-token cap; a cut one is not a score
    cut = row["truncation"]["truncated"]
    assert row["truncation"] == {"replies": 2, "truncated": cut, "share": cut / 2, "maxTokens": 64}
    assert cut <= 2 - row["scored"]
    assert f"{cut} of 2 replies ({cut / 2:.1%}) were cut at max_tokens (64 tokens" in result.stderr
    assert (tmp_path / "out/reasoning_psr_frcsub.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "out/reasoning_frcsub.json").read_text()) == [row]
    again = json.loads(kstp(*args).stdout)
    assert again[0]["generatedNow"] == 0 and again[0]["scored"] == row["scored"]


def test_a_judge_without_reply_leaves_the_run_incomplete_for_the_next(answered):
    """A judge answering 503 until its retries run out: no score and no failure of the judge, but pending
    requests; the same command asks them again and completes the same run."""
    store, _ = answered
    score = '{"relevance": 5, "coherence": 4, "accuracy": 5}'
    with FakeEndpoint([503] * 6, answer=score) as server:  # 3 traces x 2 tries
        judge = OpenAIBackend("judge", server.base_url, retries=2, max_wait=0.05)
        result = reasoning.evaluate(store, judge, "t", "pupil", retries=1)
        summary = result.summary()
        assert (summary["pending"], summary["generatedNow"], summary["scored"]) == (3, 0, 0)
        assert result.last_failure.startswith("transport: ")
        run = store.frame("runs_of", {"evaluator": reasoning.NAME, "model": "judge", "dataset": "t"}).iloc[0]
        assert run["status"] == "incomplete"
        again = reasoning.evaluate(store, judge, "t", "pupil", retries=1)
    assert (again.run_id, again.pending, again.summary()["scored"], again.summary()["relevance"]) == (
        result.run_id, 0, 3, 5.0)
