"""The Neo4j Bloom perspective cannot rot: what it names exists in the graph model, and
every search phrase is Neo4j Cypher that passes Neo4j's own linter."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

from kstp.graph import schema

ROOT = Path(__file__).resolve().parents[1]
PERSPECTIVES = sorted((ROOT / "bloom").glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _lint_tool():
    spec = importlib.util.spec_from_file_location("cypher_lint", ROOT / "tools" / "cypher_lint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_is_a_perspective():
    assert [p.name for p in PERSPECTIVES] == ["kstp-perspective.json"]


@pytest.mark.parametrize("path", PERSPECTIVES, ids=lambda p: p.name)
def test_labels_types_and_captions_exist_in_the_graph_model(path):
    perspective = _load(path)
    labels = schema.node_labels()
    for category in perspective["categories"]:
        for label in category["labels"]:
            properties = dict(labels[label].properties)  # KeyError: a label the model lacks
            named = {p["name"] for p in category["properties"]} | set(category["captionKeys"]) | {
                c["key"] for c in category["captions"]}
            assert named <= set(properties), f"{label}: {sorted(named - set(properties))} not in the model"
    for label, properties in perspective["labels"].items():
        assert {p["propertyKey"] for p in properties} <= set(dict(labels[label].properties))
    types = schema.rel_types()
    assert {r["name"] for r in perspective["relationshipTypes"]} <= set(types)
    assert {c["labels"][0] for c in perspective["categories"]} == set(perspective["labels"])


@pytest.mark.parametrize("path", PERSPECTIVES, ids=lambda p: p.name)
def test_search_phrases_declare_their_parameters(path):
    labels = schema.node_labels()
    for template in _load(path)["templates"]:
        declared = {p["name"] for p in template["params"]}
        assert declared == set(re.findall(r"\$\w+", template["text"])), template["text"]
        assert declared == set(re.findall(r"\$\w+", template["cypher"])), template["text"]
        for param in template["params"]:
            assert param["suggestionProp"] in dict(labels[param["suggestionLabel"]].properties)
        for label in re.findall(r":(\w+)", template["cypher"]):
            assert label in labels or label in schema.rel_types(), f"{template['text']}: unknown {label}"


@pytest.mark.skipif(shutil.which("node") is None, reason="the Neo4j Cypher linter needs Node.js")
def test_search_phrases_pass_the_neo4j_linter(tmp_path, capfd):
    tool = _lint_tool()
    files = tool.bloom_phrase_files(tmp_path, PERSPECTIVES)
    assert len(files) == sum(len(_load(p)["templates"]) for p in PERSPECTIVES) >= 5
    status = tool.lint(files)
    out = capfd.readouterr().out
    assert status == 0, out
    assert f"{len(files)} files, 0 problems" in out


@pytest.mark.skipif(shutil.which("node") is None, reason="the Neo4j Cypher linter needs Node.js")
def test_the_linter_catches_a_broken_phrase(tmp_path, capfd):
    """The check above can fail: a misspelt relationship type in a phrase is reported."""
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"templates": [{"text": "x", "cypher": "MATCH (a)-[:PREREQUISITES]->(b) RETURN a"}]}))
    tool = _lint_tool()
    status = tool.lint(tool.bloom_phrase_files(tmp_path, [broken]))
    assert status == 1 and "PREREQUISITES" in capfd.readouterr().out


# ---- every phrase executed on the server (Neo4j only: Bloom is a Neo4j client) ----------------
def _demo_graph(store, data_root) -> None:
    """The demo's curriculum and fraction-subtraction learners, with what the phrases show:
    Eq. 1 edges, ability groups, counterexample checks, and one model response in a run."""
    import pandas as pd

    from kstp.evaluators import counterexamples, koc
    from kstp.graph.structures import derive_question_prerequisites
    from kstp.loaders import items, responses
    from kstp.loaders.standards import load_standards

    load_standards(store, data_root / "standards/nys_concepts.json")
    known = items.framework_concepts(store, "ccss")
    items.write_items(store, items.read_concept_map(data_root / "llm_kst/xes_skills_nys.json", "xes3g5m", "ccss",
                                                    known))
    folder = data_root / "responses/frcsub"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv",
                                                  folder / "skills.csv"))
    known = set(store.frame("dataset_questions", {"dataset": "frcsub"})["localId"])
    responses.write_answers(store, "frcsub", responses.read_wide(folder / "responses.csv", known), "responses.csv")
    derive_question_prerequisites(store, "frcsub", "reflexive")
    koc.store_groups(store, "frcsub", *koc.group_states(store, "frcsub"))
    counterexamples.check_prerequisites(store, "frcsub", levels=("question",))
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model"}]))
    store.write_nodes("Run", pd.DataFrame([{"id": "run:1", "evaluator": "answers", "model": "m"}]))
    store.write_nodes("Response", pd.DataFrame([{"id": "resp:1", "sampleIndex": 0, "correct": True}]))
    store.write_relationships("GAVE", "Learner", "Response", pd.DataFrame([{"from_id": "model:m", "to_id": "resp:1"}]))
    store.write_relationships("IN_RUN", "Response", "Run", pd.DataFrame([{"from_id": "resp:1", "to_id": "run:1"}]))
    store.write_relationships("TO", "Response", "Question", pd.DataFrame([{"from_id": "resp:1",
                                                                           "to_id": "frcsub:Item01"}]))


#: A sample value for each phrase parameter, present in the graph of _demo_graph ($concept:
#: the first code, in order, of a concept with prerequisites, successors and questions).
SAMPLES = {"$question": "frcsub:Item08", "$learner": "frcsub:Subject001", "$dataset": "frcsub",
           "$model": "model:m", "$run": "run:1"}
_SAMPLE_CONCEPT = ("MATCH (:Concept)-[:PREREQUISITE_OF]->(c:Concept)-[:PREREQUISITE_OF]->(:Concept) "
                   "WHERE EXISTS { MATCH (:Question)-[:ASSESSES]->(c) } RETURN DISTINCT c.code AS code "
                   "ORDER BY code LIMIT 1")


@pytest.mark.parametrize("path", PERSPECTIVES, ids=lambda p: p.name)
def test_search_phrases_return_rows_on_the_demo_graph(path, neo4j_store, data_root):
    """Every search phrase runs on a real Neo4j server with a sample parameter and finds rows."""
    _demo_graph(neo4j_store, data_root)
    samples = {**SAMPLES, "$concept": neo4j_store._execute(_SAMPLE_CONCEPT, {}, "test")["code"].iloc[0]}
    for template in _load(path)["templates"]:
        params = {p["name"][1:]: samples[p["name"]] for p in template["params"]}
        rows = neo4j_store._execute(template["cypher"], params, f"bloom: {template['text']}")
        assert len(rows) > 0, f"{template['text']!r} with {params} returned no rows"


def test_readme_query_examples_run_on_both_engines(graph_location, data_root):
    """The `kstp query` lines of the README's command list, on frcsub, on each engine."""
    from click.testing import CliRunner

    from kstp.cli.main import cli

    readme = (ROOT / "README.md").read_text()
    lines = [line.split("#")[0].split() for line in readme.splitlines() if line.startswith("kstp query ")]
    assert len(lines) >= 2
    runner = CliRunner()
    folder = data_root / "responses/frcsub"
    for args in (["ingest", "items", folder / "items.csv", "--dataset", "frcsub", "--qmatrix", folder / "qmatrix.csv",
                  "--skills", folder / "skills.csv"],
                 ["ingest", "responses", folder / "responses.csv", "--dataset", "frcsub"],
                 ["derive", "question-prerequisites", "--dataset", "frcsub", "--rule", "reflexive"]):
        done = runner.invoke(cli, ["--graph", graph_location, *map(str, args)])
        assert done.exit_code == 0, done.output
    for args in lines:
        result = runner.invoke(cli, ["--graph", graph_location, *args[1:]])
        assert result.exit_code == 0, (args, result.output)
        assert result.stdout.strip(), args
    fringe = json.loads(runner.invoke(cli, ["--graph", graph_location, *lines[1][1:]]).stdout)
    assert fringe and all(row["questionId"].startswith("frcsub:") for row in fringe)
