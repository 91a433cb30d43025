"""Shared fixtures: an empty graph on each engine, the shared data folder, and the hand-made
curriculum every hand-computed test uses.

Every test that takes ``store`` (or ``graph_location``, for the CLI) runs twice: on a fresh
LadybugDB folder and on the local Neo4j 5 server of ``tools/neo4j_server.py`` (started when
it is not running; ``$KSTP_TEST_NEO4J_URI`` with ``NEO4J_USER``/``NEO4J_PASSWORD`` names
another server instead), emptied before the test with its schema kept. When no Neo4j
server can be had the Neo4j half fails; it is never skipped.

The hand-made curriculum (counted by hand in the tests that use it):

    concepts  A -> B, A -> C, B -> D, C -> D, D -> E, and F alone
    questions q1 {A}, q2 {B}, q3 {C}, q4 {B, C}, q5 {D}, q6 {E}, q7 {A, F}, q8 {}
    learners  L1: q1 1, q2 1, q3 0, q5 1
              L2: q1 0, q2 1, q4 1, q6 1, q7 1
              L3: q1 1, q8 0
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kstp.errors import ConfigError
from kstp.graph.ladybug import LadybugStore
from kstp.graph.store import GraphStore
from kstp.loaders import items, responses
from kstp.loaders.standards import load_standards
from kstp.settings import GraphTarget

#: The engines every graph test runs on.
ENGINES = ["ladybug", "neo4j"]

# Absolute, so that tests which change directory still find it (CI sets a relative KSTP_DATA).
ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("KSTP_DATA", ROOT.parent / "shared" / "data")).resolve()

TOY_CONCEPTS = ("id,code,description\nA,A,counting\nB,B,adding\nC,C,subtracting\nD,D,multiplying\n"
                "E,E,dividing\nF,F,shapes\n")
TOY_EDGES = "from_id,to_id\nA,B\nA,C\nB,D\nC,D\nD,E\n"
TOY_ITEMS = "\n".join([
    '{"id": "q1", "text": "count", "answer": "3", "concepts": ["A"]}',
    '{"id": "q2", "text": "add", "answer": "5", "concepts": ["B"]}',
    '{"id": "q3", "text": "subtract", "answer": "1", "concepts": ["C"]}',
    '{"id": "q4", "text": "add and subtract", "answer": "2", "concepts": ["B", "C"]}',
    '{"id": "q5", "text": "multiply", "answer": "12", "concepts": ["D"]}',
    '{"id": "q6", "text": "divide", "answer": "4", "concepts": ["E"]}',
    '{"id": "q7", "text": "count sides", "answer": "4", "concepts": ["A", "F"]}',
    '{"id": "q8", "text": "unannotated", "answer": "0"}',
]) + "\n"
TOY_ANSWERS = ("learner,item,correct\nL1,q1,1\nL1,q2,1\nL1,q3,0\nL1,q5,1\n"
               "L2,q1,0\nL2,q2,1\nL2,q4,1\nL2,q6,1\nL2,q7,1\nL3,q1,1\nL3,q8,0\n")


# pytest-xdist's workers inherit COLUMNS=80 and LINES=24 from execnet: the tables kstp prints to a
# file or a CliRunner would be laid out for 80 columns there and for 240 (no terminal) in one process.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

#: What ``--fast`` (``make check``) leaves out besides the Neo4j half and ``slow``: the modules that
#: kill, fill or restart servers and drive the browser, and the tests that run the local model or a
#: whole real data set end to end (each takes seconds to minutes; the tier keeps their units).
HEAVY_MODULES = {"test_demo_kills.py", "test_neo4j_faults.py", "test_ingest_kills.py", "test_ladybug_recovery.py",
                 "test_bulk.py", "test_reads_during_ingest.py", "test_full_disk.py", "test_browser.py",
                 "test_make.py", "test_vllm.py"}
HEAVY_NAMES = ("local_model", "with_the_local_model", "on_real_data", "killed", "kill", "demo", "real_coherence_map",
               "every_state_of_real_data", "bootstrap", "using_kstp_block", "end_to_end", "interrupted", "ctrl_c")
NEO4J_FIXTURES = {"neo4j_server", "neo4j_store", "own_server"}
#: Seconds (setup, call and teardown) of every test that took at least DURATIONS_KEPT in the last run that stored
#: them (``make durations``); ``--fast`` leaves out those over FAST_LIMIT, but for the first case of each parity test
#: (one parity case per query). A test not listed ran faster, or is new: the inner loop runs it.
#: ``$KSTP_TEST_DURATIONS`` names another file (tests/test_fast_tier.py).
DURATIONS = Path(os.environ.get("KSTP_TEST_DURATIONS", Path(__file__).parent / "durations.json"))
DURATIONS_KEPT, FAST_LIMIT = 0.5, 1.0


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help="the inner loop (make check): the embedded engine only, without the slow, kill, server, "
                          f"browser and local-model tests, and without the tests tests/durations.json times over "
                          f"{FAST_LIMIT:g} s but for one case of each parity test")
    parser.addoption("--store-durations", action="store_true",
                     help=f"write the tests that ran for {DURATIONS_KEPT:g} s or more to tests/durations.json "
                          "(merged: the tests that did not run keep their entries)")


def _slow(durations: dict[str, float], item, parity_seen: set) -> bool:
    if item.path.parent.name == "parity" and item.originalname not in parity_seen:
        parity_seen.add(item.originalname)  # the first (embedded) case of each parity test stays
        return False
    return durations.get(item.nodeid, 0.0) > FAST_LIMIT


def uses_the_neo4j_server(item) -> bool:
    """Whether ``item`` empties and fills the run's Neo4j server (:func:`neo4j_server`); a throw-away server of
    its own (``own_server``) does not count."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return params.get("engine") == "neo4j" or "neo4j_server" in item.fixturenames


