"""A run's log files describe it whole: with the graph deleted, they reproduce its accuracy, standard
errors, pass@k and majority vote; its samples export to files pandas reads with the documented dtypes.

The model is a local OpenAI-compatible endpoint (tests/endpoint.py) answering each toy question by its
seed: four questions, three samples each, c = 3, 1, 1, 2 correct (the run of
tests/inference/test_statistics.py, whose figures are worked out by hand there).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.evaluators import answers
from kstp.graph.factory import open_store
from kstp.inference.runlog import SAMPLE_DTYPES, read_run_log, read_samples
from tests.conftest import load_toy
from tests.endpoint import FakeEndpoint

#: The replies by question text and sample (seed 42 + i); golds: count 3, add 5, subtract 1, add and subtract 2.
REPLIES = {"count": ["3", "3", "3"], "add": ["5", "7", "7"], "subtract": ["9", "1", "8"],
           "add and subtract": ["0", "2", "2"]}


def by_seed(body: dict) -> str:
    """The endpoint's answer to one request: REPLIES of its question, by its seed."""
    question = body["messages"][-1]["content"].split("\n", 1)[-1]
    return f"So the answer is \\boxed{{{REPLIES.get(question, ['?'] * 3)[body['seed'] - 42]}}}."


def kstp(location: str, *args):
    return CliRunner().invoke(cli, ["--graph", location, *map(str, args)])


def _forget(location: str) -> None:
    """Delete the graph: the embedded graph's files, or every node of the Neo4j database."""
    if location.startswith("ladybug:"):
        graph = Path(location.removeprefix("ladybug:"))
        for path in graph.parent.glob(f"{graph.name}*"):  # the graph and its write-ahead log
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        assert not graph.exists()
    else:
        with open_store(location) as store:
            store.reset()


def test_the_log_alone_reproduces_the_summary_with_the_graph_gone(graph_location, tmp_path):
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint(reply=by_seed) as server:
        result = kstp(graph_location, "evaluate", "answers", "--dataset", "toy", "--model", "m", "--base-url",
                      server.base_url, "--limit", "4", "--samples", "3", "--gen-kwargs", "max_tokens=32",
                      "--output-path", tmp_path / "out", "--log-samples", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["accuracy"], summary["passAt3"], summary["majorityAt3"]) == (0.5, 1.0, 0.5)
    assert summary["accuracyStderr"] == pytest.approx(math.sqrt(1 / 3) / 2)
    assert [summary["passAt1"], summary["passAt2"]] == pytest.approx([7 / 12, 5 / 6])
    assert summary["estimators"]["passAtK"].startswith("unbiased 1 - C(n-c, k) / C(n, k)")
    _forget(graph_location)

    [path] = (tmp_path / "out").glob("*.json")
    log = read_run_log(path)
    recomputed = log.statistics()
    figures = [k for k in summary if k.startswith(("accuracy", "meanSample", "passAt", "majorityAt"))]
    assert len(figures) == 12 and {k: recomputed[k] for k in figures} == {k: summary[k] for k in figures}
    assert (recomputed["questions"], recomputed["samples"]) == (4, 12)
    config = log.config
    assert (config["model"], config["backend"], config["endpoint"]["baseUrls"]) == ("m", "openai", [server.base_url])
    assert (config["sampling"]["temperature"], config["sampling"]["max_tokens"], config["seed"]) == (0.6, 32, 42)
    assert config["promptTemplateHash"] == answers.template_hash("kstp")
    assert config["promptTemplate"] == {"name": "kstp", "system": answers.SYSTEM_PROMPT, "user": "Problem:\n{text}"}
    assert config["startedAt"] <= config["finishedAt"] and config["status"] == "finished"
    environment = log.summary["environment"]
    assert config["kstpVersion"] == environment["kstpVersion"] and {"pandas", "openai"} <= set(environment["packages"])
    assert config["gitCommit"] == environment["gitCommit"]
    assert log.summary["session"]["startedAt"] <= log.summary["session"]["finishedAt"]
    first = log.samples.iloc[0]
    assert (first["questionId"], first["gold"], first["question"], first["seed"]) == ("toy:q1", "3", "count", 42)
    assert json.loads(first["prompt"]) == answers.build_prompt("count")
    assert dict(log.samples.dtypes.astype(str)) == {c: SAMPLE_DTYPES[c] for c in log.samples}

    shown = kstp(graph_location, "runs", "show", path, "--json")  # no graph to open: the log alone
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["recomputed"]["passAt2"] == pytest.approx(5 / 6)


