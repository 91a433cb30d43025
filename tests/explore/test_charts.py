"""The explorer's charts and weighted Hasse diagram as SVG geometry, against values computed by hand.

Plot margins are :data:`kstp.explore.charts.PLOT` (58 left, 16 right, 34 top, 46 bottom): a 240-high
bar chart has a plot 160 high from y 194 (value 0) up to y 34; a 460 x 340 scatter runs x 58..444 and
y 294..34.
"""

from __future__ import annotations

import re

import pytest

from kstp.explore.app import environment
from kstp.explore.charts import DENSITY_CELLS, bars, grid, histogram, scatter, strip, ticks
from kstp.explore.drawings import _covers, hasse, occupancy
from kstp.explore.pictures import blim_pictures
from kstp.kst.spaces import KnowledgeSpace


def _rects(chart: dict) -> list[dict]:
    return [m for m in chart["marks"] if m["tag"] == "rect"]


def test_ticks_are_round_steps_that_reach_the_top():
    assert ticks(0.37) == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert ticks(12) == [0.0, 5.0, 10.0, 15.0]  # 12 / 5 = 2.4 -> a step of 5
    assert ticks(1.0, 0.5) == [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def test_bars_grouped_with_standard_errors():
    # two series of two categories: groups 28 x 3 = 84 wide; the y axis 0..0.4 (largest whisker 0.3 + 0.05)
    chart = bars("rates", ["q1", "q2"], {"beta": [0.1, 0.3], "eta": [0.2, None]}, "question", "rate",
                 errors={"beta": [0.02, 0.05], "eta": [0.01, None]})
    rects = _rects(chart)
    assert [(r["data"]["category"], r["data"]["series"]) for r in rects] == [("q1", "beta"), ("q1", "eta"),
                                                                            ("q2", "beta")]
    # x: 58 + 14 (half a gap), then + 28 per series, + 84 per group; y: 194 - value / 0.4 * 160
    assert [(r["attrs"]["x"], r["attrs"]["y"], r["attrs"]["height"]) for r in rects] == [
        (72.0, 154.0, 40.0), (100.0, 114.0, 80.0), (156.0, 74.0, 120.0)]
    whiskers = [m for m in chart["marks"] if m["cls"] == "whisker"]
    # beta of q1: 0.1 +- 0.02 -> y 194 - 0.08 * 400 = 162 down to 194 - 0.12 * 400 = 146, centred on the bar (72 + 13)
    assert (whiskers[0]["attrs"]["x1"], whiskers[0]["attrs"]["y1"], whiskers[0]["attrs"]["y2"]) == (85.0, 162.0, 146.0)
    assert chart["table"] == {"columns": ["category", "beta", "beta SE", "eta", "eta SE"],
                              "rows": [["q1", 0.1, 0.02, 0.2, 0.01], ["q2", 0.3, 0.05, None, None]]}
    assert [m["text"] for m in chart["axes"] if m["cls"] == "chart-title" or m["cls"] == "axis-label"] == [
        "rates", "question", "rate"]


def test_scatter_points_at_their_values_and_missing_left_out():
    chart = scatter("a x p", [("l1", 0.25, 0.5, "human"), ("l2", 1.0, 0.0, "model"), ("l3", 0.4, None, "human")],
                    "accuracy", "PSR")
    circles = [(m["data"]["id"], m["attrs"]["cx"], m["attrs"]["cy"], m["attrs"]["r"], m["cls"])
               for m in chart["marks"] if m["tag"] == "circle"]
    # x 58 + 0.25 * 386 = 154.5; y 294 - 0.5 * 260 = 164
    assert circles == [("l1", 154.5, 164.0, 4, "point human"), ("l2", 444.0, 294.0, 6, "point model")]
    # the model drawn last (on top) and named: at the right edge, its name to the left of its point
    last = chart["marks"][-1]
    assert (last["tag"], last["text"], last["cls"], last["attrs"]["x"]) == ("text", "l2", "point-label left", 435.0)
    assert chart["missing"] == 1 and not chart["dense"]
    assert chart["table"]["rows"][2] == ["l3", "human", 0.4, None]


def test_scatter_past_its_limit_counts_humans_in_cells_and_keeps_models():
    points = [(f"h{i}", 0.01, 0.99, "human") for i in range(3)] + [("m", 0.5, 0.5, "model")]
    chart = scatter("t", points, "x", "y", limit=2)
    cells = [m for m in chart["marks"] if m["tag"] == "rect"]
    assert chart["dense"] and len(cells) == 1 and cells[0]["data"]["count"] == 3
    # the cell [0, 1/25) x [24/25, 1): x 58 .. 58 + 386 / 25, y 34 .. 34 + 260 / 25
    assert (cells[0]["attrs"]["x"], cells[0]["attrs"]["y"], cells[0]["attrs"]["width"]) == (58.0, 34.0, 15.44)
    assert DENSITY_CELLS == 25
    assert [m["data"]["id"] for m in chart["marks"] if m["tag"] == "circle"] == ["m"]


def test_histogram_bins_include_the_top_in_the_last():
    chart = histogram("latency", [0.0, 0.5, 1.0, 1.0, 2.0, None], "seconds", bins=4)
    assert chart["table"]["rows"] == [["0-0.5", 1], ["0.5-1", 1], ["1-1.5", 2], ["1.5-2", 1]]
    assert [r["data"]["value"] for r in _rects(chart)] == ["1.0", "1.0", "2.0", "1.0"]


def test_grid_cells_and_titles():
    chart = grid("Q", ["a", "bb"], ["s1", "s2"], {("a", "s2"), ("bb", "s1")}, "skill", "question",
                 row_titles={"a": "What is 1 + 1?"}, column_titles={"s1": "adding"})
    # labels 2 characters: 2 * 7 + 10 = 24 wide, so cells start at x 28 + 24 = 52 and y 34 + 80 = 114
    cells = [(m["attrs"]["x"], m["attrs"]["y"], m["data"]["value"]) for m in _rects(chart)]
    assert cells == [(52.0, 114.0, 0), (68.0, 114.0, 1), (52.0, 130.0, 1), (68.0, 130.0, 0)]
    assert chart["table"]["rows"] == [["a", 0, 1], ["bb", 1, 0]]
    tips = {m["text"]: m["title"] for m in chart["axes"] if m["cls"].startswith("tick")}
    assert tips["a"] == "What is 1 + 1?" and tips["s1"] == "adding" and tips["s2"] == "s2"


def test_chart_macro_draws_every_mark_escaped():
    chart = bars("<b>x</b>", ["q<1>"], {"s": [0.5]}, "x", "y", y_max=1, links=["dataset/d.html#q-1"])
    macro = '{% from "_macros.html" import chart %}{{ chart(c, "../", "c1") }}'
    html = environment().from_string(macro).render(c=chart)
    assert "<b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert re.search(r'<a href="../dataset/d.html#q-1"><rect class="bar series-0" x="72.0" y="114.0"', html)
    assert "<td>0.5000</td>" in html  # the numbers under the picture


def test_occupancy_and_covers_by_hand():
    # a before b; c and d equally informative (mutual prerequisites)
    space = KnowledgeSpace.build(["a", "b", "c", "d"], [("a", "b"), ("c", "d"), ("d", "c")])
    found, off = occupancy(space, {"l1": {"a"}, "l2": {"a", "b"}, "l3": {"c"}, "l4": {"b"}, "l5": set(),
                                   "l6": {"a", "c", "d"}, "l7": {"a"}, "l8": {"x"}})
    named = {frozenset(space.item_sets([m])[0]): sorted(v) for m, v in found.items()}
    assert named == {frozenset({"a"}): ["l1", "l7"], frozenset({"a", "b"}): ["l2"], frozenset(): ["l5"],
                     frozenset({"a", "c", "d"}): ["l6"]}
    assert off == ["l3", "l4", "l8"]  # half a class; b without a; an item of no space
    assert _covers([0b011, 0b001, 0b000, 0b111]) == [(0, 1), (1, 3), (3, 7)]


def test_hasse_weights_sum_to_the_learners_in_a_state():
    # a before b: states {}, {a}, {a, b}; three learners in {a}, one in {a, b}, one off the space
    space = KnowledgeSpace.build(["t:a", "t:b"], [("t:a", "t:b")])
    patterns = {"x1": {"t:a"}, "x2": {"t:a"}, "x3": {"t:a"}, "x4": {"t:a", "t:b"}, "x5": {"t:b"}}
    drawn = hasse(space, "t", patterns, probabilities={frozenset({"t:a"}): 0.7})
    weights = {n["data"]["state"]: n["data"]["learners"] for n in drawn["nodes"]}
    assert weights == {"": 0, "a": 3, "a b": 1}
    assert drawn["placed"] == 4 == sum(weights.values()) and drawn["off"] == ["x5"]
    radius = {n["data"]["state"]: n["width"] / 2 for n in drawn["nodes"]}
    # radius 3.5 + 8.5 * sqrt(w / 3): none 3.5, the most 12, one learner 3.5 + 8.5 / sqrt(3) = 8.41
    assert radius == {"": 3.5, "a": 12.0, "a b": pytest.approx(8.41, abs=0.005)}
    assert [n["mark"] for n in drawn["nodes"]] == ["empty", "occupied", "occupied"]
    assert {n["data"]["state"]: n["data"].get("blim") for n in drawn["nodes"]} == {"": None, "a": "0.7", "a b": None}
    states = {n["id"]: n["data"]["state"] for n in drawn["nodes"]}
    assert {states[n]: v for n, v in drawn["learners"].items()} == {"a": ["x1", "x2", "x3"], "a b": ["x4"]}


def test_hasse_occupied_only_draws_the_cover_among_occupied_states():
    # a, b, c unrelated: 8 states; learners only in {}, {a}, {a, b, c}: {a, b, c} covers {a} among them
    space = KnowledgeSpace.build(["t:a", "t:b", "t:c"], [])
    drawn = hasse(space, "t", {"x": set(), "y": {"t:a"}, "z": {"t:a", "t:b", "t:c"}}, occupied_only=True)
    states = {n["id"]: n["data"]["state"] for n in drawn["nodes"]}
    assert sorted(states.values()) == ["", "a", "a b c"]
    assert sorted((states[e["from"]], states[e["to"]]) for e in drawn["edges"]) == [("", "a"), ("a", "a b c")]
    outer = {n["data"]["state"]: n["data"]["outer"] for n in drawn["nodes"]}
    assert outer == {"": "a b c", "a": "b c", "a b c": ""}  # fringes in the whole space


def test_hasse_has_a_title_and_a_size_axis_inside_the_picture():
    """A caption naming the dataset and a vertical axis with a tick per row: a row per state size in questions,
    one size a row (a class of two equally informative questions makes a state of size 2), the largest on top
    as kstp kst space --out draws it."""
    space = KnowledgeSpace.build(["t:a", "t:b", "t:c"], [("t:a", "t:b"), ("t:b", "t:a"), ("t:b", "t:c")])
    drawn = hasse(space, "t")
    assert [t["label"] for t in drawn["axis"]["ticks"]] == ["3", "2", "0"]  # {a, b, c}, {a, b}, {} from the top
    assert [t["y"] for t in drawn["axis"]["ticks"]] == sorted({n["y"] for n in drawn["nodes"]})
    html = environment().from_string('{% from "_macros.html" import graph %}{{ graph(h, "", "hasse") }}').render(
        h=drawn, root="", static=False)
    assert "<text class=\"graph-title\"" in html and "Hasse diagram of t&#39;s knowledge space" in html
    assert ">knowledge state size (questions mastered)</text>" in html
    occupied = hasse(KnowledgeSpace.build(["t:a", "t:b", "t:c"], []), "t",
                     {"x": set(), "y": {"t:a"}, "z": {"t:a", "t:b", "t:c"}}, occupied_only=True)
    assert [t["label"] for t in occupied["axis"]["ticks"]] == ["3", "1", "0"]
    assert occupied["caption"].startswith("The 3 states of t's knowledge space somebody is in")


def test_blim_pictures_bars_with_standard_errors():
    fit = {"states": [{"probability": 0.6, "state": ["d:a"]}, {"probability": 0.4, "state": []}], "stateCount": 2,
           "questions": [{"questionId": "d:a", "careless": 0.1, "guess": 0.2, "carelessSe": 0.01, "guessSe": 0.03}]}
    pictures = blim_pictures(fit)
    assert pictures["states"]["table"]["rows"] == [[1, 0.6, "d:a"], [2, 0.4, "∅"]]
    assert pictures["rates"]["table"]["rows"] == [["a", 0.1, 0.01, 0.2, 0.03]]
    assert len([m for m in pictures["rates"]["marks"] if m["cls"] == "whisker"]) == 2


def test_run_pictures_share_right_per_question_failures_and_histograms():
    from kstp.explore.pictures import run_pictures

    rows = [{"questionId": "d:q1", "localId": "q1", "responseId": "r1", "kind": "right", "tokensOut": 10,
             "latencyS": 1.0},
            {"questionId": "d:q1", "localId": "q1", "responseId": "r2", "kind": "failed", "tokensOut": None,
             "latencyS": 3.0},
            {"questionId": "d:q2", "localId": "q2", "responseId": "r3", "kind": "wrong", "tokensOut": 30,
             "latencyS": 2.0}]
    pictures = run_pictures(rows, [("failed: timeout", 1)], {"d:q1": 0.75})
    bars = [(m["data"]["category"], m["data"]["series"][:5], m["data"]["value"], m["href"])
            for m in pictures["strip"]["marks"]]  # under 100 questions: a labelled bar each, a click opens it
    assert bars == [("q1", "this ", "0.5", "question/d~3Aq1.html"), ("q1", "human", "0.75", "question/d~3Aq1.html"),
                    ("q2", "this ", "0.0", "question/d~3Aq2.html")]  # a failure is not right; q2: no human
    assert pictures["strip"]["table"]["rows"] == [["d:q1", 2, 1, 0.5, 0.75], ["d:q2", 1, 0, 0.0, None]]
    assert pictures["failures"]["table"]["rows"] == [["failed: timeout", 1]]
    labels = [m["text"] for m in pictures["failures"]["axes"] if m["tag"] == "text"]
    assert "failed: timeout" in labels and {"0", "1"} <= set(labels) and "0.5" not in labels  # whole, counts
    many = run_pictures([{**rows[0], "questionId": f"d:q{k}", "localId": f"q{k}"} for k in range(100)], [])
    assert {m["cls"] for m in many["strip"]["marks"]} == {"cell share"}  # 100 questions: a strip of cells
    # tokens 10 and 30 in 10 bins of 2: the first and the last; latency 1, 2, 3 in bins of 0.2
    assert [r[1] for r in pictures["tokens"]["table"]["rows"]] == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert [r[1] for r in pictures["latency"]["table"]["rows"]] == [1, 0, 0, 0, 0, 1, 0, 0, 0, 1]


def test_chart_table_past_500_rows_says_so_and_links_the_csv():
    """A picture's table lists its first 500 rows and says how many there are, with the CSV that holds them all."""
    cells = strip("t", [f"q{k}" for k in range(501)], [k / 500 for k in range(501)], "question")
    cells["table"] = {"columns": ["question", "share"], "rows": [[f"q{k}", k / 500] for k in range(501)]}
    html = environment().from_string('{% from "_macros.html" import chart %}{{ chart(c, "", "s", "s.csv") }}').render(
        c=cells, root="", static=False)
    assert "the first 500 of 501 rows" in html and "all 501 rows" in html and 'href="s.csv"' in html
    assert html.count("<tr><td>") == 500


def test_bars_draw_numpy_integers_and_cycle_colours_past_six_series():
    """NumPy integers (counts from pandas) are values like any int; a seventh series takes series-0's colour."""
    import numpy as np

    counted = bars("t", ["a", "b"], {"n": [np.int64(2), np.int64(4)]}, "x", "y")
    assert [m["data"]["value"] for m in counted["marks"] if m["tag"] == "rect"] == ["2.0", "4.0"]
    many = bars("t", ["a"], {f"s{k}": [0.5] for k in range(8)}, "x", "y", y_max=1)
    assert [m["cls"] for m in many["marks"] if m["tag"] == "rect"] == [
        f"bar series-{k}" for k in (0, 1, 2, 3, 4, 5, 0, 1)]
    assert [m["cls"] for m in many["axes"] if m["cls"].startswith("swatch")][6:] == ["swatch series-0",
                                                                                    "swatch series-1"]
    assert [m["text"] for m in many["axes"] if m["cls"] == "legend"] == [f"s{k}" for k in range(8)]
