"""Scaffolding gain (paper 1, NB2) end to end with the tiny local model and the bundled
MiniLM; the common subset, exemplar selection and SG arithmetic by hand.

The hand-made dataset ``sc`` (concepts A -> B, C alone; strict Eq. 1 prerequisites):

    p1, p2, p3 {A}   t1 {A, B}   t2 {B}   t3 {A, B}   c1 {C} (multiple choice)

    Pre(t1) = Pre(t2) = Pre(t3) = {p1, p2, p3}; no other question has a prerequisite.
    same-skill: t1 -> p1 p2 p3 t2 t3 (5), t2 -> t1 t3 (2), t3 -> p1 p2 p3 t1 t2 (5)
    common subset (k = 3): t1, t3   (t2 has only 2 same-skill questions)
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import ConfigError, UnknownIdError
from kstp.evaluators import scaffolding
from kstp.graph.structures import derive_question_prerequisites
from kstp.inference.backend import Completion, RejectedRequestError, Sampling, get_backend, prompt_hash
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.embeddings import get_embedding_model
from kstp.loaders import items
from kstp.loaders.standards import load_standards
from tests.endpoint import FakeEndpoint

ITEMS = [
    {"id": "p1", "text": "What is 2 + 2?", "answer": "4", "type": "number", "concepts": ["A"],
     "solution": "Two and two make four."},
    {"id": "p2", "text": "What is 3 + 1?", "answer": "4", "type": "number", "concepts": ["A"]},
    {"id": "p3", "text": "What is 5 + 2?", "answer": "7", "type": "number", "concepts": ["A"]},
    {"id": "t1", "text": "What is 3 times 4?", "answer": "12", "type": "number", "concepts": ["A", "B"]},
    {"id": "t2", "text": "What is 6 times 2?", "answer": "12", "type": "number", "concepts": ["B"]},
    {"id": "t3", "text": "What is 2 times 5?", "answer": "10", "type": "number", "concepts": ["A", "B"]},
    {"id": "c1", "text": "Which is a square? (A) circle (B) square", "answer": "B", "type": "choice",
     "concepts": ["C"]},
]


@pytest.fixture
def sc(store, tmp_path):
    (tmp_path / "sc.csv").write_text("id,code,description\nA,A,adding\nB,B,multiplying\nC,C,shapes\n")
    (tmp_path / "sc_edges.csv").write_text("from_id,to_id\nA,B\n")
    (tmp_path / "sc.jsonl").write_text("\n".join(json.dumps(i) for i in ITEMS) + "\n")
    load_standards(store, tmp_path / "sc.csv", tmp_path / "sc_edges.csv", "sc")
    items.write_items(store, items.read_items_jsonl(tmp_path / "sc.jsonl", "sc", "sc",
                                                    items.framework_concepts(store, "sc")))
    derive_question_prerequisites(store, "sc", "strict")
    return store


def ids(*names):
    return [f"sc:{n}" for n in names]


class Echo:
    """A backend that answers every prompt with ``\\boxed{0}`` (the tests here check the prompts)."""

    name, model = "echo", "echo"

    def generate(self, prompts, sampling, samples=None, progress=None):
        return [[Completion(i, 42, text="\\boxed{0}", finish_reason="stop") for i in wanted] for wanted in samples]

    def close(self):
        pass


class Letter:
    """A backend that answers every prompt with ``The answer is C.``."""

    name, model = "letter", "letter"

    def generate(self, prompts, sampling, samples=None, progress=None):
        return [[Completion(i, 42, text="The answer is C.", finish_reason="stop") for i in wanted]
                for wanted in samples]

    def close(self):
        pass


def test_a_letter_past_the_options_is_no_answer(store, tmp_path):
    """A multiple-choice target is graded with its option count, as ``evaluate answers`` grades it:
    t3 offers (A) and (B), so a reply naming C found no answer (it was read as the wrong option C)."""
    choice = {**ITEMS[5], "text": "What is 2 times 5? (A) 10 (B) 12", "answer": "A", "type": "choice"}
    (tmp_path / "sc.csv").write_text("id,code,description\nA,A,adding\nB,B,multiplying\nC,C,shapes\n")
    (tmp_path / "sc_edges.csv").write_text("from_id,to_id\nA,B\n")
    (tmp_path / "sc.jsonl").write_text("\n".join(json.dumps(i) for i in [*ITEMS[:5], choice, ITEMS[6]]) + "\n")
    load_standards(store, tmp_path / "sc.csv", tmp_path / "sc_edges.csv", "sc")
    items.write_items(store, items.read_items_jsonl(tmp_path / "sc.jsonl", "sc", "sc",
                                                    items.framework_concepts(store, "sc")))
    derive_question_prerequisites(store, "sc", "strict")
    result = scaffolding.evaluate(store, Letter(), "sc", Sampling(), strategies=("none",), seed=1)
    graded = store.frame("run_responses", {"runId": result.run_id}).set_index("questionId")
    assert graded.loc["sc:t3", ["extracted", "verdict", "correct"]].tolist() == [None, "no answer found", False]


def test_common_subset_by_hand(sc):
    pool = sc.frame("exemplar_pool", {"dataset": "sc"})["questionId"].tolist()
    concepts = {}
    for q, c in sc.frame("question_concepts", {"dataset": "sc"}).itertuples(index=False):
        concepts.setdefault(q, set()).add(c)
    edges = list(sc.frame("question_prerequisite_edges", {"dataset": "sc"})[["fromId", "toId"]]
                 .itertuples(index=False, name=None))
    assert sorted(edges) == sorted((p, t) for p in ids("p1", "p2", "p3") for t in ids("t1", "t2", "t3"))
    assert scaffolding.common_subset(pool, concepts, edges, 3) == ids("t1", "t3")
    assert scaffolding.common_subset(pool, concepts, edges, 2) == ids("t1", "t2", "t3")
    assert scaffolding.common_subset(pool, concepts, edges, 4) == []


def test_scaffolding_gain_hand_made_numbers():
    # 5 targets; none right on q1 q2; prerequisite on q1 q2 q3 q4; random on q1 only; similarity on q1 q2.
    questions = ["q1", "q2", "q3", "q4", "q5"]
    right = {"none": {"q1", "q2"}, "prerequisite": {"q1", "q2", "q3", "q4"}, "random": {"q1"},
             "similarity": {"q1", "q2"}}
    assert scaffolding.scaffolding_gain(right, questions) == {"prerequisite": 0.4, "random": -0.2,
                                                              "similarity": 0.0}
    rows = [(q, s, 0, q in right[s]) for s in right for q in questions]
    rows += [("q5", "prerequisite", 1, True)]  # a second sample never counts
    table = scaffolding.aggregate(pd.DataFrame(rows, columns=["questionId", "strategy", "sampleIndex", "correct"]))
    assert table.index.tolist() == ["none", "random", "similarity", "prerequisite"]
    assert table["correct"].tolist() == [2, 1, 2, 4]
    assert table["accuracy"].tolist() == [0.4, 0.2, 0.4, 0.8]
    # 0/1 verdicts over |Q| = 5: sd (ddof 1) / sqrt(5) = sqrt(p (1 - p) / 4)
    assert table["accuracyStderr"].tolist() == pytest.approx([(p * (1 - p) / 4) ** 0.5 for p in (0.4, 0.2, 0.4, 0.8)])
    # paired with none: random 0, -1, 0, 0, 0 (sd sqrt(0.2)); prerequisite 0, 0, 1, 1, 0 (sd sqrt(0.3)); in points
    assert table.loc[["random", "prerequisite"], "scaffoldingGainPointsStderr"].tolist() == pytest.approx(
        [100 * 0.2 ** 0.5 / 5 ** 0.5, 100 * 0.3 ** 0.5 / 5 ** 0.5])
    # SG in percentage points, as §5.2 prints it: (4 - 2)/5 = +40, (1 - 2)/5 = -20, (2 - 2)/5 = 0
    assert table["scaffoldingGainPoints"].tolist()[1:] == pytest.approx([-20.0, 0.0, 40.0])
    assert np.isnan(table.loc["none", "scaffoldingGainPoints"])
    with pytest.raises(ConfigError, match="baseline"):
        scaffolding.scaffolding_gain({"random": set()}, questions)


def test_scaffolding_gain_in_points_on_the_scale_of_the_paper():
    # 250 targets; 120 right without context, 117 with prerequisites: (117 - 120) / 250 = -0.012 of the
    # targets, printed -1.2 points (the scale of §5.2's SG = -0.56, which is not -56 %)
    questions = [f"q{i}" for i in range(250)]
    rows = [(q, "none", 0, i < 120) for i, q in enumerate(questions)]
    rows += [(q, "prerequisite", 0, i < 117) for i, q in enumerate(questions)]
    table = scaffolding.aggregate(pd.DataFrame(rows, columns=["questionId", "strategy", "sampleIndex", "correct"]))
    assert table.loc["prerequisite", "scaffoldingGainPoints"] == pytest.approx(-1.2)
    assert table.loc["prerequisite", "accuracy"] == pytest.approx(0.468)
    assert scaffolding.scaffolding_gain({"none": set(questions[:120]), "prerequisite": set(questions[:117])},
                                        questions) == {"prerequisite": pytest.approx(-0.012)}


def test_figure3_bars_and_no_context_line_by_hand(tmp_path):
    """Two models on 4 targets: m1 right on 1 without context, 3 with prerequisites, 2 at random;
    m2 right on 2 without context and 1 with prerequisites (no random run)."""
    from kstp.reports.plots import bars_with_baseline

    def table(right):
        rows = [(q, s, 0, q in right[s]) for s in right for q in ("q1", "q2", "q3", "q4")]
        return scaffolding.aggregate(pd.DataFrame(rows, columns=["questionId", "strategy", "sampleIndex", "correct"]))

    tables = {"m1": table({"none": {"q1"}, "random": {"q1", "q2"}, "prerequisite": {"q1", "q2", "q3"}}),
              "m2": table({"none": {"q1", "q2"}, "prerequisite": {"q4"}})}
    bars, line = scaffolding.figure3(tables)
    assert bars.columns.tolist() == ["random", "prerequisite"]  # STRATEGIES order, 'none' is the line
    assert bars.loc["m1"].tolist() == [0.5, 0.75]
    assert bars.loc["m2", "prerequisite"] == 0.25 and np.isnan(bars.loc["m2", "random"])
    assert line.to_dict() == {"m1": 0.25, "m2": 0.5}
    png = bars_with_baseline(bars, line, tmp_path / "f3.png", "Figure 3", "accuracy")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_questions_without_a_concept_are_never_exemplars(store, tmp_path):
    """Appendix B: u1 (a number question without a concept) is left out of the random pool,
    so t1's random exemplars are drawn from the five other annotated number questions."""
    unannotated = {"id": "u1", "text": "What is 9 - 1?", "answer": "8", "type": "number"}
    (tmp_path / "sc.csv").write_text("id,code,description\nA,A,adding\nB,B,multiplying\nC,C,shapes\n")
    (tmp_path / "sc_edges.csv").write_text("from_id,to_id\nA,B\n")
    (tmp_path / "sc.jsonl").write_text("\n".join(json.dumps(i) for i in [*ITEMS, unannotated]) + "\n")
    load_standards(store, tmp_path / "sc.csv", tmp_path / "sc_edges.csv", "sc")
    items.write_items(store, items.read_items_jsonl(tmp_path / "sc.jsonl", "sc", "sc",
                                                    items.framework_concepts(store, "sc")))
    derive_question_prerequisites(store, "sc", "strict")

    result = scaffolding.evaluate(store, Echo(), "sc", Sampling(), strategies=("none", "random"), seed=1)
    rows = result.responses
    shown = {q: list(e) for q, s, e in zip(rows["questionId"], rows["strategy"], rows["exemplars"], strict=True)
             if s == "random"}
    annotated = [q for q in ids("p1", "p2", "p3", "t2", "t3")]
    assert shown["sc:t1"] == scaffolding.select_exemplars("random", "sc:t1", annotated, 3, 1)
    assert shown["sc:t1"] != scaffolding.select_exemplars("random", "sc:t1", [*annotated, "sc:u1"], 3, 1)
    assert not any("sc:u1" in e for e in shown.values())
    assert "sc:u1" not in result.questions


