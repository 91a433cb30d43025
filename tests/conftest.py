"""Shared fixtures: a fresh Ladybug graph, the shared data folder, and the hand-made
curriculum every hand-computed test uses.

The hand-made curriculum (counted by hand in the tests that use it):

    concepts  A -> B, A -> C, B -> D, C -> D, D -> E, and F alone
    questions q1 {A}, q2 {B}, q3 {C}, q4 {B, C}, q5 {D}, q6 {E}, q7 {A, F}, q8 {}
    learners  L1: q1 1, q2 1, q3 0, q5 1
              L2: q1 0, q2 1, q4 1, q6 1, q7 1
              L3: q1 1, q8 0
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kstp.loaders import items, responses
from kstp.loaders.standards import load_standards
from kstp.platform.ladybug_store import LadybugStore

DATA = Path(os.environ.get("KSTP_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))

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


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The shared data folder (``$KSTP_DATA``, default ``../shared/data``)."""
    assert DATA.is_dir(), f"shared data not found at {DATA}; set KSTP_DATA"
    return DATA


@pytest.fixture
def store(tmp_path):
    """An empty Ladybug graph with the kstp schema."""
    graph = LadybugStore(tmp_path / "graph")
    graph.ensure_schema()
    yield graph
    graph.close()


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
