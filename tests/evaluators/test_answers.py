"""The paper-1 answer evaluation end to end with a real local model: stored, graded,
resumed after a server dies, compared with human learners by PSR."""

from __future__ import annotations

import pytest

from kstp.evaluators import answers, psr
from kstp.graph.structures import derive_question_prerequisites
from kstp.inference.backend import Completion, Sampling, get_backend
from kstp.inference.backends.local import LocalServer
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.runs import ConfigChangedError
from kstp.loaders import items, responses
from tests.conftest import TOY_ITEMS, load_toy
from tests.endpoint import FakeEndpoint

SAMPLING = Sampling(n=2, max_tokens=24, seed=42)


@pytest.fixture
def probability(store, data_root):
    folder = data_root / "responses/probability_pks"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "probability_pks", folder / "qmatrix.csv"))
    known = set(store.frame("dataset_questions", {"dataset": "probability_pks"})["localId"])
    responses.write_answers(store, "probability_pks", responses.read_wide(folder / "responses_full.csv", known), "r")
    derive_question_prerequisites(store, "probability_pks", "reflexive")
    return store


def test_score_item_failures_are_incorrect_with_reason():
    assert answers.score_item(Completion(0, 1, error="transport: APIConnectionError"), "3").reason == \
        "transport: APIConnectionError"
    assert answers.score_item(Completion(0, 1, text="  "), "3").reason == "empty output"
    assert answers.score_item(Completion(0, 1, text="The answer is 3.", finish_reason="stop"), "3").correct


def test_evaluate_stores_grades_resumes_and_feeds_psr(probability):
    backend = get_backend("local", "smollm2")
    try:
        result = answers.evaluate(probability, backend, "probability_pks", SAMPLING, limit=3)
        again = answers.evaluate(probability, backend, "probability_pks", SAMPLING, limit=3)
        with pytest.raises(ConfigChangedError, match=r"\(sampling.max_tokens: 24 -> 16\); pass --new-run"):
            answers.evaluate(probability, backend, "probability_pks", Sampling(n=2, max_tokens=16), limit=3)
    finally:
        backend.close()
    assert (result.requested, result.generated, result.resumed) == (6, 6, False)
    rows = result.responses
    assert len(rows) == 6 and rows["text"].notna().all()
    assert set(rows["verdict"]) <= {"correct", "wrong answer", "no answer found", "truncated",
                                    "unparseable answer"}
    assert (again.generated, again.resumed, again.run_id) == (0, True, result.run_id)
    assert again.responses[["responseId", "text"]].equals(rows[["responseId", "text"]])
    answered = probability.frame("answers", {"dataset": "probability_pks"})
    model = answered[answered["learnerId"] == "model:smollm2"]
    primary = rows[rows["sampleIndex"] == 0].set_index("questionId")["correct"].astype(bool)
    assert model.set_index("questionId")["correct"].to_dict() == primary.to_dict()
    run = probability.run("run_responses", {"runId": result.run_id})
    assert len(run) == 6
    summary = psr.evaluate_dataset(probability, "probability_pks").summary()
    assert [r["learner"] for r in summary] == ["human learners", "model:smollm2"]
    assert summary[1]["learners"] == 1 and summary[1]["accuracy"] == pytest.approx(primary.mean())


def test_killed_server_loses_nothing_and_resume_completes(probability):
    """The server dies after the first completion: the rest are transport failures, not
    the model's answers, so nothing is stored for them; the server back on the same
    address, a resumed run asks for exactly those and duplicates nothing. ``outage=0``: the run stops at once
    instead of waiting the default 180 s for the server (tests/inference/test_real_servers.py rides one out)."""
    first = LocalServer("smollm2")
    backend = OpenAIBackend("smollm2", base_url=first.base_url, concurrency=1, retries=1, max_wait=0.1, outage=0)
    port = first.port

    def stop_server(done, total):
        if done == 1:
            first.close()

    broken = answers.evaluate(probability, backend, "probability_pks", SAMPLING, limit=2, progress=stop_server)
    assert broken.requested == 4 and 1 <= len(broken.responses) <= 2
    assert broken.responses["error"].isna().all()
    survivors = set(broken.responses["responseId"])
    with LocalServer("smollm2", port=port) as second:
        backend = OpenAIBackend("smollm2", base_url=second.base_url, concurrency=1)
        resumed = answers.evaluate(probability, backend, "probability_pks", SAMPLING, limit=2)
    assert resumed.run_id == broken.run_id and resumed.generated == 4 - len(survivors)
    assert len(resumed.responses) == 4 and resumed.responses["error"].isna().all()
    kept = resumed.responses.set_index("responseId").loc[sorted(survivors), "text"]
    assert kept.to_dict() == broken.responses.set_index("responseId").loc[sorted(survivors), "text"].to_dict()
    assert len(probability.frame("responses_by_id", {"ids": list(resumed.responses["responseId"])})) == 4


class Scripted:
    """A stand-in model with one hand-written reply per question (keyed by its first line)."""

    name, model = "scripted", "scripted-model"

    def __init__(self, replies: dict[str, str]):
        self.replies = replies

    def generate(self, prompts, sampling, samples=None, progress=None):
        return [[Completion(i, sampling.seed + i, text=self.replies[chat[-1]["content"].splitlines()[1]],
                            finish_reason="stop") for i in (samples[k] if samples is not None else range(sampling.n))]
                for k, chat in enumerate(prompts)]

    def close(self):
        pass


