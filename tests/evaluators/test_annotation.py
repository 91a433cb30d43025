"""Two-stage LLM concept annotation (paper 1 §3.2, Appendix B): parsing and scoring by
hand, retries and dropped ids with a scripted model, end to end with the tiny local model.

The hand-made framework ``an``: cluster ``add`` {A1 adding, A2 carrying}, cluster
``geo`` {G1 shapes, G2 angles}; A1 and G1 carry example problems.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import ConfigError, UnknownIdError
from kstp.evaluators import annotation
from kstp.inference.backend import Completion, RejectedRequestError, Sampling, get_backend
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.loaders import items
from kstp.loaders.standards import load_standards
from tests.endpoint import FakeEndpoint

CONCEPTS = ("id,code,description,cluster\nA1,A.1,add two numbers,add\nA2,A.2,add with carrying,add\n"
            "G1,G.1,name shapes,geo\nG2,G.2,measure angles,geo\n")
ITEMS = ['{"id": "x1", "text": "What is 17 + 25?", "answer": "42"}',
         '{"id": "x2", "text": "How many sides does a triangle have?", "answer": "3"}',
         '{"id": "x3", "text": "Name the shape with four equal sides.", "answer": "square"}']


@pytest.fixture
def an(store, tmp_path):
    (tmp_path / "an.csv").write_text(CONCEPTS)
    (tmp_path / "an.jsonl").write_text("\n".join(ITEMS) + "\n")
    load_standards(store, tmp_path / "an.csv", None, "an")
    items.write_items(store, items.read_items_jsonl(tmp_path / "an.jsonl", "ds", None, set()))
    store.write_nodes("Concept", pd.DataFrame({"id": ["an:A1", "an:G1"],
                                               "exampleProblem": ["Add 8 and 5.", "Is a square a rectangle?"]}))
    return store


def cluster_id(store, name):
    outline = store.frame("framework_outline", {"framework": "an"})
    return outline.loc[outline["clusterName"] == name, "clusterId"].iloc[0]


class ScriptedModel:
    """A stand-in for a model: replies from a script keyed by (question marker, stage, attempt)."""

    name, model = "scripted", "scripted"

    def __init__(self, replies):
        self.replies, self.asked = replies, []

    def generate(self, prompts, sampling: Sampling, samples: Sequence[Sequence[int]] | None = None, progress=None):
        out = []
        for chat, wanted in zip(prompts, samples, strict=True):
            text = chat[1]["content"]
            marker = next(m for m in ("17 + 25", "triangle", "four equal", "Add 8", "square a") if m in text)
            stage = "clusters" if "clusters" in text.split("\n\n")[1] else "concepts"
            self.asked.append((marker, stage, wanted[0]))
            out.append([Completion(i, sampling.seed + i, text=self.replies.get((marker, stage, i), "[]"),
                                   finish_reason="stop") for i in wanted])
        return out

    def close(self):
        pass


def test_parse_ids_by_hand():
    offered = ["an:1", "an:2", "an:3"]
    assert annotation.parse_ids('["an:2", "an:7", "an:2", "x"]', offered) == annotation.Parsed(("an:2",), 2, True)
    assert annotation.parse_ids('```json\n["an:3", "an:1"]\n```', offered) == annotation.Parsed(("an:3", "an:1"),
                                                                                                 0, True)
    assert annotation.parse_ids("[]", offered) == annotation.Parsed((), 0, True)
    assert annotation.parse_ids('{"ids": ["an:1"]}', offered).valid is False
    assert annotation.parse_ids('["an:1", true]', offered).valid is False
    assert annotation.parse_ids("[1, 2]", ["1"]) == annotation.Parsed(("1",), 1, True)
    assert annotation.parse_ids(None, offered).valid is False


def test_score_annotations_by_hand():
    gold = pd.DataFrame({"questionId": ["e:1", "e:2", "e:3", "e:4", "e:5", "e:9"],
                         "conceptId": ["c1", "c2", "c3", "c4", "c5", "c9"]})
    result = pd.DataFrame({"questionId": ["e:1", "e:2", "e:3", "e:4", "e:5"],
                           "concepts": [["c1"], ["c1", "c2", "c7"], ["c4"], [], []],
                           "status": ["annotated", "annotated", "annotated", "empty", "failed"]})
    # e:9 was not annotated in this run: not a pair of this evaluation
    # the judged pairs, one per question: 1, 1, 0; sd sqrt(1/3) over sqrt(3) = 1/3
    assert annotation.score_annotations(gold, result) == {"pairs": 5, "correct": 2, "incorrect": 1,
                                                          "unannotated": 2, "failed": 1, "accuracy": 2 / 3,
                                                          "accuracyStderr": pytest.approx(1 / 3)}


def test_annotate_retries_drops_and_writes_links(an):
    add, geo = cluster_id(an, "add"), cluster_id(an, "geo")
    replies = {
        ("17 + 25", "clusters", 0): "I think addition",            # invalid, retried
        ("17 + 25", "clusters", 1): json.dumps([add, "an:nope"]),  # one id not offered: dropped
        ("17 + 25", "concepts", 0): json.dumps(["an:A1", "an:A2", "an:G1"]),  # G1 is not offered here
        ("triangle", "clusters", 0): "[]",                          # empty: valid, no second stage
        ("four equal", "clusters", 0): json.dumps([geo]),
        ("four equal", "concepts", 0): "oops", ("four equal", "concepts", 1): "still not",
        ("four equal", "concepts", 2): "no",
    }
    model = ScriptedModel(replies)
    result = annotation.annotate(an, model, "ds", "an", retries=2)
    rows = result.items.set_index("questionId")
    assert rows.loc["ds:x1", "concepts"] == ["an:A1", "an:A2"] and rows.loc["ds:x1", "status"] == "annotated"
    assert rows.loc["ds:x1", "dropped"] == 2 and rows.loc["ds:x1", "attempts"] == 3
    assert rows.loc["ds:x2", "status"] == "empty" and rows.loc["ds:x2", "attempts"] == 1
    assert rows.loc["ds:x3", "status"] == "failed" and rows.loc["ds:x3", "attempts"] == 4
    assert sorted(model.asked) == sorted([("17 + 25", "clusters", 0), ("17 + 25", "clusters", 1),
                                          ("17 + 25", "concepts", 0), ("triangle", "clusters", 0),
                                          ("four equal", "clusters", 0), ("four equal", "concepts", 0),
                                          ("four equal", "concepts", 1), ("four equal", "concepts", 2)])
    summary = result.summary()
    assert (summary["annotated"], summary["empty"], summary["failed"], summary["droppedIds"]) == (1, 1, 1, 2)
    links = an.frame("concept_links", {"dataset": "ds"})
    assert links.values.tolist() == [["ds:x1", "an:A1", "llm:scripted", result.run_id],
                                     ["ds:x1", "an:A2", "llm:scripted", result.run_id]]
    stored = an.frame("run_responses", {"runId": result.run_id})
    assert len(stored) == 8 and stored["verdict"].value_counts().to_dict() == {"valid": 4, "invalid JSON": 4}
    # resumed: nothing asked again; a new annotation replaces this model's stale links
    again = annotation.annotate(an, model, "ds", "an", retries=2)
    assert (again.generated, again.resumed, len(model.asked)) == (0, True, 8)
    replies[("17 + 25", "concepts", 0)] = json.dumps(["an:A2"])
    reseeded = replace(annotation.SAMPLING, seed=7)  # a new request: the stored replies are not reused
    redo = annotation.annotate(an, ScriptedModel(replies), "ds", "an", reseeded, retries=1, new_run=True)
    assert redo.links["staleLinksRemoved"] == 1
    assert an.frame("concept_links", {"dataset": "ds"})[["questionId", "conceptId", "runId"]].values.tolist() == [
        ["ds:x1", "an:A2", redo.run_id]]


def _over_http(store, server, retries=5):
    backend = OpenAIBackend("m", base_url=server.base_url, retries=retries, max_wait=0.05, concurrency=1)
    return annotation.annotate(store, backend, "ds", "an", retries=0)


def test_a_question_without_reply_is_pending_and_keeps_its_links(an):
    an.write_relationships("ASSESSES", "Question", "Concept", pd.DataFrame(
        {"from_id": ["ds:x1"], "to_id": ["an:A1"], "source": ["llm:m"], "runId": ["earlier"]}))
    with FakeEndpoint([503, 503], answer="[]") as server:  # x1's clusters request, twice
        first = _over_http(an, server, retries=2)
        rows = first.items.set_index("questionId")["status"].to_dict()
        assert rows == {"ds:x1": "pending", "ds:x2": "empty", "ds:x3": "empty"}
        assert (first.pending, first.summary()["pending"], first.generated) == (1, 1, 2)
        [run] = an.run("runs_of", {"evaluator": "annotation", "model": "m", "dataset": "ds"})
        assert run["status"] == "incomplete"
        assert an.frame("concept_links", {"dataset": "ds"})["runId"].tolist() == ["earlier"]  # not decided yet
        assert annotation.score_annotations(pd.DataFrame({"questionId": ["ds:x1"], "conceptId": ["an:A1"]}),
                                            first.items)["pairs"] == 0  # a pending question is not scored
        again = _over_http(an, server, retries=2)
    assert (again.pending, again.generated, again.summary()["empty"]) == (0, 1, 3)
    assert an.frame("concept_links", {"dataset": "ds"}).empty  # x1 is now found to assess nothing


def test_a_rejected_request_stops_the_annotation_and_stores_nothing(an):
    with FakeEndpoint([404], answer="[]") as server:
        with pytest.raises(RejectedRequestError, match="HTTP 404: 'status 404'; check --model"):
            _over_http(an, server)
        [run] = an.run("runs_of", {"evaluator": "annotation", "model": "m", "dataset": "ds"})
        assert run["status"] == "failed" and an.frame("run_responses", {"runId": run["runId"]}).empty
        fixed = _over_http(an, server)
    assert (fixed.run_id, fixed.generated, fixed.summary()["empty"]) == (run["runId"], 3, 3)


def test_release_prompt_shows_the_solution_and_is_another_configuration(an, tmp_path):
    """The release prompt set: problem, then its solution, clusters as "id: name", concepts as
    "id: description"; switching prompt sets is a configuration change of the run."""
    from kstp.inference.backend import prompt_hash
    from kstp.inference.runs import ConfigChangedError

    (tmp_path / "sol.jsonl").write_text(json.dumps({"id": "s1", "text": "What is 17 + 25?", "answer": "42",
                                                    "solution": "Add the tens, then the ones."}) + "\n")
    items.write_items(an, items.read_items_jsonl(tmp_path / "sol.jsonl", "sol", None, set()))
    add, geo = cluster_id(an, "add"), cluster_id(an, "geo")
    outline = an.frame("framework_outline", {"framework": "an"})
    chat, offered = annotation.cluster_prompt("What is 17 + 25?", outline, "release", "Add the tens, then the ones.")
    assert chat[1]["content"] == (
        "Problem:\nWhat is 17 + 25?\n\nSolution:\nAdd the tens, then the ones.\n\n"
        f"Curriculum clusters (id: name):\n{add}: add\n{geo}: geo\n\n"
        "Which clusters does solving this problem require? Answer with a JSON array of their ids, "
        f'for example ["{add}"]; answer [] if none fits.')
    assert offered == [add, geo]
    second, _ = annotation.concept_prompt("What is 17 + 25?", outline, [add], "release", "Add the tens, then the ones.")
    assert "Curriculum standards (id: description):\nan:A1: add two numbers\nan:A2: add with carrying\n" \
        in second[1]["content"]
    kstp_chat, _ = annotation.cluster_prompt("What is 17 + 25?", outline, "kstp", "Add the tens, then the ones.")
    assert "Solution" not in kstp_chat[1]["content"]  # kstp's set shows the problem alone

    class Stages(ScriptedModel):
        def generate(self, prompts, sampling, samples=None, progress=None):
            self.asked += [chat[1]["content"] for chat in prompts]
            return [[Completion(i, 1, text=json.dumps([add]) if "clusters (" in chat[1]["content"] else '["an:A1"]',
                                finish_reason="stop") for i in wanted] for chat, wanted in zip(prompts, samples,
                                                                                                 strict=True)]

    annotation.annotate(an, Stages({}), "sol", "an")
    with pytest.raises(ConfigChangedError):
        annotation.annotate(an, Stages({}), "sol", "an", prompt="release")
    result = annotation.annotate(an, Stages({}), "sol", "an", prompt="release", new_run=True)
    assert result.items["concepts"].tolist() == [["an:A1"]]
    hashes = set(an.frame("run_responses", {"runId": result.run_id})["promptHash"])
    assert prompt_hash(chat) in hashes and prompt_hash(second) in hashes
    with pytest.raises(ConfigError, match="unknown annotation prompt set 'papr'"):
        annotation.annotate(an, Stages({}), "sol", "an", prompt="papr")


def test_annotate_keeps_links_of_other_sources(an):
    an.write_relationships("ASSESSES", "Question", "Concept", pd.DataFrame(
        {"from_id": ["ds:x1"], "to_id": ["an:A1"], "source": ["qmatrix"]}))
    add = cluster_id(an, "add")
    replies = {("17 + 25", "clusters", 0): json.dumps([add]),
               ("17 + 25", "concepts", 0): json.dumps(["an:A1", "an:A2"])}
    result = annotation.annotate(an, ScriptedModel(replies), "ds", "an", limit=1)
    assert result.links == {"linksKeptFromOtherSources": 1, "staleLinksRemoved": 0}
    assert an.frame("concept_links", {"dataset": "ds"})[["conceptId", "source"]].values.tolist() == [
        ["an:A1", "qmatrix"], ["an:A2", "llm:scripted"]]


def test_examples_and_errors(an):
    gold = annotation.load_examples(an, "an")
    assert gold[["questionId", "conceptId"]].values.tolist() == [["an-examples:A1", "an:A1"],
                                                                 ["an-examples:G1", "an:G1"]]
    texts = an.frame("dataset_questions", {"dataset": "an-examples"})["text"].tolist()
    assert texts == ["Add 8 and 5.", "Is a square a rectangle?"]
    with pytest.raises(UnknownIdError, match="framework 'nope' has no concept inside a cluster"):
        annotation.annotate(an, ScriptedModel({}), "ds", "nope")
    with pytest.raises(UnknownIdError, match="no concept of framework 'zz' has an example problem"):
        annotation.load_examples(an, "zz")


def test_annotate_and_evaluate_with_local_model(an):
    gold = annotation.load_examples(an, "an")
    backend = get_backend("local", "smollm2", threads=1, context=1024)
    sampling = Sampling(temperature=0.2, max_tokens=24, json_schema=annotation.ID_LIST_SCHEMA)
    try:
        result = annotation.annotate(an, backend, "an-examples", "an", sampling, retries=1)
    finally:
        backend.close()
    outline = an.frame("framework_outline", {"framework": "an"})
    cluster_of = dict(zip(outline["conceptId"], outline["clusterId"], strict=True))
    stored = an.frame("run_responses", {"runId": result.run_id})
    assert len(stored) == result.generated == result.items["attempts"].sum()
    for row in result.items.itertuples():
        assert row.status in ("annotated", "empty", "failed")
        assert {cluster_of[c] for c in row.concepts} <= set(row.clusters)  # concepts only from chosen clusters
    links = an.frame("concept_links", {"dataset": "an-examples"})
    want = {(r.questionId, c) for r in result.items.itertuples() for c in r.concepts}
    assert set(zip(links["questionId"], links["conceptId"], strict=True)) == want
    assert set(links["source"]) <= {"llm:smollm2"} and set(links["runId"]) <= {result.run_id}
    score = annotation.score_annotations(gold, result.items)
    assert score["pairs"] == 2 and score["correct"] + score["incorrect"] + score["unannotated"] == 2


def test_cli_annotate_concepts_and_evaluate(tmp_path, graph_location):
    graph = ["--graph", graph_location]
    (tmp_path / "an.csv").write_text(CONCEPTS)
    (tmp_path / "an.jsonl").write_text("\n".join(ITEMS) + "\n")

    def kstp(*args):
        return CliRunner().invoke(cli, [*graph, *map(str, args)])

    assert kstp("ingest", "standards", tmp_path / "an.csv", "--framework", "an").exit_code == 0
    assert kstp("ingest", "items", tmp_path / "an.jsonl", "--dataset", "ds").exit_code == 0
    args = ["annotate", "concepts", "--items", "ds", "--framework", "an", "--model", "smollm2", "--backend", "local",
            "--limit", "1", "--retries", "0", "--gen-kwargs", "max_tokens=24", "--out", tmp_path / "ann.csv"]
    result = kstp(*args, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["questions"] == 1 and summary["annotated"] + summary["empty"] + summary["failed"] == 1
    assert pd.read_csv(tmp_path / "ann.csv")["questionId"].tolist() == ["ds:x1"]
    assert json.loads(kstp(*args, "--json").stdout)["generatedNow"] == 0
    missing = kstp("annotate", "evaluate", "--framework", "an", "--model", "smollm2", "--backend", "local")
    assert missing.exit_code == 1 and "no concept of framework 'an' has an example problem" in missing.stderr


def test_paper_prompt_annotates_in_two_stages_with_one_template(an):
    """--prompt paper: Prompt 2 for both stages, a single user message; the first stage lists the
    clusters, the second the concepts of the chosen cluster; the links are written as with kstp's set."""
    add = cluster_id(an, "add")
    asked = []

    class Paper(ScriptedModel):
        def generate(self, prompts, sampling, samples=None, progress=None):
            asked.extend(prompts)
            return [[Completion(i, 1, text='["an:A1"]' if "an:A1: add two numbers" in chat[-1]["content"]
                                else json.dumps([add]), finish_reason="stop") for i in wanted]
                    for chat, wanted in zip(prompts, samples, strict=True)]

    result = annotation.annotate(an, Paper({}), "ds", "an", prompt="paper")
    assert result.items["concepts"].tolist() == [["an:A1"]] * 3
    assert {len(chat) for chat in asked} == {1} and {chat[0]["role"] for chat in asked} == {"user"}
    assert all(chat[0]["content"].startswith("You are an expert in mathematics education.") for chat in asked)
    first = next(chat[0]["content"] for chat in asked if "17 + 25" in chat[0]["content"] and add in chat[0]["content"])
    assert first.endswith(f"Skill list:\n{add}: add\n{cluster_id(an, 'geo')}: geo\n\nQuestion:\nWhat is 17 + 25?")