def test_select_exemplars_is_seeded_and_never_the_target():
    pool = [f"q{i}" for i in range(10)]
    first = scaffolding.select_exemplars("same-skill", "t", pool, 3, seed=7)
    assert first == scaffolding.select_exemplars("same-skill", "t", pool, 3, seed=7)
    assert len(set(first)) == 3 and set(first) <= set(pool)
    assert scaffolding.select_exemplars("prerequisite", "t", ["a", "b"], 3) in (["a", "b"], ["b", "a"])
    with pytest.raises(ConfigError, match="unknown exemplar strategy 'prereq'"):
        scaffolding.select_exemplars("prereq", "t", pool)


def test_evaluate_refuses_without_prerequisites(store, tmp_path):
    (tmp_path / "x.jsonl").write_text('{"id": "a", "text": "1+1?", "answer": "2"}\n')
    items.write_items(store, items.read_items_jsonl(tmp_path / "x.jsonl", "x", None, set()))
    with pytest.raises(UnknownIdError, match="derive question prerequisites first"):
        scaffolding.evaluate(store, None, "x", Sampling(), strategies=("none", "prerequisite"))


def _over_http(sc, server, retries=5):
    backend = OpenAIBackend("m", base_url=server.base_url, retries=retries, max_wait=0.05, concurrency=1)
    return scaffolding.evaluate(sc, backend, "sc", Sampling(max_tokens=8), strategies=["none"], k=3)


