"""``kstp campaign``: 2 models x 1 dataset x 2 evaluators against a local endpoint (tests/endpoint.py), interrupted
with Ctrl-C in its first cell, and 3 models x 2 datasets x 2 evaluators on the local SmolLM2, killed with kill -9
in its second cell; each run again: no request is answered twice (counted at the server), every cell is the run its
own command makes, and the report holds the runs' own figures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.evaluators.campaign import read_plan
from kstp.graph.factory import open_store
from kstp.graph.structures import derive_question_prerequisites
from kstp.inference.backends.local import LocalServer
from kstp.loaders import items
from tests.conftest import TOY_ITEMS, load_toy
from tests.endpoint import FakeEndpoint

ROOT = Path(__file__).resolve().parents[2]


def _plan(folder: Path, url: str) -> Path:
    path = folder / "campaign.toml"
    path.write_text(f"""\
datasets = ["toy"]

[[models]]
name = "first"
model = "m1"
base-url = "{url}"
concurrency = 2
gen-kwargs = {{max_tokens = 16}}

[[models]]
name = "second"
model = "m2"
base-url = "{url}"
concurrency = 2
gen-kwargs = {{max_tokens = 16}}

[[evaluators]]
kind = "answers"

[[evaluators]]
kind = "scaffolding"
strategies = ["random", "prerequisite"]
k = 1
""")
    return path


def _key(body: dict) -> str:
    return json.dumps([body["model"], body["messages"], body.get("seed")], sort_keys=True)


def _stored(graph_location: str, cells: list[dict]) -> Counter:
    """Each reply the cells' runs stored, keyed as its request went to the server (:func:`_key`)."""
    with open_store(graph_location) as store:
        return Counter(_key({"model": run.split(":")[1], "messages": json.loads(row["prompt"]), "seed": row["seed"]})
                       for run in (c["runId"] for c in cells) for row in store.run("run_export", {"runId": run}))


def _toy_twice(graph_location: str, folder: Path, reword: str) -> None:
    """The toy curriculum, its questions as dataset ``toy`` and again as ``toy2``, each text after ``reword``, with
    the question prerequisites of both."""
    with open_store(graph_location) as store:
        load_toy(store, folder)
        again = folder / "toy2.jsonl"
        again.write_text(TOY_ITEMS.replace('"text": "', '"text": "' + reword))
        items.write_items(store, items.read_items_jsonl(again, "toy2", "toy", items.framework_concepts(store, "toy")))
        for dataset in ("toy", "toy2"):
            derive_question_prerequisites(store, dataset, "strict")


def _assert_report_is_the_runs(graph_location: str, plan: Path, models: dict[str, str], datasets) -> None:
    """``kstp campaign report --json`` holds, for each model (label -> model) and dataset, the figures each run's
    own command gives: accuracy and its standard error (``kstp runs show``), PSR micro and macro of the model's
    answers (``kstp evaluate psr --no-write``), no-context accuracy and scaffolding gain with its standard error
    (``kstp report scaffolding``)."""
    runner = CliRunner()
    report = runner.invoke(cli, ["--graph", graph_location, "campaign", "report", str(plan), "--json"])
    assert report.exit_code == 0, report.output
    table = {(r["model"], r["dataset"]): r for r in json.loads(report.stdout)}
    assert set(table) == {(label, dataset) for label in models for dataset in datasets}
    for dataset in datasets:
        scaffold = runner.invoke(cli, ["--graph", graph_location, "report", "scaffolding", "--dataset", dataset,
                                       "--json"])
        psr = runner.invoke(cli, ["--graph", graph_location, "evaluate", "psr", "--dataset", dataset, "--no-write",
                                  "--bootstrap", "0", "--json"])
        assert scaffold.exit_code == psr.exit_code == 0, scaffold.output + psr.output
        per_run = {r["learner"]: r for r in json.loads(psr.stdout)}
        for label, model in models.items():
            row = table[label, dataset]
            show = json.loads(runner.invoke(cli, ["--graph", graph_location, "runs", "show", row["runs"].split()[0],
                                                  "--json"]).stdout)["run"]
            assert (row["accuracy"], row["accuracyStderr"]) == (show["accuracy"], show["accuracyStderr"])
            assert (row["psrMicro"], row["psrMacro"]) == (per_run[f"model:{model}"]["psrMicro"],
                                                          per_run[f"model:{model}"]["psrMacro"])
            strategies = [r for r in json.loads(scaffold.stdout) if r["model"] == model]
            assert strategies and len(row["runs"].split()) == 2
            for figures in strategies:
                if figures["strategy"] == "none":
                    assert row["accuracy (no context)"] == figures["accuracy"]
                else:
                    assert row[f"SG {figures['strategy']}"] == figures["scaffoldingGainPoints"]
                    assert row[f"SG {figures['strategy']} stderr"] == figures["scaffoldingGainPointsStderr"]