def test_runs_export_loads_into_pandas_with_the_documented_dtypes(graph_location, tmp_path):
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint(reply=by_seed) as server:
        result = kstp(graph_location, "evaluate", "answers", "--dataset", "toy", "--model", "m", "--base-url",
                      server.base_url, "--limit", "4", "--samples", "3", "--json")
    run_id = json.loads(result.stdout)["runId"]
    frames = {}
    for fmt in ("csv", "parquet", "jsonl"):
        done = kstp(graph_location, "runs", "export", run_id, "--format", fmt, "--out", tmp_path / "x")
        assert done.exit_code == 0, done.output
        [path] = (tmp_path / "x").glob(f"*.{fmt}")
        frames[fmt] = read_samples(path)
        assert dict(frames[fmt].dtypes.astype(str)) == SAMPLE_DTYPES
    plain = pd.read_csv(tmp_path / "x" / path.name.replace(".jsonl", ".csv"))  # pandas alone reads it too
    assert len(plain) == 12 and plain["correct"].tolist().count(True) == 7
    for fmt in ("parquet", "jsonl"):
        pd.testing.assert_frame_equal(frames[fmt], frames["csv"], check_exact=False)
    samples = frames["parquet"]
    assert samples["questionId"].tolist() == [q for q in ("toy:q1", "toy:q2", "toy:q3", "toy:q4") for _ in range(3)]
    assert samples["extracted"].tolist()[3:6] == ["5", "7", "7"] and samples["sampleIndex"].tolist()[:3] == [0, 1, 2]
    assert samples["tokensOut"].tolist() == [2] * 12 and samples["latencyS"].gt(0).all()
    assert samples["reasoning"].isna().all() and samples["runId"].eq(run_id).all()
    stdout = kstp(graph_location, "runs", "export", run_id, "--format", "jsonl")
    assert [json.loads(line)["responseId"] for line in stdout.stdout.splitlines()] == samples["responseId"].tolist()
    refused = kstp(graph_location, "runs", "export", run_id, "--format", "parquet")
    assert refused.exit_code == 2 and "parquet is binary" in refused.output


def test_the_readme_runs_as_data_session(tmp_path, monkeypatch):
    """The README's second Python API session, on the toy run of this module's first test."""
    import doctest
    import re

    from tests.inference.test_runs import ROOT

    monkeypatch.chdir(tmp_path)
    with open_store("ladybug:.kstp/graph") as store:
        load_toy(store, tmp_path)
    with FakeEndpoint(reply=by_seed) as server:
        result = kstp("ladybug:.kstp/graph", "evaluate", "answers", "--dataset", "toy", "--model", "m",
                      "--base-url", server.base_url, "--limit", "4", "--samples", "3")
    assert result.exit_code == 0, result.output
    section = (ROOT / "README.md").read_text().split("## Python API", 1)[1].split("\n## ", 1)[0]
    session = re.findall(r"```python\n(.*?)```", section, re.S)[1]
    test = doctest.DocTestParser().get_doctest(session, {"kstp": __import__("kstp")}, "README runs", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=print)
    assert (runner.failures, runner.tries) == (0, len(test.examples)) and runner.tries >= 6


def test_a_model_name_past_a_file_names_255_bytes_still_gets_its_logs(tmp_path):
    """Issue 33 §3: a 256-character --model stored the run and then failed writing its log (no summary)."""
    location = f"ladybug:{tmp_path / 'graph'}"
    with open_store(location) as store:
        load_toy(store, tmp_path)
    model = "m" * 256
    with FakeEndpoint(reply=by_seed) as server:
        result = kstp(location, "evaluate", "answers", "--dataset", "toy", "--model", model, "--base-url",
                      server.base_url, "--limit", "1", "--gen-kwargs", "max_tokens=32", "--output-path",
                      tmp_path / "out", "--log-samples", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["accuracy"] == 1.0
    files = sorted((tmp_path / "out").iterdir())
    assert [re.sub("m+", "m", re.sub("[0-9a-f]{12}", "H", p.name)) for p in files] == [
        "answers_m_H.json", "answers_m_H.samples.jsonl"]  # cut, with 12 hex digits of the run id's hash
    assert max(len(p.name.encode()) for p in files) <= 255
    log = read_run_log(files[0])
    assert log.config["model"] == model and len(log.samples) == 1


def test_the_stored_run_says_what_its_log_says(graph_location, tmp_path):
    """Issue 43: a --samples 3 run's pass@k, maj@k, their standard errors, estimators and truncation were in
    the log file only; they are on the Run too, and runs show prints them. A log written without
    --log-samples shows its own figures, saying they were not recomputed; runs list has a tag column."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint(reply=by_seed) as server:
        result = kstp(graph_location, "evaluate", "answers", "--dataset", "toy", "--model", "m", "--base-url",
                      server.base_url, "--limit", "4", "--samples", "3", "--gen-kwargs", "max_tokens=32",
                      "--tag", "first", "--output-path", tmp_path / "out", "--json")
    summary = json.loads(result.stdout)
    shown = json.loads(kstp(graph_location, "runs", "show", summary["runId"], "--json").stdout)["run"]["figures"]
    keys = [k for k in summary if k.startswith(("accuracy", "passAt", "majorityAt", "meanSample"))]
    assert len(keys) == 12 and {k: shown[k] for k in keys} == pytest.approx({k: summary[k] for k in keys})
    assert (shown["estimators"], shown["truncation"]) == (summary["estimators"], summary["truncation"])
    table = kstp(graph_location, "runs", "show", summary["runId"]).stdout
    assert "passAt3" in table and "estimators.passAtK" in table and "truncation.replies" in table
    [log] = (tmp_path / "out").glob("*.json")
    alone = kstp(graph_location, "runs", "show", log)
    assert alone.exit_code == 0 and "Figures as the log holds them" in alone.stdout
    assert "the figures above are the log's, not recomputed" in " ".join(alone.stderr.split())
    assert json.loads(kstp(graph_location, "runs", "show", log, "--json").stdout)["figures"]["passAt3"] == 1.0
    [listed] = json.loads(kstp(graph_location, "runs", "list", "--json").stdout)
    assert listed["tag"] == "first"
