"""Replicates: a tag is part of a run's identity and of its completions' cache keys, while a run without one
keeps the hash and keys it always had; ``--repeat`` draws fresh replicates and ``--dataset a,b`` runs each
dataset, all in one table (tests/endpoint.py answers as a server)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.evaluators import answers
from kstp.graph.factory import open_store
from kstp.inference.backend import Sampling, cache_key
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.runlog import run_samples
from kstp.inference.runs import RunSpec
from kstp.loaders import items
from tests.conftest import TOY_ITEMS, load_toy
from tests.endpoint import FakeEndpoint

ENDPOINT = {"backend": "openai", "baseUrl": "http://127.0.0.1:8000/v1"}


def test_a_run_without_a_tag_hashes_and_keys_as_before_tags():
    """The hashes of commit 1d47285 (before tags) for the same spec and request: existing runs resume."""
    spec = RunSpec("answers", "1.0", "m", "openai", "toy", Sampling(n=2), "t" * 64, {"questions": "all"}, ENDPOINT)
    assert spec.config_hash() == "cb31ff538a8a1af26f4cf529f475815da8b626fe577e5e147d778c7e3bb603db"
    assert spec.run_id() == "answers:m:toy:cb31ff538a8a"
    key = cache_key("m", "h" * 64, Sampling(n=2), 1, ENDPOINT, "t" * 64)
    assert key == "c9aaa9af16fa05d268794ecf8761aa96fdecdd0f6c6989e0d2f110ff5e393418"
    tagged = RunSpec(**{**vars(spec), "tag": "rep2"})
    assert tagged.config_hash() != spec.config_hash()
    assert cache_key("m", "h" * 64, Sampling(n=2), 1, ENDPOINT, "t" * 64, "rep2") != key


def test_a_tag_is_a_run_of_its_own_asked_again_without_new_run(toy):
    with FakeEndpoint() as server:
        backend = OpenAIBackend("m", base_url=server.base_url, retries=1, max_wait=0.05, concurrency=4)
        plain = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8), limit=3)
        tagged = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8), limit=3, tag="again")
        assert server.requests == 6  # the tagged run asked every question again
        assert (tagged.run_id != plain.run_id, tagged.resumed, tagged.generated) == (True, False, 3)
        assert answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8), limit=3).resumed
        assert answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8), limit=3, tag="again").resumed
        assert server.requests == 6
    [run] = toy.run("run_by_id", {"runId": tagged.run_id})
    assert (json.loads(run["config"])["tag"], tagged.summary()["tag"]) == ("again", "again")
    assert "tag" not in json.loads(toy.run("run_by_id", {"runId": plain.run_id})[0]["config"])
    assert set(tagged.responses["responseId"]).isdisjoint(plain.responses["responseId"])


#: Replies by question and seed: count (gold 3) right at seeds 42 and 45, add (gold 5) right at seed 43 only.
RIGHT_AT = {"count": {42, 45}, "add": {43}}
GOLD = {"count": "3", "add": "5"}


def by_seed(body: dict) -> str:
    question = body["messages"][-1]["content"].split("\n", 1)[-1]
    return f"\\boxed{{{GOLD[question] if body['seed'] in RIGHT_AT.get(question, ()) else '99'}}}"


def test_repeat_over_two_datasets_is_one_table_and_aggregates_the_replicates(graph_location, tmp_path):
    """--samples 2 --repeat 2: replicate 1 draws seeds 42, 43; replicate 2 (tag rep2) 44, 45. On q1 (count) the
    primary verdicts are right (42) and wrong (44); on q2 (add) wrong (42) and wrong (44): accuracy 1/4 over the
    replicates, pass@4 over the four pooled samples 1 on both questions (the stderr below)."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
        (tmp_path / "toy2.jsonl").write_text(TOY_ITEMS)
        items.write_items(store, items.read_items_jsonl(tmp_path / "toy2.jsonl", "toy2", "toy",
                                                        items.framework_concepts(store, "toy")))
    with FakeEndpoint(reply=by_seed) as server:
        result = CliRunner().invoke(cli, [
            "--graph", graph_location, "evaluate", "answers", "--dataset", "toy,toy2", "--model", "m", "--base-url",
            server.base_url, "--limit", "2", "--samples", "2", "--repeat", "2", "--output-path", tmp_path / "out",
            "--json"])
        assert result.exit_code == 0, result.output
        # replicates x questions x samples: toy2 asks toy's questions word for word, so its runs take the stored
        # completions (a completion's cache key is its prompt, not its question's id)
        assert server.requests == 2 * 2 * 2
        table = CliRunner().invoke(cli, [
            "--graph", graph_location, "evaluate", "answers", "--dataset", "toy,toy2", "--model", "m", "--base-url",
            server.base_url, "--limit", "2", "--samples", "2", "--repeat", "2"], env={"COLUMNS": "80"})
        assert server.requests == 8  # every replicate resumed
    out = json.loads(result.stdout)
    runs = out["runs"]
    assert [(r["dataset"], r["tag"]) for r in runs] == [("toy", None), ("toy", "rep2"), ("toy2", None),
                                                         ("toy2", "rep2")]
    assert [r["accuracy"] for r in runs] == [0.5, 0.0, 0.5, 0.0]
    assert [r["passAt2"] for r in runs] == [1.0, 0.5, 1.0, 0.5]  # replicate 2: count right at 45, add never
    toy = out["replicates"][0]
    assert (toy["dataset"], toy["replicates"], toy["runIds"]) == ("toy", 2, [runs[0]["runId"], runs[1]["runId"]])
    assert (toy["accuracy"], toy["accuracyReplicateSd"]) == (0.25, pytest.approx(math.sqrt(0.125)))
    # CR1 over 2 questions of the 4 primary verdicts (1, 0 | 0, 0), mean 1/4: residuals sum to 3/4 - 1/4 = 1/2 on
    # q1 and -1/4 - 1/4 = -1/2 on q2, so sqrt(2/1 * (1/4 + 1/4)) / 4
    assert toy["accuracyStderr"] == pytest.approx(math.sqrt(2 * 0.5) / 4)
    assert (toy["passAt4"], toy["passAt1"]) == (1.0, pytest.approx((2 / 4 + 1 / 4) / 2))
    with open_store(graph_location) as store:
        samples = run_samples(store, runs[1]["runId"])  # not toy2's questions, which share the completions
    assert (samples["questionId"].tolist(), samples["seed"].tolist()) == (["toy:q1"] * 2 + ["toy:q2"] * 2,
                                                                          [44, 45, 44, 45])
    [together] = (tmp_path / "out").glob("results_*.json")
    assert json.loads(together.read_text())["replicates"][1]["dataset"] == "toy2"
    assert len(list((tmp_path / "out").glob("answers_*.json"))) == 4
    assert table.exit_code == 0 and "toy2 (rep2)" in table.stdout and "toy (all 2)" in table.stdout
    assert all(len(line) <= 80 for line in table.stdout.splitlines())
    assert pd.Series([r["runId"] for r in runs]).is_unique