@pytest.mark.usefixtures("sigint_to_python")
def test_campaign_interrupted_resumes_asking_nothing_twice_and_reports_the_runs(graph_location, tmp_path):
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
        derive_question_prerequisites(store, "toy", "strict")
    # five answers, then requests that never end: Ctrl-C comes while two are in flight
    with FakeEndpoint(["ok"] * 5 + ["stall"] * 2) as server:
        plan = _plan(tmp_path, server.base_url)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        process = subprocess.Popen([sys.executable, "-m", "kstp.cli.main", "--graph", graph_location, "campaign",
                                    "run", str(plan)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, cwd=ROOT)
        deadline = time.monotonic() + 60
        while server.requests < 7 and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
        assert process.returncode == 130, err
        assert "Interrupted: the running cell stored every completion" in err
        stalled = [_key(b) for b in server.bodies[5:7]]
        resumed = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
        assert resumed.exit_code == 0, resumed.output
        asked = Counter(_key(b) for b in server.bodies)
        total = server.requests
        # each cell is the run of the command a user types by hand: that command resumes it, asking nothing
        hand = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy",
                                        "--model", "m1", "--base-url", server.base_url, "--gen-kwargs",
                                        "max_tokens=16", "--concurrency", "2", "--json"])
        assert hand.exit_code == 0, hand.output
        assert server.requests == total
    cells = json.loads(resumed.stdout)["cells"]
    # each stored reply was asked once; only the two requests that never got an answer were asked again
    assert asked == _stored(graph_location, cells) + Counter(stalled) and len(stalled) == 2
    assert [(c["evaluator"], c["model"], c["dataset"], c["seed"], c["status"]) for c in cells] == [
        ("answers", "first", "toy", 42, "finished"), ("answers", "second", "toy", 42, "finished"),
        ("scaffolding", "first", "toy", 42, "finished"), ("scaffolding", "second", "toy", 42, "finished")]
    by_hand = json.loads(hand.stdout)
    assert by_hand["runId"] == cells[0]["runId"] and by_hand["generatedNow"] == 0

    status = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "status", str(plan), "--json"])
    assert status.exit_code == 0, status.output
    rows = json.loads(status.stdout)
    assert [r["runId"] for r in rows] == [c["runId"] for c in cells]
    assert [(r["status"], r["done"], r["total"], r["leftS"]) for r in rows[:2]] == [("finished", 8, 8, 0.0)] * 2
    assert rows[0]["tokens"] == 8 * 2  # the endpoint counts 2 output tokens a reply
    _assert_report_is_the_runs(graph_location, plan, {"first": "m1", "second": "m2"}, ("toy",))
    csv = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "report", str(plan), "--csv"])
    assert csv.exit_code == 0 and csv.stdout.splitlines()[0].startswith("model,dataset,seed,accuracy")


def test_campaign_failing_cell_is_reported_and_the_others_go_on(graph_location, tmp_path):
    """The first model's server refuses every request (HTTP 404, an unknown model): its cells fail with the
    server's line; the second model's cells run."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint([404] * 4) as refusing, FakeEndpoint() as server:
        plan = tmp_path / "c.toml"
        plan.write_text(f'datasets = ["toy"]\n[campaign]\nlimit = 2\n[[models]]\nmodel = "gone"\nbase-url = '
                        f'"{refusing.base_url}"\n[[models]]\nmodel = "m"\nbase-url = "{server.base_url}"\n'
                        '[[evaluators]]\nkind = "answers"\n')
        result = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
        assert server.requests == 2
    assert result.exit_code == 1
    cells = json.loads(result.stdout)["cells"]
    assert [(c["model"], c["status"]) for c in cells] == [("gone", "failed"), ("m", "finished")]
    assert "HTTP 404" in cells[0]["error"]
    status = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "status", str(plan), "--json"])
    assert [r["status"] for r in json.loads(status.stdout)] == ["failed", "finished"]


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


TINY = """\
datasets = ["toy", "toy2"]

