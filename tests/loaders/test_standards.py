"""Curriculum ingest: the real Coherence Map, the CSV pair, and every refusal."""

from __future__ import annotations

import json

import pytest

from kstp.errors import CycleError, InputError, UnknownIdError
from kstp.loaders.standards import load_standards, read_coherence_map
from tests.conftest import TOY_CONCEPTS, TOY_EDGES


def test_coherence_map_matches_paper_table_1(store, data_root):
    report = load_standards(store, data_root / "standards/nys_concepts.json")
    figures = store.run("curriculum_figures", {"framework": "ccss"})[0]
    assert figures == {"domains": 63, "clusters": 148, "concepts": 480, "prerequisiteEdges": 757,
                       "relatedEdges": 142}
    assert round(757 / 480, 2) == 1.58
    assert report.written["PREREQUISITE_OF"].created == 757
    assert report.notes["clusters whose domain is missing (attached to the framework)"] == 6
    raw = json.loads((data_root / "standards/nys_concepts.json").read_text())
    direct = {f"ccss:{p}" for p in raw["standards"]["142"]["rev_edges"]}
    ancestors = {r["conceptId"] for r in store.run("concept_ancestors", {"conceptId": "ccss:142"})}
    assert direct and direct < ancestors


def test_coherence_map_reingest_changes_nothing(store, data_root):
    load_standards(store, data_root / "standards/nys_concepts.json")
    again = load_standards(store, data_root / "standards/nys_concepts.json")
    assert all(r.created == 0 and r.updated == 0 for r in again.written.values())
    assert again.written["Concept"].unchanged == 480


def test_coherence_map_text_is_plain(data_root):
    curriculum = read_coherence_map(data_root / "standards/nys_concepts.json")
    row = curriculum.concepts.set_index("code").loc["6.RP.A.3"]
    assert row["grade"] == "6" and "<" not in row["description"]
    assert curriculum.concepts["exampleProblem"].notna().sum() == 326


def test_coherence_map_example_problems_one_more_than_appendix_b(data_root):
    """Appendix B counts 325 example problems, the map has 326; the release does not publish its
    example_questions.json, so the one left out is not known. Two are teaching notes, not tasks."""
    concepts = read_coherence_map(data_root / "standards/nys_concepts.json").concepts
    examples = concepts[concepts["exampleProblem"].notna()]
    notes = examples[~examples["exampleProblem"].str.contains("Task")]
    assert (len(examples), sorted(notes["code"])) == (326, ["3.OA.C.7", "6.NS.C.6"])


def test_coherence_map_unknown_prerequisite_is_refused(store, data_root, tmp_path):
    raw = json.loads((data_root / "standards/nys_concepts.json").read_text())
    raw["standards"]["9"]["rev_edges"] = ["99999"]
    path = tmp_path / "map.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UnknownIdError, match=r"unknown standard '99999' at .*standards\['9'\].rev_edges"):
        load_standards(store, path)
    assert store.run("node_counts") == []


def _pair(tmp_path, concepts=TOY_CONCEPTS, edges=TOY_EDGES):
    (tmp_path / "c.csv").write_text(concepts)
    (tmp_path / "e.csv").write_text(edges)
    return tmp_path / "c.csv", tmp_path / "e.csv"


def test_csv_pair_loads_with_framework_namespace(store, tmp_path):
    concepts, edges = _pair(tmp_path)
    report = load_standards(store, concepts, edges, "toy")
    assert report.written["Concept"].created == 6 and report.written["PREREQUISITE_OF"].created == 5
    assert [r["conceptId"] for r in store.run("concept_ancestors", {"conceptId": "toy:E"})] == \
        ["toy:A", "toy:B", "toy:C", "toy:D"]


def test_csv_cycle_is_named_with_lines_and_nothing_written(store, tmp_path):
    concepts, edges = _pair(tmp_path, edges=TOY_EDGES + "E,B\n")
    with pytest.raises(CycleError, match=r"prerequisite cycle (B -> D -> E -> B|D -> E -> B -> D|E -> B -> D -> E) "
                                          r"in .*e.csv \(line") as info:
        load_standards(store, concepts, edges, "toy")
    assert set(info.value.cycle) == {"B", "D", "E"}
    assert store.run("node_counts") == []


def test_csv_self_loop_unknown_id_and_duplicates(store, tmp_path):
    concepts, edges = _pair(tmp_path, edges=TOY_EDGES + "F,F\n")
    with pytest.raises(CycleError, match=r"self-loop F -> F in .*e.csv \(line 7\)"):
        load_standards(store, concepts, edges, "toy")
    concepts, edges = _pair(tmp_path, edges=TOY_EDGES + "A,Z\n")
    with pytest.raises(UnknownIdError, match=r"unknown concept 'Z' at .*e.csv:7; it is not an id in c.csv"):
        load_standards(store, concepts, edges, "toy")
    assert store.run("node_counts") == []
    concepts, edges = _pair(tmp_path, edges=TOY_EDGES + "A,B\nD,E\n")
    report = load_standards(store, concepts, edges, "toy")
    assert report.notes["duplicate prerequisite edges collapsed"] == 2
    assert report.written["PREREQUISITE_OF"].created == 5


@pytest.mark.parametrize("edge, message", [(",B", "e.csv:7: blank from_id;"), ("A,", "e.csv:7: blank to_id;")])
def test_csv_edge_with_a_blank_cell_is_located(store, tmp_path, edge, message):
    concepts, edges = _pair(tmp_path, edges=TOY_EDGES + edge + "\n")
    with pytest.raises(InputError, match=message + " every edge needs both concept ids"):
        load_standards(store, concepts, edges, "toy")
    assert store.run("node_counts") == []


@pytest.mark.parametrize("concepts, message", [
    ("id,code\nA,a\n", "c.csv:1: missing column 'description'"),
    ("id,code,description\nA,a,x\nA,b,y\n", "c.csv:3: concept id 'A' repeats line 2"),
    ("id,code,description\n,a,x\n", "c.csv:2: empty concept id"),
    ("id,code,description\nA,a,x,extra\n", "c.csv:2: 4 cells but the header has 3"),
    ("", "c.csv:1: empty file"),
])
def test_csv_malformed_rows_are_located(store, tmp_path, concepts, message):
    concepts, edges = _pair(tmp_path, concepts=concepts, edges="from_id,to_id\n")
    with pytest.raises(InputError, match=message):
        load_standards(store, concepts, edges, "toy")


def test_csv_clusters_become_cluster_nodes(store, tmp_path):
    concepts, _ = _pair(tmp_path, concepts="id,code,description,grade,cluster\nA,a,x,3,Fractions\nB,b,y,3,Fractions\n"
                                            "C,c,z,4,\n")
    load_standards(store, concepts, None, "mini")
    figures = store.run("curriculum_figures", {"framework": "mini"})[0]
    assert (figures["clusters"], figures["concepts"], figures["domains"]) == (1, 3, 0)


def test_cycle_across_two_ingests_is_refused(store, tmp_path):
    concepts, edges = _pair(tmp_path)
    load_standards(store, concepts, edges, "toy")
    (tmp_path / "more.csv").write_text("from_id,to_id\nE,A\n")
    with pytest.raises(CycleError, match=r"more.csv together with the graph \(.*in the graph.*more.csv"):
        load_standards(store, concepts, tmp_path / "more.csv", "toy")
    assert store.run("concept_cycles", {"framework": "toy"}) == []
