"""Adaptive assessment on the graph: a person's session (graded, stored, resumed), a model's run through the run
engine (its answers shared with evaluate answers), replays and refusals, with posteriors computed by hand.

The graph: concepts c1 -> c2 -> c3, one question each (q1 "1 + 1", q2 "2 + 3", q3 "4 + 5"), so Eq. 1 (reflexive)
makes the chain q1 < q2 < q3 and its space {}, {q1}, {q1, q2}, Q. Ten learners answer everything, each exactly a
state: 2 at {}, 3 at {q1}, 3 at {q1, q2}, 2 at Q, so the MD fit's state probabilities are (.2, .3, .3, .2). With
careless 0.1 and guessing 0.2 for every question (--careless, --guess), by hand:

- the half-split rule asks q2 first (L = .8, .5, .2); right: weights (.2 * .2, .3 * .2, .3 * .9, .2 * .9) =
  (.04, .06, .27, .18) / .55;
- then q3 (L = .3273 is nearer 1/2 than q1's .9273); wrong: (.032, .048, .216, .018) / .314, {q1, q2} .6879;
- then q1; right: (.0064, .0432, .1944, .0162) / .2602: {q1, q2} at .74712, below the threshold .8: every
  question is asked (stopped: exhausted).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from kstp.errors import KstpError
from kstp.evaluators import answers
from kstp.evaluators.assess import load_model
from kstp.evaluators.assess.llm import assess_model
from kstp.evaluators.assess.model import Settings
from kstp.evaluators.assess.replay import replay_learners, replay_run, study
from kstp.evaluators.assess.session import assess_person
from kstp.evaluators.blim import fit_dataset, write_fit
from kstp.graph.structures import derive_question_prerequisites
from kstp.inference.backend import Sampling
from kstp.inference.backends.openai_compat import OpenAIBackend
from tests.endpoint import FakeEndpoint
from tests.parity.test_parity import DATASET, build

QC = {"q1": {"c1"}, "q2": {"c2"}, "q3": {"c3"}}
TEXTS = {"q1": ("1 + 1", "2"), "q2": ("2 + 3", "5"), "q3": ("4 + 5", "9")}
PATTERNS = {"a": (0, 0, 0), "b": (1, 0, 0), "c": (1, 1, 0), "d": (1, 1, 1)}
COUNTS = {"a": 2, "b": 3, "c": 3, "d": 2}
SAMPLING = Sampling(n=1, max_tokens=16, seed=42)


def chain_graph(store, fit: bool = True):
    answers_of = {f"{k}{i}": dict(zip(("q1", "q2", "q3"), map(bool, PATTERNS[k]), strict=True))
                  for k, n in COUNTS.items() for i in range(n)}
    build(store, {("c1", "c2"), ("c2", "c3")}, QC, answers_of)
    store.write_nodes("Question", pd.DataFrame([{"id": q, "text": t, "answer": a} for q, (t, a) in TEXTS.items()]))
    derive_question_prerequisites(store, DATASET, "reflexive")
    if fit:
        write_fit(store, fit_dataset(store, DATASET, "space", "MD"))
    return store


def by_hand_model(store):
    return load_model(store, DATASET, careless=0.1, guess=0.2)


def test_the_model_is_the_fit_with_the_given_rates(store):
    model = by_hand_model(chain_graph(store))
    assert model.items == ["q1", "q2", "q3"] and model.method == "listed"
    assert model.states.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert model.prior == pytest.approx([0.2, 0.3, 0.3, 0.2])
    assert model.beta.tolist() == [0.1] * 3 and model.eta.tolist() == [0.2] * 3
    assert sorted(map(tuple, model.pairs.tolist())) == [(0, 1), (0, 2), (1, 2)]
    assert model.golds == {"q1": "2", "q2": "5", "q3": "9"} and model.texts["q2"] == "2 + 3"


def test_a_person_is_assessed_graded_and_stored(store):
    model = by_hand_model(chain_graph(store))
    typed = {"q2": "5", "q3": "7", "q1": "2"}
    shown = []

    def ask(question):
        shown.append((question.number, question.id, question.text))
        return typed[question.id]

    result = assess_person(store, model, "ada", Settings(), ask)
    assert shown == [(1, "q2", "2 + 3"), (2, "q3", "4 + 5"), (3, "q1", "1 + 1")]
    assert [(s["question"], s["correct"], s["answer"]) for s in result["path"]] == [
        ("q2", True, "5"), ("q3", False, "7"), ("q1", True, "2")]
    assert [s["posterior"] for s in result["path"]] == pytest.approx([0.27 / 0.55, 0.216 / 0.314, 0.1944 / 0.2602])
    assert (result["stopped"], result["status"], result["state"]) == ("exhausted", "finished", ["q1", "q2"])
    assert result["statePosterior"] == pytest.approx(0.1944 / 0.2602)
    assert (result["innerFringe"], result["outerFringe"]) == (["q2"], ["q3"])
    # predicted accuracy: every question asked, so the answers themselves: 2 of 3
    assert result["prediction"]["accuracy"] == pytest.approx(2 / 3)
    run_id = result["runId"]
    edges = store.frame("answers", {"dataset": DATASET})
    mine = edges[edges["learnerId"] == "gen:ada"].set_index("questionId")["correct"].to_dict()
    assert mine == {"q1": True, "q2": True, "q3": False}
    stored = store.frame("learner_assessments", {"learner": "gen:ada"})
    assert stored["runId"].tolist() == [run_id] and stored["status"].tolist() == ["finished"]
    assert stored["asked"].tolist() == [3] and stored["predictedAccuracy"].iloc[0] == pytest.approx(2 / 3)
    assert json.loads(stored["assessment"].iloc[0])["state"] == ["q1", "q2"]


def test_an_interrupted_session_resumes_where_it_stopped(store):
    model = by_hand_model(chain_graph(store))
    typed = {"q2": "5", "q3": "7", "q1": "2"}

    def stop_at_second(question):
        if question.number == 2:
            raise KeyboardInterrupt
        return typed[question.id]

    with pytest.raises(KeyboardInterrupt):
        assess_person(store, model, "ada", Settings(), stop_at_second)
    run = store.frame("learner_assessments", {"learner": "gen:ada"}).iloc[0]
    assert (run["status"], run["asked"]) == ("interrupted", 1)
    asked = []
    result = assess_person(store, model, "ada", Settings(), lambda q: asked.append(q.id) or typed[q.id])
    assert asked == ["q3", "q1"] and result["resumed"] == 1 and result["status"] == "finished"
    assert result["statePosterior"] == pytest.approx(0.1944 / 0.2602)
    assert [s["answer"] for s in result["path"]] == ["5", "7", "2"]
    # finished: the same command asks nothing and prints the stored result; --again starts anew
    again = assess_person(store, model, "ada", Settings(), lambda q: pytest.fail("asked again"))
    assert again["runId"] == result["runId"] and again["resumed"] == 3
    fresh = assess_person(store, model, "ada", Settings(), lambda q: typed[q.id], again=True)
    assert fresh["runId"] == f"{result['runId']}:2" and fresh["asked"] == 3
    assert len(store.frame("learner_assessments", {"learner": "gen:ada"})) == 2


def test_a_model_is_asked_only_the_chosen_questions_and_shares_evaluate_answers_cache(store):
    model = by_hand_model(chain_graph(store))
    with FakeEndpoint(answer="\\boxed{5}") as fake:  # right on q2 only
        backend = OpenAIBackend("fake", base_url=fake.base_url, concurrency=4, retries=1, max_wait=0.05)
        result = assess_model(store, backend, model, Settings(), SAMPLING)
        assert fake.requests == 3 and result["askedNow"] == 3 and result["status"] == "finished"
        # q2 right, q3 wrong, q1 wrong: (.0256, .0048, .0216, .0018) / .0538, {} most likely
        assert [(s["question"], s["correct"]) for s in result["path"]] == [("q2", True), ("q3", False),
                                                                           ("q1", False)]
        assert result["statePosterior"] == pytest.approx(0.0256 / 0.0538) and result["state"] == []
        assert result["tokens"] == 3 * 5  # the fake reports 3 prompt + 2 completion tokens
        # the model's learner gets no ANSWERED edges from an assessment
        edges = store.frame("answers", {"dataset": DATASET})
        assert "model:fake" not in set(edges["learnerId"])
        full = answers.evaluate(store, backend, DATASET, SAMPLING)  # the same cache keys: nothing asked
        assert fake.requests == 3 and full.generated == 0 and len(full.responses) == 3
        again = assess_model(store, backend, model, Settings(), SAMPLING)
        assert fake.requests == 3 and again["resumed"] and again["askedNow"] == 0 and again["runId"] == result["runId"]
    run = store.frame("run_by_id", {"runId": result["runId"]}).iloc[0]
    assert run["evaluator"] == "assess" and json.loads(run["config"])["options"]["adaptive"] is True
    edges = store.frame("answers", {"dataset": DATASET})  # evaluate answers wrote the model's own
    assert edges[edges["learnerId"] == "model:fake"].set_index("questionId")["correct"].to_dict() == {
        "q1": False, "q2": True, "q3": False}


def test_a_model_is_asked_in_batches(store):
    model = by_hand_model(chain_graph(store))
    with FakeEndpoint(answer="\\boxed{5}", delay_s=0.2) as fake:
        backend = OpenAIBackend("fake", base_url=fake.base_url, concurrency=4, retries=1, max_wait=0.05)
        result = assess_model(store, backend, model, Settings(batch=2), SAMPLING)
    # q2 (the rule's), then the question that adds most to the pair's joint information, asked together
    states, prior = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]), np.array([0.2, 0.3, 0.3, 0.2])

    def joint(pair):  # I(R_pair; K), by listing the four answer patterns
        right = np.where(states[:, pair], 0.9, 0.2)  # P(right | K) per state and question
        cells = [np.prod(np.where(pattern, right, 1 - right), axis=1) for pattern in ((0, 0), (0, 1), (1, 0), (1, 1))]
        marginal = np.array([c @ prior for c in cells])
        noise = -sum(prior @ (c * np.log2(c)) for c in cells)
        return -(marginal * np.log2(marginal)).sum() - noise

    second = "q1" if joint([1, 0]) > joint([1, 2]) else "q3"
    assert joint([1, 0]) == pytest.approx(0.6343, abs=1e-4) and joint([1, 2]) == pytest.approx(0.6189, abs=1e-4)
    assert fake.most_at_once == 2 and [s["question"] for s in result["path"]][:2] == ["q2", second] == ["q2", "q1"]


def test_a_stored_run_is_replayed(store):
    model = by_hand_model(chain_graph(store))
    with FakeEndpoint(answer="\\boxed{5}") as fake:
        backend = OpenAIBackend("fake", base_url=fake.base_url, concurrency=4, retries=1, max_wait=0.05)
        run = answers.evaluate(store, backend, DATASET, SAMPLING)
    result = replay_run(store, run.run_id, model, Settings(threshold=0.5))
    # the full run: q2 right only; PSR: q2's prerequisite q1 wrong, so 0
    assert result["full"] == {"accuracy": pytest.approx(1 / 3), "psrMicro": 0.0, "psrMacro": 0.0, "tokens": 15}
    # q2 right (.4909), q3 wrong (.6879 > .5): two questions, a third saved
    assert result["adaptive"]["asked"] == 2 and result["stopped"] == "threshold"
    assert result["saved"] == {"questions": pytest.approx(1 / 3), "tokens": pytest.approx(1 / 3)}
    assert result["state"] == ["q1", "q2"]
    with pytest.raises(KstpError, match=re.escape(f"no run 'answers:none' in the graph; the answers runs on gen: "
                                                  f"{run.run_id}")):
        replay_run(store, "answers:none", model, Settings())


def test_recorded_learners_are_replayed_leaving_each_out(store):
    model = load_model(chain_graph(store), DATASET)  # the fit's own (near zero) rates
    result = replay_learners(store, model, Settings(), leave_one_out=True)
    # every learner sits on a state and answers without error: each one's state is found
    assert (result["learners"], result["exact"], result["accuracyError"]) == (10, 1.0, pytest.approx(0, abs=1e-4))
    assert result["method"] == "MD" and result["asked"] <= 3


def test_study_on_the_fit_finds_every_state_without_errors(store):
    model = load_model(chain_graph(store), DATASET)
    result = study(model, 20, seed=1, rules=("half-split", "random"), thresholds=(0.9,))
    # near-zero rates: two half-split questions tell the four states of a chain apart
    rows = {r["rule"]: r for r in result["thresholds"]}
    assert rows["half-split"]["exact"] == 1.0 and rows["half-split"]["asked"] <= 2
    assert result["allQuestions"]["exact"] == 1.0


def test_surmise_relation_session_on_the_graph(store):
    chain_graph(store, fit=False)
    model = load_model(store, DATASET, "surmise", careless=0.05, guess=0.05)
    assert model.method == "surmise" and "3 questions in 3 classes" in model.source
    result = assess_person(store, model, "bo", Settings(rule="variance", threshold=0.999, budget=3),
                           lambda q: TEXTS[q.id][1])  # every answer right
    assert result["asked"] == 3 and result["state"] == ["q1", "q2", "q3"] and result["statePosterior"] is None


def test_refusals_say_what_to_do(store):
    chain_graph(store, fit=False)
    with pytest.raises(KstpError, match=r"no BLIM fit on the graph to assess with; fit one first \(kstp fit blim "):
        load_model(store, DATASET)
    with pytest.raises(KstpError, match="unknown prior 'flat'; use one of fit, uniform"):
        load_model(store, DATASET, prior="flat")
    with pytest.raises(KstpError, match=r"a careless-error rate lies in \[0, 1\); got 1.5"):
        load_model(store, DATASET, careless=1.5)


def test_a_structure_file_is_assessed_with_yes_or_no(tmp_path):
    path = tmp_path / "chain.csv"
    path.write_text("a,b,c\n0,0,0\n1,0,0\n1,1,0\n1,1,1\n")
    model = load_model(None, None, path, careless=0.1, guess=0.2)
    said = iter(["maybe", "y", "n", "yes"])  # "maybe" is asked again
    result = assess_person(None, model, "ada", Settings(), lambda q: next(said))
    # uniform prior: b right, then c wrong, then a right
    assert [(s["question"], s["correct"]) for s in result["path"]] == [("b", True), ("c", False), ("a", True)]
    weights = np.array([0.2 * 0.8 * 0.2, 0.9 * 0.8 * 0.2, 0.9 * 0.8 * 0.9, 0.9 * 0.1 * 0.9])
    assert result["statePosterior"] == pytest.approx(weights.max() / weights.sum())