def test_a_rejected_request_stops_the_run_and_stores_nothing(sc):
    with FakeEndpoint([401]) as server:  # t1 and t3 under "none": two requests
        with pytest.raises(RejectedRequestError, match="HTTP 401: 'status 401'; check the API key"):
            _over_http(sc, server)
        [run] = sc.run("runs_of", {"evaluator": "scaffolding", "model": "m", "dataset": "sc"})
        assert run["status"] == "failed" and sc.frame("scaffolding_responses", {"runId": run["runId"]}).empty
        fixed = _over_http(sc, server)
    assert (fixed.run_id, fixed.generated, fixed.pending, len(fixed.responses)) == (run["runId"], 2, 0, 2)


def test_exhausted_retries_leave_the_run_incomplete_for_the_next(sc):
    with FakeEndpoint([503, 503]) as server:  # t1's two attempts
        first = _over_http(sc, server, retries=2)
        [run] = sc.run("runs_of", {"evaluator": "scaffolding", "model": "m", "dataset": "sc"})
        assert (first.generated, first.pending, run["status"]) == (1, 1, "incomplete")
        assert first.responses["questionId"].tolist() == ids("t3")  # nothing stored for t1
        again = _over_http(sc, server, retries=2)
    assert (again.generated, again.pending, sorted(again.responses["questionId"])) == (1, 0, ids("t1", "t3"))