[campaign]
limit = 2

[[models]]
name = "greedy"
model = "tiny-greedy"
base-url = "{url}"
concurrency = 1
gen-kwargs = {{temperature = 0, max_tokens = 4}}

[[models]]
name = "sampled"
model = "tiny-sampled"
base-url = "{url}"
concurrency = 1
gen-kwargs = {{temperature = 1.0, top_p = 0.9, max_tokens = 4}}

[[models]]
name = "local"
model = "smollm2"
backend = "local"
gen-kwargs = {{max_tokens = 4}}

[[evaluators]]
kind = "answers"

[[evaluators]]
kind = "scaffolding"
strategies = ["random"]
k = 1
limit = 1
"""


def test_campaign_killed_on_the_local_model_goes_on_and_reports_the_runs(graph_location, tmp_path):
    """Issue 45, part 3: 3 models x 2 datasets x 2 evaluators on the tiny local model (SmolLM2-135M, llama.cpp on
    the CPU), killed with kill -9 in its second cell and run again.

    The three models are the one shipped GGUF three ways: ``greedy`` (temperature 0) and ``sampled``
    (temperature 1, top-p 0.9), two model names the campaign sends through ``--base-url`` to one llama.cpp
    server (the local backend's :class:`LocalServer`) behind a counting proxy, and ``local``, the
    ``--backend local`` model, which starts its own server in each cell. The datasets are the toy curriculum's
    questions as ``toy`` and reworded as ``toy2``; the evaluators answers (two questions a cell) and scaffolding
    (one question, with no context and with one random exemplar); four tokens a reply.

    The campaign is killed once the graph shows the second cell's first answer stored while its second request
    hangs at the proxy: the kernel takes the cell down with it. The same command then completes: the proxy saw
    each stored reply asked once (only the hung request again), the local model's runs hold one reply per
    question and strategy, and the report holds each run's own figures.
    """
    _toy_twice(graph_location, tmp_path, "again: ")  # reworded: a prompt asked in both would be one reply
    # cell 1 asks two questions, cell 2 gets one answer, then its second request hangs until the kill
    with LocalServer() as model, FakeEndpoint(["ok"] * 3 + ["stall"], forward=model.base_url) as proxy:
        plan = tmp_path / "campaign.toml"
        plan.write_text(TINY.format(url=proxy.base_url))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        process = subprocess.Popen([sys.executable, "-m", "kstp.cli.main", "--graph", graph_location, "campaign",
                                    "run", str(plan)], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, cwd=ROOT)
        deadline = time.monotonic() + 120
        while proxy.requests < 4 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        rows = []
        while time.monotonic() < deadline and process.poll() is None:  # the graph says when: cell 2 stored one
            status = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "status", str(plan), "--json"])
            rows = json.loads(status.stdout) if status.exit_code == 0 else rows
            if rows and (rows[1]["status"], rows[1]["done"]) == ("running", 1):
                break
            time.sleep(0.5)
        assert [(r["status"], r["done"], r["total"]) for r in rows[:3]] == [
            ("finished", 2, 2), ("running", 1, 2), ("not started", 0, None)], rows
        assert rows[1]["leftS"] > 0  # at the running cell's pace so far
        cells = _children(process.pid)
        process.kill()
        process.wait()
        deadline = time.monotonic() + 60
        while any(map(_alive, cells)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert cells and not any(map(_alive, cells))
        stalled = [_key(proxy.bodies[3])]
        resumed = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
        assert resumed.exit_code == 0, resumed.output
        asked = Counter(_key(b) for b in proxy.bodies)
    cells = json.loads(resumed.stdout)["cells"]
    assert [(c["evaluator"], c["model"], c["dataset"], c["status"]) for c in cells] == [
        (kind, label, dataset, "finished") for kind in ("answers", "scaffolding")
        for label in ("greedy", "sampled", "local") for dataset in ("toy", "toy2")]
    assert asked == _stored(graph_location, [c for c in cells if c["model"] != "local"]) + Counter(stalled)
    local = [_stored(graph_location, [c]) for c in cells if c["model"] == "local"]
    # the local model's runs: each question (and strategy) asked once a run
    assert [set(run.values()) for run in local] == [{1}] * 4 and sum(map(len, local)) == 2 * 2 + 2 * 2
    _assert_report_is_the_runs(graph_location, plan, {"greedy": "tiny-greedy", "sampled": "tiny-sampled",
                                                      "local": "smollm2"}, ("toy", "toy2"))


def test_campaign_status_counts_a_reply_two_datasets_share_once(graph_location, tmp_path):
    """Two datasets that hold the same question text share its reply (one Response: the cache key is the prompt),
    so the second cell asks nothing and the reply goes to the questions of both: each cell's status counts its own
    dataset's two replies, not a row per question each reply went to (four), and their tokens once."""
    _toy_twice(graph_location, tmp_path, "")
    with FakeEndpoint() as server:
        plan = tmp_path / "c.toml"
        plan.write_text(f'datasets = ["toy", "toy2"]\n[campaign]\nlimit = 2\n[[models]]\nmodel = "m"\nbase-url = '
                        f'"{server.base_url}"\n[[evaluators]]\nkind = "answers"\n')
        for cell in read_plan(plan).cells:  # each cell's command, in this process
            result = CliRunner().invoke(cli, ["--graph", graph_location, *cell.argv, "--json"])
            assert result.exit_code == 0, result.output
        assert server.requests == 2
    status = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "status", str(plan), "--json"])
    assert [(r["dataset"], r["status"], r["done"], r["total"], r["tokens"], r["leftS"])
            for r in json.loads(status.stdout)] == [(d, "finished", 2, 2, 2 * 2, 0.0) for d in ("toy", "toy2")]


