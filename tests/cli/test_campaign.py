"""``kstp campaign``: 2 models x 1 dataset x 2 evaluators against a local endpoint (tests/endpoint.py), interrupted
with Ctrl-C in its first cell and run again: no request is answered twice (counted at the server), every cell is
the run its own command makes, and the report holds the runs' own figures."""

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
from kstp.graph.factory import open_store
from kstp.graph.structures import derive_question_prerequisites
from tests.conftest import load_toy
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
    with open_store(graph_location) as store:  # every stored reply, as its request went to the server
        stored = Counter(_key({"model": run.split(":")[1], "messages": json.loads(row["prompt"]), "seed": row["seed"]})
                         for run in (c["runId"] for c in cells) for row in store.run("run_export", {"runId": run}))
    # each stored reply was asked once; only the two requests that never got an answer were asked again
    assert asked == stored + Counter(stalled) and len(stalled) == 2
    assert [(c["evaluator"], c["model"], c["dataset"], c["seed"], c["status"]) for c in cells] == [
        ("answers", "first", "toy", 42, "finished"), ("answers", "second", "toy", 42, "finished"),
        ("scaffolding", "first", "toy", 42, "finished"), ("scaffolding", "second", "toy", 42, "finished")]
    runner = CliRunner()
    by_hand = json.loads(hand.stdout)
    assert by_hand["runId"] == cells[0]["runId"] and by_hand["generatedNow"] == 0

    status = runner.invoke(cli, ["--graph", graph_location, "campaign", "status", str(plan), "--json"])
    assert status.exit_code == 0, status.output
    rows = json.loads(status.stdout)
    assert [r["runId"] for r in rows] == [c["runId"] for c in cells]
    assert [(r["status"], r["done"], r["total"], r["leftS"]) for r in rows[:2]] == [("finished", 8, 8, 0.0)] * 2
    assert rows[0]["tokens"] == 8 * 2  # the endpoint counts 2 output tokens a reply

    report = runner.invoke(cli, ["--graph", graph_location, "campaign", "report", str(plan), "--json"])
    assert report.exit_code == 0, report.output
    table = {r["model"]: r for r in json.loads(report.stdout)}
    scaffold = runner.invoke(cli, ["--graph", graph_location, "report", "scaffolding", "--dataset", "toy", "--json"])
    psr = runner.invoke(cli, ["--graph", graph_location, "evaluate", "psr", "--dataset", "toy", "--no-write",
                              "--bootstrap", "0", "--json"])
    per_run = {r["learner"]: r for r in json.loads(psr.stdout)}
    for label, model in (("first", "m1"), ("second", "m2")):
        show = json.loads(runner.invoke(cli, ["--graph", graph_location, "runs", "show",
                                              table[label]["runs"].split()[0], "--json"]).stdout)["run"]
        assert (table[label]["accuracy"], table[label]["accuracyStderr"]) == (show["accuracy"],
                                                                              show["accuracyStderr"])
        assert (table[label]["psrMicro"], table[label]["psrMacro"]) == (per_run[f"model:{model}"]["psrMicro"],
                                                                        per_run[f"model:{model}"]["psrMacro"])
        for row in json.loads(scaffold.stdout):
            if row["model"] == model and row["strategy"] != "none":
                assert table[label][f"SG {row['strategy']}"] == row["scaffoldingGainPoints"]
                assert table[label][f"SG {row['strategy']} stderr"] == row["scaffoldingGainPointsStderr"]
    csv = runner.invoke(cli, ["--graph", graph_location, "campaign", "report", str(plan), "--csv"])
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


def test_campaign_killed_takes_its_cell_with_it_and_goes_on(graph_location, tmp_path):
    """kill -9 of the campaign: the kernel sends its cell SIGTERM, which stores the three answers that came; the
    same command then asks only the five questions left (the two stalled ones among them)."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    with FakeEndpoint(["ok"] * 3 + ["stall"] * 2) as server:
        plan = tmp_path / "c.toml"
        plan.write_text(f'datasets = ["toy"]\n[[models]]\nmodel = "m"\nbase-url = "{server.base_url}"\n'
                        'concurrency = 2\n[[evaluators]]\nkind = "answers"\n')
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        process = subprocess.Popen([sys.executable, "-m", "kstp.cli.main", "--graph", graph_location, "campaign",
                                    "run", str(plan)], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, cwd=ROOT)
        deadline = time.monotonic() + 60
        while server.requests < 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        cells = _children(process.pid)
        assert cells, "the campaign started no cell"
        time.sleep(2.5)  # the three answers are stored (every 2 s): the status of a running cell, read meanwhile
        running = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "status", str(plan), "--json"])
        assert running.exit_code == 0, running.output
        [row] = json.loads(running.stdout)
        assert (row["status"], row["done"], row["total"]) == ("running", 3, 8) and row["leftS"] > 0
        process.kill()
        process.wait()
        deadline = time.monotonic() + 60
        while any(map(_alive, cells)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(_alive, cells))
        stalled = [_key(b) for b in server.bodies[3:5]]
        resumed = CliRunner().invoke(cli, ["--graph", graph_location, "campaign", "run", str(plan), "--json"])
        assert resumed.exit_code == 0, resumed.output
        assert server.requests == 8 + 2
        asked = Counter(_key(b) for b in server.bodies)
    [cell] = json.loads(resumed.stdout)["cells"]
    with open_store(graph_location) as store:
        stored = Counter(_key({"model": "m", "messages": json.loads(row["prompt"]), "seed": row["seed"]})
                         for row in store.run("run_export", {"runId": cell["runId"]}))
    assert asked == stored + Counter(stalled)


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
