"""kstp explore's pages over HTTP, on each engine: the figures the commands print, escaping, read-only, export.

The graph is the hand-made curriculum of tests/conftest.py with a model run (tests/explore/conftest.py);
each page is fetched from the explorer served in a thread and compared with the JSON of the command
that prints the same figures, run on the same graph.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from urllib.parse import quote, urljoin

import pytest

from kstp.explore.pages import slug, unslug
from tests.explore.conftest import COMPLETION, MODEL, figures, get, keyed_row, kstp_json, populate, serving


@pytest.fixture
def explored(graph_location, tmp_path):
    """(graph, run id) of the populated toy graph."""
    return graph_location, populate(graph_location, tmp_path)


def test_slug_round_trips_quotes_colons_and_unicode():
    for identifier in ("frcsub:Item04", "answers:o'neil \"tiny\" <b>:toy:1a2b", "é/x y~z", ""):
        assert unslug(slug(identifier)) == identifier
        assert re.fullmatch(r"[A-Za-z0-9._~-]*", slug(identifier))


def test_explore_overview_equals_db_stats_and_runs_list(explored):
    graph, run_id = explored
    stats, runs = kstp_json(graph, "db", "stats"), kstp_json(graph, "runs", "list")
    psr = kstp_json(graph, "evaluate", "psr", "--dataset", "toy")
    with serving(graph) as url:
        status, html = get(url + "index.html")
    assert status == 200
    toy = stats["datasets"][0]
    row = keyed_row(html, "datasets", "toy")
    assert [float(v) for v in re.findall(r'data-value="([0-9.]+)"', row)][:5] == [
        toy["questions"], toy["questionsWithConcepts"], toy["learners"], toy["answers"], toy["questionPrerequisites"]]
    human = next(r for r in psr if r["learner"] == "human learners")
    assert figures(row, "accuracy") == [pytest.approx(human["accuracy"], abs=1e-12)]
    assert figures(row, "psrMicro") == [pytest.approx(human["psrMicro"], abs=1e-12)]
    run = keyed_row(html, "runs", runs[0]["runId"].replace('"', "&#34;").replace("'", "&#39;").replace("<", "&lt;")
                    .replace(">", "&gt;"))
    assert runs[0]["runId"] == run_id and "accuracy" in run
    assert re.findall(r'data-value="([0-9.]+)"', run.split('class="headline"')[1])[0] == repr(runs[0]["value"])
    assert unescape(keyed_row(html, "frameworks", "toy")).count("data-value") == 5


def test_explore_dataset_and_learner_equal_the_kst_commands(explored):
    graph, _ = explored
    space = kstp_json(graph, "kst", "space", "--dataset", "toy")
    fringe = kstp_json(graph, "kst", "fringe", "--dataset", "toy", "--learner", "toy:L3")
    steps = kstp_json(graph, "kst", "next-steps", "--dataset", "toy", "--learner", "L3")
    psr = kstp_json(graph, "evaluate", "psr", "--dataset", "toy")
    with serving(graph) as url:
        _, dataset = get(url + "dataset/toy.html")
        _, learner = get(url + f"learner/{slug('toy:L3')}.html")
        _, incoherent = get(url + f"learner/{slug('toy:L1')}.html")
        _, ordered = get(url + "dataset/toy.html?sort=psrMicro&desc=1")
    assert re.search(r'id="space-states"><span class="fig" data-value="(\d+)"', dataset).group(1) == \
        str(space["states"])
    assert figures(dataset, "psrMacro")[0] == pytest.approx(psr[0]["psrMacro"], abs=1e-12)
    assert unescape(re.search(r'class="inner-fringe">([^<]*)<', learner).group(1)) == \
        ", ".join(fringe["innerFringe"]) or "∅"
    assert unescape(re.search(r'class="outer-fringe">([^<]*)<', learner).group(1)) == ", ".join(fringe["outerFringe"])
    nearest = steps["learners"][0]["nearest"]
    assert [unescape(s) for s in re.findall(r'class="next-steps">([^<]*)<', learner)] == \
        [", ".join(n["nextSteps"]) or "none" for n in nearest]
    # L1 answered q5 (concept D) but not q3 and q4, which Eq. 1 (reflexive) makes its prerequisites
    assert "Not a knowledge state" in incoherent and 'class="inner-fringe"' not in incoherent
    assert re.findall(r"<tr><td>(toy:q\d)</td><td>(toy:q\d)</td><td>([a-z ]+)</td></tr>", incoherent) == [
        ("toy:q5", "toy:q3", "answered wrongly"), ("toy:q5", "toy:q4", "did not answer")]
    micro = [v for v in figures(ordered.split('id="learner-table"')[1], "psrMicro") if v is not None]
    # by hand: L1 (1 + 2) / (1 + 3) pairs, L2 (0 + 1 + 2 + 0) / (1 + 2 + 3 + 1); L3 and the model have no scored pair
    assert micro == [0.75, pytest.approx(3 / 7)]


def test_explore_run_and_sample_show_every_sample_escaped(explored):
    graph, run_id = explored
    shown = kstp_json(graph, "runs", "show", run_id)
    with serving(graph) as url:
        status, run = get(url + f"run/{slug(run_id)}.html")
        _, wrong = get(url + f"run/{slug(run_id)}.html?show=wrong")
        sample_id = re.search(r'href="\.\./sample/([^"]+)\.html"', run).group(1)
        _, sample = get(url + f"sample/{sample_id}.html")
    assert status == 200 and unescape(re.search(r'id="run-id">([^<]*)<', run).group(1)) == run_id
    assert shown["run"]["model"] == MODEL and unescape(run).count(MODEL) >= 1 and MODEL not in run  # escaped
    assert run.count('class="sample ') == 3 and wrong.count('class="sample ') == 2  # toy q1's gold is 3
    assert "<script>alert(1)" not in sample and "&lt;script&gt;alert(1)&lt;/script&gt;" in sample
    assert unescape(re.search(r'<pre id="completion">([^<]*)</pre>', sample).group(1)) == COMPLETION
    assert "rebuilt from the &#39;kstp&#39; prompt set; its hash equals the stored one" in sample
    assert "You are a careful mathematics student." in sample


def test_explore_compare_two_learners_and_the_run_strip(explored):
    graph, run_id = explored
    answers = {who: {r["questionId"]: bool(r["correct"]) for r in kstp_json(
        graph, "query", "learner_answers", "-p", f"learnerId={who}")} for who in ("toy:L1", "toy:L2")}
    samples = kstp_json(graph, "query", "run_samples", "-p", f"runId={run_id}")
    with serving(graph) as url:
        status, page = get(url + f"compare/{slug('toy:L1')}/{slug('toy:L2')}.html")
        _, learner = get(url + f"learner/{slug('toy:L1')}.html")
        moved, _ = get(url + "compare.html?a=toy%3AL1&b=toy%3AL2")
        missing, _ = get(url + f"compare/{slug('toy:L1')}/{slug('toy:nobody')}.html")
        empty, said = get(url + "compare.html?a=toy%3AL1&b=+")  # the form sent with no second id
        _, run = get(url + f"run/{slug(run_id)}.html")
    assert status == moved == 200 and missing == 404
    assert empty == 400 and "give two learner ids to compare" in said
    right = {who: {q for q, c in a.items() if c} for who, a in answers.items()}
    only_a, only_b = right["toy:L1"] - right["toy:L2"], right["toy:L2"] - right["toy:L1"]
    count = re.search(r'class="only-a-count"><span class="fig" data-value="(\d+)"', page).group(1)
    assert int(count) == len(only_a) and re.findall(r'<tr class="only-b"><td>([^<]+)</td>', page) == sorted(only_b)
    # PSR micro by hand (test_explore_dataset_and_learner_equal_the_kst_commands): L1 3/4, L2 3/7
    assert figures(page, "psrMicro") == [0.75, pytest.approx(3 / 7)]
    assert 'id="compare-dag-toy"' in page and "right for A only" in unescape(page)
    dag = unescape(page.split('id="compare-dag-toy"')[1].split("</svg>")[0])
    assert '<text class="graph-title"' in dag and "Where A and B are right on toy's prerequisite structure" in dag
    assert 'action="../compare.html"' in learner  # the form on the learner page
    cells = dict(re.findall(r'data-label="([^"]+)" data-value="([^"]*)"', run.split('id="run-strip"')[1]))
    assert {k: float(v) for k, v in cells.items()} == {s["localId"]: float(bool(s["correct"])) for s in samples}
    tokens = run.split('id="run-tokens"')[1].split("</svg>")[0]
    assert sum(float(v) for v in re.findall(r'data-value="([^"]+)"', tokens)) == len(
        [s for s in samples if s["tokensOut"] is not None]) == 3


def test_explore_picture_tables_are_whole_csvs(explored):
    """The per-question PSR and the run strip as CSV: every row of ``kstp evaluate psr --per-question`` and of
    the run's samples, linked from the pictures; an unknown id is a 404."""
    import csv
    import io

    graph, run_id = explored
    questions = kstp_json(graph, "evaluate", "psr", "--dataset", "toy", "--per-question", "--no-write")
    samples = kstp_json(graph, "query", "run_samples", "-p", f"runId={run_id}")
    with serving(graph) as url:
        _, psr_text = get(url + "psr-questions/toy.csv")
        _, strip_text = get(url + f"run-strip/{slug(run_id)}.csv")
        missing, _ = get(url + "run-strip/nope.csv")
        _, learners_text = get(url + "psr/toy.csv")
        _, dataset = get(url + "dataset/toy.html")
        _, run = get(url + f"run/{slug(run_id)}.html")
    per_question = list(csv.DictReader(io.StringIO(psr_text)))
    assert [r["question"] for r in per_question] == [q["questionId"] for q in questions]
    assert [float(r["PSR macro"]) for r in per_question] == pytest.approx([q["psrMacro"] for q in questions])
    strip = list(csv.DictReader(io.StringIO(strip_text)))
    assert {r["question"]: (int(r["samples"]), int(r["right"])) for r in strip} == {
        s["questionId"]: (1, int(bool(s["correct"]))) for s in samples}
    assert missing == 404
    learners = kstp_json(graph, "evaluate", "psr", "--dataset", "toy", "--no-write")  # a row per learner
    assert len(list(csv.DictReader(io.StringIO(learners_text)))) == sum(row["learners"] for row in learners)
    assert 'href="../psr-questions/toy.csv"' in dataset and f'href="../run-strip/{slug(run_id)}.csv"' in run


