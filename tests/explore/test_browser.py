"""kstp explore in a real browser: headless Chromium (Debian's chromium and chromium-driver) driven by Selenium.

One walk-through per engine, in one test because it compares the engines: the demo graph
(``kstp demo``) with a BLIM fit, checked prerequisite edges, a model run whose completion
holds a script, a next-step run and DAG-MATH gold trajectories; ``kstp explore --port 0``
started as a command; then the browser opens every page kind and clicks overview ->
dataset -> learner -> run -> sample, compares the figures on the pages with the commands'
JSON, checks that a click on a concept moves the graph, that no script from a completion
ran, that a write is refused, and that the static export (of the embedded graph; the export
of both engines is in test_pages.py) opens from disk with no server. Issue 42's checks: each model run's
PSR on the overview is evaluate psr's for its dataset after a second dataset was evaluated; a query form
reads local ids as kstp query; every question link of a dataset opens a page whose figures are the
commands'; a model is ringed and counted apart in the Hasse diagram; red edges are kst check's and
validate prerequisites' pairs; no text has a contrast under 3 against its rendered background at
1,400 px, at 420 px (where the page never scrolls sideways) and in dark mode (contrast.js).
A screenshot of each page kind goes to the test's folder (and to ``$KSTP_EXPLORE_SCREENSHOTS``
when set: ``docs/explore`` holds the ones the README shows). Both engines must show the
same figures on every page.
"""

from __future__ import annotations

import json
import os
import pkgutil
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kstp.explore.pages import slug
from tests.conftest import connect_neo4j
from tests.endpoint import FakeEndpoint
from tests.explore.conftest import kstp, kstp_json

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000")
#: The model and its completion: a name with quotes and markup, a reply with a script that must not run.
MODEL = "tiny \"o'neil\" <i>"
#: A model that answers every question of probability_pks wrong: its pattern is the empty state.
BLANK = "blank-model"
COMPLETION = ("<script>window.__pwned = 1; document.title = 'pwned'</script><img src=x onerror=\"window.__pwned=2\">"
              " 8 of 30 red, 10 black, 12 yellow: 12/30 = 0.4, so \\boxed{0.40}")


def populate_demo(graph: str, data_root: Path, folder: Path) -> dict:
    """The demo graph and one run of each kind the pages draw; returns the ids the walk-through uses."""
    kstp(graph, "demo", "--data", data_root, "--out", folder / "results")
    kstp(graph, "fit", "blim", "--dataset", "probability_pks")
    kstp(graph, "validate", "prerequisites", "--dataset", "frcsub")
    with FakeEndpoint(answer=COMPLETION) as server:
        answers = kstp_json(graph, "evaluate", "answers", "--dataset", "probability_pks", "--model", MODEL,
                            "--backend", "openai", "--base-url", server.base_url, "--limit", "4")
        second = kstp_json(graph, "evaluate", "answers", "--dataset", "frcsub", "--model", MODEL,  # a 2nd dataset
                           "--backend", "openai", "--base-url", server.base_url, "--limit", "4")
    with FakeEndpoint(answer="So \\boxed{999}") as server:  # every question of it, all wrong: the state {}
        blank = kstp_json(graph, "evaluate", "answers", "--dataset", "probability_pks", "--model", BLANK,
                          "--backend", "openai", "--base-url", server.base_url)
    nextstep = kstp_json(graph, "evaluate", "nextstep", "--catalogue", "pks_cip", "--conditions", "P0", "--orders",
                         "1", "--backend", "fringe-oracle", "--model", "fringe-oracle")
    kstp(graph, "ingest", "cot", ROOT / "tests/fixtures/dagmath/heptagon.json", "--dataset", "logs")
    kstp(graph, "evaluate", "psr", "--dataset", "probability_pks", "--dataset", "frcsub")
    return {"answers": answers["runId"], "nextstep": nextstep["runId"], "second": second["runId"],
            "blank": blank["runId"]}


class Served:
    """``kstp explore`` as a command, on a free port."""

    def __init__(self, graph: str, env: dict):
        command = [str(Path(sys.executable).parent / "kstp"), "--graph", graph, "explore", "--port", "0"]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.process.stderr.readline()
        found = re.search(r"kstp explore: (http://\S+/) ", line)
        assert found, f"kstp explore did not start: {line}{self.process.stderr.read() if self.process.poll() else ''}"
        self.url = found.group(1)

    def stop(self) -> tuple[int, str]:
        """Ctrl-C, as a user stops it; its exit status and what it printed after the start line."""
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=30)
        return self.process.returncode, err


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium from Debian's packages, driven through chromedriver (nothing is downloaded)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM.exists() and DRIVER.exists(), "install chromium and chromium-driver (make test does)"
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def screenshot(driver, folder: Path, name: str, width: int = 1400) -> None:
    """The whole page (up to 2,400 px high) ``width`` wide as ``name``.png in ``folder`` and in
    $KSTP_EXPLORE_SCREENSHOTS."""
    height = min(2400, driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(width, max(height, 700))
    folder.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(folder / f"{name}.png"))
    driver.set_window_size(width, 1000)
    chosen = os.environ.get("KSTP_EXPLORE_SCREENSHOTS")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / f"{name}.png", Path(chosen) / f"{name}.png")