def _with_the_neo4j_server(items) -> set[str]:
    """The node ids of the tests that run where the Neo4j server's do: those (:func:`uses_the_neo4j_server`), and
    the tests of their files that share a module- or class-scoped fixture with one of them, which is then built
    once (the demo kill tests' uninterrupted demo serves both engines' chains)."""
    def scoped(item) -> set[str]:
        return {name for name, chain in item._fixtureinfo.name2fixturedefs.items()
                if chain and chain[-1].scope in ("module", "class")}

    shared: dict[Path, set[str]] = {}
    for item in items:
        if uses_the_neo4j_server(item):
            shared.setdefault(item.path, set()).update(scoped(item))
    return {item.nodeid for item in items
            if item.path in shared and (uses_the_neo4j_server(item) or scoped(item) & shared[item.path])}


def _longest_files_first(items, durations: dict[str, float], first: set[str]) -> None:
    """Order the test files by their summed time in ``durations``, longest first, each file's tests in their order;
    the tests named in ``first`` (:func:`_with_the_neo4j_server`) before all others, in that order too.

    ``make test`` hands its two workers the Neo4j server's tests as one unit and the other tests file by file
    in this order (``--dist loadgroup --no-loadscope-reorder``, :class:`_Neo4jGroup`), each worker taking the
    next file when it runs out: with the long units first, the run ends on short ones, and one worker does not
    run the every-example test alone while the other waits (longest processing time first, Graham 1969). A
    file the durations do not list (new) goes last.
    """
    seconds: dict[str, float] = {}
    for item in items:
        name = item.nodeid.split("::")[0]
        seconds[name] = seconds.get(name, 0.0) + durations.get(item.nodeid, 0.0)
    rank = {name: at for at, name in enumerate(sorted(seconds, key=lambda name: -seconds[name]))}
    # stable: a file's own order kept
    items.sort(key=lambda item: (item.nodeid not in first, rank[item.nodeid.split("::")[0]]))


class _Neo4jGroup:
    """``--dist loadgroup`` (``make test``): every test of the Neo4j server in one worker, the others file by file.

    Each test empties the server's database, so two workers cannot share one server; with a server each, the
    second one's start and its JIT warm-up (C2 compiles a third of a server's CPU time, and a worker's first
    Neo4j-heavy test ran 3.5x slower than warm) were paid twice. The workers, which collect the tests, name
    the server's (:func:`_with_the_neo4j_server`) in a file beside the run (their parent's pid in its name);
    the controller's scheduler makes one unit of those and one of each file's other tests, as ``--dist
    loadfile`` does, so that a module's fixtures are built once. (xdist's own ``xdist_group`` marks cannot
    say it: xdist 3.8 appends the group to ``item._nodeid``, which pytest 9 no longer reads.)
    """

    @staticmethod
    def listing(controller: int) -> Path:
        return Path(tempfile.gettempdir()) / f"kstp-neo4j-tests-{controller}.json"

    @classmethod
    def name(cls, tests: set[str]) -> None:
        """A worker's word to the scheduler: ``tests`` are the Neo4j server's unit."""
        listing = cls.listing(os.getppid())
        partial = listing.with_name(f"{listing.name}.{os.getpid()}")
        partial.write_text(json.dumps(sorted(tests)))
        os.replace(partial, listing)  # both workers write the same list; a reader sees one whole

    def pytest_xdist_make_scheduler(self, config, log):
        from xdist.scheduler import LoadScopeScheduling

        listing = self.listing(os.getpid())

        class Scheduler(LoadScopeScheduling):
            group: set[str] | None = None

            def _split_scope(self, nodeid: str) -> str:
                if Scheduler.group is None:  # first called once every worker has collected
                    Scheduler.group = set(json.loads(listing.read_text()))
                    listing.unlink()
                return "neo4j" if nodeid in Scheduler.group else nodeid.split("::", 1)[0]

        return Scheduler(config, log)