WRITES = [
    "CREATE (n:Concept {id: 'x'})", "MERGE (n:Concept {id: 'x'}) RETURN n", "MATCH (n:Concept) DELETE n",
    "MATCH (n:Concept) DETACH DELETE n", "MATCH (n:Concept) SET n.code = 'x'", "MATCH (n:Concept) REMOVE n.code",
    "CALL apoc.create.node(['Concept'], {id: 'x'})", "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", "LOAD FROM '/etc/passwd' RETURN *",
    "COPY Concept FROM '/tmp/x.csv'", "MATCH (n) RETURN n; CREATE (m:Concept {id: 'y'})", "DROP TABLE Concept",
    "CALL { MATCH (n) DETACH DELETE n }", "SHOW DATABASES",
]


def test_explore_adhoc_write_is_refused_with_one_line(explored):
    """CREATE, MERGE, DELETE, SET, REMOVE, APOC writes, LOAD CSV, Ladybug's LOAD FROM and COPY, several
    statements, DDL, subqueries, admin commands: each refused with one line, the graph unchanged."""
    graph, _ = explored
    before = kstp_json(graph, "db", "stats")
    with serving(graph) as url:
        for statement in WRITES:
            status, html = get(url + "query.html?cypher=" + quote(statement))
            assert status == 200
            error = unescape(re.search(r'<p class="error" id="cypher-error">([^<]*)</p>', html).group(1))
            assert error.startswith("refused: ") and "\n" not in error, statement
            assert "rows." not in html, statement
    assert kstp_json(graph, "db", "stats") == before