def test_campaign_nextstep_cell_reports_its_headline(graph_location, tmp_path):
    """A nextstep cell (paper 2's deterministic recommender, no server): one run over its catalogue, whose exact-set
    accuracy the report shows as kstp runs list does."""
    plan = tmp_path / "c.toml"
    plan.write_text('[[models]]\nmodel = "fringe-oracle"\nbackend = "fringe-oracle"\n[[evaluators]]\n'
                    'kind = "nextstep"\ncatalogues = ["cm_8f"]\nconditions = ["P0"]\norders = 1\n')
    result = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
    assert result.exit_code == 0, result.output
    [cell] = json.loads(result.stdout)["cells"]
    [row] = json.loads(CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "report", str(plan),
                                                "--json"]).stdout)
    [run] = json.loads(CliRunner().invoke(cli, ["--graph", graph_location, "runs", "list", "--json"]).stdout)
    assert (row["runs"], row["nextstep exactSetAccuracy"]) == (cell["runId"], run["value"]) == (run["runId"], 1.0)


def test_campaign_run_again_skips_a_cell_finished_with_the_same_command(graph_location, tmp_path, monkeypatch):
    """A campaign run again used to start every finished cell's command again: each asked nothing, but started its
    backend first (a model load per cell with vLLM or transformers). A cell whose run finished with the cell's
    command as it is now is skipped (no process) and said to be; a cell whose command changed runs."""
    from kstp.evaluators.campaign import runner

    started = []

    def counted(cell, *args, **kwargs):
        started.append(cell.model)
        return run_cell(cell, *args, **kwargs)

    run_cell = runner.run_cell
    monkeypatch.setattr(runner, "run_cell", counted)
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint() as server:
        plan = tmp_path / "c.toml"
        text = (f'datasets = ["toy"]\n[campaign]\nlimit = 2\n[[models]]\nmodel = "m1"\nbase-url = "{server.base_url}"'
                f'\n[[models]]\nmodel = "m2"\nbase-url = "{server.base_url}"\n[[evaluators]]\nkind = "answers"\n')
        plan.write_text(text)
        first = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
        assert first.exit_code == 0, first.output
        again = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
        assert again.exit_code == 0, again.output
        assert started == ["m1", "m2"] and server.requests == 4
        cells = json.loads(again.stdout)["cells"]
        assert [(c["status"], c["skipped"], c["runId"]) for c in cells] == [
            ("finished", True, c["runId"]) for c in json.loads(first.stdout)["cells"]]
        assert "skipped, finished with this command" in again.stderr
        status = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "status", str(plan), "--json"])
        assert [(r["status"], r["skip"]) for r in json.loads(status.stdout)] == [("finished", True)] * 2
        plan.write_text(text.replace('model = "m2"\n', 'model = "m2"\nconcurrency = 2\n'))  # m2's command changes
        changed = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
        assert changed.exit_code == 0, changed.output
        assert started == ["m1", "m2", "m2"] and server.requests == 4  # it runs, and resumes its run
        assert [c["skipped"] for c in json.loads(changed.stdout)["cells"]] == [True, False]
