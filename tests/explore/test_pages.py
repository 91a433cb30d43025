"""kstp explore's pages over HTTP, on each engine: the figures the commands print, escaping, read-only, export.

The graph is the hand-made curriculum of tests/conftest.py with a model run (tests/explore/conftest.py);
each page is fetched from the explorer served in a thread and compared with the JSON of the command
that prints the same figures, run on the same graph.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import quote, urljoin

import pytest

from kstp.errors import UnknownIdError
from kstp.explore.pages import slug, unslug
from tests.explore.conftest import COMPLETION, MODEL, figures, get, keyed_row, kstp_json, populated, serving


@pytest.fixture
def explored(graph_location, tmp_path, request):
    """(graph, run id) of the populated toy graph (:func:`~tests.explore.conftest.populated`)."""
    return graph_location, populated(graph_location, tmp_path, request)


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
    assert re.findall(r"<tr><td>(toy:q\d)</td><td>(toy:q\d)</td><td>([a-z ]+)</td></tr>", unlinked(incoherent)) == [
        ("toy:q5", "toy:q3", "answered wrongly"), ("toy:q5", "toy:q4", "did not answer")]
    # the red edges of its drawing: kstp kst check's missing prerequisites that it answered wrong (q3 for q5)
    state = [a["questionId"] for a in kstp_json(graph, "query", "learner_answers", "-p", "learnerId=toy:L1")
             if a["correct"]]
    missing = check(graph, "toy", state)["missingPrerequisites"]
    wrong = {a["questionId"] for a in kstp_json(graph, "query", "learner_answers", "-p", "learnerId=toy:L1")
             if not a["correct"]}
    assert red_pairs(incoherent) == {(p, q) for q, ps in missing.items() for p in ps if p in wrong} == {
        ("toy:q3", "toy:q5")}
    assert re.search(r'class="broken-count"><span class="fig" data-value="1"', incoherent)
    micro = [v for v in figures(ordered.split('id="learner-table"')[1], "psrMicro") if v is not None]
    # by hand: L1 (1 + 2) / (1 + 3) pairs, L2 (0 + 1 + 2 + 0) / (1 + 2 + 3 + 1); L3 and the model have no scored pair
    assert micro == [0.75, pytest.approx(3 / 7)]


def unlinked(html: str) -> str:
    """``html`` without its links' tags (a question id is a link to its page)."""
    return re.sub(r"</?a\b[^>]*>", "", html)


def red_pairs(html: str) -> set[tuple[str, str]]:
    """The (prerequisite, question) pairs a page draws red: on red edges and inside red-outlined boxes."""
    found = re.findall(r'class="(?:edge broken[^"]*|node [^"]*broken-inside[^"]*)"[^>]*?data-pairs="([^"]*)"',
                       unescape(html))
    return {tuple(pair.split(">")) for pairs in found for pair in pairs.split()}