def _atom(name: str) -> str:
    """Selenium's own script behind ``WebElement.get_attribute`` or ``is_displayed`` (its package data)."""
    return pkgutil.get_data("selenium.webdriver.remote", f"{name}.js").decode()


def attributes(scope, css: str, *names: str) -> list[tuple]:
    """``get_attribute(name)`` of each element ``scope.find_elements(By.CSS_SELECTOR, css)`` finds (``scope``: the
    driver, or an element), for each of ``names``, in one round trip to the browser: the same script Selenium
    runs, which takes one an element and attribute (5,740 of them took 26 s of the walk-through's 143 s)."""
    driver, root = (scope, None) if hasattr(scope, "execute_script") else (scope.parent, scope)
    return [tuple(row) for row in driver.execute_script(
        f"const get = ({_atom('getAttribute')});"
        "return [...(arguments[0] || document).querySelectorAll(arguments[1])]"
        ".map(e => arguments[2].map(name => get(e, name)));", root, css, list(names))]


def displayed(driver, elements: list) -> list[bool]:
    """``is_displayed()`` of each of ``elements``, in one round trip (Selenium's own script)."""
    return driver.execute_script(f"const shown = ({_atom('isDisplayed')}); return arguments[0].map(e => shown(e));",
                                 elements)


def values(driver, css: str) -> list:
    """The full-precision figures (``data-value``) inside the elements matching ``css``."""
    return [json.loads(v) for v, in attributes(driver, f"{css} .fig", "data-value")]


def page_figures(driver) -> dict:
    """Every figure on the page, what the engines must agree on: those in a keyed table row (a run, a
    dataset) under the row's key, the others in page order (rows of runs made in the same second may
    come in either order). A run's key loses its configuration hash: the model's endpoint, a port of
    this test, is part of it."""
    found: dict = {}
    for key, value in driver.execute_script(
            "return [...document.querySelectorAll('.fig')].map(e => {"
            "  const row = e.closest('tr[data-key]');"
            "  return [row ? row.closest('table').id + ' ' + row.dataset.key : '', e.dataset.value]; })"):
        found.setdefault(re.sub(r":[0-9a-f]{12}$", "", key), []).append(json.loads(value))
    return found


def picture(driver, css: str, folder: Path, name: str):
    """The element ``css`` scrolled into view and saved as ``name``.png (as :func:`screenshot`); the element."""
    from selenium.webdriver.common.by import By

    element = driver.find_element(By.CSS_SELECTOR, css)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    folder.mkdir(parents=True, exist_ok=True)
    element.screenshot(str(folder / f"{name}.png"))
    chosen = os.environ.get("KSTP_EXPLORE_SCREENSHOTS")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / f"{name}.png", Path(chosen) / f"{name}.png")
    return element