def test_evaluate_end_to_end_with_local_model(sc):
    minilm = get_embedding_model("minilm")
    sampling = Sampling(max_tokens=12, seed=42)
    backend = get_backend("local", "smollm2", threads=1, context=1024)
    try:
        result = scaffolding.evaluate(sc, backend, "sc", sampling, embedding_model=minilm, seed=5)
        again = scaffolding.evaluate(sc, backend, "sc", sampling, embedding_model=minilm, seed=5)
    finally:
        backend.close()
    assert result.questions == ids("t1", "t3")
    assert (result.requested, result.generated, result.resumed) == (10, 10, False)
    assert (again.generated, again.resumed, again.run_id) == (0, True, result.run_id)
    rows = sc.frame("scaffolding_responses", {"runId": result.run_id})
    assert len(rows) == 10 and rows["text"].notna().all()
    shown = {(q, s): list(e) if e is not None else [] for q, s, e in
             zip(rows["questionId"], rows["strategy"], rows["exemplars"], strict=True)}
    # the stored exemplar ids are those the seeded selection picks from each strategy's candidates
    same_skill = {"sc:t1": ids("p1", "p2", "p3", "t2", "t3"), "sc:t3": ids("p1", "p2", "p3", "t1", "t2")}
    number_type = ids("p1", "p2", "p3", "t1", "t2", "t3")
    for t in ids("t1", "t3"):
        assert shown[(t, "none")] == []
        assert sorted(shown[(t, "prerequisite")]) == ids("p1", "p2", "p3")
        assert shown[(t, "prerequisite")] == scaffolding.select_exemplars("prerequisite", t, ids("p1", "p2", "p3"),
                                                                          3, 5)
        assert shown[(t, "same-skill")] == scaffolding.select_exemplars("same-skill", t, same_skill[t], 3, 5)
        assert shown[(t, "random")] == scaffolding.select_exemplars(
            "random", t, [q for q in number_type if q != t], 3, 5)
    # similarity: the 3 nearest by MiniLM cosine, computed here from the texts
    texts = {f"sc:{i['id']}": i["text"] for i in ITEMS}
    order = list(texts)
    vectors = minilm.encode([texts[q] for q in order])
    for t in ids("t1", "t3"):
        sims = {q: float(vectors[order.index(t)] @ vectors[order.index(q)]) for q in order if q != t}
        assert shown[(t, "similarity")] == sorted(sims, key=lambda q: (-sims[q], q))[:3]
    pool = sc.frame("exemplar_pool", {"dataset": "sc"})
    assert set(pool["embeddingModel"]) == {"minilm"} and {len(v) for v in pool["embedding"]} == {384}
    # the prompt shows problem, solution and answer of each exemplar, then the target
    one = rows[(rows["questionId"] == "sc:t1") & (rows["strategy"] == "prerequisite")].iloc[0]
    hashes = sc.frame("run_responses", {"runId": result.run_id}).set_index("responseId")["promptHash"]
    solutions = {"sc:p1": "Two and two make four."}
    answers = {f"sc:{i['id']}": i["answer"] for i in ITEMS}
    chat = scaffolding.build_prompt(texts["sc:t1"], [scaffolding.Exemplar(q, texts[q], answers[q], solutions.get(q))
                                                     for q in one["exemplars"]])
    assert "Solution: Two and two make four.\nAnswer: \\boxed{4}" in chat[1]["content"]
    assert hashes[one["responseId"]] == prompt_hash(chat)
    # SG from the stored grades, by hand
    correct = {s: {q for q, ok in zip(g["questionId"], g["correct"], strict=True) if ok}
               for s, g in rows.groupby("strategy")}
    table = result.table()
    for s in scaffolding.STRATEGIES[1:]:
        assert table.loc[s, "scaffoldingGainPoints"] == pytest.approx(50 * (len(correct[s]) - len(correct["none"])))
    assert table["questions"].tolist() == [2] * 5