def test_evaluate_grades_option_letters_by_the_question_option_count(store, tmp_path):
    """With four options an "I" can only be the pronoun; with ten, "Answer: I" is option I."""
    four = "\\nA. 4\\nB. 6\\nC. 7\\nD. 9"
    ten = "".join(f"\\n{letter}. {n}" for n, letter in enumerate("ABCDEFGHIJ"))
    path = tmp_path / "items.csv"
    path.write_text("item_id,text,answer\n"
                    f'q1,"Which is prime?{four}",C\nq2,"Which is even?{four}",A\nq3,"Which is eight?{ten}",I\n'
                    .replace("\\n", "\n"))
    items.write_items(store, items.read_items_csv(path, "mc"))
    model = Scripted({"Which is prime?": "Answer: I think it is C.", "Which is even?": "Answer: I",
                      "Which is eight?": "Answer: I"})
    result = answers.evaluate(store, model, "mc", Sampling(n=1, seed=42))
    verdicts = result.responses.set_index("questionId")[["extracted", "verdict"]]
    assert verdicts.to_dict("index") == {"mc:q1": {"extracted": "C", "verdict": "correct"},
                                         "mc:q2": {"extracted": None, "verdict": "no answer found"},
                                         "mc:q3": {"extracted": "I", "verdict": "correct"}}


class Cut(Scripted):
    """Replies (content, reasoning, finish_reason) per question, keyed by its first line."""

    def generate(self, prompts, sampling, samples=None, progress=None):
        return [[Completion(i, sampling.seed + i, **dict(zip(("text", "reasoning", "finish_reason"),
                                                             self.replies[chat[-1]["content"].splitlines()[1]],
                                                             strict=True)))
                 for i in (samples[k] if samples is not None else range(sampling.n))] for k, chat in enumerate(prompts)]


def test_the_truncated_column_counts_replies_cut_in_the_reasoning(store, tmp_path):
    """q1 cut while thinking (no content), q2 cut in its content, q3 answered: the summary's ``truncated`` is 2,
    as the truncation line's count (it said 0 above a line saying 2 replies were cut)."""
    from kstp.cli.models import run_truncation

    path = tmp_path / "items.csv"
    path.write_text("item_id,text,answer\nq1,1 + 1?,2\nq2,2 + 2?,4\nq3,3 + 3?,6\n")
    items.write_items(store, items.read_items_csv(path, "cut"))
    model = Cut({"1 + 1?": (None, "Let me think: 1 + 1", "length"), "2 + 2?": ("First, 2 + 2 =", None, "length"),
                 "3 + 3?": ("So \\boxed{6}", None, "stop")})
    result = answers.evaluate(store, model, "cut", Sampling(n=1, seed=42, max_tokens=64))
    assert result.responses.set_index("questionId")["verdict"].to_dict() == {
        "cut:q1": "truncated (in the reasoning)", "cut:q2": "truncated", "cut:q3": "correct"}
    summary = result.summary()
    assert (summary["truncated"], summary["accuracy"]) == (2, pytest.approx(1 / 3))
    assert run_truncation(store, result.run_id, 64)["truncated"] == summary["truncated"]


def test_a_reply_two_datasets_share_counts_in_each_run_for_its_own_questions_only(store, tmp_path):
    """Datasets ``toy`` and ``toy2`` hold the same question texts, so one request is one reply (its cache key is
    the prompt): toy2's run asks nothing and links toy's stored replies, each of which then has a ``TO`` edge to a
    question of each dataset. Every reader of a run's replies used to follow every ``TO`` edge, so each run read
    four rows for its two questions: the run stored ``completed = 4``, its accuracy's standard error was taken over
    four, its ANSWERED edges went to the other dataset's questions too (overwriting their runId), and the sample
    list, export, truncation count and primary answers held both datasets. Each run now reads its own dataset's
    questions only."""
    load_toy(store, tmp_path)
    again = tmp_path / "toy2.jsonl"
    again.write_text(TOY_ITEMS)
    items.write_items(store, items.read_items_jsonl(again, "toy2", "toy", items.framework_concepts(store, "toy")))
    with FakeEndpoint(answer="\\boxed{5}") as fake:  # right on q2 only
        backend = OpenAIBackend("m", base_url=fake.base_url, concurrency=2, retries=1, max_wait=0.05)
        runs = {d: answers.evaluate(store, backend, d, Sampling(max_tokens=8), limit=2) for d in ("toy", "toy2")}
        assert fake.requests == 2 and runs["toy2"].generated == 0  # the shared request is asked once
    own = {d: {f"{d}:q1", f"{d}:q2"} for d in runs}
    for dataset, result in runs.items():
        run_id = result.run_id
        for query in ("run_responses", "run_samples", "run_export", "reasoning_scores"):
            assert sorted(store.frame(query, {"runId": run_id})["questionId"]) == sorted(own[dataset]), query
        assert list(store.frame("run_finish_reasons", {"runId": run_id})["questions"]) == [1, 1]
        run = store.nodes("Run", [run_id]).iloc[0]
        assert (run["completed"], run["correct"], run["accuracy"]) == (2, 1, 0.5)
        assert run["accuracyStderr"] == pytest.approx(0.5)  # sqrt(.5 * .5 / (2 - 1)), over its two questions
        edges = store.frame("run_links", {"runId": run_id})
        assert set(edges["toId"]) == own[dataset]
    primary = store.frame("primary_answers", {"learners": ["model:m"], "evaluator": "answers"})
    assert {(r.runId, r.questionId) for r in primary.itertuples()} == {
        (runs[d].run_id, q) for d in runs for q in own[d]}
    detail = store.frame("response_detail", {"responseId": runs["toy"].responses["responseId"].iloc[0]})
    assert {(r.runId, r.questionId) for r in detail.itertuples()} == {(runs["toy"].run_id, "toy:q1"),
                                                                     (runs["toy2"].run_id, "toy2:q1")}