def pytest_collection_modifyitems(config, items):
    durations = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    first = _with_the_neo4j_server(items)
    _longest_files_first(items, durations, first)
    if hasattr(config, "workerinput") and _grouped(config):  # the workers collect; the controller schedules
        _Neo4jGroup.name(first)
    if not config.getoption("--fast"):
        return
    kept, dropped, parity_seen = [], [], set()
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        heavy = (params.get("engine") == "neo4j" or NEO4J_FIXTURES & set(item.fixturenames)
                 or item.get_closest_marker("slow") or item.path.name in HEAVY_MODULES
                 or any(name in item.name for name in HEAVY_NAMES) or _slow(durations, item, parity_seen))
        (dropped if heavy else kept).append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept


class _Durations:
    """``--store-durations``: each test's setup, call and teardown seconds, summed as reports arrive (on the
    controller under pytest-xdist), written when the session ends."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report):
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        if os.environ.get("PYTEST_XDIST_WORKER"):
            return
        stored = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
        for nodeid, seconds in self.seconds.items():
            stored.pop(nodeid, None)
            if seconds >= DURATIONS_KEPT:
                stored[nodeid] = round(seconds, 2)
        DURATIONS.write_text(json.dumps(dict(sorted(stored.items())), indent=0) + "\n")


def pytest_configure(config):
    if config.getoption("--store-durations", default=False):
        config.pluginmanager.register(_Durations(), "kstp-durations")
    if _grouped(config):
        config.pluginmanager.register(_Neo4jGroup(), "kstp-neo4j-group")


def _grouped(config) -> bool:
    """Whether the run is ``--dist loadgroup`` (:class:`_Neo4jGroup`): xdist tells its workers so by
    ``option.loadgroup`` (their ``dist`` is "no")."""
    return config.getoption("dist", default=None) == "loadgroup" or bool(getattr(config.option, "loadgroup", False))


@pytest.fixture
def sigint_to_python():
    """SIGINT raises KeyboardInterrupt here and in the processes started meanwhile, as in a terminal.

    A command started in the background by a non-interactive shell (``make test &``, some CI
    runners) ignores SIGINT, and an ignored signal stays ignored across ``exec``: a kstp child
    would never see the tests' Ctrl-C. A handled signal is reset to the default in a child,
    where Python installs its own handler again.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    yield
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The shared data folder (``$KSTP_DATA``, default ``../shared/data``)."""
    assert DATA.is_dir(), f"shared data not found at {DATA}; set KSTP_DATA"
    return DATA


@pytest.fixture(scope="session")
def neo4j_server(request):
    """The Neo4j server of the test run, with the kstp schema; its ``repr`` holds no password.

    The local server (``make neo4j``) is started here when it is not running; a server
    that cannot be started or reached fails the test with the reason. ``make test`` runs two
    pytest-xdist workers with every test of this server in one of them (:class:`_Neo4jGroup`);
    under another distribution each worker but the first has a server of its own in
    ``.kstp/neo4j-<worker>``, since every test empties the database it uses, and a server this
    fixture started for a worker is stopped when the worker ends.
    """
    uri = os.environ.get("KSTP_TEST_NEO4J_URI")
    alone = _grouped(request.config)  # this worker runs every test of the server
    worker = "gw0" if alone else os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    if uri:
        if worker != "gw0":
            pytest.fail("$KSTP_TEST_NEO4J_URI names one server, which parallel workers would empty under each "
                        "other: run pytest without -n, or with --dist loadgroup", pytrace=False)
        target = GraphTarget("neo4j", uri, os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD"))
        home = None
    else:
        home = [] if worker == "gw0" else ["--home", str(ROOT / ".kstp" / f"neo4j-{worker}")]
        # In a process of its own, so that the server is not this worker's child: a stopped child
        # would stay a zombie that answers ``kill(pid, 0)`` until the worker exits.
        done = subprocess.run([sys.executable, str(ROOT / "tools" / "neo4j_server.py"), *home, "start"],
                              capture_output=True, text=True)
        if done.returncode:
            pytest.fail(f"the local Neo4j server (tools/neo4j_server.py) cannot start: {done.stdout}{done.stderr}",
                        pytrace=False)
        from tools import neo4j_server as server

        if home:
            server.use_home(Path(home[1]))
        env = server.read_env()
        target = GraphTarget("neo4j", env["KSTP_GRAPH"], env["NEO4J_USER"], env["NEO4J_PASSWORD"])
    with connect_neo4j(target) as graph:
        graph.ensure_schema()
    yield target
    if home and "already running" not in done.stdout:
        subprocess.run([sys.executable, str(ROOT / "tools" / "neo4j_server.py"), *home, "stop"], capture_output=True)


def connect_neo4j(target: GraphTarget) -> GraphStore:
    """A connection to the test server ``target``; a refusal fails the test without a traceback."""
    from kstp.graph.neo4j import Neo4jStore

    try:
        return Neo4jStore(target.location, target.user, target.password)
    except ConfigError as exc:  # no traceback: its frames would list the password argument
        pytest.fail(f"cannot use the Neo4j test server: {exc}", pytrace=False)


@pytest.fixture
def neo4j_store(neo4j_server):
    """The emptied Neo4j test database, for Neo4j-only tests (each says why in its docstring)."""
    graph = connect_neo4j(neo4j_server)
    graph.reset()
    yield graph
    graph.close()


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    """Each engine in turn: ``"ladybug"``, ``"neo4j"``."""
    return request.param


@pytest.fixture
def store(engine, tmp_path, request):
    """An empty graph with the kstp schema: a fresh Ladybug folder, or the emptied Neo4j database."""
    if engine == "neo4j":
        graph = connect_neo4j(request.getfixturevalue("neo4j_server"))
        graph.reset()
    else:
        graph = LadybugStore(tmp_path / "graph")
        graph.ensure_schema()
    yield graph
    graph.close()


@pytest.fixture
def graph_location(engine, tmp_path, request, monkeypatch) -> str:
    """A ``--graph`` value for CLI tests: a fresh Ladybug folder, or the emptied Neo4j database.

    For Neo4j the credentials go into ``NEO4J_USER``/``NEO4J_PASSWORD`` for the test.
    """
    if engine == "ladybug":
        return f"ladybug:{tmp_path / 'graph'}"
    target = request.getfixturevalue("neo4j_server")
    with connect_neo4j(target) as graph:
        graph.reset()
    monkeypatch.setenv("NEO4J_USER", target.user)
    monkeypatch.setenv("NEO4J_PASSWORD", target.password)
    return target.location


def write_toy_files(folder: Path) -> dict[str, Path]:
    """The hand-made curriculum as files, in the formats the loaders read."""
    files = {"concepts": "toy.csv", "edges": "toy_edges.csv", "items": "toy_items.jsonl", "answers": "toy_answers.csv"}
    texts = {"concepts": TOY_CONCEPTS, "edges": TOY_EDGES, "items": TOY_ITEMS, "answers": TOY_ANSWERS}
    paths = {}
    for key, name in files.items():
        paths[key] = folder / name
        paths[key].write_text(texts[key])
    return paths


def load_toy(store, folder: Path) -> None:
    """Load the hand-made curriculum into ``store`` (framework ``toy``, dataset ``toy``)."""
    paths = write_toy_files(folder)
    load_standards(store, paths["concepts"], paths["edges"], "toy")
    items.write_items(store, items.read_items_jsonl(paths["items"], "toy", "toy",
                                                    items.framework_concepts(store, "toy")))
    known = set(store.frame("dataset_questions", {"dataset": "toy"})["localId"])
    responses.write_answers(store, "toy", responses.read_long(paths["answers"], known), "toy_answers.csv")


@pytest.fixture
def toy(store, tmp_path):
    """The graph holding the hand-made curriculum, items and learners (no derived edges yet)."""
    load_toy(store, tmp_path)
    return store


def q(*names: str) -> list[str]:
    """Graph ids of toy questions: q("q1", "q2") -> ["toy:q1", "toy:q2"]."""
    return [f"toy:{n}" for n in names]