def check_pictures(driver, graph: str, dataset: str, shots: Path, out: Path) -> None:
    """The dataset page's pictures against the commands: the PSR scatter's points are ``evaluate psr``'s
    per-learner CSV, the per-question bars its ``--per-question`` CSV, the distribution its summary rows; the
    Hasse weights are the learners per answer pattern (``kstp query answers``) and sum to the learners; the
    Q-matrix grid's cells are ``question_concepts``; BLIM's bars and whiskers are ``blim_item_parameters``."""
    import pandas as pd
    from selenium.webdriver.common.by import By

    summary = kstp_json(graph, "evaluate", "psr", "--dataset", dataset, "--no-write", "--out", out)
    kstp(graph, "evaluate", "psr", "--dataset", dataset, "--no-write", "--per-question", "--out", out)
    learners = pd.read_csv(out / f"psr_learners_{dataset}.csv").set_index("learnerId")
    drawn = learners[learners["accuracy"].notna() & learners["psrMicro"].notna()]
    scatter = picture(driver, "#psr-scatter", shots, "psr-scatter")
    points = {i: (float(x), float(y)) for i, x, y in attributes(scatter, "circle.point", "data-id", "data-x", "data-y")}
    assert points.keys() == set(drawn.index)
    for learner, (x, y) in points.items():
        assert (x, y) == pytest.approx((drawn.loc[learner, "accuracy"], drawn.loc[learner, "psrMicro"]), abs=1e-12)
    per_question = pd.read_csv(out / f"psr_questions_{dataset}.csv")
    bars = [float(v) for v, in attributes(picture(driver, "#psr-questions", shots, "psr-questions"),
                                          "rect.bar[data-series='PSR macro']", "data-value")]
    assert bars == pytest.approx(
        per_question["psrMacro"].head(len(bars)).tolist(), abs=1e-12)
    assert len(bars) == min(30, len(per_question))
    shown = [r for r in summary if r["pairsInDistribution"]]
    distribution = picture(driver, "#psr-distribution", shots, "psr-distribution")
    for row in shown:
        heights = [float(v) for v, in attributes(distribution, f"rect.bar[data-series='{row['learner']}']",
                                                 "data-value")]
        assert heights == pytest.approx([v for k, v in row.items() if k.startswith("psr ") and v is not None],
                                        abs=1e-12)
    notes = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".empty-distribution")]
    assert len(notes) == len(summary) - len(shown)

    # the Hasse diagram: each state's weight is the learners whose right answers are that state
    # of the learners who answered every question (a model run of a few questions has no pattern: apart)
    answers = kstp_json(graph, "query", "answers", "-p", f"dataset={dataset}")
    kinds = {r["learnerId"]: r["kind"] for r in kstp_json(graph, "query", "dataset_learners", "-p",
                                                           f"dataset={dataset}")}
    asked: dict[str, set] = {}
    for a in answers:
        asked.setdefault(a["learnerId"], set()).add(a["questionId"])
    everything = set().union(*asked.values())
    patterns: dict[str, set] = {learner: set() for learner, questions in asked.items() if questions == everything}
    for a in answers:
        if a["correct"] and a["learnerId"] in patterns:
            patterns[a["learnerId"]].add(a["questionId"].split(":", 1)[1])
    humans = {k: v for k, v in patterns.items() if kinds[k] == "human"}
    nodes = driver.find_elements(By.CSS_SELECTOR, "#hasse g.node")
    drawn = attributes(driver, "#hasse g.node", "data-state", "data-learners", "data-id", "data-models", "data-blim")
    assert len(drawn) == len(nodes)  # the same elements, in the same order
    weights = {state: int(learners) for state, learners, *_ in drawn}
    for state, weight in weights.items():  # the human learners: a model is counted apart
        assert weight == sum(p == set(state.split()) for p in humans.values()), state
    placed = int(driver.find_element(By.ID, "hasse-placed").text.replace(",", ""))
    off = int(driver.find_element(By.ID, "hasse-off").text.replace(",", ""))
    partial = int(driver.find_element(By.ID, "hasse-partial").text.replace(",", ""))
    assert sum(weights.values()) == placed and placed + off == len(humans)
    assert partial == sum(kinds[k] == "human" for k in asked) - len(humans)
    # the model that answered every question wrong: ringed and tagged in the empty state, counted apart
    assert int(driver.find_element(By.ID, "hasse-apart").text) == len(patterns) - len(humans) == 1
    ringed = driver.find_elements(By.CSS_SELECTOR, "#hasse g.node.apart")
    assert [(n.get_attribute("data-state"), n.get_attribute("data-models")) for n in ringed] == [("", "M1")]
    row = driver.find_element(By.CSS_SELECTOR, "#hasse-apart-table tbody tr")
    assert row.get_attribute("data-key") == f"model:{BLANK}" and row.find_element(By.TAG_NAME, "td").text == "M1"
    top = max(range(len(drawn)), key=lambda i: int(drawn[i][1]))
    busiest = nodes[top]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", busiest)
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", busiest)
    listed = driver.find_element(By.CSS_SELECTOR, f"#state-learners [data-node='{drawn[top][2]}']")
    assert listed.is_displayed() and len(listed.find_elements(By.TAG_NAME, "a")) == weights[drawn[top][0]]
    # the keyboard: a state takes the focus (Tab), Enter lists its learners as a click does
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    second = next(i for i in range(len(drawn)) if i != top and int(drawn[i][1]) > 0)
    other = nodes[second]
    assert other.get_attribute("tabindex") == "0"
    driver.execute_script("arguments[0].focus()", other)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    listed = driver.find_element(By.CSS_SELECTOR, f"#state-learners [data-node='{drawn[second][2]}']")
    assert listed.is_displayed() and "picked" in other.get_attribute("class").split()
    # "occupied states only": the states nobody is in and the whole diagram's edges hidden, the cover among the
    # occupied states shown, and back
    driver.execute_script("arguments[0].click()", driver.find_element(By.ID, "occupied-toggle"))
    empty = [n for n, (_, learners, _, models, _) in zip(nodes, drawn, strict=True) if learners == "0" and not models]
    assert not any(displayed(driver, empty))
    covers = driver.find_elements(By.CSS_SELECTOR, "#hasse path.edge.occupied-cover")
    assert covers and all(displayed(driver, covers))
    assert not any(displayed(driver, driver.find_elements(By.CSS_SELECTOR, "#hasse path.edge.full")))
    driver.execute_script("arguments[0].click()", driver.find_element(By.ID, "occupied-toggle"))
    assert not any(displayed(driver, covers))
    picture(driver, "#hasse", shots, "hasse")
    run_id = kstp_json(graph, "query", "blim_item_parameters", "-p", f"dataset={dataset}")[0]["runId"]
    fitted: dict[str, dict] = {}
    for row in kstp_json(graph, "query", "blim_states", "-p", f"runId={run_id}"):
        state = fitted.setdefault(row["stateId"], {"items": set(), "p": row["probability"]})
        if row["questionId"]:
            state["items"].add(row["questionId"].split(":", 1)[1])
    by_items = {frozenset(v["items"]): v["p"] for v in fitted.values()}
    shown = {state: blim for state, _, _, _, blim in drawn}
    # fitted on the space (kstp fit blim's default structure): every drawn state has its probability
    assert {frozenset(state.split()): float(p) for state, p in shown.items()} == pytest.approx(by_items, abs=1e-12)

    # the Q-matrix grid: a filled cell per (question, concept) link
    links = kstp_json(graph, "query", "question_concepts", "-p", f"dataset={dataset}")
    grid = picture(driver, "#qmatrix-grid", shots, "qmatrix")
    on = set(attributes(grid, "rect.cell[data-value='1']", "data-row", "data-column"))
    assert len(on) == len(links) and {q for q, _ in on} == {r["questionId"].split(":", 1)[1] for r in links}

    # BLIM: beta and eta per question with one standard error either side
    items = kstp_json(graph, "query", "blim_item_parameters", "-p", f"dataset={dataset}")
    rates = picture(driver, "#blim-rates", shots, "blim")
    betas = [float(v) for v, in attributes(rates, "rect.bar[data-series='careless β']", "data-value")]
    assert betas == pytest.approx([r["careless"] for r in items], abs=1e-12)
    errors = [float(v) for v, in attributes(rates, "line.whisker", "data-error")]
    assert sorted(errors) == pytest.approx(sorted(v for r in items for v in (r["carelessSe"], r["guessSe"])
                                                  if v is not None), abs=1e-12)
    picture(driver, "#blim-probabilities", shots, "blim-states")


