"""The explorer's drawings as SVG geometry: every edge runs from its source's border to its target's,
a box that merges equally informative questions shows its whole label and, on a learner's page, each
question's verdict where they differ.

The real case is frcsub's question prerequisites as ``kstp derive question-prerequisites --dataset
frcsub --rule reflexive`` derives them (its Q-matrix, no skill prerequisites: 101 pairs), drawn
without a database.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from kstp.explore.app import environment
from kstp.explore.drawings import CHAR_W, class_dag, hasse
from kstp.explore.layout import Drawing, layered
from kstp.graph.structures import question_prerequisite_pairs
from kstp.kst.spaces import KnowledgeSpace

FRCSUB = Path("/work/shared/data/responses/frcsub/qmatrix.csv")
if not FRCSUB.exists():
    FRCSUB = Path(__file__).resolve().parents[2] / "data" / "responses" / "frcsub" / "qmatrix.csv"


@pytest.fixture(scope="module")
def frcsub() -> KnowledgeSpace:
    if not FRCSUB.exists():
        pytest.skip(f"frcsub's Q-matrix is not at {FRCSUB}")
    qmatrix = pd.read_csv(FRCSUB).set_index("item_id")
    pairs = qmatrix.stack().reset_index()
    pairs.columns = ["questionId", "conceptId", "value"]
    pairs = pairs[pairs["value"] == 1][["questionId", "conceptId"]]
    pairs["questionId"] = "frcsub:" + pairs["questionId"]
    edges = question_prerequisite_pairs(pairs, pd.DataFrame(columns=["fromId", "toId"]), "reflexive")
    assert len(edges) == 101  # the demo's figure
    return KnowledgeSpace.build([f"frcsub:{q}" for q in qmatrix.index], zip(edges["fromId"], edges["toId"],
                                                                            strict=True))


def _ends(d: str) -> tuple[tuple[float, float], tuple[float, float]]:
    points = [(float(x), float(y)) for x, y in re.findall(r"[ML](-?[\d.]+),(-?[\d.]+)", d)]
    assert len(points) >= 2 and d.startswith("M")
    return points[0], points[-1]


def _on_rect(point: tuple[float, float], node: dict, tolerance: float = 0.5) -> bool:
    """Whether ``point`` lies on the border of ``node``'s box (centre x, y; width, height)."""
    dx, dy = abs(point[0] - node["x"]), abs(point[1] - node["y"])
    half_w, half_h = node["width"] / 2, node["height"] / 2
    inside = dx <= half_w + tolerance and dy <= half_h + tolerance
    return inside and (abs(dx - half_w) <= tolerance or abs(dy - half_h) <= tolerance)


def test_drawings_frcsub_edges_end_on_their_boxes_borders(frcsub):
    names = {q: q.split(":", 1)[1] for q in frcsub.items}
    svg = class_dag(frcsub, names)
    nodes = {n["id"]: n for n in svg["nodes"]}
    assert len(nodes) == 15 and len(svg["edges"]) == sum(bin(c).count("1") for c in frcsub.cover) == 20
    for edge in svg["edges"]:
        start, end = _ends(edge["d"])
        assert _on_rect(start, nodes[edge["from"]]), (edge, nodes[edge["from"]])
        assert _on_rect(end, nodes[edge["to"]]), (edge, nodes[edge["to"]])


def test_drawings_frcsub_merged_labels_are_whole_and_fit_their_boxes(frcsub):
    svg = class_dag(frcsub, {q: q.split(":", 1)[1] for q in frcsub.items})
    merged = {n["id"]: n for n in svg["nodes"] if " = " in n["id"]}
    assert sorted(merged) == ["frcsub:Item02 = frcsub:Item03", "frcsub:Item04 = frcsub:Item20",
                              "frcsub:Item06 = frcsub:Item08", "frcsub:Item11 = frcsub:Item17",
                              "frcsub:Item14 = frcsub:Item16"]
    six = merged["frcsub:Item06 = frcsub:Item08"]
    assert six["lines"] == ["Item06 = Item08"] and six["label"] == "Item06 = Item08"
    assert six["width"] == 15 * CHAR_W + 16 == 121 and six["height"] == 32
    for node in svg["nodes"]:
        assert "…" not in "".join(node["lines"])
        assert node["width"] >= max(map(len, node["lines"])) * CHAR_W


def test_drawings_frcsub_boxes_do_not_overlap(frcsub):
    svg = class_dag(frcsub, {q: q.split(":", 1)[1] for q in frcsub.items})
    boxes = svg["nodes"]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart_x = abs(a["x"] - b["x"]) >= (a["width"] + b["width"]) / 2
            apart_y = abs(a["y"] - b["y"]) >= (a["height"] + b["height"]) / 2
            assert apart_x or apart_y, (a["id"], b["id"])
        assert a["width"] / 2 <= a["x"] <= svg["width"] - a["width"] / 2


