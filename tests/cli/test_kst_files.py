"""`kstp kst export` and `kstp kst import` on each engine: a dataset's space, base, relation, answers and
BLIM fit out in kstIO's formats, and a relation and response patterns back in.

Expected values: brute force from the definitions over the states ``kst space --enumerate``
lists (the base, the surmise relation), and hand-counted structures (a chain of 8 items has
9 states); the files' layout is held to kstIO's own in tests/loaders/test_kstio.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from kstp.loaders.kstio import kstio_order, read_kst_file
from tests.cli.test_cli import ingest_toy, kstp, toy_files  # noqa: F401 (fixtures)

TOY = [f"toy:q{i}" for i in range(1, 9)]


@pytest.fixture
def toy(kstp, toy_files):  # noqa: F811
    ingest_toy(kstp, toy_files)
    assert kstp("derive", "question-prerequisites", "--dataset", "toy").exit_code == 0
    return kstp


def test_export_space_base_relation_equal_brute_force(toy, tmp_path):
    listed = json.loads(toy("kst", "space", "--dataset", "toy", "--enumerate", "--json").stdout)["states"]
    states = {frozenset(r["state"]) for r in listed}
    result = toy("kst", "export", "--dataset", "toy", "--what", "space", "--to", tmp_path / "toy.spc", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == len(states)
    read = read_kst_file(tmp_path / "toy.spc")  # columns: the dataset's questions in order
    assert read.kind == "space" and {frozenset(np.asarray(TOY)[r > 0]) for r in read.matrix} == states
    assert toy("kst", "export", "--dataset", "toy", "--what", "base", "--to", tmp_path / "toy.bsr").exit_code == 0
    base = {frozenset(np.asarray(TOY)[r > 0]) for r in read_kst_file(tmp_path / "toy.bsr").matrix}
    for written in (read_kst_file(tmp_path / "toy.bsr").matrix, read.matrix):  # kstIO's order (test_kstio.py)
        assert kstio_order(written).tolist() == list(range(len(written)))
    assert base == {s for s in states if s and frozenset().union(*(t for t in states if t < s)) != s}
    assert toy("kst", "export", "--dataset", "toy", "--what", "relation", "--to", tmp_path / "toy.csv").exit_code == 0
    relation = read_kst_file(tmp_path / "toy.csv", kind="relation")
    assert relation.items == [q.split(":")[1] for q in TOY]
    assert relation.matrix.astype(bool).tolist() == [[all(p in s for s in states if q in s) for q in TOY]
                                                     for p in TOY]


def test_import_relation_and_answers_then_export_them(toy, tmp_path):
    # a chain q1 < q2 < ... < q8 (only its covering pairs: the import closes it), 9 states by hand
    chain = tmp_path / "chain.spr"
    chain.write_text("#SRBT v2.0 relation\n8\n" + "".join("".join("1" if j in (i, i + 1) else "0" for j in range(8))
                                                         + "\n" for i in range(8)))
    result = toy("kst", "import", chain, "--dataset", "toy", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pairs"] == 28  # 8 choose 2: the transitive closure
    assert json.loads(toy("kst", "space", "--dataset", "toy", "--json").stdout)["states"] == 9
    again = json.loads(toy("kst", "import", chain, "--dataset", "toy", "--json").stdout)
    assert again["replaced"] == 0  # the same file again changes nothing
    # answers: a data file of four complete learners, then out again
    data = tmp_path / "four.dat"
    rows = ["00000000", "10000000", "11100000", "11111111"]
    data.write_text("#SRBT v2.0 data ASCII\n8\n4\n" + "\n".join(rows) + "\n")
    imported = toy("kst", "import", data, "--dataset", "toy")
    assert imported.exit_code == 0, imported.output
    assert "the file names no learners: they are four-00001 to four-00004, new learners of toy unless this file " \
        "was imported before under the same name" in " ".join(imported.stderr.split())
    out = tmp_path / "back.csv"
    result = toy("kst", "export", "--dataset", "toy", "--what", "data", "--to", out, "--json")
    assert json.loads(result.stdout)["note"] == "3 learners left out: they did not answer every item"  # L1-L3
    read = read_kst_file(out, kind="data")
    assert read.labels == [f"four-{i:05d}" for i in range(1, 5)]
    assert ["".join(map(str, r)) for r in read.matrix] == rows
    # a BLIM of the chain on those four, then its states with their probabilities
    fit = json.loads(toy("fit", "blim", "--dataset", "toy", "--method", "MD", "--json").stdout)
    assert fit["states"] == 9 and fit["learners"] == 4
    result = toy("kst", "export", "--dataset", "toy", "--what", "fit", "--to", tmp_path / "fit.csv", "--json")
    assert result.exit_code == 0, result.output
    fitted = read_kst_file(tmp_path / "fit.csv", kind="structure")
    # MD puts each learner on its own state (all at distance 0): 1/4 on each of the four
    probability = dict(zip(("".join(map(str, r)) for r in fitted.matrix), fitted.extra["probability"], strict=True))
    assert {p: probability[p] for p in rows} == pytest.approx({p: 0.25 for p in rows})
    assert sum(probability.values()) == pytest.approx(1.0)
    # draws from that fit: as many learners as it had, each on one of its four states (MD's beta and eta: 0)
    drawn = json.loads(toy("kst", "simulate", "--dataset", "toy", "--seed", "5", "--json").stdout)
    assert drawn["learners"] == 4 and sum(p["learners"] for p in drawn["patterns"]) == 4
    assert {p["pattern"] for p in drawn["patterns"]} <= set(rows) and drawn["careless"] == [pytest.approx(1e-6)] * 8


def test_export_and_import_refusals(toy, tmp_path):
    result = toy("kst", "export", "--dataset", "toy", "--what", "fit", "--to", tmp_path / "f.csv")
    assert result.exit_code == 1 and "has no BLIM fit on the graph" in result.stderr
    bad = tmp_path / "bad.spr"
    bad.write_text("#SRBT v2.0 relation\n3\n100\n010\n001\n")
    result = toy("kst", "import", bad, "--dataset", "toy")
    assert result.exit_code == 1 and "bad.spr has 3 item columns and names none; the data have 8 items" in result.stderr
    before = toy("query", "question_prerequisite_edges", "-p", "dataset=toy", "--format", "json").stdout
    unnamed = tmp_path / "x.csv"
    unnamed.write_text("q1,q2\n0,1\n")
    result = toy("kst", "import", unnamed, "--dataset", "toy")
    assert result.exit_code == 1 and "say what it holds" in result.stderr
    assert toy("query", "question_prerequisite_edges", "-p", "dataset=toy", "--format", "json").stdout == before


# ---- figures outside the browser (issue 34, item 5) -----------------------------------------------------
def _dot_edges(text: str) -> set[tuple[str, str]]:
    """(from, to) labels of a DOT graph kstp wrote: node labels for s<k> ids, names for quoted ids."""
    import re

    labels = dict(re.findall(r'^\s+(s\d+) \[label="([^"]*?)(?: p=[^"]*)?"', text, re.M))
    edges = re.findall(r'^\s+("?[^"\s]+"?) -> ("?[^"\s]+"?)', text, re.M)
    return {(labels.get(a, a.strip('"')), labels.get(b, b.strip('"'))) for a, b in edges}


def test_hasse_diagram_and_prerequisite_graph_as_files_and_dot(toy, tmp_path):
    listed = json.loads(toy("kst", "space", "--dataset", "toy", "--enumerate", "--json").stdout)["states"]
    states = [frozenset(q.split(":")[1] for q in r["state"]) for r in listed]
    covers = {(a, b) for a in states for b in states if a < b and not any(a < m < b for m in states)}  # brute force
    label = {s: "{" + ", ".join(sorted(s, key=lambda q: int(q[1:]))) + "}" for s in states}
    dot = toy("kst", "space", "--dataset", "toy", "--format", "dot")
    assert dot.exit_code == 0, dot.output
    assert _dot_edges(dot.stdout) == {(label[a], label[b]) for a, b in covers}
    result = toy("kst", "space", "--dataset", "toy", "--out", tmp_path / "f", "--json")
    assert {p.rsplit("/", 1)[1] for p in json.loads(result.stdout)["figures"]} == {
        "hasse_toy.svg", "hasse_toy.png", "hasse_toy.dot"}
    # the prerequisite graph: the covering pairs of the derived relation (brute force over its pairs)
    pairs = {(r["fromId"].split(":")[1], r["toId"].split(":")[1]) for r in json.loads(toy(
        "query", "question_prerequisite_edges", "-p", "dataset=toy", "--format", "json").stdout)}
    reduction = {(a, b) for a, b in pairs if not any((a, m) in pairs and (m, b) in pairs for _, m in pairs)}
    drawn = toy("derive", "question-prerequisites", "--dataset", "toy", "--format", "dot")
    assert _dot_edges(drawn.stdout) == reduction
    assert toy("derive", "question-prerequisites", "--dataset", "toy", "--out", tmp_path / "g").exit_code == 0
    assert (tmp_path / "g" / "prerequisites_toy.png").read_bytes()[:4] == b"\x89PNG"
    concepts = toy("kst", "depth", "--framework", "toy", "--format", "dot")
    assert _dot_edges(concepts.stdout) == {("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("D", "E")}  # conftest


def test_sampled_states_of_many_questions_print_short_lines(kstp, tmp_path):  # noqa: F811
    items = tmp_path / "many.jsonl"
    items.write_text("".join(f'{{"id": "q{i:03d}", "text": "t", "answer": "1"}}\n' for i in range(300)))
    answers = tmp_path / "many.csv"
    answers.write_text("learner," + ",".join(f"q{i:03d}" for i in range(300)) + "\nl1," + ",".join("1" * 300) + "\n")
    assert kstp("ingest", "items", items, "--dataset", "many").exit_code == 0
    assert kstp("ingest", "responses", answers, "--dataset", "many").exit_code == 0
    result = kstp("kst", "space", "--dataset", "many", "--sample", "3", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert max(map(len, result.stdout.splitlines())) < 300  # 300 questions of 12 characters: 4,000 before
    assert "shortened" in result.stderr and "(+" in result.stdout
    whole = json.loads(kstp("kst", "space", "--dataset", "many", "--sample", "3", "--seed", "1", "--json").stdout)
    assert max(len(r["state"]) for r in whole["states"]) > 12  # JSON keeps every state whole


def test_export_surmise_function_gives_each_question_its_minimal_states(toy, tmp_path):
    """kstIO's surmise-function CSV (layout held to kstIO's files in tests/kst/test_surmise.py); the clauses of q
    are the minimal states holding q, by brute force over the listed states."""
    listed = json.loads(toy("kst", "space", "--dataset", "toy", "--enumerate", "--json").stdout)["states"]
    states = {frozenset(r["state"]) for r in listed}
    out = tmp_path / "toy_sf.csv"
    result = toy("kst", "export", "--dataset", "toy", "--what", "surmisefunction", "--to", out, "--json")
    assert result.exit_code == 0, result.output
    read = read_kst_file(out)
    assert read.kind == "surmisefunction" and read.items == [q.split(":")[1] for q in TOY]
    found = {(f"toy:{q}", frozenset(np.asarray(TOY)[r > 0])) for q, r in zip(read.labels, read.matrix, strict=True)}
    assert found == {(q, s) for q in TOY for s in states if q in s and not any(t < s for t in states if q in t)}
    refused = toy("kst", "export", "--dataset", "toy", "--what", "surmisefunction", "--to", tmp_path / "sf.dat")
    assert refused.exit_code == 1 and "only kstIO's CSV layout" in refused.stderr


def test_validate_a_dataset_equals_validating_its_exported_files(toy, tmp_path):
    """`kst validate --dataset` reads the same answers and space that `kst export` writes."""
    data = tmp_path / "four.dat"
    data.write_text("#SRBT v2.0 data ASCII\n8\n4\n" + "\n".join(["00000000", "01000000", "10100000", "11111111"])
                    + "\n")
    assert toy("kst", "import", data, "--dataset", "toy").exit_code == 0
    for what, name in (("space", "toy.spc"), ("data", "toy.dat")):
        assert toy("kst", "export", "--dataset", "toy", "--what", what, "--to", tmp_path / name).exit_code == 0
    on_graph = toy("kst", "validate", "--dataset", "toy", "--json")
    assert on_graph.exit_code == 0, on_graph.output
    from_files = toy("kst", "validate", "--responses", tmp_path / "toy.dat", "--structure", tmp_path / "toy.spc",
                     "--json")
    assert (json.loads(on_graph.stdout)["structure"], json.loads(on_graph.stdout)["structureSource"]) == (
        "space", "the knowledge space of toy")
    keys = ("gamma", "concordant", "discordant", "VC", "DI", "DA", "distances", "learners", "states")
    assert {k: json.loads(on_graph.stdout)[k] for k in keys} == {k: json.loads(from_files.stdout)[k] for k in keys}
    small = toy("kst", "validate", "--dataset", "toy", "--limit", "2")  # said the BLIM's "fit --structure delineated"
    assert small.exit_code == 1 and small.stderr.strip().splitlines()[-1] == (
        "Error: the knowledge space of 'toy' has more than 2 states; validation compares every pattern with every "
        "state: derive question prerequisites first, raise --limit or give a smaller structure with --structure "
        "FILE")