def check_questions(driver, url: str, graph: str, shots: Path) -> dict:
    """Every question link of the dataset page opens the question's page, whose figures are the commands': the
    human learners who answered it and how many right (``kstp query answers``), its PSR as a target (``evaluate psr
    --per-question``'s row), the models' samples (``run_samples`` of each run); returns their figures."""
    import pandas as pd
    from selenium.webdriver.common.by import By

    driver.get(url + "dataset/probability_pks.html")
    links = sorted({a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "a.q")})
    assert len(links) == 12
    answers = kstp_json(graph, "query", "answers", "-p", "dataset=probability_pks")
    kinds = {r["learnerId"]: r["kind"] for r in kstp_json(graph, "query", "dataset_learners", "-p",
                                                           "dataset=probability_pks")}
    per_question = pd.read_csv(shots / "psr-out" / "psr_questions_probability_pks.csv").set_index("questionId")
    samples: dict[str, int] = {}
    for run in kstp_json(graph, "runs", "list"):
        if run["dataset"] == "probability_pks":
            for sample in kstp_json(graph, "query", "run_samples", "-p", f"runId={run['runId']}"):
                samples[sample["questionId"]] = samples.get(sample["questionId"], 0) + 1
    seen = {}
    for link in links:
        driver.get(link)
        question = driver.find_element(By.ID, "question-title").get_attribute("data-id")
        human = [a for a in answers if a["questionId"] == question and kinds[a["learnerId"]] == "human"]
        assert values(driver, "td.humans-answered") == [len(human)]
        assert values(driver, "td.humans-right")[0] == sum(bool(a["correct"]) for a in human)
        if question in per_question.index:
            macro = driver.find_element(By.CSS_SELECTOR, "#question-psr td[data-name='PSR macro'] .fig")
            assert float(macro.get_attribute("data-value")) == pytest.approx(per_question.loc[question, "psrMacro"],
                                                                             abs=1e-12)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#question-samples tr.sample")) == samples.get(question, 0)
        seen[f"question {question}"] = page_figures(driver)
    screenshot(driver, shots, "question")
    return seen