def test_drawings_learner_mixed_class_is_split_with_each_verdict(frcsub):
    marks = {"frcsub:Item06": "correct", "frcsub:Item08": "wrong", "frcsub:Item02": "wrong", "frcsub:Item03": "wrong"}
    svg = class_dag(frcsub, {q: q.split(":", 1)[1] for q in frcsub.items}, marks)
    nodes = {n["id"]: n for n in svg["nodes"]}
    six = nodes["frcsub:Item06 = frcsub:Item08"]
    assert (six["mark"], six["parts"]) == ("mixed", ["correct", "wrong"])
    assert six["title"] == "frcsub:Item06: answered right\nfrcsub:Item08: answered wrong"
    two = nodes["frcsub:Item02 = frcsub:Item03"]  # answered alike: one colour, no parts
    assert (two["mark"], two["parts"]) == ("wrong", None)
    assert (nodes["frcsub:Item01"]["mark"], nodes["frcsub:Item01"]["title"]) == ("", "frcsub:Item01: not answered")

    html = environment().from_string('{% from "_macros.html" import graph %}{{ graph(g, "", "s") }}').render(g=svg)
    box = re.search(r'<g class="node mixed"[^>]*data-id="frcsub:Item06 = frcsub:Item08".*?</g>', html, re.S).group()
    assert '<stop class="correct" offset="0.0"/><stop class="correct" offset="0.5"/>' in box
    assert '<stop class="wrong" offset="0.5"/><stop class="wrong" offset="1.0"/>' in box
    gradient = re.search(r'<linearGradient id="(s-mix-\d+)">', box).group(1)
    assert f'style="fill: url(#{gradient})"' in box and '<rect x="-60.5" y="-16.0" width="121" height="32"' in box
    assert '<tspan x="0">Item06 = Item08</tspan>' in box


def test_drawings_long_merged_labels_wrap_into_lines():
    space = KnowledgeSpace.build(["t:a_long_question_1", "t:a_long_question_2", "t:b"],
                                 [("t:a_long_question_1", "t:a_long_question_2"),
                                  ("t:a_long_question_2", "t:a_long_question_1"), ("t:a_long_question_1", "t:b")])
    svg = class_dag(space, {"t:a_long_question_1": "a_long_question_1", "t:a_long_question_2": "a_long_question_2"})
    merged = next(n for n in svg["nodes"] if " = " in n["id"])
    # 17 + 2 characters pass LINE_CHARS (18): one question a line, the "=" kept at the end of the first
    assert merged["lines"] == ["a_long_question_1 =", "a_long_question_2"]
    assert (merged["width"], merged["height"]) == (19 * CHAR_W + 16, 46)
    (edge,) = svg["edges"]
    nodes = {n["id"]: n for n in svg["nodes"]}
    start, end = _ends(edge["d"])
    assert _on_rect(start, nodes[edge["from"]]) and _on_rect(end, nodes[edge["to"]])


def test_drawings_hasse_edges_end_on_their_circles():
    # a before b, c alone: states {}, {a}, {c}, {a, b}, {a, c}, {a, b, c}
    space = KnowledgeSpace.build(["t:a", "t:b", "t:c"], [("t:a", "t:b")])
    svg = hasse(space, "t")
    assert svg["states"] == 6 and len(svg["edges"]) == 7
    nodes = {n["id"]: n for n in svg["nodes"]}
    for edge in svg["edges"]:
        for point, node in zip(_ends(edge["d"]), (nodes[edge["from"]], nodes[edge["to"]]), strict=True):
            assert abs(((point[0] - node["x"]) ** 2 + (point[1] - node["y"]) ** 2) ** 0.5 - 9) <= 0.5


@pytest.mark.parametrize("target", [(0, 80), (300, 80), (-300, 80), (40, 200)])
def test_drawings_path_ends_on_the_border_at_any_slope(target):
    # the old end moved a fixed 17 units up: a shallow edge (300 across, 80 down) ended 45 units beside its box
    drawing = Drawing({"a": (0.0, 0.0), "b": target}, sizes={"a": (100, 32), "b": (121, 32)})
    start, end = _ends(drawing.path("a", "b", [(0.0, 0.0), target]))
    assert _on_rect(start, {"x": 0, "y": 0, "width": 100, "height": 32})
    assert _on_rect(end, {"x": target[0], "y": target[1], "width": 121, "height": 32})


def test_drawings_layered_sizes_widen_slots_and_rows():
    drawing = layered(["a", "b", "c"], [("a", "c")], sizes={"a": (200, 32), "b": (100, 32), "c": (100, 80)})
    # a's slot is 210 (box and GAP), b's 110 (x_step); c's row is 128 (box and Y_GAP), a's 80 (y_step)
    assert drawing.width == 320 and drawing.height == 80 + 128
    assert drawing.nodes["a"][1] == 40 and drawing.nodes["c"][1] == 80 + 64
    assert drawing.nodes["b"][0] - drawing.nodes["a"][0] == 210 / 2 + 110 / 2