def test_cli_evaluate_scaffolding_on_real_data(tmp_path, data_root, graph_location):
    """frcsub, prerequisite exemplars only: table, JSON, CSV and the Figure 3 chart; a re-run resumes."""
    graph = ["--graph", graph_location]
    folder = data_root / "responses/frcsub"

    def kstp(*args):
        return CliRunner().invoke(cli, [*graph, *map(str, args)])

    assert kstp("ingest", "items", folder / "items.csv", "--dataset", "frcsub", "--qmatrix",
                folder / "qmatrix.csv").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "frcsub", "--rule", "reflexive").exit_code == 0
    args = ["evaluate", "scaffolding", "--dataset", "frcsub", "--model", "smollm2", "--backend", "local",
            "--strategy", "prerequisite", "--limit", "2", "--gen-kwargs", "max_tokens=8", "--out", tmp_path / "out"]
    result = kstp(*args, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["questions"], summary["generatedNow"]) == (2, 4)
    # frcsub has no solutions: said on stderr, 0 in the JSON and the CSV
    assert summary["exemplarsWithSolution"] == 0 and summary["prompt"] == "kstp"
    assert "note: no exemplar shown has a solution" in result.stderr
    assert [row["strategy"] for row in summary["strategies"]] == ["none", "prerequisite"]
    table = pd.read_csv(tmp_path / "out/scaffolding_frcsub.csv", index_col="strategy")
    assert table.loc["prerequisite", "exemplarsWithSolution"] == 0 and table["exemplarsWithSolution"].isna()["none"]
    assert table.loc["prerequisite", "scaffoldingGainPoints"] == pytest.approx(
        100 * (table.loc["prerequisite", "correct"] - table.loc["none", "correct"]) / 2)
    assert (tmp_path / "out/scaffolding_gain_frcsub.png").stat().st_size > 0
    assert (tmp_path / "out/scaffolding_accuracy_frcsub.png").stat().st_size > 0  # Figure 3
    again = kstp(*args)
    assert again.exit_code == 0 and "prerequisite" in again.stdout
    report = kstp("report", "scaffolding", "--dataset", "frcsub", "--out", tmp_path / "report", "--json")
    assert report.exit_code == 0, report.output
    rows = json.loads(report.stdout)
    assert [(r["model"], r["strategy"]) for r in rows] == [("smollm2", "none"), ("smollm2", "prerequisite")]
    assert [r["correct"] for r in rows] == table["correct"].tolist()
    assert (tmp_path / "report/scaffolding_gain_frcsub.png").exists()
    assert kstp("report", "scaffolding", "--dataset", "nothing").exit_code == 1
    bad = kstp("evaluate", "scaffolding", "--dataset", "frcsub", "--model", "m", "--gen-kwargs", "temp=1")
    assert bad.exit_code == 2 and "unknown key 'temp'" in bad.stderr


