"""kstp explore under hostile or heavy use, on each engine: a statement that would run for ever holds up no
page and stops at its time limit, Ctrl-C stops the server in about a second while one runs, and integers
past 64 bits are one-line errors.

The runaway statement is a cross product of ten node patterns over the toy graph (about 40
nodes: 40^10 rows to count), which neither engine finishes within the test.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from html import unescape
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.explore.conftest import get, kstp, kstp_json, populated, serving

RUNAWAY = ("MATCH (a), (b), (c), (d), (e), (f), (g), (h), (i), (j) "
           "WHERE size(a.id) + size(b.id) + size(c.id) + size(d.id) + size(e.id) + size(f.id) + size(g.id) "
           "+ size(h.id) + size(i.id) + size(j.id) < 0 RETURN count(*) AS n")
ERROR = re.compile(r'<p class="error" id="cypher-error">([^<]*)</p>')


@pytest.fixture
def explored(graph_location, tmp_path, request):
    populated(graph_location, tmp_path, request)
    return graph_location


def test_pages_answer_while_a_runaway_statement_runs_until_its_limit(explored):
    with serving(explored, query_timeout_s=6) as url:
        outcome = {}

        def runaway():
            began = time.perf_counter()
            outcome["page"] = get(url + "query.html?cypher=" + quote(RUNAWAY))
            outcome["seconds"] = time.perf_counter() - began

        thread = threading.Thread(target=runaway)
        thread.start()
        time.sleep(1.5)  # the statement is running
        pages = []
        for page in ("index.html", "dataset/toy.html", "learner/toy%3AL1.html"):
            began = time.perf_counter()
            status, _ = get(url + page)
            pages.append((page, status, time.perf_counter() - began))
        still_running = thread.is_alive()
        thread.join(60)
    assert still_running, f"the runaway statement ended before the other pages were asked: {pages}"
    assert all(status == 200 for _, status, _ in pages), pages
    # Not queued behind it: a page waiting for the statement would take the 4.5 s it had left. 0.1 s when idle; a
    # cold page on Neo4j beside the statement's scan and the other worker's tests took up to 3 s on 2 cores.
    assert max(seconds for *_, seconds in pages) < 4.0, pages
    status, html = outcome["page"]
    error = unescape(ERROR.search(html).group(1))
    assert status == 200 and error.startswith("the statement was stopped past the 6 s limit; narrow it"), error
    assert 6 <= outcome["seconds"] < 30


@pytest.mark.usefixtures("sigint_to_python")
def test_ctrl_c_stops_explore_in_about_a_second_while_a_statement_runs(explored):
    command = [str(Path(sys.executable).parent / "kstp"), "--graph", explored, "explore", "--port", "0",
               "--query-timeout", "120"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = process.stderr.readline()
        url = re.search(r"(http://\S+/)", line).group(1)
        threading.Thread(target=get, args=(url + "query.html?cypher=" + quote(RUNAWAY),), daemon=True).start()
        time.sleep(1.5)
        assert process.poll() is None
        began = time.perf_counter()
        process.send_signal(signal.SIGINT)
        process.wait(30)
        stopped = time.perf_counter() - began
    finally:
        process.kill()
    rest = process.stderr.read()
    # about a second (0.4-1.1 s measured by hand here; up to 2 s while the 2 cores ran other tests)
    assert stopped < 3, f"{stopped:.2f} s\n{rest}"
    assert "Traceback" not in rest, rest


def test_integers_past_64_bits_are_one_line_errors(explored):
    with serving(explored) as url:
        status, html = get(url + "query/psr_distribution.html?run=1&dataset=toy&minPrerequisites=" + "9" * 30)
        assert status == 200
        error = unescape(re.search(r'id="query-error">([^<]*)<', html).group(1))
        assert "past the 64-bit integers the graph stores" in error and "\n" not in error.strip()
        status, csv_text = get(url + "query/psr_distribution.csv?dataset=toy&minPrerequisites=" + "9" * 30)
        assert status == 400 and "past the 64-bit integers" in csv_text
        status, html = get(url + "query.html?cypher=" + quote("RETURN 9223372036854775807 + 1 AS n"))
        assert status == 200
        error = unescape(ERROR.search(html).group(1))  # Ladybug: overflow; Neo4j: the same, in its words
        assert error.startswith("query ad hoc failed on") and "\n" not in error
        # an INT128 value is computed, but no 64-bit column holds it (Ladybug; Neo4j has no such CAST)
        status, html = get(url + "query.html?cypher=" + quote(
            "RETURN CAST(170141183460469231731687303715884105727 AS INT128) AS n"))
        assert status == 200
        error = unescape(ERROR.search(html).group(1))
        assert "\n" not in error and ("its result cannot be read (ArrowInvalid: Integer value out of bounds)" in error
                                      or error.startswith("query ad hoc failed on Neo4j"))


def test_a_long_learner_id_gets_a_short_page_name_in_the_export_and_on_the_server(explored, tmp_path):
    long_id = "学" * 29  # 87 bytes of UTF-8, 261 of slug: past a file system's 255-byte names
    answers = tmp_path / "long.csv"
    answers.write_text(f"learner,item,correct\n{long_id},q1,1\n{long_id},q2,0\n", encoding="utf-8")
    kstp(explored, "ingest", "responses", answers, "--dataset", "toy")
    site = tmp_path / "site"
    result = kstp_json(explored, "explore", "--export", site)
    pages = list(site.rglob("*.html"))
    assert result["pages"] == len(pages) and result["skipped"] == []
    assert all(len(p.name.encode()) <= 255 for p in pages)
    [page] = [p for p in (site / "learner").glob("*.html") if "~~" in p.name]
    assert long_id in unescape(page.read_text(encoding="utf-8"))
    assert not list(tmp_path.glob(".site.partial-*"))  # the building folder is gone
    with serving(explored) as url:
        status, dataset = get(url + "dataset/toy.html")
        link = re.search(r'href="\.\./(learner/[^"]*~~[^"]*\.html)"', dataset).group(1)
        status, html = get(url + link)
        assert status == 200 and long_id in unescape(html)
        assert get(url + "learner/x~~0123456789abcdef.html")[0] == 404


def test_an_export_that_stops_leaves_no_half_site(explored, tmp_path):
    from kstp.explore.export import export_site
    from kstp.explore.pages import Explorer
    from kstp.graph.factory import open_store

    def stop_after_three(done, name):
        if done == 3:
            raise KeyboardInterrupt

    site = tmp_path / "site"
    with open_store(explored, read_only=True) as store, pytest.raises(KeyboardInterrupt):
        export_site(Explorer(store, explored), site, stop_after_three)
    assert not site.exists() and not list(tmp_path.glob(".site.partial-*"))
    (site / "mine").mkdir(parents=True)  # a folder of the user's: an export adds to it, stopped or not
    (site / "mine" / "notes.txt").write_text("kept")
    with open_store(explored, read_only=True) as store, pytest.raises(KeyboardInterrupt):
        export_site(Explorer(store, explored), site, stop_after_three)
    assert sorted(p.name for p in site.rglob("*")) == ["mine", "notes.txt"]
    with open_store(explored, read_only=True) as store:
        result = export_site(Explorer(store, explored), site)
    assert (site / "mine" / "notes.txt").read_text() == "kept" and (site / "index.html").is_file()
    assert result["pages"] == len(list(site.rglob("*.html")))


def test_pages_show_what_another_process_wrote_after_the_explorer_started(explored, tmp_path):
    answers = tmp_path / "late.csv"
    answers.write_text("learner,item,correct\nlate-learner,q1,1\nlate-learner,q2,1\n")
    with serving(explored) as url:
        assert get(url + "learner/toy~3Alate-learner.html")[0] == 404
        _, before = get(url + "dataset/toy.html")
        kstp(explored, "ingest", "responses", answers, "--dataset", "toy")  # another writer, the explorer open
        status, html = get(url + "learner/toy~3Alate-learner.html")
        assert status == 200 and "late-learner" in html
        _, after = get(url + "dataset/toy.html")
        assert "late-learner" in after and "late-learner" not in before
        assert re.search(r'id="read-at">graph last re-read at \d\d:\d\d:\d\d', after)


def test_an_export_folder_is_readable_by_a_web_server_and_bad_targets_are_one_line(explored, tmp_path):
    import os

    site = tmp_path / "site"
    kstp_json(explored, "explore", "--export", site)
    mask = os.umask(0)
    os.umask(mask)
    assert site.stat().st_mode & 0o777 == 0o777 & ~mask  # not the private 0700 of a temporary folder
    afile = tmp_path / "afile"
    afile.write_text("x")
    from click.testing import CliRunner

    from kstp.cli.main import cli

    for target, code, words in ((afile, 2, "is a file"), (afile / "sub", 1, f"cannot write the site to {afile}/sub")):
        result = CliRunner().invoke(cli, ["--graph", explored, "explore", "--export", str(target)])
        assert result.exit_code == code and words in result.stderr and ".partial-" not in result.stderr, result.stderr