def test_explore_engine_refuses_a_write_the_check_would_miss(explored):
    """Defence in depth: the store the explorer opens refuses a write itself, on both engines."""
    from kstp.errors import QueryError
    from kstp.graph.factory import open_store

    graph, _ = explored
    with open_store(graph, read_only=True) as store, pytest.raises(QueryError):
        store.read_statement("CREATE (n:Concept {id: 'sneaky'}) RETURN n.id AS id")
    assert kstp_json(graph, "query", "concept_ancestors", "-p", "conceptId=sneaky") == []
    assert "sneaky" not in str(kstp_json(graph, "db", "stats"))


def test_explore_adhoc_read_and_registered_query_with_csv(explored):
    graph, _ = explored
    ancestors = kstp_json(graph, "query", "concept_ancestors", "-p", "conceptId=toy:E")
    with serving(graph) as url:
        _, rows = get(url + "query.html?cypher=" + quote("MATCH (c:Concept) WHERE c.code = 'SET' RETURN c.id AS id"))
        _, form = get(url + "query/concept_ancestors.html?run=1&conceptId=toy%3AE")
        status, csv_text = get(url + "query/concept_ancestors.csv?conceptId=toy%3AE")
        _, bad = get(url + "query/state_violations.html?run=1&dataset=toy&questionIds=%5Bnot-json")
    assert "0 rows." in rows and 'id="cypher-error"' not in rows
    assert f"{len(ancestors)} rows" in form
    assert status == 200 and csv_text.splitlines() == ["conceptId,code", *(f"{a['conceptId']},{a['code']}"
                                                                             for a in ancestors)]
    assert 'id="query-error"' in bad


