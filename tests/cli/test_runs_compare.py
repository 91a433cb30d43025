"""``kstp runs diff | show | list`` over two real answers runs of the toy, on both engines.

Run A answers only q1 right; run B q1, q2, q4, q5 and q6 (an endpoint scripted per question). With the
toy's strict Eq. 1 prerequisites (tests/conftest.py: q2, q3, q4 need q1; q5 needs q1-q4; q6 needs q1-q5),
worked out by hand:

    paired 8; both right q1; only B q2, q4, q5, q6; neither q3, q7, q8
    McNemar exact: 2 * P(X <= 0), X ~ B(4, 1/2) = 0.125
    PSR of B over its right answers: q2 1/1, q4 1/1, q5 3/4 (q3 wrong), q6 4/5
        micro (1 + 1 + 3 + 4) / (1 + 1 + 4 + 5) = 9/11, macro (1 + 1 + 0.75 + 0.8) / 4 = 0.8875
    PSR of A: its one right answer, q1, has no prerequisite: none
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.graph.factory import open_store
from kstp.graph.structures import derive_question_prerequisites
from tests.conftest import load_toy
from tests.endpoint import FakeEndpoint

GOLD = {"count": "3", "add": "5", "subtract": "1", "add and subtract": "2", "multiply": "12", "divide": "4",
        "count sides": "4", "unannotated": "0"}
RIGHT = {"A": {"count"}, "B": {"count", "add", "add and subtract", "multiply", "divide"}}


def kstp(location: str, *args, width: int | None = None):
    return CliRunner().invoke(cli, ["--graph", location, *map(str, args)],
                              env={"COLUMNS": str(width)} if width else None)


def _answering(right: set[str]):
    def reply(body: dict) -> str:
        question = body["messages"][-1]["content"].split("\n", 1)[-1]
        return f"\\boxed{{{GOLD[question] if question in right else '99'}}}"
    return reply


@pytest.fixture
def two_runs(graph_location, tmp_path):
    """The toy with its strict prerequisites and runs A and B of model m (on two endpoints; B tagged, since one
    model's run is one run whichever server answers it)."""
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
        derive_question_prerequisites(store, "toy", "strict")
    ids = {}
    for name in ("A", "B"):
        with FakeEndpoint(reply=_answering(RIGHT[name])) as server:
            result = kstp(graph_location, "evaluate", "answers", "--dataset", "toy", "--model", "m", "--base-url",
                          server.base_url, "--new-run", "--json", *(["--tag", "b"] if name == "B" else []))
        assert result.exit_code == 0, result.output
        ids[name] = json.loads(result.stdout)["runId"]
    return graph_location, ids


def test_runs_diff_flips_mcnemar_and_psr(two_runs):
    location, ids = two_runs
    result = kstp(location, "runs", "diff", ids["A"], ids["B"], "--json")
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    assert [(f["questionId"], f["change"]) for f in diff["flipped"]] == \
        [("toy:q2", "fixed"), ("toy:q4", "fixed"), ("toy:q5", "fixed"), ("toy:q6", "fixed")]
    assert {k: diff["mcnemar"][k] for k in ("paired", "both", "onlyFirst", "onlySecond", "neither", "method")} == \
        {"paired": 8, "both": 1, "onlyFirst": 0, "onlySecond": 4, "neither": 3, "method": "exact binomial"}
    assert diff["mcnemar"]["pValue"] == pytest.approx(0.125)
    a, b = diff["runs"]
    assert (a["runId"], a["accuracy"], a["psrMicro"], a["psrMacro"]) == (ids["A"], 0.125, None, None)
    assert (b["accuracy"], b["psrMicro"], b["psrMacro"]) == (0.625, pytest.approx(9 / 11), pytest.approx(0.8875))
    table = kstp(location, "runs", "diff", ids["A"], ids["B"], width=80)
    assert table.exit_code == 0 and "toy:q5" in table.stdout and "0.125" in table.stdout
    assert all(len(line) <= 80 for line in table.stdout.splitlines())
    apart = kstp(location, "runs", "diff", ids["A"], "answers:m:toy:000000000000")
    assert apart.exit_code == 1 and "no run 'answers:m:toy:000000000000'" in apart.stderr


def test_runs_show_prints_the_configuration_and_list_keeps_ids_whole_at_80_columns(two_runs):
    location, ids = two_runs
    shown = kstp(location, "runs", "show", ids["B"], width=80)
    assert shown.exit_code == 0, shown.output
    for line in ("sampling.temperature", "sampling.seed", "promptTemplateHash", "promptTemplate.system",
                 "endpoint.baseUrls", "gitCommit", "startedAt"):
        assert line in shown.stdout
    config = json.loads(kstp(location, "runs", "show", ids["B"], "--json").stdout)["config"]
    assert (config["seed"], config["promptTemplate"]["name"], config["run" + "Id"]) == (42, "kstp", ids["B"])
    listed = kstp(location, "runs", "list", width=80).stdout
    assert ids["A"] in listed.splitlines() and ids["B"] in listed.splitlines()  # each whole, on a line of its own
    assert all(len(line) <= 80 for line in listed.splitlines())
