"""What the explorer's tests share: a graph with every kind of page in it, and the explorer served from it.

``populate`` builds, through the command line, the hand-made curriculum of tests/conftest.py
with its prerequisites derived, PSR evaluated, and a model run whose completion holds a
script tag (from a real OpenAI-compatible endpoint on 127.0.0.1, tests/endpoint.py), on the
test's engine. ``serving`` runs the explorer over a graph in a thread, read-only, on a free port.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from tests.conftest import write_toy_files
from tests.endpoint import FakeEndpoint

#: The model's name and completion: quotes and markup that must reach the page as text.
MODEL = "o'neil \"tiny\" <b>"
COMPLETION = "<script>alert(1)</script> First count: 1, 2, 3. So \\boxed{3}"


def kstp(graph: str, *args) -> object:
    """``kstp --graph GRAPH ARGS`` in this process; fails the test on a non-zero exit."""
    result = CliRunner().invoke(cli, ["--graph", graph, *map(str, args)])
    assert result.exit_code == 0, f"kstp {' '.join(map(str, args))}: {result.output}"
    return result


def kstp_json(graph: str, *args) -> object:
    return json.loads(kstp(graph, *args, "--json").stdout)


def populate(graph: str, folder) -> str:
    """The toy curriculum, items and learners, Eq. 1 (reflexive), PSR written back, and a model run of the
    toy questions; returns the run id."""
    files = write_toy_files(folder)
    kstp(graph, "ingest", "standards", files["concepts"], "--edges", files["edges"], "--framework", "toy")
    kstp(graph, "ingest", "items", files["items"], "--dataset", "toy", "--framework", "toy")
    kstp(graph, "ingest", "responses", files["answers"], "--dataset", "toy")
    kstp(graph, "derive", "question-prerequisites", "--dataset", "toy", "--rule", "reflexive")
    with FakeEndpoint(answer=COMPLETION) as server:
        summary = kstp_json(graph, "evaluate", "answers", "--dataset", "toy", "--model", MODEL, "--backend", "openai",
                            "--base-url", server.base_url, "--limit", "3")
    kstp(graph, "evaluate", "psr", "--dataset", "toy")
    return summary["runId"]


@pytest.fixture(scope="module")
def toy_template(tmp_path_factory) -> tuple[Path, str]:
    """The populated toy graph on the embedded engine, built once per module: (its folder, the run id)."""
    folder = tmp_path_factory.mktemp("explored")
    return folder, populate(f"ladybug:{folder / 'graph'}", folder)


def populated(graph_location: str, folder: Path, request) -> str:
    """:func:`populate` ``graph_location`` (the toy files written to ``folder``); returns the run id. On the
    embedded engine the graph is a copy of the module's :func:`toy_template` (the same commands' graph, as
    files: the six commands took 3-7 s before each test); on Neo4j it is populated anew."""
    if not graph_location.startswith("ladybug:"):
        return populate(graph_location, folder)
    template, run_id = request.getfixturevalue("toy_template")
    target = Path(graph_location.removeprefix("ladybug:"))
    for part in template.glob("graph*"):  # the graph file and, where the engine left one, its write-ahead log
        shutil.copy2(part, target.parent / part.name.replace("graph", target.name, 1))
    write_toy_files(folder)
    return run_id


@contextmanager
def serving(graph: str, query_timeout_s: float = 30.0) -> Iterator[str]:
    """The explorer over ``graph`` (opened read-only) in a thread; yields its base URL."""
    import uvicorn

    from kstp.explore.app import create_app
    from kstp.explore.pages import Explorer
    from kstp.explore.server import bind
    from kstp.graph.factory import open_store

    store = open_store(graph, read_only=True)
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(Explorer(store, graph, query_timeout_s)), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            threading.Event().wait(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)
        store.close()


def get(url: str) -> tuple[int, str]:
    """Status and body of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def figures(html: str, cell: str) -> list:
    """The full-precision values of the figures in the cells of class ``cell``, in page order."""
    return [json.loads(unescape(v)) for v in
            re.findall(rf'<td class="{cell}"><span class="fig" data-value="([^"]*)"', html)]


def keyed_row(html: str, table: str, key: str) -> str:
    """The HTML of the row keyed ``key`` in the table with id ``table``."""
    body = html.split(f'<table id="{table}">', 1)[1].split("</table>", 1)[0]
    return body.split(f'data-key="{key}"', 1)[1].split("</tr>", 1)[0]