def test_similarity_exemplars_equal_on_both_engines(neo4j_store, tmp_path, data_root):
    """Both engines in one test (so Neo4j-specific): on frcsub with MiniLM, the similarity exemplars
    of Neo4j's vector index equal Ladybug's numpy cosine ones, and both are the 3 nearest by the
    float64 cosine of the stored vectors (ties by id) among the annotated questions."""
    from kstp.graph.ladybug import LadybugStore

    folder, minilm = data_root / "responses/frcsub", get_embedding_model("minilm")
    shown = {}
    with LadybugStore(tmp_path / "graph") as ladybug:
        ladybug.ensure_schema()
        for graph in (ladybug, neo4j_store):
            items.write_items(graph, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv"))
            derive_question_prerequisites(graph, "frcsub", "reflexive")
            result = scaffolding.evaluate(graph, Echo(), "frcsub", Sampling(), embedding_model=minilm,
                                          strategies=("none", "similarity"))
            rows = result.responses[result.responses["strategy"] == "similarity"]
            shown[graph.engine] = {q: list(e) for q, e in zip(rows["questionId"], rows["exemplars"], strict=True)}
            pool = graph.frame("exemplar_pool", {"dataset": "frcsub"})
    assert shown["neo4j"] == shown["ladybug"] and len(shown["neo4j"]) == len(result.questions) >= 2
    annotated = set(neo4j_store.frame("question_concepts", {"dataset": "frcsub"})["questionId"])
    vectors = {q: np.asarray(v) for q, v in zip(pool["questionId"], pool["embedding"], strict=True) if q in annotated}
    for t, chosen in shown["neo4j"].items():
        cosine = {q: float(v @ vectors[t]) / float(np.linalg.norm(v) * np.linalg.norm(vectors[t]))
                  for q, v in vectors.items() if q != t}
        assert chosen == sorted(cosine, key=lambda q: (-cosine[q], q))[:3]


def test_exemplars_with_a_solution_are_counted(sc):
    """Only p1 has a solution. Pre(t1) = Pre(t3) = {p1, p2, p3} and k = 3, so each target's prerequisite
    prompt shows all three: 2 of 6 exemplars shown with a solution; none shows no exemplar."""
    result = scaffolding.evaluate(sc, Echo(), "sc", Sampling(), strategies=("none", "prerequisite"), seed=1)
    assert result.exemplar_slots == {"prerequisite": (6, 2)}
    assert result.exemplar_solutions == pytest.approx(1 / 3)
    table = result.table()
    assert table.loc["prerequisite", "exemplarsWithSolution"] == pytest.approx(1 / 3)
    assert np.isnan(table.loc["none", "exemplarsWithSolution"])
    baseline = scaffolding.evaluate(sc, Echo(), "sc", Sampling(), strategies=("none",), seed=1, new_run=True)
    assert baseline.exemplar_slots == {} and np.isnan(baseline.exemplar_solutions)


def test_paper_prompt_run_is_another_run_with_prompt3(sc):
    """--prompt paper: each prerequisite chat is Prompt 3 over its stored exemplars (Prompt 1 without
    exemplars), and the run is not the kstp-prompt run."""
    from kstp.inference.runs import ConfigChangedError

    kstp_run = scaffolding.evaluate(sc, Echo(), "sc", Sampling(), strategies=("none", "prerequisite"), seed=1)
    with pytest.raises(ConfigChangedError, match="promptTemplateHash"):
        scaffolding.evaluate(sc, Echo(), "sc", Sampling(), strategies=("none", "prerequisite"), seed=1,
                             prompt="paper")
    paper = scaffolding.evaluate(sc, Echo(), "sc", Sampling(), strategies=("none", "prerequisite"), seed=1,
                                 prompt="paper", new_run=True)
    assert paper.run_id != kstp_run.run_id and paper.generated == len(paper.responses) == 4
    texts = {f"sc:{i['id']}": i["text"] for i in ITEMS}
    shown = {f"sc:{i['id']}": scaffolding.Exemplar(f"sc:{i['id']}", i["text"], i["answer"], i.get("solution"))
             for i in ITEMS}
    hashes = sc.frame("run_responses", {"runId": paper.run_id}).set_index("responseId")["promptHash"]
    for row in paper.responses.itertuples():
        chat = scaffolding.build_prompt(texts[row.questionId], [shown[q] for q in row.exemplars], "paper")
        assert hashes[row.responseId] == prompt_hash(chat)
        if row.strategy == "prerequisite":
            assert chat[1]["content"].startswith("The following problems and their solutions are provided as "
                                                 "background knowledge:\n\nProblem 1: ")
        else:
            assert chat[1]["content"] == texts[row.questionId]