def check_violations(driver, url: str, graph: str, shots: Path) -> None:
    """The red edges: on a learner's drawing, kstp kst check's missing prerequisites of its state that it answered
    wrong; on frcsub's prerequisite drawing, the edges kstp validate prerequisites found contradicted (those inside
    a merged box of equally informative questions included)."""
    from selenium.webdriver.common.by import By

    def red(css: str) -> set[tuple[str, str]]:
        pairs = set()
        for e in driver.find_elements(By.CSS_SELECTOR, f"{css} path.edge.broken, {css} g.node.broken-inside"):
            pairs |= {tuple(p.split(">")) for p in e.get_attribute("data-pairs").split()}
        return pairs

    answers = kstp_json(graph, "query", "answers", "-p", "dataset=probability_pks")
    by: dict[str, dict] = {}
    for a in answers:
        by.setdefault(a["learnerId"], {})[a["questionId"]] = bool(a["correct"])
    from tests.explore.test_pages import check

    broken_learner = None
    for learner in sorted(by):
        if not learner.startswith("probability_pks:"):
            continue
        missing = check(graph, "probability_pks", [q for q, ok in by[learner].items() if ok])["missingPrerequisites"]
        wrong = {q for q, ok in by[learner].items() if not ok}
        want = {(p, q) for q, ps in missing.items() for p in ps if p in wrong}
        if want:
            broken_learner = learner
            break
    assert broken_learner is not None
    driver.get(url + f"learner/{slug(broken_learner)}.html")
    assert red("#structure-probability_pks") == want
    assert values(driver, ".broken-count") == [len(want)]
    picture(driver, "section.learner-dataset", shots, "violations")
    contradicted = {(r["fromId"], r["toId"]) for r in kstp_json(graph, "query", "contradicted_prerequisites", "-p",
                                                                 "dataset=frcsub")}
    driver.get(url + "dataset/frcsub.html")
    assert contradicted and red("#question-dag") == contradicted
    assert driver.find_elements(By.CSS_SELECTOR, "#question-dag g.node.broken-inside")  # Item04 = Item20's own
    picture(driver, "#question-dag", shots, "contradicted")


#: Least contrast a text keeps against what it is drawn on (WCAG's ratio; 3 is its floor for large text).
CONTRAST = 3.0


def check_readable(driver, url: str, shots: Path, runs: dict) -> None:
    """Pages readable at any size: at 1,400 px, in a 420-px window (no sideways scroll of the page, the Hasse
    diagram inside it) and in the browser's dark mode, no text has a contrast under :data:`CONTRAST` against
    its rendered background; a screenshot of each."""
    from selenium.webdriver.common.by import By

    script = (Path(__file__).parent / "contrast.js").read_text()
    pages = {"overview": "index.html", "dataset": "dataset/probability_pks.html",
             "learner": f"learner/{slug('model:' + MODEL)}.html", "run": f"run/{slug(runs['answers'])}.html",
             "question": f"question/{slug('probability_pks:b101')}.html"}
    try:
        for mode, width in (("light", 1400), ("light", 420), ("dark", 1400)):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
                {"name": "prefers-color-scheme", "value": mode}]})
            driver.set_window_size(width, 1000)
            for name, path in pages.items():
                driver.get(url + path)
                result = driver.execute_script(script, CONTRAST)
                assert result["checked"] > 20 and result["failures"] == [], (mode, width, name, result["failures"])
                if width < 700:
                    assert driver.execute_script("return document.documentElement.scrollWidth <= innerWidth + 1"), \
                        (name, "scrolls sideways at 420 px")
                    if name == "dataset":
                        box = driver.find_element(By.CSS_SELECTOR, "#hasse svg").rect
                        assert box["x"] >= 0 and box["x"] + box["width"] <= 420, box
                suffix = "" if (mode, width) == ("light", 1400) else f"-{mode if mode == 'dark' else width}"
                if suffix or name == "dataset":
                    screenshot(driver, shots, f"{name}{suffix}", width)
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        driver.set_window_size(1400, 1000)