def check(graph: str, dataset: str, state: list[str]) -> dict:
    """``kstp kst check --json`` of ``state`` (it exits 1 for a set that is no state)."""
    from click.testing import CliRunner

    from kstp.cli.main import cli

    result = CliRunner().invoke(cli, ["--graph", graph, "kst", "check", "--dataset", dataset, "--state",
                                      ",".join(state), "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


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


def test_explore_run_page_shows_the_figures_the_run_stored(explored):
    """Issue 43: runs show and the run page show what the run's log holds (stderr, pass@k, truncation)."""
    graph, run_id = explored
    stored = kstp_json(graph, "runs", "show", run_id)["run"]["figures"]
    with serving(graph) as url:
        _, run = get(url + f"run/{slug(run_id)}.html")
    shown = dict(re.findall(r'data-name="([^"]+)"><span class="fig" data-value="([^"]+)"', run))
    assert float(unescape(shown["accuracyStderr"])) == pytest.approx(stored["accuracyStderr"])
    cut = stored["truncation"]
    assert json.loads(unescape(shown["truncated"])) == f"{cut['truncated']} of {cut['replies']} (0.0%)"
    assert cut["replies"] == 3


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
    assert int(count) == len(only_a) and re.findall(r'<tr class="only-b"><td>([^<]+)</td>', unlinked(page)) == \
        sorted(only_b)
    # PSR micro by hand (test_explore_dataset_and_learner_equal_the_kst_commands): L1 3/4, L2 3/7
    assert figures(page, "psrMicro") == [0.75, pytest.approx(3 / 7)]
    assert 'id="compare-dag-toy"' in page and "right for A only" in unescape(page)
    dag = unescape(page.split('id="compare-dag-toy"')[1].split("</svg>")[0])
    assert '<text class="graph-title"' in dag and "Where A and B are right on toy's prerequisite structure" in dag
    assert 'action="../compare.html"' in learner  # the form on the learner page
    # a bar per question (fewer than 100): the run's share right beside the humans' (by hand: q1 right for L1
    # and L3 of L1-L3, q2 for L1 and L2, q3 for none of L1)
    strip = unescape(run.split('id="run-strip"')[1].split("</svg>")[0])
    bars = re.findall(r'data-category="([^"]+)" data-series="([^"]+)" data-value="([^"]*)"', strip)
    assert {k: float(v) for k, series, v in bars if series.startswith("this run")} == {
        s["localId"]: float(bool(s["correct"])) for s in samples}
    assert {k: float(v) for k, series, v in bars if series.startswith("human")} == pytest.approx(
        {"q1": 2 / 3, "q2": 1.0, "q3": 0.0})
    assert red_pairs(page) == {tuple(p) for who in ("toy:L1", "toy:L2") for p in _broken(graph, who)}
    tokens = run.split('id="run-tokens"')[1].split("</svg>")[0]
    assert sum(float(v) for v in re.findall(r'data-value="([^"]+)"', tokens)) == len(
        [s for s in samples if s["tokensOut"] is not None]) == 3


def _broken(graph: str, learner: str) -> list[tuple[str, str]]:
    """kstp kst check's missing prerequisites of a learner's state that it answered wrong."""
    answers = kstp_json(graph, "query", "learner_answers", "-p", f"learnerId={learner}")
    wrong = {a["questionId"] for a in answers if not a["correct"]}
    missing = check(graph, answers[0]["datasetId"], [a["questionId"] for a in answers if a["correct"]])
    return [(p, q) for q, ps in missing["missingPrerequisites"].items() for p in ps if p in wrong]


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


def _second_dataset(graph, tmp_path) -> str:
    """toy2, the toy's items again, answered by the same model with another reply (\\boxed{5}: toy2's q2 right, q1
    wrong: another seed, since the model's replies to the same texts are reused whatever server asked them), then
    PSR evaluated on toy2 after toy; the toy2 run's id."""
    from tests.conftest import write_toy_files
    from tests.endpoint import FakeEndpoint

    files = write_toy_files(tmp_path)  # populate's files again: the same items, now as toy2
    kstp_json(graph, "ingest", "items", files["items"], "--dataset", "toy2", "--framework", "toy")
    kstp_json(graph, "derive", "question-prerequisites", "--dataset", "toy2", "--rule", "reflexive")
    with FakeEndpoint(answer="So \\boxed{5}") as server:
        run = kstp_json(graph, "evaluate", "answers", "--dataset", "toy2", "--model", MODEL, "--backend", "openai",
                        "--base-url", server.base_url, "--limit", "2", "--seed", "7")
    kstp_json(graph, "evaluate", "psr", "--dataset", "toy2")
    return run["runId"]


def test_explore_psr_per_run_is_its_datasets_after_a_second_dataset(explored, tmp_path):
    """The overview's PSR of each run is kstp evaluate psr's for the run's model on the run's dataset: toy's run
    keeps toy's after toy2 was evaluated (by hand: its one right answer, q1, has no prerequisite: no PSR, "-";
    on toy2, q2 right with its prerequisite q1 wrong: 0), and the model's row on each dataset page is that
    dataset's (accuracy 1/3 on toy, 1/2 on toy2)."""
    graph, run_id = explored
    other = _second_dataset(graph, tmp_path)
    psr = {d: next(r for r in kstp_json(graph, "evaluate", "psr", "--dataset", d, "--no-write")
                   if r["learner"] == f"model:{MODEL}") for d in ("toy", "toy2")}
    assert (psr["toy"]["psrMicro"], psr["toy2"]["psrMicro"], psr["toy2"]["psrMacro"]) == (None, 0.0, 0.0)
    assert (psr["toy"]["accuracy"], psr["toy2"]["accuracy"]) == (pytest.approx(1 / 3), 0.5)
    with serving(graph) as url:
        _, overview = get(url + "index.html")
        pages = {d: get(url + f"dataset/{d}.html?sort=kind&desc=1")[1] for d in ("toy", "toy2")}
    for dataset, run in (("toy", run_id), ("toy2", other)):
        row = keyed_row(overview, "runs", _escaped(run)).split('class="figures"')[1]
        shown = {k: json.loads(unescape(v)) for k, v in re.findall(
            r'<span class="kv">(psrMicro|psrMacro) <span class="fig" data-value="([^"]*)"', row)}
        assert shown == {k: psr[dataset][k] for k in ("psrMicro", "psrMacro")}, dataset
        table = pages[dataset].split('id="learner-table"')[1]
        assert figures(table, "accuracy")[0] == pytest.approx(psr[dataset]["accuracy"]), dataset  # the model first
        assert figures(table, "psrMicro")[0] == psr[dataset]["psrMicro"], dataset
    assert "psrMicro <span class=\"fig\" data-value=\"null\">-</span>" in keyed_row(overview, "runs", _escaped(run_id))


def _escaped(text: str) -> str:
    return text.replace('"', "&#34;").replace("'", "&#39;").replace("<", "&lt;").replace(">", "&gt;")


def test_explore_compare_above_the_inline_limit_shows_each_datasets_figures(explored, monkeypatch, tmp_path):
    """Above PSR_INLINE_ANSWERS the comparison reads the figures kstp evaluate psr stored: the model's on toy are
    those of its toy run (accuracy 1/3, no PSR), not toy2's (evaluated last: 1/2, PSR 0), and L1's are L1's."""
    from kstp.explore import pages
    from kstp.explore.pages import Explorer
    from kstp.graph.factory import open_store

    graph, _ = explored
    _second_dataset(graph, tmp_path)
    monkeypatch.setattr(pages, "PSR_INLINE_ANSWERS", 0)
    store = open_store(graph, read_only=True)
    try:
        shown = Explorer(store, graph).compare("toy:L1", f"model:{MODEL}")["datasets"]
    finally:
        store.close()
    assert [s["dataset"] for s in shown] == ["toy"]
    l1, model = shown[0]["figures"]
    assert l1["psrMicro"] == 0.75  # hand-computed (test_explore_compare_two_learners_and_the_run_strip)
    assert model["accuracy"] == pytest.approx(1 / 3) and model["psrMicro"] is model["psrMacro"] is None
    assert "as the last kstp evaluate psr stored them" in shown[0]["source"]


def test_explore_query_form_reads_local_ids_as_kstp_query_does(explored):
    """outer_fringe with local ids is kstp query's with the same ids (not the empty state's fringe); an unknown id
    or dataset is refused in one line."""
    graph, _ = explored
    want = kstp_json(graph, "query", "outer_fringe", "-p", "dataset=toy", "-p", "questionIds=q1,q2")
    empty = kstp_json(graph, "query", "outer_fringe", "-p", "dataset=toy", "-p", "questionIds=[]")
    assert want and want != empty  # what the form gave before: the fringe of no question known
    with serving(graph) as url:
        _, local = get(url + "query/outer_fringe.html?run=1&dataset=toy&questionIds=q1%2Cq2")
        _, full = get(url + "query/outer_fringe.html?run=1&dataset=toy&questionIds=toy%3Aq1%2Ctoy%3Aq2")
        _, unknown = get(url + "query/outer_fringe.html?run=1&dataset=toy&questionIds=q1%2Cq99")
        status, csv_text = get(url + "query/outer_fringe.csv?dataset=toy&questionIds=q1%2Cq99")
        _, nodata = get(url + "query/outer_fringe.html?run=1&dataset=toys&questionIds=q1")
    for html in (local, full):
        assert re.findall(r"<tr><td>(toy:q\d)</td></tr>", html) == [r["questionId"] for r in want]
    error = unescape(re.search(r'id="query-error">([^<]*)<', unknown).group(1))
    assert error == "outer_fringe: dataset toy has no question q99; give local ids (q1) or full ones (toy:q1)"
    assert status == 400 and "has no question q99" in csv_text
    assert "outer_fringe: unknown dataset &#39;toys&#39;; datasets in the graph: toy" in nodata


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
    the overview shows its PSR as undefined, "-" (no answer of it was graded)."""
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
    assert 'psrMicro <span class="fig" data-value="null">-</span>' in keyed_row(overview, "runs", summary["runId"])


def test_explore_question_page_equals_the_commands(explored):
    """A question's page: its text, gold, concepts and prerequisites as the graph's queries give them, the share
    of humans right by hand, its PSR as kstp evaluate psr --per-question's row, and the model's sample with its
    reply escaped; an unknown question is a 404 naming it."""
    graph, run_id = explored
    edges = kstp_json(graph, "query", "question_prerequisite_edges", "-p", "dataset=toy")
    per_question = {r["questionId"]: r for r in kstp_json(graph, "evaluate", "psr", "--dataset", "toy",
                                                          "--per-question", "--no-write")}
    samples = [s for s in kstp_json(graph, "query", "run_samples", "-p", f"runId={run_id}")
               if s["questionId"] == "toy:q1"]
    with serving(graph) as url:
        _, q5 = get(url + f"question/{slug('toy:q5')}.html")
        _, q1 = get(url + f"question/{slug('toy:q1')}.html")
        missing, said = get(url + f"question/{slug('toy:q99')}.html")
        _, dataset = get(url + "dataset/toy.html")
    assert unescape(re.search(r'<pre id="question-text">([^<]*)</pre>', q5).group(1)) == "multiply"
    assert re.search(r'<td id="gold">([^<]*)</td>', q5).group(1) == "12"
    assert unlinked(re.search(r'<td id="concepts">(.*?)</td>', q5).group(1)).strip() == "D"
    shown = {cls: set(re.findall(r'question/([^"]+)\.html', re.search(rf'<td class="{cls}">(.*?)</td>', q5).group(1)))
             for cls in ("pre-direct", "pre-indirect", "same", "dep-direct", "dep-indirect")}
    pre = {e["fromId"] for e in edges if e["toId"] == "toy:q5"}
    dep = {e["toId"] for e in edges if e["fromId"] == "toy:q5"}
    assert {unslug(x) for x in shown["pre-direct"] | shown["pre-indirect"] | shown["same"]} == pre
    assert {unslug(x) for x in shown["dep-direct"] | shown["dep-indirect"] | shown["same"]} == dep
    # by hand: q5 was answered by L1 alone, right; q1 by L1 and L3 right, L2 wrong
    assert [figures(q5, c)[0] for c in ("humans-answered", "humans-right")] == [1, 1]
    assert re.search(r'class="humans-share"><span class="fig" data-value="([^"]+)"', q1).group(1) == repr(2 / 3)
    row = per_question["toy:q5"]
    psr = dict(re.findall(r'<td data-name="([^"]+)"><span class="fig" data-value="([^"]+)"', q5))
    assert float(psr["PSR macro"]) == pytest.approx(row["psrMacro"]) and int(psr["learners"]) == row["learners"]
    assert len(re.findall(r'<tr class="sample ', q1)) == len(samples) == 1
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in q1 and "<script>alert(1)" not in q1
    assert f'href="../run/{slug(run_id)}.html"' in q1 and 'class="extracted">3<' in q1
    assert missing == 404 and "unknown question &#39;toy:q99&#39;" in said
    # every question link of the dataset page opens a question page
    assert set(re.findall(r'href="\.\./question/([^"]+)\.html"', dataset)) >= {slug(f"toy:q{k}") for k in range(1, 9)}


def test_explore_run_diff_page_equals_kstp_runs_diff(explored):
    """A second model on toy (\\boxed{5}: q2 right, q1 wrong): the run page links the two-run diff, whose
    figures and flipped questions are kstp runs diff's."""
    from tests.endpoint import FakeEndpoint

    graph, run_id = explored
    with FakeEndpoint(answer="So \\boxed{5}") as server:
        other = kstp_json(graph, "evaluate", "answers", "--dataset", "toy", "--model", "five", "--backend", "openai",
                          "--base-url", server.base_url, "--limit", "3")["runId"]
    want = kstp_json(graph, "runs", "diff", run_id, other)
    with serving(graph) as url:
        _, run = get(url + f"run/{slug(run_id)}.html")
        link = f"diff/{slug(run_id)}/{slug(other)}.html"
        status, page = get(url + link)
    assert f'href="../{link}"' in run and status == 200
    for row in want["runs"]:
        shown = keyed_row(page, "diff-runs", _escaped(row["runId"]))
        assert figures(shown, "accuracy") == [pytest.approx(row["accuracy"])]
        assert figures(shown, "psrMicro") == [None if row["psrMicro"] is None else pytest.approx(row["psrMicro"])]
    p_value = re.search(r'data-value="([^"]+)" data-name="pValue"', page).group(1)
    assert float(p_value) == pytest.approx(want["mcnemar"]["pValue"])
    flipped = re.findall(r'<tr class="(fixed|broken)"><td><a class="q" href="\.\./\.\./question/([^"]+)\.html"', page)
    assert [(c, unslug(q)) for c, q in flipped] == [(f["change"], f["questionId"]) for f in want["flipped"]]
    assert [f["questionId"] for f in want["flipped"]] == ["toy:q1", "toy:q2"]  # by hand: q1 broken, q2 fixed


def test_explore_pages_travel_gzipped_and_read_the_same(explored):
    """A client that accepts gzip gets the page compressed (a tenth of it for a long table) and the same HTML."""
    import gzip
    import urllib.request

    graph, _ = explored
    with serving(graph) as url:
        _, plain = get(url + "dataset/toy.html")
        request = urllib.request.Request(url + "dataset/toy.html", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=60) as response:
            encoding, body = response.headers.get("Content-Encoding"), response.read()
    assert encoding == "gzip" and len(body) < len(plain.encode()) / 3
    assert gzip.decompress(body).decode() == plain


def test_the_learner_page_shows_an_adaptive_assessments_path(explored):
    from click.testing import CliRunner

    from kstp.cli.main import cli

    graph, _ = explored
    # a person assessed on the derived prerequisites (surmise relation), three questions: right, don't know, wrong
    result = CliRunner().invoke(cli, ["--graph", graph, "assess", "--dataset", "toy", "--learner", "ada",
                                      "--structure", "surmise", "--budget", "3", "--json"], input="3\n\nnope\n")
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    with serving(graph) as url:
        status, page = get(url + f"learner/{slug('toy:ada')}.html")
    assert status == 200
    section = page.split('class="assessments"')[1]
    assert done["runId"] in unescape(section)
    rows = re.findall(r"<tr class=\"(right|wrong)\"><td>(\d+)</td><td>.*?(toy:q\d).*?</td><td>([^<]*)</td>",
                      section)
    assert [(verdict == "right", q, unescape(answer)) for verdict, _, q, answer in rows] == \
        [(s["correct"], s["question"], s["answer"]) for s in done["path"]]
    assert len(rows) == done["asked"] == 3
    with serving(graph) as url:  # the run page gives the assessment's figures beside its headline
        _, run = get(url + f"run/{slug(done['runId'])}.html")
    asked = re.search(r'data-name="asked"><span class="fig" data-value="([^"]*)"', run).group(1)
    assert float(asked) == 3 and 'data-name="learner"' in run and "toy:ada" in run
    # The export reads its learner pages in batches (Explorer.read_learners): each page equals the one read alone,
    # the assessed learner, a human, the model and a learner the batch names twice among them.
    from kstp.explore.pages import Explorer
    from kstp.graph.factory import open_store

    with open_store(graph, read_only=True) as store:
        learners = sorted(r["learnerId"] for r in kstp_json(graph, "query", "dataset_learner_figures", "-p",
                                                            "dataset=toy"))
        alone = {learner: Explorer(store, graph).learner(learner) for learner in learners}
        explorer = Explorer(store, graph)
        explorer.read_learners([*learners, learners[0]])
        assert {learner: explorer.learner(learner) for learner in learners} == alone
    assert "toy:ada" in learners and alone["toy:ada"]["assessments"][0]["runId"] == done["runId"]
    assert any(p["learner"]["kind"] == "model" for p in alone.values()) and len(learners) >= 5


def test_concept_pages_show_what_the_single_concept_reads_give(explored):
    """A concept page takes its node, questions and neighbours from its framework's index (one concepts_questions
    read for every page): each of the six toy concepts' pages equals the single reads it made before
    (concept_questions, concept_ancestors, concept_descendants), and an unknown concept still names itself."""
    from kstp.explore.pages import Explorer
    from kstp.graph.factory import open_store

    graph, _ = explored
    concepts = [r["conceptId"] for r in kstp_json(graph, "query", "framework_concepts", "-p", "framework=toy")]
    store = open_store(graph, read_only=True)
    try:
        explorer = Explorer(store, graph)
        pages = {c: explorer.concept(c) for c in concepts}
        with pytest.raises(UnknownIdError, match="unknown concept 'toy:nope'"):
            explorer.concept("toy:nope")
    finally:
        store.close()
    assert len(concepts) == 6 and sum(p["questionCount"] for p in pages.values()) > 0
    for concept, page in pages.items():
        assert page["concept"]["id"] == concept
        questions = kstp_json(graph, "query", "concept_questions", "-p", f"conceptId={concept}")
        assert [(q["questionId"], q["datasetId"]) for q in page["questions"]] == \
            [(q["questionId"], q["datasetId"]) for q in questions]
        for side, query in (("ancestors", "concept_ancestors"), ("descendants", "concept_descendants")):
            assert page[side] == len(kstp_json(graph, "query", query, "-p", f"conceptId={concept}")), (concept, side)
