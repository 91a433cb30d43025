"""The Neo4j Bloom perspective cannot rot: what it names exists in the graph model, and
every search phrase is Neo4j Cypher that passes Neo4j's own linter."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

from kstp.platform import schema

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