def walk(driver, url: str, graph: str, runs: dict, shots: Path, site: Path | None) -> dict:
    """Every page kind in the browser, checked against the commands; returns each page's figures."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    seen: dict[str, list] = {}
    psr_rows = kstp_json(graph, "evaluate", "psr", "--dataset", "probability_pks", "--dataset", "frcsub")
    psr = {r["dataset"]: r for r in psr_rows if r["learner"] == "human learners"}
    listed = {r["runId"]: r for r in kstp_json(graph, "runs", "list")}

    # overview: the same numbers as kstp evaluate psr and kstp runs list
    driver.get(url)
    assert driver.title.startswith("Overview")
    row = 'tr[data-key="frcsub"]'
    assert values(driver, f"#datasets {row} td.psrMicro") == [pytest.approx(psr["frcsub"]["psrMicro"], abs=1e-12)]
    assert values(driver, f"#datasets {row} td.accuracy") == [pytest.approx(psr["frcsub"]["accuracy"], abs=1e-12)]
    assert driver.find_element(By.CSS_SELECTOR, f"#datasets {row} td.psrMacro").text == \
        f"{psr['frcsub']['psrMacro']:.3f}"
    headlines = {}
    for row_element in driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr"):
        cell = row_element.find_element(By.CSS_SELECTOR, "td.headline")
        headlines[row_element.get_attribute("data-key")] = [json.loads(v) for v, in attributes(cell, ".fig",
                                                                                                "data-value")]
    assert headlines == {run_id: [] if run["figure"] is None else [run["value"]] for run_id, run in listed.items()}
    # each run's PSR is its model's on the run's dataset (two datasets evaluated): evaluate psr's rows
    for run_id, dataset in ((runs["answers"], "probability_pks"), (runs["second"], "frcsub")):
        row = next(r for r in psr_rows if r["dataset"] == dataset and r["learner"] == f"model:{MODEL}")
        cell = next(r for r in driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
                    if r.get_attribute("data-key") == run_id).find_element(By.CSS_SELECTOR, "td.figures")
        shown = {k.text.split()[0]: json.loads(k.find_element(By.CSS_SELECTOR, ".fig").get_attribute("data-value"))
                 for k in cell.find_elements(By.CSS_SELECTOR, ".kv") if k.text.startswith("psr")}
        assert shown == {k: None if row[k] is None else pytest.approx(row[k], abs=1e-12)
                         for k in ("psrMicro", "psrMacro")}, dataset
    seen["overview"] = page_figures(driver)
    screenshot(driver, shots, "overview")

    # overview -> dataset: the knowledge space count of kstp kst space, the Hasse diagram's fringes on hover
    driver.find_element(By.CSS_SELECTOR, "#datasets a[href$='dataset/probability_pks.html']").click()
    assert driver.title.startswith("Dataset probability_pks")
    space = kstp_json(graph, "kst", "space", "--dataset", "probability_pks")
    assert driver.find_element(By.ID, "space-states").text.replace(",", "") == str(space["states"])
    enumerated = {tuple(s["state"]): s for s in kstp_json(graph, "kst", "space", "--dataset", "probability_pks",
                                                          "--enumerate")["states"]}
    nodes = driver.find_elements(By.CSS_SELECTOR, "#hasse g.node")
    node = nodes[next(i for i, (state, outer) in enumerate(attributes(driver, "#hasse g.node", "data-state",
                                                                      "data-outer")) if state and outer)]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", node)  # not under the sticky panel
    ActionChains(driver).move_to_element(node).perform()
    state = tuple(f"probability_pks:{q}" for q in (node.get_attribute("data-state") or "").split())
    info = driver.find_element(By.ID, "state-info").text
    assert f"outer fringe: {', '.join(q.split(':')[1] for q in enumerated[state]['outerFringe']) or '-'}" in info
    assert "neighbour-outer" in " ".join(c for c, in attributes(driver, "#hasse g.node", "class"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#blim-items tbody tr")) == 12
    seen["dataset"] = page_figures(driver)
    screenshot(driver, shots, "dataset")
    check_pictures(driver, graph, "probability_pks", shots, shots / "psr-out")

    # dataset -> learner: BLIM's most likely state and next steps as kstp kst next-steps prints them
    driver.find_element(By.CSS_SELECTOR, "#learner-table a[href*='probability_pks~3A']").click()
    learner = driver.find_element(By.TAG_NAME, "h1").text.split()[1]
    steps = kstp_json(graph, "kst", "next-steps", "--dataset", "probability_pks", "--learner", learner)["learners"][0]
    assert driver.find_element(By.CSS_SELECTOR, ".next-steps").text == (", ".join(steps["nextSteps"]) or "none")
    assert values(driver, ".posterior") == [pytest.approx(steps["posterior"], abs=1e-12)]
    seen["learner"] = page_figures(driver)
    screenshot(driver, shots, "learner")
    back = driver.current_url

    # learner -> the model beside it: their PSR as evaluate psr's per-learner CSV, where their states differ
    import pandas as pd

    next(a for a in driver.find_elements(By.CSS_SELECTOR, "a.compare-link") if a.text == f"model:{MODEL}").click()
    assert driver.title.startswith("Compare")
    csv = pd.read_csv(shots / "psr-out" / "psr_learners_probability_pks.csv").set_index("learnerId")
    for row in driver.find_elements(By.CSS_SELECTOR, "table.compare-figures tbody tr"):
        key = row.get_attribute("data-key")  # the model's id holds quotes: read the row, not a selector of it
        micro = [json.loads(v) for v, in attributes(row, "td.psrMicro .fig", "data-value")]
        want = csv.loc[key, "psrMicro"]
        assert micro == ([None] if pd.isna(want) else [pytest.approx(want, abs=1e-12)])
    a_id = driver.find_element(By.CSS_SELECTOR, "#compare-a a").text
    b_id = driver.find_element(By.CSS_SELECTOR, "#compare-b a").text
    right = {who: {r["questionId"] for r in kstp_json(graph, "query", "learner_answers", "-p", f"learnerId={who}")
                   if r["correct"]} for who in (a_id, b_id)}
    assert f"model:{MODEL}" in (a_id, b_id)
    assert int(driver.find_element(By.CSS_SELECTOR, ".only-a-count").text) == len(right[a_id] - right[b_id])
    assert {e.get_attribute("textContent") for e in driver.find_elements(
        By.CSS_SELECTOR, "table.differ td:first-child")} == right[a_id] ^ right[b_id]
    picture(driver, "section.compared", shots, "compare")
    driver.get(back)

    # the model learner: which run each answer came from -> run -> sample
    driver.get(url + "dataset/probability_pks.html?sort=kind&desc=1")
    driver.find_element(By.CSS_SELECTOR, f"#learner-table a[href$='{slug('model:' + MODEL)}.html']").click()
    assert MODEL in driver.find_element(By.TAG_NAME, "h1").text
    blim_run = kstp_json(graph, "query", "blim_item_parameters", "-p", "dataset=probability_pks")[0]["runId"]
    assert driver.find_element(By.CSS_SELECTOR, "section[data-dataset='probability_pks'] .nearest-why").text.startswith(
        f"BLIM fit {blim_run} of probability_pks has no state for model:{MODEL}: it assesses the human learners "
        "who answered all 12 questions")
    driver.find_element(By.CSS_SELECTOR, f"table.answers a[href$='{slug(runs['answers'])}.html']").click()
    assert driver.find_element(By.ID, "run-id").text == runs["answers"]
    assert len(driver.find_elements(By.CSS_SELECTOR, "#samples tr.sample")) == 4
    driver.find_element(By.CSS_SELECTOR, "a[data-filter-name='wrong']").click()
    assert len(driver.find_elements(By.CSS_SELECTOR, "#samples tr.sample")) == 3  # only b101's gold is 0.40
    driver.find_element(By.CSS_SELECTOR, "a[data-filter-name='all']").click()
    strip = picture(driver, "#run-strip", shots, "run-strip")
    listed_samples = kstp_json(graph, "query", "run_samples", "-p", f"runId={runs['answers']}")
    assert {c: float(v) for c, v in attributes(strip, "rect.bar[data-series^='this run']", "data-category",
                                               "data-value")} == {
        s["localId"]: float(bool(s["correct"])) for s in listed_samples}  # one sample a question
    counts = kstp_json(graph, "query", "question_answer_counts", "-p", "dataset=probability_pks")
    share = {r["questionId"].split(":", 1)[1]: r["correct"] / r["answered"] for r in counts if r["kind"] == "human"}
    assert {c: float(v) for c, v in attributes(strip, "rect.bar[data-series^='human']", "data-category",
                                               "data-value")} == pytest.approx(
        {s["localId"]: share[s["localId"]] for s in listed_samples})  # beside the humans' share right
    seen["run"] = page_figures(driver)
    screenshot(driver, shots, "run")
    driver.find_element(By.LINK_TEXT, "open").click()
    assert driver.find_element(By.ID, "completion").text == COMPLETION
    first = kstp_json(graph, "query", "run_samples", "-p", f"runId={runs['answers']}")[0]
    assert (first["extracted"], first["verdict"]) == ("2/5", "correct")  # 0.40 read as a number, equal to the gold
    assert driver.find_element(By.ID, "extracted").text == "2/5" and driver.find_element(By.ID, "verdict").text == \
        "correct"
    assert driver.execute_script("return window.__pwned === undefined") and driver.title.startswith("Sample")
    assert "Problem:" in driver.find_element(By.CSS_SELECTOR, ".message.user pre").text
    seen["sample"] = page_figures(driver)
    screenshot(driver, shots, "sample")

    # next-step and DAG-MATH samples: fringes side by side, the CoT DAG with its unclosed steps
    driver.get(url + f"run/{slug(runs['nextstep'])}.html")
    driver.find_element(By.LINK_TEXT, "open").click()
    assert driver.find_elements(By.CSS_SELECTOR, "#fringes .item.hit") or \
        driver.find_element(By.CSS_SELECTOR, "#fringes").text.strip() == "proposed reference (outer fringe)"
    driver.get(url + f"run/{slug('cot:gold:logs')}.html")
    driver.find_element(By.LINK_TEXT, "open").click()
    unclosed = attributes(driver, "#cot g.node.unclosed", "data-id")
    assert sorted(int(i) for i, in unclosed) == [1, 6, 8, 13, 16, 18, 26, 30]  # paper 4, App. B
    screenshot(driver, shots, "cot")

    # curriculum: search, then a concept; a click on a node moves the graph to that concept
    driver.get(url)
    driver.find_element(By.CSS_SELECTOR, "#frameworks a[href$='framework/ccss.html']").click()
    driver.find_element(By.ID, "search").send_keys("3.OA.D")
    rows = driver.find_elements(By.CSS_SELECTOR, "#concepts tr.concept")
    shown = [r for r, visible in zip(rows, displayed(driver, rows), strict=True) if visible]
    assert [r.text.split()[1] for r in shown] == ["3.OA.D.8", "3.OA.D.9"]
    seen["framework"] = page_figures(driver)
    screenshot(driver, shots, "framework")
    shown[0].find_element(By.TAG_NAME, "a").click()
    depth = {r["conceptId"]: r["depth"] for r in kstp_json(graph, "kst", "depth", "--framework", "ccss")}
    assert driver.find_element(By.ID, "concept-title").get_attribute("data-id") == "ccss:142"
    assert values(driver, "p")[0] == depth["ccss:142"]
    seen["concept"] = page_figures(driver)
    screenshot(driver, shots, "concept")
    target = driver.find_element(By.CSS_SELECTOR, "#neighbourhood g.node:not(.focus)")
    moved_to = target.get_attribute("data-id")
    target.find_element(By.XPATH, "..").click()
    assert driver.find_element(By.ID, "concept-title").get_attribute("data-id") == moved_to != "ccss:142"
    assert driver.find_element(By.CSS_SELECTOR, "#neighbourhood g.node.focus").get_attribute("data-id") == moved_to

    # query: a registered query as a form, a write refused in one line
    driver.get(url + "query.html")
    box = driver.find_element(By.ID, "cypher")
    box.send_keys("MATCH (c:Concept {id: 'ccss:142'}) SET c.code = 'x' RETURN c")
    driver.find_element(By.CSS_SELECTOR, "#cypher-form button").click()
    # the form's GET loads a new page, which click() need not wait for (pages are built off the event loop)
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    error = WebDriverWait(driver, 30).until(expected_conditions.presence_of_element_located((By.ID, "cypher-error")))
    assert error.text.startswith("refused: SET writes to the graph")
    screenshot(driver, shots, "query")
    # the README's example with local ids: kstp query's fringe of {Item06, Item08}, not the empty state's
    want = [r["questionId"] for r in kstp_json(graph, "query", "outer_fringe", "-p", "dataset=frcsub", "-p",
                                               "questionIds=Item06,Item08")]
    driver.get(url + "query/outer_fringe.html?run=1&dataset=frcsub&questionIds=Item06%2CItem08")
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "table.rows tbody td")] == want
    driver.get(url + "query/outer_fringe.html?run=1&dataset=frcsub&questionIds=Item06%2CItem99")
    assert driver.find_element(By.ID, "query-error").text.startswith("outer_fringe: dataset frcsub has no question "
                                                                      "Item99")

    seen.update(check_questions(driver, url, graph, shots))
    check_violations(driver, url, graph, shots)
    check_readable(driver, url, shots, runs)

    if site is None:
        return seen
    # the export opens from disk, with no server
    driver.get(site.as_uri() + "/index.html")
    driver.find_element(By.CSS_SELECTOR, "#datasets a[href$='dataset/frcsub.html']").click()
    assert driver.title.startswith("Dataset frcsub") and driver.current_url.startswith("file://")
    assert driver.find_elements(By.CSS_SELECTOR, "#hasse g.node")
    driver.find_element(By.CSS_SELECTOR, "#learner-table tbody tr td a").click()
    assert driver.title.startswith("Learner") and driver.current_url.startswith("file://")
    return seen


@pytest.mark.usefixtures("sigint_to_python")
def test_browser_walkthrough_on_both_engines(browser, data_root, neo4j_server, tmp_path, monkeypatch):
    seen = {}
    for engine in ("ladybug", "neo4j"):
        graph = f"ladybug:{tmp_path / 'graph'}"
        if engine == "neo4j":
            with connect_neo4j(neo4j_server) as emptied:
                emptied.reset()
            monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
            monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
            graph = neo4j_server.location
        runs = populate_demo(graph, data_root, tmp_path / engine)
        site = None
        if engine == "ladybug":  # the export's pages are the server's (tests/explore/test_pages.py: both engines)
            site = tmp_path / engine / "site"
            exported = kstp_json(graph, "explore", "--export", site)
            assert exported["pages"] > 1500 and exported["skipped"] == []
        server = Served(graph, dict(os.environ))
        try:
            seen[engine] = walk(browser, server.url, graph, runs, tmp_path / "screenshots" / engine, site)
        finally:
            status, said = server.stop()
        assert status == 130 and "Interrupted: kstp explore stopped; it wrote nothing" in said
        assert "Traceback" not in said
        monkeypatch.delenv("KSTP_EXPLORE_SCREENSHOTS", raising=False)  # the README shows the embedded graph's
    for kind in seen["ladybug"]:
        assert seen["neo4j"][kind].keys() == seen["ladybug"][kind].keys(), kind
        for key, figures in seen["ladybug"][kind].items():
            assert seen["neo4j"][kind][key] == pytest.approx(figures, abs=1e-9, nan_ok=True), (kind, key)