def test_explore_unknown_ids_are_404_pages_naming_them(explored):
    graph, _ = explored
    with serving(graph) as url:
        missing = slug('no"pe')
        for kind in ("dataset", "learner", "run", "sample", "concept", "framework"):
            status, html = get(url + f"{kind}/{missing}.html")
            assert status == 404 and "no&#34;pe" in html, kind


def test_explore_export_is_a_site_with_relative_links(explored, tmp_path):
    graph, run_id = explored
    site = tmp_path / "site"
    result = kstp_json(graph, "explore", "--export", site)
    assert result["pages"] == len(list(site.rglob("*.html"))) and result["skipped"] == []
    assert (site / "index.html").is_file() and (site / f"run/{slug(run_id)}.html").is_file()
    assert (site / "static/explore.js").is_file() and (site / "static/explore.css").is_file()
    ids: dict[Path, set[str]] = {}  # a page's element ids, the targets of its #fragment links

    def has_id(path: Path, fragment: str) -> bool:
        if path not in ids:
            ids[path] = set(map(unescape, re.findall(r'\sid="([^"]+)"', path.read_text())))
        return fragment in ids[path]

    fragments = 0
    for page in site.rglob("*.html"):
        html = page.read_text()
        for link in re.findall(r'(?:href|src)="([^"]*)"', html):
            target, _, fragment = unescape(link).partition("#")
            target = target.partition("?")[0]
            assert not target.startswith(("/", "http:", "https:")), (page, link)
            path = (page.parent / target).resolve() if target else page.resolve()
            assert path.is_file(), (page, link)
            if fragment:  # a structure drawing's box on a learner page linked #q-... of its own page (dead)
                assert has_id(path, fragment), (page, link)
                fragments += 1
    assert fragments > 0
    assert "<script>alert(1)" not in "".join(p.read_text() for p in (site / "sample").glob("*.html"))
    assert urljoin("file:///x/run/a.html", "../dataset/toy.html") == "file:///x/dataset/toy.html"
    assert Path(result["index"]) == site / "index.html"


def test_explore_export_compare_links_of_models_differing_in_case(explored, tmp_path):
    """A second model whose id sorts before the first in code points and after it ignoring case ("Q" < "o" but
    "o" < "q"): every compare link of the exported learner pages names a file the export wrote."""
    from tests.endpoint import FakeEndpoint

    graph, _ = explored
    with FakeEndpoint(answer=COMPLETION) as server:
        kstp_json(graph, "evaluate", "answers", "--dataset", "toy", "--model", "Qwen2.5", "--backend", "openai",
                  "--base-url", server.base_url, "--limit", "3")
    site = tmp_path / "site"
    kstp_json(graph, "explore", "--export", site)
    links = [(page, target) for page in (site / "learner").glob("*.html")
             for target in re.findall(r'class="compare-link" href="([^"]+)"', page.read_text())]
    assert len(links) == 2  # each model's page links the other
    for page, target in links:
        assert (page.parent / unescape(target)).resolve().is_file(), (page, target)


