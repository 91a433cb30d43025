"""``--base-url`` given several times: one run over the servers, each one's figures in the summary; servers of
different models refused in one line (real HTTP servers on 127.0.0.1, tests/endpoint.py)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.graph.factory import open_store
from tests.conftest import load_toy
from tests.endpoint import FakeEndpoint


def _answers(graph: str, *args):
    return CliRunner().invoke(cli, ["--quiet", "--graph", graph, "evaluate", "answers", "--dataset", "toy",
                                    "--model", "m", "--model-args", "retries=2,max_wait=0.05", *args])


def _toy(graph: str, tmp_path) -> str:
    with open_store(graph) as store:
        store.ensure_schema()
        load_toy(store, tmp_path)
    return graph


def test_cli_base_url_repeated_spreads_one_run_and_shows_each_server(graph_location, tmp_path):
    graph = _toy(graph_location, tmp_path)
    with FakeEndpoint(delay_s=0.01) as a, FakeEndpoint(delay_s=0.01) as b:
        once = _answers(graph, "--base-url", a.base_url, "--limit", "2", "--json")
        both = _answers(graph, "--base-url", a.base_url, "--base-url", b.base_url, "--json")
        shown = _answers(graph, "--base-url", a.base_url, "--base-url", b.base_url, "--limit", "2")
        asked = a.requests + b.requests
    assert (once.exit_code, both.exit_code, shown.exit_code) == (0, 0, 0), once.output + both.output
    first, wider = json.loads(once.stdout), json.loads(both.stdout)
    assert (wider["runId"], wider["resumed"], wider["generatedNow"], asked) == (first["runId"], True, 6, 8)
    assert {e["baseUrl"] for e in wider["endpoints"]} == {a.base_url, b.base_url}
    assert sum(e["completions"] for e in wider["endpoints"]) == 6
    assert "endpoints" not in first  # one server: the run's own figures say it all


def test_cli_base_urls_of_different_models_are_refused_in_one_line(tmp_path):
    graph = _toy(f"ladybug:{tmp_path / 'graph'}", tmp_path)
    with FakeEndpoint(models=["qwen-7b"]) as a, FakeEndpoint(models=["llama-8b"]) as b:
        refused = _answers(graph, "--base-url", a.base_url, "--base-url", b.base_url)
    assert refused.exit_code == 1 and (a.requests, b.requests) == (0, 0)
    said = refused.stderr.strip()
    assert "\n" not in said and said.startswith("Error: endpoints serve different models: ")
    assert f"{a.base_url} serves qwen-7b, {b.base_url} serves llama-8b" in said