def test_explore_compare_above_the_inline_limit_hides_another_datasets_figures(explored, monkeypatch, tmp_path):
    """Above PSR_INLINE_ANSWERS the comparison reads the figures stored on the learners; the model's are those of
    toy2 (evaluated last), so they are left out and the note says why, while L1's (a learner of toy) stay."""
    from kstp.explore import pages
    from kstp.explore.pages import Explorer
    from kstp.graph.factory import open_store
    from tests.conftest import write_toy_files
    from tests.endpoint import FakeEndpoint

    graph, _ = explored
    files = write_toy_files(tmp_path)  # populate's files again: the same items, now as toy2
    kstp_json(graph, "ingest", "items", files["items"], "--dataset", "toy2", "--framework", "toy")
    with FakeEndpoint(answer=COMPLETION) as server:
        kstp_json(graph, "evaluate", "answers", "--dataset", "toy2", "--model", MODEL, "--backend", "openai",
                  "--base-url", server.base_url, "--limit", "3")
    kstp_json(graph, "evaluate", "psr", "--dataset", "toy2")
    monkeypatch.setattr(pages, "PSR_INLINE_ANSWERS", 0)
    store = open_store(graph, read_only=True)
    try:
        shown = Explorer(store, graph).compare("toy:L1", f"model:{MODEL}")["datasets"]
    finally:
        store.close()
    assert [s["dataset"] for s in shown] == ["toy"]
    l1, model = shown[0]["figures"]
    assert l1["psrMicro"] == 0.75  # hand-computed (test_explore_compare_two_learners_and_the_run_strip)
    assert model["accuracy"] is model["psrMicro"] is model["psrMacro"] is None
    assert f"not shown for model:{MODEL}: it answered other datasets too" in shown[0]["source"]


def _start(graph: str, *args: str):
    import os
    import subprocess
    import sys

    command = [str(Path(sys.executable).parent / "kstp"), "--graph", graph, "explore", *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))


@pytest.mark.usefixtures("sigint_to_python")
def test_explore_warns_when_it_listens_beyond_this_machine(explored):
    """--host 0.0.0.0: a warning that anyone who reaches the port reads the graph; Ctrl-C stops it (exit 130)."""
    import signal

    graph, _ = explored
    process = _start(graph, "--host", "0.0.0.0", "--port", "0")
    warning, started = process.stderr.readline(), process.stderr.readline()
    assert warning.startswith("warning: listening on 0.0.0.0: anyone who can reach port ")
    port = int(re.search(r"http://0\.0\.0\.0:(\d+)/", started).group(1))
    assert get(f"http://127.0.0.1:{port}/index.html")[0] == 200
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=30)
    assert process.returncode == 130 and rest.strip() == \
        "Interrupted: kstp explore stopped; it wrote nothing (it only reads the graph)."


def test_explore_port_in_use_is_one_line(explored):
    import socket

    graph, _ = explored
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        process = _start(graph, "--port", str(port))
        _, err = process.communicate(timeout=60)
    finally:
        taken.close()
    assert process.returncode == 1 and err.count("\n") == 1
    assert err.startswith(f"Error: cannot listen on 127.0.0.1:{port}: ") and "choose another port with --port" in err


def test_explore_run_counts_failures_by_kind(explored):
    """A model that replies with nothing: every sample failed with the empty-reply reason, counted by kind;
    the overview shows no PSR for it (none of its answers is correct)."""
    from tests.endpoint import FakeEndpoint
    from tests.explore.conftest import kstp_json as run_kstp

    graph, _ = explored
    with FakeEndpoint(message={"content": ""}) as server:
        summary = run_kstp(graph, "evaluate", "answers", "--dataset", "toy", "--model", "mute", "--backend", "openai",
                           "--base-url", server.base_url, "--limit", "2")
    assert summary["failed"] == 2
    with serving(graph) as url:
        _, run = get(url + f"run/{slug(summary['runId'])}.html")
        _, failed = get(url + f"run/{slug(summary['runId'])}.html?show=failed")
        _, overview = get(url + "index.html")
    rows = re.findall(r"<tr><td>([^<]*)</td><td><span class=\"fig\" data-value=\"(\d+)\"",
                      run.split('id="failures"')[1].split("</table>")[0])
    assert rows == [("failed: empty: the reply has no content and no reasoning", "2")]
    assert failed.count('class="sample failed"') == 2
    assert "psrMicro" not in keyed_row(overview, "runs", summary["runId"])
